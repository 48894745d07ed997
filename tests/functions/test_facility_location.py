"""FacilityLocation: exact incremental gains, input formats, records and sensitivity."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import scipy.sparse as sp

from dpsubmod.errors import (
    DPSubmodError,
    ParameterTypeError,
    SensitivityError,
    ValidationError,
)
from dpsubmod.functions import FacilityLocation
from oracles import all_values, max_value_change


def _direct_gains(sim: np.ndarray, w: np.ndarray, selected: list[int]) -> np.ndarray:
    """The defining formula sum_i w_i (s_ij - best_i)^+, computed from scratch in float64."""
    s = np.asarray(sim, dtype=np.float64)
    best = s[:, selected].max(axis=1) if selected else np.zeros(s.shape[0])
    g = w @ np.maximum(s - best[:, None], 0.0)
    g[selected] = 0.0
    return g


def _greedy_trace(f: FacilityLocation, steps: int) -> tuple[list[int], list[np.ndarray]]:
    st = f.state()
    gains = []
    for _ in range(steps):
        g = st.gains()
        gains.append(g)
        st.add(int(np.argmax(g)))
    return st.selected, gains


def test_incremental_cache_is_exact_over_a_long_greedy_run():
    # Many steps on a mid-sized instance: the cached gains must not drift from the formula.
    rng = np.random.default_rng(0)
    sim = rng.random((400, 150)) ** 3
    w = rng.random(400)
    f = FacilityLocation(sim, w)
    st = f.state()
    worst = 0.0
    for _ in range(60):
        g = st.gains()
        direct = _direct_gains(sim, w, st.selected)
        worst = max(worst, float(np.abs(g - direct).max()))
        st.add(int(np.argmax(g)))
    assert worst <= 1e-9 * float(w.sum())
    best = sim[:, st.selected].max(axis=1)
    assert st.value == pytest.approx(float(w @ best), rel=1e-12)


@pytest.mark.parametrize("fmt", ["float32", "sparse_csr", "sparse_coo32", "int"])
def test_other_formats_give_the_float64_gains(fmt):
    rng = np.random.default_rng(1)
    sim = rng.random((200, 60)) * (rng.random((200, 60)) < 0.3)
    if fmt == "int":
        sim = np.floor(sim * 10)
        other = sim.astype(np.int32)
    elif fmt == "float32":
        sim = sim.astype(np.float32).astype(np.float64)  # the same numbers in both
        other = sim.astype(np.float32)
    elif fmt == "sparse_csr":
        other = sp.csr_matrix(sim)
    else:
        other = sp.coo_array(sim.astype(np.float32))
        sim = sim.astype(np.float32).astype(np.float64)
    ref_sel, ref_gains = _greedy_trace(FacilityLocation(sim), 25)
    sel, gains = _greedy_trace(FacilityLocation(other), 25)
    assert sel == ref_sel
    # The block arithmetic is float64 for every format, so even float32 storage agrees to
    # float64 round-off (float32 tolerance would be about 1e-6 relative).
    np.testing.assert_allclose(np.array(gains), np.array(ref_gains), rtol=1e-12, atol=1e-12)


def test_float32_matrix_is_kept_without_copy():
    sim = np.random.default_rng(2).random((5, 4)).astype(np.float32)
    f = FacilityLocation(sim)
    assert f.similarity is sim and f.state().best.dtype == np.float32


def test_sparse_missing_entries_mean_zero():
    dense = np.array([[0.0, 2.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    f = FacilityLocation(sp.csr_array(dense))
    assert f([0]) == 1.0 and f([1]) == 2.0 and f([2]) == 0.0 and f([0, 1]) == 3.0
    assert f.marginal_gains([1]).tolist() == [1.0, 0.0, 0.0]


def test_weights_and_average():
    sim = np.array([[1.0, 0.0], [0.0, 3.0]])
    assert FacilityLocation(sim, [2.0, 0.5])([0, 1]) == 3.5
    assert FacilityLocation(sim, [0.5, 0.5])([1]) == 1.5


@pytest.mark.parametrize(
    ("kwargs", "exc", "needle"),
    [
        ({"similarity": [[1.0, np.nan]]}, ValidationError, "'similarity'"),
        ({"similarity": [[1.0, np.inf]]}, ValidationError, "'similarity'"),
        ({"similarity": [[1.0, -0.5]]}, ValidationError, "'similarity'"),
        ({"similarity": sp.csr_array(np.array([[1.0, -0.5]]))}, ValidationError,
         "'similarity'"),
        ({"similarity": sp.csr_array(np.array([[np.nan, 1.0]]))}, ValidationError,
         "'similarity'"),
        ({"similarity": [1.0, 2.0]}, ValidationError, "'similarity'"),
        ({"similarity": np.zeros((0, 3))}, ValidationError, "'similarity'"),
        ({"similarity": [["a", "b"]]}, ParameterTypeError, "'similarity'"),
        ({"similarity": [[1.0, 2.0]], "weights": [1.0, 2.0]}, ValidationError, "'weights'"),
        ({"similarity": [[1.0, 2.0]], "weights": [-1.0]}, ValidationError, "'weights'"),
    ],
)
def test_bad_input_names_the_argument(kwargs, exc, needle):
    with pytest.raises(exc, match=needle) as info:
        FacilityLocation(**kwargs)
    assert isinstance(info.value, DPSubmodError)


# -- records ----------------------------------------------------------------------------------


def _worst_change(f: FacilityLocation, neighbours) -> float:
    return max(max_value_change(f, g) for g in neighbours)


@pytest.mark.parametrize(
    ("kind", "kwargs", "s_max"),
    [
        ("gaussian", {"bandwidth": 0.7}, 1.0),
        ("negative_distance", {"radius": 1.5}, 1.5),
        ("negative_distance", {"radius": 1.5, "dtype": np.float32}, 1.5),
        (lambda P, C: 3.0 - np.abs(P[:, :1] - C[:, 0]), {"s_max": 2.0}, 2.0),
    ],
)
def test_records_sensitivity_bounds_every_replacement(kind, kwargs, s_max):
    rng = np.random.default_rng(3)
    P = rng.normal(size=(8, 2))
    C = rng.normal(size=(6, 2))
    f = FacilityLocation.from_records(P, C, kind, **kwargs)
    N = P.shape[0]
    assert f.sensitivity == pytest.approx(s_max / N, rel=1e-15)
    assert f.data_model == "monotone-records" and f.monotone
    assert float(f.similarity.max()) <= s_max
    # Random replacements, plus extreme ones: onto a candidate (similarity s_max there) and far
    # away (similarity 0 everywhere).
    nbrs = [f.neighbour(rng) for _ in range(40)]
    nbrs += [f.neighbour(index=i, point=C[j]) for i in range(N) for j in range(0, 6, 2)]
    nbrs += [f.neighbour(index=i, point=np.array([50.0, 50.0])) for i in range(N)]
    worst = _worst_change(f, nbrs)
    assert worst <= f.sensitivity * (1 + 1e-12)
    # Not absurdly loose: the extreme replacements come within a factor 2 of the bound.
    assert worst >= 0.5 * f.sensitivity


def test_callable_outputs_are_clipped_into_declared_range():
    P = np.array([[0.0], [1.0]])
    C = np.array([[0.0], [5.0]])
    f = FacilityLocation.from_records(P, C, lambda P, C: 10.0 - (P - C.T) ** 2, s_max=1.0)
    assert f.similarity.min() >= 0.0 and f.similarity.max() == 1.0
    assert f.sensitivity == 0.5


def _rescaled_by_largest_distance(P, C):
    """A similarity that rescales distances by the largest one in the block it is given: on a
    block of several records, one far record would move every other record's row."""
    d = np.sqrt(((P[:, None, :] - C[None, :, :]) ** 2).sum(axis=-1))
    return 1.0 - d / d.max()


_RESCALE_C = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
_FAR = np.array([100.0, 100.0])


def _rescale_points(N: int) -> np.ndarray:
    return np.vstack([[1.0, 1.0], np.zeros((N - 1, 2))])


def test_callable_sees_one_record_at_a_time():
    seen = []

    def sim(P, C):
        seen.append(P.shape)
        with pytest.raises(ValueError):
            P[0, 0] = 1.0  # the record is read-only
        return np.ones((1, len(C)))

    FacilityLocation.from_records(np.zeros((5, 2)), _RESCALE_C, sim, s_max=1.0)
    assert seen == [(1, 2)] * 5
    # a flat row is accepted too
    f = FacilityLocation.from_records(np.zeros((2, 2)), _RESCALE_C,
                                      lambda P, C: np.full(len(C), 0.5), s_max=1.0)
    assert np.all(f.similarity == 0.5)


def test_cross_record_callable_cannot_move_other_rows():
    f = FacilityLocation.from_records(_rescale_points(10), _RESCALE_C,
                                      _rescaled_by_largest_distance, s_max=1.0)
    g = f.neighbour(index=0, point=_FAR)
    assert np.flatnonzero(np.any(f.similarity != g.similarity, axis=1)).tolist() == [0]
    rebuilt = FacilityLocation.from_records(g._points, _RESCALE_C,
                                            _rescaled_by_largest_distance, s_max=1.0)
    np.testing.assert_array_equal(rebuilt.similarity, g.similarity)
    assert max_value_change(f, g) <= f.sensitivity * (1 + 1e-12)


def test_private_greedy_with_a_cross_record_callable_keeps_its_epsilon():
    from dpsubmod.offline.discrete.private_greedy import greedy_path_distribution, private_greedy
    from dpsubmod.privacy.audit import exact_check

    eps, k = 1.0, 1
    P = _rescale_points(10)
    Q = P.copy()
    Q[0] = _FAR

    def law(h):
        r = private_greedy(h, k, epsilon=eps, rng=0)
        weight = r.params["epsilon_per_step"] / (2 * r.params["sensitivity"])
        return greedy_path_distribution(h, k, weight=weight)

    def build(X):
        return FacilityLocation.from_records(X, _RESCALE_C, _rescaled_by_largest_distance,
                                             s_max=1.0)

    res = exact_check(law, build(P), build(Q), eps)
    assert res.passed, str(res)
    assert res.epsilon_exact < 0.5  # measured 0.477

    # The same callable applied to all records at once (what from_records used to do) breaks
    # the declared sensitivity: the exact epsilon is 2.7 times the claim on this pair.
    def block_build(X):
        sim = np.clip(_rescaled_by_largest_distance(X, _RESCALE_C), 0.0, 1.0)
        return FacilityLocation(sim, np.full(len(X), 1 / len(X)), sensitivity=1 / len(X),
                                data_model="monotone-records")

    bad = exact_check(law, block_build(P), block_build(Q), eps)
    assert not bad.passed and bad.epsilon_exact > 2.5 * eps


def test_float32_records_never_exceed_s_max():
    # float32(0.1) > 0.1: the stored cap must be rounded down so the declaration holds.
    P = np.zeros((3, 1))
    f = FacilityLocation.from_records(P, P[:2], "negative_distance", radius=0.1,
                                      dtype=np.float32)
    assert float(f.similarity.max()) <= 0.1
    assert f.similarity.dtype == np.float32


def test_neighbour_replaces_exactly_one_record():
    rng = np.random.default_rng(4)
    P, C = rng.normal(size=(6, 3)), rng.normal(size=(4, 3))
    f = FacilityLocation.from_records(P, C, bandwidth=1.0)
    g = f.neighbour(rng=5, index=2)
    diff = np.flatnonzero(np.any(f.similarity != g.similarity, axis=1))
    assert diff.tolist() == [2]
    again = f.neighbour(rng=5, index=2)
    np.testing.assert_array_equal(g.similarity, again.similarity)  # seeded, reproducible
    assert g.neighbour(index=0).sensitivity == f.sensitivity
    np.testing.assert_array_equal(f._points, P)  # the original is untouched


def test_neighbour_validates_before_drawing():
    f = FacilityLocation.from_records(np.zeros((3, 2)), np.ones((2, 2)), bandwidth=1.0)
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    with pytest.raises(ValidationError, match="'index'"):
        f.neighbour(rng, index=3)
    with pytest.raises(ValidationError, match="'point'"):
        f.neighbour(rng, point=[1.0, 2.0, 3.0])
    assert rng.bit_generator.state == state


def test_plain_matrix_has_no_neighbour_and_no_sensitivity():
    f = FacilityLocation(np.ones((2, 2)))
    assert f.sensitivity is None
    with pytest.raises(SensitivityError):
        f.neighbour(0)
    with pytest.raises(SensitivityError, match="sensitivity"):
        f.require_sensitivity()


def test_records_objective_pickles():
    f = FacilityLocation.from_records(np.zeros((3, 2)), np.ones((2, 2)), bandwidth=2.0)
    g = pickle.loads(pickle.dumps(f))
    np.testing.assert_array_equal(all_values(f)[1], all_values(g)[1])
    assert g.neighbour(0).n == 2


@pytest.mark.parametrize(
    ("args", "kwargs", "exc", "needle"),
    [
        ((np.zeros((3, 2)), np.ones((2, 2))), {}, ValidationError, "bandwidth"),
        ((np.zeros((3, 2)), np.ones((2, 2))), {"bandwidth": -1.0}, ValidationError,
         "'bandwidth'"),
        ((np.zeros((3, 2)), np.ones((2, 2))), {"bandwidth": 1.0, "radius": 1.0},
         ValidationError, "'radius'"),
        ((np.zeros((3, 2)), np.ones((2, 2)), "negative_distance"), {}, ValidationError,
         "radius"),
        ((np.zeros((3, 2)), np.ones((2, 2)), "cosine"), {}, ValidationError, "'similarity'"),
        ((np.zeros((3, 2)), np.ones((2, 2)), 3), {}, ParameterTypeError, "'similarity'"),
        ((np.zeros((3, 2)), np.ones((2, 2)), lambda P, C: P @ C.T), {}, ValidationError,
         "s_max"),
        ((np.zeros((3, 2)), np.ones((2, 2)), lambda P, C: P[:, :1]), {"s_max": 1.0},
         ValidationError,
         "shape"),
        ((np.zeros((3, 2)), np.ones((2, 2)), lambda P, C: np.full((len(P), 2), np.nan)),
         {"s_max": 1.0}, ValidationError, "NaN"),
        ((np.zeros((3, 2)), np.ones((2, 3))), {"bandwidth": 1.0}, ValidationError,
         "'candidates'"),
        ((np.full((3, 2), np.nan), np.ones((2, 2))), {"bandwidth": 1.0}, ValidationError,
         "'points'"),
        ((np.zeros(3), np.ones((2, 1))), {"bandwidth": 1.0}, ValidationError, "'points'"),
        ((np.zeros((3, 2)), np.ones((2, 2))), {"bandwidth": 1.0, "dtype": np.int32},
         ValidationError, "'dtype'"),
    ],
)
def test_from_records_bad_input(args, kwargs, exc, needle):
    with pytest.raises(exc, match=needle):
        FacilityLocation.from_records(*args, **kwargs)


def test_chain_values_of_a_sparse_similarity_without_entries_are_zero():
    f = FacilityLocation(sp.csr_array((3, 4)))
    assert np.array_equal(f.chain_values(np.arange(4)), np.zeros(5))


def test_gaussian_similarity_at_a_bandwidth_near_the_float_limit():
    # 1 / (2 h^2) underflows at h = 1e300: distances are measured in units of h instead
    f = FacilityLocation.from_records([[2.5e300, 3.0e300]], np.zeros((2, 2)), "gaussian",
                                      bandwidth=1e300)
    assert np.allclose(f.similarity, np.exp(-(2.5**2 + 3.0**2) / 2), rtol=1e-12)
