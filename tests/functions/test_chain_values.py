"""The batched chain evaluation and the other public evaluation hooks of SetFunction.

Every family's one-pass ``chain_values`` must give the numbers of the generic path (walking the
incremental state, one ``add`` per element) to 1e-12 relative, on random instances, for full
orders and prefixes; ``values`` must agree with ``value`` row by row; ``terms`` and ``cut_form``
must describe the function exactly.
"""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

from dpsubmod.errors import ParameterTypeError, ValidationError
from dpsubmod.functions import (
    Coverage,
    FacilityLocation,
    FeatureBased,
    GraphCut,
    InfluenceSpread,
    Modular,
    MutualInformation,
    Restricted,
    Scaled,
    SetFunction,
    Sum,
    Truncated,
)
from dpsubmod.polytopes import SubmodularBasePolytope

N = 11


def _graph(rng: np.random.Generator, directed: bool) -> nx.Graph:
    G = nx.gnm_random_graph(N, 30, seed=int(rng.integers(1 << 30)), directed=directed)
    for u, v in G.edges():
        G[u][v]["weight"] = float(rng.random())
    return G


def _families(rng: np.random.Generator) -> dict[str, SetFunction]:
    dense_fl = rng.random((7, N))
    sparse_fl = sp.random(25, N, density=0.3, random_state=int(rng.integers(1 << 30)),
                          format="csr")
    tied = np.round(rng.random((20, N)) * 3) / 3 * (rng.random((20, N)) < 0.5)
    feats = rng.random((N, 5)) * (rng.random((N, 5)) < 0.6)
    sparse_feats = sp.random(N, 8, density=0.4, random_state=int(rng.integers(1 << 30)),
                             format="csr")
    fl = FacilityLocation(rng.random((5, N)))
    cut = GraphCut(_graph(rng, False))
    return {
        "modular": Modular(rng.normal(size=N)),
        "cut": cut,
        "directed cut": GraphCut(_graph(rng, True)),
        "cut of a weight matrix": GraphCut(nx.to_numpy_array(_graph(rng, False))),
        "facility location dense": FacilityLocation(dense_fl, rng.random(7)),
        "facility location float32": FacilityLocation(dense_fl.astype(np.float32)),
        "facility location sparse": FacilityLocation(sparse_fl, rng.random(25)),
        "facility location ties": FacilityLocation(sp.csr_array(tied)),
        "coverage": Coverage(rng.random((N, 30)) < 0.2, rng.random(30)),
        "coverage with empty sets": Coverage(sp.csr_array((rng.random((N, 6)) < 0.1) * 1.0)),
        "feature sqrt": FeatureBased(feats, "sqrt", rng.random(5)),
        "feature log1p sparse": FeatureBased(sparse_feats, "log1p"),
        "feature min": FeatureBased(feats * 0.7, "min"),
        "mutual information": MutualInformation(rng.integers(0, 3, (40, N)),
                                                rng.integers(0, 2, 40)),
        "mutual information saturating": MutualInformation(rng.integers(0, 5, (6, N)),
                                                           rng.integers(0, 2, 6)),
        "influence": InfluenceSpread(nx.gnm_random_graph(N, 20, seed=5, directed=True), 200,
                                     probability=0.3, rng=1),
        "sum": Sum([Modular(rng.normal(size=N)), fl], weights=[0.5, 2.0]),
        "scaled": Scaled(fl, 3.0),
        "restricted": Restricted(cut, np.arange(0, N, 2)),
        "truncated": Truncated(fl, 1.5),
        "nested": Modular(rng.normal(size=N)) + fl * 2.0 + cut,
        "cardinality (base polytope)": SubmodularBasePolytope.cardinality_based(
            np.minimum(np.arange(N + 1), 4).astype(float)).f,
    }


def _walk(f: SetFunction, order: np.ndarray) -> np.ndarray:
    """The generic path: one incremental state, one add per element."""
    st = f.state()
    out = [st.value]
    for e in order:
        st.add(int(e))
        out.append(st.value)
    return np.array(out)


NAMES = list(_families(np.random.default_rng(0)))


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("seed", range(4))
def test_chain_values_match_the_generic_path(name, seed):
    rng = np.random.default_rng(seed)
    f = _families(rng)[name]
    for length in (f.n, int(rng.integers(0, f.n + 1)), 1, 0):
        order = rng.permutation(f.n)[:length]
        fast = f.chain_values(order)
        walked = _walk(f, order)
        direct = np.array([f.value(order[:k]) for k in range(order.size + 1)])
        scale = max(1.0, float(np.abs(walked).max()))
        assert fast.shape == (order.size + 1,)
        assert np.abs(fast - walked).max() <= 1e-12 * scale
        assert np.abs(fast - direct).max() <= 1e-12 * scale


@pytest.mark.parametrize("name", NAMES)
def test_batched_values_match_single_values(name):
    rng = np.random.default_rng(7)
    f = _families(rng)[name]
    masks = rng.random((16, f.n)) < 0.5
    masks[0] = False
    masks[1] = True
    single = np.array([f.value(m) for m in masks])
    np.testing.assert_allclose(f.values(masks), single, rtol=1e-12, atol=1e-12)


def test_a_chain_counts_one_evaluation_per_set_and_diagnostics_count_none():
    f = Modular([1.0, 2.0, 3.0])
    f.chain_values([2, 0, 1])
    assert f.evaluations == 4
    f.chain_values([1], count=False)
    f.values(np.ones((3, 3), dtype=bool))
    assert f.evaluations == 4


def test_a_family_without_a_fast_chain_walks_its_state():
    class Sqrt(SetFunction):
        def _value(self, mask):
            return float(np.sqrt(mask.sum()))

    f = Sqrt(4)
    np.testing.assert_allclose(f.chain_values([3, 1]), [0.0, 1.0, np.sqrt(2.0)])
    assert f.evaluations == 3
    assert not f.batched_values


@pytest.mark.parametrize("order, err", [
    ([0, 0], ValidationError),
    ([0, 5], ValidationError),
    ([-1], ValidationError),
    (np.ones(3, dtype=bool), ParameterTypeError),
    ([0.5], ParameterTypeError),
])
def test_bad_orders_are_refused_naming_the_argument(order, err):
    f = Modular([1.0, 2.0, 3.0])
    with pytest.raises(err, match="order"):
        f.chain_values(order)
    assert f.evaluations == 0


def test_terms_and_cut_forms_describe_the_function():
    rng = np.random.default_rng(3)
    cut = GraphCut(_graph(rng, False))
    mod = Modular(rng.normal(size=N))
    fl = FacilityLocation(rng.random((4, N)))
    f = Sum([Scaled(cut, 2.0), mod, fl], weights=[1.0, 3.0, 0.5])
    masks = rng.random((20, N)) < 0.5
    by_terms = sum(c * g.values(masks) for c, g in f.terms())
    np.testing.assert_allclose(by_terms, f.values(masks), rtol=1e-12, atol=1e-12)
    assert f.cut_form() is None  # facility location is no cut
    g = Sum([Scaled(cut, 2.0), mod], weights=[1.0, 3.0])
    form = g.cut_form()
    assert form is not None and not form.directed
    x = masks.astype(float)
    by_form = np.einsum("ij,ij->i", x, (form.weights @ (1.0 - x).T).T) + x @ form.modular
    np.testing.assert_allclose(by_form, g.values(masks), rtol=1e-12, atol=1e-12)
    assert Modular([1.0]).cut_form().weights is None
