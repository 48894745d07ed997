"""The uniform matroid (a cardinality constraint)."""

from __future__ import annotations

import numpy as np

from .._rng import RNGLike, as_generator
from .._validation import check_indices, check_int
from ..errors import InfeasibleConstraintError
from ._checks import check_capacity
from .base import Matroid, set_mask


class UniformMatroid(Matroid):
    r"""The uniform matroid :math:`U(k, n)`: a set is independent iff it has at most ``k`` elements.

    This is the cardinality constraint :math:`|S| \le k` of Nemhauser, Wolsey and Fisher (1978).
    Its bases are the ``k``-subsets and its rank is ``k``.

    Parameters
    ----------
    n : int
        Size of the ground set ``range(n)``, at least 1.
    k : int
        The cardinality bound, ``1 <= k <= n``.

    Raises
    ------
    InfeasibleConstraintError
        If ``k < 1`` (no non-empty solution) or ``k > n`` (more elements requested than exist).

    Examples
    --------
    >>> m = UniformMatroid(4, 2)
    >>> m.can_add([0], [0, 1, 2]).tolist()
    [False, True, True]
    >>> bool(m.can_add([0, 3]).any())
    False
    """

    def __init__(self, n: int, k: int):
        self.n = check_int(n, "n", low=1, caller="UniformMatroid")
        k = check_capacity(k, "k", "UniformMatroid")
        if k < 1 or k > self.n:
            raise InfeasibleConstraintError(
                f"The 'k' parameter of UniformMatroid must be an integer in [1, {self.n}] "
                f"(the ground-set size); got {k}. Pass 1 <= k <= n."
            )
        self.k = k

    @property
    def rank(self) -> int:
        return self.k

    def is_independent(self, S: object) -> bool:
        return int(set_mask(S, self.n).sum()) <= self.k

    def can_add(self, S: object, candidates: object = None) -> np.ndarray:
        mask = set_mask(S, self.n)
        cand = self._cand(candidates)
        if int(mask.sum()) >= self.k:
            return np.zeros(cand.size, dtype=bool)
        return ~mask[cand]

    def rank_of(self, S: object) -> int:
        return min(int(set_mask(S, self.n).sum()), self.k)

    def greedy_independent(self, order: object) -> np.ndarray:
        return check_indices(order, self.n, "order", unique=True)[: self.k]

    def random_base(self, *, rng: RNGLike = None) -> np.ndarray:
        """A uniformly random ``k``-subset, sorted."""
        gen = as_generator(rng)
        return np.sort(gen.choice(self.n, size=self.k, replace=False)).astype(np.int64)

    def __repr__(self) -> str:
        return f"UniformMatroid(n={self.n}, k={self.k})"
