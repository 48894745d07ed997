"""Matroid polytopes: the independence polytope and the base polytope of a matroid, with the
Rado-Edmonds greedy as their oracle."""

from __future__ import annotations

import math
from abc import abstractmethod

import numpy as np

from ..constraints.base import Matroid
from ..constraints.generic import _subset_tables
from ..constraints.partition import PartitionMatroid
from ..constraints.uniform import UniformMatroid
from ..errors import ParameterTypeError
from ._hull import AffineHull, coordinate_hull, hull_from_parts, sum_zero_basis
from .base import (
    MAX_ENUMERATION_N,
    InnerBall,
    Polytope,
    cardinality_radius,
    order_desc,
    top_desc,
)


class _MatroidPolytopeBase(Polytope):
    nonnegative = True

    def __init__(self, matroid: Matroid):
        if not isinstance(matroid, Matroid):
            raise ParameterTypeError(
                f"The 'matroid' parameter of {type(self).__name__} must be a dpsubmod Matroid; got "
                f"{type(matroid).__name__}."
            )
        super().__init__(matroid.n)
        self.matroid = matroid
        self._ranks: np.ndarray | None = None
        self._nonloops: np.ndarray | None = None

    @property
    def nonloops(self) -> np.ndarray:
        """Mask of the elements that are independent on their own."""
        if self._nonloops is None:
            self._nonloops = self.matroid.can_add(np.zeros(self.dim, dtype=bool))
        return self._nonloops

    def linear_max_set(self, w: object) -> np.ndarray:
        """The independent set whose indicator ``linear_max(w)`` returns, sorted (so a continuous
        greedy can keep its convex decomposition for swap rounding)."""
        a = self._check_w(w)
        self.oracle_calls += 1
        return np.sort(self._greedy_set(a))

    def _linear_max(self, w: np.ndarray) -> np.ndarray:
        x = np.zeros(self.dim)
        x[self._greedy_set(w)] = 1.0
        return x

    @abstractmethod
    def _greedy_set(self, w: np.ndarray) -> np.ndarray: ...

    def _rank_inequalities_hold(self, a: np.ndarray, tol: float, max_n: int) -> bool:
        m = self.matroid
        if isinstance(m, UniformMatroid):
            return float(a.sum()) <= m.k + tol and bool((a <= 1 + tol).all())
        if isinstance(m, PartitionMatroid):
            # Per block: x <= 1 and x(block) <= capacity (a direct sum of uniform matroids).
            load = np.bincount(m.labels, weights=a, minlength=m.n_blocks)
            return bool((load <= m.capacities + tol).all() and (a <= 1 + tol).all())
        if self._ranks is None:
            _, self._ranks = _subset_tables(m, max_n, f"{type(self).__name__}.contains")
        n = self.dim
        codes = np.arange(1 << n)
        bits = ((codes[:, None] >> np.arange(n)) & 1).astype(float)
        return bool((bits @ a <= self._ranks + tol).all())

    def diameter(self) -> float:
        """Upper bound ``sqrt(|I delta J|)`` maximised over vertices (seed 003 notes, 5.2)."""
        nl = int(self.nonloops.sum())
        r = self.matroid.rank
        bound = min(2 * r, nl) if not self._is_base else 2 * min(r, nl - r)
        return math.sqrt(bound)

    _is_base = False


class MatroidPolytope(_MatroidPolytopeBase):
    r"""The independence polytope :math:`P(M) = \mathrm{conv}\{1_I : I \in \mathcal I\}
    = \{x \ge 0 : x(S) \le r(S)\ \forall S\}` (Edmonds 1970).

    ``linear_max(w)``: scan the elements by decreasing weight (ties to the lower index) and add
    each positive-weight element that keeps the set independent (the Rado-Edmonds greedy, exact
    for every matroid); cost ``O(n log n)`` plus one greedy pass of the matroid.

    ``contains`` checks the rank inequalities: in closed form for uniform and partition
    matroids, otherwise by enumerating all ``2^n`` subsets, allowed for ``n <= 12``
    (``MAX_ENUMERATION_N``); larger generic instances raise.

    Inner ball (``dpsubmod.polytopes.inner_ball``), closed forms from the seed 003 notes,
    Section 5.4: uniform matroid :math:`U(k, m)` has centre ``r 1`` and radius
    ``r = min(1/2, k / (m + sqrt m))``; a partition matroid is a product of uniform ones (the
    minimum over blocks, loops fixed at 0); any other matroid contains the corner simplex
    ``conv{0, e_i : i not a loop}``, with centre ``rho 1`` and ``rho = 1 / (m' + sqrt m')``
    over the ``m'`` non-loops.
    """

    def _greedy_set(self, w: np.ndarray) -> np.ndarray:
        if isinstance(self.matroid, UniformMatroid):  # the greedy keeps the k heaviest
            return top_desc(w, self.matroid.k, positive=True)
        order = order_desc(w)
        order = order[w[order] > 0]
        return self.matroid.greedy_independent(order)

    def contains(self, x: object, tol: float = 1e-9, max_n: int = MAX_ENUMERATION_N) -> bool:
        a = self._check_x(x)
        if (a < -tol).any():
            return False
        return self._rank_inequalities_hold(a, tol, max_n)

    def _affine_hull(self) -> AffineHull:
        nl = self.nonloops
        return coordinate_hull(np.where(nl, 0.5 / max(1, int(nl.sum())), 0.0), nl)

    def _inner_ball(self) -> InnerBall:
        m, n, nl = self.matroid, self.dim, self.nonloops
        basis = np.eye(n)[:, nl]
        if isinstance(m, UniformMatroid):
            r = min(0.5, m.k / (n + math.sqrt(n)))
            return InnerBall(np.full(n, r), r, basis, "closed-form")
        if isinstance(m, PartitionMatroid):
            center = np.zeros(n)
            radius = math.inf
            for b, cap in enumerate(m.capacities.tolist()):
                size = int(m.sizes[b])
                k = min(cap, size)
                if k == 0:
                    continue
                rb = min(0.5, k / (size + math.sqrt(size)))
                center[m.blocks[b]] = rb
                radius = min(radius, rb)
            return InnerBall(center, radius, basis, "closed-form")
        k = int(nl.sum())
        rho = 1.0 / (k + math.sqrt(k))
        return InnerBall(np.where(nl, rho, 0.0), rho, basis, "closed-form")

    def __repr__(self) -> str:
        return f"MatroidPolytope({self.matroid!r})"


class MatroidBasePolytope(_MatroidPolytopeBase):
    r"""The base polytope :math:`B(M) = \mathrm{conv}\{1_B : B \text{ base}\}
    = P(M) \cap \{x(V) = r(V)\}`.

    ``linear_max(w)``: the greedy over all elements by decreasing weight (negative weights
    included), which returns a maximum-weight base. The polytope is lower-dimensional: it lies
    in ``x(V) = rank`` and, per connected component ``C`` of the matroid, in ``x(C) = r(C)``
    (loops at 0, coloops at 1). ``affine_hull`` finds the exact hull: in closed form for uniform
    and partition matroids, otherwise from at most ``2n`` oracle calls.

    Inner ball, closed forms: the uniform matroid's base polytope is the hypersimplex, the
    cardinality-based base polytope of ``g(s) = min(s, k)`` (centre ``(k/m) 1``, relative
    inradius ``min_s (g(s) - s k/m) / sqrt(s (m - s)/m)``; seed 003 notes, Section 5.4); a
    partition matroid gives a product of hypersimplices. Other matroids use the vertex-simplex
    fallback of :func:`~dpsubmod.polytopes.inner_ball`.
    """

    _is_base = True

    def _greedy_set(self, w: np.ndarray) -> np.ndarray:
        if isinstance(self.matroid, UniformMatroid):  # the greedy keeps the k heaviest
            return top_desc(w, self.matroid.k)
        return self.matroid.greedy_independent(order_desc(w))

    def contains(self, x: object, tol: float = 1e-9, max_n: int = MAX_ENUMERATION_N) -> bool:
        a = self._check_x(x)
        if (a < -tol).any() or abs(float(a.sum()) - self.matroid.rank) > tol * max(1, self.dim):
            return False
        return self._rank_inequalities_hold(a, tol, max_n)

    def _blocks(self) -> list[tuple[np.ndarray, int]] | None:
        """(elements, rank) of the uniform pieces for uniform and partition matroids."""
        m = self.matroid
        if isinstance(m, UniformMatroid):
            return [(np.arange(m.n), m.k)]
        if isinstance(m, PartitionMatroid):
            return [(m.blocks[b], int(min(m.capacities[b], m.sizes[b])))
                    for b in range(m.n_blocks)]
        return None

    def _affine_hull(self) -> AffineHull | None:
        blocks = self._blocks()
        if blocks is None:
            return None
        point = np.zeros(self.dim)
        parts = []
        for idx, k in blocks:
            point[idx] = k / idx.size
            if 0 < k < idx.size:
                parts.append(sum_zero_basis(idx, self.dim))
        return hull_from_parts(point, parts)

    def _inner_ball(self) -> InnerBall | None:
        blocks = self._blocks()
        if blocks is None:
            return None
        hull = self.affine_hull()
        radius = math.inf
        for idx, k in blocks:
            if 0 < k < idx.size:
                s = np.arange(idx.size + 1)
                radius = min(radius, cardinality_radius(np.minimum(s, k).astype(float)))
        if hull.dim == 0:
            radius = 0.0
        return InnerBall(hull.point, radius, hull.basis, "closed-form")

    def __repr__(self) -> str:
        return f"MatroidBasePolytope({self.matroid!r})"
