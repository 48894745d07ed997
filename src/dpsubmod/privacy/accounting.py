"""Privacy accounting: the ledger of every mechanism use, composition theorems and the Budget.

Every private algorithm records one :class:`PrivacyEvent` per mechanism use in a :class:`Ledger`
*before* it draws any noise. A :class:`Budget` is a ledger that refuses (raises
:class:`~dpsubmod.errors.BudgetExceededError`) a spend that would take the total past its limit,
so nothing is released after the refusal.

Composition rules (``method=``)
-------------------------------
``"basic"``
    Basic composition: the epsilons add and the deltas add (Dwork, McSherry, Nissim & Smith 2006;
    Dwork & Lei 2009). Holds for fully adaptive choices of the mechanisms and of their parameters.
``"advanced"``
    Advanced composition (Dwork, Rothblum & Vadhan 2010, Theorem III.3): k uses of
    ``eps0``-DP mechanisms are ``(sqrt(2 k ln(1/delta')) eps0 + k eps0 (e^eps0 - 1),
    k delta0 + delta')``-DP for any ``delta' > 0``. Heterogeneous events use the same martingale
    argument with ``k eps0^2`` replaced by ``sum eps_i^2`` and ``k eps0 (e^eps0 - 1)`` by
    ``sum eps_i (e^eps_i - 1)``.
``"kov"``
    Optimal homogeneous composition (Kairouz, Oh & Viswanath 2015, Theorem 3.3): k-fold
    composition of ``(eps0, delta0)``-DP mechanisms is exactly dominated by k-fold randomized
    response, whose privacy profile is computed exactly in log space. Heterogeneous events are
    composed as if every event had the largest epsilon and delta of the ledger (valid, loose).
``"zcdp"``
    Zero-concentrated DP (Bun & Steinke 2016): the rhos add. An event's ``rho`` is its zCDP cost
    (Gaussian: ``Delta^2 / (2 sigma^2)``; exponential mechanism: ``eps^2 / 8`` by the bounded-range
    analysis of Cesar & Rogers 2021); a pure ``eps``-DP event without ``rho`` costs ``eps^2 / 2``.
    The total converts to ``(eps, delta)`` by Canonne, Kamath & Steinke 2020, Proposition 12:
    ``eps = inf_{alpha > 1} alpha rho + ln(1/delta)/(alpha - 1) + ln(1 - 1/alpha)
    - ln(alpha)/(alpha - 1)``, never above the classic ``rho + 2 sqrt(rho ln(1/delta))``.
``"best"``
    The tightest of the above that applies.

Every method other than ``"basic"`` is capped by basic composition whenever basic composition
meets the requested delta (both statements hold, so the smaller epsilon is valid): no method ever
reports more than the sum of the epsilons.

Adaptivity. Basic and zCDP composition hold when each mechanism, and its privacy parameters, are
chosen adaptively from earlier releases; advanced and optimal (KOV) composition assume the
privacy parameters of the sequence are fixed in advance (data-independent), as in every algorithm
of this library, which sets its per-step budget from the total before it starts.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
from scipy import optimize, special

from .._validation import check_delta, check_int, check_real
from ..errors import BudgetExceededError, ParameterTypeError, ValidationError

__all__ = [
    "PrivacyEvent",
    "Ledger",
    "Budget",
    "PrivacyReport",
    "COMPOSITIONS",
    "basic_composition",
    "advanced_composition",
    "kov_composition",
    "kov_delta",
    "zcdp_to_dp",
    "rho_for_target",
    "rho_pure",
    "rho_exponential",
    "compose_epsilon",
    "per_step_epsilon",
]

#: Composition rules accepted by ``method=``, with the reference printed in privacy statements.
COMPOSITIONS: dict[str, str] = {
    "basic": "basic composition (Dwork, McSherry, Nissim & Smith 2006)",
    "advanced": "advanced composition (Dwork, Rothblum & Vadhan 2010)",
    "kov": "optimal composition (Kairouz, Oh & Viswanath 2015)",
    "zcdp": "zCDP composition (Bun & Steinke 2016) converted by Canonne, Kamath & Steinke 2020",
    "best": "the tightest valid composition",
}
_METHODS = ("basic", "advanced", "kov", "zcdp")

# Relative floating-point slack of the Budget check: a budget split by per_step_epsilon recomposes
# to the target only up to rounding (about 1e-13), and refusing over such a residue would be
# noise, not privacy.
_BUDGET_RTOL = 1e-9


def _check_finite_epsilon(value: object, name: str = "epsilon", *,
                         caller: str | None = None) -> float:
    """A privacy parameter epsilon: a finite real number > 0 (``inf`` is refused: it would mean
    no noise at all)."""
    return check_real(value, name, low=0.0, low_open=True, high=math.inf, high_open=True,
                      caller=caller, fix="Pass a positive, finite privacy budget such as 1.0.")


def _check_bool(value: object, name: str, caller: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise ParameterTypeError(f"The '{name}' parameter of {caller} must be a bool; got "
                                 f"{value!r}.")
    return bool(value)


def _check_method(method: object, caller: str) -> str:
    if not isinstance(method, str) or method not in COMPOSITIONS:
        raise ValidationError(
            f"The 'method' parameter of {caller} must be one of {sorted(COMPOSITIONS)}; "
            f"got {method!r}."
        )
    return method


# ----------------------------------------------------------------------------------------------
# Events
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PrivacyEvent:
    """One use (or ``count`` identical uses) of a mechanism and its privacy cost.

    Parameters
    ----------
    mechanism : str
        Name of the mechanism (``"laplace"``, ``"exponential"``, ...).
    epsilon : float
        The ``epsilon`` of one use's ``(epsilon, delta)``-DP guarantee, ``>= 0``; ``inf`` when the
        use has only a zCDP guarantee (then set ``rho``).
    delta : float, default=0.0
        The ``delta`` of one use's guarantee, in ``[0, 1)``.
    rho : float or None, default=None
        The zCDP cost of one use, when known. It must be a complete guarantee by itself (a
        Gaussian's ``Delta^2 / (2 sigma^2)``; an exponential mechanism's ``eps^2 / 8``). ``None``
        means ``epsilon^2 / 2`` for a pure event (``delta == 0``) and no zCDP guarantee otherwise.
    count : int, default=1
        Number of identical uses (self-composition).
    note : str, default=""
        Free text (the sensitivity and scale used, the step).

    Raises
    ------
    ValidationError, ParameterTypeError
        On a negative epsilon or rho, a delta outside ``[0, 1)``, or a count below 1.
    """

    mechanism: str
    epsilon: float
    delta: float = 0.0
    rho: float | None = None
    count: int = 1
    note: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.mechanism, str):
            raise ParameterTypeError(
                f"The 'mechanism' field of PrivacyEvent must be a str; got {self.mechanism!r}."
            )
        eps = check_real(self.epsilon, "epsilon", low=0.0, caller="PrivacyEvent")
        dlt = check_delta(self.delta, caller="PrivacyEvent")
        rho = None if self.rho is None else check_real(self.rho, "rho", low=0.0,
                                                        caller="PrivacyEvent")
        cnt = check_int(self.count, "count", low=1, caller="PrivacyEvent")
        object.__setattr__(self, "epsilon", eps)
        object.__setattr__(self, "delta", dlt)
        object.__setattr__(self, "rho", rho)
        object.__setattr__(self, "count", cnt)

    @property
    def zcdp(self) -> float | None:
        """The zCDP cost of one use: ``rho``, else ``epsilon^2 / 2`` when pure, else ``None``."""
        if self.rho is not None:
            return self.rho
        if self.delta == 0.0:
            return rho_pure(self.epsilon) if math.isfinite(self.epsilon) else math.inf
        return None

    @classmethod
    def pure(cls, mechanism: str, epsilon: float, *, count: int = 1,
             note: str = "") -> PrivacyEvent:
        """An ``epsilon``-DP use (zCDP cost ``epsilon^2 / 2``, Bun & Steinke 2016, Prop. 1.4)."""
        return cls(mechanism, epsilon, 0.0, None, count, note)

    @classmethod
    def exponential(cls, epsilon: float, *, mechanism: str = "exponential", count: int = 1,
                    note: str = "") -> PrivacyEvent:
        """An exponential-mechanism use that is ``epsilon``-DP and ``epsilon``-bounded range.

        That is the mechanism sampling ``exp(epsilon u / (2 Delta))`` for scores ``u`` of
        sensitivity ``Delta`` (or ``exp(epsilon u / Delta)`` for monotone scores); its zCDP cost is
        ``epsilon^2 / 8`` (bounded range, Durfee & Rogers 2019, implies it: Cesar & Rogers 2021).
        """
        eps = _check_finite_epsilon(epsilon, caller="PrivacyEvent.exponential")
        return cls(mechanism, eps, 0.0, rho_exponential(eps), count, note)

    @classmethod
    def zcdp_only(cls, mechanism: str, rho: float, *, count: int = 1,
                  note: str = "") -> PrivacyEvent:
        """A use with only a ``rho``-zCDP guarantee (``epsilon = inf`` under basic composition)."""
        return cls(mechanism, math.inf, 0.0, rho, count, note)


def rho_pure(epsilon: float) -> float:
    """zCDP cost ``epsilon^2 / 2`` of a pure ``epsilon``-DP mechanism (Bun & Steinke 2016)."""
    return 0.5 * float(epsilon) ** 2


def rho_exponential(epsilon: float) -> float:
    """zCDP cost ``epsilon^2 / 8`` of an ``epsilon``-bounded-range (exponential) mechanism.

    Cesar & Rogers 2021 ("Bounding, concentrating, and truncating: unifying privacy loss
    composition for data analytics", ALT 2021).
    """
    return 0.125 * float(epsilon) ** 2


# ----------------------------------------------------------------------------------------------
# Composition theorems (homogeneous, public) and their heterogeneous core
# ----------------------------------------------------------------------------------------------
def basic_composition(epsilon: float, k: int = 1, delta: float = 0.0) -> tuple[float, float]:
    """Basic composition of ``k`` uses of an ``(epsilon, delta)``-DP mechanism.

    Returns ``(k epsilon, k delta)``.

    Dwork, McSherry, Nissim & Smith 2006; Dwork & Lei 2009 (for ``delta > 0``).
    """
    eps = _check_finite_epsilon(epsilon, caller="basic_composition")
    k = check_int(k, "k", low=1, caller="basic_composition")
    dlt = check_delta(delta, caller="basic_composition")
    return k * eps, min(k * dlt, 1.0)


def advanced_composition(epsilon: float, k: int, delta_prime: float,
                         delta: float = 0.0) -> tuple[float, float]:
    """Advanced composition (Dwork, Rothblum & Vadhan 2010, Theorem III.3).

    ``k`` adaptive uses of ``(epsilon, delta)``-DP mechanisms are ``(eps', k delta + delta')``-DP
    with ``eps' = sqrt(2 k ln(1/delta')) epsilon + k epsilon (e^epsilon - 1)``. This returns the
    formula itself; it exceeds basic composition ``k epsilon`` when ``k`` is small (the ledger and
    :func:`compose_epsilon` take the smaller of the two).

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
    eps = _check_finite_epsilon(epsilon, caller="advanced_composition")
    k = check_int(k, "k", low=1, caller="advanced_composition")
    dp = check_real(delta_prime, "delta_prime", low=0.0, high=1.0, low_open=True, high_open=True,
                    caller="advanced_composition",
                    fix="Advanced composition needs a slack delta' > 0 (delta' = 0 gives "
                        "epsilon = inf); pass e.g. delta_prime=1e-6, or use basic composition.")
    dlt = check_delta(delta, caller="advanced_composition")
    e_tot = math.sqrt(2.0 * k * math.log(1.0 / dp)) * eps + k * _drift(eps)
    return e_tot, min(k * dlt + dp, 1.0)


def _drift(eps: float) -> float:
    """``eps (e^eps - 1)``: the mean privacy-loss bound of advanced composition (inf if huge)."""
    return eps * math.expm1(eps) if eps < 700.0 else math.inf


def _kov_terms(eps0: float, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Log-weights of k-fold eps0-randomized response, for the l < k/2 'disagreement' counts.

    Returns ``(a, b, bp)`` with ``a_l = log C(k,l) + (k-l) eps0 - k log(1+e^eps0)``,
    ``b_l = log C(k,l) + l eps0 - k log(1+e^eps0)`` and breakpoints ``bp_l = (k - 2l) eps0``: the
    profile is ``delta(eps) = sum_{l: bp_l > eps} (e^{a_l} - e^{eps + b_l})``.
    """
    ell = np.arange((k + 1) // 2, dtype=np.float64)
    logc = special.gammaln(k + 1.0) - special.gammaln(ell + 1.0) - special.gammaln(k - ell + 1.0)
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
    return float(special.logsumexp(terms))


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
    top = k * eps0
    if target <= 0.0:
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
    x = bp[1:] + lb[:-1] - la[:-1]
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
    k = check_int(k, "k", low=1, caller="kov_delta")
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
    e0 = _check_finite_epsilon(epsilon, caller="kov_composition")
    k = check_int(k, "k", low=1, caller="kov_composition")
    dt = check_delta(delta_total, "delta_total", caller="kov_composition")
    d0 = check_delta(delta, caller="kov_composition")
    target = _kov_rr_target(dt, d0, k)
    if target < 0.0:
        raise ValidationError(
            f"The 'delta_total' parameter of kov_composition must be at least 1 - (1 - delta)^k "
            f"= {-math.expm1(k * math.log1p(-d0)):.6g} for k={k} uses at delta={d0}; "
            f"got {dt}."
        )
    return _kov_epsilon_rr(e0, k, target), dt


def _kov_rr_target(delta_total: float, delta0: float, k: int) -> float:
    # 1 - (1 - delta_total) / (1 - delta0)^k, stably
    return -math.expm1(math.log1p(-delta_total) - k * math.log1p(-delta0))


def _cks_epsilon(rho: float, delta: float, alpha: float) -> float:
    return (alpha * rho + math.log(1.0 / delta) / (alpha - 1.0) + math.log1p(-1.0 / alpha)
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
    classic = r + 2.0 * math.sqrt(r * math.log(1.0 / d))
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


def rho_for_target(epsilon: float, delta: float) -> float:
    """Largest ``rho`` such that ``rho``-zCDP implies ``(epsilon, delta)``-DP.

    The inverse of :func:`zcdp_to_dp` (CKS conversion), by bisection; the returned ``rho``
    satisfies ``zcdp_to_dp(rho, delta) <= epsilon``. Use it to calibrate a zCDP mechanism (a
    Gaussian with ``sigma = Delta / sqrt(2 rho)``) to an ``(epsilon, delta)`` target.
    """
    eps = _check_finite_epsilon(epsilon, caller="rho_for_target")
    d = check_real(delta, "delta", low=0.0, high=1.0, low_open=True, high_open=True,
                   caller="rho_for_target",
                   fix="zCDP implies (epsilon, delta)-DP only for delta > 0; pass e.g. 1e-6.")
    lo, hi = 0.0, max(eps, 1.0)
    while zcdp_to_dp(hi, d) <= eps:
        lo, hi = hi, 2.0 * hi
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if zcdp_to_dp(mid, d) <= eps:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-15 * hi:
            break
    return lo


# ----------------------------------------------------------------------------------------------
# Heterogeneous composition of a list of events
# ----------------------------------------------------------------------------------------------
class _NotApplicable(Exception):
    """A composition rule does not apply to these events at this delta."""


@dataclass(frozen=True)
class _Summary:
    uses: int
    eps_sum: float
    delta_sum: float
    eps_sq_sum: float
    drift: float
    eps_max: float
    delta_max: float
    rho: float | None

    @classmethod
    def of(cls, events: Iterable[PrivacyEvent]) -> _Summary:
        ev = list(events)
        if not ev:
            return cls(0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
        c = [e.count for e in ev]
        eps = [e.epsilon for e in ev]
        zc = [e.zcdp for e in ev]
        rho = None if any(z is None for z in zc) else math.fsum(n * z for n, z in zip(c, zc))
        drift = math.fsum(n * _drift(x) for n, x in zip(c, eps))
        return cls(
            uses=sum(c),
            eps_sum=math.fsum(n * x for n, x in zip(c, eps)),
            delta_sum=min(math.fsum(n * e.delta for n, e in zip(c, ev)), 1.0),
            eps_sq_sum=math.fsum(n * x * x for n, x in zip(c, eps)),
            drift=drift,
            eps_max=max(eps),
            delta_max=max(e.delta for e in ev),
            rho=rho,
        )


def _basic(s: _Summary, target: float) -> tuple[float, float]:
    if s.delta_sum > target * (1.0 + 1e-12):
        raise _NotApplicable(
            f"basic composition: the events' own deltas sum to {s.delta_sum:.6g}, more than "
            f"delta={target:.6g}"
        )
    return s.eps_sum, s.delta_sum


def _advanced(s: _Summary, target: float) -> tuple[float, float]:
    slack = target - s.delta_sum
    if not slack > 1e-12 * target:  # a rounding residue is no slack
        raise _NotApplicable(
            f"advanced composition needs a slack delta' = delta - (sum of the events' deltas "
            f"= {s.delta_sum:.6g}) > 0; got delta={target:.6g}. Pass a larger delta (e.g. 1e-6)"
        )
    if s.uses == 0:
        return 0.0, target
    eps = math.sqrt(2.0 * math.log(1.0 / slack) * s.eps_sq_sum) + s.drift
    return eps, target


def _kov(s: _Summary, target: float) -> tuple[float, float]:
    if s.uses == 0:
        return 0.0, target
    rr = _kov_rr_target(target, s.delta_max, s.uses)
    if rr < 0.0:
        raise _NotApplicable(
            f"optimal (KOV) composition needs delta >= 1 - (1 - delta_max)^k = "
            f"{-math.expm1(s.uses * math.log1p(-s.delta_max)):.6g}; got delta={target:.6g}"
        )
    return _kov_epsilon_rr(s.eps_max, s.uses, rr), target


def _zcdp(s: _Summary, target: float) -> tuple[float, float]:
    if s.rho is None:
        raise _NotApplicable(
            "zCDP composition: an event has delta > 0 and no zCDP cost (rho); record rho for it"
        )
    if s.rho == 0.0:
        return 0.0, target
    if target <= 0.0:
        raise _NotApplicable(
            "zCDP composition needs delta > 0 to convert to (epsilon, delta); pass e.g. delta=1e-6"
        )
    return zcdp_to_dp(s.rho, target), target


_RULES = {"basic": _basic, "advanced": _advanced, "kov": _kov, "zcdp": _zcdp}


def _compose(s: _Summary, delta: float | None, method: str,
             caller: str) -> tuple[float, float, str]:
    """(epsilon, delta, rule that attains it) for the summarised events."""
    target = s.delta_sum if delta is None else float(delta)
    found: list[tuple[float, float, str]] = []
    if method == "best":
        reasons = []
        for m in _METHODS:
            try:
                found.append((*_RULES[m](s, target), m))
            except _NotApplicable as exc:
                reasons.append(str(exc))
        if not found:
            raise ValidationError(
                f"{caller}: no composition rule applies at delta={target:.6g}: "
                + "; ".join(reasons) + "."
            )
    else:
        try:
            found.append((*_RULES[method](s, target), method))
        except _NotApplicable as exc:
            raise ValidationError(f"{caller}: cannot compose with method={method!r}: {exc}.") \
                from None
        if method != "basic":
            # cap by basic composition whenever it meets the requested delta
            try:
                found.append((*_basic(s, target), "basic"))
            except _NotApplicable:
                pass
    order = {"basic": 0, "kov": 1, "advanced": 2, "zcdp": 3}
    return min(found, key=lambda r: (r[0], order[r[2]]))


def compose_epsilon(epsilon: float, k: int, delta: float = 0.0, *, method: str = "best",
                    bounded_range: bool = False) -> float:
    """Total epsilon of ``k`` uses of an ``epsilon``-DP mechanism at total ``delta``.

    The same computation a :class:`Ledger` holding ``k`` such events performs.

    Parameters
    ----------
    epsilon : float
        Per-use epsilon ``> 0``.
    k : int
        Number of uses ``>= 1``.
    delta : float, default=0.0
        Total delta of the statement (the events are pure, so all of it is slack).
    method : {"best", "basic", "advanced", "kov", "zcdp"}, default="best"
        Composition rule; see the module docstring.
    bounded_range : bool, default=False
        The uses are exponential mechanisms (``epsilon``-bounded range), whose zCDP cost is
        ``epsilon^2 / 8`` instead of ``epsilon^2 / 2``.

    Returns
    -------
    float
    """
    caller = "compose_epsilon"
    e0 = _check_finite_epsilon(epsilon, caller=caller)
    k = check_int(k, "k", low=1, caller=caller)
    d = check_delta(delta, caller=caller)
    method = _check_method(method, caller)
    _check_bool(bounded_range, "bounded_range", caller)
    return _compose_homogeneous(e0, k, d, method, bounded_range, caller)


def _compose_homogeneous(e0: float, k: int, delta: float, method: str, bounded_range: bool,
                         caller: str) -> float:
    rho = rho_exponential(e0) if bounded_range else None
    s = _Summary.of([PrivacyEvent("step", e0, 0.0, rho, k)])
    return _compose(s, delta, method, caller)[0]


def per_step_epsilon(total_epsilon: float, k: int, delta: float = 0.0, *, method: str = "best",
                     bounded_range: bool = False) -> float:
    """Largest per-step epsilon such that ``k`` steps compose to at most ``total_epsilon``.

    Inverts :func:`compose_epsilon` (the composed epsilon is continuous and increasing in the
    per-step epsilon: bracketing, Brent's method, then a confirming check), so a :class:`Budget`
    of ``(total_epsilon, delta)`` with the same ``method`` accepts all ``k`` steps:
    ``compose_epsilon(per_step_epsilon(E, k, d), k, d) <= E`` and equals ``E`` up to about 1e-13
    relative. The private greedy algorithms call it with basic composition (Mitrovic et al.
    2017) or advanced composition (Dwork, Rothblum & Vadhan 2010), or ``"best"``.

    Runtime: a few dozen compositions; each is O(1) except optimal (KOV) composition, O(k)
    (about a second in all for k = 1e5).

    Parameters
    ----------
    total_epsilon : float
        The total budget ``> 0``.
    k : int
        Number of steps ``>= 1``.
    delta : float, default=0.0
        Total delta; with ``delta = 0`` only basic composition applies.
    method : {"best", "basic", "advanced", "kov", "zcdp"}, default="best"
        ``"best"`` returns the largest per-step epsilon over the rules that apply at ``delta``.
    bounded_range : bool, default=False
        The steps are exponential mechanisms (zCDP cost ``epsilon^2 / 8``).

    Returns
    -------
    float

    Examples
    --------
    >>> round(per_step_epsilon(1.0, 10), 6)
    0.1
    >>> e = per_step_epsilon(1.0, 100, 1e-6, method="advanced")
    >>> round(compose_epsilon(e, 100, 1e-6, method="advanced"), 9)
    1.0
    """
    caller = "per_step_epsilon"
    total = _check_finite_epsilon(total_epsilon, "total_epsilon", caller=caller)
    k = check_int(k, "k", low=1, caller=caller)
    d = check_delta(delta, caller=caller)
    method = _check_method(method, caller)
    _check_bool(bounded_range, "bounded_range", caller)
    methods = _METHODS if method == "best" else (method,)
    best = -math.inf
    errors: list[str] = []
    for m in methods:
        try:
            best = max(best, _invert(total, k, d, m, bounded_range, caller))
        except ValidationError as exc:
            errors.append(str(exc))
    if best == -math.inf:
        raise ValidationError(" ".join(errors))
    return best


def _invert(total: float, k: int, delta: float, method: str, bounded_range: bool,
            caller: str) -> float:
    def f(e0: float) -> float:
        return _compose_homogeneous(e0, k, delta, method, bounded_range, caller)

    lo = total / k
    f(lo)  # raises ValidationError when the rule does not apply at this delta
    while lo > 0.0 and f(lo) > total:
        lo = math.nextafter(lo, 0.0)
    hi = 2.0 * lo
    for _ in range(2000):
        if f(hi) > total:
            break
        lo, hi = hi, 2.0 * hi
    if lo > 0.0:
        # Brent's method on the continuous, increasing composed epsilon, then step down until
        # the composition is confirmed to fit (rounding may put the root a hair above)
        root = optimize.brentq(lambda e: f(e) - total, lo, hi, xtol=1e-300, rtol=1e-14,
                               maxiter=200)
        for r in (0.0, 1e-15, 1e-14, 1e-13, 1e-12, 1e-11, 1e-10):
            cand = root * (1.0 - r)
            if lo <= cand and f(cand) <= total:
                return cand
    for _ in range(400):  # fallback: plain bisection keeping f(lo) <= total
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi or hi - lo <= 1e-14 * hi:
            break
        if f(mid) <= total:
            lo = mid
        else:
            hi = mid
    return lo


# ----------------------------------------------------------------------------------------------
# Ledger, Budget and the report
# ----------------------------------------------------------------------------------------------
def _fmt(x: float) -> str:
    return f"{x:.6g}"


@dataclass(frozen=True)
class PrivacyReport:
    """The privacy actually spent by a release (``Result.privacy``).

    Attributes
    ----------
    epsilon, delta : float
        The release is ``(epsilon, delta)``-differentially private.
    composition : str
        The composition rule that gives this statement (a key of :data:`COMPOSITIONS`).
    backend : str
        The noise backend that drew the noise (``"numpy"`` is seeded and fast, for simulation;
        it is not hardened against floating-point attacks).
    events : tuple of PrivacyEvent
        Every mechanism use, in order.
    rho : float or None
        Total zCDP cost when every event has one.
    neighbouring : str
        The neighbouring relation the guarantee refers to, as stated by the algorithm.
    """

    epsilon: float
    delta: float
    composition: str
    backend: str
    events: tuple[PrivacyEvent, ...] = ()
    rho: float | None = None
    neighbouring: str = ""

    @property
    def uses(self) -> int:
        """Number of mechanism uses (events weighted by their count)."""
        return sum(e.count for e in self.events)

    def _uses_text(self) -> str:
        groups: dict[tuple, int] = {}
        for e in self.events:
            key = (e.mechanism, e.epsilon, e.delta, e.rho)
            groups[key] = groups.get(key, 0) + e.count
        parts = []
        for (mech, eps, dlt, rho), n in list(groups.items())[:5]:
            cost = f"epsilon={_fmt(eps)}" if math.isfinite(eps) else f"rho={_fmt(rho or 0.0)}"
            if dlt > 0:
                cost += f", delta={_fmt(dlt)}"
            parts.append(f"{n} x {mech} ({cost})")
        if len(groups) > 5:
            parts.append(f"and {len(groups) - 5} more kinds")
        return "; ".join(parts)

    def __str__(self) -> str:
        if not self.events:
            return "(epsilon=0, delta=0)-differential privacy: no mechanism was used."
        text = (
            f"(epsilon={_fmt(self.epsilon)}, delta={_fmt(self.delta)})-differential privacy, "
            f"by {COMPOSITIONS.get(self.composition, self.composition)} over {self.uses} "
            f"mechanism use{'s' if self.uses != 1 else ''} [{self._uses_text()}]"
        )
        if self.neighbouring:
            text += f"; neighbouring datasets: {self.neighbouring}"
        return text + f"; noise backend: {self.backend}."

    def __repr__(self) -> str:
        return (
            f"PrivacyReport(epsilon={self.epsilon!r}, delta={self.delta!r}, "
            f"composition={self.composition!r}, backend={self.backend!r}, "
            f"uses={self.uses}, rho={self.rho!r})"
        )


_BACKEND_TAG = re.compile(r"backend=([^;,\s]+)")


def _backend_of(events: Iterable[PrivacyEvent]) -> str:
    tags = list(dict.fromkeys(m.group(1) for e in events for m in _BACKEND_TAG.finditer(e.note)))
    return ", ".join(tags) if tags else "unspecified"


@dataclass
class Ledger:
    """An append-only record of every mechanism use, with composition.

    Mechanisms call :meth:`record` *before* drawing noise. :meth:`total` composes the events by a
    rule of :data:`COMPOSITIONS`; :meth:`report` packages the result as a :class:`PrivacyReport`.

    Examples
    --------
    >>> led = Ledger()
    >>> led.record(PrivacyEvent.exponential(0.1, count=50))
    >>> led.total()
    (5.0, 0.0)
    >>> eps, delta = led.total(delta=1e-6)          # the tightest rule at delta = 1e-6
    >>> round(eps, 2), delta
    (1.66, 1e-06)
    """

    events: list[PrivacyEvent] = field(default_factory=list)

    def record(self, event: PrivacyEvent) -> None:
        """Append ``event`` (a :class:`PrivacyEvent`)."""
        if not isinstance(event, PrivacyEvent):
            raise ParameterTypeError(
                f"Ledger.record expects a PrivacyEvent; got {type(event).__name__}."
            )
        self.events.append(event)

    def spend(self, event: PrivacyEvent) -> None:
        """Same as :meth:`record` (a :class:`Budget` checks its limit first)."""
        self.record(event)

    def __len__(self) -> int:
        return len(self.events)

    @property
    def uses(self) -> int:
        """Number of mechanism uses (events weighted by their count)."""
        return sum(e.count for e in self.events)

    @property
    def rho(self) -> float | None:
        """Total zCDP cost, or ``None`` when some event has no zCDP guarantee."""
        return _Summary.of(self.events).rho

    def total(self, delta: float | None = None, method: str = "best") -> tuple[float, float]:
        """The ``(epsilon, delta)`` spent so far under a composition rule.

        Parameters
        ----------
        delta : float or None, default=None
            Target total delta in ``[0, 1)``. ``None`` means the sum of the events' own deltas
            (so only basic composition applies, with no slack).
        method : {"best", "basic", "advanced", "kov", "zcdp"}, default="best"
            Composition rule (see the module docstring); ``"best"`` takes the smallest epsilon
            among the rules that apply at ``delta``.

        Returns
        -------
        (epsilon, delta) : tuple of float
            The ledger is ``(epsilon, delta)``-DP, with ``delta`` at most the requested one
            (basic composition reports the events' own delta sum).

        Raises
        ------
        ValidationError
            When the rule does not apply at ``delta`` (advanced or zCDP with no slack,
            a delta below the events' own deltas).
        """
        eps, dlt, _ = self._compose(delta, method, "Ledger.total")
        return eps, dlt

    def _compose(self, delta: float | None, method: str, caller: str) -> tuple[float, float, str]:
        if delta is not None:
            delta = check_delta(delta, caller=caller)
        method = _check_method(method, caller)
        return _compose(_Summary.of(self.events), delta, method, caller)

    def report(self, delta: float | None = None, method: str = "best", *,
               backend: str | None = None, neighbouring: str = "") -> PrivacyReport:
        """A :class:`PrivacyReport` of the spend (see :meth:`total` for the parameters).

        ``backend=None`` reads the ``backend=...`` tag that the library's mechanisms write in
        each event's note (``"unspecified"`` when there is none).
        """
        eps, dlt, used = self._compose(delta, method, "Ledger.report")
        return PrivacyReport(epsilon=eps, delta=dlt, composition=used,
                             backend=_backend_of(self.events) if backend is None else str(backend),
                             events=tuple(self.events), rho=self.rho,
                             neighbouring=str(neighbouring))

    def copy(self) -> Ledger:
        """A ledger with the same events (events are immutable, so this is a full copy)."""
        return Ledger(list(self.events))

    def __repr__(self) -> str:
        return f"Ledger(events={len(self.events)}, uses={self.uses})"


class Budget(Ledger):
    """A ledger with a limit: a spend that would exceed ``(epsilon, delta)`` is refused.

    The check runs in :meth:`record` (and its alias :meth:`spend`), which every mechanism calls
    *before* drawing noise, so a refused step releases nothing and leaves the budget unchanged.
    Composition follows ``method``; with ``delta = 0`` only basic composition applies. A
    floating-point slack of 1e-9 relative is allowed so that a budget split by
    :func:`per_step_epsilon` is accepted in full.

    Parameters
    ----------
    epsilon : float
        Total epsilon ``> 0``.
    delta : float, default=0.0
        Total delta in ``[0, 1)``.
    method : {"best", "basic", "advanced", "kov", "zcdp"}, default="best"
        Composition rule the limit is checked under.

    Raises
    ------
    BudgetExceededError
        From :meth:`record` / :meth:`spend` when the spend would exceed the budget.

    Examples
    --------
    >>> b = Budget(1.0)
    >>> b.spend(PrivacyEvent.pure("laplace", 0.6))
    >>> b.can_spend(PrivacyEvent.pure("laplace", 0.6))
    False
    """

    def __init__(self, epsilon: float, delta: float = 0.0, *, method: str = "best"):
        self.epsilon = _check_finite_epsilon(epsilon, caller="Budget")
        self.delta = check_delta(delta, caller="Budget")
        self.method = _check_method(method, "Budget")
        self.events = []

    def _check(self, event: PrivacyEvent) -> str:
        """Empty string when ``event`` fits, else why it does not."""
        s = _Summary.of([*self.events, event])
        try:
            eps, dlt, used = _compose(s, self.delta, self.method, "Budget")
        except ValidationError as exc:
            return f"the spend cannot be composed within the budget ({exc})"
        if eps > self.epsilon * (1.0 + _BUDGET_RTOL):
            return (f"the total would be epsilon={_fmt(eps)}, delta={_fmt(dlt)} by the "
                    f"tightest allowed rule ({used})")
        return ""

    def can_spend(self, event: PrivacyEvent) -> bool:
        """Whether :meth:`spend` would accept ``event``."""
        if not isinstance(event, PrivacyEvent):
            raise ParameterTypeError(f"Budget.can_spend expects a PrivacyEvent; got "
                                     f"{type(event).__name__}.")
        return self._check(event) == ""

    def record(self, event: PrivacyEvent) -> None:
        """Append ``event`` if the budget allows it, else raise :class:`BudgetExceededError`."""
        if not isinstance(event, PrivacyEvent):
            raise ParameterTypeError(
                f"Budget.record expects a PrivacyEvent; got {type(event).__name__}."
            )
        why = self._check(event)
        if not why:
            self.events.append(event)
            return
        try:
            spent_eps, spent_dlt, _ = _compose(_Summary.of(self.events), self.delta,
                                               self.method, "Budget")
            spent = f"epsilon={_fmt(spent_eps)}, delta={_fmt(spent_dlt)}"
        except ValidationError:
            spent = f"{self.uses} uses"
        request = (f"{event.count} x {event.mechanism} (epsilon={_fmt(event.epsilon)}, "
                   f"delta={_fmt(event.delta)}"
                   + (f", rho={_fmt(event.rho)}" if event.rho is not None else "") + ")")
        raise BudgetExceededError(
            f"{self!r} refuses {request}: already spent {spent}; {why}, above the budget "
            f"epsilon={_fmt(self.epsilon)}, delta={_fmt(self.delta)}. Nothing was released. "
            "Raise the budget or lower the per-step epsilon (see per_step_epsilon)."
        )

    def spend(self, event: PrivacyEvent) -> None:
        """Same as :meth:`record`."""
        self.record(event)

    def total(self, delta: float | None = None,
              method: str | None = None) -> tuple[float, float]:
        """Spend so far; defaults to the budget's own delta and composition rule."""
        return super().total(self.delta if delta is None else delta,
                             self.method if method is None else method)

    def report(self, delta: float | None = None, method: str | None = None, *,
               backend: str | None = None, neighbouring: str = "") -> PrivacyReport:
        """A :class:`PrivacyReport`; defaults to the budget's delta and composition rule."""
        return super().report(self.delta if delta is None else delta,
                              self.method if method is None else method,
                              backend=backend, neighbouring=neighbouring)

    @property
    def spent(self) -> tuple[float, float]:
        """``(epsilon, delta)`` spent under the budget's rule."""
        return self.total()

    def copy(self) -> Budget:
        b = Budget(self.epsilon, self.delta, method=self.method)
        b.events = list(self.events)
        return b

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Budget):
            return NotImplemented
        return ((self.epsilon, self.delta, self.method, self.events)
                == (other.epsilon, other.delta, other.method, other.events))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (f"Budget(epsilon={_fmt(self.epsilon)}, delta={_fmt(self.delta)}, "
                f"method={self.method!r})")

