r"""Exact (non-private) submodular minimization.

Three exact methods behind one entry point, :func:`minimize`:

``"min-norm-point"``
    The Fujishige-Wolfe minimum-norm-point algorithm (Fujishige 1980; Wolfe 1976), in the form of
    Chakrabarty, Jain and Kothari (2014): Wolfe's algorithm for the point of smallest Euclidean
    norm in the base polytope :math:`B(f - f(\emptyset))`, with Edmonds' greedy as the linear
    optimization oracle. Returns a set together with a duality certificate.
``"maxflow"``
    For a graph cut plus a modular term, one s-t minimum cut (the classical reduction; see
    :func:`minimize_cut_plus_modular`).
``"brute-force"``
    Enumeration of all :math:`2^n` sets (``n <= 20``). A family with its own incremental state is
    walked depth first, the values of all children of a set coming from one batched ``gains``
    call; other functions are evaluated on every mask.

These are the exact minimizers the online minimization algorithms need for their comparator (the
best fixed set in hindsight of a sum of submodular functions). Nothing here is private.

References
----------
S. Fujishige, "Lexicographically optimal base of a polymatroid with respect to a weight vector",
Mathematics of Operations Research 5(2), 1980. P. Wolfe, "Finding the nearest point in a
polytope", Mathematical Programming 11, 1976. D. Chakrabarty, P. Jain and P. Kothari, "Provable
submodular minimization using Wolfe's algorithm", NeurIPS 2014. F. Bach, "Learning with
submodular functions: a convex optimization perspective", Foundations and Trends in Machine
Learning 6(2-3), 2013, Sections 7 and 10. V. Kolmogorov and R. Zabih, "What energy functions can
be minimized via graph cuts?", IEEE Transactions on Pattern Analysis and Machine Intelligence
26(2), 2004.
"""

from __future__ import annotations

from collections.abc import Callable

import networkx as nx
import numpy as np
import scipy.sparse as sp
from networkx.algorithms.flow import preflow_push

from .._validation import check_finite, check_int, check_real, check_sparse_finite
from ..errors import GroundSetMismatchError, ParameterTypeError, ValidationError
from ..functions.base import FunctionState, SetFunction
from ._common import require_finite
from ._min_norm_point import _min_norm_point
from ._minimize_result import MinimizeResult

__all__ = ["MinimizeResult", "minimize", "minimize_cut_plus_modular", "MINIMIZE_METHODS",
           "BRUTE_FORCE_MAX_N", "AUTO_BRUTE_FORCE_MAX_N"]

#: Largest ground set :func:`minimize` enumerates with ``method="brute-force"``.
BRUTE_FORCE_MAX_N = 20
#: ``method="auto"`` enumerates up to this size (2^12 = 4096 evaluations, no more than the
#: min-norm-point algorithm typically spends there); larger ground sets go to min-norm-point.
AUTO_BRUTE_FORCE_MAX_N = 12


# ------------------------------------------------------------------------------------------------
# Brute force.


def _brute_force(f: SetFunction, tol: float, max_iter: int | None, exact_point: bool
                 ) -> MinimizeResult:
    """Enumerate all 2^n sets; ``2^n`` evaluations.

    A function with vectorised batch values (``f.batched_values``) is evaluated on blocks of
    masks; a family with its own incremental state is enumerated depth first, the children
    ``S + c`` (``c > max(S)``) of each set scored by one batched ``gains`` call; any other
    function is evaluated on blocks of masks through :meth:`~SetFunction.values`.
    """
    ev0 = f.evaluations
    root = f.state()
    f.evaluations += 1
    require_finite(root.value, f, "minimize", "the empty set")
    if f.batched_values or type(root) is FunctionState:
        best_value, best = _enumerate_masks(f, float(root.value))
    else:
        best_value, best = _enumerate_states(f, root)
    return MinimizeResult(frozenset(best), best_value, None, 0.0, 0, f.evaluations - ev0,
                          "brute-force")


def _enumerate_masks(f: SetFunction, empty_value: float) -> tuple[float, tuple[int, ...]]:
    n = f.n
    best_value, best_code = empty_value, 0
    bits = np.arange(n)
    chunk = 1 << 14
    for start in range(1, 1 << n, chunk):
        codes = np.arange(start, min(start + chunk, 1 << n))
        masks = ((codes[:, None] >> bits) & 1).astype(bool)
        # a minimum over NaN values would be meaningless: every value is checked
        vals = require_finite(f.values(masks), f, "minimize", "a set")
        j = int(np.argmin(vals))
        if vals[j] < best_value:  # strict: ties keep the smallest code, as a scan would
            best_value, best_code = float(vals[j]), int(codes[j])
    f.evaluations += (1 << n) - 1
    return best_value, tuple(int(e) for e in np.flatnonzero((best_code >> bits) & 1))


def _enumerate_states(f: SetFunction, root: FunctionState) -> tuple[float, tuple[int, ...]]:
    n = f.n
    best_value = float(root.value)
    best: tuple[int, ...] = ()
    stack = [root]
    while stack:
        st = stack.pop()
        first = st.selected[-1] + 1 if st.selected else 0
        if first >= n:
            continue
        vals = require_finite(st.value + st.gains(np.arange(first, n)), f, "minimize", "a set")
        j = int(np.argmin(vals))
        if vals[j] < best_value:
            best_value, best = float(vals[j]), (*st.selected, first + j)
        for c in range(n - 2, first - 1, -1):  # children of c = n - 1 would have no candidates
            child = st.copy()
            child.add(c)  # its gain was just computed: the contract counts nothing here
            stack.append(child)
    return best_value, best


# ------------------------------------------------------------------------------------------------
# Graph cut plus modular: one s-t minimum cut.


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


# ------------------------------------------------------------------------------------------------
# Entry point.

_Method = Callable[[SetFunction, float, "int | None", bool], MinimizeResult]
_METHODS: dict[str, _Method] = {
    "brute-force": _brute_force,
    "maxflow": _maxflow,
    "min-norm-point": _min_norm_point,
}
#: Valid values of ``method`` in :func:`minimize`.
MINIMIZE_METHODS: tuple[str, ...] = ("auto", *sorted(_METHODS))


def minimize(f: SetFunction, *, method: str = "auto", tol: float = 1e-9,
             max_iter: int | None = None, exact_point: bool = False) -> MinimizeResult:
    r"""Minimize a submodular set function exactly.

    Parameters
    ----------
    f : SetFunction
        The function; ``f(empty)`` need not be 0. ``"min-norm-point"`` and ``"maxflow"`` need ``f``
        submodular (a family declaring ``submodular = False`` is refused); ``"brute-force"`` works
        for any ``f``.
    method : {"auto", "min-norm-point", "maxflow", "brute-force"}, default="auto"
        ``"auto"`` uses ``"maxflow"`` for a graph cut (a ``GraphCut``, or ``Sum``/``Scaled``
        combinations of ``GraphCut`` and ``Modular`` terms such as ``GraphCut(W) + Modular(m)``),
        ``"brute-force"`` for ``n <= 12`` (and for a non-submodular ``f`` with ``n <= 20``), and
        ``"min-norm-point"`` otherwise.

        * ``"min-norm-point"``: Fujishige-Wolfe (Wolfe 1976 over the base polytope, Fujishige
          1980; Chakrabarty, Jain and Kothari 2014). Major cycles call Edmonds' greedy (``n``
          evaluations each, walking f's incremental state); minor cycles solve the small affine
          least-squares problem with ``lstsq``. Every greedy call scores all level sets
          ``{e : x_e < t}`` of the current iterate ``x`` (among them ``{x < 0}``, the minimal
          minimizer at the exact min-norm point, and ``{x <= 0}``, the maximal one), and the best
          set seen is returned. It stops as soon as the duality gap

          .. math:: f(S) - \Bigl(f(\emptyset) + \textstyle\sum_e \min(x_e, 0)\Bigr)

          is at most ``tol`` times the scale of ``f`` (the l1 norm of the first greedy vertex).
          The bracket is a lower bound on the minimum for every ``x`` in
          :math:`B(f - f(\emptyset))` (weak duality; Bach 2013, Section 10), so the result is
          provably within the reported ``certificate_gap`` of the minimum. The algorithm is exact
          in exact arithmetic (at the min-norm point :math:`x^*` the gap is 0, attained by
          :math:`\{x^* < 0\}`), so in floating point the gap falls to rounding level. If Wolfe's
          criterion shows that rounding has stalled the run before that (or ``max_iter`` is
          reached), a ``RuntimeWarning`` reports the gap, which stays a valid bound.
        * ``"maxflow"``: one s-t minimum cut, for a graph cut (see
          :func:`minimize_cut_plus_modular`, which takes the weights directly).
        * ``"brute-force"``: all :math:`2^n` sets (``n <= 20``), ``2^n`` evaluations.
    tol : float, default=1e-9
        Relative tolerance on the certificate gap (``"min-norm-point"`` only; the other methods are
        exact and ignore it).
    max_iter : int, optional
        Cap on major cycles of ``"min-norm-point"`` (default ``1000 + 100 n``); ignored by the
        other methods.
    exact_point : bool, default=False
        ``"min-norm-point"`` only: keep iterating after the set is certified until Wolfe's
        criterion :math:`|x|^2 - \min_{q \in B} x^\top q \le (\mathrm{tol} \cdot
        \mathrm{scale})^2` (or rounding level) shows that ``x`` is the min-norm point, since
        :math:`|x - x^*|^2` is at most that left-hand side. Costs several times more major
        cycles; useful when ``x`` itself is wanted (for example, :math:`\{x^* < t\}` minimizes
        :math:`f(S) - t|S|` for every ``t``). Ignored by the other methods.

    Returns
    -------
    MinimizeResult
        The set, ``f`` at it, the final point of the base polytope (min-norm-point only), the
        certificate gap, the major cycles and the evaluations spent (also added to
        ``f.evaluations``).

    Raises
    ------
    ParameterTypeError
        ``f`` is not a SetFunction, or ``method`` is not a string.
    ValidationError
        Unknown ``method`` (the message lists the valid ones), ``"brute-force"`` with ``n > 20``,
        ``"maxflow"`` on a function that is not a graph cut, a method that needs submodularity on
        a function declaring ``submodular = False``, or a bad ``tol``/``max_iter``/
        ``exact_point``.
    NonFiniteObjectiveError
        ``f`` returned NaN or an infinite value on a set the method evaluated.

    References
    ----------
    Fujishige (1980); Wolfe (1976); Chakrabarty, Jain and Kothari (2014); Bach (2013),
    Sections 7.2 and 10.

    Examples
    --------
    >>> import numpy as np
    >>> from dpsubmod.functions.base import SetFunction
    >>> class ConcaveMinusModular(SetFunction):   # sqrt(|S|) - 0.6 |S|, minimized by S = V
    ...     def _value(self, mask):
    ...         return float(np.sqrt(mask.sum()) - 0.6 * mask.sum())
    >>> res = minimize(ConcaveMinusModular(6), method="min-norm-point")
    >>> sorted(res.set), round(res.value, 6), res.certificate_gap <= 1e-9
    ([0, 1, 2, 3, 4, 5], -1.15051, True)
    """
    if not isinstance(f, SetFunction):
        raise ParameterTypeError(
            f"The 'f' parameter of minimize must be a dpsubmod SetFunction; got "
            f"{type(f).__name__}. Wrap your function in a family from dpsubmod.functions or "
            "subclass SetFunction (a graph cut given as a matrix: minimize_cut_plus_modular)."
        )
    if not isinstance(method, str):
        raise ParameterTypeError(
            f"The 'method' parameter of minimize must be a string, one of "
            f"{', '.join(map(repr, MINIMIZE_METHODS))}; got {method!r}."
        )
    if method not in MINIMIZE_METHODS:
        raise ValidationError(
            f"The 'method' parameter of minimize must be one of "
            f"{', '.join(map(repr, MINIMIZE_METHODS))}; got {method!r}."
        )
    tol = check_real(tol, "tol", low=0.0, low_open=True, caller="minimize",
                     fix="Pass a small positive relative tolerance such as tol=1e-9.")
    if max_iter is not None:
        max_iter = check_int(max_iter, "max_iter", low=1, caller="minimize")
    if not isinstance(exact_point, (bool, np.bool_)):
        raise ParameterTypeError(
            f"The 'exact_point' parameter of minimize must be a bool; got {exact_point!r}."
        )
    submodular = bool(getattr(f, "submodular", True))
    if method == "auto":
        if submodular and _cut_plus_modular_form(f) is not None:
            method = "maxflow"
        elif f.n <= AUTO_BRUTE_FORCE_MAX_N or (not submodular and f.n <= BRUTE_FORCE_MAX_N):
            method = "brute-force"
        else:
            method = "min-norm-point"
    if method == "brute-force" and f.n > BRUTE_FORCE_MAX_N:
        raise ValidationError(
            f"method='brute-force' of minimize enumerates 2^n sets and accepts n <= "
            f"{BRUTE_FORCE_MAX_N}; got n = {f.n}. Use method='min-norm-point'."
        )
    if method != "brute-force" and not submodular:
        raise ValidationError(
            f"method={method!r} of minimize is exact only for submodular functions, and "
            f"{type(f).__name__} declares submodular = False. Use method='brute-force' "
            f"(n <= {BRUTE_FORCE_MAX_N})."
        )
    return _METHODS[method](f, tol, max_iter, exact_point)
