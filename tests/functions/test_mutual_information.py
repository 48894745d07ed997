"""MutualInformation: plug-in values, monotone but not submodular, and the replace-one bound."""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np
import pytest

from dpsubmod.errors import DPSubmodError, ParameterTypeError, SensitivityError, ValidationError
from dpsubmod.functions import MutualInformation
from oracles import all_subsets, brute_force_gains, submodularity_violation


def _entropy(rows) -> float:
    counts = np.array(list(Counter(rows).values()), dtype=float)
    p = counts / counts.sum()
    return float(-(p * np.log(p)).sum())


def plug_in_mi(X: np.ndarray, y: np.ndarray, S) -> float:
    """I(X_S; Y) of the empirical distribution, from tuple counts (independent of the class)."""
    if not len(S):
        return 0.0
    xs = [tuple(r) for r in X[:, list(S)]]
    return _entropy(list(y)) + _entropy(xs) - _entropy(list(zip(xs, y)))


def _D(c: int) -> float:
    return 0.0 if c <= 1 else c * np.log(c) - (c - 1) * np.log(c - 1)


def test_values_match_the_empirical_mutual_information():
    rng = np.random.default_rng(0)
    X = rng.integers(0, 3, (40, 5)) * 7 - 3  # arbitrary integer codes
    y = rng.integers(0, 3, 40)
    f = MutualInformation(X, y)
    for S in all_subsets(5):
        assert f(S) == pytest.approx(plug_in_mi(X, y, S), abs=1e-12)


def test_gains_with_many_categories_use_the_sorting_path():
    # Nearly unique codes make the joint code space large, so gains go through np.unique.
    rng = np.random.default_rng(1)
    X = rng.integers(0, 60, (50, 4))
    y = rng.integers(0, 5, 50)
    f = MutualInformation(X, y)
    st = f.state()
    mask = np.zeros(4, dtype=bool)
    for e in (2, 0):
        st.add(e)
        mask[e] = True
    np.testing.assert_allclose(st.gains(), brute_force_gains(f, mask), atol=1e-12)


def test_xor_shows_mutual_information_is_not_submodular():
    X = np.array([[0, 0], [0, 1], [1, 0], [1, 1]])
    y = X[:, 0] ^ X[:, 1]
    f = MutualInformation(X, y)
    assert not f.submodular and f.monotone
    assert f([0]) == 0.0 and f([1]) == 0.0
    assert f([0, 1]) == pytest.approx(np.log(2))
    assert submodularity_violation(f) == pytest.approx(np.log(2))


def test_sensitivity_closed_form_matches_exhaustive_maximisation():
    # B(N) = max D(a) + D(b) - D(c) over 1 <= c <= min(a, b), a + b - c <= N (the derivation's
    # bracket); the closed form relies on concavity of D, checked here by enumeration.
    D = np.array([_D(c) for c in range(61)])
    for N in range(1, 61):
        a, b, c = np.meshgrid(*[np.arange(1, N + 1)] * 3, indexing="ij", sparse=True)
        ok = (c <= np.minimum(a, b)) & (a + b - c <= N)
        best = float(np.where(ok, D[a] + D[b] - D[c], -np.inf).max())
        assert MutualInformation.replace_one_sensitivity(N) == pytest.approx(best / N, rel=1e-12)


def test_sensitivity_is_attained_by_the_extremal_replacement():
    # N = 9: the removed row (0, 0) has n_x = n_y = 5 = (N + 1) / 2 and n_xy = 1; the new row
    # takes values seen nowhere else. The change of I({0}) equals the declared bound.
    X = np.array([[0]] * 5 + [[1]] * 4)
    y = np.array([0, 1, 1, 1, 1, 0, 0, 0, 0])
    f = MutualInformation.from_records(X, y)
    g = f.neighbour(index=0, row=[2], label=2)
    change = abs(f([0]) - g([0]))
    assert change == pytest.approx(f.sensitivity, rel=1e-12)
    # The naive bound (three entropy sensitivities D(N)/N) is looser by about 3/2 here.
    assert 3 * _D(9) / 9 > 1.4 * f.sensitivity


def _all_rows(alphabets):
    return itertools.product(*[range(k + 1) for k in alphabets])  # k is a fresh value


@pytest.mark.parametrize("seed", range(4))
def test_sensitivity_bounds_every_replacement(seed):
    # Exhaustive over the row replaced and the new row (observed values plus a fresh one in
    # every column), and over every S; reports the tightness in the assertion message.
    rng = np.random.default_rng(seed)
    N, n = 7, 2
    X = rng.integers(0, 2, (N, n))
    y = rng.integers(0, 2, N)
    bound = MutualInformation.replace_one_sensitivity(N)
    subsets = list(all_subsets(n))
    base = np.array([plug_in_mi(X, y, S) for S in subsets])
    worst = 0.0
    for i in range(N):
        for row in _all_rows([2] * n):
            for label in range(3):
                X2, y2 = X.copy(), y.copy()
                X2[i], y2[i] = row, label
                new = np.array([plug_in_mi(X2, y2, S) for S in subsets])
                worst = max(worst, float(np.abs(new - base).max()))
    assert worst <= bound * (1 + 1e-12), (worst, bound)
    assert worst >= 0.2 * bound, f"observed/declared = {worst / bound:.3f}"


def test_random_neighbours_respect_the_bound():
    rng = np.random.default_rng(5)
    X = rng.integers(0, 3, (12, 3))
    y = rng.integers(0, 2, 12)
    f = MutualInformation.from_records(X, y)
    worst = 0.0
    for _ in range(60):
        g = f.neighbour(rng)
        worst = max(worst, max(abs(f(S) - g(S)) for S in all_subsets(3)))
    assert worst <= f.sensitivity


def test_from_records_declares_general_model_and_needs_two_rows():
    f = MutualInformation.from_records([[0], [1]], [0, 1])
    assert f.data_model == "general" and f.sensitivity > 0
    with pytest.raises(ValidationError, match="2 records"):
        MutualInformation.from_records([[0]], [0])
    with pytest.raises(SensitivityError):
        MutualInformation([[0], [1]], [0, 1]).neighbour(0)


def test_neighbour_validates_before_drawing():
    f = MutualInformation.from_records([[0, 1], [1, 1], [1, 0]], [0, 1, 0])
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    with pytest.raises(ValidationError, match="'row'"):
        f.neighbour(rng, row=[1, 2, 3])
    with pytest.raises(ValidationError, match="'index'"):
        f.neighbour(rng, index=-1)
    assert rng.bit_generator.state == state


@pytest.mark.parametrize(
    ("call", "exc", "needle"),
    [
        (lambda: MutualInformation([[0.5, 1.0]], [0]), ValidationError, "'X'"),
        (lambda: MutualInformation([[np.nan, 1.0]], [0]), ValidationError, "'X'"),
        (lambda: MutualInformation([0, 1], [0, 1]), ValidationError, "'X'"),
        (lambda: MutualInformation([["a"]], [0]), ParameterTypeError, "'X'"),
        (lambda: MutualInformation([[0], [1]], [0]), ValidationError, "'y'"),
        (lambda: MutualInformation([[0], [1]], [0.5, 1.0]), ValidationError, "'y'"),
    ],
)
def test_bad_input(call, exc, needle):
    with pytest.raises(exc, match=needle) as info:
        call()
    assert isinstance(info.value, DPSubmodError)
