"""Offline optimization: one private data set, one release.

``maximize(f, constraint, method=NAME, ...)`` runs any registered method; ``list_methods()``
names them. ``maximize_ksubmodular`` does the same for k-submodular objectives
(``list_methods(kind="ksubmodular")``), and ``minimize(f)`` minimizes a submodular function
exactly. Each method registers where it is defined; its module loads the first time the method
is asked for (``list_methods()`` loads them all), and every name here loads on first use.

The methods live by family: :mod:`~dpsubmod.offline.discrete` (the greedy baselines, the
exponential-mechanism greedy and the decomposable greedy), :mod:`~dpsubmod.offline.continuous`
(private continuous greedy and DPCG), :mod:`~dpsubmod.offline.ksubmodular` and
:mod:`~dpsubmod.offline.minimization`; what they share (the registry, :class:`Result`, the
stated guarantees of :mod:`~dpsubmod.offline.guarantees`) stands beside them.
"""

from .._lazy import lazy_exports

#: Where each exported name is defined; it loads on first use (PEP 562).
_WHERE = {
    "continuous.continuous_greedy": (
        "private_continuous_greedy", "private_continuous_greedy_layers",
    ),
    "discrete.decomposable": ("private_greedy_decomposable",),
    "continuous.dpcg": ("dpcg", "dpcg_curvature",),
    "discrete.greedy": (
        "greedy", "knapsack_greedy", "lazy_greedy", "random_feasible", "stochastic_greedy",
    ),
    "ksubmodular.methods": (
        "ks_greedy", "ks_matroid_greedy", "ks_private", "ks_private_sampled", "ks_random",
    ),
    "minimization._cut": ("minimize_cut_plus_modular",),
    "minimization._result": ("MinimizeResult",),
    "minimization.minimize": ("minimize",),
    "discrete.private_greedy": ("private_greedy", "private_stochastic_greedy",),
    "registry": (
        "MethodSpec", "get_method", "list_methods", "maximize", "maximize_ksubmodular", "register",
    ),
    "result": ("Diagnostics", "Result",),
}

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

__getattr__, __dir__ = lazy_exports(__name__, _WHERE)
