"""Real tabular data that ships with installed packages and works offline.

These loaders use the tables bundled inside scikit-learn (the ``[data]`` extra); nothing is
downloaded. Each loader documents what one record is, so that a privacy statement about the
neighbouring relation "replace one record" is meaningful, and where its discretization bounds come
from: bin edges and label thresholds that shape a private release must be public, i.e. fixed in
advance without looking at the private records.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validation import check_finite, check_int
from ..errors import DPSubmodError, ParameterTypeError, ValidationError


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
    the private data would leak it. Values outside ``[lo, hi]`` fall into the first or last bin,
    so the codes always lie in ``0 .. bins - 1`` whatever the data hold.

    Parameters
    ----------
    X : array-like of float, shape (N, d)
    bins : int
        Number of categories per column, at least 1.
    lo, hi : float or array-like of float, shape (d,)
        Public lower and upper bounds of each column (a column with ``hi <= lo`` gets code 0,
        or the last code for values above ``lo``).

    Returns
    -------
    ndarray of int64, shape (N, d)
    """
    bins = check_int(bins, "bins", low=1, caller="discretize")
    X = np.asarray(X, dtype=float)
    width = np.where(hi > lo, hi - lo, 1.0)
    codes = np.floor((X - lo) / width * bins).astype(np.int64)
    return np.clip(codes, 0, bins - 1)


def load_breast_cancer(*, bins: int | None = 4) -> TableDataset:
    """Wisconsin Diagnostic Breast Cancer (569 patients, 30 real features, benign/malignant).

    One record is one patient: a row of 30 measurements of the cell nuclei in a fine-needle
    aspirate and the diagnosis (``y = 1`` benign, ``0`` malignant, as coded by scikit-learn).

    With ``bins`` set, each feature is cut into ``bins`` equal-width categories between the
    feature's bounds. **These bounds are the minimum and maximum over the 569 records**, i.e. the
    range printed in the data set's published documentation (the summary table of its
    description); as with any published table they are treated as public here. That is a
    property of this published benchmark, not a recipe: for your own records fix the bounds from
    domain knowledge (see :func:`discretize`), never from the private data.

    Parameters
    ----------
    bins : int or None, default=4
        Categories per feature; ``None`` keeps the real values.

    Returns
    -------
    TableDataset

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


#: Public domain bounds (low, high) of the raw diabetes features, fixed from clinical reference
#: ranges for adults in the units of the data set (years, kg/m^2, mmHg, mg/dL, a ratio, log mg/dL),
#: not from the records. ``sex`` (coded 1 or 2) is categorical and is not binned.
DIABETES_BOUNDS: dict[str, tuple[float, float]] = {
    "age": (20.0, 80.0),
    "bmi": (15.0, 45.0),
    "bp": (60.0, 140.0),
    "s1": (100.0, 300.0),
    "s2": (40.0, 240.0),
    "s3": (20.0, 100.0),
    "s4": (2.0, 10.0),
    "s5": (3.0, 6.5),
    "s6": (60.0, 140.0),
}

#: Default public threshold(s) on the diabetes response (disease progression after one year):
#: a round number fixed in advance, not a statistic of the records.
DIABETES_THRESHOLDS: tuple[float, ...] = (150.0,)


def load_diabetes(*, bins: int | None = 4,
                  thresholds: object = DIABETES_THRESHOLDS) -> TableDataset:
    """Diabetes data of Efron, Hastie, Johnstone and Tibshirani (442 patients, 10 baseline
    variables, one-year disease progression), with a discrete label for feature selection.

    One record is one patient: age, sex, body-mass index, average blood pressure, six blood
    serum measurements (``s1`` total cholesterol, ``s2`` LDL, ``s3`` HDL, ``s4`` total / HDL,
    ``s5`` log triglycerides, ``s6`` glucose) and the progression score.

    Features are the **raw** values (scikit-learn's ``scaled=False``), not the centred and
    scaled ones, because that scaling uses the mean and standard deviation of the records.

    The label is formed with public thresholds: ``y = number of thresholds t with target >= t``
    (with the default single threshold 150, ``y = 1`` means progression >= 150). With ``bins``
    set, every feature except ``sex`` is cut into ``bins`` equal-width categories on the public
    bounds :data:`DIABETES_BOUNDS` (values outside go to the end bins); ``sex`` becomes the
    codes 0 and 1. Neither the thresholds nor the bounds are computed from the records.

    Parameters
    ----------
    bins : int or None, default=4
        Categories per feature; ``None`` keeps the raw real values.
    thresholds : sequence of float, default=(150.0,)
        Increasing public cut points on the progression score; ``len(thresholds) + 1`` classes.

    Returns
    -------
    TableDataset

    Source: Efron, B., Hastie, T., Johnstone, I. and Tibshirani, R. (2004). Least angle
    regression. *Annals of Statistics* 32(2), as bundled with scikit-learn.
    """
    caller = "load_diabetes"
    try:
        t = np.atleast_1d(np.asarray(thresholds, dtype=float))
    except (TypeError, ValueError):
        raise ParameterTypeError(
            f"The 'thresholds' parameter of {caller} must be a sequence of numbers; got "
            f"{thresholds!r}."
        ) from None
    t = check_finite(t, "thresholds", caller=caller, ndim=1)
    if t.size == 0 or np.any(np.diff(t) <= 0):
        raise ValidationError(
            f"The 'thresholds' parameter of {caller} must be a non-empty increasing sequence of "
            f"numbers; got {thresholds!r}."
        )
    if bins is not None:
        bins = check_int(bins, "bins", low=1, caller=caller)
    d = _sklearn_datasets().load_diabetes(scaled=False)
    names = tuple(d.feature_names)
    X = np.asarray(d.data, dtype=float)
    if bins is not None:
        codes = np.empty(X.shape, dtype=np.int64)
        for j, name in enumerate(names):
            if name == "sex":
                codes[:, j] = (X[:, j] >= 1.5).astype(np.int64)
            else:
                lo, hi = DIABETES_BOUNDS[name]
                codes[:, j] = discretize(X[:, j:j + 1], bins, np.array([lo]), np.array([hi]))[:, 0]
        X = codes
    y = (np.asarray(d.target, dtype=float)[:, None] >= t[None, :]).sum(axis=1).astype(np.int64)
    return TableDataset(
        X=X, y=y, feature_names=names,
        record="one patient (a row of 10 baseline measurements and a progression score)",
        source="Efron et al. (2004) diabetes data, bundled with scikit-learn",
    )


#: Name -> loader of the bundled tables.
TABLES = {"breast_cancer": load_breast_cancer, "diabetes": load_diabetes}


def load_table(name: str, **options: object) -> TableDataset:
    """Load a bundled table by name.

    Parameters
    ----------
    name : {"breast_cancer", "diabetes"}
        Case is ignored and "-" or spaces may stand for "_".
    **options
        Passed to the loader (``bins=``, and ``thresholds=`` for the diabetes data).

    Returns
    -------
    TableDataset
    """
    if not isinstance(name, str):
        raise ParameterTypeError(
            f"The 'name' parameter of load_table must be a string; got {type(name).__name__}."
        )
    key = name.strip().lower().replace("-", "_").replace(" ", "_")
    if key not in TABLES:
        raise ValidationError(
            f"The 'name' parameter of load_table must be one of {sorted(TABLES)}; got {name!r}."
        )
    return TABLES[key](**options)
