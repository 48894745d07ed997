"""Gaussian calibration (budget -> standard deviation) and privacy maps: the classic and the
analytic (epsilon, delta) calibrations, zCDP, and the Gaussian privacy profile.

Standard deviations are rounded up and budgets spent rounded so that the floating-point result
never claims more privacy than the real-number formula. The analytic calibration solves the exact
profile with scipy (the pure-DP calibrations of :mod:`~dpsubmod.privacy.calibration` need none,
and the selection path loads only those). References as in :mod:`dpsubmod.privacy.mechanisms`.
"""

from __future__ import annotations

import math
import sys
from fractions import Fraction

import numpy as np
from scipy import optimize, special

from .._validation import check_delta, check_real
from ..errors import ValidationError
from ._inputs import _epsilon, _noise_parameter, _positive, _sensitivity

__all__ = [
    "gaussian_sigma",
    "gaussian_sigma_classic",
    "gaussian_sigma_analytic",
    "gaussian_sigma_zcdp",
    "gaussian_delta",
    "gaussian_rho",
    "zcdp_rho_for",
]


def gaussian_sigma_classic(epsilon: float, delta: float, sensitivity: float) -> float:
    """Classic Gaussian calibration ``sigma = Delta sqrt(2 ln(1.25/delta)) / epsilon``.

    Guarantee: (epsilon, delta)-DP for an l2 sensitivity ``Delta`` [DR14, Thm A.1]. The theorem
    only holds for ``epsilon < 1``; larger values are refused (use
    :func:`gaussian_sigma_analytic`, which is exact for every epsilon and never larger).
    """
    caller = "gaussian_sigma_classic"
    eps = _epsilon(epsilon, caller)
    dlt = _gaussian_delta_param(delta, caller)
    sens = _sensitivity(sensitivity, caller)
    _check_classic(eps, caller)
    return _sigma_classic(eps, dlt, sens)


def _check_classic(eps: float, caller: str) -> None:
    if eps >= 1.0:
        raise ValidationError(
            f"The classic Gaussian calibration of {caller} is proved only for epsilon < 1 "
            f"(Dwork & Roth, Thm A.1); got epsilon={eps!r}. Use calibration='analytic'."
        )


def _sigma_classic(eps: float, dlt: float, sens: float) -> float:
    """:func:`gaussian_sigma_classic` on checked values (``eps < 1``)."""
    return math.nextafter(sens * math.sqrt(2.0 * (math.log(1.25) - math.log(dlt))) / eps, math.inf)


def _log_gaussian_delta(sigma: float, epsilon: float, sensitivity: float) -> float:
    # log of Phi(D/(2s) - e s/D) - e^eps Phi(-D/(2s) - e s/D), computed in log space so that
    # tiny deltas and large epsilons keep their precision. s/D is formed first: eps * s would
    # overflow before the division for a huge epsilon and a huge sensitivity.
    ratio = sigma / sensitivity
    return _log_gaussian_delta_ratio(0.5 / ratio, epsilon * ratio, epsilon)


def _log_gaussian_delta_ratio(a: float, b: float, epsilon: float) -> float:
    # the profile at a = D/(2s), b = eps s/D
    la = float(special.log_ndtr(a - b))
    lb = epsilon + float(special.log_ndtr(-a - b))
    if lb >= la:
        return -math.inf
    return la + math.log1p(-math.exp(lb - la))


def _exp_or_inf(x: float) -> float:
    return math.exp(x) if x < 709.0 else math.inf


def gaussian_delta(sigma: float, epsilon: float, sensitivity: float) -> float:
    """Privacy profile of the Gaussian mechanism: the smallest delta for a given epsilon.

    ``delta(eps) = Phi(Delta/(2 sigma) - eps sigma/Delta) - e^eps Phi(-Delta/(2 sigma) -
    eps sigma/Delta)``: the mechanism is (eps, delta)-DP exactly when delta is at least this
    value [BW18, Thm 8]. Accepts any ``epsilon >= 0``.
    """
    caller = "gaussian_delta"
    s = _positive(sigma, "sigma", caller)
    eps = check_real(epsilon, "epsilon", low=0.0, high=math.inf, high_open=True, caller=caller)
    sens = _sensitivity(sensitivity, caller)
    return math.exp(_log_gaussian_delta(s, eps, sens))


def gaussian_sigma_analytic(epsilon: float, delta: float, sensitivity: float) -> float:
    """Analytic Gaussian calibration of Balle and Wang (2018): the smallest exact sigma.

    Solves ``gaussian_delta(sigma, epsilon, sensitivity) = delta`` for sigma (the left side
    decreases in sigma) by Brent's method on ``log sigma`` with the profile evaluated in log
    space, then steps up by ulps until the condition holds, so the returned sigma satisfies it
    while ``sigma * (1 - 1e-9)`` does not.

    Guarantee: (epsilon, delta)-DP for an l2 sensitivity ``Delta``, for every epsilon > 0
    [BW18, Thm 8 and Alg. 1]; never above the classic calibration.
    """
    caller = "gaussian_sigma_analytic"
    return _sigma_analytic(_epsilon(epsilon, caller), _gaussian_delta_param(delta, caller),
                           _sensitivity(sensitivity, caller), caller)


def _sigma_analytic(eps: float, dlt: float, sens: float, caller: str) -> float:
    """:func:`gaussian_sigma_analytic` on checked values; ``caller`` names the public entry in
    refusals."""
    target = math.log(dlt)
    log_eps = math.log(eps)

    # The profile depends on sigma / sensitivity only: solve for u = log(sigma / Delta), whose
    # root is finite for every finite epsilon and delta even when sigma itself is not.
    def excess(u: float) -> float:
        return _log_gaussian_delta_ratio(0.5 * _exp_or_inf(-u), _exp_or_inf(log_eps + u),
                                         eps) - target

    # sigma -> 0 gives delta -> 1 and sigma -> inf gives delta -> 0: bracket from the classic
    # calibration with steps that double (the root lies within |log eps| + 50 of the guess).
    guess = 0.5 * math.log(2.0 * (math.log(1.25) - target)) - log_eps
    lo, step = guess, 1.0
    for _ in range(64):
        if excess(lo) > 0.0:
            break
        lo, step = lo - step, 2.0 * step
    hi, step = guess, 1.0
    for _ in range(64):
        if excess(hi) <= 0.0:
            break
        hi, step = hi + step, 2.0 * step
    if not excess(lo) > 0.0 >= excess(hi):  # not reached for finite parameters
        raise ValidationError(
            f"{caller}: the Gaussian calibration found no noise scale for epsilon={eps!r}, "
            f"delta={dlt!r}; pass an epsilon between about 1e-300 and 1e300."
        )
    root = optimize.brentq(excess, lo, hi, xtol=1e-15, rtol=4.0 * np.finfo(float).eps,
                           maxiter=500)
    log_sigma = root + math.log(sens)
    # A standard deviation beyond float range (or whose inverse is) is refused by name.
    sigma = _noise_parameter(_exp_or_inf(log_sigma) if log_sigma > -745.0 else 0.0,
                             "Gaussian noise standard deviation", caller)

    def holds(s: float) -> bool:  # in log space and after exponentiation
        log_d = _log_gaussian_delta(s, eps, sens)
        return log_d <= target and math.exp(log_d) <= dlt

    # Step up (one ulp, then doubling steps: a few iterations at most) until it holds.
    step = 0.0
    for _ in range(2100):
        if holds(sigma):
            break
        step = max(2.0 * step, math.ulp(sigma))
        sigma += step
    return _noise_parameter(sigma if holds(sigma) else math.inf,
                            "Gaussian noise standard deviation", caller)


def gaussian_sigma_zcdp(rho: float, sensitivity: float) -> float:
    """``sigma = Delta / sqrt(2 rho)`` (rounded up), so the Gaussian mechanism is rho-zCDP.

    [BS16, Prop 1.6]: Gaussian noise of standard deviation sigma on a query of l2 sensitivity
    Delta is ``Delta**2 / (2 sigma**2)``-zCDP.
    """
    caller = "gaussian_sigma_zcdp"
    r = _positive(rho, "rho", caller, "Pass a positive zCDP budget such as rho=0.5.")
    return _sigma_zcdp(r, _sensitivity(sensitivity, caller), caller)


def _sigma_zcdp(r: float, sens: float, caller: str) -> float:
    """:func:`gaussian_sigma_zcdp` on checked values."""
    # sqrt(2) sqrt(rho), not sqrt(2 rho): 2 rho overflows for rho near the float limit
    sigma = _noise_parameter(sens / (math.sqrt(2.0) * math.sqrt(r)),
                             "Gaussian noise standard deviation", caller)
    # Exact check of sigma**2 * 2 rho >= Delta**2, so that sigma is never below the formula.
    while Fraction(sigma) ** 2 * 2 * Fraction(r) < Fraction(sens) ** 2:
        sigma = math.nextafter(sigma, math.inf)
    return sigma


def gaussian_rho(sigma: float, sensitivity: float) -> float:
    """Privacy map of the Gaussian mechanism in zCDP: ``rho = Delta**2 / (2 sigma**2)``."""
    caller = "gaussian_rho"
    s = _positive(sigma, "sigma", caller)
    sens = _sensitivity(sensitivity, caller)
    # (D / s)**2 / 2 rather than D**2 / (2 s**2), whose denominator underflows to 0 for a
    # subnormal sigma; a rho beyond float range is refused by name, one that underflows is
    # rounded up to the smallest float by the exact check below
    ratio = sens / s
    rho = 0.5 * ratio * ratio
    if not math.isfinite(rho):
        raise ValidationError(
            f"The 'sigma' parameter of {caller} is {s!r} for a sensitivity of {sens!r}: the zCDP "
            f"cost (sensitivity / sigma)**2 / 2 is {rho!r}, outside floating-point range. Pass a "
            "sigma for which sensitivity / sigma lies between about 1e-150 and 1e150."
        )
    while Fraction(rho) * 2 * Fraction(s) ** 2 < Fraction(sens) ** 2:
        rho = math.nextafter(rho, math.inf)
    return rho


def zcdp_rho_for(epsilon: float, delta: float) -> float:
    """The largest rho whose rho-zCDP guarantee implies (epsilon, delta)-DP by [BS16, Prop 1.3].

    ``rho-zCDP => (rho + 2 sqrt(rho ln(1/delta)), delta)-DP``; inverting gives
    ``rho = (sqrt(epsilon + ln(1/delta)) - sqrt(ln(1/delta)))**2`` (rounded down). Used to
    calibrate the discrete Gaussian of the secure backend, whose guarantee is stated in zCDP.
    """
    caller = "zcdp_rho_for"
    return _rho_for(_epsilon(epsilon, caller), _gaussian_delta_param(delta, caller), caller)


def _rho_for(eps: float, dlt: float, caller: str) -> float:
    """:func:`zcdp_rho_for` on checked values."""
    log_inv = -math.log(dlt)
    # (sqrt(a + b) - sqrt(b))**2 written without cancellation: a**2 / (sqrt(a + b) + sqrt(b))**2
    root = eps / (math.sqrt(eps + log_inv) + math.sqrt(log_inv))
    # a rho beyond float range is capped (a smaller rho is still implied by the target)
    rho = math.nextafter(min(root * root, sys.float_info.max), 0.0)
    if not rho > 0.0:
        raise ValidationError(
            f"The 'epsilon' parameter of {caller} is {eps!r}: at delta={dlt!r} the zCDP budget it "
            f"allows, about epsilon**2 / (4 ln(1/delta)), underflows to 0. Pass an epsilon above "
            "about 1e-150."
        )
    return rho


def _gaussian_delta_param(delta: object, caller: str) -> float:
    dlt = check_delta(delta, caller=caller)
    if dlt == 0.0:
        raise ValidationError(
            f"The 'delta' parameter of {caller} must be > 0: the Gaussian mechanism has no "
            "pure-DP guarantee. Pass delta=1e-6 (say), or rho= for a zCDP guarantee, or use "
            "laplace(...)."
        )
    return dlt


_GAUSSIAN_CALIBRATIONS = ("analytic", "classic", "zcdp")


def gaussian_sigma(*, sensitivity: float, epsilon: float | None = None,
                   delta: float | None = None, rho: float | None = None,
                   calibration: str = "analytic") -> float:
    """Gaussian noise standard deviation from a target budget.

    Parameters
    ----------
    sensitivity : float
        l2 sensitivity of the query.
    epsilon, delta : float, optional
        Target (epsilon, delta) (both, with delta > 0); mutually exclusive with ``rho``.
    rho : float, optional
        Target zCDP budget; ``sigma = Delta / sqrt(2 rho)``.
    calibration : {"analytic", "classic", "zcdp"}, default="analytic"
        How (epsilon, delta) becomes sigma: ``"analytic"`` (Balle and Wang, exact, any epsilon),
        ``"classic"`` (Dwork and Roth, epsilon < 1 only), ``"zcdp"`` (through
        :func:`zcdp_rho_for`; needed for the discrete Gaussian). Ignored with ``rho``.

    Returns
    -------
    float
    """
    caller = "gaussian_sigma"
    if calibration not in _GAUSSIAN_CALIBRATIONS:
        raise ValidationError(
            f"The 'calibration' parameter of {caller} must be one of "
            f"{list(_GAUSSIAN_CALIBRATIONS)}; got {calibration!r}."
        )
    if rho is not None:
        if epsilon is not None or delta is not None:
            raise ValidationError(
                f"Pass either rho or (epsilon, delta) to {caller}, not both."
            )
        return gaussian_sigma_zcdp(rho, sensitivity)
    if epsilon is None or delta is None:
        raise ValidationError(
            f"{caller} needs a target budget: epsilon and delta together, or rho."
        )
    if calibration == "classic":
        return gaussian_sigma_classic(epsilon, delta, sensitivity)
    if calibration == "zcdp":
        return gaussian_sigma_zcdp(zcdp_rho_for(epsilon, delta), sensitivity)
    return gaussian_sigma_analytic(epsilon, delta, sensitivity)


def _sigma_for(sens: float, eps: float, dlt: float, calibration: str, caller: str) -> float:
    """sigma for checked (epsilon, delta) by a checked ``calibration``: the core of
    :func:`gaussian_sigma`, for a caller that validated its arguments at its own entry."""
    if calibration == "classic":
        _check_classic(eps, caller)
        return _sigma_classic(eps, dlt, sens)
    if calibration == "zcdp":
        return _sigma_zcdp(_rho_for(eps, dlt, caller), sens, caller)
    return _sigma_analytic(eps, dlt, sens, caller)
