r"""The appendix variants of the private bandit experts (Perez-Salazar and Cummings 2021):
Appendix B.1 (:class:`NaiveBanditDP`, a fresh draw from every expert every round) and
Appendix B.2 (:class:`PresampledBanditDP`, exploration rounds presampled and the experts' draws
made only there).

See :mod:`dpsubmod.online.maximization.experts` for the setting, the neighbouring relation and
the shared calibration, and :mod:`dpsubmod.online.maximization.bandit_base` for the shared
exploration machinery and accounting.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...functions.base import SetFunction
from ...privacy.composition import COMPOSITIONS, auto_composition, compose
from ..oco.hedge_privacy import PAPER_RULE, backend_sensitivity, hedge_eta
from ..tags import NOISE_BACKENDS, LearnerTags
from .bandit_base import _BanditExperts
from .experts import EXPECTED_VALUE_MAX_TUPLES


class NaiveBanditDP(_BanditExperts):
    r"""The direct private bandit algorithm (Perez-Salazar and Cummings 2021, Appendix B.1): the
    Streeter-Golovin explore/exploit scheme with a fresh draw from every expert **every round**.

    Round ``t``: every expert draws, :math:`S_t = \{a_t^1..a_t^k\}`; with probability
    :math:`\gamma` explore (play :math:`S_t^{i-1} + a` for uniform ``i``, ``a`` and feed the
    clipped value to expert ``i`` at ``a``), else play :math:`S_t` and ignore the value.

    Guarantee: :math:`(\varepsilon, \delta)`-DP: each expert draws ``T - 1`` data-dependent
    times; the default rate is the largest whose draws of the one leaking expert, each
    :math:`\eta`-DP (:mod:`~dpsubmod.online.maximization.bandit_base`), compose within the
    budget (``calibration="paper"``: :math:`\eta = \varepsilon/(k\sqrt{32T\ln(k/\delta)})`).
    :math:`O(T^{3/4})` expected :math:`(1 - 1/e)`-regret with :math:`\gamma = \Theta(T^{-1/4})`.

    The paper gives no constant for :math:`\gamma`. By default the rate minimises the bound of
    :attr:`guarantee` when it says something (as in :class:`BanditDP`), else :math:`T^{-1/4}`;
    ``gamma="paper"`` minimises the corrected bound
    :math:`A\sqrt T/\gamma + \gamma T`, :math:`A = k^3 n\ln n\sqrt{32\ln(k/\delta)}/\varepsilon`
    (the sum over the experts of
    :math:`E[r_i] \le k^2 n\ln n\sqrt{32 T\ln(k/\delta)}/(\varepsilon\gamma)`):
    :math:`\gamma = \sqrt A\, T^{-1/4}`, clipped to 1 with a warning. With ``epsilon=inf`` it is
    the non-private Streeter-Golovin bandit tuning (see :class:`BanditDP`).

    Parameters
    ----------
    n, T, k, epsilon, delta, gamma, eta, calibration, composition, distinct, backend, rng, budget
        As in :class:`BanditDP`.
    """

    _tags = LearnerTags(private=True, feedback="bandit", problem="maximization",
                        assumption="oblivious", backends=NOISE_BACKENDS)

    _draws_grow_with_gamma = False
    _rate_exponent = 0.25

    def _draws_at(self, gamma: np.ndarray) -> np.ndarray:
        return np.full_like(gamma, max(1, int(self.T) - 1))

    def _paper_gamma(self) -> tuple[float, str]:
        if self.noise_off:
            return self._nonprivate_gamma(), "k (n ln n)^(1/3) T^(-1/3) (non-private)"
        n, T, k = int(self.n), int(self.T), int(self.k)
        A = k ** 3 * n * math.log(n) * math.sqrt(32.0 * math.log(k / float(self.delta))) \
            / float(self.epsilon)
        return math.sqrt(A) * T ** -0.25, "sqrt(A) T^(-1/4) (Appendix B.1)"

    def _calibrate(self, *, warn: bool) -> dict[str, Any]:
        n, T, k = int(self.n), int(self.T), int(self.k)
        gamma = self._resolve_gamma(warn=warn)
        draws = T - 1  # the first round's draw is uniform (data-independent)
        if self.eta is not None:
            eta = float(self.eta)
        elif self.noise_off:
            eta = self._nonprivate_eta(gamma)
        else:
            eta = self._private_eta(T, draws, self._nonprivate_eta(gamma))
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
        self._round_log_probs = self._hedge.log_probabilities() \
            if n ** k <= EXPECTED_VALUE_MAX_TUPLES else None

    def _explore_now(self) -> bool:
        return bool(self._play.random() < self._params["gamma"])

    def _after_exploration(self) -> None:
        """The next round draws anyway."""

    def expected_value(self, f: SetFunction) -> float | None:
        """Exact :math:`E[f(S_t)]` over this round's expert draws and exploration (non-private
        diagnostic; uncounted); ``None`` when :math:`n^k` exceeds 1024."""
        if self._round_log_probs is None:
            return None
        return self._mixture_value(f, self._round_log_probs, self._params["gamma"])


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
    n, T, k, epsilon, delta, gamma, eta, calibration, composition, distinct, backend, rng, budget
        As in :class:`BanditDP`. With ``calibration="tight"`` the rate is solved for ``M``
        draws per expert.
    """

    _tags = LearnerTags(private=True, feedback="bandit", problem="maximization",
                        assumption="oblivious", backends=NOISE_BACKENDS)

    _draws_label = "M pre-sampled explorations"

    def _draws_at(self, gamma: np.ndarray) -> np.ndarray:
        T = int(self.T)
        # M ~ Bin(T, gamma): its mean plus three standard deviations
        mean = gamma * T
        return np.maximum(1.0, np.minimum(np.ceil(mean + 3.0 * np.sqrt(mean)), T))

    def _calibrate(self, *, warn: bool) -> dict[str, Any]:
        # Before the schedule is drawn only the bound M <= T is known: the plan covers up to T
        # draws per expert, each at most as private as with M = 1 (the rate falls with M).
        n, T, k = int(self.n), int(self.T), int(self.k)
        gamma = self._resolve_gamma(warn=warn)
        if self.eta is not None:
            eta = float(self.eta)
        elif self.noise_off:
            eta = self._nonprivate_eta(gamma)
        else:
            eta = self._private_eta(2, 1, self._nonprivate_eta(gamma))
            if self.calibration != "paper":
                # The pre-sampled count M reaches T at most: a budget with no positive rate
                # for T draws is refused here, before the charge, not at the first select.
                self._tight_eta(max(1, T))
        return {"n": n, "T": T, "k": k, "gamma": gamma, "eta": eta, "draws": T}

    def _plan_statement(self) -> tuple[float, float, str, bool, float, int, int]:
        c = self._calibrate(warn=False)
        T, eta = int(self.T), c["eta"]
        if self.eta is not None:
            # a fixed rate: every rule grows with the number of draws, at most T per expert
            eps, dlt, rule, composed = self._statement(eta, T)
            return eps, dlt, rule, composed, eta, T, 0
        every_m = "the largest over the number M of pre-sampled explorations"
        if self.calibration == "tight":
            rule = PAPER_RULE if self.composition == "paper" else COMPOSITIONS[self.composition]
            return (float(self.epsilon), float(self.delta), f"{rule}, {every_m}", False, eta, T,
                    0)
        eps_sup, rule = self._paper_rate_supremum()
        dlt = 0.0 if rule == "basic" else float(self.delta)
        return eps_sup, dlt, f"{COMPOSITIONS.get(rule, rule)}, {every_m}", False, eta, T, 0

    def _paper_rate_supremum(self) -> tuple[float, str]:
        """``sup_M epsilon(M)`` for the paper's rate ``eta_M`` (tuned to ``M + 1`` draws), by
        the learner's composition rule, and the rule that bounds it."""
        eps, dlt, k, T = float(self.epsilon), float(self.delta), int(self.k), int(self.T)
        s = backend_sensitivity(self.backend)
        ln = math.log(k / dlt)
        c = 2.0 * eps / (k * math.sqrt(32.0 * ln))
        # Per expert, sqrt(2 M ln(k/delta)) e0(M) < s eps / (2k) and M e0 (e^e0 - 1) <
        # M e0^2 e^e0 < (s c)^2 e^(s c / sqrt 2) for every M >= 1 (e0(M) = s c / sqrt(M + 1)).
        bound = s * eps / 2.0 + (s * eps) ** 2 * math.exp(s * c / math.sqrt(2.0)) / (8.0 * k * ln)
        # Basic and zCDP composition of M draws at the rate eta_M ~ 1/sqrt(M + 1) grow with M
        # (M eta_M and M eta_M^2 do): their supremum is at M = T.
        event = [self._round_event(hedge_eta(eps, dlt, T + 1, experts=k))._times(T)]
        rule = self.composition
        if rule == "auto":  # the paper's bound stands for advanced and KOV, which never exceed it
            found = [(compose(event, dlt, "basic")[0], "basic"), (bound, PAPER_RULE),
                     (compose(event, dlt, "zcdp")[0], "zcdp")]
            chosen = auto_composition({m: found[0][0] / e for e, m in found})
            return next(f for f in found if f[1] == chosen)
        found: list[tuple[float, str]] = []
        if rule in ("paper", "advanced", "kov"):
            found.append((bound, PAPER_RULE))  # advanced and KOV never exceed the paper's
        if rule in ("basic", "advanced", "kov"):
            found.append((compose(event, dlt, "basic")[0], "basic"))
        if rule == "zcdp":
            found.append((compose(event, dlt, "zcdp")[0], "zcdp"))
        return min(found)

    def _resolve(self) -> dict[str, Any]:
        n, T, k = int(self.n), int(self.T), int(self.k)
        gamma = self._resolve_gamma(warn=True)
        # The schedule's randomness is data-independent and drawn before anything is released.
        M = int(self._setup_rng.binomial(T, gamma))
        if self.eta is not None:
            eta = float(self.eta)
        elif self.noise_off:
            eta = self._nonprivate_eta(gamma)
        else:
            eta = self._private_eta(M + 1, M, self._nonprivate_eta(gamma))
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
