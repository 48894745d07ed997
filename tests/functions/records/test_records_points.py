"""FacilityLocation.from_records without a matrix: the record objective over points in memory
keeps the dense objective's declarations, statement, neighbour and selections; the dense
matrix stays for callables, an explicit dtype and scales float32 cannot hold."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from dpsubmod import maximize
from dpsubmod.datasets import grid_candidates
from dpsubmod.functions import Coverage, FacilityLocation
from dpsubmod.functions.records import RecordObjective
from dpsubmod.functions.records.points import RecordFacilityLocation
from dpsubmod.offline.discrete.private_greedy import greedy_path_distribution
from dpsubmod.privacy import exact_check
from oracles import max_value_change

# ride-like points far from the origin (longitudes near -74): float32 resolves them only to
# about 4e-6, a quarter of a percent of the bandwidth, unless taken relative to the candidates
RNG = np.random.default_rng(21)
CITY = grid_candidates(12, 12, (40.6, 40.9, -74.1, -73.8))
H = 0.3 / 12
RIDES = np.column_stack([RNG.normal(40.75, 0.06, 30_000), RNG.normal(-73.95, 0.06, 30_000)])

KINDS = [("gaussian", {"bandwidth": H}), ("negative_distance", {"radius": 2 * H})]


@pytest.mark.parametrize("kind, kw", KINDS)
def test_built_in_similarities_build_no_matrix_and_keep_the_declarations(kind, kw):
    f = FacilityLocation.from_records(RIDES, CITY, kind, **kw)
    dense = FacilityLocation.from_records(RIDES, CITY, kind, dtype=np.float64, **kw)
    assert isinstance(f, RecordFacilityLocation) and isinstance(f, RecordObjective)
    assert type(dense) is FacilityLocation
    assert f.sensitivity == dense.sensitivity and f.data_model == dense.data_model
    assert f.upper_bound() == dense.upper_bound()
    a = maximize(f, 6, "private_greedy", epsilon=1.0, rng=2, backend="numpy")
    b = maximize(dense, 6, "private_greedy", epsilon=1.0, rng=2, backend="numpy")
    assert f._dense is None  # the run never built the N x n matrix
    assert str(a.privacy) == str(b.privacy)
    assert "neighbouring datasets: FacilityLocation: replace one record;" in str(a.privacy)
    assert a.selection == b.selection
    # within a few rounding units s_max / 2**24 of the float64 values
    s_max = f.kernel.s_max
    for S in ([0], list(a.selection), list(range(0, CITY.shape[0], 5))):
        assert abs(f(S) - dense(S)) <= 4 * s_max / 2**24


def test_similarities_are_the_objectives_own_in_the_order_of_the_points():
    P = RIDES[:300]
    f = FacilityLocation.from_records(P, CITY, bandwidth=H)
    S = f.similarity
    assert S.shape == (300, CITY.shape[0]) and S.dtype == np.float64
    np.testing.assert_allclose(S, FacilityLocation.from_records(
        P, CITY, bandwidth=H, dtype=np.float64).similarity, rtol=0, atol=1e-6)
    for T in ([3], [3, 40, 77]):
        assert f(T) == pytest.approx(float(S[:, T].max(axis=1).mean()), rel=1e-12)
    assert np.array_equal(f.weights, np.full(300, 1 / 300)) and f.n_clients == 300


def test_the_shift_to_the_candidates_centre_is_what_keeps_the_values():
    # the same kernel on unshifted coordinates (from_chunks) is 100 times further off here
    dense = FacilityLocation.from_records(RIDES, CITY, bandwidth=H, dtype=np.float64)
    f = FacilityLocation.from_records(RIDES, CITY, bandwidth=H)
    g = FacilityLocation.from_chunks(RIDES, CITY, bandwidth=H)
    S = list(range(0, CITY.shape[0], 3))
    assert abs(g(S) - dense(S)) > 20 * abs(f(S) - dense(S))


def test_dense_matrix_for_callables_explicit_dtypes_and_extreme_scales():
    P, C = RNG.random((20, 2)), RNG.random((5, 2))
    assert type(FacilityLocation.from_records(P, C, lambda r, c: np.ones(len(c)),
                                              s_max=1.0)) is FacilityLocation
    for dt in (np.float64, np.float32):
        assert type(FacilityLocation.from_records(P, C, bandwidth=0.3, dtype=dt)) \
            is FacilityLocation
    for kw in ({"bandwidth": 1e-300}, {"bandwidth": 1e20},
               {"similarity": "negative_distance", "radius": 1e-20}):
        assert type(FacilityLocation.from_records(P, C, **kw)) is FacilityLocation
    assert type(FacilityLocation.from_records(P * 1e20, C * 1e20, bandwidth=1e19)) \
        is FacilityLocation  # candidates spread beyond 1e15


def test_points_beyond_float32_contribute_nothing_without_warnings():
    C = np.array([[0.0, 0.0], [1.0, 1.0]])
    P = np.array([[1e300, 0.0], [-1e300, 1e300], [0.0, 0.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for kind, kw in (("gaussian", {"bandwidth": 0.5}),
                         ("negative_distance", {"radius": 1.0})):
            f = FacilityLocation.from_records(P, C, kind, **kw)
            assert isinstance(f, RecordFacilityLocation)
            assert np.array_equal(f.similarity[:2], np.zeros((2, 2)))
            assert f([0]) == pytest.approx(f.kernel.s_max / 3, rel=1e-12)


def test_neighbour_replaces_one_row_of_the_points_and_the_bound_holds_exactly():
    rng = np.random.default_rng(5)
    C = np.array([[0.0, 0.0], [0.4, 0.1], [0.9, 0.6], [0.2, 0.8]])
    f = FacilityLocation.from_records(rng.random((7, 2)), C, bandwidth=0.3)
    assert isinstance(f, RecordFacilityLocation)
    # the same draws as the dense objective's neighbour
    dense = FacilityLocation.from_records(f._points, C, bandwidth=0.3, dtype=np.float64)
    np.testing.assert_array_equal(f.neighbour(9)._points, dense.neighbour(9)._points)
    nbrs = [f.neighbour(s) for s in range(10)]
    nbrs += [f.neighbour(index=i, point=C[j]) for i in range(7) for j in range(4)]
    nbrs += [f.neighbour(index=i, record=[50.0, 50.0]) for i in range(7)]
    for g in nbrs:
        assert np.flatnonzero((g._points != f._points).any(axis=1)).size <= 1
    worst = max(max_value_change(f, g) for g in nbrs)
    assert 0.5 * f.sensitivity <= worst <= f.sensitivity * (1 + 1e-12)
    eps, k = 1.0, 2

    def law(h):
        return greedy_path_distribution(h, k, weight=(eps / k) / (2 * h.sensitivity))

    for g in nbrs[::7]:
        assert exact_check(law, f, g, epsilon=eps).passed


def test_neighbour_refuses_two_replacements():
    f = FacilityLocation.from_records(np.zeros((3, 2)), np.ones((2, 2)), bandwidth=1.0)
    with pytest.raises(Exception, match="'point' or 'record'"):
        f.neighbour(0, point=[0.0, 0.0], record=[1.0, 1.0])


@pytest.mark.parametrize("make", [
    lambda: FacilityLocation.from_records(RIDES[:2000], CITY, bandwidth=H),
    lambda: FacilityLocation.from_records(RIDES[:2000], RNG.random((30, 2)) * 0.3
                                          + [40.6, -74.1], "negative_distance", radius=0.05),
    lambda: FacilityLocation.from_chunks(RIDES[:2000], CITY, bandwidth=H, chunk_rows=300),
    lambda: Coverage.from_chunks((RNG.random((500, 40)) < 0.1).astype(float), 40),
])
def test_values_of_a_few_columns_equal_the_full_blocks_bit_for_bit(make):
    f = make()
    X = np.concatenate(list(f.blocks.source()))
    full = f.kernel.block(X)
    for S in ([0], [3, 17], [1, 2, 5, 8, 13, 21], list(range(0, f.n, 2))):
        expect = float(full[:, S].max(axis=1).sum(dtype=np.float64)) * f.weight
        assert f.value(S) == expect
