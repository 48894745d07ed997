"""Polytopes given by a few explicit inequalities: the box, the simplex (probability or
down-closed) and the knapsack polytope, each with a closed-form oracle, hull and inner ball."""

from __future__ import annotations

import math

import numpy as np

from .._validation import check_finite, check_int, check_real
from ..constraints.knapsack import Knapsack
from ..errors import ValidationError
from ._hull import AffineHull, coordinate_hull, hull_from_parts, sum_zero_basis
from .base import InnerBall, Polytope


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
        return coordinate_hull((self.lo + self.hi) / 2, self.hi > self.lo)

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
            return coordinate_hull(np.full(n, self.scale / (n + math.sqrt(n))),
                                    np.ones(n, dtype=bool))
        return hull_from_parts(np.full(n, self.scale / n), [sum_zero_basis(np.arange(n), n)])

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
        return coordinate_hull(np.full(self.dim, r), np.ones(self.dim, dtype=bool))

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
