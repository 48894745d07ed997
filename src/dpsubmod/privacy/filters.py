"""Privacy filters: whether one more release fits a budget when each was chosen adaptively.

A user may choose each call's epsilon after seeing earlier outputs. The rule deciding whether the
next call fits must then be a *privacy filter* (Rogers, Roth, Ullman & Vadhan 2016): a stopping
rule on the sequence of privacy parameters under which the whole interaction is
``(epsilon, delta)``-DP. Composition theorems for parameters fixed in advance (optimal
composition, PLD composition of trade-off curves) are not filters and are never used here; they
serve only inside one call (:mod:`~dpsubmod.privacy.composition`).

Rules (``composition=`` of a :class:`~dpsubmod.privacy.budget.Budget`)
--------------------------------------------------------------------
``"basic"``
    Admit while ``sum eps_m <= epsilon`` and ``sum delta_m <= delta`` (Rogers et al. 2016,
    Theorem 3.6: basic composition is a filter).
``"advanced"``
    The filter of Whitehouse, Ramdas, Rogers & Wu (ICML 2023), which matches advanced
    composition including constants. With ``delta = slack + delta''``, admit while
    ``sum delta_m <= delta''`` and ``min(sum eps_m, sqrt(2 ln(1/slack) V) + V / 2) <= epsilon``
    with ``V = sum eps_m^2``. Taking the minimum with the sum is sound: the concentration event of
    that paper holds at every time at once (Ville's inequality), and on it the privacy loss is
    below both terms whatever rule stopped the interaction (derivation in docs/privacy.md).
``"zcdp"``
    A Renyi filter at every order (Feldman & Zrnic 2021): admit while ``sum rho_m <= rho*``,
    where ``rho*`` is the largest rho whose Canonne-Kamath-Steinke conversion at ``slack`` is
    within ``epsilon``. Pure events cost ``eps^2 / 2``, exponential mechanisms ``eps^2 / 8``;
    an event with ``delta > 0`` and no zCDP cost is refused.

A floating-point slack of 1e-9 relative is allowed, so that a budget split by
:func:`~dpsubmod.privacy.composition.split_budget` is accepted in full.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .events import PrivacyEvent
from .zcdp import rho_for_target, zcdp_to_dp

__all__ = ["FILTERS", "FilterLevel", "filter_level", "default_slack"]

#: Adaptive rules a Budget may use, with the reference printed in its statements.
FILTERS: dict[str, str] = {
    "basic": "basic composition as a privacy filter (Rogers, Roth, Ullman & Vadhan 2016)",
    "advanced": "the advanced-composition filter of Whitehouse, Ramdas, Rogers & Wu (ICML 2023)",
    "zcdp": "a zCDP (Renyi) filter (Feldman & Zrnic 2021) converted by Canonne, Kamath & "
            "Steinke 2020",
}

RTOL = 1e-9


def default_slack(rule: str, delta: float) -> float:
    """The part of ``delta`` a filter reserves for its concentration (or conversion) step.

    ``"advanced"`` keeps half of ``delta`` for the events' own deltas; ``"zcdp"`` uses all of it
    for the conversion (its events carry no delta); ``"basic"`` needs none.
    """
    if rule == "advanced":
        return 0.5 * delta
    if rule == "zcdp":
        return delta
    return 0.0


@dataclass(frozen=True)
class FilterLevel:
    """Where a sequence of events stands against a budget under one filter.

    Attributes
    ----------
    fits : bool
        The filter admits the whole sequence.
    epsilon : float
        The filter's level in epsilon units: the quantity it compares with the budget's epsilon.
    delta : float
        The delta committed: the events' own deltas, plus the slack once any event is charged.
    rho : float or None
        Total zCDP cost (``"zcdp"`` rule), else ``None``.
    why : str
        Why the sequence does not fit (empty when it fits).
    remaining_epsilon : float
        The largest epsilon of one more pure event that would still fit.
    """

    fits: bool
    epsilon: float
    delta: float
    rho: float | None
    why: str
    remaining_epsilon: float


def _over(x: float, limit: float) -> bool:
    # relative only: an absolute slack would let a budget below it (epsilon = 1e-320, or
    # delta = 0) be overspent
    return x > limit * (1.0 + RTOL)


def filter_level(events: Sequence[PrivacyEvent], epsilon: float, delta: float, rule: str,
                 slack: float) -> FilterLevel:
    """The :class:`FilterLevel` of ``events`` against a budget ``(epsilon, delta)``."""
    counts = [e.count for e in events]
    if rule == "zcdp":
        return _zcdp(events, counts, epsilon, slack)
    eps = [e.epsilon for e in events]
    if any(not math.isfinite(x) for x in eps):
        return FilterLevel(False, math.inf, 0.0, None,
                           f"an event has only a zCDP guarantee (epsilon=inf), which the "
                           f"{rule!r} rule cannot compose; use Budget(..., composition='zcdp')",
                           0.0)
    e_sum = _fsum(n * x for n, x in zip(counts, eps))
    d_sum = _fsum(n * e.delta for n, e in zip(counts, events))
    if rule == "basic":
        why = ""
        if _over(e_sum, epsilon):
            why = f"the epsilons would sum to {e_sum:.6g}"
        elif _over(d_sum, delta):
            why = f"the deltas would sum to {d_sum:.6g}"
        return FilterLevel(not why, e_sum, d_sum, None, why, max(epsilon - e_sum, 0.0))
    # advanced (Whitehouse et al. 2023)
    d_events = delta - slack
    # sqrt(V) from epsilons scaled by the largest: eps**2 underflows to 0 below 1e-162, which
    # would make the level 0 and admit anything
    top = max(eps, default=0.0)
    s_v = top * math.sqrt(_fsum(n * (x / top) ** 2 for n, x in zip(counts, eps))) if top else 0.0
    v = s_v * s_v
    log_term = -math.log(slack)
    level = min(e_sum, math.sqrt(2.0 * log_term) * s_v + 0.5 * v)
    committed = d_sum + (slack if events else 0.0)
    why = ""
    if _over(d_sum, d_events):
        why = (f"the events' own deltas would sum to {d_sum:.6g}, above delta - slack = "
               f"{d_events:.6g}")
    elif _over(level, epsilon):
        why = (f"the filter's level would be {level:.6g} (sum of epsilons {e_sum:.6g}, "
               f"sqrt(2 ln(1/slack) V) + V/2 with V = {v:.6g})")
    # the largest V with sqrt(2 L V) + V/2 <= epsilon: sqrt(V) = sqrt(2L + 2 eps) - sqrt(2L),
    # written as 2 eps / (sqrt(2L + 2 eps) + sqrt(2L)) with the factors of 2 taken out, since
    # 2 eps and V itself overflow for an epsilon near the float limit
    root_l = math.sqrt(log_term)
    s_star = epsilon / (math.sqrt(log_term + epsilon) + root_l) * math.sqrt(2.0)
    # sqrt(V* - V) = sqrt((s* - s_v)(s* + s_v)), each factor finite
    extra = math.sqrt(s_star - s_v) * math.sqrt(s_star + s_v) if s_star > s_v else 0.0
    rem = max(epsilon - e_sum, extra)
    return FilterLevel(not why, level, committed, None, why, rem)


def _fsum(terms: Iterable[float]) -> float:
    """An exact sum, ``inf`` when it leaves the float range (fsum raises instead)."""
    try:
        return math.fsum(terms)
    except OverflowError:
        return math.inf


def _zcdp(events: Sequence[PrivacyEvent], counts: list[int], epsilon: float,
          slack: float) -> FilterLevel:
    rho_star = rho_for_target(epsilon, slack)
    zc = [e.zcdp for e in events]
    if any(z is None for z in zc):
        return FilterLevel(False, math.inf, 0.0, None,
                           "an event has delta > 0 and no zCDP cost (rho), which the 'zcdp' rule "
                           "cannot compose; use Budget(..., composition='basic') or 'advanced'",
                           0.0)
    # a positive epsilon whose zCDP cost underflowed to 0 costs at most the smallest float
    floor = math.ulp(0.0)
    zc = [z if z > 0.0 or e.epsilon == 0.0 else floor for z, e in zip(zc, events)]
    rho = _fsum(n * z for n, z in zip(counts, zc))
    why = (f"the zCDP costs would sum to rho={rho:.6g}, above rho*={rho_star:.6g} (the largest "
           f"rho within epsilon at delta={slack:.6g})") if _over(rho, rho_star) else ""
    level = zcdp_to_dp(rho, slack)
    rem = math.sqrt(2.0 * max(rho_star - rho, 0.0))
    return FilterLevel(not why, level, slack if events else 0.0, rho, why, rem)
