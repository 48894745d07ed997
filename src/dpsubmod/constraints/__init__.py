"""Constraints: matroids (independence oracle plus vectorised ``can_add``) and knapsack.

Every family answers ``can_add(S, candidates) -> bool mask`` for all candidates in one call,
validates its inputs at construction, and raises
:class:`~dpsubmod.errors.InfeasibleConstraintError` when no non-empty solution exists.
"""

from .base import Constraint, Matroid, set_mask
from .generic import GenericMatroid, check_matroid_axioms
from .graphic import GraphicMatroid
from .knapsack import Knapsack
from .laminar import LaminarMatroid
from .partition import PartitionMatroid
from .registry import CONSTRAINTS, make_constraint
from .transversal import TransversalMatroid
from .uniform import UniformMatroid

__all__ = [
    "Constraint",
    "Matroid",
    "set_mask",
    "UniformMatroid",
    "PartitionMatroid",
    "GraphicMatroid",
    "LaminarMatroid",
    "TransversalMatroid",
    "GenericMatroid",
    "Knapsack",
    "check_matroid_axioms",
    "CONSTRAINTS",
    "make_constraint",
]
