"""The learner protocol: alternation, horizon, feedback types, clone/reset/seeding, bad input."""

from __future__ import annotations

import copy
import math
import pickle
import warnings

import numpy as np
import pytest

from dpsubmod import Budget
from dpsubmod.errors import (
    DPSubmodError,
    GroundSetMismatchError,
    ParameterTypeError,
    StreamLengthError,
    ValidationError,
)
from dpsubmod.functions import Modular
from dpsubmod.online import (
    PFTAL,
    BanditHazanKale,
    BanditOnlineGreedy,
    BanditSubmodPFTAL,
    HazanKale,
    Learner,
    SubmodPFTAL,
)

N, T = 3, 20


def _learners(rng=0):
    return [
        SubmodPFTAL(N, T, M=1.0, epsilon=1.0, rng=rng),
        SubmodPFTAL(N, T, M=1.0, epsilon=math.inf, rng=rng),
        BanditSubmodPFTAL(N, T, M=1.0, epsilon=1.0, gamma=0.5, rng=rng),
        BanditSubmodPFTAL(N, T, M=1.0, epsilon=math.inf, gamma=0.5, rng=rng),
        HazanKale(N, T, M=1.0, rng=rng),
        BanditHazanKale(N, T, M=1.0, gamma=0.5, rng=rng),
    ]


IDS = ["pftal", "pftal-off", "bandit", "bandit-off", "hk", "bandit-hk"]


def _funcs(seed=0, count=T):
    rng = np.random.default_rng(seed)
    return [Modular(rng.uniform(-1, 1, N) / N) for _ in range(count)]


def _play(learner: Learner, fs) -> list[tuple[int, ...]]:
    out = []
    for f in fs:
        S = learner.select()
        out.append(S)
        learner.update(f if learner.feedback == "full" else f(S))
    return out


@pytest.mark.parametrize("learner", _learners(), ids=IDS)
def test_selection_type_and_alternation(learner):
    with pytest.raises(ValidationError, match="after select"):
        learner.expected_value(_funcs()[0])
    S = learner.select()
    assert np.isfinite(learner.expected_value(_funcs()[0]))
    assert isinstance(S, tuple) and all(type(e) is int for e in S) and list(S) == sorted(S)
    with pytest.raises(ValidationError, match="twice"):
        learner.select()
    learner.update(_funcs()[0] if learner.feedback == "full" else 0.1)
    with pytest.raises(ValidationError, match="without a pending selection"):
        learner.update(_funcs()[0] if learner.feedback == "full" else 0.1)
    assert learner.t == 1


@pytest.mark.parametrize("learner", _learners(), ids=IDS)
def test_horizon_is_enforced(learner):
    _play(learner, _funcs())
    assert learner.t == T
    with pytest.raises(StreamLengthError, match=f"T={T}"):
        learner.select()
    learner.reset()
    assert learner.t == 0 and len(learner.select()) <= N


@pytest.mark.parametrize("learner", _learners(), ids=IDS)
def test_feedback_is_checked_before_the_state_changes(learner):
    learner.select()
    if learner.feedback == "full":
        with pytest.raises(ParameterTypeError, match="SetFunction"):
            learner.update(0.5)
        with pytest.raises(GroundSetMismatchError, match="n=3"):
            learner.update(Modular([1.0, 2.0]))
    else:
        with pytest.raises(ParameterTypeError, match="float value"):
            learner.update(Modular([1.0, 2.0, 3.0]))
        with pytest.raises(ValidationError):
            learner.update(float("nan"))
        with pytest.raises(ParameterTypeError):
            learner.update("0.5")
    assert learner.t == 0  # nothing was learned; the round is still pending
    learner.update(_funcs()[0] if learner.feedback == "full" else 0.25)
    assert learner.t == 1


@pytest.mark.parametrize("idx", range(len(IDS)), ids=IDS)
def test_clone_reset_and_seeding_reproduce_runs(idx):
    fs = _funcs(1)
    a = _learners(rng=5)[idx]
    first = _play(a, fs)
    # Same object after reset: the integer seed is resolved again, so the same run replays.
    a.reset()
    assert _play(a, fs) == first
    # Clone: fresh state, same parameters, same run.
    b = a.clone()
    assert b.t == 0 and b._get_params().keys() == a._get_params().keys()
    assert _play(b, fs) == first
    # Parameters are stored untouched (the seed stays an int, not a Generator).
    assert a.rng == 5 and b.rng == 5
    # Another seed: an independent run (different somewhere for the randomised learners).
    runs = {tuple(_play(a.clone(rng=s), fs)) for s in range(6)}
    assert len(runs) > 1


@pytest.mark.parametrize("learner", _learners(), ids=IDS)
def test_clone_overrides_and_unknown_parameters(learner):
    c = learner.clone(M=2.0)
    assert c.M == 2.0 and learner.M == 1.0
    with pytest.raises(ValidationError, match="unknown parameter"):
        learner.clone(bogus=1)
    assert type(learner).__name__ in repr(learner)


@pytest.mark.parametrize("learner", _learners(), ids=IDS)
def test_learners_pickle_and_deepcopy_mid_run(learner):
    fs = _funcs(2)
    _play(learner, fs[:5])
    for other in (pickle.loads(pickle.dumps(learner)), copy.deepcopy(learner)):
        assert _play(other, fs[5:]) == _play(copy.deepcopy(learner), fs[5:])


def test_x1_is_not_mutated_and_is_used():
    x1 = np.array([1.0, 0.0, 1.0])
    learner = SubmodPFTAL(3, 5, M=1.0, epsilon=math.inf, x1=x1)
    assert learner.select() == (0, 2)  # threshold rounding of an indicator vector
    learner.update(Modular([1.0, 1.0, 1.0]))
    np.testing.assert_array_equal(x1, [1.0, 0.0, 1.0])
    assert learner.x1 is x1


def test_privacy_property():
    fs = _funcs()
    priv = SubmodPFTAL(N, T, M=1.0, epsilon=0.7, rng=0)
    # the whole run is stated before round 1
    assert priv.privacy.epsilon == pytest.approx(0.7) and priv.epsilon_spent == 0.7
    _play(priv, fs[:3])
    assert priv.privacy.epsilon == pytest.approx(0.7) and priv.epsilon_spent == 0.7
    assert "one function" in priv.privacy.neighbouring
    off = SubmodPFTAL(N, T, M=1.0, epsilon=math.inf)
    _play(off, fs[:3])
    assert off.privacy is None and off.epsilon_spent == math.inf
    assert HazanKale(N, T, M=1.0).privacy is None


@pytest.mark.parametrize("make, match", [
    (lambda: SubmodPFTAL(0, 5, M=1.0, epsilon=1.0), "'n'"),
    (lambda: SubmodPFTAL(3, 0, M=1.0, epsilon=1.0), "'T'"),
    (lambda: SubmodPFTAL(3, 5, M=0.0, epsilon=1.0), "'M'"),
    (lambda: SubmodPFTAL(3, 5, M=1.0, epsilon=0.0), "'epsilon'"),
    (lambda: SubmodPFTAL(3, 5, M=1.0, epsilon=-math.inf), "'epsilon'"),
    (lambda: SubmodPFTAL(3, 5, M=1.0, epsilon=1.0, H=-1.0), "'H'"),
    (lambda: SubmodPFTAL(3, 5, M=1.0, epsilon=1.0, H="large"), "'H'"),
    (lambda: SubmodPFTAL(3, 5, M=1.0, epsilon=1.0, calibration="loose"), "'calibration'"),
    (lambda: SubmodPFTAL(3, 5, M=1.0, epsilon=1.0, calibration="paper", noise="laplace"),
     "l2laplace"),
    (lambda: SubmodPFTAL(3, 5, M=1.0, epsilon=1.0, noise="cauchy"), "'noise'"),
    (lambda: SubmodPFTAL(3, 5, M=1.0, epsilon=1.0, noise="gaussian"), "delta"),
    (lambda: SubmodPFTAL(3, 5, M=1.0, epsilon=1.0, sensitivity=0.0), "'sensitivity'"),
    (lambda: SubmodPFTAL(3, 5, M=1.0, epsilon=1.0, x1=[0.5, 0.5]), "'x1'"),
    (lambda: SubmodPFTAL(3, 5, M=1.0, epsilon=1.0, x1=[0.5, 0.5, 1.5]), "cube"),
    (lambda: BanditSubmodPFTAL(3, 5, M=1.0, epsilon=1.0, gamma=0.0), "'gamma'"),
    (lambda: BanditSubmodPFTAL(3, 5, M=1.0, epsilon=1.0, calibration="conservative"),
     "'calibration'"),
    (lambda: HazanKale(3, 5, M=1.0, eta=0.0), "'eta'"),
    (lambda: BanditHazanKale(3, 5, M=1.0, gamma=-0.1), "'gamma'"),
    (lambda: PFTAL(2, 5, H=1.0, epsilon=1.0), "sensitivity"),
    (lambda: PFTAL(2, 5, H=0.0, epsilon=1.0, lipschitz=1.0), "'H'"),
    (lambda: PFTAL(2, 5, H=1.0, epsilon=1.0, lipschitz=1.0, project="clip"), "'project'"),
])
def test_bad_input_is_rejected_at_construction(make, match):
    with pytest.raises(DPSubmodError, match=match):
        make()


def test_a_given_gamma_above_one_is_refused_and_a_default_one_clipped_with_a_warning():
    # A given gamma above 1 is not a probability: refused by name, before anything is charged.
    budget = Budget(10.0)
    for make in (lambda: BanditSubmodPFTAL(3, 5, M=1.0, epsilon=1.0, gamma=1.5, budget=budget),
                 lambda: BanditHazanKale(3, 5, M=1.0, gamma=1.5),
                 lambda: BanditOnlineGreedy(3, 5, 1, gamma=1e308)):
        with pytest.raises(ValidationError, match="'gamma'.*\\(0.0, 1.0\\]"):
            make()
    assert not budget.events
    # The theorem's gamma = n / T^(1/4) exceeds 1 when T < n^4.
    with pytest.warns(RuntimeWarning, match="n / T"):
        BanditSubmodPFTAL(4, 100, M=1.0, epsilon=1.0, gamma="paper").reset()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        BanditSubmodPFTAL(2, 10_000, M=1.0, epsilon=1.0, gamma="paper").reset()  # 2/10 <= 1
        BanditSubmodPFTAL(4, 100, M=1.0, epsilon=1.0, gamma="tuned").reset()  # tuned: <= 1
    with pytest.warns(RuntimeWarning, match="clipped to 1"):
        BanditHazanKale(3, 2, M=1.0).reset()


def test_bad_pftal_updates():
    oco = PFTAL(2, 2, H=1.0, epsilon=math.inf)
    with pytest.raises(GroundSetMismatchError):
        oco.update([1.0, 2.0, 3.0])
    with pytest.raises(ValidationError):
        oco.update([np.nan, 0.0])
    oco.update([1.0, 0.0])
    oco.update([1.0, 0.0])
    with pytest.raises(StreamLengthError):
        oco.update([1.0, 0.0])
    with pytest.raises(ValidationError, match="domain"):
        PFTAL(2, 2, H=1.0, epsilon=math.inf, x1=[2.0, 0.0]).point()
