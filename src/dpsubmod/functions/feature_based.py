"""Feature-based functions: a concave function over modular feature sums."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import scipy.sparse as sp

from ..errors import ParameterTypeError, ValidationError
from ._inputs import as_matrix, as_weights, concat_ranges, row_chunks
from .base import DataModel, FunctionState, SetFunction
from .records.families import feature_based_from_chunks


def _saturate(x: np.ndarray) -> np.ndarray:
    return np.minimum(x, 1.0)


#: Built-in concave, nondecreasing functions with g(0) = 0.
CONCAVE: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "sqrt": np.sqrt,
    "log1p": np.log1p,
    "min": _saturate,
}


class FeatureBased(SetFunction):
    r"""Concave over modular: :math:`f(S) = \sum_u w_u\, g\big(\sum_{e \in S} m_{e,u}\big)`.

    Each item ``e`` carries nonnegative feature values :math:`m_{e,u}` (word counts, topic
    weights, pixel intensities); a concave ``g`` makes each feature saturate, so a selection is
    rewarded for covering many features rather than piling up one. It scales to large ground
    sets because it needs no pairwise similarity.

    Monotone and submodular when ``g`` is concave and nondecreasing with ``g(0) = 0`` (the
    built-ins are; for a callable only ``g(0) = 0`` is checked here). This constructor derives
    no sensitivity from ``g``: a declared ``sensitivity`` is passed through, and what it
    assumes of a callable ``g`` is the caller's claim. :meth:`from_chunks`, which derives one,
    enforces it (``g`` is read on a public grid, checked, and each record's term clipped).

    Parameters
    ----------
    features : ndarray or scipy.sparse matrix, shape (n_items, n_features)
        Nonnegative finite feature values, **items in rows** (the ground set is the rows).
    concave : {"sqrt", "log1p", "min"} or callable, default="sqrt"
        ``g``: ``"sqrt"`` is :math:`\sqrt x`, ``"log1p"`` is :math:`\log(1 + x)`, ``"min"`` is
        :math:`\min(x, 1)` (a feature saturates at 1; rescale the features for another
        threshold). A callable must be vectorised (array in, array of the same shape out),
        concave, nondecreasing on ``[0, inf)`` and satisfy ``g(0) = 0``.
    weights : array-like of float, shape (n_features,), optional
        Nonnegative feature weights; all 1 when omitted.
    sensitivity : float, optional
        Declared sensitivity, passed through; nothing is derived. For example, if each feature
        value is an average over ``N`` records of per-record values in ``[0, c]`` and a record
        touches every item, replacing one record moves every feature sum of ``S`` by at most
        ``|S| c / N``; with ``g`` that is ``L``-Lipschitz (``log1p``, ``min``: ``L = 1``),
        ``f(S)`` moves by at most ``L |S| c / N * sum_u w_u``, which is what to declare (with
        ``|S|`` replaced by the largest selection size). ``sqrt`` is not Lipschitz at 0.
    data_model : {"general", "monotone-records"}, default="general"

    Notes
    -----
    The state keeps the feature sums ``c`` of the selection and a cached gains vector
    :math:`\sum_u w_u (g(c_u + m_{e,u}) - g(c_u))`. Adding ``e`` changes ``c`` only on the
    features where ``m_{e,u} > 0``, so only those columns are recomputed.

    References
    ----------
    Wei, K., Iyer, R. and Bilmes, J. (2014). Fast multi-stage submodular maximization. ICML.
    Schreiber, J., Bilmes, J. and Noble, W. S. (2020). apricot: submodular selection for data
    summarization in Python. *JMLR* 21(161).

    Examples
    --------
    >>> import numpy as np
    >>> f = FeatureBased(np.array([[4.0, 0.0], [0.0, 9.0], [5.0, 0.0]]))
    >>> f([0]), f([0, 1]), f([0, 2])
    (2.0, 5.0, 3.0)
    """

    monotone = True
    submodular = True

    def __init__(self, features: object, concave: str | Callable = "sqrt", weights: object = None,
                 *, sensitivity: float | None = None, data_model: DataModel = "general"):
        M = as_matrix(features, "features", "FeatureBased", nonnegative=True)
        n, U = M.shape
        g = _concave(concave)
        w = as_weights(weights, U, "weights", "FeatureBased")
        super().__init__(n, sensitivity=sensitivity, data_model=data_model)
        self.features = M
        self.concave = concave
        self.weights = w
        self.n_features = U
        self._g = g
        self._sparse = sp.issparse(M)
        self._csc = M.tocsc() if self._sparse else None
        self._gains0: np.ndarray | None = None

    @classmethod
    def from_chunks(cls, chunks: object, n_items: int, concave: str | Callable = "sqrt", *,
                    value_max: float = 1.0, cap: float | None = None, user_id: object = None,
                    max_rows_per_user: int | None = None, relation: str | None = None,
                    chunk_rows: int | None = None, n_jobs: int = 1,
                    scheduler: object = None) -> SetFunction:
        r"""A concave-over-modular objective summed over records read in chunks.

        Record ``i`` (a row of ``n_items`` values, e.g. a person's ratings of the items) gives
        the term :math:`\mathrm{clip}(g(\sum_{e \in S} m_{ie}), 0, \mathrm{cap})` with
        values clipped to ``[0, value_max]`` (a non-finite value counts as 0); ``f`` is the
        average of the terms, with the record's running sum as state (see
        :mod:`dpsubmod.functions.records`). Each term lies in ``[0, cap]`` (default
        ``cap = g(n_items * value_max)``), so ``sensitivity = cap / N`` under replace-one-row.
        Terms are rounded down to multiples of ``cap / 2**24``, which keeps them monotone but
        can break submodularity by one unit. ``user_id``, ``max_rows_per_user`` and
        ``relation`` as in :meth:`FacilityLocation.from_chunks`.

        The sensitivity does not trust a callable ``g``: it is called once, on 65,537 equally
        spaced public points of ``[0, n_items * value_max]`` (the range of a record's sum),
        and refused unless its values there are finite, start at ``g(0) = 0`` and never
        decrease. A record's term is then the linear interpolation of that table at the
        record's own sum, clipped to ``[0, cap]`` from both sides: ``g`` never sees a record,
        so a ``g`` that looks across its input array or keeps state between calls cannot make
        one record move another's term. The built-in names are evaluated exactly,
        elementwise, and clipped the same way.
        """
        return feature_based_from_chunks(chunks, n_items, _concave(concave),
                                         value_max=value_max, cap=cap,
                                         trusted=isinstance(concave, str), user_id=user_id,
                                         max_rows_per_user=max_rows_per_user,
                                         relation=relation, chunk_rows=chunk_rows,
                                         n_jobs=n_jobs, scheduler=scheduler)

    def _sums(self, mask: np.ndarray) -> np.ndarray:
        return np.asarray(mask.astype(np.float64) @ self.features, dtype=np.float64).ravel()

    def _value(self, mask: np.ndarray) -> float:
        if not mask.any():
            return 0.0
        return float(self.weights @ self._g(self._sums(mask)))

    def _contribution(self, cols: np.ndarray | None, c: np.ndarray) -> np.ndarray:
        """``sum_{u in cols} w_u (g(c_u + m[:, u]) - g(c_u))`` for every item (``c`` over cols).

        Only nonzero ``m[e, u]`` contribute, which the sparse branch exploits.
        """
        g, n = self._g, self.n
        if self._sparse:
            sub = self._csc if cols is None else self._csc[:, cols]
            cid = np.repeat(np.arange(sub.shape[1]), np.diff(sub.indptr))
            base = c[cid]
            vals = (g(base + sub.data) - g(base)) * self.weights[cid if cols is None
                                                                 else cols[cid]]
            return np.bincount(sub.indices, weights=vals, minlength=n)
        w = self.weights if cols is None else self.weights[cols]
        gc = g(c)
        out = np.zeros(n)
        step = row_chunks(n, c.size).step
        for s in range(0, n, step):
            blk = self.features[s:s + step]
            blk = blk.astype(np.float64) if cols is None else blk[:, cols].astype(np.float64)
            out[s:s + step] = (g(blk + c) - gc) @ w
        return out

    def _initial_gains(self) -> np.ndarray:
        if self._gains0 is None:
            self._gains0 = self._contribution(None, np.zeros(self.n_features))
        return self._gains0

    batched_values = True

    def _values(self, masks: np.ndarray) -> np.ndarray:
        sums = np.asarray(masks.astype(np.float64) @ self.features, dtype=np.float64)
        return self._g(sums) @ self.weights

    def _chain_values(self, order: np.ndarray) -> np.ndarray:
        """Cumulative feature sums along the chain, then ``g`` once per step and feature.

        Dense: running sums over blocks of chain steps. Sparse: each feature's sum changes only
        at the steps whose item has it, so the changes are per-feature running sums of the
        nonzeros in chain order.
        """
        m = order.size
        out = np.zeros(m + 1)
        if m == 0:
            return out
        g, w = self._g, self.weights
        if not self._sparse:
            carry = np.zeros(self.n_features)
            step = row_chunks(m, self.n_features).step
            for s in range(0, m, step):
                blk = np.take(self.features, order[s:s + step], axis=0).astype(np.float64)
                np.cumsum(blk, axis=0, out=blk)
                blk += carry
                out[1 + s:1 + s + blk.shape[0]] = g(blk) @ w
                carry = blk[-1].copy()
            return out
        M = self.features
        counts = np.diff(M.indptr)[order]
        pos = concat_ranges(M.indptr[order], counts)
        u = M.indices[pos].astype(np.int64)
        v = M.data[pos].astype(np.float64)
        k = np.repeat(np.arange(m), counts)
        srt = np.lexsort((k, u))
        u, v, k = u[srt], v[srt], k[srt]
        start = np.ones(u.size, dtype=bool)
        start[1:] = u[1:] != u[:-1]
        total = np.cumsum(v)
        base = np.maximum.accumulate(np.where(start, total - v, -np.inf))
        after = total - base
        after[start] = v[start]
        before = np.empty_like(after)
        before[start] = 0.0
        before[~start] = after[np.flatnonzero(~start) - 1]
        delta = w[u] * (g(after) - g(before))
        np.cumsum(np.bincount(k, weights=delta, minlength=m), out=out[1:])
        return out

    def state(self) -> FunctionState:
        return _FeatureBasedState(self)


def _concave(concave: object) -> Callable[[np.ndarray], np.ndarray]:
    if isinstance(concave, str):
        if concave not in CONCAVE:
            raise ValidationError(
                f"The 'concave' parameter of FeatureBased must be one of {sorted(CONCAVE)} or a "
                f"callable; got {concave!r}."
            )
        return CONCAVE[concave]
    if not callable(concave):
        raise ParameterTypeError(
            "The 'concave' parameter of FeatureBased must be a string or a callable; got "
            f"{type(concave).__name__}."
        )
    try:
        g0 = np.asarray(concave(np.zeros(2)), dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValidationError(
            f"The 'concave' callable of FeatureBased must map an array to an array: {exc}."
        ) from None
    if g0.shape != (2,) or not np.all(g0 == 0.0):
        raise ValidationError(
            "The 'concave' callable of FeatureBased must be vectorised and satisfy g(0) = 0; "
            f"g(zeros(2)) returned {g0!r}."
        )
    return concave


class _FeatureBasedState(FunctionState):
    """Feature sums of the selection plus the cached gains of every item."""

    f: FeatureBased

    def __init__(self, f: FeatureBased):
        super().__init__(f)
        self.sums = np.zeros(f.n_features)
        self.cache = f._initial_gains().copy()

    def _gains(self, cand: np.ndarray) -> np.ndarray:
        out = self.cache[cand]
        out[self.mask[cand]] = 0.0
        return out

    def _add(self, e: int) -> None:
        f = self.f
        if f._sparse:
            M = f.features
            cols = M.indices[M.indptr[e]:M.indptr[e + 1]]
            row = M.data[M.indptr[e]:M.indptr[e + 1]].astype(np.float64)
        else:
            r = f.features[e]
            cols = np.flatnonzero(r)
            row = r[cols].astype(np.float64)
        if cols.size == 0:
            return
        old = self.sums[cols]
        new = old + row
        self.cache += f._contribution(cols, new) - f._contribution(cols, old)
        g = f._g
        self.value += float(f.weights[cols] @ (g(new) - g(old)))
        self.sums[cols] = new
