"""Loading a table of records from a CSV file and checking every cell (a strict loader).

A private algorithm is only as private as its neighbouring relation is meaningful, so the loader
fixes what one record is: **one data row of the file** (one person, in the usual case where each
person contributes one row). The file is read by the one reader of private tables
(:mod:`dpsubmod.datasets.records`); :func:`load_csv` then refuses the first bad line or cell with
an error that names the file, the line and the column. That error quotes the data, so it is a
data check for the owner, not part of a release: to release on files that may hold bad rows,
pass the path to :func:`dpsubmod.tasks.build_task` or ``dpsubmod select``, whose declared
bad-row rules never raise.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import ParameterTypeError, ValidationError
from ._csv import check_dialect
from ._csv import header as read_header
from .records import RecordTable, _is_number, as_table

_CALLER = "load_csv"


@dataclass(frozen=True, eq=False)
class CSVDataset:
    """A table of records read from a CSV file by :func:`load_csv`.

    Attributes
    ----------
    X : ndarray of float64, shape (N, d)
        The numeric columns, one row per record, all finite.
    y : ndarray of float64, shape (N,), or None
        The label column, when one was asked for.
    feature_names : tuple of str
        Names of the columns of ``X`` (the header names, or ``col1``, ``col2``, ... for a file
        without a header, numbered from 1 in file order).
    label_name : str or None
    text : dict of str to tuple of str
        Columns kept as text (not validated as numbers), e.g. names or group labels.
    line_numbers : ndarray of int64, shape (N,)
        The line of the file each record comes from (1-based, header included), for messages.
    record : str
        What one row is (the privacy unit of the neighbouring relation "replace one record").
    source : str
        The file the data were read from.
    has_header : bool
        Whether the first line was read as column names.
    columns : tuple of str
        Every column of the file in file order (loaded or not).
    """

    X: np.ndarray
    y: np.ndarray | None
    feature_names: tuple[str, ...]
    label_name: str | None
    text: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    line_numbers: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    record: str = ""
    source: str = ""
    has_header: bool = True
    columns: tuple[str, ...] = ()

    @property
    def n_records(self) -> int:
        """``N``, the number of records (data rows)."""
        return int(self.X.shape[0])

    def line_of(self, row: int) -> int:
        """The file line of record ``row`` (0-based record index)."""
        return int(self.line_numbers[row])


def _resolve_column(spec: str | int, names: list[str], path: Path, what: str) -> int:
    if isinstance(spec, bool) or not isinstance(spec, (str, int, np.integer)):
        raise ParameterTypeError(
            f"The '{what}' parameter of {_CALLER} must name columns by header name (str) or "
            f"0-based position (int); got {spec!r}."
        )
    if isinstance(spec, str):
        if spec not in names:
            raise ValidationError(
                f"{path}: has no column named {spec!r} (asked for by '{what}'). Its columns are: "
                f"{', '.join(names)}."
            )
        return names.index(spec)
    if not 0 <= int(spec) < len(names):
        raise ValidationError(
            f"{path}: has {len(names)} columns; the '{what}' parameter of {_CALLER} asked for "
            f"position {int(spec)}. Use positions 0..{len(names) - 1}."
        )
    return int(spec)


def _cell_text(tab: RecordTable, row: int, j: int) -> str:
    """The raw text of cell ``j`` of record ``row`` (for the error message only)."""
    line = tab.raw_line(row)
    cells = next(csv.reader([line], delimiter=tab.dialect.delimiter), [])
    return cells[j].strip() if j < len(cells) else ""


def _first_bad(tab: RecordTable, names: list[str], cols: list[int], path: Path) -> None:
    """Refuse the first unreadable line or invalid cell of ``cols``, naming line and column."""
    bad = np.flatnonzero(tab.status)
    cells = np.zeros(tab.n_rows, dtype=bool)
    for j in cols:
        cells |= np.isnan(tab.numeric[names[j]])
    cell_rows = np.flatnonzero(cells & (tab.status == 0))
    if bad.size and (not cell_rows.size or bad[0] < cell_rows[0]):
        r = int(bad[0])
        line = int(tab.lines[r])
        code = int(tab.status[r])
        if code == 1:
            raise ValidationError(
                f"{path}: is not {tab.dialect.encoding.upper()} text (near line {line}). Save "
                "the file as UTF-8 CSV, or pass its encoding (for example encoding='latin-1').")
        if code == 2:
            raise ValidationError(f"{path}, line {line}: malformed CSV (an unbalanced quote). "
                                  "Check the quoting.")
        got = len(next(csv.reader([tab.raw_line(r).replace('"', "")],
                                  delimiter=tab.dialect.delimiter), []))
        raise ValidationError(
            f"{path}, line {line}: the row has {got} cells but the header has {len(names)}. "
            "Every row must have one cell per column (check for a stray or missing delimiter).")
    if not cell_rows.size:
        return
    r = int(cell_rows[0])
    j = next(j for j in cols if np.isnan(tab.numeric[names[j]][r]))
    cell = _cell_text(tab, r, j)
    where = f"{path}, line {int(tab.lines[r])}, column {names[j]!r}"
    try:
        float(cell)
    except ValueError:
        what = "is empty" if cell == "" else f"holds {cell!r}, which is not a number"
        raise ValidationError(
            f"{where}: the cell {what}. Every cell of a numeric column must be a number: fix "
            "or remove this row, or leave the column out.") from None
    raise ValidationError(
        f"{where}: the cell holds {cell!r} (not finite). Missing or infinite values are "
        "refused: impute them with a public rule or remove the row before running.")


def load_csv(path: str | os.PathLike, *, columns: Sequence[str | int] | None = None,
             label_column: str | int | None = None, text_columns: Sequence[str | int] = (),
             header: bool | str = "auto", delimiter: str = ",", encoding: str = "utf-8",
             record: str | None = None) -> CSVDataset:
    """Read a table of records from a CSV file and check every cell.

    One record is **one data row** of the file: under the replace-one neighbouring relation a
    private release on these records hides whether any single row was replaced by any other row
    (the number of rows is treated as public). If one person contributes several rows, merge their
    rows first, or the guarantee protects rows rather than people.

    Parameters
    ----------
    path : str or path-like
        A CSV file (UTF-8 by default, optionally with a byte-order mark). Blank lines are
        skipped; one line is one record (a quoted cell cannot span lines).
    columns : sequence of str or int, optional
        The numeric columns to load into ``X``, by header name or 0-based position, in this
        order. Default: every column that is neither the label nor a text column. Columns left
        out are not read as numbers (they may hold anything).
    label_column : str or int, optional
        A numeric column to load as ``y``.
    text_columns : sequence of str or int, default=()
        Columns to keep as text in ``text`` (names, group labels), not checked as numbers.
    header : bool or "auto", default="auto"
        ``True``: the first non-blank line holds column names. ``False``: there is no header and
        the columns are called ``col1``, ``col2``, ... ``"auto"``: the first line is a header
        exactly when one of its cells is not a number.
    delimiter : str, default=","
    encoding : str, default="utf-8"
        The file's text encoding, e.g. "latin-1".
    record : str, optional
        What one row is, for the privacy statement; default "one row of <file name>".

    Returns
    -------
    CSVDataset

    Raises
    ------
    ValidationError
        The file is missing, empty, not UTF-8, malformed, has no data rows, rows of unequal length,
        duplicate or empty header names, an unknown column, or a numeric cell that is empty, not
        a number, NaN or infinite. The message names the file, the line and the column.

    Examples
    --------
    >>> import tempfile, os
    >>> d = tempfile.mkdtemp(); p = os.path.join(d, "people.csv")
    >>> _ = open(p, "w").write("age,income,bought\\n34,52.5,1\\n51,61.0,0\\n")
    >>> data = load_csv(p, label_column="bought")
    >>> data.X.shape, data.feature_names, data.y.tolist()
    ((2, 2), ('age', 'income'), [1.0, 0.0])
    """
    p = Path(os.fspath(path))
    if header not in (True, False, "auto"):
        raise ValidationError(
            f"The 'header' parameter of {_CALLER} must be True, False or 'auto'; got {header!r}."
        )
    if not isinstance(delimiter, str) or len(delimiter) != 1:
        raise ValidationError(
            f"The 'delimiter' parameter of {_CALLER} must be one character; got {delimiter!r}."
        )
    dialect = check_dialect(delimiter, encoding, _CALLER)
    if not p.exists():
        raise ValidationError(f"{p}: file not found. Check the path.")
    if p.is_dir():
        raise ValidationError(f"{p}: is a directory, not a CSV file.")
    try:
        first, first_line = read_header(p, dialect, str(p))
    except ValidationError as exc:
        raise ValidationError(str(exc).replace(f"{p} {p.name}", str(p))) from None
    if not first:
        raise ValidationError(f"{p}: the file is empty. It must hold one record per row.")
    has_header = bool(header) if header != "auto" else not all(_is_number(c) for c in first)
    if has_header:
        names = list(first)
        for j, name in enumerate(names):
            if name == "":
                raise ValidationError(
                    f"{p}, line {first_line}: header cell {j + 1} is empty. Give every column "
                    "a name, or pass header=False."
                )
        seen: set[str] = set()
        for name in names:
            if name in seen:
                raise ValidationError(
                    f"{p}, line {first_line}: the column name {name!r} appears twice. Rename one."
                )
            seen.add(name)
    else:
        names = [f"col{j + 1}" for j in range(len(first))]
    width = len(names)
    label_idx = None if label_column is None else _resolve_column(
        label_column, names, p, "label_column")
    if isinstance(text_columns, (str, bytes)):
        text_columns = [text_columns]
    text_idx = [_resolve_column(c, names, p, "text_columns") for c in text_columns]
    if columns is None:
        taken = set(text_idx) | ({label_idx} if label_idx is not None else set())
        cols = [j for j in range(width) if j not in taken]
    else:
        if isinstance(columns, (str, bytes)):
            columns = [columns]
        cols = [_resolve_column(c, names, p, "columns") for c in columns]
        if len(set(cols)) != len(cols):
            raise ValidationError(f"The 'columns' parameter of {_CALLER} names a column twice.")
        if label_idx is not None and label_idx in cols:
            raise ValidationError(
                f"The label column {names[label_idx]!r} is also listed in 'columns' of "
                f"{_CALLER}; a label cannot be a feature. Remove it from 'columns'."
            )
    text_names = [names[j] for j in text_idx]
    try:
        tab = as_table(p, names=None if has_header else names, text_columns=text_names,
                       header=has_header, delimiter=dialect.delimiter,
                       encoding=dialect.encoding, what=str(p))
    except ValidationError as exc:
        if "no data rows" in str(exc):
            raise ValidationError(f"{p}: has a header but no data rows. It must hold one "
                                  "record per row.") from None
        raise
    _first_bad(tab, names, cols + ([label_idx] if label_idx is not None else []), p)
    X = tab.matrix([names[j] for j in cols])
    y = None if label_idx is None else tab.numeric[names[label_idx]].copy()
    text = {names[j]: tuple(tab.text[names[j]].tolist()) for j in text_idx}
    return CSVDataset(
        X=X, y=y, feature_names=tuple(names[j] for j in cols),
        label_name=None if label_idx is None else names[label_idx], text=text,
        line_numbers=np.asarray(tab.lines, dtype=np.int64),
        record=record if record is not None else f"one row of {p.name}",
        source=str(p), has_header=has_header, columns=tuple(names),
    )

