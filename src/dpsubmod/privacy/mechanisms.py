"""Differentially private mechanisms: additive noise (Laplace, Gaussian, l2 Laplace) and
selection (exponential mechanism, report-noisy-max, permute-and-flip).

Conventions shared by every mechanism here.

* **Privacy parameters are keyword-only** and validated at call start (``epsilon`` finite and
  > 0, ``delta`` in [0, 1), ``sensitivity`` finite and > 0, scores without NaN); a bad value
  raises a :class:`~dpsubmod.errors.DPSubmodError` subclass naming the argument, and nothing is
  recorded or drawn.
* **Neighbouring relation.** The mechanisms are agnostic: ``sensitivity`` is the largest change
  of the query (in the stated norm) between any two neighbouring data sets under whatever
  relation the caller's objective declares (for dpsubmod objectives built from records: one
  record replaced). Monotone variants additionally need every score to move in the same
  direction for each neighbouring pair.
* **Ledger.** Each call records exactly one
  :class:`~dpsubmod.privacy.accounting.PrivacyEvent` in ``ledger`` (anything with
  ``record(event)``, such as a ``Ledger`` or a ``Budget``) *before* any noise is drawn, so a
  budget that refuses the spend stops the release. Events carry ``rho`` whenever a zCDP
  guarantee is known (pure eps-DP: eps**2/2; exponential mechanism: eps**2/8; Gaussian:
  Delta**2/(2 sigma**2)), and their ``note`` names the backend (and grid) that drew the noise.
* **Randomness** goes through a noise backend (:mod:`dpsubmod.privacy.backends`):
  ``backend=None``/``"numpy"`` (seeded by ``rng``, for simulation, not secure) or ``"secure"``
  (exact discrete samplers on a CSPRNG, releases on a grid), or a backend instance. On grid
  backends the noise is calibrated to the backend's effective sensitivity (the declared one plus
  at most one grid step), which keeps the stated guarantee exact.
* **Calibration helpers** (``laplace_scale``, ``gaussian_sigma``, ``exponential_mechanism_weight``,
  ...) turn a target budget into a noise parameter, and **privacy maps** (``laplace_epsilon``,
  ``gaussian_delta``, ``gaussian_rho``, ``exponential_mechanism_epsilon``, ...) turn a noise
  parameter back into the guarantee, so that nobody derives scales by hand. Scales are rounded
  up, and weights and budgets spent rounded so that the floating-point result never claims
  more privacy than the real-number formula.

References
----------
.. [DR14] C. Dwork, A. Roth. The Algorithmic Foundations of Differential Privacy. 2014.
.. [MT07] F. McSherry, K. Talwar. Mechanism Design via Differential Privacy. FOCS 2007.
.. [DR19] D. Durfee, R. Rogers. Practical Differentially Private Top-k Selection with
   Pay-what-you-get Composition. NeurIPS 2019 (bounded range).
.. [CR21] M. Cesar, R. Rogers. Bounding, Concentrating, and Truncating: Unifying Privacy Loss
   Composition for Data Analytics. ALT 2021 (arXiv:2004.07223).
.. [BW18] B. Balle, Y.-X. Wang. Improving the Gaussian Mechanism for Differential Privacy:
   Analytical Calibration and Optimal Denoising. ICML 2018.
.. [BS16] M. Bun, T. Steinke. Concentrated Differential Privacy: Simplifications, Extensions,
   and Lower Bounds. TCC 2016.
.. [MS20] R. McKenna, D. Sheldon. Permute-and-Flip: A New Mechanism for Differentially Private
   Selection. NeurIPS 2020.
.. [D+21] Z. Ding, D. Kifer, S. M. Saghaian N. E., T. Steinke, Y. Wang, Y. Xiao, D. Zhang. The
   Permute-and-Flip Mechanism is Identical to Report-Noisy-Max with Exponential Noise.
   arXiv:2105.07260, 2021.
.. [HT10] M. Hardt, K. Talwar. On the Geometry of Differential Privacy. STOC 2010 (K-norm
   mechanism).
.. [CKS20] C. L. Canonne, G. Kamath, T. Steinke. The Discrete Gaussian for Differential Privacy.
   NeurIPS 2020 (exact samplers of the secure backend).
.. [Ilv20] C. Ilvento. Implementing the Exponential Mechanism with Base-2 Differential Privacy.
   CCS 2020 (why the exponential mechanism needs exact arithmetic).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
from scipy import optimize, special

from .._rng import RNGLike
from .._validation import check_delta, check_epsilon, check_finite, check_real
from ..errors import InfeasibleConstraintError, ParameterTypeError, ValidationError
from .accounting import PrivacyEvent
from .backends import NoiseBackend, resolve_backend

__all__ = [
    # additive noise
    "laplace",
    "gaussian",
    "l2_laplace",
    # selection
    "exponential_mechanism",
    "report_noisy_max",
    "permute_and_flip",
    # exact output distributions
    "exponential_mechanism_probabilities",
    "permute_and_flip_probabilities",
    # calibration (budget -> noise) and privacy maps (noise -> budget)
    "laplace_scale",
    "laplace_epsilon",
    "l2_laplace_scale",
    "l2_laplace_epsilon",
    "gaussian_sigma",
    "gaussian_sigma_classic",
    "gaussian_sigma_analytic",
    "gaussian_sigma_zcdp",
    "gaussian_delta",
    "gaussian_rho",
    "zcdp_rho_for",
    "exponential_mechanism_weight",
    "exponential_mechanism_epsilon",
    "report_noisy_max_scale",
    "report_noisy_max_epsilon",
]

Backend = str | NoiseBackend | None


# =============================================================================================
# validation helpers (thin wrappers over dpsubmod._validation)
# =============================================================================================
def _epsilon(value: object, caller: str, name: str = "epsilon") -> float:
    eps = check_epsilon(value, name, caller=caller)
    if not math.isfinite(eps):
        raise ValidationError(
            f"The '{name}' parameter of {caller} must be a finite real number in (0.0, inf); "
            f"got {value!r}. Pass a positive privacy budget such as epsilon=1.0."
        )
    return eps


def _positive(value: object, name: str, caller: str, fix: str = "") -> float:
    return check_real(value, name, low=0.0, low_open=True, high=math.inf, high_open=True,
                      caller=caller, fix=fix)


def _sensitivity(value: object, caller: str, name: str = "sensitivity") -> float:
    return _positive(value, name, caller,
                     "Pass the query's declared sensitivity, a positive number.")


def _check_ledger(ledger: object, caller: str) -> None:
    if ledger is not None and not callable(getattr(ledger, "record", None)):
        raise ParameterTypeError(
            f"The 'ledger' parameter of {caller} must have a record(event) method (a Ledger or a "
            f"Budget) or be None; got {type(ledger).__name__}."
        )


def _check_bool(value: object, name: str, caller: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise ParameterTypeError(
            f"The '{name}' parameter of {caller} must be True or False; got {value!r}."
        )
    return bool(value)


def _values(value: object, caller: str) -> tuple[np.ndarray, bool]:
    x = check_finite(value, "value", caller=caller)
    if x.size == 0:
        raise ValidationError(
            f"The 'value' argument of {caller} is empty; pass at least one number."
        )
    return x.astype(float, copy=True), x.ndim == 0


def _clip_range(clip_range: object, caller: str) -> tuple[float, float] | None:
    if clip_range is None:
        return None
    try:
        lo, hi = clip_range  # type: ignore[misc]
    except (TypeError, ValueError):
        raise ParameterTypeError(
            f"The 'clip_range' parameter of {caller} must be a pair (low, high) or None; "
            f"got {clip_range!r}."
        ) from None
    lo = check_real(lo, "clip_range[0]", caller=caller)
    hi = check_real(hi, "clip_range[1]", caller=caller)
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise ValidationError(
            f"The 'clip_range' parameter of {caller} must be finite with low < high; "
            f"got {clip_range!r}."
        )
    return lo, hi


def _scores(scores: object, caller: str, clip_range: object = None) -> np.ndarray:
    """Scores as a float vector: NaN and +inf refused, -inf kept (infeasible), then clipped."""
    try:
        q = np.array(scores, dtype=float)
    except (TypeError, ValueError):
        raise ParameterTypeError(
            f"The 'scores' argument of {caller} must be a 1-d array of real numbers; "
            f"got {type(scores).__name__}."
        ) from None
    if q.ndim != 1 or q.size == 0:
        raise ValidationError(
            f"The 'scores' argument of {caller} must be a non-empty 1-d array; got shape {q.shape}."
        )
    finite = np.isfinite(q)
    if finite.all():
        bad = np.empty(0, dtype=np.intp)
    else:
        bad = np.flatnonzero(np.isnan(q) | np.isposinf(q))
    if bad.size:
        raise ValidationError(
            f"The 'scores' argument of {caller} holds {q[bad[0]]!r} at index {int(bad[0])}; scores "
            "must be real numbers, or -inf to mark an infeasible candidate. Fix the objective or "
            "mask the candidate with -inf."
        )
    if not finite.any():
        raise InfeasibleConstraintError(
            f"Every entry of 'scores' passed to {caller} is -inf, so no candidate is feasible; "
            "pass at least one finite score."
        )
    rng = _clip_range(clip_range, caller)
    if rng is not None:
        q[finite] = np.clip(q[finite], rng[0], rng[1])
    return q


def _selection_sensitivity(sensitivity: object, monotonic: object, range_sensitivity: object,
                           caller: str) -> tuple[float, str, int]:
    """(base sensitivity, kind, multiplier c) with range sensitivity R = c * base."""
    mono = _check_bool(monotonic, "monotonic", caller)
    if range_sensitivity is not None:
        if sensitivity is not None or mono:
            raise ValidationError(
                f"Pass either 'sensitivity' (with 'monotonic') or 'range_sensitivity' to {caller}, "
                "not both."
            )
        return _sensitivity(range_sensitivity, caller, "range_sensitivity"), "range", 1
    if sensitivity is None:
        raise ValidationError(
            f"{caller} needs 'sensitivity' (the largest change of one score between neighbouring "
            "data sets) or 'range_sensitivity'."
        )
    return _sensitivity(sensitivity, caller), "linf", 1 if mono else 2


def _record(ledger: Any, make_event: Any) -> None:
    # The event is built only when someone records it (building it validates its fields).
    if ledger is not None:
        ledger.record(make_event())


# -- directed rounding: a float result never claims more privacy than the exact formula -----
def _le_product(a: float, b: float, c: float) -> bool:
    """Exactly ``a * b <= c`` for finite floats ``a, b > 0`` (integer ratios, no rounding)."""
    an, ad = a.as_integer_ratio()
    bn, bd = b.as_integer_ratio()
    cn, cd = c.as_integer_ratio()
    return an * bn * cd <= cn * ad * bd


def _div_up(a: float, b: float) -> float:
    """A float ``>= a / b``, within one ulp (exactly: ``q * b >= a``)."""
    q = a / b
    qn, qd = q.as_integer_ratio()
    an, ad = a.as_integer_ratio()
    bn, bd = b.as_integer_ratio()
    return q if qn * bn * ad >= an * qd * bd else math.nextafter(q, math.inf)


def _div_down(a: float, b: float) -> float:
    """A float ``<= a / b``, within one ulp (exactly: ``q * b <= a``)."""
    q = a / b
    return q if _le_product(q, b, a) else math.nextafter(q, 0.0)


def _mul_up(a: float, b: float) -> float:
    """A float ``>= a * b``, within one ulp."""
    p = a * b
    return p if _le_product(a, b, p) else math.nextafter(p, math.inf)


# =============================================================================================
# calibration helpers and privacy maps
# =============================================================================================
def laplace_scale(epsilon: float, sensitivity: float) -> float:
    """Laplace scale ``b = sensitivity / epsilon`` (rounded up) for an eps-DP release.

    ``sensitivity`` is the l1 sensitivity of the (scalar or vector) query. [DR14, Thm 3.6]
    """
    return _div_up(_sensitivity(sensitivity, "laplace_scale"), _epsilon(epsilon, "laplace_scale"))


def laplace_epsilon(scale: float, sensitivity: float) -> float:
    """Privacy map of the Laplace mechanism: ``epsilon = sensitivity / scale`` (rounded up)."""
    return _div_up(_sensitivity(sensitivity, "laplace_epsilon"),
                   _positive(scale, "scale", "laplace_epsilon"))


def l2_laplace_scale(epsilon: float, sensitivity: float) -> float:
    """Scale of the l2 Laplace density ``exp(-||z||_2 / b)``: ``b = l2 sensitivity / epsilon``."""
    return _div_up(_sensitivity(sensitivity, "l2_laplace_scale"),
                   _epsilon(epsilon, "l2_laplace_scale"))


def l2_laplace_epsilon(scale: float, sensitivity: float) -> float:
    """Privacy map of the l2 Laplace mechanism: ``epsilon = l2 sensitivity / scale``."""
    return _div_up(_sensitivity(sensitivity, "l2_laplace_epsilon"),
                   _positive(scale, "scale", "l2_laplace_epsilon"))


def gaussian_sigma_classic(epsilon: float, delta: float, sensitivity: float) -> float:
    """Classic Gaussian calibration ``sigma = Delta sqrt(2 ln(1.25/delta)) / epsilon``.

    Guarantee: (epsilon, delta)-DP for an l2 sensitivity ``Delta`` [DR14, Thm A.1]. The theorem
    only holds for ``epsilon < 1``; larger values are refused (use
    :func:`gaussian_sigma_analytic`, which is exact for every epsilon and never larger).
    """
    caller = "gaussian_sigma_classic"
    eps = _epsilon(epsilon, caller)
    dlt = _gaussian_delta_param(delta, caller)
    sens = _sensitivity(sensitivity, caller)
    if eps >= 1.0:
        raise ValidationError(
            f"The classic Gaussian calibration of {caller} is proved only for epsilon < 1 "
            f"(Dwork & Roth, Thm A.1); got epsilon={eps!r}. Use calibration='analytic'."
        )
    return math.nextafter(sens * math.sqrt(2.0 * math.log(1.25 / dlt)) / eps, math.inf)


def _log_gaussian_delta(sigma: float, epsilon: float, sensitivity: float) -> float:
    # log of Phi(D/(2s) - e s/D) - e^eps Phi(-D/(2s) - e s/D), computed in log space so that
    # tiny deltas and large epsilons keep their precision.
    a = sensitivity / (2.0 * sigma)
    b = epsilon * sigma / sensitivity
    la = float(special.log_ndtr(a - b))
    lb = epsilon + float(special.log_ndtr(-a - b))
    if lb >= la:
        return -math.inf
    return la + math.log1p(-math.exp(lb - la))


def gaussian_delta(sigma: float, epsilon: float, sensitivity: float) -> float:
    """Privacy profile of the Gaussian mechanism: the smallest delta for a given epsilon.

    ``delta(eps) = Phi(Delta/(2 sigma) - eps sigma/Delta) - e^eps Phi(-Delta/(2 sigma) -
    eps sigma/Delta)``: the mechanism is (eps, delta)-DP exactly when delta is at least this
    value [BW18, Thm 8]. Accepts any ``epsilon >= 0``.
    """
    caller = "gaussian_delta"
    s = _positive(sigma, "sigma", caller)
    eps = check_real(epsilon, "epsilon", low=0.0, high=math.inf, high_open=True, caller=caller)
    sens = _sensitivity(sensitivity, caller)
    return math.exp(_log_gaussian_delta(s, eps, sens))


def gaussian_sigma_analytic(epsilon: float, delta: float, sensitivity: float) -> float:
    """Analytic Gaussian calibration of Balle and Wang (2018): the smallest exact sigma.

    Solves ``gaussian_delta(sigma, epsilon, sensitivity) = delta`` for sigma (the left side
    decreases in sigma) by Brent's method on ``log sigma`` with the profile evaluated in log
    space, then steps up by ulps until the condition holds, so the returned sigma satisfies it
    while ``sigma * (1 - 1e-9)`` does not.

    Guarantee: (epsilon, delta)-DP for an l2 sensitivity ``Delta``, for every epsilon > 0
    [BW18, Thm 8 and Alg. 1]; never above the classic calibration.
    """
    caller = "gaussian_sigma_analytic"
    eps = _epsilon(epsilon, caller)
    dlt = _gaussian_delta_param(delta, caller)
    sens = _sensitivity(sensitivity, caller)
    target = math.log(dlt)

    def excess(log_sigma: float) -> float:
        return _log_gaussian_delta(math.exp(log_sigma), eps, sens) - target

    # sigma -> 0 gives delta -> 1 and sigma -> inf gives delta -> 0: bracket by doubling.
    guess = math.log(sens * math.sqrt(2.0 * math.log(1.25 / dlt)) / eps)
    lo = hi = guess
    while excess(lo) <= 0.0:
        lo -= math.log(2.0)
    while excess(hi) > 0.0:
        hi += math.log(2.0)
    root = optimize.brentq(excess, lo, hi, xtol=1e-15, rtol=4.0 * np.finfo(float).eps,
                           maxiter=500)
    sigma = math.exp(root)

    def holds(s: float) -> bool:  # in log space and after exponentiation
        log_d = _log_gaussian_delta(s, eps, sens)
        return log_d <= target and math.exp(log_d) <= dlt

    # Step up (one ulp, then doubling steps: a few iterations at most) until it holds.
    step = 0.0
    while not holds(sigma):
        step = max(2.0 * step, math.ulp(sigma))
        sigma += step
    return sigma


def gaussian_sigma_zcdp(rho: float, sensitivity: float) -> float:
    """``sigma = Delta / sqrt(2 rho)`` (rounded up), so the Gaussian mechanism is rho-zCDP.

    [BS16, Prop 1.6]: Gaussian noise of standard deviation sigma on a query of l2 sensitivity
    Delta is ``Delta**2 / (2 sigma**2)``-zCDP.
    """
    caller = "gaussian_sigma_zcdp"
    r = _positive(rho, "rho", caller, "Pass a positive zCDP budget such as rho=0.5.")
    sens = _sensitivity(sensitivity, caller)
    sigma = sens / math.sqrt(2.0 * r)
    # Exact check of sigma**2 * 2 rho >= Delta**2, so that sigma is never below the formula.
    while Fraction(sigma) ** 2 * 2 * Fraction(r) < Fraction(sens) ** 2:
        sigma = math.nextafter(sigma, math.inf)
    return sigma


def gaussian_rho(sigma: float, sensitivity: float) -> float:
    """Privacy map of the Gaussian mechanism in zCDP: ``rho = Delta**2 / (2 sigma**2)``."""
    caller = "gaussian_rho"
    s = _positive(sigma, "sigma", caller)
    sens = _sensitivity(sensitivity, caller)
    rho = sens * sens / (2.0 * s * s)
    while Fraction(rho) * 2 * Fraction(s) ** 2 < Fraction(sens) ** 2:
        rho = math.nextafter(rho, math.inf)
    return rho


def zcdp_rho_for(epsilon: float, delta: float) -> float:
    """The largest rho whose rho-zCDP guarantee implies (epsilon, delta)-DP by [BS16, Prop 1.3].

    ``rho-zCDP => (rho + 2 sqrt(rho ln(1/delta)), delta)-DP``; inverting gives
    ``rho = (sqrt(epsilon + ln(1/delta)) - sqrt(ln(1/delta)))**2`` (rounded down). Used to
    calibrate the discrete Gaussian of the secure backend, whose guarantee is stated in zCDP.
    """
    caller = "zcdp_rho_for"
    eps = _epsilon(epsilon, caller)
    dlt = _gaussian_delta_param(delta, caller)
    log_inv = math.log(1.0 / dlt)
    # (sqrt(a + b) - sqrt(b))**2 written without cancellation: a**2 / (sqrt(a + b) + sqrt(b))**2
    rho = eps * eps / (math.sqrt(eps + log_inv) + math.sqrt(log_inv)) ** 2
    return math.nextafter(rho, 0.0)


def _gaussian_delta_param(delta: object, caller: str) -> float:
    dlt = check_delta(delta, caller=caller)
    if dlt == 0.0:
        raise ValidationError(
            f"The 'delta' parameter of {caller} must be > 0: the Gaussian mechanism has no "
            "pure-DP guarantee. Pass delta=1e-6 (say), or rho= for a zCDP guarantee, or use "
            "laplace(...)."
        )
    return dlt


_GAUSSIAN_CALIBRATIONS = ("analytic", "classic", "zcdp")


def gaussian_sigma(*, sensitivity: float, epsilon: float | None = None,
                   delta: float | None = None, rho: float | None = None,
                   calibration: str = "analytic") -> float:
    """Gaussian noise standard deviation from a target budget.

    Parameters
    ----------
    sensitivity : float
        l2 sensitivity of the query.
    epsilon, delta : float, optional
        Target (epsilon, delta) (both, with delta > 0); mutually exclusive with ``rho``.
    rho : float, optional
        Target zCDP budget; ``sigma = Delta / sqrt(2 rho)``.
    calibration : {"analytic", "classic", "zcdp"}, default="analytic"
        How (epsilon, delta) becomes sigma: ``"analytic"`` (Balle and Wang, exact, any epsilon),
        ``"classic"`` (Dwork and Roth, epsilon < 1 only), ``"zcdp"`` (through
        :func:`zcdp_rho_for`; needed for the discrete Gaussian). Ignored with ``rho``.

    Returns
    -------
    float
    """
    caller = "gaussian_sigma"
    if calibration not in _GAUSSIAN_CALIBRATIONS:
        raise ValidationError(
            f"The 'calibration' parameter of {caller} must be one of "
            f"{list(_GAUSSIAN_CALIBRATIONS)}; got {calibration!r}."
        )
    if rho is not None:
        if epsilon is not None or delta is not None:
            raise ValidationError(
                f"Pass either rho or (epsilon, delta) to {caller}, not both."
            )
        return gaussian_sigma_zcdp(rho, sensitivity)
    if epsilon is None or delta is None:
        raise ValidationError(
            f"{caller} needs a target budget: epsilon and delta together, or rho."
        )
    if calibration == "classic":
        return gaussian_sigma_classic(epsilon, delta, sensitivity)
    if calibration == "zcdp":
        return gaussian_sigma_zcdp(zcdp_rho_for(epsilon, delta), sensitivity)
    return gaussian_sigma_analytic(epsilon, delta, sensitivity)


def exponential_mechanism_weight(epsilon: float, sensitivity: float | None = None, *,
                                 monotonic: bool = False,
                                 range_sensitivity: float | None = None) -> float:
    """The coefficient ``w`` of ``exp(w * score)`` that makes the exponential mechanism eps-DP.

    ``w = epsilon / (2 Delta)`` for general scores, ``epsilon / Delta`` for monotone scores,
    ``epsilon / R`` for scores of range sensitivity ``R`` (see :func:`exponential_mechanism`);
    rounded down.
    """
    caller = "exponential_mechanism_weight"
    eps = _epsilon(epsilon, caller)
    base, _, c = _selection_sensitivity(sensitivity, monotonic, range_sensitivity, caller)
    return _div_down(eps, c * base)


def exponential_mechanism_epsilon(weight: float, sensitivity: float | None = None, *,
                                  monotonic: bool = False,
                                  range_sensitivity: float | None = None) -> float:
    """Privacy map of the exponential mechanism drawing proportionally to ``exp(weight * score)``.

    ``epsilon = 2 * weight * Delta`` (general), ``weight * Delta`` (monotone) or
    ``weight * R`` (range sensitivity ``R``); rounded up. A greedy step that samples with
    weights ``exp(eps' * gain)`` on marginal gains of an objective of sensitivity ``Delta``
    costs ``exponential_mechanism_epsilon(eps', Delta) = 2 eps' Delta``.
    """
    caller = "exponential_mechanism_epsilon"
    w = _positive(weight, "weight", caller)
    base, _, c = _selection_sensitivity(sensitivity, monotonic, range_sensitivity, caller)
    return _mul_up(w, c * base)


def report_noisy_max_scale(epsilon: float, sensitivity: float, *,
                           monotonic: bool = False) -> float:
    """Laplace scale of eps-DP report-noisy-max: ``2 Delta / eps`` (general) or ``Delta / eps``."""
    caller = "report_noisy_max_scale"
    eps = _epsilon(epsilon, caller)
    base, _, c = _selection_sensitivity(sensitivity, monotonic, None, caller)
    return _div_up(c * base, eps)


def report_noisy_max_epsilon(scale: float, sensitivity: float, *,
                             monotonic: bool = False) -> float:
    """Privacy map of report-noisy-max with Laplace noise: ``c Delta / scale``, c = 2 or 1."""
    caller = "report_noisy_max_epsilon"
    b = _positive(scale, "scale", caller)
    base, _, c = _selection_sensitivity(sensitivity, monotonic, None, caller)
    return _div_up(c * base, b)


def _note(backend: NoiseBackend, sensitivity: float, dim: int, **params: float) -> str:
    parts = [f"backend={backend.label(sensitivity, dim=dim)}", f"sensitivity={sensitivity!r}"]
    parts += [f"{k}={v!r}" for k, v in params.items()]
    return "; ".join(parts)


# =============================================================================================
# additive noise mechanisms
# =============================================================================================
def laplace(value: float | np.ndarray, *, epsilon: float, sensitivity: float,
            ledger: Any = None, rng: RNGLike = None, backend: Backend = None
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
    ledger : object with ``record(event)``, optional
        Receives one ``PrivacyEvent("laplace", epsilon, rho=epsilon**2/2)`` before the draw.
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
    _check_ledger(ledger, caller)
    be = resolve_backend(backend, rng)
    d = x.size
    scale = _div_up(be.effective_sensitivity(sens, kind="l1", dim=d), eps)
    _record(ledger, lambda: PrivacyEvent("laplace", eps, 0.0, rho=eps * eps / 2.0,
                                 note=_note(be, sens, d, scale=scale)))
    out = be.add_laplace(x, scale, sensitivity=sens)
    return float(out.reshape(())) if scalar else out


def gaussian(value: float | np.ndarray, *, sensitivity: float, epsilon: float | None = None,
             delta: float | None = None, rho: float | None = None,
             calibration: str | None = None, ledger: Any = None, rng: RNGLike = None,
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
    ledger : object with ``record(event)``, optional
        Receives ``PrivacyEvent("gaussian", epsilon, delta, rho=Delta**2/(2 sigma**2))``, or,
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
    _check_ledger(ledger, caller)
    be = resolve_backend(backend, rng)
    d = x.size
    eff = be.effective_sensitivity(sens, kind="l2", dim=d)
    if rho is not None:
        sigma = gaussian_sigma_zcdp(r, eff)
        def event() -> PrivacyEvent:
            return PrivacyEvent("gaussian", math.inf, 0.0, rho=r,
                                note=_note(be, sens, d, sigma=sigma))
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
        sigma = gaussian_sigma(sensitivity=eff, epsilon=eps, delta=dlt, calibration=calib)
        def event() -> PrivacyEvent:
            return PrivacyEvent("gaussian", eps, dlt, rho=gaussian_rho(sigma, eff),
                                note=_note(be, sens, d, sigma=sigma) + f"; calibration={calib}")
    _record(ledger, event)
    out = be.add_gaussian(x, sigma, sensitivity=sens)
    return float(out.reshape(())) if scalar else out


def l2_laplace(value: float | np.ndarray, *, epsilon: float, sensitivity: float,
               ledger: Any = None, rng: RNGLike = None, backend: Backend = None
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
    ledger, rng, backend
        As in :func:`laplace`; records ``PrivacyEvent("l2_laplace", epsilon,
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
    _check_ledger(ledger, caller)
    be = resolve_backend(backend, rng)
    if be.discrete:
        be.add_l2_laplace(x, 1.0, sensitivity=sens)  # raises its explanatory refusal
    d = x.size
    scale = _div_up(be.effective_sensitivity(sens, kind="l2", dim=d), eps)
    _record(ledger, lambda: PrivacyEvent("l2_laplace", eps, 0.0, rho=eps * eps / 2.0,
                                 note=_note(be, sens, d, scale=scale)))
    out = be.add_l2_laplace(x, scale, sensitivity=sens)
    return float(out.reshape(())) if scalar else out


# =============================================================================================
# selection mechanisms
# =============================================================================================
def exponential_mechanism(scores: np.ndarray, *, epsilon: float,
                          sensitivity: float | None = None, monotonic: bool = False,
                          range_sensitivity: float | None = None,
                          clip_range: tuple[float, float] | None = None, ledger: Any = None,
                          rng: RNGLike = None, backend: Backend = None) -> int:
    """Exponential mechanism: index ``i`` with probability proportional to ``exp(w * scores[i])``.

    ``w = epsilon / (2 sensitivity)`` for general scores, ``epsilon / sensitivity`` with
    ``monotonic=True``, ``epsilon / range_sensitivity`` for bounded-range scores. Drawn by the
    Gumbel-max trick in log space (numpy backend: ``argmax_i w (q_i - max q) + G_i`` with i.i.d.
    standard Gumbel ``G_i``) or by exact rejection sampling on grid-rounded scores (secure
    backend).

    Parameters
    ----------
    scores : array-like of float, shape (m,)
        One score per candidate; ``-inf`` marks an infeasible candidate (never selected). NaN
        and ``+inf`` are refused, and so is a vector of only ``-inf``.
    epsilon : float
        Privacy budget of this selection, > 0.
    sensitivity : float, optional
        ``Delta``: the largest ``|q_D(c) - q_D'(c)|`` over candidates and neighbours.
    monotonic : bool, default=False
        Declare that for each neighbouring pair all score differences ``q_D(c) - q_D'(c)`` have
        the same sign (e.g. add/remove-one-record neighbours with scores that can only rise
        when a record is added). Halves the noise.
    range_sensitivity : float, optional
        ``R``, instead of ``sensitivity``: for every neighbouring pair there is an ``a`` with
        ``q_D(c) - q_D'(c)`` in ``[a, a + R]`` for every candidate ``c``.
    clip_range : (float, float), optional
        Clip finite scores to ``[low, high]`` before selecting. Clipping is 1-Lipschitz, so
        any sensitivity bound of the raw scores still holds, and with ``high - low <=
        sensitivity`` the guarantee holds even if the scoring function misbehaves.
    ledger : object with ``record(event)``, optional
        Receives ``PrivacyEvent("exponential_mechanism", epsilon, rho=epsilon**2/8)`` before
        the draw.
    rng, backend
        As in :func:`laplace`.

    Returns
    -------
    int
        Index of the selected candidate.

    Guarantee
    ---------
    epsilon-DP and epsilon-bounded-range, hence epsilon**2/8-zCDP [CR21]. Write
    ``delta(c) = q_D(c) - q_D'(c)`` for neighbours ``D, D'``. Then

        ``ln P_D(c) / P_D'(c) = w delta(c) - ln sum_c' P_D'(c') exp(w delta(c'))``,

    which lies in ``[w (delta(c) - max delta), w (delta(c) - min delta)]``; so the privacy loss
    is at most ``w (max_c delta(c) - min_c delta(c))`` in absolute value, and two outcomes'
    losses differ by at most the same amount (bounded range [DR19]). With ``|delta| <= Delta``
    the range is at most ``2 Delta`` (``w = epsilon / (2 Delta)``, [MT07]); with monotone
    scores at most ``Delta`` (``w = epsilon / Delta``); with range sensitivity ``R`` at most
    ``R`` (``w = epsilon / R``). Both general bounds are attained (tests). A data-dependent
    term common to every candidate cancels: marginal gains ``F_D(S + e) - F_D(S)`` have range
    sensitivity ``2 Delta`` when ``F`` has sensitivity ``Delta``, so a greedy step drawing with
    weights ``exp(eps' * gain)`` costs ``2 eps' Delta``
    (:func:`exponential_mechanism_epsilon`). The set of ``-inf`` candidates must not depend on
    the data (e.g. a constraint's feasibility), or the ratio is unbounded.

    Secure backend: scores are rounded to the grid ``g Z`` exactly; this moves each score
    difference by less than one grid step on each side, so ``Delta`` is replaced by
    ``g ceil(Delta / g)`` (and ``R`` by ``g (ceil(R / g) + 1)``) and the guarantee stays exact.

    Neighbouring relation / sensitivity assumed
    -------------------------------------------
    Any relation for which the score vector obeys the declared bound.

    Input domain
    ------------
    Real scores, ``-inf`` allowed for infeasible candidates.

    Citations
    ---------
    [MT07]; [DR14] Thm 3.10; [DR19]; [CR21]; [CKS20] and [Ilv20] for the exact sampler.

    Runtime
    -------
    O(m) vectorised (numpy); expected O(m) exact Bernoulli trials (secure).
    """
    caller = "exponential_mechanism"
    q = _scores(scores, caller, clip_range)
    eps = _epsilon(epsilon, caller)
    base, kind, c = _selection_sensitivity(sensitivity, monotonic, range_sensitivity, caller)
    _check_ledger(ledger, caller)
    be = resolve_backend(backend, rng)
    weight = _div_down(eps, c * be.effective_sensitivity(base, kind=kind))
    _record(ledger, lambda: PrivacyEvent("exponential_mechanism", eps, 0.0, rho=eps * eps / 8.0,
                                 note=_note(be, base, 1, weight=weight, kind=kind,
                                            monotonic=bool(monotonic))))
    return be.exponential(q, weight, sensitivity=base)


def exponential_mechanism_probabilities(scores: np.ndarray, *, epsilon: float,
                                        sensitivity: float | None = None,
                                        monotonic: bool = False,
                                        range_sensitivity: float | None = None,
                                        clip_range: tuple[float, float] | None = None,
                                        log: bool = False, backend: Backend = None
                                        ) -> np.ndarray:
    """Exact output distribution of :func:`exponential_mechanism` (softmax in log space).

    Same parameters as :func:`exponential_mechanism`. With a grid ``backend`` (an instance or
    ``"secure"``) the distribution is that of its draws: scores rounded to its grid and the
    weight computed from its effective sensitivity. Nothing is drawn or recorded.

    Returns
    -------
    numpy.ndarray, shape (m,)
        Probabilities (or log-probabilities with ``log=True``; ``-inf`` for infeasible
        candidates).
    """
    caller = "exponential_mechanism_probabilities"
    q = _scores(scores, caller, clip_range)
    eps = _epsilon(epsilon, caller)
    base, kind, c = _selection_sensitivity(sensitivity, monotonic, range_sensitivity, caller)
    if backend is not None:
        be = resolve_backend(backend)
        weight = _div_down(eps, c * be.effective_sensitivity(base, kind=kind))
        q = be.quantize_scores(q, sensitivity=base)
    else:
        weight = _div_down(eps, c * base)
    z = weight * (q - q[np.isfinite(q)].max())
    logp = z - special.logsumexp(z[np.isfinite(z)])
    return logp if log else np.exp(logp)


def report_noisy_max(scores: np.ndarray, *, epsilon: float, sensitivity: float,
                     monotonic: bool = False, clip_range: tuple[float, float] | None = None,
                     ledger: Any = None, rng: RNGLike = None, backend: Backend = None) -> int:
    """Report-noisy-max with Laplace noise: ``argmax_i scores[i] + Laplace(b)``.

    ``b = 2 sensitivity / epsilon`` for general scores, ``sensitivity / epsilon`` with
    ``monotonic=True``. (Report-noisy-max with *exponential* noise is permute-and-flip in
    distribution [D+21]: use :func:`permute_and_flip`.)

    Parameters
    ----------
    scores : array-like of float, shape (m,)
        As in :func:`exponential_mechanism` (``-inf`` never wins).
    epsilon : float
    sensitivity : float
        Largest ``|q_D(c) - q_D'(c)|`` over candidates and neighbours.
    monotonic : bool, default=False
        As in :func:`exponential_mechanism`.
    clip_range : (float, float), optional
        As in :func:`exponential_mechanism`.
    ledger : object with ``record(event)``, optional
        Receives ``PrivacyEvent("report_noisy_max", epsilon, rho=epsilon**2/2)``.
    rng, backend
        As in :func:`laplace`.

    Returns
    -------
    int

    Guarantee
    ---------
    epsilon-DP (hence epsilon**2/2-zCDP). Fix the noise of every other candidate and let
    ``m(q) = max_{j != i} q_j + Z_j``; candidate ``i`` wins when ``Z_i > m(q) - q_i``. Between
    neighbours ``m(q) - q_i`` moves by at most ``2 Delta`` (``Delta`` when monotone), and the
    Laplace survival function satisfies ``S(x + t) >= exp(-t / b) S(x)``, so each winning
    probability changes by a factor at most ``exp(2 Delta / b)`` ([DR14, Claim 3.9] for the
    monotone counting case). Secure backend: discrete Laplace on grid-rounded scores with
    uniform tie-breaking (equivalent to adding Uniform[0,1) to the integer noise, which keeps
    the survival-function bound for integer shifts).

    Neighbouring relation / sensitivity assumed
    -------------------------------------------
    Any relation for which every score moves by at most ``sensitivity``.

    Input domain
    ------------
    Real scores, ``-inf`` allowed.

    Citations
    ---------
    [DR14] Claim 3.9; [D+21].

    Runtime
    -------
    O(m).
    """
    caller = "report_noisy_max"
    q = _scores(scores, caller, clip_range)
    eps = _epsilon(epsilon, caller)
    base, kind, c = _selection_sensitivity(sensitivity, monotonic, None, caller)
    _check_ledger(ledger, caller)
    be = resolve_backend(backend, rng)
    scale = _div_up(c * be.effective_sensitivity(base, kind=kind), eps)
    _record(ledger, lambda: PrivacyEvent("report_noisy_max", eps, 0.0, rho=eps * eps / 2.0,
                                 note=_note(be, base, 1, scale=scale, monotonic=bool(monotonic))))
    return be.report_noisy_max(q, scale, sensitivity=base)


def permute_and_flip(scores: np.ndarray, *, epsilon: float, sensitivity: float,
                     monotonic: bool = False, clip_range: tuple[float, float] | None = None,
                     ledger: Any = None, rng: RNGLike = None, backend: Backend = None) -> int:
    """Permute-and-flip (McKenna and Sheldon 2020, Algorithm 1).

    Visit the candidates in a uniformly random order and stop at the first ``r`` whose coin
    ``Bernoulli(exp(w (q_r - max q)))`` lands heads, ``w = epsilon / (2 sensitivity)``
    (``epsilon / sensitivity`` when monotonic). Equivalent in distribution to report-noisy-max
    with Exponential(1/w) noise [D+21], which is how the numpy backend draws it; the secure
    backend runs the permutation with exact coins on grid-rounded scores.

    Parameters
    ----------
    scores : array-like of float, shape (m,)
        As in :func:`exponential_mechanism`.
    epsilon : float
    sensitivity : float
    monotonic : bool, default=False
    clip_range : (float, float), optional
    ledger : object with ``record(event)``, optional
        Receives ``PrivacyEvent("permute_and_flip", epsilon, rho=epsilon**2/2)``.
    rng, backend
        As in :func:`laplace`.

    Returns
    -------
    int

    Guarantee
    ---------
    epsilon-DP [MS20, Thm 1] (monotone case: the report-noisy-max argument above with the
    exponential survival function), hence epsilon**2/2-zCDP. Never worse in expected score than
    the exponential mechanism at the same epsilon [MS20]. The bound is attained: with two
    candidates the lower one is selected with probability ``exp(w (q_low - q_high)) / 2``.

    Neighbouring relation / sensitivity assumed
    -------------------------------------------
    Any relation for which every score moves by at most ``sensitivity``.

    Input domain
    ------------
    Real scores, ``-inf`` allowed.

    Citations
    ---------
    [MS20]; [D+21].

    Runtime
    -------
    O(m) (numpy); expected O(m) exact coins at worst (secure).
    """
    caller = "permute_and_flip"
    q = _scores(scores, caller, clip_range)
    eps = _epsilon(epsilon, caller)
    base, kind, c = _selection_sensitivity(sensitivity, monotonic, None, caller)
    _check_ledger(ledger, caller)
    be = resolve_backend(backend, rng)
    weight = _div_down(eps, c * be.effective_sensitivity(base, kind=kind))
    _record(ledger, lambda: PrivacyEvent("permute_and_flip", eps, 0.0, rho=eps * eps / 2.0,
                                 note=_note(be, base, 1, weight=weight,
                                            monotonic=bool(monotonic))))
    return be.permute_and_flip(q, weight, sensitivity=base)


def permute_and_flip_probabilities(scores: np.ndarray, *, epsilon: float, sensitivity: float,
                                   monotonic: bool = False,
                                   clip_range: tuple[float, float] | None = None,
                                   backend: Backend = None) -> np.ndarray:
    """Exact output distribution of :func:`permute_and_flip`.

    With acceptance probabilities ``p_j = exp(w (q_j - max q))`` and the random order given by
    i.i.d. uniform arrival times, candidate ``i`` is selected with probability

        ``P(i) = p_i * integral_0^1 prod_{j != i} (1 - t p_j) dt``,

    a polynomial integral of degree ``m - 1`` evaluated exactly (up to rounding) by
    ``floor(m/2) + 1``-point Gauss-Legendre quadrature. With a grid ``backend`` the scores are
    rounded to its grid and the weight uses its effective sensitivity, as in its draws.
    Candidates whose acceptance probability underflows (``w (max q - q_i) > ~745``) get 0.

    Returns
    -------
    numpy.ndarray, shape (m,)

    Runtime
    -------
    O(m^2) time, O(m) memory per block of candidates.
    """
    caller = "permute_and_flip_probabilities"
    q = _scores(scores, caller, clip_range)
    eps = _epsilon(epsilon, caller)
    base, kind, c = _selection_sensitivity(sensitivity, monotonic, None, caller)
    if backend is not None:
        be = resolve_backend(backend)
        weight = _div_down(eps, c * be.effective_sensitivity(base, kind=kind))
        q = be.quantize_scores(q, sensitivity=base)
    else:
        weight = _div_down(eps, c * base)
    finite = np.isfinite(q)
    p = np.zeros(q.size)
    p[finite] = np.exp(weight * (q[finite] - q[finite].max()))
    live = np.flatnonzero(p > 0)
    pl = p[live]
    nodes, wts = special.roots_legendre(live.size // 2 + 1)
    t = (nodes + 1.0) / 2.0
    wts = wts / 2.0
    log_all = np.zeros(t.size)
    block = max(1, 4_000_000 // t.size)
    for s in range(0, pl.size, block):
        log_all += np.log1p(-np.outer(t, pl[s:s + block])).sum(axis=1)
    out = np.zeros(q.size)
    for s in range(0, pl.size, block):
        lb = np.log1p(-np.outer(t, pl[s:s + block]))
        inner = (wts[:, None] * np.exp(log_all[:, None] - lb)).sum(axis=0)
        out[live[s:s + block]] = pl[s:s + block] * inner
    return out
