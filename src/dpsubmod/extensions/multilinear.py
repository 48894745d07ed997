r"""The multilinear extension of a set function: value and gradient, exact and sampled.

For a set function :math:`F` on ``range(n)`` and :math:`x \in [0, 1]^n` the multilinear extension
is

.. math::

    f(x) = \sum_{S} F(S) \prod_{e \in S} x_e \prod_{e \notin S} (1 - x_e)
         = \mathbb{E}_{R \sim x}[F(R)],

where :math:`R \sim x` holds each element ``e`` independently with probability :math:`x_e`, so
:math:`f(\mathbf 1_S) = F(S)`. Its partial derivatives are

.. math::

    \partial_e f(x) = \mathbb{E}_{R \sim x}[F(R \cup \{e\}) - F(R \setminus \{e\})]
                    = f(x \mid x_e = 1) - f(x \mid x_e = 0),

which are nonnegative for monotone ``F``, and ``f`` is concave along nonnegative directions for
submodular ``F`` (Calinescu, Chekuri, Pal and Vondrak 2011). Continuous greedy (Rafiey and
Yoshida 2020, Algorithm 1) and DPCG (Sadeghi and Fazel 2021) move along this gradient.

Three ways to compute, chosen by ``method``:

* **closed forms** (exact, vectorised, no sampling) for the families that have one:
  modular (the gradient is the weight vector), weighted coverage (a product over the sets covering
  each element), facility location (sort each client's similarities; the expected maximum of
  independent inclusions). More can be added with :func:`register_closed_form`;
* **enumeration** over all :math:`2^n` sets (exact, for small ``n``; used by tests);
* **sampling** with common random numbers: draw :math:`U \in [0, 1)^{N \times n}` once, take
  :math:`R_s = \{e : U_{s e} < x_e\}` and use the *same* :math:`R_s` for every coordinate,
  :math:`\hat g_e = \frac1N \sum_s [F(R_s \cup \{e\}) - F(R_s \setminus \{e\})]`. This costs
  :math:`N (n + 1)` evaluations of ``F`` and is unbiased.

Privacy. The sampled sets depend only on ``x`` and on ``rng``, never on the data, so a private
algorithm that feeds a released ``x`` here keeps its guarantee: for *fixed* samples each coordinate
of the estimate moves between neighbouring data sets by at most what the exact gradient can move
(``2 * sensitivity`` in the general data model, ``sensitivity`` in the monotone-records model).

Evaluation counting (``f.evaluations`` and the ``evaluations`` field of the result), in the units
the papers use: one ``F(S)`` is 1; enumeration costs :math:`2^n`; sampling costs ``N`` for a value
and :math:`N (n + 1)` for a gradient; a closed-form value counts 1 and a closed-form gradient
counts ``n`` (one per partial derivative, as a batch of ``n`` marginal gains would).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Literal

import numpy as np
import scipy.sparse as sp

from .._rng import RNGLike, as_generator
from .._validation import check_finite, check_int
from ..errors import GroundSetMismatchError, ParameterTypeError, ValidationError
from ..functions.base import SetFunction

__all__ = [
    "MultilinearEstimate",
    "multilinear_value",
    "multilinear_gradient",
    "register_closed_form",
    "has_closed_form",
]

Method = Literal["auto", "exact", "sampling"]

#: Largest ground set the "exact" method enumerates when no closed form exists.
MAX_ENUMERATION = 20

#: Entries per row block of the facility-location kernels (about 8 MB per float64 temporary).
_FL_BLOCK_ENTRIES = 1 << 20


@dataclass(frozen=True)
class MultilinearEstimate:
    """A value or gradient of the multilinear extension, with its Monte-Carlo error.

    Attributes
    ----------
    estimate : float or ndarray of shape (n,)
        The value :math:`f(x)` or the gradient :math:`\\nabla f(x)`.
    standard_error : float or ndarray of shape (n,)
        Standard error of the estimate (sample standard deviation over ``sqrt(n_samples)``);
        zero for the exact methods.
    n_samples : int
        Number of sampled sets; 0 for the exact methods.
    method : {"closed-form", "enumeration", "sampling"}
        How the estimate was computed.
    evaluations : int
        Oracle work in the papers' units (see the module docstring); also added to
        ``f.evaluations``.
    """

    estimate: float | np.ndarray
    standard_error: float | np.ndarray
    n_samples: int
    method: str
    evaluations: int

    @property
    def exact(self) -> bool:
        """Whether the estimate is exact (closed form or enumeration)."""
        return self.method != "sampling"


# -- closed-form registry ------------------------------------------------------------------------

ValueFn = Callable[[SetFunction, np.ndarray], float]
GradFn = Callable[..., np.ndarray]
AppliesFn = Callable[[SetFunction], bool]
_CLOSED_FORMS: dict[type, tuple[ValueFn, GradFn, AppliesFn | None]] = {}
_BUILTINS_LOADED = False


def register_closed_form(cls: type, *, value: ValueFn, gradient: GradFn,
                         applies: AppliesFn | None = None) -> None:
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
    """
    if not (isinstance(cls, type) and issubclass(cls, SetFunction)):
        raise ParameterTypeError(
            "The 'cls' parameter of register_closed_form must be a SetFunction subclass; got "
            f"{cls!r}."
        )
    _CLOSED_FORMS[cls] = (value, gradient, applies)


def _load_builtins() -> None:
    global _BUILTINS_LOADED
    if _BUILTINS_LOADED:
        return
    _BUILTINS_LOADED = True
    from ..functions.combinators import Restricted, Scaled, Sum
    from ..functions.coverage import Coverage
    from ..functions.facility_location import FacilityLocation
    from ..functions.modular import Modular

    register_closed_form(Modular, value=_modular_value, gradient=_modular_gradient)
    register_closed_form(Coverage, value=_coverage_value, gradient=_coverage_gradient)
    register_closed_form(FacilityLocation, value=_facility_value, gradient=_facility_gradient)
    register_closed_form(Sum, value=_sum_value, gradient=_sum_gradient,
                         applies=lambda f: all(has_closed_form(g) for g in f.functions))
    register_closed_form(Scaled, value=_scaled_value, gradient=_scaled_gradient,
                         applies=lambda f: has_closed_form(f.f))
    register_closed_form(Restricted, value=_restricted_value, gradient=_restricted_gradient,
                         applies=lambda f: has_closed_form(f.f))


def _closed_form(f: SetFunction) -> tuple[ValueFn, GradFn] | None:
    _load_builtins()
    for klass in type(f).__mro__:
        if klass in _CLOSED_FORMS:
            value, grad, applies = _CLOSED_FORMS[klass]
            if applies is None or applies(f):
                return value, grad
            return None
    return None


def has_closed_form(f: SetFunction) -> bool:
    """Whether ``f``'s family has an exact, vectorised multilinear value and gradient."""
    return _closed_form(f) is not None


# -- public functions ----------------------------------------------------------------------------

def multilinear_value(f: SetFunction, x: object, *, method: Method = "auto",
                      n_samples: int = 1000, rng: RNGLike = None) -> MultilinearEstimate:
    r"""Value :math:`f(x) = \mathbb{E}_{R \sim x} F(R)` of the multilinear extension.

    Parameters
    ----------
    f : SetFunction
        The set function ``F``.
    x : array-like of float, shape (n,)
        A point of :math:`[0, 1]^n`.
    method : {"auto", "exact", "sampling"}, default="auto"
        ``"exact"``: the family's closed form, else enumeration of all :math:`2^n` sets (refused
        above ``n = 20``). ``"sampling"``: the mean of ``F`` over ``n_samples`` independent sets
        ``R ~ x``. ``"auto"``: the closed form when there is one, else whichever of enumeration
        and sampling costs fewer evaluations (enumeration when :math:`2^n \le` ``n_samples``).
    n_samples : int, default=1000
        Sample size of the sampling method; no effect on the exact methods.
    rng : int, Generator or None, default=None
        Randomness of the sampling method (unused by the exact methods).

    Returns
    -------
    MultilinearEstimate
        ``estimate`` is a float.

    Examples
    --------
    >>> from dpsubmod.functions import Modular
    >>> float(multilinear_value(Modular([1.0, 2.0]), [0.5, 0.25]).estimate)
    1.0
    """
    f, xv, how, n_samples = _iv(f, x, method, n_samples, "multilinear_value", gradient=False)
    if how == "closed-form":
        val = _closed_value(f, xv)
        f.evaluations += 1
        return MultilinearEstimate(val, 0.0, 0, how, 1)
    if how == "enumeration":
        table = _value_table(f)
        val = float(_contract(table, xv))
        return MultilinearEstimate(val, 0.0, 0, how, table.size)
    gen = as_generator(rng)
    masks = gen.random((n_samples, f.n)) < xv
    vals = np.fromiter((f._value(m) for m in masks), dtype=np.float64, count=n_samples)
    f.evaluations += n_samples
    se = float(vals.std(ddof=1) / math.sqrt(n_samples)) if n_samples > 1 else float("inf")
    return MultilinearEstimate(float(vals.mean()), se, n_samples, how, n_samples)


def multilinear_gradient(f: SetFunction, x: object, *, method: Method = "auto",
                         n_samples: int = 1000, rng: RNGLike = None,
                         n_threads: int | None = None) -> MultilinearEstimate:
    r"""Gradient :math:`\nabla f(x)` of the multilinear extension.

    Uses the identity :math:`\partial_e f(x) = \mathbb{E}_{R \sim x}[F(R + e) - F(R - e)]`.

    Parameters
    ----------
    f : SetFunction
        The set function ``F``.
    x : array-like of float, shape (n,)
        A point of :math:`[0, 1]^n`.
    method : {"auto", "exact", "sampling"}, default="auto"
        ``"exact"``: the family's closed form (modular, weighted coverage, facility location, and
        whatever :func:`register_closed_form` added), else enumeration of all :math:`2^n` sets
        (refused above ``n = 20``). ``"sampling"``: common random numbers, ``n_samples`` sets
        ``R_s ~ x`` shared by every coordinate (cost :math:`N (n + 1)` evaluations).
        ``"auto"``: the closed form when there is one, else whichever of enumeration
        (:math:`2^n`) and sampling (:math:`N (n + 1)`) costs fewer evaluations.
    n_samples : int, default=1000
        Sample size ``N`` of the sampling method; no effect on the exact methods.
    rng : int, Generator or None, default=None
        Randomness of the sampling method (unused by the exact methods). The samples depend only
        on ``x`` and ``rng``, never on the data behind ``f``, so they cost no privacy.
    n_threads : int, optional
        Threads for the facility-location closed form (the other methods ignore it); default
        ``min(4, os.cpu_count())``. The result does not depend on it: the row blocks are fixed
        and summed in order.

    Returns
    -------
    MultilinearEstimate
        ``estimate`` and ``standard_error`` are float64 arrays of shape ``(n,)``.

    Notes
    -----
    Facility location, :math:`F(S) = \sum_i w_i \max_{j \in S} s_{ij}` (0 on the empty set):
    with client ``i``'s candidates sorted by decreasing similarity
    :math:`s_{(1)} \ge s_{(2)} \ge \dots` and :math:`P_r = \prod_{q<r} (1 - x_{(q)})`,
    :math:`\partial_{(r)} = P_r \,(s_{(r)} - T_r)` where
    :math:`T_r = \sum_{r' > r} s_{(r')} x_{(r')} \prod_{r<q<r'} (1 - x_{(q)})` is the expected
    maximum of the lower-ranked candidates. One argsort per row, a cumulative product and a
    reversed cumulative sum give every partial derivative in :math:`O(N n \log n)` time, without
    a loop over clients. Rows are processed in blocks of about :math:`2^{20}` entries, so the
    temporaries take about 100 MB per thread whatever ``N``; sparse similarities are padded per
    block to the block's largest row.

    Weighted coverage, :math:`F(S) = \sum_u w_u [u \in \bigcup_{j \in S} A_j]`:
    :math:`\partial_e f = \sum_{u \in A_e} w_u \prod_{e' \ne e,\, u \in A_{e'}} (1 - x_{e'})`,
    in :math:`O(\mathrm{nnz})` with log-space products (coordinates equal to 1 are counted apart).

    Examples
    --------
    >>> import numpy as np
    >>> from dpsubmod.functions import Coverage
    >>> f = Coverage(np.array([[1, 1], [0, 1]]))
    >>> multilinear_gradient(f, [0.5, 0.5]).estimate
    array([1.5, 0.5])
    """
    f, xv, how, n_samples = _iv(f, x, method, n_samples, "multilinear_gradient", gradient=True)
    if n_threads is not None:
        n_threads = check_int(n_threads, "n_threads", low=1, caller="multilinear_gradient")
    n = f.n
    if how == "closed-form":
        g = _closed_gradient(f, xv, n_threads)
        f.evaluations += n
        return MultilinearEstimate(g, np.zeros(n), 0, how, n)
    if how == "enumeration":
        table = _value_table(f)
        g = np.empty(n)
        for e in range(n):
            hi, lo = xv.copy(), xv.copy()
            hi[e], lo[e] = 1.0, 0.0
            g[e] = _contract(table, hi) - _contract(table, lo)
        return MultilinearEstimate(g, np.zeros(n), 0, how, table.size)
    gen = as_generator(rng)
    d = _sampled_differences(f, xv, gen, n_samples)
    f.evaluations += n_samples * (n + 1)
    est = d.mean(axis=0)
    se = d.std(axis=0, ddof=1) / math.sqrt(n_samples) if n_samples > 1 else np.full(n, np.inf)
    return MultilinearEstimate(est, se, n_samples, how, n_samples * (n + 1))


# -- validation ----------------------------------------------------------------------------------

def _iv(f: object, x: object, method: object, n_samples: object, caller: str, *,
        gradient: bool) -> tuple[SetFunction, np.ndarray, str, int]:
    if not isinstance(f, SetFunction):
        raise ParameterTypeError(
            f"The 'f' parameter of {caller} must be a dpsubmod SetFunction; got "
            f"{type(f).__name__}. Wrap your function in a family from dpsubmod.functions or "
            "subclass SetFunction."
        )
    xv = check_finite(x, "x", caller=caller, ndim=1).astype(np.float64)
    if xv.shape != (f.n,):
        raise GroundSetMismatchError(
            f"The 'x' argument of {caller} must have shape ({f.n},), one coordinate per element "
            f"of the ground set of f; got shape {xv.shape}."
        )
    if xv.size and (xv.min() < 0.0 or xv.max() > 1.0):
        raise ValidationError(
            f"The 'x' argument of {caller} must lie in [0, 1]^n; its range is "
            f"[{xv.min()!r}, {xv.max()!r}]. Clip it with np.clip(x, 0, 1)."
        )
    if method not in ("auto", "exact", "sampling"):
        raise ValidationError(
            f"The 'method' parameter of {caller} must be one of 'auto', 'exact', 'sampling'; "
            f"got {method!r}."
        )
    n_samples = check_int(n_samples, "n_samples", low=2, caller=caller)
    closed = _closed_form(f) is not None
    n = f.n
    if method == "exact":
        if closed:
            how = "closed-form"
        elif n <= MAX_ENUMERATION:
            how = "enumeration"
        else:
            raise ValidationError(
                f"{caller} has no closed form for {type(f).__name__} and will not enumerate "
                f"2^{n} sets (limit n <= {MAX_ENUMERATION}). Pass method='sampling' or register "
                "a closed form with register_closed_form."
            )
    elif method == "sampling":
        how = "sampling"
    else:
        sample_cost = n_samples * (n + 1) if gradient else n_samples
        if closed:
            how = "closed-form"
        elif n <= MAX_ENUMERATION and 2 ** n <= sample_cost:
            how = "enumeration"
        else:
            how = "sampling"
    return f, xv, how, n_samples


# -- enumeration ---------------------------------------------------------------------------------

def _value_table(f: SetFunction) -> np.ndarray:
    """``F`` on every subset; entry ``m`` is the set whose bit ``i`` says ``i in S``."""
    n = f.n
    bits = (np.arange(2 ** n)[:, None] >> np.arange(n)[None, :]) & 1
    table = np.fromiter((f._value(row.astype(bool)) for row in bits), dtype=np.float64,
                        count=2 ** n)
    f.evaluations += 2 ** n
    return table


def _contract(table: np.ndarray, x: np.ndarray) -> float:
    """``sum_S F(S) P(S)`` by contracting one element (the lowest bit) at a time."""
    v = table
    for xe in x:
        v = v.reshape(-1, 2) @ np.array([1.0 - xe, xe])
    return float(v[0])


# -- sampling with common random numbers ---------------------------------------------------------

def _sampled_differences(f: SetFunction, x: np.ndarray, gen: np.random.Generator,
                         n_samples: int) -> np.ndarray:
    """``D[s, e] = F(R_s + e) - F(R_s - e)`` for sets ``R_s ~ x`` shared by all coordinates."""
    n = f.n
    masks = gen.random((n_samples, n)) < x
    out = np.empty((n_samples, n))
    counter = f.evaluations
    for s, mask in enumerate(masks):
        st = f.state()
        inside = np.flatnonzero(mask)
        for e in inside:
            st.add(int(e))
        outside = np.flatnonzero(~mask)
        if outside.size:
            out[s, outside] = st.gains(outside)
        base = st.value
        for e in inside:
            mask[e] = False
            out[s, e] = base - f._value(mask)
            mask[e] = True
    # The counter is set by the caller from the formula N (n + 1) (one F(R_s) and one
    # evaluation per coordinate), whatever the family's state happened to count.
    f.evaluations = counter
    return out


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




# -- closed forms: combinators -------------------------------------------------------------------

def _closed_value(f: SetFunction, x: np.ndarray) -> float:
    return float(_closed_form(f)[0](f, x))  # type: ignore[index]


def _closed_gradient(f: SetFunction, x: np.ndarray, n_threads: int | None = None) -> np.ndarray:
    grad_fn = _closed_form(f)[1]  # type: ignore[index]
    if grad_fn in _TAKES_THREADS:
        return np.asarray(grad_fn(f, x, n_threads=n_threads), dtype=np.float64)
    return np.asarray(grad_fn(f, x), dtype=np.float64)


def _sum_value(f: SetFunction, x: np.ndarray) -> float:
    return float(sum(c * _closed_value(g, x)
                     for c, g in zip(f.weights, f.functions)))  # type: ignore[attr-defined]


def _sum_gradient(f: SetFunction, x: np.ndarray, *, n_threads: int | None = None) -> np.ndarray:
    out = np.zeros(f.n)
    for c, g in zip(f.weights, f.functions):  # type: ignore[attr-defined]
        out += c * _closed_gradient(g, x, n_threads)
    return out


def _scaled_value(f: SetFunction, x: np.ndarray) -> float:
    return f.c * _closed_value(f.f, x)  # type: ignore[attr-defined]


def _scaled_gradient(f: SetFunction, x: np.ndarray, *, n_threads: int | None = None
                     ) -> np.ndarray:
    return f.c * _closed_gradient(f.f, x, n_threads)  # type: ignore[attr-defined]


def _lift(f: SetFunction, x: np.ndarray) -> np.ndarray:
    # Elements outside the restriction never enter: coordinate 0 in the inner function.
    full = np.zeros(f.f.n)  # type: ignore[attr-defined]
    full[f.subset] = x  # type: ignore[attr-defined]
    return full


def _restricted_value(f: SetFunction, x: np.ndarray) -> float:
    return _closed_value(f.f, _lift(f, x))  # type: ignore[attr-defined]


def _restricted_gradient(f: SetFunction, x: np.ndarray, *, n_threads: int | None = None
                         ) -> np.ndarray:
    inner = _closed_gradient(f.f, _lift(f, x), n_threads)  # type: ignore[attr-defined]
    return inner[f.subset]  # type: ignore[attr-defined]


# Built-in gradients that pass the thread count down (user-registered ones take (f, x) only).
_TAKES_THREADS = {_facility_gradient, _sum_gradient, _scaled_gradient, _restricted_gradient}
