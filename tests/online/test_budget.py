"""Every private online learner against the user's budget: the whole run is charged once, at
construction and before anything is released; ``privacy`` states that run before round 1; a
budget too small refuses the learner and changes nothing; ``run`` plays a budgeted learner
itself; a reset after play, and a clone, are new releases charged again."""

from __future__ import annotations

import copy
import math
import warnings

import numpy as np
import pytest

from dpsubmod.errors import BudgetExceededError, ValidationError
from dpsubmod.functions import Modular
from dpsubmod.online import (
    FIDP,
    PFTAL,
    BanditDP,
    BanditSubmodPFTAL,
    DPMetaFrankWolfe,
    FunctionStream,
    Hedge,
    NaiveBanditDP,
    PFTALMetaFrankWolfe,
    PresampledBanditDP,
    PrivateBandit,
    PrivateFTRL,
    PrivateTreeExperts,
    SubmodPFTAL,
    linear_losses,
    run,
    run_convex,
)
from dpsubmod.polytopes import Box
from dpsubmod.privacy import Budget, PrivacyEvent
from dpsubmod.privacy.plan import PlanExceededError

N, T = 4, 8


def _max_stream(seed: int = 0) -> list[Modular]:
    rng = np.random.default_rng(seed)
    return [Modular(rng.random(N) / N) for _ in range(T)]


def _min_stream(seed: int = 0) -> list[Modular]:
    rng = np.random.default_rng(seed)
    return [Modular(rng.uniform(-1, 1, N) / N) for _ in range(T)]


def _play_sets(learner, stream) -> None:
    for f in stream:
        S = learner.select()
        learner.update(f if learner.feedback == "full" else f(S))


def _play_pftal(oco) -> None:
    for _ in range(T):
        oco.update(oco.point() - 0.5)


def _play_hedge(h) -> None:
    for _ in range(T):
        h.update(np.full((2, N), 0.5))
        h.sample()


def _play_ftrl(ftrl) -> None:
    for _ in range(T):
        ftrl.predict()
        ftrl.update(-np.ones((2, N)) / 2)


def _play_bandit(pb) -> None:
    for _ in range(T):
        pb.update(float(np.sum(pb.select())))


def _box():
    return Box(-1.0, 1.0, dim=2)


# name -> (factory(budget, rng) -> learner, play(learner))
LEARNERS = {
    "PFTAL": (lambda b, r: PFTAL(N, T, H=1.0, epsilon=0.8, lipschitz=1.0, budget=b, rng=r),
              _play_pftal),
    "Hedge": (lambda b, r: Hedge(N, 0.05, copies=2, max_draws=T, delta=1e-6, budget=b, rng=r),
              _play_hedge),
    "FIDP": (lambda b, r: FIDP(N, T, 2, epsilon=1.0, delta=1e-6, budget=b, rng=r),
             lambda L: _play_sets(L, _max_stream())),
    "PrivateTreeExperts": (lambda b, r: PrivateTreeExperts(N, T, 2, epsilon=1.0, delta=1e-6,
                                                          budget=b, rng=r),
                           lambda L: _play_sets(L, _max_stream())),
    "BanditDP": (lambda b, r: BanditDP(N, T, 2, epsilon=1.0, delta=1e-6, gamma=0.3, budget=b,
                                       rng=r), lambda L: _play_sets(L, _max_stream())),
    "BanditDP-cap": (lambda b, r: BanditDP(N, T, 2, epsilon=1.0, delta=1e-6, gamma=0.3,
                                           cap=True, budget=b, rng=r),
                     lambda L: _play_sets(L, _max_stream())),
    "NaiveBanditDP": (lambda b, r: NaiveBanditDP(N, T, 2, epsilon=1.0, delta=1e-6, gamma=0.3,
                                                 budget=b, rng=r),
                      lambda L: _play_sets(L, _max_stream())),
    "PresampledBanditDP": (lambda b, r: PresampledBanditDP(N, T, 2, epsilon=1.0, delta=1e-6,
                                                           gamma=0.3, budget=b, rng=r),
                           lambda L: _play_sets(L, _max_stream())),
    "SubmodPFTAL": (lambda b, r: SubmodPFTAL(N, T, M=1.0, epsilon=0.7, budget=b, rng=r),
                    lambda L: _play_sets(L, _min_stream())),
    "BanditSubmodPFTAL": (lambda b, r: BanditSubmodPFTAL(N, T, M=1.0, epsilon=0.7, gamma=0.5,
                                                         budget=b, rng=r),
                          lambda L: _play_sets(L, _min_stream())),
    "PrivateFTRL": (lambda b, r: PrivateFTRL(2, T, n=N, copies=2, epsilon=0.9, delta=1e-6,
                                             loss_range=(-1.0, 0.0), budget=b, rng=r),
                    _play_ftrl),
    "PrivateFTRL-gaussian": (lambda b, r: PrivateFTRL(2, T, n=N, copies=2, epsilon=0.9,
                                                      delta=1e-6, noise="gaussian",
                                                      loss_range=(-1.0, 0.0), budget=b, rng=r),
                             _play_ftrl),
    "DPMetaFrankWolfe": (lambda b, r: DPMetaFrankWolfe(N, T, 2, epsilon=1.0, K=2, budget=b,
                                                       rng=r),
                         lambda L: _play_sets(L, _max_stream())),
    "DPMetaFrankWolfe-gaussian": (lambda b, r: DPMetaFrankWolfe(N, T, 2, epsilon=1.0,
                                                                delta=1e-6, K=2,
                                                                noise="gaussian", budget=b,
                                                                rng=r),
                                  lambda L: _play_sets(L, _max_stream())),
    "PFTALMetaFrankWolfe": (lambda b, r: PFTALMetaFrankWolfe(N, T, 2, epsilon=1.2, K=3,
                                                             budget=b, rng=r),
                            lambda L: _play_sets(L, _max_stream())),
    "PrivateBandit": (lambda b, r: PrivateBandit(_box(), T, epsilon=0.6, mode="extend",
                                                 budget=b, rng=r), _play_bandit),
    "PrivateBandit-gaussian": (lambda b, r: PrivateBandit(_box(), T, epsilon=0.6, delta=1e-6,
                                                          noise="gaussian", mode="extend",
                                                          budget=b, rng=r), _play_bandit),
}
NAMES = list(LEARNERS)


def _make(name: str, budget=None, rng=3):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # zeta clipped at small horizons
        return LEARNERS[name][0](budget, rng)


def _big() -> Budget:
    # delta room for BanditDP's failure term (about 0.058 at T = 8, gamma = 0.3)
    return Budget(100.0, 0.5)


# ---------------------------------------------------------------------------------------------
# (a) the whole run, charged at construction and stated before round 1
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", NAMES)
def test_charged_the_whole_run_at_construction(name):
    b = _big()
    L = _make(name, b)
    rep = L.privacy
    assert rep is not None and rep.epsilon > 0
    # one event, the run's guarantee, under the learner's name, before anything is released
    assert len(b.events) == 1
    ev = b.events[0]
    assert ev.mechanism == type(L).__name__
    assert (ev.epsilon, ev.delta) == (rep.epsilon, rep.delta)
    # the same statement without a budget: it depends on the public parameters only
    assert _make(name).privacy == rep
    LEARNERS[name][1](L)
    # playing the whole run charges nothing more and does not change the statement
    assert len(b.events) == 1 and L.privacy == rep


def test_statements_before_round_one_meet_the_requested_budget():
    for name in NAMES:
        L = _make(name)
        if isinstance(L, Hedge):
            continue  # Hedge states what its rate spends; it has no requested epsilon
        assert L.privacy.epsilon <= float(L.epsilon) * (1 + 1e-9), name


# ---------------------------------------------------------------------------------------------
# (b) a budget too small refuses the learner and changes nothing
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", NAMES)
def test_too_small_a_budget_refuses_at_construction_and_changes_nothing(name):
    need = _make(name).privacy
    b = Budget(need.epsilon, 0.5)
    b.charge(PrivacyEvent.pure("earlier_release", 0.5 * need.epsilon))
    events = b.events
    gen = np.random.default_rng(2024)
    state = copy.deepcopy(gen.bit_generator.state)
    spawned = gen.bit_generator.seed_seq.n_children_spawned
    with pytest.raises(BudgetExceededError):
        _make(name, b, gen)
    assert b.events == events
    assert gen.bit_generator.state == state
    assert gen.bit_generator.seed_seq.n_children_spawned == spawned


# ---------------------------------------------------------------------------------------------
# (c) calibrations that would spend more than epsilon: refused, naming the parameter
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("make, parameter", [
    (lambda: BanditDP(4, 31, 4, epsilon=0.5, delta=1e-6, gamma=0.5, eta=0.1), "eta"),
    (lambda: FIDP(2, 100, 1, epsilon=100, delta=0.5, calibration="paper"), "calibration"),
    (lambda: NaiveBanditDP(4, 20, 2, epsilon=0.5, delta=1e-6, gamma=0.3, eta=0.5), "eta"),
    (lambda: PresampledBanditDP(4, 20, 2, epsilon=0.5, delta=1e-6, gamma=0.3, eta=0.5), "eta"),
    (lambda: SubmodPFTAL(3, 5, M=1.0, epsilon=1.0, H=0.01, calibration="paper"), "calibration"),
    (lambda: BanditSubmodPFTAL(3, 5, M=1.0, epsilon=1.0, gamma=0.5, calibration="paper"),
     "calibration"),
    (lambda: PrivateFTRL(2, 10, n=3, copies=3, epsilon=1.0, tree_epsilon=0.5), "tree_epsilon"),
])
def test_overspending_calibrations_are_refused_before_any_charge(make, parameter):
    b = Budget(1000.0, 0.9)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.raises(ValidationError, match=f"'{parameter}'") as exc:
            make()
    assert exc.value.parameter == parameter
    assert exc.value.epsilon_spent > exc.value.epsilon_requested
    assert b.events == ()


# ---------------------------------------------------------------------------------------------
# noise off: no statement, and a budget is an error
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("make", [
    lambda b: PFTAL(2, 5, H=1.0, epsilon=math.inf, budget=b),
    lambda b: FIDP(N, T, 2, epsilon=math.inf, budget=b),
    lambda b: SubmodPFTAL(N, T, M=1.0, epsilon=math.inf, budget=b),
    lambda b: PrivateFTRL(2, T, n=N, epsilon=math.inf, budget=b),
    lambda b: DPMetaFrankWolfe(N, T, 2, epsilon=math.inf, budget=b),
    lambda b: PFTALMetaFrankWolfe(N, T, 2, epsilon=math.inf, budget=b),
    lambda b: PrivateBandit(_box(), T, epsilon=math.inf, mode="extend", budget=b),
    lambda b: Hedge(N, 0.1, budget=b),
])
def test_noise_off_states_nothing_and_refuses_a_budget(make):
    assert make(None).privacy is None
    b = _big()
    with pytest.raises(ValidationError, match="budget"):
        make(b)
    assert b.events == ()


# ---------------------------------------------------------------------------------------------
# (d) run() and run_convex() play a budgeted learner themselves
# ---------------------------------------------------------------------------------------------
SET_LEARNERS = ["FIDP", "BanditDP", "PresampledBanditDP", "SubmodPFTAL", "BanditSubmodPFTAL",
                "DPMetaFrankWolfe", "PFTALMetaFrankWolfe"]


@pytest.mark.parametrize("name", SET_LEARNERS)
def test_run_plays_a_budgeted_learner_without_charging_twice(name):
    b = _big()
    L = _make(name, b)
    stream = FunctionStream(_min_stream() if L.sense == "min" else _max_stream())
    tr = run(L, stream, comparator=None)
    assert len(b.events) == 1  # charged at construction only
    assert L.t == T  # the learner itself was played, not a clone
    assert tr.privacy == L.privacy and np.all(tr.epsilon == L.privacy.epsilon)
    # an unbudgeted learner with the same seed plays the same sets (run clones it)
    assert run(_make(name), stream, comparator=None).selections == tr.selections


@pytest.mark.parametrize("name", SET_LEARNERS)
def test_run_refuses_an_rng_for_a_budgeted_learner(name):
    b = _big()
    L = _make(name, b)
    with pytest.raises(ValidationError, match="Build the learner with the rng"):
        run(L, _max_stream(), rng=0)
    assert len(b.events) == 1 and L.t == 0


def test_run_convex_plays_a_budgeted_learner_without_charging_twice():
    b = _big()
    pb = _make("PrivateBandit", b)
    losses = linear_losses(2, T, rng=0)
    tr = run_convex(pb, losses)
    assert len(b.events) == 1 and pb.t == T
    assert tr.privacy == pb.privacy
    with pytest.raises(ValidationError, match="Build the learner with the rng"):
        run_convex(pb, losses, rng=1)
    assert len(b.events) == 1
    # a second run of the same object is a new release: its reset charges it
    run_convex(pb, losses)
    assert len(b.events) == 2


def test_a_second_run_of_a_budgeted_learner_is_charged_again():
    b = _big()
    L = _make("FIDP", b)
    first = run(L, _max_stream(), comparator=None)
    second = run(L, _max_stream(), comparator=None)
    assert len(b.events) == 2 and b.events[0] == b.events[1]
    assert first.selections == second.selections  # the integer seed replays the run


# ---------------------------------------------------------------------------------------------
# (e) reset after play and clones are new releases
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", NAMES)
def test_reset_after_play_charges_again(name):
    b = _big()
    L = _make(name, b)
    L.reset()  # nothing released yet: the same run, no new charge
    assert len(b.events) == 1
    play = LEARNERS[name][1]
    play(L)
    L.reset()
    assert len(b.events) == 2 and b.events[1] == b.events[0]
    play(L)  # the new run draws through its own allowance
    assert len(b.events) == 2


@pytest.mark.parametrize("name", ["FIDP", "SubmodPFTAL", "PrivateFTRL", "DPMetaFrankWolfe",
                                  "PrivateBandit"])
def test_reset_refused_by_the_budget_changes_nothing(name):
    need = _make(name).privacy
    b = Budget(1.5 * need.epsilon, 0.5)
    L = _make(name, b)
    play = LEARNERS[name][1]
    play(L)
    events = b.events
    with pytest.raises(BudgetExceededError):
        L.reset()
    assert b.events == events


@pytest.mark.parametrize("name", NAMES)
def test_a_clone_is_a_new_release(name):
    b = _big()
    L = _make(name, b)
    c = L.clone()
    assert c.budget is b and len(b.events) == 2
    assert c.privacy == L.privacy


# ---------------------------------------------------------------------------------------------
# the plan is enforced: a use beyond it fails before anything is drawn
# ---------------------------------------------------------------------------------------------
def test_a_draw_beyond_the_plan_fails_before_drawing():
    L = _make("FIDP", _big())
    _play_sets(L, _max_stream())
    state = copy.deepcopy(L._hedge._gen.bit_generator.state)
    with pytest.raises(PlanExceededError):
        L._draw()  # a T + 1-th data-dependent draw of every expert
    assert L._hedge._gen.bit_generator.state == state


def test_hedge_refuses_draws_beyond_its_horizon():
    h = _make("Hedge")
    _play_hedge(h)
    h.update(np.zeros((2, N)))
    with pytest.raises(ValidationError, match="max_draws"):
        h.sample()
    # draws before any gain are uniform, data-independent and free
    fresh = Hedge(N, 0.05, copies=2, max_draws=1, delta=1e-6, rng=0)
    for _ in range(5):
        fresh.sample()
    fresh.update(np.ones((2, N)))
    fresh.sample()
