"""The base polytope of a submodular function, with Edmonds' greedy as its oracle."""

from __future__ import annotations

import numpy as np

from .._validation import check_finite, check_indices
from ..errors import ParameterTypeError, ValidationError
from ..functions.base import SetFunction
from ._hull import AffineHull, hull_from_parts, sum_zero_basis
from .base import MAX_ENUMERATION_N, InnerBall, Polytope, cardinality_radius, order_desc


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
        return self._greedy_vertex(order_desc(w))

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
        if cardinality_radius(self.profile) <= 0:
            return hull_from_parts(point, [])
        return hull_from_parts(point, [sum_zero_basis(np.arange(n), n)])

    def _inner_ball(self) -> InnerBall | None:
        if self.profile is None:
            return None
        hull = self.affine_hull()
        r = cardinality_radius(self.profile) if hull.dim else 0.0
        return InnerBall(hull.point, r, hull.basis, "closed-form")

    def __repr__(self) -> str:
        return f"SubmodularBasePolytope({self.f!r})"
