"""Registers the built-in offline methods (imported lazily by the registry)."""

from __future__ import annotations

from .greedy import greedy, knapsack_greedy, lazy_greedy, random_feasible, stochastic_greedy
from .private_greedy import (
    private_greedy,
    private_greedy_decomposable,
    private_stochastic_greedy,
)
from .registry import register

register("greedy", private=False,
         summary="Greedy (Nemhauser-Wolsey-Fisher); cost-benefit greedy under a knapsack")(greedy)
register("lazy_greedy", private=False,
         summary="Lazy greedy (Minoux): same output as greedy, fewer evaluations")(lazy_greedy)
register("stochastic_greedy", private=False,
         summary="Stochastic greedy (Mirzasoleiman et al. 2015)")(stochastic_greedy)
register("random", private=False, summary="A uniformly random maximal feasible set")(
    random_feasible)
register("knapsack_greedy", private=False,
         summary="Cost-benefit greedy with the best-singleton fallback")(knapsack_greedy)
register("private_greedy", private=True,
         summary="Exponential-mechanism greedy (Mitrovic et al. 2017); matroid or knapsack")(
    private_greedy)
register("private_stochastic_greedy", private=True,
         summary="Exponential-mechanism greedy over a random candidate subset each step")(
    private_stochastic_greedy)
register("private_greedy_decomposable", private=True,
         summary="Decomposable private greedy (Gupta et al. 2010), (eps, delta)-DP")(
    private_greedy_decomposable)

# Private continuous greedy (Rafiey and Yoshida 2020) and DPCG (Sadeghi and Fazel 2021) register
# themselves on import.
from . import builtin_continuous  # noqa: E402, F401
