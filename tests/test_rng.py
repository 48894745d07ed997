"""The randomness helpers: the fast Gumbel sampler is the Gumbel law; ``as_generator`` takes
seeds, SeedSequences and Generators and refuses everything else."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpsubmod._rng import as_generator, check_rng
from dpsubmod.errors import ParameterTypeError
from dpsubmod.privacy.backends import standard_gumbel


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


# -- what as_generator accepts (issue 15: "abc", 1.5 and True were accepted) ---------------------

@pytest.mark.parametrize("bad", ["abc", "0", 1.5, 2.0, np.float64(1.0), math.nan, True, False,
                                 np.bool_(True), -1, -(2**70), [1, 2], (0,), b"\x00",
                                 complex(1, 0), object(), np.random.RandomState(0),
                                 np.random.PCG64(0)])
def test_as_generator_refuses_what_is_not_a_seed(bad):
    with pytest.raises(ParameterTypeError, match="'rng' parameter of caller must be"):
        as_generator(bad, "caller")
    with pytest.raises(ParameterTypeError, match="'rng'"):
        check_rng(bad)


@pytest.mark.parametrize("good", [None, 0, 7, 2**100, np.uint32(3), np.int64(5),
                                  np.random.SeedSequence(1)])
def test_as_generator_accepts_seeds(good):
    check_rng(good)
    assert isinstance(as_generator(good), np.random.Generator)


def test_a_generator_is_continued_and_seeds_reproduce():
    gen = np.random.default_rng(3)
    assert as_generator(gen) is gen
    assert as_generator(11).random() == as_generator(11).random()
    assert as_generator(np.random.SeedSequence(4)).random() == np.random.default_rng(4).random()
