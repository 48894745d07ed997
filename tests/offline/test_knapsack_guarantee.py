"""The knapsack private greedy (Mitrovic et al. 2017, knapsack variant): its number of steps and
its stated guarantee.
"""

from __future__ import annotations

import numpy as np

from dpsubmod import maximize
from dpsubmod.constraints import Knapsack
from dpsubmod.functions import Coverage
from dpsubmod.offline.guarantees import max_feasible_size


def test_a_cost_sum_equal_to_the_budget_up_to_rounding_counts_as_feasible():
    # 0.1 + 0.1 + 0.1 > 0.3 in floating point, but the knapsack accepts the three items
    kn = Knapsack([0.1] * 5, budget=0.3)
    assert kn.is_feasible(np.array([1, 1, 1, 0, 0], dtype=bool))
    assert max_feasible_size(kn) == 3
    assert max_feasible_size(Knapsack([0.5, 0.5, 1.0, 1.0, 0.7], budget=1.0)) == 2
    assert max_feasible_size(Knapsack([1.0] * 5, budget=2.0 - 1e-9)) == 1
    f = Coverage.from_records([[i] for i in range(5)] * 4, 5)
    # a budget large enough that the greedy set of three items wins the final choice
    r = maximize(f, kn, method="private_greedy", epsilon=1000.0, rng=0)
    # three cost-benefit steps, the private best singleton and the private choice
    assert r.params["steps"] == 5
    assert len(r.selection) == 3  # the greedy stops only when nothing fits
