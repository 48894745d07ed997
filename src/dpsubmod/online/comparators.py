r"""The best fixed set in hindsight: the comparator of online regret.

Regret compares a learner with the single set that would have been best over the whole stream,
:math:`\min_S \sum_t f_t(S)` (minimization) or :math:`\max_{S \in \mathcal I} \sum_t f_t(S)` under
a constraint (maximization). Only the sum :math:`\sum_t f_t` matters, and
:class:`RunningSum` keeps it compact while the functions stream by:

* modular functions, graph cuts, and their sums and nonnegative multiples (the functions with a
  :meth:`~dpsubmod.functions.SetFunction.cut_form`) add up to **one** cut plus one modular term:
  their weights are summed, so the memory is that of one function whatever ``T``;
* every other function is kept once per distinct object, with its summed coefficient (a stream
  that reuses its functions, or shares a part across rounds, costs one copy). At most
  :data:`MAX_DISTINCT` distinct such functions are kept; beyond that the comparator refuses
  with a clear error rather than hold the whole history.

:func:`best_fixed_set` then computes the best set of the sum

* exactly by enumeration of all :math:`2^n` sets for small ``n``, a block of masks at a time
  through :meth:`~dpsubmod.functions.SetFunction.values` (vectorised for the families with a
  closed form);
* for minimization beyond that, exactly by :func:`dpsubmod.offline.minimize` on the sum: one
  max-flow for a cut plus a modular term, the Fujishige-Wolfe min-norm-point algorithm otherwise;
* for maximization beyond that, by the offline greedy on the sum, which is only approximate
  (``exact=False``; at least :math:`(1 - 1/e)` of the optimum for monotone functions under a
  cardinality constraint, 1/2 under a matroid).

Nothing here is private: the comparator reads every function in full.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .._validation import check_int
from ..constraints import Constraint, UniformMatroid
from ..errors import ParameterTypeError, ValidationError
from ..functions.base import SetFunction
from ..functions.combinators import Sum
from ..functions.cut_form import CutForm
from ..functions.graph_cut import GraphCut
from ..functions.modular import Modular
from ..offline.discrete.greedy import greedy
from ..offline.minimization.minimize import minimize
from .protocol import Sense
from .streams import as_stream

#: The comparator methods of each sense (minimization, maximization).
METHODS = {"min": ("auto", "enumerate", "min-norm-point", "maxflow"),
           "max": ("auto", "brute-force", "greedy")}
#: Largest ground set enumerated exactly.
ENUMERATE_MAX_N = 20
#: ``method="auto"`` enumerates only when the set-by-set work (parts of the sum without batched
#: values, times 2^n) stays below this many evaluations.
AUTO_LOOP_BUDGET = 1 << 21
#: Most distinct functions without a compact sum that :class:`RunningSum` keeps.
MAX_DISTINCT = 100_000
_CHUNK = 1 << 15
#: Cut weights are summed in batches of this many stored entries (coalesced into one matrix).
_COALESCE = 1 << 18


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


class RunningSum:
    """The sum :math:`\\sum_t f_t` of a stream of set functions, kept compact as it grows.

    Functions with a cut form (modular functions, graph cuts, their sums and nonnegative
    multiples) are folded into one summed cut and one summed modular vector; every other part
    of a function (through :meth:`~dpsubmod.functions.SetFunction.terms`) is kept once per
    distinct object with its summed coefficient. Memory is therefore that of one cut plus the
    distinct other parts, whatever the number of rounds.

    Parameters
    ----------
    n : int
        Ground-set size.
    max_distinct : int, default=MAX_DISTINCT
        Most distinct parts without a compact sum; one more raises
        :class:`~dpsubmod.errors.ValidationError`.

    Examples
    --------
    >>> from dpsubmod.functions import Modular
    >>> acc = RunningSum(2)
    >>> for w in ([1.0, -1.0], [0.5, 0.5], [1.0, -1.0]):
    ...     acc.add(Modular(w))
    >>> acc.rounds, acc.function()([0])
    (3, 2.5)
    """

    def __init__(self, n: int, *, max_distinct: int = MAX_DISTINCT):
        self.n = check_int(n, "n", low=1, caller="RunningSum")
        self.max_distinct = check_int(max_distinct, "max_distinct", low=0, caller="RunningSum")
        self.rounds = 0
        self._modular = np.zeros(self.n)
        self._W: sp.csr_array | None = None
        self._directed = False
        self._pending: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self._pending_nnz = 0
        self._others: dict[int, tuple[SetFunction, float]] = {}

    def add(self, f: SetFunction, weight: float = 1.0) -> None:
        """Add ``weight * f`` (``f`` on the same ground set)."""
        if f.n != self.n:
            raise ValidationError(
                f"RunningSum.add got a function on n={f.n}; the sum is on n={self.n}."
            )
        self.rounds += 1
        for c, g in f.terms():
            c = float(c) * weight
            form = g.cut_form()
            if form is not None:
                self._modular += c * form.modular
                if form.arc_weights.size:
                    self._add_arcs(form, c)
                continue
            key = id(g)
            held = self._others.get(key)
            if held is None:
                if len(self._others) >= self.max_distinct:
                    raise ValidationError(
                        f"The comparator keeps one copy of every distinct function without a "
                        f"compact sum (anything but modular functions, graph cuts and their "
                        f"sums), and this stream has more than max_distinct={self.max_distinct}. "
                        "Pass comparator=None, a precomputed Hindsight or a set, or reuse the "
                        "function objects that repeat."
                    )
                self._others[key] = (g, c)
            else:
                self._others[key] = (g, held[1] + c)

    def _add_arcs(self, form: CutForm, c: float) -> None:
        # Kept as arc lists and summed a batch at a time: one sparse sum per batch, not per round.
        self._directed |= form.directed
        self._pending.append((form.tails, form.heads, c * form.arc_weights))
        self._pending_nnz += form.arc_weights.size
        if self._pending_nnz >= _COALESCE:
            self._coalesce()

    def _coalesce(self) -> None:
        if not self._pending:
            return
        rows, cols, data = (np.concatenate(parts) for parts in zip(*self._pending))
        total = sp.csr_array((data, (rows, cols)), shape=(self.n, self.n))  # duplicates add up
        self._W = total if self._W is None else sp.csr_array(self._W + total)
        self._pending, self._pending_nnz = [], 0

    @property
    def distinct(self) -> int:
        """Number of distinct parts kept whole (those without a compact sum)."""
        return len(self._others)

    def function(self) -> SetFunction:
        """The sum as one SetFunction (a modular function of zeros before anything was added)."""
        self._coalesce()
        parts: list[SetFunction] = []
        weights: list[float] = []
        if self._W is not None and self._W.nnz:
            W = self._W
            if not self._directed:
                W = (W + W.T) * 0.5  # symmetric up to the summation's rounding
            parts.append(GraphCut(W, directed=self._directed))
            weights.append(1.0)
        if self._modular.any() or not parts:
            parts.append(Modular(self._modular))
            weights.append(1.0)
        negative = [c for _, c in self._others.values() if c < 0]
        if negative:
            raise ValidationError(
                "RunningSum cannot form the sum: a part without a compact sum has a negative "
                f"total coefficient ({negative[0]:g})."
            )
        for g, c in self._others.values():
            parts.append(g)
            weights.append(c)
        if len(parts) == 1 and weights[0] == 1.0:
            return parts[0]
        return Sum(parts, weights=weights)

    def loop_cost(self) -> int:
        """Parts of the sum evaluated set by set (no batched values): the cost factor of
        enumerating ``2^n`` sets."""
        return sum(1 for g, _ in self._others.values() if not g.batched_values)


def all_masks(n: int, start: int = 0, stop: int | None = None) -> np.ndarray:
    """Boolean masks of the sets with codes ``start..stop-1`` (bit ``i`` of the code = element
    ``i``); all :math:`2^n` sets by default, shape ``(stop - start, n)``."""
    stop = (1 << n) if stop is None else stop
    codes = np.arange(start, stop, dtype=np.int64)
    return ((codes[:, None] >> np.arange(n, dtype=np.int64)) & 1).astype(bool)


def set_values(f: SetFunction, masks: np.ndarray) -> np.ndarray:
    """``f`` on every row of ``masks`` (uncounted; :meth:`SetFunction.values`)."""
    return f.values(masks)


def total_values(functions: Iterable[SetFunction], masks: np.ndarray) -> np.ndarray:
    """:math:`\\sum_t f_t` on every row of ``masks`` (through the compact :class:`RunningSum`)."""
    acc = _accumulate(functions)
    return acc.function().values(masks)


def _accumulate(functions: Iterable[SetFunction] | object) -> RunningSum:
    """One pass over a stream (or sequence) into a :class:`RunningSum`."""
    if isinstance(functions, RunningSum):
        return functions
    stream = as_stream(functions)
    acc: RunningSum | None = None
    for f in stream.iterate():
        if acc is None:
            acc = RunningSum(f.n)
        acc.add(f)
    if acc is None:
        raise ValidationError("The comparator was given no function.")
    return acc


def _enumerate(total: SetFunction, n: int, sense: Sense,
               feasible: object = None) -> tuple[tuple[int, ...], float]:
    """Best set over all (feasible) masks, ties to the smallest code."""
    best_val, best_code = None, -1
    count = 1 << n
    for start in range(0, count, _CHUNK):
        stop = min(count, start + _CHUNK)
        masks = all_masks(n, start, stop)
        codes = np.arange(start, stop)
        if feasible is not None:
            # Evaluate feasible sets only: under a cardinality constraint most masks are not.
            ok = feasible(masks)
            if not ok.any():
                continue
            masks, codes = masks[ok], codes[ok]
        vals = total.values(masks)
        j = int(np.argmin(vals) if sense == "min" else np.argmax(vals))
        v = float(vals[j])
        better = best_val is None or (v < best_val if sense == "min" else v > best_val)
        if better:
            best_val, best_code = v, int(codes[j])
    sel = tuple(i for i in range(n) if (best_code >> i) & 1)
    return sel, float(best_val)  # type: ignore[arg-type]


def _check_method(method: object, valid: tuple[str, ...], caller: str) -> str:
    if not isinstance(method, str) or method not in valid:
        raise ValidationError(
            f"The 'method' parameter of {caller} must be one of {valid}; got {method!r}."
        )
    return method


def _auto_enumerate(acc: RunningSum) -> bool:
    return acc.n <= ENUMERATE_MAX_N and acc.loop_cost() * (1 << acc.n) <= AUTO_LOOP_BUDGET


def _value_at(total: SetFunction, sel: Sequence[int]) -> float:
    mask = np.zeros(total.n, dtype=bool)
    mask[list(sel)] = True
    return float(total.values(mask[None, :])[0])


def hindsight_min(functions: Sequence[SetFunction] | object, *, method: str = "auto"
                  ) -> Hindsight:
    """:math:`\\arg\\min_S \\sum_t f_t(S)` for submodular ``f_t`` (exact).

    Parameters
    ----------
    functions : Stream, sequence or iterable of SetFunction, or a RunningSum
        The stream (one pass is read, keeping only the compact sum).
    method : {"auto", "enumerate", "min-norm-point", "maxflow"}, default="auto"
        ``"auto"`` enumerates when ``n <= 20`` and the work is small (see the module docstring),
        and otherwise calls :func:`dpsubmod.offline.minimize` with ``method="auto"`` (max-flow
        for cut-plus-modular sums, min-norm-point otherwise).

    Returns
    -------
    Hindsight
    """
    caller = "hindsight_min"
    method = _check_method(method, METHODS["min"], caller)
    acc = _accumulate(functions)
    n, total = acc.n, acc.function()
    if method == "enumerate" or (method == "auto" and _auto_enumerate(acc)):
        if n > ENUMERATE_MAX_N:
            raise ValidationError(
                f"{caller}(method='enumerate') handles n <= {ENUMERATE_MAX_N}; got n={n}. "
                "Use method='min-norm-point'."
            )
        sel, val = _enumerate(total, n, "min")
        return Hindsight(sel, val, "min", "enumerate", True, 0.0)
    res = minimize(total, method="auto" if method == "auto" else method)
    sel = tuple(sorted(int(e) for e in res.set))
    return Hindsight(sel, _value_at(total, sel), "min", res.method, True,
                     float(res.certificate_gap))


def hindsight_max(functions: Sequence[SetFunction] | object, constraint: object, *,
                  method: str = "auto") -> Hindsight:
    """:math:`\\arg\\max_{S \\in \\mathcal I} \\sum_t f_t(S)` under a constraint.

    Parameters
    ----------
    functions : Stream, sequence or iterable of SetFunction, or a RunningSum
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
    method = _check_method(method, METHODS["max"], caller)
    acc = _accumulate(functions)
    n, total = acc.n, acc.function()
    feasible = _feasibility(constraint, n, caller)
    if method == "brute-force" or (method == "auto" and _auto_enumerate(acc)):
        if n > ENUMERATE_MAX_N:
            raise ValidationError(
                f"{caller}(method='brute-force') handles n <= {ENUMERATE_MAX_N}; got n={n}. "
                "Use method='greedy'."
            )
        sel, val = _enumerate(total, n, "max", feasible)
        return Hindsight(sel, val, "max", "brute-force", True, 0.0)
    res = greedy(total, constraint)
    sel = tuple(sorted(int(e) for e in res.selection))
    return Hindsight(sel, _value_at(total, sel), "max", "greedy", False, math.nan)


def _feasibility(constraint: object, n: int, caller: str):
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
