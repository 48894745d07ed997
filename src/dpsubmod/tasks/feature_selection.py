"""The feature-selection task: choose the features that say most about a label."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from .._cells import BAD_ROW_POLICY
from ..errors import ValidationError
from ._common import Scale, Task, check_bounds, check_rule, coordinate_columns, fmt
from ._table import RecordTable, as_table

__all__ = ["feature_selection", "MISSING"]

#: The public category code of an invalid value (and of an invalid label). Valid integer codes
#: are renumbered ``0, 1, ...`` in increasing order first (which leaves the mutual information
#: unchanged), so a valid code of -1 stays a class of its own.
MISSING = -1
#: Integer codes at or beyond this magnitude are not exact in float64: invalid.
_EXACT = 2.0 ** 53

_ALLOWED = ("impute",)
_WHY = ("the mutual information is not a sum over rows, so a row cannot be dropped without "
        "changing N (public); 'impute' gives an invalid value its own 'missing' category.")


def feature_selection(records: object, *, label: str, columns: Sequence[str] | None = None,
                      bins: int | None = None,
                      bounds: Mapping[str, tuple[float, float]] | None = None,
                      label_thresholds: Sequence[float] | None = None,
                      invalid: str = "impute", names: Sequence[str] | None = None,
                      scale: Scale | None = None) -> Task:
    r"""Empirical mutual information between chosen features and a label.

    :math:`f(S) = \hat I(X_S; Y)` (Krause and Guestrin 2005; private greedy of Mitrovic et al.
    2017), declared sensitivity :meth:`MutualInformation.replace_one_sensitivity` ``(N)`` under
    replace-one-row, valid whatever values the rows hold. Columns with public ``bounds`` are cut
    into ``bins`` equal-width bins (values outside go to the edge bins); other columns must hold
    integer category codes. A ``label`` with public ``label_thresholds`` becomes the class
    "number of thresholds at or below the label". An invalid value (empty, text, NaN, infinite,
    or a non-integer code) gets the public category ``MISSING = -1`` (``invalid="impute"``, the
    only rule here), a rule that looks at that cell alone.
    """
    from ..datasets import discretize
    from ..functions import MutualInformation

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
    if bins is None and bounds:
        raise ValidationError("bounds set the range of the bins; pass bins= too.")
    if bins is not None and (isinstance(bins, bool) or not isinstance(bins, (int, np.integer))
                             or bins < 1):
        raise ValidationError(f"The 'bins' parameter must be an integer >= 1; got {bins!r}.")
    bnd = check_bounds(bounds, cols) if bins is not None else {}
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
            if name in bnd:
                lo, hi = bnd[name]
                ok = ~np.isnan(x)
                c = discretize(np.nan_to_num(x)[:, None], bins, np.array([lo]),
                               np.array([hi]))[:, 0]
                c = np.where(ok, c, MISSING)
            else:
                ok = _integer_codes(x)
                c = _renumbered(x, ok)
            codes[:, j] = c
            invalid_cells[name] = int((~ok).sum())
    if bnd:
        public.append(f"{bins} equal-width bins on public bounds for "
                      + ", ".join(f"{n} in [{fmt(lo)}, {fmt(hi)}]" for n, (lo, hi)
                                  in bnd.items()))
        params.update(bins=bins, bounds={n: list(b) for n, b in bnd.items()})
    f = MutualInformation.from_records(codes, y.astype(np.int64))
    N = table.n_rows
    rules = [BAD_ROW_POLICY,
             "a feature value or label that is empty, text, NaN, infinite or (without bins) "
             "not an integer code below 2^53 in magnitude gets a public category of its own "
             "('missing', imputed), distinct from every valid code"]
    if bnd:
        rules.append("values outside a column's public bounds fall into its first or last bin")
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
