"""k-submodular families: defining properties, gains against brute force, counting, sensitivity."""

from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from dpsubmod.errors import (
    GroundSetMismatchError,
    ParameterTypeError,
    SensitivityError,
    ValidationError,
)
from dpsubmod.functions import Coverage, FacilityLocation, Modular
from dpsubmod.functions.ksubmodular import (
    KCoverage,
    KFacilityLocation,
    KSensorPlacement,
    KSubmodularFunction,
    KTopicInfluence,
    PerLabelSum,
    as_labels,
    directed_edges,
    labels_to_pairs,
    sample_rr_incidence,
)
from oracles import all_ks_values, ks_property_violations

FAMILIES = ["per_label", "facility", "cov_union", "cov_sum", "influence", "sensor"]


def make(family: str, rng: np.random.Generator, n: int, k: int) -> KSubmodularFunction:
    """A random record-built instance of ``family`` on ``n`` items with ``k`` labels."""
    if family == "per_label":
        parts = []
        for i in range(k):
            if i % 2 == 0:
                recs = [list(np.flatnonzero(rng.random(n) < 0.4)) for _ in range(6)]
                parts.append(Coverage.from_records(recs, n))
            else:
                parts.append(FacilityLocation.from_records(rng.random((6, 2)), rng.random((n, 2)),
                                                            bandwidth=0.5))
        return PerLabelSum(parts)
    if family == "facility":
        return KFacilityLocation.from_costs(rng.uniform(0, 3, (k, 5, n)), max_cost=3.0)
    if family in ("cov_union", "cov_sum"):
        recs = [[np.flatnonzero(rng.random(n) < 0.35) for _ in range(k)] for _ in range(7)]
        w = rng.random(7)
        return KCoverage.from_records(recs, n, mode=family[4:], weights=w)
    if family == "influence":
        g = nx.gnp_random_graph(n, 0.5, seed=int(rng.integers(1 << 30)), directed=True)
        src, dst, _ = directed_edges(g)
        p = rng.uniform(0.1, 0.9, (k, src.size))
        return KTopicInfluence.from_edges(n, src, dst, p, n_samples=25, rng=rng)
    if family == "sensor":
        return KSensorPlacement(rng.random((8, 2)), rng.random((n, 2)), rng.uniform(0.2, 0.6, k),
                                rng.random((8, k)))
    raise AssertionError(family)


# ------------------------------------------------------------------------------------------------
# defining properties


@pytest.mark.parametrize("family", FAMILIES)
@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 4), k=st.integers(1, 3))
def test_monotone_k_submodular(family, seed, n, k):
    f = make(family, np.random.default_rng(seed), n, k)
    assert f.monotone and f.k_submodular
    v = ks_property_violations(f)
    assert v["monotone"] <= 1e-9
    assert v["orthant"] <= 1e-9
    assert v["pairwise"] <= 1e-9
    assert abs(f._value(np.zeros(n, dtype=np.int64))) <= 1e-12  # F(0) = 0


def test_checker_catches_a_non_k_submodular_function():
    # A function rewarding two items with the same label together (supermodular within a label).
    class Pairs(KSubmodularFunction):
        def _value(self, x):
            return float((x[0] == 1) and (x[1] == 1))

    v = ks_property_violations(Pairs(3, 2))
    assert v["orthant"] > 0.5
    # Pairwise monotonicity fails for a function penalising any label on item 0.

    class Penalty(KSubmodularFunction):
        def _value(self, x):
            return -float(x[0] != 0)

    assert ks_property_violations(Penalty(2, 2))["pairwise"] > 0.5


def test_per_label_sum_does_not_claim_k_submodularity_for_non_monotone_parts():
    f = PerLabelSum([Modular([1.0, -1.0]), Modular([0.5, 0.5])])
    assert not f.monotone and not f.k_submodular
    assert ks_property_violations(f)["monotone"] > 0


# ------------------------------------------------------------------------------------------------
# incremental gains against brute force


@pytest.mark.parametrize("family", FAMILIES)
@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 6), k=st.integers(1, 3))
def test_gains_match_brute_force_along_a_path(family, seed, n, k):
    rng = np.random.default_rng(seed)
    f = make(family, rng, n, k)
    s = f.state()
    x = np.zeros(n, dtype=np.int64)
    for e in rng.permutation(n)[: int(rng.integers(1, n + 1))]:
        g = s.gains()
        for item in range(n):
            for label in range(1, k + 1):
                if x[item]:
                    assert g[item, label - 1] == 0.0
                    continue
                y = x.copy()
                y[item] = label
                assert g[item, label - 1] == pytest.approx(f._value(y) - f._value(x), abs=1e-10)
        label = int(rng.integers(1, k + 1))
        s.add(int(e), label)
        x[e] = label
        assert s.value == pytest.approx(f._value(x), abs=1e-10)
        np.testing.assert_array_equal(s.selection, x)
    # a subset of items, in a given order
    items = rng.permutation(n)[:2]
    np.testing.assert_allclose(s.gains(items), s.gains()[items], atol=1e-12)


def test_copy_is_independent():
    f = make("cov_union", np.random.default_rng(0), 5, 2)
    s = f.state()
    s.add(0, 1)
    t = s.copy()
    t.add(1, 2)
    assert s.selected == [(0, 1)] and t.selected == [(0, 1), (1, 2)]
    assert s.value == pytest.approx(f([1, 0, 0, 0, 0]))
    assert t.value == pytest.approx(f([1, 2, 0, 0, 0]))


# ------------------------------------------------------------------------------------------------
# evaluation counting, selections, errors


@pytest.mark.parametrize("family", FAMILIES)
def test_evaluation_counting(family):
    f = make(family, np.random.default_rng(1), 5, 3)
    f.reset_evaluations()
    f(np.zeros(5, dtype=int))
    assert f.evaluations == 1
    s = f.state()
    before = f.evaluations
    s.gains([0, 2])
    assert f.evaluations - before == 2 * 3  # a batch of m pairs counts m
    s.gains()
    assert f.evaluations - before == 2 * 3 + 5 * 3
    s.add(1, 2)
    assert f.evaluations - before == 2 * 3 + 5 * 3  # adding reuses the gains


def test_selections_as_vector_or_pairs():
    f = make("facility", np.random.default_rng(2), 4, 2)
    assert f([0, 2, 1, 0]) == f([(1, 2), (2, 1)]) == f(np.array([[2, 1], [1, 2]]))
    assert f(()) == f([0, 0, 0, 0]) == 0.0
    np.testing.assert_array_equal(as_labels([(3, 1)], 4, 2), [0, 0, 0, 1])
    assert labels_to_pairs(np.array([0, 2, 1, 0])) == ((1, 2), (2, 1))
    with pytest.raises(ValidationError, match="entries in 0..2"):
        f([0, 3, 0, 0])
    with pytest.raises(ValidationError, match="length n=4"):
        f([0, 1])
    with pytest.raises(ValidationError, match="labels in 1..2"):
        f([(0, 0)])
    with pytest.raises(ValidationError, match="repeated"):
        f([(0, 1), (0, 2)])
    with pytest.raises(ParameterTypeError, match="boolean mask"):
        f(np.ones(4, dtype=bool))
    s = f.state()
    s.add(0, 1)
    s.add(0, 1)  # same label: a no-op
    with pytest.raises(ValidationError, match="already has label 1"):
        s.add(0, 2)
    with pytest.raises(ParameterTypeError):
        s.add(1, 1.5)
    with pytest.raises(ValidationError):
        s.add(1, 3)


def test_constructor_errors():
    with pytest.raises(ValidationError, match="exceed the declared bound"):
        KFacilityLocation(np.full((2, 3, 4), 2.0), max_similarity=1.0)
    with pytest.raises(ValidationError, match="NaN"):
        KFacilityLocation(np.full((2, 3, 4), np.nan))
    with pytest.raises(ValidationError, match="non-negative"):
        KFacilityLocation(-np.ones((2, 3, 4)))
    with pytest.raises(ValidationError, match="exceed max_cost"):
        KFacilityLocation.from_costs(np.full((1, 2, 2), 5.0), max_cost=3.0)
    with pytest.raises(ValidationError, match="mode"):
        KCoverage([np.eye(3)], mode="max")
    with pytest.raises(ValidationError, match="same shape"):
        KCoverage([np.eye(3), np.eye(4)])
    with pytest.raises(ValidationError, match="record_bound"):
        KCoverage([np.eye(3)], np.full(3, 2.0), record_bound=1.0)
    with pytest.raises(ValidationError, match="k=2"):
        KCoverage.from_records([[{0}, {1}], [{0}]], 3)
    with pytest.raises(ValidationError, match="outside the ground set"):
        KCoverage.from_records([[{5}]], 3)
    with pytest.raises(ValidationError, match="probabilities"):
        KTopicInfluence.from_edges(3, [0, 1], [1, 2], np.full((2, 2), 1.5), n_samples=10)
    with pytest.raises(ParameterTypeError, match="sequence of k SetFunctions"):
        PerLabelSum(Modular([1.0]))
    with pytest.raises(GroundSetMismatchError):
        PerLabelSum([Modular([1.0]), Modular([1.0, 2.0])])
    with pytest.raises(ValidationError, match="demands"):
        KSensorPlacement(np.zeros((2, 2)), np.zeros((3, 2)), [1.0], np.full((2, 1), 2.0))


def test_undeclared_sensitivity_is_refused():
    f = KFacilityLocation(np.ones((2, 3, 4)))
    assert f.sensitivity is None
    with pytest.raises(SensitivityError, match="declares no sensitivity"):
        f.require_sensitivity(caller="ks_private")
    assert f.require_sensitivity(0.5) == 0.5
    with pytest.raises(ValidationError):
        f.neighbour(0)
    g = KCoverage([np.eye(3)])
    with pytest.raises(SensitivityError, match="record_bound"):
        g.neighbour(0)


# ------------------------------------------------------------------------------------------------
# declared sensitivity against neighbouring instances


@pytest.mark.parametrize("family", FAMILIES)
def test_declared_sensitivity_bounds_every_neighbour(family):
    rng = np.random.default_rng(3)
    worst = 0.0
    for _ in range(8):
        f = make(family, rng, 4, 2)
        _, v = all_ks_values(f)
        for _ in range(3):
            g = f.neighbour(rng)
            assert type(g) is type(f) and g.n == f.n and g.k == f.k
            _, w = all_ks_values(g)
            gap = float(np.abs(v - w).max())
            assert gap <= f.sensitivity * (1 + 1e-9), (family, gap, f.sensitivity)
            worst = max(worst, gap / f.sensitivity)
    assert worst > 0  # neighbours do differ


def test_sensitivity_values_and_tightness():
    f = KCoverage.from_records([[{0}, {1}]] * 4, 3, mode="sum")
    assert f.sensitivity == pytest.approx(2 / 4)
    # Replacing a record covered in both labels by an uncovered one moves F by exactly k / N.
    g = f.replace_record(0, [set(), set()])
    assert f([1, 2, 0]) - g([1, 2, 0]) == pytest.approx(f.sensitivity)
    u = KCoverage.from_records([[{0}, {1}]] * 4, 3, mode="union")
    assert u.sensitivity == pytest.approx(1 / 4)
    fl = KFacilityLocation.from_costs(np.zeros((3, 5, 2)), max_cost=2.0)
    assert fl.sensitivity == pytest.approx(3 * 2.0 / 5)
    gl = fl.replace_client(0, np.zeros((3, 2)))
    assert fl([1, 2]) - gl([1, 2]) == pytest.approx(2 * 2.0 / 5)  # two labels used
    p = PerLabelSum([Coverage.from_records([[0], [1]], 2), Coverage.from_records([[1]] * 4, 2)])
    assert p.sensitivity == pytest.approx(1 / 2 + 1 / 4)
    assert PerLabelSum([Modular([1.0]), Modular([1.0])]).sensitivity is None
    s = KSensorPlacement(np.zeros((4, 2)), np.zeros((3, 2)), [1.0, 1.0])
    assert s.sensitivity == pytest.approx(2 / 4)


# ------------------------------------------------------------------------------------------------
# k-topic influence: the reverse-reachable estimate against the exact spread


def _exact_k_topic_spread(n, src, dst, p, x):
    """E |union_i A_i(X_i)| by enumerating every live-edge world of every topic."""
    k, m = p.shape
    total = 0.0
    worlds = list(itertools.product([0, 1], repeat=m))
    for combo in itertools.product(worlds, repeat=k):
        prob = 1.0
        active = np.zeros(n, dtype=bool)
        for i, live in enumerate(combo):
            live = np.array(live, dtype=bool)
            prob *= float(np.prod(np.where(live, p[i], 1 - p[i])))
            g = nx.DiGraph()
            g.add_nodes_from(range(n))
            g.add_edges_from(zip(src[live], dst[live]))
            for s in np.flatnonzero(x == i + 1):
                active[list(nx.descendants(g, int(s)) | {int(s)})] = True
        total += prob * active.sum()
    return total


def test_reverse_reachable_estimate_is_unbiased():
    n = 5
    src = np.array([0, 1, 2, 3, 0])
    dst = np.array([1, 2, 3, 4, 2])
    p = np.array([[0.7, 0.5, 0.3, 0.9, 0.2], [0.2, 0.8, 0.6, 0.1, 0.5]])
    f = KTopicInfluence.from_edges(n, src, dst, p, n_samples=40_000, rng=7)
    for x in ([1, 0, 0, 0, 0], [1, 0, 2, 0, 0], [0, 2, 0, 1, 0], [2, 2, 0, 0, 1]):
        x = np.array(x)
        exact = _exact_k_topic_spread(n, src, dst, p, x)
        est = f(x)
        # The estimate is n times a mean of theta Bernoullis: sd <= n / (2 sqrt(theta)) = 0.0125.
        # A 5-sd band: false-alarm rate < 1e-6 per check.
        assert abs(est - exact) <= 5 * n / (2 * np.sqrt(40_000)), (x, est, exact)


def test_rr_sampler_shapes_and_determinism():
    g = nx.karate_club_graph()
    src, dst, nodes = directed_edges(g)
    assert src.size == 2 * g.number_of_edges() and len(nodes) == 34
    p = np.full((2, src.size), 0.1)
    a = sample_rr_incidence(34, src, dst, p, [0, 5, 5], rng=3)
    b = sample_rr_incidence(34, src, dst, p, [0, 5, 5], rng=3)
    assert len(a) == 2 and a[0].shape == (34, 3)
    for u, v in zip(a, b):
        assert (u != v).nnz == 0
    # every target is in its own reverse-reachable set, under every topic
    for m in a:
        assert m[0, 0] == 1 and m[5, 1] == 1 and m[5, 2] == 1
    f1 = KTopicInfluence.from_graph(g, p, n_samples=200, rng=4)
    f2 = KTopicInfluence.from_graph(g, p, n_samples=200, rng=4)
    x = np.zeros(34, dtype=int)
    x[[0, 33]] = [1, 2]
    assert f1(x) == f2(x)
    assert f1.sensitivity == pytest.approx(34 / 200)
    assert KTopicInfluence.from_graph(g, p, n_samples=200, normalize=True, rng=4).sensitivity \
        == pytest.approx(1 / 200)


def test_union_mode_counts_a_vertex_once_sum_mode_per_topic():
    inc = [sp.csr_array(np.array([[1.0, 1.0], [0.0, 0.0]])),
           sp.csr_array(np.array([[0.0, 0.0], [1.0, 0.0]]))]
    u = KCoverage(inc, mode="union")
    s = KCoverage(inc, mode="sum")
    x = [1, 2]  # item 0 covers records {0, 1} in label 1, item 1 covers record 0 in label 2
    assert u(x) == 2.0 and s(x) == 3.0
