"""The facility-location task: choose public locations that serve the people in the records."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .._lazy import lazy_module
from ..datasets.grids import grid_candidates
from ..datasets.records import RecordTable, as_table, public_column, read_public_csv
from ..errors import ParameterTypeError, ValidationError
from ..functions.facility_location import FacilityLocation
from ._common import (
    Scale,
    Task,
    check_bounds,
    check_rule,
    count_outside,
    fmt,
    pass_counts,
    records_table,
    scale_rules,
    scan,
    statement,
    unreadable,
)

spatial = lazy_module("scipy.spatial")

#: Up to this many candidates, in at most 3 dimensions, the default bandwidth's
#: nearest-neighbour distances are found pair by pair in numpy (about a millisecond for a
#: 20 x 20 grid) instead of by a k-d tree, whose import alone (scipy.spatial) costs twice as
#: much CPU as importing numpy and pyarrow. Both add the squared coordinate differences in
#: order and take the root, so they give the same floats (tests/tasks check it); in 4 or more
#: dimensions the k-d tree adds them in another order.
_PAIRWISE_MAX = 4096

_ALLOWED = ("drop", "impute")
_WHY = ("a coordinate has no nearest valid value to clip to; 'drop' keeps the row counted and "
        "lets it contribute nothing, 'impute' puts it at the centre of the public bounds.")


def _records(records: object, names: Sequence[str] | None, scale: Scale) -> RecordTable:
    return records_table(records, names, scale)


def _point_names(C: np.ndarray) -> list[str]:
    return ["(" + ", ".join(fmt(v) for v in row) + ")" for row in C]


def _candidate_table(candidates: object, text: list[str]) -> RecordTable:
    if isinstance(candidates, (str, os.PathLike)):
        return read_public_csv(candidates, "candidates file", text_columns=text)
    return as_table(candidates, what="candidates", text_columns=text)


def _candidates(table: RecordTable, columns: Sequence[str] | None, candidates: object,
                candidate_names: str | None, partition_column: str | None
                ) -> tuple[tuple[str, ...], np.ndarray, list[str], list[str] | None, str]:
    text = [c for c in (candidate_names, partition_column) if c is not None]
    ctab = _candidate_table(candidates, text)
    if not ctab.named or not table.named:
        if ctab.named or table.named:
            who = "records" if not table.named else "candidates"
            raise ValidationError(
                f"The {who} have no column names, so candidates cannot be matched to record "
                "columns by name. Give both names (a CSV header, DataFrame columns or names=)."
            )
        cols = tuple(columns) if columns is not None else tuple(table.numeric)
        if len(ctab.numeric) != len(cols):
            raise ValidationError(f"The candidates have {len(ctab.numeric)} columns but the "
                                  f"records {len(cols)}; give both the same coordinates.")
        cmap = dict(zip(cols, ctab.numeric))
    else:
        if columns is not None:
            cols = tuple(columns)
        else:
            cols = tuple(c for c in table.names if c in table.numeric and c in ctab.names
                         and c not in text)
        missing = [c for c in cols if c not in ctab.names]
        if not cols or missing:
            raise ValidationError(
                f"The candidates ({ctab.source}; columns {', '.join(ctab.names)}) must have a "
                "column for each record coordinate, with the same name (records: "
                f"{', '.join(table.names)}"
                + (f"; missing {', '.join(missing)}" if missing else "") + "). Columns are "
                "matched by name, never by position: rename the header or pass columns=."
            )
        cmap = {c: c for c in cols}
    C = np.column_stack([public_column(ctab, cmap[c], "candidates") for c in cols])
    names = (list(ctab.text_column(candidate_names, "candidate_names"))
             if candidate_names is not None else _point_names(C))
    groups = (list(ctab.text_column(partition_column, "partition_column"))
              if partition_column is not None else None)
    return cols, C, names, groups, ctab.source


def _grid(grid: object, cols: tuple[str, ...], bounds: dict[str, tuple[float, float]]
          ) -> tuple[np.ndarray, str]:
    try:
        rows, ncols = (int(v) for v in grid)
    except (TypeError, ValueError):
        raise ValidationError(f"The 'grid' parameter must be (rows, cols); got {grid!r}.") \
            from None
    if rows < 1 or ncols < 1:
        raise ValidationError(f"The 'grid' parameter needs at least one row and one column; "
                              f"got {grid!r}.")
    if len(cols) != 2:
        raise ValidationError(
            f"A grid places candidates in the plane: it needs exactly two coordinate columns; "
            f"got {len(cols)} ({', '.join(cols)}). Pass columns=[x, y] or candidates.")
    missing = [c for c in cols if c not in bounds]
    if missing:
        raise ValidationError(
            f"A grid needs public bounds for each of its columns, by name: missing "
            f"{', '.join(missing)} (for example bounds={{'{cols[0]}': (low, high), "
            f"'{cols[1]}': (low, high)}}, fixed from the map, never from the records).")
    (x0, x1), (y0, y1) = bounds[cols[0]], bounds[cols[1]]
    C = grid_candidates(rows, ncols, (x0, x1, y0, y1))
    desc = (f"a {rows}x{ncols} grid of cell centres: {ncols} along {cols[0]} in "
            f"[{fmt(x0)}, {fmt(x1)}], {rows} along {cols[1]} in [{fmt(y0)}, {fmt(y1)}]")
    return C, desc


def _nearest_distances(C: np.ndarray) -> np.ndarray:
    """The distance from each candidate to its nearest other candidate (0 for a repeat)."""
    C = np.asarray(C, dtype=np.float64)  # as the k-d tree takes it
    n, dim = C.shape
    if n > _PAIRWISE_MAX or dim > 3:
        return spatial.cKDTree(C).query(C, k=2)[0][:, 1]
    out = np.empty(n)
    step = max(1, (1 << 16) // n)
    for s in range(0, n, step):
        block = C[s:s + step]
        d2 = np.zeros((block.shape[0], n))
        for j in range(dim):
            diff = block[:, j, None] - C[None, :, j]
            d2 += diff * diff
        rows = np.arange(block.shape[0])
        d2[rows, s + rows] = np.inf  # a candidate is not its own neighbour
        out[s:s + step] = d2.min(axis=1)
    return np.sqrt(out)


def _median(x: np.ndarray) -> float:
    """``np.median`` of a non-empty 1-d float array, the same float.

    The middle one or two order statistics, averaged by ``np.mean`` as ``np.median`` does; NaN
    when ``x`` holds one. ``np.median`` itself imports ``numpy.ma`` for its NaN check, an
    import that costs far more CPU than this median of the candidates' spacings.
    """
    if np.isnan(x).any():
        return float("nan")
    lo, hi = (x.size - 1) // 2, x.size // 2
    return float(np.mean(np.partition(x, (lo, hi))[lo:hi + 1]))


def _spacing(C: np.ndarray) -> float:
    if C.shape[0] < 2:
        raise ValidationError("Pass bandwidth=: the default (the median distance between "
                              "neighbouring candidates) needs at least two candidates.")
    h = _median(_nearest_distances(C))
    if not h > 0:
        raise ValidationError("Pass bandwidth=: the candidates coincide, so the default "
                              "(median distance between neighbouring candidates) is 0.")
    return h


def facility_location(records: object, *, columns: Sequence[str] | None = None,
                      candidates: object = None, candidate_names: str | None = None,
                      partition_column: str | None = None, grid: object = None,
                      bounds: Mapping[str, tuple[float, float]] | None = None,
                      similarity: str = "gaussian", bandwidth: float | None = None,
                      radius: float | None = None, invalid: str = "drop",
                      names: Sequence[str] | None = None, scale: Scale | None = None) -> Task:
    r"""Facility location over private records and public candidate locations.

    :math:`f(S) = \frac1N \sum_i \max_{j \in S} s(x_i, c_j)` (Mitrovic, Bun, Krause and Karbasi
    2017, private facility location), with a Gaussian or negative-distance similarity in
    ``[0, s_max]``; see :meth:`dpsubmod.functions.FacilityLocation.from_records`.

    Public inputs are matched to record columns by name: the candidates need a column for each
    coordinate with the record column's name, and ``bounds`` maps column names to
    ``(low, high)``. Records outside the bounds are clipped to them; a row with an invalid
    coordinate (empty, text, NaN, infinite) is handled by ``invalid``: ``"drop"`` (default;
    the row still counts in ``N`` and contributes 0) or ``"impute"`` (the value becomes the
    centre of the column's public bounds, which are then required for every column). Both are
    data-independent, so ``sensitivity = s_max / N`` holds for all ``N`` rows.

    The objective is a :class:`~dpsubmod.functions.records.RecordObjective` (O(N) state,
    float32 fixed-point kernels, no N x n matrix); ``scale`` reads the file in chunks, runs on
    a Dask cluster, or bounds each person's rows (see :class:`~dpsubmod.tasks.Scale`).
    """
    scale = scale or Scale()
    table = _records(records, names, scale)
    if isinstance(similarity, str):
        similarity = similarity.replace("-", "_")
    if similarity not in ("gaussian", "negative_distance"):
        raise ValidationError(f"The 'similarity' parameter must be 'gaussian' or "
                              f"'negative-distance'; got {similarity!r}.")
    rule = check_rule(invalid, "facility-location", _ALLOWED, _WHY)
    public: list[str] = []
    groups = None
    if (candidates is None) == (grid is None):
        raise ValidationError(
            "facility-location needs public candidate locations: pass candidates= (a table "
            "with a header naming the record columns) or grid=(rows, cols) with bounds=, not "
            "both. They are never taken from the private records.")
    if candidates is not None:
        cols, C, item_names, groups, src = _candidates(table, columns, candidates,
                                                        candidate_names, partition_column)
        bnd = check_bounds(bounds, cols)
        public.append(f"{C.shape[0]} candidate locations from {src} (matched to the record "
                      f"columns {', '.join(cols)} by name)")
        if groups is not None:
            public.append(f"groups from column {partition_column!r} of {src}")
    else:
        if partition_column is not None or candidate_names is not None:
            raise ValidationError("candidate_names and partition_column name columns of a "
                                  "candidates table; a grid has none.")
        if columns is None and not bounds:
            raise ValidationError(
                "A grid needs public bounds for its two coordinate columns, by name: "
                "bounds={'x': (low, high), 'y': (low, high)} with the record columns' names, "
                "fixed from the map, never from the records.")
        if columns is not None:
            cols = tuple(columns)
        elif isinstance(bounds, Mapping):
            # the grid's axes follow the public bounds' order, not the records' column order
            cols = tuple(str(c) for c in bounds)
            for c in cols:
                table.column(c, "bounds")
        else:
            cols = ()
        bnd = check_bounds(bounds, cols) if cols else check_bounds(bounds, table.names)
        C, desc = _grid(grid, cols, bnd)
        item_names = _point_names(C)
        public.append(desc)
    if rule == "impute":
        missing = [c for c in cols if c not in bnd]
        if missing:
            raise ValidationError(
                f"invalid='impute' puts an invalid coordinate at the centre of its column's "
                f"public bounds; give bounds for {', '.join(missing)} or use invalid='drop'.")
    if bnd:
        public.append("public bounds " + ", ".join(
            f"{c} in [{fmt(lo)}, {fmt(hi)}]" for c, (lo, hi) in bnd.items()))
    kw, desc, s_max = _similarity(similarity, C, bandwidth, radius, public)
    lo = np.array([bnd[c][0] if c in bnd else -np.inf for c in cols])
    hi = np.array([bnd[c][1] if c in bnd else np.inf for c in cols])
    diagnostics: dict[str, Any] = {}
    if scale.scans(records):
        data: Any = scan(records, cols, names, scale, watch=bnd)
        ids = True if scale.user_column is not None else None
    else:
        data = np.column_stack([table.column(c, "columns") for c in cols])
        diagnostics = {"rows": table.n_rows, "unreadable_rows": unreadable(table),
                       "invalid_rows": int(np.isnan(data).any(axis=1).sum()),
                       "outside_bounds": count_outside(data, cols, bnd)}
        ids = (None if scale.user_column is None else
               table.text_column(scale.user_column, "user_column"))
        if ids is not None:
            diagnostics["rows_without_user_id"] = int((np.char.str_len(ids) == 0).sum())
    f = FacilityLocation.from_chunks(
        data, C, similarity, bounds=(lo, hi), invalid=rule, user_id=ids,
        max_rows_per_user=scale.max_rows_per_user, relation=scale.relation,
        n_jobs=scale.n_jobs, scheduler=scale.scheduler, **kw)
    pass_counts(data, diagnostics)
    neighbouring, note, N = statement(f, table.source, s_max, scale.max_rows_per_user)
    rules = []
    if bnd:
        rules.append("record coordinates outside the public bounds are clipped to them")
    rules += scale_rules(scale)
    rules.append("a row with an invalid coordinate (empty, text, NaN or infinite) "
                 + ("still counts in N and contributes 0 (dropped)" if rule == "drop" else
                    "gets the centre of the public bounds for that coordinate (imputed)"))
    return Task(
        task="facility-location", f=f, names=tuple(item_names), items="candidate locations",
        objective=desc,
        sensitivity_note=note, neighbouring=neighbouring,
        source=table.source, record=f"one row of {table.source}",
        n_records=N, columns=cols, public=tuple(public),
        rules=tuple(rules),
        params={**kw, "similarity": similarity.replace("_", "-"), "invalid": rule,
                "candidate_coordinates": C.tolist(), "columns": list(cols),
                "bounds": {c: list(b) for c, b in bnd.items()}},
        groups=None if groups is None else tuple(groups), diagnostics=diagnostics,
    )


def _similarity(similarity: str, C: np.ndarray, bandwidth: object, radius: object,
                public: list[str]) -> tuple[dict[str, float], str, float]:
    if similarity == "gaussian":
        if radius is not None:
            raise ValidationError("radius goes with similarity='negative-distance'; use "
                                  "bandwidth for the Gaussian similarity.")
        if bandwidth is None:
            h = _spacing(C)
            public.append(f"bandwidth {fmt(h)} (median distance between neighbouring "
                          "candidates; computed from the public candidates only)")
        else:
            h = _positive(bandwidth, "bandwidth")
            public.append(f"bandwidth {fmt(h)}")
        return ({"bandwidth": h}, "average over records of the best Gaussian similarity "
                f"exp(-d^2 / (2 h^2)) to a chosen location, h = {fmt(h)}", 1.0)
    if bandwidth is not None:
        raise ValidationError("bandwidth goes with similarity='gaussian'; use radius.")
    if radius is None:
        span = C.max(axis=0) - C.min(axis=0)
        rad = float(np.sqrt((span ** 2).sum()))
        if not rad > 0:
            raise ValidationError("Pass radius=: the default (the diameter of the candidates' "
                                  "bounding box) is 0 for a single candidate location.")
        public.append(f"radius {fmt(rad)} (diameter of the candidates' bounding box)")
    else:
        rad = _positive(radius, "radius")
        public.append(f"radius {fmt(rad)}")
    return ({"radius": rad}, "average over records of the best max(0, D - distance) to a "
            f"chosen location, D = {fmt(rad)}", rad)


def _positive(v: object, name: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
        raise ParameterTypeError(f"The '{name}' parameter must be a positive number; got "
                                 f"{v!r}.")
    x = float(v)
    if not (np.isfinite(x) and x > 0):
        raise ValidationError(f"The '{name}' parameter must be a finite number > 0; got "
                              f"{v!r}.")
    return x
