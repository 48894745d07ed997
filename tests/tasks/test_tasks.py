"""The task layer: records from any table source, public inputs matched by name, data-independent
rules for invalid private values (with exact privacy checks and a data-dependent control that
fails), and a release that keeps non-private values apart."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from dpsubmod.errors import ParameterTypeError, ValidationError
from dpsubmod.offline.discrete.private_greedy import greedy_path_distribution
from dpsubmod.privacy import exact_check
from dpsubmod.tasks import (
    DataIssue,
    build_constraint,
    build_task,
    check_data,
    private_select,
)

RNG = np.random.default_rng(0)
LAT = 40.75 + 0.05 * RNG.standard_normal(60)
LON = -73.98 + 0.05 * RNG.standard_normal(60)
BOUNDS = {"lat": (40.6, 40.9), "lon": (-74.1, -73.8)}
SETS = [[0], [3], [0, 5], [1, 2, 7], list(range(9))]


def values(task):
    return [task.f.value(S) for S in SETS]


def fl(records, **kw):
    return build_task("facility-location", records, grid=(3, 3), bounds=BOUNDS, **kw)


def test_every_table_source_gives_the_same_objective(tmp_path):
    ref = fl({"lat": LAT, "lon": LON})
    csv = tmp_path / "rides.csv"
    csv.write_text("lat,lon\n" + "".join(f"{float(a)!r},{float(b)!r}\n" for a, b in zip(LAT, LON)))
    raw = tmp_path / "raw.csv"
    raw.write_text("".join(f"{float(a)!r},{float(b)!r}\n" for a, b in zip(LAT, LON)))
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    table = pa.table({"lon": LON, "lat": LAT})
    pq.write_table(table, tmp_path / "rides.parquet")
    sources = [
        fl(np.column_stack([LAT, LON]), names=["lat", "lon"]),
        fl(str(csv)),
        fl(str(raw), names=["lat", "lon"]),
        fl(str(tmp_path / "rides.parquet")),
        fl(table),
    ]
    for t in sources:
        assert t.names == ref.names
        assert t.sensitivity == pytest.approx(1 / 60)
        np.testing.assert_allclose(values(t), values(ref), rtol=1e-6)
    assert sources[1].source == "rides.csv" and "/" not in sources[1].neighbouring


def test_dataframes_keep_their_column_names():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"lon": LON, "lat": LAT})
    np.testing.assert_allclose(values(fl(df)), values(fl({"lat": LAT, "lon": LON})), rtol=1e-6)


def test_candidates_are_matched_by_name_never_by_position():
    recs = {"lat": LAT, "lon": LON}
    a = build_task("facility-location", recs, candidates={"lat": [40.7, 40.8],
                                                          "lon": [-74.0, -73.9]})
    b = build_task("facility-location", recs, candidates={"lon": [-74.0, -73.9],
                                                          "lat": [40.7, 40.8]})
    np.testing.assert_allclose([a.f.value([0]), a.f.value([1])],
                               [b.f.value([0]), b.f.value([1])])
    with pytest.raises(ValidationError, match="matched by name"):
        build_task("facility-location", recs, candidates={"x": [1.0], "y": [2.0]})
    with pytest.raises(ValidationError, match="no column names"):
        build_task("facility-location", recs, candidates=np.array([[40.7, -74.0]]))
    # two unnamed tables are the caller's explicit positional choice
    t = build_task("facility-location", np.column_stack([LAT, LON]),
                   candidates=np.array([[40.7, -74.0], [40.8, -73.9]]))
    np.testing.assert_allclose(t.f.value([0]), a.f.value([0]), rtol=1e-6)


def test_bounds_must_be_named():
    with pytest.raises(ParameterTypeError, match="never matched to columns by position"):
        build_task("facility-location", {"lat": LAT, "lon": LON}, grid=(2, 2),
                   bounds=[(40.6, 40.9), (-74.1, -73.8)])
    with pytest.raises(ValidationError, match="no numeric column named 'latitude'"):
        build_task("facility-location", {"lat": LAT, "lon": LON}, grid=(2, 2),
                   bounds={"latitude": (40.6, 40.9), "lon": (-74.1, -73.8)})


def test_refusals_name_the_argument():
    recs = {"a": [1.0, 0.0], "b": [0.0, 1.0]}
    with pytest.raises(ValidationError, match="'bins' does not apply to the coverage"):
        build_task("coverage", recs, bins=3)
    with pytest.raises(ValidationError, match="'task' parameter"):
        build_task("clustering", recs)
    with pytest.raises(ValidationError, match="cannot be dropped"):
        build_task("feature-selection", {"a": [0, 1], "y": [0, 1]}, label="y", invalid="drop")
    for bw in (np.inf, np.nan, 0.0, -1.0):
        with pytest.raises(ValidationError, match="'bandwidth'"):
            fl({"lat": LAT, "lon": LON}, bandwidth=bw)
    with pytest.raises(ValidationError, match="give bounds for lon"):
        build_task("facility-location", {"lat": LAT, "lon": LON},
                   candidates={"lat": [40.7], "lon": [-74.0]}, bounds={"lat": (40, 41)},
                   invalid="impute")


# ------------------------------------------------------------------------------------------------
# Invalid private values: the declared sensitivity holds over every set and the private greedy's
# law passes the exact check; a data-dependent rule (mean imputation) is caught.
def sup_diff(f, g):
    n = f.n
    masks = list(itertools.product([False, True], repeat=n))
    return max(abs(f.value(np.array(m)) - g.value(np.array(m))) for m in masks)


SMALL = {"x": np.array([0.1, 0.15, 0.2, 0.9, 0.12]), "y": np.array([0.1, 0.2, 0.1, 0.9, 0.15])}
SMALL_B = {"x": (0.0, 1.0), "y": (0.0, 1.0)}


def with_row(recs, i, x, y):
    out = {k: v.astype(float).copy() for k, v in recs.items()}
    out["x"][i], out["y"][i] = x, y
    return out


@pytest.mark.parametrize("rule", ["drop", "impute"])
@pytest.mark.parametrize("bad", [(np.nan, 0.5), (np.inf, 0.5), (7.0, -3.0)])
def test_invalid_and_outside_rows_keep_the_declared_sensitivity(rule, bad):
    D = build_task("facility-location", SMALL, grid=(2, 2), bounds=SMALL_B, invalid=rule,
                   bandwidth=0.3)
    Dp = build_task("facility-location", with_row(SMALL, 3, *bad), grid=(2, 2),
                    bounds=SMALL_B, invalid=rule, bandwidth=0.3)
    assert D.sensitivity == Dp.sensitivity == pytest.approx(1 / 5)
    assert sup_diff(D.f, Dp.f) <= D.sensitivity * (1 + 1e-6)
    eps = 1.0

    def law(t):
        return greedy_path_distribution(t.f, 2, weight=(eps / 2) / (2 * D.sensitivity))

    assert exact_check(law, D, Dp, epsilon=eps).passed


def _mean_imputed(recs):
    """A data-DEPENDENT rule (mean of the valid values), declared with the same sensitivity."""
    from dpsubmod.functions import FacilityLocation

    X = np.column_stack([recs["x"], recs["y"]]).astype(float)
    bad = ~np.isfinite(X).all(axis=1)
    X[bad] = X[~bad].mean(axis=0)
    C = np.array([[0.25, 0.25], [0.75, 0.25], [0.25, 0.75], [0.75, 0.75]])
    return FacilityLocation.from_records(X, C, "gaussian", bandwidth=0.3)


def test_a_data_dependent_imputation_is_caught():
    # four invalid rows follow whatever the one valid row says
    recs = {"x": np.array([0.1, np.nan, np.nan, np.nan, np.nan]),
            "y": np.array([0.1, np.nan, np.nan, np.nan, np.nan])}
    D, Dp = _mean_imputed(recs), _mean_imputed(with_row(recs, 0, 0.9, 0.9))
    assert sup_diff(D, Dp) > 3 * D.sensitivity
    eps = 1.0

    def law(f):
        return greedy_path_distribution(f, 1, weight=eps / (2 * D.sensitivity))

    assert not exact_check(law, D, Dp, epsilon=eps).passed
    # the declared rule on the same pair passes
    good = [build_task("facility-location", r, grid=(2, 2), bounds=SMALL_B, bandwidth=0.3)
            for r in (recs, with_row(recs, 0, 0.9, 0.9))]
    assert exact_check(lambda t: greedy_path_distribution(t.f, 1, weight=eps / (
        2 * t.sensitivity)), good[0], good[1], epsilon=eps).passed


@pytest.mark.parametrize("rule", ["clip", "drop"])
def test_coverage_rules_keep_the_sensitivity(rule):
    recs = {"a": np.array([1, 0, 1, 0.0]), "b": np.array([0, 1, 1, 0.0]),
            "c": np.array([0, 0, 1, 1.0])}
    bad = {k: v.copy() for k, v in recs.items()}
    bad["a"][2], bad["b"][2] = -1.0, np.nan
    D = build_task("coverage", recs, invalid=rule)
    Dp = build_task("coverage", bad, invalid=rule)
    assert sup_diff(D.f, Dp.f) <= D.sensitivity * (1 + 1e-9)


def test_feature_selection_imputes_a_missing_category_within_the_sensitivity():
    rng = np.random.default_rng(1)
    recs = {"a": rng.integers(0, 2, 9).astype(float), "b": rng.integers(0, 3, 9).astype(float),
            "y": rng.integers(0, 2, 9).astype(float)}
    bad = {k: v.copy() for k, v in recs.items()}
    bad["a"][4], bad["b"][4], bad["y"][4] = np.nan, 1.5, np.inf
    D = build_task("feature-selection", recs, label="y", bins="categorical")
    Dp = build_task("feature-selection", bad, label="y", bins="categorical")
    assert Dp.diagnostics["invalid_cells"] == {"y": 1, "a": 1, "b": 1}
    assert sup_diff(D.f, Dp.f) <= D.sensitivity * (1 + 1e-9)


def test_coverage_from_membership_equals_from_records():
    from dpsubmod.functions import Coverage

    M = RNG.random((40, 6)) < 0.3
    a = Coverage.from_membership(M)
    b = Coverage.from_records([np.flatnonzero(r) for r in M], 6)
    for S in ([0], [1, 2], [0, 3, 5], range(6)):
        assert a.value(S) == pytest.approx(b.value(S))
    assert a.sensitivity == b.sensitivity and a.neighbour(rng=0).n == 6


def test_check_data_finds_the_first_invalid_value(tmp_path):
    p = tmp_path / "people.csv"
    p.write_text("a,b\n1,0\n\n0,1\n1,-2\n0,x\n")
    issue = check_data("coverage", str(p))
    assert isinstance(issue, DataIssue) and issue.where == "line 5" and issue.column == "b"
    assert check_data("coverage", {"a": [1.0, 0.0]}) is None
    # a coverage release on the same file goes through, by the rule
    t = build_task("coverage", str(p))
    assert t.n_records == 4 and t.diagnostics["invalid_cells"] == 2


def test_the_release_keeps_non_private_values_apart():
    t = fl({"lat": LAT, "lon": LON})
    rel = private_select(t, build_constraint(t, k=2), epsilon=1.0, backend="numpy", rng=0)
    doc = rel.to_dict()
    text = repr(doc)
    assert "objective_value" not in text and repr(rel.value) not in text
    assert doc["data"]["records"] == 60 and len(doc["selection"]) == 2
    d = rel.diagnostics()
    assert "NOT differentially private" in d["warning"] and d["objective_value"] == rel.value
    with pytest.raises(ValidationError, match="not private"):
        private_select(t, build_constraint(t, k=2), epsilon=1.0, method="greedy")


@pytest.mark.parametrize("dim", [1, 2, 3])
def test_default_bandwidth_distances_match_the_kd_tree(dim, monkeypatch):
    # the pairwise path (small candidate sets, no scipy import) and the k-d tree give the
    # same floats, repeats and grids included, so the default bandwidth is the same either way
    from scipy.spatial import cKDTree

    from dpsubmod.tasks import facility_location as fl

    rng = np.random.default_rng(dim)
    grid = np.stack(np.meshgrid(*[np.linspace(40.6, 40.9, 7)] * dim), -1).reshape(-1, dim)
    for C in (rng.uniform(-74.1, -73.8, size=(500, dim)), rng.normal(size=(300, dim)) * 1e-7,
              np.round(rng.uniform(0, 3, size=(200, dim)), 1), grid):
        kd = cKDTree(C).query(C, k=2)[0][:, 1]
        assert np.array_equal(fl._nearest_distances(C), kd)
        monkeypatch.setattr(fl, "_PAIRWISE_MAX", 1)  # the k-d tree path
        assert np.array_equal(fl._nearest_distances(C), kd)
        monkeypatch.undo()


def test_default_bandwidth_median_is_numpys_float():
    # the median of the spacings skips np.median (whose NaN check imports numpy.ma) and must
    # give its very float: odd and even sizes, ties, extreme magnitudes, a NaN
    from dpsubmod.tasks import facility_location as fl

    rng = np.random.default_rng(11)
    for n in (*range(1, 12), 399, 400, 1001):
        for x in (rng.uniform(0, 1, n), rng.exponential(size=n) * 10.0 ** rng.integers(-300, 300),
                  np.round(rng.uniform(0, 3, n), 1), np.full(n, 0.1)):
            assert np.float64(fl._median(x)).tobytes() == np.float64(np.median(x)).tobytes()
            x[n // 2] = np.nan
            assert np.isnan(fl._median(x)) and np.isnan(np.median(x))
