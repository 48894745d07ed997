"""PrivateFeatureSelector: what it selects, DataFrames in and out, public inputs by name, and
private rows that never raise."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("sklearn")
pd = pytest.importorskip("pandas")

from dpsubmod.errors import DPSubmodError, ValidationError  # noqa: E402
from dpsubmod.estimators import PrivateFeatureSelector  # noqa: E402


def survey(n=3000, seed=0):
    """Continuous age and income decide the outcome; shoe size and a code column do not."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({
        "shoe": rng.uniform(35, 48, n),
        "age": rng.uniform(18, 90, n),
        "code": rng.integers(0, 4, n),
        "income": rng.uniform(0, 200_000, n),
    })
    y = ((df["age"] > 50).astype(int) + (df["income"] > 100_000).astype(int))
    return df, y.to_numpy()


BOUNDS = {"shoe": (30, 50), "age": (18, 90), "income": (0, 200_000)}


def test_chooses_the_informative_columns_and_keeps_names():
    df, y = survey()
    sel = PrivateFeatureSelector(2, epsilon=4.0, bins=4, bounds=BOUNDS, backend="numpy",
                                 random_state=0).set_output(transform="pandas")
    out = sel.fit_transform(df, y)
    assert list(sel.feature_names_in_) == ["shoe", "age", "code", "income"]
    assert set(sel.get_feature_names_out()) == {"age", "income"}
    assert isinstance(out, pd.DataFrame) and list(out.columns) == ["age", "income"]
    assert out.index.equals(df.index)
    assert sorted(sel.ranking_.tolist()) == [1, 3]
    assert sel.get_support().tolist() == [False, True, False, True]
    assert sel.get_support(indices=True).tolist() == [1, 3]


def test_ranking_is_the_order_chosen():
    rng = np.random.default_rng(1)
    X = rng.integers(0, 4, size=(4000, 5))
    # feature 3 carries most of the label, feature 0 a little
    y = (X[:, 3] >= 2).astype(int) ^ ((X[:, 0] == 0) & (rng.random(4000) < 0.5))
    sel = PrivateFeatureSelector(2, epsilon=8.0, backend="numpy", random_state=0).fit(X, y)
    assert sel.ranking_.tolist() == [3, 0]
    assert sel.transform(X).tolist() == X[:, [0, 3]].tolist()  # X's column order


def test_the_release_holds_only_public_parts():
    df, y = survey(500)
    sel = PrivateFeatureSelector(1, epsilon=1.0, bins=4, bounds=BOUNDS).fit(df, y)
    rel = sel.release_
    assert rel["selection"] == sel.ranking_.tolist()
    assert rel["names"] == [df.columns[i] for i in sel.ranking_]
    assert rel["privacy"]["epsilon"] == pytest.approx(1.0)
    assert rel["privacy"]["backend"] == "secure"
    assert "objective_value" not in str(rel) and "value" not in rel
    assert any("bins" in p for p in rel["public_inputs"])


def test_string_labels_and_label_thresholds():
    df, y = survey(2000)
    names = np.array(["low", "mid", "high"], dtype=object)[y]
    a = PrivateFeatureSelector(2, epsilon=4.0, bins=4, bounds=BOUNDS, backend="numpy",
                               random_state=0).fit(df, names)
    assert sorted(a.ranking_.tolist()) == [1, 3]
    score = df["age"].to_numpy() / 90 + df["income"].to_numpy() / 200_000
    b = PrivateFeatureSelector(2, epsilon=4.0, bins=4, bounds=BOUNDS, backend="numpy",
                               random_state=0, label_thresholds=[0.8, 1.2]).fit(df, score)
    assert sorted(b.ranking_.tolist()) == [1, 3]


def test_bad_private_cells_never_raise():
    df, y = survey(800)
    df = df.astype({"age": object})
    df.loc[3, "age"] = "secret text"
    df.loc[5, "income"] = np.nan
    df.loc[7, "shoe"] = np.inf
    y = y.astype(float)
    y[9] = np.nan
    sel = PrivateFeatureSelector(2, epsilon=1.0, bins=4, bounds=BOUNDS).fit(df, y)
    assert sel.ranking_.shape == (2,)
    assert "secret" not in repr(sel.release_)


def test_bounds_are_matched_by_name():
    df, y = survey(300)
    with pytest.raises(ValidationError, match="'bounds' parameter of PrivateFeatureSelector "
                                              "names 'height'"):
        PrivateFeatureSelector(1, bins=4, bounds={"height": (0, 2)}).fit(df, y)
    # a count of bins without bounds leaves the continuous columns undeclared
    with pytest.raises(ValidationError, match=r"'shoe', 'age', 'income' have no declared bins"):
        PrivateFeatureSelector(1, bins=4).fit(df, y)
    with pytest.raises(ValidationError, match="have no declared bins"):
        PrivateFeatureSelector(1, bounds=BOUNDS).fit(df, y)
    with pytest.raises(ValidationError, match="'bounds' of 'age' would have no effect"):
        PrivateFeatureSelector(1, bins="categorical", bounds={"age": (18, 90)}).fit(df, y)
    # an array's columns are named as scikit-learn names them; a float array declares no
    # integer codes, so the code column is declared by name
    X = df.to_numpy()
    sel = PrivateFeatureSelector(1, bins={"x0": 4, "x1": 4, "x2": "categorical", "x3": 4},
                                 bounds={"x0": (30, 50), "x1": (18, 90),
                                         "x3": (0, 200_000)}).fit(X, y)
    assert sel.get_feature_names_out()[0] in {"x0", "x1", "x2", "x3"}


@pytest.mark.parametrize("k, msg", [
    (0, r"must be an integer in \[1, 4\]"), (5, r"must be an integer in \[1, 4\]"),
    (1.5, r"fraction in \(0, 1\]"), ("2", "must be None, an integer"),
])
def test_n_features_to_select_is_checked(k, msg):
    df, y = survey(200)
    with pytest.raises(DPSubmodError, match=msg):
        PrivateFeatureSelector(k, bins=4, bounds=BOUNDS).fit(df, y)


def test_fraction_and_default_number_of_features():
    df, y = survey(300)
    assert PrivateFeatureSelector(0.5, bins=4, bounds=BOUNDS).fit(df, y).ranking_.size == 2
    assert PrivateFeatureSelector(bins=4, bounds=BOUNDS).fit(df, y).n_features_to_select_ == 2


def test_y_is_required():
    df, _ = survey(100)
    with pytest.raises(ValidationError, match="requires y to be passed"):
        PrivateFeatureSelector(1).fit(df)
