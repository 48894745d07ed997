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
:func:`~dpsubmod.online.run`; :class:`FIDP` in :mod:`~dpsubmod.online.maximization.fidp`, the
bandit learners in :mod:`~dpsubmod.online.maximization.bandit_experts` and
:mod:`~dpsubmod.online.maximization.bandit_appendix`, their shared base
:class:`HedgeExperts` here):

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
:mod:`dpsubmod.online.maximization.streeter_golovin`.

Departures from the paper (see ``docs/errata.md``): the bandit failure probability is the exact
binomial tail (the paper's :math:`e^{-8\gamma^2 T}` is not a valid bound, though its final
:math:`e^{-8T^{1/3}}` is); exploration rates above 1 are clipped with a warning (the theoretical
:math:`\gamma` exceeds 1 unless :math:`T \ge k^3 (16 n\ln n)^2`); the privacy statement composes
all draws by ``composition="auto"`` (``"paper"`` reproduces the paper's per-expert
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

import dataclasses
import math
from abc import abstractmethod
from typing import Any, ClassVar

import numpy as np
from scipy.stats import binom

from ..._rng import as_generator
from ..._validation import check_int, check_real, is_noise_off
from ...errors import ValidationError
from ...functions.base import SetFunction
from ...privacy.composition import compose
from ...privacy.events import PrivacyEvent
from ...privacy.plan import PrivacyPlan
from ...privacy.weights import ExponentialWeights
from .._plans import check_spend, run_plan
from ..oco.hedge import Hedge
from ..oco.hedge_privacy import (
    HEDGE_COMPOSITIONS,
    PAPER_RULE,
    check_backend_param,
    hedge_draw_epsilon,
    hedge_eta,
    paper_epsilon,
    tight_hedge_eta,
)
from ..protocol import Learner

#: Learning-rate calibrations: ``"tight"`` (the largest rate whose composed guarantee, under the
#: learner's ``composition``, meets the budget) or ``"paper"`` (the paper's formulas).
CALIBRATIONS = ("tight", "paper")

#: What the experts' regret guarantees measure.
REWARD_UNITS = "(1 - 1/e)-regret of rewards f_t in [0, 1]"

#: Largest number of ``k``-tuples :meth:`expected_value` enumerates (``n**k``).
EXPECTED_VALUE_MAX_TUPLES = 1024

_NEIGHBOURING = ("function streams differing in one round's function (replaced by any other "
                 "function; feedback clipped to [0, 1])")


def clip01(values: np.ndarray) -> np.ndarray:
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


def tuples_of(n: int, k: int) -> np.ndarray:
    """All ``n**k`` tuples of ``range(n)``, shape ``(n**k, k)`` (first coordinate slowest)."""
    return np.indices((n,) * k).reshape(k, -1).T


def masks_of(tuples: np.ndarray, n: int) -> np.ndarray:
    m = np.zeros((tuples.shape[0], n), dtype=bool)
    if tuples.size:
        m[np.arange(tuples.shape[0])[:, None], tuples] = True
    return m


def tuple_probabilities(log_p: np.ndarray, tuples: np.ndarray, distinct: bool) -> np.ndarray:
    """Probability of each ordered tuple (rows of ``tuples``, one column per expert) when expert
    ``i`` draws from ``exp(log_p[i])``: independently, or (``distinct``) from that distribution
    restricted to the actions the earlier experts did not draw (a tuple with a repeat then has
    probability 0). Log-space, so a restriction to actions of underflowing probability keeps
    its law."""
    m, k = tuples.shape
    picked = log_p[np.arange(k)[None, :], tuples]
    if not distinct:
        return np.exp(picked.sum(axis=1))
    rows = np.arange(m)
    left = np.ones((m, log_p.shape[1]), dtype=bool)
    total = np.zeros(m)
    for i in range(k):
        repeat = ~left[rows, tuples[:, i]]
        row = np.where(left, log_p[i][None, :], -np.inf)
        # The log-sum-exp of each row, shifted by its largest finite entry. It runs every
        # round of an evaluated run, on rows of n entries, where scipy.special.logsumexp's
        # array-API dispatch costs more than the sum itself.
        top = row.max(axis=1, keepdims=True)
        top = np.where(np.isfinite(top), top, 0.0)
        with np.errstate(divide="ignore"):
            norm = np.log(np.exp(row - top).sum(axis=1)) + top[:, 0]
        total += np.where(repeat, -np.inf, picked[:, i] - norm)
        left[rows, tuples[:, i]] = False
    return np.exp(total)


def weighted_values(f: SetFunction, masks: np.ndarray, weights: np.ndarray) -> float:
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
    return float(w @ f.values(masks[first]))


class HedgeExperts(Learner):
    """Shared machinery: calibration, the Hedge bank, the privacy plan, diagnostics."""

    sense = "max"
    # The subclasses' tags say assumption="oblivious": the Hedge argument per expert needs
    # the sequence fixed before the game (Perez-Salazar and Cummings 2021, Section 3).
    _draws_label = "T - 1"
    #: Whether a neighbouring stream moves one score of one expert only (bandit feedback):
    #: then only that expert's later draws differ, each ``eta``-DP, where full information
    #: changes every expert's gains and each draw is ``2 eta``-DP.
    _one_score: ClassVar[bool] = False

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
        check_backend_param(self.backend, caller)
        if not isinstance(self.distinct, bool):
            raise ValidationError(
                f"The 'distinct' parameter of {caller} must be a bool; got {self.distinct!r}.")

    def _check_spend(self) -> None:
        """Refuse, at construction, a rate whose whole run spends more than ``epsilon``."""
        if self.eta is not None and not self.noise_off and \
                not math.isfinite(self._draw_epsilon(float(self.eta))):
            raise ValidationError(
                f"The 'eta' parameter of {type(self).__name__} is {float(self.eta)!r}: each "
                "Hedge draw would be infinitely-DP (no composition rule applies). Pass a "
                "smaller eta, or omit it for the largest rate within epsilon."
            )
        plan = self._privacy_plan()
        if plan is None:
            return
        spent, requested = plan.report().epsilon, float(self.epsilon)
        if spent <= requested:
            return
        name = type(self).__name__
        if self.eta is not None:
            best = self._tight_eta(max(1, self._planned_draws()))
            check_spend(name, spent, requested, parameter="eta",
                        fix=f"eta={float(self.eta):.6g} makes each Hedge draw "
                            f"{self._draw_epsilon(float(self.eta)):.6g}-DP; pass "
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

    def _leaking(self) -> int:
        """How many experts' draws a neighbouring stream can change (see ``_one_score``)."""
        return 1 if self._one_score else int(self.k)

    def _draw_epsilon(self, eta: float) -> float:
        """Privacy of one draw of a leaking expert: ``2 eta``, or ``eta`` when one score moves."""
        return hedge_draw_epsilon(eta, backend=self.backend, monotone=self._one_score)

    def _tight_eta(self, draws: int) -> float:
        """The largest rate whose statement (under ``composition``) is within ``epsilon``."""
        eps, dlt = float(self.epsilon), float(self.delta)
        if self.composition == "paper":  # the paper's own argument: k experts, 2 eta per draw
            return tight_hedge_eta(eps, dlt, draws, experts=int(self.k), composition="paper",
                                   backend=self.backend)
        return tight_hedge_eta(eps, dlt, draws, experts=self._leaking(),
                               composition=self.composition, backend=self.backend,
                               monotone=self._one_score)

    def _private_eta(self, draws_real: float, draws_int: int, optimal: float) -> float:
        """The private rate: the paper's formula (``calibration="paper"``), or the largest rate
        within ``epsilon``, lowered to the rate that minimises the regret bound (``optimal``)
        when the budget allows more: a larger rate would only raise the bound."""
        eps, dlt, k = float(self.epsilon), float(self.delta), int(self.k)
        if self.calibration == "paper":
            return hedge_eta(eps, dlt, draws_real, experts=k)
        return min(self._tight_eta(max(1, draws_int)), optimal)

    def _draw_mechanism(self, eta: float, backend: Any) -> ExponentialWeights:
        """The mechanism of one round's draws: one exponential-weights row per expert at rate
        ``eta``. A neighbouring stream moves every row (full information: every gain vector,
        each draw ``2 eta``-DP), or one score of one row (bandit feedback: one expert's
        observed value, so ``moving_rows=1`` and monotone, each draw ``eta``-DP)."""
        return ExponentialWeights(weight=float(eta), monotonic=self._one_score,
                                  rows=int(self.k), moving_rows=self._leaking(),
                                  backend=backend)

    def _round_event(self, eta: float) -> PrivacyEvent:
        """The privacy map of one round's draws at rate ``eta`` (calibrated only, never drawn
        from: a numpy backend here needs no seed)."""
        return self._draw_mechanism(eta, self.backend).privacy_map()

    def _statement(self, eta: float, draws: int) -> tuple[float, float, str, bool]:
        """``(epsilon, delta, rule, composed)`` of the run's ``draws`` draws per leaking expert
        at rate ``eta``: ``composed`` when composing the draws' events by ``rule`` gives the
        statement (else it comes from the paper's own argument, ``composition="paper"``: every
        one of the ``k`` experts, ``2 eta`` per draw)."""
        if draws <= 0:
            return 0.0, 0.0, "basic", True
        k, dlt = int(self.k), float(self.delta)
        if self.composition == "paper":
            e0 = hedge_draw_epsilon(eta, backend=self.backend)
            return paper_epsilon(e0, draws, dlt, k), dlt, PAPER_RULE, False
        eps, _, rule = compose([self._round_event(eta)._times(draws)], dlt, self.composition,
                               caller=type(self).__name__)
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
        """``(epsilon, delta, rule, composed, eta, draws, overrun)`` of the whole run, ``eta``
        the largest rate its draws are made at."""
        c = self._calibrate(warn=False)
        overrun, p_fail = self._overrun(c)
        eps, dlt, rule, composed = self._statement(c["eta"], int(c["draws"]))
        if overrun:
            composed = False
        return eps, dlt + p_fail, rule, composed, c["eta"], int(c["draws"]), overrun

    def _privacy_plan(self) -> PrivacyPlan | None:
        """Every data-dependent Hedge draw of a whole run; ``None`` when privacy is off."""
        if self.noise_off:
            return None
        return self._memo_plan(self._build_plan)

    def _build_plan(self) -> PrivacyPlan:
        eps, dlt, rule, composed, eta, draws, overrun = self._plan_statement()
        k = int(self.k)
        draw = self._round_event(eta)
        who = (f"the one Hedge expert whose observed value differs (of {k}; one score moves, "
               "each draw eta-DP)" if self._one_score else
               f"{k} Hedge experts (every gain vector moves, each draw 2 eta-DP)")
        # every data-dependent round releases the experts' draws through this mechanism
        events = []
        if draws > 0:
            events.append(dataclasses.replace(
                draw._times(draws),
                note=f"{draws} data-dependent draws ({self._draws_label}) of {who}, score "
                     "sensitivity 1"))
        if overrun > 0:
            events.append(dataclasses.replace(
                draw._times(overrun), mechanism="hedge_draw_beyond_budget",
                note=f"up to {overrun} draws beyond the exploration budget of {who}, made only "
                     "with the failure probability counted in delta"))
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
        p["e0"] = self._draw_epsilon(p["eta"])
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
        # the bank's draws go through the learner's mechanism, on the bank's noise backend
        self._mechanism = self._draw_mechanism(self._params["eta"], self._hedge._backend)
        self._play = play_rng
        self._realized = np.zeros(int(self.k))

    def _draw(self) -> np.ndarray:
        """One draw of every expert: charged to the run's allowance once it depends on data,
        then drawn."""
        budget = self._allowance if self._fed else None
        return self._hedge._release(self._mechanism, budget, self.distinct)

    # -- diagnostics (non-private) ------------------------------------------------------------
    def expert_probabilities(self) -> np.ndarray:
        """The experts' current distributions, shape ``(k, n)`` (non-private diagnostic)."""
        self._ensure_state()
        return self._hedge.probabilities()
