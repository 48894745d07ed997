"""Weighted coverage functions on a sparse incidence matrix."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import scipy.sparse as sp

from .._rng import RNGLike, as_generator
from .._validation import check_indices, check_int
from ..errors import ValidationError
from ._inputs import as_matrix, as_weights
from .base import DataModel, FunctionState, SetFunction
from .records.families import coverage_from_chunks


class Coverage(SetFunction):
    r"""Weighted coverage :math:`f(S) = \sum_{u \in \bigcup_{j \in S} A_j} w_u`.

    Each candidate ``j`` is a set :math:`A_j` of elements (people, topics, sensor targets); the
    value of a selection is the total weight of the elements covered by at least one chosen set.
    Coverage is the canonical monotone submodular function: a set adds only the weight it covers
    that nothing chosen before already covers.

    Orientation: **rows are candidate sets, columns are elements** (as in apricot's
    ``MaxCoverageSelection``): ``incidence[j, u] > 0`` means set ``j`` covers element ``u``.

    Monotone and submodular (nonnegative weights).

    Parameters
    ----------
    incidence : scipy.sparse matrix or array-like, shape (n_sets, n_elements)
        Finite nonnegative entries; an entry is "covers" exactly when it is positive (the value
        itself is otherwise ignored). Stored as a binary CSR matrix.
    weights : array-like of float, shape (n_elements,), optional
        Nonnegative finite element weights; all 1 when omitted.
    sensitivity : float, optional
        Declared sensitivity, passed through (see :meth:`from_records` for the derived one).
    data_model : {"general", "monotone-records"}, default="general"
        Pass ``"monotone-records"`` only when each element is one record's data and its weight
        is at most ``sensitivity`` (then ``f`` is a sum of per-record monotone terms).

    Attributes
    ----------
    incidence : scipy.sparse.csr_array of float64 (0/1), shape (n_sets, n_elements)
    element_weights : ndarray, shape (n_elements,)

    Notes
    -----
    The incremental state keeps the covered-element mask and the gains of all candidates; adding
    a set subtracts, for the newly covered elements only, their weight from every set containing
    them (a sparse column slice and one mat-vec), so a greedy step costs the nonzeros of the
    newly covered columns, not of the whole matrix.

    Neighbouring relation (for :meth:`from_records`): replace one record (one element's column of
    the incidence matrix) by any other record.

    References
    ----------
    Nemhauser, G. L., Wolsey, L. A. and Fisher, M. L. (1978). An analysis of approximations for
    maximizing submodular set functions I. *Mathematical Programming* 14, 265-294.
    Mitrovic, M., Bun, M., Krause, A. and Karbasi, A. (2017). Differentially private submodular
    maximization: data summarization in disguise. ICML.

    Examples
    --------
    >>> import numpy as np
    >>> f = Coverage(np.array([[1, 1, 0], [0, 1, 1]]), weights=[1.0, 2.0, 4.0])
    >>> f([0]), f([0, 1])
    (3.0, 7.0)
    """

    monotone = True
    submodular = True

    def __init__(self, incidence: object, weights: object = None, *,
                 sensitivity: float | None = None, data_model: DataModel = "general"):
        A = as_matrix(incidence, "incidence", "Coverage", nonnegative=True)
        n_sets, n_elements = A.shape
        w = as_weights(weights, n_elements, "weights", "Coverage")
        super().__init__(n_sets, sensitivity=sensitivity, data_model=data_model)
        if sp.issparse(A):
            A = sp.csr_array((np.ones(A.nnz), A.indices, A.indptr), shape=A.shape)
        else:
            A = sp.csr_array(np.asarray(A > 0, dtype=np.float64))
        self.incidence = A
        self.element_weights = w
        self.n_elements = n_elements
        self._csc = A.tocsc()
        self._gains0: np.ndarray | None = None
        self._records: list[np.ndarray] | None = None
        self._membership: sp.csr_array | None = None

    # -- construction from person-level records -------------------------------------------------
    @classmethod
    def from_records(cls, records: Sequence[Iterable[int]], n_sets: int) -> Coverage:
        r"""Average coverage of a population, one record per person.

        Record ``i`` lists the candidate sets that cover person ``i`` (for example the sites within
        reach of their home, the topics they read). The objective is the **fraction** of people
        covered, :math:`f(S) = \frac1N \sum_i \mathbf 1[S \cap R_i \neq \emptyset]`, a
        :class:`Coverage` with one element per person and weight :math:`1/N` each.

        Sensitivity: under the replace-one relation (one person's record replaced by any other,
        ``N`` fixed) only that person's term changes, and it lies in ``{0, 1/N}``, so
        :math:`|f_D(S) - f_{D'}(S)| \le 1/N` for every ``S``. Declared ``sensitivity = 1/N`` and
        ``data_model = "monotone-records"`` (each term is monotone with values in ``[0, 1/N]``).

        Parameters
        ----------
        records : sequence of iterables of int
            One entry per person: indices in ``range(n_sets)`` (may be empty).
        n_sets : int
            Number of candidate sets (the ground-set size).

        Returns
        -------
        Coverage
        """
        n_sets = check_int(n_sets, "n_sets", low=1, caller="Coverage.from_records")
        recs = _check_records(records, n_sets)
        return _coverage_from_checked_records(recs, n_sets)

    @classmethod
    def from_membership(cls, membership: object) -> Coverage:
        r"""Average coverage from a person-by-set table: ``membership[i, j]`` is true when set
        ``j`` covers person ``i`` (one row per person).

        The same objective as :meth:`from_records` with record ``i`` the sets of row ``i``
        (``f(S)`` is the fraction of rows covered), built without a Python loop over rows.
        Declared ``sensitivity = 1/N`` under replace-one-row, ``data_model =
        "monotone-records"``.

        Parameters
        ----------
        membership : array-like of bool or scipy.sparse matrix, shape (N, n_sets)

        Returns
        -------
        Coverage
        """
        caller = "Coverage.from_membership"
        if sp.issparse(membership):
            M = sp.csr_array(membership)
            if not np.isfinite(M.data).all() or (M.data < 0).any():
                raise ValidationError(f"The 'membership' argument of {caller} must hold finite "
                                      "nonnegative entries (positive = covers).")
            M = sp.csr_array((M.data > 0).astype(np.float64))
            M.eliminate_zeros()
        else:
            A = np.asarray(membership)
            if A.ndim != 2 or A.dtype.kind not in "biuf":
                raise ValidationError(f"The 'membership' argument of {caller} must be a 2-d "
                                      f"boolean or numeric array; got {A.dtype} of shape "
                                      f"{A.shape}.")
            if A.dtype.kind == "f" and not np.isfinite(A).all():
                raise ValidationError(f"The 'membership' argument of {caller} must be finite.")
            M = sp.csr_array(A > 0, dtype=np.float64)
        N, n_sets = M.shape
        if N == 0 or n_sets == 0:
            raise ValidationError(f"The 'membership' argument of {caller} needs at least one "
                                  f"row and one column; got shape {M.shape}.")
        inc = sp.csr_array(M.T)
        f = Coverage(inc, np.full(N, 1.0 / N), sensitivity=1.0 / N,
                     data_model="monotone-records")
        f._membership = M
        f._value_upper = 1.0  # the fraction of records covered
        return f

    @classmethod
    def from_chunks(cls, chunks: object, n_sets: int, *, invalid: str = "clip",
                    user_id: object = None, max_rows_per_user: int | None = None,
                    relation: str | None = None, chunk_rows: int | None = None,
                    n_jobs: int = 1, scheduler: object = None) -> SetFunction:
        """Average coverage over a person-by-set table read in chunks (O(N) state).

        Each chunk holds rows of ``n_sets`` cells; a positive cell means the set covers the
        person. The objective of :meth:`from_membership`, with each person's covered flag as
        state and one pass over the chunks per greedy step (see
        :mod:`dpsubmod.functions.records`). An invalid cell (negative, non-finite) counts as
        "not covered" (``invalid="clip"``) or makes its row cover nothing (``"drop"``); either
        way the row counts in ``N``. ``user_id``, ``max_rows_per_user`` and ``relation`` as in
        :meth:`FacilityLocation.from_chunks`.
        """
        return coverage_from_chunks(chunks, n_sets, invalid=invalid, user_id=user_id,
                                    max_rows_per_user=max_rows_per_user, relation=relation,
                                    chunk_rows=chunk_rows, n_jobs=n_jobs, scheduler=scheduler)

    def neighbour(self, rng: RNGLike = None, *, index: int | None = None,
                  record: Iterable[int] | None = None) -> Coverage:
        """The same objective with one person's record replaced (replace-one relation).

        Parameters
        ----------
        rng : int, Generator or None, default=None
            Used only for what is not given: the index (uniform over records) and the new record
            (each set included independently with probability 1/2).
        index : int, optional
            Which record to replace.
        record : iterable of int, optional
            The replacement record (indices in ``range(n)``).
        """
        if self._records is None and self._membership is not None:
            M = self._membership
            self._records = np.split(M.indices.astype(np.int64), M.indptr[1:-1])
        if self._records is None:
            return super().neighbour(rng)
        N = len(self._records)
        if index is not None:
            index = check_int(index, "index", low=0, high=N - 1, caller="Coverage.neighbour")
        if record is not None:
            record = check_indices(record, self.n, "record", caller="Coverage.neighbour")
        gen = as_generator(rng)
        if index is None:
            index = int(gen.integers(N))
        if record is None:
            record = np.flatnonzero(gen.random(self.n) < 0.5)
        recs = list(self._records)
        recs[index] = np.asarray(record, dtype=np.int64)
        return _coverage_from_checked_records(recs, self.n)

    # -- evaluation -------------------------------------------------------------------------------
    def _value(self, mask: np.ndarray) -> float:
        if not mask.any():
            return 0.0
        hits = self.incidence.T @ mask.astype(np.float64)
        return float(self.element_weights[hits > 0].sum())

    def _initial_gains(self) -> np.ndarray:
        if self._gains0 is None:
            self._gains0 = np.asarray(self.incidence @ self.element_weights, dtype=np.float64)
        return self._gains0

    batched_values = True

    def _values(self, masks: np.ndarray) -> np.ndarray:
        hits = np.asarray((self.incidence.T @ masks.T.astype(np.float64)).T)
        return (hits > 0) @ self.element_weights

    def _chain_values(self, order: np.ndarray) -> np.ndarray:
        """An element is covered from the first chain step whose set contains it: one
        minimum per element over its covering sets' positions."""
        m = order.size
        out = np.zeros(m + 1)
        csc = self._csc
        if m == 0 or csc.nnz == 0:
            return out
        pos = np.full(self.n, m + 1, dtype=np.int64)
        pos[order] = np.arange(1, m + 1)
        p = pos[csc.indices]
        filled = np.flatnonzero(np.diff(csc.indptr) > 0)
        first = np.minimum.reduceat(p, csc.indptr[filled])
        hit = first <= m
        gain = np.bincount(first[hit] - 1, weights=self.element_weights[filled[hit]],
                           minlength=m)
        np.cumsum(gain, out=out[1:])
        return out

    def state(self) -> FunctionState:
        return _CoverageState(self)


def _check_records(records: object, n_sets: int) -> list[np.ndarray]:
    if isinstance(records, (str, bytes)) or not isinstance(records, Iterable):
        raise ValidationError(
            "The 'records' argument of Coverage.from_records must be a sequence with one "
            f"iterable of set indices per person; got {type(records).__name__}."
        )
    recs = [check_indices(r, n_sets, f"records[{i}]", caller="Coverage.from_records")
            for i, r in enumerate(records)]
    if not recs:
        raise ValidationError(
            "The 'records' argument of Coverage.from_records must hold at least one record."
        )
    return recs


def _coverage_from_checked_records(recs: list[np.ndarray], n_sets: int) -> Coverage:
    N = len(recs)
    lens = np.fromiter((r.size for r in recs), dtype=np.int64, count=N)
    rows = np.concatenate(recs) if lens.sum() else np.zeros(0, dtype=np.int64)
    cols = np.repeat(np.arange(N), lens)
    inc = sp.csr_array((np.ones(rows.size), (rows, cols)), shape=(n_sets, N))
    f = Coverage(inc, np.full(N, 1.0 / N), sensitivity=1.0 / N, data_model="monotone-records")
    f._records = recs
    f._value_upper = 1.0  # the fraction of records covered
    return f


#: Up to this many columns, ``_column_rows`` concatenates slices instead of building indices.
_FEW_COLUMNS = 64


def _column_rows(csc: sp.csc_array, cols: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row indices of the nonzeros of ``csc[:, cols]``, column after column, and each
    column's count."""
    ptr = csc.indptr
    starts = ptr[cols]
    ends = ptr[cols + 1]
    lens = ends - starts
    if 0 < cols.size <= _FEW_COLUMNS:  # a few slices cost less than the index arithmetic
        return np.concatenate([csc.indices[a:b] for a, b in zip(starts.tolist(),
                                                                 ends.tolist())]), lens
    total = int(lens.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64), lens
    # positions start_c, start_c + 1, ... for each column c, built without a Python loop
    offs = np.repeat(starts - np.concatenate(([0], np.cumsum(lens)[:-1])), lens)
    return csc.indices[np.arange(total) + offs], lens


class _CoverageState(FunctionState):
    """Covered-element mask plus the cached gains of every candidate."""

    f: Coverage

    def __init__(self, f: Coverage):
        super().__init__(f)
        self.covered = np.zeros(f.n_elements, dtype=bool)
        self.cache = f._initial_gains().copy()

    def _gains(self, cand: np.ndarray) -> np.ndarray:
        return self.cache[cand]

    def _add(self, e: int) -> None:
        f = self.f
        A = f.incidence
        elems = A.indices[A.indptr[e]:A.indptr[e + 1]]
        new = elems[~self.covered[elems]]
        if new.size:
            w_new = f.element_weights[new]
            # The sets containing the newly covered elements, read from the column pointers
            # (scipy's fancy column slice costs more than the slice itself at these sizes).
            rows, lens = _column_rows(f._csc, new)
            self.cache -= np.bincount(rows, weights=np.repeat(w_new, lens),
                                      minlength=self.cache.size)
            # Gains are nonnegative; clipping removes round-off below zero.
            np.maximum(self.cache, 0.0, out=self.cache)
            self.covered[new] = True
            self.value += float(w_new.sum())
        self.cache[e] = 0.0

