"""Noise backends: where the randomness of every mechanism comes from.

Two backends implement one small interface (:class:`NoiseBackend`), and every mechanism in
:mod:`dpsubmod.privacy.mechanisms` routes all of its sampling through one of them.

:class:`NumpyBackend`
    Fast and reproducible: the noise comes from a seeded :class:`numpy.random.Generator` in
    floating point. Use it for simulations, experiments and tests. Its guarantees hold for the
    idealised real-valued mechanisms; floating-point samplers are open to the attacks of
    Mironov (2012) and later work, and numpy generators are not cryptographic. **It is not
    secure** and must not protect real people's data.

:class:`SecureBackend`
    Exact sampling on a cryptographic random source (:class:`secrets.SystemRandom`), in pure
    Python with :class:`fractions.Fraction` arithmetic, following Canonne, Kamath and Steinke
    (2020): Bernoulli(exp(-gamma)) for rational gamma, geometric, discrete Laplace and discrete
    Gaussian samplers. Real inputs are first rounded to a grid ``g * Z`` with ``g`` a power of
    two (the *granularity*), integer noise is added in grid units, and the release is the grid
    point, converted to float only at the end (post-processing). Selection mechanisms
    (exponential mechanism, report-noisy-max, permute-and-flip) run on the grid-rounded scores
    with exact rational acceptance tests, so no ``exp`` or ``log`` is evaluated in floating point
    on a privacy path. The guarantee is exact: the release is eps-DP (or rho-zCDP) with the
    sensitivity measured in grid units and rounded up (see
    :meth:`SecureBackend.effective_sensitivity`).
    Not covered: timing side channels (the rejection samplers' running time depends on the
    noise and the scores), and the l2 ("high-dimensional") Laplace mechanism, for which no
    exact sampler is implemented (it is refused).

Grid rounding and sensitivity (used by :class:`SecureBackend`). A real ``x`` is mapped to the
integer ``N(x) = floor(x / g + 1/2)``, computed exactly. For reals with ``|x - x'| <= D``,
``|N(x) - N(x')| <= ceil(D / g)`` because ``floor(u + D) <= floor(u) + ceil(D)``. Hence

* a scalar (or l-infinity, per coordinate) sensitivity ``D`` becomes ``ceil(D / g)`` grid units;
* an l1 sensitivity ``D`` over ``d`` coordinates becomes at most ``ceil(D / g) + d - 1`` units
  (each coordinate adds less than one unit of rounding);
* an l2 sensitivity ``D`` becomes at most ``D / g + sqrt(d)`` units;
* if every score difference ``q_D(c) - q_D'(c)`` lies in an interval of width ``R``, the rounded
  differences lie in an integer interval of width at most ``ceil(R / g) + 1``.

So, calibrated with the effective sensitivity (about ``D + g``), the mechanisms keep their exact
eps: this is the "calibrate with Delta + g" rule. With the default granularity,
``g = 2**(floor(log2(D / d)) - 20)``, the inflation is at most ``2**-20`` relative (``2**-19``
for a bounded range).

References
----------
.. [CKS20] C. L. Canonne, G. Kamath, T. Steinke. The Discrete Gaussian for Differential Privacy.
   NeurIPS 2020 (arXiv:2004.00010), Algorithms 1-3.
.. [Mir12] I. Mironov. On Significance of the Least Significant Bits for Differential Privacy.
   CCS 2012.
.. [Ilv20] C. Ilvento. Implementing the Exponential Mechanism with Base-2 Differential Privacy.
   CCS 2020.
"""

from __future__ import annotations

import math
import secrets
from abc import ABC, abstractmethod
from fractions import Fraction
from typing import Any

import numpy as np

from .._rng import RNGLike, as_generator, standard_gumbel
from ..errors import ParameterTypeError, ValidationError

__all__ = [
    "NoiseBackend",
    "NumpyBackend",
    "SecureBackend",
    "BACKENDS",
    "resolve_backend",
    "bernoulli",
    "bernoulli_exp",
    "geometric_exp",
    "discrete_laplace",
    "discrete_gaussian",
    "DEFAULT_GRID_BITS",
]

#: Bits of resolution below ``sensitivity / dim`` used by the secure backend's default grid.
DEFAULT_GRID_BITS = 20

_SENSITIVITY_KINDS = ("linf", "l1", "l2", "range")


class NoiseBackend(ABC):
    """Interface between the mechanisms and a source of randomness.

    A backend draws noise for given noise parameters; it does not validate privacy parameters
    (the mechanisms do, before anything is drawn) and it does not record anything.

    Every sampling method takes ``sensitivity`` (the declared sensitivity of the query, as the
    mechanism was given it). Continuous backends ignore it; grid backends choose their grid from
    it, so that :meth:`effective_sensitivity` and the draw agree on the same grid.

    Attributes
    ----------
    name : str
        Short name recorded in every :class:`~dpsubmod.privacy.accounting.PrivacyEvent` note.
    secure : bool
        Whether the backend is meant to protect real data (exact sampling on a cryptographic
        source).
    discrete : bool
        Whether releases are on a grid (then Gaussian noise is certified through zCDP only).
    """

    name: str = "abstract"
    secure: bool = False
    discrete: bool = False

    # -- calibration --------------------------------------------------------------------------
    def effective_sensitivity(self, sensitivity: float, *, kind: str = "linf",
                              dim: int = 1) -> float:
        """The sensitivity the noise must be calibrated to on this backend.

        Parameters
        ----------
        sensitivity : float
            The declared sensitivity (``kind`` says in which norm).
        kind : {"linf", "l1", "l2", "range"}, default="linf"
            ``"linf"``: a scalar, or each score of a vector; ``"l1"``/``"l2"``: a vector of
            ``dim`` coordinates; ``"range"``: the width of the interval holding every score
            difference (bounded-range exponential mechanism).
        dim : int, default=1
            Number of coordinates of the released vector (``"l1"``, ``"l2"``).

        Returns
        -------
        float
            ``sensitivity`` itself for continuous backends.
        """
        _check_kind(kind)
        return float(sensitivity)

    def label(self, sensitivity: float, *, dim: int = 1) -> str:
        """A short description for ledger notes (name and, for grid backends, the grid)."""
        return self.name

    def quantize_scores(self, scores: np.ndarray, *, sensitivity: float) -> np.ndarray:
        """The scores as the selection samplers see them (grid backends round them).

        ``-inf`` entries stay ``-inf``. Exact output distributions are computed from these.
        """
        return np.array(scores, dtype=float)

    # -- additive noise -----------------------------------------------------------------------
    @abstractmethod
    def add_laplace(self, values: np.ndarray, scale: float, *, sensitivity: float) -> np.ndarray:
        """Return ``values`` plus i.i.d. Laplace(``scale``) noise per coordinate."""

    @abstractmethod
    def add_gaussian(self, values: np.ndarray, sigma: float, *, sensitivity: float) -> np.ndarray:
        """Return ``values`` plus i.i.d. N(0, ``sigma**2``) noise per coordinate."""

    @abstractmethod
    def add_l2_laplace(self, values: np.ndarray, scale: float, *,
                       sensitivity: float) -> np.ndarray:
        """Return ``values`` plus noise of density proportional to ``exp(-||z||_2 / scale)``."""

    # -- selection ----------------------------------------------------------------------------
    @abstractmethod
    def exponential(self, scores: np.ndarray, weight: float, *, sensitivity: float) -> int:
        """Index ``i`` drawn with probability proportional to ``exp(weight * scores[i])``.

        Entries equal to ``-inf`` are never drawn; at least one entry is finite.
        """

    @abstractmethod
    def report_noisy_max(self, scores: np.ndarray, scale: float, *, sensitivity: float) -> int:
        """``argmax_i scores[i] + Laplace(scale)`` (``-inf`` entries never win)."""

    @abstractmethod
    def permute_and_flip(self, scores: np.ndarray, weight: float, *, sensitivity: float) -> int:
        """Permute-and-flip with acceptance probabilities ``exp(weight * (scores[i] - max))``."""


# =============================================================================================
# numpy backend
# =============================================================================================
class NumpyBackend(NoiseBackend):
    """Fast, seeded floating-point noise from a :class:`numpy.random.Generator`.

    For simulation and reproducible experiments only: the samplers work in floating point and
    the generator is not cryptographic, so this backend is **not secure** against an adversary
    who sees the released bits (Mironov 2012). Same seed, same calls, same numpy build: same
    output.

    Parameters
    ----------
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None, default=None
        Resolved once with :func:`dpsubmod._rng.as_generator`; a ``Generator`` is used as is
        (its stream is continued).

    Attributes
    ----------
    generator : numpy.random.Generator
        The generator all draws come from.
    """

    name = "numpy"
    secure = False
    discrete = False

    def __init__(self, rng: RNGLike = None) -> None:
        self.generator = as_generator(rng)

    def __repr__(self) -> str:
        return "NumpyBackend()"

    def add_laplace(self, values: np.ndarray, scale: float, *, sensitivity: float) -> np.ndarray:
        values = np.asarray(values, dtype=float)
        return values + self.generator.laplace(0.0, scale, size=values.shape)

    def add_gaussian(self, values: np.ndarray, sigma: float, *, sensitivity: float) -> np.ndarray:
        values = np.asarray(values, dtype=float)
        return values + self.generator.normal(0.0, sigma, size=values.shape)

    def add_l2_laplace(self, values: np.ndarray, scale: float, *,
                       sensitivity: float) -> np.ndarray:
        values = np.asarray(values, dtype=float)
        d = max(values.size, 1)
        # Uniform direction from a normalised Gaussian; the radius of a density
        # exp(-r/scale) r^(d-1) is Gamma(shape=d, scale=scale).
        while True:
            u = self.generator.standard_normal(d)
            norm = float(np.linalg.norm(u))
            if norm > 0.0:
                break
        r = self.generator.gamma(shape=d, scale=scale)
        return values + (r * u / norm).reshape(values.shape)

    def exponential(self, scores: np.ndarray, weight: float, *, sensitivity: float) -> int:
        q = np.asarray(scores, dtype=float)
        # Gumbel-max in log space: argmax of log-weight + Gumbel noise is an exact draw from
        # the softmax; shifting by the max keeps the log-weights finite and <= 0.
        z = weight * (q - q.max())  # -inf entries cannot be the max: one is finite
        return int(np.argmax(z + standard_gumbel(self.generator, q.shape)))

    def report_noisy_max(self, scores: np.ndarray, scale: float, *, sensitivity: float) -> int:
        q = np.asarray(scores, dtype=float)
        return int(np.argmax(q + self.generator.laplace(0.0, scale, size=q.shape)))

    def permute_and_flip(self, scores: np.ndarray, weight: float, *, sensitivity: float) -> int:
        q = np.asarray(scores, dtype=float)
        # Permute-and-flip has the same output distribution as report-noisy-max with
        # Exponential(1/weight) noise (Ding et al. 2021), which vectorises.
        return int(np.argmax(q + self.generator.exponential(1.0 / weight, size=q.shape)))


# =============================================================================================
# exact samplers (Canonne, Kamath, Steinke 2020)
# =============================================================================================
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
# secure backend
# =============================================================================================
class SecureBackend(NoiseBackend):
    """Exact discrete noise on a cryptographic random source, released on a power-of-two grid.

    Guarantee
        Each release is exactly eps-DP (Laplace, exponential mechanism, report-noisy-max,
        permute-and-flip) or rho-zCDP (Gaussian) with the sensitivity replaced by
        :meth:`effective_sensitivity`, with no floating-point approximation on the privacy path:
        inputs are rounded to the grid ``g * Z`` exactly (rational arithmetic), the integer noise
        comes from the samplers of [CKS20], and selection uses exact Bernoulli(exp(-gamma))
        acceptance tests on the grid-rounded scores. The Gaussian is certified through zCDP
        only (the discrete Gaussian's (eps, delta) curve is not identical to the continuous
        one's), so (eps, delta) requests are calibrated through the zCDP conversion by the
        mechanisms.
    Grid
        ``granularity`` (``g``) must be a power of two. ``None`` picks, per call,
        ``g = 2**(floor(log2(sensitivity / dim)) - DEFAULT_GRID_BITS)``, which depends only on
        public parameters; released values are multiples of ``g``.
    Not covered
        Timing side channels; the l2 ("high-dimensional") Laplace mechanism (refused).

    Parameters
    ----------
    granularity : float or None, default=None
        A power of two, or ``None`` for the default relative grid.
    random_source : object with ``randrange(n)`` or None, default=None
        ``None`` (the default, and the only secure choice) uses :class:`secrets.SystemRandom`.
        A seeded :class:`random.Random` makes draws reproducible for tests; it is not secure,
        and ``secure`` is then False.

    Runtime
        Pure Python with big-integer rationals: tens of microseconds per coordinate or per
        candidate tried; selection among ``m`` candidates tries O(m) candidates in the worst
        case.
    """

    name = "secure"
    discrete = True

    def __init__(self, granularity: float | None = None, *, random_source: Any = None) -> None:
        if granularity is not None:
            if (isinstance(granularity, bool) or not isinstance(granularity, (int, float))
                    or not math.isfinite(granularity) or granularity <= 0
                    or math.frexp(granularity)[0] != 0.5):
                raise ValidationError(
                    "The 'granularity' parameter of SecureBackend must be a positive power of two "
                    f"such as 2**-20; got {granularity!r}."
                )
        if random_source is not None and not callable(getattr(random_source, "randrange", None)):
            raise ParameterTypeError(
                "The 'random_source' parameter of SecureBackend must have a randrange(n) method "
                f"(e.g. secrets.SystemRandom()); got {type(random_source).__name__}."
            )
        self.granularity = granularity
        self._source = secrets.SystemRandom() if random_source is None else random_source
        self.secure = isinstance(self._source, secrets.SystemRandom)

    def __repr__(self) -> str:
        g = "auto" if self.granularity is None else _pow2_text(self.granularity)
        return f"SecureBackend(granularity={g}, secure={self.secure})"

    # -- grid ---------------------------------------------------------------------------------
    def grid(self, sensitivity: float, dim: int = 1) -> Fraction:
        """The granularity ``g`` (exact) used for a query of this sensitivity and dimension."""
        if self.granularity is not None:
            return Fraction(self.granularity)
        # floor(log2(x)) from the binary exponent: x = m * 2**e with m in [0.5, 1).
        _, e = math.frexp(float(sensitivity) / max(int(dim), 1))
        return Fraction(2) ** (e - 1 - DEFAULT_GRID_BITS)

    def label(self, sensitivity: float, *, dim: int = 1) -> str:
        g = self.grid(sensitivity, dim)
        tag = "secure" if self.secure else "secure-algorithm/test-source"
        return f"{tag}(granularity={_pow2_text(g)})"

    def effective_sensitivity(self, sensitivity: float, *, kind: str = "linf",
                              dim: int = 1) -> float:
        _check_kind(kind)
        g = self.grid(sensitivity, dim)
        units = Fraction(sensitivity) / g
        if kind == "linf":
            eff = _ceil(units) * g
        elif kind == "l1":
            eff = (_ceil(units) + max(int(dim), 1) - 1) * g
        elif kind == "range":
            eff = (_ceil(units) + 1) * g
        else:  # l2: D/g + sqrt(d) units; sqrt rounded up so the bound stays an upper bound
            eff = (units + _sqrt_up(max(int(dim), 1))) * g
        return _float_up(eff)

    def quantize_scores(self, scores: np.ndarray, *, sensitivity: float) -> np.ndarray:
        q = np.array(scores, dtype=float)
        finite = np.isfinite(q)
        g = self.grid(sensitivity, 1)
        q[finite] = [float(n * g) for n in self._round(q[finite], g)]
        return q

    def _round(self, values: np.ndarray, g: Fraction) -> list[int]:
        # floor(x / g + 1/2) in exact rational arithmetic (Fraction(float) is exact).
        half = Fraction(1, 2)
        return [math.floor(Fraction(float(x)) / g + half) for x in values.ravel()]

    # -- additive noise -----------------------------------------------------------------------
    def to_units(self, values: np.ndarray, *, sensitivity: float, dim: int) -> list[int]:
        """``values`` rounded to the grid of a ``dim``-dimensional query, as exact integers.

        Sums of such integers are exact, so a stream summed in grid units keeps its declared
        sensitivity whatever the magnitudes (a floating-point sum would not).
        """
        return self._round(np.asarray(values, dtype=float), self.grid(sensitivity, dim))

    def add_laplace_units(self, units: list[int], scale: float, *, sensitivity: float,
                          dim: int) -> np.ndarray:
        """Discrete Laplace noise added to integer grid units; the release in real units."""
        g = self.grid(sensitivity, dim)
        t = Fraction(scale) / g
        return np.array([float((n + discrete_laplace(t, self._source)) * g) for n in units])

    def add_gaussian_units(self, units: list[int], sigma: float, *, sensitivity: float,
                           dim: int) -> np.ndarray:
        """Discrete Gaussian noise added to integer grid units; the release in real units."""
        g = self.grid(sensitivity, dim)
        sigma2 = (Fraction(sigma) / g) ** 2
        return np.array([float((n + discrete_gaussian(sigma2, self._source)) * g)
                         for n in units])

    def add_laplace(self, values: np.ndarray, scale: float, *, sensitivity: float) -> np.ndarray:
        values = np.asarray(values, dtype=float)
        units = self.to_units(values, sensitivity=sensitivity, dim=values.size)
        return self.add_laplace_units(units, scale, sensitivity=sensitivity,
                                      dim=values.size).reshape(values.shape)

    def add_gaussian(self, values: np.ndarray, sigma: float, *, sensitivity: float) -> np.ndarray:
        values = np.asarray(values, dtype=float)
        units = self.to_units(values, sensitivity=sensitivity, dim=values.size)
        return self.add_gaussian_units(units, sigma, sensitivity=sensitivity,
                                       dim=values.size).reshape(values.shape)

    def add_l2_laplace(self, values: np.ndarray, scale: float, *,
                       sensitivity: float) -> np.ndarray:
        raise ValidationError(
            "The secure backend has no exact sampler for the l2 ('high-dimensional') Laplace "
            "mechanism. Use gaussian(...) (exact discrete Gaussian, zCDP), or laplace(...) with "
            "the l1 sensitivity (at most sqrt(d) times the l2 sensitivity), or backend='numpy' "
            "for simulations."
        )

    # -- selection ----------------------------------------------------------------------------
    def _grid_scores(self, scores: np.ndarray, sensitivity: float
                     ) -> tuple[np.ndarray, list[int], Fraction]:
        q = np.asarray(scores, dtype=float)
        idx = np.flatnonzero(np.isfinite(q))
        g = self.grid(sensitivity, 1)
        return idx, self._round(q[idx], g), g

    def exponential(self, scores: np.ndarray, weight: float, *, sensitivity: float) -> int:
        idx, n, g = self._grid_scores(scores, sensitivity)
        top = max(n)
        gamma = Fraction(weight) * g
        gaps = [(top - v) * gamma for v in n]
        src = self._source
        # Rejection sampling with a uniform proposal: accept j with probability
        # exp(-gamma (max - n_j)) <= 1, so the accepted index has the exact softmax law.
        while True:
            j = src.randrange(len(n))
            if bernoulli_exp(gaps[j], src):
                return int(idx[j])

    def report_noisy_max(self, scores: np.ndarray, scale: float, *, sensitivity: float) -> int:
        idx, n, g = self._grid_scores(scores, sensitivity)
        t = Fraction(scale) / g
        noisy = [v + discrete_laplace(t, self._source) for v in n]
        best = max(noisy)
        winners = [j for j, v in enumerate(noisy) if v == best]
        # A uniform tie-break equals adding independent Uniform[0, 1) noise, which keeps the
        # shift bound P[Z + U > x + D] >= exp(-D / t) P[Z + U > x] for integer D.
        return int(idx[winners[self._source.randrange(len(winners))]])

    def permute_and_flip(self, scores: np.ndarray, weight: float, *, sensitivity: float) -> int:
        idx, n, g = self._grid_scores(scores, sensitivity)
        top = max(n)
        gamma = Fraction(weight) * g
        src = self._source
        order = list(range(len(n)))
        for i in range(len(order) - 1, 0, -1):  # Fisher-Yates on the exact source
            k = src.randrange(i + 1)
            order[i], order[k] = order[k], order[i]
        for j in order:
            if bernoulli_exp((top - n[j]) * gamma, src):
                return int(idx[j])
        raise AssertionError("unreachable: a maximal score is accepted with probability 1")


# =============================================================================================
# registry and resolution
# =============================================================================================
BACKENDS: dict[str, type[NoiseBackend]] = {"numpy": NumpyBackend, "secure": SecureBackend}


def resolve_backend(backend: str | NoiseBackend | None = None,
                    rng: RNGLike = None) -> NoiseBackend:
    """Turn the ``backend=`` / ``rng=`` pair of a public function into a :class:`NoiseBackend`.

    Call it once at the entry of an algorithm and pass the result down, so that every
    mechanism of one run draws from one stream.

    Parameters
    ----------
    backend : {"numpy", "secure"}, NoiseBackend or None, default=None
        ``None`` or ``"numpy"``: a :class:`NumpyBackend` on ``rng``. ``"secure"``: a
        :class:`SecureBackend` with the default grid (``rng`` is not used: its randomness
        comes from the operating system's CSPRNG). An instance is returned as is.
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None, default=None
        Only for the numpy backend. Passing it together with a backend instance is an error,
        since the instance already owns its randomness.

    Returns
    -------
    NoiseBackend
    """
    if isinstance(backend, NoiseBackend):
        if rng is not None:
            raise ValidationError(
                f"Both 'backend' (an instance, {backend!r}) and 'rng' were passed; a backend "
                "instance owns its randomness. Pass rng=None, or pass backend='numpy' with rng."
            )
        return backend
    if backend is None or backend == "numpy":
        return NumpyBackend(rng)
    if backend == "secure":
        return SecureBackend()
    if isinstance(backend, str):
        raise ValidationError(
            f"The 'backend' parameter must be one of {sorted(BACKENDS)} or a NoiseBackend "
            f"instance; got {backend!r}."
        )
    raise ParameterTypeError(
        "The 'backend' parameter must be 'numpy', 'secure', a NoiseBackend instance or None; "
        f"got {type(backend).__name__}."
    )


# -- small exact helpers ----------------------------------------------------------------------
def _check_kind(kind: str) -> None:
    if kind not in _SENSITIVITY_KINDS:
        raise ValidationError(
            f"The 'kind' parameter must be one of {list(_SENSITIVITY_KINDS)}; got {kind!r}."
        )


def _ceil(x: Fraction) -> int:
    return -((-x.numerator) // x.denominator)


def _sqrt_up(d: int) -> Fraction:
    r = math.isqrt(d)
    if r * r == d:
        return Fraction(r)
    # An upper bound on sqrt(d) with 2**-40 resolution: isqrt(d * 4**40) / 2**40, plus one ulp.
    return Fraction(math.isqrt(d << 80) + 1, 1 << 40)


def _float_up(x: Fraction) -> float:
    f = float(x)
    return f if Fraction(f) >= x else math.nextafter(f, math.inf)


def _pow2_text(g: float | Fraction) -> str:
    g = Fraction(g)
    if g.numerator == 1:
        return f"2^-{g.denominator.bit_length() - 1}"
    return f"2^{g.numerator.bit_length() - 1}"
