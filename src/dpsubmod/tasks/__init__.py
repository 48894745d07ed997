"""Private selection tasks: from a table of records and public inputs to an objective.

Layering: ``tasks`` sits above ``datasets`` (it reads tables and builds public grids with it),
``functions``, ``constraints``, ``privacy`` and ``offline``, and below ``experiments`` and
``cli``. The ``dpsubmod select`` command and the scikit-learn estimators are thin layers over
it: parsing and printing live there, everything that turns records into an objective with a
declared sensitivity lives here.

* :func:`build_task` turns records (a 2-d array, a DataFrame, a dict of columns, a pyarrow
  Table, or the path of a CSV or Parquet file) plus public inputs into a :class:`Task`: the
  objective ``f`` with its declared sensitivity, a name per item, and the pieces of the privacy
  statement (``statement_parts``).
* Public inputs are matched to record columns **by name**, never by position: a candidates
  table needs a header naming the record columns, and ``bounds`` maps column names to
  ``(low, high)``.
* Records are shaped by data-independent rules only, and the statement names them: values
  outside public bounds are clipped; invalid values (empty, text, NaN, infinite, a negative
  coverage cell, a non-integer category code) follow the ``invalid`` rule of the task
  (``"drop"``, ``"clip"`` or ``"impute"``). A bad private row never raises: the refusal itself
  would reveal that row. :func:`check_data` is the explicit data check that may stop at the
  first bad row; it is not a release.
* :func:`build_constraint` and :func:`private_select` finish the release; a :class:`Release`
  keeps the released part (``to_dict``) apart from the non-private diagnostics.

Examples
--------
>>> import numpy as np
>>> from dpsubmod.tasks import build_task, build_constraint, private_select
>>> rng = np.random.default_rng(0)
>>> records = {"x": rng.random(200), "y": rng.random(200)}
>>> task = build_task("facility-location", records, grid=(2, 2),
...                   bounds={"x": (0, 1), "y": (0, 1)})
>>> task.names
('(0.25, 0.25)', '(0.75, 0.25)', '(0.25, 0.75)', '(0.75, 0.75)')
>>> rel = private_select(task, build_constraint(task, k=2), epsilon=1.0, backend="numpy",
...                      rng=0)
>>> len(rel.to_dict()["selection"])
2
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._lazy import lazy_exports
from ..datasets.records import RecordTable, as_table
from ..errors import ValidationError
from ._bins import MISSING, binned_columns
from ._common import INVALID_RULES, Scale, Task, owner_warnings
from .release import BACKEND_GUARANTEE, ConstraintSpec, Release, build_constraint, private_select

__all__ = ["TASKS", "INVALID_RULES", "DEFAULT_INVALID", "Task", "Scale", "RecordTable",
           "as_table",
           "build_task", "check_data", "DataIssue", "build_constraint", "ConstraintSpec",
           "private_select", "Release", "BACKEND_GUARANTEE", "MISSING", "owner_warnings"]

#: Task name -> the module of this package whose function of the same name builds it. As the
#: offline registry does for methods, the module is loaded when its task is built, and each
#: imports its objective family at its top: a facility-location run loads neither the coverage
#: family (scipy.sparse) nor the mutual information (scipy.special).
_BUILDERS = {"facility-location": "facility_location", "feature-selection": "feature_selection",
             "coverage": "coverage"}
#: The task names, in the order the command line lists them.
TASKS = tuple(_BUILDERS)

# the builders' modules, as attributes of the package (PEP 562)
__getattr__, __dir__ = lazy_exports(__name__, {}, modules=tuple(_BUILDERS.values()))


def _builder(task: str) -> Callable[..., Task]:
    module = _BUILDERS[task]
    return getattr(importlib.import_module(f"{__name__}.{module}"), module)


#: The default rule for invalid values in private rows, per task.
DEFAULT_INVALID = {"facility-location": "drop", "feature-selection": "impute",
                   "coverage": "clip"}
#: Public inputs each task reads; any other is refused, not ignored.
PUBLIC_INPUTS = {
    "facility-location": ("candidates", "candidate_names", "partition_column", "grid",
                          "bounds", "similarity", "bandwidth", "radius"),
    "feature-selection": ("label", "bins", "bounds", "label_thresholds"),
    "coverage": (),
}


def _check_task(task: object) -> str:
    if task not in _BUILDERS:
        raise ValidationError(f"The 'task' parameter of build_task must be one of "
                              f"{list(TASKS)}; got {task!r}.")
    return str(task)


def _check_public(task: str, public: dict[str, Any]) -> None:
    for name in public:
        if name not in PUBLIC_INPUTS[task]:
            users = [t for t, names in PUBLIC_INPUTS.items() if name in names]
            where = (f"it is for {' and '.join(users)}" if users else "no task reads it")
            raise ValidationError(f"The public input {name!r} does not apply to the {task} "
                                  f"task ({where}). Remove it.")


def build_task(task: str, records: object, *, columns: list[str] | None = None,
               invalid: str | None = None, names: list[str] | None = None,
               user_column: str | None = None, max_rows_per_user: int | None = None,
               relation: str | None = None, chunk_rows: int | None = None,
               scheduler: Any = None, n_jobs: int = 1, delimiter: str = ",",
               encoding: str = "utf-8", **public: Any) -> Task:
    """Build a private selection task from records and public inputs.

    Parameters
    ----------
    task : {"facility-location", "feature-selection", "coverage"}
    records : array, DataFrame, dict of columns, pyarrow Table, or path to CSV / Parquet
        The private records, one row per record.
    columns : list of str, optional
        The record columns the objective reads (default: per task, see the builders).
    invalid : {"drop", "clip", "impute"}, optional
        The rule for invalid values in private rows (default per task: ``DEFAULT_INVALID``).
    names : list of str, optional
        Column names for records without them (an array, a CSV without a header).
    user_column, max_rows_per_user, relation, chunk_rows, scheduler, n_jobs
        Who one person is and how records are read: see :class:`Scale` (facility-location and
        coverage only).
    delimiter, encoding : str
        How a CSV file of records is written (default "," and "utf-8"; a byte-order mark is
        dropped); the same in every reading mode.
    **public
        The task's public inputs (``PUBLIC_INPUTS[task]``): see the builder of each task,
        :func:`~dpsubmod.tasks.facility_location.facility_location`,
        :func:`~dpsubmod.tasks.feature_selection.feature_selection` and
        :func:`~dpsubmod.tasks.coverage.coverage`.

    Returns
    -------
    Task
    """
    task = _check_task(task)
    _check_public(task, public)
    rule = DEFAULT_INVALID[task] if invalid is None else invalid
    scale = Scale(user_column=user_column, max_rows_per_user=max_rows_per_user,
                  relation=relation, chunk_rows=chunk_rows, scheduler=scheduler, n_jobs=n_jobs,
                  delimiter=delimiter, encoding=encoding)
    return _builder(task)(records, columns=columns, invalid=rule, names=names, scale=scale,
                          **public)


@dataclass(frozen=True)
class DataIssue:
    """The first invalid value found by :func:`check_data` (NOT private: it quotes the data)."""

    where: str
    column: str
    value: str
    reason: str

    def __str__(self) -> str:
        return f"{self.where}, column {self.column!r}: {self.value} ({self.reason})"


def check_data(task: str, records: object, *, columns: list[str] | None = None,
               names: list[str] | None = None, user_column: str | None = None,
               delimiter: str = ",", encoding: str = "utf-8", **public: Any
               ) -> DataIssue | None:
    """A data check, NOT a release: the first record the bad-row policy or the task's
    ``invalid`` rule would handle.

    Returns ``None`` when every record can be read and every value the task reads is valid.
    The answer quotes a private value and its position; it is meant for the data's owner, on
    their own machine. Nothing is drawn or charged. Same arguments as :func:`build_task`.
    """
    task = _check_task(task)
    _check_public(task, public)
    text = [user_column] if user_column is not None else []
    table = records if isinstance(records, RecordTable) else as_table(
        records, names=names, text_columns=text, delimiter=delimiter, encoding=encoding)
    ok = np.ones(table.n_rows, dtype=bool) if table.status is None else table.status == 0
    found: list[tuple[int, str]] = []
    if not ok.all():
        found.append((int(np.flatnonzero(~ok)[0]), "unreadable"))
    if user_column is not None:
        ids = table.text_column(user_column, "user_column")
        empty = np.flatnonzero((np.char.str_len(np.char.strip(ids)) == 0) & ok)
        if empty.size:
            found.append((int(empty[0]), "user"))
    if task == "feature-selection":
        label = public.get("label")
        cols = list(columns) if columns is not None else [
            c for c in table.names if c in table.numeric and c != label]
        cols = cols + ([label] if label is not None else [])
        binned = binned_columns(public.get("bins"), public.get("bounds"), cols)
        if public.get("label_thresholds") is not None:
            binned.add(label)
    elif task == "facility-location":
        bounds = public.get("bounds") or {}
        cols = list(columns) if columns is not None else [
            c for c in table.names if c in table.numeric
            and (c in bounds or public.get("candidates") is not None)]
        binned = set(cols)
    else:
        cols = list(columns) if columns is not None else list(table.numeric)
        binned = set(cols)
    first: tuple[int, int] | None = None
    for j, c in enumerate(cols):
        x = table.column(c, "columns")
        with np.errstate(invalid="ignore"):
            bad = np.isnan(x)
            if task == "coverage":
                bad |= x < 0
            elif c not in binned:
                bad |= x != np.round(x)
        rows = np.flatnonzero(bad & ok)
        if rows.size and (first is None or rows[0] < first[0]):
            first = (int(rows[0]), j)
    if first is not None:
        found.append((first[0], "cell"))
    if not found:
        return None
    r, kind = min(found)
    if kind == "unreadable":
        return DataIssue(table.line_of(r), "(all)", repr(table.raw_line(r)),
                         f"it has {table.unreadable(r)}; in a release it is kept as a record "
                         "whose every cell is invalid")
    if kind == "user":
        return DataIssue(table.line_of(r), str(user_column), "an empty user id",
                         "in a release the row is dropped")
    c = cols[first[1]]
    raw = table.raw_cell(r, c)
    v = raw if raw is not None else table.text[c][r] if c in table.text else table.numeric[c][r]
    reason = {"coverage": "not a nonnegative number"}.get(
        task, "not a finite number" if c in binned else "not an integer category code")
    return DataIssue(table.line_of(r), c, repr(v if isinstance(v, str) else float(v)), reason)
