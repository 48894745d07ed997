"""The SetFunction contract, checked on every family and combinator.

For random small instances of each: the vectorised state's gains equal brute-force
``f(S + e) - f(S)`` along random insertion sequences, the declared monotonicity and
submodularity hold on every subset, evaluation counting follows base.py, and state copies are
independent.
"""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from dpsubmod.functions import (
    Coverage,
    FacilityLocation,
    FeatureBased,
    FunctionState,
    GraphCut,
    InfluenceSpread,
    Modular,
    MutualInformation,
    Restricted,
    SetFunction,
    Sum,
    Truncated,
)
from oracles import all_values, brute_force_gains, monotonicity_violation, submodularity_violation

SEEDS = st.integers(0, 2**32 - 1)


def _n(rng: np.random.Generator) -> int:
    return int(rng.integers(3, 8))


def _sparse_rand(rng, shape, density):
    return sp.csr_array(rng.random(shape) * (rng.random(shape) < density))


def _graph(rng, n, directed):
    G = nx.DiGraph() if directed else nx.Graph()
    G.add_nodes_from(f"v{i}" for i in range(n))
    for u in range(n):
        for v in range(n):
            if u != v and rng.random() < 0.4:
                G.add_edge(f"v{u}", f"v{v}", weight=float(rng.random()),
                           p=float(rng.uniform(0.1, 0.9)))
    return G


FACTORIES = {
    "modular": lambda r: Modular(r.normal(size=_n(r))),
    "modular_nonneg": lambda r: Modular(r.random(_n(r))),
    "coverage_sparse": lambda r: Coverage(_sparse_rand(r, (_n(r), 10), 0.3), r.random(10)),
    "coverage_dense": lambda r: Coverage((r.random((_n(r), 6)) < 0.4).astype(int)),
    "coverage_records": lambda r: Coverage.from_records(
        [np.flatnonzero(r.random(5) < 0.3) for _ in range(9)], 5),
    "fl_dense64": lambda r: FacilityLocation(r.random((12, _n(r)))),
    "fl_dense32": lambda r: FacilityLocation(r.random((12, _n(r))).astype(np.float32),
                                             r.random(12)),
    "fl_sparse": lambda r: FacilityLocation(_sparse_rand(r, (15, _n(r)), 0.4)),
    "fl_ties": lambda r: FacilityLocation(r.integers(0, 3, (10, _n(r)))),
    "fl_gaussian": lambda r: FacilityLocation.from_records(
        r.normal(size=(10, 2)), r.normal(size=(_n(r), 2)), bandwidth=1.0),
    "fl_negdist32": lambda r: FacilityLocation.from_records(
        r.normal(size=(10, 2)), r.normal(size=(_n(r), 2)), "negative_distance", radius=2.0,
        dtype=np.float32),
    "cut_undirected": lambda r: GraphCut(_graph(r, _n(r), False)),
    "cut_directed": lambda r: GraphCut(_graph(r, _n(r), True)),
    "cut_matrix": lambda r: GraphCut(_sparse_rand(r, (_n(r),) * 2, 0.5), directed=True),
    "feature_sqrt": lambda r: FeatureBased(r.random((_n(r), 5))),
    "feature_log1p_sparse": lambda r: FeatureBased(_sparse_rand(r, (_n(r), 6), 0.5), "log1p",
                                                   r.random(6)),
    "feature_min": lambda r: FeatureBased(r.random((_n(r), 4)) * 0.7, "min"),
    "feature_callable": lambda r: FeatureBased(r.random((_n(r), 4)),
                                               lambda x: 1.0 - np.exp(-x)),
    "mutual_information": lambda r: MutualInformation(
        r.integers(0, 3, (30, _n(r))), r.integers(0, 2, 30)),
    "influence": lambda r: InfluenceSpread(_graph(r, _n(r), True), 40, rng=r),
    "sum": lambda r: (lambda n: Sum([FacilityLocation(r.random((6, n))),
                                     Modular(r.random(n)),
                                     FeatureBased(r.random((n, 3)))], [0.5, 2.0, 1.0]))(_n(r)),
    "add_operator": lambda r: (lambda n: FacilityLocation(r.random((6, n)))
                               + GraphCut(_graph(r, n, False)))(_n(r)),
    "scaled": lambda r: 2.5 * Coverage(_sparse_rand(r, (_n(r), 8), 0.3)),
    "restricted": lambda r: Restricted(FacilityLocation(r.random((8, 9))),
                                       r.permutation(9)[:_n(r)]),
    "truncated": lambda r: Truncated(FeatureBased(r.random((_n(r), 4))), 1.5),
    "truncated_cut": lambda r: Truncated(GraphCut(_graph(r, _n(r), False)), 0.8),
}


def _scale(values: np.ndarray) -> float:
    return max(1.0, float(np.abs(values).max()))


@pytest.mark.parametrize("family", sorted(FACTORIES))
@settings(max_examples=30, deadline=None)
@given(seed=SEEDS)
def test_state_gains_match_brute_force(family, seed):
    rng = np.random.default_rng(seed)
    f = FACTORIES[family](rng)
    scale = _scale(all_values(f)[1])
    state = f.state()
    assert isinstance(state, FunctionState) and type(state) is not FunctionState
    mask = np.zeros(f.n, dtype=bool)
    for e in rng.permutation(f.n)[: rng.integers(1, f.n + 1)]:
        got = state.gains()
        want = brute_force_gains(f, mask)
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-9 * scale)
        cand = rng.integers(0, f.n, size=4)  # any order, repeats allowed
        np.testing.assert_allclose(state.gains(cand), want[cand], rtol=0, atol=1e-9 * scale)
        state.add(int(e))
        mask[e] = True
        assert abs(state.value - f._value(mask)) <= 1e-9 * scale
        assert state.selected[-1] == e and state.mask[e]
    state.add(int(state.selected[0]))  # re-adding is a no-op
    assert abs(state.value - f._value(mask)) <= 1e-9 * scale


@pytest.mark.parametrize("family", sorted(FACTORIES))
@settings(max_examples=25, deadline=None)
@given(seed=SEEDS)
def test_declared_properties_hold(family, seed):
    f = FACTORIES[family](np.random.default_rng(seed))
    scale = _scale(all_values(f)[1])
    if f.submodular:
        assert submodularity_violation(f) <= 1e-9 * scale
    if f.monotone:
        assert monotonicity_violation(f) <= 1e-9 * scale
    if f.data_model == "monotone-records":
        assert f.monotone and f.sensitivity is not None


@pytest.mark.parametrize("family", sorted(FACTORIES))
def test_evaluation_counting(family):
    f = FACTORIES[family](np.random.default_rng(7))
    f.reset_evaluations()
    f([0])
    assert f.evaluations == 1
    state = f.state()
    assert f.evaluations == 1
    state.gains()
    assert f.evaluations == 1 + f.n
    state.gains([0, 1, 1])
    assert f.evaluations == 4 + f.n
    state.add(1)
    _ = state.value
    assert f.evaluations == 4 + f.n
    # Combinators count on the outer function only.
    for part in getattr(f, "functions", []) + [getattr(f, "f", None)]:
        if isinstance(part, SetFunction):
            assert part.evaluations == 0


@pytest.mark.parametrize("family", sorted(FACTORIES))
def test_state_copies_are_independent(family):
    rng = np.random.default_rng(11)
    f = FACTORIES[family](rng)
    state = f.state()
    state.add(0)
    before_gains, before_value = state.gains(), state.value
    twin = state.copy()
    twin.add(f.n - 1)
    twin.add(1)
    np.testing.assert_array_equal(state.gains(), before_gains)
    assert state.value == before_value and state.selected == [0]
    mask = np.zeros(f.n, dtype=bool)
    mask[[0, 1, f.n - 1]] = True
    scale = _scale(all_values(f)[1])
    np.testing.assert_allclose(twin.gains(), brute_force_gains(f, mask), atol=1e-9 * scale)
