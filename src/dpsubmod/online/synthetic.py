r"""Synthetic streams: the planted stochastic minimization environment, a modular-plus-path-cut
stream whose best fixed set is the whole ground set, and the stream that defeats Follow the
Leader (the instances on which the regret rates are tight)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator

import numpy as np

from .._rng import RNGLike
from .._validation import check_finite, check_int, check_real
from ..errors import ValidationError
from ..functions.base import SetFunction
from ..functions.combinators import Scaled, Sum
from ..functions.feature_based import FeatureBased
from ..functions.graph_cut import GraphCut
from ..functions.modular import Modular
from .streams import FunctionStream, Stream


class _SignStream(Stream):
    """i.i.d. sign vectors; one function object per sign pattern, reused (see stochastic_stream)."""

    def __init__(self, n: int, T: int, p_plus: np.ndarray,
                 make: Callable[[np.ndarray], SetFunction], rng: RNGLike):
        self.n, self.T, self.bound, self.rng = n, T, 1.0, rng
        self._p = p_plus
        self._make = make
        self._cache: dict[int, SetFunction] = {}

    def _generate(self, gen: np.random.Generator) -> Iterator[SetFunction]:
        weights = 1 << np.arange(self.n, dtype=np.int64)
        # All draws at once: T x n uniforms in one call, then one pattern code per round.
        codes = (gen.random((self.T, self.n)) < self._p) @ weights
        for code in codes.tolist():
            f = self._cache.get(code)
            if f is None:
                signs = np.where((code >> np.arange(self.n)) & 1, 1.0, -1.0)
                f = self._cache[code] = self._make(signs)
            yield f


def ftl_trap_stream(weights: object, T: int) -> Stream:
    r"""The modular stream that defeats Follow the Leader: :math:`w/2`, then :math:`-w, w, -w,
    \dots`

    Each element's cumulative cost swings between :math:`w_a/2` and :math:`-w_a/2`, so a learner
    that follows the leader too closely is wrong every round, and any learner with a step size
    tuned to :math:`T` pays :math:`\Theta(\sqrt T)` regret against the best fixed set. It is the
    stream on which the full-information regret rates of Hazan and Kale (2012) and of Cardoso and
    Cummings (2019, Theorem 7) are tight.

    Parameters
    ----------
    weights : array-like of shape (n,)
        The modular costs; the positive and the negative weights each sum to at most 1 in
        absolute value, so that every value lies in ``[-1, 1]``.
    T : int
        Number of rounds.

    Examples
    --------
    >>> s = ftl_trap_stream([0.6, -0.4], 4)
    >>> [f([0]) for f in s]
    [0.3, -0.6, 0.6, -0.6]
    """
    T = check_int(T, "T", low=1, caller="ftl_trap_stream")
    w = np.asarray(weights, dtype=float)
    if w.ndim != 1 or w.size == 0 or not np.isfinite(w).all():
        raise ValidationError("The 'weights' argument of ftl_trap_stream must be a non-empty "
                              "1-d array of finite numbers.")
    reach = max(w[w > 0].sum(), -w[w < 0].sum())
    if reach > 1.0 + 1e-12:
        raise ValidationError("The 'weights' argument of ftl_trap_stream must keep every value "
                              "in [-1, 1]: the positive weights and the negative weights must "
                              f"each sum to at most 1 in absolute value; got {reach:.4g}. "
                              "Rescale the weights.")
    half, plus, minus = Modular(0.5 * w), Modular(w), Modular(-w)
    return FunctionStream([half] + [minus if t % 2 else plus for t in range(1, T)], bound=1.0)


def stochastic_stream(n: int, T: int, *, means: object = None, coupling: float = 0.5,
                      rng: RNGLike = None) -> Stream:
    r"""A stochastic minimization environment with a planted structure and range ``[-1, 1]``.

    .. math::

        f_t(S) = \frac{1}{Z}\Bigl(\sum_{i \in S} c_t(i) + \lambda \sqrt{|S|}\Bigr),
        \qquad Z = n + \lambda\sqrt n,

    with independent signs :math:`c_t(i) \in \{-1, +1\}`, :math:`\mathbb{E}\, c_t(i) = m_i`, and
    coupling :math:`\lambda \ge 0` (a concave function of the cardinality, so each :math:`f_t` is
    submodular and not modular when :math:`\lambda > 0`). Elements with negative mean lower the
    expected cost and belong to the planted minimizer; coordinates with mean 0 make the best set
    in hindsight exploit the noise, which costs every learner :math:`\Theta(\sqrt T)` regret (the
    classical lower-bound construction), so the regret of a learner that learns at the optimal
    rate grows like :math:`\sqrt T` on this stream.

    Since there are only :math:`2^n` sign patterns, the stream reuses one function object per
    pattern (``Modular + Scaled(FeatureBased)``), which makes exact comparators cheap.

    Parameters
    ----------
    n : int
        Ground-set size (at most 20).
    T : int
        Rounds.
    means : array-like of float in [-1, 1], shape (n,), optional
        :math:`m_i`; default ``linspace(-0.5, 0.5, n)`` (negative, zero and positive means).
    coupling : float, default=0.5
        :math:`\lambda`.
    rng : int, Generator, SeedSequence or None, default=None

    Returns
    -------
    Stream
        With ``bound = 1``.
    """
    n = check_int(n, "n", low=1, high=20, caller="stochastic_stream")
    T = check_int(T, "T", low=1, caller="stochastic_stream")
    lam = check_real(coupling, "coupling", low=0.0, caller="stochastic_stream")
    if means is None:
        m = np.linspace(-0.5, 0.5, n)
    else:
        m = check_finite(means, "means", caller="stochastic_stream", ndim=1).astype(float)
        if m.shape != (n,) or m.min() < -1 or m.max() > 1:
            raise ValidationError(
                f"The 'means' argument of stochastic_stream must hold n={n} values in [-1, 1]; "
                f"got shape {m.shape}."
            )
    Z = n + lam * math.sqrt(n)
    card = Scaled(FeatureBased(np.ones((n, 1))), lam / Z) if lam > 0 else None

    def make(signs: np.ndarray) -> SetFunction:
        mod = Modular(signs / Z)
        return mod if card is None else Sum([mod, card])

    return _SignStream(n, T, (1.0 + m) / 2.0, make, rng)


def modular_path_stream(n: int, T: int, *, means: object = None, cut: float = 0.5,
                        rng: RNGLike = None) -> Stream:
    r"""Modular costs plus a path cut, with range ``[-1, 1]``: a stream whose best fixed set is
    the whole ground set.

    .. math::

        f_t(S) = \frac{1}{Z}\Bigl(\sum_{i \in S} c_t(i)
                 + w \sum_{i=1}^{n-1} [\,|S \cap \{i, i+1\}| = 1\,]\Bigr),
        \qquad Z = n + w(n - 1),

    with independent signs :math:`c_t(i) \in \{-1, +1\}`, :math:`\mathbb{E}\, c_t(i) = m_i`,
    and the cut of the path :math:`1 - 2 - \dots - n` with weight :math:`w \ge 0` on each edge
    (submodular; not modular when :math:`w > 0` and :math:`n \ge 2`). With every mean negative
    the expected cost is lowest at the whole ground set (no edge is cut and every element lowers
    the cost), and the empty set, which a learner regularised towards the origin favours, pays
    :math:`-\sum_i m_i / Z` per round more: 0.327 with the defaults at ``n = 4``. It is the
    counterpart of the karate-club stream of the experiments, on which the empty set is a good
    play.

    Since there are only :math:`2^n` sign patterns, the stream reuses one function object per
    pattern, which makes exact comparators cheap.

    Parameters
    ----------
    n : int
        Ground-set size (at most 20).
    T : int
        Rounds.
    means : array-like of float in [-1, 1], shape (n,), optional
        :math:`m_i`; default ``linspace(-0.6, -0.3, n)``.
    cut : float, default=0.5
        :math:`w`, the weight of each path edge.
    rng : int, Generator, SeedSequence or None, default=None

    Returns
    -------
    Stream
        With ``bound = 1``.

    Examples
    --------
    >>> s = modular_path_stream(4, 3, rng=3)
    >>> [round(f([1]), 3) for f in s]        # one element, two cut edges: (c_t(1) + 1) / 5.5
    [0.364, 0.0, 0.364]
    >>> [round(f([0, 1, 2, 3]), 3) for f in s]    # no edge cut: the sum of the signs / 5.5
    [0.0, 0.0, -0.364]
    """
    caller = "modular_path_stream"
    n = check_int(n, "n", low=1, high=20, caller=caller)
    T = check_int(T, "T", low=1, caller=caller)
    w = check_real(cut, "cut", low=0.0, caller=caller)
    if means is None:
        m = np.linspace(-0.6, -0.3, n)
    else:
        m = check_finite(means, "means", caller=caller, ndim=1).astype(float)
        if m.shape != (n,) or m.min() < -1 or m.max() > 1:
            raise ValidationError(
                f"The 'means' argument of {caller} must hold n={n} values in [-1, 1]; got "
                f"shape {m.shape}."
            )
    Z = n + w * (n - 1)
    path = None
    if w > 0 and n >= 2:
        W = np.zeros((n, n))
        i = np.arange(n - 1)
        W[i, i + 1] = W[i + 1, i] = w / Z
        path = GraphCut(W)

    def make(signs: np.ndarray) -> SetFunction:
        mod = Modular(signs / Z)
        return mod if path is None else Sum([mod, path])

    return _SignStream(n, T, (1.0 + m) / 2.0, make, rng)
