r"""Private Follow the Regularized Leader with the entropic regularizer over matroid and knapsack
polytopes (Agarwal and Singh 2017, Algorithm 1).

Online linear optimization: at round ``t`` play :math:`x_t \in P`, then a loss vector
:math:`\ell_t` is revealed and :math:`\langle \ell_t, x_t\rangle` is paid. Private FTRL plays

.. math::

    x_t = \arg\min_{x \in P}\; \eta\langle x, \tilde L_{t-1}\rangle + \sum_i x_i \ln x_i,

where :math:`\tilde L_{t-1}` is a noisy prefix sum of the losses released by tree aggregation
(the binary mechanism, :class:`~dpsubmod.privacy.tree_aggregator.TreeAggregator`). The argmin is the
generalized-KL projection of :math:`y = \exp(-1 - \eta\tilde L_{t-1})` onto ``P``
(:func:`~dpsubmod.polytopes.kl_projection`), since :math:`\sum_i x_i\ln(x_i/y_i) - x_i` equals
the objective up to a constant. Only the tree releases touch the data; the points are
post-processing.

The projections (closed forms for the box, uniform and partition matroids and knapsacks,
Frank-Wolfe with away steps for other matroids) are in :mod:`dpsubmod.polytopes.projections`.

Privacy of :class:`PrivateFTRL`: neighbouring loss sequences differ in one round's loss vector.
Losses are clipped coordinatewise to ``loss_range = (lo, hi)`` (a no-op on valid inputs), so one
round's vector moves by at most :math:`n(hi - lo)` in l1 norm and :math:`\sqrt n(hi - lo)` in
l2 norm; the tree is calibrated to that sensitivity with :math:`\lfloor\log_2 T\rfloor + 1`
levels (the leaf lies in at most that many released nodes). ``copies`` independent optimizers
(the ``K`` oracles of Meta-Frank-Wolfe) share one tree of dimension ``copies * n``: the noise is
exactly that of one tree per copy, and the report composes the ``copies`` trees (Laplace: pure
per tree, composed by ``composition`` at ``delta``; Gaussian: zCDP, the rhos add).

References
----------
N. Agarwal and K. Singh, "The price of differential privacy for online learning", ICML 2017,
Algorithm 1 and Theorem 3.1. T.-H. H. Chan, E. Shi and D. Song, "Private and continual release
of statistics", ACM TISSEC 2011. O. Sadeghi and M. Fazel, "Differentially private monotone
submodular maximization under matroid and knapsack constraints", AISTATS 2021 (supplement,
Section "DPMFW").
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from ..._rng import RNGLike, as_generator
from ..._validation import check_finite, check_int, check_real, is_noise_off
from ...errors import GroundSetMismatchError, ParameterTypeError, StreamLengthError, ValidationError
from ...polytopes.projections import kl_projection
from ...polytopes.region import Region, as_region
from ...privacy._inputs import MAX_NOISE_SCALE
from ...privacy.composition import check_composition, compose
from ...privacy.continual import tree_levels
from ...privacy.plan import PrivacyPlan
from ...privacy.split import even_share, split_budget
from ...privacy.tree_aggregator import TreeAggregator
from ...privacy.zcdp import rho_for_target
from .._plans import check_backend, check_spend, learner_backend, run_plan, tree_backend, tree_event
from ..protocol import OnlineBase
from ..tags import NOISE_BACKENDS, LearnerTags

#: Node-noise families of :class:`PrivateFTRL`.
FTRL_NOISES = ("laplace", "gaussian")




def check_ftrl_privacy(epsilon: object, delta: object, noise: object, caller: str) -> None:
    """Validate the privacy arguments of a tree-aggregated FTRL learner (or of a learner built
    on K of them): epsilon > 0 or ``math.inf`` (noise off), delta in [0, 1), a known noise,
    and delta > 0 for Gaussian noise."""
    if not is_noise_off(epsilon):
        check_real(epsilon, "epsilon", low=0.0, low_open=True, caller=caller,
                   fix="Pass a positive privacy budget, or epsilon=math.inf (not private).")
    check_real(delta, "delta", low=0.0, high=1.0, high_open=True, caller=caller)
    if noise not in FTRL_NOISES:
        raise ValidationError(
            f"The 'noise' parameter of {caller} must be one of {FTRL_NOISES}; got {noise!r}."
        )
    if noise == "gaussian" and not is_noise_off(epsilon) and float(delta) == 0.0:
        raise ValidationError(
            f"noise='gaussian' in {caller} gives (epsilon, delta)-DP and needs delta > 0; "
            "pass delta (e.g. 1e-6) or use noise='laplace'."
        )


def ftrl_plan(label: str, *, T: int, n: int, copies: int, epsilon: float, delta: float,
              noise: str, width: float, composition: str, tree_epsilon: float | None,
              neighbouring: str, rng: Any = None,
              backend: Any = None) -> tuple[PrivacyPlan, dict[str, Any]]:
    """The whole-run plan of ``copies`` tree-aggregated FTRL optimizers, and its calibration.

    Laplace trees: ``copies`` pure events of ``tree_epsilon`` each (by default the split of
    ``(epsilon, delta)`` over the copies, :func:`~dpsubmod.privacy.split.split_budget`),
    composed by the rule of the split. Gaussian trees: the copies share
    ``rho = rho_for_target(epsilon, delta)`` (zCDP). Only public parameters enter. One copy's
    counter is calibrated on ``backend`` here, so that whatever it refuses (a noise scale outside
    float range, an OpenDP map above the charge) is refused before anything is charged.
    """
    K, levels = int(copies), tree_levels(int(T))
    p: dict[str, Any] = {"levels": levels}
    note = (f"binary mechanism per copy, T={int(T)}, levels={levels}, {noise} node noise, leaf "
            f"{'l1' if noise == 'laplace' else 'l2'} sensitivity "
            f"{(n if noise == 'laplace' else math.sqrt(n)) * width:g}")
    if noise == "laplace":
        if tree_epsilon is not None:
            e0 = float(tree_epsilon)
        else:
            split = split_budget(float(epsilon), float(delta), K, composition=composition,
                                 caller=label)
            e0, rule, plan_delta = split.epsilon_step, split.composition, split.delta
        p["tree_epsilon"] = e0
        # a subnormal epsilon split over the copies can round to 0: refused below by name
        p["scale"] = levels * n * width / e0 if e0 > 0.0 else math.inf
    else:
        rho = rho_for_target(float(epsilon), float(delta))
        p["rho"] = rho
        share = even_share(rho, K)
        p["tree_rho"] = share
        p["scale"] = math.sqrt(n) * width * math.sqrt(levels / (2.0 * share)) \
            if share > 0.0 else math.inf
        rule, plan_delta = "zcdp", float(delta)
    scale = p["scale"]
    # The counter refuses such a scale too, but by its own name; the user passed epsilon here.
    if not (0.0 < scale <= MAX_NOISE_SCALE and 1.0 / scale > 0.0):
        raise ValidationError(
            f"The 'epsilon' parameter of {label} is {epsilon!r}: with {K} counter(s) over "
            f"{int(T)} rounds and gains of width {width!r}, the node-noise scale is {scale!r}, "
            "outside floating-point range. Pass a larger epsilon (or rescale the gains)."
        )
    # One copy's counter, calibrated here and never fed: the plan is K uses of its map. The run
    # draws the K copies' node noise from one counter of dimension K n, each copy's block
    # calibrated to one copy's leaf sensitivity (see PrivateFTRL._reset).
    if noise == "laplace":
        copy = tree_event(int(T), n, noise="laplace", sensitivity=n * width, epsilon=e0,
                          backend=backend)
    else:
        copy = tree_event(int(T), n, noise="gaussian", sensitivity=math.sqrt(n) * width,
                          rho=share, backend=backend)
    # The note names the backend (and engine) of the counter that draws. No exact noise law:
    # the joint counter's node noise matches this counter's only up to its own rounding, and
    # the plan composes by a rule that does not read one.
    events = [dataclasses.replace(copy._times(K), note=f"{note}; backend={copy.backend}",
                                  law=None)]
    if noise == "laplace" and tree_epsilon is not None:
        dlt = float(delta)
        rule = compose(events, dlt if dlt > 0 else None, composition if dlt > 0 else "basic",
                       caller=label)[2]
        plan_delta = dlt if dlt > 0 else None
    plan = run_plan(label, events, delta=plan_delta, composition=rule,
                    neighbouring=neighbouring, backend=backend, rng=rng)
    return plan, p


class PrivateFTRL(OnlineBase):
    r"""Private FTRL with the entropic regularizer and tree-aggregated noisy loss sums
    (Agarwal and Singh 2017, Algorithm 1), for ``copies`` independent online linear optimizers
    over one region.

    Use: :meth:`predict` returns the points :math:`x_t` (shape ``(copies, n)``), then
    :meth:`update` receives the loss vectors :math:`\ell_t` (same shape; clipped coordinatewise
    to ``loss_range``). Points are released; losses never are.

    Guarantee: :math:`(\varepsilon, \delta)`-DP (``delta = 0`` with Laplace noise: pure) for the
    sequence of points, neighbouring loss sequences differing in one round (all ``copies`` loss
    vectors of that round may change, each within ``loss_range``). Each copy's tree is calibrated
    to the leaf sensitivity :math:`n(hi - lo)` (l1, Laplace) or :math:`\sqrt n(hi - lo)` (l2,
    Gaussian) with :math:`\lfloor\log_2 T\rfloor + 1` levels. Laplace: per-copy
    :math:`\varepsilon_0` from :func:`~dpsubmod.privacy.split.split_budget` over the
    copies (basic at ``delta = 0``, else the rule of ``composition``); Gaussian: zCDP, the copies
    share :math:`\rho = ` :func:`~dpsubmod.privacy.zcdp.rho_for_target` ``(epsilon, delta)``.
    The whole run's guarantee is stated before the first update (:attr:`privacy`), and a
    learner built with ``budget=`` is charged it at construction.
    Regret (Theorem 3.1 of Agarwal and Singh, oblivious losses):
    :math:`O(R\,G\sqrt{T\ln n})` plus the noise term
    :math:`E[\max_P\langle Z, x\rangle - \min_P\langle Z, x\rangle]`.

    Parameters
    ----------
    region : Region, int, Matroid, Knapsack or polytope
        The feasible set ``P`` (see :func:`~dpsubmod.polytopes.as_region`).
    T : int
        Horizon (the tree's size).
    n : int, optional
        Ground-set size (needed with an int ``k``).
    copies : int, default=1
        Number of independent optimizers.
    epsilon : float
        Privacy parameter; ``math.inf`` switches the noise off (exact sums; **not private**).
    delta : float, default=0.0
        Total delta (needed by Gaussian noise; with Laplace noise it lets the copies compose
        better than basic composition).
    noise : {"laplace", "gaussian"}, default="laplace"
    eta : float, optional
        Learning rate; default :math:`\sqrt{\ln n/T}/G` with :math:`G = \max(|lo|, |hi|)`.
    loss_range : (float, float), default=(-1.0, 1.0)
        Coordinatewise range of the losses (clipped into it).
    composition : {"auto", "basic", "advanced", "kov", "zcdp"}, default="auto"
        Composition of the Laplace trees over the copies.
    tree_epsilon : float, optional
        Override of the per-copy Laplace tree epsilon (the statement composes it as given);
        used to reproduce a paper's calibration. Refused at construction
        (:class:`~dpsubmod.errors.ValidationError`) when the copies compose to more than
        ``epsilon``.
    rng : int, Generator, SeedSequence or None, default=None
    backend : {"numpy", "secure", "opendp"}, NoiseBackend or None, default=None
        Noise backend of the trees (:func:`~dpsubmod.privacy.backends.resolve_backend`):
        ``"secure"`` draws exact discrete node noise on a grid (through OpenDP when it is
        installed) with the loss vectors summed in integer grid units; ``"opendp"`` requires
        OpenDP. Grid backends ignore ``rng``.
        ``None`` (the default): ``"secure"`` without ``rng``, a seeded ``"numpy"`` simulation
        with one (:func:`~dpsubmod.privacy.backends.choose_backend`).
    budget : Budget or None, default=None
        Charged the whole run's guarantee at construction, before anything is released
        (:class:`~dpsubmod.errors.BudgetExceededError` when it does not fit; then nothing
        changes), again by :meth:`reset` after play and by every clone. Not allowed with
        ``epsilon=math.inf``.

    Examples
    --------
    >>> import math
    >>> ftrl = PrivateFTRL(1, T=100, n=3, epsilon=math.inf, loss_range=(-1.0, 0.0))
    >>> for _ in range(100):
    ...     _ = ftrl.predict()
    ...     ftrl.update([[-1.0, 0.0, 0.0]])
    >>> int(ftrl.predict().argmax())
    0
    """

    _tags = LearnerTags(private=True, feedback="full", problem="linear",
                        assumption="oblivious", backends=NOISE_BACKENDS)

    def __init__(self, region: object, T: int, *, n: int | None = None, copies: int = 1,
                 epsilon: float, delta: float = 0.0, noise: str = "laplace",
                 eta: float | None = None, loss_range: tuple[float, float] = (-1.0, 1.0),
                 composition: str = "auto", tree_epsilon: float | None = None,
                 rng: RNGLike = None, budget: Any = None, backend: Any = None):
        caller = "PrivateFTRL"
        reg = region if isinstance(region, Region) else as_region(region, n)
        check_int(T, "T", low=1, caller=caller)
        check_int(copies, "copies", low=1, caller=caller)
        check_ftrl_privacy(epsilon, delta, noise, caller)
        if eta is not None:
            check_real(eta, "eta", low=0.0, low_open=True, caller=caller)
        lr = _check_range(loss_range, caller)
        if tree_epsilon is not None:
            check_real(tree_epsilon, "tree_epsilon", low=0.0, low_open=True, caller=caller)
            if noise != "laplace":
                raise ValidationError(f"'tree_epsilon' of {caller} applies to noise='laplace'.")
        check_composition(composition, caller)
        check_backend(backend, caller)
        self.region = region
        self.T = T
        self.n = reg.n if n is None else n
        self.copies = copies
        self.epsilon = epsilon
        self.delta = delta
        self.noise = noise
        self.eta = eta
        self.loss_range = tuple(lr)
        self.composition = composition
        self.tree_epsilon = tree_epsilon
        self.rng = rng
        self.budget = budget
        self.backend = learner_backend(self, backend, rng, caller, noise)
        self._n_region = reg.n
        plan = self._privacy_plan()
        if plan is not None and tree_epsilon is not None:
            check_spend(caller, plan.report().epsilon, float(epsilon), parameter="tree_epsilon",
                        fix=f"{int(copies)} trees of tree_epsilon={float(tree_epsilon):.6g} "
                            f"compose to more; pass a smaller tree_epsilon, or omit it.")
        self._finish_construction(PrivateFTRL)

    # -- calibration --------------------------------------------------------------------------
    @property
    def noise_off(self) -> bool:
        """Whether the sums are exact (``epsilon=inf``): not private."""
        return is_noise_off(self.epsilon)

    def _calibration(self) -> tuple[PrivacyPlan, dict[str, Any]]:
        lo, hi = self.loss_range
        return ftrl_plan(
            "PrivateFTRL", T=int(self.T), n=self._n_region, copies=int(self.copies),
            epsilon=float(self.epsilon), delta=float(self.delta), noise=self.noise,
            width=float(hi - lo), composition=self.composition, tree_epsilon=self.tree_epsilon,
            neighbouring="loss sequences differing in one round's loss vectors (each clipped "
                         f"to {self.loss_range})", rng=self.rng, backend=self.backend)

    def _privacy_plan(self) -> PrivacyPlan | None:
        """``copies`` tree-aggregation events; ``None`` when the noise is off."""
        if self.noise_off:
            return None
        return self._memo_plan(lambda: self._calibration()[0])

    def _resolve(self) -> dict[str, Any]:
        reg = self._region
        n, T, K = reg.n, int(self.T), int(self.copies)
        lo, hi = self.loss_range
        width = float(hi - lo)
        G = max(abs(lo), abs(hi))
        eta = float(self.eta) if self.eta is not None else \
            math.sqrt(max(math.log(n), 1.0) / T) / max(G, 1e-300)
        p: dict[str, Any] = {"n": n, "T": T, "copies": K, "eta": eta, "levels": tree_levels(T),
                             "l1_sensitivity": n * width, "l2_sensitivity": math.sqrt(n) * width,
                             "noise": self.noise, "noise_off": self.noise_off}
        if not self.noise_off:
            p.update(self._calibration()[1])
        return p

    @property
    def resolved_params(self) -> dict[str, Any]:
        """Every parameter after defaults were resolved (eta, levels, tree epsilon, scale)."""
        self._ensure_state()
        return dict(self._params)

    def _reset(self) -> None:
        reg = self.region if isinstance(self.region, Region) else as_region(self.region, self.n)
        self._region = reg
        self._params = p = self._resolve()
        n, K, T = reg.n, int(self.copies), int(self.T)
        self._t = 0
        self._sum = np.zeros((K, n))
        self._tree = None
        self._allowance = self._run_allowance()
        if not self.noise_off:
            lo, hi = self.loss_range
            width = float(hi - lo)
            gen = as_generator(self.rng)
            # One tree of dimension K n: its node noise is that of K trees of dimension n, each
            # calibrated to one copy's leaf sensitivity (the l1/l2 sensitivity of the joint leaf
            # is K, resp. sqrt(K), times a copy's). The run's allowance is charged the K planned
            # per-copy events instead of the joint tree's single one.
            if self.noise == "laplace":
                self._tree = TreeAggregator(T, K * n, noise="laplace",
                                            sensitivity=K * n * width,
                                            epsilon=K * p["tree_epsilon"],
                                            **tree_backend(self.backend, gen))
            else:
                self._tree = TreeAggregator(T, K * n, noise="gaussian",
                                            sensitivity=math.sqrt(K * n) * width,
                                            rho=p["rho"], **tree_backend(self.backend, gen))
        self._points: np.ndarray | None = None
        self._decomp: list | None = None

    def _ensure_state(self) -> None:
        if not hasattr(self, "_t"):
            self._reset()

    @property
    def t(self) -> int:
        """Loss vectors received so far."""
        self._ensure_state()
        return self._t

    @property
    def prefix(self) -> np.ndarray:
        """The released (noisy) loss sums, shape ``(copies, n)``."""
        self._ensure_state()
        return self._sum.copy()

    # -- protocol -----------------------------------------------------------------------------
    def predict(self) -> np.ndarray:
        """The current points :math:`x_t`, shape ``(copies, n)`` (released)."""
        self._ensure_state()
        if self._points is None:
            logy = -1.0 - self._params["eta"] * self._sum
            X, dec = kl_projection(self._region, logy, return_decomposition=True)
            self._points, self._decomp = X, dec
        return self._points.copy()

    @property
    def decompositions(self) -> list | None:
        """For a general matroid, the convex combinations of independent sets behind the
        current points (one ``(sets, weights)`` per copy); ``None`` otherwise."""
        self.predict()
        return self._decomp

    def update(self, losses: object) -> None:
        """Receive this round's loss vectors (shape ``(copies, n)``, or ``(n,)`` for one copy),
        clipped to ``loss_range``.

        Raises
        ------
        ValidationError
            Non-finite losses or a wrong shape.
        StreamLengthError
            ``T`` rounds were already received.
        """
        self._ensure_state()
        L = check_finite(losses, "losses", caller="PrivateFTRL.update").astype(np.float64)
        K, n = int(self.copies), self._region.n
        if L.ndim == 1 and K == 1:
            L = L[None, :]
        if L.shape != (K, n):
            raise GroundSetMismatchError(
                f"The 'losses' of PrivateFTRL.update must have shape ({K}, {n}); got {L.shape}."
            )
        if self._t >= int(self.T):
            raise StreamLengthError(
                f"PrivateFTRL was built for T={self.T} rounds and has received them all."
            )
        lo, hi = self.loss_range
        self._step(np.clip(L, lo, hi))

    def _step(self, L: np.ndarray) -> None:
        """Trusted update with clipped losses."""
        if self._tree is None:
            self._sum += L
        else:
            if self._t == 0 and self._allowance is not None:
                self._allowance.charge(self._privacy_plan().events)
            self._tree.update(L.ravel())
            self._sum = self._tree.prefix().reshape(L.shape)
        self._t += 1
        self._points = None

    # -- privacy ------------------------------------------------------------------------------
    def report(self, *, neighbouring: str = "") -> Any:
        """The :class:`~dpsubmod.privacy.ledger.PrivacyReport` of the whole run (:attr:`privacy`),
        with ``neighbouring`` in place of the default relation when given; ``None`` when the
        noise is off."""
        rep = self.privacy
        if rep is None or not neighbouring:
            return rep
        return dataclasses.replace(rep, neighbouring=neighbouring)


def _check_range(loss_range: object, caller: str) -> tuple[float, float]:
    try:
        lo, hi = loss_range  # type: ignore[misc]
    except (TypeError, ValueError):
        raise ParameterTypeError(
            f"The 'loss_range' parameter of {caller} must be a pair (lo, hi); got {loss_range!r}."
        ) from None
    lo = check_real(lo, "loss_range[0]", caller=caller)
    hi = check_real(hi, "loss_range[1]", caller=caller)
    if not hi > lo:
        raise ValidationError(
            f"The 'loss_range' of {caller} must satisfy lo < hi; got {loss_range!r}."
        )
    return lo, hi
