"""The feature-selection task: choose the features that say most about a label."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from .._cells import BAD_ROW_POLICY
from ..datasets.records import RecordTable, as_table
from ..errors import ValidationError
from ._common import Scale, Task, check_bounds, check_rule, coordinate_columns, fmt

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
    public.extend(_describe(plan))
    params.update(_params(plan))
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


#: The rule that declares a column's values integer category codes.
CATEGORICAL = "categorical"
#: The key of a ``bins`` mapping whose rule applies to every column the mapping does not name.
OTHERS = "*"

_FIX = ("pass bins= with one rule per column, fixed without looking at the records: an int "
        "with public bounds= (equal-width bins), explicit edges (e.g. bins={'age': [18, 30, "
        "50, 90]}), or 'categorical' for a column of integer category codes (e.g. "
        "bins={'sex': 'categorical'}, or bins='categorical' for all); in dpsubmod select: "
        "--bins NAME=B with --bounds NAME=LOW,HIGH, --bins NAME=E0,E1,...,EB or --bins "
        "NAME=categorical, and RULE alone for every other column")


def column_rules(bins: object, bounds: object, cols: Sequence[str],
                 typed: Sequence[str] = ()) -> dict[str, object]:
    """Each feature column's public discretization: ``(count, low, high)``, edges or categorical.

    ``typed`` are the columns whose declared type is integer or boolean (integer codes unless
    ``bins`` says otherwise). A column left without a rule is refused with the fix; so is a
    bound that would have no effect. Only public inputs are read.
    """
    bnd = check_bounds(bounds, cols) if bounds else {}
    per: Mapping[str, object]
    if isinstance(bins, Mapping):
        unknown = [str(k) for k in bins if k not in cols and k != OTHERS]
        if unknown:
            raise ValidationError(
                f"The 'bins' parameter names {', '.join(map(repr, unknown))}, not among the "
                f"feature columns ({', '.join(cols)}). Fix the name.")
        per = {str(k): v for k, v in bins.items() if k != OTHERS}
        default = bins.get(OTHERS)
    else:
        per, default = {}, bins
    plan: dict[str, object] = {}
    missing = []
    for name in cols:
        if name in per:
            rule = per[name]
        elif _is_count(default) and name not in bnd:
            # a count bins the columns with public bounds; the others need a rule of their own
            rule = CATEGORICAL if name in typed else None
        elif default is not None:
            rule = default
        else:
            rule = CATEGORICAL if name in typed else None
        if rule is None:
            missing.append(name)
        else:
            plan[name] = _one_rule(name, rule, bnd)
    if missing:
        cols_txt = ", ".join(map(repr, missing[:8])) + (
            f" and {len(missing) - 8} more" if len(missing) > 8 else "")
        hint = (f" (bins={int(default)} bins the columns with public bounds only)"  # type: ignore
                if _is_count(default) else "")
        raise ValidationError(
            f"feature-selection: column(s) {cols_txt} have no declared bins{hint}. Their values "
            "would be read as integer category codes, and every non-integer value would become "
            f"'missing', so continuous columns would be lost. {_FIX[0].upper()}{_FIX[1:]}. "
            "Nothing was charged.")
    extra = [n for n in bnd if not isinstance(plan.get(n), tuple)]
    if extra:
        raise ValidationError(
            f"The 'bounds' of {', '.join(map(repr, extra))} would have no effect: bounds set "
            "the range of an int number of bins (bins=4 or bins={name: 4}). Remove them or "
            "bin those columns.")
    return plan


def _is_count(rule: object) -> bool:
    return isinstance(rule, (int, np.integer)) and not isinstance(rule, bool)


def _one_rule(name: str, rule: object, bnd: Mapping[str, tuple[float, float]]) -> object:
    if isinstance(rule, str):
        if rule != CATEGORICAL:
            raise ValidationError(
                f"The 'bins' rule of column {name!r} must be an int, a sequence of edges or "
                f"'categorical'; got {rule!r}.")
        return CATEGORICAL
    if _is_count(rule):
        if rule < 1:  # type: ignore[operator]
            raise ValidationError(
                f"The 'bins' parameter must be an integer >= 1; got {rule!r} for {name!r}.")
        if name not in bnd:
            raise ValidationError(
                f"bins={int(rule)} for column {name!r} needs its public range: pass bounds="
                f"{{{name!r}: (low, high)}}, fixed without looking at the records, or give "
                "explicit edges.")
        return (int(rule), *bnd[name])
    try:
        edges = np.asarray(rule, dtype=np.float64)
    except (TypeError, ValueError):
        edges = np.zeros(0)
    if (isinstance(rule, bool) or edges.ndim != 1 or edges.size < 2
            or not np.isfinite(edges).all() or np.any(np.diff(edges) <= 0)):
        raise ValidationError(
            f"The 'bins' rule of column {name!r} must be an int >= 1, at least two finite "
            f"increasing edges, or 'categorical'; got {rule!r}.")
    return edges


def _describe(plan: Mapping[str, object]) -> list[str]:
    out = []
    counted = {n: r for n, r in plan.items() if isinstance(r, tuple)}
    if counted:
        out.append("equal-width bins on public bounds for " + ", ".join(
            f"{n} ({r[0]} bins in [{fmt(r[1])}, {fmt(r[2])}])" for n, r in counted.items()))
    edged = {n: r for n, r in plan.items() if isinstance(r, np.ndarray)}
    if edged:
        out.append("public bin edges for " + ", ".join(
            f"{n} at {', '.join(fmt(v) for v in e)}" for n, e in edged.items()))
    cat = [n for n, r in plan.items() if isinstance(r, str)]
    if cat:
        out.append("integer category codes declared for " + ", ".join(cat))
    return out


def _params(plan: Mapping[str, object]) -> dict[str, object]:
    bins: dict[str, object] = {}
    bounds: dict[str, list[float]] = {}
    for n, r in plan.items():
        if isinstance(r, tuple):
            bins[n] = r[0]
            bounds[n] = [r[1], r[2]]
        elif isinstance(r, np.ndarray):
            bins[n] = r.tolist()
        else:
            bins[n] = CATEGORICAL
    return {"bins": bins, **({"bounds": bounds} if bounds else {})}


def binned_columns(bins: object, bounds: object, cols: Sequence[str]) -> set[str]:
    """The columns ``bins`` cuts into bins (a count with bounds, or edges), for the data check."""
    per = ({c: bins.get(c, bins.get(OTHERS)) for c in cols} if isinstance(bins, Mapping)
           else {c: bins for c in cols})
    bnd = bounds if isinstance(bounds, Mapping) else {}
    return {str(c) for c, r in per.items()
            if r is not None and not isinstance(r, str) and (not _is_count(r) or c in bnd)}


def typed_integer_columns(records: object, names: Sequence[str] | None = None) -> list[str]:
    """Columns whose declared type (not their values) is integer or boolean.

    A numpy array, a pandas column or a pyarrow column carries its type whatever its rows
    hold, so the neighbouring data set (one row replaced by another of the same type) has the
    same answer. A list, a CSV or a Parquet file declares nothing here. ``names``, when given,
    name the columns by position.
    """
    def integral(dtype: object) -> bool:
        return getattr(dtype, "kind", "") in ("b", "i", "u")

    if isinstance(records, np.ndarray):
        if records.ndim != 2 or not integral(records.dtype):
            return []
        return (list(map(str, names)) if names is not None
                else [f"col{j + 1}" for j in range(records.shape[1])])
    if hasattr(records, "dtypes") and hasattr(records, "columns"):  # a DataFrame
        cols = records.columns if names is None else names  # names: by position
        return [str(c) for c, t in zip(cols, records.dtypes) if integral(t)]
    if hasattr(records, "schema") and hasattr(records, "column_names"):  # a pyarrow Table
        return [f.name for f in records.schema
                if str(f.type).startswith(("int", "uint", "bool"))]
    if isinstance(records, Mapping):
        return [str(k) for k, v in records.items()
                if integral(getattr(v, "dtype", None))]
    return []
