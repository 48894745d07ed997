"""The randomness helpers: the fast Gumbel sampler is the Gumbel law."""

from __future__ import annotations

import numpy as np
from scipy import stats

from dpsubmod._rng import standard_gumbel


def test_standard_gumbel_is_gumbel():
    # Kolmogorov-Smirnov against the standard Gumbel CDF, 200000 draws; false-alarm rate 1e-4.
    x = standard_gumbel(np.random.default_rng(0), 200_000)
    assert stats.kstest(x, stats.gumbel_r.cdf).pvalue > 1e-4
    # ...and the test has power: a Gumbel with scale 1.02 is rejected.
    assert stats.kstest(1.02 * x, stats.gumbel_r.cdf).pvalue < 1e-4


def test_gumbel_max_is_the_softmax():
    # Exact draw from softmax(z): chi-square over 60000 draws, false-alarm rate 1e-4.
    z = np.log(np.array([0.5, 0.25, 0.15, 0.1]))
    gen = np.random.default_rng(1)
    draws = np.argmax(z + standard_gumbel(gen, (60_000, 4)), axis=1)
    counts = np.bincount(draws, minlength=4)
    assert stats.chisquare(counts, 60_000 * np.exp(z)).pvalue > 1e-4


def test_shape_and_reproducibility():
    a = standard_gumbel(np.random.default_rng(5), (3, 4))
    assert a.shape == (3, 4)
    np.testing.assert_array_equal(a, standard_gumbel(np.random.default_rng(5), (3, 4)))
