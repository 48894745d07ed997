r"""Private Follow the Regularized Leader with the entropic regularizer over matroid and knapsack
polytopes (Agarwal and Singh 2017, Algorithm 1), and the projections it needs.

Online linear optimization: at round ``t`` play :math:`x_t \in P`, then a loss vector
:math:`\ell_t` is revealed and :math:`\langle \ell_t, x_t\rangle` is paid. Private FTRL plays

.. math::

    x_t = \arg\min_{x \in P}\; \eta\langle x, \tilde L_{t-1}\rangle + \sum_i x_i \ln x_i,

where :math:`\tilde L_{t-1}` is a noisy prefix sum of the losses released by tree aggregation
(the binary mechanism, :class:`~dpsubmod.privacy.continual.TreeAggregator`). The argmin is the
generalized-KL projection of :math:`y = \exp(-1 - \eta\tilde L_{t-1})` onto ``P``
(:func:`kl_projection`), since :math:`\sum_i x_i\ln(x_i/y_i) - x_i` equals the objective up to a
constant. Only the tree releases touch the data; the points are post-processing.

Projections (all vectorised over the rows of a batch, all computed in log space):

* box :math:`[0, 1]^n`: :math:`x = \min(1, y)`;
* uniform matroid (:math:`0 \le x \le 1`, :math:`\sum x \le k`): :math:`x = \min(1, y)` if that
  sums to at most ``k``, else :math:`x = \min(1, \theta y)` with the :math:`\theta < 1` that makes
  the sum ``k`` (exact, by sorting); a partition matroid does the same per block. (The rule
  "always scale to :math:`\sum x = k`" is wrong when :math:`\sum\min(1, y) < k`.)
* knapsack (:math:`0 \le x \le 1`, :math:`c^\top x \le b`): :math:`x_i = \min(1, y_i
  e^{-\mu c_i})` with :math:`\mu = 0` if feasible, else the :math:`\mu > 0` with
  :math:`c^\top x = b` (bisection);
* any other matroid: Frank-Wolfe with exact line search on the strongly convex objective,
  started strictly inside the polytope (the entropy's gradient is :math:`-\infty` at 0), with
  the greedy algorithm as linear oracle; it keeps the point as a convex combination of
  independent sets (used for swap rounding). An inexact argmin changes only the regret.

:func:`euclidean_projection` gives the Euclidean projections onto the same regions (clip, and a
shift found by bisection; Frank-Wolfe for a general matroid), used by online gradient ascent.

Privacy of :class:`PrivateFTRL`: neighbouring loss sequences differ in one round's loss vector.
Losses are clipped coordinatewise to ``loss_range = (lo, hi)`` (a no-op on valid inputs), so one
round's vector moves by at most :math:`n(hi - lo)` in l1 norm and :math:`\sqrt n(hi - lo)` in
l2 norm; the tree is calibrated to that sensitivity with :math:`\lfloor\log_2 T\rfloor + 1`
levels (the leaf lies in at most that many released nodes). ``copies`` independent optimizers
(the ``K`` oracles of Meta-Frank-Wolfe) share one tree of dimension ``copies * n``: the noise is
exactly that of one tree per copy, and the report composes the ``copies`` trees (Laplace: pure
per tree, composed by the tightest valid rule at ``delta``; Gaussian: zCDP, the rhos add).

References
----------
N. Agarwal and K. Singh, "The price of differential privacy for online learning", ICML 2017,
Algorithm 1 and Theorem 3.1. T.-H. H. Chan, E. Shi and D. Song, "Private and continual release
of statistics", ACM TISSEC 2011. O. Sadeghi and M. Fazel, "Differentially private monotone
submodular maximization under matroid and knapsack constraints", AISTATS 2021 (supplement,
Section "DPMFW").
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special

from .._rng import RNGLike, as_generator
from .._validation import check_finite, check_int, check_real, is_noise_off
from ..constraints.base import Matroid
from ..constraints.knapsack import Knapsack
from ..constraints.partition import PartitionMatroid
from ..constraints.uniform import UniformMatroid
from ..errors import GroundSetMismatchError, ParameterTypeError, StreamLengthError, ValidationError
from ..privacy.composition import check_composition, compose, split_budget
from ..privacy.continual import TreeAggregator, tree_levels
from ..privacy.events import PrivacyEvent
from ..privacy.plan import PrivacyPlan
from ..privacy.zcdp import rho_for_target
from ._plans import check_spend, run_plan
from .protocol import OnlineBase

__all__ = [
    "Region",
    "as_region",
    "kl_projection",
    "euclidean_projection",
    "PrivateFTRL",
    "FTRL_NOISES",
]

#: Node-noise families of :class:`PrivateFTRL`.
FTRL_NOISES = ("laplace", "gaussian")

_FW_MAX_ITER = 200
_FW_TOL = 1e-9
_BISECT = 100




def check_ftrl_privacy(epsilon: object, delta: object, noise: object, caller: str) -> None:
    """Validate the privacy arguments of a tree-aggregated FTRL learner (or of a learner built
    on K of them): epsilon > 0 or ``math.inf`` (noise off), delta in [0, 1), a known noise,
    and delta > 0 for Gaussian noise."""
    if not is_noise_off(epsilon):
        check_real(epsilon, "epsilon", low=0.0, low_open=True, caller=caller,
                   fix="Pass a positive privacy budget, or epsilon=math.inf (not private).")
    check_real(delta, "delta", low=0.0, high=1.0, high_open=True, caller=caller)
    if noise not in FTRL_NOISES:
        raise ValidationError(
            f"The 'noise' parameter of {caller} must be one of {FTRL_NOISES}; got {noise!r}."
        )
    if noise == "gaussian" and not is_noise_off(epsilon) and float(delta) == 0.0:
        raise ValidationError(
            f"noise='gaussian' in {caller} gives (epsilon, delta)-DP and needs delta > 0; "
            "pass delta (e.g. 1e-6) or use noise='laplace'."
        )


# =============================================================================================
# regions: the feasible polytopes, with projections and rounding
# =============================================================================================
@dataclass(frozen=True)
class Region:
    """A down-closed polytope of :math:`[0, 1]^n` with closed-form projections.

    Built by :func:`as_region` from a cardinality ``k``, a matroid, a knapsack or their
    polytopes. ``kind`` is ``"box"``, ``"uniform"``, ``"partition"``, ``"knapsack"`` or
    ``"matroid"`` (a general matroid: Frank-Wolfe projections).

    Attributes
    ----------
    kind : str
    n : int
    blocks : tuple of (ndarray, int)
        ``(elements, capacity)`` per block (``"uniform"``: one block; ``"partition"``: one per
        block; capacities are clipped to the block size).
    costs : ndarray or None
        Knapsack costs.
    budget : float or None
        Knapsack budget.
    matroid : Matroid or None
        The matroid (``"uniform"``, ``"partition"``, ``"matroid"``).
    constraint : object
        The constraint the region relaxes (``k`` or a Constraint), for comparators.
    """

    kind: str
    n: int
    blocks: tuple = ()
    costs: np.ndarray | None = None
    budget: float | None = None
    matroid: Matroid | None = None
    constraint: Any = None

    @property
    def l1_radius(self) -> float:
        """:math:`R = \\max_{x \\in P}\\|x\\|_1` (an upper bound for knapsacks: the fractional
        knapsack value)."""
        if self.kind == "box":
            return float(self.n)
        if self.kind in ("uniform", "partition"):
            return float(sum(c for _, c in self.blocks))
        if self.kind == "matroid":
            return float(self.matroid.rank)  # type: ignore[union-attr]
        c = np.sort(np.asarray(self.costs))
        before = np.cumsum(c) - c
        return float(np.clip((float(self.budget) - before) / c, 0.0, 1.0).sum())

    @property
    def diameter(self) -> float:
        """Upper bound on the l2 diameter (``sqrt(2 R)`` capped by ``sqrt(n)``)."""
        return float(min(math.sqrt(self.n), math.sqrt(2.0 * self.l1_radius)))

    def feasible(self, mask: np.ndarray) -> bool:
        """Whether the set of boolean ``mask`` satisfies the constraint."""
        if self.kind == "box":
            return True
        if self.kind == "knapsack":
            return float(np.asarray(self.costs) @ mask) <= float(self.budget) * (1 + 1e-12)
        return bool(self.matroid.is_independent(mask))  # type: ignore[union-attr]


def as_region(constraint: object, n: int | None = None) -> Region:
    """The :class:`Region` of a constraint.

    Parameters
    ----------
    constraint : int, Matroid, Knapsack, MatroidPolytope, KnapsackPolytope or Region
        ``k`` (the uniform matroid of rank ``k`` on ``n`` elements; ``k >= n`` gives the box),
        any dpsubmod matroid (uniform and partition matroids have closed-form projections, others
        use Frank-Wolfe), a knapsack, or their polytopes.
    n : int, optional
        Ground-set size; required with an int ``k``, checked otherwise.

    Returns
    -------
    Region
    """
    from ..polytopes.oracles import KnapsackPolytope, MatroidPolytope

    caller = "as_region"
    if isinstance(constraint, Region):
        reg = constraint
    elif isinstance(constraint, MatroidPolytope):
        reg = as_region(constraint.matroid)
    elif isinstance(constraint, KnapsackPolytope):
        reg = as_region(constraint.constraint)
    elif isinstance(constraint, (int, np.integer)) and not isinstance(constraint, bool):
        if n is None:
            raise ValidationError(f"{caller}: pass n with a cardinality constraint k.")
        nn = check_int(n, "n", low=1, caller=caller)
        k = check_int(constraint, "k", low=1, caller=caller,
                      fix="k is the cardinality budget, at least 1.")
        if k >= nn:
            return Region("box", nn, (), constraint=int(constraint))
        return Region("uniform", nn, ((np.arange(nn), k),), matroid=UniformMatroid(nn, k),
                      constraint=int(constraint))
    elif isinstance(constraint, UniformMatroid):
        nn, k = int(constraint.n), int(constraint.k)
        kind = "box" if k >= nn else "uniform"
        reg = Region(kind, nn, ((np.arange(nn), min(k, nn)),), matroid=constraint,
                     constraint=constraint)
    elif isinstance(constraint, PartitionMatroid):
        blocks = tuple((np.asarray(b, dtype=np.int64), int(min(c, len(b))))
                       for b, c in zip(constraint.blocks, constraint.capacities.tolist()))
        reg = Region("partition", int(constraint.n), blocks, matroid=constraint,
                     constraint=constraint)
    elif isinstance(constraint, Matroid):
        reg = Region("matroid", int(constraint.n), (), matroid=constraint, constraint=constraint)
    elif isinstance(constraint, Knapsack):
        reg = Region("knapsack", int(constraint.n), (), costs=np.asarray(constraint.costs),
                     budget=float(constraint.budget), constraint=constraint)
    else:
        raise ParameterTypeError(
            f"The 'constraint' of {caller} must be an int k, a Matroid, a Knapsack or their "
            f"polytope; got {type(constraint).__name__}."
        )
    if n is not None and int(n) != reg.n:
        raise GroundSetMismatchError(
            f"The constraint is on n={reg.n} elements but the learner plays on n={int(n)}."
        )
    return reg


def _as_batch(a: object, n: int, name: str, caller: str) -> tuple[np.ndarray, bool]:
    arr = np.asarray(a, dtype=np.float64)
    single = arr.ndim == 1
    if single:
        arr = arr[None, :]
    if arr.ndim != 2 or arr.shape[1] != n:
        raise GroundSetMismatchError(
            f"The '{name}' argument of {caller} must have shape (n,) or (m, n) with n={n}; got "
            f"{np.shape(a)}."
        )
    return arr, single


# -- KL projections ---------------------------------------------------------------------------
def _kl_capped_sum(Z: np.ndarray, k: int) -> np.ndarray:
    """Log of ``min(1, theta y)`` for each row of ``Z = log y``, with ``theta <= 1`` the largest
    value keeping ``sum min(1, theta y) <= k`` (exact, by sorting)."""
    m, n = Z.shape
    out = np.minimum(Z, 0.0)
    if k >= n:
        return out
    need = special.logsumexp(out, axis=1) > math.log(k) + 1e-15
    # Rows whose capped sum exceeds k: sum_i min(1, e^{z_i + s}) = k with s < 0.
    if not need.any():
        return out
    Zr = Z[need]
    S = -np.sort(-Zr, axis=1)  # descending
    tail = np.logaddexp.accumulate(S[:, ::-1], axis=1)[:, ::-1]  # tail[:, c] = LSE(S[:, c:])
    c = np.arange(k)
    s = np.log(k - c)[None, :] - tail[:, :k]
    top_ok = np.ones_like(s, dtype=bool)
    top_ok[:, 1:] = S[:, :k - 1] + s[:, 1:] >= -1e-12
    rest_ok = S[:, :k] + s <= 1e-12
    valid = top_ok & rest_ok
    pick = np.where(valid.any(axis=1), np.argmax(valid, axis=1), -1)
    shift = s[np.arange(s.shape[0]), np.maximum(pick, 0)]
    bad = pick < 0
    if bad.any():  # rounding ties: fall back to bisection on the shift
        shift[bad] = _bisect_shift(Zr[bad], k)
    out[need] = np.minimum(Zr + shift[:, None], 0.0)
    return out


def _bisect_shift(Z: np.ndarray, k: int) -> np.ndarray:
    lo = math.log(k / Z.shape[1]) - Z.max(axis=1)
    hi = np.zeros(Z.shape[0])
    for _ in range(_BISECT):
        mid = 0.5 * (lo + hi)
        tot = np.exp(np.minimum(Z + mid[:, None], 0.0)).sum(axis=1)
        over = tot > k
        hi = np.where(over, mid, hi)
        lo = np.where(over, lo, mid)
    return lo


def _kl_knapsack(Z: np.ndarray, c: np.ndarray, b: float) -> np.ndarray:
    """Log of ``min(1, y e^{-mu c})`` with ``mu >= 0`` the smallest multiplier meeting
    ``c.x <= b``."""
    out = np.minimum(Z, 0.0)
    tot = np.exp(out) @ c
    need = tot > b * (1.0 + 1e-13)
    if not need.any():
        return out
    Zr = Z[need]
    n = Z.shape[1]
    # At mu_hi every term c_i x_i <= b / n, so the constraint holds.
    hi = np.maximum(((np.log(c) + Zr + math.log(n / b)) / c).max(axis=1), 0.0)
    lo = np.zeros(Zr.shape[0])
    for _ in range(_BISECT):
        mid = 0.5 * (lo + hi)
        val = np.exp(np.minimum(Zr - mid[:, None] * c, 0.0)) @ c
        over = val > b
        lo = np.where(over, mid, lo)
        hi = np.where(over, hi, mid)
    out[need] = np.minimum(Zr - hi[:, None] * c, 0.0)
    return out


def kl_projection(region: object, log_y: object, *, n: int | None = None,
                  return_decomposition: bool = False) -> Any:
    r"""Generalized-KL projection :math:`\arg\min_{x \in P} \sum_i x_i\ln(x_i/y_i) - x_i`,
    i.e. the entropic FTRL step :math:`\arg\min_{x\in P}\eta\langle x, L\rangle + \sum_i x_i\ln
    x_i` for :math:`\log y = -1 - \eta L`.

    Parameters
    ----------
    region : Region or anything :func:`as_region` accepts
        The polytope ``P``.
    log_y : array-like, shape (n,) or (m, n)
        :math:`\log y` (finite); rows are projected independently.
    n : int, optional
        Ground-set size (needed with an int ``k``).
    return_decomposition : bool, default=False
        For a general matroid, also return, per row, the convex combination of independent sets
        the point was built from (a list of ``(sets, weights)``); ``None`` for other regions.

    Returns
    -------
    ndarray, shape like ``log_y``
        The projection (or ``(x, decompositions)``).

    Examples
    --------
    >>> x = kl_projection(2, [0.0, 0.0, 0.0, -5.0], n=4)
    >>> x.round(4).tolist(), round(float(x.sum()), 12)
    ([0.6652, 0.6652, 0.6652, 0.0045], 2.0)
    """
    caller = "kl_projection"
    reg = region if isinstance(region, Region) else as_region(region, n)
    Z, single = _as_batch(check_finite(log_y, "log_y", caller=caller), reg.n, "log_y", caller)
    decs = None
    if reg.kind == "box":
        X = np.exp(np.minimum(Z, 0.0))
    elif reg.kind in ("uniform", "partition"):
        L = np.empty_like(Z)
        for idx, cap in reg.blocks:
            if cap <= 0:
                L[:, idx] = -np.inf
            else:
                L[:, idx] = _kl_capped_sum(Z[:, idx], cap)
        X = np.exp(L)
    elif reg.kind == "knapsack":
        X = np.exp(_kl_knapsack(Z, np.asarray(reg.costs), float(reg.budget)))
    else:
        X, decs = _fw_rows(reg, Z, "kl")
    X = X[0] if single else X
    if return_decomposition:
        return X, (decs[0] if (single and decs is not None) else decs)
    return X


# -- Euclidean projections --------------------------------------------------------------------
def _euclid_capped_sum(Y: np.ndarray, k: int) -> np.ndarray:
    out = np.clip(Y, 0.0, 1.0)
    need = out.sum(axis=1) > k * (1.0 + 1e-15)
    if not need.any():
        return out
    Yr = Y[need]
    lo = np.zeros(Yr.shape[0])
    hi = Yr.max(axis=1)
    for _ in range(_BISECT):
        mid = 0.5 * (lo + hi)
        over = np.clip(Yr - mid[:, None], 0.0, 1.0).sum(axis=1) > k
        lo = np.where(over, mid, lo)
        hi = np.where(over, hi, mid)
    out[need] = np.clip(Yr - hi[:, None], 0.0, 1.0)
    return out


def _euclid_knapsack(Y: np.ndarray, c: np.ndarray, b: float) -> np.ndarray:
    out = np.clip(Y, 0.0, 1.0)
    need = out @ c > b * (1.0 + 1e-13)
    if not need.any():
        return out
    Yr = Y[need]
    lo = np.zeros(Yr.shape[0])
    hi = (Yr / c).max(axis=1)
    for _ in range(_BISECT):
        mid = 0.5 * (lo + hi)
        over = np.clip(Yr - mid[:, None] * c, 0.0, 1.0) @ c > b
        lo = np.where(over, mid, lo)
        hi = np.where(over, hi, mid)
    out[need] = np.clip(Yr - hi[:, None] * c, 0.0, 1.0)
    return out


def euclidean_projection(region: object, y: object, *, n: int | None = None,
                         return_decomposition: bool = False) -> Any:
    r"""Euclidean projection :math:`\arg\min_{x \in P}\|x - y\|_2` onto a region (rows
    independently).

    Closed form up to a scalar multiplier (found by bisection) for the box, uniform and
    partition matroids and knapsacks; Frank-Wolfe with exact line search for other matroids.
    Same parameters and return convention as :func:`kl_projection`.

    Examples
    --------
    >>> euclidean_projection(1, [0.9, 0.5, -1.0], n=3).round(6).tolist()
    [0.7, 0.3, 0.0]
    """
    caller = "euclidean_projection"
    reg = region if isinstance(region, Region) else as_region(region, n)
    Y, single = _as_batch(check_finite(y, "y", caller=caller), reg.n, "y", caller)
    decs = None
    if reg.kind == "box":
        X = np.clip(Y, 0.0, 1.0)
    elif reg.kind in ("uniform", "partition"):
        X = np.zeros_like(Y)
        for idx, cap in reg.blocks:
            if cap > 0:
                X[:, idx] = _euclid_capped_sum(Y[:, idx], cap)
    elif reg.kind == "knapsack":
        X = _euclid_knapsack(Y, np.asarray(reg.costs), float(reg.budget))
    else:
        X, decs = _fw_rows(reg, Y, "euclidean")
    X = X[0] if single else X
    if return_decomposition:
        return X, (decs[0] if (single and decs is not None) else decs)
    return X


# -- Frank-Wolfe over a general matroid polytope ----------------------------------------------
def _interior_start(matroid: Matroid) -> tuple[list[np.ndarray], np.ndarray]:
    """Independent sets covering every non-loop, averaged: a point with x_e > 0 on each
    non-loop (the entropy's gradient is finite there)."""
    n = matroid.n
    nonloops = matroid.can_add(np.zeros(n, dtype=bool))
    covered = np.zeros(n, dtype=bool)
    sets: list[np.ndarray] = []
    for e in np.flatnonzero(nonloops):
        if covered[e]:
            continue
        order = np.concatenate(([e], np.delete(np.arange(n), e)))
        B = np.sort(matroid.greedy_independent(order))
        covered[B] = True
        sets.append(B)
    if not sets:
        sets.append(np.zeros(0, dtype=np.int64))
    return sets, np.full(len(sets), 1.0 / len(sets))


def _fw_rows(reg: Region, A: np.ndarray, objective: str) -> tuple[np.ndarray, list]:
    m = reg.matroid
    assert m is not None
    start_sets, start_w = _interior_start(m)
    X = np.empty_like(A)
    decs = []
    for r in range(A.shape[0]):
        X[r], dec = _fw_one(m, A[r], objective, start_sets, start_w)
        decs.append(dec)
    return X, decs


def _fw_one(m: Matroid, a: np.ndarray, objective: str, start_sets: list[np.ndarray],
            start_w: np.ndarray) -> tuple[np.ndarray, tuple[list[np.ndarray], np.ndarray]]:
    """Frank-Wolfe with away steps (Guelat and Marcotte 1986; linear convergence for strongly
    convex objectives over polytopes) on ``sum x ln(x / y) - x`` (``a = log y``) or
    ``0.5 ||x - a||^2``, keeping the point as a convex combination of independent sets."""
    n = a.size
    keys: dict[bytes, int] = {}
    sets: list[np.ndarray] = []
    vert: list[np.ndarray] = []
    w: list[float] = []

    def add_vertex(S: np.ndarray) -> int:
        key = S.tobytes()
        if key not in keys:
            keys[key] = len(sets)
            sets.append(S)
            v = np.zeros(n)
            v[S] = 1.0
            vert.append(v)
            w.append(0.0)
        return keys[key]

    for S, wt in zip(start_sets, start_w):
        w[add_vertex(S)] += float(wt)
    x = np.zeros(n)
    for v, wi in zip(vert, w):
        x += wi * v
    support = x > 0
    for _ in range(_FW_MAX_ITER):
        if objective == "kl":
            grad = np.where(support, np.log(np.where(support, x, 1.0)) - a, 0.0)
        else:
            grad = x - a
        # Linear oracle: min <grad, s> over P = greedy on -grad over positive weights.
        wv = -grad
        order = np.lexsort((np.arange(n), -wv))
        order = order[wv[order] > 0]
        if objective == "kl":
            order = order[support[order]]
        j_fw = add_vertex(np.sort(m.greedy_independent(order)))
        active = [i for i, wi in enumerate(w) if wi > 0.0]
        j_aw = max(active, key=lambda i: float(grad @ vert[i]))
        gap_fw = float(grad @ (x - vert[j_fw]))
        if gap_fw <= _FW_TOL * max(1.0, float(np.abs(grad) @ x)):
            break
        gap_aw = float(grad @ (vert[j_aw] - x))
        if gap_fw >= gap_aw or w[j_aw] >= 1.0:
            d, g_max, away = vert[j_fw] - x, 1.0, False
        else:
            d, g_max, away = x - vert[j_aw], w[j_aw] / (1.0 - w[j_aw]), True
        if objective == "kl":
            step = _kl_line_search(x, d, a, support, g_max)
        else:
            dd = float(d @ d)
            step = min(g_max, max(0.0, float((a - x) @ d) / dd)) if dd > 0 else 0.0
        if step <= 0.0:
            break
        x = np.maximum(x + step * d, 0.0)
        if away:
            w = [wi * (1.0 + step) for wi in w]
            w[j_aw] -= step
            if step >= g_max * (1.0 - 1e-12):
                w[j_aw] = 0.0
        else:
            w = [wi * (1.0 - step) for wi in w]
            w[j_fw] += step
    keep = [i for i, wi in enumerate(w) if wi > 1e-15]
    ws = np.asarray([w[i] for i in keep])
    ws = ws / ws.sum()
    x = ws @ np.asarray([vert[i] for i in keep])
    return x, ([sets[i] for i in keep], ws)


def _kl_line_search(x: np.ndarray, d: np.ndarray, a: np.ndarray, support: np.ndarray,
                    g_max: float) -> float:
    """Minimise the KL objective along x + g d, g in [0, g_max]: phi'(g) = <ln((x + g d)/y), d>
    is increasing (+inf where a coordinate reaches 0); bisection."""
    idx = support & (d != 0)
    xs, ds, as_ = x[idx], d[idx], a[idx]

    def dphi(g: float) -> float:
        z = xs + g * ds
        if (z <= 0).any():
            return math.inf
        return float((np.log(z) - as_) @ ds)

    if dphi(0.0) >= 0:
        return 0.0
    if dphi(g_max) <= 0:
        return g_max
    lo, hi = 0.0, g_max
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if dphi(mid) > 0:
            hi = mid
        else:
            lo = mid
    return lo


# =============================================================================================
# private FTRL
# =============================================================================================
def ftrl_plan(label: str, *, T: int, n: int, copies: int, epsilon: float, delta: float,
              noise: str, width: float, composition: str, tree_epsilon: float | None,
              neighbouring: str, rng: Any = None) -> tuple[PrivacyPlan, dict[str, Any]]:
    """The whole-run plan of ``copies`` tree-aggregated FTRL optimizers, and its calibration.

    Laplace trees: ``copies`` pure events of ``tree_epsilon`` each (by default the split of
    ``(epsilon, delta)`` over the copies, :func:`~dpsubmod.privacy.composition.split_budget`),
    composed by the rule of the split. Gaussian trees: the copies share
    ``rho = rho_for_target(epsilon, delta)`` (zCDP). Only public parameters enter.
    """
    K, levels = int(copies), tree_levels(int(T))
    p: dict[str, Any] = {"levels": levels}
    note = (f"binary mechanism per copy, T={int(T)}, levels={levels}, {noise} node noise, leaf "
            f"{'l1' if noise == 'laplace' else 'l2'} sensitivity "
            f"{(n if noise == 'laplace' else math.sqrt(n)) * width:g}; backend=numpy")
    if noise == "laplace":
        if tree_epsilon is not None:
            e0 = float(tree_epsilon)
            events = [PrivacyEvent.pure("tree_aggregation", e0, count=K, note=note)]
            dlt = float(delta)
            _, spent_delta, rule = compose(events, dlt if dlt > 0 else None,
                                           composition if dlt > 0 else "basic", caller=label)
            plan_delta = dlt if dlt > 0 else None
        else:
            split = split_budget(float(epsilon), float(delta), K, composition=composition,
                                 caller=label)
            e0, rule, plan_delta = split.epsilon_step, split.composition, split.delta
            events = [PrivacyEvent.pure("tree_aggregation", e0, count=K, note=note)]
        p["tree_epsilon"] = e0
        p["scale"] = levels * n * width / e0
    else:
        rho = rho_for_target(float(epsilon), float(delta))
        p["rho"] = rho
        p["tree_rho"] = rho / K
        p["scale"] = math.sqrt(n) * width * math.sqrt(levels / (2.0 * rho / K))
        events = [PrivacyEvent.zcdp_only("tree_aggregation", rho / K, count=K, note=note)]
        rule, plan_delta = "zcdp", float(delta)
    plan = run_plan(label, events, delta=plan_delta, composition=rule,
                    neighbouring=neighbouring, rng=rng)
    return plan, p


class PrivateFTRL(OnlineBase):
    r"""Private FTRL with the entropic regularizer and tree-aggregated noisy loss sums
    (Agarwal and Singh 2017, Algorithm 1), for ``copies`` independent online linear optimizers
    over one region.

    Use: :meth:`predict` returns the points :math:`x_t` (shape ``(copies, n)``), then
    :meth:`update` receives the loss vectors :math:`\ell_t` (same shape; clipped coordinatewise
    to ``loss_range``). Points are released; losses never are.

    Guarantee: :math:`(\varepsilon, \delta)`-DP (``delta = 0`` with Laplace noise: pure) for the
    sequence of points, neighbouring loss sequences differing in one round (all ``copies`` loss
    vectors of that round may change, each within ``loss_range``). Each copy's tree is calibrated
    to the leaf sensitivity :math:`n(hi - lo)` (l1, Laplace) or :math:`\sqrt n(hi - lo)` (l2,
    Gaussian) with :math:`\lfloor\log_2 T\rfloor + 1` levels. Laplace: per-copy
    :math:`\varepsilon_0` from :func:`~dpsubmod.privacy.composition.split_budget` over the
    copies (basic at ``delta = 0``, else the rule of ``composition``); Gaussian: zCDP, the copies
    share :math:`\rho = ` :func:`~dpsubmod.privacy.zcdp.rho_for_target` ``(epsilon, delta)``.
    The whole run's guarantee is stated before the first update (:attr:`privacy`), and a
    learner built with ``budget=`` is charged it at construction.
    Regret (Theorem 3.1 of Agarwal and Singh, oblivious losses):
    :math:`O(R\,G\sqrt{T\ln n})` plus the noise term
    :math:`E[\max_P\langle Z, x\rangle - \min_P\langle Z, x\rangle]`.

    Parameters
    ----------
    region : Region, int, Matroid, Knapsack or polytope
        The feasible set ``P`` (see :func:`as_region`).
    T : int
        Horizon (the tree's size).
    n : int, optional
        Ground-set size (needed with an int ``k``).
    copies : int, default=1
        Number of independent optimizers.
    epsilon : float
        Privacy parameter; ``math.inf`` switches the noise off (exact sums; **not private**).
    delta : float, default=0.0
        Total delta (needed by Gaussian noise; with Laplace noise it lets the copies compose
        better than basic composition).
    noise : {"laplace", "gaussian"}, default="laplace"
    eta : float, optional
        Learning rate; default :math:`\sqrt{\ln n/T}/G` with :math:`G = \max(|lo|, |hi|)`.
    loss_range : (float, float), default=(-1.0, 1.0)
        Coordinatewise range of the losses (clipped into it).
    composition : {"auto", "basic", "advanced", "kov", "zcdp"}, default="auto"
        Composition of the Laplace trees over the copies.
    tree_epsilon : float, optional
        Override of the per-copy Laplace tree epsilon (the statement composes it as given);
        used to reproduce a paper's calibration. Refused at construction
        (:class:`~dpsubmod.errors.ValidationError`) when the copies compose to more than
        ``epsilon``.
    rng : int, Generator, SeedSequence or None, default=None
    budget : Budget or None, default=None
        Charged the whole run's guarantee at construction, before anything is released
        (:class:`~dpsubmod.errors.BudgetExceededError` when it does not fit; then nothing
        changes), again by :meth:`reset` after play and by every clone. Not allowed with
        ``epsilon=math.inf``.

    Examples
    --------
    >>> import math
    >>> ftrl = PrivateFTRL(1, T=100, n=3, epsilon=math.inf, loss_range=(-1.0, 0.0))
    >>> for _ in range(100):
    ...     _ = ftrl.predict()
    ...     ftrl.update([[-1.0, 0.0, 0.0]])
    >>> int(ftrl.predict().argmax())
    0
    """

    def __init__(self, region: object, T: int, *, n: int | None = None, copies: int = 1,
                 epsilon: float, delta: float = 0.0, noise: str = "laplace",
                 eta: float | None = None, loss_range: tuple[float, float] = (-1.0, 1.0),
                 composition: str = "auto", tree_epsilon: float | None = None,
                 rng: RNGLike = None, budget: Any = None):
        caller = "PrivateFTRL"
        reg = region if isinstance(region, Region) else as_region(region, n)
        check_int(T, "T", low=1, caller=caller)
        check_int(copies, "copies", low=1, caller=caller)
        check_ftrl_privacy(epsilon, delta, noise, caller)
        if eta is not None:
            check_real(eta, "eta", low=0.0, low_open=True, caller=caller)
        lr = _check_range(loss_range, caller)
        if tree_epsilon is not None:
            check_real(tree_epsilon, "tree_epsilon", low=0.0, low_open=True, caller=caller)
            if noise != "laplace":
                raise ValidationError(f"'tree_epsilon' of {caller} applies to noise='laplace'.")
        check_composition(composition, caller)
        self.region = region
        self.T = T
        self.n = reg.n if n is None else n
        self.copies = copies
        self.epsilon = epsilon
        self.delta = delta
        self.noise = noise
        self.eta = eta
        self.loss_range = tuple(lr)
        self.composition = composition
        self.tree_epsilon = tree_epsilon
        self.rng = rng
        self.budget = budget
        self._n_region = reg.n
        plan = self._privacy_plan()
        if plan is not None and tree_epsilon is not None:
            check_spend(caller, plan.report().epsilon, float(epsilon), parameter="tree_epsilon",
                        fix=f"{int(copies)} trees of tree_epsilon={float(tree_epsilon):.6g} "
                            f"compose to more; pass a smaller tree_epsilon, or omit it.")

    # -- calibration --------------------------------------------------------------------------
    @property
    def noise_off(self) -> bool:
        """Whether the sums are exact (``epsilon=inf``): not private."""
        return is_noise_off(self.epsilon)

    def _calibration(self) -> tuple[PrivacyPlan, dict[str, Any]]:
        lo, hi = self.loss_range
        return ftrl_plan(
            "PrivateFTRL", T=int(self.T), n=self._n_region, copies=int(self.copies),
            epsilon=float(self.epsilon), delta=float(self.delta), noise=self.noise,
            width=float(hi - lo), composition=self.composition, tree_epsilon=self.tree_epsilon,
            neighbouring="loss sequences differing in one round's loss vectors (each clipped "
                         f"to {self.loss_range})", rng=self.rng)

    def _privacy_plan(self) -> PrivacyPlan | None:
        """``copies`` tree-aggregation events; ``None`` when the noise is off."""
        if self.noise_off:
            return None
        return self._memo_plan(lambda: self._calibration()[0])

    def _resolve(self) -> dict[str, Any]:
        reg = self._region
        n, T, K = reg.n, int(self.T), int(self.copies)
        lo, hi = self.loss_range
        width = float(hi - lo)
        G = max(abs(lo), abs(hi))
        eta = float(self.eta) if self.eta is not None else \
            math.sqrt(max(math.log(n), 1.0) / T) / max(G, 1e-300)
        p: dict[str, Any] = {"n": n, "T": T, "copies": K, "eta": eta, "levels": tree_levels(T),
                             "l1_sensitivity": n * width, "l2_sensitivity": math.sqrt(n) * width,
                             "noise": self.noise, "noise_off": self.noise_off}
        if not self.noise_off:
            p.update(self._calibration()[1])
        return p

    @property
    def resolved_params(self) -> dict[str, Any]:
        """Every parameter after defaults were resolved (eta, levels, tree epsilon, scale)."""
        self._ensure_state()
        return dict(self._params)

    def _reset(self) -> None:
        reg = self.region if isinstance(self.region, Region) else as_region(self.region, self.n)
        self._region = reg
        self._params = p = self._resolve()
        n, K, T = reg.n, int(self.copies), int(self.T)
        self._t = 0
        self._sum = np.zeros((K, n))
        self._tree = None
        self._allowance = self._run_allowance()
        if not self.noise_off:
            lo, hi = self.loss_range
            width = float(hi - lo)
            gen = as_generator(self.rng)
            # One tree of dimension K n: its node noise is that of K trees of dimension n, each
            # calibrated to one copy's leaf sensitivity (the l1/l2 sensitivity of the joint leaf
            # is K, resp. sqrt(K), times a copy's). The run's allowance is charged the K planned
            # per-copy events instead of the joint tree's single one.
            if self.noise == "laplace":
                self._tree = TreeAggregator(T, K * n, noise="laplace",
                                            sensitivity=K * n * width,
                                            epsilon=K * p["tree_epsilon"], rng=gen)
            else:
                self._tree = TreeAggregator(T, K * n, noise="gaussian",
                                            sensitivity=math.sqrt(K * n) * width,
                                            rho=p["rho"], rng=gen)
        self._points: np.ndarray | None = None
        self._decomp: list | None = None

    def _ensure_state(self) -> None:
        if not hasattr(self, "_t"):
            self._reset()

    @property
    def t(self) -> int:
        """Loss vectors received so far."""
        self._ensure_state()
        return self._t

    @property
    def prefix(self) -> np.ndarray:
        """The released (noisy) loss sums, shape ``(copies, n)``."""
        self._ensure_state()
        return self._sum.copy()

    # -- protocol -----------------------------------------------------------------------------
    def predict(self) -> np.ndarray:
        """The current points :math:`x_t`, shape ``(copies, n)`` (released)."""
        self._ensure_state()
        if self._points is None:
            logy = -1.0 - self._params["eta"] * self._sum
            X, dec = kl_projection(self._region, logy, return_decomposition=True)
            self._points, self._decomp = X, dec
        return self._points.copy()

    @property
    def decompositions(self) -> list | None:
        """For a general matroid, the convex combinations of independent sets behind the
        current points (one ``(sets, weights)`` per copy); ``None`` otherwise."""
        self.predict()
        return self._decomp

    def update(self, losses: object) -> None:
        """Receive this round's loss vectors (shape ``(copies, n)``, or ``(n,)`` for one copy),
        clipped to ``loss_range``.

        Raises
        ------
        ValidationError
            Non-finite losses or a wrong shape.
        StreamLengthError
            ``T`` rounds were already received.
        """
        self._ensure_state()
        L = check_finite(losses, "losses", caller="PrivateFTRL.update").astype(np.float64)
        K, n = int(self.copies), self._region.n
        if L.ndim == 1 and K == 1:
            L = L[None, :]
        if L.shape != (K, n):
            raise GroundSetMismatchError(
                f"The 'losses' of PrivateFTRL.update must have shape ({K}, {n}); got {L.shape}."
            )
        if self._t >= int(self.T):
            raise StreamLengthError(
                f"PrivateFTRL was built for T={self.T} rounds and has received them all."
            )
        lo, hi = self.loss_range
        self._step(np.clip(L, lo, hi))

    def _step(self, L: np.ndarray) -> None:
        """Trusted update with clipped losses."""
        if self._tree is None:
            self._sum += L
        else:
            if self._t == 0 and self._allowance is not None:
                self._allowance.charge(self._privacy_plan().events)
            self._tree.update(L.ravel())
            self._sum = self._tree.prefix().reshape(L.shape)
        self._t += 1
        self._points = None

    # -- privacy ------------------------------------------------------------------------------
    def report(self, *, neighbouring: str = "") -> Any:
        """The :class:`~dpsubmod.privacy.ledger.PrivacyReport` of the whole run (:attr:`privacy`),
        with ``neighbouring`` in place of the default relation when given; ``None`` when the
        noise is off."""
        rep = self.privacy
        if rep is None or not neighbouring:
            return rep
        return dataclasses.replace(rep, neighbouring=neighbouring)


def _check_range(loss_range: object, caller: str) -> tuple[float, float]:
    try:
        lo, hi = loss_range  # type: ignore[misc]
    except (TypeError, ValueError):
        raise ParameterTypeError(
            f"The 'loss_range' parameter of {caller} must be a pair (lo, hi); got {loss_range!r}."
        ) from None
    lo = check_real(lo, "loss_range[0]", caller=caller)
    hi = check_real(hi, "loss_range[1]", caller=caller)
    if not hi > lo:
        raise ValidationError(
            f"The 'loss_range' of {caller} must satisfy lo < hi; got {loss_range!r}."
        )
    return lo, hi
