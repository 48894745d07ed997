r"""Private online submodular maximization with bandit feedback (Perez-Salazar and Cummings
2021): Algorithm 3 (:class:`BanditDP`), Appendix B.1 (:class:`NaiveBanditDP`) and Appendix B.2
(:class:`PresampledBanditDP`), ``k`` ordered Hedge experts fed the values of exploration rounds.

See :mod:`dpsubmod.online.maximization.experts` for the setting, the neighbouring relation and
the shared calibration.
"""

from __future__ import annotations

import math
from abc import abstractmethod
from typing import Any

import numpy as np

from ..._rng import RNGLike
from ..._validation import check_real
from ...errors import ValidationError
from ...functions.base import SetFunction
from ...privacy.composition import COMPOSITIONS, compose
from ...privacy.events import PrivacyEvent
from .._checks import resolve_gamma
from ..oco.hedge_privacy import (
    PAPER_RULE,
    backend_sensitivity,
    hedge_draw_epsilon,
    hedge_eta,
)
from .experts import (
    EXPECTED_VALUE_MAX_TUPLES,
    HedgeExperts,
    bandit_failure_probability,
    clip01,
    masks_of,
    tuples_of,
    weighted_values,
)

__all__ = ["BanditDP", "NaiveBanditDP", "PresampledBanditDP"]

_EXPLORES_ALWAYS = "every round explores, so the regret is linear"


def _gamma(gamma: float | None, default: float, caller: str, what: str, *,
           warn: bool) -> float:
    return resolve_gamma(gamma, default, caller, what, warn=warn,
                         consequence=_EXPLORES_ALWAYS, stacklevel=5)


class _BanditExperts(HedgeExperts):
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

    def _algorithm3_gamma(self) -> tuple[float, str]:
        """The default exploration rate of Algorithm 3 (also Appendix B.2's), and its formula."""
        if self.noise_off:
            return self._nonprivate_gamma(), "k (n ln n)^(1/3) T^(-1/3) (non-private)"
        n, T, k = int(self.n), int(self.T), int(self.k)
        return k * ((16.0 * n * math.log(n)) ** 2 / T) ** (1.0 / 3.0), \
            "k ((16 n ln n)^2 / T)^(1/3) (Algorithm 3)"

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
        v = float(clip01(np.float64(y)))
        self._hedge.update_one(i, e, v)
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
        tup = tuples_of(n, k)
        p = np.prod(P[np.arange(k)[None, :], tup], axis=1)
        exploit = weighted_values(f, masks_of(tup, n), p) if g < 1.0 else 0.0
        explore = 0.0
        if g > 0.0:
            for i in range(k):
                # E over the first i draws of f(S^{i-1} + e), e uniform: prefixes of length i.
                pre = tuples_of(n, i) if i else np.zeros((1, 0), dtype=np.int64)
                pp = np.prod(P[np.arange(i)[None, :], pre], axis=1) if i else np.ones(1)
                masks = np.repeat(masks_of(pre, n), n, axis=0)
                masks[np.arange(masks.shape[0]), np.tile(np.arange(n), pre.shape[0])] = True
                explore += weighted_values(f, masks, np.repeat(pp, n) / n)
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
        ex = weighted_values(f, exploit, np.ones(1)) if g < 1.0 else 0.0
        return (1.0 - g) * ex + (g * self._explore_values(f, a) if g > 0.0 else 0.0)

    def _explore_values(self, f: SetFunction, a: np.ndarray) -> float:
        """Mean of :math:`f(S^{i-1} + e)` over uniform ``i`` and ``e`` for the tuple ``a``."""
        n, k = int(self.n), int(self.k)
        masks = np.zeros((k * n, n), dtype=bool)
        for i in range(k):
            rows = slice(i * n, (i + 1) * n)
            masks[rows, a[:i]] = True
            masks[rows][np.arange(n), np.arange(n)] = True
        return weighted_values(f, masks, np.full(k * n, 1.0 / (k * n)))


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

    def _calibrate(self, *, warn: bool) -> dict[str, Any]:
        n, T, k = int(self.n), int(self.T), int(self.k)
        default, what = (0.0, "") if self.gamma is not None else self._algorithm3_gamma()
        gamma = _gamma(self.gamma, default, type(self).__name__, what, warn=warn)
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
        gamma = _gamma(self.gamma, default, type(self).__name__, what, warn=warn)
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
            default, what = self._algorithm3_gamma()
        return _gamma(self.gamma, default, type(self).__name__, what, warn=warn)

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
        s = backend_sensitivity(self.backend)
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
