"""Record similarity kernels of facility location (private).

Module-level functions, so that objectives built from records pickle: a built-in kernel is a
``functools.partial`` of one of them with the public candidates, and a user callable is
wrapped so that it sees one record at a time. Also the memory check that refuses a dense
similarity before it is allocated.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import partial

import numpy as np

from .._validation import check_real
from ..errors import ParameterTypeError, ValidationError
from ._inputs import MAX_VALUE, pow2_unscale, row_chunks

_SIMILARITIES = ("gaussian", "negative_distance")


def _sq_dists(P: np.ndarray, C: np.ndarray) -> np.ndarray:
    e = pow2_unscale(P, C)
    if e:
        # coordinates near the float limit: squared distances of the rescaled points, scaled
        # back; a distance beyond float range is inf (similarity 0), which is what it means
        d2 = _sq_dists(np.ldexp(P, -e), np.ldexp(C, -e))
        with np.errstate(over="ignore"):
            return np.ldexp(d2, 2 * e, out=d2)
    # (|p|^2 + |c|^2) - 2 p.c, evaluated in that order with one temporary fewer than the plain
    # expression (the values are bit for bit the same).
    cross = P @ C.T
    cross *= 2.0
    d2 = (P * P).sum(axis=1)[:, None] + (C * C).sum(axis=1)[None, :]
    d2 -= cross
    return np.maximum(d2, 0.0, out=d2)


def _gaussian(P: np.ndarray, C: np.ndarray, bandwidth: float, cap: float) -> np.ndarray:
    if bandwidth > 1e150:
        # 1/(2 h^2) underflows (and a distance beyond float range times it would be NaN):
        # distances measured in units of h instead
        out = _sq_dists(P / bandwidth, C / bandwidth)
        out *= -0.5
    else:
        out = _sq_dists(P, C)
        # 1/(2 h^2) capped at the largest float: a tiny bandwidth gives similarity 1 at
        # distance 0 and 0 elsewhere, instead of a ZeroDivisionError (h**2 underflows) or NaN
        # (0 * inf).
        inv = min(0.5 / bandwidth / bandwidth, np.finfo(np.float64).max)
        with np.errstate(over="ignore"):
            out *= -inv
    np.exp(out, out=out)
    return np.minimum(out, cap, out=out)


def _neg_distance(P: np.ndarray, C: np.ndarray, radius: float, cap: float) -> np.ndarray:
    out = _sq_dists(P, C)
    np.sqrt(out, out=out)
    np.subtract(radius, out, out=out)
    return np.clip(out, 0.0, cap, out=out)


def _user_kernel(P: np.ndarray, C: np.ndarray, fn: Callable, cap: float) -> np.ndarray:
    # One call per record: a row computed from its record and the public candidates alone
    # keeps the replace-one sensitivity s_max / N whatever the callable does with its inputs
    # (a callable given a block of records could rescale every row by a statistic of all of
    # them, so that replacing one record moves every row).
    n = C.shape[0]
    cands = C.copy()
    cands.flags.writeable = False
    out = np.empty((P.shape[0], n), dtype=np.float64)
    for i in range(P.shape[0]):
        rec = P[i:i + 1].copy()
        rec.flags.writeable = False
        out[i] = _user_row(fn, rec, cands, n)
    return np.clip(out, 0.0, cap, out=out)


def _user_row(fn: Callable, rec: np.ndarray, C: np.ndarray, n: int) -> np.ndarray:
    try:
        row = np.asarray(fn(rec, C), dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValidationError(
            f"The 'similarity' callable of FacilityLocation.from_records failed or returned "
            f"non-numeric values: {exc}."
        ) from None
    if row.shape not in ((1, n), (n,)):
        raise ValidationError(
            "The 'similarity' callable of FacilityLocation.from_records is called with one "
            f"record (shape (1, d)) and must return its similarities of shape (1, {n}) or "
            f"({n},); got {row.shape}."
        )
    if not np.isfinite(row).all():
        raise ValidationError(
            "The 'similarity' callable of FacilityLocation.from_records returned NaN or infinite "
            "values; it must return finite similarities."
        )
    return row.reshape(n)


def _make_kernel(similarity: object, C: np.ndarray, bandwidth: object, radius: object,
                 s_max: object, dt: np.dtype, caller: str
                 ) -> tuple[Callable[[np.ndarray], np.ndarray], float]:
    """The per-record similarity map (rows -> (m, n) in [0, cap]) and the declared s_max."""

    def refuse(name: str, value: object, kind: str) -> None:
        if value is not None:
            raise ValidationError(
                f"The '{name}' parameter of {caller} has no effect with similarity={kind}; "
                "remove it."
            )

    if callable(similarity):
        refuse("bandwidth", bandwidth, "<callable>")
        refuse("radius", radius, "<callable>")
        if s_max is None:
            raise ValidationError(
                f"{caller} with a callable similarity needs a declared 's_max' (the largest "
                "similarity); outputs are clipped to [0, s_max]."
            )
        smax = _finite_positive(s_max, "s_max", caller)
        fn: Callable = partial(_user_kernel, fn=similarity)
    elif isinstance(similarity, str) and similarity == "gaussian":
        refuse("radius", radius, "'gaussian'")
        refuse("s_max", s_max, "'gaussian'")
        if bandwidth is None:
            raise ValidationError(
                f"{caller} with similarity='gaussian' needs a public 'bandwidth' (not tuned on "
                "the private points), e.g. bandwidth=1.0."
            )
        h = _finite_positive(bandwidth, "bandwidth", caller)
        smax = 1.0
        fn = partial(_gaussian, bandwidth=h)
    elif isinstance(similarity, str) and similarity == "negative_distance":
        refuse("bandwidth", bandwidth, "'negative_distance'")
        refuse("s_max", s_max, "'negative_distance'")
        if radius is None:
            raise ValidationError(
                f"{caller} with similarity='negative_distance' needs a public 'radius' D "
                "(similarity = max(0, D - distance))."
            )
        smax = _finite_positive(radius, "radius", caller)
        fn = partial(_neg_distance, radius=smax)
    elif isinstance(similarity, str):
        raise ValidationError(
            f"The 'similarity' parameter of {caller} must be one of {list(_SIMILARITIES)} or a "
            f"callable; got {similarity!r}."
        )
    else:
        raise ParameterTypeError(
            f"The 'similarity' parameter of {caller} must be a string or a callable; got "
            f"{type(similarity).__name__}."
        )
    # Objective values reach s_max (the mean of N terms up to it): keep it, with a margin for
    # rounding, within the range of values and of the storage dtype.
    limit = min(MAX_VALUE, float(np.finfo(dt).max)) / 2.0
    if smax > limit:
        name = "s_max" if callable(similarity) else "radius"
        raise ValidationError(
            f"The '{name}' parameter of {caller} is {smax!r}: similarities up to it exceed "
            f"{limit:.3g}, beyond the range of objective values stored as {dt.name}. Pass a "
            f"smaller {name} (rescale the points), or dtype=numpy.float64."
        )
    # The stored values must not exceed s_max after rounding to the storage dtype.
    cap = dt.type(smax)
    if float(cap) > smax:
        cap = np.nextafter(cap, dt.type(0))
    return partial(fn, C=C, cap=float(cap)), smax


#: Entries per block when a built-in kernel fills the similarity matrix. Each block is one
#: matrix product; blocks much smaller than this turn the build into hundreds of tiny BLAS calls,
#: whose thread synchronisation dominates (5x slower at n = 5000 on a loaded 2-core machine).
#: Two float64 temporaries of this size (16 MiB) are the build's working memory.
_KERNEL_BLOCK_ENTRIES = 1 << 20


def _similarity_matrix(kernel: Callable[[np.ndarray], np.ndarray], P: np.ndarray, n: int,
                       dt: np.dtype) -> np.ndarray:
    out = np.empty((P.shape[0], n), dtype=dt)
    builtin = isinstance(kernel, partial) and kernel.func in (_gaussian, _neg_distance)
    if builtin:
        # At least two rows per block: a one-row product goes through gemv, whose rounding can
        # differ from gemm's in the last bit.
        step = max(2, _KERNEL_BLOCK_ENTRIES // max(1, n))
    else:
        step = row_chunks(P.shape[0], n).step
    N = P.shape[0]
    s = 0
    while s < N:
        e = s + step
        if builtin and N - e == 1:
            e = N  # no one-row block at the end either
        out[s:e] = kernel(P[s:e])
        s = e
    return out


def _finite_positive(v: object, name: str, caller: str) -> float:
    return check_real(v, name, low=0.0, low_open=True, high=float(np.finfo(np.float64).max),
                      caller=caller)


def _physical_memory() -> int | None:
    try:
        return int(os.sysconf("SC_PHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):  # pragma: no cover - not POSIX
        return None


#: A dense similarity may take at most this share of the machine's physical memory.
MEMORY_SHARE = 0.5


def _check_fits(N: int, n: int, dt: np.dtype, caller: str) -> None:
    """Refuse, before allocating, an N x n similarity that cannot fit in memory."""
    need = N * n * dt.itemsize
    total = _physical_memory()
    if total is None or need <= MEMORY_SHARE * total:
        return
    gib = 1 << 30
    raise ValidationError(
        f"{caller} would build a dense {N} x {n} similarity of {need / gib:.1f} GiB "
        f"({dt.name}), more than half of this machine's {total / gib:.1f} GiB. Leave "
        "dtype unset with a built-in similarity (no matrix), or use dtype=numpy.float32 (half "
        "the size), a sparse nearest-neighbour similarity "
        "(FacilityLocation(scipy.sparse matrix)), fewer candidates, or the chunked mode "
        "FacilityLocation.from_chunks(...), which never builds the matrix."
    )


