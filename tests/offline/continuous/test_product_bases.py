"""The graphic-matroid product-base sampler: its law against enumeration at every weight ratio,
a running time that does not depend on the weights, and the hang of issue 15.

False-alarm rates: each chi-square test rejects at p < 1e-3; a draw of a forest whose exact
probability is below 1e-12 is a failure (20000 draws: false alarm below 2e-8).
"""

from __future__ import annotations

import itertools
import signal

import numpy as np
import pytest
from scipy.special import logsumexp

from dpsubmod import maximize
from dpsubmod.constraints import GraphicMatroid
from dpsubmod.functions import FacilityLocation
from dpsubmod.offline.continuous import _product_bases
from dpsubmod.offline.continuous._product_bases import product_base_sampler
from oracles import chi_square_pvalue

# a multigraph with a parallel edge, a self-loop and two components
EDGES = [(0, 1), (1, 2), (0, 2), (2, 3), (1, 3), (0, 1), (4, 5), (3, 3), (3, 0)]


def _forests(m: GraphicMatroid) -> list[tuple[int, ...]]:
    return [S for S in itertools.combinations(range(m.n), m.rank) if m.is_independent(list(S))]


def _exact_law(m: GraphicMatroid, logw: np.ndarray) -> tuple[list[tuple[int, ...]], np.ndarray]:
    F = _forests(m)
    lw = np.array([logw[list(S)].sum() for S in F])
    return F, np.exp(lw - logsumexp(lw))


def _check_law(m: GraphicMatroid, logw: np.ndarray, n_draws: int, seed: int) -> None:
    sampler = product_base_sampler(m, "test")
    F, probs = _exact_law(m, logw)
    index = {S: i for i, S in enumerate(F)}
    draws = sampler.sample(logw, n_draws, np.random.default_rng(seed))
    assert draws.shape == (n_draws, m.rank)
    counts = np.bincount([index[tuple(r)] for r in draws.tolist()], minlength=len(F))
    assert not counts[probs < 1e-12].any(), "drew a forest of negligible probability"
    assert chi_square_pvalue(counts, probs) > 1e-3


@pytest.mark.parametrize("scale", [0.5, 3.0, 8.0])
def test_law_against_enumeration(scale):
    m = GraphicMatroid(EDGES)
    logw = np.random.default_rng(int(scale * 10)).normal(size=m.n) * scale
    _check_law(m, logw, 8000, 1)


def test_the_check_has_power():
    # Draws from the law of 1.3 * logw are rejected against the law of logw.
    m = GraphicMatroid(EDGES)
    logw = np.random.default_rng(30).normal(size=m.n) * 3.0
    F, probs = _exact_law(m, logw)
    index = {S: i for i, S in enumerate(F)}
    draws = product_base_sampler(m, "test").sample(1.3 * logw, 8000, np.random.default_rng(1))
    counts = np.bincount([index[tuple(r)] for r in draws.tolist()], minlength=len(F))
    assert chi_square_pvalue(counts, probs) < 1e-3


def test_law_at_a_huge_weight_ratio_with_ties():
    # Three edges of log-weight 800 form a triangle, so the law splits evenly over its three
    # spanning pairs; the others weigh e^-800 relative to them (a ratio no float can hold).
    # A walk-based sampler would need about e^800 steps here.
    edges = [(0, 1), (1, 2), (0, 2), (2, 3), (0, 3), (1, 3)]
    m = GraphicMatroid(edges)
    logw = np.array([800.0, 800.0, 800.0, 0.0, 0.0, 0.5])
    _check_law(m, logw, 6000, 2)
    # the next tier decides the fourth node: edge 5 (log-weight 0.5) against edges 3 and 4
    F, probs = _exact_law(m, logw)
    assert probs[[i for i, S in enumerate(F) if 5 in S]].sum() == pytest.approx(
        np.exp(0.5) / (np.exp(0.5) + 2.0))


def test_log_partition_is_exact_at_any_ratio():
    m = GraphicMatroid(EDGES)
    sampler = product_base_sampler(m, "test")
    rng = np.random.default_rng(4)
    for scale in (1.0, 100.0, 1e5):
        logw = rng.normal(size=m.n) * scale
        lw = [logw[list(S)].sum() for S in _forests(m)]
        assert sampler.log_partition(logw) == pytest.approx(logsumexp(lw), rel=1e-12, abs=1e-9)


def test_wilson_path_has_the_same_law(monkeypatch):
    # Large graphs with nearly equal weights walk (Wilson); its law is checked on a small one.
    monkeypatch.setattr(_product_bases, "_WILSON_MIN_NODES", 0)
    m = GraphicMatroid(EDGES)
    logw = np.random.default_rng(5).uniform(0.0, np.log(8.0), size=m.n)
    sampler = product_base_sampler(m, "test")
    calls = []
    original = sampler._wilson
    monkeypatch.setattr(sampler, "_wilson", lambda *a: calls.append(1) or original(*a))
    F, probs = _exact_law(m, logw)
    index = {S: i for i, S in enumerate(F)}
    draws = sampler.sample(logw, 8000, np.random.default_rng(6))
    assert len(calls) == 8000
    counts = np.bincount([index[tuple(r)] for r in draws.tolist()], minlength=len(F))
    assert chi_square_pvalue(counts, probs) > 1e-3


class _CountingGenerator:
    """A Generator stand-in that counts the uniform draws."""

    def __init__(self, seed: int):
        self.gen = np.random.default_rng(seed)
        self.draws = 0

    def random(self, *args, **kwargs):
        self.draws += 1
        return self.gen.random(*args, **kwargs)


@pytest.mark.parametrize("spread", [1.0, 1e3, 1e300])
def test_work_does_not_depend_on_the_weights(spread):
    # At most one uniform draw per edge and forest, however uneven the weights (a walk needs
    # about exp(spread) steps).
    edges = list(itertools.combinations(range(8), 2))
    m = GraphicMatroid(edges)
    logw = np.random.default_rng(7).uniform(0.0, 1.0, size=m.n) * min(spread, 1e300)
    gen = _CountingGenerator(8)
    forests = product_base_sampler(m, "test").sample(logw, 5, gen)
    assert gen.draws <= 5 * m.n
    assert all(m.is_independent(list(F)) and len(F) == m.rank for F in forests)


def test_continuous_greedy_on_a_graphic_matroid_returns(monkeypatch):
    # Issue 15: 30,000 records, 8 nodes, epsilon 1 never returned (the walk's cover time grew
    # like exp(eps' * range of g), here about e^150). A generous deadline guards against the
    # hang; it is not a speed measurement.
    rng = np.random.default_rng(0)
    edges = list(itertools.combinations(range(8), 2))
    f = FacilityLocation.from_records(rng.uniform(size=(30_000, 2)),
                                      rng.uniform(size=(len(edges), 2)), bandwidth=0.2)
    m = GraphicMatroid(edges, n_nodes=8)

    def alarm(*_):
        raise TimeoutError("private_continuous_greedy did not return within 120 s")

    old = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(120)
    try:
        for eps in (1.0, 30.0):
            # T = r, the paper's choice: few steps, hence the large per-step weight
            res = maximize(f, m, "private_continuous_greedy", epsilon=eps, steps=m.rank, rng=1)
            assert len(res.selection) == m.rank and m.is_independent(list(res.selection))
            assert res.params["weight"] > 100  # the regime where the walk never returned
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
