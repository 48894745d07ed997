"""Non-private greedy baselines against brute force, and the maximize() entry point."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

from dpsubmod import maximize
from dpsubmod.constraints import GraphicMatroid, Knapsack, PartitionMatroid, UniformMatroid
from dpsubmod.errors import DPSubmodError, GroundSetMismatchError, ParameterTypeError
from dpsubmod.functions import Coverage, FacilityLocation, Modular
from dpsubmod.offline import (
    greedy,
    knapsack_greedy,
    lazy_greedy,
    list_methods,
    random_feasible,
    stochastic_greedy,
)
from oracles import brute_force_max

E = 1 - 1 / math.e


def random_instance(rng: np.random.Generator, n: int, kind: str):
    if kind == "coverage":
        inc = sp.csr_array((rng.random((n, 12)) < 0.3).astype(float))
        return Coverage(inc, weights=rng.integers(1, 4, size=12).astype(float))
    sim = rng.random((15, n))
    if kind == "fl-ties":
        sim = np.round(sim * 3) / 3  # many exact ties
    return FacilityLocation(sim)


def random_matroid(rng: np.random.Generator, n: int, kind: str):
    if kind == "uniform":
        return UniformMatroid(n, int(rng.integers(1, 4)))
    if kind == "partition":
        labels = rng.permutation(np.arange(n) % 3)
        return PartitionMatroid(labels, rng.integers(1, 3, size=3))
    nodes = 5
    edges = [(int(a), int(b)) for a, b in rng.integers(0, nodes, size=(n, 2))]
    edges = [(a, (b + 1) % nodes) if a == b else (a, b) for a, b in edges]
    return GraphicMatroid(edges, n_nodes=nodes)


@pytest.mark.parametrize("kind", ["coverage", "fl", "fl-ties"])
def test_greedy_cardinality_bound_and_lazy_equals_naive(kind):
    rng = np.random.default_rng(1)
    worst = 1.0
    for _ in range(40):
        n = int(rng.integers(5, 10))
        f = random_instance(rng, n, kind)
        k = int(rng.integers(1, 4))
        opt, _ = brute_force_max(f, UniformMatroid(n, k))
        a = greedy(f, k)
        b = lazy_greedy(f, k)
        assert a.selection == b.selection  # same output, ties included
        assert a.diagnostics.value >= E * opt - 1e-9
        worst = min(worst, a.diagnostics.value / opt)
    assert worst <= 1.0


@pytest.mark.parametrize("mkind", ["partition", "graphic", "uniform"])
def test_greedy_matroid_half_opt(mkind):
    rng = np.random.default_rng(2)
    for _ in range(25):
        n = int(rng.integers(5, 8))
        f = random_instance(rng, n, "coverage")
        m = random_matroid(rng, n, mkind)
        opt, _ = brute_force_max(f, m)
        res = greedy(f, m)
        assert m.is_independent(list(res.selection))
        assert len(res.selection) == m.rank  # monotone: greedy reaches a base
        assert res.diagnostics.value >= 0.5 * opt - 1e-9
        assert lazy_greedy(f, m).selection == res.selection


def test_knapsack_greedy_bound_and_singleton_fallback():
    rng = np.random.default_rng(3)
    for _ in range(60):
        n = int(rng.integers(4, 9))
        f = random_instance(rng, n, "coverage")
        costs = rng.uniform(0.2, 1.0, size=n)
        kn = Knapsack(costs, budget=float(rng.uniform(1.0, 2.0)))
        opt, _ = brute_force_max(f, kn)
        res = knapsack_greedy(f, kn)
        assert kn.is_feasible(list(res.selection))
        assert res.diagnostics.value >= E / 2 * opt - 1e-9
        assert greedy(f, kn).selection == knapsack_greedy(f, kn, lazy=False).selection
    # the classic failure of the plain cost-benefit greedy: a cheap small item crowds out a
    # large valuable one; the best-singleton fallback rescues it.
    f = Modular([1.0, 10.0])
    kn = Knapsack([0.1, 1.0], budget=1.0)
    res = knapsack_greedy(f, kn)
    assert res.selection == (1,) and res.params["winner"] == "best-singleton"


def test_stochastic_greedy_expected_bound():
    rng = np.random.default_rng(4)
    f = random_instance(rng, 9, "coverage")
    opt, _ = brute_force_max(f, UniformMatroid(9, 3))
    vals = [stochastic_greedy(f, 3, accuracy=0.1, rng=s).diagnostics.value for s in range(200)]
    # E[f] >= (1 - 1/e - accuracy) OPT; the mean of 200 runs has a tiny standard error here.
    assert np.mean(vals) >= (E - 0.1) * opt


def test_random_feasible_is_maximal_and_uniform_k_subset():
    rng = np.random.default_rng(5)
    m = random_matroid(rng, 8, "partition")
    f = Modular(np.ones(8))
    for s in range(20):
        sel = list(random_feasible(f, m, rng=s).selection)
        assert m.is_independent(sel) and len(sel) == m.rank
    counts = np.zeros(6)
    for s in range(3000):
        for e in random_feasible(Modular(np.ones(6)), 2, rng=s).selection:
            counts[e] += 1
    # each element is in a uniform 2-subset with probability 1/3: 1000 expected, sd about 26
    assert np.all(np.abs(counts - 1000) < 5 * 26)


def test_evaluation_counts_match_complexity():
    f = random_instance(np.random.default_rng(6), 9, "coverage")
    f.reset_evaluations()
    res = greedy(f, 3)
    assert res.evaluations == 9 + 8 + 7  # k steps over the remaining candidates
    lazy = lazy_greedy(f, 3)
    assert lazy.evaluations <= res.evaluations
    s = stochastic_greedy(f, 3, sample_size=4, rng=0)
    assert s.evaluations == 3 * 4


@pytest.mark.parametrize("method", ["greedy", "lazy_greedy", "stochastic_greedy", "random"])
def test_same_seed_same_output(method):
    f = random_instance(np.random.default_rng(7), 9, "fl")
    a = maximize(f, 3, method=method, rng=11)
    b = maximize(f, 3, method=method, rng=11)
    assert a.selection == b.selection
    assert a.params == b.params


def test_maximize_registry_and_errors():
    f = Modular([1.0, 2.0, 3.0])
    assert {"greedy", "lazy_greedy", "stochastic_greedy", "random"} <= set(list_methods())
    assert maximize(f, 2).selection == (2, 1)
    with pytest.raises(DPSubmodError, match="Valid methods"):
        maximize(f, 2, method="gredy")
    with pytest.raises(DPSubmodError, match="not private"):
        maximize(f, 2, method="greedy", epsilon=1.0)
    with pytest.raises(DPSubmodError, match="'k'"):
        maximize(f, 4)
    with pytest.raises(DPSubmodError, match="'k'"):
        maximize(f, -1)
    with pytest.raises(ParameterTypeError, match="'f'"):
        maximize(lambda S: 1.0, 2)
    with pytest.raises(GroundSetMismatchError):
        maximize(f, UniformMatroid(5, 2))
    with pytest.raises(ParameterTypeError, match="'constraint'"):
        maximize(f, "two")


def test_result_labels_value_as_non_private():
    res = maximize(Modular([1.0, 2.0]), 1)
    assert not res.is_private
    assert "non-private diagnostic" in repr(res)
