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

Comparisons are exact: the epsilons, deltas and zCDP costs are summed as rationals (the exact
values of the floats), and the nonlinear levels of ``"advanced"`` and ``"zcdp"`` are rounded
outward, so that the granted costs never exceed the budget by any amount, however small. A float
is not the decimal it prints as: ``0.1`` is slightly above 1/10, so ten releases of ``0.1`` do
not fit ``Budget(1.0)`` (the tenth finds ``0.09999999999999995`` left), while the pieces of
:func:`~dpsubmod.privacy.split.split_budget` always fit their total.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal, localcontext
from fractions import Fraction

from ._filter_names import FILTERS
from .events import PrivacyEvent
from .exact import float_down, float_up
from .zcdp import rho_for_target, zcdp_to_dp

__all__ = ["FILTERS", "FilterLevel", "ExactSums", "filter_level", "default_slack"]


#: Relative inflation of a level computed in floating point (logarithms, square roots, a few
#: products: each within one or two units in the last place), so that the rounded-out value is
#: an upper bound on the exact one; 2**-40 covers several hundred such roundings.
OUTWARD = 2.0 ** -40


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


def _outward(level: float) -> float:
    """A level computed in floating point, rounded up past its possible rounding error."""
    if level == 0.0 or not math.isfinite(level):
        return level
    return math.nextafter(level * (1.0 + OUTWARD), math.inf)


@dataclass(frozen=True)
class ExactSums:
    """The exact sums of a sequence of events: what the filters compare with a budget.

    A budget keeps the sums of its charged events and extends them by each request, so that a
    charge costs one rational addition per new event instead of a sum over every event.

    Attributes
    ----------
    uses : int
        How many events were summed.
    epsilon, delta : Fraction or None
        ``sum n_m eps_m`` and ``sum n_m delta_m`` (``None`` once an epsilon is infinite).
    rho : Fraction or None
        ``sum n_m rho_m`` (``None`` once an event has no finite zCDP cost).
    """

    uses: int = 0
    epsilon: Fraction | None = Fraction(0)
    delta: Fraction | None = Fraction(0)
    rho: Fraction | None = Fraction(0)

    def extend(self, events: Iterable[PrivacyEvent]) -> ExactSums:
        """The sums with ``events`` appended."""
        e, d, r, k = self.epsilon, self.delta, self.rho, self.uses
        floor = math.ulp(0.0)
        for ev in events:
            k += 1
            n = ev.count
            if e is not None and d is not None and math.isfinite(ev.epsilon):
                e += n * Fraction(ev.epsilon)
                d += n * Fraction(ev.delta)
            else:
                e = d = None
            z = ev.zcdp
            if r is not None and z is not None and math.isfinite(z):
                # a positive epsilon whose zCDP cost underflowed to 0 costs at most the
                # smallest float
                r += n * Fraction(z if z > 0.0 or ev.epsilon == 0.0 else floor)
            else:
                r = None
        return ExactSums(k, e, d, r)


def filter_level(events: Sequence[PrivacyEvent], epsilon: float, delta: float, rule: str,
                 slack: float, *, sums: ExactSums | None = None) -> FilterLevel:
    """The :class:`FilterLevel` of ``events`` against a budget ``(epsilon, delta)``.

    ``fits`` is decided exactly (see the module docstring); ``epsilon`` and ``delta`` are the
    level and the committed delta rounded up, ``remaining_epsilon`` is rounded down. ``sums``,
    when given, are the :class:`ExactSums` of ``events`` (kept by the caller).
    """
    if sums is None:
        sums = ExactSums().extend(events)
    counts = [e.count for e in events]
    if rule == "zcdp":
        return _zcdp(events, sums, epsilon, slack)
    eps = [e.epsilon for e in events]
    if sums.epsilon is None or sums.delta is None:
        return FilterLevel(False, math.inf, 0.0, None,
                           f"an event has only a zCDP guarantee (epsilon=inf), which the "
                           f"{rule!r} rule cannot compose; use Budget(..., composition='zcdp')",
                           0.0)
    e_exact, d_exact = sums.epsilon, sums.delta
    e_sum, d_sum = float_up(e_exact), float_up(d_exact)
    limit = Fraction(epsilon)
    if rule == "basic":
        why = ""
        if e_exact > limit:
            why = f"the epsilons would sum to {_exact_text(e_exact, limit)}"
        elif d_exact > Fraction(delta):
            why = f"the deltas would sum to {_exact_text(d_exact, Fraction(delta))}"
        return FilterLevel(not why, e_sum, d_sum, None, why,
                           float_down(max(limit - e_exact, Fraction(0))))
    # advanced (Whitehouse et al. 2023)
    d_events = Fraction(delta) - Fraction(slack)
    # sqrt(V) from epsilons scaled by the largest: eps**2 underflows to 0 below 1e-162, which
    # would make the level 0 and admit anything
    log_term = -math.log(slack)
    s_v, curved = _curve(counts, eps, log_term)
    v = s_v * s_v
    # min(sum, curved) <= epsilon exactly when either is; the sum is exact, the curve rounded up
    fits_level = e_exact <= limit or curved <= epsilon
    level = min(e_sum, curved)
    committed = float_up(d_exact + (Fraction(slack) if events else Fraction(0)))
    why = ""
    if d_exact > d_events:
        why = (f"the events' own deltas would sum to {d_sum:.6g}, above delta - slack = "
               f"{float(d_events):.6g}")
    elif not fits_level:
        why = (f"the filter's level would be {level:.6g} (sum of epsilons {e_sum:.6g}, "
               f"sqrt(2 ln(1/slack) V) + V/2 with V = {v:.6g})")
    return FilterLevel(not why, level, committed, None, why,
                       _advanced_remaining(counts, eps, e_exact, limit, s_v, log_term, epsilon))


def _curve(counts: list[int], eps: list[float], log_term: float) -> tuple[float, float]:
    """``sqrt(V)`` and the advanced filter's curve ``sqrt(2 L V) + V/2`` rounded outward.

    ``sqrt(V)`` is computed from the epsilons scaled by the largest: ``eps**2`` underflows to 0
    below 1e-162, which would make the level 0 and admit anything.
    """
    top = max(eps, default=0.0)
    s_v = top * math.sqrt(_fsum(n * (x / top) ** 2 for n, x in zip(counts, eps))) if top else 0.0
    return s_v, _outward(math.sqrt(2.0 * log_term) * s_v + 0.5 * (s_v * s_v))


def _advanced_remaining(counts: list[int], eps: list[float], e_exact: Fraction, limit: Fraction,
                        s_v: float, log_term: float, epsilon: float) -> float:
    """The largest epsilon of one more pure event the advanced filter admits (rounded down)."""
    by_sum = float_down(max(limit - e_exact, Fraction(0)))
    # the largest V with sqrt(2 L V) + V/2 <= epsilon: sqrt(V) = sqrt(2L + 2 eps) - sqrt(2L),
    # written as 2 eps / (sqrt(2L + 2 eps) + sqrt(2L)) with the factors of 2 taken out, since
    # 2 eps and V itself overflow for an epsilon near the float limit
    root_l = math.sqrt(log_term)
    s_star = epsilon / (math.sqrt(log_term + epsilon) + root_l) * math.sqrt(2.0)
    # sqrt(V* - V) = sqrt((s* - s_v)(s* + s_v)), each factor finite
    extra = math.sqrt(s_star - s_v) * math.sqrt(s_star + s_v) if s_star > s_v else 0.0
    # the filter's own curve is rounded outward, which may refuse this answer: bisect down to
    # the largest value it admits (the rounding matters most when little is left)
    def admits(x: float) -> bool:
        return _curve([*counts, 1], [*eps, x], log_term)[1] <= epsilon

    if extra > by_sum and not admits(extra):
        lo, hi = by_sum, extra
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            if mid <= lo or mid >= hi:
                break
            if admits(mid):
                lo = mid
            else:
                hi = mid
        extra = lo
    return extra if extra > by_sum else by_sum


def _exact_text(total: Fraction, limit: Fraction) -> str:
    """The exact sum, with enough digits to show that it exceeds the limit."""
    for digits in (6, 10, 17, 25, 40):
        with localcontext() as ctx:
            ctx.prec = digits
            ctx.rounding = ROUND_HALF_EVEN
            text = str(Decimal(total.numerator) / Decimal(total.denominator))
        if Fraction(Decimal(text)) > limit:
            break
    return text + ("" if digits == 6 else " (exactly)")


def _fsum(terms: Iterable[float]) -> float:
    """An exact sum, ``inf`` when it leaves the float range (fsum raises instead)."""
    try:
        return math.fsum(terms)
    except OverflowError:
        return math.inf


@functools.lru_cache(maxsize=256)
def _rho_star(epsilon: float, slack: float) -> float:
    # a pure function of the budget, asked again at every charge
    return rho_for_target(epsilon, slack)


def _zcdp(events: Sequence[PrivacyEvent], sums: ExactSums, epsilon: float,
          slack: float) -> FilterLevel:
    rho_star = _rho_star(epsilon, slack)
    if any(e.zcdp is None for e in events):
        return FilterLevel(False, math.inf, 0.0, None,
                           "an event has delta > 0 and no zCDP cost (rho), which the 'zcdp' rule "
                           "cannot compose; use Budget(..., composition='basic') or 'advanced'",
                           0.0)
    rho_exact = sums.rho
    over = rho_exact is None or rho_exact > Fraction(rho_star)
    rho = math.inf if rho_exact is None else float_up(rho_exact)
    why = (f"the zCDP costs would sum to rho={rho:.6g}, above rho*={rho_star:.6g} (the largest "
           f"rho within epsilon at delta={slack:.6g})") if over else ""
    level = _outward(zcdp_to_dp(rho, slack))
    left = Fraction(0) if over else Fraction(rho_star) - rho_exact  # type: ignore[operator]
    # the largest pure epsilon whose cost eps^2 / 2 fits what is left, checked exactly
    rem = math.sqrt(2.0 * float_down(left))
    while rem > 0.0 and Fraction(rem) ** 2 / 2 > left:
        rem = math.nextafter(rem, 0.0)
    return FilterLevel(not why, level, slack if events else 0.0, rho, why, rem)
