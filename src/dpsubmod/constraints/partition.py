"""The partition matroid."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np

from .._rng import RNGLike, as_generator
from .._validation import check_finite, check_indices, check_int
from ..errors import ParameterTypeError, ValidationError
from ._checks import check_capacities, check_capacity, require_positive_rank
from .base import Matroid, set_mask


class PartitionMatroid(Matroid):
    r"""The partition matroid: the ground set is split into blocks :math:`V_1, \dots, V_m` and a set
    is independent iff it has at most :math:`k_j` elements in each block :math:`V_j`.

    Its rank is :math:`\sum_j \min(k_j, |V_j|)`. A block of capacity 0 holds loops; a block whose
    capacity reaches its size is unconstrained.

    Parameters
    ----------
    partition : array-like of int, shape (n,), or sequence of collections of int
        Either *labels*, one block label per element (any integers; blocks are ordered by sorted
        label), or *blocks*, a sequence of disjoint collections of indices that together cover
        ``range(n)`` (a block list is recognised by its first entry being a collection).
    capacities : int, sequence of int, or mapping from label to int
        The capacity of each block: one shared integer, one per block in block order, or (with
        labels) a mapping from label to capacity.
    n : int, optional
        Size of the ground set for a block list (default: the total block size). Ignored, but
        checked, for labels.

    Raises
    ------
    InfeasibleConstraintError
        A negative capacity, or a total rank of 0.
    ValidationError
        Blocks that overlap or leave elements uncovered.

    Attributes
    ----------
    labels : ndarray of int64, shape (n,)
        Block index (0..n_blocks-1) of each element.
    capacities : ndarray of int64, shape (n_blocks,)
    blocks : list of ndarray of int64
        The elements of each block, sorted.

    Examples
    --------
    >>> m = PartitionMatroid([0, 0, 1, 1, 1], capacities=[1, 2])
    >>> m.rank
    3
    >>> m.can_add([0], [1, 2]).tolist()
    [False, True]
    """

    def __init__(self, partition: object, capacities: object, n: int | None = None):
        caller = "PartitionMatroid"
        raw_labels = None
        if isinstance(partition, np.ndarray) and partition.ndim == 1:
            raw_labels = partition
        elif isinstance(partition, Iterable) and not isinstance(partition, (str, bytes)):
            items = list(partition)
            if items and all(isinstance(b, Iterable) and not isinstance(b, (str, bytes))
                             for b in items):
                labels = self._labels_from_blocks(items, n, caller)
                uniq = np.arange(len(items))
            else:
                raw_labels = np.asarray(items)
        else:
            raise ParameterTypeError(
                f"The 'partition' argument of {caller} must be labels (one int per element) or a "
                f"list of blocks; got {type(partition).__name__}."
            )
        if raw_labels is not None:
            a = check_finite(raw_labels, "partition", caller=caller, ndim=1)
            if a.size == 0:
                raise ValidationError(f"The 'partition' argument of {caller} must be non-empty.")
            if not np.issubdtype(a.dtype, np.integer):
                raise ParameterTypeError(
                    f"The 'partition' labels of {caller} must be integers; got dtype {a.dtype}."
                )
            uniq, labels = np.unique(a, return_inverse=True)
            if n is not None and check_int(n, "n", caller=caller) != a.size:
                raise ValidationError(
                    f"The 'n' parameter of {caller} is {n} but 'partition' holds {a.size} labels; "
                    "omit n or give one label per element."
                )
        self.labels = np.asarray(labels, dtype=np.int64).ravel()
        self.n = int(self.labels.size)
        n_blocks = int(uniq.size)
        if isinstance(capacities, Mapping):
            if raw_labels is None:
                raise ParameterTypeError(
                    f"A mapping of 'capacities' needs labels in {caller}; with a block list pass "
                    "one capacity per block."
                )
            missing = [u for u in uniq.tolist() if u not in capacities]
            if missing:
                raise ValidationError(
                    f"The 'capacities' mapping of {caller} has no capacity for label(s) "
                    f"{missing[:5]}."
                )
            caps = np.array([check_capacity(capacities[u], f"capacities[{u}]", caller)
                             for u in uniq.tolist()], dtype=np.int64)
        else:
            caps = check_capacities(capacities, n_blocks, "capacities", caller)
        self.capacities = caps
        self.block_labels = uniq
        self.sizes = np.bincount(self.labels, minlength=n_blocks).astype(np.int64)
        self.blocks = [np.flatnonzero(self.labels == b) for b in range(n_blocks)]
        self._rank = int(np.minimum(self.capacities, self.sizes).sum())
        require_positive_rank(self._rank, caller, "Give at least one block a positive capacity.",
                              "capacities")

    @staticmethod
    def _labels_from_blocks(blocks: list, n: int | None, caller: str) -> np.ndarray:
        idx = [np.asarray(list(b) if not isinstance(b, np.ndarray) else b) for b in blocks]
        total = sum(b.size for b in idx)
        size = total if n is None else check_int(n, "n", low=1, caller=caller)
        labels = np.full(size, -1, dtype=np.int64)
        for j, b in enumerate(idx):
            b = check_indices(b, size, f"partition[{j}]", caller=caller)
            if (labels[b] >= 0).any() or np.unique(b).size != b.size:
                raise ValidationError(
                    f"The blocks of {caller} must be disjoint; block {j} repeats element "
                    f"{int(b[(labels[b] >= 0) | _dups(b)][0])}."
                )
            labels[b] = j
        if (labels < 0).any():
            raise ValidationError(
                f"The blocks of {caller} must cover range({size}); element "
                f"{int(np.flatnonzero(labels < 0)[0])} is in no block. Add it to a block (a "
                "block whose capacity is its size leaves it unconstrained)."
            )
        return labels

    @property
    def rank(self) -> int:
        return self._rank

    @property
    def n_blocks(self) -> int:
        return int(self.capacities.size)

    def _counts(self, mask: np.ndarray) -> np.ndarray:
        return np.bincount(self.labels[mask], minlength=self.n_blocks)

    def is_independent(self, S: object) -> bool:
        return bool((self._counts(set_mask(S, self.n)) <= self.capacities).all())

    def can_add(self, S: object, candidates: object = None) -> np.ndarray:
        mask = set_mask(S, self.n)
        cand = self._cand(candidates)
        counts = self._counts(mask)
        if (counts > self.capacities).any():
            return np.zeros(cand.size, dtype=bool)
        lab = self.labels[cand]
        return ~mask[cand] & (counts[lab] < self.capacities[lab])

    def rank_of(self, S: object) -> int:
        return int(np.minimum(self._counts(set_mask(S, self.n)), self.capacities).sum())

    def greedy_independent(self, order: object) -> np.ndarray:
        order = check_indices(order, self.n, "order", unique=True)
        lab = self.labels[order]
        # Position of each scanned element among the scanned elements of its own block.
        srt = np.argsort(lab, kind="stable")
        first = np.searchsorted(lab[srt], lab[srt], side="left")
        pos = np.empty(order.size, dtype=np.int64)
        pos[srt] = np.arange(order.size) - first
        return order[pos < self.capacities[lab]]

    def random_base(self, *, rng: RNGLike = None) -> np.ndarray:
        """A uniformly random base: a uniform ``min(k_j, |V_j|)``-subset of every block."""
        gen = as_generator(rng)
        return np.sort(self.greedy_independent(gen.permutation(self.n)))

    def __repr__(self) -> str:
        return f"PartitionMatroid(n={self.n}, n_blocks={self.n_blocks}, rank={self.rank})"


def _dups(b: np.ndarray) -> np.ndarray:
    _, first = np.unique(b, return_index=True)
    out = np.ones(b.size, dtype=bool)
    out[first] = False
    return out
