r"""Shared machinery of the private bandit experts (Perez-Salazar and Cummings 2021):
exploration rounds, sparse updates of the explored expert, tight per-draw accounting, the tuned
exploration probability and expected values.

The learners are :class:`~dpsubmod.online.BanditDP` (Algorithm 3, in
:mod:`~dpsubmod.online.maximization.bandit_experts`), :class:`~dpsubmod.online.NaiveBanditDP` and
:class:`~dpsubmod.online.PresampledBanditDP` (Appendices B.1 and B.2, in
:mod:`~dpsubmod.online.maximization.bandit_appendix`). See
:mod:`dpsubmod.online.maximization.experts` for the setting, the neighbouring relation and the
shared calibration.

Accounting (tighter than the paper's, which charges :math:`2\eta` per draw to each of the ``k``
experts). Neighbouring streams differ in one round's function :math:`f_t`. The learner's state
sees only the clipped value observed in an **exploration** round, and only at the explored
expert ``i`` and action ``a``, which are chosen by data-independent coins; an exploitation
round's value never reaches the state. So the two runs, coupled on those coins, differ in one
cumulative score :math:`G_i(a)`, by some :math:`c \in [-1, 1]`, from round ``t`` on. The
other experts' later draws then have the same law, and a later draw of expert ``i``,
:math:`p(b) \propto e^{\eta G_i(b)}`, has every likelihood ratio within
:math:`[e^{-\eta|c|}, e^{\eta|c|}]`: for :math:`b \ne a` the ratio is the ratio of the
normalisers, and for :math:`b = a` it is that times :math:`e^{\eta c}`, which moves it back
toward 1 (both move the same way). Each of the run's :math:`D` data-dependent draws of expert
``i`` is therefore one :math:`\eta`-DP exponential-mechanism event, and the run is the
adaptive composition of :math:`D` of them (one leaking expert), where the paper composes
:math:`kD` events of :math:`2\eta`. Under the same composition rule the tight rate is then
about :math:`2\sqrt k` times larger. ``tests/online/maximization/test_experts.py`` checks it
exactly: the law of every played sequence of a two-expert run, enumerated in both worlds, for
every pair of neighbouring streams of a small family, stays within the stated epsilon, and a
rate 20 times larger is caught.
"""

from __future__ import annotations

import math
from abc import abstractmethod
from typing import Any, ClassVar

import numpy as np

from ..._guarantee import RegretGuarantee, regret_guarantee
from ..._rng import RNGLike
from ...errors import ParameterTypeError, ValidationError
from ...functions.base import SetFunction
from ...privacy.zcdp import rho_for_target
from .._checks import check_gamma, resolve_gamma
from .._plans import learner_backend
from ..oco.hedge_privacy import backend_sensitivity
from .experts import (
    EXPECTED_VALUE_MAX_TUPLES,
    REWARD_UNITS,
    HedgeExperts,
    clip01,
    masks_of,
    tuple_probabilities,
    tuples_of,
    weighted_values,
)

_EXPLORES_ALWAYS = "every round explores, so the regret is linear"


def _gamma(gamma: float | None, default: float, caller: str, what: str, *,
           warn: bool) -> float:
    return resolve_gamma(gamma, default, caller, what, warn=warn,
                         consequence=_EXPLORES_ALWAYS, stacklevel=5)


class _BanditExperts(HedgeExperts):
    """Bandit machinery: exploration rounds, sparse updates, expected values."""

    # A neighbouring stream changes the value observed in one round; if that round explores
    # (expert i, action a, both data-independent) only G[i, a] moves, by at most 1: the later
    # draws of expert i are each eta-DP and the other experts' draws do not change at all.
    _one_score = True

    def __init__(self, n: int, T: int, k: int, *, epsilon: float, delta: float | None = None,
                 gamma: float | None = None, eta: float | None = None,
                 calibration: str = "tight", composition: str = "auto", distinct: bool = True,
                 backend: str | None = None, rng: RNGLike = None, budget: Any = None):
        # The appendix variants' constructor; BanditDP adds ``cap`` (set before this runs).
        self.n = n
        self.T = T
        self.k = k
        self.epsilon = epsilon
        self.delta = delta
        self.gamma = gamma
        self.eta = eta
        self.calibration = calibration
        self.composition = composition
        self.distinct = distinct
        self.backend = learner_backend(self, backend, rng, type(self).__name__)
        self.rng = rng
        self.budget = budget
        caller = type(self).__name__
        self._check_common_params(caller)
        self._check_bandit(caller)
        self._check_spend()
        self._finish_construction(_BanditExperts)

    def _check_bandit(self, caller: str) -> None:
        if isinstance(self.gamma, str):
            if self.gamma != "paper":
                raise ValidationError(
                    f"The 'gamma' parameter of {caller} must be a probability in (0, 1], "
                    f"'paper' or None (the default); got {self.gamma!r}."
                )
        elif self.gamma is not None:
            if isinstance(self.gamma, bool):
                raise ParameterTypeError(
                    f"The 'gamma' parameter of {caller} must be a number, 'paper' or None; got "
                    f"{self.gamma!r}."
                )
            g = check_gamma(self.gamma, caller)
            if self.eta is None and self.noise_off and not math.isfinite(self._nonprivate_eta(g)):
                raise ValidationError(
                    f"The 'gamma' parameter of {caller} is {g!r}: the default learning rate "
                    "sqrt(k n ln n / (gamma T)) overflows. Pass a larger gamma, or pass eta."
                )
        if self.gamma is None or self.gamma == "paper":
            if int(self.n) < 2:
                raise ValidationError(
                    f"The default exploration rate of {caller} involves ln(n), which is 0 for "
                    "n=1; pass gamma explicitly."
                )

    #: The exponent of the theorem's exploration rate in ``T`` (Algorithm 3 and B.2: 1/3).
    _rate_exponent: ClassVar[float] = 1.0 / 3.0

    #: Whether the tuned exploration rate may trade privacy draws for exploration: the draws of
    #: Algorithm 3 and B.2 grow with gamma; B.1 draws every round whatever gamma.
    _draws_grow_with_gamma: ClassVar[bool] = True

    def _draws_at(self, gamma: np.ndarray) -> np.ndarray:
        """Data-dependent draws per expert the run plans for at exploration rate ``gamma``."""
        T = int(self.T)
        return np.maximum(1.0, np.minimum(np.floor(2.0 * gamma * T), T))

    @abstractmethod
    def _paper_gamma(self) -> tuple[float, str]:
        """The paper's exploration rate (``gamma="paper"``) and its formula."""

    def _resolve_gamma(self, *, warn: bool) -> float:
        """``gamma`` as given; the paper's (``"paper"``, clipped to 1 with a warning); or, by
        default, the tuned rate when its bound says something, else the paper's."""
        caller = type(self).__name__
        if self.gamma is not None and self.gamma != "paper":
            return _gamma(float(self.gamma), 0.0, caller, "", warn=warn)
        if self.gamma is None and self.noise_off:
            return min(1.0, self._nonprivate_gamma())
        if self.gamma is None:
            tuned = self._tuned_gamma()
            if tuned is not None:
                return tuned
            # Vacuous at every rate: the theorem's order T^(-1/3) (T^(-1/4) for B.1) without its
            # constant, which exceeds 1 (every round exploring, the worst play: 0.17 per round
            # on the Uber stream at epsilon = 1, T = 2000, against 0.21 at T^(-1/3)).
            return float(int(self.T)) ** -self._rate_exponent
        default, what = self._paper_gamma()
        return _gamma(None, default, caller, what, warn=warn)

    def _tuned_gamma(self) -> float | None:
        r"""The exploration rate minimising the regret bound of :attr:`guarantee`,
        :math:`\gamma T + k\min(\eta T + kn\ln n/(\gamma\eta), T)`, over
        :math:`\gamma \in (0, 1]`, with :math:`\eta(\gamma)` the learner's own rate at that
        :math:`\gamma`: the smaller of the regret-optimal :math:`\sqrt{kn\ln n/(\gamma T)}`
        and the private rate for the draws :math:`\gamma` implies (the paper's formula, or the
        zCDP reading of the tight one, which is within a few percent of it). ``None`` when the
        bound is vacuous at every :math:`\gamma` (below about :math:`T = 10^8` at
        :math:`\varepsilon = 1`, ``n = 12``, ``k = 3``): its minimiser then explores almost
        never, and the learner replays one nearly uniform draw for the whole run, no better in
        expectation and far more variable. Public parameters only."""
        n, T, k = int(self.n), int(self.T), int(self.k)
        L = k * n * math.log(max(n, 2))
        gammas = np.geomspace(min(1.0, 1.0 / T), 1.0, 400)
        draws = self._draws_at(gammas)
        eps, dlt = float(self.epsilon), float(self.delta)
        # At extreme budgets a rate underflows to 0 or overflows: the bound's terms are then
        # inf (vacuous, so None below) or a NaN that the comparison also rejects, which is the
        # answer, so those floating-point events are not warnings for the user.
        with np.errstate(divide="ignore", over="ignore", invalid="ignore", under="ignore"):
            if self.calibration == "paper":
                real = draws if self._draws_grow_with_gamma else np.full_like(gammas, T)
                eta_priv = eps / (k * np.sqrt(32.0 * real * math.log(k / dlt)))
            else:
                s = backend_sensitivity(self.backend)
                eta_priv = np.sqrt(8.0 * rho_for_target(eps, dlt)
                                   / (self._leaking() * draws)) / s
            eta = np.minimum(np.minimum(eta_priv, np.sqrt(L / (gammas * T))), 1.0)
            bound = gammas * T + k * np.minimum(eta * T + L / (gammas * eta), T)
        j = int(np.argmin(bound))
        if not bound[j] < (1.0 - 1.0 / math.e) * T:
            return None
        return float(gammas[j])

    def _guarantee(self) -> RegretGuarantee | None:
        """Lemmas 2 and 3 of Perez-Salazar and Cummings (Algorithm 3; B.1 and B.2 by the same
        argument): exploration costs at most ``gamma T``, and each expert's Hedge, fed the
        value of ``gamma T / (k n)`` explorations of each action in expectation, has regret at
        most ``eta T + k n ln n / (gamma eta)``."""
        p = self.resolved_params
        n, T, k, eta, gamma = p["n"], p["T"], p["k"], p["eta"], p["gamma"]
        L = k * n * math.log(max(n, 2))
        expert = min(eta * T + L / (gamma * eta), T) if eta <= 1.0 else T
        return regret_guarantee(gamma * T + k * expert, (1.0 - 1.0 / math.e) * T,
                                units=REWARD_UNITS,
                                theorem="Perez-Salazar and Cummings (2021), Lemmas 2 and 3 "
                                        "(Algorithm 3; Appendix B): gamma T + k min(eta T + "
                                        "k n ln n / (gamma eta), T)")

    def _algorithm3_gamma(self) -> tuple[float, str]:
        """The exploration rate of Algorithm 3 (also Appendix B.2's), and its formula."""
        if self.noise_off:
            return self._nonprivate_gamma(), "k (n ln n)^(1/3) T^(-1/3) (non-private)"
        n, T, k = int(self.n), int(self.T), int(self.k)
        return k * ((16.0 * n * math.log(n)) ** 2 / T) ** (1.0 / 3.0), \
            "k ((16 n ln n)^2 / T)^(1/3) (Algorithm 3)"

    def _paper_gamma(self) -> tuple[float, str]:
        return self._algorithm3_gamma()

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

    def _mixture_value(self, f: SetFunction, log_p: np.ndarray, g: float) -> float:
        r""":math:`E[(1-g) f(S) + g\,\mathrm{mean}_{i,e} f(S^{i-1} + e)]` for a tuple drawn from
        the experts' distributions (log-probabilities ``log_p``; exact enumeration of the
        :math:`n^k` tuples)."""
        n, k = int(self.n), int(self.k)
        tup = tuples_of(n, k)
        p = tuple_probabilities(log_p, tup, self.distinct)
        exploit = weighted_values(f, masks_of(tup, n), p) if g < 1.0 else 0.0
        explore = 0.0
        if g > 0.0:
            for i in range(k):
                # E over the first i draws of f(S^{i-1} + e), e uniform: prefixes of length i.
                pre = tuples_of(n, i) if i else np.zeros((1, 0), dtype=np.int64)
                pp = tuple_probabilities(log_p[:i], pre, self.distinct) if i else np.ones(1)
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
            return self._mixture_value(f, self._hedge.log_probabilities(), g)
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
