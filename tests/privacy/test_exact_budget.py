"""Budgets compare exactly: the granted costs never exceed the limit by any amount.

Each check sums what a budget granted in exact rational arithmetic (the values the floats stand
for), and runs beside a control: the same check on a budget that keeps the former allowance of
1e-9 relative, which the check catches.
"""

from __future__ import annotations

import math
from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np
import pytest

from dpsubmod.constraints import UniformMatroid
from dpsubmod.errors import BudgetExceededError
from dpsubmod.functions import FacilityLocation
from dpsubmod.offline import maximize
from dpsubmod.privacy import Budget, PrivacyEvent
from dpsubmod.privacy.split import even_share, proportional_shares, split_budget
from dpsubmod.privacy.zcdp import rho_for_target, zcdp_to_dp


class LooseBudget(Budget):
    """The control: the former basic rule, admitting a relative overspend of 1e-9."""

    def can_charge(self, events):
        events = [events] if isinstance(events, PrivacyEvent) else list(events)
        total = math.fsum(e.count * e.epsilon for e in [*self.events, *events])
        return total <= self.epsilon * (1.0 + 1e-9)

    def charge(self, events):
        if not self.can_charge(events):
            raise BudgetExceededError("refused by the former rule")
        self._events.extend([events] if isinstance(events, PrivacyEvent) else events)


def granted_total(budget: Budget, requests: list[float]) -> Fraction:
    """Charge each request that the budget admits; the exact sum of what was granted."""
    granted = Fraction(0)
    for eps in requests:
        try:
            budget.charge(PrivacyEvent.pure("laplace", eps))
        except BudgetExceededError:
            continue
        granted += Fraction(eps)
    return granted


def test_the_issues_request_is_refused_and_the_control_grants_it():
    requests = [0.5, 0.50000000045]
    assert granted_total(Budget(1.0), requests) == Fraction(1, 2)
    assert granted_total(LooseBudget(1.0), requests) > 1  # the control overspends: caught


def test_a_request_1e_12_above_what_is_left_is_refused():
    for total, first in [(1.0, 0.3), (2.5, 1.7), (0.01, 0.004)]:
        b = Budget(total)
        b.charge(PrivacyEvent.pure("laplace", first))
        left = b.remaining
        assert Fraction(first) + Fraction(left) <= Fraction(total)  # rounded down
        assert not b.can_charge(PrivacyEvent.pure("laplace", left + 1e-12))
        with pytest.raises(BudgetExceededError):
            b.charge(PrivacyEvent.pure("laplace", left + 1e-12))
        assert len(b) == 1
        b.charge(PrivacyEvent.pure("laplace", left))  # what is left fits, exactly
        assert Fraction(first) + Fraction(left) <= Fraction(total)
        rest = b.remaining  # what rounding down left over: less than one unit in the last place
        assert rest <= math.ulp(total)
        assert not b.can_charge(PrivacyEvent.pure("laplace", math.nextafter(rest, 1.0)))
        loose = LooseBudget(total)
        loose.charge(PrivacyEvent.pure("laplace", first))
        assert loose.can_charge(PrivacyEvent.pure("laplace", left + 1e-12))  # control


def test_deltas_compare_exactly_too():
    b = Budget(1.0, 1e-6)
    b.charge(PrivacyEvent("gaussian", 0.1, 5e-7))
    assert not b.can_charge(PrivacyEvent("gaussian", 0.1, 5e-7 + 1e-18))
    assert b.can_charge(PrivacyEvent("gaussian", 0.1, float(Fraction(1e-6) - Fraction(5e-7))))


def test_floats_are_not_decimals_and_the_library_splits_fit():
    # ten releases of the float 0.1 (a hair above 1/10) overspend Budget(1.0) by 5.6e-17: the
    # tenth is refused, and its message shows the exact sum
    b = Budget(1.0)
    for _ in range(9):
        b.charge(PrivacyEvent.pure("laplace", 0.1))
    with pytest.raises(BudgetExceededError, match=r"sum to 1\.0000000000000001 \(exactly\)"):
        b.charge(PrivacyEvent.pure("laplace", 0.1))
    # the library's own splits always fit their total exactly
    for total in (0.1, 0.3, 1.0, 2.7, 1e-300, 1e5):
        for parts in (3, 7, 10, 49, 100):
            share = even_share(total, parts)
            assert parts * Fraction(share) <= Fraction(total)
            assert parts * Fraction(math.nextafter(share, math.inf)) > Fraction(total)
            b = Budget(total)
            b.charge(PrivacyEvent.pure("laplace", share, count=parts))
            step = split_budget(total, 0.0, parts, bounded_range=True).epsilon_step
            b = Budget(total)
            for _ in range(parts):
                b.charge(PrivacyEvent.exponential(step))
        shares = proportional_shares(total, [0.2, 0.5, 0.3])
        assert sum(Fraction(x) for x in shares) <= Fraction(total)


@pytest.mark.parametrize("method, kw", [
    ("private_greedy", {}), ("private_continuous_greedy", {}), ("dpcg", {}),
    ("dpcg", {"noise": "gaussian", "delta": 1e-6}),
])
def test_a_call_may_spend_a_whole_budget_of_its_own_epsilon(method, kw):
    rng = np.random.default_rng(0)
    f = FacilityLocation.from_records(rng.random((30, 2)), rng.random((6, 2)), bandwidth=0.3)
    delta = kw.pop("delta", 0.0)
    for eps in (0.1, 0.3, 1.0, 2.7):
        b = Budget(eps, delta)
        res = maximize(f, UniformMatroid(6, 2), method=method, epsilon=eps, delta=delta, budget=b,
                       rng=1, backend="numpy", **kw)
        assert Fraction(res.privacy.epsilon) <= Fraction(eps)
        assert Fraction(res.privacy.delta) <= Fraction(delta)


def _advanced_level_decimal(eps_seq: list[float], slack: float) -> Decimal:
    """The advanced filter's level, min(sum, sqrt(2 ln(1/slack) V) + V/2), at 60 digits."""
    with localcontext() as ctx:
        ctx.prec = 60
        e = [Decimal(x) for x in eps_seq]
        v = sum(x * x for x in e)
        curve = (2 * (1 / Decimal(slack)).ln() * v).sqrt() + v / 2
        return min(sum(e), curve)


@pytest.mark.parametrize("eps, delta", [(1.0, 1e-6), (0.5, 1e-8), (3.0, 1e-5)])
def test_the_advanced_filter_never_grants_above_its_level_at_high_precision(eps, delta):
    gen = np.random.default_rng(4)
    b = Budget(eps, delta, "advanced")
    granted: list[float] = []
    for _ in range(400):
        step = float(gen.uniform(0.001, 0.05))
        if b.can_charge(PrivacyEvent.pure("m", step)):
            b.charge(PrivacyEvent.pure("m", step))
            granted.append(step)
    left = b.remaining
    assert left > 0.0 and b.can_charge(PrivacyEvent.pure("m", left))
    assert not b.can_charge(PrivacyEvent.pure("m", left * (1 + 1e-9) + 1e-12))
    b.charge(PrivacyEvent.pure("m", left))
    granted.append(left)
    assert _advanced_level_decimal(granted, delta / 2) <= Decimal(eps)


@pytest.mark.parametrize("eps, delta", [(1.0, 1e-6), (0.3, 1e-9)])
def test_the_zcdp_filter_sums_exactly_and_refuses_just_above(eps, delta):
    b = Budget(eps, delta, "zcdp")
    rho_star = rho_for_target(eps, delta)
    b.charge(PrivacyEvent.zcdp_only("gaussian", rho_star / 3))
    left = Fraction(rho_star) - Fraction(rho_star / 3)
    rest = float(left)
    if Fraction(rest) > left:
        rest = math.nextafter(rest, 0.0)
    assert b.can_charge(PrivacyEvent.zcdp_only("gaussian", rest))
    assert not b.can_charge(PrivacyEvent.zcdp_only("gaussian", math.nextafter(
        float(left), math.inf) * (1 + 1e-12)))
    b.charge(PrivacyEvent.zcdp_only("gaussian", rest))
    assert zcdp_to_dp(b.rho, delta) <= eps
    # the pure cost eps^2 / 2 is rounded up, never below the exact square
    for e in (0.1, 0.3, 1.0 / 3.0, 7.7):
        assert Fraction(PrivacyEvent.pure("m", e).zcdp) >= Fraction(e) ** 2 / 2
