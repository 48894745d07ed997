"""Exact submodular minimization: min-norm point, max-flow and brute force against enumeration."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from dpsubmod.errors import NonFiniteObjectiveError, ParameterTypeError, ValidationError
from dpsubmod.functions import (
    Coverage,
    FacilityLocation,
    FeatureBased,
    GraphCut,
    Modular,
    SetFunction,
    Sum,
)
from dpsubmod.offline import MinimizeResult, minimize_cut_plus_modular
from dpsubmod.offline.minimization.minimize import MINIMIZE_METHODS, minimize

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from oracles import (  # noqa: E402
    ConcaveOfModular,
    CutPlusModular,
    TableFunction,
    all_values,
    brute_force_minimum,
    random_concave_minus_modular,
    random_cut_plus_modular,
)

TOL = 1e-9


class _Plain(SetFunction):
    """Wraps a function's ``_value`` without its incremental state (the generic state is used)."""

    def __init__(self, g: SetFunction):
        super().__init__(g.n)
        self.g = g

    def _value(self, mask: np.ndarray) -> float:
        return self.g._value(mask)


def _instances(seed: int, count: int, n_max: int = 10):
    rng = np.random.default_rng(seed)
    out = []
    for i in range(count):
        n = int(rng.integers(1, n_max + 1))
        kind = i % 5
        if kind == 0:
            out.append(random_cut_plus_modular(n, rng))
        elif kind == 1:
            out.append(random_cut_plus_modular(n, rng, directed=True))
        elif kind == 2:
            out.append(random_cut_plus_modular(n, rng, integer=True, density=0.3))
        elif kind == 3:
            out.append(random_concave_minus_modular(n, rng))
        else:  # a sum of the two kinds, without the cut's own state
            a = random_cut_plus_modular(n, rng, density=0.3)
            b = random_concave_minus_modular(n, rng)
            out.append(_Plain(ConcaveOfModular(b.A, b.w, b.m + a.m, b.c)) if n % 2 else
                       _Plain(a))
    return out


def _scale(f: SetFunction) -> float:
    _, vals = all_values(f)
    return max(1.0, float(np.abs(vals - vals[0]).max()))


def _mask(S: frozenset[int], n: int) -> np.ndarray:
    m = np.zeros(n, dtype=bool)
    m[list(S)] = True
    return m


# ---- min-norm point ---------------------------------------------------------------------------


def test_min_norm_point_equals_brute_force_with_valid_certificate():
    worst_value, worst_gap, nontrivial = 0.0, 0.0, 0
    for f in _instances(seed=0, count=150):
        lo, minimizers = brute_force_minimum(f)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # an uncertified stop would warn
            res = minimize(f, method="min-norm-point")
        scale = _scale(f)
        assert isinstance(res, MinimizeResult) and res.method == "min-norm-point"
        worst_value = max(worst_value, abs(res.value - lo) / scale)
        worst_gap = max(worst_gap, res.certificate_gap / scale)
        assert res.value == pytest.approx(f._value(_mask(res.set, f.n)), abs=1e-10 * scale)
        assert any((m == _mask(res.set, f.n)).all() for m in minimizers)
        # The certificate is a true lower bound: f(empty) + x^-(V) <= min f <= value.
        f0 = f._value(np.zeros(f.n, dtype=bool))
        assert f0 + np.minimum(res.x, 0).sum() <= lo + 1e-10 * scale
        assert res.value - (f0 + np.minimum(res.x, 0).sum()) <= res.certificate_gap + 1e-12
        nontrivial += 0 < len(res.set) < f.n
    assert worst_value <= 1e-9
    assert worst_gap <= TOL
    assert nontrivial >= 50  # the modular terms make most minimizers proper non-empty subsets


def _greedy_vertex_min(f: SetFunction, x: np.ndarray, f0: float) -> np.ndarray:
    """Edmonds' greedy vertex of B(f - f(empty)) minimising x.q (increasing order of x)."""
    chain = np.zeros(f.n, dtype=bool)
    q = np.empty(f.n)
    prev = 0.0
    for e in np.argsort(x, kind="stable"):
        chain[e] = True
        cur = f._value(chain) - f0
        q[e] = cur - prev
        prev = cur
    return q


@pytest.mark.parametrize("exact_point", [False, True])
def test_min_norm_point_x_lies_in_the_base_polytope(exact_point):
    wolfe = []
    for f in _instances(seed=1, count=40, n_max=8):
        res = minimize(f, method="min-norm-point", exact_point=exact_point)
        masks, vals = all_values(f)
        fp = vals - vals[0]
        x = res.x
        scale = _scale(f)
        # x is in B(f - f(empty)): x(S) <= f'(S) for all S, with equality at V.
        assert (masks @ x <= fp + 1e-9 * scale).all()
        assert x.sum() == pytest.approx(fp[-1], abs=1e-9 * scale)
        # Wolfe's optimality condition min_{q in B} x.q >= |x|^2 (relative shortfall recorded).
        q = _greedy_vertex_min(f, x, vals[0])
        wolfe.append((x @ x - x @ q) / scale**2)
    if exact_point:
        # |x - x*|^2 <= |x|^2 - min_q x.q: x is the min-norm point to rounding.
        assert max(wolfe) <= 1e-12
    else:
        # Stopping at the certificate can leave x short of x* on some instances.
        assert max(wolfe) > 1e-12


def test_exact_point_gives_the_same_minimum_with_more_cycles():
    more = 0
    for f in _instances(seed=17, count=30, n_max=10):
        a = minimize(f, method="min-norm-point")
        b = minimize(f, method="min-norm-point", exact_point=True)
        assert b.value == pytest.approx(a.value, abs=1e-9 * _scale(f))
        assert b.certificate_gap <= TOL * _scale(f)
        assert b.iterations >= a.iterations
        more += b.iterations > a.iterations
    assert more > 0


def test_min_norm_point_on_larger_instances_matches_maxflow():
    rng = np.random.default_rng(2)
    for directed in (False, True):
        for _ in range(3):
            f = random_cut_plus_modular(40, rng, directed=directed, density=0.15)
            res = minimize(f, method="min-norm-point")
            ref = minimize_cut_plus_modular(f.W, f.m, directed=directed)
            assert res.value == pytest.approx(ref.value + f.c, abs=1e-9)
            assert res.certificate_gap <= TOL * np.abs(f.W).sum()


def _family_instances(seed: int, count: int):
    """Library families (with their own incremental states) minus modular costs."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(count):
        n = int(rng.integers(2, 9))
        kind = i % 3
        if kind == 0:
            g = FacilityLocation(rng.random((6, n)))
        elif kind == 1:
            g = Coverage((rng.random((n, 7)) < 0.4).astype(float), weights=rng.random(7))
        else:
            g = FeatureBased(rng.random((n, 3)) * (rng.random((n, 3)) < 0.7))
        out.append(g + Modular(-rng.uniform(0.0, 0.8, n)))
    return out


def test_families_min_norm_point_and_brute_force_against_enumeration():
    for f in _family_instances(seed=24, count=24):
        lo, _ = brute_force_minimum(f)
        res = minimize(f, method="min-norm-point")
        assert res.value == pytest.approx(lo, abs=1e-9)
        assert res.certificate_gap <= TOL * _scale(f)
        f.reset_evaluations()
        bf = minimize(f, method="brute-force")  # walks the families' states depth first
        assert bf.value == pytest.approx(lo, abs=1e-9)
        assert bf.evaluations == 2**f.n == f.evaluations


def test_min_norm_point_evaluation_count():
    f = random_concave_minus_modular(9, np.random.default_rng(3))
    f.reset_evaluations()
    res = minimize(f, method="min-norm-point")
    # f(empty), the starting vertex, then one greedy vertex (n values) per major cycle plus the
    # final one that certifies.
    assert res.evaluations == 1 + f.n * (res.iterations + 2)
    assert f.evaluations == res.evaluations
    assert res.iterations >= 1


def test_min_norm_point_warns_when_stopped_early_and_reports_an_honest_gap():
    f = random_cut_plus_modular(30, np.random.default_rng(4), density=0.3)
    with pytest.warns(RuntimeWarning, match="certificate gap"):
        res = minimize(f, method="min-norm-point", max_iter=1)
    ref = minimize_cut_plus_modular(f.W, f.m)
    assert res.certificate_gap > TOL
    assert res.value - (ref.value + f.c) <= res.certificate_gap + 1e-9


def test_min_norm_point_edge_cases():
    # A constant function: every set is a minimizer; the empty set comes back certified.
    f = CutPlusModular(np.zeros((3, 3)), np.zeros(3), c=2.5)
    res = minimize(f, method="min-norm-point")
    assert res.value == 2.5 and res.certificate_gap <= TOL
    # One element, negative weight.
    res = minimize(CutPlusModular(np.zeros((1, 1)), [-1.0]), method="min-norm-point")
    assert res.set == frozenset({0}) and res.value == -1.0


# ---- max-flow ---------------------------------------------------------------------------------


@pytest.mark.parametrize("directed", [False, True])
def test_maxflow_equals_brute_force(directed):
    rng = np.random.default_rng(5 + directed)
    worst = 0.0
    for i in range(60):
        n = int(rng.integers(1, 10))
        f = random_cut_plus_modular(n, rng, directed=directed, integer=i % 2 == 0,
                                    density=float(rng.uniform(0.1, 0.8)))
        lo, minimizers = brute_force_minimum(f)
        W = sp.csr_array(f.W) if i % 3 == 0 else f.W
        res = minimize_cut_plus_modular(W, f.m, directed=directed)
        worst = max(worst, abs(res.value + f.c - lo))
        assert res.method == "maxflow" and res.evaluations == 0 and res.x is None
        assert abs(res.certificate_gap) <= 1e-9
        S = _mask(res.set, n)
        assert res.value + f.c == pytest.approx(f._value(S), abs=1e-12)
        # The source side of the cut from the residual network is the smallest minimizer.
        assert all((S <= m).all() for m in minimizers)
    assert worst <= 1e-9


def test_maxflow_docstring_instance_and_modular_only():
    res = minimize_cut_plus_modular(np.zeros((4, 4)), [1.0, -2.0, 0.0, -0.5])
    assert res.set == frozenset({1, 3}) and res.value == -2.5
    res = minimize_cut_plus_modular(np.ones((3, 3)) - np.eye(3))  # m omitted: empty set, 0
    assert res.set == frozenset() and res.value == 0.0


@pytest.mark.parametrize("directed", [False, True])
def test_graph_cut_family_goes_to_maxflow(directed):
    rng = np.random.default_rng(20 + directed)
    for i in range(15):
        n = int(rng.integers(2, 10))
        ref = random_cut_plus_modular(n, rng, directed=directed)
        scale = float(rng.uniform(0.5, 2.0))
        f = scale * GraphCut(ref.W, directed=directed) + Modular(ref.m)
        if i % 3 == 0:  # nested combinators and a second modular term
            f = Sum([GraphCut(ref.W, directed=directed), Modular(ref.m / 2)],
                    weights=[scale, 1.0]) + Modular(ref.m / 2)
        lo, _ = brute_force_minimum(f)
        f.reset_evaluations()
        res = minimize(f)
        assert res.method == "maxflow"
        assert res.value == pytest.approx(lo, abs=1e-9)
        assert abs(res.certificate_gap) <= 1e-9
        assert res.evaluations == 1 == f.evaluations  # f at the returned set
        other = minimize(f, method="min-norm-point")
        assert other.value == pytest.approx(lo, abs=1e-9)


def test_sum_with_a_non_cut_part_is_not_sent_to_maxflow():
    ref = random_cut_plus_modular(5, np.random.default_rng(22))
    cut = GraphCut(ref.W)
    # A Sum with a non-cut part is not a graph cut: auto goes elsewhere, maxflow refuses.
    f = cut + random_concave_minus_modular(5, np.random.default_rng(23))
    assert minimize(f).method == "brute-force"
    with pytest.raises(ValidationError, match="graph cut"):
        minimize(f, method="maxflow")


def test_maxflow_method_needs_a_graph_cut():
    f = random_concave_minus_modular(4, np.random.default_rng(7))
    with pytest.raises(ValidationError, match="minimize_cut_plus_modular"):
        minimize(f, method="maxflow")


def test_maxflow_bad_input():
    with pytest.raises(ValidationError, match="'W'.*square"):
        minimize_cut_plus_modular(np.ones((2, 3)))
    with pytest.raises(ValidationError, match="'W'.*non-negative"):
        minimize_cut_plus_modular(-np.ones((2, 2)))
    with pytest.raises(ValidationError, match="'W'.*symmetric"):
        minimize_cut_plus_modular(np.array([[0.0, 1.0], [0.0, 0.0]]))
    with pytest.raises(ValidationError, match="'m'"):
        minimize_cut_plus_modular(np.zeros((2, 2)), [1.0, 2.0, 3.0])
    with pytest.raises(ValidationError, match="'W'"):
        minimize_cut_plus_modular(np.array([[0.0, np.nan], [np.nan, 0.0]]))
    with pytest.raises(ParameterTypeError, match="'directed'"):
        minimize_cut_plus_modular(np.zeros((2, 2)), directed="yes")


# ---- brute force and auto ----------------------------------------------------------------------


def test_brute_force_both_paths_and_counts():
    rng = np.random.default_rng(8)
    for i in range(30):
        n = int(rng.integers(1, 9))
        g = random_cut_plus_modular(n, rng, directed=i % 2 == 1)
        lo, _ = brute_force_minimum(g)
        for f in (g, _Plain(g)):  # the family-state path and the per-mask path
            f.reset_evaluations()
            res = minimize(f, method="brute-force")
            assert res.value == pytest.approx(lo, abs=1e-10)
            assert res.value == pytest.approx(g._value(_mask(res.set, n)), abs=1e-10)
            assert res.evaluations == 2**n == f.evaluations
            assert res.certificate_gap == 0.0 and res.method == "brute-force"


def test_brute_force_minimizes_non_submodular_functions():
    rng = np.random.default_rng(9)
    for _ in range(10):
        f = TableFunction(rng.normal(size=1 << 6))
        res = minimize(f)  # auto: brute force, since f declares submodular = False
        assert res.method == "brute-force"
        assert res.value == f.table.min()


def test_auto_method_choice():
    rng = np.random.default_rng(10)
    assert minimize(random_cut_plus_modular(5, rng)).method == "brute-force"
    assert minimize(random_cut_plus_modular(14, rng)).method == "min-norm-point"
    big = TableFunction(rng.normal(size=1 << 13))
    assert minimize(big).method == "brute-force"


# ---- bad input --------------------------------------------------------------------------------


def test_bad_input():
    f = random_cut_plus_modular(4, np.random.default_rng(11))
    with pytest.raises(ParameterTypeError, match="'f'"):
        minimize(lambda S: 0.0)
    with pytest.raises(ValidationError) as err:
        minimize(f, method="wolfe")
    for name in MINIMIZE_METHODS:
        assert repr(name) in str(err.value)
    with pytest.raises(ParameterTypeError, match="'method'"):
        minimize(f, method=3)
    with pytest.raises(ValidationError, match="'tol'"):
        minimize(f, tol=0.0)
    with pytest.raises(ValidationError, match="'max_iter'"):
        minimize(f, max_iter=0)
    with pytest.raises(ParameterTypeError, match="'exact_point'"):
        minimize(f, exact_point="yes")
    with pytest.raises(ValidationError, match="submodular = False"):
        minimize(TableFunction(np.zeros(8)), method="min-norm-point")

    class Big(SetFunction):
        def _value(self, mask):
            return 0.0

    with pytest.raises(ValidationError, match="n <= 20"):
        minimize(Big(21), method="brute-force")

    class BigNonSubmodular(Big):
        submodular = False

    with pytest.raises(ValidationError, match="brute-force"):
        minimize(BigNonSubmodular(21))


class _NaNAbove(SetFunction):
    """Submodular-declared, NaN on sets of more than ``m`` elements (a broken user objective)."""

    def __init__(self, n: int, m: int):
        super().__init__(n)
        self.m = m

    def _value(self, mask: np.ndarray) -> float:
        k = int(mask.sum())
        return float("nan") if k > self.m else float(np.sqrt(k) - 0.6 * k)


@pytest.mark.parametrize("method", ["brute-force", "min-norm-point"])
@pytest.mark.parametrize("m", [0, 2])
def test_an_objective_returning_nan_is_refused_by_every_method(method, m):
    with pytest.raises(NonFiniteObjectiveError, match="'f'"):
        minimize(_NaNAbove(5, m), method=method)


def test_a_facility_location_without_similarities_is_minimized_at_zero():
    f = FacilityLocation(sp.csr_array((3, 4)))
    for method in ("min-norm-point", "brute-force"):
        assert minimize(f, method=method).value == 0.0
