"""The graphic (cycle) matroid of a graph."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from .._validation import check_finite, check_indices, check_int
from ..errors import ParameterTypeError, ValidationError
from ._checks import require_positive_rank
from .base import Matroid, set_mask

_UNION_FIND_LIMIT = 4096  # edge sets up to this size use a Python union-find, larger ones scipy


class GraphicMatroid(Matroid):
    r"""The graphic matroid of an undirected (multi)graph: the ground set is the edge list, and a
    set of edges is independent iff it is a forest (contains no cycle).

    Its rank is ``n_nodes - c`` with ``c`` the number of connected components of the whole graph;
    its bases are the spanning forests. Self-loops are loops of the matroid (never independent);
    parallel edges are allowed (two copies form a cycle).

    ``can_add`` is vectorised: the connected components of the current forest are computed once
    per call (a union-find over its edges, or ``scipy.sparse.csgraph.connected_components`` for
    large edge sets), and a candidate edge ``(u, v)`` can be added iff ``u`` and ``v`` lie in
    different components.

    Parameters
    ----------
    edges : array-like of int, shape (m, 2), or networkx.Graph / MultiGraph
        The edges, in the order that defines the ground set ``range(m)``. For a networkx graph the
        order is ``list(G.edges())`` and node ``v`` is numbered ``list(G.nodes()).index(v)``.
    n_nodes : int, optional
        Number of nodes (default: one more than the largest endpoint, or ``G.number_of_nodes()``).

    Raises
    ------
    InfeasibleConstraintError
        If the graph has no edge other than self-loops (rank 0).

    Attributes
    ----------
    edges : ndarray of int64, shape (n, 2)
    n_nodes : int

    Examples
    --------
    >>> m = GraphicMatroid([(0, 1), (1, 2), (0, 2), (2, 3)])
    >>> m.rank
    3
    >>> m.can_add([0, 1], [2, 3]).tolist()
    [False, True]
    """

    def __init__(self, edges: object, n_nodes: int | None = None):
        caller = "GraphicMatroid"
        if hasattr(edges, "edges") and hasattr(edges, "nodes"):
            nodes = list(edges.nodes())
            index = {v: i for i, v in enumerate(nodes)}
            pairs = [(index[u], index[v]) for u, v in edges.edges()]
            e = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
            if n_nodes is None:
                n_nodes = len(nodes)
        else:
            e = check_finite(edges, "edges", caller=caller)
            if e.size == 0:
                raise ValidationError(
                    f"The 'edges' argument of {caller} must hold at least one edge."
                )
            if e.ndim != 2 or e.shape[1] != 2:
                raise ValidationError(
                    f"The 'edges' argument of {caller} must have shape (m, 2); got {e.shape}."
                )
            if not np.issubdtype(e.dtype, np.integer):
                raise ParameterTypeError(
                    f"The 'edges' argument of {caller} must hold integer node ids; got dtype "
                    f"{e.dtype}."
                )
        if e.shape[0] == 0:
            raise ValidationError(f"The 'edges' argument of {caller} must hold at least one edge.")
        if e.min() < 0:
            raise ValidationError(
                f"The 'edges' argument of {caller} holds a negative node id {int(e.min())}; node "
                "ids are 0..n_nodes-1."
            )
        top = int(e.max()) + 1
        if n_nodes is None:
            n_nodes = top
        self.n_nodes = check_int(n_nodes, "n_nodes", low=top, caller=caller,
                                 fix="Pass n_nodes larger than every node id in 'edges'.")
        self.edges = e.astype(np.int64, copy=True)
        self.edges.setflags(write=False)
        self.n = int(e.shape[0])
        self._u = self.edges[:, 0]
        self._v = self.edges[:, 1]
        self._rank = self.n_nodes - self._n_components(np.ones(self.n, dtype=bool))
        require_positive_rank(self._rank, caller, "Give the graph an edge between two nodes.",
                              "edges")

    def _components(self, mask: np.ndarray) -> tuple[int, np.ndarray]:
        """(number of components, component label per node) of the graph of the edges in S."""
        u, v = self._u[mask], self._v[mask]
        if u.size > _UNION_FIND_LIMIT:
            # 32-bit indices: scipy < 1.12's csgraph reads 64-bit ones as garbage (no error)
            idx = np.int32 if self.n_nodes <= np.iinfo(np.int32).max else np.int64
            g = sp.coo_array((np.ones(u.size, dtype=np.int8), (u.astype(idx), v.astype(idx))),
                             shape=(self.n_nodes, self.n_nodes))
            return connected_components(g, directed=False)
        # A small S (the usual case: a forest of at most `rank` edges) is cheaper with a
        # union-find over the nodes it touches; untouched nodes are their own components.
        parent: dict[int, int] = {}

        def find(a: int) -> int:
            root = a
            while parent.get(root, root) != root:
                root = parent[root]
            while parent.get(a, a) != root:
                parent[a], a = root, parent[a]
            return root

        merges = 0
        for a, b in zip(u.tolist(), v.tolist()):
            ra, rb = find(a), find(b)
            if ra != rb:
                parent[max(ra, rb)] = min(ra, rb)
                merges += 1
        comp = np.arange(self.n_nodes)
        if parent:
            touched = np.fromiter(parent.keys(), dtype=np.int64, count=len(parent))
            comp[touched] = [find(a) for a in touched.tolist()]
        return self.n_nodes - merges, comp

    def _n_components(self, mask: np.ndarray) -> int:
        return int(self._components(mask)[0])

    @property
    def rank(self) -> int:
        return self._rank

    def is_independent(self, S: object) -> bool:
        mask = set_mask(S, self.n)
        # A forest on n_nodes nodes with c components has exactly n_nodes - c edges; any
        # cycle (self-loops and parallel edges included) leaves an edge that merges nothing.
        return int(mask.sum()) == self.n_nodes - self._n_components(mask)

    def can_add(self, S: object, candidates: object = None) -> np.ndarray:
        mask = set_mask(S, self.n)
        cand = self._cand(candidates)
        ncomp, comp = self._components(mask)
        if int(mask.sum()) != self.n_nodes - int(ncomp):
            return np.zeros(cand.size, dtype=bool)
        return ~mask[cand] & (comp[self._u[cand]] != comp[self._v[cand]])

    def rank_of(self, S: object) -> int:
        return self.n_nodes - self._n_components(set_mask(S, self.n))

    def greedy_independent(self, order: object) -> np.ndarray:
        """Kruskal's scan with a union-find (path halving, union by size)."""
        order = check_indices(order, self.n, "order", unique=True)
        parent = list(range(self.n_nodes))
        size = [1] * self.n_nodes

        def find(a: int) -> int:
            while parent[a] != a:
                parent[a] = parent[parent[a]]
                a = parent[a]
            return a

        kept = []
        for e, a, b in zip(order.tolist(), self._u[order].tolist(), self._v[order].tolist()):
            ra, rb = find(a), find(b)
            if ra == rb:
                continue
            if size[ra] < size[rb]:
                ra, rb = rb, ra
            parent[rb] = ra
            size[ra] += size[rb]
            kept.append(e)
        return np.asarray(kept, dtype=np.int64)

    def __repr__(self) -> str:
        return f"GraphicMatroid(n={self.n} edges, n_nodes={self.n_nodes}, rank={self.rank})"
