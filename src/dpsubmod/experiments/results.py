"""Results tables shared by every experiment: one writer, one reader, one appending store.

Rows are flat dicts. A table is written as CSV, or as Parquet when the path ends in
``.parquet`` (needs ``pyarrow``). :class:`ResultStore` appends rows as cells of a sweep finish,
so an interrupted sweep keeps what it finished and a re-run can skip it:

* CSV: each row is appended and flushed at once (a half-written last line from a crash is
  dropped when the file is read back);
* Parquet: a Parquet file cannot be appended to, so finished rows go into part files in a
  ``<name>.parquet.parts/`` folder beside the target; :meth:`ResultStore.finalize` merges the
  target and the parts into the target and removes the folder.

Writes that replace a whole file go through a fresh temporary file (``dpsubmod._atomic``, which
follows no link) and :func:`os.replace`, so the
target is never left half written.
"""

from __future__ import annotations

import csv
import math
import os
import uuid
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .._atomic import replacing
from ..errors import MissingDependencyError

__all__ = ["MissingDependencyError", "table_format", "write_table", "read_table", "ResultStore"]

#: Column types a schema may name (``None`` is stored as an empty CSV cell / a Parquet null).
_TYPES = {"str": str, "float": float, "int": int, "bool": bool}


def table_format(path: str | os.PathLike[str]) -> str:
    """``"parquet"`` when ``path`` ends in ``.parquet``, else ``"csv"``."""
    return "parquet" if str(path).lower().endswith(".parquet") else "csv"


def _columns(rows: Sequence[Mapping[str, Any]], columns: Sequence[str] | None) -> list[str]:
    if columns is not None:
        return list(columns)
    keys: dict[str, None] = {}
    for r in rows:
        keys.update(dict.fromkeys(r))
    return list(keys)


def _cell_text(v: Any) -> Any:
    return "" if v is None else v


def _pyarrow() -> Any:
    try:
        import pyarrow
        import pyarrow.parquet  # noqa: F401
    except ImportError:
        raise MissingDependencyError(
            "Writing or reading Parquet needs pyarrow, which is not installed. Install it "
            "(pip install 'dpsubmod[parquet]') or write CSV (a path ending in .csv)."
        ) from None
    return pyarrow


def _arrow_table(rows: Sequence[Mapping[str, Any]], columns: list[str],
                 schema: Mapping[str, str] | None) -> Any:
    pa = _pyarrow()
    arrow_types = {"str": pa.string(), "float": pa.float64(), "int": pa.int64(),
                   "bool": pa.bool_()}
    data = {c: [r.get(c) for r in rows] for c in columns}
    if schema is None:
        return pa.table(data)
    fields = [pa.field(c, arrow_types[schema.get(c, "str")]) for c in columns]
    return pa.Table.from_pydict(data, schema=pa.schema(fields))


def write_table(rows: Sequence[Mapping[str, Any]], path: str | os.PathLike[str], *,
                columns: Sequence[str] | None = None,
                schema: Mapping[str, str] | None = None) -> Path:
    """Write ``rows`` to ``path`` (CSV, or Parquet for a ``.parquet`` path), replacing it.

    Parameters
    ----------
    rows : sequence of dict
        One dict per row. Missing keys are written as empty cells; ``None`` as an empty cell.
    path : str or path-like
        Target file; its folder is created. Written atomically (temporary file, then rename).
    columns : sequence of str, optional
        Column order; default: every key in order of first appearance.
    schema : dict, optional
        Column name to ``"str"``, ``"float"``, ``"int"`` or ``"bool"``: the Parquet column types
        (unused for CSV, whose cells are text).

    Returns
    -------
    pathlib.Path
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    cols = _columns(rows, columns)
    # through a fresh temporary file that follows no link, renamed over the table
    if table_format(path) == "parquet":
        import pyarrow.parquet as pq

        with replacing(path, text=False) as fh:
            pq.write_table(_arrow_table(rows, cols, schema), fh)
    else:
        with replacing(path, newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=cols, extrasaction="ignore")
            w.writeheader()
            w.writerows({k: _cell_text(v) for k, v in r.items()} for r in rows)
    return path


def _convert(value: Any, kind: str | None) -> Any:
    if kind is None:
        return value
    if value is None or value == "":
        return None
    if isinstance(value, float) and math.isnan(value) and kind != "float":
        return None
    if kind == "bool":
        return value if isinstance(value, bool) else str(value) == "True"
    return _TYPES[kind](value)


def _read_csv(path: Path) -> list[dict[str, Any]]:
    with path.open(newline="") as fh:
        lines = fh.read()
    if lines and not lines.endswith("\n"):
        # the last row was cut short by an interruption: drop it, the cell is re-run
        lines = lines[: lines.rfind("\n") + 1]
    reader = csv.DictReader(lines.splitlines())
    return [dict(r) for r in reader if None not in r and all(v is not None for v in r.values())]


def _read_parquet(path: Path) -> list[dict[str, Any]]:
    _pyarrow()
    import pyarrow.parquet as pq

    return pq.read_table(path).to_pylist()


def read_table(path: str | os.PathLike[str], *,
               schema: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """Read a table written by :func:`write_table` or :class:`ResultStore`.

    Parameters
    ----------
    path : str or path-like
        A CSV or ``.parquet`` file. For Parquet, part files left by an interrupted
        :class:`ResultStore` are read too.
    schema : dict, optional
        Column types (as in :func:`write_table`): CSV cells are converted to them and empty
        cells to ``None``, so a table read back equals the rows that were written.

    Returns
    -------
    list of dict
        ``[]`` when neither the file nor any part file exists.
    """
    path = Path(path)
    rows: list[dict[str, Any]] = []
    if table_format(path) == "parquet":
        files = [path] if path.exists() else []
        parts = _parts_dir(path)
        if parts.is_dir():
            files += sorted(parts.glob("*.parquet"))
        for f in files:
            rows += _read_parquet(f)
    elif path.exists():
        rows = _read_csv(path)
    if schema is not None:
        rows = [{k: _convert(v, schema.get(k)) for k, v in r.items()} for r in rows]
    return rows


def _parts_dir(path: Path) -> Path:
    return path.with_name(path.name + ".parts")


class ResultStore:
    """An appending results table for resumable sweeps.

    Parameters
    ----------
    path : str or path-like
        CSV file, or a ``.parquet`` file (see the module docstring for how it is appended to).
    columns : sequence of str
        Column order; every row is written with exactly these columns.
    schema : dict, optional
        Column types (see :func:`write_table`).
    flush_every : int, default=64
        Parquet only: rows buffered before a part file is written (CSV rows are written at once).

    Examples
    --------
    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "t.csv")
    >>> with ResultStore(p, ["a", "b"], schema={"a": "int", "b": "float"}) as st:
    ...     st.append({"a": 1, "b": 0.5})
    >>> ResultStore(p, ["a", "b"], schema={"a": "int", "b": "float"}).read()
    [{'a': 1, 'b': 0.5}]
    """

    def __init__(self, path: str | os.PathLike[str], columns: Sequence[str], *,
                 schema: Mapping[str, str] | None = None, flush_every: int = 64):
        self.path = Path(path)
        self.columns = list(columns)
        self.schema = dict(schema) if schema is not None else None
        self.format = table_format(self.path)
        self.flush_every = max(1, int(flush_every))
        self._buffer: list[dict[str, Any]] = []
        self._fh: Any = None
        self._writer: Any = None
        if self.format == "parquet":
            _pyarrow()

    # -- reading -------------------------------------------------------------------------------
    def read(self) -> list[dict[str, Any]]:
        """Every row stored so far (the file and, for Parquet, its part files)."""
        return read_table(self.path, schema=self.schema)

    # -- appending -----------------------------------------------------------------------------
    def append(self, row: Mapping[str, Any]) -> None:
        """Store one row (CSV: written and flushed now; Parquet: buffered)."""
        if self.format == "csv":
            self._csv_append(row)
        else:
            self._buffer.append(dict(row))
            if len(self._buffer) >= self.flush_every:
                self.flush()

    def extend(self, rows: Iterable[Mapping[str, Any]]) -> None:
        """Store several rows."""
        for r in rows:
            self.append(r)

    def _csv_append(self, row: Mapping[str, Any]) -> None:
        if self._fh is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fresh = not self.path.exists() or self.path.stat().st_size == 0
            if not fresh:
                self._repair_tail()
            self._fh = self.path.open("a", newline="")
            self._writer = csv.DictWriter(self._fh, fieldnames=self.columns,
                                          extrasaction="ignore")
            if fresh:
                self._writer.writeheader()
        self._writer.writerow({k: _cell_text(v) for k, v in row.items()})
        self._fh.flush()

    def _repair_tail(self) -> None:
        # An interrupted run may have left half a line: cut it so new rows start on a new line.
        with self.path.open("rb+") as fh:
            data = fh.read()
            if data and not data.endswith(b"\n"):
                fh.seek(data.rfind(b"\n") + 1)
                fh.truncate()

    def flush(self) -> None:
        """Write buffered rows (Parquet: one new part file); CSV rows are already on disk."""
        if self._fh is not None:
            self._fh.flush()
        if self._buffer:
            import pyarrow.parquet as pq

            parts = _parts_dir(self.path)
            parts.mkdir(parents=True, exist_ok=True)
            target = parts / f"part-{uuid.uuid4().hex}.parquet"
            with replacing(target, text=False) as fh:
                pq.write_table(_arrow_table(self._buffer, self.columns, self.schema), fh)
            self._buffer = []

    def close(self) -> None:
        """Flush and close the file."""
        self.flush()
        if self._fh is not None:
            self._fh.close()
            self._fh = self._writer = None

    def finalize(self, rows: Sequence[Mapping[str, Any]] | None = None) -> Path:
        """Close, then rewrite the table as one file (``rows`` in the given order, default the
        stored rows) and remove Parquet part files."""
        self.close()
        if rows is None:
            rows = self.read()
        write_table(rows, self.path, columns=self.columns, schema=self.schema)
        parts = _parts_dir(self.path)
        if parts.is_dir():
            for f in parts.iterdir():
                f.unlink()
            parts.rmdir()
        return self.path

    def __enter__(self) -> ResultStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
