"""The regions the projections act on: a down-closed polytope of :math:`[0, 1]^n` (the box, a
uniform or partition matroid, any other matroid, a knapsack), with what its projections and
its learners need to know (blocks, costs, the matroid, the diameter). Built by
:func:`as_region` from a cardinality ``k``, a matroid, a knapsack or their polytopes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validation import check_int
from ..constraints.base import Matroid
from ..constraints.knapsack import Knapsack
from ..constraints.partition import PartitionMatroid
from ..constraints.uniform import UniformMatroid
from ..errors import GroundSetMismatchError, ParameterTypeError, ValidationError
from .explicit import KnapsackPolytope
from .matroid import MatroidPolytope


@dataclass(frozen=True)
class Region:
    """A down-closed polytope of :math:`[0, 1]^n` with closed-form projections.

    Built by :func:`as_region` from a cardinality ``k``, a matroid, a knapsack or their
    polytopes. ``kind`` is ``"box"``, ``"uniform"``, ``"partition"``, ``"knapsack"`` or
    ``"matroid"`` (a general matroid: Frank-Wolfe projections).

    Attributes
    ----------
    kind : str
    n : int
    blocks : tuple of (ndarray, int)
        ``(elements, capacity)`` per block (``"uniform"``: one block; ``"partition"``: one per
        block; capacities are clipped to the block size).
    costs : ndarray or None
        Knapsack costs.
    budget : float or None
        Knapsack budget.
    matroid : Matroid or None
        The matroid (``"uniform"``, ``"partition"``, ``"matroid"``).
    constraint : object
        The constraint the region relaxes (``k`` or a Constraint), for comparators.
    """

    kind: str
    n: int
    blocks: tuple = ()
    costs: np.ndarray | None = None
    budget: float | None = None
    matroid: Matroid | None = None
    constraint: Any = None

    @property
    def l1_radius(self) -> float:
        """:math:`R = \\max_{x \\in P}\\|x\\|_1` (an upper bound for knapsacks: the fractional
        knapsack value)."""
        if self.kind == "box":
            return float(self.n)
        if self.kind in ("uniform", "partition"):
            return float(sum(c for _, c in self.blocks))
        if self.kind == "matroid":
            return float(self.matroid.rank)  # type: ignore[union-attr]
        c = np.sort(np.asarray(self.costs))
        before = np.cumsum(c) - c
        return float(np.clip((float(self.budget) - before) / c, 0.0, 1.0).sum())

    @property
    def diameter(self) -> float:
        """Upper bound on the l2 diameter (``sqrt(2 R)`` capped by ``sqrt(n)``)."""
        return float(min(math.sqrt(self.n), math.sqrt(2.0 * self.l1_radius)))

    def feasible(self, mask: np.ndarray) -> bool:
        """Whether the set of boolean ``mask`` satisfies the constraint."""
        if self.kind == "box":
            return True
        if self.kind == "knapsack":
            return float(np.asarray(self.costs) @ mask) <= float(self.budget) * (1 + 1e-12)
        return bool(self.matroid.is_independent(mask))  # type: ignore[union-attr]


def as_region(constraint: object, n: int | None = None) -> Region:
    """The :class:`Region` of a constraint.

    Parameters
    ----------
    constraint : int, Matroid, Knapsack, MatroidPolytope, KnapsackPolytope or Region
        ``k`` (the uniform matroid of rank ``k`` on ``n`` elements; ``k >= n`` gives the box),
        any dpsubmod matroid (uniform and partition matroids have closed-form projections, others
        use Frank-Wolfe), a knapsack, or their polytopes.
    n : int, optional
        Ground-set size; required with an int ``k``, checked otherwise.

    Returns
    -------
    Region
    """
    caller = "as_region"
    if isinstance(constraint, Region):
        reg = constraint
    elif isinstance(constraint, MatroidPolytope):
        reg = as_region(constraint.matroid)
    elif isinstance(constraint, KnapsackPolytope):
        reg = as_region(constraint.constraint)
    elif isinstance(constraint, (int, np.integer)) and not isinstance(constraint, bool):
        if n is None:
            raise ValidationError(f"{caller}: pass n with a cardinality constraint k.")
        nn = check_int(n, "n", low=1, caller=caller)
        k = check_int(constraint, "k", low=1, caller=caller,
                      fix="k is the cardinality budget, at least 1.")
        if k >= nn:
            return Region("box", nn, (), constraint=int(constraint))
        return Region("uniform", nn, ((np.arange(nn), k),), matroid=UniformMatroid(nn, k),
                      constraint=int(constraint))
    elif isinstance(constraint, UniformMatroid):
        nn, k = int(constraint.n), int(constraint.k)
        kind = "box" if k >= nn else "uniform"
        reg = Region(kind, nn, ((np.arange(nn), min(k, nn)),), matroid=constraint,
                     constraint=constraint)
    elif isinstance(constraint, PartitionMatroid):
        blocks = tuple((np.asarray(b, dtype=np.int64), int(min(c, len(b))))
                       for b, c in zip(constraint.blocks, constraint.capacities.tolist()))
        reg = Region("partition", int(constraint.n), blocks, matroid=constraint,
                     constraint=constraint)
    elif isinstance(constraint, Matroid):
        reg = Region("matroid", int(constraint.n), (), matroid=constraint, constraint=constraint)
    elif isinstance(constraint, Knapsack):
        reg = Region("knapsack", int(constraint.n), (), costs=np.asarray(constraint.costs),
                     budget=float(constraint.budget), constraint=constraint)
    else:
        raise ParameterTypeError(
            f"The 'constraint' of {caller} must be an int k, a Matroid, a Knapsack or their "
            f"polytope; got {type(constraint).__name__}."
        )
    if n is not None and int(n) != reg.n:
        raise GroundSetMismatchError(
            f"The constraint is on n={reg.n} elements but the learner plays on n={int(n)}."
        )
    return reg
