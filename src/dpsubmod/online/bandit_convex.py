r"""Projection-free bandit convex optimization over polytopes, private and not.

The learners play points of a polytope ``K`` (reached through its linear-optimization oracle)
against convex losses :math:`f_t` (:mod:`dpsubmod.online.convex_losses`) and see only the
scalar :math:`f_t(x_t)` at the played point (bandit feedback). Each round a learner commits with
:meth:`BanditConvexLearner.select` (a point) and is told the loss value with
:meth:`BanditConvexLearner.update`; :func:`dpsubmod.online.convex_harness.run_convex` plays a
learner against a loss stream and measures its regret.

* :class:`PrivateBandit`: Algorithm 1 of Ene, Nguyen and Vladu (AAAI 2021), ``epsilon``-DP
  (Laplace or l2-Laplace tree noise) or ``(epsilon, delta)``-DP (Gaussian) with the sound
  readings of the paper's errata; with ``epsilon=math.inf`` it is the non-private version of
  the same algorithm (**not private**).
* :class:`GarberKretzu`: blocked bandit gradient descent with Frank-Wolfe "infeasible
  projections", a reconstruction of Garber and Kretzu (AISTATS 2020) (**not private**).
* :class:`FlaxmanKalaiMcMahan`: projected bandit gradient descent (Flaxman, Kalai and McMahan,
  SODA 2005) on a box or a simplex, where the Euclidean projection is cheap (**not private**).

Geometry shared by all three
----------------------------
The one-point estimator :math:`\hat g = (d/\zeta) f(x + \zeta u)\,u`, ``u`` uniform on the unit
sphere of the direction space ``V`` of ``K``'s affine hull (``d = dim V``), is unbiased for the
gradient of the ball-smoothed loss :math:`\hat f(x) = \mathbb{E}_{v \in B_V} f(x + \zeta v)`
(Flaxman et al., Lemma 1; Ene et al., Lemma 2.2), projected on ``V``. For a lower-dimensional
``K`` (base polytopes lie in ``x(V) = f(V)``) smoothing inside the hull keeps queries in it and
``d`` replaces the ambient ``n`` everywhere (the paper treats full-dimensional ``K`` only).

``mode`` chooses where queries may go:

* ``"shrink"`` (default, Ene et al. App. D, assumption A5'): with a certified relative ball
  ``B(c, r)`` in ``K`` (:func:`dpsubmod.polytopes.inner_ball`) and ``alpha = zeta / r <= 1``,
  the learner runs on :math:`f'_t(x) = f_t(c + (1-\alpha)(x - c))` and plays
  :math:`y_t = c + (1-\alpha)(\tilde x + \zeta u_t - c)`, a convex combination of
  :math:`\tilde x`, :math:`c + r u_t` and ``c``, hence **always in K**. Cost: at most
  :math:`L \zeta D / r` extra loss per round. When ``zeta > r`` (small ``T`` or a thin ``K``)
  ``zeta`` is clipped to ``r / 2`` with a warning, which keeps feasibility but leaves the
  paper's regime (``zeta <= r`` needs ``T >= d^2 (D / r)^4``).
* ``"extend"`` (the paper's main text, assumption A5): the losses are defined beyond ``K``
  (linear and quadratic losses are), the centres stay in ``K`` and the played points
  :math:`\tilde x + \zeta u_t` may leave it by ``zeta`` (inside the affine hull).

References
----------
A. Ene, H. L. Nguyen and A. Vladu, "Projection-free bandit optimization with privacy
guarantees", AAAI 2021, Algorithm 1, Lemmas 2.2, 3.1, 5.1, 5.4, App. D.
D. Garber and B. Kretzu, "Improved regret bounds for projection-free bandit convex
optimization", AISTATS 2020.
A. D. Flaxman, A. T. Kalai and H. B. McMahan, "Online convex optimization in the bandit setting:
gradient descent without a gradient", SODA 2005.
"""

from __future__ import annotations

import math
import warnings
from abc import abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from .._rng import RNGLike, as_generator
from .._validation import check_delta, check_finite, check_int, check_real, is_noise_off
from ..errors import GroundSetMismatchError, ParameterTypeError, ValidationError
from ..polytopes.interior import SphereSampler, inner_ball
from ..polytopes.oracles import Box, Polytope, Simplex
from ..privacy.calibration import gaussian_sigma_analytic
from ..privacy.continual import TreeAggregator
from ..privacy.plan import PrivacyPlan
from ._plans import run_plan, tree_event
from .convex_losses import ConvexLoss
from .protocol import _Rounds

__all__ = [
    "BanditConvexLearner",
    "Exploration",
    "PrivateBandit",
    "GarberKretzu",
    "FlaxmanKalaiMcMahan",
    "one_point_estimates",
    "regularized_response",
    "paper_noise_scale",
    "MODES",
    "NOISES",
    "CALIBRATIONS",
]

#: Where queries may go (see the module docstring).
MODES = ("shrink", "extend")
#: Tree-aggregation node noise: name -> the norm its sensitivity is measured in.
NOISES = {"laplace": "l1", "l2laplace": "l2", "gaussian": "l2"}
#: ``"sensitivity"``: one-loss sensitivity (default); ``"paper"``: the larger of Lemma 5.1/5.4's
#: scale and the sensitivity scale.
CALIBRATIONS = ("sensitivity", "paper")
#: Frank-Wolfe step rules of the inner loop.
FW_STEPS = ("linesearch", "2/(k+2)")


# ------------------------------------------------------------------------------------------------
# Building blocks
# ------------------------------------------------------------------------------------------------
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
    vals = np.asarray(loss._values(xa[None, :] + z * u), dtype=float)
    loss.evaluations += m
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


def _node_scale(noise: str, levels: int, sensitivity: float, epsilon: float, delta: float
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
class _Geometry:
    basis: np.ndarray      # (n, d) orthonormal directions of the affine hull
    center: np.ndarray     # c: centre of the certified ball, a point of K
    radius: float          # r
    diameter: float        # D
    dim: int               # d


def _geometry(polytope: object, diameter: object, caller: str) -> _Geometry:
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
    return _Geometry(ball.basis, ball.center, float(ball.radius), D, ball.dim)


def _check_mode(mode: object, radius: float, caller: str) -> str:
    if not isinstance(mode, str) or mode not in MODES:
        raise ValidationError(f"The 'mode' parameter of {caller} must be one of {MODES}; "
                              f"got {mode!r}.")
    if mode == "shrink" and not radius > 0.0:
        raise ValidationError(
            f"{caller}(mode='shrink') needs a ball of positive radius inside the polytope; the "
            "certified radius is 0. Use mode='extend' for losses defined beyond the polytope."
        )
    return mode


def _clip_zeta(zeta: float, radius: float, mode: str, caller: str) -> float:
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


class _SphereStream:
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
            self._z = self._u @ self._basis
            self._i = 0
        i = self._i
        self._i += 1
        return self._z[i], self._u[i]


# ------------------------------------------------------------------------------------------------
# The protocol
# ------------------------------------------------------------------------------------------------
class BanditConvexLearner(_Rounds):
    """Base class of bandit convex learners over a polytope (loss minimization).

    The protocol of :class:`~dpsubmod.online.Learner` with points instead of sets: each round
    :meth:`select` returns the point to play (a float array of shape ``(n,)``), then
    :meth:`update` takes the finite loss value at that point. The base class enforces it
    (alternation, at most ``T`` rounds, finite feedback), checked before any state changes.
    Parameters are public and untouched; all state is private and built by ``_reset()`` on the
    first :meth:`select` or an explicit :meth:`reset`; :meth:`clone` builds a fresh learner
    (``clone(rng=seed)`` for an independent replica).

    Subclasses store ``polytope``, ``T`` and ``rng`` among their parameters and implement
    ``_reset`` (calling ``super()._reset()`` first), ``_select() -> point``, ``_update(value)``
    and ``_exploration()``.
    """

    feedback: ClassVar[str] = "bandit"
    sense: ClassVar[str] = "min"
    _feedback_hint: ClassVar[str] = "update(value) with the loss at the played point"

    @property
    def dim(self) -> int:
        """Ambient dimension ``n`` of the played points."""
        return int(self.polytope.dim)  # type: ignore[attr-defined]

    def select(self) -> np.ndarray:
        """This round's point (before the loss is revealed).

        Raises
        ------
        ValidationError
            ``select`` called twice without ``update``.
        StreamLengthError
            All ``T`` rounds were played.
        """
        self._open_round()
        x = np.asarray(self._select(), dtype=float)
        self._pending = True
        self._last = x
        return x.copy()

    def update(self, value: float) -> None:
        """The loss ``f_t(x_t)`` at the point returned by the last :meth:`select`.

        Raises
        ------
        ValidationError
            No pending selection, or a non-finite value.
        ParameterTypeError
            The value is not a real number (bandit feedback is a scalar, never the function).
        """
        self._check_pending()
        name = type(self).__name__
        if isinstance(value, ConvexLoss):
            raise ParameterTypeError(
                f"{name} is a bandit learner: update() takes the float value f_t(x_t), not the "
                "loss function."
            )
        v = check_real(value, "value", caller=f"{name}.update")
        self._update(v)
        self._close_round()

    def exploration(self) -> Exploration | None:
        """The law of the point of the current round, between :meth:`select` and
        :meth:`update`: ``center + radius * u`` with ``u`` uniform on the unit sphere of
        ``span(basis)``.

        A **non-private diagnostic** for experiments: the harness combines it with the round's
        loss (:meth:`~dpsubmod.online.convex_losses.ConvexLoss.sphere_mean`) into the expected
        loss over the learner's own draw, which has the same mean as the observed loss and a
        smaller variance. ``None`` when unavailable.
        """
        self._ensure_state()
        if not self._pending:
            return None
        return self._exploration()

    def _exploration(self) -> Exploration | None:
        return None

    @abstractmethod
    def _select(self) -> np.ndarray: ...

    @abstractmethod
    def _update(self, value: float) -> None: ...

    @property
    def epsilon_spent(self) -> float:
        """The epsilon of the whole run's guarantee (:attr:`privacy`), ``inf`` for a learner
        without guarantee."""
        rep = self.privacy
        return math.inf if rep is None else float(rep.epsilon)

    @property
    def resolved_params(self) -> dict[str, Any]:
        """Every parameter after defaults were resolved (to reproduce a run)."""
        return {k: v for k, v in self._resolved.items()  # type: ignore[attr-defined]
                if k != "geometry"}


def _played(geo: _Geometry, mode: str, alpha: float, centre: np.ndarray, zeta: float,
            u: np.ndarray) -> np.ndarray:
    if mode == "extend":
        return centre + zeta * u
    return geo.center + (1.0 - alpha) * (centre - geo.center + zeta * u)


def _law(geo: _Geometry, mode: str, alpha: float, centre: np.ndarray, zeta: float
         ) -> Exploration:
    if mode == "extend":
        return Exploration(centre.copy(), zeta, geo.basis)
    s = 1.0 - alpha
    return Exploration(geo.center + s * (centre - geo.center), s * zeta, geo.basis)


# ------------------------------------------------------------------------------------------------
# PrivateBandit
# ------------------------------------------------------------------------------------------------
class PrivateBandit(BanditConvexLearner):
    r"""Private projection-free bandit convex optimization: PrivateBandit, Algorithm 1 of Ene,
    Nguyen and Vladu (AAAI 2021), with the sound readings of its errata.

    The ``T`` rounds are cut into ``T_round`` batches of ``T_batch`` rounds. In batch ``R`` the
    learner plays ``T_batch`` points around one centre :math:`\tilde x_{R-1}` (see the module
    docstring for ``mode``), observes :math:`f_t` there, and sums the one-point estimates
    :math:`\tilde g_R = \sum_t (d/\zeta)\,\mathrm{clip}(f_t(x_t))\,u_t`. Batch sums enter a
    tree-aggregation counter (:class:`~dpsubmod.privacy.TreeAggregator`, binary mechanism),
    which releases noisy prefix sums :math:`\tilde s_R`. The next centre is the regularized
    response :math:`\tilde x_R \approx \Pi_K(c - \eta \tilde s_{R-1})`, computed by ``T_batch``
    Frank-Wolfe iterations (:func:`regularized_response`; one linear-oracle call per bandit
    round), one batch stale as in the paper. Centres and played points are post-processing of
    the released prefix sums and of the data-independent directions ``u``.

    Guarantee
        ``epsilon``-DP (``noise="laplace"`` or ``"l2laplace"``) or ``(epsilon, delta)``-DP
        (``noise="gaussian"``, analytic Gaussian calibration) for the whole sequence of played
        points: one tree-aggregation event, stated by :attr:`privacy` from construction on and
        charged to ``budget`` at construction, before anything is released.
        With ``epsilon=math.inf`` the noise is off and the learner is **not private**
        (:attr:`privacy` is ``None``): the non-private PrivateBandit, the paper's
        simplification of Garber and Kretzu.
    Neighbouring relation
        Loss sequences of length ``T`` that differ in one loss :math:`f_t` (event level).
    Sensitivity
        Conditioned on the data-independent directions, replacing :math:`f_{t_0}` changes only
        the batch sum containing it, by :math:`(d/\zeta)\,(f_{t_0} - f'_{t_0})(x_{t_0})\,u_{t_0}`.
        Observed values are clipped to ``[-B, B]`` (``[0, B]`` with ``nonnegative=True``), so the
        range is :math:`\rho = 2B` (or ``B``) **whatever the losses do**, and the sensitivity is
        :math:`\Delta_2 = \rho d/\zeta` in l2 and :math:`\Delta_1 = \sqrt d\,\Delta_2` in l1 (the
        counter works in coordinates of the hull basis, where :math:`\|z\|_1 \le \sqrt d`). The
        counter calibrates its node noise to it (Laplace scale ``levels * Delta_1 / epsilon``,
        ``levels = floor(log2 T_round) + 1``). This is the note's one-loss calibration; the
        paper's Lemma 5.1 bounds a whole batch's norm instead and drops a factor ``T^{1/4}``
        (erratum E5), yet gives about 10 times more noise in the paper's worked example.
    Regret
        :math:`O(T^{3/4} d^{1/2} L D + T^{1/4} D \mu \log T)` in expectation against an
        oblivious adversary (Lemma 3.1), :math:`\mu` the mean norm of one node's noise; plus
        :math:`T L \zeta D / r` in ``"shrink"`` mode (App. D).

    Parameters
    ----------
    polytope : Polytope
        The feasible set ``K`` (reached through ``linear_min`` only, plus its inner ball and
        affine hull from :mod:`dpsubmod.polytopes`).
    T : int
        Horizon (known in advance).
    epsilon : float
        Privacy budget of the run (``> 0``), or ``math.inf`` for the non-private algorithm.
    delta : float, default=0.0
        ``noise="gaussian"`` only, in ``(0, 1)``.
    noise : {"laplace", "l2laplace", "gaussian"}, default="laplace"
        Node noise: coordinate-wise Laplace (the paper's ``epsilon``-DP choice), the l2
        ("high-dimensional") Laplace, or coordinate-wise Gaussian (the paper's
        ``(epsilon, delta)`` choice).
    calibration : {"sensitivity", "paper"}, default="sensitivity"
        ``"sensitivity"``: noise from the one-loss sensitivity above. ``"paper"``: the larger of
        that and the scale printed in Lemma 5.1 (Laplace) or Lemma 5.4 (Gaussian), see
        :func:`paper_noise_scale`; it is private because it never adds less noise than the
        sensitivity rule. Not defined for ``"l2laplace"``.
    lipschitz : float, default=1.0
        ``L``: an l2 Lipschitz constant of the losses (sets ``eta`` and the default ``bound``).
    bound : float, optional
        ``B``: the declared range of the observed losses, to which they are clipped. Default
        ``L D`` in ``"shrink"`` mode and ``L (D + zeta)`` in ``"extend"`` mode (assumption A4:
        every loss vanishes somewhere in ``K``; erratum E13). Clipping changes a loss only if
        the declaration is wrong; privacy holds either way.
    nonnegative : bool, default=False
        The losses take values in ``[0, B]`` (halves the sensitivity).
    diameter : float, optional
        ``D``; ``polytope.diameter()`` when omitted.
    mode : {"shrink", "extend"}, default="shrink"
    eta, zeta : float, optional
        Step size and smoothing radius; default :math:`\eta = D/(T^{3/4} d^{1/2} L)` and
        :math:`\zeta = D d^{1/2}/T^{1/4}` (Algorithm 1, line 1, with ``d`` for ``n``).
    batch : int, optional
        ``T_batch``; default :math:`\lceil\sqrt T\rceil` (then ``T_round = ceil(T / T_batch)``;
        the last batch may be short).
    fw_steps : int, optional
        Frank-Wolfe iterations per batch; default ``T_batch`` (erratum E9).
    fw_step : {"linesearch", "2/(k+2)"}, default="linesearch"
    rng : int, numpy.random.Generator, numpy.random.SeedSequence or None, default=None
        Resolved at each reset; the directions and the tree noise come from two child streams
        spawned from it.
    budget : Budget or None, default=None
        Charged the whole run's guarantee at construction, before anything is released
        (:class:`~dpsubmod.errors.BudgetExceededError` when it does not fit; then nothing
        changes), again by :meth:`reset` after play and by every clone (each a new release).
        Not allowed with ``epsilon=math.inf``. :func:`~dpsubmod.online.run_convex` plays a
        budgeted learner itself instead of a clone.

    Attributes
    ----------
    noise_off : bool
    resolved_params : dict
        ``T_batch``, ``T_round``, ``eta``, ``zeta``, ``alpha`` (shrinkage), ``bound``, ``range``,
        ``sensitivity`` (in the noise's norm), ``calibrated_sensitivity`` (after the paper rule),
        ``paper_scale``, ``noise_scale`` (one tree node's), ``levels``, ``dim`` (``d``),
        ``diameter``, ``radius``, ``lipschitz``.

    Examples
    --------
    >>> import math
    >>> from dpsubmod.polytopes import Box
    >>> from dpsubmod.online.convex_losses import linear_losses
    >>> from dpsubmod.online.convex_harness import run_convex
    >>> box = Box(-1.0, 1.0, dim=2)
    >>> losses = linear_losses(2, 400, drift=[1.0, 1.0], rng=0)
    >>> trace = run_convex(PrivateBandit(box, 400, epsilon=math.inf, mode="extend"), losses,
    ...                    rng=1)
    >>> bool(trace.final_expected_regret < 0.5 * 400 * math.sqrt(2))
    True
    """

    #: Sign of the linear term of Algorithm 1, line 14 in the minimized objective
    #: ``1/2 ||x - c||^2 + sign * <eta s, x>``: +1 is the sound reading (erratum E1); the paper
    #: prints -1, which moves toward higher loss.
    _line14_sign: ClassVar[float] = 1.0
    #: Multiplier of the calibrated sensitivity (1: calibrated). Tests set it below 1 to build a
    #: deliberately mis-calibrated variant that the auditor must catch.
    _sensitivity_factor: ClassVar[float] = 1.0

    def __init__(self, polytope: Polytope, T: int, *, epsilon: float, delta: float = 0.0,
                 noise: str = "laplace", calibration: str = "sensitivity",
                 lipschitz: float = 1.0, bound: float | None = None, nonnegative: bool = False,
                 diameter: float | None = None, mode: str = "shrink", eta: float | None = None,
                 zeta: float | None = None, batch: int | None = None,
                 fw_steps: int | None = None, fw_step: str = "linesearch",
                 rng: RNGLike = None, budget: Any = None):
        self.polytope = polytope
        self.T = T
        self.epsilon = epsilon
        self.delta = delta
        self.noise = noise
        self.calibration = calibration
        self.lipschitz = lipschitz
        self.bound = bound
        self.nonnegative = nonnegative
        self.diameter = diameter
        self.mode = mode
        self.eta = eta
        self.zeta = zeta
        self.batch = batch
        self.fw_steps = fw_steps
        self.fw_step = fw_step
        self.rng = rng
        self.budget = budget
        self._resolved = self._resolve()

    @property
    def noise_off(self) -> bool:
        """Whether the noise is off (``epsilon=inf``): the run is then **not private**."""
        return is_noise_off(self.epsilon)

    def _neighbouring(self) -> str:
        p = self._resolved
        lo = 0.0 if p["nonnegative"] else -p["bound"]
        return ("loss sequences differing in one loss f_t (event level); observed losses "
                f"clipped to [{lo:g}, {p['bound']:g}]")

    def _privacy_plan(self) -> PrivacyPlan | None:
        """The counter's one tree-aggregation event; ``None`` with the noise off."""
        if self.noise_off:
            return None
        p = self._resolved
        return self._memo_plan(lambda: run_plan(
            "PrivateBandit", [tree_event(p["T_round"], p["dim"], noise=self.noise,
                                         sensitivity=p["calibrated_sensitivity"],
                                         epsilon=float(self.epsilon), delta=p["delta"])],
            neighbouring=self._neighbouring(), rng=self.rng))

    def _resolve(self) -> dict[str, Any]:
        caller = "PrivateBandit"
        geo = _geometry(self.polytope, self.diameter, caller)
        T = check_int(self.T, "T", low=1, caller=caller)
        off = self.noise_off
        if not off:
            check_real(self.epsilon, "epsilon", low=0.0, low_open=True, caller=caller,
                       fix="Pass a positive privacy budget such as epsilon=1.0, or "
                           "epsilon=math.inf for the non-private algorithm.")
        if not isinstance(self.noise, str) or self.noise not in NOISES:
            raise ValidationError(f"The 'noise' parameter of {caller} must be one of "
                                  f"{sorted(NOISES)}; got {self.noise!r}.")
        if not isinstance(self.calibration, str) or self.calibration not in CALIBRATIONS:
            raise ValidationError(f"The 'calibration' parameter of {caller} must be one of "
                                  f"{CALIBRATIONS}; got {self.calibration!r}.")
        if self.calibration == "paper" and self.noise == "l2laplace":
            raise ValidationError(
                f"{caller}(calibration='paper') is defined for noise='laplace' (Lemma 5.1) and "
                "noise='gaussian' (Lemma 5.4) only; use calibration='sensitivity' with "
                "l2-Laplace noise."
            )
        delta = check_delta(self.delta, caller=caller)
        if not off and self.noise == "gaussian" and delta == 0.0:
            raise ValidationError(
                f"{caller}(noise='gaussian') gives (epsilon, delta)-DP and needs delta > 0; pass "
                "delta (e.g. 1e-6) or use noise='laplace' for pure DP."
            )
        if not off and self.noise != "gaussian" and delta != 0.0:
            raise ValidationError(
                f"The 'delta' parameter of {caller} must be 0 with noise={self.noise!r} (pure "
                "DP); use noise='gaussian' for (epsilon, delta)-DP."
            )
        L = check_real(self.lipschitz, "lipschitz", low=0.0, low_open=True, caller=caller)
        if not isinstance(self.nonnegative, bool):
            raise ParameterTypeError(f"The 'nonnegative' parameter of {caller} must be a bool.")
        mode = _check_mode(self.mode, geo.radius, caller)
        if not isinstance(self.fw_step, str) or self.fw_step not in FW_STEPS:
            raise ValidationError(f"The 'fw_step' parameter of {caller} must be one of "
                                  f"{FW_STEPS}; got {self.fw_step!r}.")
        d, D = geo.dim, geo.diameter
        T_batch = math.isqrt(T - 1) + 1 if self.batch is None else check_int(
            self.batch, "batch", low=1, high=T, caller=caller)
        T_round = -(-T // T_batch)
        eta = D / (T ** 0.75 * math.sqrt(d) * L) if self.eta is None else check_real(
            self.eta, "eta", low=0.0, low_open=True, caller=caller)
        zeta = D * math.sqrt(d) / T ** 0.25 if self.zeta is None else check_real(
            self.zeta, "zeta", low=0.0, low_open=True, caller=caller)
        zeta = _clip_zeta(zeta, geo.radius, mode, caller)
        alpha = zeta / geo.radius if mode == "shrink" else 0.0
        if self.bound is None:
            B = L * D if mode == "shrink" else L * (D + zeta)
        else:
            B = check_real(self.bound, "bound", low=0.0, low_open=True, caller=caller)
        rho = B if self.nonnegative else 2.0 * B
        fw_steps = T_batch if self.fw_steps is None else check_int(
            self.fw_steps, "fw_steps", low=0, caller=caller)
        levels = T_round.bit_length()
        delta2 = rho * d / zeta
        norm = NOISES[self.noise]
        sens = delta2 * (math.sqrt(d) if norm == "l1" else 1.0)
        cal_sens = sens
        paper_scale = None
        if not off:
            eps = float(self.epsilon)
            if self.calibration == "paper":
                paper_scale = paper_noise_scale(self.noise, T=T, dim=d, lipschitz=L,
                                                epsilon=eps, delta=delta)
                if self.noise == "laplace":
                    cal_sens = max(sens, paper_scale * eps / levels)
                else:
                    sigma = gaussian_sigma_analytic(eps, delta, math.sqrt(levels) * sens)
                    cal_sens = sens * max(1.0, paper_scale / sigma)
            cal_sens *= float(self._sensitivity_factor)
        scale = _node_scale(self.noise, levels, cal_sens, self.epsilon, delta) if not off \
            else 0.0
        return {
            "T": T, "T_batch": T_batch, "T_round": T_round, "eta": eta, "zeta": zeta,
            "alpha": alpha, "mode": mode, "bound": B, "range": rho,
            "nonnegative": self.nonnegative, "lipschitz": L, "diameter": D, "radius": geo.radius,
            "dim": d, "ambient_dim": int(self.polytope.dim), "fw_steps": fw_steps,
            "fw_step": self.fw_step, "noise": self.noise, "noise_off": off,
            "epsilon": float(self.epsilon), "delta": delta, "calibration": self.calibration,
            "norm": norm, "sensitivity": sens, "calibrated_sensitivity": cal_sens,
            "paper_scale": paper_scale, "noise_scale": scale, "levels": levels,
            "paper_binding": bool(not off and self.calibration == "paper"
                                  and cal_sens > sens * float(self._sensitivity_factor)),
            "line14_sign": self._line14_sign,
            "geometry": geo,
        }

    # -- state --------------------------------------------------------------------------------
    def _reset(self) -> None:
        super()._reset()
        p = self._resolved
        gen = as_generator(self.rng)
        dir_rng, noise_rng = gen.spawn(2)
        if p["noise_off"]:
            self._tree = None
            self._exact = np.zeros(p["dim"])
        else:
            self._tree = TreeAggregator(
                p["T_round"], p["dim"], noise=self.noise, sensitivity=p["calibrated_sensitivity"],
                epsilon=float(self.epsilon),
                delta=p["delta"] if self.noise == "gaussian" else 0.0,
                rng=noise_rng, budget=self._run_allowance(),
            )
            self._exact = None
        geo: _Geometry = p["geometry"]
        self._geo = geo
        self._spheres = _SphereStream(geo.basis, dir_rng)
        self._centre = geo.center.copy()          # x~_0 = c (erratum E8)
        self._s_prev = np.zeros(p["dim"])         # s~_{R-1}, in hull coordinates
        self._g = np.zeros(p["dim"])
        self._R = 1
        self._in_batch = 0
        self._z = np.zeros(p["dim"])
        self._lo = -p["bound"] if not p["nonnegative"] else 0.0
        self._hi = p["bound"]
        self._scale = p["dim"] / p["zeta"]
        self._sums: list[np.ndarray] = []
        self._centres: list[np.ndarray] = [self._centre.copy()]
        self._fw_gaps: list[float] = []
        self._lo_calls = 0

    def _batch_length(self) -> int:
        p = self._resolved
        return min(p["T_batch"], p["T"] - (self._R - 1) * p["T_batch"])

    def _select(self) -> np.ndarray:
        p = self._resolved
        self._z, u = self._spheres.next(self._batch_length())
        return _played(self._geo, p["mode"], p["alpha"], self._centre, p["zeta"], u)

    def _exploration(self) -> Exploration:
        p = self._resolved
        return _law(self._geo, p["mode"], p["alpha"], self._centre, p["zeta"])

    def _update(self, value: float) -> None:
        # Clipping enforces the declared range, hence the sensitivity, for any loss.
        y = min(max(value, self._lo), self._hi)
        self._g += (self._scale * y) * self._z
        self._in_batch += 1
        if self._in_batch == self._batch_length():
            self._end_batch()

    def _end_batch(self) -> None:
        p = self._resolved
        if self._R < p["T_round"]:
            # x~_R from s~_{R-1}: one batch stale, as in Algorithm 1 (note N1). Only released
            # sums enter here (note N4), so the centre is post-processing.
            w = (self._line14_sign * p["eta"]) * (self._geo.basis @ self._s_prev)
            x, gap, calls = regularized_response(self.polytope, w, self._geo.center,
                                                 self._centre, p["fw_steps"], p["fw_step"])
            self._fw_gaps.append(gap)
            self._lo_calls += calls
        else:
            x = self._centre
        if self._tree is None:
            self._exact += self._g
            s = self._exact.copy()
        else:
            self._tree.update(self._g)
            s = self._tree.prefix()
        self._sums.append(s)
        self._s_prev = s
        self._centre = x
        self._centres.append(x.copy())
        self._g = np.zeros(p["dim"])
        self._R += 1
        self._in_batch = 0

    # -- diagnostics (all post-processing of released values) ---------------------------------
    @property
    def noisy_sums(self) -> np.ndarray:
        """The released prefix sums :math:`\\tilde s_1, \\tilde s_2, \\dots` so far, in
        coordinates of the hull basis, shape ``(batches done, d)`` (exact sums with noise off)."""
        self._ensure_state()
        return np.array(self._sums).reshape(len(self._sums), self._resolved["dim"])

    @property
    def centres(self) -> np.ndarray:
        """The centres :math:`\\tilde x_0, \\tilde x_1, \\dots` computed so far, shape
        ``(batches done + 1, n)``."""
        self._ensure_state()
        return np.array(self._centres)

    @property
    def fw_gaps(self) -> np.ndarray:
        """The final Frank-Wolfe gap of each regularized response."""
        self._ensure_state()
        return np.array(self._fw_gaps)

    @property
    def noise_scale(self) -> float:
        """Scale of one tree node's noise as drawn (Laplace ``b``, l2-Laplace ``s`` or Gaussian
        ``sigma``; 0 with the noise off)."""
        self._ensure_state()
        return 0.0 if self._tree is None else float(self._tree.scale)

    @property
    def oracle_calls(self) -> int:
        """Linear-oracle calls made so far (at most one per bandit round)."""
        self._ensure_state()
        return self._lo_calls


# ------------------------------------------------------------------------------------------------
# Non-private baselines
# ------------------------------------------------------------------------------------------------
class GarberKretzu(BanditConvexLearner):
    r"""Projection-free bandit gradient descent in blocks with Frank-Wolfe "infeasible
    projections", after Garber and Kretzu (AISTATS 2020). **Not private.**

    **Reconstructed.** The seed paper (Ene, Nguyen and Vladu 2021) describes this algorithm
    only as the greedy (online gradient descent) counterpart of its own lazy PrivateBandit, with
    "specific stopping conditions" for the inner conditional-gradient routine; the details
    below follow that description and the standard analysis, not Garber and Kretzu's text:

    * blocks of ``K = ceil(sqrt T)`` rounds; in block ``m`` play points around a fixed centre
      :math:`x_m \in K` (same shrinkage/extension as :class:`PrivateBandit`) and sum the
      one-point estimates :math:`g_m`;
    * at the end of the block, :math:`y = x_m - \eta g_m` and :math:`x_{m+1}` is Frank-Wolfe
      on :math:`\tfrac12\|x - y\|^2` warm-started at :math:`x_m`, stopped when the duality gap
      :math:`\max_{v \in K}\langle x - y, x - v\rangle \le \epsilon_{FW}` (or after
      ``fw_max_steps``). The gap rule gives, for every :math:`z \in K`,
      :math:`\|x_{m+1} - z\|^2 = \|y - z\|^2 - \|x_{m+1} - y\|^2 + 2\langle x_{m+1} - y,
      x_{m+1} - z\rangle \le \|y - z\|^2 + 2\epsilon_{FW}`, so projected-OGD's analysis holds
      with an extra :math:`\epsilon_{FW}/\eta` per block;
    * defaults (derived here, not copied): :math:`\eta = D/(T^{3/4} d^{1/2} L)` and
      :math:`\zeta = D d^{1/2}/T^{1/4}` as in PrivateBandit, and
      :math:`\epsilon_{FW} = D^2/T^{3/4}`, which makes the extra term
      :math:`(T/K)\,\epsilon_{FW}/\eta = D d^{1/2} L T^{1/2}`, below the main term
      (the tolerance ``D^2/sqrt(T)`` that matches the main term's order was about 3 times
      worse in practice on linear losses over a box); the cap of ``4 K`` iterations per block
      keeps the oracle calls ``O(T)``. Expected regret :math:`O(T^{3/4} d^{1/2} L D)`.

    Parameters
    ----------
    polytope : Polytope
    T : int
    lipschitz : float, default=1.0
    diameter : float, optional
    mode : {"shrink", "extend"}, default="shrink"
    eta, zeta : float, optional
    block : int, optional
        Default ``ceil(sqrt T)``.
    fw_tol : float, optional
        :math:`\epsilon_{FW}`; default ``D^2 / T^(3/4)``.
    fw_max_steps : int, optional
        Cap on Frank-Wolfe iterations per block; default ``4 * block``.
    rng : int, Generator, SeedSequence or None, default=None
    """

    def __init__(self, polytope: Polytope, T: int, *, lipschitz: float = 1.0,
                 diameter: float | None = None, mode: str = "shrink", eta: float | None = None,
                 zeta: float | None = None, block: int | None = None,
                 fw_tol: float | None = None, fw_max_steps: int | None = None,
                 rng: RNGLike = None):
        self.polytope = polytope
        self.T = T
        self.lipschitz = lipschitz
        self.diameter = diameter
        self.mode = mode
        self.eta = eta
        self.zeta = zeta
        self.block = block
        self.fw_tol = fw_tol
        self.fw_max_steps = fw_max_steps
        self.rng = rng
        self._resolved = self._resolve()

    def _resolve(self) -> dict[str, Any]:
        caller = "GarberKretzu"
        geo = _geometry(self.polytope, self.diameter, caller)
        T = check_int(self.T, "T", low=1, caller=caller)
        L = check_real(self.lipschitz, "lipschitz", low=0.0, low_open=True, caller=caller)
        mode = _check_mode(self.mode, geo.radius, caller)
        d, D = geo.dim, geo.diameter
        K = math.isqrt(T - 1) + 1 if self.block is None else check_int(
            self.block, "block", low=1, high=T, caller=caller)
        eta = D / (T ** 0.75 * math.sqrt(d) * L) if self.eta is None else check_real(
            self.eta, "eta", low=0.0, low_open=True, caller=caller)
        zeta = D * math.sqrt(d) / T ** 0.25 if self.zeta is None else check_real(
            self.zeta, "zeta", low=0.0, low_open=True, caller=caller)
        zeta = _clip_zeta(zeta, geo.radius, mode, caller)
        tol = D * D / T ** 0.75 if self.fw_tol is None else check_real(
            self.fw_tol, "fw_tol", low=0.0, caller=caller)
        cap = 4 * K if self.fw_max_steps is None else check_int(
            self.fw_max_steps, "fw_max_steps", low=1, caller=caller)
        return {"T": T, "block": K, "eta": eta, "zeta": zeta, "mode": mode,
                "alpha": zeta / geo.radius if mode == "shrink" else 0.0, "fw_tol": tol,
                "fw_max_steps": cap, "lipschitz": L, "diameter": D, "radius": geo.radius,
                "dim": d, "ambient_dim": int(self.polytope.dim), "geometry": geo}

    def _reset(self) -> None:
        super()._reset()
        p = self._resolved
        self._geo = p["geometry"]
        self._spheres = _SphereStream(self._geo.basis, as_generator(self.rng))
        self._centre = self._geo.center.copy()
        self._g = np.zeros(p["dim"])
        self._in_block = 0
        self._m = 0
        self._z = np.zeros(p["dim"])
        self._scale = p["dim"] / p["zeta"]
        self._lo_calls = 0
        self._capped = 0

    def _block_length(self) -> int:
        p = self._resolved
        return min(p["block"], p["T"] - self._m * p["block"])

    def _select(self) -> np.ndarray:
        p = self._resolved
        self._z, u = self._spheres.next(self._block_length())
        return _played(self._geo, p["mode"], p["alpha"], self._centre, p["zeta"], u)

    def _exploration(self) -> Exploration:
        p = self._resolved
        return _law(self._geo, p["mode"], p["alpha"], self._centre, p["zeta"])

    def _update(self, value: float) -> None:
        self._g += (self._scale * value) * self._z
        self._in_block += 1
        if self._in_block == self._block_length():
            p = self._resolved
            y = self._centre - p["eta"] * (self._geo.basis @ self._g)
            x = self._centre.copy()
            steps = 0
            while steps < p["fw_max_steps"]:
                grad = x - y
                v = self.polytope.linear_min(grad)
                steps += 1
                d = v - x
                gap = float(-(grad @ d))
                if gap <= p["fw_tol"]:
                    break
                dd = float(d @ d)
                x += (1.0 if dd <= 0.0 else min(1.0, gap / dd)) * d
            else:
                self._capped += 1
            self._lo_calls += steps
            self._centre = x
            self._g = np.zeros(p["dim"])
            self._in_block = 0
            self._m += 1

    @property
    def oracle_calls(self) -> int:
        """Linear-oracle calls made so far."""
        self._ensure_state()
        return self._lo_calls

    @property
    def capped_blocks(self) -> int:
        """Blocks whose Frank-Wolfe loop stopped at ``fw_max_steps`` before the gap rule."""
        self._ensure_state()
        return self._capped


def _project_box(y: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    return np.minimum(np.maximum(y, lo), hi)


def _project_simplex(y: np.ndarray, total: float) -> np.ndarray:
    """Euclidean projection onto ``{x >= 0, sum x = total}`` (sort-based; Held, Wolfe and
    Crowder 1974)."""
    s = np.sort(y)[::-1]
    css = np.cumsum(s) - total
    k = np.arange(1, y.size + 1)
    rho = int(np.flatnonzero(s - css / k > 0)[-1])
    return np.maximum(y - css[rho] / (rho + 1.0), 0.0)


class FlaxmanKalaiMcMahan(BanditConvexLearner):
    r"""Projected bandit gradient descent, "gradient descent without a gradient" (Flaxman,
    Kalai and McMahan, SODA 2005), on a :class:`~dpsubmod.polytopes.Box` or
    :class:`~dpsubmod.polytopes.Simplex`. **Not private.** A projection-based reference for the
    projection-free learners.

    Each round: play a point around :math:`x_t` (shrinkage or extension as in
    :class:`PrivateBandit`), form :math:`\hat g_t = (d/\zeta) f_t(\cdot)\,u_t` and step
    :math:`x_{t+1} = \Pi_K(x_t - \eta \hat g_t)` with the exact Euclidean projection (a clip
    for a box; the sort-based projection for a simplex).

    Defaults (from projected online gradient descent on the smoothed losses, Zinkevich 2003,
    with :math:`\|\hat g\| \le G = dB/\zeta`; the constants are derived here, not copied):
    :math:`\eta = D/(G\sqrt T)` and :math:`\zeta = \sqrt{D d B / (L (2 + D/r))}\, T^{-1/4}`
    (``2 + D/r`` becomes ``2`` in ``"extend"`` mode), which balance
    :math:`D G \sqrt T + \zeta T L (2 + D/r)` to :math:`O(\sqrt{d B L D (2 + D/r)}\,T^{3/4})`.

    Parameters
    ----------
    polytope : Box or Simplex
    T : int
    lipschitz : float, default=1.0
    bound : float, optional
        ``B``, a bound on ``|f_t|`` used only to set the step size; default ``L D``.
    diameter : float, optional
    mode : {"shrink", "extend"}, default="shrink"
    eta, zeta : float, optional
    rng : int, Generator, SeedSequence or None, default=None
    """

    def __init__(self, polytope: Polytope, T: int, *, lipschitz: float = 1.0,
                 bound: float | None = None, diameter: float | None = None,
                 mode: str = "shrink", eta: float | None = None, zeta: float | None = None,
                 rng: RNGLike = None):
        self.polytope = polytope
        self.T = T
        self.lipschitz = lipschitz
        self.bound = bound
        self.diameter = diameter
        self.mode = mode
        self.eta = eta
        self.zeta = zeta
        self.rng = rng
        self._resolved = self._resolve()

    def _resolve(self) -> dict[str, Any]:
        caller = "FlaxmanKalaiMcMahan"
        if not isinstance(self.polytope, (Box, Simplex)):
            raise ParameterTypeError(
                f"{caller} projects exactly and supports Box and Simplex only; got "
                f"{type(self.polytope).__name__}. Use PrivateBandit(epsilon=math.inf) or "
                "GarberKretzu, which need only the linear oracle."
            )
        geo = _geometry(self.polytope, self.diameter, caller)
        T = check_int(self.T, "T", low=1, caller=caller)
        L = check_real(self.lipschitz, "lipschitz", low=0.0, low_open=True, caller=caller)
        mode = _check_mode(self.mode, geo.radius, caller)
        d, D, r = geo.dim, geo.diameter, geo.radius
        B = L * D if self.bound is None else check_real(self.bound, "bound", low=0.0,
                                                        low_open=True, caller=caller)
        factor = 2.0 + (D / r if mode == "shrink" else 0.0)
        zeta = math.sqrt(D * d * B / (L * factor)) / T ** 0.25 if self.zeta is None else \
            check_real(self.zeta, "zeta", low=0.0, low_open=True, caller=caller)
        zeta = _clip_zeta(zeta, r, mode, caller)
        G = d * B / zeta
        eta = D / (G * math.sqrt(T)) if self.eta is None else check_real(
            self.eta, "eta", low=0.0, low_open=True, caller=caller)
        return {"T": T, "eta": eta, "zeta": zeta, "mode": mode,
                "alpha": zeta / r if mode == "shrink" else 0.0, "bound": B, "lipschitz": L,
                "diameter": D, "radius": r, "dim": d, "ambient_dim": int(self.polytope.dim),
                "geometry": geo}

    def _project(self, y: np.ndarray) -> np.ndarray:
        P = self.polytope
        if isinstance(P, Box):
            return _project_box(y, P.lo, P.hi)
        assert isinstance(P, Simplex)
        if not P.full:
            x = np.maximum(y, 0.0)
            if float(x.sum()) <= P.scale:
                return x
        return _project_simplex(y, P.scale)

    def _reset(self) -> None:
        super()._reset()
        p = self._resolved
        self._geo = p["geometry"]
        self._spheres = _SphereStream(self._geo.basis, as_generator(self.rng))
        self._x = self._geo.center.copy()
        self._u = np.zeros(self._geo.basis.shape[0])
        self._scale = p["dim"] / p["zeta"]

    def _select(self) -> np.ndarray:
        p = self._resolved
        _, self._u = self._spheres.next(1024)
        return _played(self._geo, p["mode"], p["alpha"], self._x, p["zeta"], self._u)

    def _exploration(self) -> Exploration:
        p = self._resolved
        return _law(self._geo, p["mode"], p["alpha"], self._x, p["zeta"])

    def _update(self, value: float) -> None:
        p = self._resolved
        self._x = self._project(self._x - (p["eta"] * self._scale * value) * self._u)
