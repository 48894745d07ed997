"""Full-information online optimization oracles shared by the learners of several problems.

* :mod:`~dpsubmod.online.oco.pftal`: :class:`PFTAL`, private Follow the Approximate Leader
  (Smith and Thakurta 2013) for strongly convex losses: the core of the private minimization
  learners and of :class:`~dpsubmod.online.PFTALMetaFrankWolfe`;
* :mod:`~dpsubmod.online.oco.ftrl`: :class:`PrivateFTRL`, entropic FTRL with tree-aggregated
  loss sums (Agarwal and Singh 2017): the oracles of :class:`~dpsubmod.online.DPMetaFrankWolfe`;
* :mod:`~dpsubmod.online.oco.hedge` and :mod:`~dpsubmod.online.oco.hedge_privacy`:
  :class:`Hedge` with log-space weights and its private calibration: the experts of
  :class:`~dpsubmod.online.FIDP` and the bandit experts.
"""

from .._checks import NOISES
from .ftrl import FTRL_NOISES, check_ftrl_privacy, ftrl_plan
from .hedge_privacy import (
    HEDGE_COMPOSITIONS,
    hedge_draw_epsilon,
    hedge_epsilon,
    hedge_eta,
    tight_hedge_eta,
)

__all__ = [
    "NOISES",
    "FTRL_NOISES",
    "ftrl_plan",
    "check_ftrl_privacy",
    "hedge_eta",
    "hedge_epsilon",
    "hedge_draw_epsilon",
    "tight_hedge_eta",
    "HEDGE_COMPOSITIONS",
]
