r"""PrivateBandit: private projection-free bandit convex optimization (Ene, Nguyen and Vladu,
AAAI 2021, Algorithm 1), with the sound readings of the paper's errata.

See :mod:`dpsubmod.online.convex.learner` for the protocol and the geometry shared by the bandit
convex learners (``mode``, the one-point estimator).
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np

from ..._rng import RNGLike, as_generator
from ..._validation import check_delta, check_int, check_real, is_noise_off
from ...errors import ParameterTypeError, ValidationError
from ...polytopes.oracles import Polytope
from ...privacy.gaussian_calibration import gaussian_sigma_analytic
from ...privacy.plan import PrivacyPlan
from ...privacy.tree_aggregator import TreeAggregator
from .._plans import check_backend, learner_backend, run_plan, tree_backend, tree_event
from ..tags import NOISE_BACKENDS, LearnerTags
from .geometry import (
    CALIBRATIONS,
    FW_STEPS,
    NOISES,
    Exploration,
    Geometry,
    SphereStream,
    check_mode,
    clip_zeta,
    exploration_law,
    make_geometry,
    node_scale,
    paper_noise_scale,
    played_point,
    regularized_response,
)
from .learner import BanditConvexLearner


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
    backend : {"numpy", "secure", "opendp"}, NoiseBackend or None, default=None
        Noise backend of the counter (:func:`~dpsubmod.privacy.backends.resolve_backend`):
        ``"secure"`` draws exact discrete node noise on a grid (through OpenDP when it is
        installed); ``"opendp"`` requires OpenDP. Grid backends need ``noise="laplace"`` or
        ``"gaussian"``, and draw no noise from ``rng``.
        ``None`` (the default): ``"secure"`` without ``rng`` (``"numpy"`` for l2-Laplace
        noise), a seeded ``"numpy"`` simulation with one
        (:func:`~dpsubmod.privacy.backends.choose_backend`).

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
    >>> from dpsubmod.online import linear_losses, run_convex
    >>> box = Box(-1.0, 1.0, dim=2)
    >>> losses = linear_losses(2, 400, drift=[1.0, 1.0], rng=0)
    >>> trace = run_convex(PrivateBandit(box, 400, epsilon=math.inf, mode="extend"), losses,
    ...                    rng=1)
    >>> bool(trace.final_expected_regret < 0.5 * 400 * math.sqrt(2))
    True
    """

    _tags = LearnerTags(private=True, feedback="bandit", problem="convex",
                        assumption="oblivious", backends=NOISE_BACKENDS)

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
                 rng: RNGLike = None, budget: Any = None, backend: Any = None):
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
        self.backend = learner_backend(self, backend, rng, type(self).__name__, noise)
        self._resolved = self._resolve()
        self._finish_construction(PrivateBandit)

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
                                         epsilon=float(self.epsilon), delta=p["delta"],
                                         backend=self.backend)],
            neighbouring=self._neighbouring(), backend=self.backend, rng=self.rng))

    def _resolve(self) -> dict[str, Any]:
        caller = "PrivateBandit"
        geo = make_geometry(self.polytope, self.diameter, caller)
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
        check_backend(self.backend, caller, self.noise)
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
        mode = check_mode(self.mode, geo.radius, caller)
        if not isinstance(self.fw_step, str) or self.fw_step not in FW_STEPS:
            raise ValidationError(f"The 'fw_step' parameter of {caller} must be one of "
                                  f"{FW_STEPS}; got {self.fw_step!r}.")
        d, D = geo.dim, geo.diameter
        T_batch = math.isqrt(T - 1) + 1 if self.batch is None else check_int(
            self.batch, "batch", low=1, high=T, caller=caller)
        T_round = -(-T // T_batch)
        eta = D / (T ** 0.75 * math.sqrt(d) * L) if self.eta is None else check_real(
            self.eta, "eta", low=0.0, low_open=True, caller=caller)
        if not math.isfinite(eta):
            raise ValidationError(
                f"The 'lipschitz' parameter of {caller} is {L!r}: the default step "
                "D / (T^(3/4) sqrt(d) lipschitz) overflows. Pass a larger lipschitz (rescale "
                "the losses), or pass eta."
            )
        zeta = D * math.sqrt(d) / T ** 0.25 if self.zeta is None else check_real(
            self.zeta, "zeta", low=0.0, low_open=True, caller=caller)
        zeta = clip_zeta(zeta, geo.radius, mode, caller)
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
        if not math.isfinite(cal_sens):
            name = "lipschitz" if self.bound is None else "bound"
            raise ValidationError(
                f"The '{name}' parameter of {caller} makes the sensitivity of one round's "
                f"gradient estimate overflow to inf; pass a smaller '{name}' (rescale the "
                "losses so that they fit in float range)."
            )
        scale = node_scale(self.noise, levels, cal_sens, self.epsilon, delta) if not off \
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
                budget=self._run_allowance(), **tree_backend(self.backend, noise_rng),
            )
            self._exact = None
        geo: Geometry = p["geometry"]
        self._geo = geo
        self._spheres = SphereStream(geo.basis, dir_rng)
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
        return played_point(self._geo, p["mode"], p["alpha"], self._centre, p["zeta"], u)

    def _exploration(self) -> Exploration:
        p = self._resolved
        return exploration_law(self._geo, p["mode"], p["alpha"], self._centre, p["zeta"])

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
            w = (self._line14_sign * p["eta"]) * self._geo.ambient(self._s_prev)
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
