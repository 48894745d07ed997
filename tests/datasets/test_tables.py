"""Bundled tables: shapes, the record statement, and public discretization bounds."""

from __future__ import annotations

import numpy as np
import pytest

from dpsubmod.datasets import (
    DIABETES_BOUNDS,
    TABLES,
    TableDataset,
    discretize,
    load_breast_cancer,
    load_diabetes,
    load_table,
)
from dpsubmod.errors import DPSubmodError, ValidationError


def test_discretize_uses_the_given_bounds_and_clips():
    X = np.array([[-5.0, 0.0], [0.0, 0.5], [0.49, 1.0], [0.5, 9.0], [10.0, 0.99]])
    codes = discretize(X, 4, np.array([0.0, 0.0]), np.array([1.0, 1.0]))
    assert codes.dtype == np.int64
    np.testing.assert_array_equal(codes, [[0, 0], [0, 2], [1, 3], [2, 3], [3, 3]])
    # a record's code depends on its own value only, never on the other records
    np.testing.assert_array_equal(discretize(X[:2], 4, 0.0, 1.0), codes[:2])
    with pytest.raises(DPSubmodError, match="bins"):
        discretize(X, 0, 0.0, 1.0)


def test_load_table_names():
    assert set(TABLES) == {"breast_cancer", "diabetes"}
    with pytest.raises(ValidationError, match="breast_cancer"):
        load_table("iris")


def test_breast_cancer_keeps_its_behaviour():
    pytest.importorskip("sklearn")
    d = load_breast_cancer()
    assert isinstance(d, TableDataset)
    assert d.X.shape == (569, 30) and d.y.shape == (569,)
    assert d.X.min() == 0 and d.X.max() == 3
    assert set(np.unique(d.y)) == {0, 1} and len(d.feature_names) == 30
    assert "patient" in d.record and "scikit-learn" in d.source
    raw = load_table("breast-cancer", bins=None)
    assert raw.X.dtype == np.float64 and raw.X.max() > 100
    # the documented bounds: min and max of the published table
    np.testing.assert_array_equal(d.X, discretize(raw.X, 4, raw.X.min(0), raw.X.max(0)))
    assert "published" in load_breast_cancer.__doc__


def test_diabetes_label_and_bins_come_from_public_constants():
    sklearn_datasets = pytest.importorskip("sklearn.datasets")
    ref = sklearn_datasets.load_diabetes(scaled=False)
    d = load_diabetes()
    assert d.X.shape == (442, 10) and d.y.shape == (442,)
    assert d.feature_names == tuple(ref.feature_names)
    assert "patient" in d.record and "Efron" in d.source
    np.testing.assert_array_equal(d.y, (ref.target >= 150.0).astype(int))
    sex = d.feature_names.index("sex")
    assert set(np.unique(d.X[:, sex])) == {0, 1}
    for j, name in enumerate(d.feature_names):
        if name == "sex":
            continue
        lo, hi = DIABETES_BOUNDS[name]
        np.testing.assert_array_equal(d.X[:, j], discretize(ref.data[:, j:j + 1], 4, lo, hi)[:, 0])
    three = load_table("diabetes", bins=None, thresholds=[100, 200])
    np.testing.assert_array_equal(three.X, ref.data)
    np.testing.assert_array_equal(three.y, (ref.target >= 100).astype(int)
                                  + (ref.target >= 200).astype(int))
    assert set(np.unique(three.y)) == {0, 1, 2}


@pytest.mark.parametrize("kwargs,needle", [
    ({"thresholds": [200, 100]}, "increasing"),
    ({"thresholds": []}, "increasing"),
    ({"thresholds": [np.nan]}, "NaN"),
    ({"thresholds": "high"}, "thresholds"),
    ({"bins": 0}, "bins"),
])
def test_diabetes_bad_parameters(kwargs, needle):
    with pytest.raises(DPSubmodError, match=needle):
        load_diabetes(**kwargs)
