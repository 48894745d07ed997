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

* :class:`DPMetaFrankWolfe` (Sadeghi and Fazel 2021, "DPMFW"; in
  :mod:`~dpsubmod.online.maximization.dp_meta_frank_wolfe`): the oracles are private FTRL with
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

import functools
import math
from typing import Any

import numpy as np

from ..._guarantee import RegretGuarantee
from ..._rng import RNGLike
from ..._validation import check_real, is_noise_off
from ...errors import ValidationError
from ...polytopes.projections import euclidean_projection
from ...polytopes.region import as_region
from ...privacy.plan import PrivacyPlan
from ...privacy.split import even_share
from ...privacy.tree_aggregator import TreeAggregator
from .._plans import check_backend, learner_backend, run_plan, tree_backend
from ..oco.ftrl import PrivateFTRL
from ..oco.pftal import PFTAL
from ..tags import NOISE_BACKENDS, LearnerTags
from .frank_wolfe import NEIGHBOURING, FrankWolfeLearner
from .fw_bounds import (
    best_pftal_copies,
    frank_wolfe_bias,
    ftrl_oracle_regret,
    noise_sensitivity,
    ogd_oracle_regret,
    pftal_copies_bound,
)

#: The node noises of the PFTAL copies (Gaussian would need a delta and a bound of its own).
_COPY_NOISES = ("l2laplace", "laplace")


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

    _tags = LearnerTags(private=False, feedback="full", problem="maximization",
                        assumption="oblivious", backends=())

    def __init__(self, n: int, T: int, constraint: object, *, K: int | None = None,
                 oracle: str = "ogd", step: float | None = None, eta: float | None = None,
                 bound: float = 1.0, gradient: str = "auto", n_samples: int = 200,
                 rng: RNGLike = None):
        caller = "MetaFrankWolfe"
        super().__init__(n, T, constraint, K=K, bound=bound, gradient=gradient,
                         n_samples=n_samples, rng=rng, caller=caller)
        self.oracle = oracle
        self.step = step
        self.eta = eta
        if oracle not in ("ogd", "ftrl"):
            raise ValidationError(
                f"The 'oracle' parameter of {caller} must be 'ogd' or 'ftrl'; got {oracle!r}."
            )
        for name, v in (("step", step), ("eta", eta)):
            if v is not None:
                check_real(v, name, low=0.0, low_open=True, caller=caller)
        self._finish_construction(MetaFrankWolfe)

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

    def _guarantee(self) -> RegretGuarantee:
        r"""Lemma 7 of Chen, Hassani and Karbasi with the oracles' regret (online gradient
        ascent at its tuned step, or entropic FTRL)."""
        n, T, m, K = int(self.n), int(self.T), float(self.bound), self._K()
        reg = self._public_region()
        if self.oracle == "ogd" and self.step is None:
            r = ogd_oracle_regret(n, T, reg.diameter, m)
        elif self.oracle == "ogd":
            mu, G = float(self.step), math.sqrt(n) * m
            r = reg.diameter ** 2 / (2.0 * mu) + mu * G * G * T / 2.0
        else:
            eta = float(self.eta) if self.eta is not None else \
                math.sqrt(max(math.log(n), 1.0) / T) / m
            r = ftrl_oracle_regret(n, T, reg.l1_radius, m, eta)
        oracles = "online gradient ascent" if self.oracle == "ogd" else "entropic FTRL"
        return self._fw_guarantee(r, K, "Chen, Hassani and Karbasi (2018), Lemma 7 with "
                                        f"{oracles} oracles")

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
    K : int or "paper", optional
        Number of PFTAL copies. Default (private run): with ``H``, the minimiser of the
        explicit Theorem 9 bound
        (:func:`~dpsubmod.online.maximization.fw_bounds.best_pftal_copies`: more copies shrink
        the Frank-Wolfe bias and split the budget); when that
        bound is vacuous at every ``(K, H)``, and with the noise off or ``K="paper"``:
        :math:`\max(1, \mathrm{round}(T^{1/4}/\ln^{1.25}T))` (Algorithm 4; the proof's end uses
        :math:`(T/\ln^{2.5}T)^{1/4}`, also :math:`\tilde O(T^{3/4})`).
    H : float, optional
        Strong-convexity parameter of the regularised losses (not fixed by the paper, which uses
        PFTAL as a black box). Default: the bound minimiser above; otherwise (noise off, or
        the private bound vacuous at every ``(K, H)``) :math:`(G/R_2)\sqrt{\ln T/T}` with
        :math:`G = \sqrt n\,m_F`, :math:`R_2 = \sqrt R` (``R`` the l1 radius of ``P``),
        FTAL's balance of its regret against the regulariser's bias. The balance that also
        counts the noise, :math:`a = n\ln^{2.5}T/(\varepsilon/K)` in place of
        :math:`\ln T`, kept the copies near 0 and played worse than a random set on the Uber
        stream (0.17 per round against 0.25 at epsilon = 1, ``T = 2000``; this default 0.30).
    budget : Budget or None, default=None
        Charged the whole run's guarantee (``K`` tree-aggregation events of
        :math:`\varepsilon/K`) at construction, before anything is released, again by
        :meth:`reset` after play and by every clone. Not allowed with ``epsilon=math.inf``.
    noise : {"l2laplace", "laplace"}, default="l2laplace"
        The copies' node noise: l2-Laplace calibrated to the l2 sensitivity
        :math:`\sqrt n\,m_F` (the noise Theorem 9 is stated for), or coordinate-wise Laplace
        calibrated to the l1 sensitivity :math:`n m_F`, which the secure backends draw exactly
        on a grid; :attr:`guarantee` accounts for the noise used.
    backend : {"numpy", "secure", "opendp"}, NoiseBackend or None, default=None
        Noise backend of the copies' counters. l2-Laplace has no exact sampler on a grid, so
        the secure backends need ``noise="laplace"``.
        ``None`` (the default): ``"secure"`` without ``rng`` (``"numpy"`` for l2-Laplace
        noise), a seeded ``"numpy"`` simulation with one
        (:func:`~dpsubmod.privacy.backends.choose_backend`).
    """

    _tags = LearnerTags(private=True, feedback="full", problem="maximization",
                        assumption="oblivious", backends=NOISE_BACKENDS)

    def __init__(self, n: int, T: int, constraint: object, *, epsilon: float,
                 K: int | None = None, H: float | None = None, bound: float = 1.0,
                 gradient: str = "auto", n_samples: int = 200, rng: RNGLike = None,
                 budget: Any = None, backend: Any = None, noise: str = "l2laplace"):
        caller = "PFTALMetaFrankWolfe"
        super().__init__(n, T, constraint, K=K, bound=bound, gradient=gradient,
                         n_samples=n_samples, rng=rng, caller=caller)
        self.epsilon = epsilon
        self.H = H
        self.noise = noise
        self.budget = budget
        self.backend = learner_backend(self, backend, rng, caller, noise)
        if not isinstance(noise, str) or noise not in _COPY_NOISES:
            raise ValidationError(
                f"The 'noise' parameter of {caller} must be one of {list(_COPY_NOISES)}; got "
                f"{noise!r} (for Gaussian noise use DPMetaFrankWolfe(noise='gaussian')).")
        check_backend(backend, caller, noise)
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
        try:  # a calibration the counters refuse fails here, not at play, by our names
            self._privacy_plan()
        except ValidationError as err:
            if "node-noise scale" not in str(err):
                raise
            raise ValidationError(
                f"The 'epsilon' parameter of {caller} is {epsilon!r}: split over the oracles, "
                f"with gradients bounded by {self.bound!r}, it gives tree counters whose "
                "node-noise scale is outside floating-point range. Pass a larger epsilon."
            ) from None
        self._finish_construction(PFTALMetaFrankWolfe)

    @property
    def noise_off(self) -> bool:
        """Whether the noise is off (``epsilon=inf``): not private."""
        return is_noise_off(self.epsilon)

    def _paper_K(self) -> int:
        r"""Algorithm 4's :math:`\max(1, \mathrm{round}(T^{1/4}/\ln^{1.25}T))`."""
        T = int(self.T)
        lt = max(math.log(T), 1.0)
        return max(1, round(T ** 0.25 / lt ** 1.25))

    def _tuned(self) -> tuple[int, float] | None:
        """``(K, H)`` minimising the bound of :attr:`guarantee` (``K`` fixed when given), or
        ``None`` when the bound is vacuous at every ``(K, H)``: its ``H`` then freezes the
        copies near 0, the worst point to play, and Algorithm 4's ``K`` with the previous
        balance of ``H`` is kept."""
        reg = self._public_region()
        n, T, m = int(self.n), int(self.T), float(self.bound)
        fixed = None if self.K is None else self._K()
        eps = math.inf if self.noise_off else float(self.epsilon)
        K, H = best_pftal_copies(n, T, reg.l1_radius, reg.diameter, m, eps, K=fixed,
                                 k_max=max(self._paper_K(), 64), noise=self.noise)
        bound = pftal_copies_bound(n, T, reg.l1_radius, reg.diameter, m, K, H, eps,
                                   self.noise)
        if not bound < (1.0 - 1.0 / math.e) * T * reg.l1_radius * m:  # also NaN or inf
            return None
        return K, H

    def _default_K(self) -> int:
        r"""With the noise on, the ``K`` minimising the bound (Theorem 9's trade-off between the
        Frank-Wolfe bias and the budget split over ``K`` copies); Algorithm 4's with it off."""
        tuned = None if self.noise_off else self._tuned()
        return self._paper_K() if tuned is None else tuned[0]

    def _guarantee(self) -> RegretGuarantee:
        r"""Theorem 9 of Perez-Salazar and Cummings, explicit (module
        :mod:`~dpsubmod.online.maximization.fw_bounds`)."""
        p = self.resolved_params
        reg = self._public_region()
        eps = math.inf if self.noise_off else float(self.epsilon)
        bound = pftal_copies_bound(p["n"], p["T"], reg.l1_radius, reg.diameter, p["bound"],
                                   p["K"], p["H"], eps, self.noise)
        r_oracles = bound - frank_wolfe_bias(p["T"], p["K"], reg.l1_radius, p["bound"])
        return self._fw_guarantee(r_oracles, p["K"],
                                  "Perez-Salazar and Cummings (2021), Theorem 9 (explicit "
                                  "reading: Lemma 7 with PFTAL, Theorem 5 of Smith and "
                                  "Thakurta)")

    def _privacy_plan(self) -> PrivacyPlan | None:
        """``K`` tree-aggregation events of ``epsilon / K`` (basic composition); ``None`` when
        the noise is off."""
        if self.noise_off:
            return None

        def build() -> PrivacyPlan:
            # one copy's counter, from the values the constructor checked (built on a seed of
            # its own: nothing is drawn); the K copies' counters are alike
            K, n = self._K(), int(self.n)
            counter = TreeAggregator._from_checked(
                int(self.T), n, noise=self.noise,
                sensitivity=noise_sensitivity(n, float(self.bound), self.noise),
                epsilon=even_share(float(self.epsilon), K), delta=0.0,
                **tree_backend(self.backend, 0))
            return run_plan("PFTALMetaFrankWolfe", [counter.privacy_map()] * K,
                            neighbouring=NEIGHBOURING, backend=self.backend, rng=self.rng)

        return self._memo_plan(build)

    def _resolve(self) -> dict[str, Any]:
        n, T = int(self.n), int(self.T)
        K = self._K()
        m = float(self.bound)
        G = math.sqrt(n) * m
        R2 = math.sqrt(max(self._region.l1_radius, 1e-12))
        lt = max(math.log(T), 1.0)
        tuned = None if self.noise_off or self.H is not None else self._tuned()
        if self.H is not None:
            H = float(self.H)
        elif tuned is not None:
            H = best_pftal_copies(n, T, self._region.l1_radius, self._region.diameter, m,
                                  float(self.epsilon), K=K, noise=self.noise)[1]
        else:
            # FTAL's own balance of its regret against the regulariser's bias, without the
            # noise term: where the private bound is vacuous at every (K, H), its minimiser (and
            # the balance with the noise term) is so large that the copies stay near 0, worse
            # than a random set; a smaller H follows the noisy leader, whose signal grows like
            # t while the tree noise grows like log^1.5 t (docs/results.md: 0.17 -> 0.30 per
            # round on the Uber stream at epsilon = 1, a random 3-set 0.25).
            H = (G / R2) * math.sqrt(lt / T)
        return {"n": n, "T": T, "K": K, "H": H, "bound": m, "region": self._region.kind,
                "sensitivity": noise_sensitivity(n, m, self.noise), "noise": self.noise,
                "noise_off": self.noise_off,
                "copy_epsilon": math.inf if self.noise_off else even_share(float(self.epsilon), K)}

    def _build_oracles(self) -> None:
        p = self._params
        # a partial, not a closure: the learner pickles mid-run
        project = functools.partial(euclidean_projection, self._region)
        rngs = self._oracle_rng.spawn(p["K"])
        self._copies = []
        for r in rngs:
            oco = PFTAL(int(self.n), int(self.T), H=p["H"],
                        epsilon=math.inf if self.noise_off else p["copy_epsilon"],
                        sensitivity=None if self.noise_off else p["sensitivity"],
                        project=project, x1=np.zeros(int(self.n)), noise=self.noise, rng=r,
                        budget=self._allowance, backend=self.backend)
            oco.reset()
            self._copies.append(oco)

    def _points(self) -> tuple[np.ndarray, list | None]:
        return np.stack([c.point() for c in self._copies]), None

    def _feed(self, G: np.ndarray) -> None:
        H = self._params["H"]
        copies = self._copies
        # The regulariser's gradient H v is the same for neighbours (v is released). Each copy
        # counts its gradient (its own noise, in copy order, as before; the protocol stops the
        # learner at the copies' horizon T); the K targets are then projected in one call, row
        # by row the same projection as each copy's own.
        Y = np.stack([oco._target(-G[k] + H * oco._x) for k, oco in enumerate(copies)])
        X = euclidean_projection(self._region, Y)
        for oco, x in zip(copies, X):
            oco._land(x)
