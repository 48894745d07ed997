"""Minimization of a graph cut plus a modular term by one s-t minimum cut: the ``"maxflow"``
method of :func:`~dpsubmod.offline.minimize`, and :func:`minimize_cut_plus_modular`, which takes
the weights directly (Kolmogorov and Zabih 2004; Bach 2013, Section 6.2; the references are
listed in :mod:`dpsubmod.offline.minimization.minimize`).
"""

from __future__ import annotations

import networkx as nx
import numpy as np
import scipy.sparse as sp
from networkx.algorithms.flow import preflow_push

from ..._validation import check_finite, check_sparse_finite
from ...errors import GroundSetMismatchError, ParameterTypeError, ValidationError
from ...functions.base import SetFunction
from ._result import MinimizeResult


def _check_cut_data(W: object, m: object, directed: bool, caller: str
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Validated arcs ``(rows, cols, weights)`` (off-diagonal, positive) and the modular vector."""
    if sp.issparse(W):
        Ws = check_sparse_finite(W, "W", caller=caller, nonnegative=True)
        shape = Ws.shape
    else:
        Wd = check_finite(W, "W", caller=caller, ndim=2, nonnegative=True).astype(np.float64)
        shape = Wd.shape
        Ws = sp.csr_array(Wd)
    if shape[0] != shape[1]:
        raise ValidationError(
            f"The 'W' argument of {caller} must be a square (n, n) weight matrix; got shape "
            f"{shape}."
        )
    n = shape[0]
    if not isinstance(directed, bool):
        raise ParameterTypeError(
            f"The 'directed' parameter of {caller} must be a bool; got {directed!r}."
        )
    if not directed:
        asym = abs(Ws - Ws.T)
        top = float(abs(Ws).max()) if Ws.nnz else 0.0
        if asym.nnz and float(asym.max()) > 1e-12 * top:
            raise ValidationError(
                f"The 'W' argument of {caller} must be symmetric for an undirected cut "
                f"(largest asymmetry {float(asym.max()):.3g}). Pass (W + W.T) / 2, or "
                "directed=True to cut the arcs i -> j with i in S and j outside S."
            )
        Ws = (Ws + Ws.T) / 2.0  # exact symmetry, so each edge is counted once in either direction
    coo = sp.coo_array(Ws)
    keep = (coo.row != coo.col) & (coo.data > 0)
    if m is None:
        mv = np.zeros(n)
    else:
        mv = check_finite(m, "m", caller=caller, ndim=1).astype(np.float64)
        if mv.shape != (n,):
            raise GroundSetMismatchError(
                f"The 'm' argument of {caller} must have shape ({n},), one weight per node of W; "
                f"got shape {mv.shape}."
            )
    return coo.row[keep], coo.col[keep], coo.data[keep].astype(np.float64), mv


def _cut_value(rows: np.ndarray, cols: np.ndarray, w: np.ndarray, m: np.ndarray,
               mask: np.ndarray) -> float:
    return float(w[mask[rows] & ~mask[cols]].sum() + m[mask].sum())


def _min_cut(rows: np.ndarray, cols: np.ndarray, w: np.ndarray, m: np.ndarray
             ) -> tuple[np.ndarray, float]:
    """Minimizer mask of cut(S) + m(S) and the max-flow lower bound on the minimum."""
    n = m.size
    s, t = n, n + 1
    G = nx.DiGraph()
    G.add_nodes_from(range(n + 2))
    # Parallel entries (i, j) cannot occur in a canonical sparse matrix, so each arc is added once.
    G.add_weighted_edges_from(zip(rows.tolist(), cols.tolist(), w.tolist()), weight="capacity")
    pos = np.flatnonzero(m > 0)
    neg = np.flatnonzero(m < 0)
    # m_e [e in S] with m_e > 0: an arc e -> t, cut exactly when e is on the source side.
    G.add_weighted_edges_from(((int(e), t, float(m[e])) for e in pos), weight="capacity")
    # m_e [e in S] = m_e + |m_e| [e not in S] for m_e < 0: an arc s -> e plus a constant.
    G.add_weighted_edges_from(((s, int(e), float(-m[e])) for e in neg), weight="capacity")
    R = preflow_push(G, s, t, capacity="capacity", value_only=False)
    lower = float(R.graph["flow_value"]) + float(m[neg].sum())
    # In the residual network of a maximum flow, the nodes reachable from s form the smallest
    # minimizer and the nodes that cannot reach t the largest one (networkx's minimum_cut returns
    # the latter).
    small = _residual_reach(R, s, forward=True)[:n]
    large = ~_residual_reach(R, t, forward=False)[:n]
    # With float capacities a residual arc can survive rounding; keep whichever side is better.
    if _cut_value(rows, cols, w, m, large) < _cut_value(rows, cols, w, m, small):
        return large, lower
    return small, lower


def _residual_reach(R: object, root: int, *, forward: bool) -> np.ndarray:
    """Nodes reaching (``forward=False``) or reached from ``root`` along unsaturated arcs."""
    seen = np.zeros(len(R), dtype=bool)
    seen[root] = True
    stack = [root]
    adj = R.succ if forward else R.pred
    while stack:
        u = stack.pop()
        for v, arc in adj[u].items():
            if not seen[v] and arc["flow"] < arc["capacity"]:
                seen[v] = True
                stack.append(v)
    return seen


def minimize_cut_plus_modular(W: object, m: object = None, *, directed: bool = False
                              ) -> MinimizeResult:
    r"""Minimize :math:`f(S) = \mathrm{cut}_W(S) + \sum_{e \in S} m_e` exactly by one s-t min cut.

    :math:`\mathrm{cut}_W(S) = \sum_{i \in S, j \notin S} W_{ij}` with nonnegative weights: for
    ``directed=False`` ``W`` is a symmetric matrix and each undirected edge ``{i, j}`` crossing the
    cut counts once; for ``directed=True`` the arc ``i -> j`` counts when it leaves ``S``. The
    modular weights ``m`` may have any sign (negative ones make non-empty minimizers possible).

    Construction (the classical reduction; Kolmogorov and Zabih 2004; Bach 2013, Section 6.2):
    a network on the elements plus a source ``s`` and a sink ``t``, where ``S`` is the source side.
    Each arc ``i -> j`` of ``W`` gets capacity ``W_ij``; each ``m_e > 0`` an arc ``e -> t`` of
    capacity ``m_e`` (cut exactly when ``e`` is in ``S``); each ``m_e < 0`` an arc ``s -> e`` of
    capacity ``|m_e|`` (cut exactly when ``e`` is outside ``S``), since
    :math:`m_e [e \in S] = m_e + |m_e| [e \notin S]`. Then the capacity of the cut of ``S`` is
    :math:`f(S) - \sum_{m_e < 0} m_e`, and a minimum cut (a maximum flow by networkx's
    preflow-push) minimizes ``f``. Returns the nodes reachable from ``s`` in the residual network,
    which form the smallest minimizer. The cut is the one of
    :class:`~dpsubmod.functions.GraphCut`; ``minimize(GraphCut(W) + Modular(m))`` comes here.

    Parameters
    ----------
    W : array-like or scipy.sparse matrix, shape (n, n)
        Nonnegative, finite edge weights; the diagonal is ignored.
    m : array-like of float, shape (n,), optional
        Modular weights; zeros when omitted.
    directed : bool, default=False
        Whether ``W`` holds arcs (any nonnegative matrix) or undirected edges (symmetric ``W``).

    Returns
    -------
    MinimizeResult
        ``method="maxflow"``; ``certificate_gap`` is ``f(set)`` minus the maximum-flow lower bound
        (0 up to rounding, by max-flow min-cut duality); ``evaluations`` is 0 (no oracle is used),
        ``x`` is None.

    Raises
    ------
    ValidationError
        ``W`` is not square, finite and nonnegative (or not symmetric when ``directed=False``), or
        ``m`` does not have one finite entry per node.

    Examples
    --------
    >>> import numpy as np
    >>> W = np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 1.0], [0.0, 1.0, 0.0]])  # a path 0 - 1 - 2
    >>> res = minimize_cut_plus_modular(W, [-3.0, -0.5, 2.0])
    >>> sorted(res.set), res.value
    ([0, 1], -2.5)
    """
    caller = "minimize_cut_plus_modular"
    rows, cols, w, mv = _check_cut_data(W, m, directed, caller)
    mask, lower = _min_cut(rows, cols, w, mv)
    value = _cut_value(rows, cols, w, mv, mask)
    return MinimizeResult(frozenset(np.flatnonzero(mask).tolist()), value, None, value - lower,
                          0, 0, "maxflow")


def _cut_plus_modular_form(f: SetFunction) -> tuple[sp.csr_array, np.ndarray, bool] | None:
    """``(W, m, directed)`` with ``f(S) = cut_W(S) + m(S)`` when ``f`` declares itself a graph
    cut plus a modular term (:meth:`~dpsubmod.functions.SetFunction.cut_form`) with at least one
    cut; None for every other function."""
    form = f.cut_form()
    if form is None or not form.cut:
        return None
    return form.weights, np.asarray(form.modular, dtype=np.float64), form.directed


def _maxflow(f: SetFunction, tol: float, max_iter: int | None, exact_point: bool
             ) -> MinimizeResult:
    form = _cut_plus_modular_form(f)
    if form is None:
        raise ValidationError(
            f"method='maxflow' of minimize needs a graph cut (a GraphCut, or a Sum of GraphCut "
            f"and Modular terms); got "
            f"{type(f).__name__}. Use method='min-norm-point' (any submodular f), or call "
            "minimize_cut_plus_modular(W, m) with the weight matrix and modular vector."
        )
    W, m, directed = form
    ev0 = f.evaluations
    rows, cols, w, mv = _check_cut_data(W, m, directed, "minimize")
    mask, lower = _min_cut(rows, cols, w, mv)
    value = f(mask)
    return MinimizeResult(frozenset(np.flatnonzero(mask).tolist()), value, None,
                          value - lower, 0, f.evaluations - ev0, "maxflow")
