r"""Private explore-then-commit greedy: bandit feedback, i.i.d. rounds (the C-ETC scheme of Nie
et al., ICML 2023, and Fourati et al., AAAI 2024, made private by parallel composition).

Stage ``i = 1, 2, ...`` starts from the set :math:`S_{i-1}` chosen so far (:math:`S_0 =
\emptyset`), with the :math:`N_i` candidates ``e`` that keep :math:`S_{i-1} + e` feasible and a
public budget of :math:`m N_i` rounds. With ``schedule="halving"`` (the default) the stage runs
sequential halving (Karnin, Koren and Somekh, ICML 2013): :math:`\lceil \log_2 N_i \rceil`
phases share the budget; each phase plays its survivors round robin, releases their mean
rewards over its own rounds plus Laplace noise of scale :math:`B / (p \epsilon)` (``p`` plays
each; one :func:`~dpsubmod.privacy.additive.laplace` call on the vector of means, l1
sensitivity :math:`B/p`: one round's reward, clipped to ``[0, B]``, enters one mean) and keeps
the better half by each survivor's *pooled* estimate, the plays-weighted average of its
released means over the stage's phases so far (post-processing, as in successive elimination:
every round a candidate was played counts); the last survivor joins the set. Clearly worse
candidates stop costing rounds early, and the close ones get several times ``m`` plays. With
``schedule="uniform"`` every candidate is played ``m`` times in one phase and the best noisy
mean is added (the C-ETC stage).
When no candidate fits, or the rounds left cannot hold a whole stage, the learner commits to
its set for the remaining rounds.

Privacy. Each round's reward enters exactly one noisy mean, and a phase's rounds and candidates
are fixed by the round index and by the earlier released means (the pooled estimates are
post-processing of those means); so the sequence of played sets is epsilon-DP by parallel
composition, neighbours differing in one round's function.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from ..._guarantee import RegretGuarantee, regret_guarantee
from ..._rng import RNGLike, as_generator
from ..._validation import check_int
from ...constraints import Knapsack
from ...errors import ValidationError
from ...privacy.additive import Laplace
from ...privacy.events import PrivacyEvent
from ...privacy.plan import PrivacyPlan
from .._checks import check_finite_epsilon
from .._plans import check_backend, learner_backend, run_plan, tree_backend
from ..protocol import Learner
from ..tags import NOISE_BACKENDS, LearnerTags
from ._iid import (
    NEIGHBOURING,
    PARALLEL_RULE,
    as_constraint,
    check_bound,
    constraint_ratio,
    expected_max_subgaussian,
)

SCHEDULES = ("halving", "uniform")


def etc_bound(T: int, sizes: list[int], m: int, epsilon: float, *, bound: float = 1.0,
              ratio: float = 1.0 - 1.0 / math.e, schedule: str = "uniform") -> float:
    r"""The stated regret bound of explore-then-commit with ``m`` plays per candidate.

    ``sizes`` are the (upper bounds on the) numbers of candidates of the stages. Exploration
    rounds cost at most ``ratio * bound`` each; every commit round at most the stages' summed
    selection errors :math:`\sum_i \delta_i`, with

    .. math::

        \delta_i = 2 B \sqrt{\ln N_i / (2m)} + 2 \frac{B}{m \epsilon} H_{N_i}

    (:math:`N_i` candidates: the sample means' maximal inequality and the expected largest of
    :math:`N_i` Laplace magnitudes, :math:`H_N` the harmonic number; a stage's chosen candidate
    loses at most the largest overestimate plus the largest underestimate). Stages that do not
    fit in ``T`` are not played; then the bound is the trivial ``ratio * bound * T``.

    With ``schedule="halving"`` every phase ``r`` of :func:`halving_phases` adds its own
    error: the survivors are ranked by their pooled estimates over the stage's first ``r``
    phases (:math:`P_r` plays each, the sum of those phases' plays), so a phase lowers the best
    survivor's mean by at most the largest overestimate plus the largest underestimate among
    them,

    .. math::

        \delta_{i,r} = 2 B \sqrt{\ln N_i / (2 P_r)} + 2 \frac{r B}{P_r \epsilon} H_{N_i}.

    The pooled estimates of the survivors carry their selection by earlier phases, so both
    terms are taken over all :math:`N_i` candidates of the stage (each candidate's ``s``-th
    play read as its own ``s``-th i.i.d. draw; the pooled noise of a candidate is ``1 / P_r``
    times a sum of ``r`` Laplace variables of scale :math:`B / \epsilon`, whose maxima over
    the candidates add up). With one phase (``"uniform"``) this is :math:`\delta_i`.

    >>> round(etc_bound(20000, [12, 11, 10], 322, 1.0)), round((1 - 1 / math.e) * 20000)
    (10674, 12642)
    """
    B = float(bound)
    phases = [stage_phases(N, m, schedule) for N in sizes]
    explore = sum(a * p for ph in phases for a, p in ph)
    if explore > T:
        return ratio * B * T
    errs = 0.0
    for ph in phases:
        if not ph:
            continue
        N = ph[0][0]
        harmonic = sum(1.0 / i for i in range(1, N + 1))
        pooled = 0
        for r, (a, p) in enumerate(ph, start=1):
            pooled += p
            if a > 1:
                errs += (2.0 * expected_max_subgaussian(N, pooled, B)
                         + 2.0 * r * B * harmonic / (pooled * epsilon))
    return min(ratio * B * explore + (T - explore) * errs, ratio * B * T)


def default_m(T: int, sizes: list[int], epsilon: float, *, bound: float = 1.0) -> int:
    r"""The default number of plays per candidate: the integer ``m`` in ``[1, T / sum(sizes)]``
    minimising

    .. math::

        m \sum_i N_i + T \Big(B\sqrt{\ln N_1 / (2m)} + \frac{B H_{N_1}}{m \epsilon}\Big),

    the exploration rounds against one stage's estimation error and privacy-noise error as
    :func:`etc_bound` states them (without its factor 2, for the largest stage). Its minimiser
    grows as :math:`(T / \sum_i N_i)^{2/3}`, or as :math:`\sqrt{T / (\epsilon \sum_i N_i)}`
    when the privacy term dominates. The full bound charges every stage's worst-case error to
    every commit round and prices an exploration round at the whole ``ratio * bound``; its own
    minimiser explores for most of the horizon (half of it at ``T = 20000`` with ``n = 12, k =
    3``, where it earns 0.41 per round on the Uber stream against 0.50 with this ``m``).

    >>> default_m(2000, [12, 11, 10], 1.0), default_m(20000, [12, 11, 10], 1.0)
    (18, 68)
    """
    total, N = sum(sizes), max(sizes)
    top = max(1, int(T) // total)
    ms = np.arange(1, top + 1, dtype=float)
    harmonic = sum(1.0 / i for i in range(1, N + 1))
    err = (float(bound) * np.sqrt(math.log(max(N, 2)) / (2.0 * ms))
           + float(bound) * harmonic / (ms * float(epsilon)))
    cost = ms * total + T * err
    return int(ms[int(np.argmin(cost))])


def halving_phases(N: int, m: int) -> list[tuple[int, int]]:
    r"""A stage's public schedule under ``schedule="halving"``: the ``(survivors, plays)`` of
    each phase for ``N`` candidates and a budget of ``m * N`` rounds.

    Sequential halving (Karnin, Koren and Somekh, ICML 2013): :math:`L = \lceil \log_2 N
    \rceil` phases share the budget equally; phase ``r`` plays each of its :math:`N_r`
    survivors :math:`\max(1, \lfloor m N / (L N_r) \rfloor)` times and keeps the
    :math:`\lceil N_r / 2 \rceil` largest pooled estimates (each survivor's released means
    of the phases so far, weighted by their plays). One candidate needs no phase. Only public
    numbers enter: which candidates survive is the released choice.

    >>> halving_phases(12, 18)
    [(12, 4), (6, 9), (3, 18), (2, 27)]
    >>> halving_phases(1, 18)
    []
    """
    phases: list[tuple[int, int]] = []
    if N <= 1:
        return phases
    L = math.ceil(math.log2(N))
    alive = int(N)
    while alive > 1:
        phases.append((alive, max(1, (int(m) * int(N)) // (L * alive))))
        alive = (alive + 1) // 2
    return phases


def stage_phases(N: int, m: int, schedule: str = "uniform") -> list[tuple[int, int]]:
    """The ``(candidates, plays)`` of a stage's phases: one phase of ``m`` plays each
    (``"uniform"``), or :func:`halving_phases` (``"halving"``)."""
    return halving_phases(N, m) if schedule == "halving" else [(int(N), int(m))]


class PrivateExploreThenCommit(Learner):
    r"""Private online submodular maximization for i.i.d. rounds with bandit feedback: greedy
    stages of explore-then-commit, each releasing Laplace-noised candidate means.

    See the module docstring for the stages. Only :math:`f_t(S_t)` is observed; rewards are
    clipped to ``[0, bound]``.

    Privacy: ``epsilon``-DP for the sequence of played sets, neighbours differing in one round's
    function, by parallel composition (each round's reward enters exactly one noisy mean, of
    l1 sensitivity ``bound / m``), for any stream.

    Guarantee (i.i.d. rounds: the :math:`f_t` drawn independently from one distribution over
    monotone submodular functions with values in ``[0, bound]``; :attr:`guarantee`): under a
    cardinality constraint the expected :math:`(1 - 1/e)`-regret against the best fixed
    ``k``-set is at most :func:`etc_bound` with the stages' sizes :math:`N_i = n - i + 1` (and
    the schedule's phases, each adding its own selection error: a phase keeps its best noisy
    survivor, which loses at most that error against the best survivor): the
    greedy whose ``i``-th choice is :math:`\delta_i`-optimal in expectation earns at least
    :math:`(1 - 1/e) OPT - \sum_i \delta_i` (Nemhauser, Wolsey and Fisher 1978 with additive
    errors; Nie et al. 2023, Theorem 1). Under a matroid the same sum bounds the
    :math:`1/2`-regret's commit term (Fisher, Nemhauser and Wolsey 1978); under a knapsack
    nothing is stated (vacuous). With ``m`` of order :math:`(T / (k n))^{2/3}` this is
    :math:`O(B k^{4/3} n^{1/3} T^{2/3} \sqrt{\ln n} + B k^{5/3} n^{2/3} T^{1/3} \ln n /
    \epsilon)` (halving's pooled phases, whose :math:`P_r` about double from phase to phase,
    multiply the sampling term by about :math:`2.8 \sqrt{\log_2 n}` and the privacy term by
    about :math:`2.8 \log_2 n`). Its
    worst-case constants make it vacuous at ``n = 12, k = 3, epsilon = 1`` with the default
    ``m`` at ``T = 2000`` and ``20000`` under both schedules (halving: at every ``m`` at
    ``T = 20000``; uniform: from ``T = 10^5`` on it says something, 59,423 against the trivial
    63,212); with ``schedule="uniform"`` and ``m`` set to the bound's own minimiser (322 at
    ``T = 20000``) it says something from about ``T = 20000`` on, but that ``m`` explores for
    half of the horizon.

    Parameters
    ----------
    n : int
        Ground-set size.
    T : int
        Horizon.
    k : int or Constraint
        The cardinality budget ``1 <= k <= n``, or a Matroid or Knapsack on ``range(n)``: a
        stage only tries candidates that keep the set feasible (``constraint.can_add``).
    epsilon : float
        Privacy budget of each stage's release, and of the whole run; finite, ``> 0``.
    m : int, optional
        A stage's budget is ``m`` rounds per candidate (``m`` plays of each under
        ``schedule="uniform"``). Default: :func:`default_m` at the public ``(T, n, k,
        epsilon)`` (exploration cost against one stage's estimation and privacy-noise errors),
        with :math:`N_i = n - i + 1` for the largest feasible size's stages; 18 at
        ``T = 2000`` and 68 at ``T = 20000`` for ``n = 12, k = 3, epsilon = 1``.
    schedule : {"halving", "uniform"}, default="halving"
        How a stage spends its ``m * N_i`` rounds: sequential halving over
        :math:`\lceil \log_2 N_i \rceil` phases (:func:`halving_phases`; each phase's own
        rounds feed its release, and survivors are ranked by estimates pooled over the
        stage's phases), or ``m`` plays of every candidate in one phase. Both are fixed by
        public numbers. On the Uber stream at ``epsilon = 1``, halving earns 0.411 per round
        against 0.396 at ``T = 2000``, and 0.511 against 0.498 at ``T = 20000`` (the same 40
        streams and seeds for both).
    restart : int, optional
        Drift-robust option: a public period ``P``; every ``P`` rounds the learner forgets its
        set and explores again from the empty set (the default ``m`` is then tuned for ``P``
        rounds; the last period is cut at ``T``). Each round still enters exactly one noisy
        mean, so the privacy is unchanged; the stated bound is the sum of the periods' bounds
        for i.i.d. rounds, and on a stream whose distribution changes the learner adapts
        within a period. ``None`` (default): one period of ``T`` rounds.
    bound : float, default=1.0
        Public upper bound ``B`` on every :math:`f_t`; rewards are clipped to ``[0, bound]``.
    backend : {None, "numpy", "secure", "opendp"} or NoiseBackend, default=None
        Sampler of the Laplace noise (:func:`~dpsubmod.privacy.additive.laplace`).
        ``None`` (the default): ``"secure"`` without ``rng``, a seeded ``"numpy"`` simulation
        with one (:func:`~dpsubmod.privacy.backends.choose_backend`).
    rng : int, Generator, SeedSequence or None, default=None
        Resolved when the state is built (the numpy backend's noise).
    budget : Budget or None, default=None
        Charged the whole run's guarantee (:attr:`privacy`) at construction, before anything is
        released (:class:`~dpsubmod.errors.BudgetExceededError` when it does not fit; then
        nothing changes), again by :meth:`reset` after play and by every clone.

    References
    ----------
    Z. Karnin, T. Koren and O. Somekh, "Almost optimal exploration in multi-armed bandits",
    ICML 2013 (sequential halving).
    G. Nie, M. Agarwal, A. K. Umrawal, V. Aggarwal and C. J. Quinn, "An explore-then-commit
    algorithm for submodular maximization under full-bandit feedback", UAI 2022 / ICML 2023.
    F. Fourati, C. J. Quinn, M.-S. Alouini and V. Aggarwal, "Combinatorial stochastic-greedy
    bandit", AAAI 2024.

    Examples
    --------
    >>> from dpsubmod.functions import Modular
    >>> from dpsubmod.online import run
    >>> stream = [Modular([0.1, 0.45, 0.05, 0.4])] * 3000
    >>> learner = PrivateExploreThenCommit(4, T=3000, k=2, epsilon=1.0, rng=0)
    >>> trace = run(learner, stream, rng=0)
    >>> trace.selections[-1], trace.privacy.epsilon
    ((1, 3), 1.0)
    """

    _tags = LearnerTags(private=True, feedback="bandit", problem="maximization",
                        assumption="iid", backends=NOISE_BACKENDS)

    sense = "max"

    def __init__(self, n: int, T: int, k: Any, *, epsilon: float, m: int | None = None,
                 schedule: str = "halving", restart: int | None = None, bound: float = 1.0,
                 backend: Any = None, rng: RNGLike = None, budget: Any = None):
        self.n = n
        self.T = T
        self.k = k
        self.epsilon = epsilon
        self.m = m
        self.schedule = schedule
        self.restart = restart
        self.bound = bound
        self.backend = learner_backend(self, backend, rng, type(self).__name__)
        self.rng = rng
        self.budget = budget
        self._check_params()
        self._finish_construction(PrivateExploreThenCommit)

    # -- validation and public calibration ----------------------------------------------------
    def _check_params(self) -> None:
        name = type(self).__name__
        self._check_common(self.n, self.T, name)
        self._constraint = as_constraint(self.k, int(self.n), name)
        check_finite_epsilon(self.epsilon, name)
        check_bound(self.bound, name)
        if self.m is not None:
            check_int(self.m, "m", low=1, caller=name,
                      fix="m is the number of plays of each candidate in a stage.")
        if self.schedule not in SCHEDULES:
            raise ValidationError(
                f"The 'schedule' parameter of {name} must be one of {SCHEDULES}; got "
                f"{self.schedule!r}. Use 'halving' (sequential halving within each stage, the "
                "default) or 'uniform' (every candidate played m times).")
        if self.restart is not None:
            check_int(self.restart, "restart", low=1, caller=name,
                      fix="restart is the public period, in rounds, after which the learner "
                          "starts again from the empty set; None never restarts.")
        check_backend(self.backend, name)

    def _sizes(self) -> list[int]:
        n = int(self.n)
        return [n - i for i in range(self._constraint.max_size)]

    def _m(self) -> int:
        if self.m is not None:
            return int(self.m)
        if "_m_default" not in self.__dict__:
            self._m_default = self._default_m()
        return self._m_default

    def _default_m(self) -> int:
        return default_m(self._period(), self._sizes(), float(self.epsilon),
                         bound=float(self.bound))

    def _period(self) -> int:
        """Rounds per period: ``restart`` (at most ``T``), or ``T`` without restarts."""
        T = int(self.T)
        return T if self.restart is None else min(int(self.restart), T)

    def _periods(self) -> list[int]:
        """The periods' lengths, the last one cut at ``T``."""
        T, P = int(self.T), self._period()
        return [P] * (T // P) + ([T % P] if T % P else [])

    def _mean_sensitivity(self, m: int) -> float:
        """l1 sensitivity of a stage's vector of means: one round's reward, in ``[0, bound]``,
        enters one of them, divided by ``m``."""
        return float(self.bound) / m

    def _noise(self, candidates: int, plays: int, backend_kw: dict[str, Any]) -> Laplace:
        """The mechanism of one phase's release: Laplace noise at ``epsilon`` on the vector of
        ``candidates`` means of ``plays`` rounds each (l1 sensitivity ``bound / plays``)."""
        return Laplace(epsilon=float(self.epsilon), sensitivity=self._mean_sensitivity(plays),
                       dim=candidates, **backend_kw)

    def _guarantee(self) -> RegretGuarantee:
        ratio, rname = constraint_ratio(self._constraint)
        B, T = float(self.bound), int(self.T)
        units = (f"{rname}-regret of i.i.d. rewards f_t in [0, {B:g}] against the best fixed "
                 "feasible set")
        if isinstance(self._constraint, Knapsack):
            return regret_guarantee(math.inf, (1.0 - 1.0 / math.e) * B * T, units=units,
                                    theorem=f"{type(self).__name__} under a knapsack: no "
                                            "regret bound is derived", assumption="iid")
        bound = sum(etc_bound(P, self._sizes(), self._m(), float(self.epsilon), bound=B,
                              ratio=ratio, schedule=self.schedule) for P in self._periods())
        return regret_guarantee(bound, ratio * B * T, units=units, theorem=(
            "i.i.d. rounds: exploration rounds at most ratio * bound each, commit rounds at "
            "most the greedy's summed stage errors (Nemhauser-Wolsey-Fisher with additive "
            "errors; Nie et al. 2023): 2 bound sqrt(ln N_i / 2m) + 2 bound H_{N_i} / "
            "(plays epsilon) per phase of each stage (one phase of m plays, or the "
            "sequential-halving phases)"
            + ("; summed over the restart periods" if self.restart is not None else "")),
            assumption="iid")

    # -- privacy ------------------------------------------------------------------------------
    def _privacy_plan(self) -> PrivacyPlan:
        return self._memo_plan(self._build_plan)  # type: ignore[return-value]

    def _build_plan(self) -> PrivacyPlan:
        eps = float(self.epsilon)
        m, periods = self._m(), len(self._periods())
        # Every phase of every stage, per period, with at most the stage's N_i candidates:
        # its mechanism's map, identical maps counted together (calibrated only, never drawn
        # from: a numpy backend here needs no seed).
        kw = tree_backend(self.backend, 0)
        uses: dict[PrivacyEvent, int] = {}
        for N in self._sizes():
            for cands, plays in stage_phases(N, m, self.schedule):
                ev = dataclasses.replace(self._noise(cands, plays, kw).privacy_map(), note="")
                uses[ev] = uses.get(ev, 0) + periods
        releases = sum(uses.values())
        if not uses:  # lone candidates only, added unplayed: one use keeps the plan stated
            uses[dataclasses.replace(self._noise(1, m, kw).privacy_map(), note="")] = 1
        note = (f"noisy candidate means per phase of a greedy stage (up to {releases} "
                f"releases, over {periods} period(s)), l1 sensitivity bound / plays of the "
                "phase; disjoint rounds")
        events = [dataclasses.replace(ev._times(count), note=note) for ev, count in uses.items()]
        return run_plan(type(self).__name__, events, composition=PARALLEL_RULE,
                        guarantee=(eps, 0.0), neighbouring=NEIGHBOURING,
                        backend=self.backend, rng=self.rng)

    # -- play ---------------------------------------------------------------------------------
    def _reset(self) -> None:
        super()._reset()
        self._noise_kw = tree_backend(self.backend, as_generator(self.rng))
        self._allowance = self._run_allowance()
        n = int(self.n)
        self._set = np.zeros(n, dtype=bool)
        self._cands = np.zeros(0, dtype=int)
        self._sums = np.zeros(0)
        self._pooled = np.zeros(0)
        self._pooled_plays = 0
        self._phases: list[tuple[int, int]] = []
        self._phase = 0
        self._pos = 0
        self._committed = False
        self._stage = 0
        self._played = -1
        self._period_end = self._period()
        m = self._m()
        self._params = {"n": n, "T": int(self.T), "k": self.k, "epsilon": float(self.epsilon),
                        "bound": float(self.bound), "m": m,
                        "stages": self._constraint.max_size,
                        "schedule": self.schedule,
                        "exploration_rounds": sum(a * p for N in self._sizes()
                                                  for a, p in stage_phases(N, m, self.schedule)),
                        "restart": self.restart, "periods": len(self._periods())}

    def _start_stage(self) -> None:
        while True:
            cands = np.flatnonzero(self._constraint.can_add(self._set))
            phases = stage_phases(cands.size, self._m(), self.schedule)
            left = self._period_end - self._round
            if cands.size == 0 or sum(a * p for a, p in phases) > left:
                self._committed = True
                return
            if phases:
                break
            # A lone candidate under halving: nothing to compare, so it is added unplayed.
            self._set[cands[0]] = True
            self._stage += 1
        self._cands = cands
        self._phases = phases
        self._phase = 0
        self._sums = np.zeros(cands.size)
        self._pooled = np.zeros(cands.size)
        self._pooled_plays = 0
        self._pos = 0

    def _select(self) -> np.ndarray:
        if self._round == self._period_end:
            # A new period starts from scratch: nothing learnt before it is used again.
            self._period_end = min(self._round + self._period(), int(self.T))
            self._set[:] = False
            self._committed = False
            self._pos = 0
            self._stage = 0
            self._phase = 0
        if not self._committed and self._pos == 0 and self._phase == 0:
            self._start_stage()
        mask = self._set.copy()
        if not self._committed:
            self._played = int(self._pos % self._cands.size)
            mask[self._cands[self._played]] = True
        return mask

    def _update(self, value: float) -> None:  # type: ignore[override]
        if self._committed:
            return
        self._sums[self._played] += min(max(float(value), 0.0), float(self.bound))
        self._pos += 1
        plays = self._phases[self._phase][1]
        if self._pos == self._cands.size * plays:
            noisy = np.atleast_1d(self._noise(self._cands.size, plays, self._noise_kw).release(
                self._sums / plays, budget=self._allowance))
            # Post-processing of the released vectors: each survivor's estimate pools its
            # noisy means over all of the stage's phases, weighted by their plays (its mean
            # over every round it was played in the stage, plus the phases' noise).
            self._pooled += plays * noisy
            self._pooled_plays += plays
            estimate = self._pooled / self._pooled_plays
            self._pos = 0
            self._phase += 1
            if self._phase < len(self._phases):
                # Keep the survivors with the largest estimates (stable order on ties), in
                # their index order, and start the next phase's round robin on them.
                keep = self._phases[self._phase][0]
                top = np.sort(np.argsort(-estimate, kind="stable")[:keep])
                self._cands = self._cands[top]
                self._pooled = self._pooled[top]
                self._sums = np.zeros(keep)
                return
            self._set[self._cands[int(np.argmax(estimate))]] = True
            self._stage += 1
            self._phase = 0
