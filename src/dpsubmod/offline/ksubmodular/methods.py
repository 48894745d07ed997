"""k-submodular maximization under a matroid: greedy baselines and the private Algorithms 3 and 4
of Rafiey and Yoshida (ICML 2020).

Entry point: :func:`~dpsubmod.offline.maximize_ksubmodular` ``(f, constraint, method=...,
epsilon=..., delta=..., budget=..., rng=...)``, dispatching through the one method registry
(``list_methods(kind="ksubmodular")``). The methods take a
:class:`~dpsubmod.functions.ksubmodular.KSubmodularFunction`, not a set function.

============================  =======  =========================================================
method                        private  algorithm
============================  =======  =========================================================
``"ks_greedy"``               no       greedy of Ohsaka and Yoshida (2015), total size constraint
``"ks_matroid_greedy"``       no       greedy of Sakaue (2017), any matroid
``"ks_random"``               no       a random maximal feasible support with random labels
``"ks_private"``              yes      Algorithm 3 (exponential mechanism over (item, label))
``"ks_private_sampled"``      yes      Algorithm 4 (the same over a random subset each step)
============================  =======  =========================================================

Every method returns a :class:`~dpsubmod.offline.Result` whose ``selection`` is the tuple of
``(item, label)`` pairs in the order they were chosen (labels ``1..k``); turn it into a label
vector with :func:`~dpsubmod.functions.ksubmodular.as_labels` ``(result.selection, n, k)``, and
``f(result.selection)`` evaluates it directly. The order is part of what a private method
releases (it is post-processing of the per-step mechanism outputs), so it costs nothing extra.

Why a step costs ``eps_step`` with weights ``exp(eps_step * gain / (2 Delta))``
------------------------------------------------------------------------------
The score of pair ``(e, i)`` is ``Delta_{e,i} F_D(x) = F_D(x + (e, i)) - F_D(x)``. The term
``F_D(x)`` is common to every candidate of the step and cancels in the mechanism's normalisation,
so the log-probability ratio between neighbours is at most ``eps' * range_{(e,i)}(F_D(x + (e,i))
- F_D'(x + (e,i))) <= 2 eps' Delta`` in every data model (seed 004 corrections, item 1). With
``eps' = eps_step / (2 Delta)`` each step is ``eps_step``-DP and ``r`` steps compose to ``r
eps_step`` (basic) or, for ``delta > 0``, to ``r eps_step^2 / 2 + eps_step sqrt(2 r ln(1/delta))``
(the corrected advanced composition; the paper's Theorem 2.6 and 5.4 miss the ``sqrt(r)``).
The per-step budget is solved from the caller's total by the accounting module, so the total
is met exactly.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..._guarantee import utility_guarantee
from ..._rng import RNGLike, as_generator, check_rng
from ..._validation import check_real
from ...constraints import Matroid
from ...errors import ValidationError
from ...functions.ksubmodular.base import KSubmodularFunction, KSubmodularState
from ...privacy.ledger import Ledger
from ...privacy.plan import backend_name
from ...privacy.selection import ExponentialMechanism
from .._common import PrivateCall, bound_guarantee, checked_call, require_finite
from ..guarantees import UNITS, no_guarantee
from ..registry import register
from ..result import Diagnostics, Result
from ._calibration import (
    _calibrate,
    _is_uniform,
    _resolve,
    _step_mechanism,
    ks_additive_error,
    ks_sample_sizes,
)
from ._exact import ks_private_output_distribution

__all__ = [
    "ks_greedy",
    "ks_matroid_greedy",
    "ks_random",
    "ks_private",
    "ks_private_sampled",
    "ks_private_output_distribution",
    "ks_sample_sizes",
    "ks_additive_error",
]

_ON_EMPTY = ("fallback", "resample")
_MAX_RESAMPLES = 1000

# ---------------------------------------------------------------------------------------------
# shared helpers
# ---------------------------------------------------------------------------------------------
def _result(f: KSubmodularFunction, st: KSubmodularState, method: str, *, privacy: Any,
            evaluations: int, params: dict[str, Any], trace: list[float],
            guarantee: Any = None) -> Result:
    value = float(require_finite(st.value, f, method, "the value of the selection",
                                 private=privacy is not None))
    return Result(
        selection=tuple(st.selected),
        method=method,
        privacy=privacy,
        evaluations=int(evaluations),
        params=params,
        diagnostics=Diagnostics(value=value, trace=tuple(trace)),
        guarantee=bound_guarantee(guarantee, f),
    )


def _argmax_pair(g: np.ndarray) -> tuple[int, int]:
    # First maximum in row-major order: ties go to the lowest item, then the lowest label.
    j = int(np.argmax(g))
    return divmod(j, g.shape[1])


def _greedy_run(f: KSubmodularFunction, constraint: Matroid, caller: str
                ) -> tuple[KSubmodularState, list[float]]:
    st = f.state()
    trace: list[float] = []
    while True:
        cand = np.flatnonzero(constraint.can_add(st))
        if cand.size == 0:
            break
        g = require_finite(st.gains(cand), f, caller, "a marginal gain")
        row, col = _argmax_pair(g)
        st.add(int(cand[row]), col + 1)
        trace.append(float(g[row, col]))
    return st, trace


# ---------------------------------------------------------------------------------------------
# non-private baselines
# ---------------------------------------------------------------------------------------------
@register("ks_greedy", private=False, kind="ksubmodular", constraints=("cardinality",),
          summary="Greedy of Ohsaka and Yoshida 2015 under a total size constraint")
def ks_greedy(f: KSubmodularFunction, constraint: Any, *, rng: RNGLike = None) -> Result:
    """Greedy for monotone k-submodular maximization under a total size constraint
    (Ohsaka and Yoshida 2015, "Monotone k-submodular function maximization with size
    constraints", Algorithm 1).

    At each of ``B`` steps add the (item, label) pair of largest gain among the unlabelled items.
    Guarantee: ``F(x) >= OPT / 2`` for monotone k-submodular ``F``; ``k B n`` evaluations at most.

    Parameters
    ----------
    f : KSubmodularFunction
    constraint : int or UniformMatroid
        The total size ``B``. For other matroids use :func:`ks_matroid_greedy`.
    rng : None
        Unused (deterministic; ties go to the lowest item, then the lowest label).

    Returns
    -------
    Result
        Not private; ``selection`` holds the ``(item, label)`` pairs in order.
    """
    caller = "ks_greedy"
    check_rng(rng, caller)
    f, constraint = _resolve(f, constraint, caller)
    if not _is_uniform(constraint):
        raise ValidationError(
            f"{caller} is the total-size greedy of Ohsaka and Yoshida; got a "
            f"{type(constraint).__name__}. Use method='ks_matroid_greedy' for a general matroid."
        )
    start = f.evaluations
    st, trace = _greedy_run(f, constraint, caller)
    return _result(f, st, caller, privacy=None, evaluations=f.evaluations - start,
                   params={"size": constraint.rank}, trace=trace,
                   guarantee=utility_guarantee(0.5, 0.0, units=UNITS, theorem=(
                       "Ohsaka and Yoshida 2015 (k-submodular greedy, total size)")))


@register("ks_matroid_greedy", private=False, kind="ksubmodular",
          summary="Greedy of Sakaue 2017 under any matroid")
def ks_matroid_greedy(f: KSubmodularFunction, constraint: Any, *, rng: RNGLike = None) -> Result:
    """Greedy for monotone k-submodular maximization under a matroid (Sakaue 2017, "On
    maximizing a monotone k-submodular function subject to a matroid constraint", Algorithm 1).

    At each step add the pair ``(e, i)`` of largest gain among the items ``e`` with
    ``supp(x) + e`` independent, until the support is a base (``r`` steps). Guarantee:
    ``F(x) >= OPT / 2`` for monotone k-submodular ``F``; at most ``k r n`` evaluations. It is
    the non-private limit of Algorithm 3 of Rafiey and Yoshida (2020).

    Parameters and returns as :func:`ks_greedy`, for any Matroid.
    """
    caller = "ks_matroid_greedy"
    check_rng(rng, caller)
    f, constraint = _resolve(f, constraint, caller)
    start = f.evaluations
    st, trace = _greedy_run(f, constraint, caller)
    return _result(f, st, caller, privacy=None, evaluations=f.evaluations - start,
                   params={"rank": constraint.rank}, trace=trace,
                   guarantee=utility_guarantee(0.5, 0.0, units=UNITS, theorem=(
                       "Sakaue 2017 (k-submodular greedy, matroid)")))


@register("ks_random", private=False, kind="ksubmodular",
          summary="A random maximal feasible support with uniformly random labels")
def ks_random(f: KSubmodularFunction, constraint: Any, *, rng: RNGLike = None) -> Result:
    """A random feasible labelling: items in uniformly random order, each kept if the support
    stays independent, each kept item given a uniformly random label.

    The zero-information baseline (a private method with a vanishing budget approaches a
    distribution of this kind). Evaluations: 0.
    """
    caller = "ks_random"
    gen = as_generator(rng, caller)
    f, constraint = _resolve(f, constraint, caller)
    order = gen.permutation(f.n)
    labels = gen.integers(1, f.k + 1, size=f.n)
    st = f.state()
    for e in constraint.greedy_independent(order):
        st.add(int(e), int(labels[e]))
    return _result(f, st, caller, privacy=None, evaluations=0, params={}, trace=[],
                   guarantee=no_guarantee("a random labelling: no approximation guarantee"))


# ---------------------------------------------------------------------------------------------
# private: one exponential-mechanism step
# ---------------------------------------------------------------------------------------------
def _em_step(st: KSubmodularState, cand: np.ndarray, step: ExponentialMechanism,
             allowance: Ledger, caller: str) -> tuple[int, int, float]:
    """One exponential-mechanism draw over ``cand x [k]`` scored by the gains."""
    g = require_finite(st.gains(cand), st.f, caller, "a marginal gain", private=True)
    j = step.release(g.ravel(), budget=allowance)
    row, col = divmod(int(j), st.f.k)
    return int(cand[row]), col + 1, float(g[row, col])


# ---------------------------------------------------------------------------------------------
# Algorithm 3
# ---------------------------------------------------------------------------------------------
def _ks_private(call: PrivateCall, *, composition: str, sensitivity: float | None) -> Result:
    """:func:`ks_private` below its public checks: plan the run from its step mechanism, charge
    the plan once, then draw."""
    caller, f, constraint = call.caller, call.f, call.constraint
    sens, split = _calibrate(caller, f, constraint.rank, call.epsilon, call.delta, composition,
                             sensitivity)
    eps_step = split.epsilon_step
    step = _step_mechanism(caller, eps_step, sens, call.noise)
    report, allowance = call.charge_plan(caller, [step.privacy_map()._times(split.steps)],
                                         delta=split.delta, composition=split.composition)

    start = f.evaluations
    st = f.state()
    trace: list[float] = []
    for _ in range(constraint.rank):
        cand = np.flatnonzero(constraint.can_add(st))
        if cand.size == 0:  # cannot happen for a matroid before its rank is reached
            break
        e, i, g = _em_step(st, cand, step, allowance, caller)
        st.add(e, i)
        trace.append(g)
    params = {"epsilon": call.epsilon, "delta": call.delta, "composition": composition,
              "composition_used": split.composition, "steps": constraint.rank,
              "epsilon_per_step": eps_step, "weight": eps_step / (2.0 * sens),
              "sensitivity": sens, "backend": backend_name(call.backend)}
    guarantee = utility_guarantee(
        0.5, ks_additive_error(f.n, f.k, constraint.rank, sens, eps_step), units=UNITS,
        theorem="Rafiey and Yoshida 2020, Algorithm 3 (ks_additive_error)")
    return _result(f, st, caller, privacy=report, evaluations=f.evaluations - start,
                   params=params, trace=trace, guarantee=guarantee)


@register("ks_private", private=True, kind="ksubmodular",
          summary="Rafiey-Yoshida 2020 Algorithm 3: exponential mechanism over "
                  "feasible (item, label) pairs",
          core=_ks_private, resolve=_resolve)
def ks_private(f: KSubmodularFunction, constraint: Any, *, epsilon: float, delta: float = 0.0,
               composition: str = "auto", sensitivity: float | None = None, backend: Any = None,
               budget: Any = None, rng: RNGLike = None) -> Result:
    """Differentially private k-submodular maximization under a matroid (Rafiey and Yoshida,
    ICML 2020, Algorithm 3).

    For ``t = 1..r`` (``r`` the rank): with ``Lambda(x)`` the unlabelled items whose addition
    keeps the support independent, draw ``(e, i)`` in ``Lambda(x) x [k]`` with probability
    proportional to ``exp(eps' Delta_{e,i} F(x))``, ``eps' = eps_step / (2 Delta)``, and set
    ``x(e) = i``. The support of the output is a base.

    Guarantee
        **Privacy**: each step is ``eps_step``-DP (module docstring), ``r`` steps compose to the
        caller's ``(epsilon, delta)``. **Utility** (monotone k-submodular ``F``, sensitivity
        ``Delta``): ``E[F(x)] >= OPT / 2 - r Delta (1 + ln(k n)) / eps_step`` and, with
        probability ``>= 1 - r beta``, ``F(x) >= OPT / 2 - r Delta ln(k n / beta) / eps_step``
        (Theorem 5.3 with the range ``k |Lambda|`` of the mechanism; :func:`ks_additive_error`).
    Neighbouring relation
        The objective's (``f.neighbouring``), with the declared ``sensitivity`` ``Delta`` bounding
        ``|F_D(x) - F_D'(x)|`` at every ``x``. Gains are not clipped: clipping at 0 would break the
        cancellation of the common term for a non-monotone ``F``; non-finite gains raise.
    Runtime
        ``sum_t k |Lambda_t| <= k r n`` gain evaluations, one ``can_add`` call per step.

    Parameters
    ----------
    f : KSubmodularFunction
        With a declared ``sensitivity`` (or pass ``sensitivity=``).
    constraint : int or Matroid
        Total size ``B`` or a matroid on the support.
    epsilon : float
        Total privacy budget.
    delta : float, default=0
        With ``delta > 0`` the steps may be composed by a rule that trades delta for epsilon.
    composition : {"auto", "basic", "advanced", "kov", "zcdp"}, default="auto"
        Rule used to split the total over the ``r`` steps
        (:func:`~dpsubmod.privacy.split.split_budget`): ``"basic"`` gives
        ``eps_step = epsilon / r``; ``"advanced"`` the Dwork-Rothblum-Vadhan bound
        ``eps_step sqrt(2 r ln(1/delta)) + r eps_step (e^eps_step - 1)`` (with the ``sqrt(r)`` the
        paper's Theorem 2.6 drops); ``"zcdp"`` the bounded-range cost ``r eps_step^2 / 8``
        converted to ``(epsilon, delta)``; ``"kov"`` optimal composition; ``"auto"`` the largest
        per-step budget among the rules valid at ``delta`` (basic when ``delta == 0``).
    sensitivity : float, optional
        Overrides ``f.sensitivity``.
    backend : {"numpy", "secure"} or backend instance, optional
        Noise backend of the exponential mechanism.
        ``None`` (the default): ``"secure"`` without ``rng``, a seeded ``"numpy"`` simulation
        with one (:func:`~dpsubmod.privacy.backends.choose_backend`).
    budget : Budget, optional
        Charged with the call's whole ``(epsilon, delta)`` before the first noise draw.
    rng : int, Generator or None

    Returns
    -------
    Result
        ``selection``: ``(item, label)`` pairs in the order drawn; ``privacy``: the report of the
        ledger; ``params`` has ``epsilon_per_step`` and ``weight`` (``eps'``).
    """
    caller = "ks_private"
    call = checked_call(caller, f, constraint, epsilon=epsilon, delta=delta, budget=budget,
                        rng=rng, backend=backend, resolver=_resolve)
    return _ks_private(call, composition=composition, sensitivity=sensitivity)


# ---------------------------------------------------------------------------------------------
# Algorithm 4
# ---------------------------------------------------------------------------------------------
def _ks_private_sampled(call: PrivateCall, *, gamma: float, composition: str,
                        sensitivity: float | None, on_empty: str) -> Result:
    """:func:`ks_private_sampled` below its public checks."""
    caller, f, constraint = call.caller, call.f, call.constraint
    r = constraint.rank
    sens, split = _calibrate(caller, f, r, call.epsilon, call.delta, composition, sensitivity)
    eps_step = split.epsilon_step
    gamma = check_real(gamma, "gamma", low=0.0, high=1.0, low_open=True, high_open=True,
                       caller=caller)
    if on_empty not in _ON_EMPTY:
        raise ValidationError(
            f"The 'on_empty' parameter of {caller} must be one of {_ON_EMPTY}; got {on_empty!r}."
        )
    sizes = ks_sample_sizes(f.n, r, gamma)
    step = _step_mechanism(caller, eps_step, sens, call.noise)
    report, allowance = call.charge_plan(caller, [step.privacy_map()._times(split.steps)],
                                         delta=split.delta, composition=split.composition)

    gen = call.gen
    start = f.evaluations
    st = f.state()
    trace: list[float] = []
    empty = 0
    for t in range(r):
        feasible = constraint.can_add(st)
        unlabelled = np.flatnonzero(~st.mask)
        size = int(min(sizes[t], unlabelled.size))
        cand = np.zeros(0, dtype=np.int64)
        for _ in range(_MAX_RESAMPLES if on_empty == "resample" else 1):
            R = gen.choice(unlabelled, size=size, replace=False)
            cand = np.sort(R[feasible[R]])
            if cand.size:
                break
        if cand.size == 0:
            empty += 1
            cand = np.flatnonzero(feasible)
            if cand.size == 0:
                break
        e, i, g = _em_step(st, cand, step, allowance, caller)
        st.add(e, i)
        trace.append(g)
    guarantee = ("OPT/2 (uniform matroid, probability >= 1 - gamma)" if _is_uniform(constraint)
                 else "none proven beyond uniform matroids (heuristic)")
    params = {"epsilon": call.epsilon, "delta": call.delta, "composition": composition,
              "composition_used": split.composition, "steps": r,
              "epsilon_per_step": eps_step, "weight": eps_step / (2.0 * sens),
              "sensitivity": sens, "gamma": gamma, "on_empty": on_empty,
              "sample_sizes": tuple(int(s) for s in sizes), "empty_samples": empty,
              "guarantee": guarantee, "backend": backend_name(call.backend)}
    if _is_uniform(constraint):
        stated = utility_guarantee(
            (1.0 - gamma) / 2.0, ks_additive_error(f.n, f.k, r, sens, eps_step), units=UNITS,
            theorem="Rafiey and Yoshida 2020, Algorithm 4 on a uniform matroid")
    else:
        stated = no_guarantee("Rafiey and Yoshida 2020, Algorithm 4: its 1/2 bound is false "
                              "beyond uniform matroids (docs/errata.md)")
    return _result(f, st, caller, privacy=report, evaluations=f.evaluations - start,
                   params=params, trace=trace, guarantee=stated)


@register("ks_private_sampled", private=True, kind="ksubmodular",
          summary="Rafiey-Yoshida 2020 Algorithm 4: Algorithm 3 over a random subset "
                  "of items each step (1/2 guarantee for uniform matroids only)",
          core=_ks_private_sampled, resolve=_resolve)
def ks_private_sampled(f: KSubmodularFunction, constraint: Any, *, epsilon: float,
                       delta: float = 0.0, gamma: float = 0.1, composition: str = "auto",
                       sensitivity: float | None = None, on_empty: str = "fallback",
                       backend: Any = None, budget: Any = None, rng: RNGLike = None) -> Result:
    """Differentially private k-submodular maximization with subsampling (Rafiey and Yoshida,
    ICML 2020, Algorithm 4).

    As :func:`ks_private`, but step ``t`` first draws a uniform subset ``R`` of
    ``s_t`` unlabelled items (:func:`ks_sample_sizes`) and runs the exponential mechanism over
    ``(R cap Lambda(x)) x [k]`` only. If ``R`` misses every feasible item (probability at most
    ``gamma / r`` per step on a uniform matroid), ``on_empty="fallback"`` scores all of
    ``Lambda(x)`` and ``"resample"`` redraws ``R`` (up to 1000 times, then falls back); both depend
    only on public information (the matroid and the released pairs), so privacy is unchanged. The
    paper leaves this case open.

    Guarantee
        **Privacy**: as :func:`ks_private` (the subsets are data-independent; no amplification is
        claimed). **Utility**: on a **uniform matroid** (total size constraint) and monotone
        k-submodular ``F``, ``E[F(x)] >= (1 - gamma) OPT / 2 - r Delta (1 + ln(k n)) / eps_step``
        (Theorem 5.6's argument in expectation). **Beyond uniform matroids no approximation is
        guaranteed**: Theorems 5.6/5.7 claim ``OPT / 2`` for every matroid, but the exchange
        argument needs the partner of the chosen item in the optimum to be in ``R``, and on a
        partition matroid the algorithm falls below ``OPT / 2`` with probability about 0.5 where
        ``gamma = 0.1`` is claimed (seed 004 corrections, item 3). On other matroids it is a
        heuristic; ``params["guarantee"]`` says which case applies.
    Runtime
        ``k sum_t |R_t cap Lambda_t| <= k (ln(r / gamma) ((n - r) H_r + r) + r)`` gain evaluations
        (``H_r`` the harmonic number), i.e. ``O(k n ln r ln(r / gamma))``.

    Parameters
    ----------
    f, constraint, epsilon, delta, composition, sensitivity, backend, rng : as :func:`ks_private`.
    gamma : float in (0, 1), default=0.1
        Failure probability of the sampling.
    on_empty : {"fallback", "resample"}, default="fallback"

    Returns
    -------
    Result
        ``params`` also has ``gamma``, ``sample_sizes``, ``empty_samples`` (how often ``R`` missed
        ``Lambda``; public information) and ``guarantee``.
    """
    caller = "ks_private_sampled"
    call = checked_call(caller, f, constraint, epsilon=epsilon, delta=delta, budget=budget,
                        rng=rng, backend=backend, resolver=_resolve)
    return _ks_private_sampled(call, gamma=gamma, composition=composition,
                               sensitivity=sensitivity, on_empty=on_empty)
