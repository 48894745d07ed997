"""A matroid given by a user's independence oracle, and an exhaustive matroid-axiom checker."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .._validation import check_indices, check_int
from ..errors import ParameterTypeError, ValidationError
from ._checks import require_positive_rank
from .base import Matroid, set_mask


class GenericMatroid(Matroid):
    r"""A matroid on ``range(n)`` defined by a user's independence oracle.

    The oracle receives a ``frozenset`` of ints and returns whether it is independent. It must
    satisfy the matroid axioms: (I1) the empty set is independent; (I2) every subset of an
    independent set is independent; (I3) if ``I`` and ``J`` are independent and
    :math:`|I| < |J|`, some :math:`e \in J \setminus I` makes ``I + e`` independent. Nothing
    else in the library can verify this for large ``n``; the greedy guarantees and the
    polytope oracles are wrong for a non-matroid. Use :meth:`check_axioms` on small instances.

    ``can_add`` calls the oracle once per candidate not in ``S`` (``S + e`` for each), so it
    costs ``len(candidates)`` oracle calls; prefer a dedicated family when one fits.

    Parameters
    ----------
    n : int
        Size of the ground set.
    is_independent_fn : callable(frozenset[int]) -> bool
        The independence oracle.
    rank : int, optional
        The rank, if known; by default it is computed by one greedy pass (``n`` oracle calls).
        A given rank is trusted (it is verified by :meth:`check_axioms`).

    Raises
    ------
    ValidationError
        If the oracle rejects the empty set.
    InfeasibleConstraintError
        If the rank is 0.

    Examples
    --------
    >>> m = GenericMatroid(4, lambda s: len(s & {0, 1}) <= 1 and len(s) <= 2)
    >>> m.rank
    2
    >>> m.check_axioms()
    """

    def __init__(self, n: int, is_independent_fn: Callable[[frozenset], bool],
                 rank: int | None = None):
        caller = "GenericMatroid"
        self.n = check_int(n, "n", low=1, caller=caller)
        if not callable(is_independent_fn):
            raise ParameterTypeError(
                f"The 'is_independent_fn' parameter of {caller} must be callable "
                f"(frozenset -> bool); got {type(is_independent_fn).__name__}."
            )
        self.is_independent_fn = is_independent_fn
        self.oracle_calls = 0
        if not self._oracle(frozenset()):
            raise ValidationError(
                f"The 'is_independent_fn' of {caller} rejects the empty set, so it is not a "
                "matroid (axiom I1). Return True for frozenset()."
            )
        if rank is None:
            self._rank = int(self.greedy_independent(np.arange(self.n)).size)
        else:
            self._rank = check_int(rank, "rank", low=0, high=self.n, caller=caller)
        require_positive_rank(self._rank, caller, "The oracle must accept some singleton.",
                              "rank" if rank is not None else "is_independent_fn")

    def _oracle(self, s: frozenset) -> bool:
        self.oracle_calls += 1
        return bool(self.is_independent_fn(s))

    @property
    def rank(self) -> int:
        return self._rank

    def is_independent(self, S: object) -> bool:
        mask = set_mask(S, self.n)
        return self._oracle(frozenset(np.flatnonzero(mask).tolist()))

    def can_add(self, S: object, candidates: object = None) -> np.ndarray:
        mask = set_mask(S, self.n)
        cand = self._cand(candidates)
        base = frozenset(np.flatnonzero(mask).tolist())
        out = np.zeros(cand.size, dtype=bool)
        for j, e in enumerate(cand.tolist()):
            if not mask[e]:
                out[j] = self._oracle(base | {e})
        return out

    def greedy_independent(self, order: object) -> np.ndarray:
        order = check_indices(order, self.n, "order", unique=True)
        cur: frozenset = frozenset()
        kept = []
        for e in order.tolist():
            nxt = cur | {e}
            if self._oracle(nxt):
                cur = nxt
                kept.append(e)
        return np.asarray(kept, dtype=np.int64)

    def check_axioms(self, max_n: int = 10) -> None:
        """Verify the matroid axioms and the declared rank exhaustively (``2^n`` oracle calls).

        See :func:`check_matroid_axioms`.
        """
        check_matroid_axioms(self, max_n=max_n)

    def __repr__(self) -> str:
        return f"GenericMatroid(n={self.n}, rank={self.rank})"


def _subset_tables(matroid: Matroid, max_n: int, caller: str) -> tuple[np.ndarray, np.ndarray]:
    """Independence and rank of every subset of the ground set, indexed by bitmask."""
    n = matroid.n
    max_n = check_int(max_n, "max_n", low=0, caller=caller)
    if n > max_n:
        raise ValidationError(
            f"{caller} enumerates all 2^n subsets; n = {n} exceeds 'max_n' = {max_n}. Raise "
            "max_n (cost doubles per element) or check a restriction to a small ground set."
        )
    size = 1 << n
    masks = np.arange(size, dtype=np.int64)
    bits = ((masks[:, None] >> np.arange(n)) & 1).astype(bool)
    indep = np.fromiter((matroid.is_independent(bits[m]) for m in range(size)), dtype=bool,
                        count=size)
    pop = bits.sum(axis=1)
    rank = np.where(indep, pop, -1)
    for k in range(1, n + 1):
        layer = masks[(pop == k) & ~indep]
        if layer.size == 0:
            continue
        best = np.full(layer.size, -1, dtype=np.int64)
        for i in range(n):
            has = (layer >> i) & 1 == 1
            best[has] = np.maximum(best[has], rank[layer[has] ^ (1 << i)])
        rank[layer] = best
    return indep, rank


def check_matroid_axioms(matroid: Matroid, max_n: int = 10) -> None:
    """Verify that ``matroid.is_independent`` defines a matroid, by exhaustive enumeration.

    Checks (I1) the empty set is independent, (I2) downward closure, (I3) the exchange axiom,
    and that ``matroid.rank`` is the size of a base. (I3) is checked in its equivalent rank form:
    for a down-closed family, the function ``r(X)`` = size of a largest independent subset of
    ``X`` is submodular iff every maximal independent subset of every ``X`` has the same size,
    i.e. iff the exchange axiom holds (Oxley, *Matroid Theory*, 2nd ed., Section 1.3).

    Parameters
    ----------
    matroid : Matroid
        Any matroid object (the check uses only ``is_independent``, ``n`` and ``rank``).
    max_n : int, default=10
        Largest ground set to enumerate; ``2^n`` oracle calls are made.

    Raises
    ------
    ValidationError
        Naming the violated axiom and a witness (sets as sorted index lists).
    """
    caller = "check_matroid_axioms"
    n = matroid.n
    indep, rank = _subset_tables(matroid, max_n, caller)

    def members(m: int) -> list[int]:
        return [i for i in range(n) if (m >> i) & 1]

    if not indep[0]:
        raise ValidationError("Matroid axiom I1 fails: the empty set is not independent.")
    masks = np.arange(1 << n, dtype=np.int64)
    for i in range(n):
        has = ((masks >> i) & 1) == 1
        bad = masks[has & indep & ~indep[masks ^ (1 << i)]]
        if bad.size:
            m = int(bad[0])
            raise ValidationError(
                f"Matroid axiom I2 (downward closure) fails: {members(m)} is independent but its "
                f"subset {members(m ^ (1 << i))} is not."
            )
    for a in range(n):
        for b in range(a + 1, n):
            free = masks[((masks >> a) & 1 == 0) & ((masks >> b) & 1 == 0)]
            xa, xb, xab = free | (1 << a), free | (1 << b), free | (1 << a) | (1 << b)
            bad = free[rank[xa] + rank[xb] < rank[xab] + rank[free]]
            if bad.size:
                x = int(bad[0])
                big = x | (1 << a) | (1 << b)
                pop = np.array([bin(int(m)).count("1") for m in masks])
                inside_x = ((masks & ~x) == 0) & indep & (pop == rank[x])
                inside_big = ((masks & ~big) == 0) & indep & (pop == rank[big])
                i_set, j_set = int(masks[inside_x][0]), int(masks[inside_big][0])
                raise ValidationError(
                    f"Matroid axiom I3 (exchange) fails: I = {members(i_set)} and J = "
                    f"{members(j_set)} are independent and |I| < |J|, but no element of J - I "
                    "can be added to I."
                )
    full = int(rank[-1])
    if full != matroid.rank:
        raise ValidationError(
            f"The declared rank of {type(matroid).__name__} is {matroid.rank} but its bases have "
            f"{full} elements. Pass rank={full} or rank=None."
        )
