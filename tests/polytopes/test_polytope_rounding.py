"""Swap rounding, the convex-decomposition helper, knapsack pipage and threshold rounding."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpsubmod.constraints import Knapsack, PartitionMatroid, UniformMatroid
from dpsubmod.errors import ParameterTypeError, ValidationError
from dpsubmod.polytopes import (
    ConvexDecomposition,
    KnapsackPolytope,
    MatroidPolytope,
    knapsack_rounding,
    swap_rounding,
    threshold_rounding,
)
from oracles import MATROID_FAMILIES, random_matroid

# Per-coordinate two-sided z threshold: P(|Z| > 4.5) = 6.8e-6. Every statistical test below
# checks at most ~120 coordinates in total, so the family-wise false-alarm rate is below 1e-3
# (Bonferroni). The draws are seeded, so the outcome is reproducible.
Z = 4.5


def _assert_marginals(samples, x, n_draws):
    mean = samples.mean(axis=0)
    sd = np.sqrt(np.maximum(x * (1 - x), 1e-12) / n_draws)
    z = np.abs(mean - x) / sd
    assert z.max() < Z, (mean, x)


def _random_decomposition(m, rng, k=4):
    """k distinct random bases with Dirichlet weights."""
    bases = [m.random_base(rng=rng) for _ in range(k)]
    w = rng.dirichlet(np.ones(k))
    x = np.zeros(m.n)
    for B, wt in zip(bases, w):
        x[B] += wt
    return bases, w, x


@pytest.mark.parametrize("family", MATROID_FAMILIES)
def test_swap_rounding_marginals_and_bases(family):
    rng = np.random.default_rng(MATROID_FAMILIES.index(family))
    m, _ = random_matroid(family, 7, rng)
    bases, w, x = _random_decomposition(m, rng)
    N = 2500
    samples = np.zeros((N, m.n))
    for t, S in enumerate(swap_rounding(m, bases, w, size=N, rng=99)):
        assert m.is_base(S)
        samples[t, S] = 1
    _assert_marginals(samples, x, N)


def test_swap_rounding_pads_independent_sets():
    # Vertices of the independence polytope (as continuous greedy produces) are not bases.
    m = PartitionMatroid([0, 0, 0, 1, 1, 1], [2, 1])
    sets = [[0], [1, 3], [], [0, 2, 5]]
    w = np.array([0.3, 0.2, 0.1, 0.4])
    x = np.zeros(6)
    for S, wt in zip(sets, w):
        x[S] += wt
    gen = np.random.default_rng(5)
    N = 3000
    dummy = np.zeros((N, 6))
    greedy = np.zeros((N, 6))
    for t, S in enumerate(swap_rounding(m, sets, w, size=N, rng=gen)):
        assert m.is_independent(S)
        dummy[t, S] = 1
    for t, B in enumerate(swap_rounding(m, sets, w, pad="greedy", size=N, rng=gen)):
        assert m.is_base(B)
        greedy[t, B] = 1
    _assert_marginals(dummy, x, N)  # exact marginals with dummy padding
    padded = np.zeros(6)
    for S, wt in zip(sets, w):
        padded[m.extend_to_base(S)] += wt
    assert (padded >= x - 1e-12).all()
    _assert_marginals(greedy, padded, N)  # greedy padding rounds the dominating point
    with pytest.raises(ValidationError, match="pad='dummy'"):
        swap_rounding(m, sets, w, pad="error")


def test_swap_rounding_single_base_and_reproducibility():
    m = UniformMatroid(5, 2)
    assert swap_rounding(m, [[1, 3]], [1.0], rng=0).tolist() == [1, 3]
    bases = [[0, 1], [2, 3], [1, 4]]
    w = [0.2, 0.5, 0.3]
    assert np.array_equal(swap_rounding(m, bases, w, rng=7), swap_rounding(m, bases, w, rng=7))


def test_swap_rounding_validates():
    m = UniformMatroid(4, 2)
    with pytest.raises(ValidationError, match="sum to 1"):
        swap_rounding(m, [[0, 1], [2, 3]], [0.5, 0.6])
    with pytest.raises(ValidationError, match="one weight per set"):
        swap_rounding(m, [[0, 1]], [0.5, 0.5])
    with pytest.raises(ValidationError, match=r"sets\[1\].*not independent"):
        swap_rounding(m, [[0, 1], [0, 1, 2]], [0.5, 0.5])
    with pytest.raises(ValidationError, match="'weights'"):
        swap_rounding(m, [[0, 1], [2, 3]], [1.5, -0.5])
    with pytest.raises(ValidationError, match="'pad'"):
        swap_rounding(m, [[0, 1]], [1.0], pad="zero")
    with pytest.raises(ParameterTypeError, match="'matroid'"):
        swap_rounding("m", [[0, 1]], [1.0])


def test_convex_decomposition_from_continuous_greedy_steps():
    # A continuous greedy with K = 4 steps of size 1/4: record each vertex set, round.
    m = PartitionMatroid([0, 0, 1, 1, 1], [1, 2])
    P = MatroidPolytope(m)
    rng = np.random.default_rng(3)
    dec = ConvexDecomposition(5)
    x = np.zeros(5)
    for _ in range(4):
        w = rng.normal(size=5)
        S = P.linear_max_set(w)
        dec.add(S, 0.25)
        x += P.linear_max(w) / 4
    assert np.allclose(dec.point(), x)
    assert dec.total_weight == pytest.approx(1.0)
    N = 3000
    samples = np.zeros((N, 5))
    for t, S in enumerate(dec.round(m, size=N, rng=4)):
        assert m.is_independent(S)
        samples[t, S] = 1
    _assert_marginals(samples, x, N)


def test_convex_decomposition_merges_and_fills_deficit():
    dec = ConvexDecomposition(3)
    dec.add([0], 0.25)
    dec.add(np.array([True, False, False]), 0.25)
    dec.add([1, 2], 0.25)
    assert len(dec.sets) == 2 and dec.weights.tolist() == [0.5, 0.25]
    m = UniformMatroid(3, 2)
    N = 3000
    samples = np.zeros((N, 3))
    for t, S in enumerate(dec.round(m, size=N, rng=0)):
        samples[t, S] = 1
    _assert_marginals(samples, dec.point(), N)  # the missing 0.25 went to the empty set
    dec.add([2], 0.5)
    with pytest.raises(ValidationError, match="> 1"):
        dec.round(m)


def _knapsack_samples(P, x, N, seed):
    c, b = P.costs, P.budget
    gen = np.random.default_rng(seed)
    samples = np.zeros((N, P.dim))
    for t in range(N):
        S = knapsack_rounding(P, x, rng=gen)
        assert c[S].sum() <= b * (1 + 1e-9)  # always within the budget
        samples[t, S] = 1
    return samples


def test_knapsack_rounding_on_the_budget_face():
    rng = np.random.default_rng(6)
    N = 2500
    for trial in range(3):
        n = 8
        c = rng.uniform(0.1, 1.0, n)
        P = KnapsackPolytope(c, float(0.4 * c.sum()))
        # A point with c.x = b and several fractional items.
        x = 0.5 * (P.linear_max(rng.normal(size=n) + 1.0) + P.linear_max(rng.normal(size=n) + 1))
        mean = _knapsack_samples(P, x, N, 100 + trial).mean(axis=0)
        sd = np.sqrt(np.maximum(x * (1 - x), 1e-12) / N)
        assert ((mean - x) / sd).max() < Z  # never above x
        # The deficit is one leftover item per draw: at most 1 in l1 and max(c) in cost.
        # Each mean has sd <= 0.5 / sqrt(N); the sums get Z times the summed sds.
        slack = Z * n * 0.5 / math.sqrt(N)
        assert (x - mean).sum() <= 1 + slack
        assert c @ (x - mean) <= c.max() + slack * c.max()


def test_knapsack_rounding_is_exact_with_room_for_the_leftover():
    # With c.x <= b - max c the leftover item always fits: E[1_S] = x on every coordinate.
    rng = np.random.default_rng(7)
    n = 8
    c = rng.uniform(0.1, 1.0, n)
    P = KnapsackPolytope(c, float(0.6 * c.sum()))
    x = rng.uniform(0.05, 0.95, n)
    x *= (P.budget - c.max()) / (c @ x)
    assert (x <= 1).all()
    N = 3000
    _assert_marginals(_knapsack_samples(P, x, N, 11), x, N)
    k = Knapsack([1.0, 1.0, 2.0], 2.0)
    assert knapsack_rounding(k, [1.0, 1.0, 0.0], rng=0).tolist() == [0, 1]


def test_knapsack_rounding_validates():
    k = Knapsack([1.0, 1.0], 1.0)
    with pytest.raises(ValidationError, match="'x'"):
        knapsack_rounding(k, [0.8, 0.8])
    with pytest.raises(ParameterTypeError, match="'knapsack'"):
        knapsack_rounding([1.0, 1.0], [0.1, 0.1])


def test_threshold_rounding():
    x = np.array([0.0, 0.1, 0.5, 0.9, 1.0, 1.7, -0.3])
    gen = np.random.default_rng(8)
    N = 4000
    samples = np.zeros((N, x.size))
    for t in range(N):
        S = threshold_rounding(x, rng=gen)
        samples[t, S] = 1
    p = np.clip(x, 0, 1)
    assert samples[:, [0, 6]].sum() == 0 and samples[:, [4, 5]].all()
    _assert_marginals(samples[:, 1:4], p[1:4], N)
    # Outputs are level sets: each one is nested in the next lower threshold's.
    levels = [set(threshold_rounding(x, threshold=u).tolist()) for u in (0.95, 0.6, 0.3, 0.05)]
    assert all(a <= b for a, b in zip(levels, levels[1:]))
    assert threshold_rounding(x, threshold=0.5).tolist() == [2, 3, 4, 5]
    with pytest.raises(ValidationError, match="'threshold'"):
        threshold_rounding(x, threshold=0.0)
    assert math.isclose(samples[:, 2].mean(), 0.5, abs_tol=Z * 0.5 / math.sqrt(N))
