"""The best fixed set in hindsight against brute force."""

from __future__ import annotations

import numpy as np
import pytest

from dpsubmod.constraints import UniformMatroid
from dpsubmod.errors import ParameterTypeError, ValidationError
from dpsubmod.functions import FeatureBased, GraphCut, Modular, Scaled, Sum
from dpsubmod.online import FunctionStream, Hindsight, best_fixed_set
from dpsubmod.online.comparators import (
    RunningSum,
    hindsight_max,
    hindsight_min,
    set_values,
    total_values,
)
from oracles import (
    all_masks,
    all_values,
    brute_force_max,
    random_concave_minus_modular,
    random_cut_plus_modular,
)


def _random_stream(n, T, seed):
    rng = np.random.default_rng(seed)
    return [random_cut_plus_modular(n, rng) if t % 2 else random_concave_minus_modular(n, rng)
            for t in range(T)]


def _brute_min(fs):
    total = sum(all_values(f)[1] for f in fs)
    return float(total.min()), total


@pytest.mark.parametrize("seed", range(4))
def test_min_enumeration_matches_brute_force(seed):
    fs = _random_stream(5, 9, seed)
    h = hindsight_min(fs)
    best, total = _brute_min(fs)
    assert h.method == "enumerate" and h.exact and h.sense == "min"
    assert h.value == pytest.approx(best, abs=1e-9)
    mask = np.zeros(5, dtype=bool)
    mask[list(h.selection)] = True
    assert sum(f._value(mask) for f in fs) == pytest.approx(best, abs=1e-9)


@pytest.mark.parametrize("seed", range(3))
def test_exact_minimizer_path_matches_enumeration(seed):
    fs = _random_stream(7, 5, seed)
    mnp = hindsight_min(fs, method="min-norm-point")
    assert mnp.method == "min-norm-point" and mnp.certificate_gap < 1e-6
    assert mnp.value == pytest.approx(_brute_min(fs)[0], abs=1e-7)


def test_maxflow_path_for_cut_plus_modular_streams():
    rng = np.random.default_rng(5)
    fs = []
    for _ in range(6):
        W = np.triu(rng.random((8, 8)) * (rng.random((8, 8)) < 0.5), 1)
        fs.append(Sum([GraphCut(W + W.T), Modular(rng.normal(scale=1.5, size=8))]))
    h = hindsight_min(fs, method="maxflow")
    assert h.method == "maxflow"
    assert h.value == pytest.approx(_brute_min(fs)[0], abs=1e-9)


def test_vectorised_values_match_the_scalar_path():
    rng = np.random.default_rng(2)
    W = np.triu(rng.random((6, 6)), 1)
    f = Sum([GraphCut(W + W.T), Modular(rng.normal(size=6)),
             Scaled(FeatureBased(rng.random((6, 3))), 0.7)])
    masks = all_masks(6)
    np.testing.assert_allclose(set_values(f, masks), all_values(f)[1], atol=1e-12)
    # Repeated objects count with their multiplicity.
    g = Modular(rng.normal(size=6))
    np.testing.assert_allclose(total_values([f, g, f, f], masks),
                               3 * all_values(f)[1] + all_values(g)[1], atol=1e-12)


@pytest.mark.parametrize("k", [1, 2, 4])
def test_max_brute_force_and_greedy(k):
    rng = np.random.default_rng(k)
    fs = [FeatureBased(rng.random((6, 4))) for _ in range(5)]
    total = Sum(fs)
    best, _ = brute_force_max(total, UniformMatroid(6, k))
    h = hindsight_max(fs, k)
    assert h.exact and h.method == "brute-force" and h.value == pytest.approx(best)
    assert len(h.selection) <= k
    assert hindsight_max(fs, UniformMatroid(6, k)).value == pytest.approx(best)
    g = hindsight_max(fs, k, method="greedy")
    assert not g.exact and g.value >= (1 - 1 / np.e) * best - 1e-9
    assert best_fixed_set(fs, sense="max", constraint=k).value == pytest.approx(best)


def test_comparator_errors():
    fs = [Modular([1.0, -1.0])]
    with pytest.raises(ValidationError, match="'method'"):
        hindsight_min(fs, method="greedy")
    with pytest.raises(ValidationError, match="constraint"):
        best_fixed_set(fs, sense="max")
    with pytest.raises(ValidationError, match="constrained minimization"):
        best_fixed_set(fs, sense="min", constraint=1)
    with pytest.raises(ValidationError, match="'sense'"):
        best_fixed_set(fs, sense="argmin")
    with pytest.raises(ParameterTypeError, match="constraint"):
        hindsight_max(fs, "one")
    h = best_fixed_set(FunctionStream(fs))
    assert isinstance(h, Hindsight) and h.selection == (1,) and h.value == -1.0


def test_running_sum_is_the_sum_and_stays_compact():
    # Fresh cut-plus-modular functions fold into one cut and one modular vector; a part shared
    # by every round (one FeatureBased object) is kept once with its summed coefficient.
    rng = np.random.default_rng(8)
    n, T = 6, 40
    card = FeatureBased(np.ones((n, 1)))
    refs = [random_cut_plus_modular(n, rng) for _ in range(T)]
    fs = [Sum([GraphCut(r.W), Modular(r.m), Scaled(card, 0.3)]) for r in refs]
    acc = RunningSum(n)
    for f in fs:
        acc.add(f)
    assert acc.rounds == T and acc.distinct == 1
    masks = all_masks(n)
    expected = sum(f.values(masks) for f in fs)
    np.testing.assert_allclose(acc.function().values(masks), expected, rtol=1e-12, atol=1e-12)
    # the comparator of a generator reads it once and keeps the compact sum only
    h = hindsight_min(iter(fs))
    assert h.value == pytest.approx(float(expected.min()), abs=1e-9)


def test_running_sum_refuses_more_distinct_functions_than_its_bound():
    rng = np.random.default_rng(0)
    acc = RunningSum(3, max_distinct=2)
    for _ in range(2):
        acc.add(FeatureBased(rng.random((3, 2))))
    acc.add(Modular([1.0, 2.0, 3.0]))  # folds into the modular vector
    with pytest.raises(ValidationError, match="max_distinct=2"):
        acc.add(FeatureBased(rng.random((3, 2))))
