r"""Exact samplers for product distributions over the bases of a matroid.

The exponential mechanism of private continuous greedy (Rafiey and Yoshida 2020, Algorithm 1)
over the bases of a matroid, with score :math:`\langle 1_B, g\rangle`, draws a base ``B`` with
probability proportional to :math:`\prod_{e \in B} w_e`, :math:`w_e = \exp(\epsilon' g_e)`; over
the cover of averages of ``m`` bases it draws ``m`` independent such bases with
:math:`w_e = \exp(\epsilon' g_e / m)` (seed 004 notes, Section 2.3, confirmed in the review).
These samplers draw from that law exactly (up to floating-point arithmetic), in log space so that
log-weights of any size neither overflow nor underflow:

* uniform matroid :math:`U(r, n)`: the suffix tables of elementary symmetric polynomials
  :math:`L_{i,j} = \log e_j(w_i, \dots, w_{n-1})`, one vectorised ``logaddexp.accumulate`` per
  ``j``; a base is then drawn one element at a time by inverse CDF on the tail probabilities
  :math:`P(\text{next} \ge i') = \exp(L_{i',j} - L_{\text{pos},j})` (a ``searchsorted``
  vectorised over all draws). Cost :math:`O(n r)` for the table, :math:`O(r \log n)` per draw;
* partition matroid: the weight factorises over blocks, so the uniform sampler runs per block
  with rank :math:`\min(k_j, |V_j|)`;
* graphic matroid: Wilson's algorithm (1996) with edge conductances :math:`w_e`, per connected
  component: the loop-erased random walk returns a spanning forest with probability
  proportional to the product of its conductances. Its running time is the walk's cover time,
  which grows with the ratio of the largest to the smallest weight (about
  :math:`\exp(\epsilon' \cdot \text{range of } g)`): exact, but slow for large
  :math:`\epsilon'`.

Other matroid families have no exact sampler here; callers refuse them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components
from scipy.special import logsumexp

from ..constraints.base import Matroid
from ..constraints.graphic import GraphicMatroid
from ..constraints.partition import PartitionMatroid
from ..constraints.uniform import UniformMatroid
from ..errors import ValidationError

__all__ = ["ProductBaseSampler", "product_base_sampler", "SUPPORTED_MATROIDS"]

#: The matroid families with an exact product-base sampler.
SUPPORTED_MATROIDS = (UniformMatroid, PartitionMatroid, GraphicMatroid)


class ProductBaseSampler(ABC):
    """Draws bases ``B`` with probability proportional to ``exp(sum_{e in B} logw_e)``.

    Attributes
    ----------
    n : int
        Ground-set size.
    rank : int
        Size of every base.
    """

    n: int
    rank: int

    @abstractmethod
    def sample(self, logw: np.ndarray, size: int, gen: np.random.Generator) -> np.ndarray:
        """``size`` independent bases, as an int64 array of shape ``(size, rank)``, rows sorted."""

    @abstractmethod
    def log_partition(self, logw: np.ndarray) -> float:
        """``log sum_B exp(sum_{e in B} logw_e)`` over all bases."""

    def log_prob(self, logw: np.ndarray, base: np.ndarray) -> float:
        """Log-probability of the base ``base`` (indices) under the product law."""
        return float(np.sum(logw[np.asarray(base, dtype=np.int64)])) - self.log_partition(logw)

    def uniform(self, size: int, gen: np.random.Generator) -> np.ndarray:
        """``size`` independent uniformly random bases (all weights equal)."""
        return self.sample(np.zeros(self.n), size, gen)


# -- uniform matroid -----------------------------------------------------------------------------

def _esp_table(logw: np.ndarray, r: int) -> np.ndarray:
    """``L[i, j] = log e_j(w_i, ..., w_{k-1})`` for ``i = 0..k`` and ``j = 0..r``."""
    k = logw.size
    L = np.full((k + 1, r + 1), -np.inf)
    L[:, 0] = 0.0
    for j in range(1, r + 1):
        # e_j(w_i..) = sum_{i' >= i} w_i' e_{j-1}(w_{i'+1}..): a reversed running log-sum-exp.
        a = logw + L[1:, j - 1]
        L[:k, j] = np.logaddexp.accumulate(a[::-1])[::-1]
    return L


def _sample_esp(L: np.ndarray, r: int, size: int, gen: np.random.Generator) -> np.ndarray:
    """Positions of ``size`` draws from the product law whose table is ``L`` (see module doc)."""
    out = np.empty((size, r), dtype=np.int64)
    pos = np.zeros(size, dtype=np.int64)
    for slot in range(r):
        j = r - slot
        col = L[:, j]  # non-increasing in the position (suffix sums of positive terms)
        u = 1.0 - gen.random(size)  # in (0, 1]
        threshold = col[pos] + np.log(u)
        # next = max{i' : L[i', j] > threshold}: the tail probability still exceeds u there.
        nxt = np.searchsorted(-col, -threshold, side="left") - 1
        nxt = np.maximum(nxt, pos)  # u = 1 up to rounding: the next element is at pos itself
        out[:, slot] = nxt
        pos = nxt + 1
    return out


class _UniformSampler(ProductBaseSampler):
    def __init__(self, n: int, r: int, elements: np.ndarray | None = None):
        self.n = int(n)
        self.rank = int(r)
        self.elements = np.arange(n) if elements is None else np.asarray(elements)

    def _table(self, logw: np.ndarray) -> np.ndarray:
        return _esp_table(np.asarray(logw, dtype=np.float64)[self.elements], self.rank)

    def uniform(self, size: int, gen: np.random.Generator) -> np.ndarray:
        if self.rank == 0:
            return np.zeros((size, 0), dtype=np.int64)
        if getattr(self, "_uniform_table", None) is None:
            self._uniform_table = self._table(np.zeros(self.n))
        return self.elements[_sample_esp(self._uniform_table, self.rank, size, gen)]

    def sample(self, logw: np.ndarray, size: int, gen: np.random.Generator) -> np.ndarray:
        if self.rank == 0:
            return np.zeros((size, 0), dtype=np.int64)
        pos = _sample_esp(self._table(logw), self.rank, size, gen)
        return self.elements[pos]

    def log_partition(self, logw: np.ndarray) -> float:
        return float(self._table(logw)[0, self.rank])


# -- partition matroid ---------------------------------------------------------------------------

class _PartitionSampler(ProductBaseSampler):
    def __init__(self, m: PartitionMatroid):
        self.n = m.n
        self.rank = m.rank
        self.parts = [_UniformSampler(m.n, int(min(cap, blk.size)), blk)
                      for blk, cap in zip(m.blocks, m.capacities) if min(cap, blk.size) > 0]

    def sample(self, logw: np.ndarray, size: int, gen: np.random.Generator) -> np.ndarray:
        # The weight of a base is a product over blocks, so blocks are independent.
        cols = [p.sample(logw, size, gen) for p in self.parts]
        return np.sort(np.concatenate(cols, axis=1), axis=1)

    def log_partition(self, logw: np.ndarray) -> float:
        return float(sum(p.log_partition(logw) for p in self.parts))

    def uniform(self, size: int, gen: np.random.Generator) -> np.ndarray:
        cols = [p.uniform(size, gen) for p in self.parts]
        return np.sort(np.concatenate(cols, axis=1), axis=1)


# -- graphic matroid -----------------------------------------------------------------------------

class _GraphicSampler(ProductBaseSampler):
    def __init__(self, m: GraphicMatroid):
        self.n = m.n
        self.rank = m.rank
        self.n_nodes = m.n_nodes
        self.u = np.asarray(m.edges[:, 0])
        self.v = np.asarray(m.edges[:, 1])
        proper = np.flatnonzero(self.u != self.v)  # self-loops are never in a forest
        ends = np.concatenate([self.u[proper], self.v[proper]])
        ids = np.concatenate([proper, proper])
        order = np.argsort(ends, kind="stable")
        self._inc_edges = ids[order]
        self._inc_ptr = np.searchsorted(ends[order], np.arange(self.n_nodes + 1))
        g = sp.coo_array((np.ones(proper.size), (self.u[proper], self.v[proper])),
                         shape=(self.n_nodes, self.n_nodes))
        _, self.component = connected_components(g, directed=False)

    def _incident(self, node: int) -> np.ndarray:
        return self._inc_edges[self._inc_ptr[node]:self._inc_ptr[node + 1]]

    def sample(self, logw: np.ndarray, size: int, gen: np.random.Generator) -> np.ndarray:
        logw = np.asarray(logw, dtype=np.float64)
        cum = []
        for node in range(self.n_nodes):
            inc = self._incident(node)
            if inc.size == 0:
                cum.append(np.zeros(0))
                continue
            p = np.exp(logw[inc] - logsumexp(logw[inc]))
            c = np.cumsum(p)
            c[-1] = np.inf  # guards the inverse CDF against rounding of the last sum
            cum.append(c)
        out = np.empty((size, self.rank), dtype=np.int64)
        for s in range(size):
            out[s] = np.sort(self._wilson(cum, gen))
        return out

    def _wilson(self, cum: list[np.ndarray], gen: np.random.Generator) -> np.ndarray:
        """One spanning forest: a root per component, then loop-erased walks (Wilson 1996)."""
        in_tree = np.zeros(self.n_nodes, dtype=bool)
        _, first = np.unique(self.component, return_index=True)
        in_tree[first] = True
        nxt_edge = np.full(self.n_nodes, -1, dtype=np.int64)
        tree: list[int] = []
        u, v = self.u, self.v
        for start in range(self.n_nodes):
            node = start
            while not in_tree[node]:
                inc = self._incident(node)
                e = int(inc[np.searchsorted(cum[node], gen.random(), side="right")])
                nxt_edge[node] = e
                node = int(v[e]) if u[e] == node else int(u[e])
            node = start
            while not in_tree[node]:
                in_tree[node] = True
                e = int(nxt_edge[node])
                tree.append(e)
                node = int(v[e]) if u[e] == node else int(u[e])
        return np.asarray(tree, dtype=np.int64)

    def log_partition(self, logw: np.ndarray) -> float:
        """Weighted matrix-tree theorem per component (reduced Laplacian log-determinant).

        A floating-point determinant: accurate for moderate ranges of ``logw`` (it is used to
        state exact probabilities on small instances, never by the sampler itself).
        """
        logw = np.asarray(logw, dtype=np.float64)
        proper = self.u != self.v
        shift = float(logw[proper].max())
        w = np.where(proper, np.exp(logw - shift), 0.0)
        total = 0.0
        for c in np.unique(self.component):
            nodes = np.flatnonzero(self.component == c)
            if nodes.size < 2:
                continue
            idx = {int(a): i for i, a in enumerate(nodes)}
            lap = np.zeros((nodes.size, nodes.size))
            for e in np.flatnonzero(proper & (self.component[self.u] == c)):
                a, b = idx[int(self.u[e])], idx[int(self.v[e])]
                lap[a, a] += w[e]
                lap[b, b] += w[e]
                lap[a, b] -= w[e]
                lap[b, a] -= w[e]
            _, logdet = np.linalg.slogdet(lap[1:, 1:])
            total += logdet + (nodes.size - 1) * shift
        return float(total)


def product_base_sampler(matroid: Matroid, caller: str) -> ProductBaseSampler:
    """The exact sampler for ``matroid``'s family; a clear error for unsupported families."""
    if isinstance(matroid, UniformMatroid):
        return _UniformSampler(matroid.n, matroid.rank)
    if isinstance(matroid, PartitionMatroid):
        return _PartitionSampler(matroid)
    if isinstance(matroid, GraphicMatroid):
        return _GraphicSampler(matroid)
    raise ValidationError(
        f"{caller} draws its exponential mechanism over the bases exactly, which is implemented "
        f"for uniform (cardinality), partition and graphic matroids only; got "
        f"{type(matroid).__name__}. Use method='dpcg' (any matroid), or a private greedy."
    )
