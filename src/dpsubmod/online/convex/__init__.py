"""Projection-free bandit convex optimization over polytopes, private and not.

* :mod:`~dpsubmod.online.convex.learner`: the protocol, :class:`BanditConvexLearner`, and the
  shared geometry in :mod:`~dpsubmod.online.convex.geometry`;
* :mod:`~dpsubmod.online.convex.private_bandit`: :class:`PrivateBandit` (Ene, Nguyen and Vladu
  2021, Algorithm 1);
* :mod:`~dpsubmod.online.convex.baselines`: :class:`GarberKretzu` and
  :class:`FlaxmanKalaiMcMahan` (not private);
* :mod:`~dpsubmod.online.convex.losses` and :mod:`~dpsubmod.online.convex.loss_streams`: convex
  losses and their streams;
* :mod:`~dpsubmod.online.convex.harness`: :func:`run_convex`, :func:`best_fixed_point` and
  :class:`ConvexTrace`.
"""

from .geometry import Exploration, one_point_estimates, paper_noise_scale, regularized_response
from .harness import ConvexHindsight, best_fixed_point
from .learner import BanditConvexLearner
from .loss_streams import ConvexLossStream, LossSequence, as_loss_stream
from .losses import CallableLoss, ConvexLoss, LinearLoss, QuadraticLoss, sum_losses

__all__ = [
    "BanditConvexLearner",
    "Exploration",
    "one_point_estimates",
    "regularized_response",
    "paper_noise_scale",
    "ConvexLoss",
    "LinearLoss",
    "QuadraticLoss",
    "CallableLoss",
    "sum_losses",
    "ConvexLossStream",
    "LossSequence",
    "as_loss_stream",
    "best_fixed_point",
    "ConvexHindsight",
]
