"""Lovász extension, chain subgradient and threshold rounding."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpsubmod.errors import DPSubmodError, ParameterTypeError, ValidationError
from dpsubmod.extensions import lovasz_subgradient, lovasz_value, threshold_round
from dpsubmod.extensions.lovasz import _threshold_set
from dpsubmod.functions import Coverage, FacilityLocation, FeatureBased, GraphCut, Modular

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from oracles import (  # noqa: E402
    CutPlusModular,
    TableFunction,
    all_masks,
    is_submodular,
    random_concave_minus_modular,
    random_cut_plus_modular,
)


def _submodular_instances(seed: int = 0, count: int = 12, n: int = 6):
    rng = np.random.default_rng(seed)
    out = []
    for i in range(count):
        kind = i % 3
        if kind == 0:
            out.append(random_cut_plus_modular(n, rng))
        elif kind == 1:
            out.append(random_cut_plus_modular(n, rng, directed=True))
        else:
            out.append(random_concave_minus_modular(n, rng))
    return out


def _exact_expectation(f, x: np.ndarray) -> float:
    """E_U f({e : x_e >= U}) with U ~ U(0, 1], integrated exactly over the breakpoints of x."""
    br = np.unique(np.concatenate(([0.0, 1.0], x)))
    total = 0.0
    for a, b in zip(br[:-1], br[1:]):
        # The rounded set is constant for U in (a, b]; evaluate it at the midpoint.
        total += (b - a) * f._value(_threshold_set(x, 0.5 * (a + b)))
    return total


def _random_tied_point(rng: np.random.Generator, n: int) -> np.ndarray:
    """A point of the cube with ties and exact 0/1 coordinates."""
    levels = np.array([0.0, 0.25, 0.5, 1.0, rng.random()])
    return levels[rng.integers(0, levels.size, n)]


# ---- agreement with f and the closed forms --------------------------------------------------


def test_equals_f_on_indicator_vectors():
    for f in [*_submodular_instances(), TableFunction(np.random.default_rng(1).normal(size=64))]:
        for mask in all_masks(f.n):
            x = mask.astype(float)
            assert lovasz_value(f, x) == pytest.approx(f._value(mask), abs=1e-12)
            v, _ = lovasz_subgradient(f, x)
            assert v == pytest.approx(f._value(mask), abs=1e-12)


def test_value_equals_exact_expectation_of_threshold_rounding():
    rng = np.random.default_rng(2)
    for f in _submodular_instances(seed=3):
        for _ in range(10):
            x = rng.random(f.n) if rng.random() < 0.5 else _random_tied_point(rng, f.n)
            assert lovasz_value(f, x) == pytest.approx(_exact_expectation(f, x), abs=1e-10)


def test_value_and_subgradient_agree_with_closed_form():
    rng = np.random.default_rng(4)
    for f in _submodular_instances(seed=5):
        f0 = f._value(np.zeros(f.n, dtype=bool))
        for _ in range(10):
            x = rng.random(f.n)
            v, g = lovasz_subgradient(f, x)
            assert v == pytest.approx(lovasz_value(f, x), abs=1e-12)
            assert v == pytest.approx(f0 + g @ x, abs=1e-10)
            # g is the chain vector: g[order[k]] = f(B_k) - f(B_{k-1}).
            order = np.argsort(-x, kind="stable")
            mask = np.zeros(f.n, dtype=bool)
            prev = f0
            for e in order:
                mask[e] = True
                cur = f._value(mask)
                assert g[e] == pytest.approx(cur - prev, abs=1e-10)
                prev = cur


def test_families_with_their_own_states():
    """The chain walked through a family's incremental state matches direct evaluation."""
    rng = np.random.default_rng(17)
    n = 7
    fams = [
        FacilityLocation(rng.random((5, n))),
        Coverage((rng.random((n, 6)) < 0.4).astype(float), weights=rng.random(6)),
        FeatureBased(rng.random((n, 3))),
        GraphCut(random_cut_plus_modular(n, rng, directed=True).W, directed=True),
        FacilityLocation(rng.random((5, n))) + Modular(rng.normal(size=n)),
    ]
    for f in fams:
        for _ in range(10):
            x = rng.random(n) if rng.random() < 0.5 else _random_tied_point(rng, n)
            v, g = lovasz_subgradient(f, x)
            order = np.argsort(-x, kind="stable")
            masks = np.zeros((n + 1, n), dtype=bool)
            for k in range(1, n + 1):
                masks[k, order[:k]] = True
            vals = np.array([f._value(m) for m in masks])
            np.testing.assert_allclose(g[order], np.diff(vals), atol=1e-10)
            assert v == pytest.approx(_exact_expectation(f, x), abs=1e-10)
            y = rng.random(n)
            assert lovasz_value(f, y) >= v + g @ (y - x) - 1e-10


def test_modular_function_is_linear():
    rng = np.random.default_rng(6)
    w = rng.normal(size=5)
    W = np.zeros((5, 5))
    f = CutPlusModular(W, w, c=0.7)
    x = rng.random(5)
    v, g = lovasz_subgradient(f, x)
    assert v == pytest.approx(0.7 + w @ x)
    np.testing.assert_allclose(g, w, atol=1e-12)


# ---- convexity exactly for submodular f -----------------------------------------------------


def test_convex_for_submodular_functions():
    rng = np.random.default_rng(7)
    worst = -np.inf
    for f in _submodular_instances(seed=8):
        assert is_submodular(f)
        for _ in range(40):
            x, y = rng.random(f.n), rng.random(f.n)
            t = rng.random()
            lhs = lovasz_value(f, t * x + (1 - t) * y)
            rhs = t * lovasz_value(f, x) + (1 - t) * lovasz_value(f, y)
            mid = lovasz_value(f, 0.5 * (x + y))
            half = 0.5 * (lovasz_value(f, x) + lovasz_value(f, y))
            worst = max(worst, lhs - rhs, mid - half)
    assert worst <= 1e-10


def test_not_convex_for_non_submodular_function():
    """A violation of f(S+i) + f(S+j) >= f(S) + f(S+i+j) is a midpoint-convexity violation."""
    rng = np.random.default_rng(9)
    found = 0
    for _ in range(5):
        f = TableFunction(rng.normal(size=1 << 5))
        assert not is_submodular(f)
        n = f.n
        violation = -np.inf
        for mask in all_masks(n):
            out = np.flatnonzero(~mask)
            for a in range(out.size):
                for b in range(a + 1, out.size):
                    x, y = mask.astype(float), mask.astype(float)
                    x[out[a]] = 1.0
                    y[out[b]] = 1.0
                    gap = lovasz_value(f, 0.5 * (x + y)) - 0.5 * (lovasz_value(f, x)
                                                                + lovasz_value(f, y))
                    violation = max(violation, gap)
        found += violation > 1e-9
    assert found == 5


def test_supermodular_example_violates_convexity():
    f = TableFunction(np.array([0.0, 1.0, 1.0, 4.0]))  # |S|^2 on two elements
    mid = lovasz_value(f, [0.5, 0.5])
    assert mid == pytest.approx(2.0)
    assert mid > 0.5 * (lovasz_value(f, [1.0, 0.0]) + lovasz_value(f, [0.0, 1.0]))


# ---- subgradient inequality and ties ---------------------------------------------------------


def test_subgradient_inequality():
    rng = np.random.default_rng(10)
    worst = -np.inf
    for f in _submodular_instances(seed=11):
        for _ in range(30):
            x = rng.random(f.n) if rng.random() < 0.5 else _random_tied_point(rng, f.n)
            y = rng.random(f.n)
            v, g = lovasz_subgradient(f, x)
            worst = max(worst, v + g @ (y - x) - lovasz_value(f, y))
    assert worst <= 1e-10


def test_ties_are_broken_by_index_and_every_tie_order_is_a_subgradient():
    rng = np.random.default_rng(12)
    for f in _submodular_instances(seed=13, count=6):
        n = f.n
        x = np.array([0.5, 0.2, 0.5, 0.5, 0.2, 0.9])[:n]
        v, g = lovasz_subgradient(f, x)
        # Index order within ties: 5, then 0, 2, 3, then 1, 4.
        order = [5, 0, 2, 3, 1, 4]
        mask = np.zeros(n, dtype=bool)
        prev = f._value(mask)
        for e in order:
            mask[e] = True
            assert g[e] == pytest.approx(f._value(mask) - prev, abs=1e-10)
            prev = f._value(mask)
        # Any other order of the tied coordinates gives a vertex that is also a subgradient, and
        # the same value.
        for perm_order in ([5, 3, 2, 0, 4, 1], [5, 2, 0, 3, 4, 1]):
            mask[:] = False
            prev = f._value(mask)
            h = np.empty(n)
            for e in perm_order:
                mask[e] = True
                h[e] = f._value(mask) - prev
                prev = f._value(mask)
            assert f._value(np.zeros(n, dtype=bool)) + h @ x == pytest.approx(v, abs=1e-10)
            for _ in range(30):
                y = rng.random(n)
                assert lovasz_value(f, y) >= v + h @ (y - x) - 1e-10
        # Deterministic: the same call twice gives the same vector.
        np.testing.assert_array_equal(lovasz_subgradient(f, x)[1], g)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from([0.0, 0.3, 0.3, 0.7, 1.0]), min_size=5, max_size=5),
       st.permutations(range(5)))
def test_value_does_not_depend_on_labels_with_ties(levels, perm):
    """Relabelling the ground set changes how ties are ordered but not the value."""
    rng = np.random.default_rng(14)
    table = rng.normal(size=32)
    f = TableFunction(table)
    perm = np.asarray(perm)
    # g(S) = f(perm(S)), so g_L(x) = f_L(y) with y[perm] = x.
    codes = np.arange(32)
    masks = ((codes[:, None] >> np.arange(5)) & 1).astype(bool)
    g_table = np.empty(32)
    for c, m in zip(codes, masks):
        image = np.zeros(5, dtype=bool)
        image[perm[m]] = True
        g_table[c] = table[int((1 << np.arange(5))[image].sum())]
    g = TableFunction(g_table)
    x = np.asarray(levels)
    y = np.empty(5)
    y[perm] = x
    assert lovasz_value(g, x) == pytest.approx(lovasz_value(f, y), abs=1e-12)


# ---- evaluation counting ----------------------------------------------------------------------


def test_evaluation_counts():
    f = _submodular_instances(count=1)[0]
    x = np.array([0.0, 0.3, 0.0, 1.0, 0.5, 0.0])
    f.reset_evaluations()
    lovasz_subgradient(f, x)
    assert f.evaluations == f.n + 1
    f.reset_evaluations()
    lovasz_value(f, x)
    assert f.evaluations == 1 + 3  # the chain stops at the last positive coordinate
    f.reset_evaluations()
    lovasz_value(f, np.zeros(f.n))
    assert f.evaluations == 1


# ---- threshold rounding ----------------------------------------------------------------------


def test_threshold_round_rule_and_seeding():
    x = np.array([0.0, 0.2, 0.5, 0.5, 0.9, 1.0])
    for seed in range(50):
        u = 1.0 - np.random.default_rng(seed).random()
        S = threshold_round(x, rng=seed)
        np.testing.assert_array_equal(S, x >= u)
        assert S.dtype == bool and S[5] and not S[0]
    gen = np.random.default_rng(3)
    a = threshold_round(x, rng=gen)
    b = threshold_round(x, rng=gen)  # the generator's stream continues
    np.testing.assert_array_equal(np.stack([a, b]),
                                  np.stack([x >= 1.0 - r for r in np.random.default_rng(3)
                                            .random(2)]))


def test_threshold_round_is_unbiased_statistically():
    """Sample mean of f(S) within 4.5 standard errors of f_L(x); each of the 7 checks has a
    two-sided false-alarm rate of about 7e-6 under the null (the seed is fixed anyway)."""
    rng = np.random.default_rng(15)
    f = _submodular_instances(seed=16, count=1)[0]
    x = np.array([0.05, 0.3, 0.3, 0.6, 0.95, 0.0])
    draws = 6000
    sets = np.stack([threshold_round(x, rng=rng) for _ in range(draws)])
    vals = np.array([f._value(m) for m in sets])
    se = vals.std(ddof=1) / np.sqrt(draws)
    assert abs(vals.mean() - lovasz_value(f, x)) <= 4.5 * se
    freq = sets.mean(axis=0)
    for e in range(f.n):
        sd = np.sqrt(x[e] * (1 - x[e]) / draws)
        assert abs(freq[e] - x[e]) <= 4.5 * sd + 1e-12
    # One shared threshold: every rounded set is a chain set of x.
    order = np.argsort(-x, kind="stable")
    sizes = sets.sum(axis=1)
    for m, k in zip(sets[:200], sizes[:200]):
        chain = np.zeros(f.n, dtype=bool)
        chain[order[:k]] = True
        np.testing.assert_array_equal(m, chain)


# ---- bad input --------------------------------------------------------------------------------


@pytest.mark.parametrize("fn", [lovasz_value, lovasz_subgradient])
def test_bad_x_is_refused_with_its_name(fn):
    f = _submodular_instances(count=1)[0]
    bads = ([0.5] * 5, np.full(6, 1.5), np.r_[np.full(5, 0.5), -0.1],
            np.r_[np.zeros(5), np.nan], np.zeros((6, 1)))
    for bad in bads:
        with pytest.raises(DPSubmodError, match="'x'"):
            fn(f, bad)
    with pytest.raises(ParameterTypeError, match="'f'"):
        fn(lambda S: 0.0, np.zeros(6))


def test_threshold_round_validates_before_drawing():
    gen = np.random.default_rng(0)
    before = gen.bit_generator.state
    with pytest.raises(ValidationError, match="'x'"):
        threshold_round([0.2, 1.2], rng=gen)
    assert gen.bit_generator.state == before
