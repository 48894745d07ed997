"""A table of records with named columns, from an array, a DataFrame, a CSV or a Parquet file.

Cells that are not finite numbers (empty, text, NaN, infinite) are kept as NaN in numeric
columns, so that the task builders can apply their declared data-independent rule to them; the
table never raises on one bad private row (that refusal would itself reveal the row). Where the
bad values are is only reported by :func:`first_invalid`, for the explicit data check.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import ParameterTypeError, ValidationError

__all__ = ["RecordTable", "as_table", "read_public_csv", "public_column"]

#: What a numeric cell of a CSV may look like (anything else is an invalid value).
_NUMBER = r"^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$"


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
        Columns kept as text (names, group labels, user ids).
    n_rows : int
    named : bool
        Whether the names come from the source (a header, DataFrame columns, a dict) rather than
        positions.
    source : str
        The file name (never a directory) or a description of the object.
    path : Path or None
        The file, when the table was read from one (for the data check's line numbers).
    """

    names: tuple[str, ...]
    numeric: Mapping[str, np.ndarray]
    text: Mapping[str, np.ndarray] = field(default_factory=dict)
    n_rows: int = 0
    named: bool = True
    source: str = ""
    path: Path | None = None
    header_lines: int = 0

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
            return np.array([_fmt(v) for v in self.numeric[name]], dtype=str)
        raise ValidationError(
            f"{self.source}: has no column named {name!r} (asked for by {what}). Its columns "
            f"are: {', '.join(self.names)}."
        )

    def line_of(self, row: int) -> str:
        """Where record ``row`` (0-based) is, for the data check: a file line or a row index."""
        if self.path is None or self.path.suffix.lower() == ".parquet":
            return f"row {row}"
        seen = -self.header_lines
        with open(self.path, encoding="utf-8-sig", newline="") as fh:
            for line_no, line in enumerate(fh, start=1):
                if line.strip():
                    if seen == row:
                        return f"line {line_no}"
                    seen += 1
        return f"row {row}"  # pragma: no cover - the row exists


def _fmt(v: float) -> str:
    return f"{v:.6g}"


def _first_line(path: Path, delimiter: str) -> list[str]:
    with open(path, encoding="utf-8-sig", newline="") as fh:
        for line in fh:
            if line.strip():
                return [c.strip() for c in next(csv.reader([line], delimiter=delimiter))]
    return []


def _is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def _open_check(path: Path, what: str) -> None:
    if not path.exists():
        raise ValidationError(f"{what} {path.name}: file not found. Check the path.")
    if path.is_dir():
        raise ValidationError(f"{what} {path.name}: is a directory, not a file.")


def _read_csv(path: Path, *, header: bool | str, names: Sequence[str] | None,
              text_columns: Sequence[str], what: str, delimiter: str = ",",
              strict: bool = True) -> RecordTable:
    _open_check(path, what)
    try:
        first = _first_line(path, delimiter)
    except UnicodeDecodeError:
        raise ValidationError(f"{what} {path.name}: is not UTF-8 text. Save it as UTF-8 CSV.") \
            from None
    if not first:
        raise ValidationError(f"{what} {path.name}: the file is empty. It must hold one record "
                              "per row.")
    has_header = (not all(_is_number(c) for c in first)) if header == "auto" else bool(header)
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
    elif names is not None:
        cols = list(names)
        if len(cols) != len(first) or len(set(cols)) != len(cols):
            raise ValidationError(
                f"{what} {path.name} has {len(first)} columns and no header; give "
                f"{len(first)} distinct names (got {', '.join(cols)})."
            )
    else:
        cols = [f"col{j + 1}" for j in range(len(first))]
    unknown = [c for c in text_columns if c not in cols]
    if unknown:
        raise ValidationError(f"{what} {path.name}: has no column named {unknown[0]!r}. Its "
                              f"columns are: {', '.join(cols)}.")
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raw = _read_csv_python(path, len(cols), int(has_header), delimiter, what, strict)
    else:
        raw = _read_csv_arrow(path, cols, int(has_header), delimiter, what, text_columns,
                              strict)
    numeric, text = {}, {}
    for name, cells in zip(cols, raw):
        if name in text_columns:
            text[name] = cells.astype(str)
        else:
            numeric[name] = _to_float(cells)
    n = len(raw[0]) if raw else 0
    if n == 0:
        raise ValidationError(f"{what} {path.name}: has no data rows. It must hold one record "
                              "per row.")
    return RecordTable(tuple(cols), numeric, text, n, named=has_header or names is not None,
                       source=path.name, path=path, header_lines=int(has_header))


def _to_float(cells: np.ndarray) -> np.ndarray:
    """Strings to float64 with NaN for anything that is not a finite number."""
    if cells.dtype.kind == "f":
        out = cells.astype(np.float64)
    else:
        s = np.char.strip(cells.astype(str))
        ok = np.char.str_len(s) > 0
        out = np.full(s.shape, np.nan)
        try:
            out[ok] = s[ok].astype(np.float64)
        except ValueError:
            for i in np.flatnonzero(ok):
                try:
                    out[i] = float(s[i])
                except ValueError:
                    pass
    out[~np.isfinite(out)] = np.nan
    return out


def _read_csv_arrow(path: Path, cols: list[str], skip: int, delimiter: str, what: str,
                    text_columns: Sequence[str], strict: bool = True) -> list[np.ndarray]:
    import pyarrow as pa
    import pyarrow.compute as pc
    from pyarrow import csv as pacsv

    read = pacsv.ReadOptions(column_names=cols, skip_rows=skip, block_size=1 << 24)
    skipped = [0]

    def malformed(row: object) -> str:
        # A private row that cannot be parsed (wrong number of cells) is kept as a row of
        # invalid values, for the task's rule: refusing would print the row.
        skipped[0] += 1
        return "skip"

    parse = pacsv.ParseOptions(delimiter=delimiter,
                               invalid_row_handler=None if strict else malformed)
    types = {c: (pa.string() if c in text_columns else pa.float64()) for c in cols}
    # First try: numeric columns parsed as numbers (the fast path for clean files).
    conv = pacsv.ConvertOptions(column_types=types, null_values=[""],
                                strings_can_be_null=False)
    try:
        tab = pacsv.read_csv(path, read_options=read, parse_options=parse, convert_options=conv)
        return _pad([_numpy(tab.column(c)) for c in cols], skipped[0])
    except pa.ArrowInvalid as exc:
        if "conversion error" not in str(exc):
            raise ValidationError(
                f"{what} {path.name}: malformed CSV (rows of unequal length or bad quoting: "
                f"{str(exc).splitlines()[0]}). Fix the file."
            ) from None
    # Some numeric cell is not a number: read text and convert with a vectorised pattern.
    conv = pacsv.ConvertOptions(column_types={c: pa.string() for c in cols})
    skipped[0] = 0
    tab = pacsv.read_csv(path, read_options=read, parse_options=parse, convert_options=conv)
    out = []
    for c in cols:
        col = tab.column(c)
        if c in text_columns:
            out.append(_numpy(col))
            continue
        num = pc.match_substring_regex(col, _NUMBER)
        vals = pc.if_else(num, pc.utf8_trim_whitespace(col), pa.scalar(None, pa.string()))
        out.append(_numpy(pc.cast(vals, pa.float64())))
    return _pad(out, skipped[0])


def _pad(cols: list[np.ndarray], rows: int) -> list[np.ndarray]:
    """Append ``rows`` rows of invalid values (NaN, or empty text)."""
    if rows == 0:
        return cols
    return [np.concatenate([c, np.full(rows, "" if c.dtype.kind in "OUS" else np.nan,
                                       dtype=c.dtype if c.dtype.kind != "O" else object)])
            for c in cols]


def _numpy(col: object) -> np.ndarray:
    """A pyarrow (chunked) array as numpy without importing pandas (pyarrow's ``to_numpy``
    does, which costs a third of a second at start-up); nulls become NaN."""
    chunks = getattr(col, "chunks", [col])
    parts = [arrow_floats(c) for c in chunks]
    if not parts:
        return np.zeros(0)
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def arrow_floats(arr: object) -> np.ndarray:
    """One pyarrow array as numpy: float64 columns through their buffer, others as given."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if pa.types.is_float64(arr.type):
        if arr.null_count:
            arr = pc.fill_null(arr, np.nan)
        buf = arr.buffers()[1]
        return np.frombuffer(buf, dtype=np.float64)[arr.offset:arr.offset + len(arr)].copy()
    return np.asarray(arr.to_numpy(zero_copy_only=False))


def _read_csv_python(path: Path, width: int, skip: int, delimiter: str, what: str,
                     strict: bool = True) -> list[np.ndarray]:
    rows = []
    with open(path, encoding="utf-8-sig", newline="") as fh:
        for cells in csv.reader(fh, delimiter=delimiter):
            if cells and any(c.strip() for c in cells):
                rows.append(cells)
    rows = rows[skip:]
    if not strict:
        rows = [r if len(r) == width else [""] * width for r in rows]
    if any(len(r) != width for r in rows):
        raise ValidationError(f"{what} {path.name}: rows of unequal length (every row needs "
                              f"{width} cells). Fix the file.")
    return [np.array([r[j] for r in rows], dtype=str) for j in range(width)]


def _read_parquet(path: Path, columns: Sequence[str] | None, text_columns: Sequence[str],
                  what: str) -> RecordTable:
    _open_check(path, what)
    try:
        import pyarrow.parquet as pq
    except ImportError:
        from ..errors import MissingDependencyError

        raise MissingDependencyError(
            f"Reading {path.name} (Parquet) needs pyarrow: pip install pyarrow.") from None
    try:
        tab = pq.read_table(path)
    except Exception as exc:  # noqa: BLE001 - pyarrow raises many types for a bad file
        raise ValidationError(f"{what} {path.name}: is not a readable Parquet file "
                              f"({type(exc).__name__}). Check the file.") from None
    return _from_arrow(tab, text_columns, path.name, path)


def _from_arrow(tab: object, text_columns: Sequence[str], source: str,
                path: Path | None) -> RecordTable:
    import pyarrow as pa

    names = tuple(tab.column_names)
    numeric, text = {}, {}
    for name in names:
        col = tab.column(name)
        if name in text_columns:
            text[name] = np.array(col.to_pylist(), dtype=object).astype(str)
            continue
        t = col.type
        if pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_boolean(t) \
                or pa.types.is_decimal(t):
            vals = _numpy(col.cast(pa.float64()))
            numeric[name] = _to_float(np.asarray(vals, dtype=np.float64))
        else:
            text[name] = np.array(col.to_pylist(), dtype=object).astype(str)
            numeric[name] = _to_float(text[name])
    return RecordTable(names, numeric, text, tab.num_rows, named=True, source=source, path=path)


def as_table(records: object, *, names: Sequence[str] | None = None,
             text_columns: Sequence[str] = (), what: str = "records",
             header: bool | str = "auto", strict: bool = False) -> RecordTable:
    """Turn ``records`` into a :class:`RecordTable`.

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
    strict : bool, default=False
        For CSV: refuse a row with the wrong number of cells (the data check, public files).
        Otherwise such a private row is kept as a row of invalid values, handled by the task's
        rule like any other: an error would quote it.
    """
    if isinstance(records, (str, os.PathLike)):
        p = Path(os.fspath(records))
        if p.suffix.lower() in (".parquet", ".pq"):
            if names is not None:
                raise ValidationError(f"{what} {p.name}: a Parquet file names its columns; "
                                      "drop the names.")
            return _read_parquet(p, None, text_columns, what)
        return _read_csv(p, header=header, names=names, text_columns=text_columns, what=what,
                         strict=strict)
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
    if arr is None or arr.ndim != 2 or arr.dtype == object:
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


def _from_mapping(data: Mapping[str, np.ndarray], text_columns: Sequence[str],
                  source: str) -> RecordTable:
    lengths = {v.shape[0] if v.ndim else 0 for v in data.values()}
    if not data or len(lengths) != 1 or any(v.ndim != 1 for v in data.values()):
        raise ValidationError(f"{source}: every column must be 1-d, all of one length; got "
                              f"{ {k: v.shape for k, v in data.items()} }.")
    numeric, text = {}, {}
    for name, v in data.items():
        if name in text_columns or v.dtype.kind in "OUS":
            text[name] = v.astype(str)
            if name not in text_columns:
                numeric[name] = _to_float(text[name])
        elif v.dtype.kind in "biuf":
            numeric[name] = _to_float(v.astype(np.float64))
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

    Public files are checked strictly: a bad cell is an error with its line, since nothing
    about them is private.
    """
    p = Path(os.fspath(path))
    _open_check(p, what)
    first = _first_line(p, ",")
    if first and all(_is_number(c) for c in first):
        raise ValidationError(
            f"{what} {p.name} has no header. Its first line must name the columns, matching "
            "the record columns by name (for example 'lat,lon'); columns are never matched "
            "by position."
        )
    return _read_csv(p, header=True, names=None, text_columns=text_columns, what=what)


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
