"""The knapsack constraint (not a matroid)."""

from __future__ import annotations

import numpy as np

from .._rng import RNGLike, as_generator
from .._validation import check_finite, check_real
from ..errors import InfeasibleConstraintError, ValidationError
from .base import Constraint, set_mask

# Sums of the same costs taken in a different order can differ in the last bits; a relative
# slack this small makes can_add and is_feasible agree on every set.
_REL_TOL = 1e-12


class Knapsack(Constraint):
    r"""A knapsack (budget) constraint: ``S`` is feasible iff :math:`\sum_{e \in S} c_e \le b`.

    Down-closed but not a matroid. Greedy-type algorithms use it through :meth:`can_add`
    ("``e`` not in ``S`` and ``cost(S) + c_e <= budget``") and through ``costs`` (cost-benefit
    ratios). Its continuous relaxation is
    :class:`~dpsubmod.polytopes.KnapsackPolytope` :math:`\{0 \le x \le 1,\ c^\top x \le b\}`.

    Parameters
    ----------
    costs : array-like of float, shape (n,)
        Positive, finite item costs.
    budget : float
        Positive, finite budget.

    Raises
    ------
    InfeasibleConstraintError
        If no single item fits within the budget (every cost exceeds it).
    ValidationError
        If a cost is not positive or not finite, or the budget is not positive.

    Attributes
    ----------
    costs : ndarray of float64
    budget : float
    n : int

    Notes
    -----
    Feasibility is tested with a relative slack of ``1e-12`` of the budget, so that a set whose
    cost equals the budget up to rounding is accepted whatever the summation order.
    """

    def __init__(self, costs: object, budget: float):
        c = check_finite(costs, "costs", caller="Knapsack", ndim=1, dtype=float)
        if c.size == 0:
            raise ValidationError("The 'costs' argument of Knapsack must be non-empty.")
        if c.min() <= 0:
            raise ValidationError(
                f"The 'costs' argument of Knapsack must hold positive costs; item "
                f"{int(np.argmin(c))} costs {c.min()!r}. Drop free items from the ground set or "
                "give them a small positive cost."
            )
        self.budget = check_real(budget, "budget", low=0.0, low_open=True, caller="Knapsack",
                                 fix="Pass a positive budget.")
        if not np.isfinite(self.budget):
            raise ValidationError(
                f"The 'budget' parameter of Knapsack must be finite; got {budget!r}."
            )
        self.costs = c.astype(np.float64, copy=True)
        self.costs.setflags(write=False)
        self.n = int(c.size)
        self._limit = self.budget * (1.0 + _REL_TOL)
        if not (self.costs <= self._limit).any():
            raise InfeasibleConstraintError(
                f"No single item fits the Knapsack: the cheapest costs {self.costs.min()!r} but "
                f"the 'budget' is {self.budget!r}. Raise the budget or lower the costs."
            )

    @property
    def max_size(self) -> int:
        order = np.argsort(self.costs, kind="stable")
        k = int(np.searchsorted(np.cumsum(self.costs[order]), self.budget, side="right"))
        # The knapsack accepts a set whose cost exceeds the budget by rounding (costs 0.1 x 3
        # under budget 0.3): count the cheapest sets it accepts, so that a greedy of k steps
        # stops only when nothing fits.
        mask = np.zeros(self.n, dtype=bool)
        mask[order[:k]] = True
        while k < self.n:
            mask[order[k]] = True
            if not self.is_feasible(mask):
                break
            k += 1
        return k

    def cost(self, S: object) -> float:
        """Total cost of ``S``."""
        return float(self.costs[set_mask(S, self.n)].sum())

    def is_feasible(self, S: object) -> bool:
        return self.cost(S) <= self._limit

    def can_add(self, S: object, candidates: object = None) -> np.ndarray:
        mask = set_mask(S, self.n)
        cand = self._cand(candidates)
        spent = float(self.costs[mask].sum())
        return ~mask[cand] & (spent + self.costs[cand] <= self._limit)

    def random_maximal(self, *, rng: RNGLike = None) -> np.ndarray:
        """A random maximal feasible set: items in random order, each kept if it still fits."""
        gen = as_generator(rng)
        order = gen.permutation(self.n)
        mask = np.zeros(self.n, dtype=bool)
        spent = 0.0
        for e in order:
            if spent + self.costs[e] <= self._limit:
                mask[e] = True
                spent += float(self.costs[e])
        return np.flatnonzero(mask)

    def __repr__(self) -> str:
        return f"Knapsack(n={self.n}, budget={self.budget:.6g})"
