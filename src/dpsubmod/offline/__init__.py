"""Offline optimization: one private data set, one release.

``maximize(f, constraint, method=NAME, ...)`` runs any registered method; ``list_methods()``
names them. ``maximize_ksubmodular`` does the same for k-submodular objectives
(``list_methods(kind="ksubmodular")``), and ``minimize(f)`` minimizes a submodular function
exactly. Importing this package registers every method (each registers where it is defined).
"""

from .continuous_greedy import private_continuous_greedy, private_continuous_greedy_layers
from .decomposable import private_greedy_decomposable
from .dpcg import dpcg, dpcg_curvature
from .greedy import greedy, knapsack_greedy, lazy_greedy, random_feasible, stochastic_greedy
from .ksubmodular import (
    ks_greedy,
    ks_matroid_greedy,
    ks_private,
    ks_private_sampled,
    ks_random,
)
from .minimize import MinimizeResult, minimize, minimize_cut_plus_modular
from .private_greedy import private_greedy, private_stochastic_greedy
from .registry import MethodSpec, get_method, list_methods, maximize, maximize_ksubmodular, register
from .result import Diagnostics, Result

__all__ = [
    "maximize",
    "list_methods",
    "get_method",
    "register",
    "MethodSpec",
    "Result",
    "Diagnostics",
    "greedy",
    "lazy_greedy",
    "stochastic_greedy",
    "random_feasible",
    "knapsack_greedy",
    "private_greedy",
    "private_stochastic_greedy",
    "private_greedy_decomposable",
    "private_continuous_greedy",
    "private_continuous_greedy_layers",
    "dpcg",
    "dpcg_curvature",
    "maximize_ksubmodular",
    "ks_greedy",
    "ks_matroid_greedy",
    "ks_random",
    "ks_private",
    "ks_private_sampled",
    "minimize",
    "MinimizeResult",
    "minimize_cut_plus_modular",
]
