"""The online learner protocol.

A learner plays ``T`` rounds against a stream of set functions on ``range(n)``. Each round it
commits to a set with :meth:`Learner.select`, then receives :meth:`Learner.update` with the round's
feedback:

* ``feedback = "full"`` (full information): the round's :class:`~dpsubmod.functions.SetFunction`
  itself, which the learner may evaluate anywhere;
* ``feedback = "bandit"``: the float ``f_t(S_t)``, the value of the played set and nothing else.

Selections are returned as **sorted tuples of Python ints** (hashable, printed in a fixed order,
and accepted as they are by ``f(S)``; the tuple of a large set keeps its boolean mask for ``f(S)``
to read).

Learners follow river's habits (``river/base/base.py``): the constructor stores every parameter
untouched in a public attribute of the same name; all state (iterates, counters, the random
generator) lives in underscore attributes and is built lazily by ``_reset()`` on the first
``select()`` or an explicit :meth:`Learner.reset`; :meth:`Learner.clone` builds a fresh learner
from the parameters. The ``rng`` parameter is resolved only in ``_reset()``, so a learner built
with an integer seed replays the same run after every ``reset()`` and every ``clone()``, and
``clone(rng=other_seed)`` gives an independent replica.

Tags. Every learner class declares what it is (private or not, its feedback, its problem, the
stream its regret bound assumes, its noise backends) in a
:class:`~dpsubmod.online.tags.LearnerTags`, read with :meth:`OnlineBase.tags`; a learner
tagged private whose ``_privacy_plan()`` states nothing is an error, not a run without a
guarantee.

Privacy. A private learner lists, from its public parameters (``T``, ``epsilon``, ``n``, ...),
every mechanism use of a whole run of ``T`` rounds in a
:class:`~dpsubmod.privacy.plan.PrivacyPlan` (:meth:`OnlineBase._privacy_plan`).
:attr:`OnlineBase.privacy` states that whole-run guarantee from construction on, before round 1,
and ``None`` for a learner that gives none (non-private learners, and private learners with the
noise switched off). A learner built with ``budget=`` charges the whole run to it at
construction, before anything is released, in the last line of its ``__init__``
(:meth:`OnlineBase._finish_construction`); :meth:`OnlineBase.reset` after play starts a new run
and charges again, and so does a clone (a new release).
"""

from __future__ import annotations

import dataclasses
import inspect
import math
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, ClassVar, Literal

import numpy as np

from .._rng import check_rng
from .._selection import Selection
from .._validation import check_int, check_real
from ..errors import (
    FrozenParameterError,
    GroundSetMismatchError,
    ParameterTypeError,
    StreamLengthError,
    ValidationError,
)
from ..functions.base import SetFunction
from ..privacy.ledger import Ledger
from ..privacy.plan import PrivacyPlan
from .tags import Tagged

Feedback = Literal["full", "bandit"]
Sense = Literal["min", "max"]


def as_selection(mask: np.ndarray) -> tuple[int, ...]:
    """The sorted tuple of Python ints of a boolean mask (the protocol's selection type).

    The tuple of a set of at least ``n / 8`` elements keeps a read-only copy of the mask, which
    evaluating the set (``f(S)``) reads instead of converting the indices back
    (:class:`~dpsubmod._selection.Selection`)."""
    return Selection.from_mask(mask)


class OnlineBase(Tagged, ABC):
    """Parameters public and untouched, state private, clone from the parameters.

    Subclasses store every ``__init__`` argument under its own name and build their state in
    ``_reset()``; they never touch a parameter after construction. Each class declares its
    :meth:`tags`; a private subclass takes ``budget=None`` and implements
    :meth:`_privacy_plan`. The last line of every ``__init__`` is
    ``self._finish_construction(ThisClass)``, which charges the plan to the budget; a reset
    after play charges it again.

    Parameters are frozen by that last line: assigning to (or deleting) a constructor
    parameter afterwards raises :class:`~dpsubmod.errors.FrozenParameterError`, so the privacy
    statement, the charge and the plan's draws always describe the same parameters.
    ``clone(name=value)`` builds a new learner instead.
    """

    def _finish_construction(self, owner: type) -> None:
        """The last line of every learner's ``__init__``: freeze the parameters, refuse a bad
        ``rng``, and charge the whole run to ``budget`` (before anything is drawn).

        ``owner`` is the class whose ``__init__`` makes the call. When that constructor runs
        as a parent's, called from a subclass's own ``__init__``, nothing happens yet: the
        subclass's last line does it, once all its parameters are stored.

        Raises
        ------
        BudgetExceededError
            The run does not fit in ``budget`` (nothing is charged).
        """
        if type(self).__init__ is not owner.__init__:
            return
        # the statement and the charge below describe these parameters: frozen now
        object.__setattr__(self, "_frozen", True)
        # rng is resolved lazily in _reset(); a bad one must still be refused here, before
        # the charge and before any play
        check_rng(getattr(self, "rng", None), type(self).__name__)
        self._charge_run()

    # -- frozen parameters ----------------------------------------------------------------------
    @classmethod
    def _parameter_names(cls) -> frozenset[str]:
        """The names of the constructor's parameters (read once per class)."""
        names = cls.__dict__.get("_parameter_names_cache")
        if names is None:
            sig = inspect.signature(cls.__init__)
            names = frozenset(n for n, p in sig.parameters.items()
                              if n != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD))
            type.__setattr__(cls, "_parameter_names_cache", names)
        return names

    def _refuse_parameter_change(self, name: str) -> None:
        if (name[:1] != "_" and self.__dict__.get("_frozen", False)
                and name in type(self)._parameter_names()):
            cls = type(self).__name__
            raise FrozenParameterError(
                f"The '{name}' parameter of {cls} cannot be changed after construction: the "
                "learner resolved its parameters once, and its privacy statement, its charge "
                f"and its draws follow them. Build a new learner, e.g. "
                f"learner.clone({name}=...) or {cls}(..., {name}=...)."
            )

    def __setattr__(self, name: str, value: Any) -> None:
        # state (a private name) is set every round, parameters before the freeze: no call
        if name[:1] != "_" and self.__dict__.get("_frozen", False):
            self._refuse_parameter_change(name)
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        self._refuse_parameter_change(name)
        object.__delattr__(self, name)

    # -- privacy ------------------------------------------------------------------------------
    def _privacy_plan(self) -> PrivacyPlan | None:
        """Every mechanism use of a whole run, from public parameters; ``None`` when the
        learner gives no privacy guarantee (tagged not private, or noise off). Every learner
        tagged private implements it: ``_whole_run_plan()`` refuses a missing one."""
        return None

    def _memo_plan(self, build: Callable[[], PrivacyPlan | None]) -> PrivacyPlan | None:
        """The plan ``build()`` returns, built once: it depends on the parameters alone, and
        they never change after construction."""
        if "_plan" not in self.__dict__:
            self._plan = build()
        return self._plan

    @property
    def plan(self) -> PrivacyPlan | None:
        """The whole run's :class:`~dpsubmod.privacy.plan.PrivacyPlan` (every mechanism use a
        run of ``T`` rounds can make, from the public parameters), or ``None`` for a learner
        that gives no guarantee. Learners built on another one compose its plan."""
        return self._whole_run_plan()

    @property
    def privacy(self) -> Any:
        """The whole run's privacy guarantee (a
        :class:`~dpsubmod.privacy.ledger.PrivacyReport`), stated from construction on, or
        ``None`` for a learner that gives no guarantee."""
        plan = self._whole_run_plan()
        if plan is None:
            return None
        # The harness reads this every round; composing a long run each time would dominate.
        cached = self.__dict__.get("_privacy_report")
        if cached is None or cached[0] is not plan:
            cached = (plan, plan.report())
            self._privacy_report = cached
        return cached[1]

    def _run_allowance(self) -> Any:
        """A fresh :class:`~dpsubmod.privacy.plan.Allowance` of one run's planned uses, through
        which the run draws its noise (``None`` for a learner without a plan)."""
        plan = self._whole_run_plan()
        return None if plan is None else plan.allowance()

    def _charge_run(self) -> None:
        """Charge one whole run to ``budget`` (nothing when there is none)."""
        budget = getattr(self, "budget", None)
        if budget is None:
            return
        name = type(self).__name__
        if not isinstance(budget, Ledger):
            raise ParameterTypeError(
                f"The 'budget' parameter of {name} must be a dpsubmod Budget or None; got "
                f"{type(budget).__name__}. Build one with dpsubmod.Budget(epsilon=1.0)."
            )
        plan = self._whole_run_plan()
        if plan is None:
            raise ValidationError(
                f"{name} was given a budget but, with these parameters, releases nothing under a "
                "privacy guarantee (the noise is off); drop budget=, or pass a finite epsilon."
            )
        plan.charge(budget, caller=name)

    def _has_played(self) -> bool:
        """Whether anything was released since the state was built."""
        return bool(getattr(self, "_round", 0) or getattr(self, "_pending", False)
                    or getattr(self, "_t", 0))

    def _get_params(self) -> dict[str, Any]:
        """The constructor arguments, read back from the attributes of the same names."""
        sig = inspect.signature(type(self).__init__)
        params: dict[str, Any] = {}
        for name, p in sig.parameters.items():
            if name == "self" or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                continue
            params[name] = getattr(self, name)
        if "backend" in params and "_backend_given" in self.__dict__:
            # the argument as given: a clone with another seed chooses its own default backend
            params["backend"] = self.__dict__["_backend_given"]
        return params

    def clone(self, **overrides: Any) -> OnlineBase:
        """A fresh object with the same parameters (state not copied), ``overrides`` replacing some.

        ``clone(rng=seed)`` is the way to get an independent replica with another seed.
        """
        params = self._get_params()
        unknown = set(overrides) - set(params)
        if unknown:
            raise ValidationError(
                f"clone() of {type(self).__name__} got unknown parameter(s) {sorted(unknown)}; "
                f"valid ones are {sorted(params)}."
            )
        params.update(overrides)
        return type(self)(**params)

    @abstractmethod
    def _reset(self) -> None:
        """Build the state from the parameters (called by ``reset`` and on first use)."""

    def reset(self) -> OnlineBase:
        """Forget all state; the next round is round 1 again (same seed, same run).

        With a budget, a reset after play starts a new run: its whole cost is charged first
        (:class:`~dpsubmod.errors.BudgetExceededError` when it does not fit; then nothing
        changes).
        """
        if getattr(self, "budget", None) is not None and self._has_played():
            self._charge_run()
        self._reset()
        return self

    def __repr__(self) -> str:
        def fmt(v: Any) -> str:
            if isinstance(v, np.ndarray):
                return f"array(shape={v.shape})"
            if isinstance(v, np.random.Generator):
                return "Generator(...)"
            return repr(v)

        inner = ", ".join(f"{k}={fmt(v)}" for k, v in self._get_params().items())
        return f"{type(self).__name__}({inner})"


class RoundProtocol(OnlineBase):
    """The select/update alternation shared by every online learner: at most ``T`` rounds, one
    ``update`` per ``select``, both checked before any state changes. Subclasses store ``T`` and
    call :meth:`_open_round` in ``select`` and :meth:`_check_pending` / :meth:`_close_round`
    around their ``update``."""

    #: What ``update`` takes, for the error messages.
    _feedback_hint: ClassVar[str] = "update(feedback) with the round's feedback"

    def _reset(self) -> None:
        """Build fresh state. Subclasses call this first, then build their own."""
        self._round = 0  # rounds completed (select + update)
        self._pending = False  # a play was selected and awaits its feedback
        self._last: Any = None

    def _ensure_state(self) -> None:
        if not hasattr(self, "_round"):
            self._reset()

    @property
    def t(self) -> int:
        """Number of completed rounds (0 before the first update)."""
        self._ensure_state()
        return self._round

    @property
    def horizon(self) -> int:
        """The number of rounds ``T`` the learner was built for."""
        return int(self.T)  # type: ignore[attr-defined]

    @property
    def guarantee(self) -> Any:
        """The theorem's bound on this run's expected regret for its resolved parameters (a
        :class:`~dpsubmod.online.RegretGuarantee`: the bound in the objective's units, the theorem,
        and whether it is vacuous), or ``None`` for a learner that states none. Known from the
        public parameters before round 1."""
        self._ensure_state()
        g = self._guarantee()
        if g is not None and not g.assumption:
            g = dataclasses.replace(g, assumption=self.tags().assumption)
        return g

    def _guarantee(self) -> Any:
        return None

    @property
    def resolved_params(self) -> dict[str, Any]:
        """Every parameter after defaults were resolved (learning rates, exploration, noise
        calibration, ...), enough to reproduce a run; the constructor arguments for a learner
        that resolves nothing."""
        self._ensure_state()
        params = getattr(self, "_params", None)
        return self._get_params() if params is None else dict(params)

    def _open_round(self) -> None:
        self._ensure_state()
        if not self.__dict__.get("_frozen", False):
            self._refuse_unfinished()
        name = type(self).__name__
        if self._pending:
            raise ValidationError(
                f"{name}.select() was called twice in round {self._round + 1}; "
                f"call {self._feedback_hint} before selecting again."
            )
        if self._round >= self.horizon:
            raise StreamLengthError(
                f"{name} was built for T={self.horizon} rounds and all of them "
                "have been played; build it with a larger T, or reset() it."
            )

    def _check_pending(self) -> None:
        self._ensure_state()
        if not self._pending:
            raise ValidationError(
                f"{type(self).__name__}.update() was called without a pending selection; "
                f"call select() first, then {self._feedback_hint}."
            )

    def _close_round(self) -> None:
        self._pending = False
        self._round += 1


class Learner(RoundProtocol):
    """Base class of online set-selection learners (minimization or maximization).

    Subclasses declare their tags (``_tags``, a :class:`~dpsubmod.online.tags.LearnerTags`:
    among them ``feedback`` and ``assumption``), set the class attribute ``sense``, store their
    parameters (they must include ``n``, ``T`` and ``rng``) and end ``__init__`` with
    ``self._finish_construction(ThisClass)``, and implement ``_reset()`` (calling
    ``super()._reset()`` first), ``_select() -> mask`` and ``_update(feedback)``. The base class
    enforces the protocol: ``select`` and ``update`` alternate, at most ``T`` rounds are played,
    full-information feedback is a SetFunction on the same ground set and bandit feedback a finite
    float, all checked before the learner's state changes.

    Class attributes
    ----------------
    feedback : {"full", "bandit"}
        What :meth:`update` receives; read-only, read from the class's tags.
    sense : {"min", "max"}
        ``"min"``: feedback values are losses to minimise; ``"max"``: rewards to maximise.
    assumption : {"iid", "oblivious", "adaptive"}
        What the learner's regret bound (:attr:`guarantee`) assumes of the stream: i.i.d.
        rounds, an oblivious adversary (the functions fixed before the run) or an adaptive one
        (each function may depend on earlier plays); read-only, read from the class's tags.
        Its privacy holds for every stream whatever this says.

    Notes
    -----
    Learners are not thread-safe, and a learner object plays one run at a time: the harness
    (:func:`dpsubmod.online.run`) clones the learner it is given, so the caller's object is
    never advanced, except a learner built with a budget, which the harness plays itself (a
    clone would be a second release, charged again).
    """

    sense: ClassVar[Sense] = "min"

    # -- protocol -----------------------------------------------------------------------------
    def select(self) -> tuple[int, ...]:
        """Commit to this round's set (before the round's function is revealed).

        Returns
        -------
        tuple of int
            The selected set, sorted.

        Raises
        ------
        ValidationError
            ``select`` was called twice without an ``update`` in between.
        StreamLengthError
            All ``T`` rounds have been played.
        """
        self._open_round()
        sel = as_selection(self._select())
        self._pending = True
        self._last = sel
        return sel

    def update(self, feedback: SetFunction | float) -> None:
        """Receive the feedback of the round just played.

        Parameters
        ----------
        feedback : SetFunction or float
            Full information: the round's function (same ground set). Bandit: the finite value
            ``f_t(S_t)`` of the set returned by the last :meth:`select`.

        Raises
        ------
        ValidationError
            No set is awaiting feedback, the value is not finite, or (full information) the
            ground sets differ (:class:`GroundSetMismatchError`).
        ParameterTypeError
            The feedback has the wrong type for this learner.
        """
        self._check_pending()
        if self.tags().feedback == "full":
            if not isinstance(feedback, SetFunction):
                raise ParameterTypeError(
                    f"{type(self).__name__} is a full-information learner: update() takes the "
                    f"round's SetFunction; got {type(feedback).__name__}."
                )
            if feedback.n != self.n:  # type: ignore[attr-defined]
                raise GroundSetMismatchError(
                    f"The round's function has a ground set of size {feedback.n} but "
                    f"{type(self).__name__} plays on n={self.n}; "  # type: ignore[attr-defined]
                    "both must be defined on the same ground set range(n)."
                )
            self._update(feedback)
        else:
            if isinstance(feedback, SetFunction):
                raise ParameterTypeError(
                    f"{type(self).__name__} is a bandit learner: update() takes the float value "
                    "f_t(S_t) of the played set, not the function."
                )
            value = check_real(feedback, "feedback", caller=f"{type(self).__name__}.update")
            self._update(value)
        self._close_round()

    @abstractmethod
    def _select(self) -> np.ndarray:
        """This round's set as a boolean mask of length n."""

    @abstractmethod
    def _update(self, feedback: SetFunction | float) -> None:
        """Learn from validated feedback."""

    # -- diagnostics and privacy --------------------------------------------------------------
    def expected_value(self, f: SetFunction) -> float | None:
        """Exact expectation of ``f(S_t)`` over the learner's own randomness in this round.

        Called between :meth:`select` and :meth:`update`; it conditions on the learner's state
        (for a private learner, on the noise drawn so far) and averages over the round's own
        rounding or exploration draw. It evaluates ``f`` where the learner did not play, so it is
        a **non-private diagnostic** for experiments (the harness records it to reduce the
        variance of regret curves); it does not count in ``f.evaluations`` and never changes
        the learner. ``None`` when the learner cannot compute it.
        """
        return None

    @property
    def epsilon_spent(self) -> float:
        """The epsilon of the whole run's guarantee (:attr:`privacy`), ``inf`` for a learner
        that gives no guarantee."""
        rep = self.privacy
        if rep is None:
            return math.inf
        return float(rep.epsilon)

    # -- helpers for subclasses ---------------------------------------------------------------
    def _require_pending(self, what: str) -> None:
        """Raise unless a selection awaits its feedback (for diagnostics of the current round)."""
        self._ensure_state()
        if not self._pending:
            raise ValidationError(
                f"{type(self).__name__}.{what}() describes the current round: call it after "
                "select() and before update()."
            )

    @staticmethod
    def _check_common(n: object, T: object, caller: str) -> None:
        check_int(n, "n", low=1, caller=caller)
        check_int(T, "T", low=1, caller=caller)
