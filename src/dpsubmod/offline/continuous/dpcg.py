r"""DPCG and its curvature-aware variant (Sadeghi and Fazel 2021, offline part).

O. Sadeghi and M. Fazel, "Differentially private monotone submodular maximization under matroid
and knapsack constraints", AISTATS 2021. The seed is the paper's appendix; the implementable
reading follows its engineering notes and their review (seed 002); departures from the paper are
listed in ``docs/errata.md``.

DPCG (:func:`dpcg`). Start at :math:`x^{(1)} = 0`; for :math:`k = 1..K`:
:math:`v_k = \arg\max_{v \in P} \langle v, \nabla f_D(x^{(k)}) + Y^{(k)}\rangle` (the polytope's
exact linear oracle: the matroid greedy, or the fractional knapsack), and
:math:`x^{(k+1)} = x^{(k)} + v_k / K`. The fractional point is rounded obliviously: swap rounding
of the kept vertices for a matroid, the cost-preserving randomized pipage rounding for a
knapsack.

Noise and privacy (replace-one neighbours, declared value sensitivity :math:`\Delta`). Each
gradient coordinate moves by at most :math:`s = 2\Delta` in the general data model and
:math:`s = \Delta` for ``data_model == "monotone-records"`` objectives
(:mod:`dpsubmod.offline.continuous._gradient`), so the gradient has l1 sensitivity :math:`n s`
and l2 sensitivity :math:`\sqrt n s`.

* Laplace: :math:`Y^{(k)} \sim \mathrm{Lap}(\lambda)^n` with :math:`\lambda = K n s / \epsilon`
  (the note's :math:`2 K n \Delta / \epsilon` in the general model): each step is
  :math:`\epsilon/K`-DP, basic composition gives :math:`\epsilon`-DP.
* Gaussian: :math:`Y^{(k)} \sim N(0, \sigma^2 I)`; ``gaussian_calibration="paper"`` is the
  appendix's :math:`\sigma = c K \sqrt n s / \epsilon`, :math:`c^2 > 2\ln(1.25 K / \delta)`
  (each step :math:`(\epsilon/K, \delta/K)`-DP by the classic Gaussian mechanism, which needs
  :math:`\epsilon / K < 1`); ``"analytic"`` uses the exact Gaussian calibration per step
  (Balle and Wang 2018) with the same basic composition, about 1.3 times less noise;
  ``"zcdp"`` splits the zCDP budget of :math:`(\epsilon, \delta)` over the steps. The default
  ``"auto"`` is the less noisy of ``"analytic"`` and ``"zcdp"`` for the run's budget and ``K``
  (``"zcdp"`` from ``K = 2`` on at the usual budgets, about 2 times less noise than the
  paper's at ``K = 3``); the curvature variant, which composes its parts by basic
  composition, uses ``"analytic"``.

The linear oracle, the vertex list and the rounding are post-processing of the noisy gradients.

Guarantee (Lemma 1 of the paper, with Lemma 2's constants): :math:`E f(x) \ge (1 - 1/e) f(x^*) -
G - L R^2 / (2K)`, :math:`L \le m_F = \max_e F(\{e\})`, :math:`R = \max_{x \in P} \|x\|_1`
(the rank, or at most :math:`b / c_{min}` for a knapsack), and
:math:`G \le 2 R\, E\|Y\|_\infty` (:math:`= 2 R \lambda H_n` for Laplace). Swap rounding keeps the
bound for the set (:math:`E F(S) \ge f(x)`); the knapsack rounding loses at most :math:`m_F`.

DPCG-kappa (:func:`dpcg_curvature`, Lemma 5): with the linear part :math:`\ell_e = F(V) - F(V -
e) = \nabla_e f(\mathbf 1)` and :math:`g = f - \ell^\top x`, the same steps over
:math:`P \cap \{\ell^\top v \ge \lambda\}` on :math:`\nabla g` give
:math:`(1 - \kappa_F / e) f(x^*)` minus the same terms when :math:`\lambda = \ell^\top x^*`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ... import privacy as mech
from ..._rng import RNGLike
from ..._validation import check_finite, check_int, check_real
from ...constraints.knapsack import Knapsack
from ...errors import ValidationError
from ...extensions.multilinear import has_closed_form, multilinear_gradient
from ...functions.base import SetFunction
from ...polytopes.oracles import KnapsackPolytope
from ...privacy.additive import Laplace
from ...privacy.plan import backend_name
from ...privacy.selection import ExponentialMechanism
from ...privacy.split import even_share, proportional_shares
from .._common import (
    PrivateCall,
    check_noise_parameter,
    checked_call,
    make_result,
    require_finite,
)
from ..guarantees import continuous_guarantee, no_guarantee
from ..registry import register
from ..result import Result
from ._dpcg_noise import (
    _check_noise,
    _default_steps,
    _Noise,
    dpcg_default_steps,
    dpcg_noise_scale,
    dpcg_utility_gap,
)
from ._dpcg_path import _Path, _polytope, _run
from ._gradient import GradientOracle, built, gradient_sensitivity, stores_nothing

__all__ = ["dpcg", "dpcg_curvature", "dpcg_noise_scale", "dpcg_default_steps", "dpcg_utility_gap"]

def _resolve_steps(steps: object, radius: float, caller: str) -> int:
    if steps is None:
        return max(1, math.ceil(radius - 1e-9))
    return check_int(steps, "steps", low=1, caller=caller)


def _dpcg(call: PrivateCall, *, steps: int | None, noise: str | None,
          gaussian_calibration: str, gradient: str, n_samples: int,
          sensitivity: float | None, value_bound: float | None) -> Result:
    """:func:`dpcg` below its public checks: plan the run from its noise mechanism's privacy
    map, charge the plan once, then draw."""
    caller, f, constraint = call.caller, call.f, call.constraint
    epsilon, delta, be = call.epsilon, call.delta, call.noise
    delta_f, s = gradient_sensitivity(f, sensitivity, caller)
    noise = ("laplace" if delta == 0.0 else "gaussian") if noise is None else noise
    noise, calib = _check_noise(noise, gaussian_calibration, delta, caller)
    if noise == "gaussian" and gaussian_calibration == "auto" and be.discrete:
        # A grid backend samples the discrete Gaussian, whose exact guarantee is zCDP.
        calib = "zcdp"
    if value_bound is not None:
        value_bound = check_real(value_bound, "value_bound", low=0.0, low_open=True,
                                 caller=caller)
    poly = _polytope(constraint)
    radius = poly.l1_radius()
    if steps is None and value_bound is not None:
        K = _default_steps(epsilon, delta, f.n, radius, s, value_bound, noise, calib, 1000,
                           caller)
    else:
        K = _resolve_steps(steps, radius, caller)
    noiser = _Noise(noise, calib, epsilon, delta, K, f.n, s, be, caller)
    oracle = GradientOracle.build(f, gradient, n_samples, call.gen, caller)

    report, allowance = call.charge_plan(
        "dpcg", noiser.events(K), delta=delta if noiser.rule == "zcdp" else None,
        composition=noiser.rule)

    start = f.evaluations
    path = _Path(poly)
    _run(path, K, oracle, noiser.mechanism, allowance)
    selection = path.round(call.gen)
    params = {
        "epsilon": epsilon, "delta": delta, "steps": K, "noise": noise,
        "gaussian_calibration": noiser.calibration if noise == "gaussian" else None,
        "noise_scale": noiser.scale, "composition": noiser.rule,
        "sensitivity": delta_f, "data_model": f.data_model, "gradient_sensitivity": s,
        "l1_radius": radius, "gradient": oracle.resolved,
        "n_samples": n_samples if oracle.resolved == "sampling" else None,
        "n_gradients": oracle.calls, "value_bound": value_bound,
        "backend": backend_name(call.backend),
        "polytope": type(poly).__name__,
    }
    theorem = "Sadeghi and Fazel 2021, Lemma 1 with Lemma 2's constants (dpcg_utility_gap)"
    if oracle.resolved == "sampling":
        guarantee = no_guarantee(f"{theorem}: proved for exact gradients; sampled gradients "
                                 "add an estimation error with no explicit bound here")
    else:
        guarantee = continuous_guarantee(
            constraint, noise_term=dpcg_utility_gap(scale=noiser.scale, n=f.n, radius=radius,
                                                    steps=K, value_bound=0.0, noise=noise),
            radius=radius, steps=K, value_bound=value_bound, theorem=theorem,
            rounding_loss=isinstance(constraint, Knapsack),
            integral=not isinstance(constraint, Knapsack))
    return make_result(f, list(selection), "dpcg", privacy=report,
                       evaluations=f.evaluations - start, params=params, trace=[],
                       guarantee=guarantee)


@register("dpcg", private=True, constraints=("cardinality", "matroid", "knapsack"),
          core=_dpcg,
          summary="DPCG: continuous greedy on Laplace/Gaussian-noised gradients, matroid or "
                  "knapsack (Sadeghi & Fazel 2021)")
def dpcg(f: SetFunction, constraint: object, *, epsilon: float, delta: float = 0.0,
         steps: int | None = None, noise: str | None = None,
         gaussian_calibration: str = "auto", gradient: str = "auto", n_samples: int = 1000,
         sensitivity: float | None = None, value_bound: float | None = None,
         backend: Any = None, budget: Any = None, rng: RNGLike = None) -> Result:
    r"""DPCG: differentially private continuous greedy with noisy gradients (Sadeghi and Fazel
    2021, the offline algorithm of the appendix, Theorem 1).

    ``K`` steps of :math:`v_k = \arg\max_{v \in P}\langle v, \nabla f(x^{(k)}) + Y^{(k)}\rangle`,
    :math:`x \leftarrow x + v_k/K`, then oblivious rounding (swap rounding for a matroid,
    randomized pipage for a knapsack). See the module docstring for the noise calibration and the
    guarantee :math:`E f(x) \ge (1 - 1/e) f(x^*) - 2R\,E\|Y\|_\infty - m_F R^2 / (2K)`;
    ``Result.guarantee`` states the better of it and the step-by-step reading
    :math:`\rho_K f(x^*) - w_K\, 2R\,E\|Y\|_\infty`, positive at the paper's ``K = ceil(R)``
    (:func:`~dpsubmod.offline.guarantees.stepwise_ratio`).

    Parameters
    ----------
    f : SetFunction
        Monotone submodular objective with a declared ``sensitivity`` and ``data_model``.
    constraint : int, Matroid or Knapsack
        Any matroid (the polytope's greedy oracle needs only ``greedy_independent``) or a
        knapsack.
    epsilon, delta : float
        Total budget. ``delta = 0`` gives pure DP with Laplace noise.
    steps : int, optional
        ``K``. Default: with ``value_bound``, :func:`dpcg_default_steps` (the ``K`` minimizing
        the smoothness bound's additive term); without, the paper's ``ceil(R)`` with ``R`` the
        polytope's l1 radius (the rank for a matroid; ``docs/algorithms/continuous_greedy.md``).
    noise : {"laplace", "gaussian"}, optional
        Default Laplace when ``delta == 0``, Gaussian otherwise.
    gaussian_calibration : {"auto", "paper", "analytic", "zcdp"}, default="auto"
        See :func:`dpcg_noise_scale`. "paper" needs ``epsilon / K < 1``; "auto" is the less
        noisy of the exact per-step ("analytic") and the zCDP calibration (``params`` records
        which).
    gradient : {"auto", "exact", "sampling"}, default="auto"
    n_samples : int, default=1000
        Samples per sampled gradient (data-independent, common random numbers).
    sensitivity : float, optional
        Overrides ``f.sensitivity``.
    value_bound : float, optional
        A public bound on :math:`\max_e F(\{e\})`, used to choose ``K`` and in
        ``Result.guarantee``.
    backend : {"numpy", "secure"} or backend instance, optional
        Noise backend of the Laplace/Gaussian draws.
        ``None`` (the default): ``"secure"`` without ``rng``, a seeded ``"numpy"`` simulation
        with one (:func:`~dpsubmod.privacy.backends.choose_backend`).
    budget : Budget, optional
        Charged with the run's whole ``(epsilon, delta)`` before the first noise draw.
    rng : int, Generator or None

    Returns
    -------
    Result
        ``evaluations`` counts ``F`` evaluations of the ``K`` gradients (``K n`` closed form,
        ``K N (n + 1)`` sampled, ``K 2^n`` enumerated); ``params["noise_scale"]`` is the
        per-coordinate Laplace scale or Gaussian sigma.

    Examples
    --------
    >>> from dpsubmod.functions import Coverage
    >>> f = Coverage.from_records([[0], [0, 1], [2], [1, 3], [3]] * 40, n_sets=4)
    >>> res = dpcg(f, 2, epsilon=1.0, rng=0)
    >>> len(res.selection), res.privacy.epsilon
    (2, 1.0)
    """
    caller = "dpcg"
    call = checked_call(caller, f, constraint, epsilon=epsilon, delta=delta, budget=budget,
                        rng=rng, backend=backend)
    return _dpcg(call, steps=steps, noise=noise, gaussian_calibration=gaussian_calibration,
                 gradient=gradient, n_samples=n_samples, sensitivity=sensitivity,
                 value_bound=value_bound)


# ---------------------------------------------------------------------------------------------
# curvature-aware variant
# ---------------------------------------------------------------------------------------------
def _dpcg_curvature(call: PrivateCall, *, linear_term: object, target: float | None,
                    n_targets: int, budget_split: tuple[float, float, float],
                    steps: int | None, noise: str | None, gaussian_calibration: str,
                    gradient: str, n_samples: int, sensitivity: float | None,
                    failure_probability: float) -> Result:
    """:func:`dpcg_curvature` below its public checks: plan the run from its mechanisms'
    privacy maps, charge the plan once, then draw."""
    caller, f, constraint = call.caller, call.f, call.constraint
    epsilon, delta, be, gen = call.epsilon, call.delta, call.noise, call.gen
    delta_f, s = gradient_sensitivity(f, sensitivity, caller)
    noise = ("laplace" if delta == 0.0 else "gaussian") if noise is None else noise
    noise, calib = _check_noise(noise, gaussian_calibration, delta, caller)
    if noise == "gaussian" and calib == "zcdp":
        raise ValidationError(
            f"{caller} composes its parts by basic composition; pass gaussian_calibration="
            "'paper' or 'analytic'."
        )
    poly = _polytope(constraint)
    n = f.n
    private_ell = isinstance(linear_term, str)
    if private_ell and linear_term != "private":
        raise ValidationError(
            f"The 'linear_term' parameter of {caller} must be 'private' or a public array of "
            f"length {n}; got {linear_term!r}."
        )
    ell_public = None
    if not private_ell:
        ell_public = check_finite(linear_term, "linear_term", caller=caller, ndim=1,
                                  nonnegative=True, dtype=float)
        if ell_public.shape != (n,):
            raise ValidationError(
                f"The 'linear_term' argument of {caller} must have length {n}; got "
                f"{ell_public.shape}."
            )
    grid = target is None
    if not grid:
        target = check_real(target, "target", low=0.0, caller=caller)
        if ell_public is not None:
            path = _Path(poly)
            top = path.value_of(path.vertex(ell_public), ell_public)
            if target > top + 1e-12 * max(1.0, top):
                raise ValidationError(
                    f"The 'target' parameter of {caller} is {target!r}, above the largest "
                    f"ell . v over the polytope ({top!r}) for the public 'linear_term'; lower it."
                )
    n_targets = check_int(n_targets, "n_targets", low=1, caller=caller)
    split = check_finite(budget_split, "budget_split", caller=caller, ndim=1, nonnegative=True,
                         dtype=float)
    if split.shape != (3,):
        raise ValidationError(
            f"The 'budget_split' parameter of {caller} must hold three shares (linear term, "
            f"runs, selection); got {budget_split!r}."
        )
    used = split * np.array([private_ell, True, grid and n_targets > 1], dtype=float)
    if used[1] <= 0 or (private_ell and used[0] <= 0) or (grid and n_targets > 1
                                                            and used[2] <= 0):
        raise ValidationError(
            f"The 'budget_split' of {caller} gives no budget to a part that is used "
            f"(linear term: {private_ell}, selection: {grid and n_targets > 1}); got {split}."
        )
    eps_ell, eps_runs, eps_sel = proportional_shares(epsilon, used)
    beta = check_real(failure_probability, "failure_probability", low=0.0, high=1.0,
                      low_open=True, high_open=True, caller=caller)
    radius = poly.l1_radius()
    K = _resolve_steps(steps, radius, caller)
    if noise == "gaussian" and be.discrete:
        raise ValidationError(
            f"{caller} composes its parts by basic composition, and the '{be.name}' backend's "
            "discrete Gaussian is certified through zCDP only; pass noise='laplace' (or use "
            "backend='numpy')."
        )
    oracle = GradientOracle.build(f, gradient, n_samples, gen, caller)
    n_runs = n_targets if grid else 1
    eps_run = even_share(eps_runs, n_runs)
    delta_run = even_share(delta, n_runs)
    # The run's mechanisms, built before the charge from the shares of the epsilon validated
    # at the public entry (a share that underflows is refused here): one noise for every
    # run's gradients, the linear part's Laplace noise, the choice among the runs.
    run_noise = _Noise(noise, calib, eps_run, delta_run, K, n, s, be, caller, allow_zcdp=False)
    linear = choice = None
    if private_ell:
        check_noise_parameter(eps_ell, "the linear part an epsilon of", caller)
        linear = built(lambda: Laplace._trusted(caller, epsilon=eps_ell, sensitivity=n * s,
                                                dim=n, backend=be),
                       "a Laplace scale for the linear part", caller)
    if n_runs > 1:
        check_noise_parameter(eps_sel, "the choice of the run an epsilon of", caller)
        choice = built(lambda: ExponentialMechanism._trusted(caller, epsilon=eps_sel,
                                                             sensitivity=delta_f, backend=be),
                       "an exponential-mechanism weight for the choice of the run", caller)
    # in the order of use: the allowance fills the first planned use an event fits
    planned = [linear.privacy_map()] if linear is not None else []
    planned += run_noise.events(K * n_runs)
    if choice is not None:
        planned.append(choice.privacy_map())
    report, allowance = call.charge_plan("dpcg_curvature", planned, delta=None,
                                         composition="basic")

    start = f.evaluations
    # 1. The linear part ell = grad f(1), released privately unless public.
    if linear is not None:
        # At x = 1 every sampled set is the ground set, so two samples are already exact.
        if stores_nothing(f):  # identically zero (the closed form cannot index it)
            exact = np.zeros(n)
        else:
            with np.errstate(invalid="ignore", over="ignore"):  # checked (and refused) below
                exact = multilinear_gradient(f, np.ones(n), method="exact" if has_closed_form(f)
                                             else "sampling", n_samples=2, rng=gen).estimate
        exact = require_finite(exact, f, caller, "its linear part F(V) - F(V - e)",
                               private=True)
        noisy = np.asarray(linear.release(exact, budget=allowance))
        lap_scale = mech.laplace_scale(eps_ell, n * s)
        ell = np.maximum(noisy - lap_scale * math.log(n / beta), 0.0)
    else:
        ell = ell_public
    # 2. The runs, one per target.
    if grid:
        top = float(poly.linear_max(ell) @ ell) if isinstance(poly, KnapsackPolytope) else \
            float(ell[poly.linear_max_set(ell)].sum())
        targets = [top * j / max(1, n_targets - 1) for j in range(n_targets)]
    else:
        targets = [float(target)]

    def grad_g(x: np.ndarray) -> np.ndarray:
        return oracle(x) - ell

    selections = []
    for i, lam in enumerate(targets):
        path = _Path(poly)
        top = path.value_of(path.vertex(ell), ell)
        if top < lam:
            # ell is released (or public), so lowering the target to what the polytope reaches
            # is post-processing; refusing here would come after the charge
            targets[i] = lam = top
        _run(path, K, grad_g, run_noise.mechanism, allowance, constrained=(ell, lam))
        selections.append(path.round(gen))
    # 3. Private choice among the rounded sets.
    chosen = 0
    if choice is not None:
        values = require_finite([f.value(_mask(S, n)) for S in selections], f, caller,
                                "the value of a rounded set", private=True)
        f.evaluations += len(selections)
        chosen = choice.release(values, budget=allowance)
    params = {
        "epsilon": epsilon, "delta": delta, "steps": K, "noise": noise,
        "gaussian_calibration": run_noise.calibration if noise == "gaussian" else None,
        "noise_scale": run_noise.scale, "composition": "basic", "sensitivity": delta_f,
        "data_model": f.data_model, "gradient_sensitivity": s, "l1_radius": radius,
        "linear_term_mode": "private" if private_ell else "public",
        "linear_term": ell.copy(), "targets": targets, "epsilon_linear_term": eps_ell,
        "epsilon_per_run": eps_run, "epsilon_selection": eps_sel if len(targets) > 1 else 0.0,
        "failure_probability": beta if private_ell else None, "chosen_run": int(chosen),
        "gradient": oracle.resolved,
        "n_samples": n_samples if oracle.resolved == "sampling" else None,
        "n_gradients": oracle.calls, "backend": backend_name(call.backend),
        "polytope": type(poly).__name__,
    }
    guarantee = no_guarantee(
        "Sadeghi and Fazel 2021, Lemma 5: (1 - kappa_F / e) OPT minus DPCG's terms at the target "
        "ell . x*; for a grid of targets with a private choice no explicit bound is derived here")
    return make_result(f, list(selections[chosen]), "dpcg_curvature", privacy=report,
                       evaluations=f.evaluations - start, params=params, trace=[],
                       guarantee=guarantee)


@register("dpcg_curvature", private=True, constraints=("cardinality", "matroid", "knapsack"),
          core=_dpcg_curvature,
          summary="Curvature-aware DPCG, (1 - kappa/e) with a public or privately estimated "
                  "linear term (Sadeghi & Fazel 2021, Lemma 5)")
def dpcg_curvature(f: SetFunction, constraint: object, *, epsilon: float, delta: float = 0.0,
                   linear_term: object = "private", target: float | None = None,
                   n_targets: int = 5, budget_split: tuple[float, float, float] = (0.1, 0.8, 0.1),
                   steps: int | None = None, noise: str | None = None,
                   gaussian_calibration: str = "auto", gradient: str = "auto",
                   n_samples: int = 1000, sensitivity: float | None = None,
                   failure_probability: float = 0.05, backend: Any = None,
                   budget: Any = None, rng: RNGLike = None) -> Result:
    r"""Curvature-aware DPCG (Sadeghi and Fazel 2021, Lemma 5): :math:`(1 - \kappa_F / e)`.

    With the linear part :math:`\ell_e = F(V) - F(V - e)` and :math:`g(x) = f(x) - \ell^\top x`
    (monotone DR-submodular), run DPCG on :math:`\nabla g = \nabla f - \ell` over
    :math:`P \cap \{\ell^\top v \ge \lambda\}`. With ``ell`` public and
    :math:`\lambda = \ell^\top x^*`, :math:`E f(x) \ge (1 - \kappa_F/e) f(x^*) - G -
    m_F R^2/(2K)` with :math:`\kappa_F = 1 - \min_e \ell_e / F(\{e\})`.

    The paper does not say how ``ell`` and ``lambda`` are obtained privately (both depend on
    the data). The modes here (seed 002 notes, Section 2.5):

    * ``linear_term`` an array: ``ell`` is **public** (the caller vouches that it does not
      depend on the private data); otherwise ``"private"`` (default): ``ell`` is released with
      the Laplace mechanism (l1 sensitivity ``n s``) from the first share of the budget, then
      shifted down by the noise's high-probability bound
      ``lambda_Lap ln(n / failure_probability)`` and clipped at 0, so that ``g`` stays monotone
      with probability ``1 - failure_probability``.
    * ``target`` given: one DPCG run with that ``lambda`` (refused before anything is drawn when
      above ``max_{v in P} ell . v`` for a public ``ell``; lowered to it for a private one, as
      post-processing of the released ``ell``). Otherwise a grid of ``n_targets`` values
      ``lambda_j = j / (n_targets - 1) * max_{v in P} ell . v`` (public given ``ell``),
      one DPCG run each, each run rounded, and the released set chosen among the rounded sets by
      the exponential mechanism on ``F`` (sensitivity ``Delta``) from the last share.

    ``budget_split = (ell share, runs share, selection share)``; the shares of the parts that
    are not used are dropped and the rest renormalized. All parts compose by basic composition
    (``noise="gaussian"`` spends the whole ``delta`` on the runs, split evenly). ``budget``,
    when given, is charged with the whole ``(epsilon, delta)`` before the first noise draw.

    Returns
    -------
    Result
        ``params`` holds the released ``linear_term`` (private mode), the targets, each run's
        budget, and the index of the chosen run.
    """
    caller = "dpcg_curvature"
    call = checked_call(caller, f, constraint, epsilon=epsilon, delta=delta, budget=budget,
                        rng=rng, backend=backend)
    return _dpcg_curvature(call, linear_term=linear_term, target=target, n_targets=n_targets,
                           budget_split=budget_split, steps=steps, noise=noise,
                           gaussian_calibration=gaussian_calibration, gradient=gradient,
                           n_samples=n_samples, sensitivity=sensitivity,
                           failure_probability=failure_probability)


def _mask(S: np.ndarray, n: int) -> np.ndarray:
    m = np.zeros(n, dtype=bool)
    m[np.asarray(S, dtype=np.int64)] = True
    return m
