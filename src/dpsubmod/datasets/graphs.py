"""Graphs for influence, cut and coverage objectives: the small social networks that ship with
networkx (no download), and seeded random graphs with per-edge activation probabilities.

Every loader returns a :class:`GraphDataset` that says what a node and an edge are and what one
record is, so that a privacy statement ("neighbouring graphs differ in one record") is meaningful.
For the graph objectives of :mod:`dpsubmod.functions` (:class:`~dpsubmod.functions.GraphCut`,
:class:`~dpsubmod.functions.InfluenceSpread`) the sensitivity is declared by the caller at the
level stated in ``record``.

Edge attributes: ``"weight"`` (read by ``GraphCut``; 1 where absent) and, on the random graphs or
after :func:`with_activation_probabilities`, ``"p"``, the independent-cascade activation
probability (read by ``InfluenceSpread(graph, ..., probability="p")``).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any

import networkx as nx
import numpy as np

from .._rng import RNGLike, as_generator
from .._validation import check_int, check_real
from ..errors import ParameterTypeError, ValidationError


@dataclass(frozen=True, eq=False)
class GraphDataset:
    """A graph with a statement of what its parts are.

    Attributes
    ----------
    graph : networkx.Graph
        A fresh graph owned by the caller (each loader call builds a new one). The ground set of
        the graph objectives is ``list(graph.nodes)`` in that order.
    name : str
    node : str
        What one node stands for.
    edge : str
        What one edge stands for (and its ``weight`` / ``p`` attributes, if any).
    record : str
        The privacy unit a neighbouring relation on this graph refers to.
    source : str
        Where the data come from (a citation, or the generator and its parameters).
    """

    graph: Any
    name: str
    node: str
    edge: str
    record: str
    source: str

    @property
    def nodes(self) -> list:
        """The node labels in ground-set order."""
        return list(self.graph.nodes)

    @property
    def n(self) -> int:
        """Number of nodes (the ground-set size of node-selection objectives)."""
        return int(self.graph.number_of_nodes())

    @property
    def n_edges(self) -> int:
        return int(self.graph.number_of_edges())

    def __repr__(self) -> str:
        return f"GraphDataset({self.name!r}, nodes={self.n}, edges={self.n_edges})"


_EDGE_LEVEL = ("one edge (edge-level privacy: neighbouring graphs differ in one edge or in one "
               "edge's weight)")


def load_karate_club() -> GraphDataset:
    """Zachary's karate club: 34 members of a university karate club, 78 friendships.

    A node is a club member (attribute ``club``: the faction, "Mr. Hi" or "Officer", that the
    member joined after the club split). An edge joins two members who interacted outside the
    club; its ``weight`` (1 to 7) counts the contexts in which they interacted. One record is one
    edge (edge-level privacy).

    Source: Zachary, W. W. (1977). An information flow model for conflict and fission in small
    groups. *Journal of Anthropological Research* 33(4), as bundled with networkx.
    """
    return GraphDataset(
        graph=nx.karate_club_graph(), name="karate_club",
        node="a member of the karate club (attribute 'club': faction after the split)",
        edge="two members interacted outside the club (weight: number of contexts, 1-7)",
        record=_EDGE_LEVEL,
        source="Zachary (1977), Journal of Anthropological Research 33(4); bundled with networkx",
    )


def load_les_miserables() -> GraphDataset:
    """Co-appearance network of the characters of Victor Hugo's *Les Misérables*: 77 characters,
    254 edges.

    A node is a character. An edge joins two characters who appear in a common chapter; its
    ``weight`` is the number of such chapters. One record is one edge (edge-level privacy).

    Source: Knuth, D. E. (1993). *The Stanford GraphBase*, as bundled with networkx.
    """
    return GraphDataset(
        graph=nx.les_miserables_graph(), name="les_miserables",
        node="a character of Les Miserables",
        edge="two characters appear in a common chapter (weight: number of such chapters)",
        record=_EDGE_LEVEL,
        source="Knuth (1993), The Stanford GraphBase; bundled with networkx",
    )


def load_davis_southern_women() -> GraphDataset:
    """Davis' Southern Women: a bipartite graph of 18 women and the 14 social events they
    attended (89 attendances), Natchez, Mississippi, 1930s.

    A node is a woman (attribute ``bipartite = 0``) or an event (``bipartite = 1``, named
    ``E1`` .. ``E14``). An edge is one woman's attendance at one event. One record is one woman:
    her node together with all her attendances (node-level privacy for the women; the events
    are public). As coverage data, each woman is a person and each event a candidate set that
    covers the women who attended it.

    Source: Davis, A., Gardner, B. B. and Gardner, M. R. (1941). *Deep South*. University of
    Chicago Press, as bundled with networkx.
    """
    return GraphDataset(
        graph=nx.davis_southern_women_graph(), name="davis_southern_women",
        node="a woman (bipartite=0) or a social event (bipartite=1)",
        edge="the woman attended the event",
        record="one woman with all her attendances (node-level privacy for the women)",
        source="Davis, Gardner and Gardner (1941), Deep South; bundled with networkx",
    )


def load_florentine_families() -> GraphDataset:
    """Marriage ties among 15 Renaissance Florentine families (20 edges).

    A node is a family. An edge is a marriage tie between two families. One record is one edge
    (edge-level privacy).

    Source: Breiger, R. L. and Pattison, P. E. (1986). Cumulated social roles: the duality of
    persons and their algebras. *Social Networks* 8(3), from the data of Padgett; as bundled
    with networkx.
    """
    return GraphDataset(
        graph=nx.florentine_families_graph(), name="florentine_families",
        node="a Florentine family",
        edge="a marriage tie between the two families",
        record=_EDGE_LEVEL,
        source="Breiger and Pattison (1986), Social Networks 8(3); bundled with networkx",
    )


#: Name -> loader of the graphs bundled with networkx.
GRAPHS = {
    "karate_club": load_karate_club,
    "les_miserables": load_les_miserables,
    "davis_southern_women": load_davis_southern_women,
    "florentine_families": load_florentine_families,
}

_ALIASES = {"karate": "karate_club", "davis": "davis_southern_women",
            "florentine": "florentine_families"}


def load_graph(name: str) -> GraphDataset:
    """Load a bundled graph by name.

    Parameters
    ----------
    name : {"karate_club", "les_miserables", "davis_southern_women", "florentine_families"}
        Case is ignored, "-" or spaces may stand for "_", and "karate", "davis" and
        "florentine" are accepted as short names.

    Returns
    -------
    GraphDataset
    """
    if not isinstance(name, str):
        raise ParameterTypeError(
            f"The 'name' parameter of load_graph must be a string; got {type(name).__name__}."
        )
    key = name.strip().lower().replace("-", "_").replace(" ", "_")
    key = _ALIASES.get(key, key)
    if key not in GRAPHS:
        raise ValidationError(
            f"The 'name' parameter of load_graph must be one of {sorted(GRAPHS)}; got {name!r}."
        )
    return GRAPHS[key]()


# ------------------------------------------------------------------------------------------------
# random graphs
# ------------------------------------------------------------------------------------------------
def _value_spec(spec: object, name: str, caller: str, *, low: float, high: float | None
                ) -> tuple[float, float]:
    """A constant ``c`` or a range ``(lo, hi)`` as the pair ``(lo, hi)`` (``lo == hi`` for a
    constant), checked to lie in ``[low, high]``."""
    if isinstance(spec, numbers.Real) and not isinstance(spec, bool):
        v = check_real(spec, name, low=low, high=high, caller=caller)
        return v, v
    try:
        lo, hi = spec  # type: ignore[misc]
    except (TypeError, ValueError):
        raise ParameterTypeError(
            f"The '{name}' parameter of {caller} must be a number or a pair (low, high); got "
            f"{spec!r}."
        ) from None
    lo = check_real(lo, f"{name}[0]", low=low, high=high, caller=caller)
    hi = check_real(hi, f"{name}[1]", low=low, high=high, caller=caller)
    if hi < lo:
        raise ValidationError(
            f"The '{name}' parameter of {caller} must be a pair (low, high) with low <= high; "
            f"got {spec!r}."
        )
    return lo, hi


def _draw(spec: tuple[float, float], size: int, gen: np.random.Generator) -> np.ndarray:
    lo, hi = spec
    if lo == hi:
        return np.full(size, lo)
    return gen.uniform(lo, hi, size=size)


def _triangle_pairs(t: np.ndarray, s: int) -> tuple[np.ndarray, np.ndarray]:
    """Decode indices ``t`` in ``[0, s(s-1)/2)`` to the pairs ``i < j`` of ``range(s)`` in
    row-major order (row ``i`` holds the pairs ``(i, i+1) .. (i, s-1)``)."""
    # rows before i hold c(i) = i(2s - i - 1)/2 pairs; i is the largest with c(i) <= t
    t = t.astype(np.int64)

    def before(r: np.ndarray) -> np.ndarray:
        return r * (2 * s - r - 1) // 2

    i = np.floor(((2 * s - 1) - np.sqrt((2 * s - 1) ** 2 - 8.0 * t)) / 2).astype(np.int64)
    i = np.clip(i, 0, max(s - 2, 0))
    # the square root is exact to a unit, so one step each way fixes floating-point error
    i = np.where(before(i) > t, i - 1, i)
    i = np.where(before(i + 1) <= t, i + 1, i)
    j = t - before(i) + i + 1
    return i, j


def _sample_blocks(sizes: list[int], P: np.ndarray, gen: np.random.Generator
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Edges of a stochastic block model: for each pair of blocks the number of edges is
    binomial and their positions uniform without replacement, so the cost is proportional to
    the number of edges, not to the number of node pairs."""
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    us, vs = [], []
    for a in range(len(sizes)):
        for b in range(a, len(sizes)):
            sa, sb = sizes[a], sizes[b]
            pairs = sa * (sa - 1) // 2 if a == b else sa * sb
            if pairs == 0 or P[a, b] == 0.0:
                continue
            m = int(gen.binomial(pairs, P[a, b]))
            if m == 0:
                continue
            t = np.sort(gen.choice(pairs, size=m, replace=False))
            if a == b:
                i, j = _triangle_pairs(t, sa)
            else:
                i, j = t // sb, t % sb
            us.append(i + offsets[a])
            vs.append(j + offsets[b])
    if not us:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    u, v = np.concatenate(us), np.concatenate(vs)
    order = np.lexsort((v, u))
    return u[order], v[order]


def _build(n: int, u: np.ndarray, v: np.ndarray, block: np.ndarray,
           activation: tuple[float, float], weight: tuple[float, float],
           gen: np.random.Generator) -> Any:
    p = _draw(activation, u.size, gen)
    w = _draw(weight, u.size, gen)
    G = nx.Graph()
    G.add_nodes_from((i, {"block": int(block[i])}) for i in range(n))
    G.add_edges_from((int(a), int(b), {"p": float(pa), "weight": float(wa)})
                     for a, b, pa, wa in zip(u, v, p, w))
    return G


def planted_partition_graph(n_blocks: int, block_size: int, p_in: float, p_out: float, *,
                            activation: float | tuple[float, float] = (0.0, 0.2),
                            weight: float | tuple[float, float] = 1.0,
                            rng: RNGLike = None) -> GraphDataset:
    """A planted-partition (stochastic block) graph with per-edge activation probabilities.

    ``n_blocks`` groups of ``block_size`` nodes (node ``i`` is in block ``i // block_size``,
    node attribute ``block``); each pair of nodes is joined independently with probability
    ``p_in`` inside a block and ``p_out`` across blocks (Condon and Karp 2001). Each edge gets an
    independent-cascade activation probability ``p`` and a ``weight`` (for cut objectives), each
    a constant or drawn uniformly from a range ``(low, high)``.

    Sampling costs time and memory proportional to the number of edges (a binomial count per
    pair of blocks, then uniform positions), so large sparse graphs are cheap.

    A node is a synthetic person, an edge a synthetic tie; the declared record is one edge
    (edge-level privacy), as for the bundled graphs.

    Parameters
    ----------
    n_blocks, block_size : int
        At least 1 each.
    p_in, p_out : float
        Edge probabilities in ``[0, 1]`` within and across blocks.
    activation : float or (float, float), default=(0.0, 0.2)
        The edge attribute ``p``, in ``[0, 1]``: a constant, or uniform on ``[low, high]``.
    weight : float or (float, float), default=1.0
        The edge attribute ``weight``, nonnegative: a constant, or uniform on ``[low, high]``.
    rng : int, Generator or None
        The same seed gives the same graph.

    Returns
    -------
    GraphDataset
    """
    caller = "planted_partition_graph"
    n_blocks = check_int(n_blocks, "n_blocks", low=1, caller=caller)
    block_size = check_int(block_size, "block_size", low=1, caller=caller)
    p_in = check_real(p_in, "p_in", low=0.0, high=1.0, caller=caller)
    p_out = check_real(p_out, "p_out", low=0.0, high=1.0, caller=caller)
    act = _value_spec(activation, "activation", caller, low=0.0, high=1.0)
    wgt = _value_spec(weight, "weight", caller, low=0.0, high=None)
    gen = as_generator(rng)
    P = np.full((n_blocks, n_blocks), p_out)
    np.fill_diagonal(P, p_in)
    n = n_blocks * block_size
    u, v = _sample_blocks([block_size] * n_blocks, P, gen)
    G = _build(n, u, v, np.arange(n) // block_size, act, wgt, gen)
    return GraphDataset(
        graph=G, name="planted_partition",
        node="a synthetic person (attribute 'block': planted group)",
        edge="a synthetic tie (attributes 'p': activation probability, 'weight')",
        record=_EDGE_LEVEL,
        source=(f"planted_partition_graph(n_blocks={n_blocks}, block_size={block_size}, "
                f"p_in={p_in:g}, p_out={p_out:g}, activation={_spec_text(act)}, "
                f"weight={_spec_text(wgt)})"),
    )


def erdos_renyi_graph(n: int, p: float, *, activation: float | tuple[float, float] = (0.0, 0.2),
                      weight: float | tuple[float, float] = 1.0,
                      rng: RNGLike = None) -> GraphDataset:
    """An Erdős–Rényi graph ``G(n, p)`` with per-edge activation probabilities.

    Each of the ``n (n - 1) / 2`` pairs is an edge independently with probability ``p``; edges
    carry an activation probability ``p`` attribute and a ``weight`` as in
    :func:`planted_partition_graph` (of which this is the one-block case).

    Parameters
    ----------
    n : int
        Number of nodes, at least 1.
    p : float
        Edge probability in ``[0, 1]``.
    activation, weight, rng
        As in :func:`planted_partition_graph`.

    Returns
    -------
    GraphDataset
    """
    caller = "erdos_renyi_graph"
    n = check_int(n, "n", low=1, caller=caller)
    p = check_real(p, "p", low=0.0, high=1.0, caller=caller)
    act = _value_spec(activation, "activation", caller, low=0.0, high=1.0)
    wgt = _value_spec(weight, "weight", caller, low=0.0, high=None)
    gen = as_generator(rng)
    u, v = _sample_blocks([n], np.array([[p]]), gen)
    G = _build(n, u, v, np.zeros(n, dtype=np.int64), act, wgt, gen)
    return GraphDataset(
        graph=G, name="erdos_renyi",
        node="a synthetic person", edge="a synthetic tie (attributes 'p', 'weight')",
        record=_EDGE_LEVEL,
        source=(f"erdos_renyi_graph(n={n}, p={p:g}, activation={_spec_text(act)}, "
                f"weight={_spec_text(wgt)})"),
    )


def with_activation_probabilities(data: GraphDataset,
                                  activation: float | tuple[float, float] = (0.0, 0.2), *,
                                  attribute: str = "p", rng: RNGLike = None) -> GraphDataset:
    """A copy of ``data`` whose edges carry independent-cascade activation probabilities.

    Typical use: influence maximization on a bundled graph,
    ``InfluenceSpread(with_activation_probabilities(load_karate_club(), rng=0).graph, 10_000)``.
    The probabilities are drawn independently of the graph's data (a constant, or uniform on
    ``[low, high]``), in ``list(graph.edges)`` order.

    Parameters
    ----------
    data : GraphDataset
    activation : float or (float, float), default=(0.0, 0.2)
        Values in ``[0, 1]``.
    attribute : str, default="p"
        Edge attribute to set.
    rng : int, Generator or None

    Returns
    -------
    GraphDataset
        Same description, new graph; ``data`` is not modified.
    """
    caller = "with_activation_probabilities"
    if not isinstance(data, GraphDataset):
        raise ParameterTypeError(
            f"The 'data' argument of {caller} must be a GraphDataset; got {type(data).__name__}."
        )
    if not isinstance(attribute, str):
        raise ParameterTypeError(
            f"The 'attribute' parameter of {caller} must be a string; got {attribute!r}."
        )
    act = _value_spec(activation, "activation", caller, low=0.0, high=1.0)
    gen = as_generator(rng)
    G = data.graph.copy()
    edges = list(G.edges)
    values = _draw(act, len(edges), gen)
    for e, val in zip(edges, values):
        G.edges[e][attribute] = float(val)
    return GraphDataset(
        graph=G, name=data.name, node=data.node,
        edge=f"{data.edge}; attribute {attribute!r}: activation probability {_spec_text(act)}",
        record=data.record, source=data.source,
    )


def _spec_text(spec: tuple[float, float]) -> str:
    lo, hi = spec
    return f"{lo:g}" if lo == hi else f"U({lo:g}, {hi:g})"

