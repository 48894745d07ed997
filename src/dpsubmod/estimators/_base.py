"""What the private selectors share: release parameters, the budget across clones, inputs."""

from __future__ import annotations

import numbers
import weakref
from collections.abc import Mapping
from typing import Any

import numpy as np
from sklearn.utils.validation import validate_data

from .._cells import to_float
from .._log import get_logger
from .._rng import check_rng
from .._validation import check_delta, check_epsilon
from ..errors import ParameterTypeError, ValidationError
from ..offline.registry import get_method, list_methods
from ..privacy import Ledger
from ..privacy.backends import choose_backend

_log = get_logger(__name__)

#: Noise backends a caller may name (a method may support fewer; see its registry entry).
_BACKENDS = ("secure", "numpy", "opendp")

#: In-memory budgets that reached this process through pickle inside a selector, by id. The
#: mark is on the budget object, so every clone that shares it refuses too.
_COPIED_BUDGETS: weakref.WeakValueDictionary[int, Any] = weakref.WeakValueDictionary()


def seeded_simulation(estimator: Any) -> bool:
    """Whether fits of ``estimator`` repeat: they draw on the numpy backend (``backend="numpy"``,
    or no backend with a ``random_state``) from a seed."""
    backend = getattr(estimator, "backend", None)
    if backend is None:
        return getattr(estimator, "random_state", None) is not None
    return backend == "numpy"


def expected_failed_checks(estimator: Any) -> dict[str, str]:
    """scikit-learn estimator checks that ``estimator`` fails by design, with the reason.

    Pass it to :func:`sklearn.utils.estimator_checks.parametrize_with_checks` as
    ``expected_failed_checks=`` (or its value to ``check_estimator``). The reasons are also
    listed in each estimator's docstring.
    """
    out = dict(getattr(estimator, "_expected_failed_checks", {}))
    if not seeded_simulation(estimator):
        out["check_fit_idempotent"] = (
            "the secure backend draws its noise from the operating system's cryptographic "
            "source, which random_state does not seed, so two fits may choose differently (the "
            "estimator declares the non_deterministic tag; this check does not consult it)")
    return out


class PrivateSelectorMixin:
    """Release parameters, a budget shared by clones, and the fitted state of a selector.

    Subclasses store ``epsilon``, ``delta``, ``method``, ``backend``, ``budget`` and
    ``random_state`` in ``__init__`` unchanged; :meth:`_release_params` checks them when ``fit``
    starts.
    """

    #: check name -> why the estimator fails it by design (see expected_failed_checks)
    _expected_failed_checks: dict[str, str] = {}
    #: the attributes a successful fit sets (removed when a refit starts)
    _fitted_attrs: tuple[str, ...] = ("ranking_", "privacy_", "release_")

    def __sklearn_clone__(self) -> Any:
        # scikit-learn's clone deep-copies every parameter, so a cloned selector would charge a
        # copy of the budget and the caller's budget would never see the fits of
        # cross-validation or grid search. The budget is the caller's object: clones share it.
        new = super().__sklearn_clone__()  # type: ignore[misc]
        new.budget = self.budget
        return new

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)  # type: ignore[misc]
        budget = state.get("budget")
        # An in-memory budget that went through pickle (a worker process of n_jobs > 1, a
        # deepcopy, a saved model) is a copy: charges to it never reach the caller's budget.
        # A FileBudget is shared through its file and stays usable.
        if budget is not None and getattr(budget, "path", None) is None:
            _COPIED_BUDGETS[id(budget)] = budget

    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, "ranking_")

    def _forget(self) -> None:
        """Drop the last fit's selection, so a refit that fails leaves the estimator unfitted."""
        for name in self._fitted_attrs:
            if name in self.__dict__:
                delattr(self, name)

    def _release_params(self) -> tuple[float, float, str, str, Any, Any]:
        """``(epsilon, delta, method, backend, budget, rng)``, checked before any data is read."""
        caller = type(self).__name__
        eps = check_epsilon(self.epsilon, "epsilon", caller=caller)  # type: ignore[attr-defined]
        delta = check_delta(self.delta, "delta", caller=caller)  # type: ignore[attr-defined]
        method = _check_method(self.method, caller)  # type: ignore[attr-defined]
        _check_backend(self.backend, method, caller)  # type: ignore[attr-defined]
        budget = self._check_budget(caller)
        rng = _check_random_state(self.random_state, caller)  # type: ignore[attr-defined]
        backend = self._backend(method, caller)
        _log.info("%s.fit: one release of (epsilon=%g, delta=%g) by %s on the %s backend%s",
                  caller, eps, delta, method, backend,
                  "" if budget is None else ", charged to the budget")
        return eps, delta, method, backend, budget, rng

    def _backend(self, method: str, caller: str) -> str:
        """The backend of a fit, by the library's one default rule: no ``random_state``, the
        secure backend; a ``random_state``, a numpy simulation (and a warning when it is given
        with a secure backend, which it does not seed)."""
        return choose_backend(self.backend, self.random_state,  # type: ignore[attr-defined]
                              caller=caller, supported=get_method(method).backends,
                              seed_name="random_state", stacklevel=5)

    def _check_budget(self, caller: str) -> Any:
        budget = self.budget  # type: ignore[attr-defined]
        if budget is None:
            return None
        if not isinstance(budget, Ledger):
            raise ParameterTypeError(
                f"The 'budget' parameter of {caller} must be a dpsubmod.Budget (one per data "
                f"set, e.g. dpsubmod.Budget(2.0)) or None; got {type(budget).__name__}.")
        if _COPIED_BUDGETS.get(id(budget)) is budget:
            raise ValidationError(
                f"This {caller} was copied by pickling (for example sent to a worker process "
                "by n_jobs > 1, or deep-copied) together with its in-memory Budget, so its "
                "charges would go to a copy and never reach your budget. Fit in one process "
                "(n_jobs=1), share a dpsubmod.privacy.FileBudget (charged through its file), or "
                "set_params(budget=...) with the live budget.")
        return budget


def _check_method(method: object, caller: str) -> str:
    names = list_methods(private=True)
    if not isinstance(method, str) or method not in names:
        raise ValidationError(
            f"The 'method' parameter of {caller} must be a private method, one of {names} "
            f"(dpsubmod.list_methods(private=True)); got {method!r}.")
    return method


def _check_backend(backend: object, method: str, caller: str) -> str:
    if backend is not None and (not isinstance(backend, str) or backend not in _BACKENDS):
        raise ValidationError(
            f"The 'backend' parameter of {caller} must be None (secure without random_state, "
            f"a seeded numpy simulation with one) or one of {list(_BACKENDS)}: 'secure' "
            "for a release that protects people, 'numpy' for a seeded simulation; got "
            f"{backend!r}.")
    spec = get_method(method)
    if backend is not None and backend not in spec.backends:
        raise ValidationError(
            f"The method {method!r} of {caller} draws its noise on the "
            f"{' or '.join(spec.backends)} backend only; pass backend={spec.backends[0]!r} or "
            "another method.")
    return backend


def _check_random_state(random_state: object, caller: str) -> Any:
    """``random_state`` as the library's ``rng`` (validated; resolved by the method it feeds)."""
    accepted = "None, an int >= 0, a numpy Generator or a numpy SeedSequence"
    if isinstance(random_state, np.random.RandomState):
        raise ParameterTypeError(
            f"The 'random_state' parameter of {caller} must be {accepted}; got a legacy "
            "RandomState. Pass an int seed or np.random.default_rng(seed).")
    try:
        check_rng(random_state, caller)
    except ParameterTypeError:
        raise ParameterTypeError(
            f"The 'random_state' parameter of {caller} must be {accepted}; got "
            f"{random_state!r}.") from None
    return random_state


def validate_X(estimator: Any, X: Any, *, reset: bool, min_samples: int = 1) -> np.ndarray:
    """``X`` as a 2-d array, feature names and counts recorded or checked.

    Values are not checked: NaN, infinite and non-numeric cells of private rows are invalid
    values that the task's declared rule handles, so a bad row never raises.
    """
    return validate_data(estimator, X, reset=reset, dtype=None, accept_sparse=False,
                         ensure_all_finite=False, ensure_min_samples=min_samples)


def as_float(X: np.ndarray) -> np.ndarray:
    """float64 values under the cell rules of the one reader of private tables
    (:mod:`dpsubmod._cells`): a cell that is not a finite number (text, None, NaN) is NaN."""
    return to_float(X)


def feature_names(estimator: Any) -> list[str]:
    """The fitted input's column names, or ``x0, x1, ...`` (scikit-learn's names) without."""
    names = getattr(estimator, "feature_names_in_", None)
    if names is not None:
        return [str(n) for n in names]
    return [f"x{i}" for i in range(estimator.n_features_in_)]


def bounds_by_name(bounds: object, names: list[str], caller: str
                   ) -> dict[str, tuple[float, float]] | None:
    """Public bounds per column name, checked: ``{name: (low, high)}``.

    ``bounds`` is one ``(low, high)`` pair for every column, a sequence with one pair per
    column (in the columns' order), or a mapping from column name to a pair (columns it does
    not name have no bounds). Every pair must be finite with ``low < high``.
    """
    if bounds is None:
        return None
    shape = ("one (low, high) pair for every feature, a sequence with one (low, high) pair per "
             f"feature ({len(names)} here), or a dict from feature name to (low, high), e.g. "
             "{'age': (18, 90)}; fix them from public knowledge, never from the records")
    if isinstance(bounds, Mapping):
        unknown = [str(k) for k in bounds if str(k) not in names]
        if unknown:
            raise ValidationError(
                f"The 'bounds' parameter of {caller} names {', '.join(map(repr, unknown))}, "
                f"which is not a feature of X (its features: {', '.join(names)}). Fix the "
                "name.")
        pairs = {str(k): v for k, v in bounds.items()}
    elif _is_pair(bounds):
        pairs = {n: bounds for n in names}
    elif (not isinstance(bounds, (str, bytes)) and hasattr(bounds, "__len__")
          and all(_is_pair(p) for p in bounds)):  # type: ignore[union-attr]
        seq = list(bounds)  # type: ignore[call-overload]
        if len(seq) != len(names):
            raise ValidationError(
                f"The 'bounds' parameter of {caller} has {len(seq)} (low, high) pairs; X has "
                f"{len(names)} features. Pass {shape}.")
        pairs = dict(zip(names, seq))
    else:
        raise ParameterTypeError(f"The 'bounds' parameter of {caller} must be {shape}. Got "
                                 f"{bounds!r}.")
    out = {}
    for name, pair in pairs.items():
        if not _is_pair(pair):
            raise ParameterTypeError(
                f"The 'bounds' parameter of {caller} must give two numbers (low, high) for "
                f"{name!r}; got {pair!r}.")
        lo, hi = float(pair[0]), float(pair[1])  # type: ignore[index]
        if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
            raise ValidationError(
                f"The 'bounds' parameter of {caller} must give finite bounds with low < high "
                f"for {name!r}; got ({lo:g}, {hi:g}).")
        out[name] = (lo, hi)
    return out


def _is_pair(v: object) -> bool:
    """Two real numbers (a tuple, a list or an array of two)."""
    if isinstance(v, (str, bytes)) or not hasattr(v, "__len__"):
        return False
    try:
        items = list(v)  # type: ignore[call-overload]
    except TypeError:
        return False
    return len(items) == 2 and all(
        isinstance(x, numbers.Real) and not isinstance(x, (bool, np.bool_)) for x in items)


def n_to_select(value: object, n: int, name: str, what: str, caller: str) -> int:
    """``None`` (half), an int in ``[1, n]`` or a fraction in ``(0, 1]`` of ``n`` items."""
    if value is None:
        return max(1, n // 2)
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real):
        raise ParameterTypeError(
            f"The '{name}' parameter of {caller} must be None, an integer or a fraction in "
            f"(0, 1]; got {value!r}.")
    if isinstance(value, numbers.Integral):
        k = int(value)
        if not 1 <= k <= n:
            raise ValidationError(
                f"The '{name}' parameter of {caller} must be an integer in [1, {n}] (there are "
                f"{n} {what}) or a fraction in (0, 1]; got {k}.")
        return k
    frac = float(value)
    if not 0.0 < frac <= 1.0:
        raise ValidationError(
            f"The '{name}' parameter of {caller} must be an integer in [1, {n}] or a fraction "
            f"in (0, 1]; got {value!r}.")
    return max(1, int(frac * n))
