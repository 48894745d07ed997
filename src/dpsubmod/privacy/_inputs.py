"""Validation, charging and directed rounding shared by the mechanisms (private module)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._validation import check_epsilon, check_finite, check_real
from ..errors import InfeasibleConstraintError, ParameterTypeError, ValidationError
from .backends import NoiseBackend
from .ledger import Ledger, charge


# =============================================================================================
# validation helpers (thin wrappers over dpsubmod._validation)
# =============================================================================================
def _epsilon(value: object, caller: str, name: str = "epsilon") -> float:
    eps = check_epsilon(value, name, caller=caller)
    if not math.isfinite(eps):
        raise ValidationError(
            f"The '{name}' parameter of {caller} must be a finite real number in (0.0, inf); "
            f"got {value!r}. Pass a positive privacy budget such as epsilon=1.0."
        )
    return eps


def _positive(value: object, name: str, caller: str, fix: str = "") -> float:
    return check_real(value, name, low=0.0, low_open=True, high=math.inf, high_open=True,
                      caller=caller, fix=fix)


def _sensitivity(value: object, caller: str, name: str = "sensitivity") -> float:
    return _positive(value, name, caller,
                     "Pass the query's declared sensitivity, a positive number.")


def _check_budget(budget: object, caller: str) -> None:
    if budget is not None and not isinstance(budget, Ledger):
        raise ParameterTypeError(
            f"The 'budget' parameter of {caller} must be a dpsubmod Budget (or a Ledger, or "
            f"None); got {type(budget).__name__}. Build one with dpsubmod.Budget(epsilon=1.0)."
        )


def _check_bool(value: object, name: str, caller: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise ParameterTypeError(
            f"The '{name}' parameter of {caller} must be True or False; got {value!r}."
        )
    return bool(value)


def _values(value: object, caller: str) -> tuple[np.ndarray, bool]:
    x = check_finite(value, "value", caller=caller)
    if x.size == 0:
        raise ValidationError(
            f"The 'value' argument of {caller} is empty; pass at least one number."
        )
    return x.astype(float, copy=True), x.ndim == 0


def _clip_range(clip_range: object, caller: str) -> tuple[float, float] | None:
    if clip_range is None:
        return None
    try:
        lo, hi = clip_range  # type: ignore[misc]
    except (TypeError, ValueError):
        raise ParameterTypeError(
            f"The 'clip_range' parameter of {caller} must be a pair (low, high) or None; "
            f"got {clip_range!r}."
        ) from None
    lo = check_real(lo, "clip_range[0]", caller=caller)
    hi = check_real(hi, "clip_range[1]", caller=caller)
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise ValidationError(
            f"The 'clip_range' parameter of {caller} must be finite with low < high; "
            f"got {clip_range!r}."
        )
    return lo, hi


def _scores(scores: object, caller: str, clip_range: object = None) -> np.ndarray:
    """Scores as a float vector: NaN and +inf refused, -inf kept (infeasible), then clipped."""
    try:
        q = np.array(scores, dtype=float)
    except (TypeError, ValueError):
        raise ParameterTypeError(
            f"The 'scores' argument of {caller} must be a 1-d array of real numbers; "
            f"got {type(scores).__name__}."
        ) from None
    if q.ndim != 1 or q.size == 0:
        raise ValidationError(
            f"The 'scores' argument of {caller} must be a non-empty 1-d array; got shape {q.shape}."
        )
    finite = np.isfinite(q)
    if finite.all():
        bad = np.empty(0, dtype=np.intp)
    else:
        bad = np.flatnonzero(np.isnan(q) | np.isposinf(q))
    if bad.size:
        raise ValidationError(
            f"The 'scores' argument of {caller} holds {q[bad[0]]!r} at index {int(bad[0])}; scores "
            "must be real numbers, or -inf to mark an infeasible candidate. Fix the objective or "
            "mask the candidate with -inf."
        )
    if not finite.any():
        raise InfeasibleConstraintError(
            f"Every entry of 'scores' passed to {caller} is -inf, so no candidate is feasible; "
            "pass at least one finite score."
        )
    rng = _clip_range(clip_range, caller)
    if rng is not None:
        q[finite] = np.clip(q[finite], rng[0], rng[1])
    return q


def _selection_sensitivity(sensitivity: object, monotonic: object, range_sensitivity: object,
                           caller: str) -> tuple[float, str, int]:
    """(base sensitivity, kind, multiplier c) with range sensitivity R = c * base."""
    mono = _check_bool(monotonic, "monotonic", caller)
    if range_sensitivity is not None:
        if sensitivity is not None or mono:
            raise ValidationError(
                f"Pass either 'sensitivity' (with 'monotonic') or 'range_sensitivity' to {caller}, "
                "not both."
            )
        return _sensitivity(range_sensitivity, caller, "range_sensitivity"), "range", 1
    if sensitivity is None:
        raise ValidationError(
            f"{caller} needs 'sensitivity' (the largest change of one score between neighbouring "
            "data sets) or 'range_sensitivity'."
        )
    return _sensitivity(sensitivity, caller), "linf", 1 if mono else 2


def _noise_parameter(value: float, what: str, caller: str, high: float = math.inf,
                     sensitivity: str = "sensitivity") -> float:
    """Refuse a noise scale or weight outside floating-point range, before anything is charged.

    ``epsilon / sensitivity`` (or its inverse) can overflow to ``inf`` or underflow to 0 for
    extreme but finite arguments; a sampler would then divide by zero or draw nothing. A caller
    may also keep a scale below ``high`` (such as :data:`MAX_NOISE_SCALE`).
    """
    if not (math.isfinite(value) and value > 0.0 and 1.0 / value > 0.0
            and math.isfinite(1.0 / value) and value <= high):
        raise ValidationError(
            f"{caller}: the {what} computed from epsilon and {sensitivity} is {value!r}, "
            f"outside floating-point range. Rescale the query (or its {sensitivity}) so that "
            f"epsilon / {sensitivity} lies between about 1e-300 and 1e300."
        )
    return value


#: A bound a caller may put on an additive noise scale (the numpy backend saturates a release
#: beyond float range, so the mechanisms here do not need it).
MAX_NOISE_SCALE = 1e300


def _charge(budget: Any, caller: str, make_event: Any) -> None:
    # The event is built only when someone is charged (building it validates its fields); the
    # charge comes before any draw, so a refusal releases nothing.
    if budget is not None:
        charge(budget, make_event(), caller)


def _le_product(a: float, b: float, c: float) -> bool:
    """Exactly ``a * b <= c`` for finite floats ``a, b > 0`` (integer ratios, no rounding)."""
    an, ad = a.as_integer_ratio()
    bn, bd = b.as_integer_ratio()
    cn, cd = c.as_integer_ratio()
    return an * bn * cd <= cn * ad * bd


def _div_up(a: float, b: float) -> float:
    """A float ``>= a / b``, within one ulp (exactly: ``q * b >= a``)."""
    q = a / b
    if not math.isfinite(q) or q == 0.0:
        return q  # out of floating-point range: _noise_parameter refuses it
    qn, qd = q.as_integer_ratio()
    an, ad = a.as_integer_ratio()
    bn, bd = b.as_integer_ratio()
    return q if qn * bn * ad >= an * qd * bd else math.nextafter(q, math.inf)


def _div_down(a: float, b: float) -> float:
    """A float ``<= a / b``, within one ulp (exactly: ``q * b <= a``)."""
    q = a / b
    if not math.isfinite(q) or q == 0.0:
        return q
    return q if _le_product(q, b, a) else math.nextafter(q, 0.0)


def _mul_up(a: float, b: float) -> float:
    """A float ``>= a * b``, within one ulp."""
    p = a * b
    if not math.isfinite(p) or p == 0.0:
        return p
    return p if _le_product(a, b, p) else math.nextafter(p, math.inf)


def _note(backend: NoiseBackend, sensitivity: float, dim: int, engine: str | None = None,
          **params: float) -> str:
    parts = [f"backend={backend.label(sensitivity, dim=dim, engine=engine)}",
             f"sensitivity={sensitivity!r}"]
    parts += [f"{k}={v!r}" for k, v in params.items()]
    return "; ".join(parts)
