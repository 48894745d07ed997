r"""Private epoch greedy: full information, i.i.d. rounds, a registered private offline method
run once per doubling epoch on the previous epoch's functions.

Epoch ``0`` has length :math:`L_0` and epoch ``j`` length :math:`L_j = 2^j L_0` (the last one cut
at ``T``). Epoch 0 plays a random maximal feasible set drawn with public randomness (it reads no
data; under a cardinality constraint it is a uniform ``k``-set, whose expected value is at least
``k/n`` of the best set's for monotone submodular rewards, where the empty set earns nothing).
Every later epoch ``j`` plays, in all its rounds, the set that a private offline method
(:func:`~dpsubmod.offline.maximize`; ``private_greedy`` by default) selects with the whole
``epsilon`` on the mean :math:`\bar F_{j-1}(S) = \frac{1}{L_{j-1}} \sum_{t \in \text{epoch } j-1}
\mathrm{clip}(f_t(S), 0, B)` of the previous epoch's functions.

Privacy. Replacing one round's function moves :math:`\bar F_{j-1}` by at most
:math:`B / L_{j-1}` at every set (the declared sensitivity of the mean), in exactly one epoch,
so exactly one selection sees it. The epochs are fixed by the round index; the selections are
epsilon-DP each, so the whole sequence of played sets is epsilon-DP by parallel composition.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..._guarantee import RegretGuarantee, regret_guarantee
from ..._rng import RNGLike, as_generator
from ..._validation import check_delta, check_int
from ...constraints import Knapsack
from ...errors import ValidationError
from ...functions.base import FunctionState, SetFunction
from ...offline._common import private_call
from ...offline.guarantees import em_greedy_guarantee
from ...offline.registry import constraint_kind, get_method
from ...privacy.calibration import exponential_mechanism_weight
from ...privacy.events import PrivacyEvent
from ...privacy.ledger import charge
from ...privacy.plan import Allowance, PrivacyPlan
from ...privacy.split import split_budget
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


def epoch_lengths(T: int, first_epoch: int, max_epoch: int | None = None) -> list[int]:
    """Lengths of the doubling epochs of a run of ``T`` rounds, each at most ``max_epoch``
    (when given), the last one cut at ``T``.

    >>> epoch_lengths(20, 2), epoch_lengths(20, 2, 4)
    ([2, 4, 8, 6], [2, 4, 4, 4, 4, 2])
    """
    out: list[int] = []
    left, L = int(T), int(first_epoch)
    cap = math.inf if max_epoch is None else int(max_epoch)
    while left > 0:
        out.append(int(min(L, cap, left)))
        left -= out[-1]
        L *= 2
    return out


class _EpochMean(SetFunction):
    """The mean of one epoch's functions, each value clipped to ``[0, bound]`` (a non-finite
    value counts as 0), with the declared sensitivity ``bound / L``: replacing one of the ``L``
    functions by any other moves the mean by at most that at every set."""

    def __init__(self, functions: Sequence[SetFunction], bound: float, sensitivity: float):
        super().__init__(functions[0].n, sensitivity=sensitivity)
        self.functions = list(functions)
        self.bound = float(bound)

    def _clip(self, v: np.ndarray) -> np.ndarray:
        return np.clip(np.nan_to_num(v, nan=0.0, posinf=self.bound, neginf=0.0), 0.0,
                       self.bound)

    def _value(self, mask: np.ndarray) -> float:
        return float(self._clip(np.array([g._value(mask) for g in self.functions])).mean())

    def state(self) -> FunctionState:
        return _EpochMeanState(self)


class _EpochMeanState(FunctionState):
    f: _EpochMean

    def __init__(self, f: _EpochMean):
        self.parts = [g.state() for g in f.functions]
        super().__init__(f)

    def _part_values(self) -> np.ndarray:
        return np.array([st.value for st in self.parts])

    def _gains(self, cand: np.ndarray) -> np.ndarray:
        base = self._part_values()
        G = np.stack([st._gains(cand) for st in self.parts])
        clip = self.f._clip
        out = (clip(base[:, None] + G) - clip(base)[:, None]).mean(axis=0)
        out[self.mask[cand]] = 0.0
        return out

    def _add(self, e: int) -> None:
        for st in self.parts:
            st.add(e)
        self.value = float(self.f._clip(self._part_values()).mean())

    def copy(self) -> _EpochMeanState:
        new = super().copy()
        new.parts = [st.copy() for st in self.parts]
        return new


class _EpochSelection:
    """The mechanism of one epoch's selection: a run of the registered private ``method`` at
    ``(epsilon, delta)`` on an epoch's mean, built from the learner's validated parameters.

    Its privacy map is the ``(epsilon, delta)`` that the method states for one call. Its release
    charges that event, then runs the method's core directly: the learner's constructor made
    the checks :func:`~dpsubmod.offline.maximize` would make, once for every epoch.
    """

    def __init__(self, method: str, constraint: Any, epsilon: float, delta: float,
                 backend: Any, rng: Any):
        self._spec = get_method(method)
        self._constraint = constraint
        self._eps, self._dlt = epsilon, delta
        self._backend, self._rng = backend, rng

    def privacy_map(self) -> PrivacyEvent:
        """The event of one selection (the method's whole call)."""
        name = self._spec.name
        return PrivacyEvent._trusted(
            name, self._eps, self._dlt,
            note=(f"one {name} selection per epoch after the first, each on the previous "
                  "epoch's mean (sensitivity bound / epoch length); disjoint rounds"))

    def release(self, mean: SetFunction, *, budget: Any) -> tuple[int, ...]:
        """Charge :meth:`privacy_map`'s event to ``budget``, then select on ``mean``."""
        spec, event = self._spec, self.privacy_map()
        charge(budget, event, spec.name)
        # The method charges its own plan to an allowance of exactly this one event, before
        # its first draw: a method whose run would spend more than planned draws nothing.
        planned = Allowance((event,), spec.name)
        if spec.core is None:  # a method without a core checks its arguments itself
            res = spec.fn(mean, self._constraint, epsilon=self._eps, delta=self._dlt,
                          budget=planned, rng=self._rng,
                          **({} if self._backend is None else {"backend": self._backend}))
        else:
            res = spec.core(private_call(spec.name, mean, self._constraint, epsilon=self._eps,
                                         delta=self._dlt, budget=planned, rng=self._rng,
                                         backend=self._backend), **spec.defaults)
        return tuple(res.selection)


class PrivateEpochGreedy(Learner):
    r"""Private online submodular maximization for i.i.d. rounds with full information: doubling
    epochs, each playing a private offline selection made on the previous epoch's functions.

    Epoch ``0`` (length ``first_epoch``) plays a random maximal feasible set drawn with public
    randomness; epoch ``j >= 1`` (length :math:`2^j L_0`, the last one cut at ``T``) plays the
    set ``method`` selects with ``epsilon`` on the mean of epoch ``j - 1``'s functions, their
    values clipped to ``[0, bound]`` (module docstring).

    Privacy: ``epsilon``-DP (``(epsilon, delta)`` with a method that spends delta) for the
    sequence of played sets, neighbours differing in one round's function, by parallel
    composition: each round enters exactly one selection, whose input it moves by at most
    ``bound / L`` (the epoch's length ``L``). The statement holds for any stream (the clip keeps
    the sensitivity whatever the functions); a non-finite value counts as 0.

    Guarantee (i.i.d. rounds: the :math:`f_t` drawn independently from one distribution over
    monotone submodular functions with values in ``[0, bound]``; :attr:`guarantee`): with
    ``private_greedy`` under a cardinality constraint (a matroid), the expected
    :math:`(1 - 1/e)`-regret (:math:`1/2`-regret) against the best fixed feasible set is at most

    .. math::

        \rho B L_0 + \sum_{j \ge 1} L_j \Big(a(B / L_{j-1})
        + B\sqrt{\ln N / (2 L_{j-1})}\Big),

    with :math:`a(\Delta)` the additive error of the private greedy's utility bound at
    sensitivity :math:`\Delta` (Mitrovic et al. 2017; ``k (2\Delta k/\epsilon)(\ln n + 1)`` at
    ``delta = 0``) and :math:`N` the number of feasible sets: the selection of epoch ``j`` is
    near-optimal for the previous epoch's mean, whose expectation at the best fixed set is that
    set's mean reward, and which overestimates the selected set by at most the maximal
    inequality's term. The privacy term sums to :math:`O(k^2 B \ln n \log(T) / \epsilon)`, the
    sampling term to :math:`O(B\sqrt{T k \ln n})`. Under a knapsack, or with another method,
    nothing is stated (vacuous). Against an adversarial stream the learner keeps its privacy but
    has no regret bound.

    Parameters
    ----------
    n : int
        Ground-set size.
    T : int
        Horizon.
    k : int or Constraint
        The cardinality budget ``1 <= k <= n``, or a Matroid or Knapsack on ``range(n)`` that
        ``method`` accepts.
    epsilon : float
        Privacy budget of each selection, and of the whole run (parallel composition); finite,
        ``> 0``.
    delta : float, default=0.0
        Passed to ``method`` (advanced composition over its steps when ``> 0``).
    method : str, default="private_greedy"
        A registered private offline method (:func:`~dpsubmod.offline.list_methods`).
    first_epoch : int, default=1
        :math:`L_0`: epoch ``j`` has :math:`2^j L_0` rounds. The bound's privacy term is the
        same for every epoch and its sampling term shrinks with the epoch, so a short first
        epoch costs only a few more epochs. The bound's own minimiser over powers of two is
        larger (256 at ``T = 2000, n = 12, k = 3, epsilon = 1``) because it prices each
        selection's privacy error at its worst case; on the Uber stream of the docs it earns
        0.48 per round at ``T = 2000`` against 0.50 with ``first_epoch=1``.
    max_epoch : int, optional
        Drift-robust option: a public cap on the epochs' length (they double up to it, then
        stay at it; the last one is cut at ``T``). Each selection still reads only the
        previous epoch's rounds, so with the cap the learner keeps adapting to a stream whose
        distribution changes, at most ``2 * max_epoch`` rounds late. The privacy is unchanged
        (each round enters exactly one selection); the stated bound is the same sum over the
        capped epochs, whose privacy term now grows linearly in ``T / max_epoch``. ``None``
        (default): the epochs double until ``T``.
    bound : float, default=1.0
        Public upper bound ``B`` on every :math:`f_t`; values are clipped to ``[0, bound]``.
    backend : {None, "numpy", "secure", "opendp"} or NoiseBackend, default=None
        The method's noise backend.
        ``None`` (the default): ``"secure"`` without ``rng``, a seeded ``"numpy"`` simulation
        with one (:func:`~dpsubmod.privacy.backends.choose_backend`).
    rng : int, Generator, SeedSequence or None, default=None
        Resolved when the state is built: epoch 0's set and each selection's draws.
    budget : Budget or None, default=None
        Charged the whole run's guarantee (:attr:`privacy`) at construction, before anything is
        released (:class:`~dpsubmod.errors.BudgetExceededError` when it does not fit; then
        nothing changes), again by :meth:`reset` after play and by every clone.

    References
    ----------
    M. Mitrovic, M. Bun, A. Krause and A. Karbasi, "Differentially private submodular
    maximization: data summarization in disguise", ICML 2017 (the private greedy).
    F. McSherry, "Privacy integrated queries", SIGMOD 2009 (parallel composition).

    Examples
    --------
    >>> from dpsubmod.functions import Modular
    >>> from dpsubmod.online import run
    >>> stream = [Modular([0.05, 0.45, 0.1, 0.4])] * 600
    >>> learner = PrivateEpochGreedy(4, T=600, k=2, epsilon=1.0, rng=0)
    >>> trace = run(learner, stream, rng=0)
    >>> trace.selections[-1], trace.privacy.epsilon
    ((1, 3), 1.0)
    """

    _tags = LearnerTags(private=True, feedback="full", problem="maximization",
                        assumption="iid", backends=NOISE_BACKENDS)

    sense = "max"

    def __init__(self, n: int, T: int, k: Any, *, epsilon: float, delta: float = 0.0,
                 method: str = "private_greedy", first_epoch: int = 1,
                 max_epoch: int | None = None, bound: float = 1.0, backend: Any = None,
                 rng: RNGLike = None, budget: Any = None):
        self.n = n
        self.T = T
        self.k = k
        self.epsilon = epsilon
        self.delta = delta
        self.method = method
        self.first_epoch = first_epoch
        self.max_epoch = max_epoch
        self.bound = bound
        self.backend = learner_backend(self, backend, rng, type(self).__name__)
        self.rng = rng
        self.budget = budget
        self._check_params()
        self._finish_construction(PrivateEpochGreedy)

    # -- validation and public calibration ----------------------------------------------------
    def _check_params(self) -> None:
        name = type(self).__name__
        self._check_common(self.n, self.T, name)
        self._constraint = as_constraint(self.k, int(self.n), name)
        check_finite_epsilon(self.epsilon, name)
        check_delta(self.delta, caller=name)
        check_bound(self.bound, name)
        check_int(self.first_epoch, "first_epoch", low=1, caller=name,
                  fix="first_epoch is the length of epoch 0, a positive number of rounds.")
        if self.max_epoch is not None:
            check_int(self.max_epoch, "max_epoch", low=1, caller=name,
                      fix="max_epoch is the public cap on an epoch's length, in rounds; None "
                          "lets the epochs double until T.")
        if not isinstance(self.method, str):
            raise ValidationError(
                f"The 'method' parameter of {name} must be a registered method name (str); "
                f"got {type(self.method).__name__}.")
        spec = get_method(self.method)
        if not spec.private:
            raise ValidationError(
                f"The 'method' parameter of {name} must be a private method; {self.method!r} "
                "is not. Use 'private_greedy', or another name from "
                "list_methods(private=True).")
        if "general" not in spec.data_models:
            # the epoch mean of the stream's functions declares no structure of its records
            raise ValidationError(
                f"The 'method' parameter of {name} is {self.method!r}, whose analysis needs an "
                f"objective of data model {' or '.join(map(repr, spec.data_models))}; the mean "
                "of an epoch's functions declares 'general'. Use 'private_greedy' or another "
                "method of list_methods(private=True).")
        ck = constraint_kind(self._constraint)
        if ck not in spec.constraints and not (ck == "cardinality"
                                               and "matroid" in spec.constraints):
            raise ValidationError(
                f"The 'k' parameter of {name} is a {ck} constraint, which method "
                f"{self.method!r} does not handle (it takes: {', '.join(spec.constraints)}).")
        if spec.needs_delta and float(self.delta) <= 0.0:
            raise ValidationError(
                f"Method {self.method!r} of {name} needs delta > 0; pass e.g. delta=1e-6.")
        check_backend(self.backend, name)
        if isinstance(self.backend, str) and self.backend not in spec.backends \
                and self.backend != "numpy":
            raise ValidationError(
                f"The 'backend' parameter of {name} is {self.backend!r}, which method "
                f"{self.method!r} cannot draw from (it takes: {', '.join(spec.backends)}).")

    def _lengths(self) -> list[int]:
        return epoch_lengths(int(self.T), self._first_epoch(), self.max_epoch)

    def _first_epoch(self) -> int:
        first = min(int(self.first_epoch), int(self.T))
        return first if self.max_epoch is None else min(first, int(self.max_epoch))

    def _step_weight(self, sensitivity: float) -> float:
        """The private greedy's exponential-mechanism weight at this sensitivity (as it
        calibrates: its steps share ``(epsilon, delta)`` by its ``composition="auto"``)."""
        steps = self._constraint.max_size
        split = split_budget(float(self.epsilon), float(self.delta), steps, composition="auto",
                             bounded_range=True, caller=type(self).__name__)
        return exponential_mechanism_weight(split.epsilon_step, sensitivity=sensitivity)

    def _n_feasible(self) -> int:
        r = self._constraint.max_size
        n = int(self.n)
        return sum(math.comb(n, i) for i in range(r + 1))

    def _bound_for(self, lengths: list[int]) -> float:
        """The stated bound for these epoch lengths (class docstring)."""
        ratio, _ = constraint_ratio(self._constraint)
        B, n = float(self.bound), int(self.n)
        total = ratio * B * lengths[0]
        N = self._n_feasible()
        for prev, L in zip(lengths[:-1], lengths[1:]):
            g = em_greedy_guarantee(self._constraint, n, self._step_weight(B / prev),
                                    theorem="private greedy")
            total += L * (g.additive + expected_max_subgaussian(N, prev, B))
        return total

    def _guarantee(self) -> RegretGuarantee:
        ratio, rname = constraint_ratio(self._constraint)
        B, T = float(self.bound), int(self.T)
        units = (f"{rname}-regret of i.i.d. rewards f_t in [0, {B:g}] against the best fixed "
                 "feasible set")
        if self.method != "private_greedy" or isinstance(self._constraint, Knapsack):
            return regret_guarantee(math.inf, max(ratio, 1.0 - 1.0 / math.e) * B * T,
                                    units=units, theorem=(
                f"{type(self).__name__} with method {self.method!r}"
                + (" under a knapsack" if isinstance(self._constraint, Knapsack) else "")
                + ": no regret bound is derived (only with private_greedy under a "
                  "cardinality or matroid constraint)"), assumption="iid")
        return regret_guarantee(self._bound_for(self._lengths()), ratio * B * T, units=units,
                                theorem=(
            "i.i.d. rounds: epoch 0 trivial, then per round of epoch j the private greedy's "
            "additive error at sensitivity bound/L_{j-1} (Mitrovic et al. 2017) plus "
            "bound sqrt(ln N / (2 L_{j-1})) over the N feasible sets (Hoeffding and the "
            "maximal inequality)"), assumption="iid")

    # -- privacy ------------------------------------------------------------------------------
    def _privacy_plan(self) -> PrivacyPlan:
        return self._memo_plan(self._build_plan)  # type: ignore[return-value]

    def _selection(self, rng: Any) -> _EpochSelection:
        """The mechanism of each epoch's selection, drawing from ``rng`` on numpy."""
        kw = tree_backend(self.backend, rng)
        return _EpochSelection(self.method, self._constraint, float(self.epsilon),
                               float(self.delta), kw["backend"], kw["rng"])

    def _build_plan(self) -> PrivacyPlan:
        eps, dlt = float(self.epsilon), float(self.delta)
        uses = len(self._lengths()) - 1
        # One selection per epoch after the first (calibrated only, never drawn from here).
        events = [self._selection(None).privacy_map()._times(uses)] if uses else []
        return run_plan(type(self).__name__, events, composition=PARALLEL_RULE,
                        guarantee=(eps if uses else 0.0, dlt if uses else 0.0),
                        neighbouring=NEIGHBOURING, backend=self.backend, rng=self.rng)

    # -- play ---------------------------------------------------------------------------------
    def _reset(self) -> None:
        super()._reset()
        gen = as_generator(self.rng)
        public_rng, self._select_rng = gen.spawn(2)
        lengths = self._lengths()
        self._starts = np.concatenate([[0], np.cumsum(lengths)]).astype(int)
        self._epoch = 0
        self._buffer: list[SetFunction] = []
        self._previous: list[SetFunction] = []
        self._allowance = self._run_allowance()
        self._selector = self._selection(self._select_rng)
        mask = np.zeros(int(self.n), dtype=bool)
        mask[self._constraint.random_maximal(rng=public_rng)] = True
        self._current = mask
        self._params = {"n": int(self.n), "T": int(self.T), "k": self.k,
                        "epsilon": float(self.epsilon), "delta": float(self.delta),
                        "method": self.method, "bound": float(self.bound),
                        "first_epoch": lengths[0], "max_epoch": self.max_epoch,
                        "epochs": len(lengths), "epoch_lengths": lengths,
                        "selections": len(lengths) - 1}

    def _select(self) -> np.ndarray:
        if self._round == self._starts[self._epoch + 1]:
            self._epoch += 1
            self._current = self._private_selection(self._previous)
            self._previous = []
        return self._current.copy()

    def _mean_sensitivity(self, L: int) -> float:
        """Sensitivity of the mean of ``L`` rounds' clipped functions: one of them replaced
        moves it by at most ``bound / L`` at every set."""
        return float(self.bound) / L

    def _private_selection(self, functions: list[SetFunction]) -> np.ndarray:
        mean = _EpochMean(functions, float(self.bound), self._mean_sensitivity(len(functions)))
        mask = np.zeros(int(self.n), dtype=bool)
        mask[list(self._selector.release(mean, budget=self._allowance))] = True
        return mask

    def _update(self, f: SetFunction) -> None:  # type: ignore[override]
        self._buffer.append(f)
        if self._round + 1 == self._starts[self._epoch + 1]:
            # The epoch ends: its functions feed the next selection, and nothing older is kept.
            self._previous, self._buffer = self._buffer, []
