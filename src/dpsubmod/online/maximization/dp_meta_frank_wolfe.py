r"""Differentially private online Meta-Frank-Wolfe (Sadeghi and Fazel 2021, "DPMFW"): ``K``
private entropic FTRL oracles (Agarwal and Singh 2017) with tree-aggregated noisy loss sums over a
matroid or knapsack polytope.

The shared Frank-Wolfe machinery is in :mod:`~dpsubmod.online.maximization.frank_wolfe`; the
non-private :class:`~dpsubmod.online.MetaFrankWolfe` and the PFTAL-based
:class:`~dpsubmod.online.PFTALMetaFrankWolfe` in
:mod:`~dpsubmod.online.maximization.meta_frank_wolfe`, whose module docstring states the
regret decomposition (Lemma 7 of Chen, Hassani and Karbasi 2018) and the neighbouring relation.

References
----------
O. Sadeghi and M. Fazel, "Differentially private monotone submodular maximization under matroid
and knapsack constraints", AISTATS 2021 (online algorithm DPMFW and its Theorem 4). N. Agarwal and
K. Singh, "The price of differential privacy for online learning", ICML 2017.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..._guarantee import RegretGuarantee
from ..._rng import RNGLike
from ..._validation import check_int, check_real, is_noise_off
from ...errors import ValidationError
from ...privacy.continual import tree_levels
from ...privacy.plan import PrivacyPlan
from .._plans import check_backend, check_spend, learner_backend, run_plan
from ..oco.ftrl import PrivateFTRL, check_ftrl_privacy, ftrl_plan
from ..tags import NOISE_BACKENDS, LearnerTags
from .frank_wolfe import NEIGHBOURING, FrankWolfeLearner
from .fw_bounds import frank_wolfe_bias, ftrl_oracle_regret, harmonic


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
    L^k_{t-1}\rangle + \sum_i x_i\ln x_i` (:func:`~dpsubmod.polytopes.kl_projection`) give the path
    :math:`x_t^{(k)}`; play a rounding of :math:`x_t = \frac1K\sum_k v_t^k`; then oracle ``k``
    receives the loss :math:`-\mathrm{clip}(\nabla f_t(x_t^{(k-1)}), 0, m_F)` (``K n``
    evaluations' worth of gradients).

    Guarantee: :math:`(\varepsilon, \delta)`-DP (Laplace with ``delta = 0``: pure
    :math:`\varepsilon`-DP) for the played sets and points, neighbours differing in one
    function. Each oracle's tree has :math:`\lfloor\log_2 T\rfloor + 1` levels and is calibrated
    to the leaf sensitivity :math:`n\,m_F` (l1, Laplace) or :math:`\sqrt n\,m_F` (l2, Gaussian);
    Laplace trees get :math:`\varepsilon_0` = :func:`~dpsubmod.privacy.split.split_budget`
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
    K : int or "paper", optional
        Number of oracles (Frank-Wolfe steps). Default (private run, sound calibration): the
        ``K`` in :math:`1..\min(\lceil\sqrt T\rceil, 64)` minimising the explicit Theorem 4
        bound of :attr:`guarantee` (more steps shrink the bias :math:`m_F R^2 T/(2K)` but split
        the budget over more trees); with the noise off, ``calibration="paper"`` or
        ``K="paper"``: :math:`\lceil\sqrt T\rceil` (Theorem 4).
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
    backend : {"numpy", "secure", "opendp"}, NoiseBackend or None, default=None
        Noise backend of the oracles' trees (see :class:`~dpsubmod.online.PrivateFTRL`):
        ``"secure"`` draws exact discrete node noise (through OpenDP when it is installed);
        ``"opendp"`` requires OpenDP.
        ``None`` (the default): ``"secure"`` without ``rng`` (``"numpy"`` for l2-Laplace
        noise), a seeded ``"numpy"`` simulation with one
        (:func:`~dpsubmod.privacy.backends.choose_backend`).
    """

    _tags = LearnerTags(private=True, feedback="full", problem="maximization",
                        assumption="oblivious", backends=NOISE_BACKENDS)

    def __init__(self, n: int, T: int, constraint: object, *, epsilon: float,
                 delta: float = 0.0, K: int | None = None, eta: float | None = None,
                 bound: float = 1.0, noise: str = "laplace", calibration: str = "sound",
                 composition: str = "auto", gradient: str = "auto", n_samples: int = 200,
                 rng: RNGLike = None, budget: Any = None, backend: Any = None):
        caller = "DPMetaFrankWolfe"
        super().__init__(n, T, constraint, K=K, bound=bound, gradient=gradient,
                         n_samples=n_samples, rng=rng, caller=caller)
        self.epsilon = epsilon
        self.delta = delta
        self.eta = eta
        self.noise = noise
        self.calibration = calibration
        self.composition = composition
        self.budget = budget
        self.backend = learner_backend(self, backend, rng, caller, noise)
        check_ftrl_privacy(epsilon, delta, noise, caller)
        check_backend(backend, caller)
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
        self._finish_construction(DPMetaFrankWolfe)

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
                type(self).__name__, T=int(self.T), n=int(self.n), copies=K,
                epsilon=float(self.epsilon), delta=float(self.delta), noise=self.noise,
                width=float(self.bound), composition=self.composition,
                tree_epsilon=self._paper_tree_epsilon(K), neighbouring=NEIGHBOURING,
                backend=self.backend)
            rep = inner.report()
            tree_note = inner.events[0].note
            event = rep.event("PrivateFTRL", f"{K} private FTRL oracles: {rep.uses} "
                                             f"tree-aggregation uses by {rep.composition} "
                                             f"composition; {tree_note.rsplit('; ', 1)[-1]}")
            return run_plan("DPMetaFrankWolfe", [event], neighbouring=NEIGHBOURING,
                            backend=self.backend, rng=self.rng)

        return self._memo_plan(build)

    def _noise_sup(self, K: int) -> float:
        """Expected sup norm of one tree node's noise with ``K`` oracles (sound calibration)."""
        n, T, m = int(self.n), int(self.T), float(self.bound)
        _, p = ftrl_plan(type(self).__name__, T=T, n=n, copies=K, epsilon=float(self.epsilon),
                         delta=float(self.delta), noise=self.noise, width=m,
                         composition=self.composition, tree_epsilon=self._paper_tree_epsilon(K),
                         neighbouring=NEIGHBOURING)
        if self.noise == "laplace":
            return p["scale"] * harmonic(n)
        return p["scale"] * math.sqrt(2.0 * math.log(2 * n))

    def _oracle_regret(self, K: int, eta: float) -> float:
        n, T, m = int(self.n), int(self.T), float(self.bound)
        r1 = self._public_region().l1_radius
        sup = 0.0 if self.noise_off else self._noise_sup(K)
        return ftrl_oracle_regret(n, T, r1, m, eta, noise_sup=sup, levels=tree_levels(T))

    def _eta(self) -> float:
        n, T, m = int(self.n), int(self.T), float(self.bound)
        return float(self.eta) if self.eta is not None else \
            math.sqrt(max(math.log(n), 1.0) / T) / m

    def _default_K(self) -> int:
        r"""With the noise on, the ``K`` minimising the bound of :attr:`guarantee`: more steps
        shrink the Frank-Wolfe bias but split the budget over more trees (Theorem 4's
        trade-off, solved for this run's ``T``, ``epsilon`` and ``n``); the theorem's
        :math:`\lceil\sqrt T\rceil` with the noise off or the paper's calibration."""
        if self.noise_off or self.calibration == "paper":
            return self._paper_K()
        T, m, eta = int(self.T), float(self.bound), self._eta()
        r1 = self._public_region().l1_radius
        best, best_K = math.inf, 1
        for K in range(1, min(self._paper_K(), 64) + 1):
            b = self._oracle_regret(K, eta) + frank_wolfe_bias(T, K, r1, m)
            if b < best:
                best, best_K = b, K
        return best_K

    def _guarantee(self) -> RegretGuarantee:
        r"""Theorem 4 of Sadeghi and Fazel, explicit (module
        :mod:`~dpsubmod.online.maximization.fw_bounds`)."""
        K = self._K()
        return self._fw_guarantee(self._oracle_regret(K, self._eta()), K,
                                  "Sadeghi and Fazel (2021), Theorem 4 (explicit reading: "
                                  "Lemma 7 with entropic FTRL and its tree noise)")

    def _resolve(self) -> dict[str, Any]:
        n, T = int(self.n), int(self.T)
        K = self._K()
        m = float(self.bound)
        eta = self._eta()
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
            backend=self.backend,
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
