"""Matroid families: axioms by exhaustive enumeration, can_add, greedy, random bases."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from dpsubmod.constraints import (
    GenericMatroid,
    GraphicMatroid,
    PartitionMatroid,
    TransversalMatroid,
    UniformMatroid,
    check_matroid_axioms,
)
from dpsubmod.errors import ValidationError
from oracles import (
    MATROID_FAMILIES,
    all_masks,
    exchange_violations,
    independence_table,
    random_matroid,
    rank_table,
)

SEEDS = range(4)


def _instance(family: str, seed: int, n: int | None = None):
    rng = np.random.default_rng([seed, MATROID_FAMILIES.index(family)])
    n = int(rng.integers(3, 9)) if n is None else n
    return random_matroid(family, n, rng)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("family", MATROID_FAMILIES)
def test_axioms_and_rank_exhaustive(family, seed):
    m, ref = _instance(family, seed)
    n = m.n
    indep = independence_table(m.is_independent, n)
    # The class agrees with the family's definition on every subset.
    assert np.array_equal(indep, independence_table(ref, n))
    # (I1) the empty set is independent.
    assert indep[0]
    codes = np.arange(1 << n)
    # (I2) downward closure: removing any element keeps independence.
    for e in range(n):
        has = (codes >> e) & 1 == 1
        assert indep[codes[has & indep] ^ (1 << e)].all()
    # (I3) exchange: every smaller independent set extends from a larger one.
    assert exchange_violations(indep, n).size == 0
    # Every base (maximal independent set) has `rank` elements.
    pop = all_masks(n).sum(axis=1)
    extendable = np.zeros(codes.size, dtype=bool)
    for e in range(n):
        bit = 1 << e
        extendable |= ((codes & bit) == 0) & indep[codes | bit]
    bases = indep & ~extendable
    assert bases.any()
    assert set(pop[bases].tolist()) == {m.rank}
    # rank_of agrees with the brute-force rank function on every subset.
    ranks = rank_table(indep)
    assert [m.rank_of(mask) for mask in all_masks(n)] == ranks.tolist()
    # The library's own exhaustive checker accepts it.
    check_matroid_axioms(m)


def _random_sets(n, rng, count=25):
    """Random subsets of every density, so dependent sets are well represented."""
    for _ in range(count):
        yield rng.random(n) < rng.random()


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("family", MATROID_FAMILIES)
def test_can_add_agrees_with_is_independent(family, seed):
    m, _ = _instance(family, seed)
    rng = np.random.default_rng(seed)
    for S in _random_sets(m.n, rng):
        expected = np.array([not S[e] and m.is_independent(S | (np.arange(m.n) == e))
                             for e in range(m.n)])
        assert np.array_equal(m.can_add(S), expected)
        cand = rng.permutation(m.n)[: rng.integers(1, m.n + 1)]
        assert np.array_equal(m.can_add(np.flatnonzero(S).tolist(), cand), expected[cand])


class _State:
    """Anything with a boolean ``mask`` (a FunctionState) is accepted as the current set."""

    def __init__(self, mask):
        self.mask = mask


@settings(max_examples=60, deadline=None)
@given(family=st.sampled_from(MATROID_FAMILIES), seed=st.integers(0, 10_000),
       bits=st.lists(st.booleans(), min_size=8, max_size=8))
def test_can_add_property(family, seed, bits):
    m, ref = _instance(family, seed, n=8)
    S = np.array(bits)
    got = m.can_add(_State(S))
    expected = [not S[e] and ref(S | (np.arange(8) == e)) for e in range(8)]
    assert got.tolist() == expected


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("family", MATROID_FAMILIES)
def test_greedy_random_base_and_extension(family, seed):
    m, ref = _instance(family, seed)
    rng = np.random.default_rng(100 + seed)
    for _ in range(5):
        order = rng.permutation(m.n)[: rng.integers(0, m.n + 1)]
        cur = np.zeros(m.n, dtype=bool)
        expected = []
        for e in order:
            trial = cur.copy()
            trial[e] = True
            if ref(trial):
                cur = trial
                expected.append(int(e))
        assert m.greedy_independent(order).tolist() == expected
    B = m.random_base(rng=seed)
    assert m.is_base(B) and ref(np.isin(np.arange(m.n), B)) and B.size == m.rank
    assert np.array_equal(B, m.random_base(rng=seed))  # same seed, same base
    assert m.random_maximal(rng=seed).size == m.rank
    I = m.greedy_independent(rng.permutation(m.n))[: max(0, m.rank - 1)]
    ext = m.extend_to_base(I)
    assert set(I.tolist()) <= set(ext.tolist()) and m.is_base(ext)


def test_extend_to_base_refuses_dependent_set():
    with pytest.raises(ValidationError, match="not independent"):
        UniformMatroid(4, 1).extend_to_base([0, 1])


def test_uniform_random_base_is_uniform():
    # Chi-square goodness of fit over the 10 bases of U(2, 5); false-alarm rate 0.1%.
    m = UniformMatroid(5, 2)
    rng = np.random.default_rng(7)
    counts = {}
    for _ in range(3000):
        key = tuple(m.random_base(rng=rng).tolist())
        counts[key] = counts.get(key, 0) + 1
    assert len(counts) == 10
    assert stats.chisquare(list(counts.values())).pvalue > 1e-3


def test_partition_random_base_is_uniform_per_block():
    # Blocks {0,1,2} (capacity 1) and {3,4} (capacity 1): 6 bases, each with probability 1/6.
    m = PartitionMatroid([0, 0, 0, 1, 1], [1, 1])
    rng = np.random.default_rng(8)
    counts = {}
    for _ in range(3000):
        key = tuple(m.random_base(rng=rng).tolist())
        counts[key] = counts.get(key, 0) + 1
    assert len(counts) == 6
    assert stats.chisquare(list(counts.values())).pvalue > 1e-3  # false-alarm rate 0.1%


def test_partition_inputs_agree():
    by_labels = PartitionMatroid([5, 5, 9, 9, 9], {5: 1, 9: 2})
    by_blocks = PartitionMatroid([[0, 1], [2, 3, 4]], [1, 2])
    for mask in all_masks(5):
        assert by_labels.is_independent(mask) == by_blocks.is_independent(mask)
    assert by_labels.rank == by_blocks.rank == 3


def test_graphic_from_networkx_uses_edge_order():
    import networkx as nx

    g = nx.MultiGraph()
    g.add_edges_from([("a", "b"), ("b", "c"), ("a", "b"), ("c", "c")])
    m = GraphicMatroid(g)
    assert m.n == 4 and m.n_nodes == 3 and m.rank == 2
    assert not m.is_independent([0, 1, 2][:1] + [list(g.edges()).index(("a", "b"), 1)])
    assert not m.can_add([], [3])[0]  # the self-loop is a loop of the matroid


def test_transversal_sparse_input_and_reachability():
    import scipy.sparse as sp

    # Items 0 and 1 share slot 0; item 1 can also use slot 1; item 2 only slot 1.
    adj = sp.csr_array(np.array([[1, 0], [1, 1], [0, 1]]))
    m = TransversalMatroid(adj)
    assert m.rank == 2
    # With {0} matched to slot 0, item 2 is addable directly and item 1 via slot 1.
    assert m.can_add([0]).tolist() == [False, True, True]
    # {0, 2}: slots 0 and 1 are both taken and no augmenting path exists for 1.
    assert m.can_add([0, 2]).tolist() == [False, False, False]
    assert m.greedy_independent([1, 0, 2]).tolist() == [1, 0]


def test_generic_check_axioms_finds_violations():
    with pytest.raises(ValidationError, match="I1"):
        GenericMatroid(3, lambda s: len(s) == 1)
    # Down-closure fails: {0, 1} independent but {1} not.
    with pytest.raises(ValidationError, match="I2"):
        GenericMatroid(3, lambda s: s in ({0, 1}, {0}, set())).check_axioms()
    # Exchange fails: {2} cannot be extended from {0, 1}.
    with pytest.raises(ValidationError, match=r"I3.*I = \[2\]"):
        GenericMatroid(3, lambda s: len(s) <= 1 or s == {0, 1}).check_axioms()
    with pytest.raises(ValidationError, match="declared rank"):
        GenericMatroid(3, lambda s: len(s) <= 1, rank=2).check_axioms()
    with pytest.raises(ValidationError, match="max_n"):
        GenericMatroid(12, lambda s: len(s) <= 1, rank=1).check_axioms(max_n=10)
    GenericMatroid(4, lambda s: len(s) <= 2).check_axioms()


def test_generic_can_add_calls_oracle_per_candidate():
    m = GenericMatroid(5, lambda s: len(s) <= 2, rank=2)
    before = m.oracle_calls
    assert m.can_add([0], [0, 1, 2]).tolist() == [False, True, True]
    assert m.oracle_calls - before == 2  # the element already in S is not asked


def test_graphic_union_find_and_scipy_paths_agree(monkeypatch):
    import dpsubmod.constraints.graphic as graphic

    rng = np.random.default_rng(5)
    edges = rng.integers(0, 6, size=(12, 2))
    m = GraphicMatroid(edges, n_nodes=7)
    sets = [rng.random(12) < p for p in np.linspace(0.05, 0.9, 30)]
    small = [(m.can_add(S), m.is_independent(S), m.rank_of(S)) for S in sets]
    monkeypatch.setattr(graphic, "_UNION_FIND_LIMIT", -1)  # force scipy for every set
    large = [(m.can_add(S), m.is_independent(S), m.rank_of(S)) for S in sets]
    for (a, b, c), (d, e, f) in zip(small, large):
        assert np.array_equal(a, d) and b == e and c == f
