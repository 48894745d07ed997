"""Graph loaders: the bundled networkx graphs and the seeded random graphs."""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pytest

from dpsubmod.datasets import (
    GRAPHS,
    GraphDataset,
    erdos_renyi_graph,
    load_graph,
    planted_partition_graph,
    with_activation_probabilities,
)
from dpsubmod.errors import DPSubmodError, ValidationError
from dpsubmod.functions import GraphCut, InfluenceSpread

SIZES = {"karate_club": (34, 78), "les_miserables": (77, 254),
         "davis_southern_women": (32, 89), "florentine_families": (15, 20)}


@pytest.mark.parametrize("name", sorted(SIZES))
def test_bundled_graphs_shape_and_documentation(name):
    d = GRAPHS[name]()
    assert isinstance(d, GraphDataset) and d.name == name
    assert (d.n, d.n_edges) == SIZES[name]
    assert d.nodes == list(d.graph.nodes)
    for text in (d.node, d.edge, d.record, d.source):
        assert isinstance(text, str) and len(text) > 10
    assert "one" in d.record  # the privacy unit is one edge / one woman
    assert GRAPHS[name].__doc__ and "record" in GRAPHS[name].__doc__
    # every call builds a fresh graph the caller may modify
    d.graph.remove_nodes_from(list(d.graph.nodes)[:3])
    assert GRAPHS[name]().n == SIZES[name][0]


def test_bundled_graph_attributes():
    k = load_graph("karate")
    assert {k.graph.nodes[v]["club"] for v in k.graph} == {"Mr. Hi", "Officer"}
    davis = load_graph("Davis")
    sides = [davis.graph.nodes[v]["bipartite"] for v in davis.graph]
    assert sides.count(0) == 18 and sides.count(1) == 14
    assert "woman" in davis.record
    # the cut objective reads the co-appearance weights
    les = load_graph("les-miserables")
    first = les.nodes[1]
    assert GraphCut(les.graph)([1]) == sum(w for *_, w in les.graph.edges(first, data="weight"))


def test_load_graph_names():
    assert load_graph("Karate Club").name == "karate_club"
    assert load_graph("florentine").name == "florentine_families"
    with pytest.raises(ValidationError, match="karate_club"):
        load_graph("zachary")
    with pytest.raises(DPSubmodError):
        load_graph(3)


def edges_with(d, attr):
    return [(u, v, a[attr]) for u, v, a in d.graph.edges(data=True)]


def test_planted_partition_is_reproducible_and_well_formed():
    a = planted_partition_graph(3, 20, 0.3, 0.02, rng=7)
    b = planted_partition_graph(3, 20, 0.3, 0.02, rng=np.random.default_rng(7))
    c = planted_partition_graph(3, 20, 0.3, 0.02, rng=8)
    assert edges_with(a, "p") == edges_with(b, "p")
    assert edges_with(a, "p") != edges_with(c, "p")
    G = a.graph
    assert a.n == 60 and nx.number_of_selfloops(G) == 0
    assert [G.nodes[v]["block"] for v in G] == [v // 20 for v in range(60)]
    p = np.array([x for *_, x in G.edges(data="p")])
    assert p.min() >= 0.0 and p.max() <= 0.2
    assert all(w == 1.0 for *_, w in G.edges(data="weight"))
    assert "p_in=0.3" in a.source and "edge" in a.record


def test_planted_partition_edge_counts_match_the_model():
    # within-block and across-block edge counts are binomial; 6 standard deviations give a
    # false-alarm rate below 1e-8 per count
    n_blocks, size, p_in, p_out = 4, 60, 0.2, 0.01
    d = planted_partition_graph(n_blocks, size, p_in, p_out, activation=0.1, rng=0)
    G = d.graph
    within = sum(G.nodes[u]["block"] == G.nodes[v]["block"] for u, v in G.edges)
    across = d.n_edges - within
    for count, pairs, p in ((within, n_blocks * size * (size - 1) // 2, p_in),
                            (across, size * size * n_blocks * (n_blocks - 1) // 2, p_out)):
        assert abs(count - pairs * p) <= 6 * math.sqrt(pairs * p * (1 - p))
    assert {x for *_, x in G.edges(data="p")} == {0.1}


def test_complete_blocks_enumerate_every_pair_once():
    # p = 1 exercises the decoding of pair indices: every pair appears exactly once
    full = planted_partition_graph(3, 7, 1.0, 0.0, rng=1).graph
    assert full.number_of_edges() == 3 * 21
    assert all(full.nodes[u]["block"] == full.nodes[v]["block"] for u, v in full.edges)
    cross = planted_partition_graph(2, 5, 0.0, 1.0, rng=1).graph
    assert nx.is_isomorphic(cross, nx.complete_bipartite_graph(5, 5))
    er = erdos_renyi_graph(41, 1.0, rng=2).graph
    assert nx.is_isomorphic(er, nx.complete_graph(41))
    assert erdos_renyi_graph(30, 0.0, rng=2).n_edges == 0
    assert erdos_renyi_graph(1, 0.5, rng=2).n == 1


def test_erdos_renyi_weights_and_influence_objective():
    d = erdos_renyi_graph(50, 0.1, activation=(0.05, 0.3), weight=(1.0, 2.0), rng=3)
    w = np.array([x for *_, x in d.graph.edges(data="weight")])
    assert w.min() >= 1.0 and w.max() <= 2.0 and np.unique(w).size == w.size
    f = InfluenceSpread(d.graph, 500, probability="p", rng=0)
    assert f.n == 50 and 1.0 <= f([0]) <= 50.0


def test_with_activation_probabilities():
    base = load_graph("karate")
    d = with_activation_probabilities(base, (0.0, 0.1), rng=4)
    again = with_activation_probabilities(base, (0.0, 0.1), rng=4)
    assert edges_with(d, "p") == edges_with(again, "p")
    p = np.array([x for *_, x in d.graph.edges(data="p")])
    assert p.size == 78 and p.min() >= 0.0 and p.max() <= 0.1
    assert not any("p" in a for *_, a in base.graph.edges(data=True))  # input untouched
    assert d.record == base.record and "activation" in d.edge
    const = with_activation_probabilities(base, 0.25, attribute="q", rng=0)
    assert {x for *_, x in const.graph.edges(data="q")} == {0.25}


@pytest.mark.parametrize("call,needle", [
    (lambda: planted_partition_graph(0, 5, 0.1, 0.1), "n_blocks"),
    (lambda: planted_partition_graph(2, 5, 1.5, 0.1), "p_in"),
    (lambda: planted_partition_graph(2, 5, 0.1, 0.1, activation=(0.3, 0.1)), "activation"),
    (lambda: planted_partition_graph(2, 5, 0.1, 0.1, activation=(0.1, 1.2)), "activation"),
    (lambda: erdos_renyi_graph(5, 0.1, weight=-1.0), "weight"),
    (lambda: erdos_renyi_graph(5, 0.1, activation="high"), "activation"),
    (lambda: with_activation_probabilities(nx.path_graph(3)), "GraphDataset"),
])
def test_bad_parameters_are_named(call, needle):
    with pytest.raises(DPSubmodError, match=needle):
        call()
