"""Selection mechanisms at the edge of floating point: no leaked warning, the limit law."""

from __future__ import annotations

import warnings

import numpy as np

from dpsubmod.privacy import exponential_mechanism


def test_exponential_mechanism_at_a_huge_epsilon_picks_the_max_quietly():
    # weight * gap overflows to -inf here: the limit law puts all mass on the maximum.
    scores = np.array([0.0, 2.0, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        picks = {exponential_mechanism(scores, epsilon=1e308, range_sensitivity=1.0, rng=s)
                 for s in range(20)}
    assert picks == {1}
