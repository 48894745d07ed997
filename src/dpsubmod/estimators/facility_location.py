"""PrivateFacilityLocationSelector: exemplars from public candidates, chosen privately."""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.utils._set_output import _get_output_config
from sklearn.utils.validation import check_is_fitted

from .._log import verbose
from .._version import __version__
from ..errors import ParameterTypeError, ValidationError
from ..privacy.backends import backend_chosen
from ..tasks import build_constraint, build_task
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

#: Largest public grid (points per axis to the power of the number of features).
MAX_GRID = 100_000

_TRANSFORM_ROWS = ("transform returns the chosen public candidates (n_candidates_to_select "
                   "rows), not one row per record, as apricot's transform returns the chosen "
                   "rows")


class PrivateFacilityLocationSelector(PrivateSelectorMixin, OneToOneFeatureMixin,
                                      TransformerMixin, BaseEstimator):
    r"""Differentially private exemplar selection: facility location over public candidates.

    ``fit(X)`` chooses ``n_candidates_to_select`` of the **public** candidate points that serve
    the private records ``X`` best, maximizing

    .. math:: f(S) = \frac1N \sum_{i=1}^N \max_{j \in S} s(x_i, c_j),

    with a Gaussian similarity :math:`s = \exp(-\|x - c\|^2 / (2h^2))` or a truncated
    negative distance :math:`\max(0, D - \|x - c\|)` (Mitrovic, Bun, Krause and Karbasi 2017,
    private facility location), each greedy step through a private mechanism calibrated to the
    declared sensitivity ``s_max / N`` (one row replaced by any other). It is apricot's
    ``FacilityLocationSelection(k).fit(X)`` made private, with one difference the privacy
    forces: the exemplars are chosen from public candidates, never from the rows of ``X``
    (releasing a row would publish that person's record). ``transform`` returns the chosen
    candidates. Built on :mod:`dpsubmod.tasks` (the ``facility-location`` task).

    **Each fit is a release.** Every call of ``fit`` releases a new selection computed from the
    records and is charged to ``budget`` (its whole ``epsilon``, ``delta``) before any noise is
    drawn; one that does not fit raises :class:`~dpsubmod.BudgetExceededError` and releases
    nothing. scikit-learn's clones (``cross_val_score``, ``GridSearchCV``) share the budget, so
    a 5-fold cross-validation is five releases and is charged five times. :meth:`score` is
    computed from the records without noise and is not covered by the guarantee.

    **Public inputs.** ``candidates`` (or ``grid`` with ``bounds``), ``bounds``, ``bandwidth``
    and ``radius`` are public: fix them from outside knowledge (a map, the sites that exist),
    never from the private records or by tuning them on them. Candidates are matched to the
    columns of ``X`` by name when ``X`` is a DataFrame (the candidates must then be a DataFrame
    with those columns), by position when both are arrays. Put the selector first in a
    Pipeline, or after data-independent steps only.

    Records outside public ``bounds`` are clipped to them; a record with an invalid coordinate
    (NaN, infinite, text) follows ``invalid``: ``"drop"`` (it counts in ``N`` and contributes
    nothing) or ``"impute"`` (the centre of the bounds). Both rules look at that row alone, so a
    bad row never raises.

    Parameters
    ----------
    n_candidates_to_select : int, float or None, default=None
        How many candidates to choose: an integer, a fraction in ``(0, 1]`` of the candidates, or
        ``None`` for half of them (apricot's ``n_samples``).
    candidates : array-like or DataFrame of shape (n_candidates, n_features), default=None
        The public points to choose from, in the coordinates of ``X``. Exactly one of
        ``candidates`` and ``grid`` is required.
    grid : int or dict, default=None
        A public grid of cell centres on ``bounds`` instead of ``candidates``: points per axis
        (one int for every column, or a dict from column name to int); needs ``bounds`` for
        every column. At most 100,000 points.
    bounds : (low, high), sequence of (low, high), dict or None, default=None
        Public box of the records: one pair for every column, one pair per column in the
        columns' order (e.g. ``[(40.6, 40.9), (-74.1, -73.8)]``), or a dict from column name
        (``feature_names_in_``, or ``x0, x1, ...`` for an array) to ``(low, high)``. Each pair
        finite with ``low < high``; anything else is refused naming ``bounds``.
    similarity : {"gaussian", "negative-distance"}, default="gaussian"
    bandwidth : float or None, default=None
        ``h`` of the Gaussian similarity; default: the median distance between neighbouring
        candidates (computed from the public candidates only).
    radius : float or None, default=None
        ``D`` of the negative-distance similarity; default: the diameter of the candidates'
        bounding box.
    invalid : {"drop", "impute"}, default="drop"
        The rule for a record with an invalid coordinate.
    epsilon : float, default=1.0
        The privacy cost of one fit (``> 0``).
    delta : float, default=0.0
        The delta of one fit, for methods with an ``(epsilon, delta)`` guarantee.
    method : str, default="private_greedy"
        A private method, one of ``dpsubmod.list_methods(private=True)``.
    backend : {"secure", "numpy", "opendp"} or None, default=None
        ``None``: ``"secure"`` without ``random_state`` (a release that protects people),
        ``"numpy"`` with one (a seeded, reproducible simulation, not a private release), as
        everywhere in dpsubmod. ``"secure"``, ``"opendp"`` and ``"numpy"`` pick a backend.
    budget : dpsubmod.Budget or None, default=None
        The data set's budget, charged by every fit of this estimator and of its clones. An
        in-memory budget cannot follow a copy into another process (``n_jobs > 1``): such a
        copy refuses to fit; share a :class:`~dpsubmod.privacy.FileBudget` there.
    random_state : int, numpy Generator, SeedSequence or None, default=None
        Resolved when ``fit`` starts, never in the constructor: an int gives the same selection
        on every fit, a Generator continues its stream, ``None`` draws fresh entropy. With no
        ``backend`` it makes fits seeded simulations; it seeds the ``"numpy"`` backend only, so
        with ``backend="secure"`` it raises a :class:`~dpsubmod.errors.SeedWarning`.
    verbose : int, default=0
        ``0``: silent. ``1``: log the release (method, epsilon, delta, backend, budget) at INFO
        on standard error through the ``"dpsubmod"`` logger, for the duration of ``fit``;
        ``2``: DEBUG messages too. Messages carry public parameters only.

    Attributes
    ----------
    ranking_ : ndarray of shape (n_selected,)
        Indices of the chosen candidates, in the order chosen (apricot's ``ranking``).
    exemplars_ : ndarray of shape (n_selected, n_features_in_)
        The chosen candidates, in the order chosen (what ``transform`` returns).
    candidates_ : ndarray of shape (n_candidates, n_features_in_)
        The public candidates (the grid, when ``grid`` was given).
    n_candidates_to_select_ : int
    privacy_ : PrivacyReport
        What the fit spent, under which composition, neighbouring relation and backend.
    release_ : dict
        The release: selection, privacy statement and public parameters only.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Set when ``X`` has string column names (a DataFrame).

    See Also
    --------
    PrivateFeatureSelector : features by mutual information with a label.
    dpsubmod.functions.FacilityLocation : the objective, for use with :func:`dpsubmod.maximize`.

    Notes
    -----
    scikit-learn's estimator checks that this estimator fails by design
    (:func:`~dpsubmod.estimators.expected_failed_checks`), all because ``transform`` returns
    the chosen candidates rather than one row per record:

    * ``check_transformer_general`` (also with read-only memmapped data),
      ``check_transformer_data_not_an_array``: they require ``transform(X)`` and
      ``fit_transform(X)`` to have one row per row of ``X``;
    * ``check_methods_subset_invariance`` and ``check_methods_sample_order_invariance``:
      they compare ``transform`` of a subset or a permutation of ``X`` with the matching rows
      of ``transform(X)``;
    * ``check_set_output_transform_pandas``, ``check_global_output_transform_pandas`` (not
      among the checks ``parametrize_with_checks`` generates): they expect the DataFrame
      output to carry ``X``'s row index. Here it is indexed by the chosen candidates.

    On the secure backend, ``check_fit_idempotent`` fails too: its noise comes from the
    operating system, which ``random_state`` does not seed, so two fits may choose differently.
    The estimator then declares the ``non_deterministic`` tag.

    References
    ----------
    M. Mitrovic, M. Bun, A. Krause and A. Karbasi, "Differentially private submodular
    maximization: data summarization in disguise", ICML 2017. J. Schreiber, J. Bilmes and
    W. S. Noble, "apricot: submodular selection for data summarization in Python", JMLR 2020.

    Examples
    --------
    >>> import numpy as np
    >>> from dpsubmod.estimators import PrivateFacilityLocationSelector
    >>> rng = np.random.default_rng(0)
    >>> X = np.concatenate([rng.normal(0.25, 0.05, (500, 2)), rng.normal(0.75, 0.05, (500, 2))])
    >>> sel = PrivateFacilityLocationSelector(2, grid=2, bounds=(0, 1), epsilon=1.0,
    ...                                       backend="numpy", random_state=0).fit(X)
    >>> sorted(sel.transform(X).tolist())
    [[0.25, 0.25], [0.75, 0.75]]
    """

    _expected_failed_checks = {
        "check_transformer_general": _TRANSFORM_ROWS,
        "check_transformer_data_not_an_array": _TRANSFORM_ROWS,
        "check_methods_subset_invariance": _TRANSFORM_ROWS,
        "check_methods_sample_order_invariance": _TRANSFORM_ROWS,
        # not among the generated checks; run explicitly by dpsubmod's tests
        "check_set_output_transform_pandas": _TRANSFORM_ROWS,
        "check_global_output_transform_pandas": _TRANSFORM_ROWS,
    }
    _fitted_attrs = ("ranking_", "exemplars_", "candidates_", "n_candidates_to_select_",
                     "privacy_", "release_", "_public")

    def __init__(self, n_candidates_to_select: int | float | None = None, *,
                 candidates: Any = None, grid: Any = None, bounds: Any = None,
                 similarity: str = "gaussian", bandwidth: float | None = None,
                 radius: float | None = None, invalid: str = "drop", epsilon: float = 1.0,
                 delta: float = 0.0, method: str = "private_greedy", backend: str | None = None,
                 budget: Any = None, random_state: Any = None, verbose: int = 0) -> None:
        self.n_candidates_to_select = n_candidates_to_select
        self.candidates = candidates
        self.grid = grid
        self.bounds = bounds
        self.similarity = similarity
        self.bandwidth = bandwidth
        self.radius = radius
        self.invalid = invalid
        self.epsilon = epsilon
        self.delta = delta
        self.method = method
        self.backend = backend
        self.budget = budget
        self.random_state = random_state
        self.verbose = verbose

    def fit(self, X: Any, y: Any = None) -> PrivateFacilityLocationSelector:
        """Choose the exemplars privately: one release, charged to ``budget``.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            The private records, one row per person.
        y : None
            Ignored (present for the Pipeline API).

        Returns
        -------
        self
        """
        with verbose(self.verbose):
            return self._fit(X, y)

    def _fit(self, X: Any, y: Any) -> PrivateFacilityLocationSelector:
        caller = type(self).__name__
        self._forget()
        eps, delta, method, backend, budget, rng = self._release_params()
        X = validate_X(self, X, reset=True)
        names = feature_names(self)
        bounds = bounds_by_name(self.bounds, names, caller)
        C, labels = self._public_points(names, bounds, caller)
        public = {"bounds": bounds, "similarity": self.similarity,
                  "bandwidth": self.bandwidth, "radius": self.radius}
        task = _task(X, names, C, public, self.invalid)
        # later scores use the same public inputs, with the defaults the task resolved
        public.update({k: task.params[k] for k in ("bandwidth", "radius") if k in task.params})
        k = n_to_select(self.n_candidates_to_select, C.shape[0], "n_candidates_to_select",
                        "candidates", caller)
        spec = build_constraint(task, k=k, k_name="n_candidates_to_select")
        with backend_chosen():  # chosen by _release_params, warned there
            # epsilon and delta were checked by _release_params: not again below it
            rel = _checked_select(task, spec, epsilon=eps, delta=delta, method=method,
                                  backend=backend, budget=budget, rng=rng, options=None,
                                  caller=caller)
        ranking = np.asarray(rel.selection, dtype=np.intp)
        self.ranking_ = ranking
        self.exemplars_ = C[ranking]
        self.candidates_ = C
        self.n_candidates_to_select_ = k
        self.privacy_ = rel.privacy
        self.release_ = rel.to_dict(__version__)
        self._public = {**public, "labels": None if labels is None else labels[ranking]}
        return self

    def transform(self, X: Any) -> Any:
        """The chosen candidates (``exemplars_``), whatever the rows of ``X``.

        ``X`` is only checked against the fitted columns: as apricot's ``transform`` returns
        the chosen rows, this returns the chosen public points, ``n_candidates_to_select`` rows
        with ``X``'s columns. With ``set_output(transform="pandas")`` it is a DataFrame indexed
        by the candidates' labels (their DataFrame index, else their positions).
        """
        check_is_fitted(self)
        validate_X(self, X, reset=False)
        out = self.exemplars_.copy()
        if _get_output_config("transform", self)["dense"] == "pandas":
            import pandas as pd

            labels = self._public["labels"]
            index = pd.Index(self.ranking_ if labels is None else labels)
            return pd.DataFrame(out, columns=self.get_feature_names_out(), index=index)
        return out

    def score(self, X: Any, y: Any = None) -> float:
        """The objective of the chosen exemplars on ``X`` (NOT private: no noise).

        The average over the rows of ``X`` of the best similarity to a chosen candidate, under
        the fitted public inputs (bounds, similarity, bandwidth or radius, invalid rule). For
        model selection on held-out records, e.g. ``cross_val_score(pipe, X)``; the number is
        computed from the records without noise and is not covered by the guarantee.
        """
        check_is_fitted(self)
        X = validate_X(self, X, reset=False)
        task = _task(X, feature_names(self), self.candidates_,
                     {k: v for k, v in self._public.items() if k != "labels"}, self.invalid)
        return float(task.f(self.ranking_.tolist()))

    def _public_points(self, names: list[str], bounds: dict[str, Any] | None, caller: str
                       ) -> tuple[np.ndarray, np.ndarray | None]:
        """The public candidates, in the columns of ``X``, and their labels (or None)."""
        if (self.candidates is None) == (self.grid is None):
            raise ValidationError(
                f"{caller} needs public candidate points: pass candidates= (the points to "
                "choose from, in X's columns) or grid= with bounds=, not both. They are never "
                "taken from the private records.")
        if self.grid is not None:
            return _grid(self.grid, names, bounds, caller), None
        return _candidates(self.candidates, names, hasattr(self, "feature_names_in_"), caller)

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        # Invalid cells of private rows are handled by the task's rule, never refused.
        tags.input_tags.allow_nan = True
        tags.input_tags.string = True
        tags.non_deterministic = not seeded_simulation(self)
        return tags


def _task(X: np.ndarray, names: list[str], C: np.ndarray, public: Mapping[str, Any],
          invalid: str) -> Any:
    records = dict(zip(names, as_float(X).T))
    cands = dict(zip(names, C.T))
    return build_task("facility-location", records, columns=names, candidates=cands,
                      invalid=invalid, **{k: v for k, v in public.items() if v is not None})


def _candidates(candidates: Any, names: list[str], named: bool, caller: str
                ) -> tuple[np.ndarray, np.ndarray | None]:
    frame = hasattr(candidates, "columns") and hasattr(candidates, "to_numpy")
    if named and not frame:
        raise ValidationError(
            f"{caller}: X is a DataFrame, so candidates must be a DataFrame with the same "
            f"column names ({', '.join(names)}); public inputs are matched to the records by "
            "name, never by position.")
    if frame and not named:
        raise ValidationError(
            f"{caller}: candidates is a DataFrame but X has no column names; give X as a "
            "DataFrame with the candidates' columns, or candidates as an array with X's "
            "columns in order.")
    if frame:
        cols = [str(c) for c in candidates.columns]
        missing = [n for n in names if n not in cols]
        if missing:
            raise ValidationError(
                f"{caller}: candidates have no column {', '.join(map(repr, missing))} (their "
                f"columns: {', '.join(cols)}); they need one per column of X, with the same "
                "name.")
        by_name = dict(zip(cols, candidates.columns))
        values = np.column_stack([np.asarray(candidates[by_name[n]].to_numpy(), dtype=float)
                                  for n in names])
        labels = np.asarray(candidates.index)
    else:
        try:
            values = np.asarray(candidates, dtype=float)
        except (TypeError, ValueError):
            raise ParameterTypeError(
                f"The 'candidates' parameter of {caller} must be a 2-d array of numbers or a "
                f"DataFrame; got {type(candidates).__name__}.") from None
        labels = None
        if values.ndim != 2 or values.shape[1] != len(names):
            raise ValidationError(
                f"The 'candidates' parameter of {caller} must have shape (n_candidates, "
                f"{len(names)}): one column per column of X; got shape {values.shape}.")
    if values.shape[0] == 0 or not np.isfinite(values).all():
        raise ValidationError(
            f"The 'candidates' parameter of {caller} must hold at least one point, all finite "
            "(they are public: fix the table).")
    return values, labels


def _grid(grid: Any, names: list[str], bounds: dict[str, Any] | None, caller: str
          ) -> np.ndarray:
    if isinstance(grid, Mapping):
        unknown = [str(g) for g in grid if str(g) not in names]
        if unknown or len(grid) != len(names):
            raise ValidationError(
                f"The 'grid' parameter of {caller} must give points per axis for every column "
                f"of X by name ({', '.join(names)}), or one int for all; got {dict(grid)!r}.")
        per = {str(k): v for k, v in grid.items()}
    else:
        per = {n: grid for n in names}
    for n, m in per.items():
        if isinstance(m, bool) or not isinstance(m, numbers.Integral) or m < 1:
            raise ValidationError(
                f"The 'grid' parameter of {caller} must be a positive number of points per "
                f"axis; got {m!r} for {n!r}.")
    missing = [n for n in names if bounds is None or n not in bounds]
    if missing:
        raise ValidationError(
            f"{caller}: a grid needs public bounds for every column (missing "
            f"{', '.join(missing)}): bounds=(low, high) for all, or a dict per column, fixed "
            "without looking at the records.")
    total = int(np.prod([float(per[n]) for n in names]))
    if total > MAX_GRID:
        raise ValidationError(
            f"{caller}: the grid has {total} points (points per axis to the power of "
            f"{len(names)} columns), more than {MAX_GRID}; use fewer points per axis or pass "
            "candidates=.")
    axes = []
    for n in names:
        lo, hi = (float(v) for v in bounds[n])  # type: ignore[index]
        m = int(per[n])
        axes.append(lo + (np.arange(m) + 0.5) * (hi - lo) / m)
    mesh = np.meshgrid(*axes, indexing="ij")
    return np.column_stack([a.ravel() for a in mesh])
