"""The per-user contribution bound of record objectives built with ``user_id=``: each
person's first ``max_rows_per_user`` rows count, in source order, and a row without an id
counts never. One rule, shared by the in-memory, chunked and Dask builds."""

from __future__ import annotations

import numpy as np

from ..._cells import null_ids
from ...errors import ValidationError


class FirstRows:
    """Keep the first ``m`` rows of every user, streaming over chunks in source order."""

    def __init__(self, m: int):
        self.m = int(m)
        self.ids = np.zeros(0)
        self.counts = np.zeros(0, dtype=np.int64)

    def prior(self, u: np.ndarray) -> np.ndarray:
        """Rows seen so far of each user in ``u`` (sorted unique ids)."""
        if self.ids.size == 0:
            return np.zeros(u.size, dtype=np.int64)
        pos = np.minimum(np.searchsorted(self.ids, u), self.ids.size - 1)
        return np.where(self.ids[pos] == u, self.counts[pos], 0)

    def keep(self, ids: np.ndarray, what: str) -> np.ndarray:
        """Which rows count: a person's first ``m`` rows; a row without an id never (it is
        dropped by the declared rule, which looks at that row alone)."""
        ids = np.asarray(ids)
        null = null_ids(ids)
        if null.any():
            out = np.zeros(ids.shape[0], dtype=bool)
            if (~null).any():
                out[~null] = self.keep(ids[~null], what)
            return out
        if ids.dtype == object:
            ids = ids.astype(str)
        u, inv = np.unique(ids, return_inverse=True)
        inv = inv.ravel()
        order = np.argsort(inv, kind="stable")
        cnt = np.bincount(inv, minlength=u.size)
        starts = np.repeat(np.cumsum(cnt) - cnt, cnt)
        rank = np.empty(inv.size, dtype=np.int64)
        rank[order] = np.arange(inv.size) - starts
        if self.ids.size:
            if self.ids.dtype.kind != u.dtype.kind:
                raise ValidationError(f"The user column ({what}) changes type between chunks "
                                      f"({self.ids.dtype} then {u.dtype}); give one type.")
            pos = np.searchsorted(self.ids, u)
            posc = np.minimum(pos, self.ids.size - 1)
            found = self.ids[posc] == u
            prior = np.where(found, self.counts[posc], 0)
            self.counts[posc[found]] += cnt[found]
            merged = np.concatenate([self.ids, u[~found]])
            counts = np.concatenate([self.counts, cnt[~found]])
            o = np.argsort(merged, kind="stable")
            self.ids, self.counts = merged[o], counts[o]
        else:
            prior = np.zeros(u.size, dtype=np.int64)
            self.ids, self.counts = u, cnt.astype(np.int64)
        return prior[inv] + rank < self.m
