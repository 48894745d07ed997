"""Registers the gradient-based private methods (continuous greedy and DPCG).

Imported by :mod:`dpsubmod.offline.builtin`, which the registry loads lazily.
"""

from __future__ import annotations

from .continuous_greedy import private_continuous_greedy, private_continuous_greedy_layers
from .dpcg import dpcg, dpcg_curvature
from .registry import register

register("private_continuous_greedy", private=True,
         summary="Private continuous greedy, one exponential-mechanism base per step, swap "
                 "rounding (Rafiey & Yoshida 2020, Alg. 1); uniform/partition/graphic matroids")(
    private_continuous_greedy)
register("private_continuous_greedy_layers", private=True,
         summary="Rafiey & Yoshida 2020, Alg. 2 (subsampled cover, layers): private, utility "
                 "guarantee not supported; prefer private_continuous_greedy")(
    private_continuous_greedy_layers)
register("dpcg", private=True,
         summary="DPCG: continuous greedy on Laplace/Gaussian-noised gradients, matroid or "
                 "knapsack (Sadeghi & Fazel 2021)")(dpcg)
register("dpcg_curvature", private=True,
         summary="Curvature-aware DPCG, (1 - kappa/e) with a public or privately estimated "
                 "linear term (Sadeghi & Fazel 2021, Lemma 5)")(dpcg_curvature)
