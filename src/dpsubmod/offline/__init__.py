"""Offline optimization: one private data set, one release.

``maximize(f, constraint, method=NAME, ...)`` runs any registered method; ``list_methods()``
names them. ``minimize(f)`` minimizes a submodular function exactly.
"""

from .greedy import greedy, knapsack_greedy, lazy_greedy, random_feasible, stochastic_greedy
from .registry import MethodSpec, get_method, list_methods, maximize, register
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
]

from .minimize import MinimizeResult, minimize, minimize_cut_plus_modular  # noqa: E402

__all__ += ["minimize", "MinimizeResult", "minimize_cut_plus_modular"]
