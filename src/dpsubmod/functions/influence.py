"""Influence spread under the independent cascade model, estimated by reverse-reachable sets."""

from __future__ import annotations

import numbers

import networkx as nx
import numpy as np
import scipy.sparse as sp

from .._rng import RNGLike, as_generator
from .._validation import check_int, check_real
from ..errors import ParameterTypeError, ValidationError
from ._inputs import concat_ranges
from .coverage import Coverage


class InfluenceSpread(Coverage):
    r"""Influence spread :math:`\sigma(S)` of seed set ``S`` under the independent cascade model.

    In the independent cascade (IC) model a newly activated node ``u`` gets one chance to
    activate each out-neighbour ``v``, succeeding with probability :math:`p_{uv}`; the spread
    :math:`\sigma(S)` is the expected number of nodes active at the end when ``S`` starts
    active. It is monotone and submodular (Kempe, Kleinberg and Tardos 2003).

    This class estimates :math:`\sigma` by **reverse-reachable (RR) sets** (Borgs et al. 2014;
    Tang et al. 2014): an RR set is the set of nodes that reach a uniformly random root ``v``
    through edges kept independently with probability :math:`p_{uv}` (a reverse breadth-first
    search in which each edge is tried once). ``S`` activates ``v`` in the sampled live-edge
    graph exactly when it meets the RR set, so

    .. math:: \hat\sigma(S) = n \cdot \frac{\#\{r : S \cap R_r \ne \emptyset\}}{\theta}

    is unbiased for :math:`\sigma(S)` with :math:`\theta` = ``n_samples``. For fixed samples
    :math:`\hat\sigma` **is a weighted coverage function** (nodes are the sets, RR sets the
    elements, each of weight :math:`n/\theta`), so this class is a :class:`Coverage` and
    inherits its sparse incremental state. Monotone and submodular exactly, for every draw.

    Parameters
    ----------
    graph : networkx.DiGraph or networkx.Graph
        The network; an undirected edge propagates both ways with the same probability. The
        ground set is ``list(graph.nodes)`` in that order (element ``i`` is ``nodes[i]``).
    n_samples : int
        Number ``theta`` of RR sets. The estimate of a fixed ``S`` has standard deviation at most
        ``n / (2 sqrt(theta))``; Tang et al. (2014) give the ``theta`` needed for a
        ``(1 - 1/e - eps)`` guarantee of greedy.
    probability : str or float, default="p"
        Name of the edge attribute holding :math:`p_{uv}` (every edge must have it), or one
        probability in ``[0, 1]`` for all edges.
    rng : int, Generator or None, default=None
        Source of the roots and edge coins; the same seed gives the same RR sets.
    sensitivity : float, optional
        Passed through. The data here is the graph, and privacy holds at whatever level the
        caller declares (for example edge-level, or node-level with a bound on the influence of
        one node's edges); nothing is derived, and :meth:`neighbour` is not available.

    Attributes
    ----------
    nodes : list
        Node labels in ground-set order.
    n_samples : int
    rr_sets : scipy.sparse.csr_array, shape (n_samples, n)
        ``rr_sets[r, i] = 1`` when node ``i`` is in RR set ``r`` (the transpose of
        ``incidence``).

    References
    ----------
    Kempe, D., Kleinberg, J. and Tardos, É. (2003). Maximizing the spread of influence through
    a social network. KDD.
    Borgs, C., Brautbar, M., Chayes, J. and Lucier, B. (2014). Maximizing social influence in
    nearly optimal time. SODA.
    Tang, Y., Xiao, X. and Shi, Y. (2014). Influence maximization: near-optimal time complexity
    meets practical efficiency. SIGMOD.

    Examples
    --------
    >>> import networkx as nx
    >>> G = nx.DiGraph([(0, 1), (1, 2)])
    >>> f = InfluenceSpread(G, 1000, probability=1.0, rng=0)
    >>> round(f([0]), 9)  # with p = 1 node 0 reaches every node
    3.0
    """

    monotone = True
    submodular = True
    neighbouring = "declared by the caller (the data is the graph)"

    def __init__(self, graph: object, n_samples: int, *, probability: str | float = "p",
                 rng: RNGLike = None, sensitivity: float | None = None):
        caller = "InfluenceSpread"
        nodes, indptr, src, prob = _reverse_graph(graph, probability, caller)
        theta = check_int(n_samples, "n_samples", low=1, caller=caller)
        gen = as_generator(rng)
        n = len(nodes)
        sample, node = _sample_rr_sets(indptr, src, prob, n, theta, gen)
        inc = sp.csr_array((np.ones(node.size), (node, sample)), shape=(n, theta))
        super().__init__(inc, np.full(theta, n / theta), sensitivity=sensitivity)
        self.nodes = nodes
        self.n_samples = theta

    @property
    def rr_sets(self) -> sp.csr_array:
        return sp.csr_array(self.incidence.T)

    @classmethod
    def from_records(cls, records: object, n_sets: int) -> Coverage:
        """Not available: an influence objective is built from a graph, not from records."""
        raise ValidationError(
            "InfluenceSpread is built from a graph; use Coverage.from_records for person-level "
            "coverage records."
        )


def _reverse_graph(graph: object, probability: object, caller: str
                   ) -> tuple[list, np.ndarray, np.ndarray, np.ndarray]:
    """In-edge CSR arrays: for node v, ``src[indptr[v]:indptr[v+1]]`` and their probabilities."""
    if not isinstance(graph, nx.Graph):
        raise ParameterTypeError(
            f"The 'graph' argument of {caller} must be a networkx Graph or DiGraph; got "
            f"{type(graph).__name__}."
        )
    if graph.number_of_nodes() == 0:
        raise ValidationError(f"The 'graph' argument of {caller} has no nodes.")
    nodes = list(graph.nodes)
    index = {v: i for i, v in enumerate(nodes)}
    const = None
    if isinstance(probability, numbers.Real) and not isinstance(probability, bool):
        const = check_real(probability, "probability", low=0.0, high=1.0, caller=caller)
    elif not isinstance(probability, str):
        raise ParameterTypeError(
            f"The 'probability' parameter of {caller} must be an edge-attribute name or a number "
            f"in [0, 1]; got {type(probability).__name__}."
        )
    u_l, v_l, p_l = [], [], []
    for u, v, data in graph.edges(data=True):
        if const is None:
            if probability not in data:
                raise ValidationError(
                    f"Edge ({u!r}, {v!r}) of the graph given to {caller} has no {probability!r} "
                    "attribute; set it on every edge or pass probability=<number>."
                )
            p = data[probability]
            if isinstance(p, bool) or not isinstance(p, numbers.Real) or not 0.0 <= p <= 1.0:
                raise ValidationError(
                    f"Edge ({u!r}, {v!r}) of the graph given to {caller} has {probability}="
                    f"{p!r}; edge probabilities must be numbers in [0, 1]."
                )
        else:
            p = const
        u_l.append(index[u])
        v_l.append(index[v])
        p_l.append(float(p))
    u_a = np.asarray(u_l, dtype=np.int64)
    v_a = np.asarray(v_l, dtype=np.int64)
    p_a = np.asarray(p_l, dtype=np.float64)
    if not graph.is_directed():
        u_a, v_a = np.concatenate([u_a, v_a]), np.concatenate([v_a, u_a])
        p_a = np.concatenate([p_a, p_a])
    order = np.argsort(v_a, kind="stable")
    src, dst, prob = u_a[order], v_a[order], p_a[order]
    indptr = np.zeros(len(nodes) + 1, dtype=np.int64)
    np.cumsum(np.bincount(dst, minlength=len(nodes)), out=indptr[1:])
    return nodes, indptr, src, prob


def _sample_rr_sets(indptr: np.ndarray, src: np.ndarray, prob: np.ndarray, n: int, theta: int,
                    gen: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """All ``theta`` RR sets at once, as (sample id, node) pairs.

    The reverse breadth-first searches run level-synchronously over all samples: each level
    gathers the in-edges of the frontier pairs, flips one coin per edge, and keeps the new
    (sample, node) pairs. A pair enters the frontier once, so each edge is tried at most once
    per sample, as the live-edge construction requires.
    """
    roots = gen.integers(n, size=theta)
    visited = np.arange(theta, dtype=np.int64) * n + roots  # sorted: sample id dominates
    f_sample, f_node = np.arange(theta, dtype=np.int64), roots.astype(np.int64)
    while f_node.size:
        starts = indptr[f_node]
        lens = indptr[f_node + 1] - starts
        edges = concat_ranges(starts, lens)
        if edges.size == 0:
            break
        live = gen.random(edges.size) < prob[edges]
        keys = np.repeat(f_sample, lens)[live] * n + src[edges[live]]
        keys = np.unique(keys)
        pos = np.searchsorted(visited, keys)
        seen = pos < visited.size
        seen[seen] = visited[pos[seen]] == keys[seen]
        keys = keys[~seen]
        if keys.size == 0:
            break
        visited = np.union1d(visited, keys)
        f_sample, f_node = np.divmod(keys, n)
    return np.divmod(visited, n)
