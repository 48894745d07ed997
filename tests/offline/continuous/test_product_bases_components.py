"""The graphic product-base sampler's connected components: right on every graph, computed with
32-bit indices (scipy 1.11 reads 64-bit ones as garbage, without an error)."""

from __future__ import annotations

import numpy as np
import pytest

from dpsubmod.constraints import GraphicMatroid
from dpsubmod.offline.continuous import _product_bases
from dpsubmod.offline.continuous._product_bases import product_base_sampler


def _reference_components(n_nodes: int, edges: np.ndarray) -> np.ndarray:
    """Component label per node by breadth-first search (no scipy)."""
    adj: list[list[int]] = [[] for _ in range(n_nodes)]
    for a, b in edges.tolist():
        adj[a].append(b)
        adj[b].append(a)
    label = np.full(n_nodes, -1)
    for start in range(n_nodes):
        if label[start] >= 0:
            continue
        label[start] = start
        todo = [start]
        while todo:
            for nb in adj[todo.pop()]:
                if label[nb] < 0:
                    label[nb] = start
                    todo.append(nb)
    return label


def _graph(seed: int, n_nodes: int = 60, n_groups: int = 7) -> np.ndarray:
    """Random connected groups on shuffled nodes, some extra edges and self-loops inside each
    group, and a few isolated nodes."""
    rng = np.random.default_rng(seed)
    nodes = rng.permutation(n_nodes)[: n_nodes - 5]  # the last 5 stay isolated
    edges = []
    for group in np.array_split(nodes, n_groups):
        for i in range(1, group.size):  # a random tree on the group
            edges.append((group[i], group[rng.integers(i)]))
        for _ in range(group.size // 2):  # extra edges and self-loops inside the group
            edges.append((group[rng.integers(group.size)], group[rng.integers(group.size)]))
    edges = np.array(edges, dtype=np.int64)
    return edges[rng.permutation(len(edges))]


def _same_partition(a: np.ndarray, b: np.ndarray) -> bool:
    return bool(np.array_equal(a[:, None] == a[None, :], b[:, None] == b[None, :]))


@pytest.mark.parametrize("seed", range(5))
def test_components_match_a_breadth_first_search(seed):
    edges = _graph(seed)
    m = GraphicMatroid(edges, n_nodes=60)
    sampler = product_base_sampler(m, "test")
    assert _same_partition(sampler.component, _reference_components(60, edges))
    # 7 groups and 5 isolated nodes; the rank is nodes minus components
    assert np.unique(sampler.component).size == 12 == 60 - m.rank


def test_a_wrong_partition_is_caught():
    # the check above is not vacuous: merging two components fails it
    edges = _graph(0)
    ref = _reference_components(60, edges)
    wrong = ref.copy()
    wrong[wrong == wrong[edges[0, 0]]] = ref[np.flatnonzero(ref != ref[edges[0, 0]])[0]]
    assert not _same_partition(wrong, ref)


def test_connected_components_gets_32_bit_indices(monkeypatch):
    seen = []
    real = _product_bases.connected_components

    def spy(g, *args, **kwargs):
        csr = g.tocsr()
        seen.append((csr.indices.dtype, csr.indptr.dtype))
        return real(g, *args, **kwargs)

    monkeypatch.setattr(_product_bases, "connected_components", spy)
    product_base_sampler(GraphicMatroid(_graph(1), n_nodes=60), "test")
    assert seen == [(np.dtype(np.int32), np.dtype(np.int32))]
