"""Every learner resolves its public parameters once: assigning to one (or deleting it) after
construction raises, so the privacy statement, the charge and the draws always describe the
same parameters. One check runs over every learner class the library defines, with a control
(a learner whose freeze is undone) that the check catches."""

from __future__ import annotations

import copy
import inspect
import pickle
import warnings

import numpy as np
import pytest

import dpsubmod.online as online
from dpsubmod.errors import DPSubmodError, FrozenParameterError
from dpsubmod.online import (
    FIDP,
    PFTAL,
    BanditDP,
    BanditHazanKale,
    BanditOnlineGreedy,
    BanditSubmodPFTAL,
    BatchedPrivateBandit,
    DPMetaFrankWolfe,
    FlaxmanKalaiMcMahan,
    GarberKretzu,
    HazanKale,
    Hedge,
    MetaFrankWolfe,
    NaiveBanditDP,
    OnlineBase,
    OnlineGreedy,
    PFTALMetaFrankWolfe,
    PresampledBanditDP,
    PrivateBandit,
    PrivateEpochGreedy,
    PrivateExploreThenCommit,
    PrivateFTRL,
    PrivateTreeExperts,
    SubmodPFTAL,
)
from dpsubmod.polytopes import Box

N, T = 4, 8

#: one tiny instance of every learner class
FACTORIES = {
    "BanditDP": lambda: BanditDP(N, T, 2, epsilon=1.0, delta=1e-6, gamma=0.3, eta=0.1, rng=0),
    "BatchedPrivateBandit": lambda: BatchedPrivateBandit(BanditOnlineGreedy(N, T, 2, rng=0),
                                                         epsilon=1.0, batch=2, rng=0),
    "BanditHazanKale": lambda: BanditHazanKale(N, T, M=1.0, rng=0),
    "BanditOnlineGreedy": lambda: BanditOnlineGreedy(N, T, 2, rng=0),
    "BanditSubmodPFTAL": lambda: BanditSubmodPFTAL(N, T, M=1.0, epsilon=0.7, gamma=0.5, rng=0),
    "DPMetaFrankWolfe": lambda: DPMetaFrankWolfe(N, T, 2, epsilon=1.0, K=2, rng=0),
    "FIDP": lambda: FIDP(N, T, 2, epsilon=1.0, delta=1e-6, rng=0),
    "FlaxmanKalaiMcMahan": lambda: FlaxmanKalaiMcMahan(Box(-1.0, 1.0, dim=2), T,
                                                       mode="extend", rng=0),
    "GarberKretzu": lambda: GarberKretzu(Box(-1.0, 1.0, dim=2), T, mode="extend", rng=0),
    "HazanKale": lambda: HazanKale(N, T, M=1.0, rng=0),
    "Hedge": lambda: Hedge(N, 0.05, copies=2, max_draws=T, delta=1e-6, rng=0),
    "MetaFrankWolfe": lambda: MetaFrankWolfe(N, T, 2, rng=0),
    "NaiveBanditDP": lambda: NaiveBanditDP(N, T, 2, epsilon=1.0, delta=1e-6, gamma=0.3, rng=0),
    "OnlineGreedy": lambda: OnlineGreedy(N, T, 2, rng=0),
    "PFTAL": lambda: PFTAL(N, T, H=1.0, epsilon=0.8, lipschitz=1.0, rng=0),
    "PFTALMetaFrankWolfe": lambda: PFTALMetaFrankWolfe(N, T, 2, epsilon=1.2, K=3, rng=0),
    "PresampledBanditDP": lambda: PresampledBanditDP(N, T, 2, epsilon=1.0, delta=1e-6,
                                                     gamma=0.3, rng=0),
    "PrivateBandit": lambda: PrivateBandit(Box(-1.0, 1.0, dim=2), T, epsilon=0.6, mode="extend",
                                           rng=0),
    "PrivateEpochGreedy": lambda: PrivateEpochGreedy(N, T, 2, epsilon=1.0, rng=0),
    "PrivateExploreThenCommit": lambda: PrivateExploreThenCommit(N, T, 2, epsilon=1.0, m=1,
                                                                 rng=0),
    "PrivateFTRL": lambda: PrivateFTRL(2, T, n=N, copies=2, epsilon=0.9, delta=1e-6,
                                       loss_range=(-1.0, 0.0), rng=0),
    "PrivateTreeExperts": lambda: PrivateTreeExperts(N, T, 2, epsilon=1.0, delta=1e-6, rng=0),
    "SubmodPFTAL": lambda: SubmodPFTAL(N, T, M=1.0, epsilon=0.7, rng=0),
}


def _all_subclasses(cls: type) -> set[type]:
    out = set()
    for sub in cls.__subclasses__():
        out |= {sub} | _all_subclasses(sub)
    return out


def learner_classes() -> set[str]:
    """Every concrete learner class the library exports."""
    return {c.__name__ for c in _all_subclasses(OnlineBase)
            if c.__module__.startswith("dpsubmod.") and not inspect.isabstract(c)
            and c.__name__ in online.__all__}


def _make(name: str) -> OnlineBase:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # parameters clipped at tiny horizons
        return FACTORIES[name]()


def _statement(learner: OnlineBase) -> str:
    return str(learner.privacy)


def assert_frozen(learner: OnlineBase) -> None:
    """Every constructor parameter refuses assignment and deletion; nothing changes."""
    params = learner._get_params()
    before, plan = _statement(learner), learner.plan
    for name, value in params.items():
        for new in (value, _other(value)):
            with pytest.raises(FrozenParameterError, match=f"'{name}' parameter of"):
                setattr(learner, name, new)
        with pytest.raises(FrozenParameterError):
            delattr(learner, name)
    assert learner._get_params().keys() == params.keys()
    for name, value in params.items():
        assert learner._get_params()[name] is value
    assert _statement(learner) == before and learner.plan is plan


def _other(value: object) -> object:
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value * 2 + 1
    return None


def test_every_learner_class_is_checked():
    assert learner_classes() == set(FACTORIES)


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_parameters_are_frozen_after_construction(name):
    learner = _make(name)
    assert_frozen(learner)
    # the error is a library error and an AttributeError, and names the fix
    first = next(iter(learner._get_params()))
    with pytest.raises(AttributeError, match="clone"):
        setattr(learner, first, 1)
    with pytest.raises(DPSubmodError):
        setattr(learner, first, 1)
    # state stays the learner's own: private attributes may change
    learner._scratch = 1
    # clones, copies and pickles are frozen too, and a clone takes new parameters
    for twin in (learner.clone(), copy.deepcopy(learner), pickle.loads(pickle.dumps(learner))):
        assert_frozen(twin)
    assert learner.clone(rng=5).rng == 5


def test_the_issues_bandit_keeps_the_plan_it_stated():
    """BanditDP without the cap and with a user-given eta: changing gamma or T would make the
    plan's spare draws routine while the statement stayed at the construction's values."""
    learner = BanditDP(6, 1000, 2, epsilon=1.0, delta=1e-6, gamma=0.3, eta=0.01, cap=False,
                       rng=0)
    stated = str(learner.privacy)
    for name, value in (("gamma", 0.01), ("T", 10_000), ("eta", 0.5), ("cap", True)):
        with pytest.raises(FrozenParameterError, match=f"'{name}' parameter of BanditDP"):
            setattr(learner, name, value)
    assert str(learner.privacy) == stated
    learner.select()
    assert str(learner.privacy) == stated


class _Unfrozen(BanditDP):
    """The control: a learner whose parameters can be reassigned."""

    def __setattr__(self, name: str, value: object) -> None:
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        object.__delattr__(self, name)


def test_the_check_catches_a_learner_that_is_not_frozen():
    learner = _Unfrozen(N, T, 2, epsilon=1.0, delta=1e-6, gamma=0.3, eta=0.1, rng=0)
    with pytest.raises(pytest.fail.Exception):
        assert_frozen(learner)
    learner.gamma = 0.01  # what the freeze prevents
    assert learner.gamma == 0.01


def test_a_learner_plays_normally_after_the_freeze():
    learner = _make("FIDP")
    rng = np.random.default_rng(0)
    from dpsubmod.functions import Modular

    for _ in range(T):
        S = learner.select()
        learner.update(Modular(rng.random(N) / N))
        assert isinstance(S, tuple)
    assert learner.t == T
