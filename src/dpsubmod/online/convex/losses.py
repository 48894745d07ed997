r"""Convex losses on :math:`\mathbb{R}^n` and streams of them: the input of bandit convex
optimization.

The online layer's :class:`~dpsubmod.online.Stream` carries set functions; bandit convex
optimization over a polytope (Ene, Nguyen and Vladu 2021; Flaxman, Kalai and McMahan 2005;
Garber and Kretzu 2020) needs convex functions of a point instead. This module gives them:

* :class:`ConvexLoss`: a convex function ``f: R^n -> R`` with ``f(x)`` (one point, or a batch of
  points as rows), ``gradient(x)`` (used only by comparators and tests, never by a bandit
  learner) and ``sphere_mean(center, radius, basis)``, the exact expectation of
  ``f(center + radius u)`` for ``u`` uniform on the unit sphere of ``span(basis)`` when it has a
  closed form (a non-private diagnostic that lowers the variance of regret curves).
  Families: :class:`LinearLoss` ``<theta, x> + b``, :class:`QuadraticLoss`
  ``x^T A x / 2 + <b, x> + c`` with ``A`` positive semidefinite, and :class:`CallableLoss`
  (a user function, convexity the caller's responsibility).
* :class:`~dpsubmod.online.convex.loss_streams.ConvexLossStream`
  (:mod:`~dpsubmod.online.convex.loss_streams`): a re-iterable sequence of ``T`` losses on
  ``R^dim`` with optional public declarations ``bound`` (every loss takes values in
  ``[-bound, bound]``, or in ``[0, bound]`` when ``nonnegative``) and ``lipschitz``.
  :class:`LossSequence` wraps a list (the "database" :math:`F = (f_1, \dots, f_T)` of the
  privacy definition) and builds the neighbouring stream with :meth:`LossSequence.replace`.
* Generators: :func:`linear_losses` (a fixed drift plus noise, centred so every loss vanishes at
  a chosen point, which is assumption A4 of Ene, Nguyen and Vladu: ``|f_t| <= L D`` on the
  domain) and :func:`quadratic_losses` (``a/2 ||x - z_t||^2`` with noisy targets).

Bandit feedback is the scalar ``f_t(x_t)`` at the played point and nothing else; an
**oblivious** adversary is assumed (the losses do not react to the learner's exploration),
which is what the regret analyses of all three papers use.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from ..._validation import check_finite, check_int, check_real
from ...errors import GroundSetMismatchError, ParameterTypeError, ValidationError


def _points(x: object, dim: int, caller: str) -> tuple[np.ndarray, bool]:
    """``x`` as a float array of shape ``(m, dim)`` and whether a single point was given."""
    a = check_finite(x, "x", caller=caller, dtype=float)
    if a.ndim == 1:
        if a.shape[0] != dim:
            raise GroundSetMismatchError(
                f"The point 'x' given to {caller} has {a.shape[0]} coordinates; the loss is "
                f"defined on R^{dim}."
            )
        return a[None, :], True
    if a.ndim != 2 or a.shape[1] != dim:
        raise GroundSetMismatchError(
            f"The points 'x' given to {caller} must have shape ({dim},) or (m, {dim}); got "
            f"{a.shape}."
        )
    return a, False


def _check_basis(basis: object, dim: int, caller: str) -> np.ndarray:
    B = check_finite(basis, "basis", caller=caller, ndim=2, dtype=float)
    if B.shape[0] != dim or B.shape[1] < 1:
        raise ValidationError(
            f"The 'basis' of {caller} must have shape ({dim}, d) with d >= 1; got {B.shape}."
        )
    return B


class ConvexLoss(ABC):
    """A convex loss ``f: R^dim -> R``.

    Subclasses implement ``_values(X) -> (m,)`` on a validated ``(m, dim)`` array and may
    implement ``_gradient`` and ``_sphere_mean``. ``evaluations`` counts the points at which
    ``f`` was evaluated through ``__call__`` (the unit of bandit feedback).

    Attributes
    ----------
    dim : int
        Dimension of the domain.
    evaluations : int
    """

    dim: int

    def __init__(self, dim: int):
        self.dim = int(dim)
        self.evaluations = 0

    def __call__(self, x: object) -> float | np.ndarray:
        """``f(x)`` for one point (a float) or for each row of an ``(m, dim)`` array."""
        X, single = _points(x, self.dim, f"{type(self).__name__}.__call__")
        self.evaluations += X.shape[0]
        v = np.asarray(self._values(X), dtype=float)
        return float(v[0]) if single else v

    def value(self, x: np.ndarray) -> float:
        """``f(x)`` for a trusted float vector of shape ``(dim,)`` (no validation, counted)."""
        self.evaluations += 1
        return float(self._values(x[None, :])[0])

    @abstractmethod
    def _values(self, X: np.ndarray) -> np.ndarray:
        """Values at the rows of a validated ``(m, dim)`` float array."""

    def gradient(self, x: object) -> np.ndarray:
        """A (sub)gradient at ``x`` (shape ``(dim,)``). Full information: comparators and tests
        use it; a bandit learner never does."""
        X, _ = _points(x, self.dim, f"{type(self).__name__}.gradient")
        if X.shape[0] != 1:
            raise ValidationError("gradient() takes one point of shape (dim,).")
        return self._gradient(X[0])

    def _gradient(self, x: np.ndarray) -> np.ndarray:
        raise NotImplementedError(
            f"{type(self).__name__} has no gradient; pass grad= to CallableLoss, or give the "
            "comparator explicitly."
        )

    def sphere_mean(self, center: object, radius: float, basis: object) -> float | None:
        """``E f(center + radius u)`` for ``u`` uniform on the unit sphere of ``span(basis)``
        (``basis``: orthonormal columns), exactly, or ``None`` without a closed form.

        Not counted in ``evaluations``: it is a diagnostic that reads the whole loss.
        """
        c = check_finite(center, "center", caller="sphere_mean", ndim=1, dtype=float)
        if c.shape[0] != self.dim:
            raise GroundSetMismatchError(
                f"The 'center' of sphere_mean has {c.shape[0]} coordinates; the loss is "
                f"defined on R^{self.dim}."
            )
        r = check_real(radius, "radius", low=0.0, caller="sphere_mean")
        B = _check_basis(basis, self.dim, "sphere_mean")
        return self._sphere_mean(c, r, B)

    def _sphere_mean(self, c: np.ndarray, r: float, B: np.ndarray) -> float | None:
        return None

    def __repr__(self) -> str:
        return f"{type(self).__name__}(dim={self.dim})"


class LinearLoss(ConvexLoss):
    r"""The linear (affine) loss :math:`f(x) = \langle\theta, x\rangle + b`.

    Its smoothed version equals itself, so the one-point estimator is unbiased for ``theta``
    (projected on the sampling subspace) and the best fixed point in hindsight of a sum of
    linear losses is one call of the polytope's linear-optimization oracle.

    Parameters
    ----------
    theta : array-like of float, shape (dim,)
    offset : float, default=0.0
        The constant ``b``.

    Examples
    --------
    >>> f = LinearLoss([1.0, -2.0], offset=0.5)
    >>> f([1.0, 1.0])
    -0.5
    """

    def __init__(self, theta: object, offset: float = 0.0):
        th = check_finite(theta, "theta", caller="LinearLoss", ndim=1, dtype=float)
        if th.size == 0:
            raise ValidationError("The 'theta' of LinearLoss must have at least one coordinate.")
        super().__init__(th.size)
        self.theta = th.copy()
        self.theta.setflags(write=False)
        self.offset = check_real(offset, "offset", caller="LinearLoss")

    def _values(self, X: np.ndarray) -> np.ndarray:
        return X @ self.theta + self.offset

    def value(self, x: np.ndarray) -> float:
        self.evaluations += 1
        return float(x @ self.theta) + self.offset

    def _gradient(self, x: np.ndarray) -> np.ndarray:
        return self.theta.copy()

    def _sphere_mean(self, c: np.ndarray, r: float, B: np.ndarray) -> float:
        return float(c @ self.theta) + self.offset  # E u = 0

    def __repr__(self) -> str:
        return f"LinearLoss(dim={self.dim}, |theta|={float(np.linalg.norm(self.theta)):.4g})"


class QuadraticLoss(ConvexLoss):
    r"""The convex quadratic :math:`f(x) = \tfrac12 x^\top A x + \langle b, x\rangle + c`.

    ``A`` must be symmetric positive semidefinite (checked to a relative ``1e-10`` on its
    eigenvalues). Its ball-smoothed version differs from ``f`` by a constant, so the one-point
    estimator is unbiased for :math:`P_V(Ax + b)`, the gradient projected on the sampling
    subspace ``V``; the sphere mean is
    :math:`f(c) + \tfrac{r^2}{2d}\operatorname{tr}(B^\top A B)` (``E uu^T = BB^T/d``).

    Parameters
    ----------
    A : array-like of float, shape (dim, dim)
    b : array-like of float, shape (dim,), optional
        Zero when omitted.
    c : float, default=0.0

    Examples
    --------
    >>> import numpy as np
    >>> f = QuadraticLoss.isotropic([1.0, 0.0], curvature=2.0)   # ||x - (1, 0)||^2
    >>> f([0.0, 0.0]), f.gradient([0.0, 0.0]).tolist()
    (1.0, [-2.0, 0.0])
    """

    def __init__(self, A: object, b: object = None, c: float = 0.0):
        Am = check_finite(A, "A", caller="QuadraticLoss", ndim=2, dtype=float)
        if Am.shape[0] != Am.shape[1] or Am.shape[0] == 0:
            raise ValidationError(
                f"The 'A' of QuadraticLoss must be a non-empty square matrix; got {Am.shape}."
            )
        n = Am.shape[0]
        scale = max(1.0, float(np.abs(Am).max()))
        if not np.allclose(Am, Am.T, atol=1e-12 * scale, rtol=0.0):
            raise ValidationError("The 'A' of QuadraticLoss must be symmetric.")
        Am = (Am + Am.T) / 2.0
        lam_min = float(np.linalg.eigvalsh(Am)[0])
        if lam_min < -1e-10 * scale:
            raise ValidationError(
                f"The 'A' of QuadraticLoss must be positive semidefinite (the loss must be "
                f"convex); its smallest eigenvalue is {lam_min:.4g}."
            )
        super().__init__(n)
        if b is None:
            bv = np.zeros(n)
        else:
            bv = check_finite(b, "b", caller="QuadraticLoss", ndim=1, dtype=float)
            if bv.shape != (n,):
                raise GroundSetMismatchError(
                    f"The 'b' of QuadraticLoss must have shape ({n},); got {bv.shape}."
                )
        self.A = Am
        self.b = np.array(bv, dtype=float)
        self.c = check_real(c, "c", caller="QuadraticLoss")
        for arr in (self.A, self.b):
            arr.setflags(write=False)

    @classmethod
    def isotropic(cls, target: object, curvature: float = 1.0, offset: float = 0.0
                  ) -> QuadraticLoss:
        """``curvature / 2 * ||x - target||^2 + offset``."""
        z = check_finite(target, "target", caller="QuadraticLoss.isotropic", ndim=1, dtype=float)
        a = check_real(curvature, "curvature", low=0.0, caller="QuadraticLoss.isotropic")
        return cls(a * np.eye(z.size), -a * z, 0.5 * a * float(z @ z) + float(offset))

    def _values(self, X: np.ndarray) -> np.ndarray:
        return 0.5 * np.einsum("ij,jk,ik->i", X, self.A, X) + X @ self.b + self.c

    def value(self, x: np.ndarray) -> float:
        self.evaluations += 1
        return 0.5 * float(x @ (self.A @ x)) + float(x @ self.b) + self.c

    def _gradient(self, x: np.ndarray) -> np.ndarray:
        return self.A @ x + self.b

    def _sphere_mean(self, c: np.ndarray, r: float, B: np.ndarray) -> float:
        d = B.shape[1]
        base = 0.5 * float(c @ (self.A @ c)) + float(c @ self.b) + self.c
        return base + 0.5 * r * r * float(np.trace(B.T @ self.A @ B)) / d

    def __repr__(self) -> str:
        return f"QuadraticLoss(dim={self.dim})"


class CallableLoss(ConvexLoss):
    """A user function as a loss: ``fn(x) -> float`` on one point of shape ``(dim,)``.

    Convexity is the caller's responsibility (the regret guarantees assume it; privacy does
    not: a private learner clips the observed values to its declared range).

    Parameters
    ----------
    fn : callable
    dim : int
    grad : callable, optional
        ``grad(x) -> ndarray (dim,)``; needed only by a Frank-Wolfe comparator.
    """

    def __init__(self, fn: Callable[[np.ndarray], float], dim: int,
                 grad: Callable[[np.ndarray], Any] | None = None):
        if not callable(fn):
            raise ParameterTypeError("The 'fn' of CallableLoss must be callable fn(x) -> float.")
        if grad is not None and not callable(grad):
            raise ParameterTypeError("The 'grad' of CallableLoss must be callable or None.")
        super().__init__(check_int(dim, "dim", low=1, caller="CallableLoss"))
        self.fn = fn
        self.grad = grad

    def _values(self, X: np.ndarray) -> np.ndarray:
        out = np.array([float(self.fn(row)) for row in X])
        if not np.isfinite(out).all():
            raise ValidationError("The function of CallableLoss returned a non-finite value.")
        return out

    def _gradient(self, x: np.ndarray) -> np.ndarray:
        if self.grad is None:
            return super()._gradient(x)
        g = check_finite(self.grad(x), "grad(x)", caller="CallableLoss", ndim=1, dtype=float)
        if g.shape != (self.dim,):
            raise GroundSetMismatchError(
                f"grad(x) of CallableLoss must have shape ({self.dim},); got {g.shape}."
            )
        return g


class _SumLoss(ConvexLoss):
    """A weighted sum of losses without a closed-form aggregate (comparators only)."""

    def __init__(self, losses: Sequence[ConvexLoss], weights: np.ndarray):
        super().__init__(losses[0].dim)
        self.losses = list(losses)
        self.weights = weights

    def _values(self, X: np.ndarray) -> np.ndarray:
        return sum(w * np.asarray(f._values(X), dtype=float)
                   for f, w in zip(self.losses, self.weights))

    def _gradient(self, x: np.ndarray) -> np.ndarray:
        return sum(w * f._gradient(x) for f, w in zip(self.losses, self.weights))


def sum_losses(losses: Iterable[ConvexLoss]) -> ConvexLoss:
    """The sum of losses as one loss: a :class:`LinearLoss` when all are linear, a
    :class:`QuadraticLoss` when all are linear or quadratic, else a generic sum (repeated
    objects are weighted by their multiplicity, so a stream that reuses losses costs little).
    """
    fs = list(losses)
    if not fs:
        raise ValidationError("sum_losses needs at least one loss.")
    dim = fs[0].dim
    for f in fs:
        if not isinstance(f, ConvexLoss):
            raise ParameterTypeError(
                f"sum_losses takes ConvexLoss objects; got {type(f).__name__}."
            )
        if f.dim != dim:
            raise GroundSetMismatchError(
                f"sum_losses got losses on R^{dim} and on R^{f.dim}; all must share one domain."
            )
    if all(isinstance(f, LinearLoss) for f in fs):
        theta = np.sum([f.theta for f in fs], axis=0)
        return LinearLoss(theta, float(sum(f.offset for f in fs)))
    if all(isinstance(f, (LinearLoss, QuadraticLoss)) for f in fs):
        A = np.zeros((dim, dim))
        b = np.zeros(dim)
        c = 0.0
        for f in fs:
            if isinstance(f, LinearLoss):
                b += f.theta
                c += f.offset
            else:
                A += f.A
                b += f.b
                c += f.c
        return QuadraticLoss(A, b, c)
    counts: dict[int, int] = {}
    first: dict[int, ConvexLoss] = {}
    for f in fs:
        counts[id(f)] = counts.get(id(f), 0) + 1
        first.setdefault(id(f), f)
    keys = list(first)
    return _SumLoss([first[k] for k in keys], np.array([counts[k] for k in keys], dtype=float))
