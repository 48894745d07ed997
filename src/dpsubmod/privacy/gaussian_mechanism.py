"""The Gaussian mechanism (:class:`Gaussian`, and :func:`gaussian`, its one-line free
function): approximate DP and zCDP, calibrated by :mod:`~dpsubmod.privacy.gaussian_calibration`.

Conventions and references: :mod:`dpsubmod.privacy.mechanisms`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._rng import RNGLike
from ..errors import ValidationError
from ._inputs import (
    _epsilon,
    _noise_parameter,
    _note,
    _positive,
    _sensitivity,
    _values,
)
from ._noise_backend import Release
from .additive import Backend, _Additive, _dim, _exact_law, _law
from .backends import resolve_backend
from .events import PrivacyEvent
from .gaussian_calibration import (
    _GAUSSIAN_CALIBRATIONS,
    _gaussian_delta_param,
    _sigma_for,
    _sigma_zcdp,
    gaussian_rho,
)

__all__ = ["Gaussian", "gaussian"]


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
