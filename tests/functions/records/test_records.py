"""Record-partitioned objectives: chunked == in-memory, exact fixed-point sums in any order
(with a float32-summing control that the order test catches), contribution bounding and the
add/remove relation checked exactly (each with a mis-calibrated control that fails), sources
(Parquet, CSV, pyarrow dataset, iterators), and refusals of bad input."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from dpsubmod import maximize
from dpsubmod.datasets import grid_candidates, scan_records
from dpsubmod.errors import ParameterTypeError, ValidationError
from dpsubmod.functions import Coverage, FacilityLocation, FeatureBased
from dpsubmod.functions.records.kernels import GaussianKernel
from dpsubmod.offline.discrete.private_greedy import greedy_path_distribution
from dpsubmod.privacy import exact_check

RNG = np.random.default_rng(0)
P = RNG.random((4000, 2))
C_RAND = RNG.random((25, 2))
C_GRID = grid_candidates(5, 5, (0, 1, 0, 1))
KINDS = [
    (C_RAND, {"bandwidth": 0.1}),
    (C_GRID, {"bandwidth": 0.1}),
    (C_GRID, {"bandwidth": 1e-3}),
    (C_RAND, {"similarity": "negative_distance", "radius": 0.3}),
]


@pytest.mark.parametrize("C, kw", KINDS)
def test_chunked_facility_location_matches_the_in_memory_objective(C, kw):
    f = FacilityLocation.from_records(P, C, dtype=np.float64, **kw)  # the dense float64 matrix
    g = FacilityLocation.from_chunks(P, C, chunk_rows=333, **kw)
    assert g.sensitivity == f.sensitivity and g.data_model == "monotone-records"
    for S in ([0], [3, 7], [1, 2, 11, 20]):
        assert g.value(S) == pytest.approx(f.value(S), rel=1e-6, abs=1e-9)
    for seed in range(3):
        a = maximize(f, 5, "private_greedy", epsilon=3.0, rng=seed)
        b = maximize(g, 5, "private_greedy", epsilon=3.0, rng=seed)
        assert a.selection == b.selection
        # quantization: each term is within one unit, s_max / 2**24, of the float value
        assert b.diagnostics.value == pytest.approx(a.diagnostics.value, rel=1e-6, abs=2**-23)


def cache_after(g, steps):
    st = g.state()
    for e in steps:
        st.add(e)
    return st.cache.copy()


@pytest.mark.parametrize("C, kw", KINDS)
def test_gains_are_the_same_bit_for_bit_in_any_order_and_partition(C, kw):
    steps = [3, 12, 7]
    ref = cache_after(FacilityLocation.from_chunks(P, C, **kw), steps)
    gen = np.random.default_rng(1)
    for _ in range(3):
        perm = gen.permutation(P.shape[0])
        cuts = np.sort(gen.choice(np.arange(1, P.shape[0]), size=5, replace=False))
        chunks = np.split(P[perm], cuts)
        g = FacilityLocation.from_chunks(chunks, C, n_jobs=2, **kw)
        assert np.array_equal(cache_after(g, steps), ref)
    # and each record's term does not depend on its block: same row, other neighbours
    k = GaussianKernel(C_GRID, 0.1)
    X = P[:50].astype(np.float32)
    assert np.array_equal(k.block(X)[7], k.block(X[5:9])[2])
    assert np.array_equal(k.block(X)[:, 4], k.column(X, 4))


def test_float32_summation_is_order_dependent_and_the_check_catches_it():
    # the control: summing float32 similarities in float32, as a naive kernel would
    k = GaussianKernel(C_GRID, 0.1)
    S = k.block(P.astype(np.float32)) / np.float32(2 ** 24)
    perm = np.random.default_rng(2).permutation(S.shape[0])
    naive = [np.add.reduce(S, axis=0, dtype=np.float32),
             np.add.reduce(S[perm], axis=0, dtype=np.float32)]
    assert not np.array_equal(*naive)
    exact = [S.sum(axis=0, dtype=np.float64) * 2 ** 24,
             S[perm].sum(axis=0, dtype=np.float64) * 2 ** 24]
    assert np.array_equal(*exact)


def brute_sup(f, g):
    masks = [np.array(m) for m in itertools.product([False, True], repeat=f.n)]
    return max(abs(f.value(m) - g.value(m)) for m in masks if m.any())


def law(f, k, eps, sens):
    return greedy_path_distribution(f, k, weight=(eps / k) / (2 * sens))


# tiny instance: 4 candidates on a line; person 9 has three rows exactly at the last one
C4 = np.array([[0.0, 0.0], [0.3, 0.0], [0.6, 0.0], [1.0, 0.0]])
ROWS = np.array([[0.0, 0], [0.01, 0], [0.3, 0], [0.6, 0], [1.0, 0], [1.0, 0], [1.0, 0]])
USERS = np.array([1, 2, 3, 4, 9, 9, 9])


def test_contribution_bounding_scales_the_sensitivity_and_a_control_fails():
    m, eps = 3, 1.0
    D = FacilityLocation.from_chunks(ROWS, C4, bandwidth=0.05, user_id=USERS,
                                     max_rows_per_user=m)
    Dp = FacilityLocation.from_chunks(ROWS[:4], C4, bandwidth=0.05, user_id=USERS[:4],
                                      max_rows_per_user=m)
    assert D.sensitivity == pytest.approx(m * 1.0) and "up to 3 rows" in D.neighbouring
    assert brute_sup(D, Dp) <= D.sensitivity * (1 + 1e-12)
    for k in (1, 2):
        assert exact_check(lambda f, k=k: law(f, k, eps, D.sensitivity), D, Dp,
                           epsilon=eps).passed
    # control: the same bounding with the sensitivity NOT scaled by m
    res = exact_check(lambda f: law(f, 1, eps, 1.0), D, Dp, epsilon=eps)
    assert not res.passed and res.epsilon_exact > eps


def test_rows_beyond_the_bound_are_dropped_in_source_order():
    users = np.array([5, 5, 5, 5, 6])
    rows = np.array([[0.0, 0], [0.3, 0], [0.6, 0], [1.0, 0], [1.0, 0]])
    f = FacilityLocation.from_chunks(rows, C4, bandwidth=0.01, user_id=users,
                                     max_rows_per_user=2)
    g = FacilityLocation.from_chunks(rows[[0, 1, 4]], C4, bandwidth=0.01)
    assert f.n_rows == 3
    for S in ([0], [2], [3], [0, 1, 2, 3]):
        assert f.value(S) == pytest.approx(3 * g.value(S))
    # chunk boundaries do not change which rows are kept
    h = FacilityLocation.from_chunks([(rows[:1], users[:1]), (rows[1:3], users[1:3]),
                                      (rows[3:], users[3:])], C4, bandwidth=0.01,
                                     user_id=True, max_rows_per_user=2)
    assert np.array_equal(cache_after(h, [1]), cache_after(f, [1]))


def test_add_remove_relation_needs_no_n_and_a_control_fails():
    eps = 1.0
    rows = ROWS[:5]
    D = FacilityLocation.from_chunks(rows, C4, bandwidth=0.05, relation="add-remove")
    Dp = FacilityLocation.from_chunks(rows[:-1], C4, bandwidth=0.05, relation="add-remove")
    assert D.sensitivity == 1.0 and "add or remove one row" in D.neighbouring
    assert brute_sup(D, Dp) <= 1.0 + 1e-12
    assert exact_check(lambda f: law(f, 2, eps, 1.0), D, Dp, epsilon=eps).passed
    # control: the replace-one sensitivity 1/N used for add/remove neighbours
    assert not exact_check(lambda f: law(f, 1, eps, 1.0 / len(rows)), D, Dp,
                           epsilon=eps).passed


def test_replace_one_row_keeps_its_sensitivity_with_invalid_rows():
    bad = ROWS.copy()
    bad[2] = [np.nan, 0.0]
    D = FacilityLocation.from_chunks(ROWS, C4, bandwidth=0.15)
    Dp = FacilityLocation.from_chunks(bad, C4, bandwidth=0.15)
    assert exact_check(lambda f: law(f, 2, 1.0, D.sensitivity), D, Dp, epsilon=1.0).passed
    assert Dp.n_rows == len(ROWS) and D.sensitivity == Dp.sensitivity
    assert brute_sup(D, Dp) <= D.sensitivity * (1 + 1e-12)


def test_chunked_coverage_and_feature_based():
    M = (RNG.random((3000, 9)) < 0.15).astype(float)
    a, b = Coverage.from_membership(M), Coverage.from_chunks(M, 9, chunk_rows=400)
    assert a.sensitivity == b.sensitivity
    for S in ([0], [1, 4], list(range(9))):
        assert b.value(S) == pytest.approx(a.value(S))
    assert maximize(a, 3, "private_greedy", epsilon=2, rng=0).selection == \
        maximize(b, 3, "private_greedy", epsilon=2, rng=0).selection
    X = RNG.random((500, 6))
    fb = FeatureBased.from_chunks(X, 6, "log1p", chunk_rows=64)
    ref = FeatureBased(X.T, "log1p", weights=np.full(500, 1 / 500))
    for S in ([0], [2, 5], [0, 1, 3]):
        assert fb.value(S) == pytest.approx(ref.value(S), rel=1e-6)
    assert fb.sensitivity == pytest.approx(np.log1p(6.0) / 500)
    assert maximize(fb, 3, "private_greedy", epsilon=5, rng=1).selection == \
        maximize(ref, 3, "private_greedy", epsilon=5, rng=1, sensitivity=fb.sensitivity
                 ).selection


def test_every_source_gives_the_same_selection(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    ds = pytest.importorskip("pyarrow.dataset")
    tab = pa.table({"y": P[:, 1], "x": P[:, 0]})
    pq.write_table(tab, tmp_path / "r.parquet")
    (tmp_path / "r.csv").write_text("x,y\n" + "".join(f"{a!r},{b!r}\n" for a, b in
                                                       P.tolist()))
    ref = maximize(FacilityLocation.from_chunks(P, C_GRID, bandwidth=0.1), 4,
                   "private_greedy", epsilon=2, rng=7)
    sources = [
        scan_records(tmp_path / "r.parquet", ["x", "y"], chunk_rows=999),
        scan_records(tmp_path / "r.csv", ["x", "y"], chunk_rows=999),
        scan_records(ds.dataset(tmp_path / "r.parquet"), ["x", "y"], chunk_rows=999),
        (P[s:s + 700] for s in range(0, len(P), 700)),
        lambda: iter(np.array_split(P, 3)),
    ]
    for src in sources:
        g = FacilityLocation.from_chunks(src, C_GRID, bandwidth=0.1)
        r = maximize(g, 4, "private_greedy", epsilon=2, rng=7)
        assert r.selection == ref.selection and r.diagnostics.value == ref.diagnostics.value


def test_bad_input_names_the_argument(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    with pytest.raises(ValidationError, match="Chunk 1 .* 3 columns but the first chunk had 2"):
        FacilityLocation.from_chunks([P[:10], RNG.random((5, 3))], C_GRID, bandwidth=0.1)
    with pytest.raises(ValidationError, match="max_rows_per_user"):
        FacilityLocation.from_chunks(P, C_GRID, bandwidth=0.1, user_id=np.arange(len(P)))
    with pytest.raises(ValidationError, match="'relation'"):
        FacilityLocation.from_chunks(P, C_GRID, bandwidth=0.1, relation="swap")
    # a row without a user id is dropped (the declared rule), never refused
    f_null = FacilityLocation.from_chunks(P[:3], C_GRID, bandwidth=0.1,
                                          user_id=np.array(["a", None, "b"], dtype=object),
                                          max_rows_per_user=1)
    f_ref = FacilityLocation.from_chunks(P[[0, 2]], C_GRID, bandwidth=0.1,
                                         user_id=np.array(["a", "b"]), max_rows_per_user=1)
    assert f_null([0, 1]) == f_ref([0, 1]) and f_null.n_rows == 2
    pq.write_table(pa.table({"x": P[:5, 0], "y": [str(v) for v in P[:5, 1]],
                             "u": pa.array([1, None, 2, 3, 4]),
                             "tags": [[1], [2], [3], [4], [5]]}), tmp_path / "bad.parquet")
    with pytest.raises(ValidationError, match="no column named 'lat'"):
        scan_records(tmp_path / "bad.parquet", ["lat", "y"])
    with pytest.raises(ValidationError, match="no user column named 'rider'"):
        scan_records(tmp_path / "bad.parquet", ["x", "y"], user_column="rider")
    with pytest.raises(ValidationError, match="column 'tags' has type list"):
        scan_records(tmp_path / "bad.parquet", ["x", "tags"])
    f_pq = FacilityLocation.from_chunks(scan_records(tmp_path / "bad.parquet", ["x", "y"],
                                                     user_column="u"), C_GRID, bandwidth=0.1,
                                        user_id=True, max_rows_per_user=1)
    assert f_pq.n_rows == 4  # the row with a null id is dropped
    with pytest.raises(ParameterTypeError):
        FacilityLocation.from_chunks(3.0, C_GRID, bandwidth=0.1)
    for bw in (np.inf, np.nan, 0.0):
        with pytest.raises(ValidationError, match="'bandwidth'"):
            FacilityLocation.from_chunks(P, C_GRID, bandwidth=bw)


def test_extreme_parameters_of_the_dense_builder():
    # issue 15: infinite or absurd public parameters are refused or handled
    for kw in ({"bandwidth": np.inf}, {"similarity": "negative_distance", "radius": np.inf}):
        with pytest.raises(ValidationError, match="finite"):
            FacilityLocation.from_records(P[:10], C_GRID, **kw)
    with pytest.raises(ValidationError, match="'s_max'"):
        FacilityLocation.from_records(P[:10], C_GRID, lambda r, c: np.ones(len(c)),
                                      s_max=np.inf)
    tiny = FacilityLocation.from_records(np.vstack([C_GRID[:2], P[:5]]), C_GRID,
                                         bandwidth=1e-300)
    sim = tiny.similarity
    assert np.isfinite(sim).all() and sim[0, 0] == 1.0 and sim[2:].max() == 0.0
    g = FacilityLocation.from_chunks(P[:10], C_GRID, bandwidth=1e-300)
    assert g.value([0]) == 0.0


def test_a_dense_similarity_that_cannot_fit_is_refused_before_allocating():
    with pytest.raises(ValidationError, match="from_chunks") as exc:
        FacilityLocation.from_records(np.zeros((200_000, 2)), np.zeros((50_000, 2)),
                                      bandwidth=1.0, dtype=np.float64)
    for hint in ("float32", "sparse nearest-neighbour", "fewer candidates", "GiB"):
        assert hint in str(exc.value)


def test_an_all_zero_sparse_similarity_is_handled():
    import scipy.sparse as sp

    f = FacilityLocation(sp.csr_array((30, 6)), sensitivity=0.1)
    assert f.value([0, 1]) == 0.0
    r = maximize(f, 2, "private_greedy", epsilon=1.0, rng=0)
    assert len(r.selection) == 2 and r.diagnostics.value == 0.0


@pytest.mark.parametrize("C, kw", KINDS)
def test_windows_leave_out_only_terms_that_add_nothing(C, kw):
    # gains computed on each sub-block's window equal the plain sum over every candidate
    g = FacilityLocation.from_chunks(P, C, **kw)
    st = g.state()
    X = np.concatenate(list(g.blocks.source()))
    for e in (5, 17, 2):
        state = np.concatenate(st.states)
        full = np.maximum(g.kernel.block(X) - state[:, None], 0).sum(axis=0, dtype=np.float64)
        full[st.mask] = 0.0
        got = st.cache.copy()
        got[st.mask] = 0.0
        assert np.array_equal(got, full)
        st.add(e)


def test_neighbouring_instances_for_auditors():
    from dpsubmod.privacy import audit

    rng = np.random.default_rng(4)
    cases = [FacilityLocation.from_chunks(rng.random((6, 2)), C4, bandwidth=0.3),
             FacilityLocation.from_chunks(rng.random((6, 2)), C4, bandwidth=0.3,
                                          relation="add-remove"),
             Coverage.from_chunks((rng.random((6, 4)) < 0.4).astype(float), 4),
             FeatureBased.from_chunks(rng.random((6, 4)), 4, "log1p")]
    for f in cases:
        for seed in range(4):
            g = f.neighbour(seed)
            assert g.n_rows == f.n_rows - ("add or remove" in f.neighbouring)
            assert brute_sup(f, g) <= f.sensitivity * (1 + 1e-12)
            assert exact_check(lambda h, s=f.sensitivity: law(h, 2, 1.0, s), f, g,
                               epsilon=1.0).passed
    f = cases[0]
    res = audit(lambda h, gen: maximize(h, 2, "private_greedy", epsilon=1.0, rng=gen).selection,
                f, f.neighbour(0, index=2, record=[1.0, 0.0]), n_runs=200,
                epsilon_claimed=1.0, rng=0)
    assert not res.violation
    with pytest.raises(ValidationError, match="no neighbouring instance|not built"):
        FacilityLocation.from_chunks(ROWS, C4, bandwidth=0.1, user_id=USERS,
                                     max_rows_per_user=2).neighbour(0)
