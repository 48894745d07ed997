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

import numpy as np

from ..._validation import check_int, check_real
from ...errors import ParameterTypeError, ValidationError
from ...functions.base import FunctionState, SetFunction
from .._common import require_finite
from ._cut import _cut_plus_modular_form, _maxflow
from ._min_norm_point import _min_norm_point
from ._result import MinimizeResult

__all__ = ["minimize", "MINIMIZE_METHODS",
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
          :math:`f(S) - \bigl(f(\emptyset) + \sum_e \min(x_e, 0)\bigr)` is at most ``tol``
          times the scale of ``f`` (the l1 norm of the first greedy vertex).
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
