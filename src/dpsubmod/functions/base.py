"""The SetFunction contract.

A :class:`SetFunction` is a real function on subsets of the ground set ``range(n)``. Every
greedy-type algorithm, and the exponential mechanism which needs *all* candidates' marginal gains
at every step, lives on the incremental :class:`FunctionState`:

>>> from dpsubmod.functions import Modular
>>> f = Modular([1.0, 2.0, 3.0])
>>> st = f.state()
>>> st.gains()
array([1., 2., 3.])
>>> st.add(2); float(st.value)
3.0

Evaluation counting follows the papers' units: one call ``f(S)`` counts 1, a batch of ``m``
marginal gains counts ``m``. Adding an element to a state reuses the gain already computed and
counts nothing.

Privacy metadata
----------------
``sensitivity`` is the declared largest change of ``f(S)``, over all ``S``, when one record of
the underlying data set is replaced by another (the replace-one neighbouring relation, unless the
family's docstring says otherwise). ``None`` means the function was not built from records and
declares nothing; private algorithms refuse it unless the caller passes a sensitivity.

``data_model`` says how records enter: ``"general"`` (nothing more is known) or
``"monotone-records"``: ``f = sum_i g_i`` with one monotone term ``g_i`` per record taking values in
``[0, sensitivity]`` (for example an average of per-record functions with values in [0, c], where
sensitivity = c / N). Gradient-noise algorithms (continuous greedy, DPCG) need a factor 2 in the
general model and none in the monotone-records model (seed 004 corrections, item 2).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from typing import Literal

import numpy as np

from .._validation import as_mask, check_indices, check_real
from ..errors import SensitivityError, ValidationError

__all__ = ["SetFunction", "FunctionState", "DataModel"]

DataModel = Literal["general", "monotone-records"]


class FunctionState:
    """Incremental state of a set function along a growing set.

    The generic state evaluates ``f(S + e)`` for each candidate; families override it with a
    vectorised state that keeps what makes gains cheap (facility location keeps the current best
    similarity per client, coverage the covered mask).

    Attributes
    ----------
    f : SetFunction
        The function.
    selected : list of int
        Elements added so far, in order.
    value : float
        ``f(selected)``.
    """

    def __init__(self, f: SetFunction):
        self.f = f
        self.selected: list[int] = []
        self.mask = np.zeros(f.n, dtype=bool)
        self.value = float(f._value(self.mask))

    def _candidates(self, candidates: object) -> np.ndarray:
        if candidates is None:
            return np.arange(self.f.n)
        return check_indices(candidates, self.f.n, "candidates")

    def gains(self, candidates: object = None) -> np.ndarray:
        """Marginal gains ``f(S + e) - f(S)`` for every candidate ``e`` (0 for ``e`` in S).

        Parameters
        ----------
        candidates : array-like of int, optional
            Elements to score; all of ``range(n)`` when omitted.

        Returns
        -------
        ndarray of float64, one gain per candidate, in the order given.
        """
        cand = self._candidates(candidates)
        self.f.evaluations += cand.size
        return self._gains(cand)

    def _gains(self, cand: np.ndarray) -> np.ndarray:
        out = np.zeros(cand.size)
        m = self.mask.copy()
        for j, e in enumerate(cand):
            if m[e]:
                continue
            m[e] = True
            out[j] = self.f._value(m) - self.value
            m[e] = False
        return out

    def add(self, e: int) -> None:
        """Add element ``e`` (a no-op if already selected) and update the cached value."""
        e = int(check_indices([e], self.f.n, "e")[0])
        if self.mask[e]:
            return
        self._add(e)
        self.selected.append(e)
        self.mask[e] = True

    def _add(self, e: int) -> None:
        m = self.mask.copy()
        m[e] = True
        self.value = float(self.f._value(m))

    def copy(self) -> FunctionState:
        """An independent copy (used by lazy evaluation and by exact privacy checkers)."""
        new = object.__new__(type(self))
        new.__dict__.update({k: (v.copy() if hasattr(v, "copy") else v)
                             for k, v in self.__dict__.items() if k != "f"})
        new.f = self.f
        return new


class SetFunction(ABC):
    """A real function on subsets of ``range(n)``.

    Subclasses implement ``_value(mask)`` and may override ``state()`` with a fast incremental
    state. Class attributes ``monotone`` and ``submodular`` declare what the family guarantees
    (checked by property tests).

    Parameters
    ----------
    n : int
        Size of the ground set.
    sensitivity : float or None
        Declared largest change of ``f(S)`` over all ``S`` when one record is replaced.
    data_model : {"general", "monotone-records"}
        How records enter the function (see the module docstring).
    """

    monotone: bool = False
    submodular: bool = True
    #: The neighbouring relation behind ``sensitivity``, in words.
    neighbouring: str = "replace one record"

    def __init__(self, n: int, *, sensitivity: float | None = None,
                 data_model: DataModel = "general"):
        self.n = int(n)
        self.evaluations = 0
        if sensitivity is not None:
            sensitivity = check_real(sensitivity, "sensitivity", low=0.0, low_open=True,
                                     caller=type(self).__name__)
        self.sensitivity = sensitivity
        if data_model not in ("general", "monotone-records"):
            raise SensitivityError(
                f"The 'data_model' parameter of {type(self).__name__} must be 'general' or "
                f"'monotone-records'; got {data_model!r}."
            )
        self.data_model: DataModel = data_model

    # -- evaluation ---------------------------------------------------------------------------
    @abstractmethod
    def _value(self, mask: np.ndarray) -> float:
        """Value on a boolean mask of length n (no validation, no counting)."""

    def __call__(self, S: Iterable[int] | np.ndarray) -> float:
        """Value ``f(S)`` for ``S`` given as indices or a boolean mask; counts one evaluation."""
        mask = as_mask(S, self.n, "S", caller=type(self).__name__)
        self.evaluations += 1
        return float(self._value(mask))

    def value(self, S: Iterable[int] | np.ndarray) -> float:
        """Value ``f(S)`` without counting an evaluation (for diagnostics, not algorithms)."""
        return float(self._value(as_mask(S, self.n, "S", caller=type(self).__name__)))

    def values(self, masks: np.ndarray) -> np.ndarray:
        """Values on the rows of a boolean ``(m, n)`` array, uncounted (for diagnostics).

        Families with a vectorised evaluation override it; the default loops over the rows.
        """
        m = np.asarray(masks, dtype=bool)
        if m.ndim != 2 or m.shape[1] != self.n:
            raise ValidationError(
                f"The 'masks' argument of {type(self).__name__}.values must be a boolean array "
                f"of shape (m, {self.n}); got shape {m.shape}."
            )
        return np.array([float(self._value(row)) for row in m], dtype=float)

    def state(self) -> FunctionState:
        """A fresh incremental state at the empty set."""
        return FunctionState(self)

    def marginal_gains(self, S: Iterable[int] | np.ndarray = (), candidates: object = None
                       ) -> np.ndarray:
        """Marginal gains of ``candidates`` with respect to ``S`` (a convenience over state())."""
        st = self.state()
        for e in check_indices(np.flatnonzero(as_mask(S, self.n)), self.n, "S"):
            st.add(int(e))
        return st.gains(candidates)

    def reset_evaluations(self) -> None:
        """Set the evaluation counter back to 0."""
        self.evaluations = 0

    # -- privacy metadata ---------------------------------------------------------------------
    def require_sensitivity(self, override: float | None = None, *, caller: str = "") -> float:
        """The sensitivity a private algorithm must calibrate from.

        Returns ``override`` when given (validated), else the declared sensitivity; raises
        :class:`SensitivityError` when neither exists.
        """
        if override is not None:
            return check_real(override, "sensitivity", low=0.0, low_open=True, caller=caller)
        if self.sensitivity is None:
            who = caller or "a private algorithm"
            raise SensitivityError(
                f"{type(self).__name__} declares no sensitivity, so {who} cannot calibrate its "
                "noise. Build the objective from records (from_records(...)) or pass "
                "sensitivity= explicitly."
            )
        return float(self.sensitivity)

    def neighbour(self, rng: object = None) -> SetFunction:
        """A neighbouring instance: the same objective with one record replaced.

        Families built from records override this; auditors use it.
        """
        raise SensitivityError(
            f"{type(self).__name__} was not built from records, so it has no neighbouring instance."
        )

    @property
    def ground_set(self) -> range:
        return range(self.n)

    def __repr__(self) -> str:
        sens = "undeclared" if self.sensitivity is None else f"{self.sensitivity:.4g}"
        return f"{type(self).__name__}(n={self.n}, sensitivity={sens})"

    # -- combinators --------------------------------------------------------------------------
    def __add__(self, other: SetFunction) -> SetFunction:
        from .combinators import Sum

        return Sum([self, other])

    def __mul__(self, c: float) -> SetFunction:
        from .combinators import Scaled

        return Scaled(self, c)

    __rmul__ = __mul__
