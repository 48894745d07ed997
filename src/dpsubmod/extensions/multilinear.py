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
from dataclasses import dataclass
from typing import Literal

import numpy as np

from .._rng import RNGLike, as_generator
from .._validation import check_finite, check_int
from ..errors import GroundSetMismatchError, ParameterTypeError, ValidationError
from ..functions.base import SetFunction
from ._closed_forms import (
    closed_gradient,
    closed_gradients,
    closed_value,
    has_closed_form,
)

Method = Literal["auto", "exact", "sampling"]

#: Largest ground set the "exact" method enumerates when no closed form exists.
MAX_ENUMERATION = 20



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
        val = closed_value(f, xv)
        f.evaluations += 1
        return MultilinearEstimate(val, 0.0, 0, how, 1)
    if how == "enumeration":
        table = _value_table(f)
        val = float(_contract(table, xv))
        return MultilinearEstimate(val, 0.0, 0, how, table.size)
    gen = as_generator(rng)
    masks = gen.random((n_samples, f.n)) < xv
    vals = f.values(masks)
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
        g = closed_gradient(f, xv, n_threads)
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


def multilinear_gradients(f: SetFunction, X: object, *, method: Method = "auto",
                          n_samples: int = 200, rng: RNGLike = None) -> np.ndarray:
    r"""Gradients :math:`\nabla f(x)` of the multilinear extension at every row of ``X``.

    The points of a Frank-Wolfe path (online Meta-Frank-Wolfe evaluates ``K`` of them per
    round) in one call: a family with a closed form computes all rows in vectorised kernels
    (modular functions, weighted coverage, dense facility location, and their sums, scalings and
    restrictions; see :func:`register_closed_form`), any other function row by row through
    :func:`multilinear_gradient` with ``method``, ``n_samples`` and ``rng``.

    Parameters
    ----------
    f : SetFunction
    X : array-like of float, shape (m, n)
        Points of :math:`[0, 1]^n`, one per row.
    method : {"auto", "exact", "sampling"}, default="auto"
        As in :func:`multilinear_gradient`; ``"auto"`` and ``"exact"`` use the closed form when
        there is one.
    n_samples : int, default=200
        Sample size of sampled rows.
    rng : int, Generator or None, default=None
        Randomness of sampled rows (data-independent).

    Returns
    -------
    ndarray of float64, shape (m, n)
        Counts ``m n`` evaluations for the closed forms (one per partial derivative).

    Examples
    --------
    >>> from dpsubmod.functions import Modular
    >>> multilinear_gradients(Modular([1.0, 2.0]), [[0.0, 0.5], [1.0, 1.0]]).tolist()
    [[1.0, 2.0], [1.0, 2.0]]
    """
    caller = "multilinear_gradients"
    if not isinstance(f, SetFunction):
        raise ParameterTypeError(
            f"The 'f' parameter of {caller} must be a dpsubmod SetFunction; got "
            f"{type(f).__name__}."
        )
    Xa = check_finite(X, "X", caller=caller, ndim=2).astype(np.float64)
    if Xa.shape[1] != f.n:
        raise GroundSetMismatchError(
            f"The 'X' argument of {caller} must have shape (m, {f.n}), one column per element "
            f"of the ground set of f; got shape {Xa.shape}."
        )
    if Xa.size and (Xa.min() < 0.0 or Xa.max() > 1.0):
        raise ValidationError(
            f"The rows of 'X' given to {caller} must lie in [0, 1]^n; clip them with "
            "numpy.clip(X, 0, 1) first."
        )
    if method != "sampling" and has_closed_form(f):
        G = closed_gradients(f, Xa)
        f.evaluations += Xa.size
        return G
    gen = as_generator(rng)
    G = np.empty_like(Xa)
    for r in range(Xa.shape[0]):
        G[r] = multilinear_gradient(f, Xa[r], method=method, n_samples=n_samples, rng=gen,
                                    n_threads=1).estimate
    return G


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
    closed = has_closed_form(f)
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
    bits = ((np.arange(2 ** n)[:, None] >> np.arange(n)[None, :]) & 1).astype(bool)
    table = f.values(bits)
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
        if inside.size:
            # R_s - e for every e in R_s, evaluated as one batch
            minus = np.repeat(mask[None, :], inside.size, axis=0)
            minus[np.arange(inside.size), inside] = False
            out[s, inside] = st.value - f.values(minus)
    # The counter is set by the caller from the formula N (n + 1) (one F(R_s) and one
    # evaluation per coordinate), whatever the family's state happened to count.
    f.evaluations = counter
    return out
