"""How feature-selection columns become categories: public rules only, no mutual information.

Kept apart from :mod:`dpsubmod.tasks.feature_selection` (which imports the mutual-information
family, and with it scipy.special) because the data check of every task reads these rules.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ..errors import ValidationError
from ._common import check_bounds, fmt

#: The public category code of an invalid value (and of an invalid label). Valid integer codes
#: are renumbered ``0, 1, ...`` in increasing order first (which leaves the mutual information
#: unchanged), so a valid code of -1 stays a class of its own.
MISSING = -1

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


def describe_rules(plan: Mapping[str, object]) -> list[str]:
    """The plan of :func:`column_rules` in words, for the privacy statement."""
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


def rule_params(plan: Mapping[str, object]) -> dict[str, object]:
    """The plan of :func:`column_rules` as the release's ``bins`` (and ``bounds``) parameters."""
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
