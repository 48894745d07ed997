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
* graphic matroid: sequential edge inclusion. Edges are decided one at a time, heaviest first;
  given the decisions so far (included edges contracted, excluded ones deleted), edge ``e`` is
  in the forest with probability :math:`w_e R_e = 1 / (1 + c_e / w_e)`, where :math:`R_e` is its
  effective resistance and :math:`c_e` the effective conductance between its ends through the
  undecided edges. Heaviest first, every undecided edge weighs at most :math:`w_e`, so the
  ratios :math:`w_f / w_e \le 1` neither overflow nor matter when they underflow, and
  :math:`c_e` comes from eliminating the other nodes (Kron reduction of the Laplacian), which
  adds and multiplies positive numbers only: no cancellation, hence accurate at any weight
  ratio. Cost :math:`O(m k^3)` per forest for ``m`` edges and ``k`` nodes, whatever the
  weights. Wilson's algorithm (1996), whose loop-erased walk takes about the ratio of the
  largest to the smallest weight in time, is kept for large graphs with nearly equal weights,
  where it is much faster. The log-partition function is the weighted matrix-tree theorem,
  evaluated by the same elimination in log space.

Other matroid families have no exact sampler here; callers refuse them.

These samplers hold only the combinatorial part (the tables, the conditional laws, the decisions
so far): every uniform is drawn, and inverted, by the
:class:`~dpsubmod.privacy.product.InverseCDF` they are given, which the privacy mechanism owns
during a release (:class:`~dpsubmod.privacy.product.ProductBaseExponential`).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components
from scipy.special import logsumexp

from ...constraints.base import Matroid
from ...constraints.graphic import GraphicMatroid
from ...constraints.partition import PartitionMatroid
from ...constraints.uniform import UniformMatroid
from ...errors import ValidationError
from ...privacy.product import InverseCDF

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
    def bases(self, logw: np.ndarray, size: int, draws: InverseCDF) -> np.ndarray:
        """``size`` independent bases, as an int64 array of shape ``(size, rank)``, rows sorted,
        every uniform drawn by ``draws`` (the
        :class:`~dpsubmod.privacy.product.ProductLaw` protocol)."""

    def sample(self, logw: np.ndarray, size: int, gen: np.random.Generator) -> np.ndarray:
        """:meth:`bases` with uniforms from the generator ``gen`` (outside a release)."""
        return self.bases(logw, size, InverseCDF(gen))

    @abstractmethod
    def log_partition(self, logw: np.ndarray) -> float:
        """``log sum_B exp(sum_{e in B} logw_e)`` over all bases."""

    def log_prob(self, logw: np.ndarray, base: np.ndarray) -> float:
        """Log-probability of the base ``base`` (indices) under the product law."""
        return float(np.sum(logw[np.asarray(base, dtype=np.int64)])) - self.log_partition(logw)

    def uniform(self, size: int, gen: np.random.Generator) -> np.ndarray:
        """``size`` independent uniformly random bases (all weights equal), from ``gen``."""
        return self._uniform(size, InverseCDF(gen))

    def _uniform(self, size: int, draws: InverseCDF) -> np.ndarray:
        return self.bases(np.zeros(self.n), size, draws)


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


def _sample_esp(L: np.ndarray, r: int, size: int, draws: InverseCDF) -> np.ndarray:
    """Positions of ``size`` draws from the product law whose table is ``L`` (see module doc)."""
    out = np.empty((size, r), dtype=np.int64)
    pos = np.zeros(size, dtype=np.int64)
    for slot in range(r):
        # With j = r - slot elements left, P(next >= i') = exp(L[i', j] - L[pos, j]) for
        # i' >= pos; the column is non-increasing in the position (suffix sums of positive terms).
        nxt = draws.next_positions(L[:, r - slot], pos)
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

    def _uniform(self, size: int, draws: InverseCDF) -> np.ndarray:
        if self.rank == 0:
            return np.zeros((size, 0), dtype=np.int64)
        if getattr(self, "_uniform_table", None) is None:
            self._uniform_table = self._table(np.zeros(self.n))
        return self.elements[_sample_esp(self._uniform_table, self.rank, size, draws)]

    def bases(self, logw: np.ndarray, size: int, draws: InverseCDF) -> np.ndarray:
        if self.rank == 0:
            return np.zeros((size, 0), dtype=np.int64)
        pos = _sample_esp(self._table(logw), self.rank, size, draws)
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

    def bases(self, logw: np.ndarray, size: int, draws: InverseCDF) -> np.ndarray:
        # The weight of a base is a product over blocks, so blocks are independent.
        cols = [p.bases(logw, size, draws) for p in self.parts]
        return np.sort(np.concatenate(cols, axis=1), axis=1)

    def log_partition(self, logw: np.ndarray) -> float:
        return float(sum(p.log_partition(logw) for p in self.parts))

    def _uniform(self, size: int, draws: InverseCDF) -> np.ndarray:
        cols = [p._uniform(size, draws) for p in self.parts]
        return np.sort(np.concatenate(cols, axis=1), axis=1)


# -- graphic matroid -----------------------------------------------------------------------------

#: Wilson's walk is used only on graphs larger than this (number of nodes) ...
_WILSON_MIN_NODES = 64
#: ... and only when the log of the largest to smallest weight ratio is at most this, since its
#: expected running time grows with that ratio (at 8 nodes and a ratio of e^150 it never ends).
_WILSON_MAX_LOG_RATIO = math.log(8.0)


class _GraphicSampler(ProductBaseSampler):
    def __init__(self, m: GraphicMatroid):
        self.n = m.n
        self.rank = m.rank
        self.n_nodes = m.n_nodes
        self.u = np.asarray(m.edges[:, 0], dtype=np.int64)
        self.v = np.asarray(m.edges[:, 1], dtype=np.int64)
        proper = np.flatnonzero(self.u != self.v)  # self-loops are never in a forest
        self._proper = proper
        ends = np.concatenate([self.u[proper], self.v[proper]])
        ids = np.concatenate([proper, proper])
        order = np.argsort(ends, kind="stable")
        self._inc_edges = ids[order]
        self._inc_ptr = np.searchsorted(ends[order], np.arange(self.n_nodes + 1))
        # 32-bit indices: scipy 1.11's csgraph reads 64-bit ones as garbage, without an error
        idx = np.int32 if self.n_nodes <= np.iinfo(np.int32).max else np.int64
        g = sp.coo_array((np.ones(proper.size, dtype=np.int8),
                          (self.u[proper].astype(idx), self.v[proper].astype(idx))),
                         shape=(self.n_nodes, self.n_nodes)).tocsr()
        g.indices, g.indptr = g.indices.astype(idx), g.indptr.astype(idx)
        _, self.component = connected_components(g, directed=False)

    def _incident(self, node: int) -> np.ndarray:
        return self._inc_edges[self._inc_ptr[node]:self._inc_ptr[node + 1]]

    def bases(self, logw: np.ndarray, size: int, draws: InverseCDF) -> np.ndarray:
        logw = np.asarray(logw, dtype=np.float64)
        out = np.empty((size, self.rank), dtype=np.int64)
        if self.rank == 0:
            return out
        lw = logw[self._proper]
        if self.n_nodes > _WILSON_MIN_NODES and \
                float(lw.max() - lw.min()) <= _WILSON_MAX_LOG_RATIO:
            cum = self._walk_tables(logw)
            for s in range(size):
                out[s] = np.sort(self._wilson(cum, draws))
            return out
        # One cache per law: the conductance of a decision depends only on its position in the
        # order and on the partition the included edges made, which draws often share.
        order = self._proper[np.argsort(-logw[self._proper], kind="stable")]
        memo: dict[tuple[int, bytes], float] = {}
        for s in range(size):
            out[s] = np.sort(self._eliminate(logw, order, memo, draws))
        return out

    # -- sequential edge inclusion ----------------------------------------------------------
    def _eliminate(self, logw: np.ndarray, order: np.ndarray,
                   memo: dict[tuple[int, bytes], float], draws: InverseCDF) -> np.ndarray:
        """One spanning forest by sequential edge inclusion, heaviest edge first (module doc)."""
        root = np.arange(self.n_nodes)  # super-node of each node (included edges contracted)
        tree: list[int] = []
        for pos, e in enumerate(order):
            a, b = int(root[self.u[e]]), int(root[self.v[e]])
            if a == b:
                continue  # closes a cycle with included edges: probability 0
            key = (pos, root.tobytes())
            c = memo.get(key)
            if c is None:
                c = memo[key] = self._conductance(a, b, logw, float(logw[e]), order[pos + 1:],
                                                  root)
            # P(e in forest | decisions so far) = 1 / (1 + c), c scaled by w_e
            if draws.accept(c):
                root[root == b] = a
                tree.append(int(e))
                if len(tree) == self.rank:
                    break
        return np.asarray(tree, dtype=np.int64)

    def _conductance(self, a: int, b: int, logw: np.ndarray, lw_e: float, rest: np.ndarray,
                     root: np.ndarray) -> float:
        """Effective conductance between super-nodes ``a`` and ``b`` through the undecided
        edges ``rest``, each weighed ``w_f / w_e <= 1`` (0 when no path joins them)."""
        ru, rv = root[self.u[rest]], root[self.v[rest]]
        keep = ru != rv
        if not keep.any():
            return 0.0
        ru, rv, rest = ru[keep], rv[keep], rest[keep]
        nodes, inv = np.unique(np.concatenate([ru, rv]), return_inverse=True)
        ia, ib = int(np.searchsorted(nodes, a)), int(np.searchsorted(nodes, b))
        if ia >= nodes.size or nodes[ia] != a or ib >= nodes.size or nodes[ib] != b:
            return 0.0
        k = nodes.size
        # heaviest first: every undecided weight is at most w_e, so these lie in [0, 1]
        w = np.exp(np.minimum(logw[rest] - lw_e, 0.0))
        W = np.zeros((k, k))
        np.add.at(W, (inv[:rest.size], inv[rest.size:]), w)
        W += W.T
        # Kron reduction: eliminating node z adds w_iz w_zj / d_z to every pair (i, j), and its
        # pivot d_z is a sum of positive conductances; positive arithmetic throughout. A node
        # not joined to a and b changes nothing between them.
        for z in range(k):
            if z == ia or z == ib:
                continue
            col = W[:, z].copy()
            d = col.sum()
            W[:, z] = 0.0
            W[z, :] = 0.0
            if d > 0.0:
                col[z] = 0.0
                W += np.outer(col, col / d)
                np.fill_diagonal(W, 0.0)
        return float(W[ia, ib])

    # -- Wilson's algorithm -------------------------------------------------------------------
    def _walk_tables(self, logw: np.ndarray) -> list[np.ndarray]:
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
        return cum

    def _wilson(self, cum: list[np.ndarray], draws: InverseCDF) -> np.ndarray:
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
                e = int(inc[draws.index(cum[node])])
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
        """Weighted matrix-tree theorem per component: the log-determinant of the reduced
        Laplacian as the sum of the log pivots of node elimination, in log space (exact up to
        rounding at any weight ratio)."""
        logw = np.asarray(logw, dtype=np.float64)
        total = 0.0
        for c in np.unique(self.component):
            nodes = np.flatnonzero(self.component == c)
            if nodes.size < 2:
                continue
            pos = np.full(self.n_nodes, -1, dtype=np.int64)
            pos[nodes] = np.arange(nodes.size)
            edges = self._proper[self.component[self.u[self._proper]] == c]
            k = nodes.size
            L = np.full((k, k), -np.inf)
            np.logaddexp.at(L, (pos[self.u[edges]], pos[self.v[edges]]), logw[edges])
            L = np.logaddexp(L, L.T)
            # ground the last node; eliminate the others, summing their log pivots
            for z in range(k - 1):
                row = L[z, z + 1:]
                piv = float(logsumexp(row))
                total += piv
                rest = L[z + 1:, z + 1:]
                with np.errstate(invalid="ignore"):
                    upd = row[:, None] + row[None, :] - piv
                L[z + 1:, z + 1:] = np.logaddexp(rest, upd)
                np.fill_diagonal(L[z + 1:, z + 1:], -np.inf)
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
