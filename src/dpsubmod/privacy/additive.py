"""Additive-noise mechanisms: Laplace, Gaussian and l2 ("high-dimensional") Laplace, as objects
(:class:`Laplace`, :class:`Gaussian`, :class:`L2Laplace`) and as one-line free functions.

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
    _epsilon,
    _noise_parameter,
    _note,
    _positive,
    _sensitivity,
    _values,
)
from ._noise_backend import Release
from .backends import NoiseBackend, NumpyBackend, resolve_backend
from .events import PrivacyEvent, rho_pure
from .gaussian_calibration import (
    _GAUSSIAN_CALIBRATIONS,
    _gaussian_delta_param,
    _sigma_for,
    _sigma_zcdp,
    gaussian_rho,
)
from .mechanisms import PreparedMechanism

__all__ = ["Laplace", "Gaussian", "L2Laplace", "laplace", "gaussian", "l2_laplace"]

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


class Gaussian(_Additive):
    """Gaussian mechanism: ``value`` plus i.i.d. N(0, sigma^2) noise per coordinate.

    Parameters
    ----------
    sensitivity, epsilon, delta, rho, calibration
        The l2 sensitivity and the target, (epsilon, delta) or rho (zCDP), and how the target
        becomes sigma: as in :func:`gaussian`.
    dim : int, default=1
        Number of coordinates of a release.
    backend, rng
        As in :class:`Laplace`.

    Attributes
    ----------
    sigma : float
        The noise standard deviation.

    Notes
    -----
    Guarantee and citations: :func:`gaussian` ([DR14] Thm A.1; [BW18]; [BS16]; [CKS20]).
    The privacy map at the declared sensitivity is the target; at another input distance ``d``
    it states the zCDP cost ``d_eff^2 / (2 sigma^2)`` (epsilon infinite under basic
    composition).

    Examples
    --------
    >>> mech = Gaussian(sensitivity=1.0, rho=0.5, rng=0)
    >>> mech.sigma, mech.privacy_map().rho, mech.privacy_map(2.0).rho
    (1.0, 0.5, 2.0)
    """

    mechanism = "gaussian"
    _kind = "l2"

    def __init__(self, *, sensitivity: float, epsilon: float | None = None,
                 delta: float | None = None, rho: float | None = None,
                 calibration: str | None = None, dim: int = 1, backend: Backend = None,
                 rng: RNGLike = None) -> None:
        self.sensitivity, self.epsilon, self.delta, self.rho = sensitivity, epsilon, delta, rho
        self.calibration, self.dim, self.backend, self.rng = calibration, dim, backend, rng
        caller = self._caller
        self._sens = _sensitivity(sensitivity, caller)
        if calibration is not None and calibration not in _GAUSSIAN_CALIBRATIONS:
            raise ValidationError(
                f"The 'calibration' parameter of {caller} must be one of "
                f"{list(_GAUSSIAN_CALIBRATIONS)} or None; got {calibration!r}."
            )
        if rho is not None:
            if epsilon is not None or delta is not None:
                raise ValidationError(f"Pass either rho or (epsilon, delta) to {caller}, not both.")
            r = _positive(rho, "rho", caller, "Pass a positive zCDP budget such as rho=0.5.")
        else:
            if epsilon is None or delta is None:
                raise ValidationError(
                    f"{caller} needs a target budget: epsilon and delta together (delta > 0), "
                    "or rho."
                )
            eps = float(epsilon) if self._epsilon_checked else _epsilon(epsilon, caller)
            dlt = _gaussian_delta_param(delta, caller)
        self._dim = _dim(dim, caller)
        be = self._backend = resolve_backend(backend, rng)
        eff = self._effective()
        if rho is not None:
            self._sigma = _noise_parameter(_sigma_zcdp(r, eff, caller), "noise scale", caller)
            self._rho, self._target = r, None
        else:
            calib = calibration or ("zcdp" if be.discrete else "analytic")
            if be.discrete and calib != "zcdp":
                raise ValidationError(
                    f"The '{be.name}' backend releases a discrete Gaussian, whose (epsilon, "
                    "delta) guarantee is certified through zCDP only; pass calibration='zcdp' "
                    "or None."
                )
            # the arguments were checked above: the calibration core does not check them again
            self._sigma = _noise_parameter(_sigma_for(eff, eps, dlt, calib, caller),
                                           "noise scale", caller)
            self._rho, self._target = gaussian_rho(self._sigma, eff), (eps, dlt, calib)
        self._law = _law("gaussian", self._sigma, eff) if _exact_law(be) else None

    @property
    def sigma(self) -> float:
        """The noise standard deviation."""
        return self._sigma

    def _event(self, engine: str) -> PrivacyEvent:
        note = _note(self._backend, self._sens, self._dim, engine, sigma=self._sigma)
        # from the parameters validated at construction: not validated again
        if self._target is None:
            return PrivacyEvent._trusted("gaussian", math.inf, 0.0, self._rho, note=note,
                                         law=self._law, **self._fields(engine))
        eps, dlt, calib = self._target
        return PrivacyEvent._trusted("gaussian", eps, dlt, self._rho,
                                     note=f"{note}; calibration={calib}", law=self._law,
                                     **self._fields(engine))

    def _event_at(self, d_in: float) -> PrivacyEvent:
        eff = self._effective(d_in)
        engine = self._backend.engine
        law = _law("gaussian", self._sigma, eff) if _exact_law(self._backend) else None
        return PrivacyEvent("gaussian", math.inf, 0.0, rho=gaussian_rho(self._sigma, eff),
                            note=_note(self._backend, d_in, self._dim, engine, sigma=self._sigma),
                            law=law, **self._fields(engine))

    def _prepare(self, x: tuple[np.ndarray, bool]) -> Release:
        return self._backend.prepare_gaussian(x[0], self._sigma, sensitivity=self._sens,
                                              rho=self._rho)

    def __repr__(self) -> str:
        target = (f"rho={self.rho!r}" if self.rho is not None
                  else f"epsilon={self.epsilon!r}, delta={self.delta!r}")
        return (f"Gaussian(sensitivity={self.sensitivity!r}, {target}, dim={self.dim!r}, "
                f"backend={self.backend!r})")


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


def gaussian(value: float | np.ndarray, *, sensitivity: float, epsilon: float | None = None,
             delta: float | None = None, rho: float | None = None,
             calibration: str | None = None, budget: Any = None, rng: RNGLike = None,
             backend: Backend = None) -> float | np.ndarray:
    """Gaussian mechanism: release ``value`` plus N(0, sigma^2) noise per coordinate.

    A one-line convenience over :class:`Gaussian` (same draws at the same seed).

    Parameters
    ----------
    value : float or array-like of float
        The exact query answer, finite.
    sensitivity : float
        l2 sensitivity of the query.
    epsilon, delta : float, optional
        Target (epsilon, delta) with delta in (0, 1); mutually exclusive with ``rho``.
    rho : float, optional
        Target zCDP budget; then ``sigma = Delta / sqrt(2 rho)``.
    calibration : {"analytic", "classic", "zcdp"} or None, default=None
        How (epsilon, delta) becomes sigma (see
        :func:`~dpsubmod.privacy.gaussian_calibration.gaussian_sigma`). ``None`` means
        ``"analytic"`` on continuous backends and ``"zcdp"`` on grid backends, where it is the
        only calibration accepted (the discrete Gaussian is certified through zCDP [CKS20]).
        ``"classic"`` refuses epsilon >= 1 (its theorem needs epsilon < 1).
    budget : Budget or Ledger, optional
        Charged with ``PrivacyEvent("gaussian", epsilon, delta, rho=Delta**2/(2 sigma**2))``, or,
        for a rho target, ``PrivacyEvent("gaussian", inf, 0.0, rho=rho)`` (no pure-DP
        guarantee), before the draw.
    rng, backend
        As in :func:`laplace`.

    Returns
    -------
    float or numpy.ndarray

    Guarantee
    ---------
    (epsilon, delta)-DP [DR14 Thm A.1; BW18 Thm 8] and Delta**2/(2 sigma**2)-zCDP [BS16].
    Secure backend: discrete Gaussian on the grid ``g Z`` with the l2 sensitivity taken as
    ``Delta + g sqrt(d)`` (in grid units, at most ``Delta/g + sqrt(d)``); rho-zCDP because the
    Renyi divergence of order alpha between discrete Gaussians shifted by an integer ``mu`` is
    at most ``alpha mu^2 / (2 sigma^2)`` [CKS20] and Renyi divergences of independent
    coordinates add; (epsilon, delta) through [BS16, Prop 1.3] (``calibration="zcdp"``).

    Neighbouring relation / sensitivity assumed
    -------------------------------------------
    Any relation under which ``||value(D) - value(D')||_2 <= sensitivity``.

    Input domain
    ------------
    Finite real values.

    Citations
    ---------
    [DR14] Thm A.1; [BW18]; [BS16] Props 1.3 and 1.6; [CKS20].

    Runtime
    -------
    O(d) plus one root-finding (analytic calibration, about 50 evaluations of ``log_ndtr``).
    """
    x, _ = _values(value, "gaussian")
    return Gaussian._named("gaussian", sensitivity=sensitivity, epsilon=epsilon, delta=delta,
                           rho=rho, calibration=calibration, dim=x.size, backend=backend,
                           rng=rng).release(value, budget=budget)


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
