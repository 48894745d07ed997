"""Conversions between zero-concentrated DP and ``(epsilon, delta)``-DP.

zCDP (Bun & Steinke 2016) composes by adding the rhos, for mechanisms and parameters chosen
adaptively (a Renyi filter at every order, Feldman & Zrnic 2021), and converts to
``(epsilon, delta)`` by Canonne, Kamath & Steinke 2020, Proposition 12.
"""

from __future__ import annotations

import math

import numpy as np

from .._lazy import lazy_module
from .._validation import check_delta, check_real
from ..errors import ValidationError
from .events import check_epsilon_finite

__all__ = ["zcdp_to_dp", "rho_for_target"]

optimize = lazy_module("scipy.optimize")


def _cks_epsilon(rho: float, delta: float, alpha: float) -> float:
    return (alpha * rho + -math.log(delta) / (alpha - 1.0) + math.log1p(-1.0 / alpha)
            - math.log(alpha) / (alpha - 1.0))


def zcdp_to_dp(rho: float, delta: float, *, conversion: str = "cks") -> float:
    """Epsilon of the ``(epsilon, delta)``-DP guarantee implied by ``rho``-zCDP.

    Parameters
    ----------
    rho : float
        zCDP parameter ``>= 0``.
    delta : float
        Target delta in ``(0, 1)``; ``delta = 0`` gives ``inf`` (zCDP does not imply pure DP).
    conversion : {"cks", "classic"}, default="cks"
        ``"classic"``: ``rho + 2 sqrt(rho ln(1/delta))`` (Bun & Steinke 2016, Prop. 1.3).
        ``"cks"``: Canonne, Kamath & Steinke 2020, Proposition 12,
        ``inf_{alpha > 1} alpha rho + ln(1/delta)/(alpha-1) + ln(1 - 1/alpha)
        - ln(alpha)/(alpha-1)``, minimised numerically (every alpha gives a valid bound, so an
        imprecise minimiser only loosens it), never above the classic bound. Both return 0 when
        ``delta >= sqrt(1 - e^{-rho})`` (total variation bounded through KL, Bretagnolle-Huber).

    Returns
    -------
    float
    """
    r = check_real(rho, "rho", low=0.0, caller="zcdp_to_dp")
    d = check_delta(delta, caller="zcdp_to_dp")
    if conversion not in ("cks", "classic"):
        raise ValidationError(
            f"The 'conversion' parameter of zcdp_to_dp must be 'cks' or 'classic'; got "
            f"{conversion!r}."
        )
    if r == 0.0:
        return 0.0
    if d == 0.0 or math.isinf(r):
        return math.inf
    if d * d >= -math.expm1(-r):
        return 0.0
    classic = r + 2.0 * math.sqrt(r * -math.log(d))
    if conversion == "classic":
        return classic
    # minimise over u = log(alpha - 1): a coarse grid, then bounded Brent around the best point
    grid = np.linspace(-12.0, 25.0, 149)
    vals = np.array([_cks_epsilon(r, d, 1.0 + math.exp(u)) for u in grid])
    i = int(np.argmin(vals))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
    best = float(vals[i])
    if hi > lo:
        res = optimize.minimize_scalar(lambda u: _cks_epsilon(r, d, 1.0 + math.exp(u)),
                                       bounds=(lo, hi), method="bounded",
                                       options={"xatol": 1e-12})
        if res.success and math.isfinite(res.fun):
            best = min(best, float(res.fun))
    return max(0.0, min(best, classic))


#: Relative allowance for the rounding of the conversion in floating point (a few logarithms and
#: products, each within a unit or two in the last place): :func:`rho_for_target` keeps its
#: answer's conversion below the target by this much, so that the exact conversion is too.
_CONVERSION_ROUNDING = 2.0 ** -40


def _converts_within(rho: float, delta: float, epsilon: float) -> bool:
    """Whether ``rho``-zCDP provably implies ``(epsilon, delta)``-DP (conversion rounded up)."""
    return zcdp_to_dp(rho, delta) * (1.0 + _CONVERSION_ROUNDING) <= epsilon


def rho_for_target(epsilon: float, delta: float) -> float:
    """Largest ``rho`` such that ``rho``-zCDP implies ``(epsilon, delta)``-DP.

    The inverse of :func:`zcdp_to_dp` (CKS conversion), by bisection; the returned ``rho``
    satisfies ``zcdp_to_dp(rho, delta) <= epsilon`` with the conversion rounded outward (by
    a relative ``2**-40``), so it holds for the exact conversion too. Use it to calibrate a
    zCDP mechanism (a Gaussian with ``sigma = Delta / sqrt(2 rho)``) to an ``(epsilon, delta)``
    target.
    """
    eps = check_epsilon_finite(epsilon, caller="rho_for_target")
    d = check_real(delta, "delta", low=0.0, high=1.0, low_open=True, high_open=True,
                   caller="rho_for_target",
                   fix="zCDP implies (epsilon, delta)-DP only for delta > 0; pass e.g. 1e-6.")
    # Start from the classic conversion's rho (never above the CKS one, so valid: rounding
    # aside), (sqrt(L + eps) - sqrt(L))**2 written without cancellation; bisecting from
    # [0, 1] would stop at 0 for a target below 2**-200.
    log_inv = -math.log(d)
    root = eps / (math.sqrt(log_inv + eps) + math.sqrt(log_inv))
    lo = root * root if root < 1e150 else 0.0  # a huge target: the plain search below
    for _ in range(64):
        if lo == 0.0 or _converts_within(lo, d, eps):
            break
        lo *= 1.0 - 1e-12
    else:
        lo = 0.0
    # lo = 0 (underflow): the plain search from [0, max(eps, 1)], which still finds the rho
    # that a large delta allows on its own (total variation) whatever epsilon is
    hi = 2.0 * lo if lo > 0.0 else max(eps, 1.0)
    while _converts_within(hi, d, eps):
        lo, hi = hi, 2.0 * hi
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if _converts_within(mid, d, eps):
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-15 * hi:
            break
    return lo


