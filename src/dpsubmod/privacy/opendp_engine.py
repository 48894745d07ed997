"""OpenDP as the sampling engine of the secure backend (the ``[secure]`` extra).

With OpenDP installed, :class:`~dpsubmod.privacy.backends.SecureBackend` draws its noise through
OpenDP measurements instead of dpsubmod's own pure-Python samplers. The grid semantics stay the
secure backend's: values and scores are rounded exactly to ``g Z`` (``g`` a power of two) by
dpsubmod, and OpenDP receives the integers ``N(x) = floor(x / g + 1/2)`` as 64-bit integers, with
every sensitivity and noise scale expressed in grid units. On integers OpenDP's measurements are
exact (rational arithmetic, samplers of Canonne, Kamath and Steinke 2020, bytes from OpenSSL's
``RAND_priv_bytes`` in the default build), so the guarantee the secure backend states, with the
sensitivity in grid units rounded up, is exactly the one OpenDP's privacy map certifies.

======================  ============================================  ==========================
dpsubmod draw           OpenDP measurement (input metric)             ``d_in`` (grid units)
======================  ============================================  ==========================
Laplace (vector)        ``make_laplace`` (``l1_distance(T=i64)``)     ``ceil(D/g) + d - 1``
Gaussian (vector)       ``make_gaussian`` (``l2_distance(T=f64)``)    ``D/g + sqrt(d)``
exponential mechanism   ``make_noisy_max``, zCDP measure              ``ceil(D/g)`` (range:
                        (``linf_distance(T=i64, monotonic)``)         ``ceil(R/g) + 1``)
permute-and-flip        ``make_noisy_max``, max-divergence measure    as above
report-noisy-max        ``make_laplace`` on the scores, then argmax   ``c ceil(D/g)``
======================  ============================================  ==========================

Every input domain is ``vector_domain(atom_domain(T="i64"))``. OpenDP's ``make_noisy_max`` is
the exponential mechanism (Gumbel-max, drawn by exact rejection) under the zCDP measure, with
map ``(range / scale)**2 / 8``, and permute-and-flip under the max-divergence measure, with map
``range / scale``; dpsubmod charges the exponential mechanism ``epsilon**2 / 8`` as its zCDP cost,
so that is what the map is checked against. OpenDP has no report-noisy-max with Laplace noise:
OpenDP draws the discrete Laplace noise of every score through one ``make_laplace``
measurement and dpsubmod takes the argmax (uniform tie-break from the operating system's
CSPRNG). Its check is that the Laplace map at ``d_in = c ceil(D/g)`` (``c = 2``, or 1 when
monotone) is at most the charged epsilon, which is the report-noisy-max guarantee
(Dwork & Roth 2014, Claim 3.9), not a map of the whole selection.

Features. OpenDP's constructors of these measurements are in its opt-in "contrib" set. dpsubmod
switches it on only while it builds a measurement and restores the process's setting right
after (:func:`features`): a program that uses OpenDP itself keeps the features it chose.

Checks. Each measurement is built once (and cached by its public parameters: a measurement
does not depend on data), and its privacy map is evaluated at the draw's ``d_in`` and compared
with what dpsubmod charges *before* the first draw; a larger value raises
:class:`~dpsubmod.errors.PrivacyMapError` and nothing is drawn or charged. OpenDP's maps round up
at every arithmetic step, so measurements are built with the noise scale raised by the relative
margin :data:`SCALE_MARGIN` (one part in 10**12), which absorbs that rounding.

64-bit range. Grid values beyond ``2**62`` in magnitude (or noise scales beyond ``2**55`` grid
units, i.e. epsilons below about 1e-11, or below ``2**-55`` grid units, where OpenDP's privacy
maps overflow) do not fit; those draws use the pure-Python engine, whose law is the same, and the
release's engine label says so. OpenDP returns integers through a
saturating cast (post-processing, so privacy is unaffected); below those limits saturation has
probability under ``exp(-128)``.
"""

from __future__ import annotations

import contextlib
import importlib
import math
import threading
from collections import OrderedDict
from collections.abc import Iterator
from fractions import Fraction
from importlib import metadata
from typing import Any

import numpy as np

from ..errors import MissingDependencyError, PrivacyMapError

__all__ = ["OpenDPEngine", "load", "clear_cache", "check_map", "features", "FEATURES",
           "MIN_VERSION", "INSTALL", "SCALE_MARGIN"]

#: Oldest OpenDP whose ``make_noisy_max`` semantics (zCDP: exponential mechanism; max divergence:
#: permute-and-flip) and integer noise maps dpsubmod was tested against.
MIN_VERSION = (0, 16)
#: The command that installs the OpenDP engine.
INSTALL = 'pip install "dpsubmod[secure]"'
#: Relative increase of every noise scale handed to OpenDP, absorbing the upward rounding of
#: its privacy maps.
SCALE_MARGIN = 1.0 + 2.0**-40
#: Largest noise scale in grid units the engine hands to OpenDP (see the module docstring).
MAX_SCALE_UNITS = 2.0**55
#: Smallest one: below it the map (``(range / scale)**2 / 8`` for the exponential mechanism)
#: overflows, and the pure-Python engine draws the same law.
MIN_SCALE_UNITS = 2.0**-55

_NEEDED = (
    ("measurements", "make_laplace"), ("measurements", "make_gaussian"),
    ("measurements", "make_noisy_max"), ("domains", "atom_domain"), ("domains", "vector_domain"),
    ("metrics", "l1_distance"), ("metrics", "l2_distance"), ("metrics", "linf_distance"),
    ("measures", "max_divergence"), ("measures", "zero_concentrated_divergence"),
    ("mod", "enable_features"), ("mod", "disable_features"), ("mod", "assert_features"),
)
#: The OpenDP features dpsubmod's constructors need: its noise and selection measurements are in
#: OpenDP's "contrib" set. They are switched on only while a measurement is built (see
#: :func:`features`); drawing and evaluating a privacy map need none.
FEATURES = ("contrib",)
_CACHE_SIZE = 256
_state: dict[str, Any] = {}
_state_lock = threading.Lock()


def _import_opendp() -> Any:
    # One function, so that tests can simulate an environment without OpenDP.
    import opendp

    return opendp


def _version(opendp: Any) -> str:
    try:
        return metadata.version("opendp")
    except metadata.PackageNotFoundError:
        return str(getattr(opendp, "__version__", "unknown"))


def _parse(version: str) -> tuple[int, int] | None:
    parts = version.split(".")
    try:
        return int(parts[0]), int(parts[1])
    except (IndexError, ValueError):
        return None


def _load() -> OpenDPEngine | None:
    try:
        opendp = _import_opendp()
    except ImportError:
        return None
    version = _version(opendp)
    parsed = _parse(version)
    if parsed is not None and parsed < MIN_VERSION:
        raise MissingDependencyError(
            f"OpenDP {version} is installed, but the secure backend needs OpenDP >= "
            f"{MIN_VERSION[0]}.{MIN_VERSION[1]} (make_noisy_max with its exponential-mechanism and "
            f"permute-and-flip measures). Upgrade with {INSTALL} (or pip install -U opendp), or "
            "pass backend=SecureBackend(engine='python') to use dpsubmod's own exact samplers. "
            "Nothing was charged or drawn."
        )
    modules: dict[str, Any] = {}
    missing = []
    for mod, attr in _NEEDED:
        try:
            module = modules.get(mod) or importlib.import_module(f"{opendp.__name__}.{mod}")
        except ImportError:
            module = None
        modules[mod] = module
        if module is None or not callable(getattr(module, attr, None)):
            missing.append(f"opendp.{mod}.{attr}")
    if missing:
        raise MissingDependencyError(
            f"OpenDP {version} lacks {', '.join(missing)}, which the secure backend needs. "
            f"Install a supported version with {INSTALL}, or pass "
            "backend=SecureBackend(engine='python'). Nothing was charged or drawn."
        )
    return OpenDPEngine(modules, version)


_features_lock = threading.RLock()


@contextlib.contextmanager
def features(mod: Any, names: tuple[str, ...] = FEATURES) -> Iterator[None]:
    """Switch OpenDP's ``names`` features on for the body only, then restore the caller's.

    A feature the process had already enabled stays enabled; one switched on here is switched
    off again on exit (error or not). dpsubmod's threads take turns, so one build cannot switch
    off a feature another build is using.

    Parameters
    ----------
    mod : module
        ``opendp.mod``.
    names : tuple of str, default=FEATURES
    """
    with _features_lock:
        added = []
        for name in names:
            try:
                mod.assert_features(name)
            except Exception:  # OpenDP's own exception: not enabled
                added.append(name)
        if added:
            mod.enable_features(*added)
        try:
            yield
        finally:
            if added:
                mod.disable_features(*added)


def load(required: bool) -> OpenDPEngine | None:
    """The OpenDP engine, or ``None`` when OpenDP is not installed and ``required`` is False.

    Raises
    ------
    MissingDependencyError
        When OpenDP is missing and ``required``, or installed in a version lacking a needed
        constructor (whatever ``required`` says: a broken install is not silently ignored).
    """
    with _state_lock:
        if "engine" not in _state:
            _state["engine"] = _load()
        engine = _state["engine"]
    if engine is None and required:
        raise MissingDependencyError(
            "backend='opendp' draws the noise through OpenDP, which is not installed. Install "
            f"it with {INSTALL}, or use backend='secure' (OpenDP when installed, else dpsubmod's "
            "exact pure-Python samplers). Nothing was charged or drawn."
        )
    return engine


def clear_cache() -> None:
    """Forget the loaded engine (and its measurements); the next :func:`load` imports again."""
    with _state_lock:
        _state.clear()


def check_map(measurement: Any, d_in: Any, charged: float, *, uses: int = 1,
              what: str = "measurement") -> float:
    """Check ``uses * measurement.map(d_in) <= charged`` exactly; return the map's value.

    Raises
    ------
    PrivacyMapError
        When the map cannot be evaluated or exceeds the charge.
    """
    try:
        got = float(measurement.map(d_in))
    except Exception as exc:  # OpenDP raises its own exception types
        raise PrivacyMapError(
            f"{what}: OpenDP could not evaluate its privacy map at d_in={d_in!r} ({exc}); "
            "nothing was drawn."
        ) from exc
    if not (math.isfinite(got) and Fraction(got) * uses <= Fraction(charged)):
        raise PrivacyMapError(
            f"{what}: OpenDP's privacy map states {uses} x {got!r} at d_in={d_in!r}, more than "
            f"the {charged!r} that dpsubmod charges for it; the measurement was refused and "
            "nothing was drawn. This is a calibration bug: please report it."
        )
    return got


class OpenDPEngine:
    """Builds, checks and runs OpenDP measurements on integer grid units.

    Parameters
    ----------
    modules : dict
        OpenDP's ``domains``, ``metrics``, ``measures``, ``measurements`` and ``mod`` modules.
    version : str
        OpenDP's version.

    Attributes
    ----------
    name : str
        ``"opendp-<version>"``, the engine label written into privacy statements.
    """

    def __init__(self, modules: dict[str, Any], version: str):
        self._m = modules
        self.version = version
        self.name = f"opendp-{version}"
        self._built: OrderedDict[tuple, Any] = OrderedDict()
        self._checked: OrderedDict[tuple, bool] = OrderedDict()
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"OpenDPEngine(version={self.version!r})"

    # -- measurements -------------------------------------------------------------------------
    def _build(self, kind: str, scale: float, monotonic: bool) -> Any:
        dom, met, mea, mm = (self._m["domains"], self._m["metrics"], self._m["measures"],
                             self._m["measurements"])
        space = dom.vector_domain(dom.atom_domain(T="i64"))
        if kind == "laplace":
            return mm.make_laplace(space, met.l1_distance(T="i64"), scale=scale)
        if kind == "gaussian":
            return mm.make_gaussian(space, met.l2_distance(T="f64"), scale=scale)
        measure = (mea.zero_concentrated_divergence() if kind == "exponential"
                   else mea.max_divergence())
        return mm.make_noisy_max(space, met.linf_distance(T="i64", monotonic=monotonic),
                                 measure, scale=scale)

    def measurement(self, kind: str, scale: float, *, monotonic: bool = False) -> Any:
        """The measurement of ``kind`` (``"laplace"``, ``"gaussian"``, ``"exponential"``,
        ``"permute_and_flip"``) at noise ``scale`` in grid units, built once and cached."""
        key = (kind, scale, monotonic)
        with self._lock:
            if key in self._built:
                self._built.move_to_end(key)
                return self._built[key]
        try:
            with features(self._m["mod"]):
                meas = self._build(kind, scale, monotonic)
        except Exception as exc:  # OpenDP's constructor refused what this version passes
            raise MissingDependencyError(
                f"OpenDP {self.version} refused to build the {kind} measurement (scale={scale!r}"
                f"): {exc}. This OpenDP version is not supported; install one with {INSTALL}, "
                "or pass backend=SecureBackend(engine='python'). Nothing was charged or drawn."
            ) from exc
        with self._lock:
            self._built[key] = meas
            if len(self._built) > _CACHE_SIZE:
                self._built.popitem(last=False)
        return meas

    def checked(self, kind: str, scale_units: float, d_in: Any, charged: float, *,
                monotonic: bool = False, uses: int = 1, what: str = "") -> Any:
        """The measurement for a draw at nominal scale ``scale_units``, with its map checked.

        The scale handed to OpenDP is ``scale_units * SCALE_MARGIN``; the check is
        :func:`check_map` at ``d_in`` against ``charged`` (``uses`` identical uses).
        """
        scale = float(scale_units) * SCALE_MARGIN
        meas = self.measurement(kind, scale, monotonic=monotonic)
        key = (kind, scale, monotonic, d_in, float(charged), uses)
        with self._lock:
            done = key in self._checked
        if not done:
            check_map(meas, d_in, charged, uses=uses, what=what or kind)
            with self._lock:
                self._checked[key] = True
                if len(self._checked) > 4 * _CACHE_SIZE:
                    self._checked.popitem(last=False)
        return meas

    # -- draws --------------------------------------------------------------------------------
    def invoke(self, measurement: Any, units: np.ndarray) -> Any:
        """Run ``measurement`` on int64 ``units`` (the only place OpenDP draws noise)."""
        return measurement(np.ascontiguousarray(units, dtype=np.int64))

    def noisy_vector(self, measurement: Any, units: np.ndarray) -> np.ndarray:
        """``units`` plus the measurement's integer noise, as int64."""
        return np.asarray(self.invoke(measurement, units), dtype=np.int64)

    def index(self, measurement: Any, units: np.ndarray) -> int:
        """The index a selection measurement releases."""
        return int(self.invoke(measurement, units))
