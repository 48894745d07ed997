"""Online learning of sets: the learner protocol, streams, comparators, the run harness, private
online convex optimization (PFTAL) and online submodular minimization (private and not).

Flat re-exports; see the modules for details:

* :mod:`~dpsubmod.online.protocol`: :class:`Learner` (``select() -> sorted tuple``,
  ``update(feedback)``, ``clone()``, ``privacy``);
* :mod:`~dpsubmod.online.streams`: :class:`Stream` and its kinds, :func:`stochastic_stream`,
  :func:`ftl_trap_stream`;
* :mod:`~dpsubmod.online.comparators`: :func:`best_fixed_set` and :class:`Hindsight`;
* :mod:`~dpsubmod.online.harness`: :func:`run` and :class:`Trace`;
* :mod:`~dpsubmod.online.pftal`: :class:`PFTAL` (Smith and Thakurta 2013);
* :mod:`~dpsubmod.online.minimization`: :class:`SubmodPFTAL`, :class:`BanditSubmodPFTAL`
  (Cardoso and Cummings 2018);
* :mod:`~dpsubmod.online.hazan_kale`: :class:`HazanKale`, :class:`BanditHazanKale` (Hazan and
  Kale 2012; not private);
* :mod:`~dpsubmod.online.onepoint`: chains, the exploration distribution and the one-point
  estimator.
"""

from .comparators import Hindsight, all_masks, best_fixed_set, hindsight_max, hindsight_min
from .harness import Trace, run
from .hazan_kale import BanditHazanKale, HazanKale
from .minimization import BanditSubmodPFTAL, SubmodPFTAL
from .onepoint import estimator_law, exploration_probabilities, one_point_gradient
from .pftal import PFTAL, project_box
from .protocol import Learner, OnlineBase, as_selection
from .streams import (
    FunctionStream,
    IIDStream,
    RecordStream,
    Stream,
    SwitchingStream,
    as_stream,
    ftl_trap_stream,
    stochastic_stream,
)

__all__ = [
    "Learner",
    "OnlineBase",
    "as_selection",
    "Stream",
    "FunctionStream",
    "RecordStream",
    "IIDStream",
    "SwitchingStream",
    "stochastic_stream",
    "ftl_trap_stream",
    "as_stream",
    "Hindsight",
    "best_fixed_set",
    "hindsight_min",
    "hindsight_max",
    "all_masks",
    "run",
    "Trace",
    "PFTAL",
    "project_box",
    "SubmodPFTAL",
    "BanditSubmodPFTAL",
    "HazanKale",
    "BanditHazanKale",
    "estimator_law",
    "exploration_probabilities",
    "one_point_gradient",
]

# Online private submodular maximization: Hedge experts (Perez-Salazar and Cummings 2021),
# Streeter-Golovin baselines, private FTRL and (DP) Meta-Frank-Wolfe (Sadeghi and Fazel 2021).
from .experts import (  # noqa: E402
    FIDP,
    BanditDP,
    NaiveBanditDP,
    PresampledBanditDP,
    bandit_failure_probability,
    expert_regrets,
)
from .ftrl import PrivateFTRL, Region, as_region, euclidean_projection, kl_projection  # noqa: E402
from .hedge import (  # noqa: E402
    Hedge,
    hedge_draw_epsilon,
    hedge_epsilon,
    hedge_eta,
    tight_hedge_eta,
)
from .meta_frank_wolfe import (  # noqa: E402
    DPMetaFrankWolfe,
    MetaFrankWolfe,
    PFTALMetaFrankWolfe,
    batch_gradient,
    dpmfw_paper_scale,
    round_point,
)
from .streeter_golovin import BanditOnlineGreedy, OnlineGreedy  # noqa: E402

__all__ += [
    "Hedge",
    "hedge_eta",
    "hedge_epsilon",
    "hedge_draw_epsilon",
    "tight_hedge_eta",
    "FIDP",
    "BanditDP",
    "NaiveBanditDP",
    "PresampledBanditDP",
    "bandit_failure_probability",
    "expert_regrets",
    "OnlineGreedy",
    "BanditOnlineGreedy",
    "PrivateFTRL",
    "Region",
    "as_region",
    "kl_projection",
    "euclidean_projection",
    "DPMetaFrankWolfe",
    "MetaFrankWolfe",
    "PFTALMetaFrankWolfe",
    "batch_gradient",
    "dpmfw_paper_scale",
    "round_point",
]

# Private projection-free bandit convex optimization (Ene, Nguyen and Vladu 2021) and baselines.
from .bandit_convex import FlaxmanKalaiMcMahan, GarberKretzu, PrivateBandit  # noqa: E402
from .convex_harness import ConvexTrace, best_fixed_point, run_convex  # noqa: E402

__all__ += ["PrivateBandit", "GarberKretzu", "FlaxmanKalaiMcMahan", "run_convex",
            "best_fixed_point", "ConvexTrace"]
