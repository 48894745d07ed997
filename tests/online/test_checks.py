"""One checker over every online learner class, driven by its tags: the tags themselves, the
privacy statement, a refusal that changes nothing, the charge equal to the statement, clones and
resets charged again, pickling, seeding and frozen parameters. Each control below is a learner
broken in one way that the checker catches."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from dpsubmod.online import FIDP, Learner, OnlineGreedy
from dpsubmod.online.checks import check_learner, iter_checks
from dpsubmod.online.tags import LearnerTags
from dpsubmod.privacy import PrivacyEvent
from online_learners import FACTORIES, N, T, exported_learner_classes


def _make(name: str):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # parameters clipped at tiny horizons
        return FACTORIES[name]()


def test_every_exported_learner_class_declares_its_own_tags():
    for cls in exported_learner_classes():
        assert isinstance(cls.__dict__.get("_tags"), LearnerTags), cls.__name__


def test_the_checker_runs_over_every_exported_learner_class():
    assert {c.__name__ for c in exported_learner_classes()} == set(FACTORIES)


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_check_learner(name):
    learner = _make(name)
    checks = [n for n, _ in iter_checks(learner)]
    # the budget checks apply exactly to the private learners
    assert ("check_charge_matches_statement" in checks) == learner.tags().private, checks
    check_learner(learner)


def test_the_checker_takes_an_instance():
    with pytest.raises(TypeError, match="instance"):
        check_learner(FIDP)


# ---------------------------------------------------------------------------------------------
# controls: learners broken in one way each, which the checker catches
# ---------------------------------------------------------------------------------------------
def _fidp(cls):
    return cls(N, T, 2, epsilon=1.0, delta=1e-6, rng=0)


class _Undercharging(FIDP):
    """Charges half of what it states."""

    _tags = FIDP._tags

    def _charge_run(self) -> None:
        if self.budget is not None:
            rep = self.privacy
            self.budget.charge(PrivacyEvent.pure(type(self).__name__, rep.epsilon / 2))


class _NoPlan(FIDP):
    """Tagged private, states no plan."""

    _tags = FIDP._tags

    def _privacy_plan(self):
        return None


class _Untagged(OnlineGreedy):
    """Inherits its parent's tags instead of declaring its own."""


class _Unfrozen(FIDP):
    """Its parameters can be reassigned."""

    _tags = FIDP._tags

    def __setattr__(self, name: str, value: object) -> None:
        object.__setattr__(self, name, value)


class _NeverTagged(Learner):
    """A learner of its own that declares no tags at all."""

    def __init__(self, n: int, T: int, k: int, *, rng: object = None):
        self.n, self.T, self.k, self.rng = n, T, k, rng
        self._finish_construction(_NeverTagged)

    def _select(self):
        return np.arange(self.n) < self.k

    def _update(self, feedback) -> None:
        pass


class _Redeclared(OnlineGreedy):
    """Declares its feedback a second time, as a class attribute beside its tags."""

    _tags = OnlineGreedy._tags
    feedback = "full"


class _RedeclaringBase(OnlineGreedy):
    """A shared base that declares an assumption of its own for its subclasses."""

    assumption = "iid"


class _RedeclaredBelow(_RedeclaringBase):
    """Tagged, under a base that redeclares the assumption (which shadows the tags)."""

    _tags = OnlineGreedy._tags


class _Unfinished(FIDP):
    """Its own constructor skips the last line (no freeze, no charge)."""

    _tags = FIDP._tags

    def __init__(self, n, T, k, *, epsilon, delta=None, backend=None, rng=None, budget=None):
        super().__init__(n, T, k, epsilon=epsilon, delta=delta, backend=backend, rng=rng,
                         budget=budget)


class _NumpyOnly(FIDP):
    """Declares the numpy backend only, and accepts the others."""

    _tags = LearnerTags(private=True, feedback="full", problem="maximization",
                        assumption="oblivious", backends=("numpy",))


class _Unseeded(OnlineGreedy):
    """Draws from fresh entropy whatever its seed."""

    _tags = OnlineGreedy._tags

    def _reset(self) -> None:
        object.__setattr__(self, "rng", None)  # past the freeze, as a careless reset would
        super()._reset()


def _rebuild(cls, params):
    return cls(**params)


class _ForgetsOnPickle(OnlineGreedy):
    """Pickles as a fresh learner: the run restarts after a round trip."""

    _tags = OnlineGreedy._tags

    def __reduce__(self):
        return _rebuild, (type(self), self._get_params())


def _greedy(cls):
    return cls(N, T, 2, rng=0)


@pytest.mark.parametrize("build, broken, match", [
    # refused by nothing smaller than its statement, or charged less than it
    (_fidp, _Undercharging, "accepted a run stated|charged .* but states"),
    (_fidp, _NoPlan, "tagged private but its _privacy_plan"),
    (_greedy, _Untagged, "declares no tags of its own"),
    (_greedy, _NeverTagged, "declares no tags of its own"),
    (_fidp, _Unfrozen, "could be set after construction"),
    (_fidp, _Unfinished, "accepted a run stated"),
    (_greedy, _Redeclared, r"declares feedback as a class attribute \(on _Redeclared\)"),
    (_greedy, _RedeclaredBelow, r"declares assumption as a class attribute \(on _Redeclaring"),
    (_fidp, _NumpyOnly, "accepts backend='secure', which its tags leave out"),
    (_greedy, _Unseeded, "two clones with one seed play differently"),
    (_greedy, _ForgetsOnPickle, "plays differently after a pickle round trip"),
])
def test_the_checker_catches_a_broken_learner(build, broken, match):
    with pytest.raises(AssertionError, match=match):
        check_learner(build(broken))


def test_the_parent_of_each_control_passes():
    check_learner(_fidp(FIDP))
    check_learner(OnlineGreedy(N, T, 2, rng=0))


def test_feedback_and_assumption_are_read_only_views_of_the_tags():
    learner = OnlineGreedy(N, T, 2, rng=0)
    tags = OnlineGreedy.tags()
    assert (OnlineGreedy.feedback, OnlineGreedy.assumption) == (tags.feedback, tags.assumption)
    assert (learner.feedback, learner.assumption) == ("full", "oblivious")
    for attr in ("feedback", "assumption"):
        with pytest.raises(AttributeError, match=f"read from the class's tags.*{attr}="):
            setattr(learner, attr, "bandit")
        with pytest.raises(AttributeError, match="read from the class's tags"):
            delattr(learner, attr)
    # a class without tags has neither (and getattr's default applies)
    assert getattr(_NeverTagged, "feedback", None) is None


def test_a_learner_tagged_private_without_a_plan_is_an_error_not_privacy_none():
    learner = _fidp(_NoPlan)
    with pytest.raises(TypeError, match="tagged private"):
        _ = learner.privacy


def test_a_private_learner_whose_constructor_skips_its_last_line_refuses_to_play():
    learner = _fidp(_Unfinished)
    with pytest.raises(TypeError, match=r"did not end with self._finish_construction"):
        learner.select()
