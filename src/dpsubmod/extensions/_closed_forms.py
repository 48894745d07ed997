r"""Closed forms of the multilinear extension (value, gradient, and gradients at a batch of
points) for the families that have one, and the registry that dispatches to them.

Kept apart from :mod:`dpsubmod.extensions.multilinear`, which validates, chooses a method and
counts; the kernels here trust their inputs. See that module's ``multilinear_gradient`` for the
formulas.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import scipy.sparse as sp

from .._validation import check_int
from ..errors import ParameterTypeError
from ..functions.base import SetFunction
from ..functions.combinators import Restricted, Scaled, Sum
from ..functions.coverage import Coverage
from ..functions.facility_location import FacilityLocation
from ..functions.modular import Modular
from ..functions.records.points import RecordFacilityLocation

#: Entries per row block of the facility-location kernels (about 8 MB per float64 temporary).
_FL_BLOCK_ENTRIES = 1 << 20
#: Largest ``points x clients x n`` block the stacked facility-location kernel handles at once.
_STACK_ENTRIES = 1 << 22

# -- registry --------------------------------------------------------------------------------------

ValueFn = Callable[[SetFunction, np.ndarray], float]
GradFn = Callable[..., np.ndarray]
BatchFn = Callable[[SetFunction, np.ndarray], np.ndarray]
AppliesFn = Callable[[SetFunction], bool]
_CLOSED_FORMS: dict[type, tuple[ValueFn, GradFn, AppliesFn | None, BatchFn | None]] = {}
_BUILTINS_LOADED = False


def register_closed_form(cls: type, *, value: ValueFn, gradient: GradFn,
                         applies: AppliesFn | None = None,
                         gradients: BatchFn | None = None) -> None:
    """Register an exact multilinear value and gradient for a SetFunction class.

    Parameters
    ----------
    cls : type
        A subclass of :class:`~dpsubmod.functions.SetFunction`; subclasses of ``cls`` inherit the
        closed form unless they register their own.
    value : callable ``(f, x) -> float``
        :math:`f(x)` for ``x`` a float64 vector in ``[0, 1]^n`` (already validated).
    gradient : callable ``(f, x) -> ndarray``
        :math:`\\nabla f(x)`, a float64 vector of length ``n``.
    applies : callable ``f -> bool``, optional
        Whether the closed form covers this instance (a combinator has one only when its parts
        do); always, when omitted.
    gradients : callable ``(f, X) -> ndarray``, optional
        The gradients at every row of a float64 ``(m, n)`` array of points, vectorised over the
        rows; ``gradient`` row by row when omitted.
    """
    if not (isinstance(cls, type) and issubclass(cls, SetFunction)):
        raise ParameterTypeError(
            "The 'cls' parameter of register_closed_form must be a SetFunction subclass; got "
            f"{cls!r}."
        )
    _CLOSED_FORMS[cls] = (value, gradient, applies, gradients)


def _load_builtins() -> None:
    global _BUILTINS_LOADED
    if _BUILTINS_LOADED:
        return
    _BUILTINS_LOADED = True
    register_closed_form(Modular, value=_modular_value, gradient=_modular_gradient,
                         gradients=_modular_gradients)
    register_closed_form(Coverage, value=_coverage_value, gradient=_coverage_gradient,
                         gradients=_coverage_gradients)
    register_closed_form(FacilityLocation, value=_facility_value, gradient=_facility_gradient,
                         gradients=_facility_gradients)
    # facility location over points in memory: the same forms on its similarities (built on
    # first use, the matrix the dense objective holds)
    register_closed_form(RecordFacilityLocation, value=_facility_value,
                         gradient=_facility_gradient, gradients=_facility_gradients)
    register_closed_form(Sum, value=_sum_value, gradient=_sum_gradient,
                         applies=lambda f: all(has_closed_form(g) for g in f.functions),
                         gradients=_sum_gradients)
    register_closed_form(Scaled, value=_scaled_value, gradient=_scaled_gradient,
                         applies=lambda f: has_closed_form(f.f), gradients=_scaled_gradients)
    register_closed_form(Restricted, value=_restricted_value, gradient=_restricted_gradient,
                         applies=lambda f: has_closed_form(f.f), gradients=_restricted_gradients)


def _closed_form(f: SetFunction) -> tuple[ValueFn, GradFn, BatchFn | None] | None:
    _load_builtins()
    for klass in type(f).__mro__:
        if klass in _CLOSED_FORMS:
            value, grad, applies, batch = _CLOSED_FORMS[klass]
            if applies is None or applies(f):
                return value, grad, batch
            return None
    return None


def has_closed_form(f: SetFunction) -> bool:
    """Whether ``f``'s family has an exact, vectorised multilinear value and gradient."""
    return _closed_form(f) is not None


# -- closed forms: modular -----------------------------------------------------------------------

def _modular_value(f: SetFunction, x: np.ndarray) -> float:
    return float(np.dot(f.weights, x))  # type: ignore[attr-defined]


def _modular_gradient(f: SetFunction, x: np.ndarray) -> np.ndarray:
    return np.array(f.weights, dtype=np.float64)  # type: ignore[attr-defined]


# -- closed forms: weighted coverage -------------------------------------------------------------

def _coverage_parts(f: SetFunction, x: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per stored incidence ``(e, u)``: its row and column; per element ``u``: the number of
    covering sets with ``x = 1`` and the log of the product of ``1 - x`` over the other covering
    sets (zero factors are counted apart, so no log is -inf); and ``log(1 - x)`` per set."""
    A = f.incidence  # type: ignore[attr-defined]
    rows = np.repeat(np.arange(A.shape[0]), np.diff(A.indptr))
    cols = A.indices
    one = x >= 1.0
    log1m = np.zeros_like(x)
    log1m[~one] = np.log1p(-x[~one])
    zeros = np.bincount(cols, weights=one[rows].astype(np.float64), minlength=A.shape[1])
    logs = np.bincount(cols, weights=log1m[rows], minlength=A.shape[1])
    return rows, cols, np.rint(zeros), logs, log1m


def _coverage_value(f: SetFunction, x: np.ndarray) -> float:
    w = f.element_weights  # type: ignore[attr-defined]
    _, _, zeros, logs, _ = _coverage_parts(f, x)
    uncovered = np.where(zeros > 0, 0.0, np.exp(logs))
    return float(np.dot(w, 1.0 - uncovered))


def _coverage_gradient(f: SetFunction, x: np.ndarray) -> np.ndarray:
    w = f.element_weights  # type: ignore[attr-defined]
    rows, cols, zeros, logs, log1m = _coverage_parts(f, x)
    row_one = x[rows] >= 1.0
    # Product over the other covering sets: remove e's own factor (its log, or its zero count).
    others_zero = np.where(row_one, zeros[cols] - 1.0, zeros[cols])
    excl = np.where(others_zero > 0, 0.0, np.exp(logs[cols] - log1m[rows]))
    return np.bincount(rows, weights=w[cols] * excl, minlength=f.n)


# -- closed forms: facility location -------------------------------------------------------------

def _descending(S: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row, a permutation sorting ``S`` in decreasing order, and the sorted float64 values.

    Nonnegative floats order like their bit patterns, so one int64 key per entry (the inverted
    pattern with its low bits replaced by the column index) sorts with a plain integer sort,
    about twice as fast as ``argsort``. Dropping the low bits can only misorder values that agree
    to about 40 significant bits; every row is checked to be non-increasing afterwards and the rare
    row that is not is re-sorted exactly with ``argsort``, so the order is always exact.
    """
    c, width = S.shape
    S64 = S.astype(np.float64, copy=False)
    nb = max(1, int(width - 1).bit_length())
    low = np.int64((1 << nb) - 1)
    keys = np.invert(S64.view(np.int64))
    np.bitwise_and(keys, ~low, out=keys)
    np.bitwise_or(keys, np.arange(width, dtype=np.int64)[None, :], out=keys)
    keys.sort(axis=1)
    np.bitwise_and(keys, low, out=keys)
    ss = np.take_along_axis(S64, keys, axis=1)
    bad = np.flatnonzero((ss[:, 1:] > ss[:, :-1]).any(axis=1))
    if bad.size:
        keys[bad] = np.argsort(-S64[bad], axis=1, kind="stable")
        ss[bad] = np.take_along_axis(S64[bad], keys[bad], axis=1)
    return keys, ss

def _fl_block_gradient(S: np.ndarray, cols: np.ndarray | None, x: np.ndarray,
                       w: np.ndarray | None, n_out: int) -> np.ndarray:
    """Gradient contribution of a block of clients (rows of ``S``; see multilinear_gradient).

    ``cols`` maps each stored column to its candidate (``None``: the identity); ``x`` is indexed
    by candidate and ends with an extra 0 used by padding.
    """
    c, width = S.shape
    order, ss = _descending(S)
    cand = order if cols is None else np.take_along_axis(cols, order, axis=1)
    xs = x[cand]
    a = 1.0 - xs
    zero = a <= 0.0
    zrows = np.flatnonzero(zero.any(axis=1))
    r1 = np.full(c, width)
    r1[zrows] = zero[zrows].argmax(axis=1)  # rank of each client's first sure candidate
    # With the first sure candidate's factor set to 1, the prefix products equal the true P_r up
    # to and including r1, and after r1 they are the products that T_r1 needs.
    a[zrows, r1[zrows]] = 1.0
    P = np.empty_like(a)
    P[:, 0] = 1.0
    np.cumprod(a[:, :-1], axis=1, out=P[:, 1:])
    contrib = ss * xs
    contrib *= P
    # U_r = sum_{r' > r} contrib_r', summed from the end for accuracy.
    U = np.zeros_like(contrib)
    if width > 1:
        np.cumsum(contrib[:, :0:-1], axis=1, out=U[:, -2::-1])
    # Past r1 the terms belong to T_r1 = U_r1 / P_r1, not to the ranks before r1: remove them.
    # (contrib_r1 = s_r1 P_r1 is at least U_r1, so the subtraction loses no precision.)
    tail = np.zeros(c)
    tail[zrows] = U[zrows, r1[zrows]]
    U -= tail[:, None]
    G = P * ss
    with np.errstate(divide="ignore", invalid="ignore"):
        # For r < r1, P_r T_r = U_r / (1 - x_(r)), since U_r carries the factor (1 - x_(r));
        # zero divisors occur only after r1, where the derivative is set to 0 below.
        G -= U / a
    G[zrows, r1[zrows]] = P[zrows, r1[zrows]] * ss[zrows, r1[zrows]] - tail[zrows]
    if zrows.size:
        # A sure candidate ranked above: every lower-ranked derivative vanishes.
        G = np.where(np.arange(width)[None, :] > r1[:, None], 0.0, G)
    if w is not None:
        G *= w[:, None]
    return np.bincount(cand.ravel(), weights=G.ravel(), minlength=n_out)


def _fl_block_value(S: np.ndarray, cols: np.ndarray | None, x: np.ndarray,
                    w: np.ndarray | None) -> float:
    order, ss = _descending(S)
    cand = order if cols is None else np.take_along_axis(cols, order, axis=1)
    xs = x[cand]
    P = np.empty_like(xs)
    P[:, 0] = 1.0
    np.cumprod(1.0 - xs[:, :-1], axis=1, out=P[:, 1:])
    per_client = (ss * xs * P).sum(axis=1)
    return float(per_client.sum() if w is None else np.dot(w, per_client))


def _fl_blocks(sim: np.ndarray | sp.csr_array, n: int):
    """Yield ``(rows, S_block, cols_block)``: dense row blocks, or sparse rows padded per block
    (rows grouped by number of stored entries so the padding stays small)."""
    if not sp.issparse(sim):
        step = max(1, _FL_BLOCK_ENTRIES // max(1, n))
        for start in range(0, sim.shape[0], step):
            rows = np.arange(start, min(start + step, sim.shape[0]))
            yield rows, sim[start:start + step], None
        return
    csr = sp.csr_array(sim)
    lens = np.diff(csr.indptr)
    by_len = np.argsort(lens, kind="stable")
    sorted_lens = np.maximum(lens[by_len], 1)
    pos = 0
    while pos < by_len.size:
        # Rows are in increasing length, so a block of k rows from pos is k * (its last length)
        # entries once padded: take the largest k within the budget (at least one row).
        window = sorted_lens[pos:pos + _FL_BLOCK_ENTRIES]
        padded = np.arange(1, window.size + 1) * window
        step = max(1, int(np.searchsorted(padded, _FL_BLOCK_ENTRIES, side="right")))
        rows = by_len[pos:pos + step]
        width = max(1, int(lens[rows].max()))
        starts = csr.indptr[rows]
        k = np.arange(width)[None, :]
        valid = k < lens[rows][:, None]
        idx = np.where(valid, starts[:, None] + k, 0)
        S = np.where(valid, csr.data[idx], 0.0)
        cols = np.where(valid, csr.indices[idx], n)  # padding points at the extra zero of x
        yield rows, S, cols
        pos += rows.size


def _fl_parts(f: SetFunction) -> tuple[np.ndarray | sp.csr_array, np.ndarray | None]:
    w = np.asarray(f.weights, dtype=np.float64)  # type: ignore[attr-defined]
    return f.similarity, (None if bool((w == 1.0).all()) else w)  # type: ignore[attr-defined]


def _resolve_threads(n_threads: int | None) -> int:
    if n_threads is None:
        return max(1, min(4, os.cpu_count() or 1))
    return check_int(n_threads, "n_threads", low=1, caller="multilinear_gradient")


def _facility_gradient(f: SetFunction, x: np.ndarray, *, n_threads: int | None = None
                       ) -> np.ndarray:
    sim, w = _fl_parts(f)
    n = f.n
    xe = np.append(x, 0.0)
    blocks = list(_fl_blocks(sim, n))

    def run(block: tuple) -> np.ndarray:
        rows, S, cols = block
        return _fl_block_gradient(S, cols, xe, None if w is None else w[rows], n + 1)

    threads = _resolve_threads(n_threads)
    if threads > 1 and len(blocks) > 1:
        with ThreadPoolExecutor(min(threads, len(blocks))) as ex:
            parts = list(ex.map(run, blocks))
    else:
        parts = [run(b) for b in blocks]
    total = np.zeros(n + 1)
    for p in parts:  # summed in block order, so the result does not depend on the threads
        total += p
    return total[:n]


def _facility_value(f: SetFunction, x: np.ndarray) -> float:
    sim, w = _fl_parts(f)
    xe = np.append(x, 0.0)
    return float(sum(_fl_block_value(S, cols, xe, None if w is None else w[rows])
                     for rows, S, cols in _fl_blocks(sim, f.n)))




# -- dispatch ------------------------------------------------------------------------------------

def closed_value(f: SetFunction, x: np.ndarray) -> float:
    """The multilinear extension at ``x`` by ``f``'s closed form (which must exist)."""
    return float(_closed_form(f)[0](f, x))  # type: ignore[index]


def closed_gradient(f: SetFunction, x: np.ndarray, n_threads: int | None = None) -> np.ndarray:
    """The gradient at ``x`` by ``f``'s closed form (which must exist)."""
    grad_fn = _closed_form(f)[1]  # type: ignore[index]
    if grad_fn in _TAKES_THREADS:
        return np.asarray(grad_fn(f, x, n_threads=n_threads), dtype=np.float64)
    return np.asarray(grad_fn(f, x), dtype=np.float64)


def closed_gradients(f: SetFunction, X: np.ndarray) -> np.ndarray:
    """The gradients at every row of ``X`` (shape ``(m, n)``) by ``f``'s closed form (which must
    exist): the family's batched kernel, else its single-point gradient row by row."""
    batch = _closed_form(f)[2]  # type: ignore[index]
    if batch is not None:
        return np.asarray(batch(f, X), dtype=np.float64)
    out = np.empty_like(X)
    for r in range(X.shape[0]):
        out[r] = closed_gradient(f, X[r], 1)
    return out


# -- closed forms: combinators -------------------------------------------------------------------


def _sum_value(f: SetFunction, x: np.ndarray) -> float:
    return float(sum(c * closed_value(g, x)
                     for c, g in zip(f.weights, f.functions)))  # type: ignore[attr-defined]


def _sum_gradient(f: SetFunction, x: np.ndarray, *, n_threads: int | None = None) -> np.ndarray:
    out = np.zeros(f.n)
    for c, g in zip(f.weights, f.functions):  # type: ignore[attr-defined]
        out += c * closed_gradient(g, x, n_threads)
    return out


def _scaled_value(f: SetFunction, x: np.ndarray) -> float:
    return f.c * closed_value(f.f, x)  # type: ignore[attr-defined]


def _scaled_gradient(f: SetFunction, x: np.ndarray, *, n_threads: int | None = None
                     ) -> np.ndarray:
    return f.c * closed_gradient(f.f, x, n_threads)  # type: ignore[attr-defined]


def _lift(f: SetFunction, x: np.ndarray) -> np.ndarray:
    # Elements outside the restriction never enter: coordinate 0 in the inner function.
    full = np.zeros(f.f.n)  # type: ignore[attr-defined]
    full[f.subset] = x  # type: ignore[attr-defined]
    return full


def _restricted_value(f: SetFunction, x: np.ndarray) -> float:
    return closed_value(f.f, _lift(f, x))  # type: ignore[attr-defined]


def _restricted_gradient(f: SetFunction, x: np.ndarray, *, n_threads: int | None = None
                         ) -> np.ndarray:
    inner = closed_gradient(f.f, _lift(f, x), n_threads)  # type: ignore[attr-defined]
    return inner[f.subset]  # type: ignore[attr-defined]


# Built-in gradients that pass the thread count down (user-registered ones take (f, x) only).
_TAKES_THREADS = {_facility_gradient, _sum_gradient, _scaled_gradient, _restricted_gradient}


# -- batched gradients (rows of X) ---------------------------------------------------------------

def _modular_gradients(f: SetFunction, X: np.ndarray) -> np.ndarray:
    return np.broadcast_to(np.asarray(f.weights, dtype=np.float64),  # type: ignore[attr-defined]
                           X.shape).copy()


def _coverage_gradients(f: SetFunction, X: np.ndarray) -> np.ndarray:
    r"""The single-point coverage formula for every row at once, factored through the elements:
    with :math:`P_u` the product of ``1 - x`` over the covering sets of ``u`` with ``x < 1``
    and :math:`z_u` the count of those with ``x = 1``, set ``e`` gets
    :math:`\sum_{u \in A_e, z_u = 0} w_u P_u / (1 - x_e)` when ``x_e < 1`` and
    :math:`\sum_{u \in A_e, z_u = 1} w_u P_u` when ``x_e = 1``: two sparse products instead
    of one exponential per (point, incidence)."""
    A = f.incidence  # type: ignore[attr-defined]
    w = np.asarray(f.element_weights, dtype=np.float64)  # type: ignore[attr-defined]
    one = X >= 1.0
    log1m = np.zeros_like(X)
    log1m[~one] = np.log1p(-X[~one])
    AT = A.T
    P = np.exp(np.asarray(AT @ log1m.T)) * w[:, None]  # (elements, points)
    if not one.any():
        return np.asarray(A @ P).T * np.exp(-log1m)
    zeros = np.asarray(AT @ one.T.astype(np.float64))
    g_free = np.asarray(A @ np.where(zeros < 0.5, P, 0.0)).T
    g_one = np.asarray(A @ np.where((zeros > 0.5) & (zeros < 1.5), P, 0.0)).T
    return np.where(one, g_one, g_free * np.exp(-log1m))


def _facility_gradients(f: SetFunction, X: np.ndarray) -> np.ndarray:
    """Dense similarities: the points become blocks of an extended ground set of ``m n``
    candidates, and one call of the kernel handles them all (while the stacked block fits)."""
    sim, w = _fl_parts(f)
    m, n = X.shape
    N = sim.shape[0]
    if sp.issparse(sim) or m * N * n > _STACK_ENTRIES:
        out = np.empty_like(X)
        for r in range(m):
            out[r] = _facility_gradient(f, X[r], n_threads=1)
        return out
    S = np.tile(np.asarray(sim, dtype=np.float64), (m, 1))
    cols = (np.arange(m, dtype=np.int64)[:, None, None] * n
            + np.arange(n, dtype=np.int64)[None, None, :])
    cols = np.broadcast_to(cols, (m, N, n)).reshape(m * N, n)
    xe = np.append(X.ravel(), 0.0)
    ww = None if w is None else np.tile(w, m)
    return _fl_block_gradient(S, cols, xe, ww, m * n + 1)[:m * n].reshape(m, n)


def _sum_gradients(f: SetFunction, X: np.ndarray) -> np.ndarray:
    out = np.zeros_like(X)
    for c, g in zip(f.weights, f.functions):  # type: ignore[attr-defined]
        out += c * closed_gradients(g, X)
    return out


def _scaled_gradients(f: SetFunction, X: np.ndarray) -> np.ndarray:
    return f.c * closed_gradients(f.f, X)  # type: ignore[attr-defined]


def _restricted_gradients(f: SetFunction, X: np.ndarray) -> np.ndarray:
    full = np.zeros((X.shape[0], f.f.n))  # type: ignore[attr-defined]
    full[:, f.subset] = X  # type: ignore[attr-defined]
    return closed_gradients(f.f, full)[:, f.subset]  # type: ignore[attr-defined]
