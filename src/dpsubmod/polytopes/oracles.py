"""Polytopes reached through a linear-optimization oracle.

Continuous greedy, DPCG (Sadeghi and Fazel 2021), online Frank-Wolfe and the projection-free
private bandit of Ene, Nguyen and Vladu (2021) touch their feasible region only through
``linear_max(w) -> vertex`` (a maximizer of ``<w, x>``), so every polytope here provides an exact
one, with deterministic tie-breaking (equal weights go to the lower index):

======================  ============================================  ===================
class                   set                                           linear_max
======================  ============================================  ===================
Box                     ``{lo <= x <= hi}``                           sign rule
Simplex                 ``{x >= 0, sum x = s}`` (or ``<= s``)         best coordinate
MatroidPolytope         ``conv{1_I : I independent}``                 greedy
MatroidBasePolytope     ``conv{1_B : B base}``                        greedy
SubmodularBasePolytope  ``{x(S) <= f(S) for all S, x(V) = f(V)}``     Edmonds' greedy
KnapsackPolytope        ``{0 <= x <= 1, c.x <= b}``                   fractional knapsack
======================  ============================================  ===================

The oracles are data-independent given ``w``: a private algorithm that feeds them a privatized
``w`` releases their output as post-processing.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod

import numpy as np

from .._validation import (
    check_finite,
    check_indices,
    check_int,
    check_real,
    check_same_ground_set,
)
from ..constraints.base import Constraint, Matroid
from ..constraints.generic import _subset_tables
from ..constraints.knapsack import Knapsack
from ..constraints.partition import PartitionMatroid
from ..constraints.uniform import UniformMatroid
from ..errors import ParameterTypeError, ValidationError
from ..functions.base import SetFunction
from ._hull import AffineHull, hull_from_oracle, orthonormal_complement

__all__ = [
    "Polytope",
    "Box",
    "Simplex",
    "MatroidPolytope",
    "MatroidBasePolytope",
    "SubmodularBasePolytope",
    "KnapsackPolytope",
    "as_polytope",
    "InnerBall",
]

#: Largest ground set on which membership in a matroid or submodular base polytope is decided
#: by enumerating all 2^n rank (or value) inequalities.
MAX_ENUMERATION_N = 12


def _order_desc(w: np.ndarray) -> np.ndarray:
    """Indices by decreasing weight, ties to the lower index (stable, reproducible)."""
    return np.lexsort((np.arange(w.size), -w))


class InnerBall:
    """A certified ball inside a polytope, relative to its affine hull.

    ``{center + basis @ z : ||z|| <= radius}`` lies in the polytope. ``basis`` is an orthonormal
    basis of the hull's direction space (shape ``(n, d)``); a ``d = 0`` polytope is a single
    point and gets ``radius = 0`` by convention.

    Attributes
    ----------
    center, radius, basis
    method : str
        ``"closed-form"`` (the family's formula, named in its docstring) or ``"vertex-simplex"``
        (the incentre of a simplex of affinely independent vertices found by the oracle; always
        valid, often small).
    """

    def __init__(self, center: np.ndarray, radius: float, basis: np.ndarray, method: str):
        self.center = np.asarray(center, dtype=float)
        self.radius = float(radius)
        self.basis = np.asarray(basis, dtype=float)
        self.method = method

    @property
    def dim(self) -> int:
        return int(self.basis.shape[1])

    def __repr__(self) -> str:
        return f"InnerBall(dim={self.dim}, radius={self.radius:.6g}, method={self.method!r})"


class Polytope(ABC):
    """A compact convex polytope in R^dim, reached through a linear-optimization oracle.

    Subclasses implement ``_linear_max(w)`` (no validation) and ``contains``; they may supply a
    closed-form affine hull (``_affine_hull``), inner ball (``_inner_ball``), diameter bound and
    l1 radius. ``oracle_calls`` counts ``linear_max``/``linear_min`` calls.

    Attributes
    ----------
    dim : int
        Ambient dimension (the ground-set size for combinatorial polytopes).
    nonnegative : bool
        Whether every point has ``x >= 0`` (true for the combinatorial polytopes).
    """

    dim: int
    nonnegative: bool = False

    def __init__(self, dim: int):
        self.dim = int(dim)
        self.oracle_calls = 0
        self._hull_cache: AffineHull | None = None

    # -- oracle -----------------------------------------------------------------------------
    def _check_w(self, w: object) -> np.ndarray:
        a = check_finite(w, "w", caller=f"{type(self).__name__}.linear_max", ndim=1, dtype=float)
        if a.shape[0] != self.dim:
            check_same_ground_set(a.shape[0], self.dim, "The weight vector 'w'",
                                  f"the {type(self).__name__}")
        return a

    def linear_max(self, w: object) -> np.ndarray:
        """A vertex maximizing ``<w, x>`` over the polytope (deterministic ties).

        Parameters
        ----------
        w : array-like of float, shape (dim,)

        Returns
        -------
        ndarray of float64, shape (dim,)
        """
        a = self._check_w(w)
        self.oracle_calls += 1
        return self._linear_max(a)

    def linear_min(self, w: object) -> np.ndarray:
        """A vertex minimizing ``<w, x>``, i.e. ``linear_max(-w)``."""
        a = self._check_w(w)
        self.oracle_calls += 1
        return self._linear_max(-a)

    @abstractmethod
    def _linear_max(self, w: np.ndarray) -> np.ndarray:
        """Maximizer for a validated float vector."""

    def _check_x(self, x: object) -> np.ndarray:
        a = check_finite(x, "x", caller=f"{type(self).__name__}.contains", ndim=1, dtype=float)
        if a.shape[0] != self.dim:
            check_same_ground_set(a.shape[0], self.dim, "The point 'x'",
                                  f"the {type(self).__name__}")
        return a

    @abstractmethod
    def contains(self, x: object, tol: float = 1e-9) -> bool:
        """Whether ``x`` lies in the polytope, up to ``tol`` on every constraint."""

    # -- geometry ---------------------------------------------------------------------------
    def affine_hull(self, tol: float = 1e-9) -> AffineHull:
        """The affine hull (closed form where the family has one, else from at most
        ``2 dim`` oracle calls); cached."""
        if self._hull_cache is None:
            hull = self._affine_hull()
            if hull is None:
                hull = hull_from_oracle(self._linear_max, self.dim, tol)
            self._hull_cache = hull
        return self._hull_cache

    def _affine_hull(self) -> AffineHull | None:
        return None

    def _inner_ball(self) -> InnerBall | None:
        return None

    def diameter(self) -> float:
        """An upper bound on the l2 diameter (exact where the subclass says so)."""
        raise NotImplementedError(f"{type(self).__name__} has no diameter bound.")

    def l1_radius(self) -> float:
        """``max ||x||_1`` over the polytope (the ``R`` of Sadeghi and Fazel 2021, Lemma 2)."""
        if self.nonnegative:
            return float(self._linear_max(np.ones(self.dim)).sum())
        raise NotImplementedError(f"{type(self).__name__} has no l1 radius.")

    def __repr__(self) -> str:
        return f"{type(self).__name__}(dim={self.dim})"


def _coordinate_hull(point: np.ndarray, free: np.ndarray) -> AffineHull:
    """Hull whose direction space is spanned by the coordinate axes in ``free`` (bool mask)."""
    n = point.size
    eye = np.eye(n)
    return AffineHull(point=point, basis=eye[:, free], normals=eye[:, ~free])


def _sum_zero_basis(idx: np.ndarray, n: int) -> np.ndarray:
    """Orthonormal basis of ``{z : supp z in idx, sum z = 0}`` (Helmert-style, via QR)."""
    m = idx.size
    if m < 2:
        return np.zeros((n, 0))
    local = orthonormal_complement(np.ones((m, 1)) / math.sqrt(m), m)
    out = np.zeros((n, m - 1))
    out[idx] = local
    return out


def _hull_from_parts(point: np.ndarray, parts: list[np.ndarray]) -> AffineHull:
    n = point.size
    basis = np.column_stack(parts) if parts else np.zeros((n, 0))
    return AffineHull(point=point, basis=basis, normals=orthonormal_complement(basis, n))


def _cardinality_radius(g: np.ndarray) -> float:
    """Relative inradius of the cardinality-based base polytope of ``S -> g(|S|)`` around its
    centre ``(g(m)/m) 1``: ``min_s (g(s) - s g(m)/m) / sqrt(s (m - s) / m)`` over ``0 < s < m``
    (seed 003 notes, Section 5.4; the facet ``x(S) <= g(|S|)`` has normal ``1_S``, whose part in
    ``1^perp`` has squared norm ``s (m - s) / m``)."""
    m = g.size - 1
    if m < 2:
        return 0.0
    s = np.arange(1, m)
    slack = g[1:m] - s * g[m] / m
    return float(np.min(slack / np.sqrt(s * (m - s) / m)))


# ------------------------------------------------------------------------------------------------
class Box(Polytope):
    """The box ``{x : lo <= x <= hi}``.

    ``linear_max`` takes ``hi`` where ``w > 0`` and ``lo`` elsewhere. Inner ball (closed form):
    centre ``(lo + hi) / 2``, radius ``min (hi - lo) / 2`` over the non-degenerate coordinates
    (coordinates with ``lo == hi`` are fixed and excluded from the affine hull).

    Parameters
    ----------
    lo, hi : float or array-like of float
        Bounds, broadcast against each other (and against ``dim`` when given); ``lo <= hi``.
    dim : int, optional
        Dimension, needed when both bounds are scalars.
    """

    def __init__(self, lo: object, hi: object, dim: int | None = None):
        lo_a = check_finite(lo, "lo", caller="Box", dtype=float)
        hi_a = check_finite(hi, "hi", caller="Box", dtype=float)
        shape = np.broadcast_shapes(lo_a.shape, hi_a.shape)
        if dim is not None:
            shape = np.broadcast_shapes(shape, (check_int(dim, "dim", low=1, caller="Box"),))
        if len(shape) != 1:
            raise ValidationError(
                "The bounds of Box must be 1-dimensional; pass 'dim' when both are scalars."
            )
        self.lo = np.broadcast_to(lo_a, shape).astype(float)
        self.hi = np.broadcast_to(hi_a, shape).astype(float)
        if (self.lo > self.hi).any():
            i = int(np.argmax(self.lo > self.hi))
            raise ValidationError(
                f"The bounds of Box must satisfy lo <= hi; coordinate {i} has lo = {self.lo[i]!r} "
                f"> hi = {self.hi[i]!r}."
            )
        super().__init__(shape[0])
        self.nonnegative = bool((self.lo >= 0).all())

    def _linear_max(self, w: np.ndarray) -> np.ndarray:
        return np.where(w > 0, self.hi, self.lo)

    def contains(self, x: object, tol: float = 1e-9) -> bool:
        a = self._check_x(x)
        return bool(((a >= self.lo - tol) & (a <= self.hi + tol)).all())

    def _affine_hull(self) -> AffineHull:
        return _coordinate_hull((self.lo + self.hi) / 2, self.hi > self.lo)

    def _inner_ball(self) -> InnerBall:
        free = self.hi > self.lo
        r = float(((self.hi - self.lo)[free] / 2).min()) if free.any() else 0.0
        return InnerBall((self.lo + self.hi) / 2, r, np.eye(self.dim)[:, free], "closed-form")

    def diameter(self) -> float:
        """Exact: ``||hi - lo||``."""
        return float(np.linalg.norm(self.hi - self.lo))

    def l1_radius(self) -> float:
        return float(np.maximum(np.abs(self.lo), np.abs(self.hi)).sum())

    def __repr__(self) -> str:
        return f"Box(dim={self.dim})"


class Simplex(Polytope):
    """The scaled probability simplex ``{x >= 0, sum x = scale}`` or, with ``full=False``, the
    down-closed simplex ``{x >= 0, sum x <= scale}``.

    ``linear_max`` puts all the mass on the first largest weight (for ``full=False``, only if
    it is positive). Inner balls (closed form): the probability simplex has centre
    ``(scale / n) 1`` and relative inradius ``scale / sqrt(n (n - 1))``; the down-closed simplex
    has centre ``rho 1`` and radius ``rho = scale / (n + sqrt(n))`` (the ball touches every facet).

    Parameters
    ----------
    dim : int
    scale : float, default=1.0
        Positive total mass.
    full : bool, default=True
        ``True`` for ``sum x = scale``; ``False`` for ``sum x <= scale``.
    """

    nonnegative = True

    def __init__(self, dim: int, scale: float = 1.0, full: bool = True):
        super().__init__(check_int(dim, "dim", low=1, caller="Simplex"))
        self.scale = check_real(scale, "scale", low=0.0, low_open=True, caller="Simplex")
        if not math.isfinite(self.scale):
            raise ValidationError(f"The 'scale' parameter of Simplex must be finite; got {scale}.")
        self.full = bool(full)

    def _linear_max(self, w: np.ndarray) -> np.ndarray:
        x = np.zeros(self.dim)
        j = int(np.argmax(w))
        if self.full or w[j] > 0:
            x[j] = self.scale
        return x

    def contains(self, x: object, tol: float = 1e-9) -> bool:
        a = self._check_x(x)
        s = float(a.sum())
        ok = bool((a >= -tol).all()) and s <= self.scale + tol * max(1.0, self.scale)
        if self.full:
            ok = ok and s >= self.scale - tol * max(1.0, self.scale)
        return ok

    def _affine_hull(self) -> AffineHull:
        n = self.dim
        if not self.full:
            return _coordinate_hull(np.full(n, self.scale / (n + math.sqrt(n))),
                                    np.ones(n, dtype=bool))
        return _hull_from_parts(np.full(n, self.scale / n), [_sum_zero_basis(np.arange(n), n)])

    def _inner_ball(self) -> InnerBall:
        n = self.dim
        hull = self.affine_hull()
        if not self.full:
            rho = self.scale / (n + math.sqrt(n))
            return InnerBall(np.full(n, rho), rho, hull.basis, "closed-form")
        r = self.scale / math.sqrt(n * (n - 1)) if n > 1 else 0.0
        return InnerBall(np.full(n, self.scale / n), r, hull.basis, "closed-form")

    def diameter(self) -> float:
        """Exact: ``scale sqrt(2)`` (``scale`` for the down-closed simplex in dimension 1)."""
        if self.dim == 1:
            return 0.0 if self.full else self.scale
        return self.scale * math.sqrt(2.0)

    def __repr__(self) -> str:
        return f"Simplex(dim={self.dim}, scale={self.scale:g}, full={self.full})"


# ------------------------------------------------------------------------------------------------
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
        order = _order_desc(w)
        order = order[w[order] > 0]
        return self.matroid.greedy_independent(order)

    def contains(self, x: object, tol: float = 1e-9, max_n: int = MAX_ENUMERATION_N) -> bool:
        a = self._check_x(x)
        if (a < -tol).any():
            return False
        return self._rank_inequalities_hold(a, tol, max_n)

    def _affine_hull(self) -> AffineHull:
        nl = self.nonloops
        return _coordinate_hull(np.where(nl, 0.5 / max(1, int(nl.sum())), 0.0), nl)

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
        return self.matroid.greedy_independent(_order_desc(w))

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
                parts.append(_sum_zero_basis(idx, self.dim))
        return _hull_from_parts(point, parts)

    def _inner_ball(self) -> InnerBall | None:
        blocks = self._blocks()
        if blocks is None:
            return None
        hull = self.affine_hull()
        radius = math.inf
        for idx, k in blocks:
            if 0 < k < idx.size:
                s = np.arange(idx.size + 1)
                radius = min(radius, _cardinality_radius(np.minimum(s, k).astype(float)))
        if hull.dim == 0:
            radius = 0.0
        return InnerBall(hull.point, radius, hull.basis, "closed-form")

    def __repr__(self) -> str:
        return f"MatroidBasePolytope({self.matroid!r})"


# ------------------------------------------------------------------------------------------------
class _CardinalityFunction(SetFunction):
    """``S -> g(|S|)`` (submodular when ``g`` is concave)."""

    submodular = True
    batched_values = True

    def __init__(self, g: np.ndarray):
        super().__init__(g.size - 1)
        self.g = g

    def _value(self, mask: np.ndarray) -> float:
        return float(self.g[int(mask.sum())])

    def _values(self, masks: np.ndarray) -> np.ndarray:
        return self.g[masks.sum(axis=1)].astype(np.float64)

    def _chain_values(self, order: np.ndarray) -> np.ndarray:
        return np.array(self.g[:order.size + 1], dtype=np.float64)


class SubmodularBasePolytope(Polytope):
    r"""The base polytope :math:`B(f) = \{x : x(S) \le f(S)\ \forall S,\ x(V) = f(V)\}` of a
    submodular function with :math:`f(\emptyset) = 0`.

    ``linear_max(w)`` is Edmonds' greedy (Edmonds 1970): order the elements by decreasing
    ``w`` (ties to the lower index), ``pi``, and set
    :math:`x_{\pi(i)} = f(\{\pi(1..i)\}) - f(\{\pi(1..i-1)\})`, the marginal gains along the order;
    this vertex maximizes ``<w, x>`` over ``B(f)`` for every submodular ``f``. It walks one
    incremental state of ``f`` and adds ``n`` to ``f.evaluations`` (the papers' unit).
    ``linear_min`` is the same with ``w`` ascending (seed 003 notes, Section 5.2).

    ``contains`` enumerates the ``2^n`` inequalities (``n <= 12``), or, for a cardinality-based
    function built with :meth:`cardinality_based`, compares sorted prefix sums with ``g``
    (any ``n``). The affine hull is ``x(V) = f(V)`` intersected with ``x(C) = f(C)`` for each
    separator of ``f``; it is found from at most ``2n`` oracle calls.

    Parameters
    ----------
    f : SetFunction
        Submodular (``f.submodular`` true) with ``f(empty) = 0``.

    Raises
    ------
    ValidationError
        If ``f(empty) != 0`` (use ``f - f(empty)``) or ``f`` does not declare submodularity.
    """

    def __init__(self, f: SetFunction, *, _profile: np.ndarray | None = None):
        if not isinstance(f, SetFunction):
            raise ParameterTypeError(
                "The 'f' parameter of SubmodularBasePolytope must be a dpsubmod SetFunction; got "
                f"{type(f).__name__}."
            )
        if not getattr(f, "submodular", False):
            raise ValidationError(
                f"The 'f' parameter of SubmodularBasePolytope must be submodular; "
                f"{type(f).__name__} declares submodular = False, so Edmonds' greedy would not "
                "return an optimal vertex."
            )
        f0, full = (float(v) for v in f.values(np.array([np.zeros(f.n, dtype=bool),
                                                          np.ones(f.n, dtype=bool)])))
        if abs(f0) > 1e-12 * max(1.0, abs(full)):
            raise ValidationError(
                f"The 'f' parameter of SubmodularBasePolytope must have f(empty) = 0; got "
                f"{f0!r}. Subtract the constant f(empty) first."
            )
        super().__init__(f.n)
        self.f = f
        self.total = full
        self.profile = _profile

    @classmethod
    def cardinality_based(cls, g: object) -> SubmodularBasePolytope:
        """The base polytope of ``f(S) = g(|S|)`` for a concave ``g`` with ``g(0) = 0``.

        Parameters
        ----------
        g : array-like of float, shape (n + 1,)
            ``g[s]`` for ``s = 0..n``; concave (non-increasing increments) and ``g[0] = 0``.
            ``g[s] = min(s, k)`` gives the hypersimplex (the uniform matroid's base polytope).
        """
        a = check_finite(g, "g", caller="SubmodularBasePolytope.cardinality_based", ndim=1,
                         dtype=float)
        if a.size < 2 or a[0] != 0:
            raise ValidationError(
                "The 'g' argument of SubmodularBasePolytope.cardinality_based must have length "
                "n + 1 >= 2 and g[0] = 0."
            )
        inc = np.diff(a)
        if (np.diff(inc) > 1e-12 * max(1.0, float(np.abs(a).max()))).any():
            raise ValidationError(
                "The 'g' argument of SubmodularBasePolytope.cardinality_based must be concave "
                "(non-increasing increments g[s+1] - g[s]); f(S) = g(|S|) is not submodular "
                "otherwise."
            )
        return cls(_CardinalityFunction(a), _profile=a)

    def _linear_max(self, w: np.ndarray) -> np.ndarray:
        return self._greedy_vertex(_order_desc(w))

    def greedy_vertex(self, order: object) -> np.ndarray:
        """The vertex of Edmonds' greedy for a full ordering (a permutation of ``range(n)``):
        the marginal gains of ``f`` along ``order``."""
        order = check_indices(order, self.dim, "order", caller="greedy_vertex", unique=True)
        if order.size != self.dim:
            raise ValidationError(
                f"The 'order' argument of greedy_vertex must be a permutation of range({self.dim});"
                f" got {order.size} elements."
            )
        return self._greedy_vertex(order)

    def _greedy_vertex(self, order: np.ndarray) -> np.ndarray:
        x = np.zeros(self.dim)
        if self.profile is not None:
            x[order] = np.diff(self.profile)
            return x
        x[order] = np.diff(self.f.chain_values(order, count=False))
        self.f.evaluations += self.dim
        return x

    def contains(self, x: object, tol: float = 1e-9, max_n: int = MAX_ENUMERATION_N) -> bool:
        a = self._check_x(x)
        scale = tol * max(1.0, abs(self.total), float(np.abs(a).max(initial=0.0)))
        if abs(float(a.sum()) - self.total) > scale * max(1, self.dim):
            return False
        if self.profile is not None:
            prefix = np.concatenate([[0.0], np.cumsum(np.sort(a)[::-1])])
            return bool((prefix <= self.profile + scale).all())
        n = self.dim
        if n > max_n:
            raise ValidationError(
                f"SubmodularBasePolytope.contains enumerates all 2^n subsets; n = {n} exceeds "
                f"'max_n' = {max_n}. Raise max_n (cost doubles per element)."
            )
        codes = np.arange(1 << n)
        bits = ((codes[:, None] >> np.arange(n)) & 1).astype(bool)
        vals = self.f.values(bits)
        return bool((bits.astype(float) @ a <= vals + scale).all())

    def _coordinate_range(self) -> tuple[np.ndarray, np.ndarray]:
        """``[f(V) - f(V - e), f({e})]``: every vertex coordinate lies in it (submodularity)."""
        n = self.dim
        eye = np.eye(n, dtype=bool)
        hi = self.f.values(eye)
        lo = self.total - self.f.values(~eye)
        return lo, hi

    def diameter(self) -> float:
        """Upper bound ``||hi - lo||`` with ``lo_e = f(V) - f(V - e)`` and ``hi_e = f({e})``, the
        range of every vertex coordinate."""
        lo, hi = self._coordinate_range()
        return float(np.linalg.norm(hi - lo))

    def l1_radius(self) -> float:
        """Upper bound ``sum_e max(|lo_e|, |hi_e|)`` (exact for monotone ``f``)."""
        lo, hi = self._coordinate_range()
        if (lo >= 0).all():
            return float(self.total)
        return float(np.maximum(np.abs(lo), np.abs(hi)).sum())

    def _affine_hull(self) -> AffineHull | None:
        if self.profile is None:
            return None
        n = self.dim
        point = np.full(n, self.total / n)
        if _cardinality_radius(self.profile) <= 0:
            return _hull_from_parts(point, [])
        return _hull_from_parts(point, [_sum_zero_basis(np.arange(n), n)])

    def _inner_ball(self) -> InnerBall | None:
        if self.profile is None:
            return None
        hull = self.affine_hull()
        r = _cardinality_radius(self.profile) if hull.dim else 0.0
        return InnerBall(hull.point, r, hull.basis, "closed-form")

    def __repr__(self) -> str:
        return f"SubmodularBasePolytope({self.f!r})"


# ------------------------------------------------------------------------------------------------
class KnapsackPolytope(Polytope):
    r"""The knapsack polytope :math:`\{x \in [0, 1]^n : c^\top x \le b\}`.

    ``linear_max(w)`` is the fractional knapsack (Dantzig 1957): items with ``w_e > 0`` by
    decreasing ``w_e / c_e`` (ties to the lower index) are taken whole while they fit, then one
    fractionally; exact for this LP. Inner ball (closed form, derived here): centre ``r 1``
    with ``r = min(1/2, b / (sum c + ||c||))``; every point of the ball has coordinates in
    ``[0, 2r]`` and cost at most ``r sum c + r ||c|| <= b``.

    Parameters
    ----------
    costs : array-like of float or Knapsack
        Positive costs, or a :class:`~dpsubmod.constraints.Knapsack` (then omit ``budget``).
    budget : float
    """

    nonnegative = True

    def __init__(self, costs: object, budget: float | None = None):
        if isinstance(costs, Knapsack):
            if budget is not None:
                raise ValidationError(
                    "Pass either a Knapsack or ('costs', 'budget') to KnapsackPolytope, not both."
                )
            knap = costs
        else:
            if budget is None:
                raise ValidationError("The 'budget' parameter of KnapsackPolytope is required.")
            knap = Knapsack(costs, budget)
        super().__init__(knap.n)
        self.constraint = knap
        self.costs = knap.costs
        self.budget = knap.budget

    def _linear_max(self, w: np.ndarray) -> np.ndarray:
        x = np.zeros(self.dim)
        pos = np.flatnonzero(w > 0)
        if pos.size == 0:
            return x
        ratio = w[pos] / self.costs[pos]
        order = pos[np.lexsort((pos, -ratio))]
        c = self.costs[order]
        before = np.cumsum(c) - c
        x[order] = np.clip((self.budget - before) / c, 0.0, 1.0)
        return x

    def contains(self, x: object, tol: float = 1e-9) -> bool:
        a = self._check_x(x)
        return bool((a >= -tol).all() and (a <= 1 + tol).all()
                    and float(self.costs @ a) <= self.budget + tol * max(1.0, self.budget))

    def _affine_hull(self) -> AffineHull:
        r = self._radius()
        return _coordinate_hull(np.full(self.dim, r), np.ones(self.dim, dtype=bool))

    def _radius(self) -> float:
        return min(0.5, self.budget / (float(self.costs.sum()) + float(np.linalg.norm(self.costs))))

    def _inner_ball(self) -> InnerBall:
        r = self._radius()
        return InnerBall(np.full(self.dim, r), r, np.eye(self.dim), "closed-form")

    def diameter(self) -> float:
        """Upper bound: a vertex has at most ``floor(b / c_min) + 1`` non-zero coordinates, each
        in ``[0, 1]``."""
        per = math.floor(self.budget / float(self.costs.min())) + 1
        return math.sqrt(min(self.dim, 2 * per))

    def __repr__(self) -> str:
        return f"KnapsackPolytope(dim={self.dim}, budget={self.budget:.6g})"


def as_polytope(obj: object, *, base: bool = False) -> Polytope:
    """The polytope of a constraint: a Matroid gives its :class:`MatroidPolytope` (or, with
    ``base=True``, its :class:`MatroidBasePolytope`), a Knapsack its :class:`KnapsackPolytope`;
    a Polytope is returned unchanged."""
    if isinstance(obj, Polytope):
        return obj
    if isinstance(obj, Matroid):
        return MatroidBasePolytope(obj) if base else MatroidPolytope(obj)
    if isinstance(obj, Knapsack):
        return KnapsackPolytope(obj)
    if isinstance(obj, Constraint):
        raise ParameterTypeError(
            f"No polytope is defined for {type(obj).__name__}; pass a Matroid, a Knapsack or a "
            "Polytope."
        )
    raise ParameterTypeError(
        f"Expected a Matroid, a Knapsack or a Polytope; got {type(obj).__name__}."
    )
