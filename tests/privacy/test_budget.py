"""Tests of the user's Budget: privacy filters, refusal before noise, threads, files."""

from __future__ import annotations

import json
import math
import multiprocessing as mp
import pickle
import sys
import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpsubmod
from dpsubmod.errors import BudgetExceededError, BudgetFileError, DPSubmodError, ValidationError
from dpsubmod.online import FIDP, SubmodPFTAL
from dpsubmod.privacy import Budget, FileBudget, PrivacyEvent
from dpsubmod.privacy.additive import laplace
from dpsubmod.privacy.filters import filter_level
from dpsubmod.privacy.gaussian_mechanism import gaussian
from dpsubmod.privacy.kov import kov_composition
from dpsubmod.privacy.selection import exponential_mechanism
from dpsubmod.privacy.split import even_share, split_budget
from dpsubmod.privacy.zcdp import rho_for_target, zcdp_to_dp

# ------------------------------------------------------------------------------------------------
# Construction


def test_budget_is_exported_at_the_top_level():
    assert dpsubmod.Budget is Budget
    b = dpsubmod.Budget(1.0)
    assert (b.epsilon, b.delta, b.composition) == (1.0, 0.0, "basic")


@pytest.mark.parametrize("args, kwargs, match", [
    ((0.0,), {}, "epsilon"), ((-1.0,), {}, "epsilon"), ((math.inf,), {}, "epsilon"),
    ((math.nan,), {}, "epsilon"), ((1.0, 1.0), {}, "delta"), ((1.0, -1e-9), {}, "delta"),
    ((1.0, math.nan), {}, "delta"),
    ((1.0, 1e-6, "kov"), {}, "fixed in advance"), ((1.0, 1e-6, "auto"), {}, "fixed in advance"),
    ((1.0, 1e-6, "pld"), {}, "fixed in advance"), ((1.0, 1e-6, "renyi"), {}, "composition"),
    ((1.0, 0.0, "advanced"), {}, "delta > 0"), ((1.0, 0.0, "zcdp"), {}, "delta > 0"),
    ((1.0, 1e-6, "advanced"), {"slack": 2e-6}, "slack"),
    ((1.0, 0.0), {"slack": 1e-7}, "slack"),
])
def test_budget_validation(args, kwargs, match):
    with pytest.raises(ValidationError, match=match):
        Budget(*args, **kwargs)


def test_budget_of_the_wrong_type_is_refused_by_every_entry_point():
    from dpsubmod.functions import Modular

    f = Modular([1.0, 2.0, 3.0], sensitivity=1.0)
    for call in (
        lambda: laplace(1.0, epsilon=1.0, sensitivity=1.0, budget=1.0),
        lambda: exponential_mechanism([1.0, 2.0], epsilon=1.0, sensitivity=1.0, budget="b"),
        lambda: dpsubmod.maximize(f, 2, "private_greedy", epsilon=1.0, budget={"eps": 1}),
    ):
        with pytest.raises(DPSubmodError, match="budget"):
            call()


# ------------------------------------------------------------------------------------------------
# The basic filter


def test_basic_budget_accepts_a_split_budget_and_refuses_one_more():
    total, k = 1.0, 40
    e = split_budget(total, 0.0, k, bounded_range=True).epsilon_step
    b = Budget(total)
    for _ in range(k):
        b.charge(PrivacyEvent.exponential(e))
    assert b.spent[0] <= total * (1 + 1e-9)
    extra = PrivacyEvent.exponential(e)
    assert not b.can_charge(extra)
    with pytest.raises(BudgetExceededError):
        b.charge(extra)
    assert len(b) == k


def test_refusal_names_the_request_what_is_left_and_the_fix_and_changes_nothing():
    b = Budget(1.0)
    b.charge(PrivacyEvent.pure("laplace", 0.6))
    before = b.events
    with pytest.raises(BudgetExceededError) as info:
        b.charge(PrivacyEvent.pure("laplace", 0.5))
    msg = str(info.value)
    assert "The budget (epsilon 1, delta 0, basic composition)" in msg  # in words, no repr
    assert "laplace (epsilon 0.5)" in msg  # what was asked
    assert "Already spent: epsilon 0.6" in msg and "at most epsilon 0.4" in msg  # what is left
    assert "Lower the release's epsilon" in msg and "Nothing was released" in msg  # the fix
    assert isinstance(info.value, DPSubmodError) and not isinstance(info.value, ValueError)
    assert b.events == before and b.spent == (pytest.approx(0.6), 0.0)
    b.charge(PrivacyEvent.pure("laplace", 0.4))  # exactly the rest fits
    assert b.spent[0] == pytest.approx(1.0) and b.remaining == pytest.approx(0.0, abs=1e-12)


def test_basic_budget_with_zero_delta_refuses_approximate_and_zcdp_only_events():
    b = Budget(10.0)
    with pytest.raises(BudgetExceededError, match="deltas"):
        b.charge(PrivacyEvent("gaussian", 0.1, 1e-8))
    with pytest.raises(BudgetExceededError, match="zCDP"):
        b.charge(PrivacyEvent.zcdp_only("gaussian", 0.01))
    assert len(b) == 0


def test_a_refused_mechanism_draws_nothing():
    rng = np.random.default_rng(3)
    b = Budget(1.0)
    laplace(0.0, epsilon=0.9, sensitivity=1.0, budget=b, rng=rng)
    state = rng.bit_generator.state
    with pytest.raises(BudgetExceededError):
        laplace(0.0, epsilon=0.2, sensitivity=1.0, budget=b, rng=rng)
    with pytest.raises(BudgetExceededError):
        exponential_mechanism(np.zeros(3), epsilon=0.2, sensitivity=1.0, budget=b, rng=rng)
    assert rng.bit_generator.state == state
    assert len(b) == 1


# ------------------------------------------------------------------------------------------------
# The advanced filter (Whitehouse, Ramdas, Rogers & Wu 2023) and the zCDP filter


def whitehouse_admits(eps_seq, delta_seq, epsilon, delta, slack):
    """The filter written out independently: admit the whole sequence iff the events' deltas fit
    delta - slack and min(sum eps, sqrt(2 ln(1/slack) V) + V/2) <= epsilon."""
    v = sum(e * e for e in eps_seq)
    level = min(sum(eps_seq), math.sqrt(2.0 * math.log(1.0 / slack) * v) + v / 2.0)
    return sum(delta_seq) <= (delta - slack) * (1 + 1e-9) and level <= epsilon * (1 + 1e-9)


@settings(max_examples=200, deadline=None)
@given(eps_seq=st.lists(st.floats(0.001, 1.5), min_size=1, max_size=60),
       d_event=st.sampled_from([0.0, 1e-9, 1e-7]), epsilon=st.floats(0.2, 8.0),
       delta=st.sampled_from([1e-6, 1e-4]))
def test_advanced_filter_matches_an_independent_computation(eps_seq, d_event, epsilon, delta):
    b = Budget(epsilon, delta, "advanced")
    admitted: list[float] = []
    for e in eps_seq:
        ev = PrivacyEvent("m", e, d_event)
        want = whitehouse_admits(admitted + [e], [d_event] * (len(admitted) + 1), epsilon, delta,
                                 delta / 2)
        assert b.can_charge(ev) == want
        if want:
            b.charge(ev)
            admitted.append(e)
        else:
            with pytest.raises(BudgetExceededError):
                b.charge(ev)
    assert len(b) == len(admitted)


def _level_with(constant_sq, constant_mean, eps0, k, slack):
    """The advanced filter's level with its two constants (2 and 1/2 in the theorem)."""
    v = k * eps0 * eps0
    return min(k * eps0, math.sqrt(constant_sq * math.log(1 / slack) * v) + constant_mean * v)


@pytest.mark.parametrize("eps0, k, slack", [(0.1, 100, 1e-6), (0.05, 400, 1e-6),
                                            (0.3, 50, 1e-5), (0.01, 2000, 1e-9),
                                            (0.5, 30, 1e-3), (1.0, 4, 1e-6)])
def test_advanced_filter_never_claims_less_than_exact_composition(eps0, k, slack):
    """For parameters fixed in advance, optimal composition (Kairouz, Oh & Viswanath 2015,
    exact; checked against dp-accounting's PLD in test_composition) is the smallest valid
    epsilon at each delta. A filter is valid in particular for fixed parameters, so its level
    can never be below it."""
    level = filter_level([PrivacyEvent.pure("m", eps0, count=k)], 1e9, 2 * slack, "advanced",
                         slack).epsilon
    assert level == pytest.approx(_level_with(2.0, 0.5, eps0, k, slack), rel=1e-12)
    assert level >= kov_composition(eps0, k, slack)[0] * (1 - 1e-12)


def test_a_miscalibrated_advanced_filter_is_caught():
    """Halving the variance constant (ln(1/delta') for 2 ln(1/delta')) claims less than the exact
    optimum on some sequence, which the check above would flag."""
    cases = [(0.1, 100, 1e-6), (0.05, 400, 1e-6), (0.01, 2000, 1e-9)]
    caught = [_level_with(1.0, 0.5, *c) < kov_composition(c[0], c[1], c[2])[0] for c in cases]
    assert any(caught)


@settings(max_examples=100, deadline=None)
@given(eps_seq=st.lists(st.floats(0.001, 1.0), min_size=1, max_size=40),
       epsilon=st.floats(0.2, 5.0), delta=st.sampled_from([1e-8, 1e-6, 1e-3]),
       kind=st.sampled_from(["pure", "em"]))
def test_zcdp_filter_matches_an_independent_computation(eps_seq, epsilon, delta, kind):
    b = Budget(epsilon, delta, "zcdp")
    rho_star = rho_for_target(epsilon, delta)
    factor = 0.5 if kind == "pure" else 0.125
    rho = 0.0
    for e in eps_seq:
        ev = PrivacyEvent.pure("m", e) if kind == "pure" else PrivacyEvent.exponential(e)
        fits = rho + factor * e * e <= rho_star * (1 + 1e-9)
        assert b.can_charge(ev) == fits
        if fits:
            b.charge(ev)
            rho += factor * e * e
    assert b.rho == pytest.approx(rho)
    assert zcdp_to_dp(b.rho, delta) <= epsilon * (1 + 1e-9)


def test_zcdp_filter_refuses_approximate_events_without_rho_and_accepts_gaussians():
    b = Budget(1.0, 1e-6, "zcdp")
    with pytest.raises(BudgetExceededError, match="no zCDP cost"):
        b.charge(PrivacyEvent("gaussian", 0.5, 1e-7))
    gaussian(np.zeros(3), sensitivity=1.0, rho=0.01, budget=b, rng=0)
    assert b.rho == pytest.approx(0.01)


def test_advanced_filter_gains_over_basic_on_many_small_releases():
    basic, adv = Budget(1.0), Budget(1.0, 1e-6, "advanced")
    step = even_share(1.0, 100)  # the float 0.01 is above 1/100: a hundred of it overspend
    for b in (basic, adv):
        while b.can_charge(PrivacyEvent.pure("m", step)):
            b.charge(PrivacyEvent.pure("m", step))
    assert len(basic) == 100 and len(adv) > 140  # 1/100 per release: adaptive, and still ahead


def test_dp_accounting_pld_is_below_the_filter_on_laplace_releases():
    dpa = pytest.importorskip("dp_accounting")
    from dp_accounting.pld import privacy_loss_distribution as pld

    b = Budget(3.0, 2e-6, "advanced", slack=1e-6)
    for _ in range(200):
        if not b.can_charge(PrivacyEvent.pure("laplace", 0.05)):
            break
        b.charge(PrivacyEvent.pure("laplace", 0.05))
    k = len(b)
    exact = (pld.from_laplace_mechanism(20.0, value_discretization_interval=1e-4)
             .self_compose(k).get_epsilon_for_delta(1e-6))
    assert dpa is not None and exact <= b.spent[0]


# ------------------------------------------------------------------------------------------------
# Concurrency


def _release_once(b: Budget, barrier: threading.Barrier, released: list, seed: int) -> None:
    barrier.wait()
    try:
        released.append(laplace(0.0, epsilon=0.25, sensitivity=1.0, budget=b, rng=seed))
    except BudgetExceededError:
        pass


def test_concurrent_charges_never_exceed_the_budget():
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        for trial in range(20):
            b = Budget(1.0)
            released: list[float] = []
            barrier = threading.Barrier(16)
            threads = [threading.Thread(target=_release_once,
                                        args=(b, barrier, released, trial * 16 + i))
                       for i in range(16)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert len(released) == 4 and len(b) == 4
            assert b.spent[0] <= 1.0 * (1 + 1e-9)
    finally:
        sys.setswitchinterval(old)


def test_budget_pickles_and_copies_without_its_lock():
    b = Budget(2.0, 1e-6, "advanced")
    b.charge(PrivacyEvent.pure("m", 0.3))
    c = pickle.loads(pickle.dumps(b))
    assert c == b and c.copy() == b
    c.charge(PrivacyEvent.pure("m", 0.1))
    assert len(b) == 1 and len(c) == 2


# ------------------------------------------------------------------------------------------------
# The budget file


def test_file_budget_records_each_release_and_persists(tmp_path):
    path = tmp_path / "budget.json"
    FileBudget.create(path, 1.0, dataset="rides")
    fb = FileBudget(path, dataset="rides", command="dpsubmod select rides.csv")
    laplace(0.0, epsilon=0.4, sensitivity=1.0, budget=fb, rng=0)
    doc = json.loads(path.read_text())
    (rel,) = doc["releases"]
    assert rel["epsilon"] == 0.4 and rel["delta"] == 0.0 and rel["rule"] == "basic"
    assert rel["command"] == "dpsubmod select rides.csv" and "time" in rel
    assert doc["dataset"] == "rides" and fb.dataset == "rides"
    assert len(rel["prev"]) == 64 and len(doc["head"]) == 64
    again = FileBudget(path, dataset="rides")
    assert again.spent == (pytest.approx(0.4), 0.0)
    with pytest.raises(BudgetExceededError, match="never reset"):
        laplace(0.0, epsilon=0.7, sensitivity=1.0, budget=again, rng=0)
    assert json.loads(path.read_text()) == doc


@pytest.mark.parametrize("content, match", [
    ("{not json", "not valid JSON"),
    ('{"format": "dpsubmod-budget", "version": 2, "epsilon": 1.0', "not valid JSON"),
    ('{"format": "something-else"}', "not a dpsubmod budget file"),
    ('{"format": "dpsubmod-budget", "version": 99, "epsilon": 1.0}', "newer version"),
    ('{"format": "dpsubmod-budget", "version": 2, "epsilon": 1.0}', "truncated or damaged"),
])
def test_bad_budget_files_are_refused_and_left_unchanged(tmp_path, content, match):
    path = tmp_path / "b.json"
    path.write_text(content)
    with pytest.raises(BudgetFileError, match=match):
        FileBudget(path)
    assert path.read_text() == content


def test_budget_file_for_another_data_set_is_refused(tmp_path):
    path = tmp_path / "budget.json"
    FileBudget.create(path, 1.0, dataset="rides")
    before = path.read_bytes()
    with pytest.raises(BudgetFileError, match="protects the data set 'rides', not 'trips'"):
        FileBudget(path, dataset="trips")
    assert path.read_bytes() == before
    with pytest.raises(BudgetFileError, match="already exists"):
        FileBudget.create(path, 2.0, dataset="rides")
    with pytest.raises(BudgetFileError, match="does not exist"):
        FileBudget(tmp_path / "missing.json")


def _race(path: str, barrier, results) -> None:
    fb = FileBudget(path)
    barrier.wait()
    try:
        fb.charge(PrivacyEvent.pure("laplace", 0.6))
        results.put("released")
    except BudgetExceededError:
        results.put("refused")


def test_two_processes_cannot_both_pass_when_only_one_fits(tmp_path):
    path = tmp_path / "budget.json"
    FileBudget.create(path, 1.0, dataset="d")
    ctx = mp.get_context("spawn")
    for _ in range(3):
        path.unlink()
        FileBudget.create(path, 1.0, dataset="d")
        barrier, results = ctx.Barrier(2), ctx.Queue()
        procs = [ctx.Process(target=_race, args=(str(path), barrier, results)) for _ in range(2)]
        for p in procs:
            p.start()
        for p in procs:
            p.join(60)
        outcomes = sorted(results.get(timeout=5) for _ in procs)
        assert outcomes == ["refused", "released"]
        assert len(json.loads(path.read_text())["releases"]) == 1


# ------------------------------------------------------------------------------------------------
# Random sequences of calls on one budget


def _tiny_objective():
    from dpsubmod.functions import FacilityLocation

    rng = np.random.default_rng(0)
    return FacilityLocation.from_records(rng.random((30, 2)), rng.random((5, 2)),
                                         similarity="gaussian", bandwidth=0.5)


CALLS = {
    "laplace": lambda e, d, b, r: laplace(0.0, epsilon=e, sensitivity=1.0, budget=b, rng=r),
    "exponential": lambda e, d, b, r: exponential_mechanism(
        [0.0, 1.0, 2.0], epsilon=e, sensitivity=1.0, budget=b, rng=r),
    "gaussian": lambda e, d, b, r: gaussian(0.0, sensitivity=1.0, epsilon=e, delta=d or 1e-9,
                                            budget=b, rng=r),
    "private_greedy": lambda e, d, b, r: dpsubmod.maximize(
        _tiny_objective(), 2, "private_greedy", epsilon=e, delta=d, budget=b, rng=r),
    "dpcg": lambda e, d, b, r: dpsubmod.maximize(
        _tiny_objective(), 2, "dpcg", epsilon=e, delta=d, budget=b, rng=r),
    "SubmodPFTAL": lambda e, d, b, r: _play(SubmodPFTAL(3, T=6, M=1.0, epsilon=e, budget=b,
                                                        rng=r)),
    "FIDP": lambda e, d, b, r: _play(FIDP(4, 6, 2, epsilon=e, delta=1e-9, budget=b, rng=r)),
}


def _play(learner):
    """Play a few rounds of a full-information stream (the charge came at construction)."""
    from dpsubmod.functions import Modular

    for t in range(3):
        learner.select()
        learner.update(Modular(np.linspace(-1.0, 1.0, learner.n) * (-1) ** t))
    return learner


@settings(max_examples=60, deadline=None)
@given(calls=st.lists(st.tuples(st.sampled_from(sorted(CALLS)), st.floats(0.01, 1.5),
                                st.sampled_from([0.0, 1e-8])), min_size=1, max_size=10),
       rule=st.sampled_from(["basic", "advanced", "zcdp"]), total=st.floats(0.3, 4.0))
def test_random_call_sequences_never_exceed_the_budget(calls, rule, total):
    b = Budget(total, 1e-6 if rule != "basic" else 1e-7, rule)
    rng = np.random.default_rng(0)
    for name, eps, dlt in calls:
        events, state = b.events, rng.bit_generator.state
        try:
            CALLS[name](eps, dlt, b, rng)
        except BudgetExceededError:
            assert b.events == events and rng.bit_generator.state == state
        spent_eps, spent_delta = b.spent
        assert spent_eps <= total * (1 + 1e-9)
        assert spent_delta <= b.delta * (1 + 1e-9)


@pytest.mark.parametrize("composition, delta", [("basic", 0.0), ("advanced", 1e-6),
                                                ("zcdp", 1e-300)])
def test_a_tiny_budget_is_never_overspent(composition, delta):
    # the filters' rounding allowance is relative: a budget of epsilon 1e-320 admits nothing
    # larger, and a budget with delta 0 admits no delta at all
    # (under the zcdp rule a larger delta alone admits rho up to about delta**2)
    eps = 1e-320 if composition != "zcdp" else 1e-100
    b = Budget(eps, delta, composition)
    assert not b.can_charge(PrivacyEvent("laplace", eps * 1e12, 0.0))
    if composition != "zcdp":
        assert b.can_charge(PrivacyEvent("laplace", eps, 0.0))
    if composition == "basic":
        assert not Budget(1.0).can_charge(PrivacyEvent("gaussian", 0.5, 1e-310))
    if composition == "zcdp":
        with pytest.raises(ValidationError, match="'epsilon' and 'delta' parameters"):
            Budget(1e-320, 1e-320, composition)
