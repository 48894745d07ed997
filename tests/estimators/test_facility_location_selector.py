"""PrivateFacilityLocationSelector: public candidates or a public grid, matched by name; what
transform and score return; private rows that never raise."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("sklearn")
pd = pytest.importorskip("pandas")

from dpsubmod.errors import ValidationError  # noqa: E402
from dpsubmod.estimators import PrivateFacilityLocationSelector  # noqa: E402
from dpsubmod.functions import FacilityLocation  # noqa: E402


def riders(n=1000, seed=0):
    rng = np.random.default_rng(seed)
    return np.concatenate([rng.normal((0.2, 0.7), 0.04, (n // 2, 2)),
                           rng.normal((0.8, 0.3), 0.04, (n - n // 2, 2))])


SITES = pd.DataFrame({"lon": [0.2, 0.8, 0.5, 0.2], "lat": [0.7, 0.3, 0.5, 0.2]},
                     index=["park", "station", "centre", "harbour"])


def test_chooses_the_sites_near_the_riders_matched_by_name():
    X = pd.DataFrame(riders(), columns=["lat", "lon"])  # note: lat first, sites lon first
    X[["lat", "lon"]] = X[["lon", "lat"]].to_numpy()
    sel = PrivateFacilityLocationSelector(2, candidates=SITES, bandwidth=0.1, epsilon=4.0,
                                          backend="numpy", random_state=0)
    out = sel.set_output(transform="pandas").fit_transform(X)
    assert set(out.index) == {"park", "station"}
    assert list(out.columns) == ["lat", "lon"]
    assert out.loc["park"].tolist() == [0.7, 0.2]  # in X's column order, by name
    assert sel.candidates_.shape == (4, 2) and sel.exemplars_.shape == (2, 2)
    assert sel.release_["selection"] == sel.ranking_.tolist()


def test_transform_ignores_the_rows_but_checks_the_columns():
    X = riders(400)
    sel = PrivateFacilityLocationSelector(2, grid=2, bounds=(0.0, 1.0), epsilon=2.0).fit(X)
    assert np.array_equal(sel.transform(X[:5]), sel.exemplars_)
    with pytest.raises(ValueError, match="features"):
        sel.transform(X[:, :1])


def test_grid_matches_the_library_objective():
    X = riders(600)
    sel = PrivateFacilityLocationSelector(3, grid={"x0": 3, "x1": 2}, bounds=(0.0, 1.0),
                                          bandwidth=0.2, epsilon=1.0, backend="numpy",
                                          random_state=0).fit(X)
    assert sel.candidates_.shape == (6, 2)
    assert np.allclose(sorted(set(sel.candidates_[:, 0])), [1 / 6, 0.5, 5 / 6])
    f = FacilityLocation.from_records(X, sel.candidates_, "gaussian", bandwidth=0.2)
    assert sel.score(X) == pytest.approx(f(sel.ranking_.tolist()), rel=1e-5)


def test_score_is_higher_for_the_records_it_was_fitted_for():
    sel = PrivateFacilityLocationSelector(2, candidates=SITES.to_numpy()[:, ::-1].copy(),
                                          bandwidth=0.1, epsilon=4.0, backend="numpy",
                                          random_state=0).fit(riders())
    rng = np.random.default_rng(5)
    assert sel.score(riders(300, seed=9)) > sel.score(rng.random((300, 2)))


def test_public_inputs_are_matched_by_name_never_by_position():
    X = pd.DataFrame(riders(200), columns=["lat", "lon"])
    with pytest.raises(ValidationError, match="candidates must be a DataFrame"):
        PrivateFacilityLocationSelector(1, candidates=SITES.to_numpy()).fit(X)
    with pytest.raises(ValidationError, match="no column 'lat'"):
        PrivateFacilityLocationSelector(1, candidates=SITES.rename(columns={"lat": "y"})).fit(X)
    with pytest.raises(ValidationError, match="X has no column names"):
        PrivateFacilityLocationSelector(1, candidates=SITES).fit(X.to_numpy())
    with pytest.raises(ValidationError, match=r"shape \(n_candidates, 2\)"):
        PrivateFacilityLocationSelector(1, candidates=np.zeros((3, 3))).fit(X.to_numpy())


def test_candidates_come_from_public_inputs_only():
    X = riders(200)
    with pytest.raises(ValidationError, match="needs public candidate points"):
        PrivateFacilityLocationSelector(1).fit(X)
    with pytest.raises(ValidationError, match="not both"):
        PrivateFacilityLocationSelector(1, candidates=np.zeros((2, 2)), grid=2,
                                        bounds=(0, 1)).fit(X)
    with pytest.raises(ValidationError, match="a grid needs public bounds"):
        PrivateFacilityLocationSelector(1, grid=3).fit(X)
    with pytest.raises(ValidationError, match="more than 100000"):
        PrivateFacilityLocationSelector(1, grid=400, bounds=(0, 1)).fit(X)


def test_bad_private_rows_never_raise():
    X = riders(300).astype(object)
    X[0, 0] = "secret"
    X[1, 1] = np.nan
    X[2, 0] = np.inf
    for rule in ("drop", "impute"):
        sel = PrivateFacilityLocationSelector(2, grid=2, bounds=(0.0, 1.0), invalid=rule,
                                              epsilon=1.0).fit(X)
        assert sel.ranking_.shape == (2,)
        assert "secret" not in repr(sel.release_)


def test_n_candidates_to_select_is_checked():
    with pytest.raises(ValidationError, match=r"integer in \[1, 4\].*4 candidates"):
        PrivateFacilityLocationSelector(5, grid=2, bounds=(0, 1)).fit(riders(100))
