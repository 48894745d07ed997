"""numpy and standard-library forms of the special functions the releases use (private module).

The selection mechanisms' exact laws and the optimal composition run on the select path, which
must not load scipy (importing ``scipy.special`` alone costs more than numpy); these compute the
same values as ``scipy.special.logsumexp`` and ``scipy.special.gammaln`` to a few ulps (tests
compare them).
"""

from __future__ import annotations

import math

import numpy as np


def logsumexp(x: np.ndarray) -> float:
    """``log(sum(exp(x)))`` of a non-empty 1-d array whose largest entry is finite.

    Shifted by the largest entry, and with the largest entries taken out of the sum (each adds
    exactly 1), so that ``log1p`` keeps the small remainder: the steps of
    ``scipy.special.logsumexp``.
    """
    top = x.max()
    at_top = x == top
    count = int(np.count_nonzero(at_top))
    # the largest entries are set to -inf in place rather than removed, so that numpy's pairwise
    # summation adds the rest in the same order as scipy does
    rest = float(np.exp(np.where(at_top, -np.inf, x - top)).sum()) / count
    return math.log1p(rest) + math.log(count) + float(top)


def gammaln(x: np.ndarray) -> np.ndarray:
    """``log |Gamma(x)|`` element-wise (:func:`math.lgamma`), for positive ``x``."""
    return np.fromiter((math.lgamma(v) for v in np.asarray(x, dtype=np.float64).ravel()),
                       dtype=np.float64, count=np.size(x)).reshape(np.shape(x))
