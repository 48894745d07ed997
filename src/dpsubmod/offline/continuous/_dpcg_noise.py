"""DPCG's noise: the per-step Laplace or Gaussian calibration (Sadeghi and Fazel 2021) and the
noise source of a run, with the choice of the number of steps from the stated bound.

The calibrations and their privacy are described in :mod:`dpsubmod.offline.dpcg`; this module
holds them so that the algorithm's module stays readable.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ... import privacy as mech
from ..._validation import check_delta, check_epsilon, check_int, check_real
from ...errors import ValidationError
from ...privacy._inputs import _div_up, _noise_parameter
from ...privacy.additive import Laplace
from ...privacy.backends import NoiseBackend
from ...privacy.events import PrivacyEvent
from ...privacy.gaussian_mechanism import Gaussian
from ...privacy.split import even_share
from ...privacy.zcdp import rho_for_target as _rho_for_target
from .._common import check_noise_parameter
from ._gradient import built

# The zCDP budget of a target (epsilon, delta) is a root-finding (tens of milliseconds); the
# choice of K and of the calibration asks for the same one once per candidate K.
rho_for_target = functools.lru_cache(maxsize=256)(_rho_for_target)

_NOISES = ("laplace", "gaussian")
_GAUSSIAN_CALIBRATIONS = ("auto", "paper", "analytic", "zcdp")


def _resolve_calibration(calibration: str, epsilon: float, delta: float, steps: int, *,
                         allow_zcdp: bool = True) -> str:
    """``"auto"``: the smaller noise of the exact per-step calibration (``"analytic"``, basic
    composition) and the zCDP split (``"zcdp"``), which depends only on the budget and ``K``
    (both sigmas are proportional to the sensitivity). The paper's classic calibration is never
    picked by ``"auto"``: at the same budget it is always noisier than the exact one."""
    if calibration != "auto":
        return calibration
    analytic = mech.gaussian_sigma_analytic(even_share(epsilon, steps), even_share(delta, steps),
                                            1.0)
    if not allow_zcdp:
        return "analytic"
    rho = even_share(rho_for_target(epsilon, delta), steps)
    if not rho > 0.0:  # a budget too small for a zCDP cost in floating point: not a choice
        return "analytic"
    zcdp = mech.gaussian_sigma_zcdp(rho, 1.0)
    return "zcdp" if zcdp < analytic else "analytic"


# ---------------------------------------------------------------------------------------------
# calibration
# ---------------------------------------------------------------------------------------------
def dpcg_noise_scale(epsilon: float, delta: float = 0.0, *, steps: int, n: int,
                     gradient_sensitivity: float, noise: str = "laplace",
                     gaussian_calibration: str = "auto") -> float:
    r"""Per-coordinate noise scale of DPCG: the Laplace scale or the Gaussian standard deviation.

    Parameters
    ----------
    epsilon, delta : float
        Total budget (``delta > 0`` for Gaussian noise).
    steps : int
        ``K``.
    n : int
        Ground-set size (the gradient's dimension).
    gradient_sensitivity : float
        Per-coordinate gradient sensitivity ``s`` (``2 Delta`` general, ``Delta`` monotone
        records).
    noise : {"laplace", "gaussian"}, default="laplace"
    gaussian_calibration : {"auto", "paper", "analytic", "zcdp"}, default="auto"
        ``"auto"`` is the smaller sigma of ``"analytic"`` and ``"zcdp"``.

    Returns
    -------
    float
        Laplace: :math:`K n s / \epsilon`. Gaussian "paper":
        :math:`\sqrt{2 \ln(1.25 K/\delta)}\, K \sqrt n\, s / \epsilon` (classic, needs
        :math:`\epsilon/K < 1`); "analytic": the exact sigma at :math:`(\epsilon/K, \delta/K)`;
        "zcdp": :math:`\sqrt n s / \sqrt{2 \rho / K}` with :math:`\rho` the largest zCDP budget
        implying :math:`(\epsilon, \delta)`.

    Examples
    --------
    >>> dpcg_noise_scale(1.0, steps=5, n=10, gradient_sensitivity=0.02)  # K n s / epsilon
    1.0000000000000002
    """
    caller = "dpcg_noise_scale"
    epsilon = check_epsilon(epsilon, caller=caller)
    delta = check_delta(delta, caller=caller)
    K = check_int(steps, "steps", low=1, caller=caller)
    n = check_int(n, "n", low=1, caller=caller)
    s = check_real(gradient_sensitivity, "gradient_sensitivity", low=0.0, low_open=True,
                   caller=caller)
    noise, calib = _check_noise(noise, gaussian_calibration, delta, caller)
    return _noise_scale(epsilon, delta, K, n, s, noise, calib, caller)


def _noise_scale(epsilon: float, delta: float, K: int, n: int, s: float, noise: str,
                 calibration: str, caller: str) -> float:
    """:func:`dpcg_noise_scale` of validated arguments."""
    if noise == "laplace":
        # laplace_scale of arguments validated here: n s / (epsilon / K), rounded up
        return _noise_parameter(_div_up(n * s, even_share(epsilon, K)), "Laplace scale", caller)
    l2 = math.sqrt(n) * s
    calib = _resolve_calibration(calibration, epsilon, delta, K)
    if calib == "paper":
        return _paper_sigma(even_share(epsilon, K), even_share(delta, K), l2, caller)
    if calib == "analytic":
        return mech.gaussian_sigma_analytic(even_share(epsilon, K), even_share(delta, K), l2)
    return mech.gaussian_sigma_zcdp(even_share(rho_for_target(epsilon, delta), K), l2)


def _paper_sigma(eps_step: float, delta_step: float, l2: float, caller: str) -> float:
    _check_paper(eps_step, caller)
    return mech.gaussian_sigma_classic(eps_step, delta_step, l2)


def _check_paper(eps_step: float, caller: str) -> None:
    if eps_step >= 1.0:
        raise ValidationError(
            f"The paper's Gaussian calibration in {caller} is the classic Gaussian mechanism, "
            f"proved only for a per-step epsilon < 1; here epsilon / steps = {eps_step:.4g}. "
            "Pass gaussian_calibration='analytic' or 'zcdp', or more steps."
        )


def _check_noise(noise: object, calibration: object, delta: float, caller: str
                 ) -> tuple[str, str]:
    if noise not in _NOISES:
        raise ValidationError(
            f"The 'noise' parameter of {caller} must be one of {list(_NOISES)}; got {noise!r}."
        )
    if calibration not in _GAUSSIAN_CALIBRATIONS:
        raise ValidationError(
            f"The 'gaussian_calibration' parameter of {caller} must be one of "
            f"{list(_GAUSSIAN_CALIBRATIONS)}; got {calibration!r}."
        )
    if noise == "gaussian" and delta == 0.0:
        raise ValidationError(
            f"Gaussian noise in {caller} needs delta > 0; pass delta=1e-6 (say) or "
            "noise='laplace' for pure DP."
        )
    return str(noise), str(calibration)


def _expected_sup_norm(scale: float, n: int, noise: str) -> float:
    """``E ||Y||_inf``: exactly ``lambda H_n`` for Laplace; the bound ``sigma sqrt(2 ln 2n)``
    for Gaussian."""
    if noise == "laplace":
        return scale * float(np.sum(1.0 / np.arange(1, n + 1)))
    return scale * math.sqrt(2.0 * math.log(2.0 * n))


def dpcg_utility_gap(*, scale: float, n: int, radius: float, steps: int, value_bound: float,
                     noise: str = "laplace") -> float:
    r"""Additive term of DPCG's bound: :math:`2 R\,E\|Y\|_\infty + m_F R^2 / (2K)`.

    ``E f(x) >= (1 - 1/e) f(x*) - gap`` (Sadeghi and Fazel 2021, Lemma 1 with Lemma 2's
    :math:`L \le m_F`; :math:`G \le 2R\,E\|Y\|_\infty`). For Laplace noise
    :math:`E\|Y\|_\infty = \lambda H_n`; for Gaussian noise the bound
    :math:`\sigma\sqrt{2\ln(2n)}` is used.
    """
    return (2.0 * radius * _expected_sup_norm(scale, n, noise)
            + value_bound * radius**2 / (2.0 * steps))


def dpcg_default_steps(*, epsilon: float, delta: float = 0.0, n: int, radius: float,
                       gradient_sensitivity: float, value_bound: float, noise: str = "laplace",
                       gaussian_calibration: str = "auto", max_steps: int = 1000) -> int:
    r"""The ``K`` minimizing :func:`dpcg_utility_gap` (seed 002 notes, Section 2.2).

    For Laplace noise the gap is :math:`A/K + BK` with :math:`A = m_F R^2/2` and
    :math:`B = 2 R n s H_n / \epsilon`, minimized near :math:`K^* = \sqrt{m_F R \epsilon /
    (4 n s H_n)}` (the note's :math:`\sqrt{m_F R \epsilon / (8 n \Delta H_n)}` with
    :math:`s = 2\Delta`); here the exact gap is minimized over ``K = 1..max_steps`` for either
    noise. ``value_bound`` (:math:`m_F`) must be a *public* bound on :math:`\max_e F(\{e\})`:
    choosing ``K`` from the private objective would leak.
    """
    caller = "dpcg_default_steps"
    epsilon = check_epsilon(epsilon, caller=caller)
    delta = check_delta(delta, caller=caller)
    n = check_int(n, "n", low=1, caller=caller)
    s = check_real(gradient_sensitivity, "gradient_sensitivity", low=0.0, low_open=True,
                   caller=caller)
    noise, calib = _check_noise(noise, gaussian_calibration, delta, caller)
    value_bound = check_real(value_bound, "value_bound", low=0.0, low_open=True, caller=caller)
    radius = check_real(radius, "radius", low=0.0, low_open=True, caller=caller)
    max_steps = check_int(max_steps, "max_steps", low=1, caller=caller)
    return _default_steps(epsilon, delta, n, radius, s, value_bound, noise, calib, max_steps,
                          caller)


def _default_steps(epsilon: float, delta: float, n: int, radius: float, s: float,
                   value_bound: float, noise: str, calibration: str, max_steps: int,
                   caller: str) -> int:
    """:func:`dpcg_default_steps` of validated arguments."""
    best, best_gap = 1, math.inf
    for K in range(1, max_steps + 1):
        try:
            scale = _noise_scale(epsilon, delta, K, n, s, noise, calibration, caller)
        except ValidationError:
            continue  # the paper's Gaussian calibration is undefined for epsilon / K >= 1
        gap = dpcg_utility_gap(scale=scale, n=n, radius=radius, steps=K,
                               value_bound=value_bound, noise=noise)
        if gap < best_gap:
            best, best_gap = K, gap
    return best


# ---------------------------------------------------------------------------------------------
# the run
# ---------------------------------------------------------------------------------------------
class _Noise:
    """The noise of a run's gradients: its mechanism (Laplace, or Gaussian under the resolved
    calibration), built before the run's plan is charged from the run's share of an epsilon
    that the public entry validated (refused here, naming the user's arguments, when the
    per-step share or the noise scale leaves floating-point range)."""

    def __init__(self, noise: str, calibration: str, epsilon: float, delta: float, steps: int,
                 n: int, s: float, backend: NoiseBackend, caller: str,
                 allow_zcdp: bool = True):
        self.eps_step, self.delta_step = even_share(epsilon, steps), even_share(delta, steps)
        # the mechanism trusts its share of the validated epsilon: one that underflows to 0
        # (or whose inverse overflows) is refused here
        check_noise_parameter(self.eps_step, "a per-step epsilon of", caller)
        if noise == "gaussian":
            calibration = _resolve_calibration(calibration, epsilon, delta, steps,
                                               allow_zcdp=allow_zcdp)
        self.noise, self.calibration = noise, calibration
        self._calibrated = (epsilon, delta, steps, n, s, caller)
        l1, l2 = n * s, math.sqrt(n) * s
        self.rho_step = None
        if noise == "gaussian" and calibration != "zcdp" and backend.discrete:
            # the mechanism refuses it too; here the refusal names the user's arguments
            raise ValidationError(
                f"The '{backend.name}' backend of {caller} draws a discrete Gaussian, whose "
                "(epsilon, delta) guarantee is certified through zCDP only; pass "
                "gaussian_calibration='zcdp' (or 'auto'), or noise='laplace'."
            )
        if noise == "gaussian":
            # the Gaussian calibrations solve for sigma numerically; refused here when sigma
            # would leave floating-point range anyway (sigma >= l2 / eps_step)
            check_noise_parameter(_div(l2, self.eps_step),
                                  "a Gaussian noise scale of at least", caller)
            if calibration == "paper":
                _check_paper(self.eps_step, caller)
            elif calibration == "zcdp":
                self.rho_step = even_share(rho_for_target(epsilon, delta), steps)
                check_noise_parameter(self.rho_step, "a per-step zCDP budget of", caller)
        self.mechanism: Laplace | Gaussian = built(
            lambda: self._build(l1, l2, n, backend, caller), "a per-coordinate noise scale",
            caller)

    def _build(self, l1: float, l2: float, n: int, backend: NoiseBackend,
               caller: str) -> Laplace | Gaussian:
        if self.noise == "laplace":
            return Laplace._trusted(caller, epsilon=self.eps_step, sensitivity=l1, dim=n,
                                    backend=backend)
        if self.rho_step is not None:
            return Gaussian._named(caller, sensitivity=l2, rho=self.rho_step, dim=n,
                                   backend=backend)
        return Gaussian._trusted(caller, sensitivity=l2, epsilon=self.eps_step,
                                 delta=self.delta_step,
                                 calibration="classic" if self.calibration == "paper"
                                 else "analytic", dim=n, backend=backend)

    @property
    def rule(self) -> str:
        return "zcdp" if self.rho_step is not None else "basic"

    @functools.cached_property
    def scale(self) -> float:
        """The per-coordinate Laplace scale or Gaussian sigma of the calibration, at the declared
        sensitivity (the report's ``noise_scale``; on a grid backend the mechanism computes its
        own from the sensitivity measured on its grid)."""
        epsilon, delta, steps, n, s, caller = self._calibrated
        return _noise_scale(epsilon, delta, steps, n, s, self.noise, self.calibration, caller)

    def events(self, count: int) -> list[PrivacyEvent]:
        """The planned uses of ``count`` noisy gradients: the mechanism's privacy map."""
        return [self.mechanism.privacy_map()._times(count)]


def _div(a: float, b: float) -> float:
    with np.errstate(over="ignore", divide="ignore"):
        return float(np.float64(a) / np.float64(b))
