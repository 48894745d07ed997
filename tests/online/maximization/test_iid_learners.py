"""PrivateEpochGreedy and PrivateExploreThenCommit: the learner protocol, the budget, the stated
privacy and regret guarantee (with its i.i.d. assumption), the registry's assumption capability,
bad input, and the regret rate on an i.i.d. stream."""

from __future__ import annotations

import itertools
import math
import sys
import warnings

import numpy as np
import pytest

from dpsubmod.constraints import Knapsack, PartitionMatroid
from dpsubmod.errors import BudgetExceededError, DPSubmodError, SeedWarning
from dpsubmod.experiments.problems import LEARNERS
from dpsubmod.functions import Modular
from dpsubmod.functions.base import SetFunction
from dpsubmod.offline import registry
from dpsubmod.offline.discrete.private_greedy import private_greedy
from dpsubmod.online import (
    FunctionStream,
    PrivateEpochGreedy,
    PrivateExploreThenCommit,
    run,
)
from dpsubmod.online.maximization.epoch_greedy import epoch_lengths
from dpsubmod.online.maximization.explore_then_commit import (
    default_m,
    etc_bound,
    halving_phases,
)
from dpsubmod.privacy import Budget, PrivacyEvent
from dpsubmod.privacy.plan import PlanExceededError
from scripts import load_script

N, K = 4, 2
MEANS = np.array([0.9, 0.7, 0.5, 0.3])


def iid_stream(T: int, seed: int = 0) -> list[Modular]:
    """Bernoulli rewards per element, scaled by 1/K so every K-set's value lies in [0, 1]."""
    rng = np.random.default_rng(seed)
    return [Modular((rng.random(N) < MEANS) / K) for _ in range(T)]


def _play(learner, stream) -> list[tuple[int, ...]]:
    out = []
    for f in stream:
        S = learner.select()
        out.append(S)
        learner.update(f if learner.feedback == "full" else f(S))
    return out


MAKERS = {
    "PrivateEpochGreedy": lambda T, **kw: PrivateEpochGreedy(N, T, K, epsilon=1.0, **kw),
    "PrivateExploreThenCommit": lambda T, **kw: PrivateExploreThenCommit(N, T, K, epsilon=1.0,
                                                                         **kw),
}


@pytest.mark.parametrize("name", sorted(MAKERS))
def test_protocol_replay_and_feasibility(name):
    stream = iid_stream(2000)
    learner = MAKERS[name](2000, rng=3)
    sets = _play(learner, stream)
    assert all(isinstance(S, tuple) and len(S) <= K and list(S) == sorted(S) for S in sets)
    # Same seed, same run, after reset and in a clone; the last rounds play the best pair.
    assert _play(learner.reset(), stream) == sets
    assert _play(learner.clone(), stream) == sets
    assert sets[-1] == (0, 1)
    with pytest.raises(DPSubmodError, match="built for T=2000"):
        learner.select()


@pytest.mark.parametrize("name", sorted(MAKERS))
def test_whole_run_charged_at_construction(name):
    budget = Budget(epsilon=1.5)
    learner = MAKERS[name](200, rng=0, budget=budget)
    assert budget.spent[0] == pytest.approx(1.0)
    assert learner.privacy.epsilon == pytest.approx(1.0) and learner.privacy.delta == 0.0
    assert "parallel composition" in str(learner.privacy)
    assert "one round's function" in learner.privacy.neighbouring
    # A second run does not fit: refused, nothing charged.
    with pytest.raises(BudgetExceededError):
        MAKERS[name](200, rng=0, budget=budget)
    assert budget.spent[0] == pytest.approx(1.0)
    # The run's mechanism uses stay within the plan (an overrun would raise).
    _play(learner, iid_stream(200))
    assert learner._allowance.unused == 0


def test_epoch_greedy_schedule_and_plan():
    assert epoch_lengths(20, 2) == [2, 4, 8, 6]
    learner = PrivateEpochGreedy(N, 20, K, epsilon=0.5, first_epoch=2)
    p = learner.resolved_params
    assert p["epoch_lengths"] == [2, 4, 8, 6] and p["selections"] == 3
    assert learner.plan.events[0].count == 3 and learner.privacy.epsilon == 0.5
    # T within the first epoch: nothing depends on data, nothing is spent.
    assert PrivateEpochGreedy(N, 2, K, epsilon=0.5, first_epoch=2).privacy.epsilon == 0.0


def test_epoch_greedy_plans_from_its_selection_mechanism():
    learner = PrivateEpochGreedy(N, 20, K, epsilon=0.5, first_epoch=2, rng=0)
    one = learner._selection(None).privacy_map()
    assert (one.mechanism, one.epsilon, one.delta, one.count) == ("private_greedy", 0.5, 0.0, 1)
    assert learner.plan.events == (one._times(3),)
    # The statement is the one the hand-written event gave before the plan came from the map.
    assert learner.plan.events[0] == PrivacyEvent(
        "private_greedy", 0.5, 0.0, count=3,
        note=("one private_greedy selection per epoch after the first, each on the previous "
              "epoch's mean (sensitivity bound / epoch length); disjoint rounds"))
    # Each selection charges the run's allowance exactly that map, before it draws.
    _play(learner, iid_stream(20))
    assert learner._allowance.events == (one,) * 3 and learner._allowance.unused == 0


def test_epoch_greedy_validates_epsilon_at_most_twice():
    """Once in the constructor, once where the selection's exponential mechanism is built: each
    selection runs its method below ``maximize``'s checks, from the checked values."""
    tracer = load_script("benchmarks/trace_privacy_path.py")
    try:
        def call():
            _play(PrivateEpochGreedy(N, 8, K, epsilon=1.0, rng=0), iid_stream(8))

        t = tracer.trace(call)
    finally:
        del sys.modules["trace_privacy_path"]
    assert t.first_draw is not None and "online/maximization/epoch_greedy.py" in t.files
    assert t.epsilon_validations <= 2, t.epsilon_checks


@pytest.fixture
def register(monkeypatch):
    """The registry's ``register``, on a copy of the registry that the test leaves behind."""
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    return registry.register


def test_epoch_greedy_runs_a_private_method_without_a_core(register):
    @register("greedy_by_its_function", private=True, summary="private_greedy, no core")
    def by_function(f, constraint, *, epsilon, delta=0.0, budget=None, rng=None, backend=None):
        return private_greedy(f, constraint, epsilon=epsilon, delta=delta, budget=budget,
                              rng=rng, backend=backend)

    stream = iid_stream(60)
    runs = [_play(PrivateEpochGreedy(N, 60, K, epsilon=1.0, method=m, rng=5), stream)
            for m in ("greedy_by_its_function", "private_greedy")]
    assert runs[0] == runs[1]


def test_epoch_greedy_stops_a_method_that_spends_beyond_its_plan(register):
    @register("greedy_at_twice_epsilon", private=True, summary="spends 2 epsilon")
    def twice(f, constraint, *, epsilon, delta=0.0, budget=None, rng=None, backend=None):
        return private_greedy(f, constraint, epsilon=2.0 * epsilon, delta=delta, budget=budget,
                              rng=rng, backend=backend)

    learner = PrivateEpochGreedy(N, 60, K, epsilon=1.0, method="greedy_at_twice_epsilon",
                                 rng=5)
    with pytest.raises(PlanExceededError, match="greedy_at_twice_epsilon"):
        _play(learner, iid_stream(60))


def test_etc_default_m_and_plan():
    assert default_m(2000, [12, 11, 10], 1.0) == 18
    # A smaller epsilon explores more (the privacy term T / (m epsilon) pulls m up).
    assert default_m(2000, [12, 11, 10], 0.1) > default_m(2000, [12, 11, 10], 1.0)
    learner = PrivateExploreThenCommit(N, 1000, K, epsilon=1.0, schedule="uniform")
    p = learner.resolved_params
    assert p["m"] == default_m(1000, [4, 3], 1.0) and p["exploration_rounds"] == 7 * p["m"]
    assert learner.plan.events[0].count == K
    # The default, sequential halving: the same m sets each stage's budget m * N_i; two
    # phases per stage (4 -> 2 -> 1 and 3 -> 2 -> 1), one release each.
    learner = PrivateExploreThenCommit(N, 1000, K, epsilon=1.0)
    p, m = learner.resolved_params, default_m(1000, [4, 3], 1.0)
    assert p["m"] == m and p["schedule"] == "halving"
    assert halving_phases(4, m) == [(4, m // 2), (2, m)]
    assert p["exploration_rounds"] == 4 * (m // 2) + 2 * m + 3 * (m // 2) + 2 * (3 * m // 4)
    assert learner.plan.events[0].count == 4 and learner.privacy.epsilon == 1.0


@pytest.mark.parametrize("name", sorted(MAKERS))
def test_guarantee_names_iid_rounds(name):
    learner = MAKERS[name](20000)
    g = learner.guarantee
    assert g.assumption == "iid" == type(learner).assumption
    assert "for i.i.d. rounds" in str(g) and g.units.startswith("(1 - 1/e)-regret")
    assert g.vacuous == (not g.bound < g.trivial)
    assert g.trivial == pytest.approx((1 - 1 / math.e) * 20000)


def test_etc_guarantee_is_the_stated_bound():
    g = PrivateExploreThenCommit(N, 50000, K, epsilon=1.0, m=300).guarantee
    assert g.bound == pytest.approx(etc_bound(50000, [4, 3], 300, 1.0, schedule="halving"))
    assert not g.vacuous
    # Hand computation of the halving bound: phases (4, 150), (2, 300) and (3, 150),
    # (2, 225); exploration 2100 rounds (as the uniform schedule's 300 * 7), then every
    # phase's error on the commit rounds: phase r of a stage of N candidates ranks estimates
    # pooled over P_r plays, with error 2 sqrt(ln N / 2 P_r) + 2 r H_N / P_r (epsilon 1).
    errs = sum(2 * math.sqrt(math.log(N) / (2 * P)) + 2 * r * sum(1 / i for i in range(1, N + 1))
               / P for N, r, P in ((4, 1, 150), (4, 2, 450), (3, 1, 150), (3, 2, 375)))
    assert g.bound == pytest.approx((1 - 1 / math.e) * 2100 + (50000 - 2100) * errs)
    learner = PrivateExploreThenCommit(N, 50000, K, epsilon=1.0, m=300, schedule="uniform")
    g = learner.guarantee
    assert g.bound == pytest.approx(etc_bound(50000, [4, 3], 300, 1.0))
    assert not g.vacuous
    # Hand computation: exploration 0.632 * 300 * 7, then (50000 - 2100) rounds of the two
    # stages' errors 2 sqrt(ln N / 600) + 2 H_N / 300.
    errs = sum(2 * math.sqrt(math.log(N_) / 600) + 2 * sum(1 / i for i in range(1, N_ + 1)) / 300
               for N_ in (4, 3))
    assert g.bound == pytest.approx((1 - 1 / math.e) * 2100 + 47900 * errs)


def test_knapsack_guarantee_is_vacuous_and_matroid_is_half():
    knap = Knapsack([0.5, 0.5, 1.0, 1.0], 1.0)
    g = PrivateExploreThenCommit(N, 1000, knap, epsilon=1.0).guarantee
    assert g.vacuous and math.isinf(g.bound)
    g = PrivateEpochGreedy(N, 1000, knap, epsilon=1.0).guarantee
    assert g.vacuous and math.isinf(g.bound)
    mat = PartitionMatroid([0, 0, 1, 1], [1, 1])
    assert PrivateEpochGreedy(N, 1000, mat, epsilon=1.0).guarantee.units.startswith("(1/2)")


@pytest.mark.parametrize("name", sorted(MAKERS))
def test_constraints_are_respected(name):
    mat = PartitionMatroid([0, 0, 1, 1], [1, 1])
    knap = Knapsack([0.5, 0.5, 1.0, 1.0], 1.0)
    cls = PrivateEpochGreedy if name == "PrivateEpochGreedy" else PrivateExploreThenCommit
    for c in (mat, knap):
        sets = _play(cls(N, 400, c, epsilon=1.0, rng=1), iid_stream(400))
        assert all(c.is_feasible(list(S)) for S in sets)
    # Under the partition matroid the best feasible set is {0, 2}.
    assert _play(cls(N, 2000, mat, epsilon=1.0, rng=1), iid_stream(2000))[-1] == (0, 2)


class _Misbehaving(SetFunction):
    """NaN on sets holding 0, 5 on sets holding 1, -3 elsewhere: outside any promise."""

    def _value(self, mask: np.ndarray) -> float:
        return math.nan if mask[0] else (5.0 if mask[1] else (-3.0 if mask.any() else 0.0))


def test_epoch_greedy_rule_for_bad_values():
    # A value outside [0, bound] is clipped into it and NaN counts as 0 (a data-independent
    # rule): the run goes on, and the selection treats {1}-holding sets as worth bound.
    learner = PrivateEpochGreedy(N, 200, 1, epsilon=1.0, rng=0)
    sets = _play(learner, [_Misbehaving(N)] * 200)
    assert len(sets) == 200 and sets[-1] == (1,)


@pytest.mark.parametrize("kw,match", [
    ({"epsilon": math.inf}, "epsilon"),
    ({"epsilon": 0.0}, "epsilon"),
    ({"epsilon": 1.0, "bound": 0.0}, "bound"),
    ({"epsilon": 1.0, "backend": 3}, "backend"),
])
@pytest.mark.parametrize("name", sorted(MAKERS))
def test_bad_parameters_are_refused(name, kw, match):
    cls = PrivateEpochGreedy if name == "PrivateEpochGreedy" else PrivateExploreThenCommit
    with pytest.raises(DPSubmodError, match=match):
        cls(N, 100, K, **kw)
    with pytest.raises(DPSubmodError, match="'k'"):
        cls(N, 100, 0, epsilon=1.0)


def test_learner_specific_bad_parameters():
    with pytest.raises(DPSubmodError, match="private method"):
        PrivateEpochGreedy(N, 100, K, epsilon=1.0, method="greedy")
    with pytest.raises(DPSubmodError, match="Unknown method"):
        PrivateEpochGreedy(N, 100, K, epsilon=1.0, method="nope")
    with pytest.raises(DPSubmodError, match="first_epoch"):
        PrivateEpochGreedy(N, 100, K, epsilon=1.0, first_epoch=0)
    with pytest.raises(DPSubmodError, match="'m'"):
        PrivateExploreThenCommit(N, 100, K, epsilon=1.0, m=0)
    with pytest.raises(DPSubmodError, match="'schedule'.*'halving'"):
        PrivateExploreThenCommit(N, 100, K, epsilon=1.0, schedule="doubling")
    # the decomposable greedy's analysis needs per-record terms, which an epoch mean does not
    # declare: refused at construction, not at the first selection
    with pytest.raises(DPSubmodError, match="'method'.*'monotone-records'.*'general'"):
        PrivateEpochGreedy(N, 100, K, epsilon=1.0, delta=1e-6,
                           method="private_greedy_decomposable")


def test_secure_backend_runs_under_the_same_statement():
    for cls in (PrivateEpochGreedy, PrivateExploreThenCommit):
        with pytest.warns(SeedWarning, match="does not make a run on the secure backend"):
            learner = cls(N, 60, K, epsilon=1.0, backend="secure", rng=0)
        _play(learner, iid_stream(60))
        assert learner.privacy.epsilon == 1.0 and learner.privacy.backend.startswith("secure")
        assert learner._allowance.unused == 0


def test_every_registered_learner_states_the_assumption_its_tags_declare():
    for name, spec in LEARNERS.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # rates clipped at a tiny horizon
            g = spec.factory(6, 50, 2, 1.0, 1e-6, 0).guarantee
        # a learner whose bound names its assumption itself must name the one it is tagged with
        assert g is None or g.assumption == spec.assumption, name
    assert LEARNERS["PrivateEpochGreedy"].assumption == "iid"
    assert LEARNERS["FIDP"].assumption == "oblivious"


# -- regret rate -------------------------------------------------------------------------------
HORIZONS = (2**8, 2**10, 2**12, 2**13)


def _pseudo_regret(sets) -> float:
    """Regret against the best fixed pair in expectation (brute force over the pairs): the
    i.i.d. regret the theorems bound, without the stream's own fluctuation."""
    value = {S: MEANS[list(S)].sum() / K for S in itertools.combinations(range(N), K)}
    best = max(value.values())
    return float(sum(best - MEANS[list(S)].sum() / K for S in sets))


def _slope(make, seed: int) -> float:
    regrets = []
    for T in HORIZONS:
        tr = run(make(T), FunctionStream(iid_stream(T, seed)), comparator=None, rng=seed)
        regrets.append(_pseudo_regret(tr.selections))
    return float(np.polyfit(np.log(HORIZONS), np.log(regrets), 1)[0])


@pytest.mark.slow
@pytest.mark.parametrize("name,rate", [("PrivateEpochGreedy", 0.5),
                                       ("PrivateExploreThenCommit", 2 / 3)])
def test_regret_grows_at_most_at_the_theorem_rate(name, rate):
    # Regret against the best fixed pair in expectation (exact, modular), three seeds. The
    # theorems' rates are upper rates: the epoch greedy's O(sqrt T) (sampling) + O(log T /
    # epsilon) (privacy), the explore-then-commit's O(T^(2/3)) exploration.
    slopes = [_slope(MAKERS[name], s) for s in range(3)]
    print(f"{name}: slopes {np.round(slopes, 3)} (theorem {rate:.3f})")
    assert float(np.mean(slopes)) <= rate + 0.1, slopes
    # A learner that never leaves its data-free first epoch pays linearly: the fit sees it.
    never = [_slope(lambda T: PrivateEpochGreedy(N, T, K, epsilon=1.0, first_epoch=T), s)
             for s in range(1)]
    assert never[0] >= 0.9, never
