"""Modular (additive) set functions."""

from __future__ import annotations

import numpy as np

from .._validation import check_finite
from ..errors import SensitivityError, ValidationError
from .base import DataModel, FunctionState, SetFunction
from .cut_form import CutForm


class Modular(SetFunction):
    r"""Modular set function :math:`f(S) = \sum_{e \in S} w_e`.

    The simplest set function: every element contributes a fixed amount whatever else is chosen,
    so every marginal gain is its own weight. Useful on its own (top-k by score), as a per-item
    bonus or cost added to another objective (``f + Modular(-costs)``), and in tests.

    Modular functions are both submodular and supermodular. ``f`` is monotone exactly when every
    weight is nonnegative; the instance attribute ``monotone`` says which case holds (the class
    attribute is ``False`` because the family as a whole does not guarantee it).

    Parameters
    ----------
    weights : array-like of float, shape (n,)
        One finite weight per element; negative weights are allowed.
    sensitivity : float, optional
        Declared largest change of ``f(S)`` over all ``S`` when one record of the data behind the
        weights is replaced; passed through, nothing is derived. For example, if each weight is
        an average over ``N`` records of per-record scores in ``[0, c]``, one replacement moves
        each weight by at most ``c / N`` and ``f(S)`` by at most ``|S| c / N <= n c / N``.
    data_model : {"general", "monotone-records"}, default="general"
        ``"monotone-records"`` is accepted only for nonnegative weights.

    References
    ----------
    Fujishige, S. (2005). *Submodular Functions and Optimization*, 2nd ed., Section 2.1.

    Examples
    --------
    >>> f = Modular([1.0, -2.0, 3.0])
    >>> f([0, 2]), f.monotone
    (4.0, False)
    """

    monotone = False
    submodular = True

    def __init__(self, weights: object, *, sensitivity: float | None = None,
                 data_model: DataModel = "general"):
        w = check_finite(weights, "weights", caller="Modular", ndim=1, dtype=np.float64)
        if w.size == 0:
            raise ValidationError(
                "The 'weights' argument of Modular must hold at least one weight; got none."
            )
        super().__init__(w.size, sensitivity=sensitivity, data_model=data_model)
        self.weights = w.copy()
        self.weights.flags.writeable = False
        self.monotone = bool((w >= 0).all())
        if data_model == "monotone-records" and not self.monotone:
            raise SensitivityError(
                "Modular with negative weights is not monotone, so it cannot follow the "
                "'monotone-records' data model; pass data_model='general'."
            )

    batched_values = True

    def _value(self, mask: np.ndarray) -> float:
        return float(self.weights[mask].sum())

    def _values(self, masks: np.ndarray) -> np.ndarray:
        return masks.astype(np.float64) @ self.weights

    def _chain_values(self, order: np.ndarray) -> np.ndarray:
        # A running sum in chain order: the same additions, in the same order, as the state.
        out = np.zeros(order.size + 1)
        np.cumsum(self.weights[order], out=out[1:])
        return out

    def cut_form(self) -> CutForm:
        return CutForm.modular_only(self.weights)

    def state(self) -> FunctionState:
        return _ModularState(self)


class _ModularState(FunctionState):
    """Gains are the weights themselves (0 for elements already chosen)."""

    f: Modular

    def _gains(self, cand: np.ndarray) -> np.ndarray:
        out = self.f.weights[cand]  # fancy indexing returns a fresh array
        out[self.mask[cand]] = 0.0
        return out

    def _add(self, e: int) -> None:
        self.value += float(self.f.weights[e])
