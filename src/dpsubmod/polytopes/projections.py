r"""Projections onto the polytopes of matroid and knapsack constraints: the generalized-KL
projection (the entropic FTRL step) and the Euclidean projection, vectorised over the rows of a
batch and computed in log space where it matters.

A :class:`~dpsubmod.polytopes.region.Region` is a down-closed polytope of :math:`[0, 1]^n` with
closed-form projections, built by :func:`~dpsubmod.polytopes.region.as_region` from a
cardinality ``k``, a matroid, a knapsack or their polytopes:

* box :math:`[0, 1]^n`: KL: :math:`x = \min(1, y)`; Euclidean: a clip;
* uniform matroid (:math:`0 \le x \le 1`, :math:`\sum x \le k`): KL: :math:`x = \min(1, y)` if
  that sums to at most ``k``, else :math:`x = \min(1, \theta y)` with the :math:`\theta < 1`
  that makes the sum ``k`` (exact, by sorting); a partition matroid does the same per block.
  (The rule "always scale to :math:`\sum x = k`" is wrong when :math:`\sum\min(1, y) < k`.)
  Euclidean: :math:`x = \mathrm{clip}(y - \tau, 0, 1)` with the shift found by bisection;
* knapsack (:math:`0 \le x \le 1`, :math:`c^\top x \le b`): KL: :math:`x_i = \min(1, y_i
  e^{-\mu c_i})` with :math:`\mu = 0` if feasible, else the :math:`\mu > 0` with
  :math:`c^\top x = b` (bisection); Euclidean likewise with :math:`y - \mu c`;
* any other matroid: Frank-Wolfe with away steps and exact line search on the strongly convex
  objective, started strictly inside the polytope (the entropy's gradient is :math:`-\infty` at
  0), with the greedy algorithm as linear oracle; it keeps the point as a convex combination of
  independent sets (used for swap rounding). An inexact projection changes only the regret of
  the learner that uses it.

The generalized-KL projection :math:`\arg\min_{x \in P}\sum_i x_i\ln(x_i/y_i) - x_i` of
:math:`y = \exp(-1 - \eta L)` is the entropic FTRL step
:math:`\arg\min_{x\in P}\eta\langle x, L\rangle + \sum_i x_i\ln x_i` (Agarwal and Singh 2017);
the Euclidean projection serves online gradient ascent (Zinkevich 2003) and PFTAL.

References
----------
N. Agarwal and K. Singh, "The price of differential privacy for online learning", ICML 2017.
J. Guelat and P. Marcotte, "Some comments on Wolfe's 'away step'", Mathematical Programming 35,
1986. M. Zinkevich, "Online convex programming and generalized infinitesimal gradient ascent",
ICML 2003.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import special

from .._validation import check_finite
from ..constraints.base import Matroid
from ..errors import GroundSetMismatchError
from .region import Region, as_region

_FW_MAX_ITER = 200
_FW_TOL = 1e-9
_BISECT = 100


def project_box(x: np.ndarray) -> np.ndarray:
    """Euclidean projection onto the cube :math:`[0, 1]^d` (a coordinate-wise clip)."""
    return np.clip(x, 0.0, 1.0)


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
def _log_sum_exceeds(out: np.ndarray, level: float) -> np.ndarray:
    """``logsumexp(out, axis=1) > level`` for rows of non-positive ``out``: the plain log of
    the sum decides every row farther than 1e-12 from ``level`` (its error is below 1e-13:
    terms in (0, 1], at most n of them), ``logsumexp`` the rows closer to it."""
    with np.errstate(divide="ignore"):
        approx = np.log(np.exp(out).sum(axis=1))
    need = approx > level
    near = np.flatnonzero(np.abs(approx - level) <= 1e-12)
    if near.size:
        need[near] = special.logsumexp(out[near], axis=1) > level
    return need


def _kl_capped_sum(Z: np.ndarray, k: int) -> np.ndarray:
    """Log of ``min(1, theta y)`` for each row of ``Z = log y``, with ``theta <= 1`` the largest
    value keeping ``sum min(1, theta y) <= k`` (exact, by sorting)."""
    m, n = Z.shape
    out = np.minimum(Z, 0.0)
    if k >= n:
        return out
    need = _log_sum_exceeds(out, math.log(k) + 1e-15)
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
    out[need] = _euclid_shift(Y[need], None, float(k))
    return out


def _euclid_knapsack(Y: np.ndarray, c: np.ndarray, b: float) -> np.ndarray:
    out = np.clip(Y, 0.0, 1.0)
    need = out @ c > b * (1.0 + 1e-13)
    if not need.any():
        return out
    out[need] = _euclid_shift(Y[need], c, b)
    return out


#: Bisection steps between attempts at the exact multiplier.
_EXACT_EVERY = 4


def _euclid_shift(Y: np.ndarray, c: np.ndarray | None, b: float) -> np.ndarray:
    r"""Rows of ``Y`` (each with :math:`c^\top \mathrm{clip}(y, 0, 1) > b`) projected onto
    :math:`\{x \in [0, 1]^n : c^\top x = b\}`: :math:`x = \mathrm{clip}(y - \lambda c, 0, 1)`
    with the multiplier :math:`\lambda > 0` found for all rows at once (unit costs when ``c``
    is None: a capped sum).

    :math:`s(\lambda) = c^\top \mathrm{clip}(y - \lambda c, 0, 1)` is decreasing and piecewise
    linear. A bisection on all rows narrows the bracket ``[lo, hi]`` around the root; every
    few steps, each row's piece at ``hi`` (its free items ``F`` and saturated items ``U``) gives
    the candidate :math:`\lambda = (\sum_F c_i y_i + \sum_U c_i - b) / \sum_F c_i^2`, the
    exact root when the candidate lies on that same piece (checked), and the row is done. A row
    never settled (extreme inputs) keeps the bisection's ``hi`` after ``_BISECT`` steps.
    """
    r, d = Y.shape
    cc = np.ones(d) if c is None else c
    c2 = cc * cc
    lo = np.zeros(r)
    hi = (Y / cc).max(axis=1)
    lam = np.empty(r)
    todo = np.arange(r)
    Yt = Y
    for step in range(_BISECT):
        mid = 0.5 * (lo + hi)
        over = np.clip(Yt - mid[:, None] * cc, 0.0, 1.0) @ cc > b
        lo = np.where(over, mid, lo)
        hi = np.where(over, hi, mid)
        if step % _EXACT_EVERY != _EXACT_EVERY - 1:
            continue
        Zh = Yt - hi[:, None] * cc
        free = (Zh > 0.0) & (Zh < 1.0)
        sat = Zh >= 1.0
        den = free @ c2
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            cand = (np.where(free, Yt, 0.0) @ cc + sat @ cc - b) / den
            Zc = Yt - cand[:, None] * cc
        ok = (np.isfinite(cand) & (den > 0.0)
              & (((Zc > 0.0) & (Zc < 1.0)) == free).all(axis=1) & ((Zc >= 1.0) == sat).all(axis=1))
        if ok.any():
            lam[todo[ok]] = cand[ok]
            keep = ~ok
            todo, lo, hi, Yt = todo[keep], lo[keep], hi[keep], Yt[keep]
            if not todo.size:
                break
    lam[todo] = hi
    return np.clip(Y - lam[:, None] * cc, 0.0, 1.0)


def euclidean_projection(region: object, y: object, *, n: int | None = None,
                         return_decomposition: bool = False) -> Any:
    r"""Euclidean projection :math:`\arg\min_{x \in P}\|x - y\|_2` onto a region (rows
    independently).

    Closed form up to a scalar multiplier (a bisection finished by an exact solve on its
    piece) for the box, uniform and partition matroids and knapsacks; Frank-Wolfe with exact
    line search for other matroids.
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
        blocks = reg.blocks
        if reg.kind == "uniform" and blocks[0][1] > 0:  # one block, range(n) in order
            X = _euclid_capped_sum(Y, blocks[0][1])
        else:
            X = np.zeros_like(Y)
            for idx, cap in blocks:
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
