"""Pure-DP calibration (budget -> noise parameter) and privacy maps (noise parameter -> budget)
of the Laplace, l2 Laplace and selection mechanisms.

Scales are rounded up, and weights and budgets spent rounded so that the floating-point result
never claims more privacy than the real-number formula. The Gaussian mechanism's calibrations are
in :mod:`~dpsubmod.privacy.gaussian_calibration`. References as in
:mod:`dpsubmod.privacy.mechanisms`.
"""

from __future__ import annotations

from ._inputs import (
    _div_down,
    _div_up,
    _epsilon,
    _mul_up,
    _noise_parameter,
    _positive,
    _selection_sensitivity,
    _sensitivity,
)

__all__ = [
    "laplace_scale",
    "laplace_epsilon",
    "l2_laplace_scale",
    "l2_laplace_epsilon",
    "exponential_mechanism_weight",
    "exponential_mechanism_epsilon",
    "report_noisy_max_scale",
    "report_noisy_max_epsilon",
]


def laplace_scale(epsilon: float, sensitivity: float) -> float:
    """Laplace scale ``b = sensitivity / epsilon`` (rounded up) for an eps-DP release.

    ``sensitivity`` is the l1 sensitivity of the (scalar or vector) query. [DR14, Thm 3.6]
    A scale outside floating-point range (``epsilon / sensitivity`` beyond about 1e-308 or
    1e308) is refused.
    """
    caller = "laplace_scale"
    return _noise_parameter(_div_up(_sensitivity(sensitivity, caller), _epsilon(epsilon, caller)),
                            "Laplace scale", caller)


def laplace_epsilon(scale: float, sensitivity: float) -> float:
    """Privacy map of the Laplace mechanism: ``epsilon = sensitivity / scale`` (rounded up)."""
    return _div_up(_sensitivity(sensitivity, "laplace_epsilon"),
                   _positive(scale, "scale", "laplace_epsilon"))


def l2_laplace_scale(epsilon: float, sensitivity: float) -> float:
    """Scale of the l2 Laplace density ``exp(-||z||_2 / b)``: ``b = l2 sensitivity / epsilon``."""
    caller = "l2_laplace_scale"
    return _noise_parameter(_div_up(_sensitivity(sensitivity, caller), _epsilon(epsilon, caller)),
                            "l2 Laplace scale", caller)


def l2_laplace_epsilon(scale: float, sensitivity: float) -> float:
    """Privacy map of the l2 Laplace mechanism: ``epsilon = l2 sensitivity / scale``."""
    return _div_up(_sensitivity(sensitivity, "l2_laplace_epsilon"),
                   _positive(scale, "scale", "l2_laplace_epsilon"))


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
