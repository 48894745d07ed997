"""Record-partitioned objectives on a Dask cluster (the ``[distributed]`` extra).

Each partition of the records stays on its worker with its per-record state. A greedy step
sends the chosen item to every partition, which updates its state and returns ``n`` numbers
(the drop of every candidate's gain, exact integers in float64); the caller sums them and runs
the mechanism, so any noise backend (the secure one included) works unchanged. Memory per
worker is about ``N / w`` rows of records plus their state, never ``N/w x n``.

A step either gathers the answer of **every** partition (each tagged with its index, the step
and its row count, all checked) or raises :class:`DistributedRunError`: a selection is never
computed from partial gains. Tasks that fail are retried (``retries``); a worker lost with its
partition's state fails the run cleanly, before anything is released.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..._cells import to_float
from ...errors import DPSubmodError, MissingDependencyError, ValidationError
from .bounding import FirstRows
from .objective import block_add, block_gains, block_value, init_state, prepare


class DistributedRunError(DPSubmodError, RuntimeError):
    """A distributed pass did not complete on every partition; nothing was released."""


def connect(scheduler: Any, timeout: float = 10.0) -> Any:
    """A ``distributed.Client`` for ``scheduler`` (an address, a Client or a LocalCluster)."""
    try:
        from distributed import Client
    except ImportError:
        raise MissingDependencyError(
            "A Dask scheduler needs dask.distributed: pip install 'dpsubmod[distributed]'."
        ) from None
    if isinstance(scheduler, Client):
        return scheduler
    if hasattr(scheduler, "scheduler_address"):
        return Client(scheduler)
    if not isinstance(scheduler, str):
        raise ValidationError(f"The scheduler must be an address such as tcp://HOST:8786, a "
                              f"distributed.Client or a LocalCluster; got "
                              f"{type(scheduler).__name__}.")
    try:
        return Client(scheduler, timeout=timeout)
    except (OSError, TimeoutError, ValueError) as exc:
        raise ValidationError(
            f"The scheduler {scheduler!r} cannot be reached ({type(exc).__name__}) within "
            f"{timeout:g} s. Check the address, or start one with 'dask scheduler'; nothing "
            "was computed or released.") from None


# -- tasks that run on the workers --------------------------------------------------------------
def _prepare(block: np.ndarray, clean: Any, index: int, ids: Any) -> dict:
    X = to_float(block)
    if X.ndim != 2:
        raise ValidationError(f"Partition {index} of the records has shape {X.shape}; it must "
                              "be 2-d.")
    vals, valid = clean(X)
    return {"index": index, "X": vals, "valid": valid, "ids": ids, "rows": X.shape[0]}


def _read_group(source: Any, group: int) -> tuple[np.ndarray, Any]:
    """One Parquet row group, read on the worker that will hold it (by the source's reader)."""
    return source.read_group(group)


def _first(pair: tuple) -> Any:
    return pair[0]


def _second(pair: tuple) -> Any:
    return pair[1]


def _user_counts(part: dict) -> tuple[np.ndarray, np.ndarray]:
    b = FirstRows(1)
    b.keep(part["ids"], "user_id")
    return b.ids, b.counts


def _bound(part: dict, ids: np.ndarray, prior: np.ndarray, m: int) -> dict:
    b = FirstRows(m)
    b.ids, b.counts = ids, prior
    keep = b.keep(part["ids"], "user_id")
    return {**part, "keep": keep}


def _start(part: dict, kernel: Any) -> dict:
    keep = part.get("keep")
    use = part["valid"] if keep is None else part["valid"] & keep
    X = prepare(kernel, part["X"][use])
    counted = part["rows"] if keep is None else int(keep.sum())
    st = init_state(kernel, X.shape[0])
    return {"index": part["index"], "X": X, "state": st, "step": 0, "counted": counted,
            "out": block_gains(kernel, X, st), "dv": 0.0}


def _add(part: dict, kernel: Any, e: int, step: int) -> dict:
    st, drop, dv = block_add(kernel, part["X"], part["state"], e)
    return {**part, "state": st, "step": step, "out": drop, "dv": dv}


def _small(part: dict) -> tuple[int, int, int, np.ndarray, float]:
    return part["index"], part["step"], part["counted"], part["out"], part["dv"]


def _value(part: dict, kernel: Any, idx: np.ndarray) -> float:
    return block_value(kernel, part["X"], idx)


class DaskBlocks:
    """Partitions on Dask workers, driven step by step from the caller's process."""

    def __init__(self, client: Any, parts: list[Any], kernel: Any, retries: int = 1):
        self.client, self.parts, self.kernel = client, parts, kernel
        self.retries = int(retries)
        self.n_blocks = len(parts)
        self._counted: int | None = None

    def _gather(self, futures: list[Any], step: int) -> tuple[np.ndarray, float]:
        try:
            res = self.client.gather(futures)
        except DPSubmodError:
            raise
        except Exception as exc:  # noqa: BLE001 - a lost worker raises many types
            raise DistributedRunError(
                f"Step {step} of the distributed run did not complete on every partition "
                f"({type(exc).__name__}: {exc}); a worker was probably lost with its "
                "partition's state. Nothing was released; run again.") from None
        seen = sorted(r[0] for r in res)
        if seen != list(range(self.n_blocks)) or any(r[1] != step for r in res):
            raise DistributedRunError(f"Step {step}: the partitions answered for steps "
                                      f"{sorted({r[1] for r in res})}; nothing was released.")
        counted = sum(r[2] for r in res)
        if self._counted is not None and counted != self._counted:
            raise DistributedRunError(f"Step {step}: the partitions hold {counted} rows, not "
                                      f"{self._counted}; nothing was released.")
        self._counted = counted
        total = np.zeros(self.kernel.n)
        for r in res:
            total += r[3]
        return total, float(sum(r[4] for r in res))

    def start(self, kernel: Any) -> tuple[list[Any], np.ndarray]:
        c = self.client
        states = [c.submit(_start, p, kernel, retries=self.retries, pure=False)
                  for p in self.parts]
        total, _ = self._gather([c.submit(_small, s, pure=False) for s in states], 0)
        return states, total

    def add(self, kernel: Any, states: list[Any], e: int) -> tuple[list[Any], np.ndarray,
                                                                    float]:
        c = self.client
        step = self._step = getattr(self, "_step", 0) + 1
        new = [c.submit(_add, s, kernel, int(e), step, retries=self.retries, pure=False)
               for s in states]
        drop, dv = self._gather([c.submit(_small, s, pure=False) for s in new], step)
        return new, drop, dv

    def value(self, kernel: Any, idx: np.ndarray) -> float:
        futs = [self.client.submit(_value, p, kernel, idx, pure=False)
                for p in self._latest_parts()]
        try:
            return float(sum(self.client.gather(futs)))
        except Exception as exc:  # noqa: BLE001
            raise DistributedRunError(f"The distributed value pass failed ({exc}).") from None

    def _latest_parts(self) -> list[Any]:
        c = self.client
        return [c.submit(_start, p, self.kernel, pure=False) for p in self.parts]


def dask_parts(client: Any, records: Any, clean: Any, width: int, user_id: Any,
               m: int | None, n_parts: int = 2) -> tuple[list[Any], int, int]:
    """Partition futures of the records, cleaned and contribution-bounded, the number of rows
    that count and the number of rows read.

    ``records`` is a 2-d dask array (or a dask DataFrame of the value columns), partitioned by
    row blocks, or a numpy array of this process, scattered to the workers in ``n_parts`` row
    blocks (no copy of the data inside the task graph).
    """
    if getattr(records, "kind", None) == "parquet":
        # Parquet on the cluster: each worker reads its own row groups (a shared file system)
        import pyarrow.parquet as pq

        meta = pq.ParquetFile(records._obj).metadata
        cols, uc = list(records.columns), records.user_column
        if len(cols) != width:
            raise ValidationError(f"The records have {len(cols)} value columns; {width} are "
                                  "needed.")
        pairs = [client.submit(_read_group, records, g, pure=False)
                 for g in range(meta.num_row_groups)]
        data = [client.submit(_first, p, pure=False) for p in pairs]
        ids = ([client.submit(_second, p, pure=False) for p in pairs] if uc is not None
               else [None] * len(pairs))
        total = int(meta.num_rows)
        user_id = uc
    elif hasattr(records, "__dask_graph__"):
        arr = records
        if hasattr(arr, "to_dask_array"):
            arr = arr.to_dask_array(lengths=True)
        if not hasattr(arr, "to_delayed") or getattr(arr, "ndim", 0) != 2:
            raise ValidationError("Distributed records must be a 2-d dask array (rows x "
                                  "columns) or a dask DataFrame of the value columns.")
        if arr.shape[1] != width:
            raise ValidationError(f"The distributed records have {arr.shape[1]} columns; "
                                  f"{width} are needed (one per coordinate of the candidates, "
                                  "or per item).")
        arr = arr.rechunk({1: -1})
        data = client.compute(arr.to_delayed().ravel().tolist())
        total = int(arr.shape[0])
        if user_id is not None:
            if not hasattr(user_id, "to_delayed"):
                raise ValidationError("With dask records, user_id must be a 1-d dask array "
                                      "aligned with the rows.")
            ids = client.compute(user_id.rechunk((arr.chunks[0],)).to_delayed().ravel()
                                 .tolist())
        else:
            ids = [None] * len(data)
    else:
        X = np.asarray(records)
        if X.ndim != 2 or X.shape[1] != width:
            raise ValidationError(f"The records have shape {X.shape}; {width} columns are "
                                  "needed.")
        cuts = np.linspace(0, X.shape[0], max(1, min(n_parts, X.shape[0])) + 1).astype(int)
        blocks = [X[a:b] for a, b in zip(cuts[:-1], cuts[1:])]
        data = client.scatter(blocks)
        total = int(X.shape[0])
        if user_id is not None:
            u = np.asarray(user_id)
            ids = client.scatter([u[a:b] for a, b in zip(cuts[:-1], cuts[1:])])
        else:
            ids = [None] * len(data)
    parts = [client.submit(_prepare, d, clean, i, ids_i, pure=False)
             for i, (d, ids_i) in enumerate(zip(data, ids))]
    if user_id is None:
        return parts, total, total
    counts = client.gather([client.submit(_user_counts, p, pure=False) for p in parts])
    running = FirstRows(m)
    bounded = []
    for p, (u, cnt) in zip(parts, counts):
        # the first m rows of a person in partition order: rows before this partition count
        bounded.append(client.submit(_bound, p, u, running.prior(u), m, pure=False))
        running.keep(np.repeat(u, cnt.astype(np.int64)), "user_id")
    kept = sum(client.gather([client.submit(_kept, b, pure=False) for b in bounded]))
    return bounded, int(kept), total


def _kept(part: dict) -> int:
    return int(part["keep"].sum())
