r"""Streams of convex losses: the input of bandit convex optimization.

:class:`ConvexLossStream` is a re-iterable sequence of ``T`` losses on ``R^dim`` with optional
public declarations ``bound`` (every loss takes values in ``[-bound, bound]``, or ``[0, bound]``
when ``nonnegative``) and ``lipschitz``; :class:`LossSequence` wraps a list (the "database"
:math:`F = (f_1, \dots, f_T)` of the privacy definition) and builds the neighbouring stream with
:meth:`LossSequence.replace`; :func:`linear_losses` and :func:`quadratic_losses` generate
synthetic streams (see :mod:`dpsubmod.online.convex.losses` for the losses themselves).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence

import numpy as np

from ..._rng import RNGLike, as_generator
from ..._validation import check_finite, check_int, check_real
from ...errors import GroundSetMismatchError, ParameterTypeError, StreamLengthError, ValidationError
from .losses import ConvexLoss, LinearLoss, QuadraticLoss


class ConvexLossStream(ABC):
    """A finite, re-iterable sequence of ``T`` convex losses on ``R^dim``.

    Attributes
    ----------
    dim, T : int
    bound : float or None
        Public declaration: every loss takes values in ``[-bound, bound]`` (``[0, bound]`` when
        ``nonnegative``) on the region a learner queries. A private learner is given its own
        ``bound`` and clips to it; this one is informational.
    nonnegative : bool
    lipschitz : float or None
        Public declaration of an l2 Lipschitz constant of every loss on that region.
    """

    dim: int
    T: int
    bound: float | None = None
    nonnegative: bool = False
    lipschitz: float | None = None
    rng: RNGLike = None

    @abstractmethod
    def _generate(self, gen: np.random.Generator) -> Iterator[ConvexLoss]:
        """Yield the ``T`` losses (no validation)."""

    def iterate(self, *, rng: RNGLike = None) -> Iterator[ConvexLoss]:
        """Iterate over the losses, checking each one's type and dimension.

        Parameters
        ----------
        rng : int, Generator, SeedSequence or None, default=None
            Overrides the stream's own ``rng`` for this pass (ignored by fixed sequences).

        Raises
        ------
        ParameterTypeError, GroundSetMismatchError, StreamLengthError
        """
        gen = as_generator(self.rng if rng is None else rng)
        count = 0
        for f in self._generate(gen):
            if not isinstance(f, ConvexLoss):
                raise ParameterTypeError(
                    f"Round {count + 1} of the stream is a {type(f).__name__}, not a ConvexLoss."
                )
            if f.dim != self.dim:
                raise GroundSetMismatchError(
                    f"Round {count + 1} of the stream is a loss on R^{f.dim}; the stream "
                    f"declares R^{self.dim}."
                )
            count += 1
            if count > self.T:
                raise StreamLengthError(
                    f"The stream declares T={self.T} rounds but yields more losses."
                )
            yield f
        if count != self.T:
            raise StreamLengthError(
                f"The stream declares T={self.T} rounds but yielded {count} losses."
            )

    def losses(self, *, rng: RNGLike = None) -> list[ConvexLoss]:
        """All ``T`` losses as a list."""
        return list(self.iterate(rng=rng))

    def __iter__(self) -> Iterator[ConvexLoss]:
        return self.iterate()

    def __len__(self) -> int:
        return int(self.T)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(dim={self.dim}, T={self.T}, bound={self.bound})"


class LossSequence(ConvexLossStream):
    """A fixed sequence of losses (the database ``F = (f_1, ..., f_T)``).

    Parameters
    ----------
    losses : sequence of ConvexLoss
        Non-empty, all on the same ``R^dim``.
    bound : float, optional
        Declared range (see :class:`ConvexLossStream`).
    nonnegative : bool, default=False
    lipschitz : float, optional

    Examples
    --------
    >>> s = LossSequence([LinearLoss([1.0, 0.0]), LinearLoss([0.0, 1.0])], bound=1.0)
    >>> s.replace(0, LinearLoss([-1.0, 0.0])).losses()[0].theta.tolist()
    [-1.0, 0.0]
    """

    def __init__(self, losses: Sequence[ConvexLoss], *, bound: float | None = None,
                 nonnegative: bool = False, lipschitz: float | None = None):
        fs = list(losses)
        if not fs:
            raise ValidationError("LossSequence needs at least one loss.")
        for i, f in enumerate(fs):
            if not isinstance(f, ConvexLoss):
                raise ParameterTypeError(
                    f"Item {i} of LossSequence is a {type(f).__name__}, not a ConvexLoss."
                )
            if f.dim != fs[0].dim:
                raise GroundSetMismatchError(
                    f"Item {i} of LossSequence is on R^{f.dim}; item 0 is on R^{fs[0].dim}."
                )
        self._losses = fs
        self.dim = fs[0].dim
        self.T = len(fs)
        self.bound = None if bound is None else check_real(
            bound, "bound", low=0.0, low_open=True, caller="LossSequence")
        self.nonnegative = bool(nonnegative)
        self.lipschitz = None if lipschitz is None else check_real(
            lipschitz, "lipschitz", low=0.0, caller="LossSequence")

    def _generate(self, gen: np.random.Generator) -> Iterator[ConvexLoss]:
        yield from self._losses

    def __getitem__(self, t: int) -> ConvexLoss:
        return self._losses[t]

    def replace(self, t: int, loss: ConvexLoss) -> LossSequence:
        """The neighbouring sequence with round ``t`` (0-based) replaced by ``loss``."""
        t = check_int(t, "t", low=0, high=self.T - 1, caller="LossSequence.replace")
        if not isinstance(loss, ConvexLoss) or loss.dim != self.dim:
            raise ParameterTypeError(
                f"LossSequence.replace needs a ConvexLoss on R^{self.dim}."
            )
        fs = list(self._losses)
        fs[t] = loss
        return LossSequence(fs, bound=self.bound, nonnegative=self.nonnegative,
                            lipschitz=self.lipschitz)


def as_loss_stream(obj: object) -> ConvexLossStream:
    """A :class:`ConvexLossStream` from a stream or a sequence of losses."""
    if isinstance(obj, ConvexLossStream):
        return obj
    if isinstance(obj, (list, tuple)):
        return LossSequence(obj)
    raise ParameterTypeError(
        f"Expected a ConvexLossStream or a list of ConvexLoss; got {type(obj).__name__}."
    )


def _unit(v: np.ndarray) -> np.ndarray:
    nrm = float(np.linalg.norm(v))
    return v / nrm if nrm > 0 else v


def linear_losses(dim: int, T: int, *, drift: object = None, noise: float = 0.5,
                  lipschitz: float = 1.0, center: object = None, rng: RNGLike = None
                  ) -> LossSequence:
    r"""Linear losses :math:`f_t(x) = \langle\theta_t, x - c\rangle` with a fixed drift plus
    Gaussian noise.

    :math:`\theta_t = L\,v_t/\max(1, \|v_t\|)` with :math:`v_t = \mu + \nu g_t/\sqrt{d}`,
    :math:`\mu` the unit ``drift`` direction, :math:`g_t \sim N(0, I)`, :math:`\nu` = ``noise``
    and ``L`` = ``lipschitz`` (so every loss is ``L``-Lipschitz in l2). Every loss vanishes at
    ``c``, which
    is assumption A4 of Ene, Nguyen and Vladu (2021): with ``c`` in a domain of diameter ``D``,
    ``|f_t| <= lipschitz * D`` on the domain and ``<= lipschitz * (D + zeta)`` within ``zeta`` of
    it. The best fixed point in hindsight is a vertex minimizing
    :math:`\langle\sum_t\theta_t, x\rangle`.

    Parameters
    ----------
    dim, T : int
    drift : array-like of float, shape (dim,), optional
        Direction of the mean (normalised); a random unit vector from ``rng`` when omitted.
    noise : float, default=0.5
        Noise level ``nu >= 0``.
    lipschitz : float, default=1.0
        Largest l2 norm of a ``theta_t``.
    center : array-like of float, shape (dim,), optional
        The common zero ``c`` (the origin when omitted).
    rng : int, Generator, SeedSequence or None, default=None

    Returns
    -------
    LossSequence
        With ``lipschitz`` declared and ``bound`` left to the caller (it depends on the domain).
    """
    caller = "linear_losses"
    dim = check_int(dim, "dim", low=1, caller=caller)
    T = check_int(T, "T", low=1, caller=caller)
    nu = check_real(noise, "noise", low=0.0, caller=caller)
    L = check_real(lipschitz, "lipschitz", low=0.0, low_open=True, caller=caller)
    c = np.zeros(dim) if center is None else check_finite(center, "center", caller=caller,
                                                           ndim=1, dtype=float)
    if c.shape != (dim,):
        raise GroundSetMismatchError(f"The 'center' of {caller} must have shape ({dim},).")
    gen = as_generator(rng)
    if drift is None:
        mu = _unit(gen.standard_normal(dim))
    else:
        mu = check_finite(drift, "drift", caller=caller, ndim=1, dtype=float)
        if mu.shape != (dim,):
            raise GroundSetMismatchError(f"The 'drift' of {caller} must have shape ({dim},).")
        mu = _unit(mu)
    theta = mu[None, :] + nu * gen.standard_normal((T, dim)) / math.sqrt(dim)
    theta *= L / np.maximum(1.0, np.linalg.norm(theta, axis=1))[:, None]
    offsets = -(theta @ c)
    fs = [LinearLoss(theta[t], float(offsets[t])) for t in range(T)]
    return LossSequence(fs, lipschitz=L)


def quadratic_losses(dim: int, T: int, *, target: object = None, noise: float = 0.5,
                     curvature: float = 1.0, rng: RNGLike = None) -> LossSequence:
    r"""Isotropic quadratic losses :math:`f_t(x) = \tfrac a2\|x - z_t\|^2` with noisy targets.

    :math:`z_t = z + \nu g_t/\sqrt d`, :math:`g_t \sim N(0, I)`. The losses are nonnegative and
    ``a``-strongly convex; on a set of diameter ``D`` containing the targets they are
    ``a D``-Lipschitz and bounded by ``a D^2 / 2``.

    Parameters
    ----------
    dim, T : int
    target : array-like of float, shape (dim,), optional
        Mean target ``z`` (the origin when omitted).
    noise : float, default=0.5
    curvature : float, default=1.0
        ``a > 0``.
    rng : int, Generator, SeedSequence or None, default=None
    """
    caller = "quadratic_losses"
    dim = check_int(dim, "dim", low=1, caller=caller)
    T = check_int(T, "T", low=1, caller=caller)
    nu = check_real(noise, "noise", low=0.0, caller=caller)
    a = check_real(curvature, "curvature", low=0.0, low_open=True, caller=caller)
    z = np.zeros(dim) if target is None else check_finite(target, "target", caller=caller,
                                                           ndim=1, dtype=float)
    if z.shape != (dim,):
        raise GroundSetMismatchError(f"The 'target' of {caller} must have shape ({dim},).")
    gen = as_generator(rng)
    zs = z[None, :] + nu * gen.standard_normal((T, dim)) / math.sqrt(dim)
    fs = [QuadraticLoss.isotropic(zs[t], a) for t in range(T)]
    return LossSequence(fs, nonnegative=True)
