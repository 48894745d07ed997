"""Online learning of sets and points: the learner protocol, streams, comparators and the run
harness, shared by three problems, each in its own package.

Shared (this package):

* :mod:`~dpsubmod.online.protocol`: :class:`Learner` (``select() -> sorted tuple``,
  ``update(feedback)``, ``clone()``, ``privacy``);
* :mod:`~dpsubmod.online.streams`: :class:`Stream` and its kinds (:class:`OneShotStream` reads
  a generator lazily); :mod:`~dpsubmod.online.synthetic`: :func:`stochastic_stream`,
  :func:`modular_path_stream`, :func:`ftl_trap_stream`;
* :mod:`~dpsubmod.online.comparators`: :func:`best_fixed_set`, :class:`Hindsight` and the compact
  :class:`RunningSum` of a stream;
* :mod:`~dpsubmod.online.harness`: :func:`run` and :class:`Trace` (streaming: memory does not
  grow with ``T``);
* :class:`RegretGuarantee`: the theorem's regret bound a learner
  states for its run (``learner.guarantee``, ``trace.guarantee``);
* :mod:`~dpsubmod.online.oco`: the full-information oracles the learners are built on,
  :class:`PFTAL` (Smith and Thakurta 2013), :class:`PrivateFTRL` (Agarwal and Singh 2017) and
  :class:`Hedge` with its private calibration.

By problem:

* :mod:`~dpsubmod.online.minimization`: :class:`SubmodPFTAL`, :class:`BanditSubmodPFTAL`
  (Cardoso and Cummings 2018), :class:`HazanKale`, :class:`BanditHazanKale` (Hazan and Kale
  2012; not private), and the one-point estimator;
* :mod:`~dpsubmod.online.maximization`: :class:`FIDP`, :class:`BanditDP`,
  :class:`NaiveBanditDP`, :class:`PresampledBanditDP` (Perez-Salazar and Cummings 2021),
  :class:`OnlineGreedy`, :class:`BanditOnlineGreedy` (Streeter and Golovin 2008),
  :class:`DPMetaFrankWolfe` (Sadeghi and Fazel 2021), :class:`MetaFrankWolfe` (Chen, Hassani
  and Karbasi 2018), :class:`PFTALMetaFrankWolfe`; and, for i.i.d. rounds,
  :class:`PrivateEpochGreedy` (full information) and :class:`PrivateExploreThenCommit` (bandit
  feedback), private by parallel composition; :class:`BatchedPrivateBandit` (Asi, Raman and
  Talwar 2025) makes a non-private bandit learner private by noisy batch means;
  :class:`PrivateTreeExperts` (full
  information, adaptive adversaries: Hedge experts over tree-aggregated noisy gains);
* :mod:`~dpsubmod.online.convex`: projection-free bandit convex optimization over polytopes,
  :class:`PrivateBandit` (Ene, Nguyen and Vladu 2021), :class:`GarberKretzu`,
  :class:`FlaxmanKalaiMcMahan`, the loss generators :func:`linear_losses` and
  :func:`quadratic_losses`, and :func:`run_convex` (the loss classes are in that package).

This package lists what a user calls: the learners, the streams, the comparator and the run
harnesses. The building blocks (Hedge's calibration, the one-point estimator, the
projections and rounding of :mod:`dpsubmod.polytopes`) are imported from the modules that
define them.
"""

from .._guarantee import RegretGuarantee
from .batched import BatchedPrivateBandit
from .comparators import Hindsight, best_fixed_set
from .convex.baselines import FlaxmanKalaiMcMahan, GarberKretzu
from .convex.harness import ConvexTrace, run_convex
from .convex.loss_streams import linear_losses, quadratic_losses
from .convex.private_bandit import PrivateBandit
from .harness import Trace, run
from .maximization.bandit_appendix import NaiveBanditDP, PresampledBanditDP
from .maximization.bandit_experts import BanditDP
from .maximization.dp_meta_frank_wolfe import DPMetaFrankWolfe
from .maximization.epoch_greedy import PrivateEpochGreedy
from .maximization.explore_then_commit import PrivateExploreThenCommit
from .maximization.fidp import FIDP
from .maximization.meta_frank_wolfe import MetaFrankWolfe, PFTALMetaFrankWolfe
from .maximization.streeter_golovin import BanditOnlineGreedy, OnlineGreedy
from .maximization.tree_experts import PrivateTreeExperts
from .minimization.bandit_pftal import BanditSubmodPFTAL
from .minimization.hazan_kale import BanditHazanKale, HazanKale
from .minimization.pftal import SubmodPFTAL
from .oco.ftrl import PrivateFTRL
from .oco.hedge import Hedge
from .oco.pftal import PFTAL
from .protocol import Learner, OnlineBase
from .streams import (
    FunctionStream,
    IIDStream,
    OneShotStream,
    RecordStream,
    Stream,
    SwitchingStream,
)
from .synthetic import ftl_trap_stream, modular_path_stream, stochastic_stream

__all__ = [
    # shared: protocol, streams, comparator, harness
    "Learner",
    "OnlineBase",
    "Stream",
    "FunctionStream",
    "RecordStream",
    "IIDStream",
    "SwitchingStream",
    "OneShotStream",
    "stochastic_stream",
    "modular_path_stream",
    "ftl_trap_stream",
    "Hindsight",
    "best_fixed_set",
    "run",
    "Trace",
    "RegretGuarantee",
    # full-information oracles
    "PFTAL",
    "PrivateFTRL",
    "Hedge",
    # minimization
    "SubmodPFTAL",
    "BanditSubmodPFTAL",
    "HazanKale",
    "BanditHazanKale",
    # maximization
    "FIDP",
    "BanditDP",
    "NaiveBanditDP",
    "PresampledBanditDP",
    "OnlineGreedy",
    "BanditOnlineGreedy",
    "DPMetaFrankWolfe",
    "MetaFrankWolfe",
    "PFTALMetaFrankWolfe",
    "PrivateEpochGreedy",
    "PrivateExploreThenCommit",
    "BatchedPrivateBandit",
    "PrivateTreeExperts",
    # bandit convex optimization
    "PrivateBandit",
    "GarberKretzu",
    "FlaxmanKalaiMcMahan",
    "linear_losses",
    "quadratic_losses",
    "run_convex",
    "ConvexTrace",
]
