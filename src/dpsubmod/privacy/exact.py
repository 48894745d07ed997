"""Exact samplers and exact grid arithmetic: the pure-Python engine of the secure backend.

The samplers follow Canonne, Kamath and Steinke (2020): Bernoulli(exp(-gamma)) for rational
gamma, geometric, discrete Laplace and discrete Gaussian, using only uniform integers from a
random source (``randrange(n)``) and :class:`fractions.Fraction` arithmetic, so no ``exp`` or
``log`` is evaluated in floating point.

The grid helpers round reals to a power-of-two grid ``g Z`` exactly
(``N(x) = floor(x / g + 1/2)``), vectorised where floating point is provably exact and in rational
arithmetic otherwise, and round derived bounds in the safe direction.

References
----------
.. [CKS20] C. L. Canonne, G. Kamath, T. Steinke. The Discrete Gaussian for Differential Privacy.
   NeurIPS 2020 (arXiv:2004.00010), Algorithms 1-3.
"""

from __future__ import annotations

import math
import secrets
import sys
from collections.abc import Iterable
from fractions import Fraction
from typing import Any

import numpy as np

from ..errors import ValidationError

__all__ = [
    "bernoulli",
    "exact_sum",
    "bernoulli_exp",
    "geometric_exp",
    "discrete_laplace",
    "discrete_gaussian",
    "grid_units",
    "grid_units_int64",
    "pow2_exponent",
    "UNIT_LIMIT",
]

#: Largest magnitude of a grid unit held in 64-bit integers: sums and differences of two such
#: values, and the noise of any practical scale, stay inside the int64 range.
UNIT_LIMIT = 2**62


def _source_or_default(source: Any) -> Any:
    return secrets.SystemRandom() if source is None else source


def bernoulli(p: Fraction, source: Any = None) -> bool:
    """An exact Bernoulli(``p``) draw for rational ``p`` in [0, 1].

    Parameters
    ----------
    p : fractions.Fraction
    source : object with ``randrange(n)``, default=None
        ``None`` means :class:`secrets.SystemRandom`.
    """
    p = Fraction(p)
    src = _source_or_default(source)
    return src.randrange(p.denominator) < p.numerator


def _bernoulli_exp_le1(gamma: Fraction, src: Any) -> bool:
    # Bernoulli(exp(-gamma)) for gamma in [0, 1]: draw A_k ~ Bernoulli(gamma / k) for
    # k = 1, 2, ... until the first failure; the index of that failure is odd with
    # probability exp(-gamma) [CKS20, Algorithm 1].
    k = 1
    while True:
        p = gamma / k
        if src.randrange(p.denominator) >= p.numerator:
            return k % 2 == 1
        k += 1


def bernoulli_exp(gamma: Fraction, source: Any = None) -> bool:
    """An exact Bernoulli(exp(-``gamma``)) draw for rational ``gamma >= 0`` [CKS20, Algorithm 1].

    Uses only uniform integers from ``source``; no floating point. Expected cost is O(1)
    uniform draws whatever ``gamma`` is (for ``gamma > 1`` it stops at the first of
    ``floor(gamma)`` Bernoulli(exp(-1)) failures).
    """
    gamma = Fraction(gamma)
    if gamma < 0:
        raise ValidationError(f"bernoulli_exp needs gamma >= 0; got {gamma}.")
    src = _source_or_default(source)
    while gamma > 1:
        if not _bernoulli_exp_le1(Fraction(1), src):
            return False
        gamma -= 1
    return _bernoulli_exp_le1(gamma, src)


def geometric_exp(x: Fraction, source: Any = None) -> int:
    """An exact geometric draw, ``P[k] = (1 - exp(-x)) exp(-x k)`` for ``k >= 0`` [CKS20, Alg. 2].

    ``x`` is a positive rational ``s / t``: a uniform ``u`` in ``{0..t-1}`` is accepted with
    probability ``exp(-u / t)``, ``v`` is geometric with parameter ``exp(-1)``, and
    ``floor((v t + u) / s)`` has the required law.
    """
    x = Fraction(x)
    if x <= 0:
        raise ValidationError(f"geometric_exp needs x > 0; got {x}.")
    src = _source_or_default(source)
    s, t = x.numerator, x.denominator
    while True:
        u = src.randrange(t)
        if bernoulli_exp(Fraction(u, t), src):
            break
    v = 0
    while bernoulli_exp(Fraction(1), src):
        v += 1
    return (v * t + u) // s


def discrete_laplace(scale: Fraction, source: Any = None) -> int:
    """An exact discrete Laplace draw: ``P[z] proportional to exp(-|z| / scale)`` on the integers.

    [CKS20, Algorithm 2]. Adding it to an integer-valued query of sensitivity ``D`` (an
    integer) is ``D / scale``-DP.
    """
    scale = Fraction(scale)
    if scale <= 0:
        raise ValidationError(f"discrete_laplace needs scale > 0; got {scale}.")
    src = _source_or_default(source)
    inv = 1 / scale
    while True:
        negative = src.randrange(2) == 1
        magnitude = geometric_exp(inv, src)
        if negative and magnitude == 0:
            continue  # zero would otherwise be drawn twice as often as it should
        return -magnitude if negative else magnitude


def discrete_gaussian(sigma2: Fraction, source: Any = None) -> int:
    """An exact discrete Gaussian draw: ``P[z] proportional to exp(-z**2 / (2 sigma2))``.

    [CKS20, Algorithm 3]: a discrete Laplace proposal of scale ``t = floor(sqrt(sigma2)) + 1``
    accepted with probability ``exp(-(|y| - sigma2 / t)**2 / (2 sigma2))``. Adding it to an
    integer vector query of l2 sensitivity ``D`` is ``D**2 / (2 sigma2)``-zCDP [CKS20, Thm 4].
    """
    sigma2 = Fraction(sigma2)
    if sigma2 <= 0:
        raise ValidationError(f"discrete_gaussian needs sigma2 > 0; got {sigma2}.")
    src = _source_or_default(source)
    t = math.isqrt(sigma2.numerator // sigma2.denominator) + 1
    while True:
        y = discrete_laplace(Fraction(t), src)
        bias = (abs(y) - sigma2 / t) ** 2 / (2 * sigma2)
        if bernoulli_exp(bias, src):
            return y


# =============================================================================================
# exact grid arithmetic
# =============================================================================================
def pow2_exponent(g: Fraction) -> int:
    """``e`` with ``g = 2**e`` for a power of two ``g``."""
    if g.numerator == 1:
        return -(g.denominator.bit_length() - 1)
    return g.numerator.bit_length() - 1


def grid_units_int64(values: np.ndarray, g: Fraction) -> np.ndarray | None:
    """``floor(x / g + 1/2)`` for every ``x``, as int64, or ``None`` when it cannot be exact.

    Exact whenever it returns: ``g`` is a power of two, so ``u = x / g`` is computed without
    rounding unless it leaves the normal floating-point range, which the round trip
    ``u * g == x`` detects. Then ``f = floor(u)`` is exact, ``u - f`` is exact (Sterbenz's lemma
    for ``|u| >= 1``; for ``u`` in ``(-1, 0)`` the difference ``1 + u`` is exact when it is below
    1/2, and rounding cannot carry it across 1/2 otherwise), and ``N(x) = f + [u - f >= 1/2]``.
    ``None`` also when some ``|N(x)|`` would reach :data:`UNIT_LIMIT`.
    """
    x = np.asarray(values, dtype=float).ravel()
    e = pow2_exponent(g)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        u = np.ldexp(x, -e)
        ok = bool(np.all(np.abs(u) < UNIT_LIMIT)) and bool(np.array_equal(np.ldexp(u, e), x))
    if not ok:
        return None
    f = np.floor(u)
    return (f + (u - f >= 0.5)).astype(np.int64)


def grid_units(values: np.ndarray, g: Fraction) -> list[int]:
    """``floor(x / g + 1/2)`` for every ``x``, as exact Python integers (any magnitude)."""
    fast = grid_units_int64(values, g)
    if fast is not None:
        return fast.tolist()
    half = Fraction(1, 2)
    return [math.floor(Fraction(float(x)) / g + half)
            for x in np.asarray(values, dtype=float).ravel()]


def units_to_float(units: Any, g: Fraction) -> np.ndarray:
    """``n * g`` rounded to the nearest float, for integers ``n`` (the release in real units)."""
    arr = np.asarray(units)
    if arr.dtype == np.int64:
        # float(n) rounds to nearest and scaling by a power of two is exact in the normal
        # range, so this equals float(n * g).
        out = np.ldexp(arr.astype(float), pow2_exponent(g))
        tiny = np.finfo(float).tiny  # below it a second rounding could differ from float(n * g)
        if np.all(np.isfinite(out)) and not np.any((out != 0.0) & (np.abs(out) < tiny)):
            return out
    return np.array([float(int(n) * g) for n in np.ravel(units)])


def ceil_fraction(x: Fraction) -> int:
    """``ceil(x)`` for a rational ``x``."""
    return -((-x.numerator) // x.denominator)


def sqrt_up(d: int) -> Fraction:
    """A rational upper bound on ``sqrt(d)``, exact for perfect squares, else within 2**-40."""
    r = math.isqrt(d)
    if r * r == d:
        return Fraction(r)
    return Fraction(math.isqrt(d << 80) + 1, 1 << 40)


def exact_sum(counts: Iterable[int], values: Iterable[float]) -> Fraction:
    """``sum n_i x_i`` exactly, over the rationals the floats stand for (finite values only)."""
    return sum((Fraction(n) * Fraction(x) for n, x in zip(counts, values)), Fraction(0))


def float_up(x: Fraction) -> float:
    """The smallest float ``>= x`` (within one ulp); ``inf`` above the float range."""
    try:
        f = float(x)
    except OverflowError:  # |x| beyond the largest float
        return math.inf if x > 0 else -sys.float_info.max
    return f if Fraction(f) >= x else math.nextafter(f, math.inf)


def float_down(x: Fraction) -> float:
    """The largest float ``<= x`` (within one ulp); the largest finite float above the range."""
    try:
        f = float(x)
    except OverflowError:  # |x| beyond the largest float
        return sys.float_info.max if x > 0 else -math.inf
    return f if Fraction(f) <= x else math.nextafter(f, -math.inf)


def pow2_text(g: float | Fraction) -> str:
    """``2^e`` written out for a power of two."""
    g = Fraction(g)
    if g.numerator == 1:
        return f"2^-{g.denominator.bit_length() - 1}"
    return f"2^{g.numerator.bit_length() - 1}"
