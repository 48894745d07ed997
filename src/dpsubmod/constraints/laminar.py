"""The laminar matroid."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import scipy.sparse as sp

from .._validation import check_indices, check_int
from ..errors import ParameterTypeError, ValidationError
from ._checks import check_capacities, require_positive_rank
from .base import Matroid, set_mask


class LaminarMatroid(Matroid):
    r"""The laminar matroid: given a laminar family :math:`\mathcal A` of subsets of the ground set
    (any two members are disjoint or nested) with capacities :math:`k_A`, a set ``I`` is
    independent iff :math:`|I \cap A| \le k_A` for every :math:`A \in \mathcal A`.

    It generalises the uniform matroid (one set, the whole ground set) and the partition matroid
    (disjoint sets), e.g. hierarchical quotas (at most 2 sensors per room, 5 per floor, 8 per
    building). Elements in no member are free. Laminarity is checked at construction; a family
    that is not laminar does not in general define a matroid.

    Parameters
    ----------
    sets : sequence of collections of int
        The members of the laminar family.
    capacities : int or sequence of int
        One shared capacity, or one per member.
    n : int, optional
        Size of the ground set (default: one more than the largest index in ``sets``).

    Raises
    ------
    ValidationError
        If two members cross (intersect without being nested); the message names them.
    InfeasibleConstraintError
        A negative capacity, or rank 0.

    Examples
    --------
    >>> m = LaminarMatroid([[0, 1], [2, 3], [0, 1, 2, 3]], capacities=[1, 1, 1], n=5)
    >>> m.rank
    2
    >>> m.can_add([0], [1, 2, 4]).tolist()
    [False, False, True]
    """

    def __init__(self, sets: object, capacities: object, n: int | None = None):
        caller = "LaminarMatroid"
        if not isinstance(sets, Iterable) or isinstance(sets, (str, bytes)):
            raise ParameterTypeError(
                f"The 'sets' argument of {caller} must be a sequence of collections of indices; "
                f"got {type(sets).__name__}."
            )
        members = [np.asarray(list(A) if not isinstance(A, np.ndarray) else A) for A in sets]
        if not members:
            raise ValidationError(f"The 'sets' argument of {caller} must hold at least one set.")
        top = max((int(A.max()) + 1 for A in members if A.size and
                   np.issubdtype(A.dtype, np.number)), default=1)
        self.n = check_int(n, "n", low=1, caller=caller) if n is not None else top
        idx = [check_indices(A, self.n, f"sets[{j}]", caller=caller, unique=True)
               for j, A in enumerate(members)]
        m = len(idx)
        rows = np.repeat(np.arange(m), [a.size for a in idx])
        cols = np.concatenate(idx) if m else np.zeros(0, dtype=np.int64)
        self._inc = sp.csr_array((np.ones(cols.size, dtype=np.int64), (rows, cols)),
                                 shape=(m, self.n))
        self._inc_t = self._inc.T.tocsr()
        self.sets = idx
        self.capacities = check_capacities(capacities, m, "capacities", caller)
        self._check_laminar()
        self._rank = int(self.greedy_independent(np.arange(self.n)).size)
        require_positive_rank(self._rank, caller,
                              "Give some element only members of positive capacity.",
                              "capacities")

    def _check_laminar(self) -> None:
        inter = (self._inc @ self._inc.T).toarray()
        size = np.diag(inter)
        nested = (inter == size[:, None]) | (inter == size[None, :])
        bad = (inter > 0) & ~nested
        if bad.any():
            i, j = map(int, np.argwhere(bad)[0])
            raise ValidationError(
                f"The 'sets' of LaminarMatroid must form a laminar family (any two disjoint or "
                f"nested); sets[{i}] and sets[{j}] cross (they share {int(inter[i, j])} elements "
                "but neither contains the other). Split or merge them."
            )

    @property
    def rank(self) -> int:
        return self._rank

    @property
    def n_sets(self) -> int:
        return int(self.capacities.size)

    def _counts(self, mask: np.ndarray) -> np.ndarray:
        return self._inc @ mask.astype(np.int64)

    def is_independent(self, S: object) -> bool:
        return bool((self._counts(set_mask(S, self.n)) <= self.capacities).all())

    def can_add(self, S: object, candidates: object = None) -> np.ndarray:
        mask = set_mask(S, self.n)
        cand = self._cand(candidates)
        counts = self._counts(mask)
        if (counts > self.capacities).any():
            return np.zeros(cand.size, dtype=bool)
        tight = (counts >= self.capacities).astype(np.int64)
        blocked = (self._inc_t @ tight) > 0
        return ~mask[cand] & ~blocked[cand]

    def greedy_independent(self, order: object) -> np.ndarray:
        order = check_indices(order, self.n, "order", unique=True)
        room = self.capacities.copy()
        ptr, ind = self._inc_t.indptr, self._inc_t.indices
        kept = []
        for e in order.tolist():
            members = ind[ptr[e]:ptr[e + 1]]
            if (room[members] > 0).all():
                room[members] -= 1
                kept.append(e)
        return np.asarray(kept, dtype=np.int64)

    def __repr__(self) -> str:
        return f"LaminarMatroid(n={self.n}, n_sets={self.n_sets}, rank={self.rank})"
