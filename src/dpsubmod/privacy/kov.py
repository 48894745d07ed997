"""Optimal homogeneous composition (Kairouz, Oh & Viswanath 2015, Theorem 3.3).

k-fold composition of ``(eps0, delta0)``-DP mechanisms is exactly dominated by k-fold
``eps0``-randomized response, whose privacy profile is computed here exactly in log space. The
theorem holds for parameters fixed before the run starts, so the library uses it only *inside*
one call whose steps are all fixed in advance, never to decide whether a further call fits a
:class:`~dpsubmod.privacy.budget.Budget`.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from .._validation import check_delta, check_int, check_real
from ..errors import ValidationError
from ._special import gammaln, logsumexp
from .events import check_epsilon_finite

__all__ = ["kov_composition", "kov_delta", "advanced_composition", "basic_composition",
           "KOV_MAX_USES"]

#: Most uses the exact profile is evaluated over: it sums about k/2 terms per evaluation (a
#: second per inversion at 10**5 uses, over a minute at 10**7). Beyond it zCDP and advanced
#: composition are within a few percent of optimal.
KOV_MAX_USES = 10**5


def _kov_uses(k: object, caller: str, name: str = "k") -> int:
    k = check_int(k, name, low=1, caller=caller)
    if k > KOV_MAX_USES:
        raise ValidationError(
            f"The '{name}' parameter of {caller} is {k}: optimal (KOV) composition evaluates "
            f"its exact profile over every use, which is limited to {KOV_MAX_USES} uses. Use "
            "zCDP or advanced composition at that many uses (within a few percent of optimal)."
        )
    return k


def basic_composition(epsilon: float, k: int = 1, delta: float = 0.0) -> tuple[float, float]:
    """Basic composition of ``k`` uses of an ``(epsilon, delta)``-DP mechanism.

    Returns ``(k epsilon, k delta)``.

    Dwork, McSherry, Nissim & Smith 2006; Dwork & Lei 2009 (for ``delta > 0``).
    """
    eps = check_epsilon_finite(epsilon, caller="basic_composition")
    k = check_int(k, "k", low=1, caller="basic_composition")
    dlt = check_delta(delta, caller="basic_composition")
    return k * eps, min(k * dlt, 1.0)


def advanced_composition(epsilon: float, k: int, delta_prime: float,
                         delta: float = 0.0) -> tuple[float, float]:
    """Advanced composition (Dwork, Rothblum & Vadhan 2010, Theorem III.3).

    ``k`` uses of ``(epsilon, delta)``-DP mechanisms, parameters fixed in advance, are
    ``(eps', k delta + delta')``-DP with
    ``eps' = sqrt(2 k ln(1/delta')) epsilon + k epsilon (e^epsilon - 1)``. This returns the
    formula itself; it exceeds basic composition ``k epsilon`` when ``k`` is small (the
    composition inside a call takes the smaller of the two).

    Parameters
    ----------
    epsilon : float
        Per-use epsilon ``> 0``.
    k : int
        Number of uses ``>= 1``.
    delta_prime : float
        Slack ``delta'`` in ``(0, 1)``. ``delta' = 0`` gives an infinite epsilon and is refused.
    delta : float, default=0.0
        Per-use delta.

    Returns
    -------
    (epsilon_total, delta_total) : tuple of float
    """
    eps = check_epsilon_finite(epsilon, caller="advanced_composition")
    k = check_int(k, "k", low=1, caller="advanced_composition")
    dp = check_real(delta_prime, "delta_prime", low=0.0, high=1.0, low_open=True, high_open=True,
                    caller="advanced_composition",
                    fix="Advanced composition needs a slack delta' > 0 (delta' = 0 gives "
                        "epsilon = inf); pass e.g. delta_prime=1e-6, or use basic composition.")
    dlt = check_delta(delta, caller="advanced_composition")
    e_tot = math.sqrt(2.0 * k * -math.log(dp)) * eps + k * drift(eps)
    return e_tot, min(k * dlt + dp, 1.0)


def drift(eps: float) -> float:
    """``eps (e^eps - 1)``: the mean privacy-loss bound of advanced composition (inf if huge)."""
    return eps * math.expm1(eps) if eps < 700.0 else math.inf


@functools.lru_cache(maxsize=8)
def _log_binomials(k: int) -> np.ndarray:
    """``log C(k, l)`` for ``l < k/2``, read-only: about ``k`` log-gamma evaluations (20 ms at
    ``k = 10**5``), which one composition would otherwise repeat at every profile evaluation."""
    ell = np.arange((k + 1) // 2, dtype=np.float64)
    logc = gammaln(k + 1.0) - gammaln(ell + 1.0) - gammaln(k - ell + 1.0)
    logc.flags.writeable = False
    return logc


def _kov_terms(eps0: float, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Log-weights of k-fold eps0-randomized response, for the l < k/2 'disagreement' counts.

    Returns ``(a, b, bp)`` with ``a_l = log C(k,l) + (k-l) eps0 - k log(1+e^eps0)``,
    ``b_l = log C(k,l) + l eps0 - k log(1+e^eps0)`` and breakpoints ``bp_l = (k - 2l) eps0``: the
    profile is ``delta(eps) = sum_{l: bp_l > eps} (e^{a_l} - e^{eps + b_l})``.
    """
    ell = np.arange((k + 1) // 2, dtype=np.float64)
    logc = _log_binomials(k)
    log_norm = -k * (eps0 + math.log1p(math.exp(-eps0)))
    a = logc + (k - ell) * eps0 + log_norm
    b = logc + ell * eps0 + log_norm
    return a, b, (k - 2.0 * ell) * eps0


def _kov_log_delta_rr(eps: float, eps0: float, k: int) -> float:
    """log of the exact hockey-stick divergence at ``eps`` of k-fold eps0-randomized response."""
    a, b, bp = _kov_terms(eps0, k)
    act = bp > eps
    if not act.any():
        return -math.inf
    x = eps - bp[act]  # < 0 on active terms
    with np.errstate(divide="ignore"):
        terms = a[act] + np.log(-np.expm1(x))
    return logsumexp(terms)


#: Per-use epsilon below which the k-fold randomized-response profile is not inverted in
#: floating point (see :func:`kov_epsilon_rr`); basic composition is returned there.
_KOV_MIN_EPS = 1e-9


def kov_epsilon_rr(eps0: float, k: int, target: float) -> float:
    """Smallest eps >= 0 with delta_RR(eps) <= target for k-fold eps0-randomized response,
    rounded up by a few ulps (never below ``k eps0`` rounded up).

    The breakpoints ``(k - 2l) eps0`` are float products, up to half an ulp below the real
    kinks of the profile, where the exact delta just below is positive, and the inversion's
    logarithms carry relative errors near 1e-13; the margins keep the answer on the safe side
    (checked against an 80-digit evaluation of the profile).
    """
    # The inversion's logarithms leave delta up to about 1e-13 (relative) above the target:
    # solving for a target a hair lower keeps the exact delta below it.
    eps = _kov_epsilon_rr(eps0, k, target * (1.0 - 1e-12))
    if eps == 0.0 or not math.isfinite(eps):
        return eps
    return min(eps + 4.0 * math.ulp(eps), math.nextafter(k * eps0, math.inf))


def _kov_epsilon_rr(eps0: float, k: int, target: float) -> float:
    """Smallest eps >= 0 with delta_RR(eps) <= target for k-fold eps0-randomized response.

    The profile is piecewise ``A_m - e^eps B_m`` between consecutive breakpoints, so after locating
    the segment the solution is closed form (in log space); it is then checked against the
    directly computed profile and nudged up if rounding put it a hair too low.
    """
    if eps0 == 0.0 or target >= 1.0:
        return 0.0
    if not math.isfinite(eps0):
        return math.inf
    # k * eps0 rounded up: the float product may fall an ulp below the real one, where the
    # exact profile is already positive.
    top = math.nextafter(k * eps0, math.inf)
    if target <= 0.0 or eps0 < _KOV_MIN_EPS:
        # Below _KOV_MIN_EPS the log-weights a_l and b_l agree to within their rounding
        # (a_l - b_l = (k - 2l) eps0 is lost beside |a_l| ~ k ln 2), so the profile cannot be
        # inverted in floating point (it would read delta(0) as 0); basic composition is sound.
        return top
    log_t = math.log(target)
    a, b, bp = _kov_terms(eps0, k)
    la = np.logaddexp.accumulate(a)
    lb = np.logaddexp.accumulate(b)
    with np.errstate(divide="ignore"):
        log_d0 = la[-1] + math.log(-math.expm1(lb[-1] - la[-1])) if lb[-1] < la[-1] else -math.inf
    if log_d0 <= log_t:
        return 0.0
    # log delta at each breakpoint bp_m (active terms l < m); m = 0 is the top, delta = 0.
    # x <= 0 exactly; rounding can leave it a hair above 0 at a subnormal eps0 (delta 0 there)
    x = np.minimum(bp[1:] + lb[:-1] - la[:-1], 0.0)
    with np.errstate(divide="ignore"):
        log_dm = np.concatenate(([-math.inf], la[:-1] + np.log(-np.expm1(x))))
    m = int(np.flatnonzero(log_dm <= log_t).max())
    upper = float(bp[m])
    lower = float(bp[m + 1]) if m + 1 < bp.size else 0.0
    lower = max(lower, 0.0)
    # On [lower, upper] the active terms are l <= m: delta(eps) = e^{la_m} - e^{eps + lb_m}.
    with np.errstate(divide="ignore"):
        eps = la[m] + math.log1p(-math.exp(log_t - la[m])) - lb[m]
    eps = min(max(float(eps), lower), upper)
    # The closed form and the direct profile differ by rounding (about 1e-11 in log delta for
    # k = 1e5); step up by growing relative margins until the direct profile confirms.
    for r in (0.0, 1e-15, 1e-14, 1e-13, 1e-12, 1e-11, 1e-10, 1e-9, 1e-8, 1e-7, 1e-6):
        e = min(upper, eps * (1.0 + r) + r)
        if _kov_log_delta_rr(e, eps0, k) <= log_t:
            return e
    # Fallback (not expected): bisection between the closed form and the segment's top.
    lo, hi = eps, upper
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if _kov_log_delta_rr(mid, eps0, k) <= log_t:
            hi = mid
        else:
            lo = mid
        if hi - lo <= 1e-14 * hi:
            break
    return hi


def kov_delta(epsilon_total: float, epsilon: float, k: int, delta: float = 0.0) -> float:
    """Exact delta of k-fold composition of ``(epsilon, delta)``-DP mechanisms at ``epsilon_total``.

    Kairouz, Oh & Viswanath 2015 (Theorem 3.3) show k-fold composition is dominated by k-fold
    ``epsilon``-randomized response, so for every ``eps >= 0``
    ``delta_total(eps) = 1 - (1 - delta)^k (1 - delta_RR(eps))`` with
    ``delta_RR(eps) = sum_l C(k,l) [e^{(k-l) epsilon} - e^{eps + l epsilon}]_+ / (1 + e^epsilon)^k``
    (at ``eps = (k - 2i) epsilon`` this is the theorem's ``delta_i``). Computed in log space.
    """
    et = check_real(epsilon_total, "epsilon_total", low=0.0, caller="kov_delta")
    e0 = check_real(epsilon, "epsilon", low=0.0, caller="kov_delta")
    k = _kov_uses(k, "kov_delta")
    d0 = check_delta(delta, caller="kov_delta")
    if e0 == 0.0 or math.isinf(et):
        log_rr = -math.inf
    elif math.isinf(e0):
        log_rr = 0.0  # infinite-epsilon randomized response: the two outputs never overlap
    else:
        log_rr = _kov_log_delta_rr(et, e0, k)
    rr = math.exp(log_rr)
    return -math.expm1(k * math.log1p(-d0) + math.log1p(-min(rr, 1.0)))


def kov_composition(epsilon: float, k: int, delta_total: float,
                    delta: float = 0.0) -> tuple[float, float]:
    """Optimal homogeneous composition (Kairouz, Oh & Viswanath 2015, Theorem 3.3).

    Returns the smallest ``eps`` such that k adaptive uses of ``(epsilon, delta)``-DP mechanisms
    are ``(eps, delta_total)``-DP: the exact privacy profile of k-fold randomized response
    (:func:`kov_delta`) inverted in closed form segment by segment. Never above ``k epsilon``.

    Parameters
    ----------
    epsilon : float
        Per-use epsilon ``> 0``.
    k : int
        Number of uses.
    delta_total : float
        Target total delta in ``[1 - (1 - delta)^k, 1)``.
    delta : float, default=0.0
        Per-use delta.

    Returns
    -------
    (epsilon_total, delta_total) : tuple of float
    """
    e0 = check_epsilon_finite(epsilon, caller="kov_composition")
    k = _kov_uses(k, "kov_composition")
    dt = check_delta(delta_total, "delta_total", caller="kov_composition")
    d0 = check_delta(delta, caller="kov_composition")
    target = kov_rr_target(dt, d0, k)
    if target < 0.0:
        raise ValidationError(
            f"The 'delta_total' parameter of kov_composition must be at least 1 - (1 - delta)^k "
            f"= {-math.expm1(k * math.log1p(-d0)):.6g} for k={k} uses at delta={d0}; "
            f"got {dt}."
        )
    return kov_epsilon_rr(e0, k, target), dt


def kov_rr_target(delta_total: float, delta0: float, k: int) -> float:
    # 1 - (1 - delta_total) / (1 - delta0)^k, stably
    return -math.expm1(math.log1p(-delta_total) - k * math.log1p(-delta0))
