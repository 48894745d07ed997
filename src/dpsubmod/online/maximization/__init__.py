"""Online submodular maximization: private Hedge experts and (private) Meta-Frank-Wolfe.

* :mod:`~dpsubmod.online.maximization.experts` (shared base),
  :mod:`~dpsubmod.online.maximization.fidp`,
  :mod:`~dpsubmod.online.maximization.bandit_base` (shared bandit machinery),
  :mod:`~dpsubmod.online.maximization.bandit_experts` and
  :mod:`~dpsubmod.online.maximization.bandit_appendix`: :class:`FIDP`, :class:`BanditDP`,
  :class:`NaiveBanditDP`, :class:`PresampledBanditDP` (Perez-Salazar and Cummings 2021);
* :mod:`~dpsubmod.online.maximization.streeter_golovin`: :class:`OnlineGreedy` and
  :class:`BanditOnlineGreedy`, the non-private baselines (Streeter and Golovin 2008);
* :mod:`~dpsubmod.online.maximization.frank_wolfe` (shared machinery),
  :mod:`~dpsubmod.online.maximization.fw_bounds` (regret bounds and tuned ``K``),
  :mod:`~dpsubmod.online.maximization.dp_meta_frank_wolfe`: :class:`DPMetaFrankWolfe` (Sadeghi
  and Fazel 2021), and :mod:`~dpsubmod.online.maximization.meta_frank_wolfe`:
  :class:`MetaFrankWolfe` (Chen, Hassani and Karbasi 2018) and :class:`PFTALMetaFrankWolfe`
  (Perez-Salazar and Cummings 2021, Algorithm 4);
* :mod:`~dpsubmod.online.maximization.epoch_greedy` and
  :mod:`~dpsubmod.online.maximization.explore_then_commit`: :class:`PrivateEpochGreedy` (full
  information) and :class:`PrivateExploreThenCommit` (bandit feedback), private by parallel
  composition over disjoint rounds, with regret bounds for i.i.d. rounds;
* :mod:`~dpsubmod.online.maximization.tree_experts`: :class:`PrivateTreeExperts` (full
  information), Hedge experts over tree-aggregated noisy gains, with a regret bound against
  adaptive adversaries.
"""

from .dp_meta_frank_wolfe import dpmfw_paper_scale
from .epoch_greedy import epoch_lengths
from .experts import CALIBRATIONS, HedgeExperts, bandit_failure_probability, expert_regrets
from .explore_then_commit import etc_bound
from .frank_wolfe import GRADIENT_METHODS, FrankWolfeLearner, batch_gradient

__all__ = [
    "HedgeExperts",
    "CALIBRATIONS",
    "bandit_failure_probability",
    "expert_regrets",
    "FrankWolfeLearner",
    "batch_gradient",
    "dpmfw_paper_scale",
    "GRADIENT_METHODS",
    "epoch_lengths",
    "etc_bound",
]
