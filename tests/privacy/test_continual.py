"""Tests of tree aggregation (binary mechanism) for continual release of prefix sums."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpsubmod.errors import (
    BudgetExceededError,
    DPSubmodError,
    ParameterTypeError,
    StreamLengthError,
    ValidationError,
)
from dpsubmod.privacy import Budget, Ledger, SecureBackend
from dpsubmod.privacy.continual import honaker_variance_ratio, prefix_noise_sd, tree_levels
from dpsubmod.privacy.gaussian_calibration import gaussian_delta
from dpsubmod.privacy.tree_aggregator import TreeAggregator
from dpsubmod.privacy.zcdp import zcdp_to_dp
from oracles import dyadic_prefix_reference


def ones(level, index):
    return [1.0]


def popcount(t: int) -> int:
    return bin(t).count("1")


def run(agg: TreeAggregator, items) -> np.ndarray:
    out = []
    for x in items:
        agg.update(x)
        out.append(agg.prefix())
    return np.array(out)


class Recording(TreeAggregator):
    """Instrumented aggregator: logs the exact value of every node it releases."""

    def _release(self, level, index, exact):
        self.log = getattr(self, "log", {})
        self.log[(level, index)] = exact.copy()
        return super()._release(level, index, exact)


# ------------------------------------------------------------------------------------------------
# Structure


def test_tree_levels():
    assert [tree_levels(T) for T in (1, 2, 3, 4, 5, 7, 8, 9, 1024, 1025)] == [
        1, 2, 2, 3, 3, 3, 4, 4, 11, 11]
    for T in range(1, 300):
        assert tree_levels(T) == math.floor(math.log2(T)) + 1 <= math.ceil(math.log2(T)) + 1
    with pytest.raises(ValidationError):
        tree_levels(0)


@pytest.mark.parametrize("T", [1, 16, 37])
def test_unit_node_noise_gives_popcount(T):
    """With every node noise equal to 1, the released noise after t items is popcount(t)."""
    rng = np.random.default_rng(0)
    items = rng.normal(size=(T, 1))
    agg = TreeAggregator(T, 1, sensitivity=1.0, epsilon=1.0, noise_sampler=ones)
    noise = run(agg, items)[:, 0] - np.cumsum(items[:, 0])
    np.testing.assert_allclose(noise, [popcount(t) for t in range(1, T + 1)], atol=1e-9)
    assert max(popcount(t) for t in range(1, T + 1)) <= tree_levels(T)


@pytest.mark.parametrize("honaker", [False, True])
@pytest.mark.parametrize("T", [13, 32])
def test_prefix_matches_offline_dyadic_tree(T, honaker):
    """Every released prefix equals the offline computation on the full dyadic tree, with the
    same per-node noise (distinct for every node), plain and with Honaker's estimator."""
    rng = np.random.default_rng(1)
    items = rng.normal(size=(T, 2))
    table = {}

    def noise(level, index):
        return table.setdefault((level, index), rng.normal(size=2))

    agg = TreeAggregator(T, 2, sensitivity=1.0, epsilon=1.0, noise_sampler=noise,
                         honaker=honaker)
    got = run(agg, items)
    for t in range(1, T + 1):
        want = dyadic_prefix_reference(items, lambda h, j: table[(h, j)], t, honaker)
        np.testing.assert_allclose(got[t - 1], want, atol=1e-10)


def test_honaker_unit_noise_closed_form():
    """Unit node noise: Honaker's node estimate has noise n_h = w_h + (1 - w_h) 2 n_{h-1}."""
    agg = TreeAggregator(16, 1, sensitivity=1.0, epsilon=1.0, noise_sampler=ones, honaker=True)
    out = run(agg, np.zeros((16, 1)))[:, 0]
    n = [1.0]
    for h in range(1, 5):
        w = honaker_variance_ratio(h)
        n.append(w + (1 - w) * 2 * n[-1])
    for t in range(1, 17):
        assert out[t - 1] == pytest.approx(sum(n[h] for h in range(5) if (t >> h) & 1))
    assert honaker_variance_ratio(1) == pytest.approx(2 / 3)


@pytest.mark.parametrize("honaker", [False, True])
@pytest.mark.parametrize("T", [13, 16])
def test_one_item_changes_at_most_levels_nodes(T, honaker):
    """Instrumented nodes: changing one item changes at most tree_levels(T) released nodes
    (exactly the nodes containing it), which is at most ceil(log2 T) + 1."""
    rng = np.random.default_rng(2)
    base = rng.normal(size=(T, 1))
    ref = Recording(T, 1, sensitivity=1.0, epsilon=1.0, rng=0, honaker=honaker)
    run(ref, base)
    for s in range(T):
        other = base.copy()
        other[s] += 1.0
        agg = Recording(T, 1, sensitivity=1.0, epsilon=1.0, rng=0, honaker=honaker)
        run(agg, other)
        assert agg.log.keys() == ref.log.keys()
        changed = {k for k in ref.log if not np.allclose(ref.log[k], agg.log[k])}
        containing = {(h, j) for (h, j) in ref.log if (j << h) <= s < ((j + 1) << h)}
        assert changed == containing
        assert 1 <= len(changed) <= tree_levels(T) <= math.ceil(math.log2(T)) + 1


@pytest.mark.parametrize("T", [13, 16])
@pytest.mark.parametrize("honaker", [False, True])
def test_number_of_noise_draws(T, honaker):
    """Plain: one node released per step (T in all); Honaker: every completed node."""
    calls = []

    def sampler(level, index):
        calls.append((level, index))
        return [0.0]

    agg = TreeAggregator(T, 1, sensitivity=1.0, epsilon=1.0, honaker=honaker,
                         noise_sampler=sampler)
    run(agg, np.zeros((T, 1)))
    assert len(calls) == len(set(calls)) == (2 * T - popcount(T) if honaker else T)


# ------------------------------------------------------------------------------------------------
# Calibration and variance


def test_calibration_laplace_and_l2laplace():
    agg = TreeAggregator(100, 3, sensitivity=2.0, epsilon=0.5)
    assert agg.levels == 7 and agg.scale == pytest.approx(7 * 2.0 / 0.5)
    assert agg.node_variance == pytest.approx(2 * agg.scale**2)
    l2 = TreeAggregator(100, 3, noise="l2laplace", sensitivity=2.0, epsilon=0.5)
    assert l2.scale == pytest.approx(28.0) and l2.node_variance == pytest.approx(4 * 28.0**2)
    assert agg.event.epsilon == 0.5 and agg.event.delta == 0.0 and agg.event.count == 1


def test_calibration_gaussian():
    T, sens, eps, delta = 100, 1.5, 1.0, 1e-6
    agg = TreeAggregator(T, 4, noise="gaussian", sensitivity=sens, epsilon=eps, delta=delta)
    L = tree_levels(T)
    # exact (analytic) calibration of the vector of all nodes, l2 sensitivity sqrt(L) * sens
    assert gaussian_delta(agg.scale, eps, math.sqrt(L) * sens) <= delta
    assert gaussian_delta(agg.scale * 0.999, eps, math.sqrt(L) * sens) > delta
    assert agg.event.rho == pytest.approx(L * sens**2 / (2 * agg.scale**2))
    assert zcdp_to_dp(agg.event.rho, delta) > eps  # analytic beats the zCDP conversion
    z = TreeAggregator(T, 4, noise="gaussian", sensitivity=sens, rho=0.1)
    assert z.scale == pytest.approx(sens * math.sqrt(L / 0.2))
    assert z.event.rho == pytest.approx(0.1) and math.isinf(z.event.epsilon)
    sec = TreeAggregator(T, 4, noise="gaussian", sensitivity=sens, epsilon=eps, delta=delta,
                         backend="secure")
    assert zcdp_to_dp(sec.event.rho, delta) <= eps  # grid backend: calibrated through zCDP
    assert sec.scale >= math.sqrt(L / (2 * sec.event.rho)) * sens


def test_closed_form_variance_and_honaker_is_smaller():
    for T in (16, 1000):
        plain = TreeAggregator(T, 1, sensitivity=1.0, epsilon=1.0)
        hon = TreeAggregator(T, 1, sensitivity=1.0, epsilon=1.0, honaker=True)
        for t in range(0, T + 1, max(1, T // 97)):
            assert plain.noise_variance(t) == pytest.approx(popcount(t) * plain.node_variance)
            assert hon.noise_variance(t) <= plain.noise_variance(t) + 1e-12
        assert hon.noise_variance(1) == plain.noise_variance(1)
        assert hon.noise_variance(T - 1) < plain.noise_variance(T - 1)


@pytest.mark.parametrize("noise", ["laplace", "l2laplace", "gaussian"])
@pytest.mark.parametrize("honaker", [False, True])
def test_empirical_variance_matches_closed_form(noise, honaker):
    """R independent streams; per t, the mean over coordinates of squared noise is averaged over
    runs and compared with noise_variance(t) by a z-test on the run-to-run spread (|z| < 4.5 for
    each of the 2 x 11 checks per case: false-alarm rate below 2e-4 per case by Bonferroni;
    fixed seed). Power: a closed form off by 20% (or l2-Laplace's (d+1) s^2 replaced by d s^2)
    gives |z| > 5 at these sizes. The mean noise is checked unbiased the same way."""
    T, d, R = 11, 3, 2000
    seeds = np.random.SeedSequence(5).spawn(R)
    sq = np.zeros((R, T))
    mean = np.zeros((R, T))
    kw = {"delta": 1e-5} if noise == "gaussian" else {}
    for r in range(R):
        agg = TreeAggregator(T, d, noise=noise, sensitivity=1.0, epsilon=2.0, rng=seeds[r],
                             honaker=honaker, **kw)
        z = run(agg, np.zeros((T, d)))
        sq[r] = (z**2).mean(axis=1)
        mean[r] = z.mean(axis=1)
    expected = np.array([agg.noise_variance(t) for t in range(1, T + 1)])
    zvar = (sq.mean(axis=0) - expected) / (sq.std(axis=0, ddof=1) / math.sqrt(R))
    zmean = mean.mean(axis=0) / (mean.std(axis=0, ddof=1) / math.sqrt(R))
    assert np.abs(zvar).max() < 4.5, zvar
    assert np.abs(zmean).max() < 4.5, zmean


# ------------------------------------------------------------------------------------------------
# Reproducibility, cloning, pickling


def test_seed_clone_and_pickle_reproducibility():
    items = np.random.default_rng(3).normal(size=(20, 3))
    kw = dict(sensitivity=1.0, epsilon=1.0, honaker=True)
    a = run(TreeAggregator(20, 3, rng=42, **kw), items)
    b = run(TreeAggregator(20, 3, rng=42, **kw), items)
    c = run(TreeAggregator(20, 3, rng=43, **kw), items)
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c)
    used = TreeAggregator(20, 3, rng=42, **kw)
    run(used, items[:7])
    fresh = used.clone()
    assert fresh.t == 0 and fresh.T == 20 and fresh.rng == 42
    np.testing.assert_array_equal(run(fresh, items), a)
    twin = pickle.loads(pickle.dumps(used))
    np.testing.assert_array_equal(twin.prefix(), used.prefix())
    np.testing.assert_array_equal(run(twin, items[7:]), run(used, items[7:]))
    np.testing.assert_array_equal(run(twin.clone(), items), a)


def test_prefix_is_a_copy_and_zero_before_data():
    agg = TreeAggregator(4, 2, sensitivity=1.0, epsilon=1.0, rng=0)
    np.testing.assert_array_equal(agg.prefix(), np.zeros(2))
    agg.update([1.0, 2.0])
    p = agg.prefix()
    p[:] = 99.0
    assert not np.allclose(agg.prefix(), 99.0)


# ------------------------------------------------------------------------------------------------
# Stream length, ledger and budget


def test_stream_longer_than_T_raises_before_anything():
    rng = np.random.default_rng(9)
    agg = TreeAggregator(5, 1, sensitivity=1.0, epsilon=1.0, rng=rng)
    run(agg, np.ones((5, 1)))
    before, state = agg.prefix(), rng.bit_generator.state
    with pytest.raises(StreamLengthError, match="T=5"):
        agg.update([1.0])
    assert agg.t == 5 and rng.bit_generator.state == state
    np.testing.assert_array_equal(agg.prefix(), before)


def test_one_event_for_the_whole_stream():
    led = Ledger()
    agg = TreeAggregator(8, 1, sensitivity=1.0, epsilon=0.7, budget=led, rng=0)
    assert len(led) == 0  # nothing spent until the first release
    run(agg, np.ones((8, 1)))
    assert led.events == (agg.event,) and led.total() == (0.7, 0.0)
    assert "levels=4" in agg.event.note and "numpy" in agg.event.note
    run(agg.clone(), np.ones((3, 1)))  # a clone is a new release
    assert len(led) == 2


def test_budget_refusal_releases_nothing():
    rng = np.random.default_rng(4)
    budget = Budget(1.0)
    agg = TreeAggregator(8, 1, sensitivity=1.0, epsilon=0.6, budget=budget, rng=rng)
    # the budget is spent elsewhere between construction and the first item
    budget.charge(TreeAggregator(8, 1, sensitivity=1.0, epsilon=0.6).event)
    state = rng.bit_generator.state
    with pytest.raises(BudgetExceededError):
        agg.update([1.0])
    assert agg.t == 0 and rng.bit_generator.state == state and len(budget) == 1
    np.testing.assert_array_equal(agg.prefix(), [0.0])


def test_a_budget_that_cannot_fit_the_stream_is_refused_at_construction():
    budget = Budget(1.0)
    budget.charge(TreeAggregator(8, 1, sensitivity=1.0, epsilon=0.6).event)
    with pytest.raises(BudgetExceededError, match="'budget' parameter of TreeAggregator"):
        TreeAggregator(8, 1, sensitivity=1.0, epsilon=0.6, budget=budget, rng=0)
    with pytest.raises(BudgetExceededError, match="'budget'"):
        TreeAggregator(6, 1, sensitivity=0.4, epsilon=5000.0, budget=Budget(1000.0))
    assert len(budget) == 1  # nothing charged by the refusals
    TreeAggregator(8, 1, sensitivity=1.0, epsilon=0.4, budget=budget, rng=0)  # fits: accepted
    assert len(budget) == 1  # and charged only at the first update


@pytest.mark.parametrize("noise, extra, epsilon, sensitivity", [
    *[(n, {}, e, s) for n in ("laplace", "l2laplace")
      for e, s in ((1e-320, 0.39), (1.0, 1e300), (1e308, 5e-324))],
    *[("gaussian", {"delta": 1e-6}, e, s) for e, s in ((1.0, 1e300), (1e308, 5e-324))],
])
def test_node_noise_outside_float_range_is_refused_by_name(noise, extra, epsilon, sensitivity):
    """A noise scale that overflows (tiny epsilon, huge sensitivity) would release inf and NaN
    prefixes; one that underflows would release the exact sums. Both refused, naming epsilon."""
    budget = Budget(1e308, 0.5)
    with pytest.raises(ValidationError, match="epsilon"):
        TreeAggregator(6, 3, noise=noise, sensitivity=sensitivity, epsilon=epsilon,
                       budget=budget, rng=0, **extra)
    assert len(budget) == 0


def test_gaussian_tree_at_a_subnormal_sensitivity_is_refused_without_dividing_by_zero():
    # at a subnormal epsilon delta still bounds the noise: a finite, correct calibration
    agg = TreeAggregator(6, 3, noise="gaussian", sensitivity=0.39, epsilon=1e-320, delta=1e-6)
    assert gaussian_delta(agg.scale, 1e-320, math.sqrt(3) * 0.39) <= 1e-6
    assert 0.0 < agg.event.rho < math.inf
    with pytest.raises(ValidationError, match="epsilon"):
        TreeAggregator(1, 1, noise="gaussian", sensitivity=5e-324, epsilon=1e-320, delta=5e-4)
    with pytest.raises(ValidationError, match="sensitivity"):
        TreeAggregator(4, 1, noise="gaussian", sensitivity=1e300, rho=1e-300, epsilon=None)


def test_largest_node_noise_gives_finite_prefixes_without_warnings():
    import warnings

    agg = TreeAggregator(64, 2, sensitivity=1e298, epsilon=0.07, rng=1, honaker=True)
    assert agg.scale <= 1e300
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(64):
            agg.update([1.0, -1.0])
            assert np.all(np.isfinite(agg.prefix()))


# ------------------------------------------------------------------------------------------------
# Bad input


@pytest.mark.parametrize("kwargs, exc", [
    ({"T": 0}, ValidationError),
    ({"T": 2.5}, ParameterTypeError),
    ({"dim": 0}, ValidationError),
    ({"noise": "cauchy"}, ValidationError),
    ({"sensitivity": 0.0}, ValidationError),
    ({"sensitivity": -1.0}, ValidationError),
    ({"sensitivity": float("nan")}, ValidationError),
    ({"epsilon": 0.0}, ValidationError),
    ({"epsilon": -1.0}, ValidationError),
    ({"epsilon": float("inf")}, ValidationError),
    ({"epsilon": None}, ValidationError),
    ({"delta": 1e-6}, ValidationError),                      # Laplace is pure DP
    ({"noise": "gaussian"}, ValidationError),                # delta = 0
    ({"noise": "gaussian", "delta": 1.0}, ValidationError),
    ({"noise": "gaussian", "delta": -0.1}, ValidationError),
    ({"noise": "gaussian", "rho": 0.5}, ValidationError),    # both epsilon and rho
    ({"noise": "gaussian", "epsilon": None, "rho": -1.0}, ValidationError),
    ({"rho": 0.5, "epsilon": None}, ValidationError),        # rho with Laplace
    ({"honaker": 1}, ParameterTypeError),
    ({"budget": object()}, ParameterTypeError),
    ({"noise": "l2laplace", "backend": "secure"}, ValidationError),
    ({"backend": "gpu"}, ValidationError),
])
def test_bad_parameters(kwargs, exc):
    params = {"T": 8, "dim": 1, "sensitivity": 1.0, "epsilon": 1.0} | kwargs
    T, dim = params.pop("T"), params.pop("dim")
    with pytest.raises(exc) as info:
        TreeAggregator(T, dim, **params)
    assert isinstance(info.value, DPSubmodError)


def test_bad_items():
    rng = np.random.default_rng(0)
    agg = TreeAggregator(8, 2, sensitivity=1.0, epsilon=1.0, rng=rng)
    state = rng.bit_generator.state
    for bad in ([1.0], [[1.0, 2.0]], [np.nan, 0.0], [np.inf, 0.0], "ab"):
        with pytest.raises(DPSubmodError):
            agg.update(bad)
    assert agg.t == 0 and rng.bit_generator.state == state
    scalar = TreeAggregator(8, 1, sensitivity=1.0, epsilon=1.0, rng=0)
    scalar.update(2.0)
    assert scalar.t == 1


@settings(max_examples=30, deadline=None)
@given(T=st.integers(1, 70), honaker=st.booleans())
def test_noise_free_aggregator_is_exact(T, honaker):
    """With zero node noise the released prefix is the exact prefix sum, for every T."""
    items = np.arange(1.0, T + 1.0)[:, None]
    agg = TreeAggregator(T, 1, sensitivity=1.0, epsilon=1.0, honaker=honaker,
                         noise_sampler=lambda h, j: [0.0])
    np.testing.assert_allclose(run(agg, items)[:, 0], np.cumsum(items[:, 0]), rtol=1e-12)


# ------------------------------------------------------------------------------------------------
# Grid backends sum exact integer units


def _node_sum_units(stream, backend):
    """The units the secure aggregator sums into its first level-1 node."""
    agg = TreeAggregator(4, 1, sensitivity=1.0, epsilon=1.0, backend=backend,
                         noise_sampler=lambda level, index: np.zeros(1))
    agg.update([stream[0]])
    agg.update([stream[1]])
    return agg, sum(backend.to_units(np.array([x]), sensitivity=1.0, dim=1)[0] for x in stream)


def test_secure_tree_sums_items_on_the_grid_whatever_their_magnitude():
    """Items near 2**52 with sensitivity 1: a floating-point sum of a neighbouring pair moves by
    1.5 (the claim would be exceeded 1.5 times); the integer sum of grid-rounded items moves by
    at most the effective sensitivity the noise is calibrated to."""
    be = SecureBackend()
    g = float(be.grid(1.0, 1))
    big = 2.0**52
    a, b = [big, 0.51], [big, -0.49]  # neighbours: the second items differ by 1.0
    float_gap = abs((a[0] + a[1]) - (b[0] + b[1]))
    assert float_gap == 1.5  # the old path: summed in floats, then rounded
    _, units_a = _node_sum_units(a, be)
    _, units_b = _node_sum_units(b, be)
    eff_units = be.effective_sensitivity(1.0, kind="l1", dim=1) / g
    assert abs(units_a - units_b) <= eff_units
    assert float_gap / g > eff_units  # the old path breaks the calibration: caught


def test_secure_tree_releases_the_grid_sum_plus_node_noise():
    be = SecureBackend()
    g = float(be.grid(1.0, 1))
    agg = TreeAggregator(4, 1, sensitivity=1.0, epsilon=1.0, backend=be,
                         noise_sampler=lambda level, index: np.zeros(1))
    for x in (0.3, 2.0**40 + 0.7, -1.2):
        agg.update([x])
    want = sum(round(x / g) for x in (0.3, 2.0**40 + 0.7, -1.2)) * g
    assert agg.prefix()[0] == pytest.approx(want, rel=1e-15)


@pytest.mark.parametrize("noise,delta", [("laplace", 0.0), ("l2laplace", 0.0),
                                         ("gaussian", 1e-6)])
def test_an_aggregator_from_checked_values_is_the_public_one(noise, delta):
    """A learner's counter, built from the values its constructor checked, states the event,
    calibration and draws of the public constructor; prefix_noise_sd reads the calibration
    without building one."""
    kw = dict(noise=noise, sensitivity=2.5, epsilon=0.7, delta=delta)
    public = TreeAggregator(13, 3, rng=5, **kw)
    inner = TreeAggregator._from_checked(13, 3, backend=None, rng=5, **kw)
    assert inner.event == public.event and inner.scale == public.scale
    items = np.random.default_rng(0).uniform(-1.0, 1.0, (13, 3))
    np.testing.assert_array_equal(run(inner, items), run(public, items))
    assert prefix_noise_sd(13, 3, **kw) == math.sqrt(public.node_variance * public.levels)


def test_the_node_noise_scale_is_rounded_up():
    """The scale meets the stated cost exactly: ``L Delta / b <= epsilon`` (Laplace) and
    ``L Delta^2 / (2 sigma^2) <= rho`` (zCDP Gaussian), in rational arithmetic. The naive
    floating-point formula, the control, falls one ulp short on some of the same draws."""
    from fractions import Fraction

    rng = np.random.default_rng(0)
    naive_short = 0
    for _ in range(300):
        T, sens, eps = int(rng.integers(1, 2000)), float(rng.uniform(1e-3, 10.0)), \
            float(rng.uniform(1e-2, 10.0))
        tree = TreeAggregator(T, noise="laplace", sensitivity=sens, epsilon=eps, rng=0)
        L = tree.levels
        assert Fraction(tree.scale) * Fraction(eps) >= L * Fraction(sens)
        naive_short += Fraction(L * sens / eps) * Fraction(eps) < L * Fraction(sens)
        rho = float(rng.uniform(1e-3, 5.0))
        g = TreeAggregator(T, noise="gaussian", sensitivity=sens, rho=rho, rng=0)
        assert Fraction(g.scale) ** 2 * 2 * Fraction(rho) >= g.levels * Fraction(sens) ** 2
    assert naive_short > 0
