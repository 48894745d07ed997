r"""Private continuous greedy of Rafiey and Yoshida (2020), Algorithms 1 and 2.

A. Rafiey and Y. Yoshida, "Fast and private submodular and k-submodular functions maximization
with matroid constraints", ICML 2020 (arXiv 2006.15744). The implementable forms follow the
engineering notes of the paper and their independent review (seed 004); every departure from the
printed paper is listed in ``docs/errata.md``.

Algorithm 1 (:func:`private_continuous_greedy`). Start at :math:`x_0 = 0`; for ``T`` steps
compute :math:`g = \nabla f_D(x_{t-1})` (multilinear extension; exact closed form, enumeration,
or common-random-numbers sampling) and draw a direction :math:`y` with the exponential mechanism,
:math:`P(y) \propto \exp(\epsilon' \langle y, g \rangle)`, over a cover of the matroid polytope;
set :math:`x_t = x_{t-1} + y / T`; finally swap-round :math:`x_T` (Chekuri, Vondrak and
Zenklusen 2010) from its kept decomposition into bases. The paper's cover is not constructed;
here it is the set of averages of ``cover_size = m`` bases, :math:`\frac1m \sum_j 1_{B_j}`, taken
as the multiset of ordered ``m``-tuples, and the mechanism over it is drawn *exactly* as ``m``
independent bases with :math:`P(B) \propto \prod_{e \in B} \exp(\epsilon' g_e / m)` (uniform,
partition and graphic matroids; :mod:`dpsubmod.offline.continuous._product_bases`). ``m = 1`` (one
base per step, the "bases variant") is the default and the recommended form: the linear maximum over
the polytope is attained at a base, so a larger ``m`` only adds :math:`\ln|\mathcal B|` per extra
base to the mechanism's error.

Algorithm 2 (:func:`private_continuous_greedy_layers`): each step scores a data-independent
uniform subsample of the cover and selects among the subsample with the exponential mechanism
(optionally on scores quantized into layers of width ``w``). It is private, but its
:math:`(1 - 1/e)` utility guarantee is **not supported**: a uniform subsample of the cover almost
surely misses its best points (seed 004 review, finding A1). Prefer Algorithm 1 with ``m = 1``.

Privacy (replace-one neighbours, declared value sensitivity :math:`\Delta`). The score
:math:`\langle y, g_D \rangle` has no term common to all candidates; each gradient coordinate
moves by at most :math:`s = 2\Delta` in the general data model and :math:`s = \Delta` for
``data_model == "monotone-records"`` objectives (see :mod:`dpsubmod.offline.continuous._gradient`).
Every candidate has :math:`\|y\|_1 = r`, so the score differences lie in
:math:`[-r s, r s]` (range :math:`2 r s`) and a step drawn with
:math:`\epsilon' = \epsilon_{step} / (2 r s)` is :math:`\epsilon_{step}`-DP and
:math:`\epsilon_{step}`-bounded-range (hence :math:`\epsilon_{step}^2/8`-zCDP). ``T`` steps
compose by the rule ``composition`` names (``"auto"``: basic composition unless another rule
gains more than 1% per step). Swap rounding is post-processing.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..._rng import RNGLike
from ..._validation import check_int, check_real
from ...constraints.base import Matroid
from ...errors import ValidationError
from ...functions.base import SetFunction
from ...polytopes.rounding import ConvexDecomposition
from ...privacy.backends import NumpyBackend
from ...privacy.composition import check_composition
from ...privacy.ledger import Ledger
from ...privacy.plan import backend_name
from ...privacy.product import ProductBaseExponential
from ...privacy.selection import ExponentialMechanism
from .._common import PrivateCall, checked_call, make_result
from ..guarantees import best_steps, continuous_guarantee, no_guarantee
from ..registry import register
from ..result import Result
from ._gradient import GradientOracle, built, gradient_sensitivity
from ._greedy_calibration import (
    ContinuousGreedyCalibration,
    _calibration,
    _check_layers_work,
    _layers_defaults,
    continuous_greedy_calibration,
    continuous_greedy_utility_gap,
)
from ._product_bases import ProductBaseSampler, product_base_sampler

__all__ = [
    "private_continuous_greedy",
    "private_continuous_greedy_layers",
    "continuous_greedy_calibration",
    "ContinuousGreedyCalibration",
    "continuous_greedy_utility_gap",
]


def _check_matroid(constraint: object, caller: str) -> Matroid:
    if not isinstance(constraint, Matroid):
        raise ValidationError(
            f"{caller} maximizes over a matroid polytope; got {type(constraint).__name__}. "
            "For a knapsack constraint use method='dpcg'."
        )
    return constraint


def _check_numpy_backend(backend: Any, caller: str) -> None:
    if backend is None or backend == "numpy" or isinstance(backend, NumpyBackend):
        return
    raise ValidationError(
        f"{caller} draws its exponential mechanism over the bases with a floating-point "
        "product sampler; only the 'numpy' noise backend is available for it (no exact "
        f"discrete sampler exists); got backend={backend!r}. Use backend=None."
    )


def _private_continuous_greedy(call: PrivateCall, *, steps: int | None, cover_size: int,
                               gradient: str, n_samples: int, sensitivity: float | None,
                               composition: str, value_bound: float | None) -> Result:
    """:func:`private_continuous_greedy` below its public checks: plan the run from its
    mechanism's privacy map, charge the plan once, then draw."""
    caller, f = call.caller, call.f
    matroid = _check_matroid(call.constraint, caller)
    delta_f, s = gradient_sensitivity(f, sensitivity, caller)
    sampler = product_base_sampler(matroid, caller)
    _check_numpy_backend(call.backend, caller)
    r = matroid.rank
    m = check_int(cover_size, "cover_size", low=1, caller=caller)
    if value_bound is not None:
        value_bound = check_real(value_bound, "value_bound", low=0.0, low_open=True,
                                 caller=caller)
    composition = check_composition(composition, caller)
    log_bases = math.lgamma(f.n + 1) - math.lgamma(r + 1) - math.lgamma(f.n - r + 1)

    def calibration(T: int) -> ContinuousGreedyCalibration:
        return _calibration(call.epsilon, call.delta, steps=T, rank=r, gradient_sensitivity=s,
                            composition=composition, layer_width=0.0, caller=caller)

    def gap(T: int, mf: float = 0.0) -> float:
        return continuous_greedy_utility_gap(epsilon_step=calibration(T).epsilon_step, rank=r,
                                             steps=T, gradient_sensitivity=s,
                                             log_n_bases=log_bases, value_bound=mf,
                                             cover_size=m)

    if steps is not None:
        T = check_int(steps, "steps", low=1, caller=caller)
    elif value_bound is not None:
        T = best_steps(lambda t: gap(t, value_bound))
    else:
        T = r
    cal = calibration(T)
    step = built(lambda: ProductBaseExponential._named(
        caller, epsilon=cal.epsilon_step, sensitivity=cal.score_sensitivity, cover_size=m,
        backend=call.noise), "an exponential-mechanism weight", caller)
    oracle = GradientOracle.build(f, gradient, n_samples, call.gen, caller)

    report, allowance = call.charge_plan(
        "private_continuous_greedy", [step.privacy_map()._times(T)], delta=cal.delta,
        composition=cal.composition)

    start = f.evaluations
    x, decomposition, trace = _run_bases(f, sampler, step, T, m, oracle, allowance)
    selection = decomposition.round(matroid, rng=call.gen)
    params = _params(call, cal, delta_f, matroid, oracle, n_samples)
    params.update(cover_size=m, value_bound=value_bound)
    theorem = "Rafiey and Yoshida 2020, Algorithm 1 (bases cover; continuous_greedy_utility_gap)"
    if oracle.resolved == "sampling":
        guarantee = no_guarantee(f"{theorem}: proved for exact gradients; sampled gradients "
                                 "add an estimation error with no explicit bound here")
    else:
        guarantee = continuous_guarantee(matroid, noise_term=gap(T), radius=r, steps=T,
                                         value_bound=value_bound, theorem=theorem,
                                         integral=m == 1)
    return make_result(f, list(selection), "private_continuous_greedy", privacy=report,
                       evaluations=f.evaluations - start, params=params, trace=trace,
                       guarantee=guarantee)


@register("private_continuous_greedy", private=True, backends=("numpy",),
          core=_private_continuous_greedy,
          summary="Private continuous greedy, one exponential-mechanism base per step, swap "
                  "rounding (Rafiey & Yoshida 2020, Alg. 1); uniform/partition/graphic matroids")
def private_continuous_greedy(f: SetFunction, constraint: object, *, epsilon: float,
                              delta: float = 0.0, steps: int | None = None,
                              cover_size: int = 1, gradient: str = "auto",
                              n_samples: int = 1000, sensitivity: float | None = None,
                              composition: str = "auto", value_bound: float | None = None,
                              backend: Any = None, budget: Any = None,
                              rng: RNGLike = None) -> Result:
    r"""Private continuous greedy (Rafiey and Yoshida 2020, Algorithm 1) with swap rounding.

    For ``T`` steps: :math:`g = \nabla f(x_{t-1})`; draw ``m`` independent bases with
    :math:`P(B) \propto \exp(\epsilon' g(B) / m)` (the exponential mechanism over the cover of
    averages of ``m`` bases, drawn exactly); move :math:`x_t = x_{t-1} + \frac{1}{T m}
    \sum_j 1_{B_j}`. The kept bases, each of weight :math:`1/(T m)`, are swap-rounded to the
    released base.

    Guarantee (monotone submodular ``F``, exact gradients), in expectation over the run, with
    the step's expected shortfall :math:`\sigma = m \ln|\mathcal B| / \epsilon'`,
    :math:`\epsilon' = \epsilon_{step} / (2 r s)`: the better of
    :math:`F(S) \ge (1 - 1/e)\,\mathrm{OPT} - \sigma - m_F r^2 / (2T)` (see
    :func:`continuous_greedy_utility_gap`) and the step-by-step reading
    :math:`F(S) \ge \rho_T\,\mathrm{OPT} - w_T \sigma`, positive at the paper's ``T = r``
    (:func:`~dpsubmod.offline.guarantees.stepwise_ratio`). Sampled gradients add their
    estimation error.

    Privacy: ``(epsilon, delta)``-DP for replace-one neighbours; each step is
    ``epsilon_step``-DP with ``epsilon_step`` from :func:`continuous_greedy_calibration`, where
    the per-coordinate gradient sensitivity is ``2 * sensitivity`` in the general data model and
    ``sensitivity`` for ``f.data_model == "monotone-records"``.

    Parameters
    ----------
    f : SetFunction
        Monotone submodular objective with a declared ``sensitivity`` and ``data_model``.
    constraint : int or Matroid
        ``k`` (uniform matroid), a :class:`~dpsubmod.constraints.PartitionMatroid` or a
        :class:`~dpsubmod.constraints.GraphicMatroid`; other matroids are refused (no exact
        sampler for their product distributions).
    epsilon, delta : float
        Total privacy budget.
    steps : int, optional
        ``T``; the discretization term :math:`m_F r^2 / (2T)` shrinks and the privacy term
        grows linearly in ``T``. Default: with ``value_bound``, the ``T`` in ``1..256``
        minimizing :func:`continuous_greedy_utility_gap`; without, the paper's ``T = r``
        (its ``Result.guarantee`` has ratio 0.19 at ``r = 10``, more for smaller ranks;
        ``docs/algorithms/continuous_greedy.md``).
    cover_size : int, default=1
        ``m``, bases averaged per cover point; 1 is the recommended bases variant.
    gradient : {"auto", "exact", "sampling"}, default="auto"
        How the multilinear gradient is computed (see
        :func:`~dpsubmod.extensions.multilinear_gradient`).
    n_samples : int, default=1000
        Samples per sampled gradient (common random numbers; data-independent).
    sensitivity : float, optional
        Overrides ``f.sensitivity``.
    composition : {"auto", "basic", "advanced", "kov", "zcdp"}, default="auto"
        How the ``T`` steps share the budget (``"auto"``: basic unless another rule gains
        over 1% per step; each step is bounded-range, so zCDP charges ``epsilon_step^2 / 8``).
    value_bound : float, optional
        A **public** bound on :math:`m_F = \max_e F(\{e\})` (1 for an average of similarities
        in ``[0, 1]``), used to choose ``T`` and in ``Result.guarantee``.
    backend : None or "numpy"
        Only the numpy backend is available (floating-point sampler: for simulation).
    budget : Budget, optional
        Charged with the run's whole ``(epsilon, delta)`` before the first noise draw.
    rng : int, Generator or None
        All randomness of the run (gradient samples, bases, rounding).

    Returns
    -------
    Result
        ``selection`` is a base. ``evaluations`` counts ``F`` evaluations of the gradients:
        ``T n`` with closed forms (one per partial derivative), ``T 2^n`` by enumeration,
        ``T N (n + 1)`` by sampling. ``diagnostics.trace`` holds each step's score
        :math:`\langle y_t, \nabla f(x_{t-1})\rangle` (not private).

    Examples
    --------
    >>> from dpsubmod.functions import Coverage
    >>> f = Coverage.from_records([[0], [0, 1], [2], [1, 3], [3]], n_sets=4)
    >>> res = private_continuous_greedy(f, 2, epsilon=1.0, rng=0)
    >>> len(res.selection), res.privacy.epsilon
    (2, 1.0)
    """
    caller = "private_continuous_greedy"
    call = checked_call(caller, f, constraint, epsilon=epsilon, delta=delta, budget=budget,
                        rng=rng, backend=backend)
    return _private_continuous_greedy(call, steps=steps, cover_size=cover_size,
                                      gradient=gradient, n_samples=n_samples,
                                      sensitivity=sensitivity, composition=composition,
                                      value_bound=value_bound)


def _run_bases(f: SetFunction, sampler: ProductBaseSampler, step: ProductBaseExponential,
               T: int, m: int, oracle: GradientOracle, allowance: Ledger
               ) -> tuple[np.ndarray, ConvexDecomposition, list[float]]:
    n = f.n
    x = np.zeros(n)
    decomposition = ConvexDecomposition(n)
    trace: list[float] = []
    for t in range(T):
        g = oracle(x)
        bases = step.release(g, sampler, budget=allowance, note=f"step {t + 1}/{T}")
        y = np.bincount(bases.ravel(), minlength=n) / m
        trace.append(float(y @ g))
        for b in bases:
            decomposition.add(b, 1.0 / (T * m))
        x = np.minimum(x + y / T, 1.0)
    return x, decomposition, trace


def _params(call: PrivateCall, cal: ContinuousGreedyCalibration, delta_f: float,
            matroid: Matroid, oracle: GradientOracle, n_samples: int) -> dict[str, Any]:
    f = call.f
    return {
        "epsilon": call.epsilon, "delta": call.delta, "composition": cal.composition,
        "steps": cal.steps, "epsilon_per_step": cal.epsilon_step, "weight": cal.weight,
        "sensitivity": delta_f, "data_model": f.data_model,
        "gradient_sensitivity": cal.gradient_sensitivity,
        "score_sensitivity": cal.score_sensitivity, "rank": matroid.rank,
        "matroid": type(matroid).__name__, "gradient": oracle.resolved,
        "n_samples": n_samples if oracle.resolved == "sampling" else None,
        "n_gradients": oracle.calls, "backend": "numpy",
    }


def _private_continuous_greedy_layers(call: PrivateCall, *, steps: int | None,
                                      cover_size: int | None, n_subsample: int | None,
                                      layer_width: float, gradient: str, n_samples: int,
                                      sensitivity: float | None, composition: str) -> Result:
    """:func:`private_continuous_greedy_layers` below its public checks: plan the run from its
    selection mechanism's privacy map, charge the plan once, then draw."""
    caller, f = call.caller, call.f
    matroid = _check_matroid(call.constraint, caller)
    delta_f, s = gradient_sensitivity(f, sensitivity, caller)
    sampler = product_base_sampler(matroid, caller)
    r = matroid.rank
    T = r if steps is None else check_int(steps, "steps", low=1, caller=caller)
    w = check_real(layer_width, "layer_width", low=0.0, caller=caller)
    cal = _calibration(call.epsilon, call.delta, steps=T, rank=r, gradient_sensitivity=s,
                       composition=check_composition(composition, caller), layer_width=w,
                       caller=caller)
    select = built(lambda: ExponentialMechanism._named(
        caller, epsilon=cal.epsilon_step, sensitivity=cal.score_sensitivity, backend=call.noise),
        "an exponential-mechanism weight", caller)
    m = None if cover_size is None else check_int(cover_size, "cover_size", low=1,
                                                  caller=caller)
    N = None if n_subsample is None else check_int(n_subsample, "n_subsample", low=1,
                                                   caller=caller)
    m_default, N_default = _layers_defaults(f.n, r, cal.epsilon_step)
    m = m_default if m is None else m
    N = N_default if N is None else N
    _check_layers_work(T, N, m, r, f.n, cover_size, n_subsample, caller)
    gen = call.gen
    oracle = GradientOracle.build(f, gradient, n_samples, gen, caller)

    report, allowance = call.charge_plan(
        "private_continuous_greedy_layers", [select.privacy_map()._times(T)], delta=cal.delta,
        composition=cal.composition)

    n = f.n
    x = np.zeros(n)
    decomposition = ConvexDecomposition(n)
    trace: list[float] = []
    start = f.evaluations
    for _ in range(T):
        g = oracle(x)
        children = gen.spawn(N)
        states = [c.bit_generator.state for c in children]
        Z = np.empty((N, n))
        for i, child in enumerate(children):
            Z[i] = np.bincount(sampler.uniform(m, child).ravel(), minlength=n) / m
        q = Z @ g
        if w > 0:
            q = w * np.floor(np.maximum(q, 0.0) / w)
        j = select.release(q, budget=allowance)
        # Regenerate the chosen point's bases from its stream (the subsample keeps only points).
        children[j].bit_generator.state = states[j]
        for b in sampler.uniform(m, children[j]):
            decomposition.add(b, 1.0 / (T * m))
        trace.append(float(Z[j] @ g))
        x = np.minimum(x + Z[j] / T, 1.0)
    selection = decomposition.round(matroid, rng=gen)
    params = _params(call, cal, delta_f, matroid, oracle, n_samples)
    params.update(cover_size=m, n_subsample=N, layer_width=w, n_scores=T * N,
                  backend=backend_name(call.backend))
    guarantee = no_guarantee(
        "Rafiey and Yoshida 2020, Algorithm 2: private, but its (1 - 1/e) utility is not "
        "supported (a uniform subsample of the cover misses its best points; docs/errata.md)")
    return make_result(f, list(selection), "private_continuous_greedy_layers", privacy=report,
                       evaluations=f.evaluations - start, params=params, trace=trace,
                       guarantee=guarantee)


@register("private_continuous_greedy_layers", private=True,
          core=_private_continuous_greedy_layers,
          summary="Rafiey & Yoshida 2020, Alg. 2 (subsampled cover, layers): private, utility "
                  "guarantee not supported; prefer private_continuous_greedy")
def private_continuous_greedy_layers(f: SetFunction, constraint: object, *, epsilon: float,
                                     delta: float = 0.0, steps: int | None = None,
                                     cover_size: int | None = None,
                                     n_subsample: int | None = None, layer_width: float = 0.0,
                                     gradient: str = "auto", n_samples: int = 1000,
                                     sensitivity: float | None = None,
                                     composition: str = "auto", backend: Any = None,
                                     budget: Any = None, rng: RNGLike = None) -> Result:
    r"""Algorithm 2 of Rafiey and Yoshida (2020) in its corrected, implementable form.

    Each of ``T`` steps draws a data-independent uniform subsample of ``N`` points of the cover
    (each point the average of ``m`` uniformly random bases), scores them by
    :math:`\langle z, \nabla f(x_{t-1})\rangle` (quantized to multiples of ``layer_width`` when
    it is positive: the paper's layers), and picks one with the exponential mechanism; the
    point's bases go to the decomposition that is swap-rounded at the end.

    **Utility: not supported.** The paper's Theorem 4.4 needs every layer's size to be
    estimated with a nonempty sample; a uniform subsample of the cover almost surely misses the
    top layers, so the :math:`(1 - 1/e)` guarantee cannot be promised (seed 004 review, A1).
    The method is private; use :func:`private_continuous_greedy` (one base per step) when
    utility matters.

    Privacy: with exact exponential-mechanism selection over the subsample the step costs
    :math:`2\epsilon'(r s + w)` (the quantization can move a point one layer further than its
    score changes, a factor the paper's proof drops); the weight is calibrated to that, so each
    step is ``epsilon_step``-DP. The subsample, ``m`` and ``N`` are data-independent.

    Parameters
    ----------
    f, constraint, epsilon, delta, steps, gradient, n_samples, sensitivity, composition, budget, rng
        As in :func:`private_continuous_greedy`.
    cover_size : int, optional
        ``m``; default the paper's :math:`\lceil r n / \epsilon_{step}^2\rceil`
        (:math:`\rho = \epsilon_{step}/\sqrt n`). Memory and time grow as ``N m r`` per step.
    n_subsample : int, optional
        ``N``; default the paper's Hoeffding size with :math:`\lambda = 1/\sqrt n`,
        :math:`\theta = 1/n^2` and :math:`\mu = e^{\epsilon_{step}} - 1`.
    layer_width : float, default=0
        Width ``w`` of the score layers in score units; 0 (the default) selects exactly among
        the subsample, which is never worse for privacy.
    backend : {"numpy", "secure"} or backend instance, optional
        Backend of the selection step.

    Returns
    -------
    Result
        ``params["n_scores"]`` counts the subsample points scored (``T N``), the paper's unit
        for its :math:`O(r|E|^2 \ln(|E|/\epsilon))` evaluation count; ``evaluations`` counts the
        ``F`` evaluations of the gradients as in :func:`private_continuous_greedy`.
    """
    caller = "private_continuous_greedy_layers"
    call = checked_call(caller, f, constraint, epsilon=epsilon, delta=delta, budget=budget,
                        rng=rng, backend=backend)
    return _private_continuous_greedy_layers(call, steps=steps, cover_size=cover_size,
                                             n_subsample=n_subsample, layer_width=layer_width,
                                             gradient=gradient, n_samples=n_samples,
                                             sensitivity=sensitivity, composition=composition)
