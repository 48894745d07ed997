"""Facility location on a dense or sparse client-by-candidate similarity matrix."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .._rng import RNGLike
from .._validation import check_finite, is_sparse
from ..errors import ValidationError
from ._inputs import (
    as_matrix,
    as_weights,
    check_value_bound,
    concat_ranges,
    replaced_points,
    row_chunks,
)
from ._similarity import _check_fits, _make_kernel, _similarity_matrix
from .base import DataModel, FunctionState, SetFunction
from .records.families import facility_location_from_chunks
from .records.points import RecordFacilityLocation, float32_scales


class FacilityLocation(SetFunction):
    r"""Facility location :math:`f(S) = \sum_i w_i \max_{j \in S} s_{ij}` (0 for empty ``S``).

    Every client ``i`` (a person, a data point) is served by the chosen candidate ``j`` most
    similar to it; the value is the total (weighted) service. It rewards selections that are
    representative of all clients: once a client is well served, more candidates near it add
    little, which is exactly diminishing returns.

    Monotone and submodular for nonnegative similarities and weights.

    Parameters
    ----------
    similarity : ndarray or scipy.sparse matrix, shape (n_clients, n_candidates)
        Finite nonnegative similarities, **clients in rows, candidates in columns** (the ground
        set is the columns). Dense float32 and float64 matrices are kept as given (no copy; do
        not modify the matrix afterwards); other dtypes become float64. In a sparse matrix a
        missing entry means similarity 0.
    weights : array-like of float, shape (n_clients,), optional
        Nonnegative client weights; all 1 when omitted. ``weights = 1/N`` gives the average.
    sensitivity : float, optional
        Declared sensitivity, passed through (see :meth:`from_records` for the derived one).
    data_model : {"general", "monotone-records"}, default="general"
        ``"monotone-records"`` when each client is one record and ``w_i * max_j s_ij`` is at most
        ``sensitivity`` (as built by :meth:`from_records`).

    Attributes
    ----------
    similarity : ndarray or scipy.sparse.csr_array
    weights : ndarray of float64, shape (n_clients,)
    n_clients : int

    Notes
    -----
    The incremental state keeps the best similarity per client and a cached vector of the gains
    of all candidates, :math:`g_j = \sum_i w_i (s_{ij} - b_i)^+`. Adding ``e`` changes the best
    similarity only for the clients ``C = {i : s_{ie} > b_i}``, and for each of them the gain of
    every candidate drops by :math:`w_i\,\mathrm{clip}(s_{ij} - b_i, 0, s_{ie} - b_i)`. The update
    therefore costs ``O(|C| n)`` (dense) or the nonzeros of the changed rows (sparse), instead of
    the ``O(N n)`` of recomputing every gain; ``|C|`` shrinks quickly as the selection grows.
    Block arithmetic is in float64 even for float32 input, so gains match the direct formula to
    float64 round-off.

    References
    ----------
    Cornuéjols, G., Fisher, M. L. and Nemhauser, G. L. (1977). Location of bank accounts to
    optimize float. *Management Science* 23(8), 789-810.
    Mitrovic, M., Bun, M., Krause, A. and Karbasi, A. (2017). Differentially private submodular
    maximization: data summarization in disguise. ICML (the private facility-location objective
    of :meth:`from_records`).

    Examples
    --------
    >>> import numpy as np
    >>> f = FacilityLocation(np.array([[1.0, 0.2], [0.1, 0.9], [0.5, 0.5]]))
    >>> round(f([0]), 6), round(f([0, 1]), 6)
    (1.6, 2.4)
    """

    monotone = True
    submodular = True

    def __init__(self, similarity: object, weights: object = None, *,
                 sensitivity: float | None = None, data_model: DataModel = "general"):
        sim = as_matrix(similarity, "similarity", "FacilityLocation", nonnegative=True)
        n_clients, n = sim.shape
        w = as_weights(weights, n_clients, "weights", "FacilityLocation")
        # f(V) = weights @ (largest similarity of each row) bounds every value and gain
        row_max = sim.max(axis=1)
        row_max = row_max.toarray() if is_sparse(row_max) else np.asarray(row_max)
        with np.errstate(over="ignore"):
            top = float(w @ row_max.astype(np.float64).ravel())
        check_value_bound(top, "'weights' and 'similarity' arguments", "FacilityLocation",
                          "Rescale the weights or the similarities.")
        super().__init__(n, sensitivity=sensitivity, data_model=data_model)
        self.similarity = sim
        self.weights = w
        self.n_clients = n_clients
        self._sparse = is_sparse(sim)
        self._csc = sim.tocsc() if self._sparse else None
        self._gains0: np.ndarray | None = None
        # Set only by from_records, for neighbour().
        self._points: np.ndarray | None = None
        self._candidates: np.ndarray | None = None
        self._kernel: Callable[[np.ndarray], np.ndarray] | None = None
        self._s_max: float | None = None

    # -- construction from records --------------------------------------------------------------
    @classmethod
    def from_records(cls, points: object, candidates: object,
                     similarity: str | Callable[[np.ndarray, np.ndarray], object] = "gaussian",
                     *, bandwidth: float | None = None, radius: float | None = None,
                     s_max: float | None = None, dtype: object = None) -> SetFunction:
        r"""Average facility location over private records and public candidate locations.

        :math:`f_D(S) = \frac1N \sum_{i=1}^N \max_{j \in S} s(x_i, c_j)`, where ``x_i`` is
        person ``i``'s record (a row of ``points``) and ``c_j`` the public candidates.
        Similarities are forced into ``[0, s_max]``:

        * ``"gaussian"``: :math:`s = \exp(-\lVert x - c\rVert^2 / (2h^2))` with the public
          ``bandwidth`` ``h``; ``s_max = 1``.
        * ``"negative_distance"``: :math:`s = \max(0, D - \lVert x - c\rVert)` with the public
          ``radius`` ``D``; ``s_max = D``.
        * a callable ``similarity(record, candidates) -> (1, n) array`` with a declared
          ``s_max``; its outputs are clipped to ``[0, s_max]``.

        Contract of a callable similarity: it is called once per record, with that record alone
        (a read-only ``(1, d)`` array) and the public candidates (a read-only ``(n, d)`` array),
        and must return that record's similarities to every candidate (shape ``(1, n)`` or
        ``(n,)``). It never sees two records at once, so one record's row cannot depend on
        another record (a rescaling by the largest distance over all records, say, is computed
        over that record's own distances). It must be a pure function of its arguments: a
        callable that keeps state between calls can still mix records, and then the declared
        sensitivity does not hold. Clipping into ``[0, s_max]`` together with this contract is
        what makes ``sensitivity = s_max / N`` hold.

        The bandwidth and radius must be public (not tuned on the private points), otherwise the
        declared sensitivity does not cover their choice.

        Sensitivity: under the replace-one relation (one row of ``points`` replaced by any other
        point, ``N`` fixed) only one client's term changes, and that term lies in
        ``[0, s_max / N]``; so :math:`|f_D(S) - f_{D'}(S)| \le s_{\max}/N` for every ``S``.
        Declared ``sensitivity = s_max / N``, ``data_model = "monotone-records"``.

        Representation: with a built-in similarity and ``dtype`` left unset, no ``N x n``
        matrix is built. The objective is the record objective of :meth:`from_chunks` over the
        points as one block (O(N) state; each greedy step recomputes the similarities of the
        records whose best candidate changed), a
        :class:`~dpsubmod.functions.records.RecordFacilityLocation`: similarities are float32
        and rounded down to multiples of ``s_max / 2**24``, computed from coordinates taken
        relative to the centre of the candidates' bounding box (public). Values then agree
        with the float64 matrix to a few ``s_max / 2**24`` when the candidates span a few
        bandwidths (or radii); the float32 error of a similarity grows with the ratio of that
        span to the bandwidth. It keeps the sensitivity, data model, privacy statement and
        :meth:`neighbour` of the dense objective, and builds its ``similarity`` matrix only
        when read. A callable similarity, an explicit ``dtype``, or a bandwidth, radius or
        candidate spread outside ``[1e-15, 1e15]`` gives the dense :class:`FacilityLocation`
        with its ``N x n`` matrix (float64 similarities as computed, at ``N n`` floats of
        memory).

        Parameters
        ----------
        points : array-like, shape (N, d)
            Private records, one row per person.
        candidates : array-like, shape (n, d)
            Public candidate locations (the ground set).
        similarity : {"gaussian", "negative_distance"} or callable, default="gaussian"
        bandwidth : float
            Required with ``"gaussian"``, not accepted otherwise.
        radius : float
            Required with ``"negative_distance"``, not accepted otherwise.
        s_max : float
            Required with a callable similarity, not accepted otherwise.
        dtype : {None, numpy.float64, numpy.float32}, default=None
            ``None``: no matrix for a built-in similarity (see Representation above), float64
            storage for a callable one. A dtype: the dense ``N x n`` matrix stored in it;
            float32 halves its memory.

        Returns
        -------
        RecordFacilityLocation or FacilityLocation
            A :class:`~dpsubmod.functions.records.RecordFacilityLocation` (a
            :class:`~dpsubmod.functions.records.RecordObjective`) for a built-in similarity
            without ``dtype``; otherwise the dense :class:`FacilityLocation`. Both are set
            functions for :func:`dpsubmod.maximize` and the private methods, with
            ``similarity``, ``weights``, ``n_clients`` and ``neighbour(rng, index=,
            point=)``.
        """
        caller = "FacilityLocation.from_records"
        P = check_finite(points, "points", caller=caller, ndim=2, dtype=np.float64)
        C = check_finite(candidates, "candidates", caller=caller, ndim=2, dtype=np.float64)
        if P.shape[0] == 0 or C.shape[0] == 0:
            raise ValidationError(
                f"{caller} needs at least one point and one candidate; got {P.shape[0]} points "
                f"and {C.shape[0]} candidates."
            )
        if P.shape[1] != C.shape[1]:
            raise ValidationError(
                f"The 'candidates' argument of {caller} must have the same number of columns as "
                f"'points' ({P.shape[1]}); got {C.shape[1]}."
            )
        try:
            dt = np.dtype(np.float64 if dtype is None else dtype)
        except TypeError:
            dt = None
        if dt not in (np.dtype(np.float32), np.dtype(np.float64)):
            raise ValidationError(
                f"The 'dtype' parameter of {caller} must be None, numpy.float32 or "
                f"numpy.float64; got {dtype!r}."
            )
        kernel, smax = _make_kernel(similarity, C, bandwidth, radius, s_max, dt, caller)
        if not smax / P.shape[0] > 0.0:
            name = "radius" if similarity == "negative_distance" else "s_max"
            raise ValidationError(
                f"The '{name}' parameter of {caller} is {smax!r}: the sensitivity s_max / N it "
                f"gives over N = {P.shape[0]} records underflows to 0. Pass a {name} above "
                "about 1e-300 (in the units of the points)."
            )
        P = P.copy()
        C = C.copy()
        if dtype is None and isinstance(similarity, str):
            scale = bandwidth if similarity == "gaussian" else smax
            if float32_scales(C, float(scale)):
                return RecordFacilityLocation.build(P, C, similarity, float(scale))
        _check_fits(P.shape[0], C.shape[0], dt, caller)
        sim = _similarity_matrix(kernel, P, C.shape[0], dt)
        return _fl_from_matrix(sim, P, C, kernel, smax)

    @classmethod
    def from_chunks(cls, chunks: object, candidates: object, similarity: str = "gaussian", *,
                    bandwidth: float | None = None, radius: float | None = None,
                    bounds: tuple[object, object] | None = None, invalid: str = "drop",
                    user_id: object = None, max_rows_per_user: int | None = None,
                    relation: str | None = None, chunk_rows: int | None = None,
                    n_jobs: int = 1, scheduler: object = None) -> SetFunction:
        r"""Facility location over records read in chunks, never as an ``N x n`` matrix.

        The objective of :meth:`from_records` with O(N) state (each record's current best
        similarity): every greedy step recomputes the similarity blocks of the records that
        changed, one pass over the chunks. Similarities are float32 and rounded down to
        multiples of ``s_max / 2**24``; gains are exact sums of these per-record terms, so the
        selection does not depend on the chunking, the order of the chunks or the machine
        (see :mod:`dpsubmod.functions.records`). Coordinates are rounded to float32 as
        given: values agree with the float64 similarities to about ``1e-7`` relative when the
        coordinates lie within a few bandwidths (or radii) of 0, less far from it (longitudes,
        say). :meth:`from_records` builds this objective over points in memory, from
        coordinates taken relative to the candidates' centre.

        Parameters
        ----------
        chunks : 2-d array, iterable of 2-d arrays or of (values, user_ids) pairs, callable
            returning such an iterator, or a chunk source (``dpsubmod.datasets.scan_records``)
            Private records, one row per record, one column per coordinate of the candidates.
            A callable or chunk source is re-read on every pass (memory O(N)); other inputs
            are read once and kept as float32 rows (O(N d)).
        candidates, similarity, bandwidth, radius
            As in :meth:`from_records` (built-in similarities only).
        bounds : (low, high) arrays of shape (d,), optional
            Public box; records are clipped into it.
        invalid : {"drop", "impute"}, default="drop"
            A row with a non-finite coordinate counts in ``N`` and contributes 0 ("drop"), or
            gets the centre of ``bounds`` ("impute", needs ``bounds``).
        user_id, max_rows_per_user, relation
            Persons with many rows and the neighbouring relation: see
            :mod:`dpsubmod.functions.records.build`. Default: replace one row, average over
            ``N`` rows, ``sensitivity = s_max / N``.
        chunk_rows : int, optional
            Rows per block when ``chunks`` is one array.
        n_jobs : int, default=1
            Threads that process blocks.
        scheduler : str, distributed.Client or LocalCluster, optional
            Partition the records over a Dask cluster (the ``[distributed]`` extra): each
            worker keeps its rows and their state and returns ``n`` numbers per step; a dask
            array ``chunks`` is used as partitioned. See
            :mod:`dpsubmod.functions.records.distributed`.

        Returns
        -------
        RecordObjective
        """
        return facility_location_from_chunks(
            chunks, candidates, similarity, bandwidth=bandwidth, radius=radius, bounds=bounds,
            invalid=invalid, user_id=user_id, max_rows_per_user=max_rows_per_user,
            relation=relation, chunk_rows=chunk_rows, n_jobs=n_jobs, scheduler=scheduler)

    def neighbour(self, rng: RNGLike = None, *, index: int | None = None,
                  point: object = None) -> FacilityLocation:
        """The same objective with one record replaced (replace-one relation).

        Parameters
        ----------
        rng : int, Generator or None, default=None
            Used only for what is not given: the index (uniform over records) and the new point
            (uniform in the bounding box of the public candidates).
        index : int, optional
            Which record (row of ``points``) to replace.
        point : array-like, shape (d,), optional
            The replacement record.
        """
        if self._points is None:
            return super().neighbour(rng)
        P, index = replaced_points(self._points, self._candidates, rng, index, point,
                                   "FacilityLocation.neighbour")
        sim = self.similarity.copy()
        sim[index] = self._kernel(P[index:index + 1])[0]
        return _fl_from_matrix(sim, P, self._candidates, self._kernel, self._s_max)

    # -- evaluation -------------------------------------------------------------------------------
    def _value(self, mask: np.ndarray) -> float:
        idx = np.flatnonzero(mask)
        if idx.size == 0:
            return 0.0
        if self._sparse:
            csc = self._csc
            pos = concat_ranges(csc.indptr[idx], csc.indptr[idx + 1] - csc.indptr[idx])
            best = np.zeros(self.n_clients)
            np.maximum.at(best, csc.indices[pos], csc.data[pos])
        else:
            best = self.similarity[:, idx].max(axis=1).astype(np.float64)
        return float(self.weights @ best)

    def _initial_gains(self) -> np.ndarray:
        """Gains at the empty set, ``w @ similarity``, computed once and shared by all states."""
        if self._gains0 is None:
            sim = self.similarity
            if self._sparse:
                g = np.asarray(self.weights @ sim, dtype=np.float64)
            else:
                g = np.zeros(self.n)
                step = row_chunks(self.n_clients, self.n).step
                for s in range(0, self.n_clients, step):
                    g += self.weights[s:s + step] @ sim[s:s + step].astype(np.float64)
            self._gains0 = g
        return self._gains0

    def _gain_drop(self, changed: np.ndarray, old: np.ndarray, new: np.ndarray) -> np.ndarray:
        r"""``sum_{c in changed} w_c clip(s[c, :] - old_c, 0, new_c - old_c)`` for every column."""
        w = self.weights[changed]
        old = old.astype(np.float64)
        width = new.astype(np.float64) - old
        if self._sparse:
            sub = self.similarity[changed]
            rid = np.repeat(np.arange(changed.size), np.diff(sub.indptr))
            vals = sub.data.astype(np.float64) - old[rid]
            np.clip(vals, 0.0, width[rid], out=vals)
            vals *= w[rid]
            return np.bincount(sub.indices, weights=vals, minlength=self.n)
        out = np.zeros(self.n)
        step = row_chunks(changed.size, self.n).step
        for s in range(0, changed.size, step):
            blk = np.take(self.similarity, changed[s:s + step], axis=0).astype(np.float64,
                                                                                copy=False)
            blk -= old[s:s + step, None]
            np.clip(blk, 0.0, width[s:s + step, None], out=blk)
            out += w[s:s + step] @ blk
        return out

    @property
    def batched_values(self) -> bool:  # type: ignore[override]
        return not self._sparse

    def _values(self, masks: np.ndarray) -> np.ndarray:
        """Dense: each client's best chosen similarity for a block of masks at once (the
        similarities are nonnegative, so an unchosen candidate counts as 0)."""
        if self._sparse:
            return super()._values(masks)
        m = masks.shape[0]
        out = np.empty(m)
        step = max(1, (1 << 22) // max(1, self.n_clients * self.n))
        S = self.similarity
        for s in range(0, m, step):
            blk = masks[s:s + step, None, :] * S[None, :, :]
            out[s:s + step] = blk.max(axis=2).astype(np.float64) @ self.weights
        return out

    def _chain_values(self, order: np.ndarray) -> np.ndarray:
        r"""Running maxima along the chain: client ``i``'s best similarity after ``k`` steps
        is :math:`\max_{j \le k} s_{i, order_j}`.

        Dense: a cumulative maximum over the chain's columns, summed over client blocks.
        Sparse: a client's best changes only at its *records* (an entry larger than every
        earlier one of that client); sorting the entries by client and decreasing similarity,
        an entry is a record when its position precedes every larger entry's, and the step then
        gains the difference to the next smaller record.
        """
        m = order.size
        out = np.zeros(m + 1)
        if m == 0:
            return out
        if not self._sparse:
            step = row_chunks(self.n_clients, m).step
            for s in range(0, self.n_clients, step):
                blk = np.take(self.similarity[s:s + step], order, axis=1).astype(
                    np.float64, copy=False)
                np.maximum.accumulate(blk, axis=1, out=blk)
                out[1:] += self.weights[s:s + step] @ blk
            return out
        csc = self._csc
        counts = np.diff(csc.indptr)[order]
        pos = concat_ranges(csc.indptr[order], counts)
        rows = csc.indices[pos].astype(np.int64)
        vals = csc.data[pos].astype(np.float64)
        if rows.size == 0:  # no similarity on the chain (a sparse matrix without entries)
            return out
        k = np.repeat(np.arange(1, m + 1), counts)
        srt = np.lexsort((k, -vals, rows))
        rows, vals, k = rows[srt], vals[srt], k[srt]
        start = np.ones(rows.size, dtype=bool)
        start[1:] = rows[1:] != rows[:-1]
        seg = np.cumsum(start) - 1
        # earliest position among the entries at least as large (exclusive running minimum,
        # kept exact in integers: seg * span - k increases across client segments)
        span = m + 2
        key = seg * span - k
        run = np.maximum.accumulate(key)
        prev_min = np.empty(rows.size, dtype=np.int64)
        prev_min[0] = span
        prev_min[1:] = seg[1:] * span - run[:-1]
        prev_min[start] = span
        rec = k < prev_min
        r_rows, r_vals, r_k = rows[rec], vals[rec], k[rec]
        below = np.zeros(r_rows.size)  # the next smaller record of the same client, else 0
        same = r_rows[1:] == r_rows[:-1]
        below[:-1][same] = r_vals[1:][same]
        gain = self.weights[r_rows] * (r_vals - below)
        np.cumsum(np.bincount(r_k - 1, weights=gain, minlength=m), out=out[1:])
        return out

    def state(self) -> FunctionState:
        return _FacilityLocationState(self)


class _FacilityLocationState(FunctionState):
    """Best similarity per client plus the cached gains of every candidate."""

    f: FacilityLocation

    def __init__(self, f: FacilityLocation):
        super().__init__(f)
        self.best = np.zeros(f.n_clients, dtype=f.similarity.dtype)
        self.cache = f._initial_gains().copy()

    def _gains(self, cand: np.ndarray) -> np.ndarray:
        return self.cache[cand]

    def _add(self, e: int) -> None:
        f = self.f
        if f._sparse:
            csc = f._csc
            rows = csc.indices[csc.indptr[e]:csc.indptr[e + 1]]
            vals = csc.data[csc.indptr[e]:csc.indptr[e + 1]]
            up = vals > self.best[rows]
            changed, new = rows[up], vals[up]
        else:
            col = f.similarity[:, e]
            changed = np.flatnonzero(col > self.best)
            new = col[changed]
        if changed.size:
            old = self.best[changed]
            self.cache -= f._gain_drop(changed, old, new)
            # Gains are nonnegative; clipping removes round-off below zero.
            np.maximum(self.cache, 0.0, out=self.cache)
            self.value += float(f.weights[changed] @ (new.astype(np.float64) - old))
            self.best[changed] = new
        self.cache[e] = 0.0


def _fl_from_matrix(sim: np.ndarray, P: np.ndarray, C: np.ndarray,
                    kernel: Callable[[np.ndarray], np.ndarray], smax: float) -> FacilityLocation:
    N = P.shape[0]
    f = FacilityLocation(sim, np.full(N, 1.0 / N), sensitivity=smax / N,
                         data_model="monotone-records")
    f._points, f._candidates, f._kernel, f._s_max = P, C, kernel, smax
    f._value_upper = float(smax)  # an average of similarities in [0, s_max]
    return f
