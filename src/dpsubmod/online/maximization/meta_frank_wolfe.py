r"""Online (private) Meta-Frank-Wolfe: online maximization of submodular functions through their
multilinear extensions over a matroid or knapsack polytope.

Meta-Frank-Wolfe (Chen, Hassani and Karbasi 2018) runs ``K`` online linear optimizers
:math:`\mathcal E_1..\mathcal E_K` over the polytope ``P``. Round ``t``: read their points
:math:`v_t^1..v_t^K`, build the Frank-Wolfe path :math:`x_t^{(0)} = 0`,
:math:`x_t^{(k)} = x_t^{(k-1)} + v_t^k / K`, play :math:`x_t = x_t^{(K)}`, then, with the round's
function revealed, feed :math:`\mathcal E_k` the linear reward
:math:`\langle \nabla f_t(x_t^{(k-1)}), v\rangle` (the gradient of the multilinear extension of
:math:`F_t`, :func:`~dpsubmod.extensions.multilinear_gradient`). For monotone DR-submodular,
:math:`\beta`-smooth :math:`f_t` (Lemma 7 of Perez-Salazar and Cummings, from Chen et al.):

.. math::

    (1 - 1/e)\max_{x \in P}\sum_t f_t(x) - \sum_t f_t(x_t)
    \le \frac1K \sum_k r_k + \frac{\beta R^2 T}{2K},

with :math:`r_k` the regret of :math:`\mathcal E_k`. The learners here play **sets** (the online
protocol): :math:`x_t` is rounded obliviously (randomized pipage per block for uniform and
partition matroids and knapsacks, swap rounding of the oracles' convex decompositions for other
matroids, independent rounding on the box), which is post-processing and keeps
:math:`E[F_t(S_t)] \ge f_t(x_t)` for matroids (knapsack pipage loses at most
:math:`\max_e F_t(\{e\})` per round, so report continuous regret there).

Learners:

* :class:`DPMetaFrankWolfe` (Sadeghi and Fazel 2021, "DPMFW"): the oracles are private FTRL with
  the entropic regularizer and tree-aggregated loss sums (Agarwal and Singh 2017;
  :class:`~dpsubmod.online.PrivateFTRL`), with Laplace or Gaussian node noise.
* :class:`MetaFrankWolfe` (Chen, Hassani and Karbasi 2018): non-private; projected online
  gradient ascent oracles (Zinkevich 2003), or entropic FTRL with exact sums.
* :class:`PFTALMetaFrankWolfe` (Perez-Salazar and Cummings 2021, Algorithm 4): the oracles are
  ``K`` copies of PFTAL (Smith and Thakurta 2013), each :math:`\varepsilon/K`-DP.

Neighbouring relation: function streams differing in one round's function :math:`F_t` (replaced
by any other function). Gradients are clipped coordinatewise to ``[0, bound]`` (``bound`` is the
public :math:`m_F \ge \max_{t, e} F_t(\{e\})`, 1 for functions with values in ``[0, 1]``), which is
a no-op for monotone submodular functions within the bound and keeps the sensitivity for any
input: one round's loss vector moves by at most ``n * bound`` in l1 norm and
``sqrt(n) * bound`` in l2 norm, in each of the ``K`` oracles.

References
----------
L. Chen, H. Hassani and A. Karbasi, "Online continuous submodular maximization", AISTATS 2018
(Meta-Frank-Wolfe). O. Sadeghi and M. Fazel, "Differentially private monotone submodular
maximization under matroid and knapsack constraints", AISTATS 2021 (online algorithm DPMFW and its
Theorem 4). N. Agarwal and K. Singh, ICML 2017. O. Perez-Salazar and R. Cummings, AISTATS 2021,
Algorithm 4, Lemma 4, Lemma 5. A. Smith and A. Thakurta, NIPS 2013. M. Zinkevich, "Online
convex programming and generalized infinitesimal gradient ascent", ICML 2003.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..._rng import RNGLike
from ..._validation import check_int, check_real, is_noise_off
from ...errors import ValidationError
from ...polytopes.projections import as_region, euclidean_projection
from ...polytopes.rounding import round_point
from ...privacy.continual import tree_levels
from ...privacy.plan import PrivacyPlan
from .._plans import check_spend, run_plan
from ..oco.ftrl import PrivateFTRL, check_ftrl_privacy, ftrl_plan
from ..oco.pftal import PFTAL
from .frank_wolfe import GRADIENT_METHODS, NEIGHBOURING, FrankWolfeLearner, batch_gradient

__all__ = [
    "DPMetaFrankWolfe",
    "MetaFrankWolfe",
    "PFTALMetaFrankWolfe",
    "round_point",
    "batch_gradient",
    "dpmfw_paper_scale",
    "GRADIENT_METHODS",
]


def dpmfw_paper_scale(n: int, T: int, K: int, epsilon: float, delta: float,
                      bound: float = 1.0) -> float:
    r"""The per-node Laplace scale printed by Sadeghi and Fazel for DPMFW:
    :math:`\lambda = 2 m_F\, n \lceil\ln T\rceil \sqrt{2K\ln(1/\delta)}/\varepsilon`.

    Its node count :math:`\lceil \ln T\rceil` is below the true
    :math:`\lfloor\log_2 T\rfloor + 1`, but the factor 2 (the true leaf l1 sensitivity is
    :math:`n m_F`) compensates for every :math:`2 \le T \le 2\cdot 10^5` and asymptotically;
    :class:`DPMetaFrankWolfe` with ``calibration="paper"`` states the epsilon it really gives,
    and refuses the parameters where that exceeds the requested one.

    >>> round(dpmfw_paper_scale(10, 1000, 4, 1.0, 1e-6), 3)
    1471.826
    """
    caller = "dpmfw_paper_scale"
    n = check_int(n, "n", low=1, caller=caller)
    T = check_int(T, "T", low=2, caller=caller,
                  fix="The paper's formula gives zero noise at T = 1 (ceil(ln 1) = 0).")
    K = check_int(K, "K", low=1, caller=caller)
    eps = check_real(epsilon, "epsilon", low=0.0, low_open=True, caller=caller)
    dlt = check_real(delta, "delta", low=0.0, high=1.0, low_open=True, high_open=True,
                     caller=caller)
    m = check_real(bound, "bound", low=0.0, low_open=True, caller=caller)
    return 2.0 * m * n * math.ceil(math.log(T)) * math.sqrt(2.0 * K * math.log(1.0 / dlt)) / eps


class DPMetaFrankWolfe(FrankWolfeLearner):
    r"""Differentially private online Meta-Frank-Wolfe (Sadeghi and Fazel 2021, "DPMFW"): ``K``
    private FTRL oracles (Agarwal and Singh 2017, entropic regularizer, tree-aggregated noisy
    loss sums) over a matroid or knapsack polytope, with oblivious rounding of the played point.

    Round ``t``: the oracles' points :math:`v_t^k = \arg\min_{x\in P}\eta\langle x,\tilde
    L^k_{t-1}\rangle + \sum_i x_i\ln x_i` (:func:`~dpsubmod.online.kl_projection`) give the path
    :math:`x_t^{(k)}`; play a rounding of :math:`x_t = \frac1K\sum_k v_t^k`; then oracle ``k``
    receives the loss :math:`-\mathrm{clip}(\nabla f_t(x_t^{(k-1)}), 0, m_F)` (``K n``
    evaluations' worth of gradients).

    Guarantee: :math:`(\varepsilon, \delta)`-DP (Laplace with ``delta = 0``: pure
    :math:`\varepsilon`-DP) for the played sets and points, neighbours differing in one
    function. Each oracle's tree has :math:`\lfloor\log_2 T\rfloor + 1` levels and is calibrated
    to the leaf sensitivity :math:`n\,m_F` (l1, Laplace) or :math:`\sqrt n\,m_F` (l2, Gaussian);
    Laplace trees get :math:`\varepsilon_0` = :func:`~dpsubmod.privacy.composition.split_budget`
    ``(epsilon, delta, K)`` (the paper: :math:`\varepsilon/\sqrt{2K\ln(1/\delta)}` by advanced
    composition; here the exact inversion of the rule of ``composition``), Gaussian trees share
    :math:`\rho = ` ``rho_for_target(epsilon, delta)`` (zCDP). The whole run's guarantee (the
    K oracles as one private FTRL release) is stated before round 1, and a learner built with
    ``budget=`` is charged it at construction. Expected :math:`(1-1/e)`-regret
    :math:`O(R\sqrt{T\ln n}) + m_F R^2 T/(2K) + O(\text{noise})` (Theorem 4), :math:`O(\sqrt T)`
    with :math:`K = \sqrt T` when the noise term is small.

    Parameters
    ----------
    n : int
        Ground-set size.
    T : int
        Horizon.
    constraint : int, Matroid or Knapsack
        ``k`` (uniform matroid), a matroid (closed-form projections for uniform and partition
        matroids, Frank-Wolfe otherwise: slower) or a knapsack.
    epsilon : float
        Privacy parameter; ``math.inf`` switches the noise off (exact loss sums: non-private
        Meta-Frank-Wolfe with entropic FTRL oracles; **not private**).
    delta : float, default=0.0
        Needed by Gaussian noise; with Laplace noise it lets the ``K`` trees compose better.
    K : int, optional
        Number of oracles (Frank-Wolfe steps); default :math:`\lceil\sqrt T\rceil` (Theorem 4).
    eta : float, optional
        FTRL learning rate; default :math:`\sqrt{\ln n / T}/m_F`.
    bound : float, default=1.0
        Public :math:`m_F \ge \max_{t,e} F_t(\{e\})`; gradients are clipped to ``[0, bound]``.
    noise : {"laplace", "gaussian"}, default="laplace"
    calibration : {"sound", "paper"}, default="sound"
        ``"paper"`` (Laplace, ``delta > 0``, ``T >= 2``) uses the printed per-node scale
        :func:`dpmfw_paper_scale`; the statement then carries the epsilon it really gives, and
        parameters where that exceeds ``epsilon`` are refused at construction
        (:class:`~dpsubmod.errors.ValidationError`).
    composition : {"auto", "basic", "advanced", "kov", "zcdp"}, default="auto"
        Composition of the Laplace trees over the ``K`` oracles.
    gradient : {"auto", "exact", "sampling"}, default="auto"
        How :func:`~dpsubmod.extensions.multilinear_gradient` computes the gradients (closed forms
        for coverage, facility location, modular functions); sampled gradients use randomness
        independent of the data, which costs no privacy.
    n_samples : int, default=200
        Sample size of sampled gradients.
    rng : int, Generator, SeedSequence or None, default=None
    budget : Budget or None, default=None
        Charged the whole run's guarantee at construction, before anything is released
        (:class:`~dpsubmod.errors.BudgetExceededError` when it does not fit; then nothing
        changes), again by :meth:`reset` after play and by every clone (each a new release).
        Not allowed with ``epsilon=math.inf``.
    """

    def __init__(self, n: int, T: int, constraint: object, *, epsilon: float,
                 delta: float = 0.0, K: int | None = None, eta: float | None = None,
                 bound: float = 1.0, noise: str = "laplace", calibration: str = "sound",
                 composition: str = "auto", gradient: str = "auto", n_samples: int = 200,
                 rng: RNGLike = None, budget: Any = None):
        self.n = n
        self.T = T
        self.constraint = constraint
        self.epsilon = epsilon
        self.delta = delta
        self.K = K
        self.eta = eta
        self.bound = bound
        self.noise = noise
        self.calibration = calibration
        self.composition = composition
        self.gradient = gradient
        self.n_samples = n_samples
        self.rng = rng
        self.budget = budget
        caller = "DPMetaFrankWolfe"
        self._check_meta(caller)
        check_ftrl_privacy(epsilon, delta, noise, caller)
        if calibration not in ("sound", "paper"):
            raise ValidationError(
                f"The 'calibration' parameter of {caller} must be 'sound' or 'paper'; got "
                f"{calibration!r}."
            )
        if calibration == "paper" and not is_noise_off(epsilon):
            if noise != "laplace" or float(delta) == 0.0 or int(T) < 2:
                raise ValidationError(
                    f"calibration='paper' of {caller} reproduces the printed Laplace scale, "
                    "which needs noise='laplace', delta > 0 and T >= 2."
                )
        if eta is not None:
            check_real(eta, "eta", low=0.0, low_open=True, caller=caller)
        plan = self._privacy_plan()
        if plan is not None:
            check_spend(caller, plan.report().epsilon, float(epsilon), parameter="calibration",
                        fix="the printed per-node scale counts ceil(ln T) tree levels instead "
                            f"of {tree_levels(int(T))}, too few at these parameters; use "
                            "calibration='sound'.")

    @property
    def noise_off(self) -> bool:
        """Whether the noise is off (``epsilon=inf``): not private."""
        return is_noise_off(self.epsilon)

    def _paper_tree_epsilon(self, K: int) -> float | None:
        """The per-tree epsilon the printed scale really gives (``calibration="paper"``)."""
        if self.noise_off or self.calibration != "paper":
            return None
        n, T = int(self.n), int(self.T)
        lam = dpmfw_paper_scale(n, T, K, float(self.epsilon), float(self.delta),
                                float(self.bound))
        return tree_levels(T) * n * float(self.bound) / lam

    def _privacy_plan(self) -> PrivacyPlan | None:
        """The ``K`` FTRL oracles as one release (the event their plan charges); ``None`` when
        the noise is off."""
        if self.noise_off:
            return None

        def build() -> PrivacyPlan:
            K = self._K()
            inner, _ = ftrl_plan(
                "PrivateFTRL", T=int(self.T), n=int(self.n), copies=K,
                epsilon=float(self.epsilon), delta=float(self.delta), noise=self.noise,
                width=float(self.bound), composition=self.composition,
                tree_epsilon=self._paper_tree_epsilon(K), neighbouring=NEIGHBOURING)
            rep = inner.report()
            event = rep.event("PrivateFTRL", f"{K} private FTRL oracles: {rep.uses} "
                                             f"tree-aggregation uses by {rep.composition} "
                                             "composition; backend=numpy")
            return run_plan("DPMetaFrankWolfe", [event], neighbouring=NEIGHBOURING,
                            rng=self.rng)

        return self._memo_plan(build)

    def _resolve(self) -> dict[str, Any]:
        n, T = int(self.n), int(self.T)
        K = self._K()
        m = float(self.bound)
        eta = float(self.eta) if self.eta is not None else \
            math.sqrt(max(math.log(n), 1.0) / T) / m
        p: dict[str, Any] = {"n": n, "T": T, "K": K, "eta": eta, "bound": m,
                             "region": self._region.kind, "noise": self.noise,
                             "noise_off": self.noise_off, "calibration": self.calibration,
                             "levels": tree_levels(T)}
        if not self.noise_off and self.calibration == "paper":
            lam = dpmfw_paper_scale(n, T, K, float(self.epsilon), float(self.delta), m)
            p["paper_scale"] = lam
            p["tree_epsilon"] = self._paper_tree_epsilon(K)
        return p

    def _build_oracles(self) -> None:
        p = self._params
        self._ftrl = PrivateFTRL(
            self._region, int(self.T), copies=p["K"], epsilon=self.epsilon,
            delta=float(self.delta), noise=self.noise, eta=p["eta"],
            loss_range=(-float(self.bound), 0.0), composition=self.composition,
            tree_epsilon=p.get("tree_epsilon"), rng=self._oracle_rng, budget=self._allowance,
        )
        self._ftrl.reset()
        self._params.update({k: v for k, v in self._ftrl.resolved_params.items()
                             if k in ("tree_epsilon", "tree_rho", "rho", "scale",
                                      "l1_sensitivity", "l2_sensitivity")})

    def _points(self) -> tuple[np.ndarray, list | None]:
        V = self._ftrl.predict()
        return V, self._ftrl.decompositions

    def _feed(self, G: np.ndarray) -> None:
        self._ftrl.update(-G)


class MetaFrankWolfe(FrankWolfeLearner):
    r"""Meta-Frank-Wolfe for online submodular maximization (Chen, Hassani and Karbasi 2018);
    **not private**.

    ``K`` online linear maximization oracles over the polytope; ``oracle="ogd"`` (default) uses
    projected online gradient ascent, :math:`v^k_{t+1} = \Pi_P(v^k_t + \mu\nabla f_t(x_t^{(k-1)}))`
    with :math:`\mu = D/(G\sqrt T)` (``D`` the diameter bound of ``P``, :math:`G = \sqrt n\,m_F`),
    one of the :math:`O(\sqrt T)`-regret oracles the paper allows; ``oracle="ftrl"`` uses
    entropic FTRL with exact sums (the noise-free :class:`DPMetaFrankWolfe`). With
    :math:`K = \sqrt T` the :math:`(1-1/e)`-regret is :math:`O(\sqrt T)` for the multilinear
    extensions; the rounded sets keep it for matroids.

    Parameters
    ----------
    n, T, constraint, K, bound, gradient, n_samples, rng
        As in :class:`DPMetaFrankWolfe`.
    oracle : {"ogd", "ftrl"}, default="ogd"
        Online gradient ascent needs a Euclidean projection (closed form for uniform and
        partition matroids and knapsacks; Frank-Wolfe for other matroids).
    step : float, optional
        Step size :math:`\mu` of ``"ogd"``.
    eta : float, optional
        Learning rate of ``"ftrl"``.
    """

    def __init__(self, n: int, T: int, constraint: object, *, K: int | None = None,
                 oracle: str = "ogd", step: float | None = None, eta: float | None = None,
                 bound: float = 1.0, gradient: str = "auto", n_samples: int = 200,
                 rng: RNGLike = None):
        self.n = n
        self.T = T
        self.constraint = constraint
        self.K = K
        self.oracle = oracle
        self.step = step
        self.eta = eta
        self.bound = bound
        self.gradient = gradient
        self.n_samples = n_samples
        self.rng = rng
        caller = "MetaFrankWolfe"
        self._check_meta(caller)
        if oracle not in ("ogd", "ftrl"):
            raise ValidationError(
                f"The 'oracle' parameter of {caller} must be 'ogd' or 'ftrl'; got {oracle!r}."
            )
        for name, v in (("step", step), ("eta", eta)):
            if v is not None:
                check_real(v, name, low=0.0, low_open=True, caller=caller)

    def _resolve(self) -> dict[str, Any]:
        n, T = int(self.n), int(self.T)
        K = self._K()
        m = float(self.bound)
        reg = self._region
        step = float(self.step) if self.step is not None else \
            reg.diameter / (math.sqrt(n) * m * math.sqrt(T))
        eta = float(self.eta) if self.eta is not None else \
            math.sqrt(max(math.log(n), 1.0) / T) / m
        return {"n": n, "T": T, "K": K, "oracle": self.oracle, "step": step, "eta": eta,
                "bound": m, "region": reg.kind}

    def _build_oracles(self) -> None:
        p = self._params
        if self.oracle == "ftrl":
            self._ftrl = PrivateFTRL(self._region, int(self.T), copies=p["K"],
                                     epsilon=math.inf, eta=p["eta"],
                                     loss_range=(-float(self.bound), 0.0))
            self._ftrl.reset()
        else:
            V, dec = euclidean_projection(self._region, np.zeros((p["K"], int(self.n))),
                                          return_decomposition=True)
            self._V, self._dec = V, dec

    def _points(self) -> tuple[np.ndarray, list | None]:
        if self.oracle == "ftrl":
            return self._ftrl.predict(), self._ftrl.decompositions
        return self._V.copy(), self._dec

    def _feed(self, G: np.ndarray) -> None:
        if self.oracle == "ftrl":
            self._ftrl.update(-G)
        else:
            self._V, self._dec = euclidean_projection(
                self._region, self._V + self._params["step"] * G, return_decomposition=True)


class PFTALMetaFrankWolfe(FrankWolfeLearner):
    r"""Private online DR-submodular maximization on ``K`` copies of PFTAL (Perez-Salazar and
    Cummings 2021, Algorithm 4), applied to the multilinear extensions of the round's set
    functions over a uniform or partition matroid polytope or a knapsack polytope, with oblivious
    rounding of the played point.

    Copy ``k`` is :class:`~dpsubmod.online.PFTAL` (Smith and Thakurta 2013) on the
    ``H``-strongly convex losses :math:`-\langle\mathrm{clip}(\nabla f_t(x_t^{(k-1)}), 0, m_F),
    v\rangle + \frac H2\|v\|^2` over ``P`` with Euclidean projections, each
    :math:`\varepsilon/K`-DP; Lemma 6 (adaptive basic composition over the copies) makes the run
    :math:`\varepsilon`-DP (pure). PFTAL's tree is calibrated to the l2 sensitivity
    :math:`\sqrt n\,m_F` of one round's input at a common point: both clipped gradients lie in
    :math:`[0, m_F]^n` and the regulariser's gradient :math:`H v_t^k` is common to neighbours
    (the generic bound for a gradient-norm bound ``G`` would be :math:`2G = 2\sqrt n\,m_F`).
    Expected :math:`(1-1/e)`-regret :math:`\tilde O(T^{3/4}/\varepsilon)` (Theorem 9) for the
    multilinear extensions, up to the regulariser's bias :math:`H T R_2^2/2`.

    Parameters
    ----------
    n, T, constraint, epsilon, bound, gradient, n_samples, rng
        As in :class:`DPMetaFrankWolfe`; ``constraint`` must be an int, a uniform or partition
        matroid, or a knapsack (PFTAL needs a Euclidean projection).
    K : int, optional
        Number of PFTAL copies; default :math:`\max(1, \mathrm{round}(T^{1/4}/\ln^{1.25}T))`
        (Algorithm 4; the proof's end uses :math:`(T/\ln^{2.5}T)^{1/4}`, also :math:`\tilde
        O(T^{3/4})`).
    H : float, optional
        Strong-convexity parameter of the regularised losses (not fixed by the paper, which uses
        PFTAL as a black box). Default :math:`(G/R_2)\sqrt{a/T}` with :math:`G = \sqrt n\,m_F`,
        :math:`R_2 = \sqrt R` (``R`` the l1 radius of ``P``), :math:`a = n\ln^{2.5}T/
        (\varepsilon/K)` (private) or :math:`\ln T` (noise off), floored at 1: it balances
        PFTAL's regret bound against the regulariser's bias.
    budget : Budget or None, default=None
        Charged the whole run's guarantee (``K`` tree-aggregation events of
        :math:`\varepsilon/K`) at construction, before anything is released, again by
        :meth:`reset` after play and by every clone. Not allowed with ``epsilon=math.inf``.
    """

    def __init__(self, n: int, T: int, constraint: object, *, epsilon: float,
                 K: int | None = None, H: float | None = None, bound: float = 1.0,
                 gradient: str = "auto", n_samples: int = 200, rng: RNGLike = None,
                 budget: Any = None):
        self.n = n
        self.T = T
        self.constraint = constraint
        self.epsilon = epsilon
        self.K = K
        self.H = H
        self.bound = bound
        self.gradient = gradient
        self.n_samples = n_samples
        self.rng = rng
        self.budget = budget
        caller = "PFTALMetaFrankWolfe"
        self._check_meta(caller)
        if as_region(constraint, n).kind == "matroid":
            raise ValidationError(
                f"{caller} needs a Euclidean projection in closed form: pass an int k, a uniform "
                "or partition matroid, or a knapsack (use DPMetaFrankWolfe for other matroids)."
            )
        if not is_noise_off(epsilon):
            check_real(epsilon, "epsilon", low=0.0, low_open=True, caller=caller,
                       fix="Pass a positive privacy budget, or epsilon=math.inf (not private).")
        if H is not None:
            check_real(H, "H", low=0.0, low_open=True, caller=caller)

    @property
    def noise_off(self) -> bool:
        """Whether the noise is off (``epsilon=inf``): not private."""
        return is_noise_off(self.epsilon)

    def _default_K(self) -> int:
        T = int(self.T)
        lt = max(math.log(T), 1.0)
        return max(1, round(T ** 0.25 / lt ** 1.25))

    def _privacy_plan(self) -> PrivacyPlan | None:
        """``K`` tree-aggregation events of ``epsilon / K`` (basic composition); ``None`` when
        the noise is off."""
        if self.noise_off:
            return None

        def build() -> PrivacyPlan:
            K, n = self._K(), int(self.n)
            copy = PFTAL(n, int(self.T), H=1.0, epsilon=float(self.epsilon) / K,
                         sensitivity=math.sqrt(n) * float(self.bound)).plan
            return run_plan("PFTALMetaFrankWolfe", copy.events * K, neighbouring=NEIGHBOURING,
                            rng=self.rng)

        return self._memo_plan(build)

    def _resolve(self) -> dict[str, Any]:
        n, T = int(self.n), int(self.T)
        K = self._K()
        m = float(self.bound)
        G = math.sqrt(n) * m
        R2 = math.sqrt(max(self._region.l1_radius, 1e-12))
        lt = max(math.log(T), 1.0)
        if self.H is not None:
            H = float(self.H)
        else:
            a = lt if self.noise_off else n * lt ** 2.5 / (float(self.epsilon) / K)
            H = (G / R2) * math.sqrt(max(a, 1.0) / T)
        return {"n": n, "T": T, "K": K, "H": H, "bound": m, "region": self._region.kind,
                "sensitivity": math.sqrt(n) * m, "noise_off": self.noise_off,
                "copy_epsilon": math.inf if self.noise_off else float(self.epsilon) / K}

    def _build_oracles(self) -> None:
        p = self._params
        reg = self._region

        def project(y: np.ndarray) -> np.ndarray:
            return euclidean_projection(reg, y)

        rngs = self._oracle_rng.spawn(p["K"])
        self._copies = []
        for r in rngs:
            oco = PFTAL(int(self.n), int(self.T), H=p["H"],
                        epsilon=math.inf if self.noise_off else p["copy_epsilon"],
                        sensitivity=None if self.noise_off else p["sensitivity"],
                        project=project, x1=np.zeros(int(self.n)), rng=r,
                        budget=self._allowance)
            oco.reset()
            self._copies.append(oco)

    def _points(self) -> tuple[np.ndarray, list | None]:
        return np.stack([c.point() for c in self._copies]), None

    def _feed(self, G: np.ndarray) -> None:
        H = self._params["H"]
        for k, oco in enumerate(self._copies):
            # The regulariser's gradient H v is the same for neighbours (v is released).
            oco.update(-G[k] + H * oco.point())
