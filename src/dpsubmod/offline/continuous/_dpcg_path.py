r"""DPCG's fractional path over the polytope of the constraint: the polytope's linear oracle
(also under the curvature variant's extra constraint ``ell . v >= lambda``), the steps
:math:`x \leftarrow x + v / K`, and the oblivious rounding of the end point.

The algorithms, their noise and their guarantees are described in :mod:`dpsubmod.offline.dpcg`
(Sadeghi and Fazel 2021); everything here is post-processing of the noisy gradients.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...constraints.base import Constraint, Matroid
from ...constraints.knapsack import Knapsack
from ...errors import ValidationError
from ...polytopes.oracles import KnapsackPolytope, MatroidPolytope
from ...polytopes.rounding import ConvexDecomposition, knapsack_rounding
from ...privacy.additive import Laplace
from ...privacy.gaussian_mechanism import Gaussian
from ...privacy.ledger import Ledger


def _polytope(constraint: Constraint) -> MatroidPolytope | KnapsackPolytope:
    if isinstance(constraint, Matroid):
        return MatroidPolytope(constraint)
    if isinstance(constraint, Knapsack):
        return KnapsackPolytope(constraint)
    raise ValidationError(
        f"DPCG needs a matroid or knapsack constraint; got {type(constraint).__name__}."
    )


class _Path:
    """The fractional point and its decomposition into polytope vertices."""

    def __init__(self, poly: MatroidPolytope | KnapsackPolytope):
        self.poly = poly
        self.n = poly.dim
        self.x = np.zeros(self.n)
        self.decomposition = ConvexDecomposition(self.n)

    def step(self, parts: list[tuple[np.ndarray, float]], K: int) -> None:
        """Move by ``(1/K) sum_j theta_j v_j`` for vertices ``v_j`` (index sets for a matroid,
        points for a knapsack)."""
        for v, theta in parts:
            if theta <= 0:
                continue
            if isinstance(self.poly, MatroidPolytope):
                self.decomposition.add(v, theta / K)
                self.x[v] += theta / K
            else:
                self.x += theta * v / K
        np.clip(self.x, 0.0, 1.0, out=self.x)

    def vertex(self, w: np.ndarray) -> np.ndarray:
        if isinstance(self.poly, MatroidPolytope):
            return self.poly.linear_max_set(w)
        return self.poly.linear_max(w)

    def value_of(self, v: np.ndarray, ell: np.ndarray) -> float:
        if isinstance(self.poly, MatroidPolytope):
            return float(ell[v].sum())
        return float(ell @ v)

    def round(self, gen: np.random.Generator) -> np.ndarray:
        if isinstance(self.poly, MatroidPolytope):
            # Padding each set to a base in index order is data-independent and, for monotone F,
            # only raises the value (seed 002 review, C8).
            return self.decomposition.round(self.poly.matroid, pad="greedy", rng=gen)
        x = self.x.copy()
        c, b = self.poly.costs, self.poly.budget
        over = float(c @ x) - b
        if over > 0:  # rounding error of the running sum only
            x *= b / float(c @ x)
        return knapsack_rounding(self.poly, x, rng=gen)


def _run(path: _Path, K: int, grad: Any, noise: Laplace | Gaussian, allowance: Ledger,
         constrained: tuple[np.ndarray, float] | None = None) -> None:
    for _ in range(K):
        w = np.asarray(noise.release(grad(path.x), budget=allowance))
        if constrained is None:
            path.step([(path.vertex(w), 1.0)], K)
        else:
            parts = _constrained_vertex(path, w, *constrained)
            path.step(parts, K)


def _constrained_vertex(path: _Path, w: np.ndarray, ell: np.ndarray, lam: float
                        ) -> list[tuple[np.ndarray, float]]:
    r"""``argmax <w, v>`` over ``P`` intersected with ``{ell . v >= lam}`` as a convex
    combination of at most two vertices (Lagrangian: the vertices of ``w + mu ell`` on both sides
    of the optimal multiplier ``mu*``, mixed so that ``ell . v = lam``)."""
    v0 = path.vertex(w)
    if path.value_of(v0, ell) >= lam:
        return [(v0, 1.0)]
    scale = max(float(np.abs(w).max()), 1e-300) / max(float(ell.max()), 1e-300)
    hi = scale
    v_hi = path.vertex(w + hi * ell)
    for _ in range(200):
        if path.value_of(v_hi, ell) >= lam:
            break
        hi *= 2.0
        v_hi = path.vertex(w + hi * ell)
    lo, v_lo = 0.0, v0
    for _ in range(100):  # bisection on the multiplier; ell . v(mu) is non-decreasing in mu
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        v_mid = path.vertex(w + mid * ell)
        if path.value_of(v_mid, ell) >= lam:
            hi, v_hi = mid, v_mid
        else:
            lo, v_lo = mid, v_mid
    a, b = path.value_of(v_lo, ell), path.value_of(v_hi, ell)
    theta = 0.0 if b <= a else (b - lam) / (b - a)
    theta = min(max(theta, 0.0), 1.0)
    return [(v_lo, theta), (v_hi, 1.0 - theta)]
