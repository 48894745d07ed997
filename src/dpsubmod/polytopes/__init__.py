"""Polytopes: linear-optimization oracles, interior points and sphere sampling, and oblivious
rounding (swap, knapsack pipage, threshold), and the KL and Euclidean projections onto matroid and
knapsack polytopes.

These are the feasible regions of continuous greedy, DPCG, online Frank-Wolfe and the
projection-free private bandit, which reach them only through ``linear_max``.
"""

from .._lazy import lazy_exports

#: Where each exported name is defined; it loads on first use (PEP 562).
_WHERE = {
    "_hull": ("AffineHull",),
    "interior": (
        "ShrunkPolytope", "SphereSampler", "affine_hull", "direction_basis", "inner_ball",
        "shrink", "sphere_sampler", "vertex_simplex_ball",
    ),
    "base": ("InnerBall", "Polytope"),
    "explicit": ("Box", "KnapsackPolytope", "Simplex"),
    "matroid": ("MatroidBasePolytope", "MatroidPolytope"),
    "oracles": ("as_polytope",),
    "submodular_base": ("SubmodularBasePolytope",),
    "projections": ("euclidean_projection", "kl_projection", "project_box"),
    "region": ("Region", "as_region"),
    "rounding": (
        "ConvexDecomposition", "knapsack_rounding", "round_point", "swap_rounding",
        "threshold_rounding",
    ),
}

__all__ = [
    "Polytope",
    "Box",
    "Simplex",
    "MatroidPolytope",
    "MatroidBasePolytope",
    "SubmodularBasePolytope",
    "KnapsackPolytope",
    "as_polytope",
    "AffineHull",
    "InnerBall",
    "affine_hull",
    "direction_basis",
    "inner_ball",
    "vertex_simplex_ball",
    "shrink",
    "ShrunkPolytope",
    "SphereSampler",
    "sphere_sampler",
    "swap_rounding",
    "ConvexDecomposition",
    "knapsack_rounding",
    "threshold_rounding",
    "round_point",
    "Region",
    "as_region",
    "kl_projection",
    "euclidean_projection",
    "project_box",
]

__getattr__, __dir__ = lazy_exports(__name__, _WHERE)
