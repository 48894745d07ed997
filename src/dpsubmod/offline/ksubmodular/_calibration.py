"""The k-submodular methods' inputs and calibration, all from public parameters: the objective
and the matroid checked, the per-step budget of Algorithms 3 and 4 (Rafiey and Yoshida, ICML
2020) and the mechanism of their steps, Algorithm 4's subset sizes, and the additive error of
Algorithm 3's stated guarantee.

The methods, and why a step costs ``eps_step``, are described in
:mod:`dpsubmod.offline.ksubmodular.methods`; this module holds their calibration so that the
algorithms' module stays readable.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from ..._validation import check_epsilon, check_int, check_real, check_same_ground_set
from ...constraints import Constraint, Matroid, UniformMatroid
from ...errors import ParameterTypeError
from ...functions.ksubmodular.base import KSubmodularFunction
from ...privacy.backends import NoiseBackend
from ...privacy.composition import check_composition
from ...privacy.selection import ExponentialMechanism
from ...privacy.split import Split, _split
from .._common import check_score_sensitivity, exponential_step


def _resolve(f: object, constraint: object, caller: str) -> tuple[KSubmodularFunction, Matroid]:
    if not isinstance(f, KSubmodularFunction):
        raise ParameterTypeError(
            f"The 'f' parameter of {caller} must be a KSubmodularFunction; got "
            f"{type(f).__name__}. Wrap per-label set functions in PerLabelSum, or use a family "
            "from dpsubmod.functions.ksubmodular."
        )
    if isinstance(constraint, numbers.Integral) and not isinstance(constraint, bool):
        b = check_int(constraint, "constraint", low=1, high=f.n, caller=caller,
                      fix=f"Pass a total size 1 <= B <= {f.n}, or a Matroid.")
        return f, UniformMatroid(f.n, b)
    if not isinstance(constraint, Matroid):
        kind = type(constraint).__name__
        extra = " A knapsack is not supported here." if isinstance(constraint, Constraint) else ""
        raise ParameterTypeError(
            f"The 'constraint' parameter of {caller} must be an int B (total size) or a dpsubmod "
            f"Matroid on the items; got {kind}.{extra}"
        )
    check_same_ground_set(f.n, constraint.n, "The objective 'f'", "the 'constraint'")
    return f, constraint


def _is_uniform(constraint: Matroid) -> bool:
    return isinstance(constraint, UniformMatroid)


def _calibrate(caller: str, f: KSubmodularFunction, rank: int, epsilon: float, delta: float,
               composition: str, sensitivity: float | None) -> tuple[float, Split]:
    """The sensitivity and the per-step budget of Algorithms 3 and 4, from an ``epsilon`` and
    ``delta`` their public entry has validated."""
    sens = f.require_sensitivity(sensitivity, caller=caller)
    split = _split(epsilon, delta, rank, check_composition(composition, caller), True, caller)
    check_score_sensitivity(2.0 * sens, sens, caller)
    return sens, split


def _step_mechanism(caller: str, eps_step: float, sens: float,
                    noise: NoiseBackend | str) -> ExponentialMechanism:
    """The exponential mechanism of one step, built (so its weight checked) before the charge."""
    # Gains share the term F(x), which cancels: their range sensitivity is 2 Delta.
    return exponential_step(caller, eps_step, noise, range_sensitivity=2.0 * sens)


def ks_sample_sizes(n: int, rank: int, gamma: float) -> np.ndarray:
    """Algorithm 4's subset sizes ``s_t = min(ceil((n - t + 1) / (r - t + 1) ln(r / gamma)),
    n - t + 1)`` for ``t = 1..r``.

    The paper prints the cap as ``|E|``; ``n - t + 1`` is the number of unlabelled items, the most
    that can be drawn (seed 004 note, item 10). ``log`` is the natural logarithm.
    """
    n = check_int(n, "n", low=1, caller="ks_sample_sizes")
    rank = check_int(rank, "rank", low=1, high=n, caller="ks_sample_sizes")
    gamma = check_real(gamma, "gamma", low=0.0, high=1.0, low_open=True, high_open=True,
                       caller="ks_sample_sizes")
    t = np.arange(1, rank + 1)
    left = n - t + 1
    # ln(r / gamma) as a difference: r / gamma overflows for a subnormal gamma
    raw = np.ceil(np.minimum(left / (rank - t + 1) * (math.log(rank) - math.log(gamma)), n))
    return np.clip(raw.astype(np.int64), 1, left)


def ks_additive_error(n: int, k: int, rank: int, sensitivity: float, epsilon_step: float) -> float:
    """The additive term of Algorithm 3's expected guarantee,
    ``E[F(x)] >= OPT / 2 - r Delta (1 + ln(k n)) / eps_step``.

    Derivation: the exponential mechanism with weights ``exp(eps' q)`` over ``N`` candidates has
    ``P[max q - q(out) >= u] <= N exp(-eps' u)``, hence ``E[max q - q(out)] <= (1 + ln N) / eps'``
    with ``N = k |Lambda_t| <= k n``. Sakaue's exchange argument gives ``F(o^{t-1}) - F(o^t) <=
    max gain_t``, and telescoping over the ``r`` steps ``OPT - F(x) <= F(x) - F(0) + sum_t (max
    gain_t - chosen gain_t)``; with ``eps' = eps_step / (2 Delta)`` the sum's expectation is at most
    ``2 r Delta (1 + ln(k n)) / eps_step``, and half of it is the term returned. For Algorithm 4
    on a uniform matroid subtract ``gamma OPT / 2`` more.
    """
    n = check_int(n, "n", low=1, caller="ks_additive_error")
    k = check_int(k, "k", low=1, caller="ks_additive_error")
    rank = check_int(rank, "rank", low=1, caller="ks_additive_error")
    sensitivity = check_real(sensitivity, "sensitivity", low=0.0, caller="ks_additive_error")
    epsilon_step = check_epsilon(epsilon_step, "epsilon_step", caller="ks_additive_error")
    return rank * sensitivity * (1.0 + math.log(k * n)) / epsilon_step
