"""The feature-selection task: choose the features that say most about a label."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from .._cells import BAD_ROW_POLICY
from ..datasets.records import RecordTable, as_table
from ..datasets.tables import discretize
from ..errors import ValidationError
from ..functions.mutual_information import MutualInformation
from ._bins import MISSING, column_rules, describe_rules, rule_params, typed_integer_columns
from ._common import Scale, Task, check_rule, coordinate_columns, fmt

#: Integer codes at or beyond this magnitude are not exact in float64: invalid.
_EXACT = 2.0 ** 53

_ALLOWED = ("impute",)
_WHY = ("the mutual information is not a sum over rows, so a row cannot be dropped without "
        "changing N (public); 'impute' gives an invalid value its own 'missing' category.")


def feature_selection(records: object, *, label: str, columns: Sequence[str] | None = None,
                      bins: int | str | Mapping[str, object] | None = None,
                      bounds: Mapping[str, tuple[float, float]] | None = None,
                      label_thresholds: Sequence[float] | None = None,
                      invalid: str = "impute", names: Sequence[str] | None = None,
                      scale: Scale | None = None) -> Task:
    r"""Empirical mutual information between chosen features and a label.

    :math:`f(S) = \hat I(X_S; Y)` (Krause and Guestrin 2005; private greedy of Mitrovic et al.
    2017), declared sensitivity :meth:`MutualInformation.replace_one_sensitivity` ``(N)`` under
    replace-one-row, valid whatever values the rows hold.

    Every feature column needs a **declared, public** way to become categories, from ``bins``:

    * an int ``B``: ``B`` equal-width bins on the column's public ``bounds`` (values outside go
      to the edge bins); for every column with bounds;
    * a sequence of increasing edges ``[e0, e1, ..., eB]``: ``B`` bins ``[e_i, e_{i+1})``
      (values below ``e1`` go to the first bin, values at or above ``e_{B-1}`` to the last);
    * ``"categorical"``: the column holds integer category codes, used as they are;
    * a dict from column name to one of the above, per column (the key ``"*"`` gives the rule
      of every column the dict does not name); ``bins`` as an int, edges or
      ``"categorical"`` is one rule for every column (an int for the columns with bounds).

    A column with no rule from ``bins`` is integer-coded only when the records declare it by
    their type (a numpy array, pandas column or pyarrow column of integer or boolean dtype);
    otherwise the task is refused, before anything is charged, with the fix. The decision
    reads only public information (``bins``, ``bounds`` and the declared types, never the
    values), so one row cannot change it. A ``label`` with public ``label_thresholds`` becomes
    the class "number of thresholds at or below the label"; otherwise each integer value is a
    class. An invalid value (empty, text, NaN, infinite, or a non-integer in a categorical
    column) gets the public category ``MISSING = -1`` (``invalid="impute"``, the only rule
    here), a rule that looks at that cell alone.
    """
    if scale is not None and not scale.in_memory_default:
        raise ValidationError(
            "feature-selection reads its records in memory, with one row per person: the "
            "mutual information is not a sum over rows, so chunked or distributed passes, "
            "contribution bounding and the add/remove relation do not apply. Use "
            "facility-location or coverage for those.")
    table = records if isinstance(records, RecordTable) else as_table(
        records, names=names, **(scale or Scale()).dialect)
    rule = check_rule(invalid, "feature-selection", _ALLOWED, _WHY)
    if not isinstance(label, str):
        raise ValidationError("feature-selection needs the label column by name: label='NAME' "
                              "(the column the features should predict).")
    y_raw = table.column(label, "label")
    cols = coordinate_columns(table, columns, exclude=(label,))
    if label in cols:
        raise ValidationError(f"The label column {label!r} is also listed in columns; a label "
                              "cannot be a feature. Remove it.")
    plan = column_rules(bins, bounds, cols, typed_integer_columns(records, names))
    public: list[str] = []
    params: dict = {"label": label, "invalid": rule, "columns": list(cols)}
    invalid_cells: dict[str, int] = {}
    with np.errstate(invalid="ignore"):
        if label_thresholds is not None:
            t = np.asarray(label_thresholds, dtype=float).ravel()
            if t.size == 0 or not np.isfinite(t).all() or np.any(np.diff(t) <= 0):
                raise ValidationError("label_thresholds must be finite and increasing; got "
                                      f"{list(t)}.")
            ok = ~np.isnan(y_raw)
            y = np.where(ok, (y_raw[:, None] >= t[None, :]).sum(axis=1), MISSING)
            public.append(f"label thresholds {', '.join(fmt(v) for v in t)} on {label!r}")
            params["label_thresholds"] = t.tolist()
        else:
            ok = _integer_codes(y_raw)
            y = _renumbered(y_raw, ok)
        invalid_cells[label] = int((~ok).sum())
        codes = np.empty((table.n_rows, len(cols)), dtype=np.int64)
        for j, name in enumerate(cols):
            x = table.column(name, "columns")
            how = plan[name]
            if isinstance(how, str):  # declared integer category codes
                ok = _integer_codes(x)
                c = _renumbered(x, ok)
            else:
                ok = ~np.isnan(x)
                if isinstance(how, tuple):  # (count, low, high): equal width on bounds
                    B, lo, hi = how
                    c = discretize(np.nan_to_num(x)[:, None], B, np.array([lo]),
                                   np.array([hi]))[:, 0]
                else:  # explicit public edges; outside values go to the edge bins
                    c = np.searchsorted(how[1:-1], np.nan_to_num(x), side="right")
                c = np.where(ok, c, MISSING)
            codes[:, j] = c
            invalid_cells[name] = int((~ok).sum())
    public.extend(describe_rules(plan))
    params.update(rule_params(plan))
    f = MutualInformation.from_records(codes, y.astype(np.int64))
    N = table.n_rows
    rules = [BAD_ROW_POLICY,
             "a feature value or label that is empty, text, NaN, infinite or (in a "
             "categorical column or an unthresholded label) not an integer code below 2^53 "
             "in magnitude gets a public category of its own ('missing', imputed), distinct "
             "from every valid code"]
    if any(not isinstance(r, str) for r in plan.values()):
        rules.append("values outside a column's public bounds or edges fall into its first or "
                     "last bin")
    return Task(
        task="feature-selection", f=f, names=cols, items="features",
        objective=(f"empirical mutual information (nats) between the chosen features and "
                   f"{label!r} (Krause and Guestrin 2005; not submodular in general, so greedy "
                   "is a heuristic here)"),
        sensitivity_note=(f"B(N)/N for N = {N} rows (MutualInformation.replace_one_sensitivity: "
                          "the largest change of the plug-in mutual information when one row, "
                          "label included, is replaced by any row)"),
        neighbouring=(f"replace one row of {table.source} by any other row (one record = one "
                      f"row; the number of rows, {N}, is treated as public)"),
        source=table.source, record=f"one row of {table.source}",
        n_records=N, columns=cols + (label,),
        public=tuple(public), rules=tuple(rules), params=params,
        diagnostics={"invalid_cells": invalid_cells},
    )


def _integer_codes(x: np.ndarray) -> np.ndarray:
    """Which cells hold an exact integer code (finite, integral, below 2^53 in magnitude)."""
    with np.errstate(invalid="ignore"):
        return ~np.isnan(x) & (np.abs(x) < _EXACT) & (x == np.round(x))


def _renumbered(x: np.ndarray, ok: np.ndarray) -> np.ndarray:
    """Valid codes renumbered ``0, 1, ...`` by value, every other cell :data:`MISSING`.

    A relabelling of the classes leaves the mutual information unchanged, and it keeps the
    missing category apart from any valid code (a label of -1 included).
    """
    out = np.full(x.shape[0], MISSING, dtype=np.int64)
    out[ok] = np.unique(x[ok], return_inverse=True)[1]
    return out
