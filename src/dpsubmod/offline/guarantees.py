r"""The guarantee each offline method states for its run (``Result.guarantee``).

Each function returns the method's theorem, read at the run's public parameters, as
``E[F(S)] >= ratio * OPT - additive`` (:class:`~dpsubmod._guarantee.UtilityGuarantee`), for
monotone submodular ``F`` (monotone k-submodular for the ``ks_`` methods). Nothing here reads
the private data: the constraint, ``n``, epsilon, the sensitivity and the number of steps are
public.

Exponential-mechanism greedy steps. A step drawing from ``m`` candidates with weights
``exp(w q)`` has ``P[max q - q(out) >= u] <= m e^{-w u}``, hence an expected shortfall
``gamma <= (1 + ln m) / w``. Under a cardinality ``k`` the recursion
``OPT - F(S_{i+1}) <= (1 - 1/k)(OPT - F(S_i)) + gamma`` gives ``(1 - 1/e) OPT - k gamma``
(Nemhauser, Wolsey and Fisher 1978 with additive errors; Mitrovic et al. 2017, Theorem 1). Under a
matroid of rank ``r`` the exchange argument of Fisher, Nemhauser and Wolsey (1978) charges each
optimal element to a step whose chosen gain is at most ``gamma`` short of it:
``OPT <= 2 F(S) + r gamma``, i.e. ``OPT / 2 - r gamma / 2``. With a random subset of ``s``
candidates each step (stochastic greedy, Mirzasoleiman et al. 2015, Lemma 2, with ``accuracy =
exp(-s k / n)``) the ratio is ``1 - 1/e - accuracy`` and ``m = s``.

Knapsack (Mitrovic et al. 2017, knapsack variant). The run: cost-benefit steps, each an
exponential mechanism over the items ``C_i`` that still fit, with weights ``exp(w_r rho_i(e))``,
``rho_i(e) = (F(S_i + e) - F(S_i)) / c_e``, until nothing fits (at most ``k`` steps), giving
``G``; then ``e_s`` among the ``m`` items that fit alone, with weights ``exp(w_s F({e}))``; then
an exponential mechanism of weight ``w_c`` on ``(F(G), F({e_s}))`` releases one of the two sets.
Let ``O`` be optimal, ``U_i = O - S_i``, ``x_i = OPT - F(S_i)``, ``eta_i = max_{C_i} rho_i -
rho_i(e_{i+1}) >= 0`` (0 after the last step), ``b`` the budget (with the knapsack's relative
slack ``1e-12``), ``F`` monotone submodular with ``F(empty) >= 0``.

1. While ``max_{U_i} rho_i <= max_{C_i} rho_i``: ``x_i <= sum_{o in U_i} c_o rho_i(o) <= b
   max_{C_i} rho_i`` (submodularity, monotonicity, ``c(O) <= b``), so ``x_{i+1} <= (1 -
   c_{e_{i+1}} / b) x_i + c_{e_{i+1}} eta_i``.
2. Let ``l`` be the first step where this fails: an ``o*`` of best ratio in ``U_l`` is not in
   ``C_l``, i.e. does not fit, ``c(S_l) + c_{o*} > b``. (If there is none, the greedy stops with
   ``U`` empty and ``F(G) >= OPT``.) This is the "first item that did not fit" of Khuller, Moss
   and Naor (1999), taken among the optimal items because a private step ranks only the items
   that fit. Adding ``o*`` has no error: ``OPT - F(S_l + o*) <= (1 - c_{o*} / b) x_l``. The
   fractions add up to more than 1 and ``prod (1 - a_j) <= exp(-sum a_j)``, so
   ``F(S_l + o*) >= (1 - 1/e) OPT - sum_{i<l} c_{e_{i+1}} eta_i``.
3. ``F(S_l + o*) <= F(G) + F({o*}) <= F(G) + M_1``, ``M_1`` the best singleton that fits.
4. A draw among ``m`` candidates whose scores fall ``d_j`` short of the best loses
   ``sum u_j ln(1/u_j) / (1 + sum u_j) / w`` in expectation, ``u_j = e^{-w d_j}``; the numerator
   is concave, so equal ``u_j`` are worst: at most ``max_x (m-1) x / (e^x + m-1) / w =
   W((m-1)/e) / w`` (Lambert's ``W``; below ``(1 + ln m) / w``; ``W(1/e) = 0.2785`` for two
   candidates). ``sum_{i<l} c_{e_{i+1}} eta_i <= min(b max_i eta_i, c_max sum_i eta_i)``, with
   ``m`` the number of items that fit alone and ``c_max`` the largest of their costs; by the
   tail ``P[eta_i >= u] <= (m-1) e^{-w_r u}`` and a union over ``<= k`` steps, ``E max_i eta_i
   <= (1 + ln(k (m-1))) / w_r``, and ``E sum_i eta_i <= k W((m-1)/e) / w_r``. The singleton
   draw loses ``E[M_1 - F({e_s})] <= W((m-1)/e) / w_s``, the final choice ``W(1/e) / w_c``.
5. ``max(F(G), F({e_s})) >= (F(G) + F({e_s})) / 2``, hence ``E[F(S)] >= (1 - 1/e) / 2 OPT -
   [min(b (1 + ln(k (m-1))), k c_max W((m-1)/e)) / w_r + W((m-1)/e) / w_s] / 2 - W(1/e) /
   w_c``.

Continuous methods. Two readings of ``T`` steps of length ``delta = 1/T`` from ``x_0 = 0``,
each step moving along a direction ``y`` in the polytope (``0 <= y <= 1``, ``||y||_1 <= R``)
whose expected score ``<y, grad f(x)>`` falls at most ``sigma`` short of the best (the
exponential mechanism's or the gradient noise's expected shortfall), with ``OPT <= f(x*)`` and
``<x*, grad f(x)> >= f(x*) - f(x)`` (monotone, concave along nonnegative directions):

* Smoothness (Sadeghi and Fazel 2021, Lemma 1 with Lemma 2's ``L <= m_F``): ``(1 - 1/e) OPT -
  sigma - m_F R^2 / (2T)``, ``m_F = max_e F({e})``. Without a public bound on it, ``m_F <= OPT``
  whenever every singleton is feasible (no loop of the matroid, no item costlier than the
  budget), and the term moves into the ratio: ``1 - 1/e - R^2 / (2T)``, negative at the papers'
  ``T = R`` from ``R = 2`` on.
* Step by step (the coupling of Calinescu, Chekuri, Pal and Vondrak 2011, Lemma 3.3, extended
  here to fractional directions and to the gradient's score): with ``R ~ x`` the random set of
  the multilinear extension, ``x + delta y`` is the law of ``R`` joined with an independent ``D``
  holding each ``i`` with probability ``p_i = delta y_i / (1 - x_i)``. Keeping only the events
  ``D = {i}`` (monotonicity) and ``E[F(R + i) - F(R)] = (1 - x_i) d_i f(x)``,
  ``f(x + delta y) - f(x) >= sum_i p_i prod_{j != i} (1 - p_j) (1 - x_i) d_i f(x)``. At step
  ``s`` every ``x_j <= t = s delta``, and ``1 - a y >= (1 - a)^y``, so with ``e = R - 1`` for
  0/1 directions and ``e = R`` otherwise this is at least ``c_s <y, grad f(x)>``,
  ``c_s = delta max((1 - delta/(1 - t))^e, (1 - delta)^e (1 - t))`` (the first from ``p_j``
  directly, the second from the sub-coupling at probability ``delta y_j``). Hence
  ``OPT - f(x_{s+1}) <= (1 - c_s)(OPT - f(x_s)) + c_s sigma``, and over the ``T`` steps
  ``E f(x_T) >= rho_T (OPT - sigma)`` with ``rho_T = 1 - prod_s (1 - c_s)``
  (:func:`stepwise_ratio`). It needs no bound on ``m_F`` and its ratio is positive at every
  ``T >= 2`` (0.19 at the papers' ``T = R = 10``, 0.31 at ``T = 2R``, towards ``1 - 1/e``).

Each run states the better of the two (the larger ratio; with a public ``value_bound``, the
larger bound at ``OPT = k value_bound``). Swap and pipage rounding keep ``E[F(S)] >= f(x_T)``; the
knapsack rounding can lose one element's value more. With a public ``value_bound`` the default
``T`` minimizes the smoothness reading's additive term (:func:`best_steps`); see
``docs/algorithms/continuous_greedy.md``.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from .._guarantee import UtilityGuarantee, utility_guarantee
from .._lazy import lazy_module
from ..constraints import Constraint, Knapsack, UniformMatroid

__all__ = ["greedy_guarantee", "em_greedy_guarantee", "no_guarantee", "continuous_guarantee",
           "stepwise_ratio", "best_steps", "singletons_feasible", "E1",
           "em_shortfall", "MAX_DEFAULT_STEPS"]

# Lambert W serves the knapsack bound only, while private greedy (one function for every
# constraint, on the select path) imports this module: importing scipy.special here would
# double the CPU time of the select path's imports (benchmarks/bench_import.py).
special = lazy_module("scipy.special")

E1 = 1.0 - 1.0 / math.e
UNITS = "objective units"
# The number of steps chosen for the user never exceeds this: each step costs a gradient (n
# closed-form partial derivatives, or N (n + 1) evaluations when sampled).
MAX_DEFAULT_STEPS = 256


def singletons_feasible(constraint: Constraint) -> bool:
    """Whether every element alone is feasible (then ``max_e F({e}) <= OPT``)."""
    return bool(np.all(constraint.can_add(np.zeros(constraint.n, dtype=bool))))


def no_guarantee(reason: str) -> UtilityGuarantee:
    """A vacuous guarantee that says why nothing is stated."""
    return utility_guarantee(0.0, math.inf, units=UNITS, theorem=reason)


def greedy_guarantee(constraint: Constraint, *, accuracy: float | None = None
                     ) -> UtilityGuarantee:
    """Non-private greedy: ``(1 - 1/e) OPT`` (cardinality), ``OPT / 2`` (matroid), ``(1 - 1/e)
    / 2 OPT`` (knapsack, the better of the cost-benefit greedy and the best singleton);
    ``1 - 1/e - accuracy`` for stochastic greedy under a cardinality."""
    if isinstance(constraint, Knapsack):
        return utility_guarantee(E1 / 2.0, 0.0, units=UNITS, theorem=(
            "Khuller, Moss and Naor 1999; Leskovec et al. 2007: better of cost-benefit greedy "
            "and best singleton"))
    if isinstance(constraint, UniformMatroid):
        if accuracy is not None:
            return utility_guarantee(E1 - accuracy, 0.0, units=UNITS, theorem=(
                "Mirzasoleiman et al. 2015, Theorem 1 (stochastic greedy, cardinality)"))
        return utility_guarantee(E1, 0.0, units=UNITS,
                                 theorem="Nemhauser, Wolsey and Fisher 1978 (cardinality)")
    if accuracy is not None:
        return no_guarantee("stochastic greedy: the (1 - 1/e - accuracy) bound is proved for "
                            "a cardinality constraint only")
    return utility_guarantee(0.5, 0.0, units=UNITS,
                             theorem="Fisher, Nemhauser and Wolsey 1978 (matroid)")


def em_greedy_guarantee(constraint: Constraint, n: int, weight: float, *, theorem: str,
                        sample_size: int | None = None, ratio_weight: float | None = None
                        ) -> UtilityGuarantee:
    """Exponential-mechanism greedy drawing each step with ``exp(weight * gain)`` (module
    docstring): ``(1 - 1/e) OPT - k gamma`` or ``OPT / 2 - r gamma / 2``.

    Under a knapsack (Mitrovic et al. 2017, knapsack variant; module docstring):
    ``(1 - 1/e) / 2 OPT`` minus the explicit errors of its exponential mechanisms, with
    ``ratio_weight`` the weight of the cost-benefit steps on gains per unit cost and ``weight``
    that of the best-singleton draw and of the final choice. Without ``ratio_weight`` (steps
    scored by gains, not gains per unit cost) or over random candidate subsets nothing is
    proved: vacuous.
    """
    if isinstance(constraint, Knapsack):
        if ratio_weight is None:
            return no_guarantee(f"{theorem}, knapsack: a bound is proved for cost-benefit "
                                "steps (gain per unit cost) only")
        if sample_size is not None and sample_size < n:
            return no_guarantee(f"{theorem} over random candidate subsets: no bound is proved "
                                "under a knapsack")
        return _knapsack_em_guarantee(constraint, ratio_weight, weight, theorem)
    k = constraint.max_size
    m = n if sample_size is None else min(n, sample_size)
    gamma = (1.0 + math.log(m)) / weight
    if isinstance(constraint, UniformMatroid):
        if sample_size is not None and sample_size < n:
            acc = math.exp(-sample_size * k / n)
            return utility_guarantee(E1 - acc, k * gamma, units=UNITS, theorem=(
                f"{theorem} with stochastic greedy (Mirzasoleiman et al. 2015, Lemma 2; "
                f"accuracy exp(-s k / n) = {acc:.3g}), cardinality"))
        return utility_guarantee(E1, k * gamma, units=UNITS, theorem=f"{theorem}, cardinality")
    if sample_size is not None and sample_size < n:
        return no_guarantee(f"{theorem} over random candidate subsets: no bound is proved "
                            "beyond a cardinality constraint")
    return utility_guarantee(0.5, k * gamma / 2.0, units=UNITS, theorem=(
        f"{theorem}, matroid (exchange argument of Fisher, Nemhauser and Wolsey 1978)"))


# Knapsack accepts a cost up to its budget times 1 + 1e-12 (its class notes); rounded up.
_KNAPSACK_SLACK = 2e-12


def em_shortfall(m: int) -> float:
    """``W((m - 1) / e)``: the largest expected shortfall, in units of ``1 / w``, of an
    exponential mechanism of weight ``w`` drawing among ``m`` candidates (module docstring,
    knapsack step 4); ``W(1/e) = 0.2785`` for two."""
    return float(special.lambertw((m - 1) / math.e).real) if m > 1 else 0.0


def _knapsack_em_guarantee(constraint: Knapsack, ratio_weight: float, weight: float,
                           theorem: str) -> UtilityGuarantee:
    """The knapsack bound of the module docstring (step 5) at the run's weights."""
    alone = constraint.can_add(np.zeros(constraint.n, dtype=bool))
    m = int(alone.sum())
    c_max = float(np.max(constraint.costs[alone]))
    k = constraint.max_size
    b = constraint.budget * (1.0 + _KNAPSACK_SLACK)
    # E max_i eta_i: the integral of min(1, k (m-1) e^{-w u}) over u >= 0
    worst_step = 1.0 + math.log(k * (m - 1)) if m > 1 else 0.0
    steps = min(b * worst_step, k * c_max * em_shortfall(m)) / ratio_weight
    additive = (steps + em_shortfall(m) / weight) / 2.0 + em_shortfall(2) / weight
    return utility_guarantee(E1 / 2.0, additive, units=UNITS, theorem=(
        f"{theorem}, knapsack: better of the cost-benefit greedy and the best singleton "
        "(Khuller, Moss and Naor 1999; Leskovec et al. 2007) with the exponential mechanism's "
        "expected errors (dpsubmod.offline.guarantees)"))


def stepwise_ratio(steps: int, exponent: float) -> float:
    """The step-by-step reading of a continuous method's ``T`` steps (module docstring):
    ``E f(x_T) >= ratio * (OPT - sigma)`` for a per-step expected shortfall ``sigma``.

    The recursion ``a_{s+1} <= (1 - c_s) a_s + c_s sigma`` from ``a_0 <= OPT`` gives
    ``a_T <= prod_s (1 - c_s) OPT + sigma sum_s c_s prod_{s' > s} (1 - c_{s'})``, and the sum
    telescopes to ``1 - prod_s (1 - c_s)``, the ratio.

    Parameters
    ----------
    steps : int
        ``T``, steps of length ``1 / T``.
    exponent : float
        ``R - 1`` for directions that are 0/1 vectors with at most ``R`` ones, ``R`` for
        fractional directions of l1 norm at most ``R``.

    Returns
    -------
    float
        ``1 - prod_s (1 - c_s)``.

    Examples
    --------
    >>> stepwise_ratio(1, 0.0)  # one step to the best single element
    1.0
    >>> round(stepwise_ratio(10, 9.0), 3)  # the papers' T = r for r = 10
    0.194
    """
    d = 1.0 / steps
    rest = 1.0
    for s in range(steps):
        left = 1.0 - s * d  # 1 - t, at least d
        direct = (1.0 - min(1.0, d / left)) ** exponent
        sub = (1.0 - d) ** exponent * left
        rest *= 1.0 - d * max(direct, sub)
    return 1.0 - rest


def continuous_guarantee(constraint: Constraint, *, noise_term: float, radius: float,
                         steps: int, value_bound: float | None, theorem: str,
                         rounding_loss: bool = False, integral: bool = True
                         ) -> UtilityGuarantee:
    """The better of a continuous method's two readings (module docstring) for a per-step
    expected shortfall ``noise_term``: the smoothness bound ``(1 - 1/e) OPT - noise_term - m_F
    R^2 / (2T)``, with ``m_F`` the public ``value_bound`` or, when every singleton is feasible,
    bounded by ``OPT``; and the step-by-step bound of :func:`stepwise_ratio` (``integral``: the
    directions are 0/1 vectors). ``rounding_loss``: the rounding can lose one element's value
    (``m_F`` more)."""
    if rounding_loss and value_bound is None:
        # m_F <= OPT at best: the ratio of either reading would drop by 1, below 0
        return no_guarantee(f"{theorem}: the rounding can lose one element's value, bounded "
                            "only by OPT, which leaves no positive ratio; pass a public "
                            "value_bound")
    smooth = radius * radius / (2.0 * steps)
    ratio = stepwise_ratio(steps, max(0.0, radius - 1.0 if integral else radius))
    stepwise = f"{theorem}; step by step (Calinescu et al. 2011, Lemma 3.3 coupling)"
    if value_bound is not None:
        k = constraint.max_size
        loss = value_bound if rounding_loss else 0.0
        bound = f"m_F <= value_bound = {value_bound:.4g}"
        options = [
            utility_guarantee(E1, noise_term + value_bound * smooth + loss, units=UNITS,
                              theorem=f"{theorem}; smoothness, {bound}",
                              opt_bound=k * value_bound),
            utility_guarantee(ratio, ratio * noise_term + loss, units=UNITS,
                              theorem=f"{stepwise}; {bound}" if rounding_loss else stepwise,
                              opt_bound=k * value_bound)]
        return max(options, key=lambda g: (g.lower_bound(g.opt_bound), g.ratio))
    options = [utility_guarantee(ratio, ratio * noise_term, units=UNITS, theorem=stepwise)]
    if singletons_feasible(constraint):  # m_F <= OPT: the smoothness term joins the ratio
        options.append(utility_guarantee(E1 - smooth, noise_term, units=UNITS, theorem=(
            f"{theorem}; smoothness, m_F <= OPT (every singleton feasible)")))
    return max(options, key=lambda g: (g.ratio, -g.additive))


def best_steps(gap: Callable[[int], float], max_steps: int = MAX_DEFAULT_STEPS) -> int:
    """The number of steps in ``1..max_steps`` minimizing ``gap(T)``, the additive term of a
    continuous method's bound with a public ``m_F`` (the ratio is then ``1 - 1/e`` for every
    ``T``, so this ``T`` maximizes the stated bound for every ``OPT``)."""
    best, best_gap = 1, math.inf
    for T in range(1, max_steps + 1):
        g = gap(T)
        if g < best_gap:
            best, best_gap = T, g
    return best
