"""Noise backends: exact samplers (CKS20), grid rounding and its sensitivity bound, the secure
backend's independence from numpy, and backend resolution.

Statistical tests use a seeded ``random.Random`` as the source of the exact samplers (the
algorithm is the same as with the OS CSPRNG; only the bits are reproducible). Each states its
false-alarm rate.
"""

from __future__ import annotations

import math
import random
import secrets
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpsubmod.privacy as M
from dpsubmod.errors import ParameterTypeError, ValidationError
from dpsubmod.privacy import Ledger
from dpsubmod.privacy import backends as B

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from oracles import chi_square_pvalue  # noqa: E402

ALPHA = 1e-6  # false-alarm rate of every goodness-of-fit test below
Z_ALPHA = 4.89  # two-sided normal quantile for ALPHA


def dlap_pmf(z, t):
    """P[z] of the discrete Laplace with P proportional to exp(-|z|/t)."""
    a = math.exp(-1.0 / t)
    return (1 - a) / (1 + a) * np.exp(-np.abs(z) / t)


def dgauss_pmf(z, sigma2):
    support = np.arange(-2000, 2001)
    norm = np.exp(-support.astype(float) ** 2 / (2 * sigma2)).sum()
    return np.exp(-np.asarray(z, dtype=float) ** 2 / (2 * sigma2)) / norm


def integer_counts(draws, lo, hi):
    """Counts on lo..hi, with everything outside pooled into the two end cells."""
    x = np.clip(np.asarray(draws), lo, hi)
    return np.bincount(x - lo, minlength=hi - lo + 1)


def tail_pooled(pmf_values):
    """Put the mass beyond the two ends of a symmetric pmf into the end cells."""
    p = pmf_values.copy()
    p[0] += max(0.0, 1.0 - p.sum()) / 2  # mass beyond the ends (symmetric laws)
    p[-1] += max(0.0, 1.0 - p.sum())
    return p


# =============================================================================================
# exact samplers
# =============================================================================================
@pytest.mark.parametrize("gamma", [Fraction(0), Fraction(3, 10), Fraction(1), Fraction(5, 2),
                                   Fraction(7)])
def test_bernoulli_exp_frequency(gamma):
    src = random.Random(int(gamma * 10))
    n = 40_000
    k = sum(B.bernoulli_exp(gamma, src) for _ in range(n))
    p = math.exp(-gamma)
    if p == 1.0:
        assert k == n
        return
    # two-sided normal approximation to the binomial, false alarm ALPHA
    assert abs(k - n * p) <= Z_ALPHA * math.sqrt(n * p * (1 - p)) + 1
    if gamma <= 3:  # power: the frequency of a wrong parameter (gamma + 0.1) is rejected
        q = math.exp(-gamma - Fraction(1, 10))
        assert abs(k - n * q) > Z_ALPHA * math.sqrt(n * q * (1 - q)) + 1


def test_bernoulli_is_exact_on_rationals():
    src = random.Random(1)
    assert not any(B.bernoulli(Fraction(0), src) for _ in range(100))
    assert all(B.bernoulli(Fraction(1), src) for _ in range(100))
    n = 40_000
    k = sum(B.bernoulli(Fraction(2, 7), src) for _ in range(n))
    assert abs(k - n * 2 / 7) <= Z_ALPHA * math.sqrt(n * 2 / 7 * 5 / 7)


@pytest.mark.parametrize("x", [Fraction(1, 3), Fraction(2), Fraction(7, 5)])
def test_geometric_exp_chi_square(x):
    src = random.Random(3)
    draws = [B.geometric_exp(x, src) for _ in range(20_000)]
    hi = 40
    counts = np.bincount(np.minimum(draws, hi), minlength=hi + 1)
    a = math.exp(-x)
    p = (1 - a) * a ** np.arange(hi + 1)
    p[-1] = a ** hi  # P[k >= hi]
    assert chi_square_pvalue(counts, p) > ALPHA  # chi-square, false alarm ALPHA


@pytest.mark.parametrize("t", [Fraction(3, 2), Fraction(7, 3), Fraction(10)])
def test_discrete_laplace_chi_square_and_power(t):
    src = random.Random(4)
    draws = [B.discrete_laplace(t, src) for _ in range(20_000)]
    lo, hi = -int(12 * t), int(12 * t)
    counts = integer_counts(draws, lo, hi)
    z = np.arange(lo, hi + 1)
    p = tail_pooled(dlap_pmf(z, float(t)))
    assert chi_square_pvalue(counts, p) > ALPHA  # chi-square, false alarm ALPHA
    wrong = tail_pooled(dlap_pmf(z, 1.3 * float(t)))
    assert chi_square_pvalue(counts, wrong) < ALPHA  # power against a 30% wrong scale
    assert np.mean(draws) == pytest.approx(0.0, abs=Z_ALPHA * math.sqrt(
        2 * math.exp(-1 / t) / (1 - math.exp(-1 / t)) ** 2 / 20_000))


@pytest.mark.parametrize("sigma2", [Fraction(1, 2), Fraction(5, 2), Fraction(40)])
def test_discrete_gaussian_chi_square_and_power(sigma2):
    src = random.Random(5)
    draws = [B.discrete_gaussian(sigma2, src) for _ in range(12_000)]
    s = math.sqrt(sigma2)
    lo, hi = -int(7 * s) - 1, int(7 * s) + 1
    counts = integer_counts(draws, lo, hi)
    z = np.arange(lo, hi + 1)
    p = tail_pooled(dgauss_pmf(z, float(sigma2)))
    assert chi_square_pvalue(counts, p) > ALPHA  # chi-square, false alarm ALPHA
    wrong = tail_pooled(dgauss_pmf(z, float(sigma2) * 1.69))  # sigma 30% larger
    assert chi_square_pvalue(counts, wrong) < ALPHA


def test_sampler_argument_errors():
    with pytest.raises(ValidationError):
        B.bernoulli_exp(Fraction(-1))
    with pytest.raises(ValidationError):
        B.geometric_exp(Fraction(0))
    with pytest.raises(ValidationError):
        B.discrete_laplace(Fraction(0))
    with pytest.raises(ValidationError):
        B.discrete_gaussian(Fraction(-1))


# =============================================================================================
# grid, effective sensitivity, secure releases
# =============================================================================================
def test_granularity_validation_and_defaults():
    for bad in (0.3, 0.0, -0.5, float("inf"), float("nan"), True, "1"):
        with pytest.raises(ValidationError, match="power of two"):
            B.SecureBackend(bad)
    with pytest.raises(ParameterTypeError, match="randrange"):
        B.SecureBackend(random_source=object())
    be = B.SecureBackend()
    assert be.secure and isinstance(be._source, secrets.SystemRandom)
    assert not B.SecureBackend(random_source=random.Random(0)).secure
    # default grid: 2**(floor(log2(sensitivity / dim)) - 20)
    assert be.grid(1.0) == Fraction(1, 2 ** 20)
    assert be.grid(3.0) == Fraction(2, 2 ** 20)
    assert be.grid(1.0, 4) == Fraction(1, 2 ** 22)
    assert B.SecureBackend(2.0 ** -3).grid(1000.0, 50) == Fraction(1, 8)
    assert "granularity=2^-20" in be.label(1.0)


def test_effective_sensitivity_formulas():
    be = B.SecureBackend(2.0 ** -2)
    assert be.effective_sensitivity(1.0) == 1.0  # on the grid: ceil(4) = 4 units
    assert be.effective_sensitivity(0.3) == 0.5  # ceil(1.2) = 2 units
    assert be.effective_sensitivity(0.3, kind="l1", dim=5) == 0.5 + 4 * 0.25
    assert be.effective_sensitivity(0.3, kind="range") == 0.75
    assert be.effective_sensitivity(1.0, kind="l2", dim=4) == 1.0 + 2 * 0.25
    l2 = be.effective_sensitivity(1.0, kind="l2", dim=3)
    assert 1.0 + math.sqrt(3) * 0.25 <= l2 <= 1.0 + math.sqrt(3) * 0.25 + 1e-9
    assert B.NumpyBackend(0).effective_sensitivity(0.3, kind="l1", dim=5) == 0.3
    with pytest.raises(ValidationError, match="kind"):
        be.effective_sensitivity(1.0, kind="l3")


@settings(max_examples=60, deadline=None)
@given(x=st.floats(-1e3, 1e3), d=st.floats(0.0, 5.0), u=st.floats(0.0, 1.0),
       k=st.integers(-8, 3))
def test_grid_rounding_moves_neighbours_by_at_most_ceil_sensitivity(x, d, u, k):
    # |x - x'| <= D  implies  |N(x) - N(x')| <= ceil(D / g): the sensitivity in grid units.
    be = B.SecureBackend(2.0 ** k)
    g = be.grid(1.0)
    x2 = x + (2 * u - 1) * d
    n1, n2 = be._round(np.array([x, x2]), g)
    assert abs(n1 - n2) <= math.ceil(Fraction(abs(x2 - x)) / g)
    # rounding to nearest: within half a grid step
    assert abs(Fraction(x) - n1 * g) <= g / 2


EDGE_FLOATS = [0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 0.49999999999999994,
               -0.49999999999999994, 0.5000000000000001, -0.5000000000000001, 2.0 ** 52 - 0.5,
               -(2.0 ** 52) + 0.5, 2.0 ** 52 + 1, 2.0 ** 61, -(2.0 ** 61), 5e-324, -5e-324,
               1e-310, 1e300, -1e300, 2.0 ** -1074 * 3]


@settings(max_examples=200, deadline=None)
@given(xs=st.lists(st.one_of(st.floats(allow_nan=False, allow_infinity=False),
                             st.sampled_from(EDGE_FLOATS)), min_size=1, max_size=20),
       k=st.integers(-1074, 60))
def test_vectorised_grid_rounding_equals_exact_rational_rounding(xs, k):
    """floor(x / g + 1/2) in vectorised floating point (when it claims exactness) and in
    rational arithmetic agree, including halves, subnormals, and values near 2**52 and 2**62."""
    from dpsubmod.privacy.exact import UNIT_LIMIT, grid_units, grid_units_int64

    g = Fraction(2) ** k
    want = [math.floor(Fraction(x) / g + Fraction(1, 2)) for x in xs]
    fast = grid_units_int64(np.array(xs), g)
    if fast is not None:
        assert fast.tolist() == want
        assert all(abs(n) < UNIT_LIMIT for n in want)
    assert grid_units(np.array(xs), g) == want


def test_grid_rounding_refuses_what_int64_cannot_hold():
    from dpsubmod.privacy.exact import grid_units, grid_units_int64, units_to_float

    assert grid_units_int64(np.array([2.0 ** 62]), Fraction(1)) is None
    assert grid_units_int64(np.array([1e300]), Fraction(1, 2 ** 20)) is None
    # x / g would underflow: the exact rational path takes over
    assert grid_units_int64(np.array([5e-324]), Fraction(2)) is None
    assert grid_units(np.array([5e-324, 3.0]), Fraction(2)) == [0, 2]
    n = grid_units_int64(np.array([0.3, -7.25]), Fraction(1, 8))
    assert n.tolist() == [2, -58]
    assert units_to_float(n, Fraction(1, 8)).tolist() == [0.25, -7.25]


def test_secure_laplace_release_is_on_grid_with_discrete_laplace_noise():
    g = 2.0 ** -3
    be = B.SecureBackend(g, random_source=random.Random(6))
    out = be.add_laplace(np.full(12_000, 0.3), 0.5, sensitivity=1.0)
    units = out / g
    assert np.all(units == np.round(units))  # every release is a multiple of g
    noise = np.round(units).astype(int) - 2  # 0.3 rounds to 2 grid units (0.25)
    lo, hi = -40, 40
    z = np.arange(lo, hi + 1)
    p = tail_pooled(dlap_pmf(z, 0.5 / g))
    assert chi_square_pvalue(integer_counts(noise, lo, hi), p) > ALPHA  # false alarm ALPHA


def test_secure_gaussian_release_is_on_grid_with_discrete_gaussian_noise():
    g = 2.0 ** -2
    be = B.SecureBackend(g, random_source=random.Random(7))
    out = be.add_gaussian(np.full(8_000, -1.1), 1.5, sensitivity=1.0)
    units = out / g
    assert np.all(units == np.round(units))
    noise = np.round(units).astype(int) + 4  # -1.1 rounds to -4 grid units (-1.0)
    s2 = (1.5 / g) ** 2
    lo, hi = -45, 45
    z = np.arange(lo, hi + 1)
    p = tail_pooled(dgauss_pmf(z, s2))
    assert chi_square_pvalue(integer_counts(noise, lo, hi), p) > ALPHA  # false alarm ALPHA


def secure_rnm_probabilities(n, t):
    """Exact law of argmax_i n_i + Z_i (Z discrete Laplace(t), uniform tie-break) for integers n.

    Given the winner's value v and tie-break uniform u, each rival j is below v, or tied and
    below u: P = prod_j (a_j + b_j u); integrate u over [0, 1] by Gauss-Legendre (exact for the
    polynomial), and sum over v.
    """
    n = np.asarray(n)
    zs = np.arange(-60 * int(t) - 60, 60 * int(t) + 61)
    pz = dlap_pmf(zs, t)
    cdf_lt = np.concatenate(([0.0], np.cumsum(pz)[:-1]))  # P[Z < zs[i]]
    nodes, w = np.polynomial.legendre.leggauss(len(n) + 1)
    u, w = (nodes + 1) / 2, w / 2
    out = np.zeros(len(n))
    for i in range(len(n)):
        for k, z in enumerate(zs):
            v = n[i] + z
            prod = np.ones_like(u)
            for j in range(len(n)):
                if j == i:
                    continue
                idx = v - n[j] - zs[0]  # Z_j = v - n_j is a tie
                a = cdf_lt[idx] if 0 <= idx < zs.size else float(idx >= zs.size)
                b = pz[idx] if 0 <= idx < zs.size else 0.0
                prod = prod * (a + b * u)
            out[i] += pz[k] * float((w * prod).sum())
    return out


def test_secure_report_noisy_max_matches_exact_law_with_ties():
    # Integer scores and a small scale make ties frequent, exercising the tie-break.
    be = B.SecureBackend(1.0, random_source=random.Random(8))
    q = np.array([0.0, 1.0, 1.0, -np.inf, 3.0])
    counts = np.bincount([be.report_noisy_max(q, 1.5, sensitivity=1.0) for _ in range(8000)],
                         minlength=5)
    assert counts[3] == 0
    live = [0, 1, 2, 4]
    p = np.zeros(5)
    p[live] = secure_rnm_probabilities(q[live].astype(int), 1.5)
    assert p.sum() == pytest.approx(1.0, abs=1e-9)
    assert chi_square_pvalue(counts, p) > ALPHA  # chi-square, false alarm ALPHA
    # Candidates 1 and 2 are exchangeable; a first-index tie-break would favour 1 (false
    # alarm ALPHA).
    assert abs(counts[1] - counts[2]) <= Z_ALPHA * math.sqrt(counts[1] + counts[2])


def test_secure_report_noisy_max_privacy_exact():
    # Exact law on integer neighbours |n - n'| <= 1 with scale t = 2 / eps: loss <= eps.
    eps = 1.0
    t = 2.0 / eps
    worst = 0.0
    for n, n2 in [([0, 0, 0], [-1, 1, 1]), ([0, 2, 1], [1, 1, 0]), ([3, 0, 0], [2, 1, 1])]:
        a, b = secure_rnm_probabilities(n, t), secure_rnm_probabilities(n2, t)
        worst = max(worst, float(np.max(np.abs(np.log(a) - np.log(b)))))
    assert worst <= eps + 1e-9


# =============================================================================================
# the secure backend never touches numpy's random generators
# =============================================================================================
def test_secure_backend_does_not_draw_from_numpy(monkeypatch):
    def boom(*args, **kwargs):
        raise AssertionError("numpy randomness used on a secure path")

    class NoGenerator:
        def __init__(self, *args, **kwargs):
            boom()

    monkeypatch.setattr(np.random, "default_rng", boom)
    monkeypatch.setattr(np.random, "Generator", NoGenerator)
    for name in ("random", "laplace", "normal", "gumbel", "exponential", "gamma", "choice",
                 "permutation", "shuffle", "standard_normal", "uniform", "integers"):
        if hasattr(np.random, name):
            monkeypatch.setattr(np.random, name, boom)
    monkeypatch.setattr(B, "as_generator", boom)
    monkeypatch.setattr(B.NumpyBackend, "__init__", boom)

    draws = []

    class CountingSource(random.SystemRandom):
        def randrange(self, *args, **kwargs):
            draws.append(1)
            return super().randrange(*args, **kwargs)

    be = B.SecureBackend(random_source=CountingSource())
    ledger = Ledger()
    q = [0.0, 1.0, -np.inf, 0.5]
    M.laplace([1.0, 2.0], epsilon=1.0, sensitivity=1.0, backend="secure", budget=ledger)
    M.gaussian(1.0, epsilon=1.0, delta=1e-6, sensitivity=1.0, backend="secure")
    M.gaussian([1.0, 2.0], rho=0.5, sensitivity=1.0, backend="secure")
    M.exponential_mechanism(q, epsilon=1.0, sensitivity=1.0, backend="secure")
    M.report_noisy_max(q, epsilon=1.0, sensitivity=1.0, backend="secure")
    M.permute_and_flip(q, epsilon=1.0, sensitivity=1.0, backend="secure")
    n0 = len(draws)
    M.exponential_mechanism(q, epsilon=1.0, sensitivity=1.0, backend=be)
    M.laplace(0.0, epsilon=1.0, sensitivity=1.0, backend=be, rng=None)
    assert len(draws) > n0  # the secure backend's own source supplied the bits
    # rng is not used by the secure backend (documented), even when given.
    M.permute_and_flip(q, epsilon=1.0, sensitivity=1.0, backend="secure", rng=3)
    assert "backend=secure(granularity=" in ledger.events[0].note


# =============================================================================================
# resolution and the numpy backend
# =============================================================================================
def test_resolve_backend():
    assert isinstance(B.resolve_backend(), B.NumpyBackend)
    assert isinstance(B.resolve_backend("numpy", 3), B.NumpyBackend)
    assert isinstance(B.resolve_backend("secure", 3), B.SecureBackend)
    gen = np.random.default_rng(0)
    assert B.resolve_backend(None, gen).generator is gen
    be = B.SecureBackend()
    assert B.resolve_backend(be) is be
    with pytest.raises(ValidationError, match="rng"):
        B.resolve_backend(be, 0)
    with pytest.raises(ValidationError, match="numpy"):
        B.resolve_backend("pydp")
    with pytest.raises(ParameterTypeError, match="backend"):
        B.resolve_backend(3)


def test_numpy_backend_is_reproducible():
    a = B.NumpyBackend(5).add_laplace(np.zeros(4), 1.0, sensitivity=1.0)
    b = B.NumpyBackend(5).add_laplace(np.zeros(4), 1.0, sensitivity=1.0)
    np.testing.assert_array_equal(a, b)
    assert not B.NumpyBackend.secure and not B.NumpyBackend.discrete
    assert B.NumpyBackend(0).quantize_scores([0.3, -np.inf], sensitivity=1.0)[0] == 0.3


def test_gumbel_max_is_the_softmax():
    # Direct check of the numpy backend's Gumbel-max draw against the softmax.
    be = B.NumpyBackend(9)
    q = np.array([0.0, 1.0, 2.0, -np.inf])
    counts = np.bincount([be.exponential(q, 0.7, sensitivity=1.0) for _ in range(20_000)],
                         minlength=4)
    w = np.exp(0.7 * np.array([0.0, 1.0, 2.0]))
    p = np.append(w / w.sum(), 0.0)
    assert counts[3] == 0
    assert chi_square_pvalue(counts, p) > ALPHA  # chi-square, false alarm ALPHA
