"""GraphCut: values against networkx, non-monotonicity, input checks."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from dpsubmod.errors import DPSubmodError, ValidationError
from dpsubmod.functions import GraphCut
from oracles import all_subsets, monotonicity_violation, submodularity_violation


def _random_graph(seed: int, directed: bool) -> nx.Graph:
    rng = np.random.default_rng(seed)
    G = nx.gnp_random_graph(6, 0.5, seed=int(rng.integers(2**31)), directed=directed)
    for u, v in G.edges:
        G.edges[u, v]["weight"] = float(rng.random())
    return nx.relabel_nodes(G, {i: f"n{i}" for i in G.nodes})


@pytest.mark.parametrize("directed", [False, True])
def test_values_match_networkx_cut_size(directed):
    G = _random_graph(0, directed)
    f = GraphCut(G)
    assert f.directed is directed and f.nodes == list(G.nodes)
    for S in all_subsets(f.n):
        labels = [f.nodes[i] for i in S]
        rest = [v for v in G.nodes if v not in labels]
        # edge_boundary(G, S, T) lists the arcs from S to T (each undirected edge once).
        want = sum(w for _, _, w in nx.edge_boundary(G, labels, rest, data="weight"))
        assert f(S) == pytest.approx(want, abs=1e-12)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), directed=st.booleans())
def test_submodular_and_not_monotone(seed, directed):
    f = GraphCut(_random_graph(seed, directed))
    assert submodularity_violation(f) <= 1e-12
    assert f(range(f.n)) == 0.0 and f([]) == 0.0
    if f.adjacency.nnz:
        assert monotonicity_violation(f) > 0  # any edge makes the full set worse than a part


def test_matrix_input_undirected_and_directed():
    W = np.array([[0.0, 1.0, 2.0], [1.0, 0.0, 0.0], [2.0, 0.0, 5.0]])  # self-loop at 2
    f = GraphCut(W)
    assert f([0]) == 3.0 and f([2]) == 2.0 and f([0, 1]) == 2.0
    D = np.array([[0.0, 4.0], [1.0, 0.0]])
    g = GraphCut(sp.csr_array(D), directed=True)
    assert g([0]) == 4.0 and g([1]) == 1.0


def test_undirected_graph_read_as_directed_gives_same_cut():
    G = _random_graph(3, False)
    f, g = GraphCut(G), GraphCut(G, directed=True)
    for S in all_subsets(f.n):
        assert f(S) == pytest.approx(g(S), abs=1e-12)


def test_missing_weight_attribute_means_one():
    f = GraphCut(nx.path_graph(3))
    assert f([1]) == 2.0


def test_to_networkx_round_trip():
    for directed in (False, True):
        G = _random_graph(5, directed)
        f = GraphCut(G)
        H = f.to_networkx()
        assert H.is_directed() is directed
        assert set(H.nodes) == set(G.nodes)
        for u, v, w in G.edges(data="weight"):
            assert H.edges[u, v]["weight"] == pytest.approx(w)


def test_sensitivity_is_passed_through():
    f = GraphCut(nx.path_graph(3), sensitivity=0.5)
    assert f.sensitivity == 0.5 and "edge" in f.neighbouring


@pytest.mark.parametrize(
    ("call", "needle"),
    [
        (lambda: GraphCut(np.array([[0.0, 1.0], [0.0, 0.0]])), "symmetric"),
        (lambda: GraphCut(np.array([[0.0, -1.0], [-1.0, 0.0]])), "'graph_or_weights'"),
        (lambda: GraphCut(np.array([[0.0, np.nan], [np.nan, 0.0]])), "'graph_or_weights'"),
        (lambda: GraphCut(np.ones((2, 3))), "square"),
        (lambda: GraphCut(nx.DiGraph([(0, 1)]), directed=False), "directed=True"),
        (lambda: GraphCut(nx.Graph()), "no nodes"),
        (lambda: GraphCut(nx.Graph([(0, 1, {"weight": -2.0})])), "'graph_or_weights"),
        (lambda: GraphCut(np.eye(2), directed="yes"), "'directed'"),
    ],
)
def test_bad_input(call, needle):
    with pytest.raises(ValidationError, match=needle) as info:
        call()
    assert isinstance(info.value, DPSubmodError)
