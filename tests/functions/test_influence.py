"""InfluenceSpread: RR-set estimates against exact IC influence, seeding, and input checks."""

from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import pytest

from dpsubmod.errors import DPSubmodError, ParameterTypeError, SensitivityError, ValidationError
from dpsubmod.functions import Coverage, InfluenceSpread


def exact_influence(G: nx.DiGraph, seeds, attr: str = "p") -> float:
    """Expected spread by enumerating every live-edge graph (2^|E| of them)."""
    edges = list(G.edges(data=attr))
    total = 0.0
    for live in itertools.product([False, True], repeat=len(edges)):
        prob = 1.0
        H = nx.DiGraph()
        H.add_nodes_from(G.nodes)
        for (u, v, p), on in zip(edges, live):
            prob *= p if on else 1.0 - p
            if on:
                H.add_edge(u, v)
        reached = set(seeds)
        for s in seeds:
            reached |= nx.descendants(H, s)
        total += prob * len(reached)
    return total


def _small_graph() -> nx.DiGraph:
    G = nx.DiGraph()
    G.add_nodes_from(["a", "b", "c", "d", "e"])
    for u, v, p in [("a", "b", 0.6), ("b", "c", 0.5), ("a", "c", 0.3), ("c", "d", 0.8),
                    ("d", "a", 0.2), ("e", "d", 0.4), ("b", "e", 0.7)]:
        G.add_edge(u, v, p=p)
    return G


def test_estimates_match_exact_influence():
    # theta = 40000: the estimate of sigma(S) has sd <= n / (2 sqrt(theta)) = 0.0125; the
    # tolerance 0.07 is 5.6 sd, a false-alarm rate below 1e-7 per set (fixed seed, 31 sets).
    G = _small_graph()
    f = InfluenceSpread(G, 40_000, rng=2024)
    assert f.nodes == list(G.nodes)
    for k in range(1, 6):
        for seeds in itertools.combinations(G.nodes, k):
            S = [f.nodes.index(s) for s in seeds]
            assert f(S) == pytest.approx(exact_influence(G, seeds), abs=0.07)


def test_undirected_edges_spread_both_ways():
    G = nx.Graph()
    G.add_edge(0, 1, p=1.0)
    G.add_node(2)
    f = InfluenceSpread(G, 200, rng=0)
    assert f([0]) == pytest.approx(f([1]))
    # Roots 0 and 1 are reached from either endpoint; root 2 only from itself.
    assert f([0]) + f([2]) == pytest.approx(3.0)


def test_probability_one_is_reachability_and_zero_is_the_seed_set():
    G = nx.DiGraph([(0, 1), (1, 2), (3, 0)])
    f1 = InfluenceSpread(G, 500, probability=1.0, rng=1)
    assert f1([3]) == pytest.approx(4.0)  # node 3 reaches every root
    assert f1([0]) + f1([3]) - f1([0, 3]) == pytest.approx(f1([0]))
    f0 = InfluenceSpread(G, 500, probability=0.0, rng=1)
    assert f0.rr_sets.sum() == 500  # every RR set is its root alone


def test_same_seed_same_rr_sets():
    G = _small_graph()
    a = InfluenceSpread(G, 300, rng=7)
    b = InfluenceSpread(G, 300, rng=np.random.default_rng(7))
    c = InfluenceSpread(G, 300, rng=8)
    assert (a.incidence != b.incidence).nnz == 0
    assert (a.incidence != c.incidence).nnz > 0


def test_is_a_coverage_function_without_records():
    f = InfluenceSpread(_small_graph(), 50, rng=0)
    assert isinstance(f, Coverage) and f.sensitivity is None
    assert f.rr_sets.shape == (50, 5)
    with pytest.raises(SensitivityError):
        f.neighbour(0)
    with pytest.raises(ValidationError, match="Coverage.from_records"):
        InfluenceSpread.from_records([[0]], 1)
    assert InfluenceSpread(_small_graph(), 50, rng=0, sensitivity=2.0).sensitivity == 2.0


@pytest.mark.parametrize(
    ("call", "exc", "needle"),
    [
        (lambda: InfluenceSpread(nx.DiGraph([(0, 1)]), 10), ValidationError, "'p'"),
        (lambda: InfluenceSpread(nx.DiGraph([(0, 1, {"p": 1.5})]), 10), ValidationError,
         "\\[0, 1\\]"),
        (lambda: InfluenceSpread(nx.DiGraph([(0, 1)]), 10, probability=-0.1), ValidationError,
         "'probability'"),
        (lambda: InfluenceSpread(nx.DiGraph([(0, 1)]), 10, probability=[0.5]),
         ParameterTypeError, "'probability'"),
        (lambda: InfluenceSpread(nx.DiGraph([(0, 1)]), 0, probability=0.5), ValidationError,
         "'n_samples'"),
        (lambda: InfluenceSpread(np.eye(2), 10), ParameterTypeError, "'graph'"),
        (lambda: InfluenceSpread(nx.DiGraph(), 10), ValidationError, "'graph'"),
    ],
)
def test_bad_input(call, exc, needle):
    with pytest.raises(exc, match=needle) as info:
        call()
    assert isinstance(info.value, DPSubmodError)
