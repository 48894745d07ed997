"""What an online learner declares about itself, on its class.

Every learner class states, in a :class:`LearnerTags` stored as its ``_tags`` class attribute
and read with ``learner.tags()`` (or ``LearnerClass.tags()``), whether it is private, what
feedback it takes, which problem it solves, what its regret bound assumes of the stream, and
which noise backends it can draw from. The tags are data, as river's ``_tags`` and
scikit-learn's estimator tags are: the protocol, the harness, the shared checker
(:func:`dpsubmod.online.checks.check_learner`) and the experiment tables read them instead of
keeping their own lists. They are the class's one declaration of its feedback and its
assumption: ``learner.feedback`` and ``learner.assumption`` (on a class or an instance) are
read-only views of its tags, never separate class attributes.

Each concrete learner class declares its own tags, even when a parent's would do: a subclass
that inherited ``private=True`` from a private parent while switching the noise off (as
:class:`~dpsubmod.online.OnlineGreedy` does with :class:`~dpsubmod.online.FIDP`) would
otherwise be mislabelled.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from ..errors import ValidationError

__all__ = ["LearnerTags", "Tagged", "FEEDBACKS", "PROBLEMS", "ASSUMPTIONS", "NOISE_BACKENDS"]

#: What ``update`` receives: the round's whole function (or gradient, or loss vector), or only
#: the value of the play.
FEEDBACKS = ("full", "bandit")
#: The problems: sets of minimum cost, sets of maximum value, points of a convex set against
#: convex losses, points of a polytope against linear losses, and the experts problem.
PROBLEMS = ("minimization", "maximization", "convex", "linear", "experts")
#: What a learner's regret bound assumes of the stream (its privacy holds for every stream).
ASSUMPTIONS = ("iid", "oblivious", "adaptive")
#: The noise backends of :mod:`dpsubmod.privacy.backends`.
NOISE_BACKENDS = ("numpy", "secure", "opendp")


@dataclass(frozen=True)
class LearnerTags:
    """The declaration of an online learner class.

    Parameters
    ----------
    private : bool
        Whether the learner releases its plays under a differential privacy guarantee. A
        private learner states that guarantee from construction on (``learner.privacy``, from
        its ``_privacy_plan()``) and charges it to ``budget=``; one built with its noise
        switched off (``epsilon=math.inf``, ``noise_off`` true) is then not private, which
        ``learner.is_private`` reports.
    feedback : {"full", "bandit"}
        What ``update`` receives.
    problem : {"minimization", "maximization", "convex", "linear", "experts"} or tuple of str
        The problem the learner solves (which also fixes how it is played: sets, points, or
        draws of experts); a tuple for a wrapper that solves its inner learner's problem.
    assumption : {"iid", "oblivious", "adaptive"}
        What the learner's regret bound assumes of the stream: i.i.d. rounds, an oblivious
        adversary (the functions fixed before the run) or an adaptive one.
    backends : tuple of str, default=()
        The noise backends the learner can draw its noise from (names of
        :data:`NOISE_BACKENDS`); empty for a learner that draws no privacy noise.

    Raises
    ------
    ValidationError
        A value outside the lists above, or a private learner with no backend.
    """

    private: bool
    feedback: str
    problem: str | tuple[str, ...]
    assumption: str
    backends: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.private, bool):
            raise ValidationError(f"LearnerTags.private must be a bool; got {self.private!r}.")
        for name, allowed in (("feedback", FEEDBACKS), ("assumption", ASSUMPTIONS)):
            if getattr(self, name) not in allowed:
                raise ValidationError(f"LearnerTags.{name} must be one of {allowed}; got "
                                      f"{getattr(self, name)!r}.")
        if not self.problems or any(p not in PROBLEMS for p in self.problems):
            raise ValidationError(f"LearnerTags.problem must be one of {PROBLEMS}, or a tuple "
                                  f"of them; got {self.problem!r}.")
        unknown = [b for b in self.backends if b not in NOISE_BACKENDS]
        if unknown or not isinstance(self.backends, tuple):
            raise ValidationError(f"LearnerTags.backends must be a tuple of names in "
                                  f"{NOISE_BACKENDS}; got {self.backends!r}.")
        if self.private and not self.backends:
            raise ValidationError("A private learner draws noise: declare the backends it "
                                  "supports in LearnerTags.backends, e.g. ('numpy',).")

    @property
    def problems(self) -> tuple[str, ...]:
        """The problems the learner solves, always as a tuple."""
        return (self.problem,) if isinstance(self.problem, str) else tuple(self.problem)


class _FromTags:
    """A read-only attribute of a learner class and its instances, read from the class's tags
    (so that it cannot disagree with them)."""

    def __set_name__(self, owner: type, name: str) -> None:
        self._name = name

    def __get__(self, obj: object, owner: type) -> Any:
        try:
            tags = owner.tags()  # type: ignore[attr-defined]
        except TypeError as err:  # as a missing attribute, so that getattr(..., default) works
            raise AttributeError(str(err)) from err
        return getattr(tags, self._name)

    def __set__(self, obj: object, value: object) -> None:
        raise AttributeError(self._refusal(obj))

    def __delete__(self, obj: object) -> None:
        raise AttributeError(self._refusal(obj))

    def _refusal(self, obj: object) -> str:
        return (f"{type(obj).__name__}.{self._name} is read from the class's tags and cannot "
                f"be set; declare it in _tags = LearnerTags(..., {self._name}=...).")


class Tagged:
    """What the learner base class (:class:`~dpsubmod.online.OnlineBase`) reads from a class's
    tags: the tags themselves, the feedback and assumption they declare, whether an instance
    is private, and its plan held to them."""

    #: The class's declaration; every concrete learner class sets its own.
    _tags: ClassVar[LearnerTags]

    #: What ``update`` receives, ``"full"`` or ``"bandit"``: the tags' ``feedback``
    #: (read-only, on the class and on its instances).
    feedback = _FromTags()
    #: What the learner's regret bound assumes of the stream, ``"iid"``, ``"oblivious"`` or
    #: ``"adaptive"``: the tags' ``assumption`` (read-only, on the class and on its instances).
    assumption = _FromTags()

    @classmethod
    def tags(cls) -> LearnerTags:
        """The :class:`~dpsubmod.online.tags.LearnerTags` the class declares.

        Raises
        ------
        TypeError
            The class declares none (a ``_tags = LearnerTags(...)`` class attribute).
        """
        tags = getattr(cls, "_tags", None)
        if not isinstance(tags, LearnerTags):
            raise TypeError(f"{cls.__name__} declares no tags; set the class attribute "
                            "_tags = LearnerTags(private=..., feedback=..., problem=..., "
                            "assumption=..., backends=...).")
        return tags

    @property
    def noise_off(self) -> bool:
        """Whether a learner tagged private was built with its noise switched off (for most,
        ``epsilon=math.inf``): its run is then not private. ``False`` unless a learner says."""
        return False

    @property
    def is_private(self) -> bool:
        """Whether this learner's run is released under a privacy guarantee: its class is
        tagged private and its noise is not switched off (:attr:`noise_off`)."""
        return self.tags().private and not self.noise_off

    def _whole_run_plan(self) -> Any:
        """:meth:`_privacy_plan`, held to the class's tags: a learner tagged private (noise on)
        that states no plan, or one tagged not private that states one, is an error in the
        learner, not a run without a guarantee."""
        plan = self._privacy_plan()  # type: ignore[attr-defined]
        if plan is not None and self.__dict__.get("_plan_held") is plan:
            return plan  # held once: the harness reads the statement every round
        tags = getattr(type(self), "_tags", None)
        if tags is not None and (plan is None) == self.is_private:
            name = type(self).__name__
            if plan is None:
                raise TypeError(f"{name} is tagged private but its _privacy_plan() returned "
                                "None: a private learner states the plan of its whole run.")
            raise TypeError(f"{name} is tagged not private (or its noise is off) but its "
                            "_privacy_plan() returned a plan; fix its tags or its plan.")
        if plan is not None:
            object.__setattr__(self, "_plan_held", plan)
        return plan

    def _refuse_unfinished(self) -> None:
        """Refuse to play a private learner whose constructor skipped its last line, which
        freezes the parameters and charges the budget."""
        if isinstance(getattr(type(self), "_tags", None), LearnerTags) and self.is_private:
            name = type(self).__name__
            raise TypeError(f"{name}.__init__ did not end with "
                            f"self._finish_construction({name}): a private learner freezes "
                            "its parameters and charges its budget there, before any play.")
