"""Noise backends: where the randomness of every mechanism comes from.

Two backends implement one small interface (:class:`NoiseBackend`), and every mechanism in
:mod:`dpsubmod.privacy.mechanisms` routes all of its sampling through one of them.

:class:`NumpyBackend`
    Fast and reproducible: the noise comes from a seeded :class:`numpy.random.Generator` in
    floating point. Use it for simulations, experiments and tests. Its guarantees hold for the
    idealised real-valued mechanisms; floating-point samplers are open to the attacks of
    Mironov (2012) and later work, and numpy generators are not cryptographic. **It is not
    secure** and must not protect real people's data.

:class:`SecureBackend` (:mod:`~dpsubmod.privacy.secure`)
    Exact discrete noise on a power-of-two grid ``g * Z``: real inputs are rounded to the grid
    exactly, integer noise is added in grid units, and the release is the grid point, converted
    to float only at the end (post-processing). Selection mechanisms (exponential mechanism,
    report-noisy-max, permute-and-flip) run on the grid-rounded scores with exact rational
    acceptance tests, so no ``exp`` or ``log`` is evaluated in floating point on a privacy path.
    The guarantee is exact: the release is eps-DP (or rho-zCDP) with the sensitivity measured in
    grid units and rounded up (see :meth:`SecureBackend.effective_sensitivity`). The noise is
    drawn by OpenDP's measurements when OpenDP is installed (the ``[secure]`` extra; each
    measurement's privacy map is checked against the charge before the first draw, see
    :mod:`~dpsubmod.privacy.opendp_engine`), else by dpsubmod's pure-Python exact samplers
    (Canonne, Kamath and Steinke 2020, :mod:`~dpsubmod.privacy.exact`) on
    :class:`secrets.SystemRandom`. Not covered: timing side channels, and the l2
    ("high-dimensional") Laplace mechanism (refused).

Names accepted as ``backend=``: ``"numpy"`` (or ``None``), ``"secure"`` (OpenDP when installed,
else the pure-Python engine) and ``"opendp"`` (OpenDP, or an error giving the install command;
never a silent fallback), or any :class:`NoiseBackend` instance, such as
``SecureBackend(granularity=2**-10, engine="python")``.

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

import contextlib
import contextvars
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np

from .._log import get_logger
from .._rng import RNGLike, as_generator
from ..errors import ParameterTypeError, SeedWarning, ValidationError
from ._noise_backend import NoiseBackend, Release
from .exact import bernoulli, bernoulli_exp, discrete_gaussian, discrete_laplace, geometric_exp
from .secure import DEFAULT_GRID_BITS, ENGINES, SecureBackend

__all__ = [
    "NoiseBackend",
    "NumpyBackend",
    "SecureBackend",
    "Release",
    "BACKENDS",
    "ENGINES",
    "resolve_backend",
    "choose_backend",
    "backend_chosen",
    "bernoulli",
    "bernoulli_exp",
    "geometric_exp",
    "discrete_laplace",
    "discrete_gaussian",
    "DEFAULT_GRID_BITS",
]


def standard_gumbel(gen: np.random.Generator, size: int | tuple[int, ...]) -> np.ndarray:
    """Standard Gumbel variates, drawn as :math:`-\\log E` with :math:`E \\sim \\mathrm{Exp}(1)`.

    Exact in distribution (:math:`P(-\\log E \\le x) = e^{-e^{-x}}`, the Gumbel law) and about
    2.5 times faster than ``Generator.gumbel``, which takes two logarithms per draw where the
    ziggurat exponential sampler takes none. The exponential mechanism's Gumbel-max draws
    run through this one function, so the numpy backend and Hedge's rows agree (noise is
    drawn inside :mod:`dpsubmod.privacy` only).

    Parameters
    ----------
    gen : numpy.random.Generator
    size : int or tuple of int

    Returns
    -------
    ndarray of float64
    """
    e = gen.standard_exponential(size=size)
    np.log(e, out=e)
    np.negative(e, out=e)
    return e

class NumpyBackend(NoiseBackend):
    """Fast, seeded floating-point noise from a :class:`numpy.random.Generator`.

    For simulation and reproducible experiments only: the samplers work in floating point and
    the generator is not cryptographic, so this backend is **not secure** against an adversary
    who sees the released bits (Mironov 2012). Same seed, same calls, same numpy build: same
    output. The ``epsilon``/``rho``/``kind``/``monotonic`` keywords of the sampling methods are
    accepted and unused (the draw does not depend on them).

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
    engine = f"numpy-{np.__version__}"
    secure = False
    discrete = False

    def __init__(self, rng: RNGLike = None) -> None:
        self.generator = as_generator(rng)

    def __repr__(self) -> str:
        return "NumpyBackend()"

    def add_laplace(self, values: np.ndarray, scale: float, *, sensitivity: float,
                    epsilon: float | None = None) -> np.ndarray:
        values = np.asarray(values, dtype=float)
        return _saturated(values, self.generator.laplace(0.0, scale, size=values.shape))

    def add_gaussian(self, values: np.ndarray, sigma: float, *, sensitivity: float,
                     rho: float | None = None) -> np.ndarray:
        values = np.asarray(values, dtype=float)
        return _saturated(values, self.generator.normal(0.0, sigma, size=values.shape))

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
        # a radius beyond float range is capped (as the release is, below)
        r = min(float(self.generator.gamma(shape=d, scale=scale)), _FLOAT_MAX)
        return _saturated(values, (r * (u / norm)).reshape(values.shape))

    def exponential(self, scores: np.ndarray, weight: float, *, sensitivity: float,
                    kind: str = "linf", monotonic: bool = False,
                    epsilon: float | None = None) -> int:
        q = np.asarray(scores, dtype=float)
        # Gumbel-max in log space: argmax of log-weight + Gumbel noise is an exact draw from
        # the softmax; shifting by the max keeps the log-weights finite and <= 0.
        # -inf entries cannot be the max: one is finite. A huge weight may overflow a gap to
        # -inf, which is the limit law (probability 0), so the overflow is not worth a warning.
        with np.errstate(over="ignore"):
            z = weight * (q - q.max())
        return int(np.argmax(z + standard_gumbel(self.generator, q.shape)))

    def report_noisy_max(self, scores: np.ndarray, scale: float, *, sensitivity: float,
                         monotonic: bool = False, epsilon: float | None = None) -> int:
        q = np.asarray(scores, dtype=float)
        return int(np.argmax(q + self.generator.laplace(0.0, scale, size=q.shape)))

    def permute_and_flip(self, scores: np.ndarray, weight: float, *, sensitivity: float,
                         monotonic: bool = False, epsilon: float | None = None) -> int:
        q = np.asarray(scores, dtype=float)
        # Permute-and-flip has the same output distribution as report-noisy-max with
        # Exponential(1/weight) noise (Ding et al. 2021), which vectorises.
        return int(np.argmax(q + self.generator.exponential(1.0 / weight, size=q.shape)))


_FLOAT_MAX = float(np.finfo(np.float64).max)


def _saturated(values: np.ndarray, noise: np.ndarray) -> np.ndarray:
    """``values + noise`` with a sum beyond float range clamped to the largest float.

    Noise at a scale near the float limit (an extreme but valid epsilon / sensitivity) can
    overflow; clamping is post-processing, so the guarantee is unchanged, and the release stays
    finite with no overflow warning.
    """
    with np.errstate(over="ignore"):
        out = np.asarray(values + noise, dtype=float)
    return np.clip(out, -_FLOAT_MAX, _FLOAT_MAX)


# =============================================================================================
# registry and resolution
# =============================================================================================
BACKENDS: dict[str, type[NoiseBackend]] = {"numpy": NumpyBackend, "secure": SecureBackend,
                                           "opendp": SecureBackend}


def resolve_backend(backend: str | NoiseBackend | None = None,
                    rng: RNGLike = None) -> NoiseBackend:
    """Turn the ``backend=`` / ``rng=`` pair of a public function into a :class:`NoiseBackend`.

    Call it once at the entry of an algorithm and pass the result down, so that every
    mechanism of one run draws from one stream.

    Parameters
    ----------
    backend : {"numpy", "secure", "opendp"}, NoiseBackend or None, default=None
        ``None`` or ``"numpy"``: a :class:`NumpyBackend` on ``rng``. ``"secure"``: a
        :class:`SecureBackend` with the default grid, drawing through OpenDP when it is
        installed and through dpsubmod's exact samplers otherwise. ``"opendp"``: the same
        backend on OpenDP only; without OpenDP it raises
        :class:`~dpsubmod.errors.MissingDependencyError` with the install command. For both,
        ``rng`` is not used: their randomness comes from cryptographic sources. An instance
        (for example ``SecureBackend(...)``) is returned as is.
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
    if backend == "opendp":
        return SecureBackend(engine="opendp")
    if isinstance(backend, str):
        raise ValidationError(
            f"The 'backend' parameter must be one of {sorted(BACKENDS)} or a NoiseBackend "
            f"instance; got {backend!r}."
        )
    raise ParameterTypeError(
        "The 'backend' parameter must be 'numpy', 'secure', 'opendp', a NoiseBackend instance "
        f"or None; got {type(backend).__name__}."
    )


# =============================================================================================
# the default backend of a public entry
# =============================================================================================
_log = get_logger(__name__)

#: Set while a public entry runs with its backend already chosen, so that the entries it calls
#: (an estimator's task, a method that runs another) neither choose again nor warn twice.
_CHOSEN: contextvars.ContextVar[bool] = contextvars.ContextVar("dpsubmod_backend_chosen",
                                                               default=False)


def choose_backend(backend: Any, rng: Any, *, caller: str,
                   supported: tuple[str, ...] = ("numpy", "secure", "opendp"),
                   seed_name: str = "rng", stacklevel: int = 3, warn: bool = True) -> Any:
    """The noise backend a public call uses: dpsubmod's one default and its one warning.

    Every private entry (``maximize`` and the private offline methods, the private online
    learners, :func:`dpsubmod.tasks.private_select`, the estimators and ``dpsubmod select``)
    turns its ``backend=`` / seed pair into a backend here, once, when it starts:

    * no backend and no seed: ``"secure"``, a release (OpenDP when installed, else dpsubmod's
      exact samplers); an entry whose noise has no exact sampler (``supported`` without
      ``"secure"``) uses ``"numpy"``, and its statement says so;
    * no backend and a seed: ``"numpy"``, a seeded simulation, which its statement calls one;
    * an explicit backend is kept; a seed passed with ``"secure"`` or ``"opendp"`` raises a
      :class:`~dpsubmod.errors.SeedWarning`, since their noise comes from the operating system
      and the seed does not make the run repeat.

    Parameters
    ----------
    backend : {"numpy", "secure", "opendp"}, NoiseBackend or None
        The caller's ``backend=`` argument (checked later, by the entry).
    rng : object
        The caller's seed argument (``None`` when not given).
    caller : str
        The public entry, named in the warning.
    supported : tuple of str, default=("numpy", "secure", "opendp")
        The backends the entry can draw from.
    seed_name : str, default="rng"
        How the caller's user spells the seed (``"random_state"``, ``"--seed"``).
    stacklevel : int, default=3
        Of the warning: 3 points at the code that called the entry calling this function.
    warn : bool, default=True
        ``False`` when the library itself builds the entry with a backend it already chose.

    Returns
    -------
    str or NoiseBackend
        ``backend`` itself when given, else ``"secure"`` or ``"numpy"``.
    """
    if _CHOSEN.get():
        return backend if backend is not None else ("numpy" if rng is not None
                                                     or "secure" not in supported else "secure")
    if backend is None:
        chosen = "secure" if rng is None and "secure" in supported else "numpy"
        _log.debug("%s: noise backend %s (no backend given, %s)", caller, chosen,
                   "no seed" if rng is None else "a seed: a simulation")
        return chosen
    if warn and rng is not None and isinstance(backend, str) and backend in ("secure",
                                                                             "opendp"):
        warnings.warn(SeedWarning(
            f"{caller}: {seed_name} does not make a run on the {backend} backend repeat: its "
            "noise comes from the operating system's cryptographic source. Pass no "
            f"{seed_name} for a release, or no backend (or backend='numpy') with "
            f"{seed_name} for a seeded simulation, which is not a private release."),
            stacklevel=stacklevel)
    return backend


@contextlib.contextmanager
def backend_chosen() -> Iterator[None]:
    """Run the body with the backend already chosen by :func:`choose_backend` (no second
    choice, no second warning from the entries it calls)."""
    token = _CHOSEN.set(True)
    try:
        yield
    finally:
        _CHOSEN.reset(token)
