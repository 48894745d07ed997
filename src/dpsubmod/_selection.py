"""The online learners' selection type: a sorted tuple of Python ints that keeps the boolean mask it
was read from.

A learner decides its set as a boolean mask and hands it out as a sorted tuple (hashable, printed
in a fixed order). The environment then evaluates that tuple, and turning hundreds of indices back
into a mask costs more than a cheap learner's whole round; :func:`as_mask` and
:func:`check_indices` (``dpsubmod._validation``) read the kept mask instead. The mask is kept
only for a set of at least ``n / 8`` elements, where it takes no more memory than the tuple's
own pointers (a run's selections may be stored) and where the conversion it saves is costly. The
tuple is the value: equality, hashing, printing, slicing and pickling are a tuple's, and a
selection without a mask is evaluated like any other tuple.
"""

from __future__ import annotations

import numpy as np


class Selection(tuple):
    """A sorted tuple of indices that carries the boolean mask it was built from.

    Build one with :meth:`from_mask`; ``Selection(indices)`` gives the same tuple without a mask.
    The kept mask is a read-only copy, so it always describes the tuple.

    Examples
    --------
    >>> import numpy as np
    >>> S = Selection.from_mask(np.array([False, True, True, False]))
    >>> S, S == (1, 2), S.mask_for(4).tolist()
    ((1, 2), True, [False, True, True, False])
    >>> S.mask_for(5) is None  # another ground set: read the indices instead
    True
    >>> small = Selection.from_mask(np.arange(100) == 7)  # under n / 8 elements: no mask
    >>> small, small.mask_for(100)
    ((7,), None)
    """

    _mask: np.ndarray | None = None

    @classmethod
    def from_mask(cls, mask: np.ndarray) -> Selection:
        """The sorted indices of the true entries of a 1-d boolean ``mask``, with a read-only copy
        of the mask kept for evaluation when they are at least ``mask.size / 8``."""
        sel = cls(np.flatnonzero(mask).tolist())
        if 8 * len(sel) >= np.size(mask):
            m = np.array(mask, dtype=bool)
            m.setflags(write=False)
            sel._mask = m
        return sel

    def mask_for(self, n: int) -> np.ndarray | None:
        """The kept mask (read-only) when it has shape ``(n,)``, else ``None``."""
        m = self._mask
        return m if m is not None and m.shape == (n,) else None
