"""Knapsack, the constraint registry, and bad-input errors that name the argument."""

from __future__ import annotations

import numpy as np
import pytest

from dpsubmod.constraints import (
    CONSTRAINTS,
    GenericMatroid,
    GraphicMatroid,
    Knapsack,
    LaminarMatroid,
    PartitionMatroid,
    TransversalMatroid,
    UniformMatroid,
    make_constraint,
)
from dpsubmod.errors import (
    DPSubmodError,
    GroundSetMismatchError,
    InfeasibleConstraintError,
    ParameterTypeError,
    ValidationError,
)
from oracles import all_masks


def test_knapsack_can_add_matches_feasibility():
    rng = np.random.default_rng(0)
    for _ in range(10):
        n = int(rng.integers(2, 9))
        costs = rng.uniform(0.1, 1.0, n)
        k = Knapsack(costs, budget=float(rng.uniform(0.5, 2.5)))
        for S in all_masks(n):
            expected = [not S[e] and costs[S].sum() + costs[e] <= k.budget for e in range(n)]
            assert k.can_add(S).tolist() == expected
            assert k.is_feasible(S) == (costs[S].sum() <= k.budget)


def test_knapsack_budget_boundary_is_order_independent():
    # 0.1 + 0.2 + 0.3 exceeds 0.6 by one ulp in floating point; the set still fits.
    k = Knapsack([0.1, 0.2, 0.3], 0.6)
    assert k.is_feasible([0, 1, 2])
    assert k.can_add([0, 1], [2])[0] and k.can_add([1, 2], [0])[0]


def test_knapsack_random_maximal_is_feasible_and_maximal():
    rng = np.random.default_rng(1)
    k = Knapsack(rng.uniform(0.1, 1.0, 12), 2.0)
    for seed in range(20):
        S = k.random_maximal(rng=seed)
        assert k.is_feasible(S)
        assert not k.can_add(S).any()
    assert np.array_equal(k.random_maximal(rng=3), k.random_maximal(rng=3))


def test_registry_maps_names_to_classes():
    assert isinstance(make_constraint("uniform", n=4, k=2), UniformMatroid)
    assert isinstance(make_constraint(" Cardinality ", n=4, k=2), UniformMatroid)
    assert isinstance(make_constraint("partition", partition=[0, 1], capacities=1),
                      PartitionMatroid)
    assert isinstance(make_constraint("graphic-matroid", edges=[(0, 1)]), GraphicMatroid)
    assert isinstance(make_constraint("laminar", sets=[[0]], capacities=1), LaminarMatroid)
    assert isinstance(make_constraint("transversal", adjacency=[[1]]), TransversalMatroid)
    assert isinstance(make_constraint("generic", n=2, is_independent_fn=lambda s: len(s) <= 1),
                      GenericMatroid)
    assert isinstance(make_constraint("knapsack", costs=[1.0], budget=1.0), Knapsack)
    assert {"uniform", "partition", "graphic", "laminar", "transversal", "knapsack"} <= set(
        CONSTRAINTS)


def test_registry_misspelt_name_lists_valid_ones():
    with pytest.raises(ValidationError, match=r"'name'.*'knapsack'.*'uniform'.*'unifrom'.*"
                                              r"Did you mean 'uniform'"):
        make_constraint("unifrom", n=3, k=1)
    with pytest.raises(ParameterTypeError, match="'name'"):
        make_constraint(3)


BAD_INPUTS = [
    (lambda: UniformMatroid(5, 6), InfeasibleConstraintError, "'k'"),
    (lambda: UniformMatroid(5, 0), InfeasibleConstraintError, "'k'"),
    (lambda: UniformMatroid(5, -1), InfeasibleConstraintError, "'k'"),
    (lambda: UniformMatroid(0, 1), ValidationError, "'n'"),
    (lambda: UniformMatroid(5, 2.5), ParameterTypeError, "'k'"),
    (lambda: PartitionMatroid([0, 0, 1], [1, -1]), InfeasibleConstraintError, "'capacities'"),
    (lambda: PartitionMatroid([0, 0, 1], [0, 0]), InfeasibleConstraintError, "rank 0"),
    (lambda: PartitionMatroid([0, 0, 1], [1, 1, 1]), ValidationError, "'capacities'"),
    (lambda: PartitionMatroid([0, 0, 1], [1.5, 1]), ParameterTypeError, "'capacities'"),
    (lambda: PartitionMatroid([[0, 1], [1, 2]], 1), ValidationError, "disjoint"),
    (lambda: PartitionMatroid([[0, 1], [3]], 1, n=4), ValidationError, "cover"),
    (lambda: PartitionMatroid([0.5, 1.0], 1), ParameterTypeError, "'partition'"),
    (lambda: PartitionMatroid([0, 1], {0: 1}), ValidationError, "'capacities'"),
    (lambda: GraphicMatroid([(0, 0), (1, 1)]), InfeasibleConstraintError, "rank 0"),
    (lambda: GraphicMatroid([(0, 1)], n_nodes=1), ValidationError, "'n_nodes'"),
    (lambda: GraphicMatroid([(0, 1, 2)]), ValidationError, "'edges'"),
    (lambda: GraphicMatroid([(0, -1)]), ValidationError, "'edges'"),
    (lambda: GraphicMatroid([]), ValidationError, "'edges'"),
    (lambda: LaminarMatroid([[0, 1], [1, 2]], 1), ValidationError, r"sets\[0\] and sets\[1\]"),
    (lambda: LaminarMatroid([[0, 1]], [-1]), InfeasibleConstraintError, "'capacities'"),
    (lambda: LaminarMatroid([[0, 1]], [0]), InfeasibleConstraintError, "rank 0"),
    (lambda: LaminarMatroid([[0, 5]], 1, n=3), ValidationError, r"'sets\[0\]'"),
    (lambda: TransversalMatroid(np.zeros((3, 2))), InfeasibleConstraintError, "rank 0"),
    (lambda: TransversalMatroid([[np.nan, 1.0]]), ValidationError, "'adjacency'"),
    (lambda: TransversalMatroid([1, 0]), ValidationError, "'adjacency'"),
    (lambda: GenericMatroid(3, lambda s: False), ValidationError, "'is_independent_fn'"),
    (lambda: GenericMatroid(3, "oracle"), ParameterTypeError, "'is_independent_fn'"),
    (lambda: GenericMatroid(3, lambda s: len(s) <= 1, rank=4), ValidationError, "'rank'"),
    (lambda: Knapsack([1.0, -1.0], 1.0), ValidationError, "'costs'"),
    (lambda: Knapsack([1.0, np.inf], 1.0), ValidationError, "'costs'"),
    (lambda: Knapsack([1.0, 2.0], 0.0), ValidationError, "'budget'"),
    (lambda: Knapsack([1.0, 2.0], np.inf), ValidationError, "'budget'"),
    (lambda: Knapsack([3.0, 4.0], 2.0), InfeasibleConstraintError, "'budget'"),
    (lambda: Knapsack([], 2.0), ValidationError, "'costs'"),
    (lambda: UniformMatroid(4, 2).can_add([0], [7]), ValidationError, "'candidates'"),
    (lambda: UniformMatroid(4, 2).is_independent(np.zeros(3, dtype=bool)),
     GroundSetMismatchError, "'S'"),
    (lambda: UniformMatroid(4, 2).greedy_independent([0, 0]), ValidationError, "'order'"),
]


@pytest.mark.parametrize(("build", "exc", "pattern"), BAD_INPUTS)
def test_bad_input_names_the_argument(build, exc, pattern):
    with pytest.raises(exc, match=pattern) as info:
        build()
    assert isinstance(info.value, DPSubmodError)


def test_make_constraint_names_a_wrong_or_missing_argument():
    # Before: a TypeError from the constructor's signature.
    with pytest.raises(ValidationError, match="takes no argument.*'kk'.*Its arguments are: n, k"):
        make_constraint("uniform", n=4, kk=2)
    with pytest.raises(ValidationError, match="needs the argument.*'budget'"):
        make_constraint("knapsack", costs=[1.0])


@pytest.mark.parametrize("build,arg", [
    (lambda: PartitionMatroid([0, 0, 1], [0, 0]), "capacities"),
    (lambda: GraphicMatroid([(0, 0), (1, 1)]), "edges"),
    (lambda: LaminarMatroid([[0, 1]], [0]), "capacities"),
    (lambda: TransversalMatroid(np.zeros((3, 2))), "adjacency"),
    (lambda: GenericMatroid(3, lambda s: not s), "is_independent_fn"),
])
def test_a_rank_zero_matroid_is_refused_naming_the_argument(build, arg):
    with pytest.raises(InfeasibleConstraintError, match=f"The '{arg}' argument .* rank 0"):
        build()


def test_knapsack_budget_infinity_is_refused_by_the_shared_check():
    with pytest.raises(ValidationError, match="'budget' parameter of Knapsack must be a finite"):
        Knapsack([1.0, 2.0], np.inf)


def test_transversal_refuses_a_negative_adjacency_entry():
    # Before: any nonzero entry, negative included, counted as an edge.
    import scipy.sparse as sp

    adj = np.array([[1.0, 1.0], [0.0, -0.5]])
    for a in (adj, sp.csr_array(adj)):
        with pytest.raises(ValidationError, match="'adjacency'.*non-negative"):
            TransversalMatroid(a)
