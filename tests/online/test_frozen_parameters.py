"""Every learner resolves its public parameters once: assigning to one (or deleting it) after
construction raises, so the privacy statement, the charge and the draws always describe the
same parameters. One check runs over every learner class the library defines, with a control
(a learner whose freeze is undone) that the check catches."""

from __future__ import annotations

import copy
import pickle
import warnings

import numpy as np
import pytest

from dpsubmod.errors import DPSubmodError, FrozenParameterError
from dpsubmod.online import (
    BanditDP,
    OnlineBase,
)
from online_learners import FACTORIES, N, T, exported_learner_classes


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
    assert {c.__name__ for c in exported_learner_classes()} == set(FACTORIES)


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
