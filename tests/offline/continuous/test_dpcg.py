"""DPCG and curvature-aware DPCG (Sadeghi and Fazel 2021, offline part).

Privacy is checked exactly on one step over a 2-element ground set, where the output law of the
linear oracle applied to a Laplace-noised gradient is available in closed form (free matroid)
or by numerical integration (rank 1): the calibration with the general model's factor 2 passes,
the variant calibrated to Delta is caught. The noise the algorithm really draws is checked
against the calibrated scale. Quality: brute-force OPT against the expectation bound, the
epsilon limits, evaluation counts; DPCG-kappa returns the optimum of a modular objective.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, optimize, stats
from scipy.special import ndtr

import dpsubmod.privacy as mech
from dpsubmod import maximize
from dpsubmod.constraints import Knapsack, PartitionMatroid, UniformMatroid
from dpsubmod.errors import SensitivityError, ValidationError
from dpsubmod.extensions import multilinear_gradient
from dpsubmod.functions import Coverage, Modular
from dpsubmod.offline.continuous import _dpcg_path
from dpsubmod.offline.continuous.dpcg import (
    dpcg,
    dpcg_curvature,
    dpcg_default_steps,
    dpcg_noise_scale,
    dpcg_utility_gap,
)
from dpsubmod.polytopes import MatroidPolytope
from dpsubmod.privacy.audit import exact_check
from oracles import TableFunction, all_masks, brute_force_max

E = 1 - 1 / math.e
DELTA = 0.05


def skewed_coverage(seed: int = 3, N: int = 2000) -> Coverage:
    rng = np.random.default_rng(seed)
    p = np.array([0.45, 0.4, 0.35, 0.05, 0.05, 0.04, 0.03, 0.02])
    return Coverage.from_records([np.flatnonzero(rng.random(8) < p) for _ in range(N)], 8)


def _gradient(table, x):
    return multilinear_gradient(TableFunction(np.asarray(table)), np.asarray(x, dtype=float),
                                method="exact").estimate


def _lap_cdf(z, mu, b):
    return 0.5 * math.exp((z - mu) / b) if z < mu else 1 - 0.5 * math.exp(-(z - mu) / b)


# -- privacy: one step, exactly ------------------------------------------------------------------

# Free matroid on {a, b}: the oracle keeps every element of positive noisy weight, so the output
# law is a product of Laplace tails. Neighbours with |F_D - F_D'| <= Delta, both monotone
# submodular; at x = (1, 1) both gradient coordinates rise by 2 Delta (seed 002 review, C1).
FREE_D = np.array([0.10, 0.55, 0.55, 0.95])
FREE_DP = np.array([0.10, 0.60, 0.60, 0.90])


def _free_step(table, x, lam):
    g = _gradient(table, x)
    p_in = [1 - _lap_cdf(0.0, ge, lam) for ge in g]
    return {(a, b): (p_in[0] if a else 1 - p_in[0]) * (p_in[1] if b else 1 - p_in[1])
            for a in (0, 1) for b in (0, 1)}


@pytest.mark.parametrize("x", [(1.0, 1.0), (0.75, 0.75)])
def test_one_step_laplace_exact_free_matroid(x):
    K, eps = 4, 2.0
    lam = dpcg_noise_scale(eps, steps=K, n=2, gradient_sensitivity=2 * DELTA)
    assert lam == pytest.approx(2 * K * 2 * DELTA / eps)  # the note's 2 K n Delta / eps
    res = exact_check(lambda t: _free_step(t, x, lam), FREE_D, FREE_DP, epsilon=eps / K)
    assert res.passed
    # The empty output has probability exp(-(g_a + g_b)/lam)/4: the loss is sum(d)/lam, which
    # is exactly eps/K at the vertex (tight).
    d = _gradient(FREE_D, x) - _gradient(FREE_DP, x)
    assert res.epsilon_exact == pytest.approx(d.sum() / lam, rel=1e-9)
    if x == (1.0, 1.0):
        assert res.epsilon_exact == pytest.approx(eps / K, rel=1e-9)
    # Calibrated to Delta instead of 2 Delta: caught.
    lam_bad = dpcg_noise_scale(eps, steps=K, n=2, gradient_sensitivity=DELTA)
    bad = exact_check(lambda t: _free_step(t, x, lam_bad), FREE_D, FREE_DP, epsilon=eps / K)
    assert not bad.passed
    assert bad.epsilon_exact == pytest.approx(2 * d.sum() / lam, rel=1e-9)


# Rank 1 on {a, b}: output a iff Z_a > max(0, Z_b) with Z = g + Laplace noise; probabilities by
# numerical integration. The general-model pair of the seed 004 review (gradient difference
# (+2 Delta, -2 Delta) at x = (0, 1)).
RANK1_D = np.array([0.15, 0.50, 0.45, 0.75])
RANK1_DP = np.array([0.10, 0.50, 0.50, 0.70])


def _rank1_step(table, x, lam):
    g = _gradient(table, x)

    def win(i, j):
        def density(z):
            return math.exp(-abs(z - g[i]) / lam) / (2 * lam) * _lap_cdf(z, g[j], lam)
        edges = sorted({0.0, *(v for v in (g[i], g[j]) if v > 0)}) + [math.inf]
        return sum(integrate.quad(density, lo, hi, epsabs=1e-15, epsrel=1e-12)[0]
                   for lo, hi in zip(edges[:-1], edges[1:]))

    out = {"none": _lap_cdf(0.0, g[0], lam) * _lap_cdf(0.0, g[1], lam),
           "a": win(0, 1), "b": win(1, 0)}
    assert sum(out.values()) == pytest.approx(1.0, abs=1e-9)
    return out


@pytest.mark.parametrize("x", [(0.0, 1.0), (0.0, 0.0)])
def test_one_step_laplace_exact_rank_one_by_integration(x):
    eps = 2.0
    lam = dpcg_noise_scale(eps, steps=1, n=2, gradient_sensitivity=2 * DELTA)
    res = exact_check(lambda t: _rank1_step(t, x, lam), RANK1_D, RANK1_DP, epsilon=eps)
    assert res.passed and res.epsilon_exact > 0.5 * eps
    lam_bad = dpcg_noise_scale(eps, steps=1, n=2, gradient_sensitivity=DELTA)
    bad = exact_check(lambda t: _rank1_step(t, x, lam_bad), RANK1_D, RANK1_DP, epsilon=eps)
    assert not bad.passed


@pytest.mark.parametrize("calibration", ["paper", "analytic"])
def test_one_step_gaussian_exact_free_matroid(calibration):
    # Post-processing of an (eps/K, delta/K) Gaussian release: the hockey-stick divergence of the
    # four outputs at eps/K stays below delta/K.
    K, eps, delta = 4, 2.0, 1e-3
    sigma = dpcg_noise_scale(eps, delta, steps=K, n=2, gradient_sensitivity=2 * DELTA,
                             noise="gaussian", gaussian_calibration=calibration)

    def step(table):
        g = _gradient(table, (1.0, 1.0))
        p_in = ndtr(g / sigma)
        return {(a, b): (p_in[0] if a else 1 - p_in[0]) * (p_in[1] if b else 1 - p_in[1])
                for a in (0, 1) for b in (0, 1)}

    res = exact_check(step, FREE_D, FREE_DP, epsilon=eps / K, delta=delta / K)
    assert res.passed


def test_the_algorithm_draws_the_calibrated_noise(monkeypatch):
    # Capture the noisy weights the oracle receives; for a modular objective the gradient is the
    # weight vector, so weights - w is the noise. KS test, false alarm 1e-3 per case.
    captured = []
    original = _dpcg_path._Path.vertex

    def spy(self, w):
        captured.append(np.array(w))
        return original(self, w)

    monkeypatch.setattr(_dpcg_path._Path, "vertex", spy)
    w = np.linspace(0.1, 1.0, 20)
    f = Modular(w, sensitivity=0.01)
    res = dpcg(f, 5, epsilon=3.0, steps=50, rng=0)
    noise = np.concatenate([c - w for c in captured])
    lam = dpcg_noise_scale(3.0, steps=50, n=20, gradient_sensitivity=0.02)
    assert res.params["noise_scale"] == lam
    assert stats.kstest(noise, stats.laplace(scale=lam).cdf).pvalue > 1e-3
    captured.clear()
    res = dpcg(f, 5, epsilon=3.0, delta=1e-5, steps=50, gaussian_calibration="zcdp", rng=1)
    noise = np.concatenate([c - w for c in captured])
    sigma = res.params["noise_scale"]
    assert sigma == dpcg_noise_scale(3.0, 1e-5, steps=50, n=20, gradient_sensitivity=0.02,
                                     noise="gaussian", gaussian_calibration="zcdp")
    assert stats.kstest(noise, stats.norm(scale=sigma).cdf).pvalue > 1e-3


# -- calibration and accounting -------------------------------------------------------------------

def test_noise_scales_and_reports():
    n, K, eps, delta, s = 10, 5, 0.8, 1e-6, 0.02
    c = math.sqrt(2 * math.log(1.25 * K / delta))
    paper = dpcg_noise_scale(eps, delta, steps=K, n=n, gradient_sensitivity=s,
                             noise="gaussian", gaussian_calibration="paper")
    assert paper == pytest.approx(c * K * math.sqrt(n) * s / eps, rel=1e-12)
    analytic = dpcg_noise_scale(eps, delta, steps=K, n=n, gradient_sensitivity=s,
                                noise="gaussian", gaussian_calibration="analytic")
    assert analytic < paper
    with pytest.raises(ValidationError, match="analytic"):
        dpcg_noise_scale(10.0, delta, steps=K, n=n, gradient_sensitivity=s, noise="gaussian",
                         gaussian_calibration="paper")
    for e_, K_ in ((10.0, K), (eps, 1)):  # "auto": the smaller of analytic and zCDP
        auto = dpcg_noise_scale(e_, delta, steps=K_, n=n, gradient_sensitivity=s,
                                noise="gaussian")
        assert auto == min(dpcg_noise_scale(e_, delta, steps=K_, n=n, gradient_sensitivity=s,
                                            noise="gaussian", gaussian_calibration=c_)
                           for c_ in ("analytic", "zcdp"))
    f = skewed_coverage(N=500)
    for calib in ("paper", "analytic", "zcdp"):
        res = dpcg(f, 3, epsilon=eps, delta=delta, steps=K, gaussian_calibration=calib, rng=0)
        assert res.privacy.epsilon <= eps * (1 + 1e-9) and res.privacy.delta <= delta * (1 + 1e-9)
        assert res.privacy.uses == K and res.params["noise"] == "gaussian"
    res = dpcg(f, 3, epsilon=eps, steps=K, rng=0)
    assert res.privacy.epsilon == pytest.approx(eps) and res.privacy.delta == 0.0
    assert res.params["noise_scale"] == mech.laplace_scale(eps / K, 8 * f.sensitivity)


def test_general_model_doubles_the_gradient_sensitivity():
    f = TableFunction(RANK1_D)
    res = dpcg(f, 1, epsilon=1.0, sensitivity=DELTA, rng=0)
    assert res.params["gradient_sensitivity"] == pytest.approx(2 * DELTA)
    res = dpcg(skewed_coverage(N=100), 2, epsilon=1.0, rng=0)
    assert res.params["gradient_sensitivity"] == pytest.approx(0.01)  # monotone records


def test_default_steps():
    f = skewed_coverage()
    res = dpcg(f, 3, epsilon=1.0, rng=0)
    assert res.params["steps"] == 3  # ceil of the l1 radius, the rank
    K = dpcg_default_steps(epsilon=10.0, n=8, radius=3, gradient_sensitivity=f.sensitivity,
                           value_bound=1.0)
    # Laplace closed form K* = sqrt(m_F R eps / (4 n s H_n)), up to integer rounding.
    H = sum(1 / i for i in range(1, 9))
    k_star = math.sqrt(1.0 * 3 * 10.0 / (4 * 8 * f.sensitivity * H))
    assert abs(K - k_star) <= 1
    res = dpcg(f, 3, epsilon=10.0, value_bound=1.0, rng=0)
    assert res.params["steps"] == K


def test_evaluation_counts_match_the_formulas():
    f = skewed_coverage(N=200)
    n, K, N = 8, 6, 25
    assert dpcg(f, 3, epsilon=1.0, steps=K, rng=0).evaluations == K * n
    res = dpcg(f, 3, epsilon=1.0, steps=K, gradient="sampling", n_samples=N, rng=0)
    assert res.evaluations == K * N * (n + 1) and res.params["n_gradients"] == K


# -- quality ------------------------------------------------------------------------------------

def test_utility_meets_the_expectation_bound_matroid():
    # E F(S) >= (1 - 1/e) OPT - 2 R lambda H_n - m_F R^2 / (2K) (Lemma 1 with Lemma 2, Laplace
    # noise, swap rounding keeps the bound). Mean of 30 seeds minus 3 SE (one-sided 0.13%).
    f = skewed_coverage()
    opt, _ = brute_force_max(f, UniformMatroid(8, 3))
    m_F = max(f._value(row) for row in np.eye(8, dtype=bool))
    K = 10
    for eps in (10.0, 100.0):
        vals = np.array([dpcg(f, 3, epsilon=eps, steps=K, rng=s).diagnostics.value
                         for s in range(30)])
        lam = dpcg_noise_scale(eps, steps=K, n=8, gradient_sensitivity=f.sensitivity)
        bound = E * opt - dpcg_utility_gap(scale=lam, n=8, radius=3, steps=K, value_bound=m_F)
        assert bound > 0.2  # non-vacuous: 0.23 at eps = 10, 0.29 at eps = 100
        assert vals.mean() + 3 * vals.std(ddof=1) / math.sqrt(30) >= bound


def test_utility_knapsack():
    # The knapsack rounding loses at most m_F: E F(S) >= (1 - 1/e) OPT - gap - m_F, with
    # R = max ||x||_1 over the knapsack polytope.
    f = skewed_coverage()
    costs = np.array([1.0, 1.2, 0.9, 0.5, 0.6, 0.4, 0.3, 0.5])
    knap = Knapsack(costs, 2.5)
    opt, _ = brute_force_max(f, knap)
    m_F = max(f._value(row) for row in np.eye(8, dtype=bool))
    res = dpcg(f, knap, epsilon=100.0, steps=10, rng=0)
    R = res.params["l1_radius"]
    vals = np.array([dpcg(f, knap, epsilon=100.0, steps=10, rng=s).diagnostics.value
                     for s in range(30)])
    assert all(costs[list(dpcg(f, knap, epsilon=1.0, rng=s).selection)].sum() <= 2.5 + 1e-9
               for s in range(10))
    lam = dpcg_noise_scale(100.0, steps=10, n=8, gradient_sensitivity=f.sensitivity)
    gap = dpcg_utility_gap(scale=lam, n=8, radius=R, steps=10, value_bound=m_F)
    assert vals.mean() + 3 * vals.std(ddof=1) / math.sqrt(30) >= E * opt - gap - m_F
    assert vals.mean() >= 0.7 * opt


def test_limits_in_epsilon():
    f = skewed_coverage()
    opt, _ = brute_force_max(f, UniformMatroid(8, 3))
    K = 5
    # epsilon -> infinity: the noise vanishes; DPCG is the non-private continuous greedy, which
    # reaches the optimum on this instance.
    big = [dpcg(f, 3, epsilon=500.0 * K, steps=K, rng=s).diagnostics.value for s in range(5)]
    assert np.allclose(big, opt)
    # epsilon -> 0: the noise dominates the gradient, each oracle call returns a uniformly
    # random set of the positive noisy coordinates, and the value falls to that of a random
    # base (within 4 SE plus 0.02 for the padding of the few steps with < 3 positive
    # coordinates).
    masks = all_masks(8)
    base_vals = np.array([f._value(mk) for mk in masks if mk.sum() == 3])
    tiny = np.array([dpcg(f, 3, epsilon=1e-6, steps=1, rng=s).diagnostics.value
                     for s in range(200)])
    assert abs(tiny.mean() - base_vals.mean()) <= 4 * base_vals.std() / math.sqrt(200) + 0.02
    assert tiny.mean() < 0.7 * opt


def test_partition_matroid_and_sampled_gradients():
    f = skewed_coverage(N=300)
    m = PartitionMatroid([0, 1, 2, 0, 1, 2, 0, 1], [1, 1, 1])
    res = dpcg(f, m, epsilon=50.0, steps=4, gradient="sampling", n_samples=50, rng=0)
    assert m.is_independent(res.selection) and len(res.selection) == 3
    assert res.params["gradient"] == "sampling"


# -- curvature-aware DPCG ----------------------------------------------------------------------

def test_curvature_variant_returns_the_optimum_of_a_modular_objective():
    # kappa = 0: g = f - ell.x is identically 0, the oracle over P with ell.v >= OPT can only
    # return the optimal base, whatever the noise (the (1 - kappa/e) = 1 guarantee).
    w = np.array([0.9, 0.1, 0.5, 0.3, 0.8, 0.2])
    f = Modular(w, sensitivity=0.01)
    opt = w[[0, 2, 4]].sum()
    for s in range(5):
        res = dpcg_curvature(f, 3, epsilon=0.1, linear_term=w, target=opt, rng=s)
        assert sorted(res.selection) == [0, 2, 4]
        assert res.privacy.epsilon == pytest.approx(0.1)


def test_constrained_oracle_matches_linear_programming():
    rng = np.random.default_rng(0)
    n, k = 7, 3
    poly = MatroidPolytope(UniformMatroid(n, k))
    path = _dpcg_path._Path(poly)
    for _ in range(20):
        w, ell = rng.normal(size=n), rng.random(n)
        top = ell[np.argsort(-ell)[:k]].sum()
        lam = rng.uniform(0, top)
        parts = _dpcg_path._constrained_vertex(path, w, ell, lam)
        v = sum(theta * np.isin(np.arange(n), S) for S, theta in parts)
        assert ell @ v >= lam - 1e-7 and v.sum() <= k + 1e-9
        lp = optimize.linprog(-w, A_ub=np.vstack([np.ones(n), -ell]), b_ub=[k, -lam],
                              bounds=[(0, 1)] * n)
        assert w @ v == pytest.approx(-lp.fun, abs=1e-6)


def test_curvature_variant_private_linear_term_and_grid():
    f = skewed_coverage(N=1000)
    res = dpcg_curvature(f, 3, epsilon=3.0, steps=3, n_targets=4, rng=0)
    p = res.params
    assert res.privacy.epsilon == pytest.approx(3.0)
    # one Laplace release of ell, 4 runs of 3 Laplace steps, one exponential-mechanism choice
    assert res.privacy.uses == 1 + 4 * 3 + 1
    assert p["epsilon_linear_term"] == pytest.approx(0.3)
    assert p["epsilon_per_run"] == pytest.approx(2.4 / 4)
    assert len(p["targets"]) == 4 and p["targets"][0] == 0.0
    assert (p["linear_term"] >= 0).all() and len(res.selection) == 3
    # public ell and a given target: the whole budget goes to one run
    res = dpcg_curvature(f, 3, epsilon=3.0, steps=3, linear_term=np.full(8, 0.01), target=0.02,
                         rng=0)
    assert res.privacy.uses == 3 and res.params["epsilon_per_run"] == pytest.approx(3.0)


def test_bad_inputs():
    f = skewed_coverage(N=100)
    with pytest.raises(ValidationError, match="delta > 0"):
        dpcg(f, 2, epsilon=1.0, noise="gaussian")
    with pytest.raises(ValidationError, match="noise"):
        dpcg(f, 2, epsilon=1.0, noise="cauchy")
    with pytest.raises(SensitivityError):
        dpcg(TableFunction(np.zeros(4)), 1, epsilon=1.0)
    # the paper's Gaussian calibration exists on numpy only (an unseeded call is secure, which
    # refuses it for another reason, tested in test_dpcg_backend)
    with pytest.raises(ValidationError, match="per-step epsilon < 1"):
        dpcg(f, 2, epsilon=5.0, delta=1e-6, steps=2, gaussian_calibration="paper",
             backend="numpy")
    assert dpcg(f, 2, epsilon=5.0, delta=1e-6, steps=2, rng=0).params[
        "gaussian_calibration"] in ("analytic", "zcdp")
    with pytest.raises(ValidationError, match="budget_split"):
        dpcg_curvature(f, 2, epsilon=1.0, budget_split=(0.0, 1.0, 0.0))
    with pytest.raises(ValidationError, match="linear_term"):
        dpcg_curvature(f, 2, epsilon=1.0, linear_term="public")
    with pytest.raises(ValidationError, match="target"):
        dpcg_curvature(f, 2, epsilon=1.0, linear_term=np.full(8, 0.01), target=5.0)


def test_registry_and_reproducibility():
    f = skewed_coverage(N=300)
    a = maximize(f, 3, method="dpcg", epsilon=1.0, rng=3)
    b = dpcg(f, 3, epsilon=1.0, rng=3)
    assert a.selection == b.selection and a.method == "dpcg"
    c = maximize(f, 3, method="dpcg_curvature", epsilon=1.0, rng=3)
    assert c.is_private and len(c.selection) == 3


def test_secure_backend_with_delta_uses_zcdp_by_default():
    # The secure backend's Gaussian is the discrete Gaussian, exact under zCDP: "auto" picks it.
    f = skewed_coverage(N=300)
    res = dpcg(f, 3, epsilon=1.0, delta=1e-6, steps=4, backend="secure")
    assert res.params["gaussian_calibration"] == "zcdp"
    assert res.privacy.epsilon <= 1.0 + 1e-9 and res.privacy.delta <= 1e-6
    assert "secure" in str(res.privacy)
    # On the numpy backend "auto" is the less noisy of the exact per-step and zCDP ones.
    assert dpcg(f, 3, epsilon=1.0, delta=1e-6, steps=4, rng=0).params[
        "gaussian_calibration"] in ("analytic", "zcdp")


@pytest.mark.parametrize("calibration", ["auto", "zcdp"])
def test_a_subnormal_gaussian_budget_is_refused_by_epsilon_before_the_charge(calibration):
    # The zCDP cost of epsilon = delta = 1e-320 underflows to 0: 'auto' does not pick it, and
    # 'zcdp' refuses it by the user's argument, not by gaussian_sigma_zcdp's 'rho'.
    from dpsubmod import Budget, maximize
    from dpsubmod.errors import ValidationError
    from dpsubmod.functions import Modular

    budget = Budget(0.5)
    with pytest.raises(ValidationError, match="'epsilon' parameter of dpcg"):
        maximize(Modular([0.3], sensitivity=1e-320), 1, "dpcg", epsilon=1e-320, delta=1e-320,
                 steps=1, gaussian_calibration=calibration, budget=budget)
    assert budget.spent == (0.0, 0.0)
