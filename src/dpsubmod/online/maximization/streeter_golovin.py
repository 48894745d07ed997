r"""The online greedy of Streeter and Golovin (2008): non-private online submodular maximization
with ``k`` ordered experts, with full information or bandit feedback. **Not private.**

These are the baselines of the private experts algorithms of Perez-Salazar and Cummings
(:mod:`dpsubmod.online.maximization.experts`), which privatise them by shrinking the Hedge
learning rate:

* :class:`OnlineGreedy` (full information): expert ``i`` is Hedge over the ground set, fed the
  marginal gains :math:`f_t(S_t^{i-1} + a) - f_t(S_t^{i-1})`; with
  :math:`\eta = \sqrt{\ln n / T}` each expert has regret at most :math:`2\sqrt{T\ln n}`, so the
  :math:`(1 - 1/e)`-regret is at most :math:`2k\sqrt{T\ln n}` (the paper quotes
  :math:`O(\sqrt{kT\ln n})` with gain-dependent tuning).
* :class:`BanditOnlineGreedy` (bandit feedback): the explore/exploit scheme of Appendix B.1 of
  Perez-Salazar and Cummings with the non-private tuning :math:`\eta = \sqrt{k n\ln n/(\gamma
  T)}`, :math:`\gamma = k(n\ln n)^{1/3}T^{-1/3}`, which gives
  :math:`O(k(n\ln n)^{1/3}T^{2/3})`.

They are :class:`~dpsubmod.online.FIDP` and :class:`~dpsubmod.online.NaiveBanditDP` with
``epsilon=math.inf``; ``privacy`` is ``None``.

References
----------
M. Streeter and D. Golovin, "An online algorithm for maximizing submodular functions", NIPS 2008.
O. Perez-Salazar and R. Cummings, AISTATS 2021, Sections 3-4 and Appendix B.1.
"""

from __future__ import annotations

import math

from ..._rng import RNGLike
from ..tags import LearnerTags
from .bandit_appendix import NaiveBanditDP
from .fidp import FIDP


class OnlineGreedy(FIDP):
    r"""Online greedy with full information (Streeter and Golovin 2008); **not private**.

    ``k`` Hedge experts with :math:`\eta = \sqrt{\ln n/T}` (override with ``eta``); expert
    ``i`` learns the best element to add to the choices of experts ``1..i-1`` from the marginal
    gains (clipped to ``[0, 1]``). Expected :math:`(1-1/e)`-regret at most
    :math:`2k\sqrt{T\ln n}` for monotone submodular :math:`f_t \in [0, 1]`.

    Parameters
    ----------
    n, T, k : int
        Ground-set size, horizon, cardinality budget.
    eta : float, optional
        Learning rate.
    distinct : bool, default=True
        Experts draw distinct elements (as in :class:`FIDP`); ``False``: independent draws.
    rng : int, Generator, SeedSequence or None, default=None

    Examples
    --------
    >>> from dpsubmod.functions import Modular
    >>> from dpsubmod.online import run
    >>> stream = [Modular([0.05, 0.5, 0.4, 0.05])] * 2000
    >>> trace = run(OnlineGreedy(4, 2000, 2, rng=0), stream, rng=1)
    >>> sum(S == (1, 2) for S in trace.selections[-100:]), trace.privacy is None
    (100, True)
    """

    _tags = LearnerTags(private=False, feedback="full", problem="maximization",
                        assumption="oblivious", backends=())

    def __init__(self, n: int, T: int, k: int, *, eta: float | None = None,
                 distinct: bool = True, rng: RNGLike = None):
        super().__init__(n, T, k, epsilon=math.inf, eta=eta, distinct=distinct, rng=rng)
        self._finish_construction(OnlineGreedy)


class BanditOnlineGreedy(NaiveBanditDP):
    r"""Online greedy with bandit feedback (Streeter and Golovin 2008, as described in Appendix
    B.1 of Perez-Salazar and Cummings); **not private**.

    Every round each expert draws; with probability :math:`\gamma` the learner explores
    (plays :math:`S_t^{i-1} + a` for uniform ``i``, ``a`` and feeds the observed value to expert
    ``i`` at ``a``), otherwise plays the experts' set. Defaults
    :math:`\gamma = k(n\ln n)^{1/3}T^{-1/3}` (clipped to 1 with a warning) and
    :math:`\eta = \sqrt{k n\ln n/(\gamma T)}`: :math:`O(k(n\ln n)^{1/3}T^{2/3})` regret.

    Parameters
    ----------
    n, T, k : int
        Ground-set size (>= 2 unless ``gamma`` is given), horizon, cardinality budget.
    gamma : float, optional
        Exploration probability.
    eta : float, optional
        Learning rate.
    distinct : bool, default=True
        Experts draw distinct elements (as in :class:`FIDP`); ``False``: independent draws.
    rng : int, Generator, SeedSequence or None, default=None
    """

    _tags = LearnerTags(private=False, feedback="bandit", problem="maximization",
                        assumption="oblivious", backends=())

    def __init__(self, n: int, T: int, k: int, *, gamma: float | None = None,
                 eta: float | None = None, distinct: bool = True, rng: RNGLike = None):
        super().__init__(n, T, k, epsilon=math.inf, gamma=gamma, eta=eta, distinct=distinct,
                         rng=rng)
        self._finish_construction(BanditOnlineGreedy)
