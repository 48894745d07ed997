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

Batched evaluation
------------------
Three public hooks evaluate many sets in one call, so that algorithms reach the families' fast
paths through the contract instead of their private methods:

* :meth:`SetFunction.value` (one set, uncounted, for diagnostics);
* :meth:`SetFunction.values` (the rows of a mask matrix, uncounted; vectorised where the family
  has a closed form, ``batched_values`` says which);
* :meth:`SetFunction.chain_values` (the values on a chain ``B_0 < B_1 < ... < B_m`` of the
  prefixes of an order, counted as one evaluation per set): the Lovász extension and its
  subgradient, Edmonds' greedy and the online minimization learners need exactly these. Every
  shipped family computes a chain in one vectorised pass (cumulative sums for modular and
  feature-based functions, running maxima for facility location, first-covering positions for
  coverage, edge-endpoint ranks for cuts); any other function walks its incremental state.

>>> from dpsubmod.functions import Modular
>>> Modular([1.0, 2.0, 3.0]).chain_values([2, 0, 1]).tolist()
[0.0, 3.0, 4.0, 6.0]
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np

from .. import _progress
from .._validation import as_mask, check_indices
from ..errors import GroundSetMismatchError, ParameterTypeError, ValidationError
from ._objective import DataModel, Objective

if TYPE_CHECKING:
    from .cut_form import CutForm


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
        self._push(int(check_indices([e], self.f.n, "e")[0]))

    def _push(self, e: int) -> None:
        """:meth:`add` of an index known to be in ``range(n)`` (internal callers)."""
        if self.mask[e]:
            return
        self._add(e)
        self.selected.append(e)
        self.mask[e] = True
        _progress.selected(len(self.selected))

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


class SetFunction(Objective, ABC):
    """A real function on subsets of ``range(n)``.

    Subclasses implement ``_value(mask)`` and may override ``state()`` with a fast incremental
    state, ``_values(masks)`` with a vectorised batch and ``_chain_values(order)`` with a
    one-pass chain. Class attributes ``monotone`` and ``submodular`` declare what the family
    guarantees (checked by property tests).

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
    #: Whether :meth:`values` evaluates a batch in vectorised array expressions (families with a
    #: closed form) rather than one set at a time; comparators that enumerate sets consult it.
    batched_values: bool = False

    def __init__(self, n: int, *, sensitivity: float | None = None,
                 data_model: DataModel = "general"):
        self.n = int(n)
        self._declare(sensitivity, data_model)

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
        """Values on the rows of a boolean ``(m, n)`` array, uncounted (for diagnostics and
        comparators).

        Families with a closed form evaluate the whole batch in array expressions
        (``batched_values``); the others loop over the rows.
        """
        m = np.asarray(masks, dtype=bool)
        if m.ndim != 2 or m.shape[1] != self.n:
            raise ValidationError(
                f"The 'masks' argument of {type(self).__name__}.values must be a boolean array "
                f"of shape (m, {self.n}); got shape {m.shape}."
            )
        return np.asarray(self._values(m), dtype=np.float64)

    def _values(self, masks: np.ndarray) -> np.ndarray:
        """Values on the rows of a trusted boolean ``(m, n)`` array (no counting)."""
        return np.array([float(self._value(row)) for row in masks], dtype=np.float64)

    def chain_values(self, order: object, *, count: bool = True) -> np.ndarray:
        r"""Values :math:`f(B_0), f(B_1), \dots, f(B_m)` on the chain of prefixes of ``order``,
        :math:`B_k = \{order_0, \dots, order_{k-1}\}`, in one call.

        Parameters
        ----------
        order : array-like of int
            Distinct elements of ``range(n)``: a permutation of the ground set (the chain of a
            point of the cube) or a prefix of one.
        count : bool, default=True
            Count ``m + 1`` evaluations (the papers' unit for ``m + 1`` values of ``f``);
            ``False`` for non-private diagnostics.

        Returns
        -------
        ndarray of float64, shape (m + 1,)
            Entry ``k`` is ``f(order[:k])``; entry 0 is ``f(empty)``.

        Raises
        ------
        ValidationError
            ``order`` holds an index outside ``range(n)`` or a repeated one.

        Notes
        -----
        Every shipped family computes the chain in one vectorised pass, within ``1e-12``
        relative of walking the incremental state (tested); a family without one walks its
        state (:meth:`state`), one ``add`` per element.
        """
        idx = self._check_order(order)
        out = np.asarray(self._chain_values(idx), dtype=np.float64)
        if count:
            self.evaluations += idx.size + 1
        return out

    def _check_order(self, order: object) -> np.ndarray:
        caller = f"{type(self).__name__}.chain_values"
        if isinstance(order, np.ndarray) and order.dtype.kind in "iu" and order.ndim == 1:
            idx = order.astype(np.int64, copy=False)
            if idx.size and (idx.min() < 0 or idx.max() >= self.n):
                idx = check_indices(order, self.n, "order", caller=caller)
        else:
            if isinstance(order, np.ndarray) and order.dtype == np.bool_:
                raise ParameterTypeError(
                    f"The 'order' argument of {caller} must be a sequence of distinct element "
                    "indices (the chain's order), not a boolean mask."
                )
            idx = check_indices(order, self.n, "order", caller=caller)
        if idx.size > self.n:
            raise GroundSetMismatchError(
                f"The 'order' argument of {caller} has {idx.size} entries for a ground set of "
                f"{self.n}; pass distinct indices (at most n)."
            )
        seen = np.zeros(self.n, dtype=bool)
        seen[idx] = True
        if int(np.count_nonzero(seen)) != idx.size:
            raise ValidationError(
                f"The 'order' argument of {caller} holds repeated indices; a chain adds each "
                "element once."
            )
        return idx

    def _chain_values(self, order: np.ndarray) -> np.ndarray:
        """Chain values along a trusted order (distinct int64 indices), uncounted.

        The generic chain walks one incremental state; families override it with a one-pass
        formula.
        """
        st = self.state()
        before = self.evaluations
        vals = np.empty(order.size + 1)
        vals[0] = st.value
        for k, e in enumerate(order.tolist(), start=1):
            st.add(e)
            vals[k] = st.value
        self.evaluations = before
        return vals

    def terms(self) -> tuple[tuple[float, SetFunction], ...]:
        """The weighted parts whose sum is ``f``: ``((1.0, f),)`` for a family; sums and
        nonnegative multiples flatten into their parts' terms (the coefficients multiply)."""
        return ((1.0, self),)

    def cut_form(self) -> CutForm | None:
        """``f`` as a graph cut plus a modular term
        (:class:`~dpsubmod.functions.cut_form.CutForm`), or ``None`` when it is not known to
        be one. Modular functions, cuts, and their sums and nonnegative multiples have one."""
        return None

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

    # -- combinators --------------------------------------------------------------------------
    def __add__(self, other: SetFunction) -> SetFunction:
        from .combinators import Sum

        return Sum([self, other])

    def __mul__(self, c: float) -> SetFunction:
        from .combinators import Scaled

        return Scaled(self, c)

    __rmul__ = __mul__
