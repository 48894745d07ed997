"""Cut functions of weighted graphs (directed and undirected)."""

from __future__ import annotations

import networkx as nx
import numpy as np
import scipy.sparse as sp

from ..errors import ValidationError
from ._inputs import as_matrix
from .base import FunctionState, SetFunction
from .cut_form import CutForm


class GraphCut(SetFunction):
    r"""Cut function of a weighted graph.

    Undirected: :math:`f(S) = w(S, V \setminus S) = \sum_{\{u,v\} \in E,\ u \in S,\ v \notin S}
    w_{uv}`, the total weight of the edges leaving ``S``. Directed: :math:`f(S) = \sum_{u \in S,
    v \notin S} w_{uv}`, the weight of the arcs from ``S`` to its complement. Both equal
    :math:`x^\top W (\mathbf 1 - x)` for the indicator ``x`` of ``S`` (with ``W`` symmetric in
    the undirected case).

    A cut is the prototypical non-monotone submodular function: ``f(∅) = f(V) = 0``, so adding
    elements eventually lowers the value. Maximising it (max-cut) is NP-hard but has constant-
    factor algorithms for non-monotone submodular maximisation; minimising a cut plus a modular
    term is an s-t min-cut (use :meth:`to_networkx` with a max-flow solver).

    Submodular (nonnegative weights), not monotone.

    Parameters
    ----------
    graph_or_weights : networkx.Graph, networkx.DiGraph, ndarray or scipy.sparse matrix
        A networkx graph (edge weights from the ``'weight'`` attribute, 1 where missing; the
        ground set is ``list(graph.nodes)``, in that order, available as ``nodes``), or a square
        nonnegative finite weight matrix ``W[u, v]``. Self-loops never cross a cut and are
        dropped. Parallel edges of a multigraph are summed.
    directed : bool, optional
        ``True``: the directed cut. ``False``: the undirected cut; a matrix must then be
        symmetric (up to round-off, after which it is symmetrised), and a ``DiGraph`` is
        refused. Default: ``True`` for a ``DiGraph``, ``False`` otherwise. An undirected graph
        with ``directed=True`` is read as both arc directions, which gives the same cut.
    sensitivity : float, optional
        Declared sensitivity, passed through. The natural neighbouring relation for a graph is
        edge-level: two graphs are neighbours when one edge's weight differs, with weights known
        to lie in ``[0, w_max]``. A cut counts each edge at most once, so ``f(S)`` moves by at
        most ``w_max`` for every ``S``: declare ``sensitivity=w_max``.

    Attributes
    ----------
    nodes : list
        Node labels in ground-set order (``list(range(n))`` for a matrix).
    directed : bool
    adjacency : scipy.sparse.csr_array of float64
        The weight matrix without self-loops (``W[u, v]`` is the weight of ``u -> v``).

    Notes
    -----
    For ``e`` not in ``S`` the gain is :math:`d^{out}_e - W[e, S] - W[S, e]` (for a symmetric
    ``W``: :math:`d_e - 2 W[e, S]`). The state keeps ``W[:, S]`` and ``W[S, :]`` summed, so a
    step adds one column and one row and the gains of all candidates are one vector expression.

    References
    ----------
    Schrijver, A. (2003). *Combinatorial Optimization*, Section 44.1 (cut functions).
    Feige, U., Mirrokni, V. and Vondrák, J. (2011). Maximizing non-monotone submodular functions.
    *SIAM Journal on Computing* 40(4).

    Examples
    --------
    >>> import networkx as nx
    >>> f = GraphCut(nx.path_graph(3))
    >>> f([1]), f([0, 2]), f([0, 1, 2])
    (2.0, 2.0, 0.0)
    """

    monotone = False
    submodular = True
    neighbouring = "edge-level: one edge's weight changes within [0, w_max] (declared by caller)"

    def __init__(self, graph_or_weights: object, directed: bool | None = None, *,
                 sensitivity: float | None = None):
        W, nodes, directed = _adjacency(graph_or_weights, directed)
        super().__init__(W.shape[0], sensitivity=sensitivity)
        self.nodes = nodes
        self.directed = directed
        self.adjacency = W
        self._csc = W.tocsc()
        self._out_degree = np.asarray(W.sum(axis=1), dtype=np.float64).ravel()

    batched_values = True

    def _value(self, mask: np.ndarray) -> float:
        x = mask.astype(np.float64)
        return float(x @ (self.adjacency @ (1.0 - x)))

    def _values(self, masks: np.ndarray) -> np.ndarray:
        X = masks.astype(np.float64)
        return np.einsum("ij,ij->i", X, np.asarray((self.adjacency @ (1.0 - X).T).T))

    def _chain_values(self, order: np.ndarray) -> np.ndarray:
        r"""Arc ``u -> v`` counts while ``u`` is in the chain and ``v`` not yet: from the step
        where ``u`` enters to the one before ``v`` enters. One pass over the arcs with their
        endpoints' ranks gives every step's change; an undirected edge counts from the step its
        first endpoint enters to the step its second does, so only one arc per edge is read."""
        m = order.size
        pos = np.full(self.n, m + 1, dtype=np.int64)  # elements outside the chain never enter
        pos[order] = np.arange(1, m + 1)
        tail, head, w = self._arcs()
        pu, pv = pos[tail], pos[head]
        if self.directed:
            w = np.where(pu < pv, w, 0.0)
        else:
            pu, pv = np.minimum(pu, pv), np.maximum(pu, pv)
        delta = (np.bincount(pu, weights=w, minlength=m + 2)
                 - np.bincount(pv, weights=w, minlength=m + 2))
        out = np.zeros(m + 1)
        np.cumsum(delta[1:m + 1], out=out[1:])
        return out

    def _arcs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(tail, head, weight)`` of every arc (directed), or of one arc per edge with
        ``tail < head`` (undirected); built once."""
        arcs = self.__dict__.get("_chain_arcs")
        if arcs is None:
            W = self.adjacency
            tail = np.repeat(np.arange(self.n), np.diff(W.indptr))
            head = W.indices.astype(np.int64)
            w = np.asarray(W.data, dtype=np.float64)
            if not self.directed:
                keep = tail < head
                tail, head, w = tail[keep], head[keep], w[keep]
            arcs = self._chain_arcs = (tail, head, w)
        return arcs

    def cut_form(self) -> CutForm:
        form = self.__dict__.get("_cut_form")
        if form is None:
            form = self._cut_form = CutForm.of_matrix(self.adjacency, np.zeros(self.n),
                                                      bool(self.directed))
        return form

    def to_networkx(self) -> object:
        """The graph as a networkx ``DiGraph`` (directed) or ``Graph``, nodes labelled as given,
        with the ``'weight'`` edge attribute."""
        G = nx.from_scipy_sparse_array(
            self.adjacency, create_using=nx.DiGraph if self.directed else nx.Graph)
        return nx.relabel_nodes(G, dict(enumerate(self.nodes)), copy=False)

    def state(self) -> FunctionState:
        return _GraphCutState(self)


def _adjacency(obj: object, directed: bool | None) -> tuple[sp.csr_array, list, bool]:
    caller = "GraphCut"
    if directed is not None and not isinstance(directed, (bool, np.bool_)):
        raise ValidationError(
            f"The 'directed' parameter of {caller} must be True, False or None; got {directed!r}."
        )
    if isinstance(obj, nx.Graph):
        if obj.number_of_nodes() == 0:
            raise ValidationError(
                f"The 'graph_or_weights' argument of {caller} has no nodes."
            )
        if obj.is_directed() and directed is False:
            raise ValidationError(
                f"{caller} was given a DiGraph with directed=False; pass directed=True for the "
                "directed cut, or graph.to_undirected() for the undirected one."
            )
        directed = obj.is_directed() if directed is None else bool(directed)
        nodes = list(obj.nodes)
        W = nx.to_scipy_sparse_array(obj, nodelist=nodes, weight="weight", format="csr",
                                     dtype=np.float64)
        W = as_matrix(W, "graph_or_weights (edge 'weight' attribute)", caller)
    else:
        W = as_matrix(obj, "graph_or_weights", caller)
        if W.shape[0] != W.shape[1]:
            raise ValidationError(
                f"The 'graph_or_weights' matrix of {caller} must be square; got shape {W.shape}."
            )
        nodes = list(range(W.shape[0]))
        directed = False if directed is None else bool(directed)
        W = sp.csr_array(W, dtype=np.float64)
        if not directed:
            asym = abs(W - W.T).max() if W.nnz else 0.0
            # relative to the largest weight: an absolute floor would let a matrix of tiny
            # weights be silently symmetrised however asymmetric it is
            if asym > 1e-12 * float(abs(W).max() if W.nnz else 0.0):
                raise ValidationError(
                    f"The 'graph_or_weights' matrix of {caller} is not symmetric (largest "
                    f"|W - W.T| = {float(asym):.3g}); pass directed=True for a directed cut or "
                    "(W + W.T) / 2 for an undirected one."
                )
            W = (W + W.T) * 0.5
    coo = sp.coo_array(W, dtype=np.float64)
    off = coo.row != coo.col  # self-loops never cross a cut
    W = sp.csr_array((coo.data[off], (coo.row[off], coo.col[off])), shape=coo.shape)
    W.sum_duplicates()
    W.eliminate_zeros()
    return W, nodes, bool(directed)


class _GraphCutState(FunctionState):
    """Weights from every node into S (``to_s``) and from S into every node (``from_s``)."""

    f: GraphCut

    def __init__(self, f: GraphCut):
        super().__init__(f)
        self.to_s = np.zeros(f.n)
        self.from_s = np.zeros(f.n)

    def _gains(self, cand: np.ndarray) -> np.ndarray:
        out = self.f._out_degree[cand] - self.to_s[cand] - self.from_s[cand]
        out[self.mask[cand]] = 0.0
        return out

    def _add(self, e: int) -> None:
        f = self.f
        self.value += float(f._out_degree[e] - self.to_s[e] - self.from_s[e])
        W, csc = f.adjacency, f._csc
        lo, hi = csc.indptr[e], csc.indptr[e + 1]
        self.to_s[csc.indices[lo:hi]] += csc.data[lo:hi]  # column e: W[u, e] for all u
        lo, hi = W.indptr[e], W.indptr[e + 1]
        self.from_s[W.indices[lo:hi]] += W.data[lo:hi]  # row e: W[e, v] for all v
