"""The ``from_chunks`` constructors of the families (facility location, coverage, feature
based): each turns chunks of records into a :class:`RecordObjective` with its kernel and its
data-independent cleaning rule."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..._validation import check_finite, check_real
from ...errors import ValidationError
from .build import build_record_objective
from .kernels import ConcaveKernel, CoverageKernel, DistanceKernel, GaussianKernel, PublicTable
from .objective import RecordObjective


def _finite_positive(v: object, name: str, caller: str) -> float:
    return check_real(v, name, low=0.0, low_open=True, high=float(np.finfo(np.float64).max),
                      caller=caller)


def facility_location_from_chunks(chunks: object, candidates: object,
                                  similarity: str = "gaussian", *,
                                  bandwidth: float | None = None, radius: float | None = None,
                                  bounds: tuple[object, object] | None = None,
                                  invalid: str = "drop", user_id: object = None,
                                  max_rows_per_user: int | None = None,
                                  relation: str | None = None, chunk_rows: int | None = None,
                                  n_jobs: int = 1, scheduler: object = None) -> RecordObjective:
    """See :meth:`dpsubmod.functions.FacilityLocation.from_chunks`."""
    caller = "FacilityLocation.from_chunks"
    C = check_finite(candidates, "candidates", caller=caller, ndim=2, dtype=np.float64)
    if C.shape[0] == 0:
        raise ValidationError(f"{caller} needs at least one candidate.")
    if similarity == "gaussian":
        if radius is not None:
            raise ValidationError(f"The 'radius' parameter of {caller} has no effect with "
                                  "similarity='gaussian'; remove it.")
        if bandwidth is None:
            raise ValidationError(f"{caller} with similarity='gaussian' needs a public "
                                  "'bandwidth'.")
        kernel = GaussianKernel(C, _finite_positive(bandwidth, "bandwidth", caller))
    elif similarity == "negative_distance":
        if bandwidth is not None:
            raise ValidationError(f"The 'bandwidth' parameter of {caller} has no effect "
                                  "with similarity='negative_distance'; remove it.")
        if radius is None:
            raise ValidationError(f"{caller} with similarity='negative_distance' needs a "
                                  "public 'radius'.")
        kernel = DistanceKernel(C, _finite_positive(radius, "radius", caller))
    else:
        raise ValidationError(f"The 'similarity' parameter of {caller} must be 'gaussian' "
                              f"or 'negative_distance'; got {similarity!r}.")
    d = C.shape[1]
    lo = hi = None
    if bounds is not None:
        lo, hi = (np.asarray(b, dtype=np.float64).reshape(-1) for b in bounds)
        if lo.shape != (d,) or hi.shape != (d,) or np.isnan(lo).any() or np.isnan(hi).any() \
                or not (lo < hi).all():
            raise ValidationError(f"The 'bounds' parameter of {caller} must be (low, high) "
                                  f"with {d} values each (+-inf for no bound) and low < high.")
    if invalid not in ("drop", "impute"):
        raise ValidationError(f"The 'invalid' parameter of {caller} must be 'drop' or "
                              f"'impute'; got {invalid!r}.")
    if invalid == "impute" and (lo is None or not (np.isfinite(lo).all()
                                                   and np.isfinite(hi).all())):
        raise ValidationError(f"invalid='impute' of {caller} puts an invalid coordinate at "
                              "the centre of the public bounds; pass finite bounds= for every "
                              "coordinate.")

    def clean(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        X = np.array(X, dtype=np.float64)
        X[~np.isfinite(X)] = np.nan
        if lo is not None:
            np.clip(X, lo, hi, out=X)
        bad = np.isnan(X)
        if invalid == "impute":
            X = np.where(bad, 0.5 * (lo + hi), X)
            valid = np.ones(X.shape[0], dtype=bool)
        else:
            valid = ~bad.any(axis=1)
        return X.astype(np.float32), valid

    return build_record_objective(kernel, chunks, width=d, clean=clean, user_id=user_id,
                                  max_rows_per_user=max_rows_per_user, relation=relation,
                                  chunk_rows=chunk_rows, n_jobs=n_jobs,
                                  scheduler=scheduler)



def coverage_from_chunks(chunks: object, n_sets: int, *, invalid: str = "clip",
                         user_id: object = None, max_rows_per_user: int | None = None,
                         relation: str | None = None, chunk_rows: int | None = None,
                         n_jobs: int = 1, scheduler: object = None) -> RecordObjective:
    """See :meth:`dpsubmod.functions.Coverage.from_chunks`."""
    caller = "Coverage.from_chunks"
    if isinstance(n_sets, bool) or not isinstance(n_sets, (int, np.integer)) or n_sets < 1:
        raise ValidationError(f"The 'n_sets' parameter of {caller} must be an integer >= 1; "
                              f"got {n_sets!r}.")
    if invalid not in ("clip", "drop"):
        raise ValidationError(f"The 'invalid' parameter of {caller} must be 'clip' or 'drop'; "
                              f"got {invalid!r}.")

    def clean(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        with np.errstate(invalid="ignore"):
            bad = ~np.isfinite(X) | (X < 0)
            cover = (X > 0) & ~bad
        valid = ~bad.any(axis=1) if invalid == "drop" else np.ones(X.shape[0], dtype=bool)
        return cover.astype(np.uint8), valid

    return build_record_objective(CoverageKernel(int(n_sets)), chunks, width=int(n_sets),
                                  clean=clean, user_id=user_id,
                                  max_rows_per_user=max_rows_per_user, relation=relation,
                                  chunk_rows=chunk_rows, n_jobs=n_jobs,
                                  scheduler=scheduler)


#: Points of the public grid on which a user's concave function is read (2**16 intervals).
GRID_POINTS = 2 ** 16 + 1


def feature_based_from_chunks(chunks: object, n_items: int, g: Callable, *,
                              value_max: float = 1.0, cap: float | None = None,
                              trusted: bool = False, user_id: object = None,
                              max_rows_per_user: int | None = None,
                              relation: str | None = None, chunk_rows: int | None = None,
                              n_jobs: int = 1, scheduler: object = None) -> RecordObjective:
    """See :meth:`dpsubmod.functions.FeatureBased.from_chunks`.

    ``trusted`` marks ``g`` as one of the library's elementwise built-ins; any other ``g`` is
    read on the public grid (:func:`concave_table`) and never called on a record.
    """
    caller = "FeatureBased.from_chunks"
    if isinstance(n_items, bool) or not isinstance(n_items, (int, np.integer)) or n_items < 1:
        raise ValidationError(f"The 'n_items' parameter of {caller} must be an integer >= 1; "
                              f"got {n_items!r}.")
    vmax = _finite_positive(value_max, "value_max", caller)
    if not trusted:
        g = concave_table(g, float(n_items) * vmax, caller)
    top = float(np.asarray(g(np.array([n_items * vmax])), dtype=np.float64)[0])
    c = top if cap is None else _finite_positive(cap, "cap", caller)
    if not (np.isfinite(c) and c > 0):
        raise ValidationError(f"{caller}: g(n_items * value_max) = {top!r}; pass a finite "
                              "cap > 0.")

    def clean(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        X = np.where(np.isfinite(X), X, 0.0)
        return np.clip(X, 0.0, vmax).astype(np.float32), np.ones(X.shape[0], dtype=bool)

    return build_record_objective(ConcaveKernel(int(n_items), g, c, vmax), chunks,
                                  width=int(n_items), clean=clean, user_id=user_id,
                                  max_rows_per_user=max_rows_per_user, relation=relation,
                                  chunk_rows=chunk_rows, n_jobs=n_jobs,
                                  scheduler=scheduler)


def concave_table(g: Callable, top: float, caller: str) -> PublicTable:
    """``g`` read on ``GRID_POINTS`` public points of ``[0, top]``, checked, as a table.

    Refused (naming 'concave') unless the values are finite, ``g(0) = 0`` and nondecreasing up
    to rounding: the terms' range ``[0, cap]`` and the calibrations that assume monotone
    records rely on it. Rounding-level dips are then levelled, so the table is exactly
    nondecreasing. Concavity is not checked (it matters for the approximation, not privacy).
    """
    grid = np.linspace(0.0, top, GRID_POINTS)
    try:
        with np.errstate(all="ignore"):
            table = np.asarray(g(grid.copy()), dtype=np.float64)
    except (TypeError, ValueError, ArithmeticError) as exc:
        raise ValidationError(f"The 'concave' callable of {caller} failed on the public grid "
                              f"[0, {top:g}]: {exc}.") from None
    if table.shape != grid.shape or not np.isfinite(table).all():
        raise ValidationError(
            f"The 'concave' callable of {caller} must map an array to finite values of the "
            f"same shape; on {GRID_POINTS} public points of [0, n_items * value_max] = "
            f"[0, {top:g}] it did not.")
    if table[0] != 0.0:
        raise ValidationError(f"The 'concave' callable of {caller} must satisfy g(0) = 0; got "
                              f"{table[0]!r}.")
    tol = 1e-9 * max(1.0, float(np.abs(table).max()))
    drops = np.flatnonzero(np.diff(table) < -tol)
    if drops.size:
        i = int(drops[0])
        raise ValidationError(
            f"The 'concave' callable of {caller} must be nondecreasing on [0, n_items * "
            f"value_max] = [0, {top:g}]; it decreases from g({grid[i]:.6g}) = {table[i]:.6g} "
            f"to g({grid[i + 1]:.6g}) = {table[i + 1]:.6g}. The sensitivity cap / N and the "
            "monotone-records calibrations rely on it: use a nondecreasing g (for example "
            "min(g(c), its maximum)) or a smaller value_max.")
    return PublicTable(grid, np.maximum.accumulate(table))
