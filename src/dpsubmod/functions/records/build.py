"""Building record objectives from chunks: validation, invalid rows, contribution bounding.

Three neighbouring relations (the statement names the one used):

* ``"replace-one"`` without ``user_id``: replace one row by any other row, ``N`` public; the
  objective is the average of the per-row terms, sensitivity ``s_max / N``.
* ``"add-remove"`` without ``user_id``: add or remove one row (one row = one person); the
  objective is the **sum** of the terms, sensitivity ``s_max``: the exponential mechanism
  needs no ``N``.
* with ``user_id`` and ``max_rows_per_user = m``: one person = up to ``m`` rows. Rows of a
  person beyond their first ``m`` (in source order) are dropped, a rule that looks at that
  person's rows only (contribution bounding, Wilson et al. 2020). The objective is the sum of
  the kept rows' terms; adding, removing or replacing one person moves it by at most
  ``m s_max``, the declared sensitivity (``relation`` ``"add-remove"``, default, or
  ``"replace-one"`` for replacing a person).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

import numpy as np

from ..._cells import to_float
from ...errors import ParameterTypeError, ValidationError
from .bounding import FirstRows
from .distributed import DaskBlocks, connect, dask_parts
from .kernels import UNITS
from .objective import LocalBlocks, RecordObjective, prepare

RELATIONS = ("replace-one", "add-remove")
DEFAULT_CHUNK_ROWS = 1 << 14


def _chunk_iter(chunks: Any, chunk_rows: int) -> tuple[Callable[[], Iterator[Any]], bool]:
    """A function returning a fresh iterator over the chunks, and whether it can be re-read."""
    if isinstance(chunks, np.ndarray) or (hasattr(chunks, "__array__")
                                          and not hasattr(chunks, "__next__")
                                          and not hasattr(chunks, "chunks")):
        X = np.asarray(chunks)
        if X.ndim != 2:
            raise ValidationError(f"The records must be a 2-d array (one row per record); got "
                                  f"shape {X.shape}.")
        return (lambda: (X[s:s + chunk_rows] for s in range(0, X.shape[0], chunk_rows))), False
    if hasattr(chunks, "chunks") and callable(chunks.chunks):
        return chunks.chunks, True
    if callable(chunks):
        return chunks, True
    if isinstance(chunks, (list, tuple)):
        return (lambda: iter(chunks)), False
    if hasattr(chunks, "__iter__"):
        return (lambda: iter(chunks)), False
    raise ParameterTypeError(
        "The records must be a 2-d array, an iterable of 2-d arrays (or of (values, user_ids) "
        "pairs), a callable returning such an iterator, or a chunk source from "
        f"dpsubmod.datasets.scan_records; got {type(chunks).__name__}.")


def _as_chunk(item: Any, i: int, width: int | None) -> tuple[np.ndarray, Any]:
    ids = None
    if isinstance(item, tuple):
        if len(item) != 2:
            raise ValidationError(f"Chunk {i} is a tuple of {len(item)} items; give arrays or "
                                  "(values, user_ids) pairs.")
        item, ids = item
    try:
        X = to_float(item)
    except (TypeError, ValueError):
        raise ParameterTypeError(f"Chunk {i} of the records is not an array; give 2-d arrays "
                                 "of numbers.") from None
    if X.ndim != 2:
        raise ValidationError(f"Chunk {i} of the records has shape {X.shape}; every chunk must "
                              "be 2-d (rows x columns).")
    if width is not None and X.shape[1] != width:
        raise ValidationError(f"Chunk {i} of the records has {X.shape[1]} columns but the first "
                              f"chunk had {width}; every chunk must have the same columns.")
    if ids is not None and np.shape(ids) != (X.shape[0],):
        raise ValidationError(f"Chunk {i}: {np.shape(ids)} user ids for {X.shape[0]} rows; give "
                              "one id per row.")
    return X, ids


def _is_dask(x: Any) -> bool:
    return hasattr(x, "__dask_graph__")


def _gather_local(chunks: Any, user_id: Any, chunk_rows: int) -> tuple[np.ndarray, Any]:
    """Records (and user ids) of this process as one array, to scatter to the workers."""
    fresh, _ = _chunk_iter(chunks, chunk_rows)
    vals, ids = [], []
    for i, item in enumerate(fresh()):
        X, ids_i = _as_chunk(item, i, vals[0].shape[1] if vals else None)
        vals.append(X)
        if ids_i is not None:
            ids.append(np.asarray(ids_i))
    if not vals:
        raise ValidationError("The records hold no rows; give at least one.")
    if ids:
        user_id = np.concatenate(ids)
    return np.concatenate(vals), user_id


def build_record_objective(kernel: Any, chunks: Any, *, width: int,
                           clean: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]],
                           user_id: Any = None, max_rows_per_user: int | None = None,
                           relation: str | None = None, chunk_rows: int | None = None,
                           n_jobs: int = 1, what: str = "records", scheduler: Any = None,
                           retries: int = 1) -> RecordObjective:
    """The shared builder behind the ``from_chunks`` constructors.

    ``clean(X) -> (values, valid)`` applies the family's data-independent rule to a chunk:
    rows with ``valid == False`` count in ``N`` but contribute nothing.
    """
    chunk_rows = DEFAULT_CHUNK_ROWS if chunk_rows is None else int(chunk_rows)
    if chunk_rows < 1:
        raise ValidationError(f"chunk_rows must be a positive integer; got {chunk_rows}.")
    if relation is None:
        relation = "add-remove" if user_id is not None else "replace-one"
    if relation not in RELATIONS:
        raise ValidationError(f"The 'relation' parameter must be one of {list(RELATIONS)}; got "
                              f"{relation!r}.")
    m = None
    if max_rows_per_user is not None:
        if isinstance(max_rows_per_user, bool) or not isinstance(max_rows_per_user,
                                                                 (int, np.integer)) \
                or max_rows_per_user < 1:
            raise ValidationError(f"The 'max_rows_per_user' parameter must be an integer >= 1; "
                                  f"got {max_rows_per_user!r}.")
        m = int(max_rows_per_user)
    if scheduler is not None or _is_dask(chunks):
        return _distributed(kernel, chunks, width=width, clean=clean, user_id=user_id, m=m,
                            relation=relation, chunk_rows=chunk_rows, scheduler=scheduler,
                            retries=retries)
    fresh, rereadable = _chunk_iter(chunks, chunk_rows)
    ids_all = None
    if user_id is not None and not isinstance(user_id, bool):
        ids_all = np.asarray(user_id)
    by_user = user_id is not None
    if by_user and m is None:
        raise ValidationError("user_id= needs max_rows_per_user=m: the bound on one person's "
                              "rows that the sensitivity is scaled to.")
    if not by_user and m is not None:
        raise ValidationError("max_rows_per_user= needs user_id= (which rows belong to one "
                              "person).")
    bound = FirstRows(m) if by_user else None
    kept: list[np.ndarray] = []   # per chunk: the rows that contribute (valid and kept)
    blocks: list[np.ndarray] = []
    n_rows = 0
    offset = 0
    first_width = None
    for i, item in enumerate(fresh()):
        X, ids = _as_chunk(item, i, first_width)
        first_width = X.shape[1]
        if X.shape[1] != width:
            raise ValidationError(f"The {what} have {X.shape[1]} columns; {width} are needed "
                                  "(one per coordinate of the public candidates, or one per "
                                  "item).")
        if by_user:
            if ids is None:
                if ids_all is None or isinstance(user_id, bool):
                    raise ValidationError("user_id=True needs chunks of (values, user_ids) "
                                          "pairs; or pass the ids as an array.")
                ids = ids_all[offset:offset + X.shape[0]]
                if ids.shape[0] != X.shape[0]:
                    raise ValidationError(f"user_id has {ids_all.shape[0]} ids, fewer than "
                                          "the rows of the records; give one id per row.")
            keep = bound.keep(ids, "user_id")
        else:
            keep = np.ones(X.shape[0], dtype=bool)
        offset += X.shape[0]
        vals, valid = clean(X)
        n_rows += int(keep.sum())
        use = keep & valid
        kept.append(use)
        if not rereadable:
            blocks.append(prepare(kernel, vals[use]))
    if by_user and ids_all is not None and not isinstance(user_id, bool) \
            and ids_all.shape[0] != offset:
        raise ValidationError(f"user_id has {ids_all.shape[0]} ids for {offset} rows; give one "
                              "id per row.")
    if offset == 0:
        # only an empty source is refused: rows dropped by a declared rule (no user id) leave
        # an objective that counts nothing, which is a release like any other
        raise ValidationError(f"The {what} hold no rows; give at least one.")
    if rereadable:
        def source() -> Iterator[np.ndarray]:
            for i, item in enumerate(fresh()):
                X, _ = _as_chunk(item, i, width)
                if i >= len(kept) or X.shape[0] != kept[i].shape[0]:
                    raise ValidationError(
                        f"The {what} changed between passes (chunk {i} is not the one read "
                        "first); a pass must read the same rows every time. Nothing was "
                        "released.")
                vals, _ = clean(X)
                yield prepare(kernel, vals[kept[i]])
        rows = [int(k.sum()) for k in kept]
        local = LocalBlocks(source, len(kept), rows, n_jobs)
    else:
        local = LocalBlocks(lambda: iter(blocks), len(blocks), [b.shape[0] for b in blocks],
                            n_jobs)
    f = _objective(kernel, local, n_rows, m if by_user else None, relation)
    if not rereadable and not by_user:
        f._rebuild = partial(neighbour_of, blocks=blocks, clean=clean, relation=relation,
                             n_jobs=n_jobs)
    return f


def _distributed(kernel: Any, chunks: Any, *, width: int, clean: Callable, user_id: Any,
                 m: int | None, relation: str, chunk_rows: int, scheduler: Any,
                 retries: int) -> RecordObjective:
    if (user_id is None) != (m is None):
        raise ValidationError("user_id= and max_rows_per_user= go together: which rows belong "
                              "to one person, and how many of them count.")
    if scheduler is None:
        try:
            from distributed import get_client

            client = get_client()
        except (ImportError, ValueError):
            raise ValidationError("Dask records need a scheduler: pass scheduler= (an address "
                                  "or a distributed.Client).") from None
    else:
        client = connect(scheduler)
    n_workers = max(1, len(client.scheduler_info().get("workers", {})))
    data = chunks
    if getattr(chunks, "kind", None) == "parquet":
        if user_id is not None and chunks.user_column is None:
            raise ValidationError("user_id=True needs the chunk source's user_column.")
    elif not _is_dask(chunks):
        data, user_id = _gather_local(chunks, user_id, chunk_rows)
        if user_id is not None and not isinstance(user_id, bool) \
                and np.shape(user_id) != (data.shape[0],):
            raise ValidationError(f"user_id has {np.shape(user_id)} ids for {data.shape[0]} "
                                  "rows; give one id per row.")
    if isinstance(user_id, bool) and getattr(chunks, "kind", None) != "parquet":
        raise ValidationError("user_id=True needs chunks of (values, user_ids) pairs.")
    parts, counted, total = dask_parts(client, data, clean, width, user_id, m, 2 * n_workers)
    if total == 0:
        raise ValidationError("The records hold no rows; give at least one.")
    return _objective(kernel, DaskBlocks(client, parts, kernel, retries), counted, m, relation)


def _objective(kernel: Any, blocks: Any, n_rows: int, m: int | None, relation: str,
               cls: type[RecordObjective] = RecordObjective) -> RecordObjective:
    by_user = m is not None
    s_max = kernel.s_max
    if by_user:
        sens = m * s_max
        weight = s_max / UNITS
        if relation == "add-remove":
            rel = (f"add or remove one person (one person = up to {m} rows; a person's rows "
                   f"beyond their first {m} in source order are dropped)")
        else:
            rel = (f"replace one person's rows by another person's (one person = up to {m} "
                   f"rows; a person's rows beyond their first {m} in source order are dropped)")
    elif relation == "add-remove":
        sens, weight = s_max, s_max / UNITS
        rel = "add or remove one row (one row = one person)"
    else:
        sens, weight = s_max / n_rows, s_max / (UNITS * n_rows)
        rel = f"replace one row by any other row (one row = one person; N = {n_rows} public)"
    return cls(kernel, blocks, n_rows=n_rows, weight=weight, sensitivity=sens,
               neighbouring=rel)


def neighbour_of(f: RecordObjective, gen: np.random.Generator, index: int | None,
                 record: Any, *, blocks: list[np.ndarray], clean: Callable, relation: str,
                 n_jobs: int | None) -> RecordObjective:
    """``f`` with one row replaced (replace-one) or removed (add-remove); see
    :meth:`RecordObjective.neighbour`. The build binds the keyword arguments (the rows in
    memory and their rules) and hands the objective this function as its ``_rebuild``."""
    sizes = [b.shape[0] for b in blocks]
    total = sum(sizes)
    if total == 0:
        raise ValidationError("The objective has no contributing row to replace.")
    if index is None:
        index = int(gen.integers(total))
    elif not 0 <= int(index) < total:
        raise ValidationError(f"The 'index' of neighbour must be in [0, {total}); got {index}.")
    b = int(np.searchsorted(np.cumsum(sizes), int(index), side="right"))
    row = int(index) - int(sum(sizes[:b]))
    new = list(blocks)
    kept = np.delete(blocks[b], row, axis=0)
    n_rows = f.n_rows
    if relation == "add-remove":
        n_rows -= 1
        new[b] = kept
    else:
        if record is None:
            record = f.kernel.random_record(gen)
        vals, valid = clean(np.asarray(record, dtype=np.float64).reshape(1, -1))
        new[b] = np.concatenate([kept, vals[valid]]) if valid.all() else kept
    new = [prepare(f.kernel, x) for x in new]
    local = LocalBlocks(lambda: iter(new), len(new), [x.shape[0] for x in new], n_jobs)
    g = _objective(f.kernel, local, n_rows, None, relation)
    g._rebuild = partial(neighbour_of, blocks=new, clean=clean, relation=relation,
                         n_jobs=n_jobs)
    return g
