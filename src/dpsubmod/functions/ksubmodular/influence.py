"""k-topic influence spread under the independent cascade model (Ohsaka and Yoshida 2015),
estimated with reverse-reachable sets."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from ..._rng import RNGLike, as_generator
from ..._validation import check_finite, check_indices, check_int
from ...errors import ParameterTypeError, ValidationError
from .coverage import KCoverage

# Upper bound on the number of live-edge coins drawn at once (memory of one batch).
_BATCH_COINS = 2_000_000


def directed_edges(graph: Any) -> tuple[np.ndarray, np.ndarray, list[Any]]:
    """The directed edges of a networkx graph as index arrays, and the node order.

    An undirected edge ``{u, v}`` becomes the two arcs ``u -> v`` and ``v -> u`` (in that order,
    edge after edge), so each direction can carry its own propagation probability.

    Returns
    -------
    src, dst : ndarray of int64
        Arc ``a`` goes from vertex ``src[a]`` to ``dst[a]`` (indices into ``nodes``).
    nodes : list
        The graph's nodes; vertex ``v`` of the ground set is ``nodes[v]``.
    """
    if not hasattr(graph, "nodes") or not hasattr(graph, "edges"):
        raise ParameterTypeError(
            f"The 'graph' argument must be a networkx graph; got {type(graph).__name__}."
        )
    nodes = list(graph.nodes())
    index = {u: i for i, u in enumerate(nodes)}
    arcs = []
    for u, v in graph.edges():
        arcs.append((index[u], index[v]))
        if not graph.is_directed():
            arcs.append((index[v], index[u]))
    a = np.asarray(arcs, dtype=np.int64).reshape(-1, 2)
    return a[:, 0].copy(), a[:, 1].copy(), nodes


def sample_rr_incidence(n: int, src: Any, dst: Any, probabilities: Any, targets: Any,
                        *, rng: RNGLike = None) -> list[sp.csr_array]:
    """Reverse-reachable sets of the given targets, one per topic, under the k-topic IC model.

    For each target ``v_j`` and topic ``i``, every arc ``u -> w`` is live independently with
    probability ``probabilities[i, a]`` (topics independent of each other, as the k-topic
    independent cascade model assumes), and ``RR_i(v_j)`` is the set of vertices from which ``v_j``
    is reachable along live arcs. A topic-``i`` seed set ``S_i`` activates ``v_j`` in that
    realisation iff ``S_i`` meets ``RR_i(v_j)`` (Borgs et al. 2014; Tang et al. 2014).

    The reachability of a whole batch of samples is propagated at once, as sparse matrix-vector
    products over the disjoint union of the samples' live-edge graphs.

    Returns
    -------
    list of k scipy.sparse.csr_array of shape (n, len(targets))
        ``out[i][u, j] = 1`` iff ``u`` is in ``RR_{i+1}(v_j)``.
    """
    gen = as_generator(rng)
    src = check_indices(src, n, "src")
    dst = check_indices(dst, n, "dst")
    t = check_indices(targets, n, "targets")
    p = check_finite(probabilities, "probabilities", ndim=2, nonnegative=True, dtype=np.float64)
    if p.shape[1] != src.size or src.size != dst.size:
        raise ValidationError(
            f"The 'probabilities' must have shape (k, number of arcs={src.size}); got {p.shape}."
        )
    if p.size and p.max() > 1.0:
        raise ValidationError("The 'probabilities' must lie in [0, 1].")
    m = src.size
    batch = max(1, _BATCH_COINS // max(m, 1))
    out = []
    for i in range(p.shape[0]):
        rows, cols = [], []
        for start in range(0, t.size, batch):
            tb = t[start:start + batch]
            b = tb.size
            live = gen.random((b, m)) < p[i]
            s_idx, a_idx = np.nonzero(live)
            # Arc u -> w live in sample s: if w is reached, so is u (u can influence w).
            adj = sp.csr_array((np.ones(s_idx.size), (s_idx * n + src[a_idx],
                                                      s_idx * n + dst[a_idx])),
                               shape=(b * n, b * n))
            reach = np.zeros(b * n, dtype=bool)
            reach[np.arange(b) * n + tb] = True
            front = reach.astype(np.float64)
            while True:
                nxt = (adj @ front > 0) & ~reach
                if not nxt.any():
                    break
                reach |= nxt
                front = nxt.astype(np.float64)
            idx = np.flatnonzero(reach)
            rows.append(idx % n)
            cols.append(idx // n + start)
        r = np.concatenate(rows) if rows else np.zeros(0, dtype=np.int64)
        c = np.concatenate(cols) if cols else np.zeros(0, dtype=np.int64)
        out.append(sp.csr_array((np.ones(r.size), (r, c)), shape=(n, t.size)))
    return out


class KTopicInfluence(KCoverage):
    r"""k-topic influence spread (Ohsaka and Yoshida 2015), by reverse-reachable sets.

    A directed graph carries one propagation probability per arc and topic, ``p^i_{uv}``. Seeds
    ``X_i`` of topic ``i`` start an independent cascade with probabilities ``p^i``; topics spread
    independently. The influence spread counts each vertex activated by at least one topic:

    .. math:: \sigma(\mathbf x) = \mathbb E\,\big|\textstyle\bigcup_{i=1}^{k} A_i(X_i)\big|.

    It is estimated from ``theta`` records, one per uniformly drawn target ``v_j``, each holding the
    target's ``k`` reverse-reachable sets ``RR_i(v_j)``:

    .. math::
        F(\mathbf x) = \frac{n}{\theta} \sum_{j=1}^{\theta}
        [\exists i: X_i \cap RR_i(v_j) \ne \emptyset],

    an unbiased estimate of ``sigma``; it is a k-label coverage function in ``"union"`` mode
    (:class:`KCoverage`), so it is **monotone k-submodular** (as is ``sigma`` itself, Ohsaka and
    Yoshida 2015, by the same argument on each live-edge realisation). ``mode="sum"`` counts a
    vertex once per topic that reaches it (total activations). With ``normalize=True`` the factor
    ``n`` is dropped (``F`` is the fraction of targets reached, in ``[0, 1]``).

    Attributes
    ----------
    sensitivity : float
        ``n / theta`` (``1 / theta`` normalised; times ``k`` in ``"sum"`` mode) under **replace one
        record**: a record is one target's ``k`` reverse-reachable sets (for instance a surveyed
        user's report of who could influence them, per topic). This protects the records the
        objective is built from; it says nothing about the privacy of the graph's edges, which
        every record depends on.

    References
    ----------
    N. Ohsaka and Y. Yoshida. Monotone k-submodular function maximization with size constraints.
    NIPS 2015. C. Borgs, M. Brautbar, J. Chayes and B. Lucier. Maximizing social influence in
    nearly optimal time. SODA 2014.

    Examples
    --------
    >>> import networkx as nx
    >>> import numpy as np
    >>> g = nx.karate_club_graph()
    >>> src, dst, nodes = directed_edges(g)
    >>> p = np.random.default_rng(0).uniform(0.0, 0.2, (2, src.size))
    >>> f = KTopicInfluence.from_graph(g, p, n_samples=2000, rng=1)
    >>> f.n, f.k, round(f.sensitivity, 4)
    (34, 2, 0.017)
    """

    neighbouring = "replace one record (one target's k reverse-reachable sets)"

    def __init__(self, incidence: Any, *, n_vertices: int | None = None, mode: str = "union",
                 normalize: bool = False):
        inc = list(incidence)
        if not inc:
            raise ValidationError("The 'incidence' of KTopicInfluence needs at least one topic.")
        n, theta = inc[0].shape
        if n_vertices is not None and int(n_vertices) != n:
            raise ValidationError(
                f"The 'incidence' has {n} rows but n_vertices={n_vertices}; they must agree."
            )
        if theta < 1:
            raise ValidationError("KTopicInfluence needs at least one reverse-reachable record.")
        w = (1.0 if normalize else float(n)) / theta
        bound = w if mode == "union" else w * len(inc)
        super().__init__(inc, np.full(theta, w), mode=mode, record_bound=bound)
        self.normalize = bool(normalize)
        self.n_samples = theta
        self._graph: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self.nodes: list[Any] = list(range(n))

    @classmethod
    def from_edges(cls, n: int, src: Any, dst: Any, probabilities: Any, *, n_samples: int,
                   mode: str = "union", normalize: bool = False, rng: RNGLike = None
                   ) -> KTopicInfluence:
        """Draw ``n_samples`` records (uniform targets, their k reverse-reachable sets).

        Parameters
        ----------
        n : int
            Number of vertices (the ground set).
        src, dst : array-like of int
            Arcs ``src[a] -> dst[a]``.
        probabilities : array-like of shape (k, number of arcs)
            ``probabilities[i, a]`` = ``p^{i+1}`` of arc ``a``, in ``[0, 1]``.
        n_samples : int
            Number ``theta`` of records; the sensitivity is ``n / theta``.
        rng : int, Generator or None
            Randomness of the targets and live-edge coins.
        """
        caller = f"{cls.__name__}.from_edges"
        gen = as_generator(rng)
        n = check_int(n, "n", low=1, caller=caller)
        theta = check_int(n_samples, "n_samples", low=1, caller=caller)
        src = check_indices(src, n, "src", caller=caller)
        dst = check_indices(dst, n, "dst", caller=caller)
        p = check_finite(probabilities, "probabilities", caller=caller, ndim=2, nonnegative=True,
                         dtype=np.float64)
        if p.shape[1] != src.size or src.size != dst.size or p.shape[0] < 1:
            raise ValidationError(
                f"The 'probabilities' of {caller} must have shape (k, {src.size}) (one row per "
                f"topic, one column per arc); got {p.shape}."
            )
        if p.size and p.max() > 1.0:
            raise ValidationError(f"The 'probabilities' of {caller} must lie in [0, 1].")
        targets = gen.integers(n, size=theta)
        inc = sample_rr_incidence(n, src, dst, p, targets, rng=gen)
        f = cls(inc, n_vertices=n, mode=mode, normalize=normalize)
        f._graph = (src, dst, p)
        return f

    @classmethod
    def from_graph(cls, graph: Any, probabilities: Any, *, n_samples: int, mode: str = "union",
                   normalize: bool = False, rng: RNGLike = None) -> KTopicInfluence:
        """As :meth:`from_edges` for a networkx graph; ``probabilities`` follows the arc order of
        :func:`directed_edges` (both directions of an undirected edge), and vertex ``v`` of the
        ground set is ``f.nodes[v]``."""
        src, dst, nodes = directed_edges(graph)
        f = cls.from_edges(len(nodes), src, dst, probabilities, n_samples=n_samples, mode=mode,
                           normalize=normalize, rng=rng)
        f.nodes = nodes
        return f

    def neighbour(self, rng: RNGLike = None) -> KTopicInfluence:
        """Replace one uniformly chosen record by a fresh one (a new target and new live-edge
        coins) when the graph is known; otherwise by random sets (:meth:`KCoverage.neighbour`)."""
        gen = as_generator(rng)
        if self._graph is None:
            return super().neighbour(gen)
        src, dst, p = self._graph
        j = int(gen.integers(self.n_records))
        target = gen.integers(self.n, size=1)
        inc = sample_rr_incidence(self.n, src, dst, p, target, rng=gen)
        return self.replace_record(j, [c.tocoo().row for c in inc])
