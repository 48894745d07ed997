r"""The Fujishige-Wolfe minimum-norm-point algorithm, the ``"min-norm-point"`` method of
:func:`~dpsubmod.offline.minimize`.

Wolfe's algorithm for the point of smallest Euclidean norm in the base polytope
:math:`B(f - f(\emptyset))` (Fujishige 1980; Wolfe 1976), in the form of Chakrabarty, Jain and
Kothari (2014), with Edmonds' greedy as the linear optimization oracle; the set it returns comes
with a duality certificate (Bach 2013, Section 10). The references are listed in
:mod:`dpsubmod.offline.minimization.minimize`.
"""

from __future__ import annotations

import warnings

import numpy as np

from ...functions.base import SetFunction
from .._common import require_finite
from ._result import MinimizeResult

# ------------------------------------------------------------------------------------------------
# Edmonds' greedy: the linear-optimization oracle of the base polytope.


def _edmonds_greedy(f: SetFunction, w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Edmonds' greedy vertex :math:`\arg\max_{q \in B(f - f(\emptyset))} w^\top q`.

    Sorts ``w`` decreasingly (ties by increasing index) and evaluates ``f`` on the chain of that
    order in one call (:meth:`~dpsubmod.functions.SetFunction.chain_values`):
    :math:`q_{\pi(k)} = f(B_k) - f(B_{k-1})`. Counts ``n`` evaluations (``f(B_0)`` is known
    from the start).

    Returns
    -------
    q : ndarray, shape (n,)
        The vertex.
    order : ndarray of int, shape (n,)
        The order, so ``B_k = order[:k]``.
    vals : ndarray, shape (n + 1,)
        ``f(B_0), ..., f(B_n)`` (values of ``f`` itself, ``f(empty)`` included).
    """
    order = np.argsort(-w, kind="stable")
    vals = require_finite(f.chain_values(order, count=False), f, "minimize", "a set")
    f.evaluations += f.n
    q = np.empty(f.n)
    q[order] = np.diff(vals)
    return q, order, vals


def _affine_minimizer(Q: np.ndarray) -> np.ndarray:
    """Weights ``a`` (summing to 1) of the minimum-norm point of the affine hull of the rows of Q.

    Writes the point as ``Q[0] + sum_i b_i (Q[i] - Q[0])`` and solves the least-squares problem in
    ``b`` with ``lstsq`` (an SVD), which avoids forming the ill-conditioned Gram/KKT matrix of the
    textbook version and still returns a minimizer when the rows are nearly affinely dependent.
    """
    m = Q.shape[0]
    if m == 1:
        return np.ones(1)
    D = (Q[1:] - Q[0]).T
    b = np.linalg.lstsq(D, -Q[0], rcond=None)[0]
    return np.concatenate(([1.0 - b.sum()], b))


def _min_norm_point(f: SetFunction, tol: float, max_iter: int | None, exact_point: bool
                    ) -> MinimizeResult:
    n = f.n
    ev0 = f.evaluations
    empty = f.state()
    f.evaluations += 1
    f0 = float(require_finite(empty.value, f, "minimize", "the empty set"))
    if n == 0:
        return MinimizeResult(frozenset(), f0, np.zeros(0), 0.0, 0, f.evaluations - ev0,
                              "min-norm-point")
    if max_iter is None:
        max_iter = 1000 + 100 * n
    eps = np.finfo(np.float64).eps

    # Start at the greedy vertex for the index order.
    q, order, vals = _edmonds_greedy(f, np.zeros(n))
    # Tolerances are relative to the scale of f: the l1 norm of a vertex bounds the spread of f
    # along its chain (and is 0 only when f is constant along that chain).
    scale = float(np.abs(q).sum()) or max(abs(f0), 1.0)
    atol = tol * scale
    Q = q[None, :]
    lam = np.ones(1)
    x = q.copy()

    k = int(np.argmin(vals))
    best_value, best_set = float(vals[k]), order[:k]
    best_lower = -np.inf
    iterations = 0
    while True:
        # Linear oracle at x: the vertex minimising x.q is Edmonds' greedy for the direction -x.
        # Its chain B_k (k smallest coordinates of x first) runs through every level set
        # {e : x_e < t} of x, in particular {x < 0} and {x <= 0}; keeping the best of all of them
        # costs nothing more and is robust to coordinates of the min-norm point that are 0 in
        # exact arithmetic but carry rounding noise.
        q, order, vals = _edmonds_greedy(f, -x)
        k = int(np.argmin(vals))
        if vals[k] < best_value:
            best_value, best_set = float(vals[k]), order[:k]
        # x lies in B(f - f(empty)), so f(empty) + sum_e min(x_e, 0) <= f(S) for every S.
        best_lower = max(best_lower, f0 + float(np.minimum(x, 0.0).sum()))
        certified = best_value - best_lower <= atol
        if certified and not exact_point:
            break
        xx = float(x @ x)
        wolfe_gap = xx - float(x @ q)
        # Since x* minimises |.|^2 over B, |x - x*|^2 <= |x|^2 - x.x* <= wolfe_gap: x is the
        # min-norm point up to tol * scale, or up to rounding (then no major cycle can progress).
        if wolfe_gap <= max((tol * scale) ** 2, 16 * n * eps * max(xx, float(q @ q))):
            break
        if iterations >= max_iter:
            break
        iterations += 1
        Q = np.vstack([Q, q])
        lam = np.append(lam, 0.0)
        while True:  # minor cycles
            alpha = _affine_minimizer(Q)
            if alpha.min() > 1e-12:
                lam = alpha
                break
            # Move from lam towards alpha until the first weight reaches 0, then drop it.
            neg = alpha <= 1e-12
            denom = lam[neg] - alpha[neg]
            with np.errstate(divide="ignore", invalid="ignore"):
                ratios = np.where(denom > 0, lam[neg] / denom, 0.0)
            theta = min(1.0, float(ratios.min()))
            lam = (1.0 - theta) * lam + theta * alpha
            keep = lam > 1e-12
            keep[np.argmin(lam)] = False  # at least one point leaves, so minor cycles terminate
            if not keep.any():  # cannot happen in exact arithmetic; keep the heaviest point
                keep[np.argmax(lam)] = True
            Q, lam = Q[keep], lam[keep]
            lam = lam / lam.sum()
        x_new = lam @ Q
        if float(x_new @ x_new) >= xx:  # no strict decrease: rounding has taken over
            break
        x = x_new

    gap = best_value - best_lower
    if not certified:
        warnings.warn(
            f"minimize(method='min-norm-point') stopped after {iterations} major cycles with a "
            f"certificate gap of {gap:.3g} > tol * scale = {atol:.3g}; the returned set is within "
            "that gap of the minimum. Loosen tol, raise max_iter, or use method='brute-force' for "
            "n <= 20.",
            RuntimeWarning,
            stacklevel=3,
        )
    return MinimizeResult(
        set=frozenset(int(e) for e in best_set),
        value=best_value,
        x=x,
        certificate_gap=float(gap),
        iterations=iterations,
        evaluations=f.evaluations - ev0,
        method="min-norm-point",
    )
