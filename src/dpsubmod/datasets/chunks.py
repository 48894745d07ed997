"""Records read in chunks from a Parquet file, a pyarrow dataset or a CSV file.

:func:`scan_records` returns a :class:`ChunkSource`: every call of ``chunks()`` reads the file
again from the start, one chunk of rows at a time (pyarrow's streaming readers, no Python
rows), and yields float64 arrays of the chosen columns, or ``(values, user_ids)`` pairs. The
record objectives' ``from_chunks`` constructors re-read it on every greedy step, so memory stays
O(N) per-record state plus one chunk. A cell that is not a finite number becomes NaN (the
objective's data-independent rule handles it); a wrong schema is an error before anything runs.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np

from ..errors import MissingDependencyError, ParameterTypeError, ValidationError

__all__ = ["ChunkSource", "scan_records"]

_NUMBER = r"^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$"


def _pyarrow():
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise MissingDependencyError(
            "Reading records in chunks needs pyarrow: pip install pyarrow (or "
            "'dpsubmod[distributed]').") from None
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
    """

    def __init__(self, kind: str, obj: object, columns: tuple[str, ...],
                 user_column: str | None, chunk_rows: int, names: tuple[str, ...], name: str,
                 csv_header: bool = True):
        self.kind, self._obj = kind, obj
        self.columns, self.user_column = columns, user_column
        self.chunk_rows, self.names, self.name = chunk_rows, names, name
        self._csv_header = csv_header

    def _batches(self) -> Iterator[object]:
        pa = _pyarrow()
        want = list(self.columns) + ([self.user_column] if self.user_column else [])
        if self.kind == "parquet":
            import pyarrow.parquet as pq

            yield from pq.ParquetFile(self._obj).iter_batches(batch_size=self.chunk_rows,
                                                               columns=want)
        elif self.kind == "dataset":
            yield from self._obj.to_batches(columns=want, batch_size=self.chunk_rows)
        else:
            from pyarrow import csv as pacsv

            # text, converted cell by cell in _convert: a bad cell anywhere in the file must not
            # abort a pass half way (a pass is re-read on every greedy step)
            types = {c: pa.string() for c in want}
            read = pacsv.ReadOptions(block_size=1 << 22, column_names=list(self.names),
                                     skip_rows=int(self._csv_header))
            conv = pacsv.ConvertOptions(include_columns=want, column_types=types,
                                        null_values=[""], strings_can_be_null=True)
            skipped = [0]

            def malformed(row: object) -> str:
                # a row with the wrong number of cells is kept as a row of invalid values
                # (appended at the end of the pass, the same on every pass): an error would
                # quote it
                skipped[0] += 1
                return "skip"

            parse = pacsv.ParseOptions(invalid_row_handler=malformed)
            yield from pacsv.open_csv(self._obj, read_options=read, parse_options=parse,
                                      convert_options=conv)
            if skipped[0]:
                yield pa.record_batch({c: pa.nulls(skipped[0], pa.string()) for c in want})

    def chunks(self) -> Iterator[np.ndarray | tuple[np.ndarray, np.ndarray]]:
        """A fresh pass over the records, one chunk at a time."""
        pa = _pyarrow()
        try:
            for batch in self._batches():
                yield self._convert(batch)
        except pa.ArrowInvalid as exc:
            raise ValidationError(f"{self.name}: cannot be read as records "
                                  f"({str(exc).splitlines()[0]}). Check the file.") from None

    def _convert(self, batch: object) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
        import pyarrow as pa
        import pyarrow.compute as pc

        cols = []
        for c in self.columns:
            col = batch.column(batch.schema.get_field_index(c))
            if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
                ok = pc.match_substring_regex(col, _NUMBER)
                col = pc.if_else(ok, pc.utf8_trim_whitespace(col), pa.scalar(None, col.type))
            col = pc.cast(col, pa.float64())
            if col.null_count:
                col = pc.fill_null(col, np.nan)
            # through the buffer: pyarrow's to_numpy imports pandas (slow start-up)
            buf = np.frombuffer(col.buffers()[1], dtype=np.float64)
            cols.append(buf[col.offset:col.offset + len(col)])
        X = np.column_stack(cols) if cols else np.zeros((batch.num_rows, 0))
        if self.user_column is None:
            return X
        ids = batch.column(batch.schema.get_field_index(self.user_column))
        if ids.null_count:
            raise ValidationError(
                f"{self.name}: the user column {self.user_column!r} has null values; every row "
                "needs its person's id. Nothing was released.")
        return X, ids.to_numpy(zero_copy_only=False)

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


def scan_records(source: str | os.PathLike | object, columns: Sequence[str], *,
                 user_column: str | None = None, chunk_rows: int = 1 << 18,
                 names: Sequence[str] | None = None) -> ChunkSource:
    """A re-readable chunked source of records for the ``from_chunks`` constructors.

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

    Raises
    ------
    ValidationError
        The file is missing or unreadable, a named column is missing, or a value column is not
        numeric (the message names the column and lists the file's columns).
    """
    pa = _pyarrow()
    if isinstance(columns, str) or not all(isinstance(c, str) for c in columns):
        raise ParameterTypeError("The 'columns' parameter of scan_records must be a sequence "
                                 "of column names.")
    if isinstance(chunk_rows, bool) or not isinstance(chunk_rows, (int, np.integer)) \
            or chunk_rows < 1:
        raise ValidationError(f"The 'chunk_rows' parameter of scan_records must be an integer "
                              f">= 1; got {chunk_rows!r}.")
    cols = tuple(columns)
    if hasattr(source, "to_batches") and hasattr(source, "schema"):
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
        import pyarrow.parquet as pq

        try:
            schema = pq.read_schema(p)
        except (pa.ArrowInvalid, OSError):
            raise ValidationError(f"{p.name}: is not a readable Parquet file. Check the "
                                  "file.") from None
        _check_schema(schema, cols, user_column, p.name)
        return ChunkSource("parquet", str(p), cols, user_column, int(chunk_rows),
                           tuple(schema.names), p.name)
    with open(p, encoding="utf-8-sig") as fh:
        first = fh.readline()
    cells = [c.strip() for c in first.rstrip("\r\n").split(",")]

    def number(c: str) -> bool:
        try:
            float(c)
        except ValueError:
            return False
        return True

    header = not all(number(c) for c in cells)
    if header and names is not None:
        raise ValidationError(f"{p.name} has a header; drop the names.")
    all_names = tuple(cells) if header else tuple(
        names if names is not None else [f"col{j + 1}" for j in range(len(cells))])
    if len(all_names) != len(cells):
        raise ValidationError(f"{p.name} has {len(cells)} columns; give {len(cells)} names.")
    schema = pa.schema([(c, pa.string()) for c in all_names])
    _check_schema(schema, cols, user_column, p.name)
    return ChunkSource("csv", str(p), cols, user_column, int(chunk_rows), all_names, p.name,
                       csv_header=header)
