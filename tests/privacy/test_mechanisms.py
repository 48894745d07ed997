"""Mechanisms: sampler goodness of fit, exact privacy of the selection mechanisms, calibration
boundaries, input validation and budget charging.

Statistical tests use fixed seeds; each states the false-alarm rate of its threshold, i.e. the
probability that a correct sampler fails it for a fresh seed.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, stats

import dpsubmod.privacy as M
from dpsubmod.errors import (
    DPSubmodError,
    InfeasibleConstraintError,
    ParameterTypeError,
    ValidationError,
)
from dpsubmod.privacy import Ledger
from dpsubmod.privacy.backends import NumpyBackend, SecureBackend

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from oracles import chi_square_pvalue, permute_and_flip_brute_force  # noqa: E402

ALPHA = 1e-6  # false-alarm rate of every goodness-of-fit test below


class CountingBackend(NumpyBackend):
    """A numpy backend that counts its draws (to prove nothing was drawn)."""

    def __init__(self, rng=None):
        super().__init__(rng)
        self.draws = 0

    def _count(self):
        self.draws += 1

    def add_laplace(self, *a, **k):
        self._count()
        return super().add_laplace(*a, **k)

    def add_gaussian(self, *a, **k):
        self._count()
        return super().add_gaussian(*a, **k)

    def add_l2_laplace(self, *a, **k):
        self._count()
        return super().add_l2_laplace(*a, **k)

    def exponential(self, *a, **k):
        self._count()
        return super().exponential(*a, **k)

    def report_noisy_max(self, *a, **k):
        self._count()
        return super().report_noisy_max(*a, **k)

    def permute_and_flip(self, *a, **k):
        self._count()
        return super().permute_and_flip(*a, **k)


# One call per mechanism, with valid arguments; tests override one argument at a time.
CALLS = {
    "laplace": (M.laplace, dict(value=[1.0, 2.0], epsilon=1.0, sensitivity=1.0)),
    "gaussian": (M.gaussian, dict(value=[1.0, 2.0], epsilon=0.5, delta=1e-6, sensitivity=1.0)),
    "l2_laplace": (M.l2_laplace, dict(value=[1.0, 2.0], epsilon=1.0, sensitivity=1.0)),
    "exponential_mechanism": (M.exponential_mechanism,
                              dict(scores=[0.0, 1.0, 2.0], epsilon=1.0, sensitivity=1.0)),
    "report_noisy_max": (M.report_noisy_max,
                         dict(scores=[0.0, 1.0, 2.0], epsilon=1.0, sensitivity=1.0)),
    "permute_and_flip": (M.permute_and_flip,
                         dict(scores=[0.0, 1.0, 2.0], epsilon=1.0, sensitivity=1.0)),
}
SELECTION = ["exponential_mechanism", "report_noisy_max", "permute_and_flip"]
RHO = {"laplace": 0.5, "gaussian": None, "l2_laplace": 0.5, "exponential_mechanism": 0.125,
       "report_noisy_max": 0.5, "permute_and_flip": 0.5}


def call(name, **override):
    fn, kwargs = CALLS[name]
    args = {**kwargs, **override}
    first = "value" if "value" in args else "scores"
    return fn(args.pop(first), **args)


# =============================================================================================
# goodness of fit of the numpy samplers
# =============================================================================================
def test_laplace_vector_matches_laplace_law_and_rejects_wrong_scale():
    out = M.laplace(np.zeros(20_000), epsilon=0.5, sensitivity=2.0, rng=1)
    # Kolmogorov-Smirnov at false-alarm rate ALPHA against Laplace(scale = 2 / 0.5).
    assert stats.kstest(out, "laplace", args=(0.0, 4.0)).pvalue > ALPHA
    # Power: a 30% wrong scale is rejected.
    assert stats.kstest(out, "laplace", args=(0.0, 4.0 * 1.3)).pvalue < ALPHA
    assert stats.kstest(out, "laplace", args=(0.0, 4.0 / 1.3)).pvalue < ALPHA


def test_laplace_scalar_returns_float_and_is_reproducible():
    a = M.laplace(3.0, epsilon=1.0, sensitivity=1.0, rng=7)
    b = M.laplace(3.0, epsilon=1.0, sensitivity=1.0, rng=7)
    assert isinstance(a, float) and a == b


def test_gaussian_matches_analytic_sigma():
    sigma = M.gaussian_sigma_analytic(0.5, 1e-6, 1.5)
    out = M.gaussian(np.zeros(20_000), epsilon=0.5, delta=1e-6, sensitivity=1.5, rng=2)
    assert stats.kstest(out, "norm", args=(0.0, sigma)).pvalue > ALPHA  # false alarm ALPHA
    assert stats.kstest(out, "norm", args=(0.0, 1.3 * sigma)).pvalue < ALPHA


def test_gaussian_zcdp_and_classic_sigmas():
    out = M.gaussian(np.zeros(20_000), rho=0.125, sensitivity=1.0, rng=3)
    assert stats.kstest(out, "norm", args=(0.0, 2.0)).pvalue > ALPHA  # sigma = 1/sqrt(0.25)
    sigma_c = M.gaussian_sigma_classic(0.5, 1e-5, 1.0)
    out = M.gaussian(np.zeros(20_000), epsilon=0.5, delta=1e-5, sensitivity=1.0,
                     calibration="classic", rng=4)
    assert stats.kstest(out, "norm", args=(0.0, sigma_c)).pvalue > ALPHA


@pytest.mark.parametrize("d", [1, 3, 10])
def test_l2_laplace_radius_is_gamma_and_direction_uniform(d):
    gen = np.random.default_rng(10 + d)
    scale = 2.0 / 0.8
    z = np.array([M.l2_laplace(np.zeros(d), epsilon=0.8, sensitivity=2.0, rng=gen)
                  for _ in range(3000)]).reshape(3000, d)
    r = np.linalg.norm(z, axis=1)
    # KS at ALPHA: the radius is Gamma(shape=d, scale=sensitivity/epsilon) ...
    assert stats.kstest(r, "gamma", args=(d, 0.0, scale)).pvalue > ALPHA
    assert stats.kstest(r, "gamma", args=(d, 0.0, 1.3 * scale)).pvalue < ALPHA
    u = z / r[:, None]
    if d == 1:
        # ... and the direction is a fair sign (two-sided binomial test at ALPHA).
        assert stats.binomtest(int((u[:, 0] > 0).sum()), 3000).pvalue > ALPHA
    else:
        # ... and for a uniform direction u_1^2 ~ Beta(1/2, (d-1)/2), for each axis.
        for axis in range(d):
            p = stats.kstest(u[:, axis] ** 2, "beta", args=(0.5, (d - 1) / 2)).pvalue
            assert p > ALPHA / d  # Bonferroni over the axes: family-wise false alarm ALPHA
        # Radius and direction are independent: the mean direction is ~0.
        assert np.all(np.abs(u.mean(axis=0)) < 5.3 / math.sqrt(3000 * d) * math.sqrt(d))


# =============================================================================================
# Gaussian calibration
# =============================================================================================
@settings(max_examples=60, deadline=None)
@given(eps=st.floats(0.01, 30.0), log_delta=st.floats(-25.0, math.log(0.5)),
       sens=st.floats(0.01, 100.0))
def test_analytic_sigma_is_the_smallest_satisfying_balle_wang(eps, log_delta, sens):
    delta = math.exp(log_delta)
    sigma = M.gaussian_sigma_analytic(eps, delta, sens)
    assert M.gaussian_delta(sigma, eps, sens) <= delta
    assert M.gaussian_delta(sigma * (1 - 1e-6), eps, sens) > delta
    if eps < 1:
        classic = M.gaussian_sigma_classic(eps, delta, sens)
        assert sigma < classic
        assert M.gaussian_delta(classic, eps, sens) <= delta  # the classic one is valid too


def test_gaussian_delta_matches_direct_formula():
    s, e, d = 3.0, 0.7, 2.0
    direct = (stats.norm.cdf(d / (2 * s) - e * s / d)
              - math.exp(e) * stats.norm.cdf(-d / (2 * s) - e * s / d))
    assert M.gaussian_delta(s, e, d) == pytest.approx(direct, rel=1e-12)


def test_classic_gaussian_refuses_epsilon_at_least_one():
    with pytest.raises(ValidationError, match="epsilon < 1"):
        M.gaussian_sigma_classic(1.0, 1e-6, 1.0)
    with pytest.raises(ValidationError, match="analytic"):
        M.gaussian(0.0, epsilon=2.0, delta=1e-6, sensitivity=1.0, calibration="classic")


def test_zcdp_maps_boundaries():
    sigma = M.gaussian_sigma_zcdp(0.3, 2.0)
    assert M.gaussian_rho(sigma, 2.0) <= 0.3 < M.gaussian_rho(sigma * (1 - 1e-9), 2.0)
    rho = M.zcdp_rho_for(1.0, 1e-6)
    # rho-zCDP => (rho + 2 sqrt(rho ln(1/delta)), delta)-DP, with equality at the returned rho.
    eps = rho + 2 * math.sqrt(rho * math.log(1e6))
    assert eps <= 1.0 and eps == pytest.approx(1.0, rel=1e-12)


def test_gaussian_sigma_dispatch():
    assert M.gaussian_sigma(sensitivity=1.0, rho=0.5) == M.gaussian_sigma_zcdp(0.5, 1.0)
    assert (M.gaussian_sigma(sensitivity=1.0, epsilon=0.5, delta=1e-6)
            == M.gaussian_sigma_analytic(0.5, 1e-6, 1.0))
    assert (M.gaussian_sigma(sensitivity=1.0, epsilon=0.5, delta=1e-6, calibration="zcdp")
            == M.gaussian_sigma_zcdp(M.zcdp_rho_for(0.5, 1e-6), 1.0))
    with pytest.raises(ValidationError, match="calibration"):
        M.gaussian_sigma(sensitivity=1.0, epsilon=0.5, delta=1e-6, calibration="tight")
    with pytest.raises(ValidationError, match="not both"):
        M.gaussian_sigma(sensitivity=1.0, epsilon=0.5, delta=1e-6, rho=0.1)


# =============================================================================================
# calibration helpers and privacy maps on both sides of the boundary
# =============================================================================================
@settings(max_examples=60, deadline=None)
@given(eps=st.floats(1e-3, 50.0), sens=st.floats(1e-3, 1e3))
def test_maps_invert_calibrations_at_the_boundary(eps, sens):
    b = M.laplace_scale(eps, sens)
    assert M.laplace_epsilon(b, sens) <= eps < M.laplace_epsilon(b * (1 - 1e-9), sens)
    b = M.l2_laplace_scale(eps, sens)
    assert M.l2_laplace_epsilon(b, sens) <= eps < M.l2_laplace_epsilon(b * (1 - 1e-9), sens)
    for mono in (False, True):
        w = M.exponential_mechanism_weight(eps, sens, monotonic=mono)
        assert (M.exponential_mechanism_epsilon(w, sens, monotonic=mono) <= eps
                < M.exponential_mechanism_epsilon(w * (1 + 1e-9), sens, monotonic=mono))
        b = M.report_noisy_max_scale(eps, sens, monotonic=mono)
        assert (M.report_noisy_max_epsilon(b, sens, monotonic=mono) <= eps
                < M.report_noisy_max_epsilon(b * (1 - 1e-9), sens, monotonic=mono))


def test_exponential_weight_constants():
    # General scores: w = eps / (2 Delta); monotone: eps / Delta; bounded range: eps / R.
    assert M.exponential_mechanism_weight(1.0, 0.5) == 1.0
    assert M.exponential_mechanism_weight(1.0, 0.5, monotonic=True) == 2.0
    assert M.exponential_mechanism_weight(1.0, range_sensitivity=0.25) == 4.0
    # A greedy step drawing with weights exp(eps' * gain) costs 2 eps' Delta.
    assert M.exponential_mechanism_epsilon(0.3, 2.0) == pytest.approx(1.2, rel=1e-15)
    assert M.report_noisy_max_scale(1.0, 1.0) == 2.0
    assert M.report_noisy_max_scale(1.0, 1.0, monotonic=True) == 1.0


# =============================================================================================
# exponential mechanism: exact distribution, draws, exact privacy
# =============================================================================================
def test_exponential_probabilities_are_softmax():
    q = np.array([0.0, 1.0, 2.5, -np.inf, -1.0])
    p = M.exponential_mechanism_probabilities(q, epsilon=1.2, sensitivity=0.5)
    w = np.exp(1.2 / (2 * 0.5) * np.where(np.isfinite(q), q, -np.inf))
    np.testing.assert_allclose(p, w / w.sum(), rtol=1e-13)
    assert p[3] == 0.0
    logp = M.exponential_mechanism_probabilities(q, epsilon=1.2, sensitivity=0.5, log=True)
    np.testing.assert_allclose(np.exp(logp), p, rtol=1e-13)
    # log space: huge score gaps neither overflow nor lose the leading candidates.
    big = M.exponential_mechanism_probabilities([1e6, 1e6 - 1.0, -1e6], epsilon=2.0,
                                                sensitivity=1.0)
    np.testing.assert_allclose(big[:2], [1 / (1 + math.exp(-1)), 1 / (1 + math.e)], rtol=1e-13)


@pytest.mark.parametrize("monotonic", [False, True])
def test_exponential_draws_match_exact_distribution(monotonic):
    q = np.array([0.0, 0.4, 1.0, 2.0, -np.inf, 1.5])
    gen = np.random.default_rng(20)
    draws = [M.exponential_mechanism(q, epsilon=1.5, sensitivity=0.5, monotonic=monotonic,
                                     rng=gen) for _ in range(20_000)]
    counts = np.bincount(draws, minlength=q.size)
    assert counts[4] == 0  # -inf is never selected
    p = M.exponential_mechanism_probabilities(q, epsilon=1.5, sensitivity=0.5,
                                              monotonic=monotonic)
    assert chi_square_pvalue(counts, p) > ALPHA  # chi-square, false alarm ALPHA
    # Power: the draws reject the distribution with the other calibration.
    wrong = M.exponential_mechanism_probabilities(q, epsilon=1.5, sensitivity=0.5,
                                                  monotonic=not monotonic)
    assert chi_square_pvalue(counts, wrong) < ALPHA


def max_log_ratio(p, p2):
    live = (p > 0) | (p2 > 0)
    return float(np.max(np.abs(np.log(p[live]) - np.log(p2[live]))))


def em_log_ratio(q, q2, **kw):
    a = M.exponential_mechanism_probabilities(q, log=True, **kw)
    b = M.exponential_mechanism_probabilities(q2, log=True, **kw)
    live = np.isfinite(a)
    return float(np.max(np.abs(a[live] - b[live])))


@settings(max_examples=60, deadline=None)
@given(data=st.data(), m=st.integers(2, 8), eps=st.floats(0.05, 5.0), sens=st.floats(0.1, 3.0))
def test_exponential_mechanism_is_eps_dp_on_random_neighbours(data, m, eps, sens):
    q = np.array(data.draw(st.lists(st.floats(-5, 5), min_size=m, max_size=m)))
    d = np.array(data.draw(st.lists(st.floats(-1, 1), min_size=m, max_size=m))) * sens
    # general: any |q - q'| <= Delta
    assert em_log_ratio(q, q + d, epsilon=eps, sensitivity=sens) <= eps * (1 + 1e-12)
    # monotone: all differences of one sign, |q - q'| <= Delta
    assert em_log_ratio(q, q + np.abs(d), epsilon=eps, sensitivity=sens,
                        monotonic=True) <= eps * (1 + 1e-12)
    # bounded range: q - q' in [a, a + R]
    a = data.draw(st.floats(-10, 10))
    r = 2 * sens
    shift = a + (d / sens + 1) / 2 * r
    assert em_log_ratio(q, q - shift, epsilon=eps, range_sensitivity=r) <= eps * (1 + 1e-12)


@pytest.mark.parametrize("eps,sens", [(1.0, 1.0), (0.1, 2.0), (3.0, 0.25)])
def test_exponential_mechanism_bounds_are_tight_and_miscalibration_fails(eps, sens):
    # General scores: q = (0, M) against q' = (-Delta, M + Delta). The loss on candidate 0 is
    # 2 w Delta - O(exp(-w M)), i.e. exactly eps in the limit.
    big = 60.0 / (eps / (2 * sens))
    q, q2 = np.array([0.0, big]), np.array([-sens, big + sens])
    loss = em_log_ratio(q, q2, epsilon=eps, sensitivity=sens)
    assert loss <= eps * (1 + 1e-12) and loss == pytest.approx(eps, abs=1e-9)
    # Mis-calibrated: weights exp(eps u / Delta) on general scores (half the noise) exceed eps.
    bad = em_log_ratio(q, q2, epsilon=eps, sensitivity=sens, monotonic=True)
    assert bad == pytest.approx(2 * eps, abs=1e-9) and bad > eps
    # Monotone scores: q' = q + (0, Delta) attains eps with w = eps / Delta.
    big = 60.0 / (eps / sens)
    q, q2 = np.array([0.0, big]), np.array([0.0, big + sens])
    loss = em_log_ratio(q, q2, epsilon=eps, sensitivity=sens, monotonic=True)
    assert loss <= eps * (1 + 1e-12) and loss == pytest.approx(eps, abs=1e-9)
    # Bounded range: differences in [0, R] with R = Delta attain eps with w = eps / R.
    loss = em_log_ratio(q, q2, epsilon=eps, range_sensitivity=sens)
    assert loss == pytest.approx(eps, abs=1e-9)


def test_marginal_gain_common_term_cancels():
    # Gains F(S+e) - F(S) share F(S); the distribution equals that on F(S+e), so the range
    # argument (2 Delta, not 4 Delta) applies to gains of an objective of sensitivity Delta.
    values_with_e = np.array([3.0, 4.5, 4.0])
    p_gain = M.exponential_mechanism_probabilities(values_with_e - 2.7, epsilon=1.0,
                                                   sensitivity=1.0)
    p_val = M.exponential_mechanism_probabilities(values_with_e, epsilon=1.0, sensitivity=1.0)
    np.testing.assert_allclose(p_gain, p_val, rtol=1e-13)


def test_clip_range_clips_finite_scores_only():
    q = [-5.0, 0.5, 9.0, -np.inf]
    p = M.exponential_mechanism_probabilities(q, epsilon=1.0, sensitivity=1.0,
                                              clip_range=(0.0, 1.0))
    ref = M.exponential_mechanism_probabilities([0.0, 0.5, 1.0, -np.inf], epsilon=1.0,
                                                sensitivity=1.0)
    np.testing.assert_allclose(p, ref, rtol=1e-13)
    assert p[3] == 0.0


# =============================================================================================
# permute-and-flip and report-noisy-max
# =============================================================================================
@settings(max_examples=40, deadline=None)
@given(data=st.data(), m=st.integers(1, 6), eps=st.floats(0.05, 6.0))
def test_permute_and_flip_probabilities_match_enumeration(data, m, eps):
    q = np.array(data.draw(st.lists(st.floats(-4, 4), min_size=m, max_size=m)))
    p = M.permute_and_flip_probabilities(q, epsilon=eps, sensitivity=1.0)
    ref = permute_and_flip_brute_force(np.exp(eps / 2 * (q - q.max())))
    np.testing.assert_allclose(p, ref, rtol=1e-10, atol=1e-15)
    assert p.sum() == pytest.approx(1.0, rel=1e-12)


def test_permute_and_flip_large_m_sums_to_one():
    q = np.random.default_rng(5).normal(size=3000)
    p = M.permute_and_flip_probabilities(q, epsilon=2.0, sensitivity=0.1)
    assert p.sum() == pytest.approx(1.0, rel=1e-9) and np.all(p >= 0)


@pytest.mark.parametrize("monotonic", [False, True])
def test_permute_and_flip_draws_match_exact_distribution(monotonic):
    q = np.array([0.0, 0.4, 1.0, 2.0, -np.inf, 1.5])
    gen = np.random.default_rng(21)
    draws = [M.permute_and_flip(q, epsilon=1.5, sensitivity=0.5, monotonic=monotonic,
                                rng=gen) for _ in range(20_000)]
    counts = np.bincount(draws, minlength=q.size)
    assert counts[4] == 0
    p = M.permute_and_flip_probabilities(q, epsilon=1.5, sensitivity=0.5, monotonic=monotonic)
    assert chi_square_pvalue(counts, p) > ALPHA  # chi-square, false alarm ALPHA
    em = M.exponential_mechanism_probabilities(q, epsilon=1.5, sensitivity=0.5,
                                               monotonic=monotonic)
    assert chi_square_pvalue(counts, em) < ALPHA  # PF is not the exponential mechanism


@settings(max_examples=40, deadline=None)
@given(data=st.data(), m=st.integers(2, 6), eps=st.floats(0.05, 5.0))
def test_permute_and_flip_is_eps_dp_on_random_neighbours(data, m, eps):
    q = np.array(data.draw(st.lists(st.floats(-5, 5), min_size=m, max_size=m)))
    d = np.array(data.draw(st.lists(st.floats(-1, 1), min_size=m, max_size=m)))
    kw = dict(epsilon=eps, sensitivity=1.0)
    p, p2 = (M.permute_and_flip_probabilities(x, **kw) for x in (q, q + d))
    assert max_log_ratio(p, p2) <= eps * (1 + 1e-9)
    p, p2 = (M.permute_and_flip_probabilities(x, monotonic=True, **kw) for x in (q, q + abs(d)))
    assert max_log_ratio(p, p2) <= eps * (1 + 1e-9)


@pytest.mark.parametrize("eps", [0.3, 1.0, 4.0])
def test_permute_and_flip_bound_is_tight_and_miscalibration_fails(eps):
    # Two candidates: the lower one is selected with probability exp(w (q_low - q_high)) / 2,
    # so moving both scores by Delta in opposite directions changes it by exactly exp(2 w Delta).
    q, q2 = np.array([0.0, -2.0]), np.array([1.0, -3.0])
    p, p2 = (M.permute_and_flip_probabilities(x, epsilon=eps, sensitivity=1.0) for x in (q, q2))
    assert max_log_ratio(p, p2) == pytest.approx(eps, abs=1e-9)
    bad = [M.permute_and_flip_probabilities(x, epsilon=eps, sensitivity=1.0, monotonic=True)
           for x in (q, q2)]
    assert max_log_ratio(*bad) == pytest.approx(2 * eps, abs=1e-9)


def rnm_probabilities(q, scale):
    """P(argmax q_i + Laplace(scale) = i), by numerical integration over the winner's noise."""
    q = np.asarray(q, dtype=float)

    def cdf(x):
        return np.where(x < 0, 0.5 * np.exp(np.minimum(x, 0) / scale),
                        1 - 0.5 * np.exp(-np.maximum(x, 0) / scale))

    out = []
    for i in range(q.size):
        rest = np.delete(q, i)

        def f(x, i=i, rest=rest):
            return math.exp(-abs(x - q[i]) / scale) / (2 * scale) * float(np.prod(cdf(x - rest)))

        lo, hi = q.min() - 40 * scale, q.max() + 40 * scale
        out.append(integrate.quad(f, lo, hi, points=sorted(q), limit=200, epsabs=1e-13)[0])
    return np.array(out)


@pytest.mark.parametrize("monotonic", [False, True])
def test_report_noisy_max_draws_match_numerical_distribution(monotonic):
    q = np.array([0.0, 0.5, 1.2])
    gen = np.random.default_rng(22)
    draws = [M.report_noisy_max(q, epsilon=1.0, sensitivity=0.5, monotonic=monotonic, rng=gen)
             for _ in range(20_000)]
    counts = np.bincount(draws, minlength=3)
    scale = M.report_noisy_max_scale(1.0, 0.5, monotonic=monotonic)
    assert chi_square_pvalue(counts, rnm_probabilities(q, scale)) > ALPHA  # false alarm ALPHA
    wrong = rnm_probabilities(q, scale * (2.0 if monotonic else 0.5))
    assert chi_square_pvalue(counts, wrong) < ALPHA


def test_report_noisy_max_privacy_numerically():
    # Worst-case-style neighbours (winner pushed down, rivals up) stay within eps (to the
    # accuracy of the quadrature); half the noise on general scores does not.
    eps = 1.0
    q, q2 = np.array([0.0, 0.0, 0.0]), np.array([-1.0, 1.0, 1.0])
    p = rnm_probabilities(q, M.report_noisy_max_scale(eps, 1.0))
    p2 = rnm_probabilities(q2, M.report_noisy_max_scale(eps, 1.0))
    assert max_log_ratio(p, p2) <= eps + 1e-6
    half = M.report_noisy_max_scale(eps, 1.0, monotonic=True)
    assert max_log_ratio(rnm_probabilities(q, half), rnm_probabilities(q2, half)) > eps


# =============================================================================================
# bad input: clear errors, nothing recorded, nothing drawn
# =============================================================================================
BAD_COMMON = [
    ("epsilon", 0.0), ("epsilon", -1.0), ("epsilon", float("nan")), ("epsilon", float("inf")),
    ("epsilon", "1"), ("sensitivity", 0.0), ("sensitivity", -2.0), ("sensitivity", np.inf),
    ("sensitivity", float("nan")),
]


@pytest.mark.parametrize("name", list(CALLS))
@pytest.mark.parametrize("arg,value", BAD_COMMON)
def test_bad_privacy_parameters_raise_before_anything(name, arg, value):
    ledger, be = Ledger(), CountingBackend(0)
    with pytest.raises(DPSubmodError, match=f"'{arg}'"):
        call(name, **{arg: value}, budget=ledger, backend=be)
    assert ledger.events == () and be.draws == 0


@pytest.mark.parametrize("name", SELECTION)
def test_bad_scores(name):
    ledger, be = Ledger(), CountingBackend(0)
    for bad in ([0.0, np.nan, 1.0], [0.0, np.inf]):
        with pytest.raises(ValidationError, match="'scores'"):
            call(name, scores=bad, budget=ledger, backend=be)
    with pytest.raises(InfeasibleConstraintError, match="-inf"):
        call(name, scores=[-np.inf, -np.inf], budget=ledger, backend=be)
    with pytest.raises(ValidationError, match="'scores'"):
        call(name, scores=[], budget=ledger, backend=be)
    with pytest.raises(ValidationError, match="'scores'"):
        call(name, scores=[[0.0, 1.0]], budget=ledger, backend=be)
    with pytest.raises(ParameterTypeError, match="'scores'"):
        call(name, scores=["a", "b"], budget=ledger, backend=be)
    with pytest.raises(DPSubmodError, match="clip_range"):
        call(name, clip_range=(1.0, 0.0), budget=ledger, backend=be)
    with pytest.raises(ParameterTypeError, match="monotonic"):
        call(name, monotonic="yes", budget=ledger, backend=be)
    assert ledger.events == () and be.draws == 0


@pytest.mark.parametrize("name", SELECTION)
def test_infeasible_candidates_are_never_selected(name):
    gen = np.random.default_rng(3)
    q = [-np.inf, 0.0, -np.inf, -100.0]
    picks = {call(name, scores=q, epsilon=5.0, rng=gen) for _ in range(300)}
    assert picks <= {1, 3}
    assert call(name, scores=[-np.inf, 2.0], backend=SecureBackend()) == 1


@pytest.mark.parametrize("name", ["laplace", "gaussian", "l2_laplace"])
def test_bad_values(name):
    ledger, be = Ledger(), CountingBackend(0)
    for bad in ([1.0, np.nan], [np.inf], []):
        with pytest.raises(ValidationError, match="'value'"):
            call(name, value=bad, budget=ledger, backend=be)
    assert ledger.events == () and be.draws == 0


def test_bad_gaussian_budgets():
    for kw in (dict(delta=0.0), dict(delta=1.0), dict(delta=-0.1), dict(delta=None),
               dict(rho=0.1), dict(epsilon=None, delta=None, rho=-1.0),
               dict(calibration="tight")):
        with pytest.raises(ValidationError):
            call("gaussian", **kw)
    with pytest.raises(ValidationError, match="zcdp"):
        call("gaussian", backend=SecureBackend(), calibration="analytic")


def test_selection_sensitivity_arguments():
    with pytest.raises(ValidationError, match="not both"):
        M.exponential_mechanism([0.0, 1.0], epsilon=1.0, sensitivity=1.0, range_sensitivity=1.0)
    with pytest.raises(ValidationError, match="sensitivity"):
        M.exponential_mechanism([0.0, 1.0], epsilon=1.0)
    with pytest.raises(ValidationError, match="range_sensitivity"):
        M.exponential_mechanism([0.0, 1.0], epsilon=1.0, range_sensitivity=0.0)


def test_bad_budget_and_backend_arguments():
    with pytest.raises(ParameterTypeError, match="budget"):
        call("laplace", budget=[])
    with pytest.raises(ValidationError, match="backend"):
        call("laplace", backend="fast")
    with pytest.raises(ValidationError, match="rng"):
        call("laplace", backend=NumpyBackend(0), rng=1)


def test_secure_backend_refuses_l2_laplace_before_recording():
    ledger = Ledger()
    with pytest.raises(ValidationError, match="l2"):
        call("l2_laplace", budget=ledger, backend="secure")
    assert ledger.events == ()


# =============================================================================================
# budget charging
# =============================================================================================
@pytest.mark.parametrize("backend", ["numpy", "secure"])
@pytest.mark.parametrize("name", list(CALLS))
def test_each_use_records_one_event(name, backend):
    if backend == "secure" and name == "l2_laplace":
        pytest.skip("refused by the secure backend (tested above)")
    ledger = Ledger()
    call(name, budget=ledger, backend=backend)
    call(name, budget=ledger, backend=backend)
    assert len(ledger.events) == 2
    ev = ledger.events[0]
    assert ev.mechanism == name and ev.count == 1
    assert f"backend={backend}" in ev.note
    if name == "gaussian":
        assert (ev.epsilon, ev.delta) == (0.5, 1e-6)
        sigma = float(ev.note.split("sigma=")[1].split(";")[0])
        assert ev.rho == pytest.approx(1.0 / (2 * sigma ** 2), rel=1e-5)
    else:
        assert (ev.epsilon, ev.delta, ev.rho) == (1.0, 0.0, RHO[name])


def test_gaussian_rho_target_records_zcdp_only():
    ledger = Ledger()
    M.gaussian([0.0], rho=0.2, sensitivity=1.0, budget=ledger, rng=0)
    ev = ledger.events[0]
    assert ev.epsilon == math.inf and ev.delta == 0.0 and ev.rho == 0.2


class RefusingLedger(Ledger):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def charge(self, events):
        self.calls += 1
        raise RuntimeError("budget exhausted")


@pytest.mark.parametrize("name", list(CALLS))
def test_a_refusing_ledger_stops_the_draw(name):
    be, ledger = CountingBackend(0), RefusingLedger()
    with pytest.raises(RuntimeError, match="budget"):
        call(name, budget=ledger, backend=be)
    assert ledger.calls == 1 and be.draws == 0


@pytest.mark.parametrize("name", list(CALLS))
def test_recording_happens_before_drawing(name):
    be = CountingBackend(0)
    seen = []

    class Spy(Ledger):
        def charge(self, events):
            seen.append(be.draws)

    call(name, budget=Spy(), backend=be)
    assert seen == [0] and be.draws == 1


def test_same_seed_same_selection_and_generator_stream_continues():
    q = np.linspace(0, 1, 50)
    a = [M.exponential_mechanism(q, epsilon=1.0, sensitivity=0.1, rng=s) for s in range(20)]
    b = [M.exponential_mechanism(q, epsilon=1.0, sensitivity=0.1, rng=s) for s in range(20)]
    assert a == b
    gen = np.random.default_rng(0)
    c = [M.exponential_mechanism(q, epsilon=1.0, sensitivity=0.1, rng=gen) for _ in range(20)]
    assert len(set(c)) > 1  # a passed Generator is continued, not re-seeded


# =============================================================================================
# secure backend through the mechanisms
# =============================================================================================
def seeded_secure(seed, granularity=None):
    import random

    return SecureBackend(granularity, random_source=random.Random(seed))


@pytest.mark.parametrize("mech,probs", [
    (M.exponential_mechanism, M.exponential_mechanism_probabilities),
    (M.permute_and_flip, M.permute_and_flip_probabilities),
])
def test_secure_selection_matches_its_exact_distribution(mech, probs):
    # Scores off the grid: the exact distribution is computed on the backend's rounded scores.
    be = seeded_secure(30, granularity=2.0 ** -2)
    q = np.array([0.0, 0.3, 1.1, 2.0, -np.inf, 1.6])
    counts = np.bincount([mech(q, epsilon=1.5, sensitivity=0.5, backend=be)
                          for _ in range(6000)], minlength=q.size)
    assert counts[4] == 0
    p = probs(q, epsilon=1.5, sensitivity=0.5, backend=be)
    assert chi_square_pvalue(counts, p) > ALPHA  # chi-square, false alarm ALPHA
    # The grid matters: 0.3 was rounded to 0.25, and sensitivity 0.5 is on the grid.
    assert be.quantize_scores(q, sensitivity=0.5)[1] == 0.25


def test_secure_exponential_mechanism_is_exactly_eps_dp_after_rounding():
    # Off-grid neighbours with |q - q'| <= Delta: the distributions of the secure draws (rounded
    # scores, inflated sensitivity) stay within eps, and the inflation is at most one grid step.
    be = seeded_secure(0, granularity=2.0 ** -3)
    rng = np.random.default_rng(8)
    eps, sens = 1.0, 0.3
    worst = 0.0
    for _ in range(300):
        q = rng.uniform(-2, 2, 4)
        q2 = q + rng.uniform(-sens, sens, 4)
        a = M.exponential_mechanism_probabilities(q, epsilon=eps, sensitivity=sens, backend=be)
        b = M.exponential_mechanism_probabilities(q2, epsilon=eps, sensitivity=sens, backend=be)
        worst = max(worst, max_log_ratio(a, b))
    assert worst <= eps * (1 + 1e-12)
    assert sens < be.effective_sensitivity(sens) <= sens + 2.0 ** -3


# ------------------------------------------------------------------------------------------------
# Extreme but finite parameters: refused before anything is charged, never a crash or a hang


@pytest.mark.parametrize("name", ["permute_and_flip", "exponential_mechanism",
                                  "report_noisy_max"])
@pytest.mark.parametrize("eps, sens", [(5e-324, 1.0), (1e-300, 1e300), (1e308, 1e-10)])
def test_noise_parameters_out_of_float_range_are_refused_before_the_charge(name, eps, sens):
    from dpsubmod.privacy import Budget

    b = Budget(1e308)
    fn = getattr(M, name)
    try:
        out = fn([0.0, 1.0, 2.0], epsilon=eps, sensitivity=sens, budget=b, rng=0)
    except ValidationError as exc:
        assert "floating-point range" in str(exc) and len(b) == 0
    else:
        assert out in (0, 1, 2) and len(b) == 1


def test_gaussian_calibration_terminates_for_subnormal_delta():
    sigma = M.gaussian_sigma_analytic(1.0, 1e-320, 1.0)
    assert math.isfinite(sigma) and sigma > M.gaussian_sigma_analytic(1.0, 1e-300, 1.0)
    assert M.gaussian_delta(sigma, 1.0, 1.0) <= 1e-320
    assert math.isfinite(M.zcdp_rho_for(1.0, 5e-324))


@pytest.mark.parametrize("eps", [1e-300, 1e-10, 1.0, 1e10, 1e300])
@pytest.mark.parametrize("sens", [1e-300, 1.0, 1e300])
@pytest.mark.parametrize("delta", [1e-300, 1e-6, 0.5])
def test_analytic_sigma_at_extreme_parameters_is_exact_or_refused(eps, sens, delta):
    # Across the float range the calibration returns (no hang) either the smallest exact sigma
    # (the profile holds at sigma and fails 1e-6 below it) or a refusal naming the parameters,
    # exactly when sigma / sensitivity puts sigma outside float range.
    try:
        sigma = M.gaussian_sigma_analytic(eps, delta, sens)
    except ValidationError as exc:
        assert "epsilon" in str(exc) and "sensitivity" in str(exc)
        ratio = M.gaussian_sigma_analytic(eps, delta, 1.0)  # sigma / sensitivity, in range
        assert not 1e-308 < ratio * sens < 1.7e308
        return
    assert M.gaussian_delta(sigma, eps, sens) <= delta
    assert M.gaussian_delta(sigma * (1 - 1e-6), eps, sens) > delta


def test_zcdp_maps_refuse_values_outside_float_range_by_name():
    with pytest.raises(ValidationError, match="'sigma' parameter"):
        M.gaussian_rho(1e-320, 1.0)
    with pytest.raises(ValidationError, match="'epsilon' parameter"):
        M.zcdp_rho_for(1e-320, 1e-300)
    assert M.gaussian_rho(1e-150, 1e-150) == 0.5
    assert M.gaussian_rho(7.7e4, 1e-320) == 5e-324  # an underflow is rounded up, not to 0
    assert math.isfinite(M.gaussian_sigma_zcdp(1e308, 1.0))
