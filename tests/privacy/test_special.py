"""The numpy and standard-library special functions of the release path agree with scipy's
(scipy may be imported here: the tests are not on the select path)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import special

from dpsubmod.privacy import _special, kov, selection


def _ulps(a, b):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return np.max(np.abs(a - b) / np.spacing(np.maximum(np.abs(a), np.abs(b))))


@pytest.mark.parametrize("seed", range(6))
def test_logsumexp_agrees_with_scipy(seed):
    rng = np.random.default_rng(seed)
    for size in (1, 2, 7, 129, 5000):
        x = rng.normal(scale=10.0 ** rng.integers(-3, 4), size=size) + rng.normal() * 1e3
        x[rng.random(size) < 0.2] = x.max()  # ties at the top are separated out exactly
        if size > 2:
            x[0] = -np.inf
        assert _ulps(_special.logsumexp(x), special.logsumexp(x)) <= 4


def test_logsumexp_of_extreme_spreads():
    for x in ([0.0], [-1e300, 0.0], [-745.5, 0.0, -np.inf], [1e308, 1e308], [-1e-300, -2e-300]):
        x = np.array(x)
        assert _ulps(_special.logsumexp(x), special.logsumexp(x)) <= 4


def test_gammaln_agrees_with_scipy():
    x = np.concatenate([np.arange(1.0, 20_001.0),
                        np.random.default_rng(0).uniform(1e-3, 1e6, 20_000)])
    assert _ulps(_special.gammaln(x), special.gammaln(x)) <= 8  # 4 measured
    assert _special.gammaln(np.array([[1.0, 2.0], [3.0, 4.0]])).shape == (2, 2)


def test_exponential_mechanism_law_agrees_with_scipy():
    rng = np.random.default_rng(5)
    for m in (1, 3, 50, 4000):
        q = rng.normal(size=m) * 5
        q[rng.random(m) < 0.1] = -np.inf
        q[0] = 1.0
        logp = selection.exponential_mechanism_probabilities(q, epsilon=2.0, sensitivity=1.0,
                                                             log=True)
        z = (q - q.max())  # weight 1
        ref = z - special.logsumexp(z[np.isfinite(z)])
        fin = np.isfinite(ref)
        assert np.array_equal(np.isfinite(logp), fin)
        assert _ulps(logp[fin], ref[fin]) <= 4


@pytest.mark.parametrize("eps0", [1e-3, 0.1, 1.0])
@pytest.mark.parametrize("k", [2, 20, 1001])
def test_kov_terms_agree_with_scipy(eps0, k):
    a, b, _ = kov._kov_terms(eps0, k)
    ell = np.arange((k + 1) // 2, dtype=np.float64)
    logc = special.gammaln(k + 1.0) - special.gammaln(ell + 1.0) - special.gammaln(k - ell + 1.0)
    log_norm = -k * (eps0 + math.log1p(math.exp(-eps0)))
    # a difference of terms near lgamma(k + 1): a few ulps of that magnitude
    tol = 8 * np.spacing(special.gammaln(k + 1.0) + abs(log_norm) + k * eps0)
    assert np.max(np.abs(a - (logc + (k - ell) * eps0 + log_norm))) <= tol
    assert np.max(np.abs(b - (logc + ell * eps0 + log_norm))) <= tol
