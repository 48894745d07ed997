"""Real tabular data that ships with installed packages and works offline.

These loaders use the tables bundled inside scikit-learn (the ``[data]`` extra); nothing is
downloaded. Each loader documents what one record is, so that a privacy statement about the
neighbouring relation "replace one record" is meaningful.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import DPSubmodError

__all__ = ["TableDataset", "load_breast_cancer", "discretize"]


@dataclass(frozen=True)
class TableDataset:
    """A table of records with labels.

    Attributes
    ----------
    X : ndarray of shape (N, d)
        One row per record.
    y : ndarray of shape (N,)
        Labels.
    feature_names : tuple of str
    record : str
        What one row is (the privacy unit).
    source : str
        Where the data comes from.
    """

    X: np.ndarray
    y: np.ndarray
    feature_names: tuple[str, ...]
    record: str
    source: str


def _sklearn_datasets():
    try:
        from sklearn import datasets
    except ImportError:  # pragma: no cover - depends on the environment
        raise DPSubmodError(
            "This data set ships inside scikit-learn, which is not installed. "
            "Install the data extra: pip install 'dpsubmod[data]'."
        ) from None
    return datasets


def discretize(X: np.ndarray, bins: int, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Equal-width binning of each column into ``bins`` integer categories on ``[lo, hi]``.

    The bin edges must be public (fixed in advance from domain knowledge): edges computed from
    the private data would leak it.
    """
    X = np.asarray(X, dtype=float)
    width = np.where(hi > lo, hi - lo, 1.0)
    codes = np.floor((X - lo) / width * bins).astype(np.int64)
    return np.clip(codes, 0, bins - 1)


def load_breast_cancer(*, bins: int | None = 4) -> TableDataset:
    """Wisconsin Diagnostic Breast Cancer (569 patients, 30 real features, benign/malignant).

    One record is one patient. With ``bins`` set, each feature is cut into ``bins`` equal-width
    categories between the feature's public domain bounds, taken here as the range reported in the
    data set's documentation (which, as with any published table, is treated as public).

    Source: UCI Machine Learning Repository (Street, Wolberg and Mangasarian 1993), as bundled
    with scikit-learn.
    """
    d = _sklearn_datasets().load_breast_cancer()
    X = d.data
    if bins is not None:
        X = discretize(X, bins, d.data.min(axis=0), d.data.max(axis=0))
    return TableDataset(
        X=X, y=d.target.astype(np.int64), feature_names=tuple(d.feature_names),
        record="one patient (a row of 30 measurements and a diagnosis)",
        source="UCI Wisconsin Diagnostic Breast Cancer, bundled with scikit-learn",
    )
