"""Input conversion shared by the set-function families (private).

The public validators live in :mod:`dpsubmod._validation`; these helpers only combine them for
the matrix-shaped inputs the families take (dense numpy or scipy.sparse, float32 kept as given).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from .._rng import RNGLike, as_generator
from .._validation import check_finite, check_int, check_sparse_finite, is_sparse
from ..errors import ValidationError

if TYPE_CHECKING:
    import scipy.sparse

#: Number of matrix entries a chunked dense computation handles at once (512 KB of float64).
#: Blocks this small stay in cache through gather, convert, clip and mat-vec, and reuse freed
#: memory instead of page-faulting fresh allocations; on a 5000 x 5000 facility-location greedy
#: this was 4x faster than 32 MB blocks.
BLOCK_ENTRIES = 1 << 16


def as_matrix(a: object, name: str, caller: str, *, nonnegative: bool = True,
              allow_sparse: bool = True) -> np.ndarray | scipy.sparse.csr_array:
    """Validate a 2-d numeric matrix; dense float32/float64 are kept, other dtypes go to float64.

    Sparse input becomes a canonical ``csr_array`` (duplicates summed, explicit zeros dropped).
    """
    if is_sparse(a):
        if not allow_sparse:
            raise ValidationError(
                f"The '{name}' argument of {caller} must be a dense array; got a scipy.sparse "
                "matrix. Pass .toarray()."
            )
        m = check_sparse_finite(a, name, caller=caller, nonnegative=nonnegative)
        if m.dtype not in (np.float32, np.float64):
            m = m.astype(np.float64)
        # The CSR container may share its buffers with the caller's matrix: copy before any
        # in-place canonicalisation so the caller's data is never modified.
        if not m.has_canonical_format or (m.data == 0).any():
            m = m.copy()
            m.sum_duplicates()
            m.eliminate_zeros()
        arr: np.ndarray | scipy.sparse.csr_array = m
    else:
        arr = check_finite(a, name, caller=caller, ndim=2, nonnegative=nonnegative)
        if arr.dtype not in (np.float32, np.float64):
            arr = arr.astype(np.float64)
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValidationError(
            f"The '{name}' argument of {caller} must have at least one row and one column; "
            f"got shape {arr.shape}."
        )
    return arr


def as_weights(w: object, size: int, name: str, caller: str) -> np.ndarray:
    """Nonnegative finite float64 weights of length ``size``; ``None`` means all ones (a copy)."""
    if w is None:
        return np.ones(size)
    arr = check_finite(w, name, caller=caller, ndim=1, nonnegative=True, dtype=np.float64)
    if arr.shape != (size,):
        raise ValidationError(
            f"The '{name}' argument of {caller} must have length {size}; got shape {arr.shape}."
        )
    return arr.copy()


#: Largest value an objective built from data may reach: beyond it sums of values and gains
#: overflow (the float limit is about 1.8e308).
MAX_VALUE = 1e300


def check_value_bound(bound: float, names: str, caller: str, fix: str) -> None:
    """Refuse data whose largest objective value ``bound`` (computed with overflow ignored, so
    possibly ``inf``) leaves floating-point range; ``names`` are the user's arguments."""
    if not bound <= MAX_VALUE:
        raise ValidationError(
            f"The {names} of {caller} give objective values up to {bound!r}, beyond about "
            f"{MAX_VALUE:g}: its values and gains would overflow. {fix}"
        )


def pow2_unscale(*arrays: np.ndarray) -> int:
    """An exponent ``e`` such that coordinates divided by ``2**e`` (exactly, with ``np.ldexp``)
    have squared distances that cannot overflow; 0 (no rescaling, results bit for bit as
    before) unless some magnitude exceeds ``2**500``."""
    big = max((float(np.abs(a).max()) for a in arrays if a.size), default=0.0)
    return math.frexp(big)[1] if big > 2.0**500 else 0


def row_chunks(n_rows: int, n_cols: int) -> range:
    """Start offsets of row blocks holding at most about ``BLOCK_ENTRIES`` entries each."""
    step = max(1, BLOCK_ENTRIES // max(1, n_cols))
    return range(0, n_rows, step)


def concat_ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """``concatenate([arange(s, s + l) for s, l in zip(starts, lengths)])`` without a loop."""
    lengths = np.asarray(lengths, dtype=np.int64)
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    ends = np.cumsum(lengths)
    offsets = np.repeat(np.asarray(starts, dtype=np.int64) - (ends - lengths), lengths)
    return offsets + np.arange(total, dtype=np.int64)


def replaced_points(points: np.ndarray, candidates: np.ndarray, rng: RNGLike, index: object,
                    point: object, caller: str) -> tuple[np.ndarray, int]:
    """A copy of ``points`` with one row replaced, and that row's index: the replace-one
    neighbour of the facility location objectives. What is not given is drawn from ``rng``: the
    index uniformly over the rows, then the point uniformly in the bounding box of the public
    ``candidates``."""
    N, d = points.shape
    if index is not None:
        index = check_int(index, "index", low=0, high=N - 1, caller=caller)
    if point is not None:
        point = check_finite(point, "point", caller=caller, ndim=1, dtype=np.float64)
        if point.shape != (d,):
            raise ValidationError(
                f"The 'point' argument of {caller} must have shape ({d},); got {point.shape}."
            )
    gen = as_generator(rng)
    if index is None:
        index = int(gen.integers(N))
    if point is None:
        lo, hi = candidates.min(axis=0), candidates.max(axis=0)
        point = lo + (hi - lo) * gen.random(d)
    P = points.copy()
    P[index] = point
    return P, int(index)
