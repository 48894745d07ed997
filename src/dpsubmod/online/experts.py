r"""Differentially private online submodular maximization with ``k`` ordered Hedge experts
(Perez-Salazar and Cummings 2021).

Each round ``t`` the learner plays a set :math:`S_t`, :math:`|S_t| \le k`, against a monotone
submodular :math:`f_t : 2^{[n]} \to [0, 1]` with :math:`f_t(\emptyset) = 0`, and is measured by
the :math:`(1 - 1/e)`-regret :math:`(1 - 1/e)\max_{|S| \le k}\sum_t f_t(S) - \sum_t f_t(S_t)`.
Following Streeter and Golovin's online greedy, expert ``i`` (a :class:`~dpsubmod.online.Hedge`
copy over the ground set) learns the best element to add to the choices of experts
``1..i-1``. Privacy comes only from a small Hedge learning rate: every Hedge draw is an
exponential-mechanism draw (see :mod:`dpsubmod.online.hedge`); no noise is added.

Learners (all follow the online protocol of :mod:`dpsubmod.online.protocol` and run under
:func:`~dpsubmod.online.run`):

* :class:`FIDP` (full information, Algorithm 2): every round each expert draws, the set of the
  ``k`` draws is played, and expert ``i`` receives the marginal gains
  :math:`g_t^i(a) = f_t(S_t^{i-1} + a) - f_t(S_t^{i-1})`.
  :math:`\eta = \varepsilon / (k\sqrt{32 T\ln(k/\delta)})`; :math:`(\varepsilon, \delta)`-DP;
  :math:`E[R_T] = O(k^2 \ln n \sqrt{T \ln(k/\delta)}/\varepsilon)` (Theorem 6).
* :class:`BanditDP` (bandit feedback, Algorithm 3): explore with probability :math:`\gamma`
  (play :math:`S_t^{i-1} + a` for uniform ``i`` and ``a`` and feed the observed value to expert
  ``i`` at ``a``), and **resample the experts only right after an exploration**; the set in force
  is replayed in between, so only the :math:`M \sim \mathrm{Bin}(T, \gamma)` post-exploration
  draws touch the data. :math:`\gamma = k((16 n\ln n)^2/T)^{1/3}`,
  :math:`\eta = \varepsilon/(k\sqrt{32\cdot 2\gamma T\ln(k/\delta)})`;
  :math:`(\varepsilon, \delta + \Pr[M > \lfloor 2\gamma T\rfloor])`-DP (Theorem 7 with the exact
  binomial tail); :math:`O(T^{2/3})` regret (Theorem 8). ``cap=True`` stops exploring after
  :math:`\lfloor 2\gamma T\rfloor` explorations, which makes it exactly
  :math:`(\varepsilon, \delta)`-DP.
* :class:`NaiveBanditDP` (Appendix B.1): resample every round, so :math:`\eta` must cover ``T``
  draws; :math:`O(T^{3/4})` regret.
* :class:`PresampledBanditDP` (Appendix B.2): the exploration rounds are fixed in advance
  (data-independently), :math:`\eta = \varepsilon/(k\sqrt{32(M+1)\ln(k/\delta)})`; exactly
  :math:`(\varepsilon, \delta)`-DP, :math:`O(T^{2/3})` regret.

Neighbouring relation: two streams of functions are neighbours when they differ in one round's
function (replaced by any other function). Output: the whole sequence of played sets (in the
bandit algorithms including the exploration sets). Weights, probabilities, observed values and
regrets are not protected outputs: every accessor that returns them says "non-private".

Every feedback value is clipped to ``[0, 1]`` before it reaches a Hedge copy (marginal gains in
full information, observed values in bandit), so the sensitivity-1 assumption and the privacy
guarantee hold even for a function that breaks monotonicity or leaves ``[0, 1]``; the regret
bounds still need the assumptions. In the bandit learners the value observed in an exploitation
round never reaches the learner's state.

``epsilon=math.inf`` switches privacy off: the learning rate (and default exploration rate) become
the non-private tuning of Streeter and Golovin (:math:`\eta = \sqrt{\ln n / T}` in full
information; :math:`\eta = \sqrt{k n\ln n/(\gamma T)}`, :math:`\gamma = k(n\ln n)^{1/3}T^{-1/3}`
with bandit feedback). Such runs are **not private** (``privacy`` is ``None``); see also
:mod:`dpsubmod.online.streeter_golovin`.

Departures from the paper (see ``docs/errata.md``): the bandit failure probability is the exact
binomial tail (the paper's :math:`e^{-8\gamma^2 T}` is not a valid bound, though its final
:math:`e^{-8T^{1/3}}` is); exploration rates above 1 are clipped with a warning (the theoretical
:math:`\gamma` exceeds 1 unless :math:`T \ge k^3 (16 n\ln n)^2`); the privacy statement composes
all draws with the tightest valid rule (``composition="paper"`` reproduces the paper's per-expert
argument); a calibration (the paper's rate, or a given ``eta``) whose draws compose to more than
``epsilon`` is refused at construction; Appendix B.2 is implemented with :math:`O(1)` memory (draw
:math:`M \sim \mathrm{Bin}(T, \gamma)`, then choose the exploration rounds by selection sampling,
which gives the same joint law as ``T`` independent coins); the default exploration rates of
B.1 and B.2, whose constants the paper does not give, are derived in the class docstrings.

Privacy of a whole run is known from the public parameters before round 1: :attr:`privacy` states
it from construction on, and a learner built with ``budget=`` is charged that run at
construction, before anything is released (again by ``reset()`` after play, and by each clone).
Every data-dependent Hedge draw is then made through the run's allowance, so a draw beyond the
plan fails before anything is drawn.

References
----------
O. Perez-Salazar and R. Cummings, "Differentially private online submodular maximization",
AISTATS 2021 (arXiv:2010.12816), Algorithms 2 and 3, Appendix B, Theorems 5-8, Proposition 3.
M. Streeter and D. Golovin, "An online algorithm for maximizing submodular functions", NIPS 2008.
"""

from __future__ import annotations

import math
import warnings
from abc import abstractmethod
from typing import Any

import numpy as np

from .._rng import RNGLike, as_generator
from .._validation import check_int, check_real, is_noise_off
from ..errors import ValidationError
from ..functions.base import SetFunction
from ..privacy.composition import COMPOSITIONS, compose
from ..privacy.events import PrivacyEvent
from ..privacy.plan import PrivacyPlan
from ._plans import check_spend, run_plan
from .comparators import set_values
from .hedge import (
    HEDGE_COMPOSITIONS,
    PAPER_RULE,
    Hedge,
    _backend_sensitivity,
    _check_backend_param,
    _paper_epsilon,
    best_composition,
    hedge_draw_epsilon,
    hedge_eta,
    tight_hedge_eta,
)
from .protocol import Learner

__all__ = [
    "FIDP",
    "BanditDP",
    "NaiveBanditDP",
    "PresampledBanditDP",
    "CALIBRATIONS",
    "bandit_failure_probability",
    "expert_regrets",
]

#: Learning-rate calibrations: ``"paper"`` (the paper's formulas) or ``"tight"`` (the largest
#: rate whose composed guarantee, under the learner's ``composition``, meets the budget).
CALIBRATIONS = ("paper", "tight")

#: Largest number of ``k``-tuples :meth:`expected_value` enumerates (``n**k``).
EXPECTED_VALUE_MAX_TUPLES = 1024

_NEIGHBOURING = ("function streams differing in one round's function (replaced by any other "
                 "function; feedback clipped to [0, 1])")


def _clip01(values: np.ndarray) -> np.ndarray:
    """Feedback enters the experts only through this clip (sensitivity 1 for any input)."""
    return np.clip(values, 0.0, 1.0)


def bandit_failure_probability(T: int, gamma: float) -> float:
    r"""Exact probability that Algorithm 3 explores more than its budget:
    :math:`\Pr[\mathrm{Bin}(T, \gamma) > \lfloor 2\gamma T \rfloor]` (0 when
    :math:`2\gamma T \ge T`).

    This replaces the paper's :math:`e^{-8\gamma^2 T}`, which is not a valid bound (Hoeffding
    gives :math:`e^{-2\gamma^2 T}`); computed with ``scipy.stats.binom.sf``.

    >>> bandit_failure_probability(100, 0.5)
    0.0
    >>> round(bandit_failure_probability(1000, 0.1), 12) < 1e-12
    True
    """
    from scipy.stats import binom

    T = check_int(T, "T", low=1, caller="bandit_failure_probability")
    g = check_real(gamma, "gamma", low=0.0, high=1.0, caller="bandit_failure_probability")
    if 2.0 * g * T >= T:
        return 0.0
    return float(binom.sf(math.floor(2.0 * g * T), T, g))


def expert_regrets(cumulative_gains: np.ndarray, realized: np.ndarray) -> np.ndarray:
    r"""Realised regrets :math:`r_i = \max_a \sum_t g_t^i(a) - \sum_t g_t^i(a_t^i)` of the experts
    from their cumulative gain matrix (``k x n``) and realised gains (``k``). Non-private.

    Proposition 3 (corrected): :math:`(1 - 1/e)\,\mathrm{OPT} - \sum_t f_t(S_t) \le
    \sum_i \max(r_i, 0)` on every realised run.
    """
    G = np.asarray(cumulative_gains, dtype=float)
    return G.max(axis=1) - np.asarray(realized, dtype=float)


def _resolve_gamma(gamma: float | None, default: float, caller: str, what: str, *,
                   warn: bool = True) -> float:
    g = default if gamma is None else float(gamma)
    if g > 1.0 and not warn:
        return 1.0
    if g > 1.0:
        source = f"the default {what}" if gamma is None else "the given gamma"
        warnings.warn(
            f"{caller}: {source} is {g:.4g} > 1, which is not a probability; clipped to 1 "
            "(every round explores, so the regret is linear). The theorem's rate needs a larger "
            "T, or pass a smaller gamma.",
            RuntimeWarning, stacklevel=5,
        )
        g = 1.0
    return g


def _tuples(n: int, k: int) -> np.ndarray:
    """All ``n**k`` tuples of ``range(n)``, shape ``(n**k, k)`` (first coordinate slowest)."""
    return np.indices((n,) * k).reshape(k, -1).T


def _masks_of(tuples: np.ndarray, n: int) -> np.ndarray:
    m = np.zeros((tuples.shape[0], n), dtype=bool)
    if tuples.size:
        m[np.arange(tuples.shape[0])[:, None], tuples] = True
    return m


def _weighted_values(f: SetFunction, masks: np.ndarray, weights: np.ndarray) -> float:
    """``sum_j weights_j f(masks_j)``, each distinct set evaluated once (uncounted)."""
    if masks.shape[0] == 0:
        return 0.0
    n = masks.shape[1]
    if n <= 62:
        codes = masks @ (np.int64(1) << np.arange(n, dtype=np.int64))
    else:
        packed = np.ascontiguousarray(np.packbits(masks, axis=1))
        codes = packed.view(np.dtype((np.void, packed.shape[1]))).ravel()
    _, first, inverse = np.unique(codes, return_index=True, return_inverse=True)
    w = np.bincount(inverse.ravel(), weights=weights, minlength=first.size)
    return float(w @ set_values(f, masks[first]))


class _HedgeExperts(Learner):
    """Shared machinery: calibration, the Hedge bank, the privacy plan, diagnostics."""

    sense = "max"
    _draws_label = "T - 1"

    # -- parameters ---------------------------------------------------------------------------
    def _check_common_params(self, caller: str) -> None:
        self._check_common(self.n, self.T, caller)
        check_int(self.k, "k", low=1, high=int(self.n), caller=caller,
                  fix="k is the cardinality budget: 1 <= k <= n.")
        if not is_noise_off(self.epsilon):
            check_real(self.epsilon, "epsilon", low=0.0, low_open=True, caller=caller,
                       fix="Pass a positive privacy budget such as epsilon=1.0, or "
                           "epsilon=math.inf for the non-private algorithm.")
            if self.delta is None:
                raise ValidationError(
                    f"{caller} is (epsilon, delta)-DP by advanced composition over its Hedge "
                    "draws and needs 'delta' in (0, 1); pass e.g. delta=1e-6."
                )
            check_real(self.delta, "delta", low=0.0, high=1.0, low_open=True, high_open=True,
                       caller=caller, fix="Advanced composition needs delta > 0 (e.g. 1e-6).")
        elif self.delta is not None:
            check_real(self.delta, "delta", low=0.0, high=1.0, high_open=True, caller=caller)
        if self.eta is not None:
            check_real(self.eta, "eta", low=0.0, low_open=True, caller=caller)
        if self.calibration not in CALIBRATIONS:
            raise ValidationError(
                f"The 'calibration' parameter of {caller} must be one of {CALIBRATIONS}; got "
                f"{self.calibration!r}."
            )
        if self.composition not in HEDGE_COMPOSITIONS:
            raise ValidationError(
                f"The 'composition' parameter of {caller} must be one of {HEDGE_COMPOSITIONS}; "
                f"got {self.composition!r}."
            )
        _check_backend_param(self.backend, caller)

    def _check_spend(self) -> None:
        """Refuse, at construction, a rate whose whole run spends more than ``epsilon``."""
        plan = self._privacy_plan()
        if plan is None:
            return
        spent, requested = plan.report().epsilon, float(self.epsilon)
        if spent <= requested * (1.0 + 1e-9):
            return
        name = type(self).__name__
        if self.eta is not None:
            best = tight_hedge_eta(requested, float(self.delta), max(1, self._planned_draws()),
                                   experts=int(self.k), composition=self.composition,
                                   backend=self.backend)
            check_spend(name, spent, requested, parameter="eta",
                        fix=f"eta={float(self.eta):.6g} makes each Hedge draw "
                            f"{hedge_draw_epsilon(self.eta, backend=self.backend):.6g}-DP; pass "
                            f"eta <= {best:.6g} (the largest rate within epsilon under "
                            f"composition={self.composition!r}), or omit eta.")
        check_spend(name, spent, requested, parameter="calibration",
                    fix="the paper's rate (Proposition 2) stays within epsilon only when "
                        "epsilon e^(2 eta) <= 4 ln(k / delta); use calibration='tight', which "
                        "solves for the largest rate within epsilon.")

    @property
    def noise_off(self) -> bool:
        """Whether privacy is switched off (``epsilon=inf``): the run is then not private."""
        return is_noise_off(self.epsilon)

    def _private_eta(self, draws_real: float, draws_int: int) -> float:
        eps, dlt, k = float(self.epsilon), float(self.delta), int(self.k)
        if self.calibration == "paper":
            return hedge_eta(eps, dlt, draws_real, experts=k)
        return tight_hedge_eta(eps, dlt, max(1, draws_int), experts=k,
                               composition=self.composition, backend=self.backend)

    def _statement(self, e0: float, draws: int) -> tuple[float, float, str, bool]:
        """``(epsilon, delta, rule, composed)`` of ``k * draws`` draws of ``e0`` each at the
        learner's ``delta``: ``composed`` when composing the draws' events by ``rule`` gives the
        statement (else it comes from the paper's own argument)."""
        if draws <= 0:
            return 0.0, 0.0, "basic", True
        k, dlt = int(self.k), float(self.delta)
        if self.composition == "paper":
            return _paper_epsilon(e0, draws, dlt, k), dlt, PAPER_RULE, False
        if self.composition == "auto":
            eps, rule = best_composition(e0, k * draws, dlt)
        else:
            eps, _, rule = compose([PrivacyEvent.exponential(e0, count=k * draws)], dlt,
                                   self.composition, caller=type(self).__name__)
        return eps, 0.0 if rule == "basic" else dlt, rule, True

    # -- calibration: public parameters only --------------------------------------------------
    @abstractmethod
    def _calibrate(self, *, warn: bool) -> dict[str, Any]:
        """``gamma``, ``eta`` and the planned data-dependent ``draws`` per expert, from the
        public parameters (warnings about clipped defaults only with ``warn``)."""

    def _planned_draws(self) -> int:
        return int(self._calibrate(warn=False)["draws"])

    def _overrun(self, c: dict[str, Any]) -> tuple[int, float]:
        """Draws per expert the run may make beyond the plan, and the probability it does."""
        return 0, 0.0

    def _plan_statement(self) -> tuple[float, float, str, bool, float, int, int]:
        """``(epsilon, delta, rule, composed, e0, draws, overrun)`` of the whole run."""
        c = self._calibrate(warn=False)
        e0 = hedge_draw_epsilon(c["eta"], backend=self.backend)
        overrun, p_fail = self._overrun(c)
        eps, dlt, rule, composed = self._statement(e0, int(c["draws"]))
        if overrun:
            composed = False
        return eps, dlt + p_fail, rule, composed, e0, int(c["draws"]), overrun

    def _privacy_plan(self) -> PrivacyPlan | None:
        """Every data-dependent Hedge draw of a whole run; ``None`` when privacy is off."""
        if self.noise_off:
            return None
        return self._memo_plan(self._build_plan)

    def _build_plan(self) -> PrivacyPlan:
        eps, dlt, rule, composed, e0, draws, overrun = self._plan_statement()
        k = int(self.k)
        events = []
        if draws > 0:
            events.append(PrivacyEvent.exponential(
                e0, mechanism="hedge_draw", count=k * draws,
                note=f"{k} Hedge experts x {draws} data-dependent draws ({self._draws_label}), "
                     f"score sensitivity 1"))
        if overrun > 0:
            events.append(PrivacyEvent.exponential(
                e0, mechanism="hedge_draw_beyond_budget", count=k * overrun,
                note=f"{k} Hedge experts x up to {overrun} draws beyond the exploration budget, "
                     "made only with the failure probability counted in delta"))
        name = type(self).__name__
        if composed:
            return run_plan(name, events, delta=float(self.delta), composition=rule,
                            neighbouring=_NEIGHBOURING, backend=self.backend, rng=self.rng)
        return run_plan(name, events, composition=rule, guarantee=(eps, dlt),
                        neighbouring=_NEIGHBOURING, backend=self.backend, rng=self.rng)

    # -- state --------------------------------------------------------------------------------
    def _resolve(self) -> dict[str, Any]:
        """Every parameter after defaults were resolved, with the run's guarantee."""
        p = dict(self._calibrate(warn=True))
        p["calibration"] = self.calibration if self.eta is None else "user"
        return self._with_guarantee(p)

    def _with_guarantee(self, p: dict[str, Any]) -> dict[str, Any]:
        rep = self.privacy
        p["e0"] = hedge_draw_epsilon(p["eta"], backend=self.backend)
        p["epsilon_guarantee"] = math.inf if rep is None else float(rep.epsilon)
        p["delta_guarantee"] = 1.0 if rep is None else float(rep.delta)
        return p

    def _reset(self) -> None:
        super()._reset()
        gen = as_generator(self.rng)
        hedge_rng, play_rng, setup_rng = gen.spawn(3)
        self._setup_rng = setup_rng
        self._params = self._resolve()
        self._allowance = self._run_allowance()
        self._fed = False  # no feedback has reached the experts: their draws are uniform
        self._hedge = Hedge(int(self.n), self._params["eta"], copies=int(self.k),
                            backend=self.backend, rng=hedge_rng)
        self._hedge.reset()
        self._play = play_rng
        self._realized = np.zeros(int(self.k))

    def _draw(self) -> np.ndarray:
        """One draw of every expert, through the run's allowance once it depends on data."""
        if self._allowance is not None and self._fed:
            self._allowance.charge(PrivacyEvent.exponential(
                self._params["e0"], mechanism="hedge_draw", count=int(self.k)))
        return self._hedge.sample()

    # -- diagnostics (non-private) ------------------------------------------------------------
    def expert_probabilities(self) -> np.ndarray:
        """The experts' current distributions, shape ``(k, n)`` (non-private diagnostic)."""
        self._ensure_state()
        return self._hedge.probabilities()


class FIDP(_HedgeExperts):
    r"""Private online submodular maximization with full information (Perez-Salazar and Cummings
    2021, Algorithm 2 "FI-DP"; the private online greedy of Streeter and Golovin).

    Round ``t``: each expert ``i`` draws :math:`a_t^i` from its Hedge distribution; play
    :math:`S_t = \{a_t^1, \dots, a_t^k\}` (duplicates collapse, so :math:`|S_t| \le k`); observe
    :math:`f_t`; feed expert ``i`` the marginal gains :math:`g_t^i(a) = f_t(S_t^{i-1} + a) -
    f_t(S_t^{i-1})`, :math:`S_t^{i-1} = \{a_t^1, .., a_t^{i-1}\}`, clipped to ``[0, 1]`` (``k n``
    evaluations of :math:`f_t` per round).

    Guarantee: :math:`(\varepsilon, \delta)`-DP for the sequence of played sets, neighbours
    differing in one function (Theorem 5: each expert is :math:`(\varepsilon/k, \delta/k)`-DP
    given the earlier experts, by advanced composition of its ``T`` draws, each
    :math:`2\eta`-DP; the clip keeps the score sensitivity at 1 for any input). Expected
    :math:`(1 - 1/e)`-regret :math:`\le \varepsilon\sqrt T/\sqrt{32\ln(k/\delta)} + \sqrt{32}\,k^2
    \ln n\sqrt{T\ln(k/\delta)}/\varepsilon` (Theorem 6), for monotone submodular
    :math:`f_t \in [0, 1]` with :math:`f_t(\emptyset) = 0` and an oblivious adversary.

    Parameters
    ----------
    n : int
        Ground-set size.
    T : int
        Horizon (the learning rate depends on it).
    k : int
        Cardinality budget, ``1 <= k <= n``.
    epsilon : float
        Privacy parameter; ``math.inf`` switches privacy off (non-private learning rate
        :math:`\sqrt{\ln n/T}`; **not private**).
    delta : float
        In ``(0, 1)``; required when private.
    eta : float, optional
        Learning-rate override. A rate whose draws compose (under ``composition``) to more than
        ``epsilon`` is refused at construction (:class:`~dpsubmod.errors.ValidationError`
        naming ``eta``); the statement carries the epsilon the rate really spends.
    calibration : {"paper", "tight"}, default="paper"
        ``"paper"``: :math:`\eta = \varepsilon/(k\sqrt{32T\ln(k/\delta)})`, refused where it
        composes to more than ``epsilon`` (it needs :math:`\varepsilon e^{2\eta} \le
        4\ln(k/\delta)`). ``"tight"``: the largest :math:`\eta` whose composed guarantee (under
        ``composition``) is :math:`(\varepsilon, \delta)` (not in the paper; about twice the
        paper's rate or more).
    composition : {"auto", "paper", "basic", "advanced", "kov", "zcdp"}, default="auto"
        How the statement composes the draws (:func:`~dpsubmod.online.hedge_epsilon`).
    backend : {None, "numpy", "secure"}, default=None
        Sampler of the Hedge draws (see :class:`~dpsubmod.online.Hedge`).
    rng : int, Generator, SeedSequence or None, default=None
        Resolved when the state is built.
    budget : Budget or None, default=None
        Charged the whole run's guarantee (:attr:`privacy`) at construction, before anything is
        released (:class:`~dpsubmod.errors.BudgetExceededError` when it does not fit; then
        nothing changes), again by :meth:`reset` after play and by every clone (each a new
        release). Not allowed with ``epsilon=math.inf``. Play a budgeted learner with
        :func:`~dpsubmod.online.run` (which plays it itself instead of a clone).

    Examples
    --------
    >>> import math
    >>> from dpsubmod.functions import Modular
    >>> from dpsubmod.online import run
    >>> stream = [Modular([0.1, 0.5, 0.2, 0.2])] * 300
    >>> trace = run(FIDP(4, T=300, k=1, epsilon=math.inf, rng=0), stream, rng=0)
    >>> trace.selections[-1]
    (1,)
    """

    feedback = "full"

    def __init__(self, n: int, T: int, k: int, *, epsilon: float, delta: float | None = None,
                 eta: float | None = None, calibration: str = "paper",
                 composition: str = "auto", backend: str | None = None, rng: RNGLike = None,
                 budget: Any = None):
        self.n = n
        self.T = T
        self.k = k
        self.epsilon = epsilon
        self.delta = delta
        self.eta = eta
        self.calibration = calibration
        self.composition = composition
        self.backend = backend
        self.rng = rng
        self.budget = budget
        self._check_common_params(type(self).__name__)
        self._check_spend()

    def _calibrate(self, *, warn: bool) -> dict[str, Any]:
        n, T, k = int(self.n), int(self.T), int(self.k)
        # The first draw uses the uniform initial weights and the last round's gains feed no
        # draw: T - 1 data-dependent draws per expert (the paper's eta counts T).
        draws = T - 1
        if self.eta is not None:
            eta = float(self.eta)
        elif self.noise_off:
            eta = math.sqrt(math.log(max(n, 2)) / T)
        else:
            eta = self._private_eta(T, draws)
        return {"n": n, "T": T, "k": k, "eta": eta, "draws": draws}

    def _reset(self) -> None:
        super()._reset()
        self._a: np.ndarray | None = None

    def _select(self) -> np.ndarray:
        self._probs = self._hedge.probabilities() if self._needs_probs() else None
        self._a = self._draw()
        mask = np.zeros(int(self.n), dtype=bool)
        mask[self._a] = True
        return mask

    def _needs_probs(self) -> bool:
        return int(self.n) ** int(self.k) <= EXPECTED_VALUE_MAX_TUPLES

    def _update(self, f: SetFunction) -> None:  # type: ignore[override]
        a = self._a
        k, n = int(self.k), int(self.n)
        st = f.state()
        G = np.empty((k, n))
        for i in range(k):
            G[i] = st.gains()
            st.add(int(a[i]))
        if not np.isfinite(G).all():
            raise ValidationError(
                f"The round's function returned non-finite marginal gains to "
                f"{type(self).__name__}; every f_t must be finite on all sets."
            )
        G = _clip01(G)
        self._realized += G[np.arange(k), a]
        self._hedge._trusted_update(G)
        self._fed = True

    def expected_value(self, f: SetFunction) -> float | None:
        """Exact :math:`E[f(S_t)]` over the experts' draws of this round (non-private
        diagnostic; uncounted); ``None`` when :math:`n^k` exceeds 1024."""
        if self._probs is None:
            return None
        n, k = int(self.n), int(self.k)
        tup = _tuples(n, k)
        p = np.prod(self._probs[np.arange(k)[None, :], tup], axis=1)
        return _weighted_values(f, _masks_of(tup, n), p)

    def expert_regrets(self) -> np.ndarray:
        r"""Realised regrets :math:`r_i` of the ``k`` experts so far (non-private diagnostic;
        see :func:`expert_regrets`)."""
        self._ensure_state()
        return expert_regrets(self._hedge.gains, self._realized)


class _BanditExperts(_HedgeExperts):
    """Bandit machinery: exploration rounds, sparse updates, expected values."""

    feedback = "bandit"

    def _check_bandit(self, caller: str) -> None:
        if self.gamma is not None:
            check_real(self.gamma, "gamma", low=0.0, low_open=True, caller=caller,
                       fix="gamma is an exploration probability; values above 1 are clipped to "
                           "1 with a warning.")
        elif int(self.n) < 2:
            raise ValidationError(
                f"The default exploration rate of {caller} involves ln(n), which is 0 for n=1; "
                "pass gamma explicitly."
            )

    def _nonprivate_gamma(self) -> float:
        n, T, k = int(self.n), int(self.T), int(self.k)
        return k * (n * math.log(n)) ** (1.0 / 3.0) * T ** (-1.0 / 3.0)

    def _nonprivate_eta(self, gamma: float) -> float:
        n, T, k = int(self.n), int(self.T), int(self.k)
        return math.sqrt(k * n * math.log(max(n, 2)) / (gamma * T))

    def _reset(self) -> None:
        super()._reset()
        # The first set is drawn from the uniform initial weights: data-independent.
        self._a = self._draw()
        self._explore: tuple[int, int] | None = None
        self._explorations = 0

    @abstractmethod
    def _explore_now(self) -> bool:
        """Whether this round explores (the variants differ only here)."""

    def _before_round(self) -> None:
        """Hook run at the start of each round (the naive variant redraws here)."""

    def _select(self) -> np.ndarray:
        self._before_round()
        n = int(self.n)
        mask = np.zeros(n, dtype=bool)
        self._probs = None
        if self._explore_now():
            i = int(self._play.integers(int(self.k)))
            e = int(self._play.integers(n))
            self._explore = (i, e)
            mask[self._a[:i]] = True
            mask[e] = True
        else:
            self._explore = None
            mask[self._a] = True
        return mask

    def _update(self, y: float) -> None:  # type: ignore[override]
        if self._explore is None:
            return  # exploitation: the value never reaches the learner's state
        i, e = self._explore
        v = float(_clip01(np.float64(y)))
        self._hedge._G[i, e] += v
        self._fed = True
        self._explorations += 1
        self._after_exploration()

    def _after_exploration(self) -> None:
        """Algorithm 3 and B.2: all k experts redraw right after an exploration."""
        self._a = self._draw()

    @property
    def explorations(self) -> int:
        """Number of exploration rounds played so far."""
        self._ensure_state()
        return self._explorations

    @property
    def exploitation_choices(self) -> np.ndarray:
        """The experts' current choices :math:`(a^1, .., a^k)` (the ordered tuple behind the set
        in force; non-private diagnostic)."""
        self._ensure_state()
        return self._a.copy()

    def _mixture_value(self, f: SetFunction, P: np.ndarray, g: float) -> float:
        r""":math:`E[(1-g) f(S) + g\,\mathrm{mean}_{i,e} f(S^{i-1} + e)]` for a tuple drawn from
        the experts' distributions ``P`` (exact enumeration of the :math:`n^k` tuples)."""
        n, k = int(self.n), int(self.k)
        tup = _tuples(n, k)
        p = np.prod(P[np.arange(k)[None, :], tup], axis=1)
        exploit = _weighted_values(f, _masks_of(tup, n), p) if g < 1.0 else 0.0
        explore = 0.0
        if g > 0.0:
            for i in range(k):
                # E over the first i draws of f(S^{i-1} + e), e uniform: prefixes of length i.
                pre = _tuples(n, i) if i else np.zeros((1, 0), dtype=np.int64)
                pp = np.prod(P[np.arange(i)[None, :], pre], axis=1) if i else np.ones(1)
                masks = np.repeat(_masks_of(pre, n), n, axis=0)
                masks[np.arange(masks.shape[0]), np.tile(np.arange(n), pre.shape[0])] = True
                explore += _weighted_values(f, masks, np.repeat(pp, n) / n)
        return (1.0 - g) * exploit + g * explore / k

    def _in_force_value(self, f: SetFunction, g: float) -> float:
        """Expected value of this round given the experts' distributions: the tuple in force was
        drawn from the current distributions (Algorithm 3 and B.2 redraw right after each
        update and never update in between), so averaging over them keeps the mean of the
        realised rewards and removes the variance of the draw. Exact; falls back to the tuple in
        force when :math:`n^k` exceeds the enumeration limit."""
        n, k = int(self.n), int(self.k)
        if n ** k <= EXPECTED_VALUE_MAX_TUPLES:
            return self._mixture_value(f, self._hedge.probabilities(), g)
        a = self._a
        exploit = np.zeros((1, n), dtype=bool)
        exploit[0, a] = True
        ex = _weighted_values(f, exploit, np.ones(1)) if g < 1.0 else 0.0
        return (1.0 - g) * ex + (g * self._explore_values(f, a) if g > 0.0 else 0.0)

    def _explore_values(self, f: SetFunction, a: np.ndarray) -> float:
        """Mean of :math:`f(S^{i-1} + e)` over uniform ``i`` and ``e`` for the tuple ``a``."""
        n, k = int(self.n), int(self.k)
        masks = np.zeros((k * n, n), dtype=bool)
        for i in range(k):
            rows = slice(i * n, (i + 1) * n)
            masks[rows, a[:i]] = True
            masks[rows][np.arange(n), np.arange(n)] = True
        return _weighted_values(f, masks, np.full(k * n, 1.0 / (k * n)))


class BanditDP(_BanditExperts):
    r"""Private online submodular maximization with bandit feedback (Perez-Salazar and Cummings
    2021, Algorithm 3 "BanditDP"): blocked exploration with replay.

    Round ``t``: with probability :math:`\gamma` (data-independent coin) **explore**: draw
    :math:`i \in \{1..k\}` and :math:`a \in [n]` uniformly, play :math:`S_t^{i-1} + a`, feed the
    observed value (clipped to ``[0, 1]``) to expert ``i`` at ``a`` (every other expert receives
    the zero vector), then let **all** ``k`` experts draw a new tuple. Otherwise **exploit**:
    replay the set in force and ignore the observed value. The first set is drawn from the uniform
    initial weights. Only the :math:`M \sim \mathrm{Bin}(T, \gamma)` post-exploration draws depend
    on the data; replays are post-processing.

    Guarantee: :math:`(\varepsilon, \delta + p)`-DP with
    :math:`p = \Pr[\mathrm{Bin}(T, \gamma) > \lfloor 2\gamma T\rfloor]` computed exactly
    (Theorem 7 states :math:`\delta + e^{-8T^{1/3}}`, which holds for the default
    :math:`\gamma` and :math:`n \ge 2`; for other :math:`\gamma` only the exact tail is valid).
    With ``cap=True`` the learner stops exploring after :math:`\lfloor 2\gamma T\rfloor`
    explorations and is exactly :math:`(\varepsilon, \delta)`-DP (not in the paper).
    Expected :math:`(1 - 1/e)`-regret :math:`O(T^{2/3})` (Theorem 8; with the default
    :math:`\gamma` the constant scales as :math:`k^{5/2}`, not the printed :math:`k^2`).

    Parameters
    ----------
    n, T, k, epsilon, delta, eta, calibration, composition, backend, rng
        As in :class:`FIDP`; ``eta`` defaults to
        :math:`\varepsilon / (k\sqrt{32 \min(2\gamma T, T)\ln(k/\delta)})`, or to the non-private
        :math:`\sqrt{k n\ln n/(\gamma T)}` when ``epsilon=inf``.
    gamma : float, optional
        Exploration probability. Default :math:`k((16 n\ln n)^2/T)^{1/3}` (private) or
        :math:`k(n\ln n)^{1/3}T^{-1/3}` (``epsilon=inf``); values above 1 are clipped to 1 with a
        warning (the private default exceeds 1 unless :math:`T \ge k^3(16 n\ln n)^2`).
    cap : bool, default=False
        Stop exploring after the budget :math:`\lfloor 2\gamma T\rfloor` (exact
        :math:`(\varepsilon, \delta)`-DP). Without it the plan also admits the draws beyond
        the budget, which happen only with the failure probability counted in the statement's
        delta.
    budget : Budget or None, default=None
        As in :class:`FIDP`.
    """

    _draws_label = "post-exploration draws, budget floor(2 gamma T)"

    def __init__(self, n: int, T: int, k: int, *, epsilon: float, delta: float | None = None,
                 gamma: float | None = None, eta: float | None = None, cap: bool = False,
                 calibration: str = "paper", composition: str = "auto",
                 backend: str | None = None, rng: RNGLike = None, budget: Any = None):
        self.n = n
        self.T = T
        self.k = k
        self.epsilon = epsilon
        self.delta = delta
        self.gamma = gamma
        self.eta = eta
        self.cap = cap
        self.calibration = calibration
        self.composition = composition
        self.backend = backend
        self.rng = rng
        self.budget = budget
        caller = type(self).__name__
        self._check_common_params(caller)
        self._check_bandit(caller)
        if not isinstance(cap, bool):
            raise ValidationError(f"The 'cap' parameter of {caller} must be a bool; got {cap!r}.")
        self._check_spend()

    def _default_gamma(self) -> tuple[float, str]:
        if self.noise_off:
            return self._nonprivate_gamma(), "k (n ln n)^(1/3) T^(-1/3) (non-private)"
        n, T, k = int(self.n), int(self.T), int(self.k)
        return k * ((16.0 * n * math.log(n)) ** 2 / T) ** (1.0 / 3.0), \
            "k ((16 n ln n)^2 / T)^(1/3) (Algorithm 3)"

    def _calibrate(self, *, warn: bool) -> dict[str, Any]:
        n, T, k = int(self.n), int(self.T), int(self.k)
        default, what = (0.0, "") if self.gamma is not None else self._default_gamma()
        gamma = _resolve_gamma(self.gamma, default, type(self).__name__, what, warn=warn)
        budget_real = min(2.0 * gamma * T, float(T))
        m_max = min(math.floor(2.0 * gamma * T), T)
        p_fail = 0.0 if self.cap else bandit_failure_probability(T, gamma)
        if self.eta is not None:
            eta = float(self.eta)
        elif self.noise_off:
            eta = self._nonprivate_eta(gamma)
        else:
            eta = self._private_eta(max(budget_real, 1e-300), m_max)
        return {"n": n, "T": T, "k": k, "gamma": gamma, "eta": eta,
                "exploration_budget": m_max, "draws": m_max,
                "failure_probability": p_fail, "cap": bool(self.cap)}

    def _overrun(self, c: dict[str, Any]) -> tuple[int, float]:
        if self.cap:
            return 0, 0.0
        return int(c["T"]) - int(c["draws"]), float(c["failure_probability"])

    def _explore_now(self) -> bool:
        if self.cap and self._explorations >= self._params["exploration_budget"]:
            return False
        return bool(self._play.random() < self._params["gamma"])

    def expected_value(self, f: SetFunction) -> float:
        """Exact :math:`E[f(S_t)]` given the experts' distributions, over the tuple in force
        and this round's exploration coin, ``i`` and ``a`` (non-private diagnostic; uncounted).
        """
        g = self._params["gamma"]
        if self.cap and self._explorations >= self._params["exploration_budget"]:
            g = 0.0
        return self._in_force_value(f, g)


class NaiveBanditDP(_BanditExperts):
    r"""The direct private bandit algorithm (Perez-Salazar and Cummings 2021, Appendix B.1): the
    Streeter-Golovin explore/exploit scheme with a fresh draw from every expert **every round**.

    Round ``t``: every expert draws, :math:`S_t = \{a_t^1..a_t^k\}`; with probability
    :math:`\gamma` explore (play :math:`S_t^{i-1} + a` for uniform ``i``, ``a`` and feed the
    clipped value to expert ``i`` at ``a``), else play :math:`S_t` and ignore the value.

    Guarantee: :math:`(\varepsilon, \delta)`-DP with
    :math:`\eta = \varepsilon/(k\sqrt{32T\ln(k/\delta)})` (each expert draws ``T`` times), and
    :math:`O(T^{3/4})` expected :math:`(1 - 1/e)`-regret with :math:`\gamma = \Theta(T^{-1/4})`.

    The paper gives no constant for :math:`\gamma`. The default minimises the corrected bound
    :math:`A\sqrt T/\gamma + \gamma T`, :math:`A = k^3 n\ln n\sqrt{32\ln(k/\delta)}/\varepsilon`
    (the sum over the experts of
    :math:`E[r_i] \le k^2 n\ln n\sqrt{32 T\ln(k/\delta)}/(\varepsilon\gamma)`):
    :math:`\gamma = \sqrt A\, T^{-1/4}`, clipped to 1 with a warning. With ``epsilon=inf`` it is
    the non-private Streeter-Golovin bandit tuning (see :class:`BanditDP`).

    Parameters
    ----------
    n, T, k, epsilon, delta, gamma, eta, calibration, composition, backend, rng, budget
        As in :class:`BanditDP`.
    """

    def __init__(self, n: int, T: int, k: int, *, epsilon: float, delta: float | None = None,
                 gamma: float | None = None, eta: float | None = None,
                 calibration: str = "paper", composition: str = "auto",
                 backend: str | None = None, rng: RNGLike = None, budget: Any = None):
        self.n = n
        self.T = T
        self.k = k
        self.epsilon = epsilon
        self.delta = delta
        self.gamma = gamma
        self.eta = eta
        self.calibration = calibration
        self.composition = composition
        self.backend = backend
        self.rng = rng
        self.budget = budget
        caller = type(self).__name__
        self._check_common_params(caller)
        self._check_bandit(caller)
        self._check_spend()

    def _calibrate(self, *, warn: bool) -> dict[str, Any]:
        n, T, k = int(self.n), int(self.T), int(self.k)
        if self.gamma is not None:
            default, what = 0.0, ""
        elif self.noise_off:
            default, what = self._nonprivate_gamma(), "k (n ln n)^(1/3) T^(-1/3) (non-private)"
        else:
            A = k ** 3 * n * math.log(n) * math.sqrt(32.0 * math.log(k / float(self.delta))) \
                / float(self.epsilon)
            default, what = math.sqrt(A) * T ** -0.25, "sqrt(A) T^(-1/4) (Appendix B.1)"
        gamma = _resolve_gamma(self.gamma, default, type(self).__name__, what, warn=warn)
        draws = T - 1  # the first round's draw is uniform (data-independent)
        if self.eta is not None:
            eta = float(self.eta)
        elif self.noise_off:
            eta = self._nonprivate_eta(gamma)
        else:
            eta = self._private_eta(T, draws)
        return {"n": n, "T": T, "k": k, "gamma": gamma, "eta": eta, "draws": draws}

    def _reset(self) -> None:
        super()._reset()
        self._fresh = True  # the tuple drawn in _reset serves round 1

    def _before_round(self) -> None:
        if self._fresh:
            self._fresh = False
        else:
            self._a = self._draw()
        n, k = int(self.n), int(self.k)
        self._round_probs = self._hedge.probabilities() \
            if n ** k <= EXPECTED_VALUE_MAX_TUPLES else None

    def _explore_now(self) -> bool:
        return bool(self._play.random() < self._params["gamma"])

    def _after_exploration(self) -> None:
        """The next round draws anyway."""

    def expected_value(self, f: SetFunction) -> float | None:
        """Exact :math:`E[f(S_t)]` over this round's expert draws and exploration (non-private
        diagnostic; uncounted); ``None`` when :math:`n^k` exceeds 1024."""
        if self._round_probs is None:
            return None
        return self._mixture_value(f, self._round_probs, self._params["gamma"])


class PresampledBanditDP(_BanditExperts):
    r"""Private bandit maximization with pre-sampled exploration rounds (Perez-Salazar and
    Cummings 2021, Appendix B.2): exactly :math:`(\varepsilon, \delta)`-DP.

    The exploration rounds are fixed before the game, independently of the data: each round is
    one with probability :math:`\gamma`, ``M`` of them in all; then Algorithm 3 runs with
    :math:`\eta = \varepsilon/(k\sqrt{32(M+1)\ln(k/\delta)})`, exploring exactly at those rounds.
    Every expert makes ``M`` data-dependent draws, so the guarantee is exact, with no failure
    term. Expected :math:`(1 - 1/e)`-regret :math:`O(T^{2/3})` with
    :math:`\gamma = \Theta(T^{-1/3})`.

    Memory is :math:`O(1)` instead of the paper's :math:`\Theta(T^{2/3})`: ``M`` is drawn from
    :math:`\mathrm{Bin}(T, \gamma)`, and at round ``t`` with ``m`` explorations left the round
    explores with probability :math:`m/(T - t + 1)` (selection sampling). Given ``M`` the
    exploration rounds are then a uniform ``M``-subset, exactly as for ``T`` independent
    coins, so the law of the run is the paper's.

    The paper gives no constant for :math:`\gamma`; the default is Algorithm 3's
    (:class:`BanditDP`), whose exploration schedule this variant replaces.

    The privacy statement, made before the game, cannot depend on ``M``: it is the largest
    guarantee over every possible ``M`` (a run with ``M`` explorations is
    :math:`(\varepsilon(M), \delta)`-DP, and ``M`` is data-independent). With
    ``calibration="tight"`` every :math:`\varepsilon(M)` is :math:`\varepsilon`; with the paper's
    rate the supremum is bounded in closed form (the paper's per-expert advanced composition
    gives at most :math:`\varepsilon/2 + \varepsilon^2 e^{c/\sqrt2}/(8k\ln(k/\delta))`,
    :math:`c = 2\varepsilon/(k\sqrt{32\ln(k/\delta)})` the largest per-draw epsilon, and
    the rules of :mod:`dpsubmod.privacy.composition` never exceed it; basic and zCDP composition
    grow with ``M`` and are taken at ``M = T``); with a given ``eta`` it is the composition of
    ``T`` draws per expert.

    Parameters
    ----------
    n, T, k, epsilon, delta, gamma, eta, calibration, composition, backend, rng, budget
        As in :class:`BanditDP`. With ``calibration="tight"`` the rate is solved for ``M``
        draws per expert.
    """

    _draws_label = "M pre-sampled explorations"

    def __init__(self, n: int, T: int, k: int, *, epsilon: float, delta: float | None = None,
                 gamma: float | None = None, eta: float | None = None,
                 calibration: str = "paper", composition: str = "auto",
                 backend: str | None = None, rng: RNGLike = None, budget: Any = None):
        self.n = n
        self.T = T
        self.k = k
        self.epsilon = epsilon
        self.delta = delta
        self.gamma = gamma
        self.eta = eta
        self.calibration = calibration
        self.composition = composition
        self.backend = backend
        self.rng = rng
        self.budget = budget
        caller = type(self).__name__
        self._check_common_params(caller)
        self._check_bandit(caller)
        self._check_spend()

    def _gamma(self, *, warn: bool) -> float:
        if self.gamma is not None:
            default, what = 0.0, ""
        else:
            default, what = BanditDP._default_gamma(self)  # type: ignore[arg-type]
        return _resolve_gamma(self.gamma, default, type(self).__name__, what, warn=warn)

    def _calibrate(self, *, warn: bool) -> dict[str, Any]:
        # Before the schedule is drawn only the bound M <= T is known: the plan covers up to T
        # draws per expert, each at most as private as with M = 1 (the rate falls with M).
        n, T, k = int(self.n), int(self.T), int(self.k)
        gamma = self._gamma(warn=warn)
        if self.eta is not None:
            eta = float(self.eta)
        elif self.noise_off:
            eta = self._nonprivate_eta(gamma)
        else:
            eta = self._private_eta(2, 1)
        return {"n": n, "T": T, "k": k, "gamma": gamma, "eta": eta, "draws": T}

    def _plan_statement(self) -> tuple[float, float, str, bool, float, int, int]:
        c = self._calibrate(warn=False)
        T = int(self.T)
        e0 = hedge_draw_epsilon(c["eta"], backend=self.backend)
        if self.eta is not None:
            # a fixed rate: every rule grows with the number of draws, at most T per expert
            eps, dlt, rule, composed = self._statement(e0, T)
            return eps, dlt, rule, composed, e0, T, 0
        every_m = "the largest over the number M of pre-sampled explorations"
        if self.calibration == "tight":
            rule = PAPER_RULE if self.composition == "paper" else COMPOSITIONS[self.composition]
            return (float(self.epsilon), float(self.delta), f"{rule}, {every_m}", False, e0, T,
                    0)
        eps_sup, rule = self._paper_rate_supremum()
        dlt = 0.0 if rule == "basic" else float(self.delta)
        return eps_sup, dlt, f"{COMPOSITIONS.get(rule, rule)}, {every_m}", False, e0, T, 0

    def _paper_rate_supremum(self) -> tuple[float, str]:
        """``sup_M epsilon(M)`` for the paper's rate ``eta_M`` (tuned to ``M + 1`` draws), by
        the learner's composition rule, and the rule that bounds it."""
        eps, dlt, k, T = float(self.epsilon), float(self.delta), int(self.k), int(self.T)
        s = _backend_sensitivity(self.backend)
        ln = math.log(k / dlt)
        c = 2.0 * eps / (k * math.sqrt(32.0 * ln))
        # Per expert, sqrt(2 M ln(k/delta)) e0(M) < s eps / (2k) and M e0 (e^e0 - 1) <
        # M e0^2 e^e0 < (s c)^2 e^(s c / sqrt 2) for every M >= 1 (e0(M) = s c / sqrt(M + 1)).
        bound = s * eps / 2.0 + (s * eps) ** 2 * math.exp(s * c / math.sqrt(2.0)) / (8.0 * k * ln)
        e0_T = hedge_draw_epsilon(hedge_eta(eps, dlt, T + 1, experts=k), backend=self.backend)
        event = [PrivacyEvent.exponential(e0_T, count=k * T)]
        found: list[tuple[float, str]] = []
        rule = self.composition
        if rule in ("paper", "advanced", "kov", "auto"):
            found.append((bound, PAPER_RULE))  # advanced, KOV and auto never exceed the paper's
        if rule in ("basic", "advanced", "kov", "auto"):
            found.append((compose(event, dlt, "basic")[0], "basic"))
        if rule in ("zcdp", "auto"):
            found.append((compose(event, dlt, "zcdp")[0], "zcdp"))
        return min(found)

    def _resolve(self) -> dict[str, Any]:
        n, T, k = int(self.n), int(self.T), int(self.k)
        gamma = self._gamma(warn=True)
        # The schedule's randomness is data-independent and drawn before anything is released.
        M = int(self._setup_rng.binomial(T, gamma))
        if self.eta is not None:
            eta = float(self.eta)
        elif self.noise_off:
            eta = self._nonprivate_eta(gamma)
        else:
            eta = self._private_eta(M + 1, M)
        p: dict[str, Any] = {"n": n, "T": T, "k": k, "gamma": gamma, "eta": eta,
                             "explorations_scheduled": M, "draws": M,
                             "calibration": self.calibration if self.eta is None else "user"}
        return self._with_guarantee(p)

    def _reset(self) -> None:
        super()._reset()
        self._left = int(self._params["explorations_scheduled"])
        self._sched = self._setup_rng.spawn(1)[0]
        self._next_explores = self._schedule(int(self.T))

    def _schedule(self, rounds_left: int) -> bool:
        """Selection sampling: explore w.p. (explorations left) / (rounds left, this one incl.)."""
        if rounds_left <= 0 or self._left <= 0:
            return False
        explore = bool(self._sched.random() * rounds_left < self._left)
        if explore:
            self._left -= 1
        return explore

    def _explore_now(self) -> bool:
        self._this_explores = self._next_explores
        return self._this_explores

    def _update(self, y: float) -> None:  # type: ignore[override]
        super()._update(y)
        # _round still counts the rounds before this one: T - (round + 1) rounds remain.
        self._next_explores = self._schedule(int(self.T) - self._round - 1)

    def expected_value(self, f: SetFunction) -> float:
        """Exact :math:`E[f(S_t)]` given the (pre-sampled) schedule and the experts'
        distributions, over the tuple in force, ``i`` and ``a`` (non-private diagnostic;
        uncounted)."""
        return self._in_force_value(f, 1.0 if self._this_explores else 0.0)
