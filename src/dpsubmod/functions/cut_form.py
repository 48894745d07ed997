"""A set function written as a graph cut plus a modular term (:class:`CutForm`).

Kept apart from :mod:`dpsubmod.functions.base` because its weight matrix is a scipy.sparse
array: the families that have a cut form (modular, graph cut, their sums) import it, and a
run on other families (a facility location on a grid) never imports scipy.sparse.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp


@dataclass(frozen=True)
class CutForm:
    r"""A function written as :math:`f(S) = \sum_{u \in S, v \notin S} W_{uv} + \sum_{e \in S}
    m_e`: a (directed) graph cut with nonnegative weights plus a modular term.

    Such a function is minimised exactly by one s-t minimum cut, and a sum of them is one of them
    (arcs and modular terms add), which is how :meth:`SetFunction.cut_form` serves both
    :func:`dpsubmod.offline.minimize` and the online comparators. The arcs are kept as arrays
    (repeated arcs add up), so summing forms costs no sparse-matrix work.

    Attributes
    ----------
    n : int
        Ground-set size.
    tails, heads : ndarray of int64
        Arc ``a`` goes from ``tails[a]`` to ``heads[a]`` (no self-loops).
    arc_weights : ndarray of float64
        Nonnegative weight of each arc.
    modular : ndarray of float64, shape (n,)
        ``m``.
    directed : bool
        Whether the arcs may be asymmetric (a sum with a directed cut is a directed cut); an
        undirected cut lists each edge in both directions.
    cut : bool
        Whether a graph cut is part of the function (even one without edges); a modular
        function alone has ``cut=False``.
    """

    n: int
    tails: np.ndarray
    heads: np.ndarray
    arc_weights: np.ndarray
    modular: np.ndarray
    directed: bool = False
    cut: bool = True

    @classmethod
    def of_matrix(cls, W: object, modular: np.ndarray, directed: bool) -> CutForm:
        """The form of ``cut_W + m`` for a sparse weight matrix ``W[u, v]`` (arc ``u -> v``)."""
        W = sp.csr_array(W)
        tails = np.repeat(np.arange(W.shape[0], dtype=np.int64), np.diff(W.indptr))
        return cls(int(W.shape[0]), tails, W.indices.astype(np.int64),
                   np.asarray(W.data, dtype=np.float64), np.asarray(modular, np.float64),
                   bool(directed))

    @classmethod
    def modular_only(cls, modular: np.ndarray) -> CutForm:
        """The form of a modular function (no arc)."""
        empty = np.zeros(0, dtype=np.int64)
        m = np.asarray(modular, dtype=np.float64)
        return cls(m.size, empty, empty, np.zeros(0), m, False, False)

    @property
    def weights(self) -> sp.csr_array | None:
        """``W`` as a CSR matrix (repeated arcs summed); ``None`` without arcs."""
        if not self.cut:
            return None
        return sp.csr_array((self.arc_weights, (self.tails, self.heads)), shape=(self.n, self.n))

    def scaled(self, c: float) -> CutForm:
        """The form of ``c f`` (``c >= 0``)."""
        return CutForm(self.n, self.tails, self.heads, c * self.arc_weights, c * self.modular,
                       self.directed, self.cut)

    def plus(self, other: CutForm) -> CutForm:
        """The form of the sum of two such functions."""
        return CutForm(self.n, np.concatenate([self.tails, other.tails]),
                       np.concatenate([self.heads, other.heads]),
                       np.concatenate([self.arc_weights, other.arc_weights]),
                       self.modular + other.modular, self.directed or other.directed,
                       self.cut or other.cut)
