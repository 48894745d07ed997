r"""Play a learner against a stream and measure its regret: :func:`run` and :class:`Trace`.

:func:`run` clones the learner (the caller's object is never advanced), plays the stream round by
round (``select``; the harness evaluates the round's function at the selection; ``update`` with
the function or, for a bandit learner, that value), then computes the best fixed set in hindsight
(:mod:`dpsubmod.online.comparators`) and the cumulative regret. With an ``rng``, the learner and
the stream get two independent child streams spawned from it, so one seed reproduces a run.

A learner built with ``budget=`` is the exception: it was charged its whole run at construction,
and a clone would be a second release, charged again. :func:`run` plays such a learner itself
(a later run of the same object is a new release, charged by its reset), and refuses an ``rng``
for it, since replacing the learner's randomness needs a clone: build the learner with the
``rng`` you want instead.

Regret after round ``t`` is measured against the best fixed set ``S*`` **of the whole horizon**:

* minimization: :math:`R_t = \sum_{s \le t} f_s(S_s) - \alpha \sum_{s \le t} f_s(S^*)`
  (:math:`\alpha = 1`);
* maximization: :math:`R_t = \alpha \sum_{s \le t} f_s(S^*) - \sum_{s \le t} f_s(S_s)`, by
  default :math:`\alpha = 1 - 1/e` (the :math:`(1-1/e)`-regret).

:math:`R_T` is the regret of the run. The trace also keeps, when the learner can compute it, the
expected value of each round over the learner's own rounding or exploration draw
(:meth:`~dpsubmod.online.Learner.expected_value`), whose cumulative regret has the same mean and a
much smaller variance: use it for rate plots.

Everything in a trace except the selections and the privacy report is computed from the private
functions and is **not private**; it is for evaluation only.
"""

from __future__ import annotations

import math
import sys
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._rng import RNGLike, as_generator
from ..errors import ParameterTypeError, StreamLengthError, ValidationError
from ..functions.base import SetFunction
from .comparators import Hindsight, best_fixed_set, total_values
from .protocol import Feedback, Learner, Sense
from .streams import Stream, as_stream

__all__ = ["run", "Trace"]

#: ``progress=None`` shows progress for runs at least this long when stderr is a terminal.
AUTO_PROGRESS_T = 5000


@dataclass(frozen=True, eq=False, repr=False, kw_only=True)
class _TraceSummary(ABC):
    """What the trace of a set learner and of a convex learner share: the per-round arrays,
    the final regrets, the per-round table and the one-line summary (fields are documented on
    :class:`Trace`). ``_plays`` gives the column name and per-round values of what was
    played."""

    learner: str
    name: str
    n: int
    T: int
    values: np.ndarray
    expected_values: np.ndarray | None
    comparator: Any
    comparator_values: np.ndarray | None
    alpha: float
    regret: np.ndarray | None
    expected_regret: np.ndarray | None
    epsilon: np.ndarray
    privacy: Any
    evaluations: int
    elapsed: np.ndarray
    wall_time: float
    comparator_time: float
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def final_regret(self) -> float:
        """:math:`R_T` (NaN without a comparator)."""
        return math.nan if self.regret is None else float(self.regret[-1])

    @property
    def final_expected_regret(self) -> float:
        """:math:`R_T` from the expected values (NaN when unavailable)."""
        return math.nan if self.expected_regret is None else float(self.expected_regret[-1])

    @abstractmethod
    def _plays(self) -> tuple[str, list[Any]]:
        """The column name and the per-round values of what was played."""

    def records(self) -> list[dict[str, Any]]:
        """One flat dict per round (``pandas.DataFrame(trace.records())`` makes a table).

        Keys: ``round`` (1-based), ``learner``, what was played (``selection`` for a set learner,
        ``point`` as a tuple for a convex one), ``value``, ``expected_value``,
        ``comparator_value``, ``regret``, ``expected_regret``, ``epsilon``, ``elapsed``.
        """
        nan = math.nan
        key, plays = self._plays()

        def at(a: np.ndarray | None, t: int) -> float:
            return nan if a is None else float(a[t])

        return [{
            "round": t + 1,
            "learner": self.name,
            key: plays[t],
            "value": float(self.values[t]),
            "expected_value": at(self.expected_values, t),
            "comparator_value": at(self.comparator_values, t),
            "regret": at(self.regret, t),
            "expected_regret": at(self.expected_regret, t),
            "epsilon": float(self.epsilon[t]),
            "elapsed": float(self.elapsed[t]),
        } for t in range(self.T)]

    def __repr__(self) -> str:
        eps = self.epsilon[-1] if self.T else math.nan
        return (f"{type(self).__name__}({self.name}, T={self.T}, n={self.n}, "
                f"regret={self.final_regret:.6g}, expected_regret="
                f"{self.final_expected_regret:.6g}, epsilon={eps:.4g}, "
                f"wall_time={self.wall_time:.3g}s)")


@dataclass(frozen=True, eq=False, repr=False, kw_only=True)
class Trace(_TraceSummary):
    """The record of one run (non-private except ``selections`` and ``privacy``).

    Attributes
    ----------
    learner : str
        ``repr`` of the learner that played (all its parameters).
    name : str
        The learner's class name.
    feedback : {"full", "bandit"}
    sense : {"min", "max"}
    n, T : int
        Ground-set size and rounds played.
    selections : tuple of tuple of int
        The played sets.
    values : ndarray, shape (T,)
        :math:`f_t(S_t)`: loss (min) or reward (max).
    expected_values : ndarray or None
        Expectation of :math:`f_t(S_t)` over the learner's own draw of round ``t``, when it
        reports one.
    comparator : Hindsight or None
        The best fixed set in hindsight (None when run with ``comparator=None``).
    comparator_values : ndarray or None
        :math:`f_t(S^*)`.
    alpha : float
        Approximation factor of the regret.
    regret, expected_regret : ndarray or None
        Cumulative regret after each round, from ``values`` and ``expected_values``.
    epsilon : ndarray, shape (T,)
        The epsilon of the learner's whole-run guarantee, read after each round (stated before
        round 1, so constant over a run; ``inf`` for a learner without guarantee).
    privacy : object
        The learner's privacy report: the whole run's guarantee (None when not private).
    evaluations : int
        Counted oracle calls over the run (the observation of ``f_t(S_t)`` and the learner's own).
    elapsed : ndarray, shape (T,)
        Cumulative wall time (seconds) of the learner's ``select`` and ``update`` calls.
    wall_time : float
        Wall time of the whole run, comparator included.
    comparator_time : float
        Wall time of the comparator.
    params : dict
        The learner's resolved parameters when it exposes them (else its constructor arguments).
    """

    feedback: Feedback
    sense: Sense
    selections: tuple[tuple[int, ...], ...]
    comparator: Hindsight | None

    def _plays(self) -> tuple[str, list[Any]]:
        return "selection", list(self.selections)


class _Progress:
    """tqdm when installed, else a minimal carriage-return counter on stderr."""

    def __init__(self, total: int, desc: str):
        self.total = total
        try:
            from tqdm.auto import tqdm
        except ImportError:  # pragma: no cover - depends on the environment
            self._bar = None
            self._step = max(1, total // 100)
            self._desc = desc
        else:
            self._bar = tqdm(total=total, desc=desc, leave=False, mininterval=0.5)

    def update(self, t: int) -> None:
        if self._bar is not None:
            self._bar.update(1)
        elif t % self._step == 0 or t == self.total:
            sys.stderr.write(f"\r{self._desc}: {t}/{self.total}")
            sys.stderr.flush()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
        else:
            sys.stderr.write("\n")
            sys.stderr.flush()


def _resolve_comparator(comparator: object, fs: list[SetFunction], n: int, sense: Sense,
                        constraint: object) -> Hindsight | None:
    if comparator is None:
        return None
    if isinstance(comparator, Hindsight):
        return comparator
    if isinstance(comparator, str):
        return best_fixed_set(fs, sense=sense, constraint=constraint, method=comparator)
    if callable(comparator):
        out = comparator(fs)
        if isinstance(out, Hindsight):
            return out
        comparator = out
    if isinstance(comparator, (Iterable, np.ndarray)):
        mask = np.zeros(n, dtype=bool)
        idx = np.asarray(list(comparator) if not isinstance(comparator, np.ndarray)
                         else comparator)
        if idx.dtype == bool:
            mask = idx.copy()
        else:
            mask[idx.astype(np.int64)] = True
        sel = tuple(np.flatnonzero(mask).tolist())
        value = float(total_values(fs, mask[None, :])[0])
        return Hindsight(sel, value, sense, "given", False, math.nan)
    raise ParameterTypeError(
        "The 'comparator' parameter of run must be a method name ('auto', 'enumerate', "
        "'min-norm-point', 'maxflow', 'brute-force', 'greedy'), a Hindsight, a set, a callable "
        f"taking the list of functions, or None; got {type(comparator).__name__}."
    )


def _player(learner: Any, stream: Any, rng: RNGLike, caller: str) -> tuple[Any, Any]:
    """The learner to play (a clone, or the learner itself when it holds a budget, since a
    clone would be a second, charged release), reset, and the stream's iterator."""
    budgeted = getattr(learner, "budget", None) is not None
    if budgeted and rng is not None:
        raise ValidationError(
            f"{caller}(..., rng=...) replaces the learner's randomness by cloning it, but "
            f"{type(learner).__name__} was built with a budget and a clone would be a second "
            "release, charged again. Build the learner with the rng you want (its rng= "
            f"parameter) and call {caller} without rng."
        )
    if rng is not None:
        l_rng, s_rng = as_generator(rng).spawn(2)
        player = learner.clone(rng=l_rng)
        functions = stream.iterate(rng=s_rng)
    else:
        player = learner if budgeted else learner.clone()
        functions = stream.iterate()
    # a budgeted learner that already played starts a new run here, charged before it plays
    player.reset()
    return player, functions


def run(learner: Learner, stream: Stream | Iterable[SetFunction], *,
        comparator: str | Hindsight | Callable[..., Any] | Iterable[int] | None = "auto",
        constraint: object = None, alpha: float | None = None, expected: bool = True,
        rng: RNGLike = None, progress: bool | None = None) -> Trace:
    """Play ``learner`` on ``stream`` and measure its regret.

    Parameters
    ----------
    learner : Learner
        Cloned before playing, so the caller's object is not advanced; except a learner built
        with a budget, which is played itself (it was charged its run at construction, and a
        clone would be charged again; playing it once more later is a new release, charged by
        its reset).
    stream : Stream or sequence of SetFunction
        ``stream.n`` must equal ``learner.n`` and ``stream.T <= learner.T``.
    comparator : str, Hindsight, set, callable or None, default="auto"
        How to get the best fixed set: a method name for
        :func:`~dpsubmod.online.best_fixed_set`, a precomputed :class:`Hindsight`, a set given
        directly, a callable ``comparator(functions) -> Hindsight or set``, or ``None`` (no
        regret).
    constraint : int or Constraint, optional
        Maximization only: the constraint of the comparator (default: the learner's
        ``constraint`` or ``k`` attribute).
    alpha : float, optional
        Regret factor; default 1 for minimization, ``1 - 1/e`` for maximization.
    expected : bool, default=True
        Record the learner's :meth:`~dpsubmod.online.Learner.expected_value` each round (costs
        about ``n + 1`` uncounted evaluations per round).
    rng : int, Generator, SeedSequence or None, default=None
        When given, the learner is cloned with ``rng=child`` and the stream iterated with
        another child, both spawned from it; when None, the learner's and the stream's own
        ``rng`` parameters are used. Refused for a learner built with a budget (a clone would
        be a second, charged release): build that learner with the ``rng`` you want.
    progress : bool, optional
        Show a progress bar (tqdm if installed). Default: on for ``T >= 5000`` when stderr is a
        terminal.

    Returns
    -------
    Trace

    Raises
    ------
    ParameterTypeError
        ``learner`` is not a Learner, or ``stream`` not a stream of SetFunctions.
    GroundSetMismatchError, StreamLengthError
        Ground sets differ, or the stream is longer than the learner's horizon (raised before
        any round is played).
    ValidationError
        An ``rng`` was given for a learner built with a budget.
    BudgetExceededError
        A budgeted learner that already played cannot be charged a new run.

    Examples
    --------
    >>> import math
    >>> from dpsubmod.online import SubmodPFTAL, stochastic_stream
    >>> trace = run(SubmodPFTAL(3, T=200, M=1.0, epsilon=math.inf), stochastic_stream(3, 200),
    ...             rng=0)
    >>> trace.T, trace.comparator.method, trace.final_regret < 200
    (200, 'enumerate', True)
    """
    t_start = time.perf_counter()
    if not isinstance(learner, Learner):
        raise ParameterTypeError(
            f"The 'learner' argument of run must be a dpsubmod Learner; got "
            f"{type(learner).__name__}."
        )
    stream = as_stream(stream)
    if stream.n != learner.n:  # type: ignore[attr-defined]
        from ..errors import GroundSetMismatchError

        raise GroundSetMismatchError(
            f"The stream plays on n={stream.n} elements but the learner on "
            f"n={learner.n}; build the learner with n={stream.n}."  # type: ignore[attr-defined]
        )
    if stream.T > learner.horizon:
        raise StreamLengthError(
            f"The stream has T={stream.T} rounds but the learner was built for "
            f"T={learner.horizon}; build the learner with T={stream.T}."
        )
    sense: Sense = learner.sense
    if alpha is None:
        alpha = 1.0 if sense == "min" else 1.0 - 1.0 / math.e
    elif not (0.0 < float(alpha) <= 1.0):
        raise ValidationError(f"The 'alpha' parameter of run must lie in (0, 1]; got {alpha!r}.")
    if sense == "max" and constraint is None:
        constraint = getattr(learner, "constraint", None)
        if constraint is None:
            constraint = getattr(learner, "k", None)

    player, functions = _player(learner, stream, rng, "run")

    T, n = stream.T, stream.n
    show = (T >= AUTO_PROGRESS_T and sys.stderr.isatty()) if progress is None else bool(progress)
    bar = _Progress(T, type(player).__name__) if show else None
    fs: list[SetFunction] = []
    selections: list[tuple[int, ...]] = []
    values = np.empty(T)
    expv = np.empty(T) if expected else None
    eps = np.empty(T)
    elapsed = np.empty(T)
    learner_time = 0.0
    evaluations = 0
    bandit = player.feedback == "bandit"
    for t, f in enumerate(functions):
        t0 = time.perf_counter()
        S = player.select()
        t1 = time.perf_counter()
        ev0 = f.evaluations
        y = f(S)
        if expv is not None:
            e = player.expected_value(f)
            if e is None:
                expv = None
            else:
                expv[t] = e
        t2 = time.perf_counter()
        player.update(y if bandit else f)
        t3 = time.perf_counter()
        evaluations += f.evaluations - ev0
        learner_time += (t1 - t0) + (t3 - t2)
        elapsed[t] = learner_time
        values[t] = y
        selections.append(S)
        fs.append(f)
        eps[t] = player.epsilon_spent
        if bar is not None:
            bar.update(t + 1)
    if bar is not None:
        bar.close()

    c0 = time.perf_counter()
    hind = _resolve_comparator(comparator, fs, n, sense, constraint)
    regret = exp_regret = comp_vals = None
    if hind is not None:
        smask = np.zeros(n, dtype=bool)
        smask[list(hind.selection)] = True
        comp_vals = np.fromiter((f._value(smask) for f in fs), dtype=np.float64, count=T)
        sign = 1.0 if sense == "min" else -1.0
        base = alpha * np.cumsum(comp_vals)
        regret = sign * (np.cumsum(values) - base)
        if expv is not None:
            exp_regret = sign * (np.cumsum(expv) - base)
    c1 = time.perf_counter()

    params = player.resolved_params
    return Trace(
        learner=repr(player), name=type(player).__name__, feedback=player.feedback, sense=sense,
        n=n, T=T, selections=tuple(selections), values=values, expected_values=expv,
        comparator=hind, comparator_values=comp_vals, alpha=float(alpha), regret=regret,
        expected_regret=exp_regret, epsilon=eps, privacy=player.privacy,
        evaluations=int(evaluations), elapsed=elapsed, wall_time=time.perf_counter() - t_start,
        comparator_time=c1 - c0, params=dict(params),
    )
