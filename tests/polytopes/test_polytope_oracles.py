"""Linear-optimization oracles against scipy.optimize.linprog, membership and bounds."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.optimize import linprog

from dpsubmod.constraints import Knapsack, UniformMatroid
from dpsubmod.errors import GroundSetMismatchError, ParameterTypeError, ValidationError
from dpsubmod.polytopes import (
    Box,
    KnapsackPolytope,
    MatroidBasePolytope,
    MatroidPolytope,
    Simplex,
    SubmodularBasePolytope,
    as_polytope,
)
from dpsubmod.polytopes.base import order_desc
from oracles import (
    MATROID_FAMILIES,
    ConcaveOfModular,
    all_masks,
    independence_table,
    matroid_rank_inequalities,
    random_matroid,
    rank_table,
)

TOL = 1e-7


def _lp_max(w, **kw):
    res = linprog(-np.asarray(w), method="highs", **kw)
    assert res.status == 0, res.message
    return -res.fun


def _weights(n, rng):
    """Weights of both signs, with ties, so the tie-breaking and the sign rule are exercised."""
    w = rng.normal(size=n)
    w[rng.random(n) < 0.2] = w[0]
    return w


def test_box_and_simplex_against_linprog():
    rng = np.random.default_rng(0)
    for _ in range(20):
        n = int(rng.integers(1, 7))
        lo = rng.normal(size=n)
        hi = lo + rng.random(n) * (rng.random(n) < 0.8)  # some degenerate coordinates
        box = Box(lo, hi)
        s = float(rng.uniform(0.5, 3.0))
        w = _weights(n, rng)
        for p, kw in [
            (box, {"bounds": list(zip(lo, hi))}),
            (Simplex(n, s), {"A_eq": np.ones((1, n)), "b_eq": [s], "bounds": (0, None)}),
            (Simplex(n, s, full=False), {"A_ub": np.ones((1, n)), "b_ub": [s],
                                         "bounds": (0, None)}),
        ]:
            v = p.linear_max(w)
            assert p.contains(v)
            assert w @ v == pytest.approx(_lp_max(w, **kw), abs=TOL)
            assert -(w @ p.linear_min(w)) == pytest.approx(_lp_max(-w, **kw), abs=TOL)


def test_knapsack_polytope_against_linprog():
    rng = np.random.default_rng(1)
    for _ in range(30):
        n = int(rng.integers(1, 9))
        c = rng.uniform(0.1, 1.5, n)
        b = float(rng.uniform(0.2, c.sum()))
        if c.min() > b:
            continue
        p = KnapsackPolytope(c, b)
        w = _weights(n, rng)
        v = p.linear_max(w)
        assert p.contains(v)
        assert (v > 1e-12).sum() - (v > 1 - 1e-12).sum() <= 1  # at most one fractional item
        expected = _lp_max(w, A_ub=c[None, :], b_ub=[b], bounds=(0, 1))
        assert w @ v == pytest.approx(expected, abs=TOL)
    assert isinstance(as_polytope(Knapsack([1.0, 2.0], 2.0)), KnapsackPolytope)


@pytest.mark.parametrize("family", MATROID_FAMILIES)
def test_matroid_polytopes_against_rank_inequality_lp(family):
    # Edmonds: P(M) = {x >= 0 : x(S) <= r(S) for all S}; B(M) adds x(V) = r(V). The rank
    # inequalities are written out from a brute-force rank table (n <= 8).
    rng = np.random.default_rng(MATROID_FAMILIES.index(family))
    for _ in range(3):
        m, _ = random_matroid(family, int(rng.integers(3, 9)), rng)
        n = m.n
        ranks = rank_table(independence_table(m.is_independent, n))
        A, b = matroid_rank_inequalities(ranks, n)
        P, B = MatroidPolytope(m), MatroidBasePolytope(m)
        for _ in range(6):
            w = _weights(n, rng)
            v = P.linear_max(w)
            assert set(np.unique(v)) <= {0.0, 1.0} and m.is_independent(v > 0.5)
            assert w @ v == pytest.approx(_lp_max(w, A_ub=A, b_ub=b, bounds=(0, None)), abs=TOL)
            vb = B.linear_max(w)
            assert m.is_base(vb > 0.5)
            expected = _lp_max(w, A_ub=A, b_ub=b, A_eq=np.ones((1, n)), b_eq=[m.rank],
                               bounds=(0, None))
            assert w @ vb == pytest.approx(expected, abs=TOL)
            assert np.array_equal(np.flatnonzero(vb), B.linear_max_set(w))
        assert P.oracle_calls == 6 and B.oracle_calls == 12


def test_uniform_matroid_oracle_is_the_greedy_on_ties():
    # The uniform matroid's oracle partitions the weights instead of sorting them; it must keep
    # the greedy's vertex exactly (ties to the lower index), on weights made of a few values.
    rng = np.random.default_rng(7)
    for _ in range(300):
        n = int(rng.integers(1, 25))
        k = int(rng.integers(1, n + 1))
        w = rng.integers(-2, 3, n).astype(float) if rng.random() < 0.7 else _weights(n, rng)
        w[rng.random(n) < 0.1] = -0.0
        m = UniformMatroid(n, k)
        order = order_desc(w)
        for P, keep in ((MatroidPolytope(m), order[w[order] > 0]), (MatroidBasePolytope(m), order)):
            greedy = m.greedy_independent(keep)
            assert P._greedy_set(w).tolist() == greedy.tolist()  # same indices, same order
            assert P.linear_max_set(w).tolist() == sorted(greedy.tolist())
            v = np.zeros(n)
            v[greedy] = 1.0
            assert P.linear_max(w).tolist() == v.tolist()
    P = MatroidPolytope(UniformMatroid(5, 2))
    assert P.linear_max([1.0, 3.0, 1.0, 3.0, 3.0]).tolist() == [0.0, 1.0, 0.0, 1.0, 0.0]
    assert P.linear_max([0.0, 2.0, 0.0, 0.0, 0.0]).tolist() == [0.0, 1.0, 0.0, 0.0, 0.0]
    assert MatroidBasePolytope(UniformMatroid(5, 2)).linear_min([1.0, 0.0, 1.0, 0.0, 0.0]
                                                                ).tolist() == [0, 1, 0, 1, 0]


def _random_submodular(n, rng):
    """sum_j w_j sqrt(A_j . 1_S) + m(S) with a modular part of both signs; f(empty) = 0."""
    A = rng.random((3, n)) * (rng.random((3, n)) < 0.8)
    return ConcaveOfModular(A, rng.random(3) + 0.1, rng.normal(size=n), c=0.0)


def test_submodular_base_polytope_against_linprog():
    rng = np.random.default_rng(2)
    for _ in range(6):
        n = int(rng.integers(2, 7))
        f = _random_submodular(n, rng)
        masks = all_masks(n)
        vals = np.array([f._value(mk) for mk in masks])
        kw = {"A_ub": masks[1:].astype(float), "b_ub": vals[1:], "A_eq": np.ones((1, n)),
              "b_eq": [vals[-1]], "bounds": (None, None)}
        P = SubmodularBasePolytope(f)
        for _ in range(5):
            w = _weights(n, rng)
            before = f.evaluations
            v = P.linear_max(w)
            assert f.evaluations - before == n  # one Edmonds greedy = n evaluations
            assert P.contains(v)
            assert w @ v == pytest.approx(_lp_max(w, **kw), abs=TOL)
            assert -(w @ P.linear_min(w)) == pytest.approx(_lp_max(-w, **kw), abs=TOL)


def test_edmonds_sanity_case():
    # f = min(|S|, 1) on two elements: maximizing w = (1, 0) puts the unit on element 0.
    P = SubmodularBasePolytope.cardinality_based([0.0, 1.0, 1.0])
    assert P.linear_max([1.0, 0.0]).tolist() == [1.0, 0.0]
    assert P.linear_min([1.0, 0.0]).tolist() == [0.0, 1.0]
    # Ties go to the lower index.
    assert P.linear_max([0.5, 0.5]).tolist() == [1.0, 0.0]


def test_cardinality_based_matches_generic():
    rng = np.random.default_rng(3)
    n = 6
    g = np.concatenate([[0.0], np.cumsum(np.sort(rng.random(n))[::-1])])  # concave
    fast = SubmodularBasePolytope.cardinality_based(g)
    slow = SubmodularBasePolytope(fast.f)
    for _ in range(10):
        w = _weights(n, rng)
        assert np.allclose(fast.linear_max(w), slow.linear_max(w))
        x = rng.dirichlet(np.ones(3)) @ np.array([fast.linear_max(rng.normal(size=n))
                                                    for _ in range(3)])
        assert fast.contains(x) and slow.contains(x)
        bad = x + 0.05 * (np.arange(n) == 0) - 0.05 * (np.arange(n) == 1)
        assert fast.contains(bad) == slow.contains(bad)


@pytest.mark.parametrize("family", MATROID_FAMILIES)
def test_matroid_membership_matches_rank_inequalities(family):
    rng = np.random.default_rng(10 + MATROID_FAMILIES.index(family))
    m, _ = random_matroid(family, 7, rng)
    A, b = matroid_rank_inequalities(rank_table(independence_table(m.is_independent, 7)), 7)
    P, B = MatroidPolytope(m), MatroidBasePolytope(m)
    verts = np.array([P.linear_max(rng.normal(size=7)) for _ in range(6)])
    bverts = np.array([B.linear_max(rng.normal(size=7)) for _ in range(6)])
    inside = outside = 0
    for _ in range(60):
        x = rng.dirichlet(np.ones(6)) @ verts * rng.uniform(0.8, 1.3)
        truth = bool((A @ x <= b + 1e-9).all() and (x >= 0).all())
        assert P.contains(x) == truth
        inside += truth
        outside += not truth
        xb = rng.dirichlet(np.ones(6)) @ bverts
        assert B.contains(xb)
        assert not B.contains(xb * 1.01) or m.rank == 0
    assert inside and outside  # both branches were exercised


def test_uniform_and_partition_membership_closed_forms():
    P = MatroidPolytope(UniformMatroid(30, 4))  # beyond the enumeration limit
    assert P.contains(np.full(30, 4 / 30))
    assert not P.contains(np.full(30, 4.1 / 30))
    assert not P.contains(np.r_[1.2, np.zeros(29)])


def test_enumeration_limit_is_explicit():
    from dpsubmod.constraints import GraphicMatroid

    edges = list(itertools.combinations(range(6), 2))  # 15 edges of K6
    with pytest.raises(ValidationError, match="max_n"):
        MatroidPolytope(GraphicMatroid(edges)).contains(np.zeros(15))


def test_diameter_and_l1_radius_bound_the_vertices():
    rng = np.random.default_rng(4)
    cases = []
    for family in MATROID_FAMILIES:
        m, _ = random_matroid(family, 6, rng)
        cases += [MatroidPolytope(m), MatroidBasePolytope(m)]
    cases += [SubmodularBasePolytope(_random_submodular(5, rng)),
              KnapsackPolytope(rng.uniform(0.2, 1.0, 6), 1.5), Box(-1.0, 2.0, dim=3),
              Simplex(4, 2.0), Simplex(4, 2.0, full=False)]
    for p in cases:
        V = np.unique(np.array([p.linear_max(rng.normal(size=p.dim)) for _ in range(200)]),
                      axis=0)
        far = max(np.linalg.norm(a - b) for a in V for b in V)
        assert far <= p.diameter() + 1e-9
        assert np.abs(V).sum(axis=1).max() <= p.l1_radius() + 1e-9


def test_bad_inputs():
    P = MatroidPolytope(UniformMatroid(4, 2))
    with pytest.raises(GroundSetMismatchError, match="'w'"):
        P.linear_max(np.ones(3))
    with pytest.raises(ValidationError, match="'w'"):
        P.linear_max([np.nan, 0, 0, 0])
    with pytest.raises(ValidationError, match="lo <= hi"):
        Box([0.0, 1.0], [1.0, 0.0])
    with pytest.raises(ParameterTypeError, match="'matroid'"):
        MatroidPolytope("uniform")
    with pytest.raises(ValidationError, match=r"f\(empty\) = 0"):
        SubmodularBasePolytope(ConcaveOfModular(np.ones((1, 3)), np.ones(1), np.zeros(3), c=1.0))
    with pytest.raises(ValidationError, match="concave"):
        SubmodularBasePolytope.cardinality_based([0.0, 1.0, 3.0])
    with pytest.raises(ValidationError, match="'scale'"):
        Simplex(3, scale=0.0)
    with pytest.raises(ParameterTypeError):
        as_polytope(3)


def test_non_submodular_function_is_refused():
    from oracles import TableFunction

    with pytest.raises(ValidationError, match="submodular"):
        SubmodularBasePolytope(TableFunction(np.zeros(4)))


def test_greedy_vertex_follows_the_order():
    f = _random_submodular(4, np.random.default_rng(5))
    P = SubmodularBasePolytope(f)
    order = [2, 0, 3, 1]
    cur, prev, expected = np.zeros(4, dtype=bool), 0.0, np.zeros(4)
    for e in order:
        cur[e] = True
        expected[e], prev = f._value(cur) - prev, f._value(cur)
    assert np.allclose(P.greedy_vertex(order), expected)
    with pytest.raises(ValidationError, match="permutation"):
        P.greedy_vertex([0, 1])
