"""Interior points, inner balls, shrinkage and sphere sampling on a polytope's affine hull.

The projection-free private bandit of Ene, Nguyen and Vladu (2021; App. D, assumption A5')
plays points ``x + zeta u`` with ``u`` uniform on the unit sphere and needs them to stay feasible.
It therefore needs a ball ``B(c, r)`` inside the feasible set ``K`` and the shrinkage
``x -> (1 - alpha) x + alpha c`` (with ``alpha = zeta / r``). For a lower-dimensional ``K`` (the
base polytopes lie in ``x(V) = f(V)``) the ball, the sphere and the smoothing all live in the
affine hull, whose dimension replaces ``n`` in the one-point estimator
``(n / zeta) f(x + zeta u) u`` (seed 003 notes, Section 5.4).
"""

from __future__ import annotations

import numpy as np

from .._rng import RNGLike, as_generator
from .._validation import check_finite, check_real
from ..errors import ParameterTypeError, ValidationError
from ._hull import AffineHull, hull_from_oracle
from .base import InnerBall, Polytope


def _check_polytope(p: object, caller: str) -> Polytope:
    if not isinstance(p, Polytope):
        raise ParameterTypeError(
            f"The 'polytope' parameter of {caller} must be a dpsubmod Polytope; got "
            f"{type(p).__name__}. Build one with dpsubmod.polytopes.as_polytope(constraint)."
        )
    return p


def affine_hull(polytope: Polytope, tol: float = 1e-9) -> AffineHull:
    """The affine hull of ``polytope``: a point, an orthonormal basis of its direction space
    and one of the normal space (closed form where the family has one, else from at most
    ``2 dim`` oracle calls; cached on the polytope).

    Examples
    --------
    >>> from dpsubmod.polytopes import Simplex
    >>> affine_hull(Simplex(3)).dim
    2
    """
    return _check_polytope(polytope, "affine_hull").affine_hull(tol)


def direction_basis(polytope: Polytope) -> np.ndarray:
    """Orthonormal basis, shape ``(n, d)``, of the directions of the polytope's affine hull
    (for a base polytope in ``x(V) = f(V)``: directions orthogonal to ``1``, and to every
    further normal of the hull)."""
    return affine_hull(polytope).basis


def vertex_simplex_ball(polytope: Polytope) -> InnerBall:
    r"""An inner ball of any polytope from ``d + 1`` affinely independent vertices.

    The simplex of the vertices found by :func:`affine_hull` lies in the polytope (convexity),
    so its inscribed ball does too. With barycentric coordinates ``lambda(y) = A y + b`` in hull
    coordinates, the inradius is ``1 / sum_i ||A_i||`` and the incentre has
    ``lambda_i = ||A_i|| r`` (seed 003 notes, Section 5.4). Valid for every polytope, but the
    ball can be much smaller than the largest inscribed one.
    """
    p = _check_polytope(polytope, "vertex_simplex_ball")
    hull = p.affine_hull()
    if hull.vertices is None:
        hull = hull_from_oracle(p._linear_max, p.dim)
    d = hull.dim
    if d == 0:
        return InnerBall(hull.point, 0.0, hull.basis, "vertex-simplex")
    v0 = hull.vertices[0]
    Y = hull.basis.T @ (hull.vertices - v0).T  # (d, d + 1), first column 0
    M = np.vstack([Y, np.ones(d + 1)])
    Minv = np.linalg.inv(M)
    norms = np.linalg.norm(Minv[:, :d], axis=1)
    r = 1.0 / float(norms.sum())
    lam = norms * r
    center = v0 + hull.basis @ (Y @ lam)
    return InnerBall(center, r, hull.basis, "vertex-simplex")


def inner_ball(polytope: Polytope) -> InnerBall:
    """A certified ball inside ``polytope``, relative to its affine hull.

    Returns ``InnerBall(center, radius, basis, method)`` with
    ``{center + basis @ z : ||z|| <= radius}`` contained in the polytope. Closed forms
    (``method="closed-form"``) come from each family's docstring: box, simplex, the matroid
    polytope of any matroid (uniform and partition matroids get larger balls), the uniform and
    partition base polytopes (hypersimplices), the cardinality-based submodular base polytope and
    the knapsack polytope. Anything else uses :func:`vertex_simplex_ball`. A single-point
    polytope gets radius 0.

    Examples
    --------
    >>> from dpsubmod.polytopes import Box
    >>> inner_ball(Box(0.0, 2.0, dim=3)).radius
    1.0
    """
    p = _check_polytope(polytope, "inner_ball")
    ball = p._inner_ball()
    return ball if ball is not None else vertex_simplex_ball(p)


def shrink(x: object, alpha: float, center: object) -> np.ndarray:
    r"""The shrinkage map ``x -> (1 - alpha) x + alpha center``.

    If ``x`` is in a convex set ``K`` and the relative ball ``B(center, r)`` lies in ``K``, the
    image ``y`` has the relative ball ``B(y, alpha r)`` in ``K``, because
    ``y + alpha r u = (1 - alpha) x + alpha (center + r u)``. With ``alpha = zeta / r`` the played
    point ``y + zeta u`` of a one-point bandit estimator stays feasible (Ene, Nguyen and Vladu
    2021, App. D; the query then costs an extra ``L zeta D / r`` per round).

    Parameters
    ----------
    x : array-like, shape (n,) or (m, n)
    alpha : float in [0, 1]
    center : array-like, shape (n,)

    Returns
    -------
    ndarray, the shape of ``x``.
    """
    a = check_real(alpha, "alpha", low=0.0, high=1.0, caller="shrink")
    xa = check_finite(x, "x", caller="shrink", dtype=float)
    c = check_finite(center, "center", caller="shrink", ndim=1, dtype=float)
    if xa.shape[-1] != c.size:
        raise ValidationError(
            f"The 'x' argument of shrink has {xa.shape[-1]} coordinates but 'center' has {c.size}."
        )
    return (1.0 - a) * xa + a * c


class ShrunkPolytope(Polytope):
    """``K_alpha = center + (1 - alpha)(K - center)``, the image of ``K`` under :func:`shrink`.

    Its oracle is ``center + (1 - alpha)(K.linear_max(w) - center)`` (one call of ``K``), so
    Frank-Wolfe can keep its iterates in ``K_alpha``, where every point has a relative ball of
    radius ``alpha r`` inside ``K`` when ``B(center, r)`` does.

    Parameters
    ----------
    polytope : Polytope
    alpha : float in [0, 1]
    center : array-like, optional
        A point of ``K``; defaults to the centre of :func:`inner_ball`.
    """

    def __init__(self, polytope: Polytope, alpha: float, center: object = None):
        self.base = _check_polytope(polytope, "ShrunkPolytope")
        super().__init__(self.base.dim)
        self.alpha = check_real(alpha, "alpha", low=0.0, high=1.0, caller="ShrunkPolytope")
        if center is None:
            self._ball = inner_ball(self.base)
            c = self._ball.center
        else:
            self._ball = None
            c = check_finite(center, "center", caller="ShrunkPolytope", ndim=1, dtype=float)
            if c.size != self.dim or not self.base.contains(c, tol=1e-7):
                raise ValidationError(
                    "The 'center' of ShrunkPolytope must be a point of the polytope of the same "
                    "dimension."
                )
        self.center = c
        self.nonnegative = self.base.nonnegative

    def _linear_max(self, w: np.ndarray) -> np.ndarray:
        self.base.oracle_calls += 1
        return self.center + (1.0 - self.alpha) * (self.base._linear_max(w) - self.center)

    def contains(self, x: object, tol: float = 1e-9) -> bool:
        a = self._check_x(x)
        if self.alpha == 1.0:
            return bool(np.allclose(a, self.center, atol=tol))
        pre = self.center + (a - self.center) / (1.0 - self.alpha)
        return self.base.contains(pre, tol=tol / (1.0 - self.alpha))

    def _affine_hull(self) -> AffineHull:
        h = self.base.affine_hull()
        return AffineHull(point=self.center, basis=h.basis, normals=h.normals)

    def _inner_ball(self) -> InnerBall:
        b = self._ball if self._ball is not None else inner_ball(self.base)
        s = 1.0 - self.alpha
        return InnerBall(self.center + s * (b.center - self.center), s * b.radius, b.basis,
                         b.method)

    def diameter(self) -> float:
        return (1.0 - self.alpha) * self.base.diameter()

    def __repr__(self) -> str:
        return f"ShrunkPolytope({self.base!r}, alpha={self.alpha:g})"


class SphereSampler:
    """Uniform samples on the unit sphere of a linear subspace.

    ``u = B z / ||z||`` with ``z ~ N(0, I_d)`` and ``B`` an orthonormal ``(n, d)`` basis; by
    rotation invariance of the Gaussian, ``u`` is uniform on the unit sphere of ``span(B)``
    (seed 003 notes, Section 5.3). ``dim = d`` is the ``n`` of the one-point estimator
    ``(d / zeta) f(x + zeta u) u``.

    Parameters
    ----------
    basis : array-like, shape (n, d)
        Orthonormal columns (checked to 1e-8), ``d >= 1``; e.g. :func:`direction_basis`.

    Attributes
    ----------
    identity : bool
        ``basis`` is the identity (a full-dimensional polytope): samples skip the product with
        it, which would return the same vectors.

    Examples
    --------
    >>> import numpy as np
    >>> s = SphereSampler(np.eye(3))
    >>> round(float(np.linalg.norm(s.sample(rng=0))), 12)
    1.0
    """

    def __init__(self, basis: object):
        B = check_finite(basis, "basis", caller="SphereSampler", ndim=2, dtype=float)
        if B.shape[1] == 0:
            raise ValidationError(
                "The 'basis' of SphereSampler spans no direction (the polytope is a single "
                "point); there is no sphere to sample."
            )
        if not np.allclose(B.T @ B, np.eye(B.shape[1]), atol=1e-8):
            raise ValidationError(
                "The 'basis' of SphereSampler must have orthonormal columns; orthonormalize it "
                "(numpy.linalg.qr) first."
            )
        self.basis = B
        # A full-dimensional polytope's hull basis is the identity: the product with it is
        # exact, so skipping it gives the same vectors without an (m, n) x (n, n) product.
        self.identity = B.shape[0] == B.shape[1] and np.array_equal(B, np.eye(B.shape[0]))

    @property
    def dim(self) -> int:
        """Dimension ``d`` of the subspace (the sphere is ``S^{d-1}``)."""
        return int(self.basis.shape[1])

    @property
    def ambient_dim(self) -> int:
        return int(self.basis.shape[0])

    def sample(self, size: int | None = None, *, rng: RNGLike = None) -> np.ndarray:
        """``size`` unit vectors (shape ``(size, n)``), or one (shape ``(n,)``) when ``size`` is
        None."""
        gen = as_generator(rng)
        m = 1 if size is None else int(size)
        z = gen.standard_normal((m, self.dim))
        norms = np.linalg.norm(z, axis=1)
        while (norms == 0).any():  # probability zero, but a zero vector has no direction
            bad = norms == 0
            z[bad] = gen.standard_normal((int(bad.sum()), self.dim))
            norms = np.linalg.norm(z, axis=1)
        u = z / norms[:, None]
        if not self.identity:
            u = u @ self.basis.T
        return u[0] if size is None else u


def sphere_sampler(polytope: Polytope) -> SphereSampler:
    """A :class:`SphereSampler` on the direction space of ``polytope``'s affine hull."""
    return SphereSampler(direction_basis(polytope))
