"""Record-partitioned objectives: O(N) per-record state, similarity blocks recomputed per pass.

:class:`RecordObjective` is a :class:`~dpsubmod.functions.SetFunction` whose records live in
blocks (in memory, re-read from a file, or on Dask workers, see :mod:`.distributed`). Each
greedy step is one pass over the blocks, and only ``n`` numbers per block come back; the
private algorithm and its noise backend run unchanged on the caller's side. Gains are exact
sums of fixed-point per-record terms (:mod:`.kernels`), so the selection does not depend on
how the records are split or ordered.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from ..._rng import as_generator
from ...errors import ValidationError
from ..base import FunctionState, SetFunction
from .kernels import MAX_ROWS, ConcaveKernel


# -- block operations (module level: they run in threads or on Dask workers) ------------------
def init_state(kernel: Any, rows: int) -> np.ndarray:
    """A block's per-record state: the current best term (max form) or running sum."""
    return np.zeros(rows, dtype=np.float64 if isinstance(kernel, ConcaveKernel) else np.float32)


#: Rows per sub-block of a pass: each sub-block computes only the candidates in its window.
SUB_ROWS = 1024


def _terms(kernel: Any, P: np.ndarray, floor: float = 0.0
           ) -> tuple[np.ndarray, np.ndarray | None]:
    """The terms of rows ``P`` for the candidates whose term can exceed the rows' current best
    (at least ``floor`` units); the terms left out add exactly 0 to every gain."""
    if hasattr(kernel, "window"):
        win = kernel.window(P, floor)
        cols = kernel.columns(win)
        if cols is not None and cols.size == 0:
            return np.zeros((P.shape[0], 0), dtype=np.float32), cols
        return kernel.block(P, win if cols is not None else None, cols), cols
    return kernel.block(P), None


def prepare(kernel: Any, X: np.ndarray) -> np.ndarray:
    """A block's rows in the order the passes use (nearby records together)."""
    if hasattr(kernel, "sort_rows") and X.shape[0] > 1:
        X = X[kernel.sort_rows(X)]
    return np.ascontiguousarray(X)


def block_gains(kernel: Any, X: np.ndarray, state: np.ndarray) -> np.ndarray:
    """``sum_i term_i(S + j) - term_i(S)`` for every candidate ``j`` (exact, float64)."""
    if isinstance(kernel, ConcaveKernel):
        M = kernel.values(X)
        base = kernel.term(state)
        return (kernel.term(state[:, None] + M) - base[:, None]).sum(axis=0)
    out = np.zeros(kernel.n)
    for s in range(0, X.shape[0], SUB_ROWS):
        b = state[s:s + SUB_ROWS]
        S, cols = _terms(kernel, X[s:s + SUB_ROWS], float(b.min()) if b.size else 0.0)
        if b.any():
            S -= b[:, None]
            np.maximum(S, 0, out=S)
        part = S.sum(axis=0, dtype=np.float64)
        if cols is None:
            out += part
        else:
            out[cols] += part
    return out


def block_add(kernel: Any, X: np.ndarray, state: np.ndarray, e: int
              ) -> tuple[np.ndarray, np.ndarray, float]:
    """Add ``e``: the new state, the drop of every candidate's gain, and the value increase."""
    if isinstance(kernel, ConcaveKernel):
        M = kernel.values(X)
        touched = np.flatnonzero(M[:, e] > 0)
        new = state.copy()
        if touched.size == 0:
            return new, np.zeros(kernel.n), 0.0
        Mt, old = M[touched], state[touched]
        cur = old + Mt[:, e]
        new[touched] = cur
        before = kernel.term(old[:, None] + Mt) - kernel.term(old)[:, None]
        after = kernel.term(cur[:, None] + Mt) - kernel.term(cur)[:, None]
        dv = float((kernel.term(cur) - kernel.term(old)).sum())
        return new, (before - after).sum(axis=0), dv
    col = kernel.column(X, e)
    changed = np.flatnonzero(col > state)
    new = state.copy()
    drop = np.zeros(kernel.n)
    if changed.size == 0:
        return new, drop, 0.0
    old_all, top_all = state[changed], col[changed]
    Xc = X[changed]
    for s in range(0, changed.size, SUB_ROWS):
        old, top = old_all[s:s + SUB_ROWS], top_all[s:s + SUB_ROWS]
        S, cols = _terms(kernel, Xc[s:s + SUB_ROWS], float(old.min()))
        S -= old[:, None]
        np.maximum(S, 0, out=S)
        np.minimum(S, (top - old)[:, None], out=S)
        part = S.sum(axis=0, dtype=np.float64)
        if cols is None:
            drop += part
        else:
            drop[cols] += part
    new[changed] = top_all
    dv = float((top_all - old_all).sum(dtype=np.float64))
    return new, drop, dv


def block_value(kernel: Any, X: np.ndarray, idx: np.ndarray) -> float:
    """``sum_i term_i(S)`` for ``S = idx`` (one pass)."""
    if idx.size == 0:
        return 0.0
    if isinstance(kernel, ConcaveKernel):
        return float(kernel.term(kernel.values(X)[:, idx].sum(axis=1)).sum())
    if 4 * idx.size < kernel.n:
        # a few columns: each equals the block's column bit for bit, and the sum of the
        # integer terms is exact in any order
        best = kernel.column(X, int(idx[0]))
        for e in idx[1:]:
            np.maximum(best, kernel.column(X, int(e)), out=best)
        return float(best.sum(dtype=np.float64))
    total = 0.0
    for s in range(0, X.shape[0], SUB_ROWS):
        S = kernel.block(X[s:s + SUB_ROWS])
        total += float(S[:, idx].max(axis=1).sum(dtype=np.float64))
    return total


# -- where the blocks live -------------------------------------------------------------------
class LocalBlocks:
    """Blocks in this process: arrays in memory, or a source re-read on every pass.

    ``source()`` returns a fresh iterator over the blocks in a fixed order; ``n_jobs`` threads
    process them (numpy releases the GIL in the kernels).
    """

    def __init__(self, source: Callable[[], Iterator[np.ndarray]], n_blocks: int,
                 rows: list[int], n_jobs: int = 1):
        self.source, self.n_blocks, self.rows = source, n_blocks, rows
        self.n_jobs = max(1, int(n_jobs))

    def _map(self, fn: Callable[[int, np.ndarray], Any]) -> list[Any]:
        it = enumerate(self.source())
        if self.n_jobs == 1:
            return [fn(i, X) for i, X in it]
        with ThreadPoolExecutor(self.n_jobs) as pool:
            futs = [pool.submit(fn, i, X) for i, X in it]
            return [f.result() for f in futs]

    def start(self, kernel: Any) -> tuple[list[np.ndarray], np.ndarray]:
        states = [init_state(kernel, r) for r in self.rows]
        parts = self._map(lambda i, X: block_gains(kernel, X, states[i]))
        return states, _exact_sum(parts, kernel.n)

    def add(self, kernel: Any, states: list[np.ndarray], e: int
            ) -> tuple[list[np.ndarray], np.ndarray, float]:
        out = self._map(lambda i, X: block_add(kernel, X, states[i], e))
        return ([o[0] for o in out], _exact_sum([o[1] for o in out], kernel.n),
                float(sum(o[2] for o in out)))

    def value(self, kernel: Any, idx: np.ndarray) -> float:
        return float(sum(self._map(lambda i, X: block_value(kernel, X, idx))))


def _exact_sum(parts: Iterable[np.ndarray], n: int) -> np.ndarray:
    total = np.zeros(n)
    for p in parts:
        total += p  # integers below 2**53: exact in any order
    return total


# -- the objective ---------------------------------------------------------------------------
class RecordObjective(SetFunction):
    r"""A sum (or average) of per-record terms over records held in blocks.

    ``f(S) = weight * sum_i t_i(S)``, where ``t_i`` is record ``i``'s fixed-point term (in
    units of ``s_max / 2**24``) and ``weight = s_max / (2**24 N)`` for the replace-one-row
    average or ``s_max / 2**24`` for a sum. Build it with ``FacilityLocation.from_chunks``,
    ``Coverage.from_chunks`` or ``FeatureBased.from_chunks`` (a Dask collection, with
    ``scheduler=``, partitions the records on a cluster).

    Attributes
    ----------
    n_rows : int
        Rows that count (after contribution bounding; including rows whose invalid values
        made them contribute nothing).
    neighbouring : str
        The relation behind ``sensitivity``.
    progress : callable or None
        Called with no argument after every pass over the records (for progress bars).
    """

    monotone = True
    submodular = True

    def __init__(self, kernel: Any, blocks: Any, *, n_rows: int, weight: float,
                 sensitivity: float, neighbouring: str):
        super().__init__(kernel.n, sensitivity=sensitivity, data_model="monotone-records")
        if n_rows > MAX_ROWS:
            raise ValidationError(f"A record objective sums at most 2**29 rows exactly; got "
                                  f"{n_rows}. Split the data.")
        self.kernel, self.blocks, self.n_rows = kernel, blocks, int(n_rows)
        self.weight = float(weight)
        self.neighbouring = neighbouring
        self.progress: Callable[[], None] | None = None
        self._last: tuple[bytes, float] | None = None
        # set by the in-memory build: makes a neighbour from the rows it holds
        self._rebuild: Callable[..., RecordObjective] | None = None
        self.submodular = not isinstance(kernel, ConcaveKernel)
        if neighbouring.startswith("replace one row by any"):
            # the average over a public N of terms in [0, s_max]
            self._value_upper = float(kernel.s_max)

    def neighbour(self, rng: Any = None, *, index: int | None = None,
                  record: Any = None) -> RecordObjective:
        """A neighbouring instance, for auditors: one contributing row replaced by ``record``
        (default: a random one) under replace-one, or removed under add-remove.

        Available for records held in memory without ``user_id``; otherwise raises.
        """
        if self._rebuild is None:
            return super().neighbour(rng)
        return self._rebuild(self, as_generator(rng), index, record)

    def _tick(self) -> None:
        if self.progress is not None:
            self.progress()

    def _value(self, mask: np.ndarray) -> float:
        idx = np.flatnonzero(mask)
        if idx.size == 0:
            return 0.0
        key = np.packbits(mask).tobytes()
        if self._last is not None and self._last[0] == key:
            return self._last[1]
        v = self.blocks.value(self.kernel, idx) * self.weight
        self._tick()
        return v

    def state(self) -> FunctionState:
        return _RecordState(self)


class _RecordState(FunctionState):
    f: RecordObjective

    def __init__(self, f: RecordObjective):
        super().__init__(f)
        self.units = 0.0
        self.states, self.cache = f.blocks.start(f.kernel)
        f._tick()

    def _gains(self, cand: np.ndarray) -> np.ndarray:
        out = self.cache[cand] * self.f.weight
        out[self.mask[cand]] = 0.0
        return out

    def _add(self, e: int) -> None:
        f = self.f
        self.states, drop, dv = f.blocks.add(f.kernel, self.states, e)
        self.cache -= drop
        self.units += dv
        self.value = self.units * f.weight
        f._tick()
        mask = self.mask.copy()
        mask[e] = True
        f._last = (np.packbits(mask).tobytes(), self.value)

    def copy(self) -> FunctionState:
        new = super().copy()
        new.states = [s.copy() for s in self.states] if isinstance(self.states, list) \
            else self.states
        return new

