"""The coverage task: choose sets (columns of the records) that cover the most people."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ._common import Task, check_rule, coordinate_columns, fmt
from ._table import RecordTable, as_table

__all__ = ["coverage"]

_ALLOWED = ("clip", "drop")
_WHY = "a coverage cell has no value to impute other than 'not covered', which 'clip' gives."


def coverage(records: object, *, columns: Sequence[str] | None = None, invalid: str = "clip",
             names: Sequence[str] | None = None) -> Task:
    r"""Fraction of people covered, one row per person and one column per candidate set.

    Cell ``(i, j)`` is positive when set ``j`` covers person ``i`` and 0 when it does not;
    :math:`f(S) = \frac1N \sum_i \mathbf 1[\exists j \in S: x_{ij} > 0]` (weighted coverage,
    Nemhauser, Wolsey and Fisher 1978; private greedy of Mitrovic et al. 2017), declared
    sensitivity ``1/N`` under replace-one-row. An invalid cell (negative, empty, text, NaN) is
    handled by ``invalid``: ``"clip"`` (default; the cell counts as 0, "not covered") or
    ``"drop"`` (the whole row covers nothing but still counts in ``N``). Both rules depend on
    the row alone, so the sensitivity holds for every input.
    """
    from ..functions import Coverage

    table = records if isinstance(records, RecordTable) else as_table(records, names=names)
    rule = check_rule(invalid, "coverage", _ALLOWED, _WHY)
    cols = coordinate_columns(table, columns)
    X = np.column_stack([table.column(c, "columns") for c in cols])
    with np.errstate(invalid="ignore"):
        bad = np.isnan(X) | (X < 0)
        cover = X > 0
    bad_rows = bad.any(axis=1)
    if rule == "drop":
        cover[bad_rows] = False
    f = Coverage.from_membership(cover)
    N = table.n_rows
    return Task(
        task="coverage", f=f, names=cols, items="sets",
        objective="fraction of records (people) covered by at least one chosen set",
        sensitivity_note=(f"1/N = 1/{N}: one person's coverage indicator, worth 1/N, is the "
                          "only term that changes"),
        neighbouring=(f"replace one row of {table.source} by any other row (one record = one "
                      f"row; the number of rows, {N}, is treated as public)"),
        source=table.source, record=f"one row of {table.source}",
        n_records=N, columns=cols, public=(),
        rules=("a positive cell means the set covers the person",
               "an invalid cell (negative, empty, text or NaN) "
               + ("counts as 0, not covered (clipped)" if rule == "clip" else
                  "makes its row cover nothing; the row still counts in N (dropped)")),
        params={"invalid": rule, "columns": list(cols)},
        diagnostics={"invalid_cells": int(bad.sum()), "invalid_rows": int(bad_rows.sum()),
                     "fraction_covered_by_all": fmt(float(cover.any(axis=1).mean()))},
    )
