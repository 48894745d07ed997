"""The KSubmodularFunction contract.

A *k-submodular* function is defined on selections that give every item of the ground set
``range(n)`` at most one of ``k`` labels. A selection is an integer vector ``x`` in
``{0, 1, ..., k}^n``: ``x[e] = 0`` means item ``e`` is not chosen, ``x[e] = i`` that it is chosen
with label ``i``. Equivalently it is a k-tuple of pairwise disjoint sets ``X_i = {e : x[e] = i}``.

The definitions (Huber and Kolmogorov 2012; Ward and Zivny 2014), with the marginal gain
``Delta_{e,i} F(x) = F(x with x[e] = i) - F(x)`` for an unlabelled item ``e``:

* **monotone**: ``x <= y`` (every ``X_i`` a subset of ``Y_i``) implies ``F(x) <= F(y)``;
  equivalently every gain is non-negative;
* **orthant submodular**: ``Delta_{e,i} F(x) >= Delta_{e,i} F(y)`` whenever ``x <= y`` and ``e`` is
  unlabelled in ``y``;
* **pairwise monotone**: ``Delta_{e,i} F(x) + Delta_{e,j} F(x) >= 0`` for ``i != j``;
* ``F`` is **k-submodular** iff it is orthant submodular and pairwise monotone; ``k = 1`` is
  ordinary submodularity. Every monotone orthant-submodular function is k-submodular.

Every greedy-type algorithm, and the exponential mechanism over (item, label) pairs of Rafiey and
Yoshida (ICML 2020, Algorithms 3 and 4), lives on the incremental state, which returns the gains of
all requested items under all ``k`` labels in one call:

>>> import numpy as np
>>> from dpsubmod.functions.ksubmodular import KFacilityLocation
>>> sim = np.array([[[1.0, 0.0], [0.0, 1.0]], [[0.5, 0.5], [0.5, 0.5]]])  # (k, clients, items)
>>> f = KFacilityLocation(sim, max_similarity=1.0)
>>> st = f.state()
>>> st.gains()            # rows: items, columns: labels 1..k
array([[0.5, 0.5],
       [0.5, 0.5]])
>>> st.add(0, 1); float(st.value)
0.5

Evaluation counting follows the papers' units: one call ``f(x)`` counts 1, a batch of gains of
``m`` (item, label) pairs counts ``m`` (so ``gains(items)`` counts ``len(items) * k``). Adding a
pair to a state reuses what the gains computed and counts nothing.

Privacy metadata
----------------
As for :class:`~dpsubmod.functions.base.SetFunction`: ``sensitivity`` is the declared largest
change of ``f(x)``, over all selections ``x``, between neighbouring data sets (the relation is in
the class attribute ``neighbouring`` and the family's docstring); ``None`` means undeclared and
private algorithms refuse it unless the caller passes one. ``data_model`` is ``"general"`` or
``"monotone-records"``; for the exponential-mechanism greedy of Algorithms 3 and 4 it does not
change the calibration (the common term ``F(x)`` of every score cancels, so the step costs
``2 epsilon' Delta`` in every model; seed 004 corrections, item 1).
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from ... import _progress
from ..._validation import check_indices, check_int
from ...errors import ParameterTypeError, ValidationError
from .._objective import Objective


def as_labels(x: object, n: int, k: int, name: str = "x", *, caller: str | None = None
              ) -> np.ndarray:
    """Return a selection as an int64 label vector of length ``n`` with entries in ``0..k``.

    Parameters
    ----------
    x : array-like
        Either a label vector (1-d, length ``n``, entries in ``0..k``) or a collection of
        ``(item, label)`` pairs (shape ``(m, 2)``, distinct items, labels in ``1..k``), such as the
        ``selection`` of a k-submodular :class:`~dpsubmod.offline.Result`. An empty collection is
        the empty selection.
    n, k : int
        Ground-set size and number of labels.
    name, caller : str
        Used in error messages.

    Returns
    -------
    ndarray of int64, shape (n,)
    """
    where = f" of {caller}" if caller else ""
    if isinstance(x, np.ndarray) and x.dtype == np.bool_:
        raise ParameterTypeError(
            f"The '{name}' argument{where} must be a label vector in {{0..{k}}}^{n} or (item, "
            "label) pairs; got a boolean mask. Convert a set S to labels with x[S] = 1."
        )
    try:
        a = np.asarray(x)
    except (TypeError, ValueError):
        a = np.asarray([], dtype=object)
    if a.size == 0 and not (a.ndim == 1 and n == 0):
        if a.dtype == object and not isinstance(x, (list, tuple)):
            raise ParameterTypeError(
                f"The '{name}' argument{where} must be a label vector or (item, label) pairs; "
                f"got {x!r}."
            )
        return np.zeros(n, dtype=np.int64)
    if not np.issubdtype(a.dtype, np.integer):
        integral = np.issubdtype(a.dtype, np.floating) and bool(np.all(np.isfinite(a)))
        if integral and np.all(a == np.round(a)):
            a = a.astype(np.int64)
        else:
            raise ParameterTypeError(
                f"The '{name}' argument{where} must hold integers (labels 0..{k}, or (item, "
                f"label) pairs); got dtype {a.dtype}."
            )
    if a.ndim == 1:
        if a.shape != (n,):
            raise ValidationError(
                f"The label vector '{name}'{where} must have length n={n}; got {a.shape[0]}. "
                "Pass one label per item (0 = not chosen), or a list of (item, label) pairs."
            )
        if a.min() < 0 or a.max() > k:
            raise ValidationError(
                f"The label vector '{name}'{where} must have entries in 0..{k}; got values in "
                f"[{int(a.min())}, {int(a.max())}]."
            )
        return a.astype(np.int64, copy=True)
    if a.ndim == 2 and a.shape[1] == 2:
        items = check_indices(a[:, 0], n, f"{name} (items)", caller=caller, unique=True)
        labels = a[:, 1]
        if labels.min() < 1 or labels.max() > k:
            raise ValidationError(
                f"The (item, label) pairs '{name}'{where} must have labels in 1..{k}; got values "
                f"in [{int(labels.min())}, {int(labels.max())}]."
            )
        out = np.zeros(n, dtype=np.int64)
        out[items] = labels
        return out
    raise ValidationError(
        f"The '{name}' argument{where} must be a label vector of shape ({n},) or (item, label) "
        f"pairs of shape (m, 2); got shape {a.shape}."
    )


def labels_to_pairs(x: np.ndarray) -> tuple[tuple[int, int], ...]:
    """The ``(item, label)`` pairs of a label vector, in increasing item order."""
    x = np.asarray(x)
    items = np.flatnonzero(x)
    return tuple((int(e), int(x[e])) for e in items)


class KSubmodularState:
    """Incremental state of a k-submodular function along a growing selection.

    The generic state evaluates ``f`` once per (item, label) pair; families override ``_gains``
    and ``_add`` with vectorised versions that keep what makes gains cheap (facility location the
    best similarity per client and label, coverage the covered mask).

    Attributes
    ----------
    f : KSubmodularFunction
        The function.
    x : ndarray of int64, shape (n,)
        The current label vector (0 = unlabelled).
    mask : ndarray of bool, shape (n,)
        The support ``x != 0``. A matroid's ``can_add(state, candidates)`` reads it, so the state
        can be passed to a constraint directly.
    selected : list of (int, int)
        ``(item, label)`` pairs added so far, in order.
    value : float
        ``f(x)``.
    """

    def __init__(self, f: KSubmodularFunction):
        self.f = f
        self.x = np.zeros(f.n, dtype=np.int64)
        self.mask = np.zeros(f.n, dtype=bool)
        self.selected: list[tuple[int, int]] = []
        self.value = float(f._value(self.x))

    @property
    def selection(self) -> np.ndarray:
        """A copy of the current label vector."""
        return self.x.copy()

    def gains(self, items: object = None) -> np.ndarray:
        """Marginal gains ``Delta_{e,i} f(x)`` of every requested item under every label.

        Parameters
        ----------
        items : array-like of int or boolean mask, optional
            Items to score; all of ``range(n)`` when omitted.

        Returns
        -------
        ndarray of float64, shape (len(items), k)
            Column ``i - 1`` holds the gains of label ``i``. Rows of items already labelled are 0
            (they cannot be relabelled). Counts ``len(items) * k`` evaluations.
        """
        it = np.arange(self.f.n) if items is None else check_indices(items, self.f.n, "items")
        self.f.evaluations += it.size * self.f.k
        if it.size == 0:
            return np.zeros((0, self.f.k))
        out = np.asarray(self._gains(it), dtype=np.float64)
        out[self.mask[it]] = 0.0
        return out

    def _gains(self, items: np.ndarray) -> np.ndarray:
        out = np.zeros((items.size, self.f.k))
        y = self.x.copy()
        for r, e in enumerate(items):
            if y[e]:
                continue
            for i in range(1, self.f.k + 1):
                y[e] = i
                out[r, i - 1] = self.f._value(y) - self.value
            y[e] = 0
        return out

    def add(self, e: int, label: int) -> None:
        """Give item ``e`` the label ``label`` (1..k) and update the cached value.

        A no-op when ``e`` already has this label; relabelling an item raises
        :class:`~dpsubmod.errors.ValidationError`.
        """
        e = int(check_indices([e], self.f.n, "e")[0])
        label = check_int(label, "label", low=1, high=self.f.k, caller="KSubmodularState.add")
        if self.x[e] == label:
            return
        if self.x[e] != 0:
            raise ValidationError(
                f"Item {e} already has label {int(self.x[e])}; a k-submodular selection gives each "
                "item at most one label. Start from a fresh state() to choose differently."
            )
        self._add(e, label)
        self.x[e] = label
        self.mask[e] = True
        self.selected.append((e, label))
        _progress.selected(len(self.selected))

    def _add(self, e: int, label: int) -> None:
        y = self.x.copy()
        y[e] = label
        self.value = float(self.f._value(y))

    def copy(self) -> KSubmodularState:
        """An independent copy (used by exact privacy checkers that branch on every outcome)."""
        new = object.__new__(type(self))
        new.__dict__.update({k: (v.copy() if hasattr(v, "copy") else v)
                             for k, v in self.__dict__.items() if k != "f"})
        new.f = self.f
        return new


class KSubmodularFunction(Objective, ABC):
    """A real function on label vectors ``x`` in ``{0, ..., k}^n`` (see the module docstring).

    Subclasses implement ``_value(x)`` and may override ``state()`` with a fast incremental
    state. The class (or instance) attributes ``monotone`` and ``k_submodular`` declare what the
    family guarantees; property tests check them on random instances.

    Parameters
    ----------
    n : int
        Size of the ground set.
    k : int
        Number of labels (``k >= 1``).
    sensitivity : float or None
        Declared largest change of ``f(x)`` over all ``x`` between neighbouring data sets.
    data_model : {"general", "monotone-records"}
        How records enter the function (see :mod:`dpsubmod.functions.base`).
    """

    monotone: bool = True
    k_submodular: bool = True

    def __init__(self, n: int, k: int, *, sensitivity: float | None = None,
                 data_model: str = "general"):
        name = type(self).__name__
        self.n = check_int(n, "n", low=0, caller=name)
        self.k = check_int(k, "k", low=1, caller=name, fix="Pass the number of labels k >= 1.")
        self._declare(sensitivity, data_model)

    # -- evaluation ---------------------------------------------------------------------------
    @abstractmethod
    def _value(self, x: np.ndarray) -> float:
        """Value on a validated int64 label vector of length n (no validation, no counting)."""

    def __call__(self, x: object) -> float:
        """Value ``f(x)`` for a label vector or (item, label) pairs; counts one evaluation."""
        lab = as_labels(x, self.n, self.k, "x", caller=type(self).__name__)
        self.evaluations += 1
        return float(self._value(lab))

    def state(self) -> KSubmodularState:
        """A fresh incremental state at the empty selection."""
        return KSubmodularState(self)

    def state_at(self, x: object) -> KSubmodularState:
        """A state at the selection ``x`` (label vector or pairs), built by adding its pairs."""
        lab = as_labels(x, self.n, self.k, "x", caller=type(self).__name__)
        st = self.state()
        for e in np.flatnonzero(lab):
            st.add(int(e), int(lab[e]))
        return st

    def marginal_gains(self, x: object = (), items: object = None) -> np.ndarray:
        """Gains of ``items`` under every label at the selection ``x`` (a convenience over
        :meth:`state_at`); shape ``(len(items), k)``."""
        return self.state_at(x).gains(items)

    def _repr_fields(self) -> str:
        return f"n={self.n}, k={self.k}"

