"""The polytope contract: :class:`Polytope`, reached through a linear-optimization oracle, and the
certified :class:`InnerBall` its families supply.

Subclasses provide an exact ``linear_max(w) -> vertex`` with deterministic tie-breaking (equal
weights go to the lower index, ``order_desc``) and a membership test; the geometry (affine
hull, inner ball, diameter, l1 radius) has oracle-based defaults that families override with
closed forms.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from .._validation import check_finite, check_same_ground_set
from ._hull import AffineHull, hull_from_oracle

#: Largest ground set on which membership in a matroid or submodular base polytope is decided
#: by enumerating all 2^n rank (or value) inequalities.
MAX_ENUMERATION_N = 12


def order_desc(w: np.ndarray) -> np.ndarray:
    """Indices by decreasing weight, ties to the lower index (stable, reproducible)."""
    return np.lexsort((np.arange(w.size), -w))


def top_desc(w: np.ndarray, k: int, *, positive: bool = False) -> np.ndarray:
    """The first ``k`` indices of :func:`order_desc` (of the positive weights only when
    ``positive``), in that order, without sorting all of ``w``.

    A partition finds the ``k``-th largest weight; every index above it is kept and, of the
    indices tied with it, the lowest ones, which is where :func:`order_desc` puts them (ties to
    the lower index): the same indices in the same order as ``order_desc(w)[:k]``.
    """
    m = w.size
    if k >= m:
        top = np.flatnonzero(w > 0) if positive else np.arange(m)
    else:
        kth = np.partition(w, m - k)[m - k]
        if positive and kth <= 0:  # fewer than k positive weights: all of them
            top = np.flatnonzero(w > 0)
        else:
            above = np.flatnonzero(w > kth)
            top = np.concatenate([above, np.flatnonzero(w == kth)[: k - above.size]])
    return top[np.lexsort((top, -w[top]))]


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


def cardinality_radius(g: np.ndarray) -> float:
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

