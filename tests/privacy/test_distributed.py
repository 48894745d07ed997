"""The exponential mechanism scored in partitions: the law is the softmax, whatever the
partitioning or the executor, and a draw is reproducible from its seed."""

from __future__ import annotations

import functools
import math
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from scipy import stats

from dpsubmod.errors import (
    InfeasibleConstraintError,
    ParameterTypeError,
    ValidationError,
)
from dpsubmod.privacy import Ledger
from dpsubmod.privacy.distributed import (
    contiguous_partitions,
    distributed_exponential_mechanism,
    partition_winner,
)
from dpsubmod.privacy.mechanisms import exponential_mechanism, exponential_mechanism_probabilities

SCORES = np.array([0.0, 0.3, 1.0, 1.2, -0.5, 0.8, 2.0, 0.1, 1.5, -1.0, 0.6, 1.1])
EPS, SENS = 2.0, 1.0
# an uneven, interleaved partitioning (not contiguous): the law must not depend on it
PARTS = [np.array([0, 5, 11]), np.array([1, 2, 3, 4, 9]), np.array([6]), np.array([7, 8, 10])]
N = 6000
ALPHA = 1e-3  # each chi-square test below has a false-alarm rate of 0.1% (fixed seeds)


def take(scores, part):
    return np.asarray(scores)[np.asarray(part)]


def score_fn(scores=SCORES):
    return functools.partial(take, np.asarray(scores))


def distributed_counts(n, seed, parts=PARTS, scores=SCORES, executor=None, **kw):
    gen = np.random.default_rng(seed)
    f = score_fn(scores)
    draws = [distributed_exponential_mechanism(f, parts, epsilon=EPS, sensitivity=SENS, rng=gen,
                                               executor=executor, **kw) for _ in range(n)]
    return np.bincount(draws, minlength=len(scores))


def chi2_gof(counts, p):
    return stats.chisquare(counts, counts.sum() * p).pvalue


def test_distributed_and_local_draws_follow_the_softmax():
    p = exponential_mechanism_probabilities(SCORES, epsilon=EPS, sensitivity=SENS)
    gen = np.random.default_rng(1)
    local = np.bincount([exponential_mechanism(SCORES, epsilon=EPS, sensitivity=SENS, rng=gen)
                         for _ in range(N)], minlength=SCORES.size)
    dist = distributed_counts(N, 2)
    assert chi2_gof(local, p) > ALPHA
    assert chi2_gof(dist, p) > ALPHA
    # the two samplers against each other (2 x m contingency table)
    assert stats.chi2_contingency(np.vstack([local, dist]))[1] > ALPHA
    # and the frequencies are close to the softmax in total variation (about 0.03 is typical)
    assert 0.5 * np.abs(dist / N - p).sum() < 0.05


def test_law_does_not_depend_on_the_partitioning():
    p = exponential_mechanism_probabilities(SCORES, epsilon=EPS, sensitivity=SENS)
    for parts in (contiguous_partitions(SCORES.size, 1), contiguous_partitions(SCORES.size, 12),
                  [range(0, 7), range(7, 12)]):
        assert chi2_gof(distributed_counts(3000, 3, parts=parts), p) > ALPHA


def test_a_miscalibrated_combination_is_detected():
    # choosing a partition uniformly and then its winner is NOT the exponential mechanism
    p = exponential_mechanism_probabilities(SCORES, epsilon=EPS, sensitivity=SENS)
    gen = np.random.default_rng(4)
    f = score_fn()
    w = EPS / (2 * SENS)
    draws = []
    for _ in range(6000):
        kids = gen.spawn(len(PARTS))
        winners = [partition_winner((f, part, w, 0.0, None, k)) for part, k in zip(PARTS, kids)]
        draws.append(winners[gen.integers(len(PARTS))][1])
    assert chi2_gof(np.bincount(draws, minlength=SCORES.size), p) < 1e-6
    # and a weight off by a factor 2 (epsilon / sensitivity without monotonicity) is detected
    wrong = exponential_mechanism_probabilities(SCORES, epsilon=2 * EPS, sensitivity=SENS)
    assert chi2_gof(distributed_counts(N, 2), wrong) < 1e-6


def test_monotonic_and_range_weights():
    gen_p = exponential_mechanism_probabilities(SCORES, epsilon=EPS, sensitivity=SENS,
                                                monotonic=True)
    assert chi2_gof(distributed_counts(4000, 5, monotonic=True), gen_p) > ALPHA
    rng_p = exponential_mechanism_probabilities(SCORES, epsilon=EPS, range_sensitivity=0.5)
    gen = np.random.default_rng(6)
    draws = [distributed_exponential_mechanism(score_fn(), PARTS, epsilon=EPS,
                                               range_sensitivity=0.5, rng=gen)
             for _ in range(4000)]
    assert chi2_gof(np.bincount(draws, minlength=SCORES.size), rng_p) > ALPHA


def test_scores_are_clipped_to_the_declared_range():
    wild = SCORES.copy()
    wild[4] = 1e9  # a misbehaving objective: clipping must cap its advantage
    clip = (-1.0, 2.0)
    p = exponential_mechanism_probabilities(wild, epsilon=EPS, sensitivity=SENS, clip_range=clip)
    assert p[4] < 0.3
    counts = distributed_counts(4000, 7, scores=wild, clip_range=clip)
    assert chi2_gof(counts, p) > ALPHA


def test_infeasible_candidates_never_win():
    s = SCORES.copy()
    s[[6, 8, 3]] = -np.inf
    counts = distributed_counts(2000, 8, scores=s)
    assert counts[[6, 8, 3]].sum() == 0
    p = exponential_mechanism_probabilities(s, epsilon=EPS, sensitivity=SENS)
    assert chi2_gof(counts[p > 0], p[p > 0]) > ALPHA


def test_reproducible_from_the_seed_across_executors():
    f = score_fn()
    plain = [distributed_exponential_mechanism(f, PARTS, epsilon=EPS, sensitivity=SENS, rng=s)
             for s in range(40)]
    with ThreadPoolExecutor(3) as pool:
        pooled = [distributed_exponential_mechanism(f, PARTS, epsilon=EPS, sensitivity=SENS,
                                                    rng=s, executor=pool) for s in range(40)]
    mapped = [distributed_exponential_mechanism(f, PARTS, epsilon=EPS, sensitivity=SENS, rng=s,
                                                executor=map) for s in range(40)]
    assert plain == pooled == mapped
    assert len(set(plain)) > 3  # the seeds do matter


def test_dask_cluster_gives_the_same_draws_as_local():
    distributed = pytest.importorskip("distributed")
    f = score_fn()
    local = [distributed_exponential_mechanism(f, PARTS, epsilon=EPS, sensitivity=SENS, rng=s)
             for s in range(30)]
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        remote = [distributed_exponential_mechanism(f, PARTS, epsilon=EPS, sensitivity=SENS,
                                                    rng=s, executor=client) for s in range(30)]
        # a failing partition surfaces as the library's error on the client
        bad = SCORES.copy()
        bad[2] = np.nan
        with pytest.raises(ValidationError, match="nan"):
            distributed_exponential_mechanism(score_fn(bad), PARTS, epsilon=EPS,
                                              sensitivity=SENS, rng=0, executor=client)
    assert remote == local


def test_budget_is_charged_one_exponential_event():
    led = Ledger()
    distributed_exponential_mechanism(score_fn(), PARTS, epsilon=0.5, sensitivity=SENS,
                                      budget=led, rng=0)
    assert len(led) == 1
    ev = led.events[0]
    assert ev.mechanism == "exponential_mechanism" and ev.epsilon == 0.5
    assert math.isclose(ev.rho, 0.5**2 / 8)
    assert "partitions=4" in ev.note


@pytest.mark.parametrize("parts, err, match", [
    ([np.array([0, 1]), np.array([1, 2])], ValidationError, "overlap"),
    ([range(0, 5), range(4, 8)], ValidationError, "overlap"),
    ([np.array([0, 1]), np.array([], dtype=int)], ValidationError, "empty"),
    ([], ValidationError, "empty"),
    ([np.array([0.5, 1.0])], ParameterTypeError, "integer"),
    ([np.array([-1, 0])], ValidationError, "negative"),
    ("abc", ParameterTypeError, "sequence"),
])
def test_bad_partitions_are_refused_before_drawing(parts, err, match):
    led = Ledger()
    with pytest.raises(err, match=match):
        distributed_exponential_mechanism(score_fn(), parts, epsilon=1.0, sensitivity=1.0,
                                          budget=led, rng=0)
    assert len(led) == 0


def test_bad_parameters_and_scores():
    with pytest.raises(ValidationError, match="epsilon"):
        distributed_exponential_mechanism(score_fn(), PARTS, epsilon=0.0, sensitivity=1.0)
    with pytest.raises(ValidationError, match="sensitivity"):
        distributed_exponential_mechanism(score_fn(), PARTS, epsilon=1.0)
    with pytest.raises(ParameterTypeError, match="executor"):
        distributed_exponential_mechanism(score_fn(), PARTS, epsilon=1.0, sensitivity=1.0,
                                          executor=42)
    with pytest.raises(ValidationError, match="one score per candidate"):
        distributed_exponential_mechanism(lambda part: np.zeros(2), PARTS, epsilon=1.0,
                                          sensitivity=1.0, rng=0)
    with pytest.raises(InfeasibleConstraintError):
        distributed_exponential_mechanism(lambda part: np.full(len(part), -np.inf), PARTS,
                                          epsilon=1.0, sensitivity=1.0, rng=0)


def test_contiguous_partitions_cover_the_ground_set():
    parts = contiguous_partitions(10, 3)
    assert [len(p) for p in parts] == [3, 4, 3] or sorted(len(p) for p in parts) == [3, 3, 4]
    assert np.array_equal(np.concatenate([np.arange(p.start, p.stop) for p in parts]),
                          np.arange(10))
    assert len(contiguous_partitions(2, 5)) == 2
    with pytest.raises(ValidationError):
        contiguous_partitions(0, 2)
