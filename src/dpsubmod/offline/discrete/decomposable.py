"""Decomposable private greedy (Gupta, Ligett, McSherry, Roth and Talwar 2010, SODA,
"Differentially private combinatorial optimization", combinatorial public projects).

For objectives that are sums of per-record monotone submodular terms: a per-step budget that
does not shrink with the number of steps, derived in :func:`gupta_privacy`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.optimize import brentq, minimize_scalar

from ..._rng import RNGLike
from ..._validation import check_real
from ...errors import SensitivityError, ValidationError
from ...functions.base import SetFunction
from ...privacy.plan import backend_name
from .._common import (
    PrivateCall,
    checked_call,
    exponential_step,
    is_knapsack,
    make_result,
    require_finite,
)
from ..guarantees import em_greedy_guarantee
from ..registry import register
from ..result import Result

__all__ = ["private_greedy_decomposable", "gupta_step_epsilon", "gupta_privacy"]


# ---------------------------------------------------------------------------------------------
# Gupta et al. 2010: decomposable objectives
# ---------------------------------------------------------------------------------------------
def _martingale_bound(delta: float) -> float:
    """B(delta) with P[sum_t mu_t > B] <= delta whenever X_t in [0, 1], sum_t X_t <= 1 and
    mu_t = E[X_t | past].

    For any lambda > 0, exp(sum_t [(1 - e^-lambda) mu_t - lambda X_t]) is a supermartingale
    (E[e^{-lambda X}] <= 1 - (1 - e^{-lambda}) mu <= exp(-(1 - e^{-lambda}) mu) for X in [0, 1]),
    so by Ville's inequality, with probability >= 1 - delta,
    sum mu_t <= (lambda + ln(1/delta)) / (1 - e^-lambda). We minimise over lambda.
    """
    return _martingale_bound_log(-math.log(delta))


def _martingale_bound_log(L: float) -> float:
    """:func:`_martingale_bound` from ``L = ln(1 / delta)``, which stays finite when ``delta``
    itself underflows."""
    res = minimize_scalar(lambda lam: (lam + L) / -math.expm1(-lam), bounds=(1e-6, 50.0),
                          method="bounded", options={"xatol": 1e-10})
    return float(res.fun)


def gupta_privacy(eps_prime: float, delta_prime: float) -> tuple[float, float]:
    """(epsilon, delta) of the decomposable greedy run with weights ``exp(eps' gain / Delta)``.

    Derivation (replace-one neighbours ``D = D0 + I``, ``D' = D0 + J``; each record's term is
    monotone submodular with values in ``[0, Delta]``, scaled here to [0, 1]):

    * Adding a record only raises gains, so ``Z_{D0+I} >= Z_{D0}`` at every step and the
      log-ratio of a whole selection path telescopes:
      ``log P_{D0+I}/P_{D0} <= eps' * f_I(S_k) <= eps'`` for every path, any number of steps.
    * The other way, ``log P_{D0}/P_{D0+J} <= sum_t log E_{p_t}[exp(eps' X_t)]
      <= (e^{eps'} - 1) sum_t mu_t`` with ``X_t = f_J``'s gain at step t. Since
      ``sum_t X_t = f_J(S_k) <= 1``, :func:`_martingale_bound` gives ``sum_t mu_t <= B(delta')``
      with probability ``>= 1 - delta'`` over the path.
    * Chaining the two (a pure ``eps'`` step composed with an ``(eps2, delta')`` one) gives
      ``(eps' + (e^{eps'} - 1) B(delta'), e^{eps'} delta')`` for replace-one neighbours, in
      both directions.
    """
    eps_prime = check_real(eps_prime, "eps_prime", low=0.0, caller="gupta_privacy")
    delta_prime = check_real(delta_prime, "delta_prime", low=0.0, high=1.0, low_open=True,
                             high_open=True, caller="gupta_privacy")
    try:
        delta_out = math.exp(eps_prime) * delta_prime
    except OverflowError:  # eps' beyond ~709: no finite guarantee
        return math.inf, math.inf
    return _gupta_epsilon(eps_prime, -math.log(delta_prime)), delta_out


def _gupta_epsilon(eps_prime: float, L: float) -> float:
    """The epsilon of :func:`gupta_privacy` with ``L = ln(1 / delta')``."""
    try:
        grow = math.expm1(eps_prime)
    except OverflowError:
        return math.inf
    return eps_prime + grow * _martingale_bound_log(L)


def gupta_step_epsilon(epsilon: float, delta: float) -> float:
    """The largest ``eps'`` with :func:`gupta_privacy` ``(eps', delta e^{-eps'}) <= (epsilon,
    delta)``; it does not depend on the number of steps.

    The root lies in ``(0, log1p(epsilon)]`` (the martingale bound is at least 1, so
    ``e^{eps'} - 1 <= epsilon``), a bracket that stays in floating-point range for every finite
    ``epsilon``; it is returned rounded down, so the guarantee holds exactly as stated.
    """

    log_inv_delta = -math.log(delta)

    def excess(ep: float) -> float:  # delta' = delta e^{-eps'}, in log space
        return _gupta_epsilon(ep, log_inv_delta + ep) - epsilon

    # solved for t = eps' / epsilon in (0, 1], so that the tolerance is relative at any scale
    hi = min(1.0, math.log1p(epsilon) / epsilon)

    def scaled(t: float) -> float:
        return excess(t * epsilon) / epsilon

    t = hi if scaled(hi) <= 0.0 else float(brentq(scaled, 0.0, hi, xtol=hi * 1e-15, rtol=1e-13))
    root = t * epsilon
    while root > 0.0 and excess(root) > 0.0:
        root = math.nextafter(root, 0.0) if root < 1e-300 else root * (1.0 - 1e-12)
    return root


def _private_greedy_decomposable(call: PrivateCall, *, sensitivity: float | None) -> Result:
    """:func:`private_greedy_decomposable` below its public checks: plan the run from its step
    mechanism, charge the plan once, then draw."""
    caller, f, constraint = call.caller, call.f, call.constraint
    if call.delta == 0.0:
        raise ValidationError(
            f"{caller} is (epsilon, delta)-DP with delta > 0 by construction; pass delta=1e-6 "
            "(say), or use method='private_greedy' for pure DP."
        )
    if is_knapsack(constraint):
        raise ValidationError(f"{caller} supports matroid constraints; use private_greedy for a "
                              "knapsack.")
    if f.data_model != "monotone-records":
        # The proof (gupta_privacy) needs a sum of monotone per-record terms in [0, Delta]; an
        # arbitrary objective with a sensitivity can exceed the claimed delta.
        raise SensitivityError(
            f"{caller} needs an objective that is a sum of per-record monotone terms in "
            f"[0, sensitivity] (data_model='monotone-records'); {type(f).__name__} declares "
            f"{f.data_model!r}, for which the decomposable analysis does not hold even with "
            "sensitivity=. Use private_greedy instead."
        )
    if backend_name(call.backend) != "numpy":
        raise ValidationError(
            f"{caller} runs on the numpy backend only: its analysis telescopes exact gains, "
            "which rounding to a grid would break. Use private_greedy for backend='secure'."
        )
    delta_sens = f.require_sensitivity(sensitivity, caller=caller)
    eps_prime = gupta_step_epsilon(call.epsilon, call.delta)
    if eps_prime <= 0.0:
        raise ValidationError(
            f"The 'epsilon' parameter of {caller} is {call.epsilon!r}, too small for the "
            "decomposable analysis to give any step a positive budget in floating point; pass "
            "a larger epsilon."
        )
    # weight exp(eps' g / Delta) is the mechanism's exp(eps_m g / (2 s)) with eps_m = 2 eps' and
    # s = Delta
    step = exponential_step(caller, 2.0 * eps_prime, call.noise, sensitivity=delta_sens)
    k = constraint.max_size
    # the steps' events are planned; the call's guarantee is the whole-run (epsilon, delta) of
    # gupta_privacy, not their composition
    report, allowance = call.charge_plan(
        "private_greedy_decomposable", [step.privacy_map()._times(k)], delta=call.delta,
        composition="gupta", guarantee=(call.epsilon, call.delta))

    st = f.state()
    start = f.evaluations
    trace: list[float] = []
    for _ in range(k):
        cand = np.flatnonzero(constraint.can_add(st))
        if cand.size == 0:
            break
        g = require_finite(st.gains(cand), f, caller, "a marginal gain", private=True)
        j = step.release(g, budget=allowance)
        st.add(int(cand[j]))
        trace.append(float(g[j]))
    params = {"epsilon": call.epsilon, "delta": call.delta, "epsilon_prime": eps_prime,
              "steps": k, "sensitivity": delta_sens, "backend": backend_name(call.backend)}
    guarantee = em_greedy_guarantee(constraint, f.n, eps_prime / delta_sens, theorem=(
        "Gupta, Ligett, McSherry, Roth and Talwar 2010 (decomposable greedy, weight eps' / "
        "Delta)"))
    return make_result(f, st.selected, "private_greedy_decomposable", privacy=report,
                       evaluations=f.evaluations - start, params=params, trace=trace,
                       guarantee=guarantee)


@register("private_greedy_decomposable", private=True, needs_delta=True, backends=("numpy",),
          summary="Decomposable private greedy (Gupta et al. 2010), (eps, delta)-DP",
          core=_private_greedy_decomposable, data_models=("monotone-records",))
def private_greedy_decomposable(f: SetFunction, constraint: object, *, epsilon: float,
                                delta: float, sensitivity: float | None = None,
                                backend: Any = None, budget: Any = None,
                                rng: RNGLike = None) -> Result:
    """Decomposable private greedy (Gupta, Ligett, McSherry, Roth and Talwar 2010, Section 6:
    combinatorial public projects).

    For ``F_D = sum over records of f_i`` with each ``f_i`` monotone submodular, ``f_i(empty) =
    0`` and ``0 <= f_i <= Delta`` (``data_model == "monotone-records"``; an average of per-record
    terms in [0, c] has ``Delta = c / N``), every step draws a feasible candidate with weight
    ``exp(eps' * gain / Delta)``, where ``eps'`` comes from :func:`gupta_step_epsilon` and does
    not shrink with the number of steps. The whole run is ``(epsilon, delta)``-DP for
    replace-one neighbours (derivation in :func:`gupta_privacy`); the telescoping argument holds
    for any constraint whose feasibility depends only on the current set, so cardinality and
    matroid constraints are both accepted.

    Compared with :func:`private_greedy` at the same (epsilon, delta), the per-step exponent is
    larger once ``k`` exceeds roughly ``ln(1/delta)``: the decomposable structure pays for itself
    on long selections.
    """
    caller = "private_greedy_decomposable"
    call = checked_call(caller, f, constraint, epsilon=epsilon, delta=delta, budget=budget,
                        rng=rng, backend=backend)
    return _private_greedy_decomposable(call, sensitivity=sensitivity)
