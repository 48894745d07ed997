"""Constraint contracts: the Matroid protocol and the common Constraint interface.

Greedy-type algorithms ask one question per step for every candidate at once:
``constraint.can_add(S, candidates) -> bool mask`` ("is S + e still feasible?"). ``S`` may be
indices, a boolean mask, or any object with a boolean ``mask`` attribute (a FunctionState).
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from .._rng import RNGLike, as_generator
from .._validation import as_mask, check_indices
from ..errors import ValidationError


def set_mask(S: object, n: int) -> np.ndarray:
    """Boolean mask of a set given as indices, a mask, or an object with a ``mask`` attribute."""
    m = getattr(S, "mask", None)
    if isinstance(m, np.ndarray) and m.dtype == np.bool_:
        return m
    return as_mask(S, n, "S")


class Constraint(ABC):
    """A down-closed family of feasible subsets of ``range(n)``."""

    n: int

    @abstractmethod
    def is_feasible(self, S: object) -> bool:
        """Whether ``S`` is feasible."""

    @abstractmethod
    def can_add(self, S: object, candidates: object = None) -> np.ndarray:
        """Boolean mask over ``candidates`` (default all of ``range(n)``): ``S + e`` feasible and
        ``e`` not already in ``S``."""

    @property
    @abstractmethod
    def max_size(self) -> int:
        """The largest size of a feasible set, from the constraint's public parameters alone
        (a private greedy plans this many steps before it sees any data)."""

    def _cand(self, candidates: object) -> np.ndarray:
        if candidates is None:
            return np.arange(self.n)
        return check_indices(candidates, self.n, "candidates")

    def random_maximal(self, *, rng: RNGLike = None) -> np.ndarray:
        """A random maximal feasible set: the elements in a uniformly random order, each kept if it
        still fits.

        This is the "random feasible set" baseline. It is data-independent, so releasing it costs
        no privacy. It is not uniform over maximal sets in general (it is for a uniform matroid).

        Parameters
        ----------
        rng : int, numpy.random.Generator or None, default=None
            Randomness for the order (SPEC 7).

        Returns
        -------
        ndarray of int64
            The chosen elements, sorted.
        """
        gen = as_generator(rng)
        mask = np.zeros(self.n, dtype=bool)
        for e in gen.permutation(self.n):
            if self.can_add(mask, [int(e)])[0]:
                mask[e] = True
        return np.flatnonzero(mask)


class Matroid(Constraint):
    """A matroid on ``range(n)``: ``rank``, ``is_independent(S)`` and vectorised ``can_add``."""

    @property
    @abstractmethod
    def rank(self) -> int:
        """Size of every base."""

    @abstractmethod
    def is_independent(self, S: object) -> bool:
        """Whether ``S`` is independent."""

    @property
    def max_size(self) -> int:
        return int(self.rank)

    def is_feasible(self, S: object) -> bool:
        return self.is_independent(S)

    def rank_of(self, S: object) -> int:
        """Rank of an arbitrary subset, by the greedy (exact for every matroid)."""
        mask = set_mask(S, self.n)
        return int(self.greedy_independent(np.flatnonzero(mask)).size)

    def greedy_independent(self, order: object) -> np.ndarray:
        """The greedy independent subset of ``order``: scan ``order`` and keep each element that
        keeps the current set independent.

        For a matroid the result is a maximal independent subset of the scanned elements (a base
        when ``order`` holds the whole ground set), and scanning by decreasing weight gives a
        maximum-weight one (Rado-Edmonds). Families override this with a fast incremental pass.

        Parameters
        ----------
        order : array-like of int
            Distinct elements of ``range(n)``, in the order to scan.

        Returns
        -------
        ndarray of int64
            The kept elements, in scan order.
        """
        order = check_indices(order, self.n, "order", unique=True)
        cur = np.zeros(self.n, dtype=bool)
        kept = []
        for e in order:
            if self.can_add(cur, [e])[0]:
                cur[e] = True
                kept.append(int(e))
        return np.asarray(kept, dtype=np.int64)

    def random_base(self, *, rng: RNGLike = None) -> np.ndarray:
        """A random base: the greedy over a uniformly random order of the ground set.

        Data-independent, so it costs no privacy. For uniform and partition matroids it is a
        uniformly random base; for other families it is a random base, not a uniform one.

        Parameters
        ----------
        rng : int, numpy.random.Generator or None, default=None
            Randomness for the order (SPEC 7).

        Returns
        -------
        ndarray of int64
            The base, sorted; its size is ``rank``.
        """
        gen = as_generator(rng)
        return np.sort(self.greedy_independent(gen.permutation(self.n)))

    def random_maximal(self, *, rng: RNGLike = None) -> np.ndarray:
        """A random maximal independent set, i.e. :meth:`random_base`."""
        return self.random_base(rng=rng)

    def is_base(self, S: object) -> bool:
        """Whether ``S`` is independent and has ``rank`` elements."""
        mask = set_mask(S, self.n)
        return int(mask.sum()) == self.rank and self.is_independent(mask)

    def extend_to_base(self, S: object, order: object = None) -> np.ndarray:
        """A base containing the independent set ``S``, completed greedily in a fixed order.

        The completion uses ``order`` (default: increasing index), never data, so it is
        post-processing when ``S`` is.

        Returns
        -------
        ndarray of int64
            The base, sorted.
        """
        mask = set_mask(S, self.n)
        if not self.is_independent(mask):
            raise ValidationError(
                f"The set 'S' passed to {type(self).__name__}.extend_to_base is not independent; "
                "only an independent set can be extended to a base."
            )
        rest = np.arange(self.n) if order is None else check_indices(order, self.n, "order",
                                                                       unique=True)
        rest = rest[~mask[rest]]
        scan = np.concatenate([np.flatnonzero(mask), rest])
        return np.sort(self.greedy_independent(scan))
