r"""The best fixed set in hindsight: the comparator of online regret.

Regret compares a learner with the single set that would have been best over the whole stream,
:math:`\min_S \sum_t f_t(S)` (minimization) or :math:`\max_{S \in \mathcal I} \sum_t f_t(S)` under
a constraint (maximization). :func:`best_fixed_set` computes it

* exactly by enumeration of all :math:`2^n` sets for small ``n``, vectorised over masks: modular
  functions, graph cuts, sums and scalings are evaluated on a whole block of masks in one matrix
  expression, any other family mask by mask; repeated function objects (a stream that reuses
  its functions) are evaluated once and weighted by their multiplicity;
* for minimization beyond that, exactly by :func:`dpsubmod.offline.minimize` on the summed
  function (:class:`~dpsubmod.functions.Sum` of the distinct functions weighted by their counts):
  one max-flow for sums of graph cuts and modular terms, the Fujishige-Wolfe min-norm-point
  algorithm otherwise;
* for maximization beyond that, by the offline greedy on the summed function, which is only
  approximate (``exact=False``; at least :math:`(1 - 1/e)` of the optimum for monotone
  functions under a cardinality constraint, 1/2 under a matroid).

Nothing here is private: the comparator reads every function in full.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .._validation import check_int
from ..errors import ParameterTypeError, ValidationError
from ..functions.base import SetFunction
from .protocol import Sense
from .streams import as_stream

__all__ = [
    "Hindsight",
    "best_fixed_set",
    "hindsight_min",
    "hindsight_max",
    "all_masks",
    "set_values",
    "total_values",
    "ENUMERATE_MAX_N",
]

#: Largest ground set enumerated exactly.
ENUMERATE_MAX_N = 20
#: ``method="auto"`` enumerates only when the mask-by-mask work (distinct functions without a
#: vectorised path, times 2^n) stays below this many evaluations.
AUTO_LOOP_BUDGET = 1 << 21
_CHUNK = 1 << 15


@dataclass(frozen=True)
class Hindsight:
    """The best fixed set in hindsight (non-private: computed from every function).

    Attributes
    ----------
    selection : tuple of int
        The set, sorted.
    value : float
        :math:`\\sum_t f_t(\\text{selection})`.
    sense : {"min", "max"}
    method : str
        ``"enumerate"``, ``"min-norm-point"``, ``"maxflow"``, ``"brute-force"``, ``"greedy"`` or
        ``"given"``.
    exact : bool
        Whether ``selection`` is optimal (up to ``certificate_gap`` for minimization).
    certificate_gap : float
        Proven bound on the distance to the optimum (0 for enumeration).
    """

    selection: tuple[int, ...]
    value: float
    sense: Sense
    method: str
    exact: bool
    certificate_gap: float = 0.0


def all_masks(n: int, start: int = 0, stop: int | None = None) -> np.ndarray:
    """Boolean masks of the sets with codes ``start..stop-1`` (bit ``i`` of the code = element
    ``i``); all :math:`2^n` sets by default, shape ``(stop - start, n)``."""
    stop = (1 << n) if stop is None else stop
    codes = np.arange(start, stop, dtype=np.int64)
    return ((codes[:, None] >> np.arange(n, dtype=np.int64)) & 1).astype(bool)


def _fast(f: SetFunction) -> bool:
    from ..functions.combinators import Scaled, Sum
    from ..functions.graph_cut import GraphCut
    from ..functions.modular import Modular

    if isinstance(f, (Modular, GraphCut)):
        return True
    if isinstance(f, Sum):
        return all(_fast(g) for g in f.functions)
    if isinstance(f, Scaled):
        return _fast(f.f)
    return False


def _loop_cost(f: SetFunction, seen: set[int]) -> int:
    """Distinct leaf functions of ``f`` that need the mask-by-mask path."""
    from ..functions.combinators import Scaled, Sum

    if id(f) in seen:
        return 0
    seen.add(id(f))
    if _fast(f):
        return 0
    if isinstance(f, Sum):
        return sum(_loop_cost(g, seen) for g in f.functions)
    if isinstance(f, Scaled):
        return _loop_cost(f.f, seen)
    return 1


def set_values(f: SetFunction, masks: np.ndarray, cache: dict[int, np.ndarray] | None = None
               ) -> np.ndarray:
    """``f`` on every row of ``masks`` (uncounted), vectorised for modular functions, graph cuts,
    sums and scalings; mask by mask otherwise. ``cache`` (by object id) shares sub-results
    between functions that reuse a part."""
    from ..functions.combinators import Scaled, Sum
    from ..functions.graph_cut import GraphCut
    from ..functions.modular import Modular

    if cache is not None and id(f) in cache:
        return cache[id(f)]
    if isinstance(f, Modular):
        out = masks @ f.weights
    elif isinstance(f, GraphCut):
        X = masks.astype(np.float64)
        out = np.einsum("ij,ij->i", np.asarray((f.adjacency @ X.T).T), 1.0 - X)
    elif isinstance(f, Sum):
        out = np.zeros(masks.shape[0])
        for c, g in zip(f.weights, f.functions):
            out += c * set_values(g, masks, cache)
    elif isinstance(f, Scaled):
        out = f.c * set_values(f.f, masks, cache)
    else:
        out = np.fromiter((f._value(m) for m in masks), dtype=np.float64, count=masks.shape[0])
    if cache is not None:
        cache[id(f)] = out
    return out


def _distinct(functions: Sequence[SetFunction]) -> tuple[list[SetFunction], np.ndarray]:
    """Distinct function objects (by identity) and their multiplicities, in first-seen order."""
    index: dict[int, int] = {}
    uniq: list[SetFunction] = []
    counts: list[int] = []
    for f in functions:
        j = index.get(id(f))
        if j is None:
            index[id(f)] = len(uniq)
            uniq.append(f)
            counts.append(1)
        else:
            counts[j] += 1
    return uniq, np.asarray(counts, dtype=np.float64)


def total_values(functions: Sequence[SetFunction], masks: np.ndarray) -> np.ndarray:
    """:math:`\\sum_t f_t` on every row of ``masks`` (each distinct function evaluated once)."""
    uniq, counts = _distinct(functions)
    cache: dict[int, np.ndarray] = {}
    out = np.zeros(masks.shape[0])
    for c, f in zip(counts, uniq):
        out += c * set_values(f, masks, cache)
    return out


def _enumerate(functions: Sequence[SetFunction], n: int, sense: Sense,
               feasible: object = None) -> tuple[tuple[int, ...], float]:
    """Best set over all (feasible) masks, ties to the smallest code."""
    best_val, best_code = None, -1
    total = 1 << n
    for start in range(0, total, _CHUNK):
        stop = min(total, start + _CHUNK)
        masks = all_masks(n, start, stop)
        codes = np.arange(start, stop)
        if feasible is not None:
            # Evaluate feasible sets only: under a cardinality constraint most masks are not.
            ok = feasible(masks)
            if not ok.any():
                continue
            masks, codes = masks[ok], codes[ok]
        vals = total_values(functions, masks)
        j = int(np.argmin(vals) if sense == "min" else np.argmax(vals))
        v = float(vals[j])
        better = best_val is None or (v < best_val if sense == "min" else v > best_val)
        if better:
            best_val, best_code = v, int(codes[j])
    sel = tuple(i for i in range(n) if (best_code >> i) & 1)
    return sel, float(best_val)  # type: ignore[arg-type]


def _as_functions(functions: object) -> tuple[list[SetFunction], int]:
    stream = as_stream(functions)
    fs = list(stream.iterate())
    return fs, stream.n


def _check_method(method: object, valid: tuple[str, ...], caller: str) -> str:
    if not isinstance(method, str) or method not in valid:
        raise ValidationError(
            f"The 'method' parameter of {caller} must be one of {valid}; got {method!r}."
        )
    return method


def _auto_enumerate(fs: Sequence[SetFunction], n: int) -> bool:
    if n > ENUMERATE_MAX_N:
        return False
    uniq, _ = _distinct(fs)
    seen: set[int] = set()
    loops = sum(_loop_cost(f, seen) for f in uniq)
    return loops * (1 << n) <= AUTO_LOOP_BUDGET


def hindsight_min(functions: Sequence[SetFunction] | object, *, method: str = "auto"
                  ) -> Hindsight:
    """:math:`\\arg\\min_S \\sum_t f_t(S)` for submodular ``f_t`` (exact).

    Parameters
    ----------
    functions : Stream or sequence of SetFunction
        The stream (one pass is read).
    method : {"auto", "enumerate", "min-norm-point", "maxflow"}, default="auto"
        ``"auto"`` enumerates when ``n <= 20`` and the work is small (see the module docstring),
        and otherwise calls :func:`dpsubmod.offline.minimize` with ``method="auto"`` (max-flow
        for cut-plus-modular sums, min-norm-point otherwise).

    Returns
    -------
    Hindsight
    """
    caller = "hindsight_min"
    method = _check_method(method, ("auto", "enumerate", "min-norm-point", "maxflow"), caller)
    fs, n = _as_functions(functions)
    if method == "enumerate" or (method == "auto" and _auto_enumerate(fs, n)):
        if n > ENUMERATE_MAX_N:
            raise ValidationError(
                f"{caller}(method='enumerate') handles n <= {ENUMERATE_MAX_N}; got n={n}. "
                "Use method='min-norm-point'."
            )
        sel, val = _enumerate(fs, n, "min")
        return Hindsight(sel, val, "min", "enumerate", True, 0.0)
    from ..functions.combinators import Sum
    from ..offline.minimize import minimize

    uniq, counts = _distinct(fs)
    total = uniq[0] if len(uniq) == 1 else Sum(uniq, weights=counts)
    scale = counts[0] if len(uniq) == 1 else 1.0
    res = minimize(total, method="auto" if method == "auto" else method)
    sel = tuple(sorted(int(e) for e in res.set))
    mask = np.zeros(n, dtype=bool)
    mask[list(sel)] = True
    value = float(total_values(fs, mask[None, :])[0])
    return Hindsight(sel, value, "min", res.method, True, float(res.certificate_gap) * scale)


def hindsight_max(functions: Sequence[SetFunction] | object, constraint: object, *,
                  method: str = "auto") -> Hindsight:
    """:math:`\\arg\\max_{S \\in \\mathcal I} \\sum_t f_t(S)` under a constraint.

    Parameters
    ----------
    functions : Stream or sequence of SetFunction
    constraint : int or Constraint
        ``k`` (cardinality) or a dpsubmod Constraint (matroid, knapsack) on ``range(n)``.
    method : {"auto", "brute-force", "greedy"}, default="auto"
        ``"brute-force"``: all feasible sets (exact, ``n <= 20``). ``"greedy"``: the offline
        greedy on the sum (approximate; ``exact=False``). ``"auto"``: brute force when ``n <= 20``
        and the work is small, greedy otherwise.

    Returns
    -------
    Hindsight
    """
    caller = "hindsight_max"
    method = _check_method(method, ("auto", "brute-force", "greedy"), caller)
    fs, n = _as_functions(functions)
    feasible = _feasibility(constraint, n, caller)
    if method == "brute-force" or (method == "auto" and _auto_enumerate(fs, n)):
        if n > ENUMERATE_MAX_N:
            raise ValidationError(
                f"{caller}(method='brute-force') handles n <= {ENUMERATE_MAX_N}; got n={n}. "
                "Use method='greedy'."
            )
        sel, val = _enumerate(fs, n, "max", feasible)
        return Hindsight(sel, val, "max", "brute-force", True, 0.0)
    from ..functions.combinators import Sum
    from ..offline.greedy import greedy

    uniq, counts = _distinct(fs)
    total = Sum(uniq, weights=counts)
    res = greedy(total, constraint)
    sel = tuple(sorted(int(e) for e in res.selection))
    mask = np.zeros(n, dtype=bool)
    mask[list(sel)] = True
    value = float(total_values(fs, mask[None, :])[0])
    return Hindsight(sel, value, "max", "greedy", False, math.nan)


def _feasibility(constraint: object, n: int, caller: str):
    from ..constraints import Constraint, UniformMatroid

    if isinstance(constraint, (int, np.integer)) and not isinstance(constraint, bool):
        k = check_int(constraint, "k", low=0, high=n, caller=caller)
        return lambda masks: masks.sum(axis=1) <= k
    if isinstance(constraint, UniformMatroid):
        k = constraint.k
        return lambda masks: masks.sum(axis=1) <= k
    if isinstance(constraint, Constraint):
        if constraint.n != n:
            raise ValidationError(
                f"The 'constraint' of {caller} is on n={constraint.n} elements; the functions on "
                f"n={n}."
            )
        return lambda masks: np.fromiter((constraint.is_feasible(m) for m in masks), dtype=bool,
                                         count=masks.shape[0])
    raise ParameterTypeError(
        f"The 'constraint' parameter of {caller} must be an int k or a dpsubmod Constraint; got "
        f"{type(constraint).__name__}."
    )


def best_fixed_set(functions: Sequence[SetFunction] | object, *, sense: Sense = "min",
                   constraint: object = None, method: str = "auto") -> Hindsight:
    """The best fixed set in hindsight: :func:`hindsight_min` for ``sense="min"``,
    :func:`hindsight_max` (``constraint`` required) for ``sense="max"``."""
    if sense == "min":
        if constraint is not None:
            raise ValidationError(
                "best_fixed_set(sense='min') minimises over all sets; constrained minimization is "
                "not supported (pass constraint=None)."
            )
        return hindsight_min(functions, method=method)
    if sense == "max":
        if constraint is None:
            raise ValidationError(
                "best_fixed_set(sense='max') needs a constraint (an int k or a Constraint)."
            )
        return hindsight_max(functions, constraint, method=method)
    raise ValidationError(f"The 'sense' parameter must be 'min' or 'max'; got {sense!r}.")

