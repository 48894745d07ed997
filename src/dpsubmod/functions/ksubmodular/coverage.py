"""k-label weighted coverage on sparse per-label incidence (the kernel of k-topic influence,
k-type sensor placement and ad allocation)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..._rng import as_generator
from ..._validation import check_finite, check_indices, check_int, check_real, check_sparse_finite
from ...errors import ParameterTypeError, SensitivityError, ValidationError
from .._inputs import concat_ranges
from .base import KSubmodularFunction, KSubmodularState

_MODES = ("union", "sum")


class _KCoverageState(KSubmodularState):
    """Keeps the covered mask: per record (union) or per (label, record) (sum)."""

    def __init__(self, f: KCoverage):
        self.f = f
        self.x = np.zeros(f.n, dtype=np.int64)
        self.mask = np.zeros(f.n, dtype=bool)
        self.selected = []
        shape = (f.n_records,) if f.mode == "union" else (f.k, f.n_records)
        self.covered = np.zeros(shape, dtype=bool)
        self.value = 0.0

    def _uncovered_weight(self, i: int) -> np.ndarray:
        if self.f.mode == "union":
            return np.where(self.covered, 0.0, self.f.weights)
        return np.where(self.covered[i], 0.0, self.f.weights[i])

    def _gains(self, items: np.ndarray) -> np.ndarray:
        out = np.empty((items.size, self.f.k))
        u = self._uncovered_weight(0) if self.f.mode == "union" else None
        for i, inc in enumerate(self.f.incidence):
            w = u if u is not None else self._uncovered_weight(i)
            # Sum the uncovered weight over each requested row's records: work proportional to
            # the rows asked for, not to the whole incidence (Algorithm 4 scores few items).
            starts = inc.indptr[items]
            lens = inc.indptr[items + 1] - starts
            recs = inc.indices[concat_ranges(starts, lens)]
            rows = np.repeat(np.arange(items.size), lens)
            out[:, i] = np.bincount(rows, weights=w[recs], minlength=items.size)
        return out

    def _add(self, e: int, label: int) -> None:
        i = label - 1
        inc = self.f.incidence[i]
        recs = inc.indices[inc.indptr[e]:inc.indptr[e + 1]]
        if self.f.mode == "union":
            new = recs[~self.covered[recs]]
            self.value += float(self.f.weights[new].sum())
            self.covered[new] = True
        else:
            new = recs[~self.covered[i, recs]]
            self.value += float(self.f.weights[i, new].sum())
            self.covered[i, new] = True


def _as_incidence(incidence: Any, caller: str) -> list[sp.csr_array]:
    if isinstance(incidence, np.ndarray) and incidence.ndim == 3:
        mats = [incidence[i] for i in range(incidence.shape[0])]
    elif isinstance(incidence, Sequence) and not isinstance(incidence, (str, bytes)):
        mats = list(incidence)
    else:
        raise ParameterTypeError(
            f"The 'incidence' argument of {caller} must be a sequence of k matrices of shape "
            f"(n items, N records) (dense or scipy.sparse); got {type(incidence).__name__}."
        )
    if not mats:
        raise ValidationError(f"The 'incidence' argument of {caller} needs at least one label.")
    out = []
    for i, m in enumerate(mats):
        if sp.issparse(m):
            a = check_sparse_finite(m, f"incidence[{i}]", caller=caller, nonnegative=True)
        else:
            a = sp.csr_array(check_finite(m, f"incidence[{i}]", caller=caller, ndim=2,
                                          nonnegative=True))
        a = sp.csr_array(a, copy=True)
        a.eliminate_zeros()
        a.sum_duplicates()
        a.data[:] = 1.0  # incidence is 0/1: any stored positive entry means "covers"
        out.append(a)
    shapes = {a.shape for a in out}
    if len(shapes) != 1:
        raise ValidationError(
            f"Every incidence matrix of {caller} must have the same shape (n items, N records); "
            f"got {sorted(shapes)}."
        )
    return out


class KCoverage(KSubmodularFunction):
    r"""k-label weighted coverage: item ``e`` given label ``i`` covers the records in ``N_i(e)``.

    Two ways to count, chosen by ``mode``:

    * ``"union"`` (one reward per record, e.g. k-topic influence: a user counts once, whichever
      topic reached them):

    .. math:: F(\mathbf x) = \sum_j w_j \,[\exists e: x_e = i \ne 0,\ j \in N_i(e)];

    * ``"sum"`` (one reward per record and label, e.g. ad allocation where a user influenced by
      several agencies counts several times, Example 5.1, or k-type sensor placement):

    .. math:: F(\mathbf x) = \sum_{i=1}^{k} \sum_j w_{ij} \,[\exists e: x_e = i,\ j \in N_i(e)].

    **Monotone k-submodular** in both modes (weights non-negative): every gain
    ``Delta_{e,i} F(x)`` is the weight of the records of ``N_i(e)`` not yet covered (in label i, for
    ``"sum"``), which is non-negative (monotone, hence pairwise monotone) and can only shrink as
    any ``X_j`` grows (orthant submodular). The ``"sum"`` mode is a per-label sum of coverage
    functions; the ``"union"`` mode is not, and is the k-topic influence objective of Ohsaka and
    Yoshida (2015) once the records are reverse-reachable sets.

    Parameters
    ----------
    incidence : sequence of k matrices of shape (n, N), dense or scipy.sparse
        ``incidence[i][e, j] != 0`` iff item ``e`` with label ``i + 1`` covers record ``j``.
    weights : array-like, optional
        Record weights ``>= 0``: shape ``(N,)`` (both modes; in ``"sum"`` mode the same weight for
        every label) or ``(k, N)`` (``"sum"`` only). Default 1.
    mode : {"union", "sum"}, default="union"
    record_bound : float, optional
        A public bound on one record's contribution to ``F`` (its weight in ``"union"`` mode, its
        total weight over the labels in ``"sum"`` mode). When given, the data are checked against
        it and ``sensitivity = record_bound`` is declared.

    Attributes
    ----------
    sensitivity : float or None
        ``record_bound`` under **replace one record** (a record's ``k`` coverage sets and weight):
        the replaced record's term moves within ``[0, record_bound]`` and no other term moves.

    References
    ----------
    N. Ohsaka and Y. Yoshida. Monotone k-submodular function maximization with size constraints.
    NIPS 2015. A. Rafiey and Y. Yoshida. ICML 2020, Example 5.1.
    """

    neighbouring = "replace one record (its k coverage sets and its weight)"

    def __init__(self, incidence: Any, weights: Any = None, *, mode: str = "union",
                 record_bound: float | None = None):
        name = type(self).__name__
        if mode not in _MODES:
            raise ValidationError(
                f"The 'mode' parameter of {name} must be 'union' or 'sum'; got {mode!r}."
            )
        inc = _as_incidence(incidence, name)
        n, n_records = inc[0].shape
        k = len(inc)
        if weights is None:
            w = np.ones(n_records) if mode == "union" else np.ones((k, n_records))
        else:
            w = check_finite(weights, "weights", caller=name, nonnegative=True, dtype=np.float64)
            if mode == "sum" and w.shape == (n_records,):
                w = np.broadcast_to(w, (k, n_records)).copy()
            expected = (n_records,) if mode == "union" else (k, n_records)
            if w.shape != expected:
                raise ValidationError(
                    f"The 'weights' of {name} in mode {mode!r} must have shape {expected}; "
                    f"got {w.shape}."
                )
        sens = None
        if record_bound is not None:
            record_bound = check_real(record_bound, "record_bound", low=0.0, low_open=True,
                                      caller=name)
            per_record = w if mode == "union" else w.sum(axis=0)
            if per_record.size and per_record.max() > record_bound * (1 + 1e-12):
                raise ValidationError(
                    f"A record of {name} contributes up to {per_record.max()!r}, above the "
                    f"declared record_bound={record_bound!r}; pass a bound that holds for every "
                    "record."
                )
            sens = record_bound
        super().__init__(n, k, sensitivity=sens, data_model="monotone-records")
        self.incidence = inc
        self.weights = w
        self.mode = mode
        self.n_records = n_records
        self.record_bound = record_bound

    @classmethod
    def from_records(cls, records: Sequence[Sequence[Any]], n: int, *, mode: str = "union",
                     weights: Any = None, average: bool = True) -> KCoverage:
        """Build from records, each a sequence of ``k`` collections of items.

        Record ``j`` is covered under label ``i`` by the items of ``records[j][i - 1]``. Weights
        (``(N,)`` or, in ``"sum"`` mode, ``(N, k)``) must lie in ``[0, 1]``; default 1. With
        ``average=True`` every weight is divided by ``N``, so ``F`` is a mean over records.
        The declared sensitivity is then ``1 / N`` (``"union"``) or ``k / N`` (``"sum"``);
        without averaging ``1`` or ``k``.

        Examples
        --------
        Ad allocation (Example 5.1): 2 agencies, 3 ad slots, users as records; user ``j``'s
        record lists the slots through which each agency reaches them.

        >>> f = KCoverage.from_records([[{0}, {1, 2}], [{0, 1}, set()]], 3, mode="sum",
        ...                            average=False)
        >>> f([1, 2, 0])     # slot 0 to agency 1 (reaches both users), slot 1 to agency 2
        3.0
        """
        caller = f"{cls.__name__}.from_records"
        n = check_int(n, "n", low=1, caller=caller)
        if not isinstance(records, Sequence) or len(records) == 0:
            raise ValidationError(f"The 'records' of {caller} must be a non-empty sequence.")
        k = len(records[0])
        if k < 1:
            raise ValidationError(f"Each record of {caller} must hold k >= 1 item collections.")
        rows: list[list[int]] = [[] for _ in range(k)]
        cols: list[list[int]] = [[] for _ in range(k)]
        for j, rec in enumerate(records):
            if len(rec) != k:
                raise ValidationError(
                    f"Record {j} of {caller} holds {len(rec)} item collections; every record must "
                    f"hold k={k} (one per label, possibly empty)."
                )
            for i, items in enumerate(rec):
                it = np.unique(check_indices(list(items), n, f"records[{j}][{i}]", caller=caller))
                rows[i].extend(it.tolist())
                cols[i].extend([j] * it.size)
        n_rec = len(records)
        inc = [sp.csr_array((np.ones(len(rows[i])), (rows[i], cols[i])), shape=(n, n_rec))
               for i in range(k)]
        if weights is not None:
            w = check_finite(weights, "weights", caller=caller, nonnegative=True, dtype=np.float64)
            if w.size and w.max() > 1.0:
                raise ValidationError(f"The 'weights' of {caller} must lie in [0, 1].")
            if mode == "sum" and w.ndim == 2:
                w = w.T
        else:
            w = np.ones(n_rec)
        scale = 1.0 / n_rec if average else 1.0
        bound = (1.0 if mode == "union" else float(k)) * scale
        f = cls(inc, w * scale, mode=mode, record_bound=bound)
        if average:  # a mean over records of terms in [0, 1] (union) or [0, k] (sum)
            f._value_upper = 1.0 if mode == "union" else float(k)
        return f

    # -- evaluation ---------------------------------------------------------------------------
    def _value(self, x: np.ndarray) -> float:
        if self.mode == "union":
            hit = np.zeros(self.n_records, dtype=bool)
            for i, inc in enumerate(self.incidence):
                ind = (x == i + 1).astype(np.float64)
                hit |= (inc.T @ ind) > 0
            return float(self.weights[hit].sum())
        total = 0.0
        for i, inc in enumerate(self.incidence):
            ind = (x == i + 1).astype(np.float64)
            total += float(self.weights[i][(inc.T @ ind) > 0].sum())
        return total

    def state(self) -> KSubmodularState:
        return _KCoverageState(self)

    # -- neighbouring instances ---------------------------------------------------------------
    def _record_weight(self, j: int) -> np.ndarray | float:
        return self.weights[j] if self.mode == "union" else self.weights[:, j]

    def replace_record(self, j: int, sets: Sequence[Any], weight: Any = None) -> KCoverage:
        """A neighbouring instance: record ``j`` now covered by ``sets[i]`` under label ``i + 1``.

        ``weight`` (a float, or ``(k,)`` in ``"sum"`` mode) defaults to record ``j``'s weight.
        The result keeps the declared ``record_bound`` (and is checked against it).
        """
        j = check_int(j, "j", low=0, high=self.n_records - 1, caller="replace_record")
        if len(sets) != self.k:
            raise ValidationError(
                f"The 'sets' of replace_record must hold k={self.k} item collections; got "
                f"{len(sets)}."
            )
        inc = []
        for i, m in enumerate(self.incidence):
            coo = m.tocoo()
            keep = coo.col != j
            new = np.unique(check_indices(list(sets[i]), self.n, f"sets[{i}]",
                                          caller="replace_record"))
            r = np.concatenate([coo.row[keep], new])
            c = np.concatenate([coo.col[keep], np.full(new.size, j)])
            inc.append(sp.csr_array((np.ones(r.size), (r, c)), shape=m.shape))
        w = self.weights.copy()
        if weight is not None:
            if self.mode == "union":
                w[j] = check_real(weight, "weight", low=0.0, caller="replace_record")
            else:
                w[:, j] = check_finite(weight, "weight", caller="replace_record",
                                       nonnegative=True, dtype=np.float64)
        return self._rebuild(inc, w)

    def _rebuild(self, inc: list[sp.csr_array], w: np.ndarray) -> KCoverage:
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        KCoverage.__init__(new, inc, w, mode=self.mode, record_bound=self.record_bound)
        return new

    def neighbour(self, rng: Any = None) -> KCoverage:
        """Replace one uniformly chosen record with uniformly random coverage sets (each item in
        each label's set with probability 1/2), keeping its weight."""
        gen = as_generator(rng)
        if self.record_bound is None:
            raise SensitivityError(
                f"{type(self).__name__} declares no record_bound, so it has no neighbouring "
                "relation; build it with from_records(...) or pass record_bound=."
            )
        j = int(gen.integers(self.n_records))
        sets = [np.flatnonzero(gen.random(self.n) < 0.5) for _ in range(self.k)]
        return self.replace_record(j, sets)
