r"""The geometry the bandit convex learners share: the one-point estimator, the regularized
response, the paper's noise scale, the relative inner ball of the polytope, and where the played
points go (``mode``; see :mod:`dpsubmod.online.convex.learner`).

References
----------
A. Ene, H. L. Nguyen and A. Vladu, "Projection-free bandit optimization with privacy
guarantees", AAAI 2021, Algorithm 1, Lemmas 2.2, 5.1, 5.4, App. D. A. D. Flaxman, A. T. Kalai
and H. B. McMahan, SODA 2005, Lemma 1.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

from ..._rng import RNGLike, as_generator
from ..._validation import check_finite, check_int, check_real
from ...errors import GroundSetMismatchError, ParameterTypeError, ValidationError
from ...polytopes.interior import SphereSampler, inner_ball
from ...polytopes.oracles import Polytope
from ...privacy.gaussian_calibration import gaussian_sigma_analytic
from .losses import ConvexLoss

#: Where queries may go (see the module docstring).
MODES = ("shrink", "extend")
#: Tree-aggregation node noise: name -> the norm its sensitivity is measured in.
NOISES = {"laplace": "l1", "l2laplace": "l2", "gaussian": "l2"}
#: ``"sensitivity"``: one-loss sensitivity (default); ``"paper"``: the larger of Lemma 5.1/5.4's
#: scale and the sensitivity scale.
CALIBRATIONS = ("sensitivity", "paper")
#: Frank-Wolfe step rules of the inner loop.
FW_STEPS = ("linesearch", "2/(k+2)")


def one_point_estimates(loss: ConvexLoss, x: object, zeta: float, *, basis: object = None,
                        size: int = 1, rng: RNGLike = None) -> np.ndarray:
    r"""Draws of the one-point gradient estimator :math:`(d/\zeta)\,f(x + \zeta u)\,u`.

    ``u`` is uniform on the unit sphere of ``span(basis)`` (``d`` = its dimension; all of
    ``R^n`` when ``basis`` is omitted). By Stokes' theorem (Flaxman, Kalai and McMahan 2005,
    Lemma 1; Ene, Nguyen and Vladu 2021, Lemma 2.2) the mean is the gradient of the smoothed
    loss :math:`\hat f(x) = \mathbb{E}_{v}\, f(x + \zeta v)`, ``v`` uniform in the unit ball of
    the subspace, projected on it. For a linear loss :math:`\hat f = f`; for a quadratic,
    :math:`\hat f - f` is constant, so the mean is :math:`P_V \nabla f(x)` in both cases.

    Parameters
    ----------
    loss : ConvexLoss
    x : array-like of float, shape (n,)
    zeta : float
        Smoothing radius ``> 0``.
    basis : array-like, shape (n, d), optional
        Orthonormal columns spanning the sampling subspace.
    size : int, default=1
    rng : int, Generator, SeedSequence or None, default=None

    Returns
    -------
    ndarray, shape (size, n)
    """
    caller = "one_point_estimates"
    if not isinstance(loss, ConvexLoss):
        raise ParameterTypeError(f"The 'loss' of {caller} must be a ConvexLoss.")
    xa = check_finite(x, "x", caller=caller, ndim=1, dtype=float)
    if xa.shape != (loss.dim,):
        raise GroundSetMismatchError(f"The point 'x' of {caller} must have shape ({loss.dim},).")
    z = check_real(zeta, "zeta", low=0.0, low_open=True, caller=caller)
    m = check_int(size, "size", low=1, caller=caller)
    sampler = SphereSampler(np.eye(loss.dim) if basis is None else basis)
    if sampler.ambient_dim != loss.dim:
        raise GroundSetMismatchError(f"The 'basis' of {caller} must have {loss.dim} rows.")
    gen = as_generator(rng)
    u = sampler.sample(m, rng=gen)
    vals = np.asarray(loss(xa[None, :] + z * u), dtype=float)  # counts the m evaluations
    return (sampler.dim / z) * vals[:, None] * u


def regularized_response(polytope: Polytope, w: np.ndarray, center: np.ndarray,
                         start: np.ndarray, steps: int, step: str = "linesearch"
                         ) -> tuple[np.ndarray, float, int]:
    r"""Frank-Wolfe on :math:`q(x) = \tfrac12\|x - c\|^2 + \langle w, x\rangle` over ``K``.

    The regularized response of Algorithm 1, line 14 of Ene, Nguyen and Vladu (2021), with the
    sign of the linear term corrected (erratum E1: ``+ <eta s, x>``, so the minimizer is
    :math:`\Pi_K(c - w)`, a step *against* the accumulated gradients) and the regularizer
    centred at a point ``c`` of ``K`` (note N3). Each iteration makes one call of
    ``polytope.linear_min`` at :math:`\nabla q(x) = x - c + w`; the iterate is a convex
    combination of points of ``K``, so it stays in ``K``. With exact line search (``q`` has
    Hessian ``I``: :math:`\gamma = \mathrm{gap}/\|v - x\|^2` clipped to ``[0, 1]``) or
    :math:`\gamma = 2/(k+2)`, ``k`` iterations give :math:`q - q^* \le 2D^2/(k+2)` and
    :math:`\|x - x^*\| \le 2D/\sqrt{k+2}` (Lemma C.4 states ``10 D^2 / k``). Stops early only when
    the Frank-Wolfe gap is ``<= 0`` (the iterate is then optimal).

    Parameters
    ----------
    polytope : Polytope
    w, center, start : ndarray, shape (n,)
        Trusted float vectors; ``start`` must lie in ``K`` (warm start).
    steps : int
        Iterations (= linear-oracle calls at most).
    step : {"linesearch", "2/(k+2)"}, default="linesearch"

    Returns
    -------
    x : ndarray
        The last iterate.
    gap : float
        The Frank-Wolfe duality gap :math:`\max_{v \in K}\langle\nabla q(x'), x' - v\rangle
        \ge q(x') - q^*` at the iterate ``x'`` before the last step (``inf`` when no iteration
        ran). Line search never increases ``q``, so then it also bounds ``q(x) - q^*`` and
        :math:`\|x - x^*\| \le \sqrt{2\,gap}` (``q`` is 1-strongly convex); the ``2/(k+2)``
        rule gives no such certificate for the last iterate.
    calls : int
        Linear-oracle calls made.
    """
    x = np.array(start, dtype=float)
    gap = math.inf
    calls = 0
    shift = w - center
    for k in range(int(steps)):
        g = x + shift
        v = polytope.linear_min(g)
        calls += 1
        d = v - x
        gap = float(-(g @ d))
        if gap <= 0.0:
            gap = 0.0
            break
        if step == "linesearch":
            dd = float(d @ d)
            gamma = 1.0 if dd <= 0.0 else min(1.0, gap / dd)
        else:
            gamma = 2.0 / (k + 2.0)
        x += gamma * d
    return x, gap, calls


def paper_noise_scale(noise: str, *, T: int, dim: int, lipschitz: float, epsilon: float,
                      delta: float = 0.0) -> float:
    r"""The per-coordinate noise scale printed by Ene, Nguyen and Vladu (2021).

    Laplace (Lemma 5.1): :math:`\lambda = T^{1/2}\, n L \log_2 T/\varepsilon`. Gaussian
    (Lemma 5.4): :math:`\sigma = \frac{T^{1/4} n^{1/2} L \log_2 T \ln(T/\delta)}{\varepsilon}
    \bigl(\ln\frac{n+T}{\delta} + \sqrt{(1 + T^{1/2}/n)\ln\frac{n+T}{\delta}}\bigr)`.

    Their proofs drop a factor :math:`T^{1/4}` (erratum E5), so these scales are **not** a
    privacy guarantee on their own; :class:`PrivateBandit` uses them only as
    ``max(paper, sensitivity-calibrated)`` (``calibration="paper"``). ``n`` here is the
    dimension ``d`` of the sampling subspace; ``log T`` is read as ``log2`` (the tree depth) and
    the logarithms of the delta terms as natural ones (seed 003 notes, Section 2.6).
    """
    caller = "paper_noise_scale"
    T = check_int(T, "T", low=1, caller=caller)
    dim = check_int(dim, "dim", low=1, caller=caller)
    lipschitz = check_real(lipschitz, "lipschitz", low=0.0, low_open=True, caller=caller)
    epsilon = check_real(epsilon, "epsilon", low=0.0, low_open=True, caller=caller)
    if noise == "gaussian":
        delta = check_real(delta, "delta", low=0.0, high=1.0, low_open=True, high_open=True,
                           caller=caller)
    lg = math.log2(T) if T > 1 else 0.0
    if noise == "laplace":
        return math.sqrt(T) * dim * lipschitz * lg / epsilon
    if noise == "gaussian":
        ln_nt = math.log((dim + T) / delta)
        return (T ** 0.25 * math.sqrt(dim) * lipschitz * lg * math.log(T / delta) / epsilon
                * (ln_nt + math.sqrt((1.0 + math.sqrt(T) / dim) * ln_nt)))
    raise ValidationError(
        f"The paper gives noise scales for 'laplace' and 'gaussian' only; got {noise!r}."
    )


def node_scale(noise: str, levels: int, sensitivity: float, epsilon: float, delta: float
                ) -> float:
    """The node-noise scale :class:`~dpsubmod.privacy.TreeAggregator` draws with the numpy
    backend (Laplace ``b``, l2-Laplace ``s``, analytic-Gaussian ``sigma``)."""
    if noise == "gaussian":
        return gaussian_sigma_analytic(epsilon, delta, math.sqrt(levels) * sensitivity)
    return levels * sensitivity / epsilon


@dataclass(frozen=True)
class Exploration:
    """The law of this round's played point: ``center + radius * u``, ``u`` uniform on the unit
    sphere of ``span(basis)`` (a non-private diagnostic; see
    :meth:`BanditConvexLearner.exploration`)."""

    center: np.ndarray
    radius: float
    basis: np.ndarray


@dataclass(frozen=True)
class Geometry:
    basis: np.ndarray      # (n, d) orthonormal directions of the affine hull
    center: np.ndarray     # c: centre of the certified ball, a point of K
    radius: float          # r
    diameter: float        # D
    dim: int               # d
    identity: bool = False  # basis is the identity (a full-dimensional polytope)

    def ambient(self, z: np.ndarray) -> np.ndarray:
        """``basis @ z``: hull coordinates to the ambient space (``z`` itself, the same
        numbers, when the basis is the identity)."""
        return z if self.identity else self.basis @ z


def make_geometry(polytope: object, diameter: object, caller: str) -> Geometry:
    if not isinstance(polytope, Polytope):
        raise ParameterTypeError(
            f"The 'polytope' parameter of {caller} must be a dpsubmod Polytope; got "
            f"{type(polytope).__name__}. Build one with dpsubmod.polytopes.as_polytope(...)."
        )
    ball = inner_ball(polytope)
    if ball.dim == 0:
        raise ValidationError(
            f"The polytope given to {caller} is a single point (its affine hull has dimension "
            "0): there is nothing to learn."
        )
    if diameter is None:
        try:
            D = float(polytope.diameter())
        except NotImplementedError:
            raise ValidationError(
                f"{type(polytope).__name__} has no diameter bound; pass 'diameter' to {caller}."
            ) from None
    else:
        D = check_real(diameter, "diameter", low=0.0, low_open=True, caller=caller)
    B = ball.basis
    identity = B.shape[0] == B.shape[1] and np.array_equal(B, np.eye(B.shape[0]))
    return Geometry(B, ball.center, float(ball.radius), D, ball.dim, identity)


def check_mode(mode: object, radius: float, caller: str) -> str:
    if not isinstance(mode, str) or mode not in MODES:
        raise ValidationError(f"The 'mode' parameter of {caller} must be one of {MODES}; "
                              f"got {mode!r}.")
    if mode == "shrink" and not radius > 0.0:
        raise ValidationError(
            f"{caller}(mode='shrink') needs a ball of positive radius inside the polytope; the "
            "certified radius is 0. Use mode='extend' for losses defined beyond the polytope."
        )
    return mode


def clip_zeta(zeta: float, radius: float, mode: str, caller: str) -> float:
    """Feasibility of the shrinkage needs ``zeta <= r``; clip to ``r / 2`` with a warning."""
    if mode == "shrink" and zeta > radius:
        warnings.warn(
            f"{caller}: the smoothing radius zeta = {zeta:.4g} exceeds the inner radius "
            f"r = {radius:.4g} of the polytope, so shrinkage cannot keep the played points "
            f"feasible; zeta is clipped to r/2 = {radius / 2:.4g}. This leaves the regime of the "
            "regret bound (it needs T >= d^2 (D/r)^4); use mode='extend' when the losses are "
            "defined beyond the polytope.",
            UserWarning, stacklevel=4,
        )
        return radius / 2.0
    return zeta


class SphereStream:
    """Unit vectors of the sampling subspace, drawn a block at a time (coefficients ``z`` in
    the hull basis, and ``u = B z``)."""

    def __init__(self, basis: np.ndarray, gen: np.random.Generator):
        self._sampler = SphereSampler(basis)
        self._basis = basis
        self._gen = gen
        self._u = np.zeros((0, basis.shape[0]))
        self._i = 0

    def next(self, block: int) -> tuple[np.ndarray, np.ndarray]:
        if self._i >= self._u.shape[0]:
            self._u = self._sampler.sample(max(1, block), rng=self._gen)
            # hull coordinates; the same vectors when the hull basis is the identity
            self._z = self._u if self._sampler.identity else self._u @ self._basis
            self._i = 0
        i = self._i
        self._i += 1
        return self._z[i], self._u[i]


def played_point(geo: Geometry, mode: str, alpha: float, centre: np.ndarray, zeta: float,
            u: np.ndarray) -> np.ndarray:
    if mode == "extend":
        return centre + zeta * u
    return geo.center + (1.0 - alpha) * (centre - geo.center + zeta * u)


def exploration_law(geo: Geometry, mode: str, alpha: float, centre: np.ndarray, zeta: float
         ) -> Exploration:
    if mode == "extend":
        return Exploration(centre.copy(), zeta, geo.basis)
    s = 1.0 - alpha
    return Exploration(geo.center + s * (centre - geo.center), s * zeta, geo.basis)
