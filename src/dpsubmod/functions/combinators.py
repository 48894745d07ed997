"""Combinators: sums, nonnegative scaling, restriction to a subset, truncation.

Each keeps the fast state of its parts (the gains of a sum are the sum of the parts' gains, and
so on) and derives the declared sensitivity from the parts' declarations.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np

from .._validation import check_finite, check_indices, check_real, check_same_ground_set
from ..errors import ParameterTypeError, ValidationError
from ._inputs import check_value_bound
from .base import DataModel, FunctionState, SetFunction
from .cut_form import CutForm


def _check_function(f: object, name: str, caller: str) -> SetFunction:
    if not isinstance(f, SetFunction):
        raise ParameterTypeError(
            f"The '{name}' argument of {caller} must be a SetFunction; got {type(f).__name__}."
        )
    return f


class Sum(SetFunction):
    r"""Weighted sum :math:`f(S) = \sum_i c_i f_i(S)` of set functions on one ground set.

    Sums of submodular functions with nonnegative coefficients are submodular, and of monotone
    ones monotone; the instance attributes ``monotone`` and ``submodular`` hold when every part
    has them. A typical use is an objective plus a per-item bonus or cost,
    ``FacilityLocation(...) + Modular(bonus)``; ``f + g`` builds ``Sum([f, g])``.

    Parameters
    ----------
    functions : sequence of SetFunction
        At least one; all on the same ground set ``range(n)``.
    weights : array-like of float, optional
        Nonnegative coefficients ``c_i``; all 1 when omitted.
    sensitivity : float, optional
        Overrides the derived sensitivity (use it when a part is public, data-independent, and
        so declares nothing).

    Notes
    -----
    Sensitivity: the parts are assumed to be built on the same records, so that replacing one
    record changes each ``f_i(S)`` by at most its declared :math:`\Delta_i`; then ``f(S)``
    changes by at most :math:`\sum_i c_i \Delta_i`, the derived sensitivity. It is ``None``
    when any part declares nothing. The data model is ``"monotone-records"`` when every part
    follows it (a sum of per-record monotone terms in ``[0, c_i \Delta_i]`` is one per record in
    ``[0, \sum_i c_i\Delta_i]``), ``"general"`` otherwise.

    Examples
    --------
    >>> from dpsubmod.functions import Modular
    >>> f = Modular([1.0, 2.0]) + Modular([10.0, 0.0])
    >>> f([0, 1])
    13.0
    """

    monotone = False
    submodular = True

    def __init__(self, functions: Sequence[SetFunction], weights: object = None, *,
                 sensitivity: float | None = None):
        if isinstance(functions, SetFunction) or not isinstance(functions, Iterable):
            raise ParameterTypeError(
                "The 'functions' argument of Sum must be a sequence of SetFunctions; got "
                f"{type(functions).__name__}."
            )
        fs = [_check_function(g, f"functions[{i}]", "Sum") for i, g in enumerate(functions)]
        if not fs:
            raise ValidationError(
                "The 'functions' argument of Sum must hold at least one function."
            )
        for i, g in enumerate(fs[1:], start=1):
            check_same_ground_set(fs[0].n, g.n, "Sum: functions[0]", f"functions[{i}]")
        if weights is None:
            w = np.ones(len(fs))
        else:
            w = check_finite(weights, "weights", caller="Sum", ndim=1, nonnegative=True,
                             dtype=np.float64).copy()
            if w.shape != (len(fs),):
                raise ValidationError(
                    f"The 'weights' argument of Sum must have one weight per function "
                    f"({len(fs)}); got shape {w.shape}."
                )
        derived = None
        if all(g.sensitivity is not None for g in fs):
            derived = float(sum(c * g.sensitivity for c, g in zip(w, fs)))
            if derived == 0.0:
                derived = None
        model: DataModel = ("monotone-records"
                            if all(g.data_model == "monotone-records" for g in fs) else "general")
        super().__init__(fs[0].n, sensitivity=derived if sensitivity is None else sensitivity,
                         data_model=model)
        self.functions = fs
        self.weights = w
        self._value_upper = float(sum(c * g.upper_bound() for c, g in zip(w, fs) if c))
        self.monotone = all(g.monotone for g in fs)
        self.submodular = all(g.submodular for g in fs)
        self.batched_values = all(g.batched_values for g in fs)

    def _value(self, mask: np.ndarray) -> float:
        return float(sum(c * g._value(mask) for c, g in zip(self.weights, self.functions)))

    def _values(self, masks: np.ndarray) -> np.ndarray:
        out = np.zeros(masks.shape[0])
        for c, g in zip(self.weights, self.functions):
            out += c * np.asarray(g._values(masks), dtype=np.float64)
        return out

    def _chain_values(self, order: np.ndarray) -> np.ndarray:
        out = np.zeros(order.size + 1)
        for c, g in zip(self.weights, self.functions):
            out += c * np.asarray(g._chain_values(order), dtype=np.float64)
        return out

    def terms(self) -> tuple[tuple[float, SetFunction], ...]:
        return tuple((float(c) * a, h) for c, g in zip(self.weights, self.functions)
                     for a, h in g.terms())

    def cut_form(self) -> CutForm | None:
        total: CutForm | None = None
        for c, g in zip(self.weights, self.functions):
            form = g.cut_form()
            if form is None:
                return None
            part = form.scaled(float(c))
            total = part if total is None else total.plus(part)
        return total

    def state(self) -> FunctionState:
        return _SumState(self)


class _SumState(FunctionState):
    f: Sum

    def __init__(self, f: Sum):
        self.parts = [g.state() for g in f.functions]
        super().__init__(f)

    def _gains(self, cand: np.ndarray) -> np.ndarray:
        out = np.zeros(cand.size)
        for c, st in zip(self.f.weights, self.parts):
            out += c * st._gains(cand)
        return out

    def _add(self, e: int) -> None:
        for st in self.parts:
            st.add(e)
        self.value = float(sum(c * st.value for c, st in zip(self.f.weights, self.parts)))

    def copy(self) -> _SumState:
        new = super().copy()
        new.parts = [st.copy() for st in self.parts]
        return new


class Scaled(SetFunction):
    r"""Nonnegative multiple :math:`f(S) = c\, g(S)`; ``c * g`` builds it.

    Keeps monotonicity and submodularity of ``g``. Sensitivity :math:`c\Delta_g` (``None`` when
    ``g`` declares none, or when ``c = 0``: a zero sensitivity cannot calibrate noise); same data
    model as ``g``.

    Parameters
    ----------
    f : SetFunction
    c : float
        Finite, ``c >= 0``.
    """

    def __init__(self, f: SetFunction, c: float):
        f = _check_function(f, "f", "Scaled")
        c = check_real(c, "c", low=0.0, caller="Scaled",
                       fix="Negative multiples turn submodular into supermodular functions.")
        sens = None if f.sensitivity is None or c == 0.0 else c * f.sensitivity
        if sens is not None and not (0.0 < sens < math.inf):
            raise ValidationError(
                f"The 'c' parameter of Scaled is {c!r}: c times the sensitivity of f "
                f"({f.sensitivity!r}) is {sens!r}, outside floating-point range. Pass a c for "
                "which c * sensitivity lies between about 1e-300 and 1e300, or rescale f."
            )
        if c > 1.0 and f.monotone and f.n:
            # a monotone f peaks at V: c * f(V) bounds every value (c <= 1 cannot overflow)
            check_value_bound(c * float(f._value(np.ones(f.n, dtype=bool))),
                              "'c' parameter and the values of 'f'", "Scaled",
                              "Pass a smaller c, or rescale f.")
        super().__init__(f.n, sensitivity=sens, data_model=f.data_model)
        self.f, self.c = f, c
        self._value_upper = 0.0 if c == 0.0 else c * f.upper_bound()
        self.monotone, self.submodular = f.monotone, f.submodular
        self.neighbouring = f.neighbouring
        self.batched_values = f.batched_values

    def _value(self, mask: np.ndarray) -> float:
        return self.c * float(self.f._value(mask))

    def _values(self, masks: np.ndarray) -> np.ndarray:
        return self.c * np.asarray(self.f._values(masks), dtype=np.float64)

    def _chain_values(self, order: np.ndarray) -> np.ndarray:
        return self.c * np.asarray(self.f._chain_values(order), dtype=np.float64)

    def terms(self) -> tuple[tuple[float, SetFunction], ...]:
        return tuple((self.c * a, h) for a, h in self.f.terms())

    def cut_form(self) -> CutForm | None:
        form = self.f.cut_form()
        return None if form is None else form.scaled(self.c)

    def neighbour(self, rng: object = None) -> SetFunction:
        return Scaled(self.f.neighbour(rng), self.c)

    def state(self) -> FunctionState:
        return _ScaledState(self)


class _ScaledState(FunctionState):
    f: Scaled

    def __init__(self, f: Scaled):
        self.inner = f.f.state()
        super().__init__(f)

    def _gains(self, cand: np.ndarray) -> np.ndarray:
        return self.f.c * self.inner._gains(cand)

    def _add(self, e: int) -> None:
        self.inner.add(e)
        self.value = self.f.c * self.inner.value


class Restricted(SetFunction):
    r"""Restriction :math:`f(T) = g(\{s_i : i \in T\})` of ``g`` to a subset of its ground set.

    The new ground set is ``range(len(subset))``; element ``i`` stands for ``subset[i]``. Keeps
    monotonicity and submodularity; sensitivity and data model as ``g`` (the maximum over fewer
    sets is no larger).

    Parameters
    ----------
    f : SetFunction
    subset : array-like of int
        Distinct elements of ``range(f.n)``, at least one.
    """

    def __init__(self, f: SetFunction, subset: object):
        f = _check_function(f, "f", "Restricted")
        idx = check_indices(subset, f.n, "subset", caller="Restricted", unique=True)
        if idx.size == 0:
            raise ValidationError(
                "The 'subset' argument of Restricted must hold at least one element."
            )
        super().__init__(idx.size, sensitivity=f.sensitivity, data_model=f.data_model)
        self.f, self.subset = f, idx
        self._value_upper = f.upper_bound()
        self.monotone, self.submodular = f.monotone, f.submodular
        self.neighbouring = f.neighbouring
        self.batched_values = f.batched_values

    def _value(self, mask: np.ndarray) -> float:
        full = np.zeros(self.f.n, dtype=bool)
        full[self.subset[mask]] = True
        return float(self.f._value(full))

    def _values(self, masks: np.ndarray) -> np.ndarray:
        full = np.zeros((masks.shape[0], self.f.n), dtype=bool)
        full[:, self.subset] = masks
        return np.asarray(self.f._values(full), dtype=np.float64)

    def _chain_values(self, order: np.ndarray) -> np.ndarray:
        # The chain of the restriction is the chain of f along the lifted order.
        return np.asarray(self.f._chain_values(self.subset[order]), dtype=np.float64)

    def neighbour(self, rng: object = None) -> SetFunction:
        return Restricted(self.f.neighbour(rng), self.subset)

    def state(self) -> FunctionState:
        return _RestrictedState(self)


class _RestrictedState(FunctionState):
    f: Restricted

    def __init__(self, f: Restricted):
        self.inner = f.f.state()
        super().__init__(f)

    def _gains(self, cand: np.ndarray) -> np.ndarray:
        return self.inner._gains(self.f.subset[cand])

    def _add(self, e: int) -> None:
        self.inner.add(int(self.f.subset[e]))
        self.value = self.inner.value


class Truncated(SetFunction):
    r"""Truncation :math:`f(S) = \min(g(S), \mathrm{cap})`.

    Monotone submodular when ``g`` is (the minimum of a monotone submodular function and a
    constant is submodular); for non-monotone ``g`` submodularity can fail, so ``submodular`` is
    declared only when ``g`` is both. Sensitivity as ``g`` (``min(., cap)`` is 1-Lipschitz);
    data model ``"general"`` (a truncated sum is no longer a sum of per-record terms).

    Parameters
    ----------
    f : SetFunction
    cap : float
        Finite, ``cap > 0``.
    """

    def __init__(self, f: SetFunction, cap: float):
        f = _check_function(f, "f", "Truncated")
        cap = check_real(cap, "cap", low=0.0, low_open=True, caller="Truncated")
        super().__init__(f.n, sensitivity=f.sensitivity)
        self.f, self.cap = f, cap
        self._value_upper = min(cap, f.upper_bound())
        self.monotone = f.monotone
        self.submodular = f.monotone and f.submodular
        self.neighbouring = f.neighbouring
        self.batched_values = f.batched_values

    def _value(self, mask: np.ndarray) -> float:
        return min(float(self.f._value(mask)), self.cap)

    def _values(self, masks: np.ndarray) -> np.ndarray:
        return np.minimum(np.asarray(self.f._values(masks), dtype=np.float64), self.cap)

    def _chain_values(self, order: np.ndarray) -> np.ndarray:
        return np.minimum(np.asarray(self.f._chain_values(order), dtype=np.float64), self.cap)

    def neighbour(self, rng: object = None) -> SetFunction:
        return Truncated(self.f.neighbour(rng), self.cap)

    def state(self) -> FunctionState:
        return _TruncatedState(self)


class _TruncatedState(FunctionState):
    f: Truncated

    def __init__(self, f: Truncated):
        self.inner = f.f.state()
        super().__init__(f)

    def _gains(self, cand: np.ndarray) -> np.ndarray:
        cap, v = self.f.cap, self.inner.value
        out = np.minimum(v + self.inner._gains(cand), cap) - min(v, cap)
        out[self.mask[cand]] = 0.0
        return out

    def _add(self, e: int) -> None:
        self.inner.add(e)
        self.value = min(self.inner.value, self.f.cap)
