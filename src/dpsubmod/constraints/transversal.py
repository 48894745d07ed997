"""The transversal matroid of a bipartite graph."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import maximum_bipartite_matching

from .._validation import check_finite, check_indices, check_sparse_finite
from ..errors import ValidationError
from ._checks import require_positive_rank
from .base import Matroid, set_mask

_DENSE_LIMIT = 1 << 22  # items x slots below which a dense boolean copy is kept
_KUHN_LIMIT = 256  # larger sets are matched by scipy's maximum_bipartite_matching


class TransversalMatroid(Matroid):
    r"""The transversal matroid of a bipartite graph between items (the ground set) and slots: a set
    of items is independent iff the items can be matched to distinct slots.

    Example: items are ads, slots are positions, and an edge says an ad may go in a position; the
    independent sets are the sets of ads that can be shown together. The rank is the size of a
    maximum matching.

    ``is_independent`` runs one maximum bipartite matching (augmenting paths, or
    ``scipy.sparse.csgraph.maximum_bipartite_matching`` for large sets). ``can_add`` answers for
    every candidate with one matching of ``S`` and one alternating breadth-first search: a slot is
    *reachable* if it is free, or matched to an item of ``S`` that is adjacent to a reachable slot;
    ``S + e`` is independent iff ``e`` is adjacent to a reachable slot (an augmenting path exists).

    Parameters
    ----------
    adjacency : array-like or scipy sparse matrix, shape (n_items, n_slots)
        Nonzero entry ``(e, j)``: item ``e`` may take slot ``j``.

    Raises
    ------
    InfeasibleConstraintError
        If no item has an edge (rank 0).

    Examples
    --------
    >>> m = TransversalMatroid([[1, 0], [1, 0], [0, 1]])
    >>> m.rank
    2
    >>> m.can_add([0], [1, 2]).tolist()
    [False, True]
    """

    def __init__(self, adjacency: object):
        caller = "TransversalMatroid"
        # an entry is an edge when positive; a negative one is a mistake, not a non-edge
        if sp.issparse(adjacency):
            a = check_sparse_finite(adjacency, "adjacency", caller=caller, nonnegative=True)
        else:
            dense = check_finite(adjacency, "adjacency", caller=caller, ndim=2,
                                 nonnegative=True)
            a = sp.csr_array(dense)
        if a.shape[0] == 0 or a.shape[1] == 0:
            raise ValidationError(
                f"The 'adjacency' argument of {caller} must have at least one item and one slot; "
                f"got shape {a.shape}."
            )
        a = sp.csr_array((a != 0).astype(np.int8))
        a.eliminate_zeros()
        self.adjacency = a
        self.n = int(a.shape[0])
        self.n_slots = int(a.shape[1])
        # Small instances answer from a dense boolean copy: scipy's sparse row slicing costs
        # far more than the arithmetic at these sizes.
        self._dense = a.toarray().astype(bool) if self.n * self.n_slots <= _DENSE_LIMIT else None
        ptr, ind = a.indptr, a.indices
        self._adj = [ind[ptr[i]:ptr[i + 1]].tolist() for i in range(self.n)]
        self._rank = int(self.greedy_independent(np.arange(self.n)).size)
        require_positive_rank(self._rank, caller, "Give at least one item an edge to a slot.",
                              "adjacency")

    @property
    def rank(self) -> int:
        return self._rank

    def _match(self, items: np.ndarray) -> np.ndarray:
        """Slot matched to each item of ``items`` in a maximum matching (-1 if unmatched)."""
        if items.size == 0:
            return np.zeros(0, dtype=np.int64)
        if items.size > _KUHN_LIMIT:
            sub = sp.csr_matrix(self.adjacency[items])
            return np.asarray(maximum_bipartite_matching(sub, perm_type="column"), dtype=np.int64)
        owner = np.full(self.n_slots, -1, dtype=np.int64)
        slot_of = np.full(self.n, -1, dtype=np.int64)
        for e in items.tolist():
            self._augment(e, owner, slot_of)
        return slot_of[items]

    def _augment(self, e: int, owner: np.ndarray, slot_of: np.ndarray) -> bool:
        """Kuhn's step: search an alternating path from item ``e`` to a free slot (breadth
        first) and flip it. Returns whether ``e`` was matched."""
        prev_item: dict[int, int] = {}
        queue = [e]
        found = -1
        head = 0
        while head < len(queue) and found < 0:
            item = queue[head]
            head += 1
            for j in self._adj[item]:
                if j in prev_item:
                    continue
                prev_item[j] = item
                if owner[j] < 0:
                    found = j
                    break
                queue.append(int(owner[j]))
        if found < 0:
            return False
        j = found
        while j >= 0:
            item = prev_item[j]
            held = int(slot_of[item])
            owner[j] = item
            slot_of[item] = j
            j = held
        return True

    def is_independent(self, S: object) -> bool:
        items = np.flatnonzero(set_mask(S, self.n))
        return bool((self._match(items) >= 0).all())

    def rank_of(self, S: object) -> int:
        items = np.flatnonzero(set_mask(S, self.n))
        return int((self._match(items) >= 0).sum())

    def _rows(self, items: np.ndarray) -> object:
        return self._dense[items] if self._dense is not None else self.adjacency[items]

    def reachable_slots(self, S: object) -> np.ndarray | None:
        """Slots from which an alternating path reaches a free slot, given a maximum matching
        of the independent set ``S``; ``None`` if ``S`` is not independent."""
        mask = set_mask(S, self.n)
        items = np.flatnonzero(mask)
        slot_of = self._match(items)
        if (slot_of < 0).any():
            return None
        good = np.ones(self.n_slots, dtype=bool)
        good[slot_of] = False
        if items.size == 0:
            return good
        sub = self._rows(items)
        done = np.zeros(items.size, dtype=bool)
        frontier = good.copy()
        while frontier.any():
            hit = (sub @ frontier.astype(np.int64)) > 0
            new = hit & ~done
            if not new.any():
                break
            done |= new
            slots = slot_of[new]
            frontier = np.zeros(self.n_slots, dtype=bool)
            frontier[slots[~good[slots]]] = True
            good |= frontier
        return good

    def can_add(self, S: object, candidates: object = None) -> np.ndarray:
        mask = set_mask(S, self.n)
        cand = self._cand(candidates)
        good = self.reachable_slots(mask)
        if good is None:
            return np.zeros(cand.size, dtype=bool)
        reach = (self._rows(cand) @ good.astype(np.int64)) > 0
        return ~mask[cand] & reach

    def greedy_independent(self, order: object) -> np.ndarray:
        """Scan with one augmenting-path search per element (Kuhn's algorithm)."""
        order = check_indices(order, self.n, "order", unique=True)
        owner = np.full(self.n_slots, -1, dtype=np.int64)
        slot_of = np.full(self.n, -1, dtype=np.int64)
        kept = [e for e in order.tolist() if self._augment(e, owner, slot_of)]
        return np.asarray(kept, dtype=np.int64)

    def __repr__(self) -> str:
        return (f"TransversalMatroid(n={self.n} items, n_slots={self.n_slots}, "
                f"rank={self.rank})")
