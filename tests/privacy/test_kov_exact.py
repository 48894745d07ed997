"""Optimal composition never understates: the epsilon it returns is checked against the exact
privacy profile of k-fold randomized response evaluated with 80 significant digits."""

from __future__ import annotations

import math
from decimal import Decimal, localcontext
from math import comb

import pytest

from dpsubmod.privacy.kov import _kov_epsilon_rr, kov_epsilon_rr


def exact_delta(eps: float, eps0: float, k: int) -> Decimal:
    """delta(eps) of k-fold eps0-randomized response, at the floats' exact values."""
    with localcontext() as ctx:
        ctx.prec = 80
        e0, e = Decimal(eps0), Decimal(eps)
        total = Decimal(0)
        for ell in range((k + 1) // 2):
            if (k - 2 * ell) * e0 > e:
                total += comb(k, ell) * (((k - ell) * e0).exp() - e.exp() * (ell * e0).exp())
        return total / (1 + e0.exp()) ** k


@pytest.mark.parametrize("eps0", [5.55e-17, 1e-12, 2e-9, 1e-6, 1e-3, 0.01, 0.1, 1.0, 3.0])
@pytest.mark.parametrize("k", [2, 3, 20, 101])
def test_kov_epsilon_is_never_below_the_exact_profile(eps0, k):
    for target in (1e-320, 1e-30, 1e-6, 0.1):
        eps = kov_epsilon_rr(eps0, k, target)
        assert exact_delta(eps, eps0, k) <= Decimal(target), (eps0, k, target, eps)
        assert eps <= k * eps0 * (1 + 1e-15)  # never above basic composition


def test_tiny_per_use_epsilons_are_not_composed_to_zero():
    # exp(5.55e-17) rounds to 1: the profile's inversion read delta(0) as 0 and returned 0.
    assert kov_epsilon_rr(5.55e-17, 6, 1e-320) >= 6 * 5.55e-17


def test_the_check_catches_an_answer_an_ulp_below_a_kink():
    # Control: the unrounded inversion returns the float breakpoint 3 * 0.01, half an ulp
    # below the real kink, where the exact delta is about 2e-19 > 1e-30.
    raw = _kov_epsilon_rr(0.01, 3, 1e-30)
    assert exact_delta(raw, 0.01, 3) > Decimal(1e-30)
    assert exact_delta(kov_epsilon_rr(0.01, 3, 1e-30), 0.01, 3) <= Decimal(1e-30)


# ----------------------------------------------------------------------------------------------
# the other rules at tiny per-use epsilons
# ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("rule", ["advanced", "kov", "zcdp", "auto"])
@pytest.mark.parametrize("eps0", [6.4e-163, 1e-200, 5e-300])
def test_no_rule_composes_tiny_epsilons_below_one_use(rule, eps0):
    # One eps0-DP use (randomized response) is (eps, delta)-DP only for
    # delta >= (e^eps0 - e^eps) / (1 + e^eps0) ~ (eps0 - eps) / 2, so at delta = 1e-320 six
    # uses cannot be stated below eps0 (the squares eps0^2 underflow to 0 in floating point).
    from dpsubmod.privacy import compose
    from dpsubmod.privacy.events import PrivacyEvent, rho_exponential, rho_pure

    eps, _, _ = compose([PrivacyEvent.exponential(eps0, count=6)], 1e-320, rule)
    assert eps >= eps0 * (1 - 1e-12)
    assert rho_pure(eps0) > 0.0 and rho_exponential(eps0) > 0.0
    # Control: advanced composition from the plain sum of squares n * eps0 * eps0, as computed
    # before, states less than one use here (the sum underflows to 0).
    plain = math.sqrt(2.0 * -math.log(1e-320) * (6 * eps0 * eps0)) + 6 * eps0 * math.expm1(eps0)
    assert plain < eps0


def test_a_learner_at_a_subnormal_budget_states_a_positive_epsilon():
    import dpsubmod.online as O

    rep = O.FIDP(2, 4, 2, epsilon=1e-320, delta=1e-320).privacy
    assert 0.0 < rep.epsilon <= 1e-320 * (1 + 1e-9)
