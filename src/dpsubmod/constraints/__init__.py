"""Constraints: matroids (independence oracle plus vectorised ``can_add``) and knapsack.

Every family answers ``can_add(S, candidates) -> bool mask`` for all candidates in one call,
validates its inputs at construction, and raises
:class:`~dpsubmod.errors.InfeasibleConstraintError` when no non-empty solution exists.
"""

from .._lazy import lazy_exports

#: Where each exported name is defined; it loads on first use (PEP 562).
_WHERE = {
    "base": ("Constraint", "Matroid", "set_mask",),
    "generic": ("GenericMatroid", "check_matroid_axioms",),
    "graphic": ("GraphicMatroid",),
    "knapsack": ("Knapsack",),
    "laminar": ("LaminarMatroid",),
    "partition": ("PartitionMatroid",),
    "registry": ("CONSTRAINTS", "make_constraint",),
    "transversal": ("TransversalMatroid",),
    "uniform": ("UniformMatroid",),
}

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

__getattr__, __dir__ = lazy_exports(__name__, _WHERE)
