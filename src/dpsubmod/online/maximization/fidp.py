r"""FI-DP: private online submodular maximization with full information (Perez-Salazar and
Cummings 2021, Algorithm 2), ``k`` ordered Hedge experts fed marginal gains.

See :mod:`dpsubmod.online.maximization.experts` for the setting, the neighbouring relation and
the shared calibration.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..._guarantee import RegretGuarantee, regret_guarantee
from ..._rng import RNGLike
from ...errors import ValidationError
from ...functions.base import SetFunction
from .._plans import learner_backend
from ..tags import NOISE_BACKENDS, LearnerTags
from .experts import (
    EXPECTED_VALUE_MAX_TUPLES,
    REWARD_UNITS,
    HedgeExperts,
    clip01,
    expert_regrets,
    masks_of,
    tuple_probabilities,
    tuples_of,
    weighted_values,
)


class FIDP(HedgeExperts):
    r"""Private online submodular maximization with full information (Perez-Salazar and Cummings
    2021, Algorithm 2 "FI-DP"; the private online greedy of Streeter and Golovin).

    Round ``t``: each expert ``i`` in turn draws :math:`a_t^i` from its Hedge distribution
    restricted to the elements experts ``1..i-1`` did not draw (``distinct=True``, the default;
    the paper draws independently and duplicates collapse, so :math:`|S_t| \le k`); play
    :math:`S_t = \{a_t^1, \dots, a_t^k\}`; observe
    :math:`f_t`; feed expert ``i`` the marginal gains :math:`g_t^i(a) = f_t(S_t^{i-1} + a) -
    f_t(S_t^{i-1})`, :math:`S_t^{i-1} = \{a_t^1, .., a_t^{i-1}\}`, clipped to ``[0, 1]`` (``k n``
    evaluations of :math:`f_t` per round).

    Guarantee: :math:`(\varepsilon, \delta)`-DP for the sequence of played sets, neighbours
    differing in one function (Theorem 5: each expert is :math:`(\varepsilon/k, \delta/k)`-DP
    given the earlier experts, by advanced composition of its ``T`` draws, each
    :math:`2\eta`-DP; the clip keeps the score sensitivity at 1 for any input). The default
    statement composes all ``k (T - 1)`` data-dependent draws by ``composition="auto"`` and
    the default rate is the largest it allows. Expected :math:`(1 - 1/e)`-regret
    :math:`\le k(\eta T + \ln n/\eta)` for :math:`\eta \le 1` (Theorem 6 through the Hedge
    bound of Theorem 3, per expert; :attr:`guarantee`), for monotone submodular
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
    calibration : {"tight", "paper"}, default="tight"
        ``"tight"``: the largest :math:`\eta` whose composed guarantee (under ``composition``)
        is :math:`(\varepsilon, \delta)`, lowered to the regret-optimal
        :math:`\sqrt{\ln n/T}` when the budget allows more (large epsilon; the statement then
        carries the smaller epsilon spent). At epsilon = 1, k = 3, T = 2000 it is about 7 times
        the paper's rate. ``"paper"``: Proposition 2's
        :math:`\eta = \varepsilon/(k\sqrt{32T\ln(k/\delta)})`, which spends about a tenth of
        ``epsilon`` at these sizes; refused where it composes to more than ``epsilon`` (it needs
        :math:`\varepsilon e^{2\eta} \le 4\ln(k/\delta)`).
    composition : {"auto", "paper", "basic", "advanced", "kov", "zcdp"}, default="auto"
        How the statement composes the draws (:func:`~dpsubmod.online.oco.hedge_epsilon`).
    distinct : bool, default=True
        Draw the experts in order, each restricted to the elements the earlier ones did not draw
        (not in the paper). The privacy is unchanged (each draw is the same exponential
        mechanism over fewer candidates, see :meth:`~dpsubmod.online.Hedge.sample`) and so is
        the regret bound: an element already drawn has marginal gain 0, so restricting expert
        ``i`` to the others never lowers its expected gain below its Hedge distribution's. In
        fact every played set contains the one the paper's independent draws would play under
        a coupling, so for monotone :math:`f_t` the reward of every round is at least the
        paper's. ``False``: the paper's independent draws.
    backend : {None, "numpy", "secure", "opendp"} or NoiseBackend, default=None
        Sampler of the Hedge draws (see :class:`~dpsubmod.online.Hedge`).
        ``None`` (the default): ``"secure"`` without ``rng``, a seeded ``"numpy"`` simulation
        with one (:func:`~dpsubmod.privacy.backends.choose_backend`).
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

    _tags = LearnerTags(private=True, feedback="full", problem="maximization",
                        assumption="oblivious", backends=NOISE_BACKENDS)

    def __init__(self, n: int, T: int, k: int, *, epsilon: float, delta: float | None = None,
                 eta: float | None = None, calibration: str = "tight",
                 composition: str = "auto", distinct: bool = True,
                 backend: str | None = None, rng: RNGLike = None, budget: Any = None):
        self.n = n
        self.T = T
        self.k = k
        self.epsilon = epsilon
        self.delta = delta
        self.eta = eta
        self.calibration = calibration
        self.composition = composition
        self.distinct = distinct
        self.backend = learner_backend(self, backend, rng, type(self).__name__)
        self.rng = rng
        self.budget = budget
        self._check_common_params(type(self).__name__)
        self._check_spend()
        self._finish_construction(FIDP)

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
            eta = self._private_eta(T, draws, math.sqrt(math.log(max(n, 2)) / T))
        return {"n": n, "T": T, "k": k, "eta": eta, "draws": draws}

    def _guarantee(self) -> RegretGuarantee | None:
        """Theorem 6 through Theorem 3: each expert's Hedge regret is at most
        ``eta T + ln n / eta`` (``eta <= 1``), and the ``(1 - 1/e)``-regret at most their sum
        (Proposition 3)."""
        p = self.resolved_params
        n, T, k, eta = p["n"], p["T"], p["k"], p["eta"]
        bound = k * (eta * T + math.log(max(n, 2)) / eta) if eta <= 1.0 else math.inf
        return regret_guarantee(bound, (1.0 - 1.0 / math.e) * T, units=REWARD_UNITS,
                                theorem="Perez-Salazar and Cummings (2021), Theorem 6 via "
                                        "Theorem 3 and Proposition 3: k (eta T + ln n / eta)")

    def _reset(self) -> None:
        super()._reset()
        self._a: np.ndarray | None = None

    def _select(self) -> np.ndarray:
        self._log_probs = self._hedge.log_probabilities() if self._needs_probs() else None
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
            if i + 1 < k:  # the gains after the last expert's item feed no one
                st._push(int(a[i]))  # a drawn item: in range(n)
        if not np.isfinite(G).all():
            raise ValidationError(
                f"The round's function returned non-finite marginal gains to "
                f"{type(self).__name__}; every f_t must be finite on all sets."
            )
        G = clip01(G)
        self._realized += G[np.arange(k), a]
        self._hedge.update(G)
        self._fed = True

    def expected_value(self, f: SetFunction) -> float | None:
        """Exact :math:`E[f(S_t)]` over the experts' draws of this round (non-private
        diagnostic; uncounted); ``None`` when :math:`n^k` exceeds 1024."""
        if self._log_probs is None:
            return None
        n, k = int(self.n), int(self.k)
        tup = tuples_of(n, k)
        p = tuple_probabilities(self._log_probs, tup, self.distinct)
        return weighted_values(f, masks_of(tup, n), p)

    def expert_regrets(self) -> np.ndarray:
        r"""Realised regrets :math:`r_i` of the ``k`` experts so far (non-private diagnostic;
        see :func:`expert_regrets`)."""
        self._ensure_state()
        return expert_regrets(self._hedge.gains, self._realized)
