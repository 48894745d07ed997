"""Argument checks shared by the constraint families (built on :mod:`dpsubmod._validation`)."""

from __future__ import annotations

import numbers

import numpy as np

from .._validation import check_finite, check_int
from ..errors import InfeasibleConstraintError, ParameterTypeError, ValidationError


def check_capacity(value: object, name: str, caller: str) -> int:
    """A non-negative integer capacity; a negative one makes the constraint infeasible."""
    v = check_int(value, name, caller=caller)
    if v < 0:
        raise InfeasibleConstraintError(
            f"The '{name}' parameter of {caller} must be a non-negative integer; got {v}. "
            "A negative capacity admits no set at all, not even the empty one."
        )
    return v


def check_capacities(values: object, m: int, name: str, caller: str) -> np.ndarray:
    """One non-negative integer capacity per group: a scalar (shared) or a length-``m`` sequence."""
    if isinstance(values, numbers.Integral) and not isinstance(values, bool):
        return np.full(m, check_capacity(values, name, caller), dtype=np.int64)
    a = check_finite(values, name, caller=caller, ndim=1)
    if a.shape != (m,):
        raise ValidationError(
            f"The '{name}' argument of {caller} must hold one capacity per group ({m}); "
            f"got {a.shape[0]} values."
        )
    if a.size and not np.issubdtype(a.dtype, np.integer):
        if a.dtype == np.bool_ or not np.all(a == np.round(a)):
            raise ParameterTypeError(
                f"The '{name}' argument of {caller} must hold integers; got {a.tolist()!r}."
            )
    a = a.astype(np.int64)
    if a.size and a.min() < 0:
        raise InfeasibleConstraintError(
            f"The '{name}' argument of {caller} must hold non-negative capacities; got "
            f"{int(a.min())} for group {int(np.argmin(a))}."
        )
    return a


def require_positive_rank(rank: int, caller: str, fix: str, arg: str) -> None:
    """Refuse a matroid of rank 0: its only independent set is the empty set. ``arg`` names the
    argument that made it so."""
    if rank < 1:
        raise InfeasibleConstraintError(
            f"The '{arg}' argument of {caller} gives it rank 0: its only independent set is the "
            f"empty set, so no non-empty solution exists. {fix}"
        )
