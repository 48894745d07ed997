r"""Play a bandit convex learner against a loss stream and measure its regret.

:func:`run_convex` is the counterpart of :func:`dpsubmod.online.run` for learners that play
points of a polytope (:class:`~dpsubmod.online.bandit_convex.BanditConvexLearner`) against
convex losses (:mod:`dpsubmod.online.convex_losses`). It clones the learner (the caller's object
is never advanced; a learner built with a budget is played itself, as by
:func:`~dpsubmod.online.run`), plays the stream round by round (``select``; the harness
evaluates the round's loss at the point; ``update`` with that value), then computes the best
fixed point in hindsight (:func:`best_fixed_point`) and the cumulative regret

.. math:: R_t = \sum_{s \le t} f_s(x_s) - \sum_{s \le t} f_s(x^*), \qquad
          x^* \in \arg\min_{x \in K} \sum_{s=1}^{T} f_s(x).

With an ``rng``, the learner and the stream get two independent child streams spawned from it,
so one seed reproduces a run. When the learner reports the law of its played point
(:meth:`~dpsubmod.online.bandit_convex.BanditConvexLearner.exploration`) and the loss has a
closed-form sphere mean (linear, quadratic), the trace also keeps the expected loss over the
learner's own draw of each round; its cumulative regret (``expected_regret``) has the same mean
and a much smaller variance: use it for rate plots.

Everything in a :class:`ConvexTrace` except ``points`` and ``privacy`` is computed from the
private losses and is **not private**; it is for evaluation only.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..._rng import RNGLike
from ..._validation import check_finite, check_int, check_real
from ...errors import GroundSetMismatchError, ParameterTypeError, StreamLengthError, ValidationError
from ...polytopes.oracles import Polytope
from .._trace import Columns, TraceSummary, prepare_player
from .learner import BanditConvexLearner
from .loss_streams import ConvexLossStream, as_loss_stream
from .losses import ConvexLoss, LinearLoss, QuadraticLoss, sum_losses

#: Methods of :func:`best_fixed_point`.
COMPARATOR_METHODS = ("auto", "linear-oracle", "frank-wolfe")


@dataclass(frozen=True)
class ConvexHindsight:
    """The best fixed point in hindsight (non-private: computed from every loss).

    Attributes
    ----------
    point : ndarray, shape (n,)
    value : float
        :math:`\\sum_t f_t(\\text{point})`.
    method : str
        ``"linear-oracle"`` (exact, one oracle call on the summed loss vector),
        ``"frank-wolfe"`` (on the summed loss) or ``"given"``.
    exact : bool
        Whether ``value`` is within ``certificate_gap <= tol`` of the optimum.
    certificate_gap : float
        Proven bound on ``value - min``: the last Frank-Wolfe duality gap (0 for the linear
        oracle, ``nan`` for a given point). The true regret lies in
        ``[regret, regret + certificate_gap]``.
    iterations : int
        Oracle calls used.
    """

    point: np.ndarray
    value: float
    method: str
    exact: bool
    certificate_gap: float = 0.0
    iterations: int = 0


def _fw_total(total: ConvexLoss, polytope: Polytope, max_iter: int, tol: float
              ) -> tuple[np.ndarray, float, int]:
    """Frank-Wolfe on a summed loss, stopped when the duality gap is below
    ``tol * max(1, |f(x)|)``.

    A quadratic gets away steps with exact line search over the active vertex set (Lacoste-Julien
    and Jaggi 2015: linear convergence on polytopes for strongly convex quadratics, where plain
    Frank-Wolfe zig-zags at rate ``1/k`` when the optimum lies on a face); any other loss gets the
    plain method with step ``2/(k+2)``.
    """
    x = polytope.linear_min(np.zeros(polytope.dim))
    quad = isinstance(total, QuadraticLoss)
    active: dict[bytes, tuple[np.ndarray, float]] = {x.tobytes(): (x.copy(), 1.0)}
    gap = math.inf
    k = 0
    for k in range(1, max_iter + 1):  # noqa: B007 - k is the iteration count returned
        g = total.gradient(x)
        s = polytope.linear_min(g)
        d = s - x
        gap = max(float(-(g @ d)), 0.0)
        fx = float(total(x))
        if gap <= tol * max(1.0, abs(fx)):
            break
        if not quad:
            x = x + (2.0 / (k + 1.0)) * d
            continue
        # away vertex: the active vertex with the largest <g, v>
        key_v, (v, a_v) = max(active.items(), key=lambda kv: float(g @ kv[1][0]))
        d_away = x - v
        if gap >= float(-(g @ d_away)) or len(active) == 1:
            direction, gmax, away = d, 1.0, False
        else:
            direction, gmax, away = d_away, a_v / (1.0 - a_v), True
        curv = float(direction @ (total.A @ direction))
        slope = float(-(g @ direction))
        gamma = gmax if curv <= 0.0 else min(gmax, slope / curv)
        x = x + gamma * direction
        if away:
            active = {kk: (vv, w * (1.0 + gamma)) for kk, (vv, w) in active.items()}
            vv, w = active[key_v]
            w -= gamma
            if w <= 1e-15 or gamma >= gmax:
                del active[key_v]
            else:
                active[key_v] = (vv, w)
        else:
            active = {kk: (vv, w * (1.0 - gamma)) for kk, (vv, w) in active.items()}
            key_s = s.tobytes()
            prev = active.get(key_s, (s, 0.0))[1]
            active[key_s] = (s, prev + gamma)
            if gamma >= 1.0:
                active = {key_s: (s, 1.0)}
            active = {kk: vw for kk, vw in active.items() if vw[1] > 1e-15}
    return x, gap, k


def best_fixed_point(losses: Iterable[ConvexLoss] | ConvexLossStream, polytope: Polytope, *,
                     method: str = "auto", max_iter: int = 20_000, tol: float = 1e-9
                     ) -> ConvexHindsight:
    r"""The best fixed point in hindsight :math:`\arg\min_{x \in K}\sum_t f_t(x)`.

    * Linear losses (``method="auto"`` or ``"linear-oracle"``): one call of
      ``polytope.linear_min`` on :math:`\sum_t\theta_t`; exact.
    * Otherwise (``"frank-wolfe"``): Frank-Wolfe on the summed loss (one quadratic, with away
      steps and exact line search, when every loss is linear or quadratic; step ``2/(k+2)`` on
      the sum of gradients otherwise, which needs each loss's ``gradient``), stopped when the gap
      falls below ``tol * max(1, |value|)`` or after ``max_iter`` oracle calls; the final gap
      is reported as ``certificate_gap``.

    Parameters
    ----------
    losses : ConvexLossStream or iterable of ConvexLoss
    polytope : Polytope
    method : {"auto", "linear-oracle", "frank-wolfe"}, default="auto"
    max_iter : int, default=20000
    tol : float, default=1e-9

    Returns
    -------
    ConvexHindsight
    """
    caller = "best_fixed_point"
    if not isinstance(polytope, Polytope):
        raise ParameterTypeError(f"The 'polytope' of {caller} must be a dpsubmod Polytope.")
    if not isinstance(method, str) or method not in COMPARATOR_METHODS:
        raise ValidationError(f"The 'method' of {caller} must be one of {COMPARATOR_METHODS}; "
                              f"got {method!r}.")
    max_iter = check_int(max_iter, "max_iter", low=1, caller=caller)
    tol = check_real(tol, "tol", low=0.0, caller=caller)
    fs = losses.losses() if isinstance(losses, ConvexLossStream) else list(losses)
    total = sum_losses(fs)
    if total.dim != polytope.dim:
        raise GroundSetMismatchError(
            f"The losses are on R^{total.dim} but the polytope is in R^{polytope.dim}."
        )
    if method == "linear-oracle" and not isinstance(total, LinearLoss):
        raise ValidationError(
            f"{caller}(method='linear-oracle') needs linear losses; use 'frank-wolfe'."
        )
    if isinstance(total, LinearLoss) and method != "frank-wolfe":
        x = polytope.linear_min(total.theta)
        return ConvexHindsight(x, float(total(x)), "linear-oracle", True,
                               0.0, 1)
    x, gap, it = _fw_total(total, polytope, max_iter, tol)
    value = float(total(x))
    return ConvexHindsight(x, value, "frank-wolfe", bool(gap <= tol * max(1.0, abs(value))),
                           float(gap), it)


@dataclass(frozen=True, eq=False, repr=False, kw_only=True)
class ConvexTrace(TraceSummary):
    """The record of one bandit convex run (non-private except ``points`` and ``privacy``).

    The fields mirror :class:`dpsubmod.online.Trace`, with points in place of sets.

    Attributes
    ----------
    learner : str
        ``repr`` of the learner that played.
    name : str
        The learner's class name.
    feedback : str
        ``"bandit"``.
    sense : str
        ``"min"``.
    n, T : int
        Dimension of the points and rounds played.
    points : ndarray, shape (T, n)
        The played points.
    values : ndarray, shape (T,)
        :math:`f_t(x_t)`.
    expected_values : ndarray or None
        Expectation of :math:`f_t(x_t)` over the learner's own draw of round ``t``.
    comparator : ConvexHindsight or None
    comparator_values : ndarray or None
        :math:`f_t(x^*)`.
    alpha : float
        Regret factor (1).
    regret, expected_regret : ndarray or None
        Cumulative regret after each round, from ``values`` and ``expected_values``.
    epsilon : ndarray, shape (T,)
        The epsilon of the learner's whole-run guarantee, read after each round (stated before
        round 1, so constant over a run; ``inf`` for a learner without guarantee).
    privacy : object
        The learner's privacy report: the whole run's guarantee (``None`` when not private).
    evaluations : int
        Loss evaluations made to answer the learner (one per round).
    elapsed : ndarray, shape (T,)
        Cumulative wall time of the learner's ``select`` and ``update`` calls.
    wall_time, comparator_time : float
    params : dict
        The learner's resolved parameters.
    """

    feedback: str
    sense: str
    points: np.ndarray
    comparator: ConvexHindsight | None

    def _plays(self) -> tuple[str, list[Any]]:
        return "point", [tuple(p.tolist()) for p in self.points]


def _resolve_comparator(comparator: object, total: ConvexLoss | None,
                        losses: Callable[[], list[ConvexLoss]], polytope: Polytope
                        ) -> ConvexHindsight | None:
    """The comparator from the summed loss (a method name, a given point) or, for a callable,
    from the list of losses (``losses()`` reads them again)."""
    if comparator is None or total is None:
        return None
    if isinstance(comparator, ConvexHindsight):
        return comparator
    if isinstance(comparator, str):
        return best_fixed_point([total], polytope, method=comparator)
    if callable(comparator):
        out = comparator(losses())
        if isinstance(out, ConvexHindsight):
            return out
        comparator = out
    try:
        x = check_finite(comparator, "comparator", caller="run_convex", ndim=1, dtype=float)
    except (ValidationError, ParameterTypeError):
        raise ParameterTypeError(
            "The 'comparator' parameter of run_convex must be a method name "
            f"{COMPARATOR_METHODS}, a ConvexHindsight, a point, a callable taking the list of "
            "losses, or None."
        ) from None
    if x.shape != (polytope.dim,):
        raise GroundSetMismatchError(
            f"The comparator point must have shape ({polytope.dim},); got {x.shape}."
        )
    return ConvexHindsight(x, float(total(x)), "given", False, math.nan, 0)


def run_convex(learner: BanditConvexLearner, losses: ConvexLossStream | Iterable[ConvexLoss], *,
               comparator: str | ConvexHindsight | Callable[..., Any] | object | None = "auto",
               expected: bool = True, rng: RNGLike = None) -> ConvexTrace:
    """Play ``learner`` on ``losses`` with bandit feedback and measure its regret.

    Parameters
    ----------
    learner : BanditConvexLearner
        Cloned before playing, so the caller's object is not advanced; except a learner built
        with a budget, which is played itself (it was charged its run at construction, and a
        clone would be charged again; playing it once more later is a new release, charged by
        its reset).
    losses : ConvexLossStream or sequence of ConvexLoss
        On ``R^n`` with ``n = learner.polytope.dim`` and at most ``learner.T`` rounds.
    comparator : str, ConvexHindsight, point, callable or None, default="auto"
        A method of :func:`best_fixed_point`, a precomputed :class:`ConvexHindsight`, a point
        given directly, a callable ``comparator(losses) -> ConvexHindsight or point``, or
        ``None`` (no regret).
    expected : bool, default=True
        Record the expected loss over the learner's own draw each round (when available).
    rng : int, Generator, SeedSequence or None, default=None
        When given, the learner is cloned with ``rng=child`` and the stream iterated with
        another child spawned from it; otherwise their own ``rng`` parameters are used.
        Refused for a learner built with a budget (a clone would be a second, charged
        release): build that learner with the ``rng`` you want.

    Returns
    -------
    ConvexTrace

    Raises
    ------
    ParameterTypeError
        ``learner`` is not a bandit convex learner, or ``losses`` not a loss stream.
    GroundSetMismatchError, StreamLengthError
        Dimensions differ, or the stream is longer than the learner's horizon (raised before
        any round is played).
    ValidationError
        An ``rng`` was given for a learner built with a budget.
    BudgetExceededError
        A budgeted learner that already played cannot be charged a new run.

    Examples
    --------
    >>> import math
    >>> from dpsubmod.polytopes import Simplex
    >>> from dpsubmod.online import PrivateBandit, linear_losses
    >>> tr = run_convex(PrivateBandit(Simplex(3), 100, epsilon=math.inf, mode="extend"),
    ...                 linear_losses(3, 100, rng=0), rng=0)
    >>> tr.T, tr.comparator.method, tr.points.shape
    (100, 'linear-oracle', (100, 3))
    """
    t_start = time.perf_counter()
    if not isinstance(learner, BanditConvexLearner):
        raise ParameterTypeError(
            "The 'learner' argument of run_convex must be a BanditConvexLearner (PrivateBandit, "
            f"GarberKretzu, FlaxmanKalaiMcMahan, ...); got {type(learner).__name__}."
        )
    stream = as_loss_stream(losses)
    polytope = learner.polytope  # type: ignore[attr-defined]
    if stream.dim != polytope.dim:
        raise GroundSetMismatchError(
            f"The losses are on R^{stream.dim} but the learner plays in R^{polytope.dim}."
        )
    if stream.T > learner.horizon:
        raise StreamLengthError(
            f"The stream has T={stream.T} rounds but the learner was built for "
            f"T={learner.horizon}; build the learner with T={stream.T}."
        )
    with warnings.catch_warnings():
        # the learner's constructor already issued its parameter warnings to the caller
        warnings.simplefilter("ignore", UserWarning)
        player, it, replay = prepare_player(learner, stream, rng, "run_convex")

    T, n = stream.T, stream.dim
    cols = Columns(T, {"points": ((n,), np.float64), "values": ((), np.float64),
                       "expected": ((), np.float64), "epsilon": ((), np.float64),
                       "elapsed": ((), np.float64)})
    has_expected = bool(expected)
    # The comparator needs the sum of the losses only: folded a batch at a time (a linear or
    # quadratic sum stays one loss whatever T).
    total: ConvexLoss | None = None
    pending: list[ConvexLoss] = []
    learner_time = 0.0
    evaluations = 0
    for f in it:
        t0 = time.perf_counter()
        x = player.select()
        t1 = time.perf_counter()
        ev0 = f.evaluations
        y = f.value(x)
        i = cols.row()
        if has_expected:
            law = player.exploration()
            e = None if law is None else f.sphere_mean(law.center, law.radius, law.basis)
            if e is None:
                has_expected = False
            else:
                cols["expected"][i] = e
        t2 = time.perf_counter()
        player.update(y)
        t3 = time.perf_counter()
        evaluations += f.evaluations - ev0
        learner_time += (t1 - t0) + (t3 - t2)
        cols["elapsed"][i] = learner_time
        cols["points"][i] = x
        cols["values"][i] = y
        cols["epsilon"][i] = player.epsilon_spent
        if comparator is not None:
            pending.append(f)
            if len(pending) >= 1024:
                total = sum_losses(pending if total is None else [total, *pending])
                pending = []
    if pending:
        total = sum_losses(pending if total is None else [total, *pending])

    c0 = time.perf_counter()
    hind = _resolve_comparator(comparator, total,
                               lambda: list(replay() if replay is not None else stream.iterate()),
                               polytope)
    values = cols.final("values")
    expv = cols.final("expected") if has_expected else None
    regret = exp_regret = comp_vals = None
    if hind is not None:
        xs = hind.point
        again = replay() if replay is not None else stream.iterate()
        comp_vals = np.fromiter((float(g(xs)) for g in again), dtype=np.float64, count=T)
        base = np.cumsum(comp_vals)
        regret = np.cumsum(values) - base
        if expv is not None:
            exp_regret = np.cumsum(expv) - base
    c1 = time.perf_counter()
    return ConvexTrace(
        learner=repr(player), name=type(player).__name__, feedback="bandit", sense="min", n=n,
        T=T, points=cols.final("points"), values=values, expected_values=expv, comparator=hind,
        comparator_values=comp_vals, alpha=1.0, regret=regret, expected_regret=exp_regret,
        epsilon=cols.final("epsilon"), privacy=player.privacy, evaluations=int(evaluations),
        elapsed=cols.final("elapsed"), wall_time=time.perf_counter() - t_start,
        comparator_time=c1 - c0, params=player.resolved_params,
    )
