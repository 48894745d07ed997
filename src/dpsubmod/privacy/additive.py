"""Additive-noise mechanisms: Laplace, Gaussian and l2 ("high-dimensional") Laplace.

Conventions and references: :mod:`dpsubmod.privacy.mechanisms`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._rng import RNGLike
from ..errors import ValidationError
from ._inputs import (
    _charge,
    _check_budget,
    _div_down,
    _div_up,
    _epsilon,
    _noise_parameter,
    _note,
    _positive,
    _sensitivity,
    _values,
)
from .backends import NoiseBackend, NumpyBackend, resolve_backend
from .calibration import (
    _GAUSSIAN_CALIBRATIONS,
    _gaussian_delta_param,
    gaussian_rho,
    gaussian_sigma,
    gaussian_sigma_zcdp,
)
from .events import PrivacyEvent, rho_pure

__all__ = ["laplace", "gaussian", "l2_laplace"]

Backend = str | NoiseBackend | None


def _exact_law(backend: NoiseBackend) -> bool:
    """Whether the release's noise is exactly the continuous law the PLD accountant models."""
    return isinstance(backend, NumpyBackend)


def _law(name: str, noise: float, sensitivity: float) -> tuple[str, float] | None:
    """The exact noise law an accountant may use, or None when noise / sensitivity leaves float
    range (the event's epsilon and rho then state the guarantee alone)."""
    ratio = _div_down(noise, sensitivity)
    return (name, ratio) if math.isfinite(ratio) and ratio > 0.0 else None


def laplace(value: float | np.ndarray, *, epsilon: float, sensitivity: float,
            budget: Any = None, rng: RNGLike = None, backend: Backend = None
            ) -> float | np.ndarray:
    """Laplace mechanism: release ``value`` plus Laplace noise of scale ``sensitivity / epsilon``.

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
    caller = "laplace"
    x, scalar = _values(value, caller)
    eps = _epsilon(epsilon, caller)
    sens = _sensitivity(sensitivity, caller)
    _check_budget(budget, caller)
    be = resolve_backend(backend, rng)
    d = x.size
    scale = _noise_parameter(_div_up(be.effective_sensitivity(sens, kind="l1", dim=d), eps),
                             "noise scale", caller)
    draw = be.prepare_laplace(x, scale, sensitivity=sens, epsilon=eps)
    law = _law("laplace", scale, sens) if _exact_law(be) and d == 1 else None
    _charge(budget, caller, lambda: PrivacyEvent("laplace", eps, 0.0, rho=rho_pure(eps),
                                 note=_note(be, sens, d, draw.engine, scale=scale), law=law))
    out = draw()
    return float(out.reshape(())) if scalar else out


def gaussian(value: float | np.ndarray, *, sensitivity: float, epsilon: float | None = None,
             delta: float | None = None, rho: float | None = None,
             calibration: str | None = None, budget: Any = None, rng: RNGLike = None,
             backend: Backend = None) -> float | np.ndarray:
    """Gaussian mechanism: release ``value`` plus N(0, sigma^2) noise per coordinate.

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
        How (epsilon, delta) becomes sigma (see :func:`gaussian_sigma`). ``None`` means
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
    caller = "gaussian"
    x, scalar = _values(value, caller)
    sens = _sensitivity(sensitivity, caller)
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
                f"{caller} needs a target budget: epsilon and delta together (delta > 0), or rho."
            )
        eps = _epsilon(epsilon, caller)
        dlt = _gaussian_delta_param(delta, caller)
    _check_budget(budget, caller)
    be = resolve_backend(backend, rng)
    d = x.size
    eff = be.effective_sensitivity(sens, kind="l2", dim=d)
    if rho is not None:
        sigma = _noise_parameter(gaussian_sigma_zcdp(r, eff), "noise scale", caller)
        charged_rho = r
        def event() -> PrivacyEvent:
            return PrivacyEvent("gaussian", math.inf, 0.0, rho=r,
                                note=_note(be, sens, d, draw.engine, sigma=sigma), law=law)
    else:
        calib = calibration or ("zcdp" if be.discrete else "analytic")
        if be.discrete and calib != "zcdp":
            raise ValidationError(
                f"The '{be.name}' backend releases a discrete Gaussian, whose (epsilon, delta) "
                "guarantee is certified through zCDP only; pass calibration='zcdp' or None."
            )
        if calib == "classic" and eps >= 1.0:
            raise ValidationError(
                f"The classic Gaussian calibration of {caller} is proved only for epsilon < 1 "
                f"(Dwork & Roth, Thm A.1); got epsilon={eps!r}. Use calibration='analytic'."
            )
        sigma = _noise_parameter(gaussian_sigma(sensitivity=eff, epsilon=eps, delta=dlt,
                                                calibration=calib), "noise scale", caller)
        charged_rho = gaussian_rho(sigma, eff)
        def event() -> PrivacyEvent:
            return PrivacyEvent("gaussian", eps, dlt, rho=charged_rho,
                                note=_note(be, sens, d, draw.engine, sigma=sigma)
                                + f"; calibration={calib}", law=law)
    draw = be.prepare_gaussian(x, sigma, sensitivity=sens, rho=charged_rho)
    law = _law("gaussian", sigma, eff) if _exact_law(be) else None
    _charge(budget, caller, event)
    out = draw()
    return float(out.reshape(())) if scalar else out


def l2_laplace(value: float | np.ndarray, *, epsilon: float, sensitivity: float,
               budget: Any = None, rng: RNGLike = None, backend: Backend = None
               ) -> float | np.ndarray:
    """l2 ("high-dimensional") Laplace mechanism: noise density proportional to
    ``exp(-epsilon ||z||_2 / sensitivity)`` on R^d.

    Sampled as a uniform direction times a Gamma(shape=d, scale=sensitivity/epsilon) radius
    (the density of the radius ``r`` is proportional to ``r^(d-1) exp(-r / scale)``).

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
    caller = "l2_laplace"
    x, scalar = _values(value, caller)
    eps = _epsilon(epsilon, caller)
    sens = _sensitivity(sensitivity, caller)
    _check_budget(budget, caller)
    be = resolve_backend(backend, rng)
    if be.discrete:
        be.add_l2_laplace(x, 1.0, sensitivity=sens)  # raises its explanatory refusal
    d = x.size
    scale = _noise_parameter(_div_up(be.effective_sensitivity(sens, kind="l2", dim=d), eps),
                             "noise scale", caller)
    _charge(budget, caller, lambda: PrivacyEvent("l2_laplace", eps, 0.0, rho=rho_pure(eps),
                                 note=_note(be, sens, d, scale=scale)))
    out = be.add_l2_laplace(x, scale, sensitivity=sens)
    return float(out.reshape(())) if scalar else out
