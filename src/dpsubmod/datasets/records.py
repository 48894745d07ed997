"""The one reader of private tables, in memory: a CSV or Parquet file, an array, a DataFrame, a
dict of columns or a pyarrow Table, as a :class:`RecordTable` of named columns.

Bad rows and cells follow :data:`dpsubmod._cells.BAD_ROW_POLICY` and never raise: a cell that
is not a finite number is NaN in numeric columns (the task's declared rule handles it), a CSV
line that cannot be read is a record whose every cell is invalid. Where the bad values are is
kept (``status``, ``lines``) only for the data check (:func:`dpsubmod.tasks.check_data`),
which is not a release. The chunked reader (:func:`dpsubmod.datasets.scan_records`) parses every
line with the same engine (:mod:`._csv`), so both give the same records.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .._cells import NUMBER, to_float
from ..errors import MissingDependencyError, ParameterTypeError, ValidationError
from ._csv import (
    STATUS,
    Dialect,
    blocks,
    check_dialect,
    count_lines,
    header,
    line_text,
    split_line,
)

_BLOCK = 1 << 15


@dataclass(frozen=True, eq=False)
class RecordTable:
    """Named columns of ``n_rows`` records.

    Attributes
    ----------
    names : tuple of str
        Column names in source order (``col1``, ``col2``, ... when the source has none).
    numeric : dict of str to ndarray of float64
        Numeric view of every column read as numbers; invalid cells are NaN.
    text : dict of str to ndarray of str
        Columns kept as text (names, group labels, user ids); a missing value is "".
    n_rows : int
    named : bool
        Whether the names come from the source (a header, DataFrame columns, a dict) rather than
        positions.
    source : str
        The file name (never a directory) or a description of the object.
    path : Path or None
        The file, when the table was read from one.
    status : ndarray of int8 or None
        For a CSV file: 0 for a record read, else why it could not be (``STATUS``). NOT private
        information to publish: for the data check only.
    lines : ndarray of int64, range, or None
        For a CSV file: the line of each record (for the data check only).
    dialect : Dialect or None
        How the CSV file was read.
    """

    names: tuple[str, ...]
    numeric: Mapping[str, np.ndarray]
    text: Mapping[str, np.ndarray] = field(default_factory=dict)
    n_rows: int = 0
    named: bool = True
    source: str = ""
    path: Path | None = None
    status: np.ndarray | None = None
    lines: np.ndarray | range | None = None
    dialect: Dialect | None = None

    def column(self, name: str, what: str) -> np.ndarray:
        """The numeric column ``name`` (NaN marks invalid cells); ``what`` names the argument."""
        if name not in self.numeric:
            raise ValidationError(
                f"{self.source}: has no numeric column named {name!r} (asked for by {what}). "
                f"Its columns are: {', '.join(self.names)}."
            )
        return self.numeric[name]

    def text_column(self, name: str, what: str) -> np.ndarray:
        if name in self.text:
            return self.text[name]
        if name in self.numeric:
            return np.array(["" if v != v else f"{v:.17g}" for v in self.numeric[name]],
                            dtype=str)
        raise ValidationError(
            f"{self.source}: has no column named {name!r} (asked for by {what}). Its columns "
            f"are: {', '.join(self.names)}."
        )

    def matrix(self, names: Sequence[str]) -> np.ndarray:
        """The numeric columns ``names`` side by side, shape (n_rows, len(names)); without a
        copy when they are all the numeric columns of a CSV file, in order (then the result
        shares memory with the table: do not modify it while the table is used)."""
        cols = [self.column(c, "columns") for c in names]
        base = cols[0].base if cols else None
        if (base is not None and base.ndim == 2 and base.shape[1] == len(cols)
                and list(names) == [c for c in self.names if c in self.numeric]
                and all(c.base is base for c in cols)
                and all(np.shares_memory(c, base[:, k]) for k, c in enumerate(cols))):
            return base[:self.n_rows]
        return np.column_stack(cols) if cols else np.zeros((self.n_rows, 0))

    def line_of(self, row: int) -> str:
        """Where record ``row`` (0-based) is, for the data check: a file line or a row index."""
        if self.lines is not None:
            return f"line {int(self.lines[row])}"
        return f"row {row}"

    def raw_line(self, row: int) -> str:
        """The text of record ``row``'s line, for the data check only (quotes private data)."""
        if self.lines is None or self.path is None:
            return ""
        return line_text(self.path, self.dialect or Dialect(), int(self.lines[row]))

    def raw_cell(self, row: int, name: str) -> str | None:
        """The text of cell ``name`` of record ``row`` as written in a CSV file (data check
        only: it quotes private data), or None for another source."""
        if self.lines is None or self.path is None:
            return None
        cells = split_line(self.raw_line(row), self.dialect or Dialect())
        j = self.names.index(name)
        return cells[j].strip() if cells is not None and j < len(cells) else None

    def unreadable(self, row: int) -> str | None:
        """Why record ``row`` could not be read (data check only), or None."""
        if self.status is None or self.status[row] == 0:
            return None
        enc = self.dialect.encoding if self.dialect is not None else "utf-8"
        return STATUS[int(self.status[row])].format(encoding=enc)


def _is_number(cell: str) -> bool:
    return NUMBER.fullmatch(cell) is not None or cell.strip().lower() in (
        "nan", "inf", "-inf", "+inf", "infinity")


def _open_check(path: Path, what: str) -> None:
    if not path.exists():
        raise ValidationError(f"{what} {path.name}: file not found. Check the path.")
    if path.is_dir():
        raise ValidationError(f"{what} {path.name}: is a directory, not a file.")


def csv_columns(path: Path, *, header_mode: bool | str, names: Sequence[str] | None,
                what: str, dialect: Dialect) -> tuple[list[str], bool, int]:
    """The columns of a CSV file: ``(names, has_header, header line number or 0)``."""
    _open_check(path, what)
    # names given: the file has no header, and its first line is a private record (never
    # refused, never matched against the names: a bad one follows the policy)
    no_header = names is not None and header_mode == "auto"
    first, line = header(path, dialect, what, strict=not no_header)
    if not first and not (no_header and line):
        raise ValidationError(f"{what} {path.name}: the file is empty. It must hold one record "
                              "per row.")
    has_header = False if no_header else (
        (not all(_is_number(c) for c in first)) if header_mode == "auto" else bool(header_mode))
    if has_header:
        cols = list(first)
        if names is not None:
            raise ValidationError(
                f"{what} {path.name} has a header ({', '.join(cols)}); names are given for a "
                "file without one. Drop the names and use the header's."
            )
        if any(c == "" for c in cols) or len(set(cols)) != len(cols):
            raise ValidationError(
                f"{what} {path.name}: the header must name every column once; got "
                f"{', '.join(repr(c) for c in cols)}."
            )
        if len(cols) == 1 and dialect.delimiter != "," and "," in cols[0]:
            raise ValidationError(
                f"{what} {path.name}: its header has one column {cols[0]!r}; the file looks "
                f"comma-separated, not {dialect.delimiter!r}-separated. Pass the delimiter.")
    elif names is not None:
        cols = [str(c) for c in names]
        if not cols or len(set(cols)) != len(cols):
            raise ValidationError(f"{what} {path.name}: give distinct names, one per column "
                                  f"(got {', '.join(cols)}).")
    else:
        cols = [f"col{j + 1}" for j in range(len(first))]
    return cols, has_header, line if has_header else 0


def _read_csv(path: Path, *, header_mode: bool | str, names: Sequence[str] | None,
              text_columns: Sequence[str], what: str, dialect: Dialect) -> RecordTable:
    cols, has_header, skip = csv_columns(path, header_mode=header_mode, names=names,
                                         what=what, dialect=dialect)
    unknown = [c for c in text_columns if c not in cols]
    if unknown:
        raise ValidationError(f"{what} {path.name}: has no column named {unknown[0]!r}. Its "
                              f"columns are: {', '.join(cols)}.")
    text_idx = [j for j, c in enumerate(cols) if c in text_columns]
    num_idx = [j for j, c in enumerate(cols) if c not in text_columns]
    # one matrix filled block by block (the line count bounds the number of records); the
    # columns are views of it
    X = np.empty((count_lines(path), len(num_idx)))
    texts: list[list[np.ndarray]] = [[] for _ in text_idx]
    status: list[np.ndarray] = []
    lines: list[tuple[int, int] | np.ndarray] = []
    n = 0
    for b in blocks(path, dialect, width=len(cols), skip_to=skip, num_idx=num_idx,
                    text_idx=text_idx, block_lines=_BLOCK):
        m = b.status.shape[0]
        X[n:n + m] = b.numeric
        for k, t in enumerate(b.text):
            texts[k].append(t)
        status.append(b.status)
        if m and b.lines[-1] - b.lines[0] == m - 1:  # no blank line: keep (first, count)
            lines.append((int(b.lines[0]), m))
        else:
            lines.append(b.lines.copy())
        n += m
    if n == 0:
        raise ValidationError(f"{what} {path.name}: has no data rows. It must hold one record "
                              "per row.")
    numeric = {cols[j]: X[:n, k] for k, j in enumerate(num_idx)}
    text = {cols[j]: np.concatenate(texts[k]) for k, j in enumerate(text_idx)}
    if all(isinstance(x, tuple) for x in lines) and all(
            a[0] + a[1] == b[0] for a, b in zip(lines, lines[1:])):
        line_no: np.ndarray | range = range(lines[0][0], lines[0][0] + n)
    else:
        line_no = np.concatenate([np.arange(x[0], x[0] + x[1]) if isinstance(x, tuple) else x
                                  for x in lines])
    status = np.concatenate(status)
    return RecordTable(tuple(cols), numeric, text, n, named=has_header or names is not None,
                       source=path.name, path=path, status=status, lines=line_no,
                       dialect=dialect)


def _read_parquet(path: Path, text_columns: Sequence[str], what: str) -> RecordTable:
    _open_check(path, what)
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise MissingDependencyError(
            f"Reading {path.name} (Parquet) needs pyarrow: pip install pyarrow.") from None
    try:
        tab = pq.read_table(path)
    except Exception as exc:  # noqa: BLE001 - pyarrow raises many types for a bad file
        raise ValidationError(f"{what} {path.name}: is not a readable Parquet file "
                              f"({type(exc).__name__}). Check the file.") from None
    return _from_arrow(tab, text_columns, path.name, path)


def arrow_text(col: object) -> np.ndarray:
    """A pyarrow column as text, a null as "" (a missing user id, never the text 'None')."""
    return np.array(["" if v is None else str(v) for v in col.to_pylist()], dtype=str)


def arrow_floats(arr: object) -> np.ndarray:
    """A pyarrow (chunked) array as float64 with NaN for nulls and invalid cells, without
    importing pandas (pyarrow's ``to_numpy`` does, which costs a third of a second)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    chunks = getattr(arr, "chunks", [arr])
    parts = []
    for c in chunks:
        t = c.type
        if pa.types.is_string(t) or pa.types.is_large_string(t):
            parts.append(to_float(np.array(["" if v is None else v for v in c.to_pylist()],
                                           dtype=str)))
            continue
        if pa.types.is_null(t):
            parts.append(np.full(len(c), np.nan))
            continue
        c = pc.cast(c, pa.float64())
        if c.null_count:
            c = pc.fill_null(c, np.nan)
        buf = np.frombuffer(c.buffers()[1], dtype=np.float64)[c.offset:c.offset + len(c)]
        parts.append(buf.copy())
    out = np.concatenate(parts) if parts else np.zeros(0)
    out[~np.isfinite(out)] = np.nan
    return out


def _numeric_type(t: object) -> bool:
    import pyarrow as pa

    return (pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_boolean(t)
            or pa.types.is_decimal(t))


def _from_arrow(tab: object, text_columns: Sequence[str], source: str,
                path: Path | None) -> RecordTable:
    names = tuple(tab.column_names)
    numeric, text = {}, {}
    for name in names:
        col = tab.column(name)
        if name in text_columns:
            text[name] = arrow_text(col)
        elif _numeric_type(col.type):
            numeric[name] = arrow_floats(col)
        else:
            text[name] = arrow_text(col)
            numeric[name] = to_float(text[name])
    return RecordTable(names, numeric, text, tab.num_rows, named=True, source=source, path=path)


def as_table(records: object, *, names: Sequence[str] | None = None,
             text_columns: Sequence[str] = (), what: str = "records",
             header: bool | str = "auto", delimiter: str = ",",
             encoding: str = "utf-8") -> RecordTable:
    """Turn ``records`` into a :class:`RecordTable`; a bad private row never raises.

    Parameters
    ----------
    records : ndarray, DataFrame, dict of arrays, pyarrow Table, or a path to a CSV or Parquet file
        One row per record. A 2-d array has no names: its columns are ``col1``, ``col2``, ...
        unless ``names`` is given.
    names : sequence of str, optional
        Names for the columns of a source without them (an array, a CSV without a header).
    text_columns : sequence of str
        Columns kept as text.
    what : str
        The argument's name, for messages.
    header : bool or "auto"
        For CSV: whether the first line holds column names ("auto": when one of its cells is
        not a number).
    delimiter, encoding : str
        For CSV: the cell delimiter (default ",") and the text encoding (default "utf-8"; a
        byte-order mark is dropped).

    Returns
    -------
    RecordTable
    """
    if isinstance(records, RecordTable):
        return records
    if isinstance(records, (str, os.PathLike)):
        p = Path(os.fspath(records))
        if p.suffix.lower() in (".parquet", ".pq"):
            if names is not None:
                raise ValidationError(f"{what} {p.name}: a Parquet file names its columns; "
                                      "drop the names.")
            return _read_parquet(p, text_columns, what)
        dialect = check_dialect(delimiter, encoding, what)
        return _read_csv(p, header_mode=header, names=names, text_columns=text_columns,
                         what=what, dialect=dialect)
    if hasattr(records, "column_names") and hasattr(records, "num_rows"):  # pyarrow Table
        return _from_arrow(records, text_columns, f"{what} (pyarrow table)", None)
    if hasattr(records, "columns") and hasattr(records, "to_numpy"):  # a DataFrame
        cols = [str(c) for c in records.columns]
        data = {c: np.asarray(records[orig].to_numpy()) for c, orig in zip(cols, records.columns)}
        return _from_mapping(data, text_columns, f"{what} (DataFrame)")
    if isinstance(records, Mapping):
        return _from_mapping({str(k): np.asarray(v) for k, v in records.items()}, text_columns,
                             f"{what} (mapping)")
    try:
        arr = np.asarray(records)
    except (TypeError, ValueError):
        arr = None
    if arr is None or arr.ndim != 2:
        raise ParameterTypeError(
            f"The '{what}' argument must be a 2-d array (one row per record), a DataFrame, a "
            "dict of columns, a pyarrow Table or the path of a CSV or Parquet file; got "
            f"{type(records).__name__}" + ("" if arr is None else f" of shape {arr.shape}") + "."
        )
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValidationError(f"The '{what}' argument must have at least one row and one "
                              f"column; got shape {arr.shape}.")
    if names is None:
        cols = [f"col{j + 1}" for j in range(arr.shape[1])]
    else:
        cols = [str(c) for c in names]
        if len(cols) != arr.shape[1] or len(set(cols)) != len(cols):
            raise ValidationError(f"The names given for '{what}' must be {arr.shape[1]} "
                                  f"distinct names, one per column; got {cols}.")
    data = {c: arr[:, j] for j, c in enumerate(cols)}
    tab = _from_mapping(data, text_columns, f"{what} (array)")
    return RecordTable(tab.names, tab.numeric, tab.text, tab.n_rows, named=names is not None,
                       source=tab.source)


def _text(v: np.ndarray) -> np.ndarray:
    if v.dtype == object:
        return np.array(["" if x is None or (isinstance(x, float) and x != x) else str(x)
                         for x in v.tolist()], dtype=str)
    return v.astype(str)


def _from_mapping(data: Mapping[str, np.ndarray], text_columns: Sequence[str],
                  source: str) -> RecordTable:
    lengths = {v.shape[0] if v.ndim else 0 for v in data.values()}
    if not data or len(lengths) != 1 or any(v.ndim != 1 for v in data.values()):
        raise ValidationError(f"{source}: every column must be 1-d, all of one length; got "
                              f"{ {k: v.shape for k, v in data.items()} }.")
    numeric, text = {}, {}
    for name, v in data.items():
        if name in text_columns:
            text[name] = _text(v)
        elif v.dtype.kind in "OUS":
            text[name] = _text(v)
            numeric[name] = to_float(v)
        elif v.dtype.kind in "biuf":
            numeric[name] = to_float(v)
        else:
            raise ParameterTypeError(f"{source}: column {name!r} has dtype {v.dtype}; give "
                                     "numbers or text.")
    n = lengths.pop()
    if n == 0:
        raise ValidationError(f"{source}: has no rows. It must hold one record per row.")
    return RecordTable(tuple(data), numeric, text, n, named=True, source=source)


def read_public_csv(path: str | os.PathLike, what: str,
                    text_columns: Sequence[str] = ()) -> RecordTable:
    """A public CSV (candidates, groups, bounds), which must have a header naming its columns.

    Public files are checked strictly: a bad line or cell is an error with its line, since
    nothing about them is private.
    """
    p = Path(os.fspath(path))
    dialect = Dialect()
    _open_check(p, what)
    first, _ = header(p, dialect, what)
    if first and all(_is_number(c) for c in first):
        raise ValidationError(
            f"{what} {p.name} has no header. Its first line must name the columns, matching "
            "the record columns by name (for example 'lat,lon'); columns are never matched "
            "by position."
        )
    tab = _read_csv(p, header_mode=True, names=None, text_columns=text_columns, what=what,
                    dialect=dialect)
    bad = np.flatnonzero(tab.status)
    if bad.size:
        raise ValidationError(f"{what} {p.name}, {tab.line_of(int(bad[0]))}: the line has "
                              f"{tab.unreadable(int(bad[0]))}. Fix the public file.")
    return tab


def public_column(tab: RecordTable, name: str, what: str) -> np.ndarray:
    """A numeric column of a public table; a cell that is not a finite number is an error."""
    col = tab.column(name, what)
    bad = np.flatnonzero(np.isnan(col))
    if bad.size:
        raise ValidationError(
            f"{what} {tab.source}, {tab.line_of(int(bad[0]))}, column {name!r}: not a finite "
            "number. Fix the public file."
        )
    return col
