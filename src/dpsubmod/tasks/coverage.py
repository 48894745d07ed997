"""The coverage task: choose sets (columns of the records) that cover the most people."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..functions.coverage import Coverage
from ._common import (
    Scale,
    Task,
    check_rule,
    coordinate_columns,
    pass_counts,
    records_table,
    scale_rules,
    scan,
    statement,
    unreadable,
)

_ALLOWED = ("clip", "drop")
_WHY = "a coverage cell has no value to impute other than 'not covered', which 'clip' gives."


def coverage(records: object, *, columns: Sequence[str] | None = None, invalid: str = "clip",
             names: Sequence[str] | None = None, scale: Scale | None = None) -> Task:
    r"""Fraction of people covered, one row per person and one column per candidate set.

    Cell ``(i, j)`` is positive when set ``j`` covers person ``i`` and 0 when it does not;
    :math:`f(S) = \frac1N \sum_i \mathbf 1[\exists j \in S: x_{ij} > 0]` (weighted coverage,
    Nemhauser, Wolsey and Fisher 1978; private greedy of Mitrovic et al. 2017), declared
    sensitivity ``1/N`` under replace-one-row (a sum and sensitivity ``m`` for persons of up
    to ``m`` rows or add/remove, see :class:`~dpsubmod.tasks.Scale`). An invalid cell
    (negative, empty, text, NaN) is handled by ``invalid``: ``"clip"`` (default; the cell
    counts as 0, "not covered") or ``"drop"`` (the whole row covers nothing but still counts in
    ``N``). Both rules depend on the row alone, so the sensitivity holds for every input.
    """
    scale = scale or Scale()
    table = records_table(records, names, scale)
    rule = check_rule(invalid, "coverage", _ALLOWED, _WHY)
    cols = coordinate_columns(table, columns, exclude=(scale.user_column,))
    diagnostics: dict[str, Any] = {}
    if scale.scans(records):
        data: Any = scan(records, cols, names, scale)
        ids = True if scale.user_column is not None else None
    else:
        data = np.column_stack([table.column(c, "columns") for c in cols])
        with np.errstate(invalid="ignore"):
            bad = np.isnan(data) | (data < 0)
        diagnostics = {"rows": table.n_rows, "unreadable_rows": unreadable(table),
                       "invalid_cells": int(bad.sum()), "invalid_rows": int(bad.any(1).sum())}
        ids = (None if scale.user_column is None else
               table.text_column(scale.user_column, "user_column"))
        if ids is not None:
            diagnostics["rows_without_user_id"] = int((np.char.str_len(ids) == 0).sum())
    f = Coverage.from_chunks(data, len(cols), invalid=rule, user_id=ids,
                             max_rows_per_user=scale.max_rows_per_user,
                             relation=scale.relation, n_jobs=scale.n_jobs,
                             scheduler=scale.scheduler)
    pass_counts(data, diagnostics)
    neighbouring, note, N = statement(f, table.source, 1.0, scale.max_rows_per_user)
    return Task(
        task="coverage", f=f, names=cols, items="sets",
        objective=("fraction of records (people) covered by at least one chosen set"
                   if N is not None else "number of records (people) covered by at least "
                   "one chosen set"),
        sensitivity_note=note, neighbouring=neighbouring,
        source=table.source, record=f"one row of {table.source}", n_records=N, columns=cols,
        public=(),
        rules=tuple(["a positive cell means the set covers the person"] + scale_rules(scale)
                    + ["an invalid cell (negative, empty, text or NaN) "
                       + ("counts as 0, not covered (clipped)" if rule == "clip" else
                          "makes its row cover nothing; the row still counts (dropped)")]),
        params={"invalid": rule, "columns": list(cols)}, diagnostics=diagnostics,
    )
