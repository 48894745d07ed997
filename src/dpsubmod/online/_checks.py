"""Argument checks and small helpers shared by the online learners of several problems.

Each is called once, at construction or in a learner's trusted inner loop; the messages follow
the package's shape (the argument, the caller, what is accepted, the fix).
"""

from __future__ import annotations

import warnings

import numpy as np

from .._validation import check_finite, check_real, is_noise_off
from ..errors import GroundSetMismatchError, ValidationError

#: Noise distributions of a tree-aggregation counter over a gradient (``"l2laplace"`` is the
#: high-dimensional Laplace of Smith and Thakurta: uniform direction, Gamma(d, b) radius; pure
#: epsilon-DP for an l2 sensitivity).
NOISES = ("l2laplace", "laplace", "gaussian")


def check_privacy_args(epsilon: object, sensitivity: object, lipschitz: object, noise: object,
                       delta: object, caller: str) -> None:
    """Validate the privacy arguments of a learner built on a PFTAL counter."""
    if not is_noise_off(epsilon):
        check_real(epsilon, "epsilon", low=0.0, low_open=True, caller=caller,
                   fix="Pass a positive privacy budget such as epsilon=1.0, or epsilon=math.inf "
                       "to switch the noise off (not private).")
    if sensitivity is not None:
        check_real(sensitivity, "sensitivity", low=0.0, low_open=True, caller=caller)
    if lipschitz is not None:
        check_real(lipschitz, "lipschitz", low=0.0, low_open=True, caller=caller)
    if not is_noise_off(epsilon) and sensitivity is None and lipschitz is None:
        raise ValidationError(
            f"{caller} needs 'sensitivity' (the l2 sensitivity of one round's gradient) or "
            "'lipschitz' (a gradient-norm bound G, giving sensitivity 2G) to calibrate its noise; "
            "pass one, or epsilon=math.inf for the non-private algorithm."
        )
    if not isinstance(noise, str) or noise not in NOISES:
        raise ValidationError(
            f"The 'noise' parameter of {caller} must be one of {NOISES}; got {noise!r}."
        )
    check_real(delta, "delta", low=0.0, high=1.0, high_open=True, caller=caller)
    if noise == "gaussian" and not is_noise_off(epsilon) and float(delta) == 0.0:  # type: ignore[arg-type]
        raise ValidationError(
            f"noise='gaussian' in {caller} gives (epsilon, delta)-DP and needs delta > 0; pass "
            "delta (e.g. 1e-6) or use noise='l2laplace' for pure DP."
        )


def clip_norm(z: np.ndarray, bound: float, ord: int = 2) -> np.ndarray:
    """``z`` rescaled to norm at most ``bound`` (l2, or l1 with ``ord=1``): the sensitivity of
    a counter's input then holds for any input."""
    norm = float(np.abs(z).sum()) if ord == 1 else float(np.sqrt(z @ z))
    if norm > bound:
        return z * (bound / norm)
    return z


def check_x1(x1: object, n: int, caller: str) -> None:
    """A first iterate must be a point of the cube :math:`[0, 1]^n`."""
    if x1 is None:
        return
    a = check_finite(x1, "x1", caller=caller, ndim=1)
    if a.shape != (n,):
        raise GroundSetMismatchError(
            f"The 'x1' parameter of {caller} must have shape ({n},); got {a.shape}."
        )
    if a.size and (a.min() < 0 or a.max() > 1):
        raise ValidationError(
            f"The 'x1' parameter of {caller} must lie in the cube [0, 1]^n; clip it first."
        )


def check_gamma(gamma: object, caller: str, what: str = "an exploration") -> float:
    """A given ``gamma``: a probability in (0, 1]. A value above 1 is refused rather than
    clipped: only the theorems' default rates, which exceed 1 at small ``T``, are clipped."""
    return check_real(gamma, "gamma", low=0.0, low_open=True, high=1.0, caller=caller,
                      fix=f"gamma is {what} probability; pass a value in (0, 1], or leave it "
                          "None for the default rate.")


def resolve_gamma(gamma: float | None, default: float, caller: str, what: str, *,
                  warn: bool = True, consequence: str = "every round explores uniformly over "
                  "the chain", stacklevel: int = 4) -> float:
    """The exploration probability: ``gamma`` or ``default``, clipped to 1 (with a warning when
    ``warn``: a value above 1 is not a probability, and the theorem's rate needs a larger T)."""
    g = default if gamma is None else float(gamma)
    if g > 1.0 and not warn:
        return 1.0
    if g > 1.0:
        source = f"the default {what}" if gamma is None else "the given gamma"
        warnings.warn(
            f"{caller}: {source} is {g:.4g} > 1, which is not a probability; clipped to 1 "
            f"({consequence}). The theorem's rate needs a larger T.",
            RuntimeWarning, stacklevel=stacklevel,
        )
        g = 1.0
    return g


def check_finite_epsilon(epsilon: object, caller: str) -> None:
    """A positive, finite ``epsilon`` of a private learner (inf is refused: every run releases)."""
    check_real(epsilon, "epsilon", low=0.0, low_open=True, caller=caller,
               fix="Pass a finite privacy budget such as epsilon=1.0.")
