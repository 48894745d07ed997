"""Polytopes reached through a linear-optimization oracle.

Continuous greedy, DPCG (Sadeghi and Fazel 2021), online Frank-Wolfe and the projection-free
private bandit of Ene, Nguyen and Vladu (2021) touch their feasible region only through
``linear_max(w) -> vertex`` (a maximizer of ``<w, x>``), so every polytope here provides an exact
one, with deterministic tie-breaking (equal weights go to the lower index):

======================  ============================================  ===================
class                   set                                           linear_max
======================  ============================================  ===================
Box                     ``{lo <= x <= hi}``                           sign rule
Simplex                 ``{x >= 0, sum x = s}`` (or ``<= s``)         best coordinate
MatroidPolytope         ``conv{1_I : I independent}``                 greedy
MatroidBasePolytope     ``conv{1_B : B base}``                        greedy
SubmodularBasePolytope  ``{x(S) <= f(S) for all S, x(V) = f(V)}``     Edmonds' greedy
KnapsackPolytope        ``{0 <= x <= 1, c.x <= b}``                   fractional knapsack
======================  ============================================  ===================

The oracles are data-independent given ``w``: a private algorithm that feeds them a privatized
``w`` releases their output as post-processing.
"""

from __future__ import annotations

from ..constraints.base import Constraint, Matroid
from ..constraints.knapsack import Knapsack
from ..errors import ParameterTypeError
from .base import Polytope
from .explicit import KnapsackPolytope
from .matroid import MatroidBasePolytope, MatroidPolytope


def as_polytope(obj: object, *, base: bool = False) -> Polytope:
    """The polytope of a constraint: a Matroid gives its :class:`MatroidPolytope` (or, with
    ``base=True``, its :class:`MatroidBasePolytope`), a Knapsack its :class:`KnapsackPolytope`;
    a Polytope is returned unchanged."""
    if isinstance(obj, Polytope):
        return obj
    if isinstance(obj, Matroid):
        return MatroidBasePolytope(obj) if base else MatroidPolytope(obj)
    if isinstance(obj, Knapsack):
        return KnapsackPolytope(obj)
    if isinstance(obj, Constraint):
        raise ParameterTypeError(
            f"No polytope is defined for {type(obj).__name__}; pass a Matroid, a Knapsack or a "
            "Polytope."
        )
    raise ParameterTypeError(
        f"Expected a Matroid, a Knapsack or a Polytope; got {type(obj).__name__}."
    )
