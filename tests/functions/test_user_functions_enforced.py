"""A user's concave function g in FeatureBased.from_chunks is enforced, not trusted: g is read
on a public grid (checked, never called on a record) and each record's term is clipped to
[0, cap] from both sides, so the declared sensitivity cap / N holds on neighbouring data sets
whatever g does. Each check has a control: the evaluation this replaces breaks it."""

from __future__ import annotations

import itertools
import pickle

import numpy as np
import pytest

from dpsubmod.errors import ValidationError
from dpsubmod.functions import FeatureBased
from dpsubmod.functions.records import kernels
from dpsubmod.functions.records.families import GRID_POINTS, feature_based_from_chunks

N_ITEMS = 3
SUBSETS = [list(S) for r in range(N_ITEMS + 1) for S in itertools.combinations(range(N_ITEMS), r)]
# Eight records whose sums stay small; the neighbour replaces the first by the largest record.
D = np.random.default_rng(0).uniform(0.10, 0.16, (8, N_ITEMS))
D_NEIGHBOUR = D.copy()
D_NEIGHBOUR[0] = 1.0


def looks_across_rows(c):
    """Each term is switched on by the mean of the whole input array (all records' sums)."""
    c = np.asarray(c, dtype=np.float64)
    return np.minimum(c, 1.0) * (c.mean() > 0.5)


def decreasing(c):
    """Concave, g(0) = 0, increasing up to 0.5, then decreasing and negative beyond 1."""
    return c - c ** 2


def sup_diff(build):
    """max over every S of |f_D(S) - f_D'(S)| in units of the declared sensitivity, by value()
    and by a greedy state's gains (the numbers the private mechanisms score)."""
    a, b = build(D), build(D_NEIGHBOUR)
    assert a.sensitivity == b.sensitivity
    worst = max(abs(a.value(S) - b.value(S)) for S in SUBSETS)
    sa, sb = a.state(), b.state()
    for e in range(N_ITEMS):
        ga, gb = sa.gains(), sb.gains()
        worst = max(worst, float(np.max(np.abs((sa.value + ga) - (sb.value + gb)))))
        sa.add(e)
        sb.add(e)
    return worst / a.sensitivity


@pytest.mark.parametrize("chunk_rows", [None, 3])
def test_a_g_that_looks_across_rows_keeps_the_declared_sensitivity(chunk_rows):
    ratio = sup_diff(lambda X: FeatureBased.from_chunks(X, N_ITEMS, looks_across_rows,
                                                        chunk_rows=chunk_rows))
    assert ratio <= 1.0 + 1e-9
    # control: the same g applied to the records' sums, as before (one call on all of them,
    # or on each chunk), makes one record switch every other record's term
    control = sup_diff(lambda X: feature_based_from_chunks(
        X, N_ITEMS, looks_across_rows, trusted=True, chunk_rows=chunk_rows))
    assert control > 1.5  # measured: 3.7 in one pass, 1.8 by chunks of 3


def test_a_decreasing_g_is_refused_on_the_public_grid():
    with pytest.raises(ValidationError, match=r"'concave' callable of FeatureBased.from_chunks "
                                              r"must be nondecreasing on .*\[0, 3\]; it "
                                              r"decreases from g\(0\.5"):
        FeatureBased.from_chunks(D, N_ITEMS, decreasing, cap=0.25)


def test_terms_are_clipped_from_both_sides(monkeypatch):
    # a decreasing g let through (as a built-in would be): the clip from below keeps the range
    def build(X):
        return feature_based_from_chunks(X, N_ITEMS, decreasing, cap=0.25, trusted=True)

    assert sup_diff(build) <= 1.0 + 1e-9

    # control: the term clipped from above only, as before, goes negative (-2 for a sum of 2)
    def one_sided(self, c):
        v = np.minimum(np.asarray(self.g(c), dtype=np.float64), self.s_max)
        return np.floor(v * (kernels.UNITS / self.s_max))

    monkeypatch.setattr(kernels.ConcaveKernel, "term", one_sided)
    assert sup_diff(build) > 10.0  # measured: 24.8


def test_g_never_sees_a_record_and_the_table_is_what_is_used():
    seen = []

    def spy(c):
        seen.append(np.array(c, copy=True))
        return np.sqrt(c)

    f = FeatureBased.from_chunks(D, N_ITEMS, spy, chunk_rows=3)
    f.value([0, 1])
    f.state().gains()
    grid = np.linspace(0.0, N_ITEMS * 1.0, GRID_POINTS)
    assert len(seen) >= 1 and all(np.array_equal(s, grid) or s.shape == (2,) for s in seen)
    assert not any(np.isin(D.ravel(), s).any() for s in seen)
    # the interpolated table is close to g itself, and the kernel travels to a worker whole
    sums = D[:, :2].sum(axis=1)
    want = np.mean(np.sqrt(sums) / np.sqrt(N_ITEMS))
    assert f.value([0, 1]) / f.sensitivity / len(D) == pytest.approx(want, rel=1e-3)
    g2 = pickle.loads(pickle.dumps(f.kernel.g))
    assert np.array_equal(g2(sums), f.kernel.g(sums))


@pytest.mark.parametrize("g, needle", [
    (lambda c: np.where(c > 1.0, np.nan, c), "finite values"),
    (lambda c: c[:2], "finite values of the same shape"),
    (lambda c: np.sin(4.0 * c), "decreases from g(0.392"),
])
def test_bad_callables_are_refused_by_name(g, needle):
    with pytest.raises(ValidationError, match="'concave'") as info:
        FeatureBased.from_chunks(D, N_ITEMS, g)
    assert needle in str(info.value)


def test_a_jump_up_is_nondecreasing_and_stays_within_cap():
    f = FeatureBased.from_chunks(D, N_ITEMS, lambda c: c + (c > 0))
    assert f.sensitivity == pytest.approx((N_ITEMS + 1.0) / len(D))
    assert 0.0 <= f.value(list(range(N_ITEMS))) <= f.sensitivity * len(D)


def test_built_in_names_are_exact():
    X = np.random.default_rng(1).random((50, N_ITEMS))
    f = FeatureBased.from_chunks(X, N_ITEMS, "log1p")
    ref = FeatureBased(X.T, "log1p", weights=np.full(50, 1 / 50))
    for S in SUBSETS[1:]:
        assert f.value(S) == pytest.approx(ref.value(S), rel=1e-6)
