"""Input validation shared by every layer.

Messages follow one shape: the argument, the caller, what is accepted, what arrived, and the fix
where one is obvious (for example "The 'k' parameter of greedy must be an integer in [1, 50];
got 80. Pass k <= the ground-set size."). Helpers return the standardised value so callers validate
once at the public boundary and trust their inputs afterwards.
"""

from __future__ import annotations

import math
import numbers
import sys
import types
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np

from ._selection import Selection
from .errors import GroundSetMismatchError, ParameterTypeError, ValidationError

if TYPE_CHECKING:
    import scipy.sparse as sp


def sparse_module(x: Any) -> types.ModuleType | None:
    """``scipy.sparse`` if ``x`` is one of its matrices or arrays, else ``None``.

    A sparse object can only have been made after ``scipy.sparse`` was imported, so the module
    that made it is read from ``sys.modules``: nothing is imported here, and a dense run (a
    facility location on a grid) never pays scipy's import, which costs about as much CPU as
    importing numpy and pyarrow together.
    """
    module = sys.modules.get("scipy.sparse")
    return module if module is not None and module.issparse(x) else None


def is_sparse(x: Any) -> bool:
    """Whether ``x`` is a scipy.sparse matrix or array, without importing scipy
    (:func:`sparse_module`)."""
    return sparse_module(x) is not None


def _where(caller: str | None) -> str:
    return f" of {caller}" if caller else ""


def check_int(
    value: object,
    name: str,
    *,
    low: int | None = None,
    high: int | None = None,
    caller: str | None = None,
    fix: str = "",
) -> int:
    """Return ``value`` as an int in ``[low, high]`` or raise naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ParameterTypeError(
            f"The '{name}' parameter{_where(caller)} must be an integer; got {value!r} "
            f"of type {type(value).__name__}."
        )
    v = int(value)
    if (low is not None and v < low) or (high is not None and v > high):
        lo = "-inf" if low is None else str(low)
        hi = "inf" if high is None else str(high)
        msg = f"The '{name}' parameter{_where(caller)} must be an integer in [{lo}, {hi}]; got {v}."
        raise ValidationError(msg + (f" {fix}" if fix else ""))
    return v


def check_bool(value: object, name: str, *, caller: str | None = None) -> bool:
    """Return ``value`` as a bool, or raise naming ``name`` (``1``, ``"yes"`` and ``None`` are
    refused: a flag is True or False)."""
    if not isinstance(value, bool | np.bool_):
        raise ParameterTypeError(
            f"The '{name}' parameter{_where(caller)} must be True or False; got {value!r}."
        )
    return bool(value)


#: (caller, parameter) pairs that mean ``+inf`` (a mechanism use with no pure-DP bound states
#: ``epsilon = inf``, one whose zCDP cost overflows ``rho = inf``, converted to ``epsilon =
#: inf``) but whose code does not pass ``allow_inf=True`` yet; an entry goes when its caller
#: opts in.
_INF_PENDING = frozenset({("PrivacyEvent", "epsilon"), ("PrivacyEvent", "rho"),
                          ("zcdp_to_dp", "rho")})


def check_real(
    value: object,
    name: str,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
    allow_inf: bool = False,
    caller: str | None = None,
    fix: str = "",
) -> float:
    """Return ``value`` as a float in the given interval or raise naming ``name``.

    NaN and ``-inf`` are always refused, and ``+inf`` too unless ``allow_inf=True`` (for the
    few parameters where infinity means something, such as ``epsilon=math.inf`` switching the
    noise of an online learner off); then it must also lie in the interval (``high`` None, or
    ``high=math.inf`` closed). An integer too large for a float is refused.
    """
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real):
        raise ParameterTypeError(
            f"The '{name}' parameter{_where(caller)} must be a real number; got {value!r} "
            f"of type {type(value).__name__}."
        )
    try:
        v = float(value)
        bad = math.isnan(v)
    except OverflowError:  # an int beyond float range
        v = math.inf if value > 0 else -math.inf  # type: ignore[operator]
        bad = True
    if low is not None:
        bad |= v < low or (low_open and v == low)
    if high is not None:
        bad |= v > high or (high_open and v == high)
    allow_inf = allow_inf or (caller, name) in _INF_PENDING
    if math.isinf(v) and not (allow_inf and v > 0):
        bad = True
    if bad:
        lb = "(" if low_open or low is None else "["
        rb = ")" if high_open or high is None or (math.isinf(high) and not allow_inf) else "]"
        lo = "-inf" if low is None else repr(low)
        hi = "inf" if high is None else repr(high)
        what = "a real number" if allow_inf else "a finite real number"
        shown = repr(value) if not isinstance(value, int) or abs(value) < 10**20 else \
            f"an integer of {len(str(abs(value)))} digits"
        msg = f"The '{name}' parameter{_where(caller)} must be {what} in {lb}{lo}, {hi}{rb}; " \
              f"got {shown}."
        raise ValidationError(msg + (f" {fix}" if fix else ""))
    return v


def check_epsilon(value: object, name: str = "epsilon", *, caller: str | None = None) -> float:
    """A privacy parameter epsilon: a finite real number > 0 (``inf`` would mean no noise)."""
    return check_real(
        value, name, low=0.0, low_open=True, high=math.inf, high_open=True, caller=caller,
        fix="Pass a positive privacy budget such as epsilon=1.0.",
    )


def check_delta(value: object, name: str = "delta", *, caller: str | None = None) -> float:
    """A privacy parameter delta: a real number in [0, 1)."""
    return check_real(
        value, name, low=0.0, high=1.0, high_open=True, caller=caller,
        fix="Pass delta=0 for pure DP or a small value such as 1e-6.",
    )


def check_finite(arr: object, name: str, *, caller: str | None = None, ndim: int | None = None,
                 nonnegative: bool = False, dtype: type | None = None) -> np.ndarray:
    """Return ``arr`` as a finite numpy array (dense) or raise naming ``name``.

    Strings (even numeric ones such as ``"0.5"``), complex values and objects other than real
    numbers are refused before any conversion to ``dtype``, which would parse, truncate or
    warn silently.
    """
    try:
        a = np.asarray(arr)
        if a.dtype == object and dtype is not None:  # e.g. a list mixing ints and floats
            a = a.astype(dtype)
    except (TypeError, ValueError, OverflowError) as exc:
        raise ParameterTypeError(
            f"The '{name}' argument{_where(caller)} must be array-like of numbers; {exc}."
        ) from None
    f64 = a.dtype == np.float64  # the common case, settled without the dtype hierarchy
    if not f64 and (a.dtype == object
                    or not np.issubdtype(a.dtype, np.number) and a.dtype != np.bool_):
        raise ParameterTypeError(
            f"The '{name}' argument{_where(caller)} must hold numbers; got dtype {a.dtype}."
        )
    if not f64 and np.issubdtype(a.dtype, np.complexfloating):
        raise ParameterTypeError(
            f"The '{name}' argument{_where(caller)} must hold real numbers; got complex values "
            f"(dtype {a.dtype}). Pass the real part if that is what you mean."
        )
    if dtype is not None and a.dtype != dtype:
        with np.errstate(over="ignore", invalid="ignore"):  # float64 -> float32 overflow: inf
            a = a.astype(dtype)
    if ndim is not None and a.ndim != ndim:
        raise ValidationError(
            f"The '{name}' argument{_where(caller)} must be {ndim}-dimensional; "
            f"got shape {a.shape}."
        )
    # the cheap finite-sum pass skips the element-wise scan when the data is clean (a sum of
    # huge finite values overflows to inf: then the scan decides, without a warning)
    floating = a.dtype == np.float64 or np.issubdtype(a.dtype, np.floating)
    if floating:
        with np.errstate(over="ignore", invalid="ignore"):
            clean = bool(np.isfinite(a.sum()))
        if not clean and not np.isfinite(a).all():
            raise ValidationError(
                f"The '{name}' argument{_where(caller)} contains NaN or infinite values; "
                "remove or impute them before building the objective."
            )
    if nonnegative and a.size and a.min() < 0:
        raise ValidationError(
            f"The '{name}' argument{_where(caller)} must be non-negative; its minimum is "
            f"{a.min()!r}."
        )
    return a


def check_sparse_finite(m: sp.spmatrix | sp.sparray, name: str, *, caller: str | None = None,
                        nonnegative: bool = False) -> sp.csr_array:
    """Return a CSR copy-free view of a sparse matrix after checking its stored values."""
    module = sparse_module(m)
    if module is None:
        raise ParameterTypeError(
            f"The '{name}' argument{_where(caller)} must be a scipy.sparse matrix or array "
            f"here; got {type(m).__name__}."
        )
    out = module.csr_array(m)
    if out.dtype == object or not (np.issubdtype(out.dtype, np.number) or out.dtype == np.bool_) \
            or np.issubdtype(out.dtype, np.complexfloating):
        raise ParameterTypeError(
            f"The '{name}' argument{_where(caller)} must hold real numbers; got a sparse matrix "
            f"of dtype {out.dtype}."
        )
    if out.data.size:
        if not np.isfinite(out.data).all():
            raise ValidationError(
                f"The '{name}' argument{_where(caller)} contains NaN or infinite values; "
                "remove or impute them before building the objective."
            )
        if nonnegative and out.data.min() < 0:
            raise ValidationError(
                f"The '{name}' argument{_where(caller)} must be non-negative; its minimum is "
                f"{out.data.min()!r}."
            )
    return out


def check_indices(idx: object, n: int, name: str, *, caller: str | None = None,
                  unique: bool = False) -> np.ndarray:
    """Return ``idx`` as an int64 array of indices in ``range(n)`` or raise naming ``name``."""
    if isinstance(idx, np.ndarray) and idx.dtype == np.bool_:
        if idx.shape != (n,):
            raise GroundSetMismatchError(
                f"The boolean mask '{name}'{_where(caller)} must have shape ({n},); "
                f"got {idx.shape}."
            )
        return np.flatnonzero(idx)
    if isinstance(idx, Selection):
        kept = idx.mask_for(n)
        if kept is not None:  # a learner's played set: its mask, not hundreds of ints
            return np.flatnonzero(kept)
    if isinstance(idx, numbers.Integral) and not isinstance(idx, bool):
        idx = [idx]
    if not isinstance(idx, (np.ndarray, list, tuple)):
        # sets, ranges and generators become a list first; numpy reads lists and tuples as
        # they are (a copy of a learner's played tuple every round is measurable)
        idx = list(idx) if isinstance(idx, Iterable) else idx
    try:
        a = np.asarray(idx)
    except (TypeError, ValueError):
        a = np.asarray([], dtype=object)
    if a.size == 0:
        return np.zeros(0, dtype=np.int64)
    if a.ndim != 1 or not np.issubdtype(a.dtype, np.integer):
        raise ParameterTypeError(
            f"The '{name}' argument{_where(caller)} must be a 1-d collection of integer indices; "
            f"got {idx!r}."
        )
    if a.min() < 0 or a.max() >= n:
        bad = a[(a < 0) | (a >= n)][0]
        raise ValidationError(
            f"The '{name}' argument{_where(caller)} holds index {int(bad)}, outside the ground set "
            f"range(0, {n}). Use indices 0..{n - 1}."
        )
    a = a.astype(np.int64, copy=False)
    if unique and a.size > 1 and _has_repeats(a, n):
        raise ValidationError(f"The '{name}' argument{_where(caller)} holds repeated indices.")
    return a


def _has_repeats(a: np.ndarray, n: int) -> bool:
    """Whether the indices ``a`` (all in ``range(n)``) repeat one."""
    if n <= 64 * a.size:  # a mask of the ground set is cheaper than np.unique's sort or hash
        seen = np.zeros(n, dtype=bool)
        seen[a] = True
        return int(np.count_nonzero(seen)) != a.size
    return np.unique(a).size != a.size


def as_mask(S: object, n: int, name: str = "S", *, caller: str | None = None) -> np.ndarray:
    """Return a boolean mask of length ``n`` for a set given as indices or a mask.

    A mask comes back as the caller's own array and a learner's selection as the read-only mask
    it keeps: never write into the result."""
    if isinstance(S, np.ndarray) and S.dtype == np.bool_:
        if S.shape != (n,):
            raise GroundSetMismatchError(
                f"The boolean mask '{name}'{_where(caller)} must have shape ({n},); got {S.shape}."
            )
        return S
    if isinstance(S, Selection):
        kept = S.mask_for(n)
        if kept is not None:  # read-only: the same set every time it is evaluated
            return kept
    mask = np.zeros(n, dtype=bool)
    mask[check_indices(S, n, name, caller=caller)] = True
    return mask


def check_same_ground_set(n_a: int, n_b: int, what_a: str, what_b: str) -> None:
    """Raise :class:`GroundSetMismatchError` unless both ground sets have the same size."""
    if n_a != n_b:
        raise GroundSetMismatchError(
            f"{what_a} has a ground set of size {n_a} but {what_b} has size {n_b}; "
            "both must be defined on the same ground set range(n)."
        )


def is_noise_off(epsilon: object) -> bool:
    """Whether ``epsilon`` is ``math.inf``, the online learners' way to switch the noise off
    (a non-private baseline with the same code path)."""
    return isinstance(epsilon, (int, float)) and not isinstance(epsilon, bool) \
        and math.isinf(epsilon) and epsilon > 0

