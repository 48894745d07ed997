"""Pure-DP additive-noise mechanisms: Laplace and l2 ("high-dimensional") Laplace, as objects
(:class:`Laplace`, :class:`L2Laplace`) and as one-line free functions. The Gaussian mechanism,
which builds on their shared part, is in :mod:`~dpsubmod.privacy.gaussian_mechanism` (its
calibrations need scipy, which a Laplace release does not load).

Conventions and references: :mod:`dpsubmod.privacy.mechanisms`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._rng import RNGLike
from .._validation import check_int
from ..errors import ValidationError
from ._inputs import (
    _div_down,
    _div_up,
    _noise_parameter,
    _note,
    _values,
)
from ._noise_backend import Release
from .backends import NoiseBackend, NumpyBackend
from .events import PrivacyEvent, rho_pure
from .mechanisms import PreparedMechanism

__all__ = ["Laplace", "L2Laplace", "laplace", "l2_laplace"]

Backend = str | NoiseBackend | None


def _exact_law(backend: NoiseBackend) -> bool:
    """Whether the release's noise is exactly the continuous law the PLD accountant models."""
    return isinstance(backend, NumpyBackend)


def _law(name: str, noise: float, sensitivity: float) -> tuple[str, float] | None:
    """The exact noise law an accountant may use, or None when noise / sensitivity leaves float
    range (the event's epsilon and rho then state the guarantee alone)."""
    ratio = _div_down(noise, sensitivity)
    return (name, ratio) if math.isfinite(ratio) and ratio > 0.0 else None


def _dim(value: object, caller: str) -> int:
    return check_int(value, "dim", low=1, caller=caller,
                     fix="Pass the number of coordinates of the released value.")


class _Additive(PreparedMechanism):
    """Shared input and output of the additive mechanisms: finite values of ``dim``
    coordinates in; the same shape out (a float for a scalar)."""

    def _input(self, value: Any) -> tuple[np.ndarray, bool]:
        x, scalar = _values(value, self._caller)
        if x.size != self._dim:
            raise ValidationError(
                f"The 'value' argument of {self._caller} has {x.size} coordinates; this "
                f"mechanism was built for dim={self._dim}. Build one with dim={x.size}."
            )
        return x, scalar

    def _output(self, out: Any, x: tuple[np.ndarray, bool]) -> float | np.ndarray:
        return float(out.reshape(())) if x[1] else out


class _PureAdditive(_Additive):
    """Pure epsilon-DP additive noise whose scale is ``Delta_eff / epsilon`` (rounded up); the
    privacy map at input distance ``d`` is ``d_eff / scale``, rounded up."""

    def __init__(self, *, epsilon: float, sensitivity: float, dim: int = 1,
                 backend: Backend = None, rng: RNGLike = None) -> None:
        self.epsilon, self.sensitivity, self.dim = epsilon, sensitivity, dim
        self.backend, self.rng = backend, rng
        self._dim = _dim(dim, self._caller)
        self._validate(epsilon, sensitivity, backend, rng)
        self._check_backend()
        self._scale = _noise_parameter(_div_up(self._effective(), self._eps), "noise scale",
                                       self._caller)

    def _check_backend(self) -> None:
        """Refuse a backend with no sampler for this noise (before anything is computed)."""

    @property
    def scale(self) -> float:
        """The noise scale (Laplace ``b``; l2 Laplace: the radius scale ``s``)."""
        return self._scale

    def _law(self, d: float) -> tuple[str, float] | None:
        return None

    def _pure_event(self, eps: float, sens: float, engine: str) -> PrivacyEvent:
        return PrivacyEvent._trusted(self.mechanism, eps, 0.0, rho_pure(eps),
                                     note=_note(self._backend, sens, self._dim, engine,
                                                scale=self._scale),
                                     law=self._law(sens), **self._fields(engine))

    def _event(self, engine: str) -> PrivacyEvent:
        return self._pure_event(self._eps, self._sens, engine)

    def _event_at(self, d_in: float) -> PrivacyEvent:
        return self._pure_event(_div_up(self._effective(d_in), self._scale), d_in,
                                self._backend.engine)

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(epsilon={self.epsilon!r}, "
                f"sensitivity={self.sensitivity!r}, dim={self.dim!r}, "
                f"backend={self.backend!r})")


class Laplace(_PureAdditive):
    """Laplace mechanism: ``value`` plus i.i.d. Laplace noise of scale ``sensitivity / epsilon``.

    Parameters
    ----------
    epsilon : float
        Privacy budget of one release, > 0.
    sensitivity : float
        l1 sensitivity of the query: ``sum_i |value_i(D) - value_i(D')|`` over neighbours.
    dim : int, default=1
        Number of coordinates of a release (it sets the grid of a grid backend).
    backend : {"numpy", "secure", "opendp"}, NoiseBackend or None, default=None
        See :func:`~dpsubmod.privacy.backends.resolve_backend`; resolved once, here.
    rng : int, Generator, SeedSequence or None, default=None
        Randomness of the numpy backend (SPEC 7); successive releases continue its stream.

    Attributes
    ----------
    scale : float
        The Laplace scale ``b`` (on a grid backend: of the effective sensitivity, rounded up).

    Raises
    ------
    ValidationError, ParameterTypeError
        At construction, naming the bad argument (nothing is charged or drawn).

    Notes
    -----
    Guarantee, neighbouring relation, input domain and citations: :func:`laplace` (Dwork,
    McSherry, Nissim, Smith 2006; [DR14] Thm 3.6; [CKS20] for the secure sampler). The privacy
    map at input distance ``d`` is ``d_eff / b`` (rounded up), with ``d_eff`` the effective
    l1 sensitivity of ``d`` on the backend.

    Examples
    --------
    >>> from dpsubmod.privacy import Ledger
    >>> mech = Laplace(epsilon=0.5, sensitivity=1.0, rng=0)
    >>> mech.scale, mech.privacy_map().epsilon, mech.privacy_map(2.0).epsilon
    (2.0, 0.5, 1.0)
    >>> led = Ledger()
    >>> round(mech.release(10.0, budget=led), 6), led.events == (mech.privacy_map(),)
    (10.640199, True)
    """

    mechanism = "laplace"
    _kind = "l1"

    def _law(self, d: float) -> tuple[str, float] | None:
        return _law("laplace", self._scale, d) if (_exact_law(self._backend)
                                                    and self._dim == 1) else None

    def _prepare(self, x: tuple[np.ndarray, bool]) -> Release:
        return self._backend.prepare_laplace(x[0], self._scale, sensitivity=self._sens,
                                             epsilon=self._eps)


class L2Laplace(_PureAdditive):
    """l2 ("high-dimensional") Laplace mechanism: noise density proportional to
    ``exp(-epsilon ||z||_2 / sensitivity)`` on R^dim.

    Parameters
    ----------
    epsilon : float
    sensitivity : float
        l2 sensitivity of the query.
    dim : int, default=1
    backend, rng
        As in :class:`Laplace`; a grid backend is refused (no exact sampler).

    Notes
    -----
    Guarantee and citations: :func:`l2_laplace` (K-norm mechanism [HT10]). The privacy map at
    input distance ``d`` is ``d / s`` (rounded up), ``s`` the radius scale.
    """

    mechanism = "l2_laplace"
    _kind = "l2"

    def _check_backend(self) -> None:
        if self._backend.discrete:  # its explanatory refusal
            self._backend.add_l2_laplace(np.zeros(self._dim), 1.0, sensitivity=self._sens)

    def _prepare(self, x: tuple[np.ndarray, bool]) -> Release:
        be, values = self._backend, x[0]
        return Release(be.engine, lambda: be.add_l2_laplace(values, self._scale,
                                                            sensitivity=self._sens))


def laplace(value: float | np.ndarray, *, epsilon: float, sensitivity: float,
            budget: Any = None, rng: RNGLike = None, backend: Backend = None
            ) -> float | np.ndarray:
    """Laplace mechanism: release ``value`` plus Laplace noise of scale ``sensitivity / epsilon``.

    A one-line convenience over :class:`Laplace` (same draws at the same seed).

    Parameters
    ----------
    value : float or array-like of float
        The exact query answer (scalar or vector, any shape), finite.
    epsilon : float
        Privacy budget, > 0.
    sensitivity : float
        l1 sensitivity of the query: ``sum_i |value_i(D) - value_i(D')|`` over neighbours.
    budget : Budget or Ledger, optional
        Charged with one ``PrivacyEvent("laplace", epsilon, rho=epsilon**2/2)`` before the draw.
    rng : int, Generator, SeedSequence or None, default=None
        Randomness of the numpy backend (SPEC 7).
    backend : {"numpy", "secure"}, NoiseBackend or None, default=None
        See :func:`~dpsubmod.privacy.backends.resolve_backend`.

    Returns
    -------
    float or numpy.ndarray
        Same shape as ``value`` (a float for a scalar).

    Guarantee
    ---------
    epsilon-DP [DR14, Thm 3.6], hence epsilon**2/2-zCDP [BS16, Prop 1.4]. On the secure
    backend: exactly epsilon-DP with discrete Laplace noise on the grid ``g Z``, calibrated to
    the l1 sensitivity in grid units (``ceil(Delta/g) + d - 1`` units for ``d`` coordinates).

    Neighbouring relation / sensitivity assumed
    -------------------------------------------
    Any relation under which ``||value(D) - value(D')||_1 <= sensitivity``.

    Input domain
    ------------
    Finite real values (NaN and inf refused).

    Citations
    ---------
    Dwork, McSherry, Nissim, Smith (2006); [DR14] Thm 3.6; [CKS20] for the secure sampler.

    Runtime
    -------
    O(d) vectorised (numpy); pure-Python exact sampling per coordinate (secure).
    """
    x, _ = _values(value, "laplace")
    return Laplace._named("laplace", epsilon=epsilon, sensitivity=sensitivity, dim=x.size,
                          backend=backend, rng=rng).release(value, budget=budget)


def l2_laplace(value: float | np.ndarray, *, epsilon: float, sensitivity: float,
               budget: Any = None, rng: RNGLike = None, backend: Backend = None
               ) -> float | np.ndarray:
    """l2 ("high-dimensional") Laplace mechanism: noise density proportional to
    ``exp(-epsilon ||z||_2 / sensitivity)`` on R^d.

    A one-line convenience over :class:`L2Laplace`. Sampled as a uniform direction times a
    Gamma(shape=d, scale=sensitivity/epsilon) radius (the density of the radius ``r`` is
    proportional to ``r^(d-1) exp(-r / scale)``).

    Parameters
    ----------
    value : float or array-like of float
        The exact query answer; ``d = value.size`` coordinates.
    epsilon : float
    sensitivity : float
        l2 sensitivity of the query.
    budget, rng, backend
        As in :func:`laplace`; charges ``PrivacyEvent("l2_laplace", epsilon,
        rho=epsilon**2/2)``.

    Returns
    -------
    float or numpy.ndarray

    Guarantee
    ---------
    epsilon-DP: the density ratio at any point is ``exp((||z - v||_2 - ||z||_2)/scale) <=
    exp(||v||_2 / scale)`` for a shift ``||v||_2 <= sensitivity`` (K-norm mechanism [HT10] with
    the l2 ball). Numpy backend only: the secure backend refuses it (no exact sampler), before
    anything is recorded.

    Neighbouring relation / sensitivity assumed
    -------------------------------------------
    Any relation under which ``||value(D) - value(D')||_2 <= sensitivity``.

    Input domain
    ------------
    Finite real values.

    Citations
    ---------
    [HT10]; used with tree aggregation by Smith & Thakurta (2013) and Cardoso & Cummings (2018).

    Runtime
    -------
    O(d).
    """
    x, _ = _values(value, "l2_laplace")
    return L2Laplace._named("l2_laplace", epsilon=epsilon, sensitivity=sensitivity, dim=x.size,
                            backend=backend, rng=rng).release(value, budget=budget)
