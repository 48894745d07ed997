"""What the i.i.d.-rounds learners share: the constraint they play under, the clip of the
rewards, the neighbouring relation, the parallel-composition statement and the maximal
inequality their regret bounds use.

Both learners (:class:`~dpsubmod.online.PrivateEpochGreedy`,
:class:`~dpsubmod.online.PrivateExploreThenCommit`) are private by *parallel composition*: the
rounds are split into blocks fixed by the round index and by earlier released outputs, each
round's feedback enters exactly one mechanism use, and each use is epsilon-DP in that round's
feedback; replacing one round's function therefore moves exactly one use, and the whole run is
epsilon-DP (McSherry 2009, Theorem 4, with the blocks chosen adaptively from released outputs).
"""

from __future__ import annotations

import math
import numbers
from typing import Any

from ..._validation import check_int, check_real
from ...constraints import Constraint, Knapsack, UniformMatroid
from ...errors import GroundSetMismatchError, ParameterTypeError, ValidationError

#: The neighbouring relation of both learners' statements.
NEIGHBOURING = ("function streams differing in one round's function (replaced by any other; "
                "rewards are clipped to [0, bound], so any replacement moves one round's "
                "reward by at most bound)")
#: How their statements compose their mechanism uses.
PARALLEL_RULE = ("parallel composition over disjoint rounds (each round's feedback enters "
                 "exactly one mechanism use; McSherry 2009)")


def as_constraint(k: object, n: int, caller: str) -> Constraint:
    """``k`` (a cardinality) or a dpsubmod Constraint on ``range(n)``, as a Constraint."""
    if isinstance(k, numbers.Integral) and not isinstance(k, bool):
        k = check_int(k, "k", low=1, high=int(n), caller=caller,
                      fix="k is the cardinality budget: 1 <= k <= n, or pass a Matroid or "
                          "Knapsack.")
        return UniformMatroid(int(n), int(k))
    if not isinstance(k, Constraint):
        raise ParameterTypeError(
            f"The 'k' parameter of {caller} must be an int (cardinality) or a dpsubmod "
            f"Constraint (a Matroid or Knapsack); got {type(k).__name__}."
        )
    if k.n != int(n):
        raise GroundSetMismatchError(
            f"The constraint 'k' of {caller} is on a ground set of size {k.n} but the learner "
            f"plays on n={int(n)}; build the constraint on range(n)."
        )
    if k.max_size == 0:
        raise ValidationError(
            f"The constraint 'k' of {caller} admits no non-empty feasible set; relax it.")
    return k


def constraint_ratio(constraint: Constraint) -> tuple[float, str]:
    """The greedy's approximation ratio under ``constraint`` and its name (``0`` for a
    knapsack, where a greedy by marginal gain has no constant ratio)."""
    if isinstance(constraint, UniformMatroid):
        return 1.0 - 1.0 / math.e, "(1 - 1/e)"
    if isinstance(constraint, Knapsack):
        return 0.0, "knapsack"
    return 0.5, "(1/2)"


def expected_max_subgaussian(count: int, samples: int, bound: float) -> float:
    """Upper bound on ``E max`` of ``count`` centred means of ``samples`` independent values in
    an interval of width ``bound``: sub-Gaussian with variance proxy ``bound^2 / (4 samples)``
    (Hoeffding), so ``E max <= bound sqrt(ln(count) / (2 samples))`` (Boucheron, Lugosi and
    Massart 2013, Theorem 2.5)."""
    if count <= 1:
        return 0.0
    return float(bound) * math.sqrt(math.log(count) / (2.0 * samples))


def check_bound(bound: Any, caller: str) -> float:
    """A finite ``bound > 0`` on the rewards."""
    return check_real(bound, "bound", low=0.0, low_open=True, caller=caller,
                      fix="bound is a public upper bound on every f_t (1.0 for rewards in "
                          "[0, 1]).")
