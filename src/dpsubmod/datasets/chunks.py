"""Records read in chunks from a Parquet file, a pyarrow dataset or a CSV file.

:func:`scan_records` returns a :class:`ChunkSource`: every call of ``chunks()`` reads the file
again from the start, one chunk of rows at a time, and yields float64 arrays of the chosen
columns, or ``(values, user_ids)`` pairs. The record objectives' ``from_chunks`` constructors
re-read it on every greedy step, so memory stays O(N) per-record state plus one chunk. CSV lines
go through the same engine as the in-memory reader (:mod:`._csv`); Parquet files and pyarrow
datasets through pyarrow's streaming readers. A bad private row never raises (the policy of
:mod:`dpsubmod._cells`); a wrong schema is an error before anything runs.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np

from ..errors import MissingDependencyError, ParameterTypeError, ValidationError
from ._csv import Dialect, blocks, check_dialect
from .records import arrow_floats, arrow_text, csv_columns


def _pyarrow():
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise MissingDependencyError(
            "Reading Parquet records or a pyarrow dataset in chunks needs pyarrow: pip install "
            "pyarrow (or 'dpsubmod[distributed]').") from None
    import pyarrow as pa

    return pa


class ChunkSource:
    """A re-readable source of record chunks (see :func:`scan_records`).

    Attributes
    ----------
    columns : tuple of str
        The value columns, in the order of the arrays' columns.
    user_column : str or None
    name : str
        The file name (no directory) or "pyarrow dataset".
    names : tuple of str
        Every column of the source.
    dialect : Dialect or None
        How a CSV file is read.
    counts : dict
        NOT private: what the last complete pass saw (rows, unreadable rows, invalid cells per
        column, rows without a user id, cells outside ``watch`` bounds per column). For the
        owner's diagnostics only, never for a release.
    watch : dict of str to (low, high)
        Public bounds whose crossings ``counts`` reports.
    """

    def __init__(self, kind: str, obj: object, columns: tuple[str, ...],
                 user_column: str | None, chunk_rows: int, names: tuple[str, ...], name: str,
                 csv_header: bool = True, dialect: Dialect | None = None, skip_to: int = 0):
        self.kind, self._obj = kind, obj
        self.columns, self.user_column = columns, user_column
        self.chunk_rows, self.names, self.name = chunk_rows, names, name
        self._csv_header = csv_header
        self.dialect = dialect
        self._skip_to = skip_to
        self.counts: dict = {}
        self.watch: dict = {}

    def _csv_chunks(self) -> Iterator[tuple[np.ndarray, np.ndarray | None, int]]:
        idx = {c: j for j, c in enumerate(self.names)}
        num = [idx[c] for c in self.columns]
        text = [idx[self.user_column]] if self.user_column else []
        for b in blocks(Path(self._obj), self.dialect, width=len(self.names),
                        skip_to=self._skip_to, num_idx=num, text_idx=text,
                        block_lines=self.chunk_rows):
            yield b.numeric, (b.text[0] if text else None), int((b.status != 0).sum())

    def _arrow_chunks(self) -> Iterator[tuple[np.ndarray, np.ndarray | None, int]]:
        _pyarrow()
        want = list(self.columns) + ([self.user_column] if self.user_column else [])
        if self.kind == "parquet":
            import pyarrow.parquet as pq

            batches = pq.ParquetFile(self._obj).iter_batches(batch_size=self.chunk_rows,
                                                              columns=want)
        else:
            batches = self._obj.to_batches(columns=want, batch_size=self.chunk_rows)
        for batch in batches:
            X, ids = self.convert(batch)
            yield X, ids, 0

    def convert(self, batch: object) -> tuple[np.ndarray, np.ndarray | None]:
        """One pyarrow record batch as ``(values, user ids or None)`` under the cell rules."""
        cols = [arrow_floats(batch.column(batch.schema.get_field_index(c)))
                for c in self.columns]
        X = np.column_stack(cols) if cols else np.zeros((batch.num_rows, 0))
        ids = None
        if self.user_column is not None:
            ids = arrow_text(batch.column(batch.schema.get_field_index(self.user_column)))
        return X, ids

    def read_group(self, group: int) -> tuple[np.ndarray, np.ndarray | None]:
        """One row group of a Parquet source (read by the cluster worker that holds it)."""
        import pyarrow.parquet as pq

        want = list(self.columns) + ([self.user_column] if self.user_column else [])
        tab = pq.ParquetFile(self._obj).read_row_group(group, columns=want).combine_chunks()
        batches = tab.to_batches()
        if not batches:
            return (np.zeros((0, len(self.columns))),
                    np.zeros(0, dtype=str) if self.user_column else None)
        return self.convert(batches[0])

    def chunks(self) -> Iterator[np.ndarray | tuple[np.ndarray, np.ndarray]]:
        """A fresh pass over the records, one chunk at a time (never raises on a bad row)."""
        counts = {"rows": 0, "unreadable_rows": 0, "invalid_cells": dict.fromkeys(
            self.columns, 0), "outside_bounds": dict.fromkeys(self.watch, 0)}
        if self.user_column is not None:
            counts["rows_without_user_id"] = 0
        parts = self._csv_chunks() if self.kind == "csv" else self._arrow_chunks()
        for X, ids, unreadable in parts:
            counts["rows"] += X.shape[0]
            counts["unreadable_rows"] += unreadable
            bad = np.isnan(X)
            for j, c in enumerate(self.columns):
                counts["invalid_cells"][c] += int(bad[:, j].sum())
                if c in self.watch:
                    lo, hi = self.watch[c]
                    with np.errstate(invalid="ignore"):
                        counts["outside_bounds"][c] += int(((X[:, j] < lo)
                                                            | (X[:, j] > hi)).sum())
            if ids is not None:
                counts["rows_without_user_id"] += int((np.char.str_len(ids) == 0).sum())
            yield X if self.user_column is None else (X, ids)
        self.counts = counts

    def __repr__(self) -> str:
        return (f"ChunkSource({self.name!r}, columns={list(self.columns)}, "
                f"user_column={self.user_column!r}, chunk_rows={self.chunk_rows})")


def _check_schema(schema: object, columns: Sequence[str], user_column: str | None,
                  name: str) -> None:
    import pyarrow as pa

    names = list(schema.names)
    for c in list(columns) + ([user_column] if user_column else []):
        if c not in names:
            what = "user column" if c == user_column else "column"
            raise ValidationError(f"{name}: has no {what} named {c!r}. Its columns are: "
                                  f"{', '.join(names)}.")
    for c in columns:
        t = schema.field(c).type
        if not (pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t)
                or pa.types.is_boolean(t) or pa.types.is_string(t)
                or pa.types.is_large_string(t) or pa.types.is_null(t)):
            raise ValidationError(f"{name}: column {c!r} has type {t}; a numeric column is "
                                  "needed. Fix the file's schema.")


def _check_names(names: Sequence[str], columns: Sequence[str], user_column: str | None,
                 name: str) -> None:
    for c in list(columns) + ([user_column] if user_column else []):
        if c not in names:
            what = "user column" if c == user_column else "column"
            raise ValidationError(f"{name}: has no {what} named {c!r}. Its columns are: "
                                  f"{', '.join(names)}.")


def scan_records(source: str | os.PathLike | object, columns: Sequence[str], *,
                 user_column: str | None = None, chunk_rows: int = 1 << 18,
                 names: Sequence[str] | None = None, delimiter: str = ",",
                 encoding: str = "utf-8") -> ChunkSource:
    """A re-readable chunked source of records for the ``from_chunks`` constructors.

    CSV files are read by the same engine as the in-memory reader
    (:func:`dpsubmod.datasets.records.as_table`), line by line with the same bad-row policy
    (:data:`dpsubmod._cells.BAD_ROW_POLICY`), without pyarrow; Parquet files and pyarrow
    datasets need pyarrow. A bad private row never raises: its cells become NaN (the
    objective's declared rule handles them), a missing user id becomes "" (the row is dropped).

    Parameters
    ----------
    source : path of a ``.parquet`` or CSV file, or a ``pyarrow.dataset.Dataset``
    columns : sequence of str
        The value columns, by name (coordinates, sets, items).
    user_column : str, optional
        The column identifying each row's person (for ``max_rows_per_user``).
    chunk_rows : int, default=262144
        Rows per chunk.
    names : sequence of str, optional
        Column names of a CSV without a header.
    delimiter, encoding : str
        How a CSV file is written (default "," and "utf-8"; a byte-order mark is dropped).

    Raises
    ------
    ValidationError
        The file is missing or unreadable, a named column is missing, or a value column is not
        numeric (the message names the column and lists the file's columns).
    """
    if isinstance(columns, str) or not all(isinstance(c, str) for c in columns):
        raise ParameterTypeError("The 'columns' parameter of scan_records must be a sequence "
                                 "of column names.")
    if isinstance(chunk_rows, bool) or not isinstance(chunk_rows, (int, np.integer)) \
            or chunk_rows < 1:
        raise ValidationError(f"The 'chunk_rows' parameter of scan_records must be an integer "
                              f">= 1; got {chunk_rows!r}.")
    cols = tuple(columns)
    if hasattr(source, "to_batches") and hasattr(source, "schema"):
        _pyarrow()
        _check_schema(source.schema, cols, user_column, "the pyarrow dataset")
        return ChunkSource("dataset", source, cols, user_column, int(chunk_rows),
                           tuple(source.schema.names), "pyarrow dataset")
    if not isinstance(source, (str, os.PathLike)):
        raise ParameterTypeError(f"The 'source' of scan_records must be a file path or a "
                                 f"pyarrow dataset; got {type(source).__name__}.")
    p = Path(os.fspath(source))
    if not p.is_file():
        raise ValidationError(f"{p.name}: file not found. Check the path.")
    if p.suffix.lower() in (".parquet", ".pq"):
        pa = _pyarrow()
        import pyarrow.parquet as pq

        try:
            schema = pq.read_schema(p)
        except (pa.ArrowInvalid, OSError):
            raise ValidationError(f"{p.name}: is not a readable Parquet file. Check the "
                                  "file.") from None
        _check_schema(schema, cols, user_column, p.name)
        return ChunkSource("parquet", str(p), cols, user_column, int(chunk_rows),
                           tuple(schema.names), p.name)
    dialect = check_dialect(delimiter, encoding, "scan_records")
    all_names, header, skip = csv_columns(p, header_mode="auto", names=names, what="records",
                                          dialect=dialect)
    _check_names(all_names, cols, user_column, p.name)
    return ChunkSource("csv", str(p), cols, user_column, int(chunk_rows), tuple(all_names),
                       p.name, csv_header=header, dialect=dialect, skip_to=skip)
