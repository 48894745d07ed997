"""PrivateFeatureSelector: choose the features that say most about ``y``, privately."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.feature_selection import SelectorMixin
from sklearn.utils.validation import check_consistent_length, check_is_fitted, column_or_1d

from .._log import verbose
from .._version import __version__
from ..errors import ValidationError
from ..privacy.backends import backend_chosen
from ..tasks import MISSING, build_constraint, build_task
from ..tasks.feature_selection import typed_integer_columns
from ..tasks.release import _checked_select
from ._base import (
    PrivateSelectorMixin,
    as_float,
    bounds_by_name,
    feature_names,
    n_to_select,
    seeded_simulation,
    validate_X,
)


class PrivateFeatureSelector(PrivateSelectorMixin, SelectorMixin, BaseEstimator):
    r"""Differentially private feature selection by mutual information with ``y``.

    ``fit(X, y)`` chooses ``n_features_to_select`` features greedily by the empirical mutual
    information :math:`\hat I(X_S; y)` of the chosen set ``S`` with the label (Krause and
    Guestrin 2005), each step through a private mechanism (the private greedy of Mitrovic et al.
    2017 by default), calibrated to the declared sensitivity of the mutual information when one
    row, label included, is replaced by any other row. ``transform`` keeps the chosen columns.
    Built on :mod:`dpsubmod.tasks` (the ``feature-selection`` task), as ``dpsubmod select
    --task feature-selection`` is.

    **Each fit is a release.** Every call of ``fit`` releases a new selection computed from the
    data and is charged to ``budget`` (its whole ``epsilon``, ``delta``) before any noise is
    drawn; one that does not fit raises :class:`~dpsubmod.BudgetExceededError` and releases
    nothing. scikit-learn's clones (``cross_val_score``, ``GridSearchCV``) share the budget, so a
    5-fold cross-validation is five releases and is charged five times. Cross-validation
    scores, and anything a later Pipeline step learns, are computed from the data without noise
    and are not covered by the guarantee.

    **Public inputs.** ``bins``, ``bounds`` and ``label_thresholds`` are public: fix them from
    outside knowledge (a questionnaire's ranges, a unit's physical limits), never by looking at
    or tuning on the private records, or they leak what the noise protects. Put the selector
    first in a Pipeline, or after data-independent steps only: a fitted scaler in front of it
    makes every row depend on every other row, and the guarantee does not cover that.

    **Every feature needs a declared, public binning** (``bins``): equal-width bins on public
    ``bounds``, explicit edges, or ``"categorical"`` for integer category codes. A column of
    an integer or boolean dtype (a numpy array or DataFrame column; the type is declared by the
    container, not read from the values) is categorical unless ``bins`` says otherwise. A
    column with no rule (for example the real-valued columns of a float array without
    ``bins``) is refused when ``fit`` starts, before anything is charged, with the fix: read as
    codes, every non-integer value would become "missing" and the selection would be close to
    blind. The decision reads only ``bins``, ``bounds`` and the dtypes, never a value, so one
    row cannot change it, provided the dtype is declared too: a dtype that a reader infers from
    the values (``pandas.read_csv`` without ``dtype=``, ``numpy.asarray`` of a list) is as
    private as they are, so declare it there or pass ``bins``. An invalid value in a private
    row (NaN, infinite, text, or a non-integer in a categorical column) becomes the public
    category "missing": a rule that looks at that cell alone, so a bad row never raises (the
    refusal itself would reveal the row). Values outside the bounds or edges fall into the
    edge bins.

    Parameters
    ----------
    n_features_to_select : int, float or None, default=None
        How many features to choose: an integer, a fraction in ``(0, 1]`` of the features, or
        ``None`` for half of them (as :class:`~sklearn.feature_selection.RFE`).
    epsilon : float, default=1.0
        The privacy cost of one fit (``> 0``).
    delta : float, default=0.0
        The delta of one fit, for methods with an ``(epsilon, delta)`` guarantee.
    method : str, default="private_greedy"
        A private method, one of ``dpsubmod.list_methods(private=True)``.
    backend : {"secure", "numpy", "opendp"} or None, default=None
        Where the noise comes from: ``"secure"`` (exact samplers fed by the operating system's
        cryptographic source) for releases that protect people; ``"numpy"`` for seeded,
        reproducible simulations, which are not private releases. ``None``: ``"secure"``
        without ``random_state``, ``"numpy"`` with one, as everywhere in dpsubmod.
    budget : dpsubmod.Budget or None, default=None
        The data set's budget, charged by every fit of this estimator and of its clones. With
        ``None`` nothing bounds the total over repeated fits. An in-memory budget cannot follow
        a copy into another process (``n_jobs > 1``): such a copy refuses to fit; share a
        :class:`~dpsubmod.privacy.FileBudget` there.
    random_state : int, numpy Generator, SeedSequence or None, default=None
        Resolved when ``fit`` starts, never in the constructor: an int gives the same selection
        on every fit, a Generator continues its stream, ``None`` draws fresh entropy. With no
        ``backend`` it makes fits seeded simulations; it seeds the ``"numpy"`` backend only, so
        with ``backend="secure"`` it raises a :class:`~dpsubmod.errors.SeedWarning`.
    verbose : int, default=0
        ``0``: silent. ``1``: log the release (method, epsilon, delta, backend, budget) at INFO
        on standard error through the ``"dpsubmod"`` logger, for the duration of ``fit``;
        ``2``: DEBUG messages too. Messages carry public parameters only.
    bins : int, "categorical", sequence of float, dict or None, default=None
        How each feature becomes categories (public). An int ``B``: ``B`` equal-width bins on
        the column's ``bounds``, for every column with bounds. A sequence of increasing edges
        ``[e0, ..., eB]``: ``B`` bins for every column. ``"categorical"``: every column holds
        integer category codes. A dict from feature name (``feature_names_in_``, or ``x0, x1,
        ...`` for an array) to one of these, per column; its key ``"*"`` gives the rule of the
        columns it does not name. ``None``: only integer-typed columns, as codes.
    bounds : (low, high), sequence of (low, high), dict or None, default=None
        Public range of the columns binned by a count: one pair for every column, one pair per
        feature in the columns' order, or a dict from feature name to ``(low, high)``. Each
        pair finite with ``low < high``; a bound on a column that no count bins is refused
        (it would have no effect).
    label_thresholds : sequence of float or None, default=None
        Public cut points for a numeric ``y`` (the class of a row is the number of thresholds at
        or below its label). Without them ``y`` is a class label: each distinct value is a
        class, and a missing or non-integer numeric label is the "missing" class.

    Attributes
    ----------
    ranking_ : ndarray of shape (n_selected,)
        The chosen features' column indices in the order chosen (as apricot's ``ranking``; not
        RFE's per-feature rank). ``transform`` keeps ``X``'s column order.
    support_ : ndarray of bool of shape (n_features_in_,)
        The mask of chosen features (also ``get_support()``).
    n_features_to_select_ : int
        ``n_features_to_select`` resolved.
    privacy_ : PrivacyReport
        What the fit spent, under which composition, neighbouring relation and backend.
    release_ : dict
        The release: selection, privacy statement and public parameters only (what may be
        published; no value computed from the data without noise).
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Set when ``X`` has string column names (a DataFrame).

    See Also
    --------
    PrivateFacilityLocationSelector : exemplars from public candidates.
    dpsubmod.tasks.build_task : the task this estimator builds.

    Notes
    -----
    The mutual information is not submodular in general, so greedy is a heuristic here; the
    privacy guarantee does not depend on it. The number of rows is treated as public (the
    neighbouring relation replaces one row).

    scikit-learn's estimator checks (``parametrize_with_checks``, and the set_output and
    feature-name checks) pass with no exception on the numpy backend (``backend="numpy"``, or
    no backend with a ``random_state``, which the checks set). On the secure backend,
    ``check_fit_idempotent`` may fail: its noise comes from the operating system, which
    ``random_state`` does not seed, so two fits may choose differently. The estimator then
    declares the ``non_deterministic`` tag
    (:func:`~dpsubmod.estimators.expected_failed_checks`).

    References
    ----------
    A. Krause and C. Guestrin, "Near-optimal nonmyopic value of information in graphical
    models", UAI 2005. M. Mitrovic, M. Bun, A. Krause and A. Karbasi, "Differentially private
    submodular maximization: data summarization in disguise", ICML 2017.

    Examples
    --------
    >>> import numpy as np
    >>> from dpsubmod.estimators import PrivateFeatureSelector
    >>> rng = np.random.default_rng(0)
    >>> X = rng.integers(0, 3, size=(2000, 6))
    >>> y = (X[:, 1] + X[:, 4] + rng.integers(0, 2, size=2000) > 2).astype(int)
    >>> sel = PrivateFeatureSelector(2, epsilon=2.0, backend="numpy", random_state=0).fit(X, y)
    >>> sorted(sel.ranking_.tolist()), sel.transform(X).shape
    ([1, 4], (2000, 2))
    >>> print(sel.privacy_.epsilon)
    2.0
    """

    def __init__(self, n_features_to_select: int | float | None = None, *,
                 epsilon: float = 1.0, delta: float = 0.0, method: str = "private_greedy",
                 backend: str | None = None, budget: Any = None, random_state: Any = None,
                 verbose: int = 0,
                 bins: Any = None, bounds: Any = None,
                 label_thresholds: Any = None) -> None:
        self.n_features_to_select = n_features_to_select
        self.epsilon = epsilon
        self.delta = delta
        self.method = method
        self.backend = backend
        self.budget = budget
        self.random_state = random_state
        self.verbose = verbose
        self.bins = bins
        self.bounds = bounds
        self.label_thresholds = label_thresholds

    _fitted_attrs = ("ranking_", "support_", "n_features_to_select_", "privacy_", "release_")

    def fit(self, X: Any, y: Any = None) -> PrivateFeatureSelector:
        """Choose the features privately: one release, charged to ``budget``.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            The private records, one row per person.
        y : array-like of shape (n_samples,)
            The label the features should predict (private, like ``X``).

        Returns
        -------
        self
        """
        with verbose(self.verbose):
            return self._fit(X, y)

    def _fit(self, X: Any, y: Any) -> PrivateFeatureSelector:
        caller = type(self).__name__
        self._forget()
        eps, delta, method, backend, budget, rng = self._release_params()
        if y is None:
            raise ValidationError(
                f"{caller} requires y to be passed, but the target y is None. Pass the labels "
                "the features should predict: fit(X, y).")
        # with one row the mutual information is always 0 (the number of rows is public)
        raw = X
        X = validate_X(self, X, reset=True, min_samples=2)
        y = column_or_1d(y, warn=True)
        check_consistent_length(X, y)
        names = feature_names(self)
        k = n_to_select(self.n_features_to_select, len(names), "n_features_to_select",
                        "features", caller)
        bounds = bounds_by_name(self.bounds, names, caller)
        # integer and boolean dtypes declare codes; read from the container, not the values
        codes = typed_integer_columns(raw, names)
        bins = _bins_by_name(self.bins, bounds, names, codes)
        label = _free_name("y", names)
        records: dict[str, np.ndarray] = dict(zip(names, as_float(X).T))
        records[label] = _labels(y, self.label_thresholds)
        task = build_task("feature-selection", records, label=label, columns=names,
                          bins=bins, bounds=bounds,
                          label_thresholds=self.label_thresholds)
        spec = build_constraint(task, k=k, k_name="n_features_to_select")
        with backend_chosen():  # chosen by _release_params, warned there
            # epsilon and delta were checked by _release_params: not again below it
            rel = _checked_select(task, spec, epsilon=eps, delta=delta, method=method,
                                  backend=backend, budget=budget, rng=rng, options=None,
                                  caller=caller)
        ranking = np.asarray(rel.selection, dtype=np.intp)
        support = np.zeros(len(names), dtype=bool)
        support[ranking] = True
        self.ranking_ = ranking
        self.support_ = support
        self.n_features_to_select_ = k
        self.privacy_ = rel.privacy
        self.release_ = rel.to_dict(__version__)
        return self

    def _get_support_mask(self) -> np.ndarray:
        check_is_fitted(self)
        return self.support_

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        # Invalid cells of private rows are handled by the task's rule, never refused.
        tags.input_tags.allow_nan = True
        tags.input_tags.string = True
        tags.target_tags.required = True
        tags.non_deterministic = not seeded_simulation(self)
        return tags


def _bins_by_name(bins: Any, bounds: dict[str, Any] | None, names: list[str],
                  codes: list[str]) -> Any:
    """``bins`` for the task, with integer-typed columns declared categorical where ``bins``
    gives them no rule (a count bins only the columns with bounds)."""
    if not codes or isinstance(bins, bool) or (
            bins is not None and not isinstance(bins, (int, np.integer, Mapping))):
        return bins  # one rule for every column ("categorical", edges), or nothing to add
    if isinstance(bins, Mapping):
        per = {str(k): v for k, v in bins.items()}
    elif bins is None:
        per = {}
    else:
        per = {n: bins for n in names if bounds is not None and n in bounds}
    others = per.get("*")
    for n in codes:
        # a count for all bins only the bounded columns; other rules for all apply as given
        if n not in per and (others is None or (_is_count(others)
                                                and n not in (bounds or {}))):
            per[n] = "categorical"
    return per


def _is_count(rule: Any) -> bool:
    return isinstance(rule, (int, np.integer)) and not isinstance(rule, bool)


def _free_name(base: str, taken: list[str]) -> str:
    name = base
    while name in taken:
        name += "_"
    return name


def _labels(y: np.ndarray, thresholds: Any) -> np.ndarray:
    """Class codes ``0, 1, ...`` (or float values for public thresholds); invalid -> missing.

    The codes only relabel the classes, which leaves the mutual information unchanged, so the
    declared sensitivity holds whatever the labels are.
    """
    if thresholds is not None:
        return as_float(y)
    y = np.asarray(y)
    codes = np.full(y.shape[0], MISSING, dtype=np.int64)
    if y.dtype.kind in "biuf":
        v = y.astype(np.float64)
        with np.errstate(invalid="ignore"):
            ok = np.isfinite(v) & (v == np.round(v))
        codes[ok] = np.unique(v[ok], return_inverse=True)[1]
        return codes
    seen: dict[Any, int] = {}
    for i, v in enumerate(y.tolist()):
        if v is None or (isinstance(v, float) and v != v):
            continue
        try:
            codes[i] = seen.setdefault(v, len(seen))
        except TypeError:  # an unhashable label: its own text decides its class
            codes[i] = seen.setdefault(repr(v), len(seen))
    return codes
