"""One checker for every online learner, driven by the learner's tags.

:func:`check_learner` runs the checks every learner of :mod:`dpsubmod.online` must pass, the way
scikit-learn's ``check_estimator`` and river's ``check_estimator`` run one suite over every
estimator. Which checks apply, and how the learner is played, follow from its
:class:`~dpsubmod.online.tags.LearnerTags`: a private learner is checked against a budget, a
set learner is fed set functions of its sense, a convex one linear losses, Hedge gain vectors.

The checks play a small instance (a tiny ``T``) on a stream drawn from a fixed seed, and raise
:class:`AssertionError` naming the learner and what failed. They never touch the instance given
(every run is played by a clone), so a learner built with a budget is not charged.

Examples
--------
>>> from dpsubmod.online import FIDP
>>> from dpsubmod.online.checks import check_learner
>>> check_learner(FIDP(4, 6, 2, epsilon=1.0, delta=1e-6, rng=0))
>>> [name for name, _ in iter_checks(FIDP(4, 6, 2, epsilon=1.0, delta=1e-6, rng=0))][:3]
['check_tags', 'check_privacy_statement', 'check_refusal_changes_nothing']
"""

from __future__ import annotations

import copy
import inspect
import math
import pickle
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ..errors import (
    BudgetExceededError,
    FrozenParameterError,
    MissingDependencyError,
    ValidationError,
)
from ..functions import Modular
from ..privacy.budget import Budget
from .protocol import OnlineBase
from .tags import NOISE_BACKENDS, LearnerTags, Tagged

__all__ = ["check_learner", "iter_checks", "check_tags", "check_privacy_statement",
           "check_refusal_changes_nothing", "check_charge_matches_statement",
           "check_clone_and_reset_charge_again", "check_backends", "check_pickling",
           "check_seeding", "check_frozen_parameters"]

#: The seed of the checks' streams and of the clones they play.
SEED = 0


def check_learner(learner: OnlineBase) -> None:
    """Run every shared check that applies to ``learner`` (see :func:`iter_checks`).

    Parameters
    ----------
    learner : OnlineBase
        A small instance (a tiny ``T``) of the learner class to check, built without a
        budget; it is only cloned, never played or charged.

    Raises
    ------
    AssertionError
        The first check that fails, naming the learner and what went wrong.
    TypeError
        ``learner`` is not an online learner instance (pass an instance, not a class).
    """
    for _, check in iter_checks(learner):
        check(learner)


def iter_checks(learner: OnlineBase) -> Iterator[tuple[str, Callable[[OnlineBase], None]]]:
    """The checks that apply to ``learner``, chosen by its tags, as ``(name, check)`` pairs.

    Every learner: its tags (:func:`check_tags`), its privacy statement, pickling, seeding and
    frozen parameters. A private learner that takes ``budget=`` also: a refusal at
    construction changes nothing, the whole-run charge equals the statement, and a clone and
    a reset after play charge again; one that takes ``backend=`` states each backend its tags
    declare, and refuses the others.

    Raises
    ------
    TypeError
        ``learner`` is not an online learner instance.
    """
    if not isinstance(learner, OnlineBase):
        what = f"the class {learner.__name__}" if isinstance(learner, type) else \
            type(learner).__name__
        raise TypeError(f"check_learner() takes a small learner instance (e.g. built with a "
                        f"tiny T); got {what}.")
    checks: list[Callable[[OnlineBase], None]] = [check_tags, check_privacy_statement]
    # an untagged class fails check_tags first, with its own message
    private = isinstance(getattr(learner, "_tags", None), LearnerTags) and learner.is_private
    if private and "budget" in _params(learner):
        checks += [check_refusal_changes_nothing, check_charge_matches_statement,
                   check_clone_and_reset_charge_again]
    if private and "backend" in _params(learner):
        checks.append(check_backends)
    checks += [check_pickling, check_seeding, check_frozen_parameters]
    for check in checks:
        yield check.__name__, check


# ---------------------------------------------------------------------------------------------
# the checks
# ---------------------------------------------------------------------------------------------
def check_tags(learner: OnlineBase) -> None:
    """The class declares its own :class:`~dpsubmod.online.tags.LearnerTags`, as the one
    declaration of its feedback and assumption (no class of its hierarchy redeclares them as
    attributes, which would shadow the tags), and the tags agree with what the learner does:
    its ``sense``, a ``budget=`` and a ``backend=`` parameter when private."""
    cls, name = type(learner), type(learner).__name__
    tags = cls.__dict__.get("_tags")
    _require(isinstance(tags, LearnerTags), name,
             "declares no tags of its own: set _tags = LearnerTags(...) on the class (inherited "
             "tags may describe the parent, not this class)")
    for attr in ("feedback", "assumption"):
        where = [k.__name__ for k in cls.__mro__ if k is not Tagged and attr in vars(k)]
        _require(not where, name,
                 f"declares {attr} as a class attribute (on {', '.join(where)}) beside its tags; "
                 f"delete it: {attr} is read from _tags = LearnerTags(..., {attr}=...)")
    sense = getattr(learner, "sense", None)
    if sense in ("min", "max") and set(tags.problems) <= {"minimization", "maximization"}:
        problem = "minimization" if sense == "min" else "maximization"
        _require(problem in tags.problems, name,
                 f"plays sense={sense!r} but is tagged problem={tags.problem!r}")
    if tags.private:
        params = _params(learner)
        _require("budget" in params, name, "is tagged private but takes no budget= parameter")
        _require(tags.backends == ("numpy",) or "backend" in params, name,
                 f"is tagged backends={tags.backends} but takes no backend= parameter")
    else:
        _require(tags.backends == (), name, "is tagged not private but declares noise backends")


def check_privacy_statement(learner: OnlineBase) -> None:
    """A private learner states its whole run's guarantee before round 1, derived from its
    plan; a learner that is not private (or has its noise off) states none."""
    name = type(learner).__name__
    try:
        plan, privacy = learner.plan, learner.privacy
    except TypeError as err:
        raise AssertionError(f"{name}: {err}") from err
    if learner.is_private:
        _require(plan is not None and privacy is not None, name,
                 "is private but states no plan or no privacy guarantee")
        rep = plan.report()
        _require((privacy.epsilon, privacy.delta) == (rep.epsilon, rep.delta), name,
                 f"states {privacy.epsilon, privacy.delta} but its plan gives "
                 f"{rep.epsilon, rep.delta}")
    else:
        _require(plan is None and privacy is None, name,
                 "is not private but states a privacy guarantee")


def check_refusal_changes_nothing(learner: OnlineBase) -> None:
    """A learner refused at construction changes nothing: a budget too small for the run is
    left as it was, and so is the caller's generator; a bad parameter refuses before any
    charge."""
    name = type(learner).__name__
    need = learner.privacy
    small = Budget(0.5 * need.epsilon, _delta_room(need.delta))
    gen = np.random.default_rng(2024)
    state = copy.deepcopy(gen.bit_generator.state)
    try:
        _quiet(lambda: learner.clone(budget=small, rng=gen))
    except BudgetExceededError:
        pass
    else:
        raise AssertionError(f"{name}: a budget of epsilon={small.epsilon:g} accepted a run "
                             f"stated at epsilon={need.epsilon:g}")
    _require(small.events == (), name, "charged a budget that refused the run")
    _require(gen.bit_generator.state == state, name,
             "drew from the caller's generator before refusing")
    big = _big_budget(need)
    try:
        _quiet(lambda: learner.clone(budget=big, rng="not a seed"))
    except (ValueError, TypeError):
        pass
    else:
        raise AssertionError(f"{name}: accepted rng='not a seed'")
    _require(big.events == (), name, "charged its budget before refusing a bad parameter")


def check_charge_matches_statement(learner: OnlineBase) -> None:
    """The whole run is charged once, at construction, and the charge is the statement
    (``learner.privacy``); playing the whole run charges nothing more."""
    name = type(learner).__name__
    budget = _big_budget(learner.privacy)
    L = _quiet(lambda: learner.clone(budget=budget, rng=SEED))
    rep = L.privacy
    _require(len(budget.events) == 1, name,
             f"charged {len(budget.events)} events at construction, not one")
    ev = budget.events[0]
    _require((ev.epsilon, ev.delta) == (rep.epsilon, rep.delta), name,
             f"charged (epsilon, delta)={ev.epsilon, ev.delta} but states "
             f"{rep.epsilon, rep.delta}")
    _play(L, _rounds(L))
    _require(len(budget.events) == 1, name, "charged its budget again while playing")


def check_clone_and_reset_charge_again(learner: OnlineBase) -> None:
    """A clone is a new release, charged again; a reset after play starts a new run, charged
    again; a reset before play charges nothing."""
    name = type(learner).__name__
    budget = _big_budget(learner.privacy, runs=4)
    L = _quiet(lambda: learner.clone(budget=budget, rng=SEED))
    _quiet(L.clone)
    _require(len(budget.events) == 2, name, "a clone was not charged again")
    L.reset()
    _require(len(budget.events) == 2, name, "a reset before any play was charged")
    _play(L, 1)
    L.reset()
    _require(len(budget.events) == 3, name, "a reset after play was not charged again")
    _require(budget.events[0] == budget.events[1] == budget.events[2], name,
             "a clone or a reset charged another amount than the first run")


def check_backends(learner: OnlineBase) -> None:
    """Each backend the tags declare gives a statement on that backend (with l2-Laplace node
    noise, which has no exact sampler, the grid backends are tried with Laplace noise); a
    backend the tags leave out is refused. OpenDP is skipped when it is not installed."""
    name = type(learner).__name__
    declared = learner.tags().backends
    for b in NOISE_BACKENDS:
        extra: dict[str, Any] = {"budget": None} if "budget" in _params(learner) else {}
        if b != "numpy" and getattr(learner, "noise", None) == "l2laplace":
            extra["noise"] = "laplace"
        try:
            clone = _quiet(lambda b=b, extra=extra: learner.clone(backend=b, rng=SEED, **extra))
        except MissingDependencyError:
            continue
        except ValidationError as err:
            _require(b not in declared, name, f"is tagged with backend {b!r} but refuses it: "
                                              f"{err}")
            continue
        _require(b in declared, name, f"accepts backend={b!r}, which its tags leave out")
        _require(clone.privacy.backend == b, name,
                 f"built with backend={b!r} states backend={clone.privacy.backend!r}")


def check_pickling(learner: OnlineBase) -> None:
    """A learner pickled mid-run and unpickled plays the rest of the run as the original."""
    name = type(learner).__name__
    L = _fresh(learner)
    rounds = _rounds(L)
    feed = _Feedback(L)
    half = rounds // 2
    _play(L, half, feed)
    M = pickle.loads(pickle.dumps(L))
    _require(_same(_play(L, rounds - half, copy.deepcopy(feed)),
                   _play(M, rounds - half, copy.deepcopy(feed))), name,
             "plays differently after a pickle round trip")


def check_seeding(learner: OnlineBase) -> None:
    """The same seed gives the same plays: two clones with one seed, and a reset replay the
    run exactly."""
    name = type(learner).__name__
    A, B = _fresh(learner), _fresh(learner)
    rounds = _rounds(A)
    first = _play(A, rounds)
    _require(_same(first, _play(B, rounds)), name, "two clones with one seed play differently")
    _require(_same(first, _play(A.reset(), rounds)), name, "a reset does not replay the run")


def check_frozen_parameters(learner: OnlineBase) -> None:
    """Setting or deleting a constructor parameter after construction is refused, and leaves
    the parameter as it was."""
    name = type(learner).__name__
    L = _fresh(learner)
    for param, value in _params(L).items():
        for action in ("set", "delete"):
            try:
                if action == "set":
                    setattr(L, param, value)
                else:
                    delattr(L, param)
            except FrozenParameterError:
                pass
            else:
                done = "set" if action == "set" else "deleted"
                raise AssertionError(f"{name}: the '{param}' parameter could be {done} after "
                                     "construction")
            _require(getattr(L, param) is value, name, f"the '{param}' parameter changed")


# ---------------------------------------------------------------------------------------------
# playing a learner, by its tags
# ---------------------------------------------------------------------------------------------
class _Feedback:
    """The checks' stream for one learner: round functions, losses or gains drawn from a
    fixed seed, in the shape the learner's problem takes."""

    def __init__(self, learner: OnlineBase):
        self.rng = np.random.default_rng(SEED)
        self.sense = getattr(learner, "sense", None)

    def function(self, n: int) -> Modular:
        # minimization costs in [-1, 1], maximization values in [0, 1]: every bound holds
        w = self.rng.uniform(-1.0, 1.0, n) if self.sense == "min" else self.rng.random(n)
        return Modular(w / n)

    def vector(self, shape: Any, low: float, high: float) -> np.ndarray:
        return self.rng.uniform(low, high, shape)


def _play(learner: OnlineBase, rounds: int, feed: _Feedback | None = None) -> list[Any]:
    """Play ``rounds`` rounds; the plays (sets, points, draws), copied."""
    feed = _Feedback(learner) if feed is None else feed
    problems = learner.tags().problems
    feedback = learner.tags().feedback
    plays: list[Any] = []
    for _ in range(rounds):
        if "minimization" in problems or "maximization" in problems:
            S = learner.select()  # type: ignore[attr-defined]
            f = feed.function(learner.n)  # type: ignore[attr-defined]
            learner.update(f if feedback == "full" else f(S))  # type: ignore[attr-defined]
            plays.append(S)
        elif "convex" in problems and feedback == "bandit":
            x = np.array(learner.select())  # type: ignore[attr-defined]
            theta = feed.vector(x.shape, -1.0, 1.0) / math.sqrt(x.size)
            learner.update(float(theta @ x))  # type: ignore[attr-defined]
            plays.append(x)
        elif "convex" in problems:  # full information: a gradient per round
            x = np.array(learner.point())  # type: ignore[attr-defined]
            learner.update(feed.vector(x.shape, -1.0, 1.0) / math.sqrt(x.size))  # type: ignore[attr-defined]
            plays.append(x)
        elif "linear" in problems:
            X = np.array(learner.predict())  # type: ignore[attr-defined]
            lo, hi = learner.loss_range  # type: ignore[attr-defined]
            learner.update(feed.vector(X.shape, lo, hi))  # type: ignore[attr-defined]
            plays.append(X)
        else:  # experts: one draw per copy, then a gain vector per copy
            a = np.array(learner.sample())  # type: ignore[attr-defined]
            shape = (int(learner.copies), int(learner.n))  # type: ignore[attr-defined]
            learner.update(feed.vector(shape, 0.0, 1.0))  # type: ignore[attr-defined]
            plays.append(a)
    return plays


def _rounds(learner: OnlineBase) -> int:
    T = getattr(learner, "T", None)
    if T is None:  # Hedge: as many rounds as its statement covers
        T = getattr(learner, "max_draws", None) or 8
    return int(T)


def _same(a: list[Any], b: list[Any]) -> bool:
    return len(a) == len(b) and all(np.array_equal(np.asarray(x), np.asarray(y))
                                    for x, y in zip(a, b, strict=True))


# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------
def _params(learner: OnlineBase) -> dict[str, Any]:
    sig = inspect.signature(type(learner).__init__)
    return {n: getattr(learner, n) for n, p in sig.parameters.items()
            if n != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}


def _fresh(learner: OnlineBase) -> OnlineBase:
    """A seeded clone without a budget (the checks of plays charge nothing)."""
    extra = {"budget": None} if "budget" in _params(learner) else {}
    return _quiet(lambda: learner.clone(rng=SEED, **extra))


def _delta_room(delta: float) -> float:
    return min(0.99, max(0.5, 4.0 * float(delta)))


def _big_budget(need: Any, runs: int = 1) -> Budget:
    return Budget(runs * float(need.epsilon) * 2.0 + 1.0, _delta_room(runs * float(need.delta)))


def _quiet(build: Callable[[], Any]) -> Any:
    # tiny horizons clip default rates with a warning; the checks are not about them
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        warnings.simplefilter("ignore", UserWarning)
        return build()


def _require(ok: bool, name: str, message: str) -> None:
    if not ok:
        raise AssertionError(f"{name}: {message}.")
