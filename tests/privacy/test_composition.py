"""Tests of composition inside one call: events, composition theorems, the ledger, reports, and
the one budget splitter."""

from __future__ import annotations

import dataclasses
import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpsubmod.errors import DPSubmodError, ParameterTypeError, ValidationError
from dpsubmod.privacy import Budget
from dpsubmod.privacy.composition import AUTO_MIN_GAIN, COMPOSITIONS, compose_epsilon
from dpsubmod.privacy.events import PrivacyEvent, rho_exponential
from dpsubmod.privacy.kov import (
    KOV_MAX_USES,
    advanced_composition,
    basic_composition,
    kov_composition,
    kov_delta,
)
from dpsubmod.privacy.ledger import Ledger, PrivacyReport
from dpsubmod.privacy.split import split_budget
from dpsubmod.privacy.zcdp import rho_for_target, zcdp_to_dp
from oracles import rr_composition_delta

METHODS = ("basic", "advanced", "kov", "zcdp", "auto")


def drv(eps0: float, k: int, dprime: float) -> float:
    """Dwork, Rothblum & Vadhan 2010, Theorem III.3, written out independently."""
    return math.sqrt(2 * k * math.log(1 / dprime)) * eps0 + k * eps0 * (math.exp(eps0) - 1)


# ------------------------------------------------------------------------------------------------
# PrivacyEvent and Ledger basics


def test_event_fields_and_ledger_charge_contract():
    ev = PrivacyEvent("laplace", 0.5)
    assert (ev.mechanism, ev.epsilon, ev.delta, ev.rho, ev.count, ev.note) == (
        "laplace", 0.5, 0.0, None, 1, "")
    ev2 = PrivacyEvent("gaussian", 1.0, 1e-6, 0.2, 3, "sigma=3")
    assert (ev2.delta, ev2.rho, ev2.count, ev2.note) == (1e-6, 0.2, 3, "sigma=3")
    with pytest.raises(dataclasses.FrozenInstanceError):
        ev.epsilon = 2.0  # type: ignore[misc]
    led = Ledger()
    assert led.charge(ev) is None
    led.charge(ev2)
    assert led.events == (ev, ev2) and len(led) == 2 and led.uses == 4


def test_event_zcdp_costs():
    assert PrivacyEvent.pure("laplace", 0.4).zcdp == pytest.approx(0.08)
    assert PrivacyEvent.exponential(0.4).zcdp == pytest.approx(0.02) == rho_exponential(0.4)
    assert PrivacyEvent("gaussian", 1.0, 1e-5).zcdp is None
    assert PrivacyEvent("gaussian", 1.0, 1e-5, rho=0.1).zcdp == 0.1
    only = PrivacyEvent.zcdp_only("gaussian", 0.3)
    assert math.isinf(only.epsilon) and only.zcdp == 0.3


@pytest.mark.parametrize("kwargs, exc", [
    ({"epsilon": -0.1}, ValidationError),
    ({"epsilon": float("nan")}, ValidationError),
    ({"epsilon": 1.0, "delta": 1.0}, ValidationError),
    ({"epsilon": 1.0, "delta": -1e-9}, ValidationError),
    ({"epsilon": 1.0, "rho": -1.0}, ValidationError),
    ({"epsilon": 1.0, "count": 0}, ValidationError),
    ({"epsilon": 1.0, "count": 1.5}, ParameterTypeError),
    ({"epsilon": "1"}, ParameterTypeError),
])
def test_event_rejects_bad_values(kwargs, exc):
    with pytest.raises(exc) as info:
        PrivacyEvent("m", **kwargs)
    assert isinstance(info.value, DPSubmodError)


def test_ledger_charge_rejects_non_events():
    with pytest.raises(ParameterTypeError):
        Ledger().charge(("laplace", 1.0))  # type: ignore[arg-type]
    with pytest.raises(ParameterTypeError):
        Budget(1.0).charge({"epsilon": 0.1})  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------------------
# Composition theorems: closed forms and known values


def test_basic_composition_values():
    assert basic_composition(0.1, 10) == (pytest.approx(1.0), 0.0)
    assert basic_composition(0.1, 10, 1e-6) == (pytest.approx(1.0), pytest.approx(1e-5))
    led = Ledger([PrivacyEvent("a", 0.3, count=2), PrivacyEvent("b", 0.5, 1e-6)])
    assert led.total() == (pytest.approx(1.1), pytest.approx(1e-6))
    assert led.total(composition="basic") == led.total()


def test_advanced_composition_known_value():
    # eps0 = 0.1, k = 100, delta' = 1e-6: sqrt(200 ln 1e6) 0.1 + 10 (e^0.1 - 1) = 6.30823...
    eps, dlt = advanced_composition(0.1, 100, 1e-6)
    assert eps == pytest.approx(6.308230950513408, rel=1e-12)
    assert eps == pytest.approx(drv(0.1, 100, 1e-6), rel=1e-12)
    assert dlt == 1e-6
    assert advanced_composition(0.1, 100, 1e-6, delta=1e-8)[1] == pytest.approx(1e-6 + 1e-6)


def test_advanced_composition_needs_positive_slack():
    with pytest.raises(ValidationError, match="delta_prime"):
        advanced_composition(0.1, 10, 0.0)
    led = Ledger([PrivacyEvent("a", 0.1, 1e-6, count=5)])
    with pytest.raises(ValidationError, match="slack"):
        led.total(delta=5e-6, composition="advanced")  # no slack left after the events' deltas
    with pytest.raises(ValidationError, match="slack"):
        Ledger([PrivacyEvent.pure("a", 0.1)]).total(composition="advanced")  # delta=None: no slack


def test_heterogeneous_advanced_composition_uses_sums():
    eps = [0.05, 0.2, 0.1]
    led = Ledger([PrivacyEvent.pure("m", e, count=30) for e in eps])
    got, dlt = led.total(delta=1e-6, composition="advanced")
    want = (math.sqrt(2 * math.log(1e6) * sum(30 * e * e for e in eps))
            + sum(30 * e * math.expm1(e) for e in eps))
    assert got == pytest.approx(min(want, 30 * sum(eps)), rel=1e-12) and dlt == 1e-6


def test_kov_single_use_closed_form():
    # k = 1: delta(eps) = (e^eps0 - e^eps) / (1 + e^eps0), so eps = ln(e^eps0 - delta (1+e^eps0))
    for eps0, d in [(1.0, 0.1), (0.3, 1e-3), (2.0, 0.5)]:
        want = math.log(math.exp(eps0) - d * (1 + math.exp(eps0)))
        # kov_epsilon_rr solves for a delta 1e-12 (relative) below the target and rounds up by
        # a few ulps, so its answer is at or a hair above the closed form, never below.
        got = kov_composition(eps0, 1, d)[0]
        assert want - 1e-14 <= got <= want + 1e-11
    assert kov_composition(0.7, 5, 0.0)[0] == pytest.approx(3.5)


@pytest.mark.parametrize("eps0, k", [(0.1, 1), (0.5, 2), (0.3, 7), (1.0, 10), (0.05, 13)])
def test_kov_matches_enumeration_of_randomized_response(eps0, k):
    """The closed-form profile equals the hockey-stick of enumerated k-fold RR, and the returned
    epsilon is the smallest meeting each target (minimality checked just below it)."""
    for eps in np.linspace(0.0, k * eps0, 7):
        assert kov_delta(float(eps), eps0, k) == pytest.approx(
            rr_composition_delta(float(eps), eps0, k), rel=1e-9, abs=1e-15)
    for target in (1e-9, 1e-6, 1e-3, 0.05):
        e, _ = kov_composition(eps0, k, target)
        assert e <= k * eps0 + 1e-15
        assert rr_composition_delta(e, eps0, k) <= target * (1 + 1e-9)
        if e > 1e-9:
            assert rr_composition_delta(e - 1e-7, eps0, k) > target


def test_kov_theorem_points():
    """At eps = (k - 2i) eps0 the profile equals KOV 2015 Theorem 3.3's delta_i."""
    eps0, k = 0.4, 9
    for i in range(1, k // 2 + 1):
        delta_i = sum(math.comb(k, ell) * (math.exp((k - ell) * eps0)
                                           - math.exp((k - 2 * i + ell) * eps0))
                      for ell in range(i)) / (1 + math.exp(eps0)) ** k
        assert kov_delta((k - 2 * i) * eps0, eps0, k) == pytest.approx(delta_i, rel=1e-10)


def test_kov_with_per_use_delta():
    eps0, k, d0, target = 0.2, 20, 1e-7, 1e-4
    e, _ = kov_composition(eps0, k, target, delta=d0)
    assert kov_delta(e, eps0, k, d0) <= target * (1 + 1e-9)
    assert kov_delta(e - 1e-7, eps0, k, d0) > target
    # delta_total = 1 - (1 - d0)^k (1 - delta_RR): a positive per-use delta costs epsilon
    assert e > kov_composition(eps0, k, target)[0]
    with pytest.raises(ValidationError, match="delta_total"):
        kov_composition(eps0, k, 1e-6, delta=d0)  # below 1 - (1 - d0)^k ~ 2e-6


def test_kov_is_the_tightest_and_never_above_basic():
    for eps0, k, d in [(0.1, 100, 1e-6), (0.01, 1000, 1e-8), (1.0, 50, 1e-5), (2.0, 3, 1e-9)]:
        kov = kov_composition(eps0, k, d)[0]
        assert kov <= k * eps0
        assert kov <= drv(eps0, k, d) + 1e-12
        assert kov <= zcdp_to_dp(k * eps0**2 / 2, d) + 1e-12
    # Example of the anchors note: 100 uses at 0.1, delta 1e-6: KOV 4.77 < DRV 6.31 < basic 10.
    assert kov_composition(0.1, 100, 1e-6)[0] == pytest.approx(4.7746, abs=1e-4)


def test_zcdp_conversion():
    rho, d = 0.5, 1e-6
    classic = rho + 2 * math.sqrt(rho * math.log(1 / d))
    assert zcdp_to_dp(rho, d, conversion="classic") == pytest.approx(classic)
    cks = zcdp_to_dp(rho, d)
    # brute force over a dense grid of orders: every alpha gives a valid bound
    alphas = 1 + np.logspace(-4, 4, 200_001)
    grid = (alphas * rho + np.log(1 / d) / (alphas - 1) + np.log1p(-1 / alphas)
            - np.log(alphas) / (alphas - 1))
    assert cks <= grid.min() + 1e-9
    assert cks >= grid.min() - 1e-6
    assert cks < classic
    assert zcdp_to_dp(0.0, d) == 0.0
    assert math.isinf(zcdp_to_dp(0.1, 0.0))
    assert zcdp_to_dp(1e-4, 0.5) == 0.0  # delta >= sqrt(1 - e^-rho): total variation suffices
    with pytest.raises(ValidationError):
        zcdp_to_dp(0.1, 1e-6, conversion="exact")


def test_rho_for_target_inverts_the_conversion():
    for eps, d in [(1.0, 1e-6), (0.1, 1e-9), (5.0, 1e-3)]:
        rho = rho_for_target(eps, d)
        assert zcdp_to_dp(rho, d) <= eps
        assert zcdp_to_dp(rho * (1 + 1e-9), d) == pytest.approx(eps, rel=1e-7)
    with pytest.raises(ValidationError):
        rho_for_target(1.0, 0.0)


def test_exponential_mechanism_composition_example():
    """50 exponential mechanisms at 0.1 and delta 1e-6: basic 5.0; bounded-range zCDP about 1.66
    (the value the anchors note reports from dp-accounting's ComposedDpEvent, 1.6606)."""
    led = Ledger([PrivacyEvent.exponential(0.1, count=50)])
    assert led.total() == (pytest.approx(5.0), 0.0)
    eps, dlt = led.total(delta=1e-6, composition="zcdp")
    assert eps == pytest.approx(1.6606, abs=2e-3) and dlt == 1e-6
    assert led.total(delta=1e-6)[0] == pytest.approx(eps)
    assert led.report(delta=1e-6).composition == "zcdp"


def test_ledger_total_methods_and_errors():
    led = Ledger([PrivacyEvent.pure("laplace", 0.1, count=100)])
    vals = {m: led.total(delta=1e-6, composition=m)[0] for m in METHODS}
    assert vals["auto"] == min(vals.values())
    assert vals["kov"] <= vals["advanced"] <= vals["basic"] == pytest.approx(10.0)
    approx = Ledger([PrivacyEvent("gaussian", 0.5, 1e-7)])
    with pytest.raises(ValidationError, match="rho"):
        approx.total(delta=1e-6, composition="zcdp")
    assert approx.total(delta=1e-6)[0] <= 0.5  # best skips zCDP, basic applies
    with pytest.raises(ValidationError, match="no composition rule"):
        approx.total(delta=1e-8)  # below the events' own delta
    with pytest.raises(ValidationError, match="composition"):
        led.total(composition="renyi")
    with pytest.raises(ValidationError, match="delta"):
        led.total(delta=1.0)
    assert Ledger().total() == (0.0, 0.0)
    assert Ledger().total(delta=1e-6, composition="zcdp") == (0.0, 0.0)  # capped by basic


# ------------------------------------------------------------------------------------------------
# Property tests


event_st = st.builds(
    lambda e, c, kind: (PrivacyEvent.exponential(e, count=c) if kind == "em"
                        else PrivacyEvent.pure("laplace", e, count=c)),
    st.floats(0.001, 2.0), st.integers(1, 6), st.sampled_from(["em", "pure"]))


@settings(max_examples=40, deadline=None)
@given(events=st.lists(event_st, min_size=1, max_size=12),
       delta=st.sampled_from([1e-9, 1e-6, 1e-3, 0.1]))
def test_reported_epsilon_is_monotone_and_below_basic(events, delta):
    led = Ledger()
    prev = {m: 0.0 for m in METHODS}
    for ev in events:
        led.charge(ev)
        basic = math.fsum(e.epsilon * e.count for e in led.events)
        for m in METHODS:
            eps, dlt = led.total(delta=delta, composition=m)
            # "auto" may leave basic composition for a rule gaining over 1% (spending delta)
            floor = prev[m] / (AUTO_MIN_GAIN if m == "auto" else 1.0)
            assert eps >= floor * (1 - 1e-9) - 1e-12, (m, eps, prev[m])
            assert eps <= basic * (1 + 1e-12)
            assert dlt <= delta
            prev[m] = eps
        # "auto": basic composition unless another rule gains more than 1%, then the tightest
        tightest = min(prev[m] for m in METHODS)
        keep_basic = not prev["basic"] > AUTO_MIN_GAIN * tightest
        assert prev["auto"] == (prev["basic"] if keep_basic else tightest)


@settings(max_examples=40, deadline=None)
@given(eps0=st.floats(0.001, 3.0), k=st.integers(1, 400),
       delta=st.sampled_from([1e-10, 1e-6, 1e-3]))
def test_homogeneous_ordering(eps0, k, delta):
    kov = compose_epsilon(eps0, k, delta, composition="kov")
    adv = compose_epsilon(eps0, k, delta, composition="advanced")
    basic = compose_epsilon(eps0, k, delta, composition="basic")
    assert kov <= adv * (1 + 1e-12) <= basic * (1 + 1e-12)
    assert adv == pytest.approx(min(drv(eps0, k, delta), k * eps0), rel=1e-12)
    assert kov >= min(eps0, kov_composition(eps0, 1, delta)[0]) - 1e-12  # never below one use


@settings(max_examples=40, deadline=None)
@given(total=st.floats(0.01, 10.0), k=st.integers(1, 300),
       delta=st.sampled_from([0.0, 1e-9, 1e-5]), composition=st.sampled_from(METHODS),
       bounded_range=st.booleans())
def test_split_budget_round_trips(total, k, delta, composition, bounded_range):
    if delta == 0.0 and composition not in ("basic", "auto"):
        with pytest.raises(ValidationError):
            split_budget(total, delta, k, composition=composition, bounded_range=bounded_range)
        return
    sp = split_budget(total, delta, k, composition=composition, bounded_range=bounded_range)
    composed = compose_epsilon(sp.epsilon_step, k, delta, composition=sp.composition,
                               bounded_range=bounded_range)
    assert composed <= total
    assert composed == pytest.approx(total, rel=1e-9)
    assert sp.epsilon_step >= total / k * (1 - 1e-12)  # never worse than basic composition
    assert sp.steps == k and sp.delta == (0.0 if sp.composition == "basic" else delta)


def test_split_budget_known_values():
    assert split_budget(1.0, 0.0, 10).epsilon_step == pytest.approx(0.1)
    e = split_budget(1.0, 1e-6, 100, composition="advanced").epsilon_step
    assert drv(e, 100, 1e-6) == pytest.approx(1.0, rel=1e-12)
    auto = split_budget(1.0, 1e-6, 50)
    assert auto.epsilon_step == max(split_budget(1.0, 1e-6, 50, composition=m).epsilon_step
                                    for m in ("basic", "advanced", "kov", "zcdp"))
    # exponential mechanisms gain from bounded range
    assert split_budget(1.0, 1e-6, 50, bounded_range=True).epsilon_step > auto.epsilon_step
    # "auto" keeps basic composition (no delta spent) unless another rule gains over 1% per step
    few = split_budget(1.0, 1e-6, 2)
    assert few.composition == "basic" and few.delta == 0.0


def test_split_budget_rejects_a_rule_that_needs_delta():
    with pytest.raises(ValidationError, match="delta > 0"):
        split_budget(1.0, 0.0, 10, composition="kov")
    with pytest.raises(ValidationError, match="composition"):
        split_budget(1.0, 1e-6, 10, composition="best")


# ------------------------------------------------------------------------------------------------
# Report


def test_privacy_report_statement():
    led = Ledger([PrivacyEvent.exponential(0.02, count=50)])
    rep = led.report(delta=1e-6, composition="advanced", backend="numpy",
                     neighbouring="one record replaced")
    assert isinstance(rep, PrivacyReport)
    assert rep.composition in COMPOSITIONS and rep.uses == 50
    text = str(rep)
    assert text.startswith(f"(epsilon={rep.epsilon:.6g}, delta=1e-06)-differential privacy")
    assert "50 x exponential (epsilon=0.02)" in text
    assert "one record replaced" in text and "noise backend: numpy" in text
    assert "Dwork, Rothblum & Vadhan" in text or "basic composition" in text
    assert "PrivacyReport(epsilon=" in repr(rep)
    assert str(Ledger().report()).startswith("(epsilon=0, delta=0)")


# ------------------------------------------------------------------------------------------------
# Cross-checks against dp-accounting (Google). Events it covers correctly: pure-DP (as the
# epsilon-DP dominating pair, i.e. randomized response), Laplace, Gaussian and zCDP events.


@pytest.fixture(scope="module")
def dpa():
    return pytest.importorskip("dp_accounting")


@pytest.mark.parametrize("eps0, k, delta", [(0.1, 50, 1e-6), (0.5, 20, 1e-5), (1.0, 10, 1e-3)])
def test_kov_against_dp_accounting_pld(dpa, eps0, k, delta):
    """PLD of the generic eps0-DP pair composed k times is the exact KOV profile up to its
    pessimistic discretisation: ours <= PLD and equal to it within 1e-6 relative (measured:
    3.1729027340 vs 3.1729027341 at eps0 = 0.1, k = 50, delta = 1e-6)."""
    from dp_accounting.pld import common
    from dp_accounting.pld import privacy_loss_distribution as pld

    dist = pld.from_privacy_parameters(common.DifferentialPrivacyParameters(eps0, 0.0),
                                       value_discretization_interval=1e-4)
    ref = dist.self_compose(k).get_epsilon_for_delta(delta)
    ours = Ledger([PrivacyEvent.pure("m", eps0, count=k)]).total(delta=delta, composition="kov")[0]
    assert ours <= ref + 1e-9
    assert ours == pytest.approx(ref, rel=1e-6)


@pytest.mark.parametrize("scale, k, delta", [(10.0, 50, 1e-6), (2.0, 10, 1e-5)])
def test_laplace_composition_upper_bounds_dp_accounting(dpa, scale, k, delta):
    """Laplace(scale) with sensitivity 1 is 1/scale-DP; our bound treats it as a generic pure
    mechanism, so it must be at least dp-accounting's Laplace-specific PLD value."""
    from dp_accounting.pld import privacy_loss_distribution as pld

    ref = (pld.from_laplace_mechanism(scale, sensitivity=1.0, value_discretization_interval=1e-4)
           .self_compose(k).get_epsilon_for_delta(delta))
    ours = Ledger([PrivacyEvent.pure("laplace", 1 / scale, count=k)]).total(delta=delta)[0]
    assert ours >= ref * (1 - 1e-3)
    assert ours <= k / scale


@pytest.mark.parametrize("sigma, k, delta", [(5.0, 20, 1e-6), (20.0, 200, 1e-5), (1.0, 1, 1e-3)])
def test_gaussian_zcdp_against_dp_accounting(dpa, sigma, k, delta):
    """k Gaussians of noise multiplier sigma: our zCDP value is an upper bound of the exact
    (PLD) epsilon and within the zCDP-conversion looseness (measured ratios 1.07, 1.08, 1.13;
    asserted <= 1.2)."""
    from dp_accounting.pld import privacy_loss_distribution as pld

    ref = (pld.from_gaussian_mechanism(sigma, value_discretization_interval=1e-4)
           .self_compose(k).get_epsilon_for_delta(delta))
    rho = 1 / (2 * sigma**2)
    ours = Ledger([PrivacyEvent.zcdp_only("gaussian", rho, count=k)]).total(delta=delta)[0]
    assert ours >= ref * (1 - 1e-3)
    assert ours <= 1.2 * ref


@pytest.mark.parametrize("rho, delta", [(0.01, 1e-6), (0.5, 1e-5), (3.0, 1e-9)])
def test_zcdp_conversion_against_dp_accounting_rdp(dpa, rho, delta):
    """dp-accounting's RDP accountant uses the same conversion on a grid of orders: ours (a
    continuous minimisation) is never larger and within 2% of it."""
    acc = dpa.rdp.RdpAccountant()
    acc.compose(dpa.ZCDpEvent(rho))
    ref = acc.get_epsilon(delta)
    ours = zcdp_to_dp(rho, delta)
    assert ours <= ref + 1e-9
    assert ours >= 0.98 * ref


def test_report_reads_the_backend_from_mechanism_notes():
    from dpsubmod.privacy.additive import laplace

    led = Ledger()
    laplace(0.0, epsilon=0.5, sensitivity=1.0, budget=led, rng=0)
    assert led.report().backend == "numpy"
    assert "noise backend: numpy" in str(led.report())
    assert Ledger([PrivacyEvent.pure("m", 0.1)]).report().backend == "unspecified"
    assert led.report(backend="mine").backend == "mine"


def test_package_face_names_resolve():
    import dpsubmod.privacy as pkg

    for public in pkg.__all__:
        assert getattr(pkg, public) is not None, public


def test_large_epsilons_do_not_overflow():
    led = Ledger([PrivacyEvent.exponential(3e4, count=3)])
    assert led.total() == (9e4, 0.0)
    for m in METHODS:
        eps, _ = led.total(delta=1e-6, composition=m)
        assert 0 < eps <= 9e4
    assert math.isinf(advanced_composition(800.0, 2, 1e-6)[0])
    step = split_budget(1e5, 1e-6, 3).epsilon_step
    # the largest float whose three shares fit 1e5 exactly (1e5 / 3 rounds up, one ulp above)
    assert 3 * Fraction(step) <= 100000 < 3 * Fraction(math.nextafter(step, math.inf))


# ------------------------------------------------------------------------------------------------
# PLD composition (composition="pld", through dp-accounting): never below the exact composition,
# and tighter than the closed forms on Laplace, Gaussian and mixed ledgers.


def lap_events(eps0: float, k: int) -> PrivacyEvent:
    """k scalar Laplace releases with scale 1/eps0 at sensitivity 1."""
    return PrivacyEvent("laplace", eps0, 0.0, rho=eps0 ** 2 / 2, count=k, law=("laplace", 1 / eps0))


def gauss_events(r: float, k: int) -> PrivacyEvent:
    """k Gaussian releases with noise multiplier sigma / Delta = r."""
    return PrivacyEvent("gaussian", math.inf, 0.0, rho=0.5 / r ** 2, count=k, law=("gaussian", r))


def pld_total(events, delta):
    return Ledger(events).total(delta=delta, composition="pld")[0]


def exact_gaussian_epsilon(r: float, delta: float) -> float:
    """Exact epsilon of the Gaussian mechanism with noise multiplier r (Balle & Wang profile),
    by bisection on the decreasing profile."""
    from dpsubmod.privacy.gaussian_calibration import gaussian_delta

    lo, hi = 0.0, 1.0
    while gaussian_delta(r, hi, 1.0) > delta:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if gaussian_delta(r, mid, 1.0) > delta else (lo, mid)
    return hi


def exact_pure_epsilon(eps: list[float], delta: float) -> float:
    """Exact epsilon of heterogeneous pure-DP composition: the product of the eps_i-randomized
    response pairs dominates it (Murtagh & Vadhan 2016); enumerate the 2^k loss values."""
    eps = np.asarray(eps)
    signs = np.array(np.meshgrid(*[[1, -1]] * len(eps))).reshape(len(eps), -1).T
    loss = signs @ eps
    p = np.prod(np.where(signs > 0, 1 / (1 + np.exp(-eps)), 1 / (1 + np.exp(eps))), axis=1)

    def d(e):
        return float(np.sum(p * np.clip(1 - np.exp(e - loss), 0, None)))

    lo, hi = 0.0, float(eps.sum())
    if d(0.0) <= delta:
        return 0.0
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if d(mid) > delta else (lo, mid)
    return hi


@pytest.mark.parametrize("eps0, k, delta", [(0.1, 50, 1e-6), (0.5, 20, 1e-5), (1.0, 10, 1e-3),
                                            (0.02, 400, 1e-8)])
def test_pld_never_understates_the_exact_kov_composition(dpa, eps0, k, delta):
    """Pure events with no law enter as randomized response, whose composition KOV computes
    exactly: PLD is at least that and within its discretisation of it."""
    got = pld_total([PrivacyEvent.pure("m", eps0, count=k)], delta)
    exact = kov_composition(eps0, k, delta)[0]
    # KOV's answer carries its safety margin (a delta 1e-12 relative below the target, a few
    # ulps up), which may put it a hair above PLD's where both are exact.
    assert exact * (1 - 1e-11) <= got <= exact * (1 + 1e-3) + 1e-3


@settings(max_examples=15, deadline=None)
@given(eps=st.lists(st.floats(0.01, 1.5), min_size=1, max_size=9),
       delta=st.sampled_from([1e-6, 1e-3, 0.05]))
def test_pld_never_understates_exact_heterogeneous_pure_composition(dpa, eps, delta):
    got = pld_total([PrivacyEvent.pure("m", e) for e in eps], delta)
    exact = exact_pure_epsilon(eps, delta)
    assert got >= exact - 1e-9
    assert got <= exact + 2e-3 * len(eps) + 1e-9  # discretisation: at most 1e-4 per use, x2


@settings(max_examples=10, deadline=None)
@given(rs=st.lists(st.tuples(st.floats(2.0, 30.0), st.integers(1, 50)), min_size=1, max_size=4),
       delta=st.sampled_from([1e-8, 1e-6, 1e-3]))
def test_pld_never_understates_exact_gaussian_composition(dpa, rs, delta):
    """Gaussians with noise multipliers r_i compose exactly to one Gaussian with multiplier
    (sum_i k_i / r_i^2)^(-1/2), whose epsilon has a closed-form profile."""
    got = pld_total([gauss_events(r, k) for r, k in rs], delta)
    exact = exact_gaussian_epsilon(sum(k / r ** 2 for r, k in rs) ** -0.5, delta)
    assert exact * (1 - 1e-9) <= got <= exact * (1 + 2e-3) + 1e-3


@pytest.mark.parametrize("eps0, delta", [(0.1, 1e-6), (1.0, 1e-3), (3.0, 1e-2)])
def test_pld_of_one_laplace_release_is_its_exact_epsilon(dpa, eps0, delta):
    """One Laplace release: delta(eps) = 1 - exp((eps - eps0) / 2), so
    eps = eps0 + 2 ln(1 - delta)."""
    got = pld_total([lap_events(eps0, 1)], delta)
    exact = eps0 + 2 * math.log1p(-delta)
    assert exact - 1e-12 <= got <= exact + 2e-4


@pytest.mark.parametrize("events, delta", [
    ([lap_events(0.1, 50)], 1e-6), ([lap_events(0.3, 30)], 1e-5),
    ([lap_events(0.1, 50), gauss_events(10.0, 50)], 1e-6),
    ([lap_events(0.2, 20), gauss_events(5.0, 20), PrivacyEvent.pure("em", 0.1, count=10)], 1e-6),
])
def test_pld_is_never_below_dp_accounting_optimistic_estimate(dpa, events, delta):
    """dp-accounting's optimistic PLD (losses rounded down) is a lower bound of the exact
    composition; ours (pessimistic) is at least that, and within 1% of it."""
    from dp_accounting.pld import privacy_loss_distribution as pld

    total = None
    for e in events:
        if e.law is None:  # the eps-randomized-response pair, losses rounded down
            hi, lo = -math.log1p(math.exp(-e.epsilon)), -math.log1p(math.exp(e.epsilon))
            one = pld.from_two_probability_mass_functions({0: hi, 1: lo}, {0: lo, 1: hi},
                                                          pessimistic_estimate=False)
        elif e.law[0] == "laplace":
            one = pld.from_laplace_mechanism(e.law[1], pessimistic_estimate=False,
                                             use_connect_dots=False)
        else:
            one = pld.from_gaussian_mechanism(e.law[1], pessimistic_estimate=False,
                                              use_connect_dots=False)
        one = one.self_compose(e.count)
        total = one if total is None else total.compose(one)
    lower = total.get_epsilon_for_delta(delta)
    got = pld_total(events, delta)
    assert got >= lower * (1 - 1e-12)
    assert got <= lower * 1.01


# The closed-form rules ("auto": the tightest of basic, advanced, KOV and zCDP) against PLD,
# measured with dp-accounting 0.6 (closed / PLD):
#   Laplace 50 x 0.1 at 1e-6: 3.1729 / 3.1207 = 1.017;   100 x 0.2 at 1e-6: 10.677 / 10.277 = 1.039
#   Laplace 30 x 0.3 at 1e-5: 7.1757 / 6.8969 = 1.040
#   Gaussian 20 x r=5 at 1e-6: 4.6044 / 4.3058 = 1.069;  200 x r=20 at 1e-6: 3.5423 / 3.3076 = 1.071
#   Gaussian 10 x r=2 at 1e-6: 8.8459 / 8.3062 = 1.065
#   mixed 50 x Laplace 0.1 + 50 x Gaussian r=10 at 1e-6: 5.2215 / 4.7925 = 1.090
#   mixed 100 x Laplace 0.05 + 100 x Gaussian r=20 at 1e-6: 3.5423 / 3.2770 = 1.081
@pytest.mark.parametrize("events, delta, band", [
    ([lap_events(0.1, 50)], 1e-6, (1.01, 1.03)),
    ([lap_events(0.2, 100)], 1e-6, (1.03, 1.05)),
    ([lap_events(0.3, 30)], 1e-5, (1.03, 1.05)),
    ([gauss_events(5.0, 20)], 1e-6, (1.06, 1.08)),
    ([gauss_events(20.0, 200)], 1e-6, (1.06, 1.08)),
    ([gauss_events(2.0, 10)], 1e-6, (1.055, 1.075)),
    ([lap_events(0.1, 50), gauss_events(10.0, 50)], 1e-6, (1.08, 1.10)),
    ([lap_events(0.05, 100), gauss_events(20.0, 100)], 1e-6, (1.07, 1.09)),
])
def test_closed_forms_are_looser_than_pld(dpa, events, delta, band):
    closed = Ledger(events).report(delta=delta).epsilon
    got = pld_total(events, delta)
    assert band[0] <= closed / got <= band[1]


def test_pld_is_an_inside_a_call_rule_only(dpa):
    assert "pld" in COMPOSITIONS
    with pytest.raises(ValidationError, match="fixed in advance"):
        Budget(1.0, 1e-6, "pld")
    led = Ledger([lap_events(0.1, 50)])
    assert led.report(delta=1e-6, composition="pld").composition == "pld"
    assert "privacy loss distribution" in str(led.report(delta=1e-6, composition="pld"))
    # "auto" never uses PLD, so results do not depend on which extras are installed
    assert led.report(delta=1e-6).composition != "pld"
    # capped by basic composition, like every rule
    few = Ledger([PrivacyEvent.pure("m", 2.0, count=2)])
    assert few.total(delta=1e-9, composition="pld")[0] <= 4.0


def test_pld_does_not_apply_to_zcdp_only_events(dpa):
    led = Ledger([PrivacyEvent.zcdp_only("gaussian", 0.1)])
    with pytest.raises(ValidationError, match="zCDP cost and no noise law"):
        led.total(delta=1e-6, composition="pld")
    assert led.total(delta=1e-6)[0] > 0  # the closed forms still apply


def test_pld_without_dp_accounting_names_the_extra(monkeypatch):
    from dpsubmod.errors import MissingDependencyError
    from dpsubmod.privacy import pld

    def missing():
        raise ImportError("No module named 'dp_accounting'")

    monkeypatch.setattr(pld, "_import_dp_accounting", missing)
    led = Ledger([lap_events(0.1, 5)])
    with pytest.raises(MissingDependencyError, match=r'pip install "dpsubmod\[pld\]"'):
        led.total(delta=1e-6, composition="pld")
    with pytest.raises(MissingDependencyError):
        split_budget(1.0, 1e-6, 10, composition="pld")
    assert led.total(delta=1e-6)[0] > 0  # the other rules need nothing optional


def test_split_budget_with_pld_round_trips(dpa):
    sp = split_budget(1.0, 1e-6, 20, composition="pld")
    assert sp.composition in ("pld", "basic") and sp.steps == 20
    composed = compose_epsilon(sp.epsilon_step, 20, 1e-6, composition="pld")
    assert composed <= 1.0
    # pure steps have no law: PLD matches KOV up to discretisation
    kov = split_budget(1.0, 1e-6, 20, composition="kov").epsilon_step
    assert sp.epsilon_step == pytest.approx(kov, rel=2e-3)


def test_mechanisms_record_the_law_the_pld_accountant_uses():
    from dpsubmod.privacy import TreeAggregator, gaussian, laplace

    led = Ledger()
    laplace(0.0, epsilon=0.5, sensitivity=2.0, budget=led, rng=0)
    laplace([0.0, 1.0], epsilon=0.5, sensitivity=2.0, budget=led, rng=0)
    gaussian([0.0, 1.0], epsilon=1.0, delta=1e-6, sensitivity=2.0, budget=led, rng=0)
    gaussian(0.0, rho=0.5, sensitivity=1.0, budget=led, rng=0)
    laplace(0.0, epsilon=0.5, sensitivity=2.0, budget=led, backend="secure")
    name, r = led.events[0].law
    assert name == "laplace" and r == pytest.approx(2.0) and r <= 2.0  # b / Delta = 1 / eps
    assert led.events[1].law is None  # vector Laplace: no law (generic pure pair)
    assert led.events[2].law[0] == "gaussian"
    assert 0.5 / led.events[2].law[1] ** 2 >= led.events[2].rho * (1 - 1e-12)
    assert led.events[3].law == ("gaussian", pytest.approx(1.0))
    assert led.events[4].law is None  # discrete noise on a grid
    tree = TreeAggregator(8, 3, noise="gaussian", sensitivity=1.0, rho=0.3, rng=0)
    assert tree.event.law[0] == "gaussian"
    assert 0.5 / tree.event.law[1] ** 2 == pytest.approx(0.3, rel=1e-9)


def test_event_law_validation():
    with pytest.raises(ValidationError, match="name one of"):
        PrivacyEvent("m", 1.0, law=("cauchy", 1.0))
    with pytest.raises(ParameterTypeError, match="pair"):
        PrivacyEvent("m", 1.0, law="laplace")
    with pytest.raises(ValidationError):
        PrivacyEvent("m", 1.0, law=("laplace", -1.0))
    with pytest.raises(ValidationError, match="more than the event's epsilon"):
        PrivacyEvent("m", 0.5, law=("laplace", 1.0))  # the law is 1-DP
    with pytest.raises(ValidationError, match="costs rho"):
        PrivacyEvent("m", math.inf, rho=0.1, law=("gaussian", 1.0))  # the law costs rho 0.5
    ev = lap_events(0.5, 3)
    assert ev.as_dict()["law"] == ["laplace", 2.0]
    assert "law" not in PrivacyEvent.pure("m", 0.5).as_dict()


@pytest.mark.parametrize("total", [1e-320, 1e-300])
def test_kov_split_at_a_subnormal_step_is_quiet_and_within_the_total(total):
    # the breakpoint profile of 50-fold randomized response at eps0 ~ 1e-322 rounds a hair
    # above 0; it must neither warn nor let the composed epsilon exceed the total
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s = split_budget(total, 1e-300, 50, composition="kov")
    assert s.epsilon_step > 0.0
    assert compose_epsilon(s.epsilon_step, 50, 1e-300, composition=s.composition) <= total


def test_kov_refuses_more_uses_than_it_evaluates_and_auto_falls_back():
    with pytest.raises(ValidationError, match="steps"):
        split_budget(1.0, 1e-6, KOV_MAX_USES + 1, composition="kov")
    s = split_budget(1.0, 1e-6, 10**8)
    assert s.composition in ("zcdp", "advanced")
    assert compose_epsilon(s.epsilon_step, 10**8, 1e-6, composition=s.composition) <= 1.0
