"""Online submodular minimization: learners on the Lovász extensions of the round's costs.

* :mod:`~dpsubmod.online.minimization.pftal`: :class:`SubmodPFTAL` (full information) and
  :mod:`~dpsubmod.online.minimization.bandit_pftal`: :class:`BanditSubmodPFTAL` (bandit),
  private (Cardoso and Cummings 2018), on the base, setting and calibrations they share in
  :mod:`~dpsubmod.online.minimization.pftal_base`, with their regret bounds and tuned
  parameters in :mod:`~dpsubmod.online.minimization.bounds`;
* :mod:`~dpsubmod.online.minimization.hazan_kale`: :class:`HazanKale` and
  :class:`BanditHazanKale`, projected subgradient descent (Hazan and Kale 2012; not private);
* :mod:`~dpsubmod.online.minimization.onepoint`: chains of a point of the cube, the exploration
  distribution and the one-point estimator of the bandit learners.
"""

from .onepoint import (
    EstimatorOutcome,
    chain_order,
    chain_subgradient,
    chain_values,
    chain_weights,
    estimator_law,
    exploration_probabilities,
    one_point_gradient,
    sample_index,
)
from .pftal_base import CALIBRATIONS

__all__ = [
    "CALIBRATIONS",
    "chain_order",
    "chain_weights",
    "chain_values",
    "chain_subgradient",
    "exploration_probabilities",
    "sample_index",
    "one_point_gradient",
    "estimator_law",
    "EstimatorOutcome",
]
