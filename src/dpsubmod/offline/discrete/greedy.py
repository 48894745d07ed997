"""Non-private greedy baselines under any matroid or a knapsack constraint.

These are the references every private algorithm is compared against. All of them take the same
arguments, ``(f, constraint, *, rng=None, ...)``, and return a :class:`~dpsubmod.offline.Result`.

Guarantees (monotone submodular ``f`` with ``f(empty) = 0``):

* cardinality ``k``: greedy and lazy greedy reach ``(1 - 1/e) OPT`` (Nemhauser, Wolsey and Fisher
  1978); stochastic greedy ``(1 - 1/e - accuracy) OPT`` in expectation (Mirzasoleiman et al. 2015);
* any matroid: greedy reaches ``OPT / 2`` (Fisher, Nemhauser and Wolsey 1978);
* knapsack: the better of the cost-benefit greedy and the best feasible singleton reaches
  ``(1 - 1/e) / 2 OPT`` (Khuller, Moss and Naor 1999; Leskovec et al. 2007, Theorem 3).
"""

from __future__ import annotations

import heapq
import math

import numpy as np

from ..._rng import RNGLike, as_generator, check_rng
from ..._validation import check_bool, check_int, check_real
from ...constraints import Constraint
from ...functions.base import SetFunction
from .._common import is_knapsack, make_result, require_finite, resolve
from ..guarantees import greedy_guarantee, no_guarantee
from ..registry import register
from ..result import Result

_ALL = ("cardinality", "matroid", "knapsack")


def _costs(constraint: Constraint) -> np.ndarray | None:
    return np.asarray(constraint.costs, dtype=float) if is_knapsack(constraint) else None


def _greedy_path(f: SetFunction, constraint: Constraint, *, stop_if_negative: bool,
                 caller: str) -> tuple[list[int], list[float]]:
    """Naive greedy: every feasible candidate's gain (per unit cost under a knapsack) each step."""
    costs = _costs(constraint)
    st = f.state()
    trace: list[float] = []
    while True:
        cand = np.flatnonzero(constraint.can_add(st))
        if cand.size == 0:
            break
        g = require_finite(st.gains(cand), f, caller, "a marginal gain")
        score = g / costs[cand] if costs is not None else g
        j = int(np.argmax(score))  # first maximum: ties go to the lowest index
        if stop_if_negative and g[j] < 0:
            break
        st.add(int(cand[j]))
        trace.append(float(g[j]))
    return st.selected, trace


def _lazy_path(f: SetFunction, constraint: Constraint, *, stop_if_negative: bool,
               caller: str) -> tuple[list[int], list[float]]:
    """Lazy greedy (Minoux 1978): stale gains are upper bounds when ``f`` is submodular.

    The heap is keyed by (-bound, index). A popped element whose fresh key is still no larger
    than the heap's top is the lexicographic maximum of the true scores, so the output equals
    the naive greedy's, ties included.
    """
    costs = _costs(constraint)
    st = f.state()
    cand = np.flatnonzero(constraint.can_add(st))
    g0 = require_finite(st.gains(cand), f, caller, "a marginal gain")
    s0 = g0 / costs[cand] if costs is not None else g0
    heap = [(-float(s), int(e)) for s, e in zip(s0, cand)]
    heapq.heapify(heap)
    fresh_at = {int(e): 0 for e in cand}  # step at which the key was computed
    gain_of = {int(e): float(g) for e, g in zip(cand, g0)}
    trace: list[float] = []
    step = 0
    while heap:
        neg, e = heapq.heappop(heap)
        if not constraint.can_add(st, [e])[0]:
            continue  # infeasibility is permanent: the constraint is down-closed
        if fresh_at[e] != step:
            g = float(require_finite(st.gains([e])[0], f, caller, "a marginal gain"))
            s = g / costs[e] if costs is not None else g
            fresh_at[e] = step
            gain_of[e] = g
            if heap and (-s, e) > heap[0]:
                heapq.heappush(heap, (-s, e))
                continue
        g = gain_of[e]
        if stop_if_negative and g < 0:
            break
        st.add(e)
        trace.append(g)
        step += 1
    return st.selected, trace


@register("greedy", private=False, constraints=_ALL,
          summary="Greedy (Nemhauser-Wolsey-Fisher); cost-benefit greedy under a knapsack")
def greedy(f: SetFunction, constraint: object, *, stop_if_negative: bool = True,
           rng: RNGLike = None) -> Result:
    """Greedy maximization (Nemhauser, Wolsey and Fisher 1978): add the feasible element of
    largest marginal gain until none is feasible.

    Under a :class:`~dpsubmod.constraints.Knapsack` this is the cost-benefit greedy with the
    best-singleton fallback (see :func:`knapsack_greedy`).

    Parameters
    ----------
    f : SetFunction
        The objective.
    constraint : int or Constraint
        ``k`` for a cardinality constraint, or a Matroid or Knapsack on the same ground set.
    stop_if_negative : bool, default=True
        Stop when the best feasible gain is negative (matters only for non-monotone ``f``).
    rng : None
        Unused (the method is deterministic); accepted so every method shares one signature.

    Returns
    -------
    Result
        Not private (``privacy`` is ``None``). ``evaluations`` counts every gain computed:
        at most ``k n`` under cardinality.
    """
    check_rng(rng, "greedy")
    f, constraint = resolve(f, constraint, "greedy")
    stop_if_negative = check_bool(stop_if_negative, "stop_if_negative", caller="greedy")
    if is_knapsack(constraint):
        return knapsack_greedy(f, constraint, lazy=False)
    start = f.evaluations
    sel, trace = _greedy_path(f, constraint, stop_if_negative=stop_if_negative, caller="greedy")
    return make_result(f, sel, "greedy", privacy=None, evaluations=f.evaluations - start,
                       params={"stop_if_negative": stop_if_negative}, trace=trace,
                       guarantee=greedy_guarantee(constraint))


@register("lazy_greedy", private=False, constraints=_ALL,
          summary="Lazy greedy (Minoux): same output as greedy, fewer evaluations")
def lazy_greedy(f: SetFunction, constraint: object, *, stop_if_negative: bool = True,
                rng: RNGLike = None) -> Result:
    """Lazy greedy (Minoux 1978; "accelerated greedy"): the same output as :func:`greedy` for a
    submodular ``f``, with far fewer gain evaluations.

    For a function that is not submodular (for example plug-in mutual information) the stale
    gains are not upper bounds and the output can differ from the naive greedy's.

    Parameters and returns as :func:`greedy`.
    """
    check_rng(rng, "lazy_greedy")
    f, constraint = resolve(f, constraint, "lazy_greedy")
    stop_if_negative = check_bool(stop_if_negative, "stop_if_negative", caller="lazy_greedy")
    if is_knapsack(constraint):
        return knapsack_greedy(f, constraint, lazy=True)
    start = f.evaluations
    sel, trace = _lazy_path(f, constraint, stop_if_negative=stop_if_negative,
                            caller="lazy_greedy")
    return make_result(f, sel, "lazy_greedy", privacy=None, evaluations=f.evaluations - start,
                       params={"stop_if_negative": stop_if_negative}, trace=trace,
                       guarantee=greedy_guarantee(constraint))


@register("stochastic_greedy", private=False, constraints=_ALL,
          summary="Stochastic greedy (Mirzasoleiman et al. 2015)")
def stochastic_greedy(f: SetFunction, constraint: object, *, accuracy: float = 0.1,
                      sample_size: int | None = None, rng: RNGLike = None) -> Result:
    """Stochastic greedy (Mirzasoleiman et al. 2015, "Lazier than lazy greedy", Algorithm 1).

    Each step scores a uniform random sample of ``s = ceil((n / k) ln(1 / accuracy))`` feasible
    candidates and adds the best. Under a cardinality constraint the expected value is at least
    ``(1 - 1/e - accuracy) OPT`` with ``n ln(1/accuracy)`` evaluations in total. Under a general
    matroid the sample is drawn from the feasible candidates (a heuristic: the paper's guarantee
    is for cardinality).

    Parameters
    ----------
    f, constraint : as :func:`greedy`.
    accuracy : float in (0, 1), default=0.1
        The ``epsilon`` of Mirzasoleiman et al.
    sample_size : int, optional
        Overrides ``s``.
    rng : int, Generator or None
        Randomness for the samples.
    """
    caller = "stochastic_greedy"
    gen = as_generator(rng, caller)
    f, constraint = resolve(f, constraint, caller)
    accuracy = check_real(accuracy, "accuracy", low=0.0, high=1.0, low_open=True, high_open=True,
                          caller=caller)
    if sample_size is not None:
        sample_size = check_int(sample_size, "sample_size", low=1, caller=caller)
    k = max(1, int(getattr(constraint, "rank", f.n)))
    # -ln(accuracy), not ln(1 / accuracy): the ratio overflows for a subnormal accuracy
    s = sample_size if sample_size is not None else \
        math.ceil(min(f.n / k * -math.log(accuracy), f.n))
    s = max(1, min(int(s), f.n))
    costs = _costs(constraint)
    st = f.state()
    start = f.evaluations
    trace: list[float] = []
    while True:
        feas = np.flatnonzero(constraint.can_add(st))
        if feas.size == 0:
            break
        cand = np.sort(gen.choice(feas, size=min(s, feas.size), replace=False))
        g = require_finite(st.gains(cand), f, caller, "a marginal gain")
        score = g / costs[cand] if costs is not None else g
        j = int(np.argmax(score))
        if g[j] < 0:
            break
        st.add(int(cand[j]))
        trace.append(float(g[j]))
    return make_result(f, st.selected, "stochastic_greedy", privacy=None,
                       evaluations=f.evaluations - start,
                       params={"accuracy": accuracy, "sample_size": s}, trace=trace,
                       guarantee=greedy_guarantee(
                           constraint, accuracy=None if s >= f.n else math.exp(-s * k / f.n)))


@register("random", private=False, constraints=_ALL,
          summary="A uniformly random maximal feasible set")
def random_feasible(f: SetFunction, constraint: object, *, rng: RNGLike = None) -> Result:
    """A uniformly random maximal feasible set: elements in random order, each kept if feasible.

    The natural zero-information baseline; under a cardinality constraint it is a uniform random
    ``k``-subset. A private method run with a vanishing budget approaches it.
    """
    gen = as_generator(rng, "random_feasible")
    f, constraint = resolve(f, constraint, "random_feasible")
    mask = np.zeros(f.n, dtype=bool)
    order: list[int] = []
    for e in gen.permutation(f.n):
        if constraint.can_add(mask, [int(e)])[0]:
            mask[e] = True
            order.append(int(e))
    return make_result(f, order, "random_feasible", privacy=None, evaluations=0, params={},
                       trace=[], guarantee=no_guarantee("a random feasible set: no "
                                                        "approximation guarantee"))


@register("knapsack_greedy", private=False, constraints=("knapsack",),
          summary="Cost-benefit greedy with the best-singleton fallback")
def knapsack_greedy(f: SetFunction, constraint: object, *, lazy: bool = True,
                    rng: RNGLike = None) -> Result:
    """Cost-benefit greedy with the best-singleton fallback under a knapsack constraint.

    Runs the greedy on gain per unit cost, then compares its value with the best single feasible
    element and returns the better (Khuller, Moss and Naor 1999; Leskovec et al. 2007). For
    monotone submodular ``f`` the result is at least ``(1 - 1/e) / 2 OPT``; the cost-benefit
    greedy alone has no constant-factor guarantee.
    """
    caller = "knapsack_greedy"
    check_rng(rng, caller)
    f, constraint = resolve(f, constraint, caller)
    lazy = check_bool(lazy, "lazy", caller=caller)
    if not is_knapsack(constraint):
        return (lazy_greedy if lazy else greedy)(f, constraint)
    start = f.evaluations
    path = _lazy_path if lazy else _greedy_path
    sel, trace = path(f, constraint, stop_if_negative=True, caller=caller)
    st = f.state()
    fits = np.flatnonzero(constraint.can_add(st))
    single = require_finite(st.gains(fits), f, caller, "a marginal gain")
    mask = np.zeros(f.n, dtype=bool)
    mask[sel] = True
    greedy_value = float(require_finite(f._value(mask), f, caller, "the greedy set's value"))
    chosen, kind = sel, "cost-benefit"
    single_value = single + st.value  # gains are relative to f(empty)
    if fits.size and float(single_value.max()) > greedy_value:
        j = int(np.argmax(single_value))
        chosen, trace, kind = [int(fits[j])], [float(single[j])], "best-singleton"
    return make_result(f, chosen, "knapsack_greedy", privacy=None,
                       evaluations=f.evaluations - start,
                       params={"lazy": lazy, "winner": kind}, trace=trace,
                       guarantee=greedy_guarantee(constraint))
