r"""Differentially private online submodular minimization with bandit feedback (Cardoso and
Cummings 2018, Algorithm 2 "BanditSubmodPFTAL").

The setting, the neighbouring relation and the calibrations are stated in
:mod:`~dpsubmod.online.minimization.pftal_base` (shared with the full-information
:class:`~dpsubmod.online.SubmodPFTAL`); the one-point estimator in
:mod:`~dpsubmod.online.minimization.onepoint`; the regret bound and the tuned ``gamma`` and ``H``
in :mod:`~dpsubmod.online.minimization.bounds`.

The learner keeps Theorem 9's :math:`H = M/(\sqrt n\, T^{1/4})` (read as intended from the
printed :math:`O(M/\sqrt{n T^{1/4}})`) and :math:`\gamma = \min(1, n/T^{1/4})`, clipped with a
warning when the theorem's value exceeds 1 (it needs :math:`T \ge n^4`); the bound minimisers are
available as ``"tuned"`` but did no better (see the class docstring).

References
----------
A. Cardoso and R. Cummings, "Differentially private online submodular optimization", arXiv 2018,
Algorithm 2, Theorems 8 and 9. A. Flaxman, A. Kalai and B. McMahan, SODA 2005 (one-point
gradient estimates). E. Hazan and S. Kale, JMLR 2012 (the chain exploration distribution).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..._guarantee import RegretGuarantee, regret_guarantee
from ..._rng import RNGLike
from ..._validation import is_noise_off
from ...errors import ValidationError
from ...functions.base import SetFunction
from .._checks import check_gamma, resolve_gamma
from ..tags import NOISE_BACKENDS, LearnerTags
from .bounds import COST_UNITS, bandit_pftal_bound, best_bandit_pftal
from .onepoint import (
    chain_order,
    chain_values,
    chain_weights,
    exploration_probabilities,
    one_point_gradient,
    sample_index,
)
from .pftal_base import _SubmodBase


class BanditSubmodPFTAL(_SubmodBase):
    r"""Private online submodular minimization with bandit feedback (Cardoso and Cummings 2018,
    Algorithm 2 "BanditSubmodPFTAL").

    Round ``t``: take the chain of :math:`x_t` (weights :math:`\mu`), draw chain set :math:`B_k`
    with probability :math:`\rho_k = (1-\gamma)\mu_k + \gamma/(n+1)`, play it, observe
    :math:`y = f_t(B_k)` (the only evaluation), build the corrected one-point estimate
    :math:`\hat g_t` (:mod:`dpsubmod.online.minimization.onepoint`; unbiased for the chain
    subgradient, Lemma 4), feed :math:`\hat g_t + H x_t` to the tree counter and move to
    :math:`x_{t+1} = \mathrm{clip}(\bar x_t - \hat v_t/(tH), 0, 1)`.

    Guarantee: ``epsilon``-DP (pure) for the sequence of played sets, neighbours differing in one
    function, when the counter is calibrated to :math:`\Delta = 4M(n+1)/\gamma` (default; the
    values are clipped to :math:`[-M, M]` so this holds for any input). Given the released past
    the law of :math:`(S_t, \xi_t)` depends only on :math:`x_t`, so only the counter touches the
    data. Expected regret :math:`\tilde O(M n^{3/2} T^{3/4}/\varepsilon)` (Theorem 9 with the
    reading of ``H`` in the module docstring; the sound calibration changes the privacy term to
    :math:`\tilde O(M n^{3/2}\sqrt T/\varepsilon)`, inside the claim). Without noise the
    exploration cost :math:`2\gamma M T` and the estimator variance give :math:`O(n M T^{3/4})`.
    The run's explicit bound is :attr:`guarantee`.

    Parameters
    ----------
    n, T, M, epsilon, noise, delta, x1, rng
        As in :class:`SubmodPFTAL` (``x1`` defaults to 0).
    H : float, "paper" or "tuned", optional
        Default (and ``"paper"``): :math:`M/(\sqrt n\, T^{1/4})` (Theorem 9). ``"tuned"``: the
        minimiser of the explicit Theorem 9 bound at the run's ``gamma``
        (:func:`~dpsubmod.online.minimization.bounds.best_bandit_pftal`).
    gamma : float, "paper" or "tuned", optional
        Exploration probability in (0, 1]. Default (and ``"paper"``): :math:`\min(1, n/T^{1/4})`
        (Theorem 9); a value above 1 (including the theorem's when :math:`T < n^4`) is clipped
        to 1 with a warning. ``"tuned"``: the bound minimiser over a grid of (0, 1] (the sound
        sensitivity :math:`4M(n+1)/\gamma` enters the bound). The theorem's values stay the
        default: the explicit bound is vacuous at every ``(gamma, H)`` for the horizons of the
        experiments, and its minimiser (large ``gamma`` and ``H``) did no better than them on
        the karate-club and switching streams (``docs/results.md``).
    calibration : {"sound", "paper"}, default="sound"
        :math:`\Delta = 4M(n+1)/\gamma`, or the paper's :math:`L = 4M + 2H\sqrt n`, which is
        refused (:class:`~dpsubmod.errors.ValidationError` at construction) when it is below
        :math:`\Delta`: the run would then be only
        :math:`\varepsilon \cdot 4M(n+1)/(\gamma L)`-DP.
    sensitivity : float, optional
        Override of :math:`\Delta` (trusted as given).
    clip : bool, default=True
        Clip observed values to :math:`[-M, M]` (no-op on valid inputs).
    budget : Budget or None, default=None
        As in :class:`SubmodPFTAL`.
    backend : {"numpy", "secure", "opendp"}, NoiseBackend or None, default=None
        Noise backend of the counter, as in :class:`SubmodPFTAL`.
        ``None`` (the default): ``"secure"`` without ``rng`` (``"numpy"`` for l2-Laplace
        noise), a seeded ``"numpy"`` simulation with one
        (:func:`~dpsubmod.privacy.backends.choose_backend`).
    """

    _tags = LearnerTags(private=True, feedback="bandit", problem="minimization",
                        assumption="oblivious", backends=NOISE_BACKENDS)

    _caller = "BanditSubmodPFTAL"

    def __init__(self, n: int, T: int, *, M: float, epsilon: float,
                 H: float | str | None = None, gamma: float | str | None = None,
                 calibration: str = "sound",
                 sensitivity: float | None = None, clip: bool = True, x1: object = None,
                 noise: str = "l2laplace", delta: float = 0.0, rng: RNGLike = None,
                 budget: Any = None, backend: Any = None):
        # stored first: _check_own_args checks it between H and calibration, so that the
        # first bad argument in signature order is the one named
        self.gamma = gamma
        super().__init__(n, T, M=M, epsilon=epsilon, H=H, calibration=calibration,
                         sensitivity=sensitivity, clip=clip, x1=x1, noise=noise, delta=delta,
                         rng=rng, budget=budget, backend=backend)
        self._finish_construction(BanditSubmodPFTAL)

    def _check_own_args(self, caller: str, n: int) -> None:
        gamma = self.gamma
        if isinstance(gamma, str):
            if gamma not in ("paper", "tuned"):
                raise ValidationError(
                    f"The 'gamma' parameter of {caller} must be a probability in (0, 1], "
                    f"'paper', 'tuned' or None (Theorem 9's); got {gamma!r}."
                )
        elif gamma is not None:
            check_gamma(gamma, caller, "a mixing")

    def _resolve(self, *, warn: bool = True) -> dict[str, Any]:
        n, T, M = int(self.n), int(self.T), float(self.M)
        off = is_noise_off(self.epsilon)
        eps = math.inf if off else float(self.epsilon)
        if self.gamma == "tuned":
            gamma, _ = best_bandit_pftal(n, T, M, eps, sensitivity=self.sensitivity)
        elif self.gamma is None or self.gamma == "paper":
            gamma = resolve_gamma(None, n / T ** 0.25, "BanditSubmodPFTAL",
                                  "n / T^(1/4) (Theorem 9)", warn=warn)
        else:
            gamma = resolve_gamma(float(self.gamma), 0.0, "BanditSubmodPFTAL", "", warn=warn)
        if self.H == "tuned":
            _, H = best_bandit_pftal(n, T, M, eps, gamma=gamma, sensitivity=self.sensitivity)
        elif self.H is None or self.H == "paper":
            H = M / (math.sqrt(n) * T ** 0.25)
        else:
            H = float(self.H)
        lipschitz = 4.0 * M + 2.0 * H * math.sqrt(n)
        sound = 4.0 * M * (n + 1) / gamma
        if self.sensitivity is not None:
            cal = float(self.sensitivity)
            needed = cal
        else:
            cal = lipschitz if self.calibration == "paper" else sound
            needed = sound
        eps_eff = math.inf if off else float(self.epsilon) * max(1.0, needed / cal)
        return {
            "n": n, "T": T, "M": M, "H": H, "gamma": gamma, "lipschitz": lipschitz,
            "calibration": self.calibration if self.sensitivity is None else "user",
            "calibrated_sensitivity": cal, "sensitivity_needed": needed, "noise_off": off,
            "epsilon": float(self.epsilon), "epsilon_effective": eps_eff,
        }

    def _guarantee(self) -> RegretGuarantee:
        """Theorem 9's explicit bound at the run's ``gamma``, ``H`` and calibration."""
        p = self.resolved_params
        n, T, M = p["n"], p["T"], p["M"]
        bound = bandit_pftal_bound(n, T, M, p["H"], p["gamma"], p["calibrated_sensitivity"],
                                   math.inf if p["noise_off"] else p["epsilon"])
        return regret_guarantee(bound, 2.0 * M * T, units=COST_UNITS.format(M=M),
                                theorem="Cardoso and Cummings (2018), Theorem 9 (explicit "
                                        "reading: Lemmas 6, 7, 9, 10 and 11)")

    def _select(self) -> np.ndarray:
        x = self._oco.point()
        self._x = x
        order = chain_order(x)
        rho = exploration_probabilities(chain_weights(x, order), self._params["gamma"])
        u, v = self._play_rng.random(2)  # both drawn every round: one stream position per round
        k = sample_index(rho, float(u))
        self._draw = (order, rho, k, 1 if v < 0.5 else -1)
        mask = np.zeros(x.size, dtype=bool)
        mask[order[:k]] = True
        return mask

    def _update(self, y: float) -> None:  # type: ignore[override]
        order, rho, k, xi = self._draw
        if self.clip:
            M = self._params["M"]
            y = min(max(y, -M), M)
        ghat = one_point_gradient(order, rho, k, y, xi)
        self._g_last = ghat
        self._oco.update(ghat + self._params["H"] * self._x)

    def expected_value(self, f: SetFunction) -> float:
        """``sum_k rho_k f(B_k)``: the exact expected cost of the exploration draw
        (non-private diagnostic; uncounted)."""
        self._require_pending("expected_value")
        order, rho, _, _ = self._draw
        return float(rho @ chain_values(f, order, count=False))
