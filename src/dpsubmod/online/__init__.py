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
  :class:`FlaxmanKalaiMcMahan`, the convex losses and :func:`run_convex`.

The polytope projections the maximization learners use (:func:`kl_projection`,
:func:`euclidean_projection`, :class:`Region`) and :func:`round_point` live in
:mod:`dpsubmod.polytopes`; they are re-exported here.
"""

from .._guarantee import RegretGuarantee
from ..polytopes.projections import (
    Region,
    as_region,
    euclidean_projection,
    kl_projection,
    project_box,
)
from ..polytopes.rounding import round_point
from .batched import BatchedPrivateBandit, batch_length
from .comparators import (
    Hindsight,
    RunningSum,
    all_masks,
    best_fixed_set,
    hindsight_max,
    hindsight_min,
)
from .convex import (
    BanditConvexLearner,
    CallableLoss,
    ConvexLoss,
    ConvexLossStream,
    ConvexTrace,
    FlaxmanKalaiMcMahan,
    GarberKretzu,
    LinearLoss,
    LossSequence,
    PrivateBandit,
    QuadraticLoss,
    best_fixed_point,
    linear_losses,
    quadratic_losses,
    run_convex,
)
from .harness import Trace, run
from .maximization import (
    FIDP,
    BanditDP,
    BanditOnlineGreedy,
    DPMetaFrankWolfe,
    MetaFrankWolfe,
    NaiveBanditDP,
    OnlineGreedy,
    PFTALMetaFrankWolfe,
    PresampledBanditDP,
    PrivateEpochGreedy,
    PrivateExploreThenCommit,
    PrivateTreeExperts,
    bandit_failure_probability,
    batch_gradient,
    dpmfw_paper_scale,
    expert_regrets,
)
from .minimization import (
    BanditHazanKale,
    BanditSubmodPFTAL,
    HazanKale,
    SubmodPFTAL,
    estimator_law,
    exploration_probabilities,
    one_point_gradient,
)
from .oco import (
    PFTAL,
    Hedge,
    PrivateFTRL,
    hedge_draw_epsilon,
    hedge_epsilon,
    hedge_eta,
    tight_hedge_eta,
)
from .protocol import Learner, OnlineBase, as_selection
from .streams import (
    FunctionStream,
    IIDStream,
    OneShotStream,
    RecordStream,
    Stream,
    SwitchingStream,
    as_stream,
)
from .synthetic import ftl_trap_stream, modular_path_stream, stochastic_stream

__all__ = [
    # shared: protocol, streams, comparators, harness
    "Learner",
    "OnlineBase",
    "as_selection",
    "Stream",
    "FunctionStream",
    "RecordStream",
    "IIDStream",
    "SwitchingStream",
    "OneShotStream",
    "stochastic_stream",
    "modular_path_stream",
    "ftl_trap_stream",
    "as_stream",
    "Hindsight",
    "RunningSum",
    "best_fixed_set",
    "hindsight_min",
    "hindsight_max",
    "all_masks",
    "run",
    "Trace",
    "RegretGuarantee",
    # full-information oracles
    "PFTAL",
    "project_box",
    "Hedge",
    "hedge_eta",
    "hedge_epsilon",
    "hedge_draw_epsilon",
    "tight_hedge_eta",
    "PrivateFTRL",
    "Region",
    "as_region",
    "kl_projection",
    "euclidean_projection",
    # minimization
    "SubmodPFTAL",
    "BanditSubmodPFTAL",
    "HazanKale",
    "BanditHazanKale",
    "estimator_law",
    "exploration_probabilities",
    "one_point_gradient",
    # maximization
    "FIDP",
    "BanditDP",
    "NaiveBanditDP",
    "PresampledBanditDP",
    "bandit_failure_probability",
    "expert_regrets",
    "OnlineGreedy",
    "BanditOnlineGreedy",
    "DPMetaFrankWolfe",
    "MetaFrankWolfe",
    "PFTALMetaFrankWolfe",
    "PrivateEpochGreedy",
    "PrivateExploreThenCommit",
    "BatchedPrivateBandit",
    "batch_length",
    "PrivateTreeExperts",
    "batch_gradient",
    "dpmfw_paper_scale",
    "round_point",
    # bandit convex optimization
    "PrivateBandit",
    "GarberKretzu",
    "FlaxmanKalaiMcMahan",
    "BanditConvexLearner",
    "ConvexLoss",
    "LinearLoss",
    "QuadraticLoss",
    "CallableLoss",
    "ConvexLossStream",
    "LossSequence",
    "linear_losses",
    "quadratic_losses",
    "run_convex",
    "best_fixed_point",
    "ConvexTrace",
]
