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

Memory. The stream is read as it is played: a generator is never read ahead (an endless one is
stopped at round ``T + 1`` of the learner, with an error), and no round's function is kept. The
trace holds a few numbers per round and the played sets as packed bits. The comparator needs
the whole stream only through its sum, which
:class:`~dpsubmod.online.comparators.RunningSum` keeps compact (modular functions and cuts fold
into one; other functions are kept once per distinct object);
the per-round comparator values :math:`f_t(S^*)` come from a second pass over a re-iterable
:class:`~dpsubmod.online.Stream`. Only a one-shot iterator (a generator) with a comparator to
compute makes the harness keep the functions, and then at most :data:`HISTORY_LIMIT` rounds of
them (a learner built for more is refused before round 1).

Everything in a trace except the selections and the privacy report is computed from the private
functions and is **not private**; it is for evaluation only.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from .._progress import check_progress
from .._rng import RNGLike
from .._validation import check_real
from ..errors import (
    GroundSetMismatchError,
    NonFiniteObjectiveError,
    ParameterTypeError,
    StreamLengthError,
    ValidationError,
)
from ..functions.base import SetFunction
from ._trace import AUTO_PROGRESS_T, Columns, Progress, TraceSummary, prepare_player
from .comparators import METHODS, Hindsight, RunningSum, best_fixed_set
from .protocol import Feedback, Learner, Sense
from .streams import Stream, as_stream

#: Most rounds whose functions the harness keeps, when a one-shot iterator (read once) must be
#: read again for the comparator.
HISTORY_LIMIT = 100_000


@dataclass(frozen=True, eq=False, repr=False, kw_only=True)
class Trace(TraceSummary):
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
        The played sets (decoded on first access from ``packed_selections``).
    packed_selections : ndarray of uint8, shape (T, ceil(n / 8))
        The played sets as bit masks (``numpy.unpackbits(row)[:n]``).
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
    guarantee : RegretGuarantee or None
        The learner's :attr:`~dpsubmod.online.protocol.RoundProtocol.guarantee`: its theorem's
        bound on the expected regret for this run's parameters (None when it states none).
        ``regret[-1]`` is one run's regret, the bound is on its expectation.

    Notes
    -----
    ``records()`` gives the rounds as plain dicts and ``to_frame()`` as a pandas DataFrame
    (columns named as the arrays above, parameters and guarantee in ``attrs``).
    """

    feedback: Feedback
    sense: Sense
    packed_selections: np.ndarray
    comparator: Hindsight | None

    @cached_property
    def selections(self) -> tuple[tuple[int, ...], ...]:
        """The played sets, sorted tuples of ints (decoded once from the packed bits)."""
        bits = np.unpackbits(self.packed_selections, axis=1, count=self.n).astype(bool)
        return tuple(tuple(np.flatnonzero(row).tolist()) for row in bits)

    def _plays(self) -> tuple[str, list[Any]]:
        return "selection", list(self.selections)


def _given_mask(comparator: object, n: int) -> np.ndarray | None:
    """The mask of a comparator given as a set (indices or a boolean mask), else None."""
    if isinstance(comparator, (str, Hindsight)) or callable(comparator) or comparator is None:
        return None
    if isinstance(comparator, (Iterable, np.ndarray)):
        idx = np.asarray(list(comparator) if not isinstance(comparator, np.ndarray)
                         else comparator)
        mask = np.zeros(n, dtype=bool)
        if idx.dtype == bool:
            mask[:] = idx
        elif idx.size:
            mask[idx.astype(np.int64)] = True
        return mask
    raise ParameterTypeError(
        "The 'comparator' parameter of run must be a method name ('auto', 'enumerate', "
        "'min-norm-point', 'maxflow', 'brute-force', 'greedy'), a Hindsight, a set, a callable "
        f"taking the list of functions, or None; got {type(comparator).__name__}."
    )


def _finite(value: float, t: int, where: str) -> float:
    """``value`` of round ``t + 1``'s function, refused unless finite: a regret (or a learner
    state) computed from NaN or an infinite value means nothing."""
    v = float(value)
    if not math.isfinite(v):
        raise NonFiniteObjectiveError(
            f"The 'stream' argument of run: the function of round {t + 1} returned {v!r} "
            f"{where}. Every round's function must return finite values on every set."
        )
    return v


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
    stream : Stream, sequence or iterable of SetFunction
        On the learner's ground set, at most ``learner.T`` rounds. A generator or iterator is
        read lazily (:class:`~dpsubmod.online.OneShotStream`); one with more than
        ``learner.T`` functions (an endless one, say) is stopped when its round ``T + 1``
        arrives, with :class:`~dpsubmod.errors.StreamLengthError`.
    comparator : str, Hindsight, set, callable or None, default="auto"
        How to get the best fixed set: a method name for
        :func:`~dpsubmod.online.best_fixed_set` (computed from the compact running sum of the
        functions), a precomputed :class:`Hindsight`, a set given directly, a callable
        ``comparator(functions) -> Hindsight or set`` (given the list of the functions, which
        is then built), or ``None`` (no regret). With a method name or a callable, the
        per-round values :math:`f_t(S^*)` come from a second pass over a re-iterable stream;
        a one-shot iterator is kept in memory instead, and is refused before round 1 when the
        learner's ``T`` exceeds :data:`HISTORY_LIMIT`.
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
    progress : bool or None, default=None
        Show a tqdm bar of the rounds on stderr; like every bar of dpsubmod it stays silent
        when stderr is not a terminal. None: only for runs of at least 5000 rounds. It never
        changes the trace or the random draws.

    Returns
    -------
    Trace

    Raises
    ------
    ParameterTypeError
        ``learner`` is not a Learner, or ``stream`` not a stream of SetFunctions.
    GroundSetMismatchError, StreamLengthError
        Ground sets differ, or the stream is longer than the learner's horizon (raised before
        any round is played when the stream declares its length, at round ``T + 1``
        otherwise).
    ValidationError
        An ``rng`` was given for a learner built with a budget, or a one-shot iterator would
        have to be kept for more than :data:`HISTORY_LIMIT` rounds; ``alpha`` outside (0, 1],
        a ``comparator`` method that does not exist for the learner's sense, an empty stream.
    NonFiniteObjectiveError
        A round's function returned NaN or an infinite value (at the played set, in
        expectation, or at the comparator's set); a budgeted learner's charge stands.
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
    progress = check_progress(progress, "run", allow_none=True)
    source = as_stream(stream, name="stream", caller="run")
    n, horizon = int(learner.n), learner.horizon  # type: ignore[attr-defined]
    if source.n != n:
        raise GroundSetMismatchError(
            f"The stream plays on n={source.n} elements but the learner on "
            f"n={n}; build the learner with n={source.n}."
        )
    if source.T is not None and source.T > horizon:
        raise StreamLengthError(
            f"The stream has T={source.T} rounds but the learner was built for "
            f"T={horizon}; build the learner with T={source.T}."
        )
    sense: Sense = learner.sense
    if alpha is None:
        alpha = 1.0 if sense == "min" else 1.0 - 1.0 / math.e
    else:
        alpha = check_real(alpha, "alpha", low=0.0, low_open=True, high=1.0, caller="run",
                           fix="It is the regret factor; leave it None for the default.")
    if isinstance(comparator, str) and comparator not in METHODS[sense]:
        raise ValidationError(
            f"The 'comparator' parameter of run must be one of {METHODS[sense]} for a "
            f"{'minimization' if sense == 'min' else 'maximization'} learner, a Hindsight, a "
            f"set, a callable or None; got {comparator!r}."
        )
    if sense == "max" and constraint is None:
        constraint = getattr(learner, "constraint", None)
        if constraint is None:
            constraint = getattr(learner, "k", None)

    given = _given_mask(comparator, n)
    if isinstance(comparator, Hindsight):
        given = np.zeros(n, dtype=bool)
        given[list(comparator.selection)] = True
    # A method name needs the sum (kept compact); a callable needs the functions themselves.
    needs_sum = isinstance(comparator, str)
    needs_list = callable(comparator) and not isinstance(comparator, (str, Hindsight))
    keep = (needs_sum or needs_list) and not source.reiterable
    if keep and horizon > HISTORY_LIMIT:
        raise ValidationError(
            f"run() with comparator={comparator!r} on a one-shot iterator must keep every "
            f"function to evaluate the comparator afterwards, and the learner allows "
            f"T={horizon} rounds, more than HISTORY_LIMIT={HISTORY_LIMIT}. Pass a Stream "
            "(FunctionStream, IIDStream, RecordStream: read a second time instead), "
            "comparator=None, or a precomputed Hindsight or set."
        )

    player, functions, replay = prepare_player(learner, source, rng, "run")
    # the declared length exactly; an unknown one starts small and doubles
    cap = source.T if source.T is not None else min(horizon, 1 << 12)
    cols = Columns(cap, {"values": ((), np.float64), "expected": ((), np.float64),
                         "epsilon": ((), np.float64), "elapsed": ((), np.float64),
                         "given": ((), np.float64),
                         "sets": (((n + 7) // 8,), np.uint8)})
    show = (min(source.T or horizon, horizon) >= AUTO_PROGRESS_T and sys.stderr.isatty()) \
        if progress is None else bool(progress)
    bar = Progress(source.T, type(player).__name__) if show else None
    acc = RunningSum(n) if needs_sum else None
    history: list[SetFunction] | None = [] if keep else None
    has_expected = bool(expected)
    learner_time = 0.0
    evaluations = 0
    feedback = player.tags().feedback
    bandit = feedback == "bandit"
    mask = np.zeros(n, dtype=bool)
    for t, f in enumerate(functions):
        if t >= horizon:
            raise StreamLengthError(
                f"The stream has more than the T={horizon} rounds {type(player).__name__} was "
                f"built for; it was stopped at round {horizon + 1}. Build the learner with a "
                "larger T, or pass a stream of at most T functions."
            )
        t0 = time.perf_counter()
        S = player.select()
        t1 = time.perf_counter()
        ev0 = f.evaluations
        y = _finite(f(S), t, "at the played set")
        i = cols.row()
        if has_expected:
            e = player.expected_value(f)
            if e is None:
                has_expected = False
            else:
                cols["expected"][i] = _finite(e, t, "in expectation over the learner's draw")
        t2 = time.perf_counter()
        player.update(y if bandit else f)
        t3 = time.perf_counter()
        evaluations += f.evaluations - ev0
        learner_time += (t1 - t0) + (t3 - t2)
        cols["elapsed"][i] = learner_time
        cols["values"][i] = y
        mask[:] = False
        mask[list(S)] = True
        cols["sets"][i] = np.packbits(mask)
        cols["epsilon"][i] = player.epsilon_spent
        if given is not None:
            cols["given"][i] = _finite(f.value(given), t, "at the comparator's set")
        if acc is not None:
            acc.add(f)
        if history is not None:
            history.append(f)
        if bar is not None:
            bar.update(t + 1)
    if bar is not None:
        bar.close()
    T = cols.size

    c0 = time.perf_counter()
    hind: Hindsight | None = None
    comp_vals = None
    if isinstance(comparator, Hindsight):
        hind, comp_vals = comparator, cols.final("given")
    elif given is not None:
        comp_vals = cols.final("given")
        hind = Hindsight(tuple(np.flatnonzero(given).tolist()), float(comp_vals.sum()), sense,
                         "given", False, math.nan)
    elif comparator is not None and T:
        if needs_list:
            fs = history if history is not None else list(replay())  # type: ignore[misc]
            out = comparator(fs)  # type: ignore[operator]
            if isinstance(out, Hindsight):
                hind = out
            else:
                m = _given_mask(out, n)
                hind = Hindsight(tuple(np.flatnonzero(m).tolist()),
                                 float(sum(g.value(m) for g in fs)), sense, "given", False,
                                 math.nan)
        else:
            hind = best_fixed_set(acc, sense=sense, constraint=constraint,  # type: ignore[arg-type]
                                  method=comparator)  # type: ignore[arg-type]
        smask = np.zeros(n, dtype=bool)
        smask[list(hind.selection)] = True
        again = history if history is not None else replay()  # type: ignore[misc]
        comp_vals = np.fromiter((g.value(smask) for _, g in zip(range(T), again)),
                                dtype=np.float64, count=T)
    if comp_vals is not None and not np.isfinite(comp_vals).all():
        _finite(math.nan, int(np.flatnonzero(~np.isfinite(comp_vals))[0]),
                "at the best fixed set")
    regret = exp_regret = None
    expv = cols.final("expected") if has_expected else None
    values = cols.final("values")
    if comp_vals is not None:
        sign = 1.0 if sense == "min" else -1.0
        base = alpha * np.cumsum(comp_vals)
        regret = sign * (np.cumsum(values) - base)
        if expv is not None:
            exp_regret = sign * (np.cumsum(expv) - base)
    c1 = time.perf_counter()

    return Trace(
        learner=repr(player), name=type(player).__name__, feedback=feedback, sense=sense,
        n=n, T=T, packed_selections=cols.final("sets"), values=values, expected_values=expv,
        comparator=hind, comparator_values=comp_vals, alpha=float(alpha), regret=regret,
        expected_regret=exp_regret, epsilon=cols.final("epsilon"), privacy=player.privacy,
        evaluations=int(evaluations),
        elapsed=cols.final("elapsed"), wall_time=time.perf_counter() - t_start,
        comparator_time=c1 - c0, params=dict(player.resolved_params),
        guarantee=player.guarantee,
    )
