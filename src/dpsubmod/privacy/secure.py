"""The secure noise backend: exact discrete noise on a power-of-two grid, drawn by OpenDP when it
is installed and by dpsubmod's exact pure-Python samplers otherwise.

Grid rounding and sensitivity. A real ``x`` is mapped to the integer ``N(x) = floor(x / g + 1/2)``,
computed exactly. For reals with ``|x - x'| <= D``, ``|N(x) - N(x')| <= ceil(D / g)`` because
``floor(u + D) <= floor(u) + ceil(D)``. Hence

* a scalar (or l-infinity, per coordinate) sensitivity ``D`` becomes ``ceil(D / g)`` grid units;
* an l1 sensitivity ``D`` over ``d`` coordinates becomes at most ``ceil(D / g) + d - 1`` units
  (each coordinate adds less than one unit of rounding);
* an l2 sensitivity ``D`` becomes at most ``D / g + sqrt(d)`` units;
* if every score difference ``q_D(c) - q_D'(c)`` lies in an interval of width ``R``, the rounded
  differences lie in an integer interval of width at most ``ceil(R / g) + 1``.

So, calibrated with the effective sensitivity (about ``D + g``), the mechanisms keep their exact
eps: this is the "calibrate with Delta + g" rule. With the default granularity,
``g = 2**(floor(log2(D / d)) - 20)``, the inflation is at most ``2**-20`` relative (``2**-19``
for a bounded range). Both engines draw on these integers, so they release the same law.

References
----------
.. [CKS20] C. L. Canonne, G. Kamath, T. Steinke. The Discrete Gaussian for Differential Privacy.
   NeurIPS 2020 (arXiv:2004.00010).
.. [Mir12] I. Mironov. On Significance of the Least Significant Bits for Differential Privacy.
   CCS 2012.
.. [Ilv20] C. Ilvento. Implementing the Exponential Mechanism with Base-2 Differential Privacy.
   CCS 2020.
"""

from __future__ import annotations

import math
import secrets
from fractions import Fraction
from typing import Any

import numpy as np

from .._version import __version__
from ..errors import ParameterTypeError, ValidationError
from . import opendp_engine
from ._noise_backend import NoiseBackend, Release, check_kind
from .events import rho_exponential
from .exact import (
    UNIT_LIMIT,
    bernoulli_exp,
    ceil_fraction,
    discrete_gaussian,
    discrete_laplace,
    float_up,
    grid_units,
    grid_units_int64,
    pow2_exponent,
    pow2_text,
    sqrt_up,
    units_to_float,
)

__all__ = ["SecureBackend", "DEFAULT_GRID_BITS", "ENGINES", "python_engine_name"]

#: Bits of resolution below ``sensitivity / dim`` used by the secure backend's default grid.
DEFAULT_GRID_BITS = 20
#: Engines a :class:`SecureBackend` can be asked for.
ENGINES = ("auto", "opendp", "python")


def python_engine_name() -> str:
    """Label of dpsubmod's own exact samplers, with dpsubmod's version."""
    return f"python-dpsubmod-{__version__}"


class SecureBackend(NoiseBackend):
    """Exact discrete noise on a cryptographic random source, released on a power-of-two grid.

    Guarantee
        Each release is exactly eps-DP (Laplace, exponential mechanism, report-noisy-max,
        permute-and-flip) or rho-zCDP (Gaussian) with the sensitivity replaced by
        :meth:`effective_sensitivity`, with no floating-point approximation on the privacy path:
        inputs are rounded to the grid ``g * Z`` exactly, integer noise is added in grid units,
        and selection uses exact Bernoulli(exp(-gamma)) acceptance tests on the grid-rounded
        scores. The Gaussian is certified through zCDP only (the discrete Gaussian's
        (eps, delta) curve is not identical to the continuous one's), so (eps, delta) requests
        are calibrated through the zCDP conversion by the mechanisms.
    Engines
        ``"opendp"``: every draw goes through an OpenDP measurement on the integer grid units,
        whose privacy map is checked against the charge before the first draw (see
        :mod:`~dpsubmod.privacy.opendp_engine`); it needs the ``[secure]`` extra.
        ``"python"``: dpsubmod's pure-Python exact samplers [CKS20] on
        :class:`secrets.SystemRandom`. ``"auto"``: OpenDP when it is installed, else Python.
        The engine and its version are written into every event's note
        (``backend=secure(granularity=2^-20)@opendp-0.16.0``) and into privacy reports.
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
        Source of the pure-Python engine. ``None`` (the only secure choice) uses
        :class:`secrets.SystemRandom`; a seeded :class:`random.Random` makes draws reproducible
        for tests (then ``secure`` is False, and the engine is Python).
    engine : {"auto", "opendp", "python"}, default="auto"
        Which engine draws. ``"opendp"`` without OpenDP raises
        :class:`~dpsubmod.errors.MissingDependencyError` with the install command; so does
        ``"auto"`` when an OpenDP too old for dpsubmod is installed.

    Attributes
    ----------
    engine : str
        The engine that draws, with its version (``"opendp-0.16.0"`` or
        ``"python-dpsubmod-0.1.0"``).

    Runtime
        OpenDP: a few milliseconds per selection over 10**4 candidates. Python: big-integer
        rationals, tens of microseconds per coordinate or candidate tried.
    """

    name = "secure"
    discrete = True

    def __init__(self, granularity: float | None = None, *, random_source: Any = None,
                 engine: str = "auto") -> None:
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
        if not isinstance(engine, str) or engine not in ENGINES:
            raise ValidationError(
                f"The 'engine' parameter of SecureBackend must be one of {list(ENGINES)}; got "
                f"{engine!r}."
            )
        if engine == "opendp" and random_source is not None:
            raise ValidationError(
                "SecureBackend(engine='opendp') draws from OpenDP's own cryptographic source; "
                "drop 'random_source', or pass engine='python' to use a given source."
            )
        self.granularity = granularity
        self._source = secrets.SystemRandom() if random_source is None else random_source
        self._opendp = None
        if engine == "opendp" or (engine == "auto" and random_source is None):
            self._opendp = opendp_engine.load(required=engine == "opendp")
        self._python = python_engine_name()
        self.engine = self._opendp.name if self._opendp is not None else self._python
        self.secure = isinstance(self._source, secrets.SystemRandom)

    def __repr__(self) -> str:
        g = "auto" if self.granularity is None else pow2_text(self.granularity)
        return f"SecureBackend(granularity={g}, engine={self.engine!r}, secure={self.secure})"

    # -- grid ---------------------------------------------------------------------------------
    def grid(self, sensitivity: float, dim: int = 1) -> Fraction:
        """The granularity ``g`` (exact) used for a query of this sensitivity and dimension."""
        if self.granularity is not None:
            return Fraction(self.granularity)
        # floor(log2(x)) from the binary exponent: x = m * 2**e with m in [0.5, 1).
        _, e = math.frexp(float(sensitivity) / max(int(dim), 1))
        return Fraction(2) ** (e - 1 - DEFAULT_GRID_BITS)

    def label(self, sensitivity: float, *, dim: int = 1, engine: str | None = None) -> str:
        g = self.grid(sensitivity, dim)
        tag = "secure" if self.secure else "secure-algorithm/test-source"
        return f"{tag}(granularity={pow2_text(g)})@{engine or self.engine}"

    def _units(self, sensitivity: float, kind: str, dim: int,
               grid_of: float | None = None) -> Fraction:
        """The effective sensitivity in grid units (exact; an upper bound for ``"l2"``)."""
        units = Fraction(sensitivity) / self.grid(sensitivity if grid_of is None else grid_of,
                                                  dim)
        d = max(int(dim), 1)
        if kind == "linf":
            return Fraction(ceil_fraction(units))
        if kind == "l1":
            return Fraction(ceil_fraction(units) + d - 1)
        if kind == "range":
            return Fraction(ceil_fraction(units) + 1)
        return units + sqrt_up(d)  # l2; sqrt rounded up so the bound stays an upper bound

    def effective_sensitivity(self, sensitivity: float, *, kind: str = "linf",
                              dim: int = 1, grid_of: float | None = None) -> float:
        check_kind(kind)
        g = self.grid(sensitivity if grid_of is None else grid_of, dim)
        return float_up(self._units(sensitivity, kind, dim, grid_of) * g)

    def quantize_scores(self, scores: np.ndarray, *, sensitivity: float) -> np.ndarray:
        q = np.array(scores, dtype=float)
        finite = np.isfinite(q)
        g = self.grid(sensitivity, 1)
        q[finite] = [float(n * g) for n in self._round(q[finite], g)]
        return q

    def _round(self, values: np.ndarray, g: Fraction) -> list[int]:
        # floor(x / g + 1/2), exact (vectorised where floating point is exact).
        return grid_units(values, g)

    def _opendp_units(self, values: np.ndarray, g: Fraction, scale_units: Fraction
                      ) -> np.ndarray | None:
        """int64 grid units for the OpenDP engine, or None when this draw must stay in Python."""
        if self._opendp is None or not _opendp_scale(scale_units):
            return None
        return grid_units_int64(values, g)

    # -- additive noise -----------------------------------------------------------------------
    def to_units(self, values: np.ndarray, *, sensitivity: float, dim: int) -> list[int]:
        """``values`` rounded to the grid of a ``dim``-dimensional query, as exact integers.

        Sums of such integers are exact, so a stream summed in grid units keeps its declared
        sensitivity whatever the magnitudes (a floating-point sum would not).
        """
        return self._round(np.asarray(values, dtype=float), self.grid(sensitivity, dim))

    def add_laplace_units(self, units: list[int], scale: float, *, sensitivity: float,
                          dim: int) -> np.ndarray:
        """Discrete Laplace noise added to integer grid units by the pure-Python engine."""
        g = self.grid(sensitivity, dim)
        t = Fraction(scale) / g
        return np.array([float((n + discrete_laplace(t, self._source)) * g) for n in units])

    def add_gaussian_units(self, units: list[int], sigma: float, *, sensitivity: float,
                           dim: int) -> np.ndarray:
        """Discrete Gaussian noise added to integer grid units by the pure-Python engine."""
        g = self.grid(sensitivity, dim)
        sigma2 = (Fraction(sigma) / g) ** 2
        return np.array([float((n + discrete_gaussian(sigma2, self._source)) * g)
                         for n in units])

    def node_noise(self, noise: str, scale: float, *, sensitivity: float, dim: int,
                   uses: int = 1, epsilon: float | None = None,
                   rho: float | None = None) -> Any:
        """A sampler adding one noise vector to integer grid units, for repeated releases.

        Built and checked once (tree aggregation releases many nodes with one measurement):
        on OpenDP the map of one node at the node's sensitivity in grid units, times ``uses``
        (the nodes one item touches), must be at most the charged ``epsilon`` (Laplace) or
        ``rho`` (Gaussian).

        Parameters
        ----------
        noise : {"laplace", "gaussian"}
        scale : float
            Laplace scale or Gaussian standard deviation, in real units.
        sensitivity : float
            The per-item sensitivity (l1 for Laplace, l2 for Gaussian).
        dim : int
        uses : int, default=1
        epsilon, rho : float, optional
            The charge the map is checked against (defaults: the calibration's own map).

        Returns
        -------
        callable
            ``sampler(units) -> numpy.ndarray`` of released floats, with attribute ``engine``.
        """
        g = self.grid(sensitivity, dim)
        t = Fraction(scale) / g
        kind = "l1" if noise == "laplace" else "l2"
        d_in_exact = self._units(sensitivity, kind, dim)
        eng = self._opendp if _opendp_scale(t) else None
        if eng is None:
            python = (self.add_laplace_units if noise == "laplace" else self.add_gaussian_units)
            return _NodeNoise(self._python, lambda u: python(u, scale, sensitivity=sensitivity,
                                                             dim=dim))
        if noise == "laplace":
            d_in: Any = int(d_in_exact)
            charged = epsilon if epsilon is not None else float_up(uses * d_in_exact / t)
        else:
            d_in = float_up(d_in_exact)
            charged = rho if rho is not None else float_up(uses * Fraction(d_in) ** 2
                                                           / (2 * t * t))
        meas = eng.checked(noise, float_up(t), d_in, charged, uses=uses,
                           what=f"tree-aggregation node noise ({noise})")

        python = self.add_laplace_units if noise == "laplace" else self.add_gaussian_units

        def sample(units: list[int]) -> np.ndarray:
            if max(abs(int(u)) for u in units) < UNIT_LIMIT:
                return units_to_float(eng.noisy_vector(meas, np.array(units, dtype=np.int64)), g)
            # Node sums beyond the 64-bit range: the pure-Python engine draws the same law.
            return python(units, scale, sensitivity=sensitivity, dim=dim)

        return _NodeNoise(eng.name, sample)

    def prepare_laplace(self, values: np.ndarray, scale: float, *, sensitivity: float,
                        epsilon: float | None = None) -> Release:
        x = np.asarray(values, dtype=float)
        d = x.size
        g = self.grid(sensitivity, d)
        t = Fraction(scale) / g
        units = self._opendp_units(x, g, t)
        if units is not None:
            eng = self._opendp
            d_in = self._units(sensitivity, "l1", d)
            charged = epsilon if epsilon is not None else float_up(d_in / t)
            meas = eng.checked("laplace", float_up(t), int(d_in), charged, what="laplace")
            return Release(eng.name, lambda: units_to_float(eng.noisy_vector(meas, units),
                                                            g).reshape(x.shape))
        exact = self._round(x, g)
        return Release(self._python, lambda: self.add_laplace_units(
            exact, scale, sensitivity=sensitivity, dim=d).reshape(x.shape))

    def prepare_gaussian(self, values: np.ndarray, sigma: float, *, sensitivity: float,
                         rho: float | None = None) -> Release:
        x = np.asarray(values, dtype=float)
        d = x.size
        g = self.grid(sensitivity, d)
        t = Fraction(sigma) / g
        units = self._opendp_units(x, g, t)
        if units is not None:
            eng = self._opendp
            # The same rounded bound the mechanism calibrated and charged with.
            d_in = math.ldexp(self.effective_sensitivity(sensitivity, kind="l2", dim=d),
                              -pow2_exponent(g))
            charged = rho if rho is not None else float_up(Fraction(d_in) ** 2 / (2 * t * t))
            meas = eng.checked("gaussian", float_up(t), d_in, charged, what="gaussian")
            return Release(eng.name, lambda: units_to_float(eng.noisy_vector(meas, units),
                                                            g).reshape(x.shape))
        exact = self._round(x, g)
        return Release(self._python, lambda: self.add_gaussian_units(
            exact, sigma, sensitivity=sensitivity, dim=d).reshape(x.shape))

    def add_laplace(self, values: np.ndarray, scale: float, *, sensitivity: float,
                    epsilon: float | None = None) -> np.ndarray:
        return self.prepare_laplace(values, scale, sensitivity=sensitivity, epsilon=epsilon)()

    def add_gaussian(self, values: np.ndarray, sigma: float, *, sensitivity: float,
                     rho: float | None = None) -> np.ndarray:
        return self.prepare_gaussian(values, sigma, sensitivity=sensitivity, rho=rho)()

    def add_l2_laplace(self, values: np.ndarray, scale: float, *,
                       sensitivity: float) -> np.ndarray:
        raise ValidationError(
            "The secure backend has no exact sampler for the l2 ('high-dimensional') Laplace "
            "mechanism. Use gaussian(...) (exact discrete Gaussian, zCDP), or laplace(...) with "
            "the l1 sensitivity (at most sqrt(d) times the l2 sensitivity), or backend='numpy' "
            "for simulations."
        )

    # -- selection ----------------------------------------------------------------------------
    def _selection(self, scores: np.ndarray, sensitivity: float, kind: str, monotonic: bool
                   ) -> tuple[np.ndarray, Fraction, Fraction, int]:
        """Finite indices, grid, the score-difference range in grid units, and its factor c.

        The range of the rounded score differences is ``c * base`` units: ``base`` is
        ``ceil(D/g)`` per score (``c = 2``, or 1 when monotone), or ``ceil(R/g) + 1`` for a
        declared range ``R`` (``c = 1``).
        """
        q = np.asarray(scores, dtype=float)
        idx = np.flatnonzero(np.isfinite(q))
        g = self.grid(sensitivity, 1)
        base = self._units(sensitivity, "range" if kind == "range" else "linf", 1)
        c = 1 if (monotonic or kind == "range") else 2
        return idx, g, base, c

    def prepare_exponential(self, scores: np.ndarray, weight: float, *, sensitivity: float,
                            kind: str = "linf", monotonic: bool = False,
                            epsilon: float | None = None) -> Release:
        idx, g, base, c = self._selection(scores, sensitivity, kind, monotonic)
        q = np.asarray(scores, dtype=float)[idx]
        gamma = Fraction(weight) * g  # acceptance exponent per grid unit
        units = self._opendp_units(q, g, 1 / gamma)
        if units is not None:
            eng = self._opendp
            # zCDP measure of make_noisy_max: the exponential mechanism, map (range/scale)^2/8,
            # checked against the eps^2/8 the mechanism charges.
            rho = (rho_exponential(epsilon) if epsilon is not None
                   else float_up((c * base * gamma) ** 2 / 8))
            meas = eng.checked("exponential", float_up(1 / gamma), int(base), rho,
                               monotonic=c == 1, what="exponential mechanism")
            return Release(eng.name, lambda: int(idx[eng.index(meas, units)]))
        n = self._round(q, g)
        return Release(self._python, lambda: int(idx[self._py_exponential(n, gamma)]))

    def prepare_permute_and_flip(self, scores: np.ndarray, weight: float, *, sensitivity: float,
                                 monotonic: bool = False,
                                 epsilon: float | None = None) -> Release:
        idx, g, base, c = self._selection(scores, sensitivity, "linf", monotonic)
        q = np.asarray(scores, dtype=float)[idx]
        gamma = Fraction(weight) * g
        units = self._opendp_units(q, g, 1 / gamma)
        if units is not None:
            eng = self._opendp
            eps = epsilon if epsilon is not None else float_up(c * base * gamma)
            meas = eng.checked("permute_and_flip", float_up(1 / gamma), int(base), eps,
                               monotonic=c == 1, what="permute-and-flip")
            return Release(eng.name, lambda: int(idx[eng.index(meas, units)]))
        n = self._round(q, g)
        return Release(self._python, lambda: int(idx[self._py_permute_and_flip(n, gamma)]))

    def prepare_report_noisy_max(self, scores: np.ndarray, scale: float, *, sensitivity: float,
                                 monotonic: bool = False,
                                 epsilon: float | None = None) -> Release:
        idx, g, base, c = self._selection(scores, sensitivity, "linf", monotonic)
        q = np.asarray(scores, dtype=float)[idx]
        t = Fraction(scale) / g
        units = self._opendp_units(q, g, t)
        if units is not None:
            eng = self._opendp
            # OpenDP draws the discrete Laplace noise of the scores; the Laplace map at the
            # score range c * base is report-noisy-max's epsilon (Dwork & Roth, Claim 3.9).
            eps = epsilon if epsilon is not None else float_up(c * base / t)
            meas = eng.checked("laplace", float_up(t), int(c * base), eps,
                               what="report-noisy-max (Laplace noise)")

            def draw() -> int:
                noisy = eng.noisy_vector(meas, units)
                winners = np.flatnonzero(noisy == noisy.max())
                return int(idx[winners[secrets.randbelow(winners.size)]])

            return Release(eng.name, draw)
        n = self._round(q, g)
        return Release(self._python, lambda: int(idx[self._py_report_noisy_max(n, t)]))

    def exponential(self, scores: np.ndarray, weight: float, *, sensitivity: float,
                    kind: str = "linf", monotonic: bool = False,
                    epsilon: float | None = None) -> int:
        return self.prepare_exponential(scores, weight, sensitivity=sensitivity, kind=kind,
                                        monotonic=monotonic, epsilon=epsilon)()

    def report_noisy_max(self, scores: np.ndarray, scale: float, *, sensitivity: float,
                         monotonic: bool = False, epsilon: float | None = None) -> int:
        return self.prepare_report_noisy_max(scores, scale, sensitivity=sensitivity,
                                             monotonic=monotonic, epsilon=epsilon)()

    def permute_and_flip(self, scores: np.ndarray, weight: float, *, sensitivity: float,
                         monotonic: bool = False, epsilon: float | None = None) -> int:
        return self.prepare_permute_and_flip(scores, weight, sensitivity=sensitivity,
                                             monotonic=monotonic, epsilon=epsilon)()

    # -- the pure-Python engine's selection samplers ------------------------------------------
    def _py_exponential(self, n: list[int], gamma: Fraction) -> int:
        top = max(n)
        src = self._source
        # Rejection sampling with a uniform proposal: accept j with probability
        # exp(-gamma (max - n_j)) <= 1, so the accepted index has the exact softmax law. The
        # exponent is formed only for proposed candidates.
        while True:
            j = src.randrange(len(n))
            if bernoulli_exp((top - n[j]) * gamma, src):
                return j

    def _py_report_noisy_max(self, n: list[int], t: Fraction) -> int:
        noisy = [v + discrete_laplace(t, self._source) for v in n]
        best = max(noisy)
        winners = [j for j, v in enumerate(noisy) if v == best]
        # A uniform tie-break equals adding independent Uniform[0, 1) noise, which keeps the
        # shift bound P[Z + U > x + D] >= exp(-D / t) P[Z + U > x] for integer D.
        return winners[self._source.randrange(len(winners))]

    def _py_permute_and_flip(self, n: list[int], gamma: Fraction) -> int:
        top = max(n)
        src = self._source
        order = list(range(len(n)))
        for i in range(len(order) - 1, 0, -1):  # Fisher-Yates on the exact source
            k = src.randrange(i + 1)
            order[i], order[k] = order[k], order[i]
        for j in order:
            if bernoulli_exp((top - n[j]) * gamma, src):
                return j
        raise AssertionError("unreachable: a maximal score is accepted with probability 1")


def _opendp_scale(scale_units: Fraction) -> bool:
    """Whether a noise scale in grid units is within the range OpenDP's maps evaluate."""
    return opendp_engine.MIN_SCALE_UNITS <= scale_units <= opendp_engine.MAX_SCALE_UNITS


class _NodeNoise:
    """A checked sampler of node noise (see :meth:`SecureBackend.node_noise`)."""

    __slots__ = ("engine", "_sample")

    def __init__(self, engine: str, sample: Any):
        self.engine = engine
        self._sample = sample

    def __call__(self, units: list[int]) -> np.ndarray:
        return self._sample(units)
