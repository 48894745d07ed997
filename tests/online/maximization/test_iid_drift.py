"""The drift-robust options of the i.i.d.-rounds learners: ``PrivateExploreThenCommit(restart=)``
(periodic restarts) and ``PrivateEpochGreedy(max_epoch=)`` (capped epochs).

Privacy is checked exactly as in ``test_iid_privacy.py``: each round still enters exactly one
mechanism use, the periods (epochs) are fixed by the round index, and the law of the played sets
is the product of the periods' (epochs') laws, enumerated by the same oracles, passed to
:func:`~dpsubmod.privacy.audit.exact_check` with the half-noise controls, and validated against
the learners' own runs (slow). Behaviour: the schedule and plan, and on a stream whose best set
switches halfway, the option earns more than the plain learner.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from dpsubmod.errors import DPSubmodError
from dpsubmod.functions import Modular
from dpsubmod.offline.discrete.private_greedy import greedy_path_distribution
from dpsubmod.online import PrivateEpochGreedy, PrivateExploreThenCommit, run
from dpsubmod.online.maximization.epoch_greedy import _EpochMean, epoch_lengths
from dpsubmod.privacy.audit import exact_check
from dpsubmod.privacy.calibration import exponential_mechanism_weight
from online.maximization.test_iid_privacy import (
    ETC_D,
    ETC_FILL,
    _etc_law,
    _HalfNoiseEpochGreedy,
    _HalfNoiseETC,
)
from oracles import law_pvalue

EPS = 1.0


# -- PrivateExploreThenCommit(restart=) -------------------------------------------------------
P = 6  # two periods of the n = 3, k = 2, m = 1 schedule (3 + 2 exploration rounds, 1 commit)
ETC_R = [*ETC_D, *ETC_FILL, ETC_FILL[0]]


def _etc_restart_law(stream, scale: float = 1.0) -> dict:
    laws = [_etc_law(stream[i:i + P], 3, 2, 1, scale) for i in range(0, len(stream), P)]
    return {tuple(k for k, _ in combo): math.prod(q for _, q in combo)
            for combo in itertools.product(*[list(law.items()) for law in laws])}


def _etc_restart_play(cls, stream, rng) -> tuple:
    # the uniform stages, whose law _etc_law enumerates (the halving law is checked, without
    # restarts, in test_iid_privacy.py; a restart composes independent periods either way)
    learner = cls(3, len(stream), 2, epsilon=EPS, m=1, restart=P, schedule="uniform", rng=rng)
    played = []
    for f in stream:
        S = learner.select()
        played.append(tuple(sorted(S)))
        learner.update(f(S))
    # each period's whole sequence of played sets, as _etc_law keys them
    return tuple(tuple(played[i:i + P]) for i in range(0, len(stream), P))


@pytest.mark.parametrize("round_", [0, 6])
def test_etc_restart_exact_law(round_):
    D = list(ETC_R)
    D_prime = list(ETC_R)
    D[round_], D_prime[round_] = Modular([1.0, 0.0, 0.0]), Modular([0.0, 0.0, 0.0])
    res = exact_check(lambda d: _etc_restart_law(d), D, D_prime, epsilon=EPS, tol=1e-6)
    assert res.passed and max(res.max_log_ratio, res.max_log_ratio_reverse) > 0.8
    bad = exact_check(lambda d: _etc_restart_law(d, 0.5), D, D_prime, epsilon=EPS, tol=1e-6)
    assert not bad.passed


@pytest.mark.slow
@pytest.mark.parametrize("cls,scale", [(PrivateExploreThenCommit, 1.0), (_HalfNoiseETC, 0.5)])
def test_etc_restart_oracle_matches_the_learner(cls, scale):
    law = _etc_restart_law(ETC_R, scale)
    assert law_pvalue(law, lambda g: _etc_restart_play(cls, ETC_R, g), seed=13,
                      runs=3000) > 1e-4


def test_etc_restart_schedule_plan_and_guarantee():
    learner = PrivateExploreThenCommit(4, 1000, 2, epsilon=1.0, restart=300)
    p = learner.resolved_params
    assert p["periods"] == 4 and p["restart"] == 300
    # Up to two halving phases (4 -> 2 -> 1, 3 -> 2 -> 1) per stage, two stages per period.
    assert learner.plan.events[0].count == 2 * 2 * 4 and learner.privacy.epsilon == 1.0
    plain = PrivateExploreThenCommit(4, 300, 2, epsilon=1.0)
    assert p["m"] == plain.resolved_params["m"]
    assert learner.guarantee.assumption == "iid"
    with pytest.raises(DPSubmodError, match="'restart'"):
        PrivateExploreThenCommit(4, 1000, 2, epsilon=1.0, restart=0)


# -- PrivateEpochGreedy(max_epoch=) -----------------------------------------------------------
N, T_EG, CAP = 3, 7, 2  # epochs of 1, 2, 2, 2 rounds: three private selections


def _eg_capped_law(stream, scale: float = 1.0) -> dict:
    lengths = epoch_lengths(T_EG, 1, CAP)
    starts = np.cumsum([0, *lengths])
    laws = [{S: 1.0 / N for S in itertools.combinations(range(N), 1)}]
    for j in range(1, len(lengths)):
        fs = stream[starts[j - 1]:starts[j]]
        sens = scale / len(fs)
        w = exponential_mechanism_weight(EPS, range_sensitivity=2.0 * sens)
        law: dict = {}
        for path, q in greedy_path_distribution(_EpochMean(fs, 1.0, sens), 1, weight=w).items():
            key = tuple(sorted(path))
            law[key] = law.get(key, 0.0) + q
        laws.append(law)
    return {tuple(S for S, _ in combo): math.prod(q for _, q in combo)
            for combo in itertools.product(*[list(law.items()) for law in laws])}


def _eg_capped_play(cls, stream, rng) -> tuple:
    learner = cls(N, T_EG, 1, epsilon=EPS, max_epoch=CAP, rng=rng)
    played = []
    for f in stream:
        played.append(learner.select())
        learner.update(f)
    return tuple(played[s] for s in np.cumsum([0, *epoch_lengths(T_EG, 1, CAP)])[:-1])


_FILL = [Modular([0.2, 0.1, 0.3])] * T_EG


@pytest.mark.parametrize("round_", [0, 3])
def test_epoch_greedy_capped_exact_law(round_):
    D, D_prime = list(_FILL), list(_FILL)
    D[round_], D_prime[round_] = Modular([1.0, 0.0, 0.0]), Modular([0.0, 1.0, 1.0])
    res = exact_check(lambda d: _eg_capped_law(d), D, D_prime, epsilon=EPS)
    assert res.passed and max(res.max_log_ratio, res.max_log_ratio_reverse) > 0.3
    assert not exact_check(lambda d: _eg_capped_law(d, 0.5), D, D_prime, epsilon=EPS).passed


@pytest.mark.slow
@pytest.mark.parametrize("cls,scale", [(PrivateEpochGreedy, 1.0),
                                       (_HalfNoiseEpochGreedy, 0.5)])
def test_epoch_greedy_capped_oracle_matches_the_learner(cls, scale):
    D = [Modular([1.0, 0.0, 0.0]), *_FILL[1:]]
    law = _eg_capped_law(D, scale)
    assert law_pvalue(law, lambda g: _eg_capped_play(cls, D, g), seed=17,
                      runs=1500) > 1e-4


def test_epoch_greedy_capped_schedule_and_plan():
    assert epoch_lengths(20, 2, 4) == [2, 4, 4, 4, 4, 2]
    learner = PrivateEpochGreedy(4, 20, 2, epsilon=1.0, first_epoch=2, max_epoch=4)
    assert learner.resolved_params["epoch_lengths"] == [2, 4, 4, 4, 4, 2]
    assert learner.plan.events[0].count == 5 and learner.privacy.epsilon == 1.0
    with pytest.raises(DPSubmodError, match="'max_epoch'"):
        PrivateEpochGreedy(4, 20, 2, epsilon=1.0, max_epoch=0)


# -- drift: the best set switches halfway -----------------------------------------------------
def _switching(T: int, seed: int = 0) -> list[Modular]:
    rng = np.random.default_rng(seed)
    a, b = np.array([0.9, 0.8, 0.1, 0.1]), np.array([0.1, 0.1, 0.9, 0.8])
    return [Modular((rng.random(4) < (a if t < T // 2 else b)) / 2) for t in range(T)]


def test_options_earn_more_than_the_plain_learners_after_a_switch():
    T = 4000
    stream = _switching(T)
    got = {}
    for name, make in {
        "etc": lambda **kw: PrivateExploreThenCommit(4, T, 2, epsilon=1.0, rng=0, **kw),
        "eg": lambda **kw: PrivateEpochGreedy(4, T, 2, epsilon=1.0, rng=0, **kw),
    }.items():
        opt = {"etc": {"restart": 500}, "eg": {"max_epoch": 256}}[name]
        plain = float(np.mean(run(make(), stream, comparator=None, progress=False).values))
        drift = float(np.mean(run(make(**opt), stream, comparator=None,
                                  progress=False).values))
        got[name] = (plain, drift)
    # The plain learners keep the first half's pair (about 0.1 per round after the switch).
    assert got["etc"][1] > got["etc"][0] + 0.1, got
    assert got["eg"][1] > got["eg"][0] + 0.1, got
