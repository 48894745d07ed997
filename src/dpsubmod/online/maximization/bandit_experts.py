r"""Private online submodular maximization with bandit feedback (Perez-Salazar and Cummings
2021): Algorithm 3 (:class:`BanditDP`), ``k`` ordered Hedge experts fed the values of exploration
rounds. The appendix variants :class:`NaiveBanditDP` (B.1) and :class:`PresampledBanditDP` (B.2)
are in :mod:`~dpsubmod.online.maximization.bandit_appendix` and importable from here.

See :mod:`dpsubmod.online.maximization.experts` for the setting, the neighbouring relation and
the shared calibration, and :mod:`dpsubmod.online.maximization.bandit_base` for the shared
exploration machinery and accounting.
"""

from __future__ import annotations

import math
from typing import Any

from ..._rng import RNGLike
from ...errors import ValidationError
from ...functions.base import SetFunction
from ..tags import NOISE_BACKENDS, LearnerTags
from .bandit_base import _BanditExperts
from .experts import bandit_failure_probability


class BanditDP(_BanditExperts):
    r"""Private online submodular maximization with bandit feedback (Perez-Salazar and Cummings
    2021, Algorithm 3 "BanditDP"): blocked exploration with replay.

    Round ``t``: with probability :math:`\gamma` (data-independent coin) **explore**: draw
    :math:`i \in \{1..k\}` and :math:`a \in [n]` uniformly, play :math:`S_t^{i-1} + a`, feed the
    observed value (clipped to ``[0, 1]``) to expert ``i`` at ``a`` (every other expert receives
    the zero vector), then let **all** ``k`` experts draw a new tuple. Otherwise **exploit**:
    replay the set in force and ignore the observed value. The first set is drawn from the uniform
    initial weights. Only the :math:`M \sim \mathrm{Bin}(T, \gamma)` post-exploration draws depend
    on the data; replays are post-processing. A changed round reaches at most one score of one
    expert (the explored one), so each of those draws costs :math:`\eta`, once, where the paper
    charges :math:`2\eta` for each of the ``k`` experts.

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
    n, T, k, epsilon, delta, eta, calibration, composition, distinct, backend, rng
        As in :class:`FIDP` (``distinct`` restricts the exploitation tuple's experts, and the
        prefix an exploration extends, to distinct elements; the explored element stays
        uniform over all ``n``). The default ``eta`` (``calibration="tight"``) is the largest rate
        whose :math:`\min(\lfloor 2\gamma T\rfloor, T)` draws compose within
        :math:`(\varepsilon, \delta)`, each :math:`\eta`-DP for the one expert a changed round
        can reach (module :mod:`~dpsubmod.online.maximization.bandit_base`), lowered to the
        non-private :math:`\sqrt{k n\ln n/(\gamma T)}` when the budget allows more;
        ``calibration="paper"`` gives
        :math:`\varepsilon / (k\sqrt{32 \min(2\gamma T, T)\ln(k/\delta)})`; with
        ``epsilon=inf`` it is the non-private rate.
    gamma : float or "paper", optional
        Exploration probability. Default: the rate minimising the regret bound of
        :attr:`guarantee` when that bound says something (it is vacuous below about
        :math:`T = 10^8` at epsilon 1, ``n = 12``, ``k = 3``); otherwise the theorem's order
        :math:`T^{-1/3}` without its constant. ``gamma="paper"``: the theorem's
        :math:`k((16 n\ln n)^2/T)^{1/3}`, clipped to 1 with a warning (it exceeds 1 unless
        :math:`T \ge k^3(16 n\ln n)^2`, and every round then explores). With
        ``epsilon=inf``: :math:`k(n\ln n)^{1/3}T^{-1/3}`.
    cap : bool, default=False
        Stop exploring after the budget :math:`\lfloor 2\gamma T\rfloor` (exact
        :math:`(\varepsilon, \delta)`-DP). Without it the plan also admits the draws beyond
        the budget, which happen only with the failure probability counted in the statement's
        delta.
    budget : Budget or None, default=None
        As in :class:`FIDP`.
    """

    _tags = LearnerTags(private=True, feedback="bandit", problem="maximization",
                        assumption="oblivious", backends=NOISE_BACKENDS)

    _draws_label = "post-exploration draws, budget floor(2 gamma T)"

    def __init__(self, n: int, T: int, k: int, *, epsilon: float, delta: float | None = None,
                 gamma: float | None = None, eta: float | None = None, cap: bool = False,
                 calibration: str = "tight", composition: str = "auto", distinct: bool = True,
                 backend: str | None = None, rng: RNGLike = None, budget: Any = None):
        if not isinstance(cap, bool):
            raise ValidationError(
                f"The 'cap' parameter of {type(self).__name__} must be a bool; got {cap!r}.")
        self.cap = cap
        super().__init__(n, T, k, epsilon=epsilon, delta=delta, gamma=gamma, eta=eta,
                         calibration=calibration, composition=composition, distinct=distinct,
                         backend=backend, rng=rng, budget=budget)
        self._finish_construction(BanditDP)

    def _calibrate(self, *, warn: bool) -> dict[str, Any]:
        n, T, k = int(self.n), int(self.T), int(self.k)
        gamma = self._resolve_gamma(warn=warn)
        budget_real = min(2.0 * gamma * T, float(T))
        m_max = min(math.floor(2.0 * gamma * T), T)
        p_fail = 0.0 if self.cap else bandit_failure_probability(T, gamma)
        if self.eta is not None:
            eta = float(self.eta)
        elif self.noise_off:
            eta = self._nonprivate_eta(gamma)
        else:
            eta = self._private_eta(max(budget_real, 1e-300), m_max,
                                    self._nonprivate_eta(gamma))
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
