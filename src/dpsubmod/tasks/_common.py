"""The Task record and the checks shared by the task builders (public inputs, bounds, rules)."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .._cells import BAD_ROW_POLICY
from ..datasets.chunks import scan_records
from ..datasets.records import RecordTable, as_table
from ..errors import ParameterTypeError, ValidationError
from ..functions.base import SetFunction

#: Data-independent rules for invalid values in private rows.
INVALID_RULES = ("clip", "drop", "impute")


def fmt(x: float) -> str:
    return f"{x:.6g}"


@dataclass(frozen=True, eq=False)
class Task:
    """A private selection problem built from records and public inputs.

    Everything here except ``f`` and ``diagnostics`` is public: it is derived from public
    inputs and from the neighbouring relation only, and may be released with the selection.

    Attributes
    ----------
    task : str
        The task's name (``"facility-location"``, ``"feature-selection"``, ``"coverage"``).
    f : SetFunction
        The objective over the private records, with its declared ``sensitivity``.
    names : tuple of str
        A name for each item of the ground set (candidate, feature, set), in ground-set order.
    items : str
        What the items are, in words ("candidate locations", "features", "sets").
    objective : str
        The objective in words.
    sensitivity_note : str
        Why the declared sensitivity holds, in words.
    neighbouring : str
        The neighbouring relation of the guarantee.
    record : str
        What one record (one row) is.
    n_records : int or None
        The number of rows when the relation treats it as public, else ``None``.
    columns : tuple of str
        The record columns the objective reads.
    public : tuple of str
        The public inputs, in words (candidates, bandwidth, bounds, bins, ...).
    rules : tuple of str
        The data-independent rules applied to the records (clipping, invalid values).
    params : dict
        Public parameters, for the release file.
    groups : tuple of str or None
        A public group per item (from a candidates column), for a partition matroid.
    source : str
        The data's file name (no directory) or a description of the object.
    diagnostics : dict
        NOT private: counts of invalid and clipped values in the private records. Never
        publish them; they go to a separate, labelled diagnostics file only.
    """

    task: str
    f: SetFunction
    names: tuple[str, ...]
    items: str
    objective: str
    sensitivity_note: str
    neighbouring: str
    record: str
    n_records: int | None
    columns: tuple[str, ...]
    public: tuple[str, ...] = ()
    rules: tuple[str, ...] = ()
    params: dict[str, Any] = field(default_factory=dict)
    groups: tuple[str, ...] | None = None
    diagnostics: dict[str, Any] = field(default_factory=dict)
    source: str = ""

    @property
    def sensitivity(self) -> float:
        """The declared sensitivity of ``f`` (public)."""
        return float(self.f.sensitivity)

    @property
    def statement_parts(self) -> dict[str, Any]:
        """The pieces of the privacy statement that come from the task (all public)."""
        return {"objective": self.objective, "sensitivity": self.sensitivity,
                "sensitivity_note": self.sensitivity_note, "neighbouring": self.neighbouring,
                "record": self.record, "public_inputs": list(self.public),
                "data_rules": list(self.rules)}


def check_rule(rule: object, task: str, allowed: Sequence[str], why: str) -> str:
    if not isinstance(rule, str) or rule not in INVALID_RULES:
        raise ValidationError(f"The 'invalid' parameter of build_task must be one of "
                              f"{list(INVALID_RULES)}; got {rule!r}.")
    if rule not in allowed:
        raise ValidationError(f"invalid={rule!r} does not apply to the {task} task: {why} "
                              f"Use one of {list(allowed)}.")
    return rule


def check_bounds(bounds: object, columns: Sequence[str], what: str = "bounds"
                 ) -> dict[str, tuple[float, float]]:
    """Public ``{column: (low, high)}``; every name must be one of ``columns``."""
    if bounds is None:
        return {}
    if not isinstance(bounds, Mapping):
        raise ParameterTypeError(
            f"The '{what}' parameter must map a record column's NAME to (low, high), for "
            "example {'lat': (40.6, 40.9), 'lon': (-74.1, -73.8)}; bounds are never matched to "
            f"columns by position. Got {type(bounds).__name__}."
        )
    out: dict[str, tuple[float, float]] = {}
    for name, pair in bounds.items():
        if name not in columns:
            raise ValidationError(
                f"The '{what}' parameter names {name!r}, which is not one of the record "
                f"columns used ({', '.join(columns)}). Fix the name."
            )
        try:
            lo, hi = (float(v) for v in pair)
        except (TypeError, ValueError):
            raise ValidationError(f"The bounds of column {name!r} must be two numbers "
                                  f"(low, high); got {pair!r}.") from None
        if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
            raise ValidationError(f"The bounds of column {name!r} must be finite with low < "
                                  f"high; got ({fmt(lo)}, {fmt(hi)}).")
        out[str(name)] = (lo, hi)
    return out


def coordinate_columns(table: RecordTable, columns: Sequence[str] | None,
                       exclude: Sequence[str] = ()) -> tuple[str, ...]:
    """The record columns to read: ``columns`` (checked) or every numeric column."""
    if columns is None:
        cols = tuple(c for c in table.names if c in table.numeric and c not in exclude)
    else:
        if isinstance(columns, str):
            columns = [columns]
        cols = tuple(str(c) for c in columns)
        for c in cols:
            table.column(c, "columns")
        if len(set(cols)) != len(cols):
            raise ValidationError("The 'columns' parameter names a column twice.")
    if not cols:
        raise ValidationError(f"{table.source}: no numeric record columns to use; pass "
                              "columns=.")
    return cols


def clip_to_bounds(X: np.ndarray, cols: Sequence[str],
                   bounds: Mapping[str, tuple[float, float]]) -> np.ndarray:
    """Clip each bounded column into its public box, in place (NaN stays NaN)."""
    for j, c in enumerate(cols):
        if c in bounds:
            lo, hi = bounds[c]
            np.clip(X[:, j], lo, hi, out=X[:, j])
    return X


def count_outside(X: np.ndarray, cols: Sequence[str],
                  bounds: Mapping[str, tuple[float, float]]) -> dict[str, int]:
    out = {}
    for j, c in enumerate(cols):
        if c in bounds:
            lo, hi = bounds[c]
            with np.errstate(invalid="ignore"):
                out[c] = int(((X[:, j] < lo) | (X[:, j] > hi)).sum())
    return out


@dataclass(frozen=True)
class Scale:
    """How records are read and who one person is (public choices, all optional).

    Attributes
    ----------
    user_column : str or None
        The column naming each row's person; with ``max_rows_per_user`` one person is up to
        that many rows (rows beyond a person's first ``m`` in file order are dropped).
    max_rows_per_user : int or None
    relation : {"replace-one", "add-remove"} or None
        The neighbouring relation (default: replace one row; with a user column, add or remove
        one person).
    chunk_rows : int or None
        Read a CSV or Parquet file in chunks of this many rows, re-read on every greedy step
        (memory O(N), never the table).
    scheduler : str, distributed.Client or LocalCluster, or None
        Partition the records over a Dask cluster.
    n_jobs : int
        Threads for the in-process passes.
    delimiter, encoding : str
        How a CSV file of records is written (default "," and "utf-8"; a byte-order mark is
        dropped). Every reading mode reads the same dialects.
    """

    user_column: str | None = None
    max_rows_per_user: int | None = None
    relation: str | None = None
    chunk_rows: int | None = None
    scheduler: Any = None
    n_jobs: int = 1
    delimiter: str = ","
    encoding: str = "utf-8"

    @property
    def dialect(self) -> dict[str, str]:
        """The CSV dialect options of the readers."""
        return {"delimiter": self.delimiter, "encoding": self.encoding}

    @property
    def in_memory_default(self) -> bool:
        """Whether only the dialect differs from the defaults (one row per person, in memory)."""
        return Scale(delimiter=self.delimiter, encoding=self.encoding) == self

    @property
    def streaming(self) -> bool:
        return self.chunk_rows is not None

    def scans(self, records: object) -> bool:
        """Whether the records are read by chunks (or by the cluster's workers) from a file."""
        return self.streaming or (
            self.scheduler is not None and isinstance(records, (str, os.PathLike))
            and str(records).lower().endswith((".parquet", ".pq")))


def statement(f: SetFunction, source: str, s_max: float, m: int | None
              ) -> tuple[str, str, int | None]:
    """(neighbouring, sensitivity note, public N or None) of a record objective."""
    rel = f.neighbouring
    if m is not None:
        return (f"{rel}, in {source}", f"m s_max = {m} x {fmt(s_max)}: one person's up to {m} "
                f"rows each move only their own term, which lies in [0, s_max]", None)
    if rel.startswith("add or remove"):
        return (f"{rel}, in {source}; the number of rows is not public",
                f"s_max = {fmt(s_max)}: the objective is a sum, and one row's term lies in "
                "[0, s_max]", None)
    N = f.n_rows
    return (f"replace one row of {source} by any other row (one record = one row; the number "
            f"of rows, {N}, is treated as public)",
            f"s_max / N = {fmt(s_max)} / {N}: one row moves only its own term, which lies in "
            "[0, s_max / N]", N)


def scale_rules(scale: Scale) -> list[str]:
    rules = [BAD_ROW_POLICY]
    if scale.user_column is None:
        return rules
    m = scale.max_rows_per_user
    return rules + [f"one person (column {scale.user_column!r}) = up to {m} rows: a person's "
                    f"rows beyond their first {m} in file order are dropped"]


def scan(records: object, cols: Sequence[str], names: Any, scale: Scale,
         watch: Mapping[str, tuple[float, float]] | None = None) -> Any:
    """The records as a chunk source (chunked mode, or Parquet on a cluster)."""
    src = scan_records(records, list(cols), user_column=scale.user_column,
                       chunk_rows=scale.chunk_rows or 1 << 18, names=names, **scale.dialect)
    src.watch = dict(watch or {})
    return src


def unreadable(table: RecordTable) -> int:
    """How many records of a CSV table could not be read (non-private diagnostics)."""
    return 0 if table.status is None else int((table.status != 0).sum())


def pass_counts(data: Any, diagnostics: dict[str, Any]) -> None:
    """Copy a chunk source's counts of its first pass into the (non-private) diagnostics."""
    counts = getattr(data, "counts", None)
    if counts:
        diagnostics.update(counts)


def records_table(records: object, names: Any, scale: Scale) -> RecordTable:
    """The records, or (chunked mode) a table of their column names only."""
    if (scale.user_column is None) != (scale.max_rows_per_user is None):
        raise ValidationError("user_column and max_rows_per_user go together: which rows "
                              "belong to one person, and how many of them count.")
    if not scale.scans(records):
        text = [scale.user_column] if scale.user_column is not None else []
        tab = records if isinstance(records, RecordTable) else as_table(
            records, names=names, text_columns=text, **scale.dialect)
        if scale.user_column is not None and scale.user_column not in tab.names:
            raise ValidationError(f"{tab.source}: has no user column named "
                                  f"{scale.user_column!r}. Its columns are: "
                                  f"{', '.join(tab.names)}.")
        return tab
    if not isinstance(records, (str, os.PathLike)):
        raise ValidationError("chunk_rows reads a CSV or Parquet file in chunks; pass the "
                              "file's path (in-memory records need no chunking).")
    if scale.chunk_rows is not None and scale.chunk_rows < 1:
        raise ValidationError(f"chunk_rows must be at least 1; got {scale.chunk_rows}.")
    probe = scan_records(records, [], user_column=scale.user_column, names=names,
                         **scale.dialect)
    numeric = {c: np.zeros(0) for c in probe.names if c != scale.user_column}
    named = probe.kind != "csv" or probe._csv_header or names is not None
    return RecordTable(tuple(probe.names), numeric, {}, 0, named=named,
                       source=Path(os.fspath(records)).name)


#: Owner warnings: a column clipped on more than this fraction of the records ...
CLIPPED_WARNING = 0.5
#: ... or more than this fraction of the records handled by the bad-row rules.
BAD_ROWS_WARNING = 0.1
_NOT_RELEASED = ("for the data's owner only, computed from the raw records; it is not part "
                 "of the release and must not be published")


def owner_warnings(task: Task) -> list[str]:
    """Warnings for the data's owner from a task's NON-private diagnostics (never released).

    A column whose records fall outside the public bounds more than half of the time (the
    bounds are probably those of another column), and more than a tenth of the records
    unreadable, without a user id or with an invalid value: both mean the declared rules shape
    the result more than the data do.
    """
    d = task.diagnostics
    rows = d.get("rows") or task.n_records or 0
    if not rows:
        return []
    out = []
    bounds = task.params.get("bounds") or {}
    for col, count in (d.get("outside_bounds") or {}).items():
        if count > CLIPPED_WARNING * rows and col in bounds:
            lo, hi = bounds[col]
            out.append(f"more than half of the records lie outside the public bounds of "
                       f"column {col!r}, [{fmt(lo)}, {fmt(hi)}], and were clipped to them: "
                       f"check that these bounds belong to {col!r} ({_NOT_RELEASED}).")
    cells = d.get("invalid_cells")
    per_column = max(cells.values()) if isinstance(cells, dict) and cells else 0
    handled = max(int(d.get("unreadable_rows", 0)), int(d.get("invalid_rows", 0)), per_column)
    handled += int(d.get("rows_without_user_id", 0))
    if handled > BAD_ROWS_WARNING * rows:
        cols = ", ".join(repr(c) for c in task.columns)
        out.append(f"more than a tenth of the records were unreadable, had no user id, or "
                   f"had an invalid value in the columns read ({cols}); the bad-row rules "
                   "handled them (see 'Data rules'). Check the file, its --delimiter and "
                   f"--encoding, with --check-data ({_NOT_RELEASED}).")
    return out
