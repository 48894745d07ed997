"""Private greedy maximization with the exponential mechanism.

* :func:`private_greedy`: Mitrovic, Bun, Krause and Karbasi 2017 ("Differentially private
  submodular maximization: data summarization in disguise", Algorithms 1 and 2 and the knapsack
  variant): at each step the exponential mechanism over the feasible candidates, scored by
  marginal gains.
* :func:`private_stochastic_greedy`: the same over a uniform random subset of candidates each step.
* :func:`~dpsubmod.offline.discrete.decomposable.private_greedy_decomposable` (in its own
  module, which loads scipy): Gupta, Ligett, McSherry, Roth and Talwar 2010 for objectives that
  are sums of per-record monotone submodular terms, with a per-step budget that does not shrink
  with k.

Why a marginal-gain step costs ``2 eps' Delta`` (not ``4 eps' Delta``)
----------------------------------------------------------------------
The score of candidate ``e`` is ``q_D(e) = F_D(S + e) - F_D(S)``. When one record is replaced
(``D ~ D'``), ``q_D(e) - q_D'(e) = [F_D(S+e) - F_D'(S+e)] - [F_D(S) - F_D'(S)]``. The second
bracket is the same for every candidate, and a term common to all candidates cancels in the
mechanism's normalisation: ``exp(eps' q(e)) / sum_j exp(eps' q(j))`` is unchanged when a constant
is added to every score. The log-probability ratio of any outcome is therefore at most
``eps' * (max_e a(e) - min_e a(e))`` with ``a(e) = F_D(S+e) - F_D'(S+e)`` in ``[-Delta, Delta]``,
i.e. at most ``2 eps' Delta``, in every data model. So a step drawn with weights
``exp(eps_step * gain / (2 Delta))`` is ``eps_step``-DP.

Under a knapsack the score is the gain per unit cost, ``q(e) = gain(e) / c_e``, and its change is
``(a(e) - b) / c_e`` with ``b = F_D(S) - F_D'(S)``. Since ``-Delta - b <= 0 <= Delta - b`` and
``c_e >= c_min``, every change lies in ``[(-Delta - b) / c_min, (Delta - b) / c_min]``: a range of
width ``2 Delta / c_min`` (attained when two items of cost ``c_min`` move by ``+Delta`` and
``-Delta``). The default ``calibration="tight"`` draws with ``exp(eps_step q / (2 Delta /
c_min))``; ``calibration="paper"`` treats ``2 Delta / c_min`` as a per-score sensitivity, the
weight ``exp(eps_step q / (4 Delta / c_min))``, which spends only half of each step's share.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..._rng import RNGLike
from ..._validation import check_int, check_real
from ...constraints import Constraint, Knapsack
from ...errors import ValidationError
from ...functions.base import FunctionState, SetFunction
from ...privacy.calibration import exponential_mechanism_weight
from ...privacy.composition import check_composition
from ...privacy.events import PrivacyEvent
from ...privacy.ledger import Ledger
from ...privacy.plan import backend_name
from ...privacy.selection import ExponentialMechanism
from ...privacy.split import _split
from .._common import (
    PrivateCall,
    check_score_sensitivity,
    checked_call,
    exponential_step,
    is_knapsack,
    make_result,
    require_finite,
    resolve,
)
from ..guarantees import em_greedy_guarantee
from ..registry import register
from ..result import Result

__all__ = [
    "private_greedy",
    "private_stochastic_greedy",
    "greedy_path_distribution",
]


# ---------------------------------------------------------------------------------------------
# budget
# ---------------------------------------------------------------------------------------------
_CALIBRATIONS = ("tight", "paper")


# ---------------------------------------------------------------------------------------------
# one exponential-mechanism step
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Scorer:
    """Turns a state's gains into exponential-mechanism scores with their sensitivity.

    ``weight exponent = eps_step * score / (2 * score_sensitivity)`` makes a step eps_step-DP.
    """

    sensitivity: float
    costs: np.ndarray | None
    c_min: float
    tight: bool = True

    def scores(self, g: np.ndarray, cand: np.ndarray) -> np.ndarray:
        if self.costs is None:
            return g
        return g / self.costs[cand]

    def mechanism_sensitivity(self) -> dict[str, float]:
        """The sensitivity keyword of the exponential mechanism for these scores.

        Gains share a common term, so their differences between neighbours lie in a range of
        width ``2 Delta`` (the module docstring): a *range* sensitivity, which grid backends
        round as a range, so the cancellation survives rounding each score separately. Gains
        per unit cost move within a range of width ``2 Delta / c_min`` (the module docstring);
        the paper's calibration takes that width as a per-score (l-infinity) sensitivity.
        """
        if self.costs is None:
            return {"range_sensitivity": 2.0 * self.sensitivity}
        if self.tight:
            return {"range_sensitivity": 2.0 * self.sensitivity / self.c_min}
        return {"sensitivity": 2.0 * self.sensitivity / self.c_min}


@dataclass(frozen=True)
class _Steps:
    """The mechanisms of one run: the greedy step, and under a knapsack the private best
    singleton and the private choice between the two sets."""

    step: ExponentialMechanism
    single: ExponentialMechanism | None = None
    choice: ExponentialMechanism | None = None

    @classmethod
    def build(cls, call: PrivateCall, eps_step: float, scorer: _Scorer,
              delta_sens: float) -> _Steps:
        for v in scorer.mechanism_sensitivity().values():
            check_score_sensitivity(v, delta_sens, call.caller)
        check_score_sensitivity(2.0 * delta_sens, delta_sens, call.caller)
        step = exponential_step(call.caller, eps_step, call.noise, **scorer.mechanism_sensitivity())
        if scorer.costs is None:
            return cls(step)
        # singleton gains share the term F(empty): a range of width 2 Delta, as in the steps
        return cls(step,
                   exponential_step(call.caller, eps_step, call.noise,
                              range_sensitivity=2.0 * delta_sens),
                   exponential_step(call.caller, eps_step, call.noise, sensitivity=delta_sens))

    def events(self, k: int) -> list[PrivacyEvent]:
        """The plan: ``k`` greedy steps, then the knapsack's two selections."""
        out = [self.step.privacy_map()._times(k)]
        out += [m.privacy_map() for m in (self.single, self.choice) if m is not None]
        return out


# ---------------------------------------------------------------------------------------------
# Mitrovic et al. 2017
# ---------------------------------------------------------------------------------------------
def _run_em_greedy(f: SetFunction, constraint: Constraint, *, step: ExponentialMechanism,
                   scorer: _Scorer, steps: int, gen: np.random.Generator, allowance: Ledger,
                   sample_size: int | None,
                   caller: str = "private_greedy") -> tuple[list[int], list[float]]:
    st = f.state()
    trace: list[float] = []
    for _ in range(steps):
        cand = np.flatnonzero(constraint.can_add(st))
        if cand.size == 0:
            break
        if sample_size is not None and sample_size < cand.size:
            # The subset depends only on the (already released) current set: no privacy cost.
            cand = np.sort(gen.choice(cand, size=sample_size, replace=False))
        g = require_finite(st.gains(cand), f, caller, "a marginal gain", private=True)
        s = scorer.scores(g, cand)
        j = step.release(s, budget=allowance)
        st.add(int(cand[j]))
        trace.append(float(g[j]))
    return st.selected, trace


def _private_greedy(call: PrivateCall, *, composition: str, sensitivity: float | None,
                    sample_size: int | None, calibration: str) -> Result:
    """:func:`private_greedy` below its public checks: plan the run from its mechanisms, charge
    the plan once, then draw."""
    caller, f, constraint = call.caller, call.f, call.constraint
    delta_sens = f.require_sensitivity(sensitivity, caller=caller)
    if sample_size is not None:
        sample_size = check_int(sample_size, "sample_size", low=1, high=f.n, caller=caller)
    if calibration not in _CALIBRATIONS:
        raise ValidationError(
            f"The 'calibration' parameter of {caller} must be one of {list(_CALIBRATIONS)}; "
            f"got {calibration!r}."
        )
    composition = check_composition(composition, caller)
    knap = is_knapsack(constraint)
    k = constraint.max_size
    if k == 0:
        raise ValidationError(f"The constraint of {caller} admits no non-empty feasible set.")
    steps = k + 2 if knap else k
    split = _split(call.epsilon, call.delta, steps, composition, True, caller)
    eps_step = split.epsilon_step
    costs = np.asarray(constraint.costs, dtype=float) if knap else None
    scorer = _Scorer(delta_sens, costs, float(costs.min()) if knap else 1.0,
                     tight=calibration == "tight")
    name = "private_stochastic_greedy" if sample_size is not None else "private_greedy"
    mechanisms = _Steps.build(call, eps_step, scorer, delta_sens)

    report, allowance = call.charge_plan(name, mechanisms.events(k), delta=split.delta,
                                         composition=split.composition)

    start = f.evaluations
    sel, trace = _run_em_greedy(f, constraint, step=mechanisms.step, scorer=scorer, steps=k,
                                gen=call.gen, allowance=allowance, sample_size=sample_size,
                                caller=caller)
    params: dict[str, Any] = {
        "epsilon": call.epsilon, "delta": call.delta, "composition": split.composition,
        "steps": steps, "epsilon_per_step": eps_step, "sensitivity": delta_sens,
        "sample_size": sample_size, "calibration": calibration if knap else None,
        "backend": backend_name(call.backend),
    }
    if knap:
        sel, trace = _knapsack_finish(f, constraint, sel, trace, mechanisms, allowance)
    # the weights the mechanisms draw with (rounded down, as they are)
    guarantee = em_greedy_guarantee(
        constraint, f.n, exponential_mechanism_weight(eps_step, sensitivity=delta_sens),
        sample_size=sample_size,
        ratio_weight=(exponential_mechanism_weight(eps_step, **scorer.mechanism_sensitivity())
                      if knap else None),
        theorem="Mitrovic, Bun, Krause and Karbasi 2017 (exponential-mechanism greedy)")
    return make_result(f, sel, name, privacy=report, evaluations=f.evaluations - start,
                       params=params, trace=trace, guarantee=guarantee)


def _knapsack_finish(f: SetFunction, constraint: Knapsack, sel: list[int], trace: list[float],
                     mechanisms: _Steps, allowance: Ledger) -> tuple[list[int], list[float]]:
    """Private best singleton and private choice between it and the greedy set."""
    assert mechanisms.single is not None and mechanisms.choice is not None
    st = f.state()
    fits = np.flatnonzero(constraint.can_add(st))
    single_gain = require_finite(st.gains(fits), f, "private_greedy", "a marginal gain",
                                 private=True)
    j = mechanisms.single.release(single_gain, budget=allowance)
    e = int(fits[j])
    mask = np.zeros(f.n, dtype=bool)
    mask[sel] = True
    v_greedy = float(require_finite(f.value(mask), f, "private_greedy", "the greedy set's value",
                                    private=True))
    f.evaluations += 2
    v_single = st.value + float(single_gain[j])
    pick = mechanisms.choice.release(np.array([v_greedy, v_single]), budget=allowance)
    if pick == 1:
        return [e], [float(single_gain[j])]
    return sel, trace


def _private_stochastic_greedy(call: PrivateCall, *, accuracy: float, sample_size: int | None,
                               composition: str, sensitivity: float | None,
                               calibration: str) -> Result:
    """:func:`private_stochastic_greedy` below its public checks."""
    n = call.f.n
    accuracy = check_real(accuracy, "accuracy", low=0.0, high=1.0, low_open=True,
                          high_open=True, caller=call.caller)
    if sample_size is None:
        k = max(1, call.constraint.max_size)
        # -ln(accuracy): 1 / accuracy overflows for a subnormal accuracy
        sample_size = max(1, min(n, math.ceil(min(n / k * -math.log(accuracy), n))))
    return _private_greedy(call, sample_size=sample_size, composition=composition,
                           sensitivity=sensitivity, calibration=calibration)


@register("private_greedy", private=True,
          summary="Exponential-mechanism greedy (Mitrovic et al. 2017); matroid or knapsack",
          constraints=("cardinality", "matroid", "knapsack"),
          core=_private_greedy)
def private_greedy(f: SetFunction, constraint: object, *, epsilon: float, delta: float = 0.0,
                   composition: str = "auto", sensitivity: float | None = None,
                   sample_size: int | None = None, calibration: str = "tight",
                   backend: Any = None, budget: Any = None, rng: RNGLike = None) -> Result:
    """Private greedy of Mitrovic, Bun, Krause and Karbasi 2017 (exponential-mechanism greedy).

    At each of ``k`` steps (``k`` the cardinality, the matroid rank, or under a knapsack the
    largest number of items that fit, computed from the public costs) the exponential mechanism
    picks a feasible candidate with probability proportional to
    ``exp(eps_step * score / (2 * s))``, where the score is the marginal gain (``s = Delta``, the
    declared sensitivity of ``f``) or, under a knapsack, the gain per unit cost
    (``s = Delta / c_min``; ``2 Delta / c_min`` with ``calibration="paper"``). Each step is
    ``eps_step``-DP (see the module docstring for why the common term cancels and why the
    cost-scaled changes span ``2 Delta / c_min``), and ``k`` steps compose to
    ``(epsilon, delta)``.

    Under a knapsack the algorithm also draws the best singleton privately (exponential mechanism
    on ``f({e})``, sensitivity ``Delta``) and privately chooses the better of the two sets
    (exponential mechanism on their two values, sensitivity ``Delta``): ``k + 2`` steps share
    the budget.

    Guarantees (monotone submodular ``f``), with ``eps_step`` the per-step budget and ``n`` the
    ground-set size, in expectation:

    * cardinality ``k``: ``F(S) >= (1 - 1/e) OPT - k (2 Delta / eps_step)(ln n + 1)``;
    * any matroid of rank ``r``: ``F(S) >= OPT / 2 - r (2 Delta / eps_step)(ln n + 1)``;
    * knapsack: ``(1 - 1/e) / 2 OPT - [A + W((m-1)/e) 2 Delta / eps_step] / 2 - W(1/e) 2 Delta
      / eps_step``, ``m`` the items that fit alone, ``W`` Lambert's function and ``A`` the
      cost-benefit steps' error (Khuller, Moss and Naor 1999 with the mechanisms' errors;
      derived in :mod:`dpsubmod.offline.guarantees`).

    Parameters
    ----------
    f : SetFunction
        The objective, with a declared ``sensitivity`` (or pass ``sensitivity=``).
    constraint : int or Constraint
        ``k``, a Matroid, or a Knapsack.
    epsilon : float
        Total privacy budget.
    delta : float, default=0
        With ``delta > 0`` advanced composition may be used (see ``composition``).
    composition : {"auto", "basic", "advanced", "kov", "zcdp"}, default="auto"
        How the total is split over the steps: basic composition, advanced composition (Dwork,
        Rothblum and Vadhan 2010), the optimal composition theorem (Kairouz, Oh and Viswanath
        2015) or zCDP, the last three with the exponential mechanism's bounded range. ``"auto"``
        picks the rule with the largest per-step budget for the requested ``delta``, and basic
        composition when ``delta == 0`` or when no rule gives a step more than 1% larger (then
        no delta is spent).
    sensitivity : float, optional
        Overrides ``f.sensitivity``.
    sample_size : int, optional
        Score only a uniform random subset of this many candidates each step
        (see :func:`private_stochastic_greedy`).
    calibration : {"tight", "paper"}, default="tight"
        Knapsack steps only: ``"tight"`` uses the range ``2 Delta / c_min`` of the changes of
        the gains per unit cost, so each step spends its whole share; ``"paper"`` is Mitrovic
        et al.'s per-score sensitivity ``2 Delta / c_min``, with twice the noise exponent's
        denominator (each step ``eps_step / 2``-DP while charged ``eps_step``). Cardinality
        and matroid steps are the same under both.
    backend : {"numpy", "secure"} or backend instance, optional
        Noise backend.
        ``None`` (the default): ``"secure"`` without ``rng``, a seeded ``"numpy"`` simulation
        with one (:func:`~dpsubmod.privacy.backends.choose_backend`).
    budget : Budget, optional
        The data set's budget: the whole ``(epsilon, delta)`` of the call is charged to it before
        the first noise draw (:class:`~dpsubmod.errors.BudgetExceededError` when it does not fit;
        then nothing is released and nothing changes).
    rng : int, Generator or None
        Randomness of the run. A seeded numpy-backend run is a reproducible simulation, not a
        private release.

    Returns
    -------
    Result
        ``privacy`` states the a-priori guarantee: the epsilon and delta of the whole call under
        the composition used, whatever path the run took.
    """
    caller = "private_greedy"
    call = checked_call(caller, f, constraint, epsilon=epsilon, delta=delta, budget=budget,
                        rng=rng, backend=backend)
    return _private_greedy(call, composition=composition, sensitivity=sensitivity,
                           sample_size=sample_size, calibration=calibration)


@register("private_stochastic_greedy", private=True,
          summary="Exponential-mechanism greedy over a random candidate subset each step",
          constraints=("cardinality", "matroid", "knapsack"),
          core=_private_stochastic_greedy)
def private_stochastic_greedy(f: SetFunction, constraint: object, *, epsilon: float,
                              delta: float = 0.0, accuracy: float = 0.1,
                              sample_size: int | None = None, composition: str = "auto",
                              sensitivity: float | None = None, calibration: str = "tight",
                              backend: Any = None, budget: Any = None,
                              rng: RNGLike = None) -> Result:
    """Private stochastic greedy: :func:`private_greedy` scoring a uniform random subset of
    ``s = ceil((n / k) ln(1 / accuracy))`` candidates each step (Mitrovic et al. 2017 combined
    with Mirzasoleiman et al. 2015).

    The subset is drawn independently of the data, so each step is exactly as private as in
    :func:`private_greedy` (no amplification is claimed). Evaluations: about ``n ln(1/accuracy)``
    in total instead of ``k n``. The other parameters are those of :func:`private_greedy`.
    """
    caller = "private_stochastic_greedy"
    call = checked_call(caller, f, constraint, epsilon=epsilon, delta=delta, budget=budget,
                        rng=rng, backend=backend)
    return _private_stochastic_greedy(call, accuracy=accuracy, sample_size=sample_size,
                                      composition=composition, sensitivity=sensitivity,
                                      calibration=calibration)


# ---------------------------------------------------------------------------------------------
# exact output distribution (for exact privacy checks on tiny inputs)
# ---------------------------------------------------------------------------------------------
def greedy_path_distribution(f: SetFunction, constraint: object, *, weight: float,
                             steps: int | None = None,
                             score: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None
                             ) -> dict[tuple[int, ...], float]:
    """Exact distribution of the ordered selection of an exponential-mechanism greedy.

    Each step picks a feasible candidate ``e`` with probability proportional to
    ``exp(weight * score(e))`` (score = marginal gain, or ``score(gains, candidates)``). Every
    selection path is enumerated, so use it only on tiny inputs (``n <= 8``, ``k <= 3``). With
    ``weight = eps_step / (2 Delta)`` this is the distribution of :func:`private_greedy`.
    """
    f, constraint = resolve(f, constraint, "greedy_path_distribution")
    k = constraint.max_size if steps is None else steps
    out: dict[tuple[int, ...], float] = {}

    def walk(st: FunctionState, path: tuple[int, ...], logp: float) -> None:
        cand = np.flatnonzero(constraint.can_add(st)) if len(path) < k else np.zeros(0, int)
        if cand.size == 0:
            out[path] = out.get(path, 0.0) + math.exp(logp)
            return
        g = st.gains(cand)
        s = g if score is None else score(g, cand)
        logits = weight * s
        logq = logits - np.logaddexp.reduce(logits)
        for e, lq in zip(cand, logq):
            nxt = st.copy()
            nxt.add(int(e))
            walk(nxt, path + (int(e),), logp + float(lq))

    walk(f.state(), (), 0.0)
    return out
