"""BatchedPrivateBandit: the learner protocol, the budget, refusal of private and
full-information inner learners, the stated guarantee (oblivious adversary), and the exact law
of its played sets on tiny neighbouring streams.

Privacy check. With an inner learner whose choice is a deterministic function of the noisy
batch means (:class:`_Threshold`: batch 1 plays ``{0}``; every later batch plays ``{0}`` when the
previous feedback exceeds the middle of the range, else ``{1}``), the law of the batches' sets is
a product of Laplace tails: the shrink of :func:`inner_feedback` fixes the middle of the range,
so the inner feedback exceeds it exactly when the noisy mean does. The law is passed to
:func:`~dpsubmod.privacy.audit.exact_check` and validated against the learner's own runs
(chi-square, slow). The control halves the batch mean's sensitivity (half the noise).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpsubmod._rng import as_generator
from dpsubmod.errors import BudgetExceededError, DPSubmodError, ParameterTypeError, SeedWarning
from dpsubmod.experiments.problems import LEARNERS
from dpsubmod.functions import Modular
from dpsubmod.online import (
    BanditHazanKale,
    BanditOnlineGreedy,
    BatchedPrivateBandit,
    NaiveBanditDP,
    OnlineGreedy,
    run,
)
from dpsubmod.online.batched import inner_feedback, noise_margin
from dpsubmod.online.protocol import Learner
from dpsubmod.online.tags import LearnerTags
from dpsubmod.privacy import Budget
from dpsubmod.privacy.audit import exact_check
from oracles import law_pvalue

EPS = 1.0


class _Threshold(Learner):
    """Tiny non-private bandit learner on ``{0, 1}``: plays ``{0}`` first, then ``{0}`` when the
    last feedback exceeds 1/2, else ``{1}``."""

    _tags = LearnerTags(private=False, feedback="bandit", problem="maximization",
                        assumption="oblivious")
    sense = "max"

    def __init__(self, n: int, T: int, *, rng=None):
        self.n = n
        self.T = T
        self.rng = rng

    def _reset(self) -> None:
        super()._reset()
        self._choice = 0

    def _select(self) -> np.ndarray:
        mask = np.zeros(int(self.n), dtype=bool)
        mask[self._choice] = True
        return mask

    def _update(self, value: float) -> None:  # type: ignore[override]
        self._choice = 0 if value > 0.5 else 1


class _HalfNoise(BatchedPrivateBandit):
    """Control: declares half the batch mean's sensitivity (half the noise)."""

    def _batch_sensitivity(self, B: int) -> float:
        return 0.5 * super()._batch_sensitivity(B)


B_, T_ = 2, 6  # three batches of two rounds


def _tail(m: float, b: float) -> float:
    """P(m + Z > 1/2), Z ~ Laplace(b)."""
    z = 0.5 - m
    return 0.5 * math.exp(-z / b) if z >= 0 else 1.0 - 0.5 * math.exp(z / b)


def _law(stream, scale: float = 1.0) -> dict:
    """Exact law of the three batches' sets (as indices 0 / 1)."""
    b = scale * (1.0 / B_) / EPS
    law: dict = {}

    def walk(j: int, choice: int, path: tuple, p: float) -> None:
        if j == T_ // B_:
            law[path] = law.get(path, 0.0) + p
            return
        rounds = stream[j * B_:(j + 1) * B_]
        m = float(np.mean([min(max(f([choice]), 0.0), 1.0) for f in rounds]))
        up = _tail(m, b)
        walk(j + 1, 0, (*path, choice), p * up)
        walk(j + 1, 1, (*path, choice), p * (1.0 - up))

    walk(0, 0, (), 1.0)
    # The next batch's choice after the last one is never played.
    out: dict = {}
    for path, p in law.items():
        out[path] = out.get(path, 0.0) + p
    return out


def _play(cls, stream, rng) -> tuple:
    learner = cls(_Threshold(2, T_), epsilon=EPS, batch=B_, rng=rng)
    played = []
    for f in stream:
        S = learner.select()
        played.append(S[0])
        learner.update(f(S))
    assert all(played[j * B_] == played[j * B_ + 1] for j in range(T_ // B_))
    return tuple(played[::B_])


_FILL = [Modular([0.3, 0.6])] * (T_ - 1)
D = [Modular([1.0, 0.0]), *_FILL]
D_PRIME = [Modular([0.0, 1.0]), *_FILL]


def test_exact_law_is_epsilon_dp():
    laws = {id(d): _law(d) for d in (D, D_PRIME)}
    assert sum(laws[id(D)].values()) == pytest.approx(1.0, abs=1e-12)
    res = exact_check(lambda d: laws[id(d)], D, D_PRIME, epsilon=EPS)
    # One Laplace tail moves by the mean's change 1/2 over the scale 1/2: log ratio 0.93.
    assert res.passed and max(res.max_log_ratio, res.max_log_ratio_reverse) > 0.9


def test_exact_law_with_a_later_batch_round_replaced():
    # Round 2 opens batch 2, whose set depends on batch 1's release.
    Dl = [*_FILL[:2], Modular([1.0, 1.0]), *_FILL[2:]]
    Dl_prime = [*_FILL[:2], Modular([0.0, 0.0]), *_FILL[2:]]
    assert exact_check(lambda d: _law(d), Dl, Dl_prime, epsilon=EPS).passed
    assert not exact_check(lambda d: _law(d, 0.5), Dl, Dl_prime, epsilon=EPS).passed


def test_half_noise_is_caught():
    res = exact_check(lambda d: _law(d, 0.5), D, D_PRIME, epsilon=EPS)
    assert not res.passed and max(res.max_log_ratio, res.max_log_ratio_reverse) > 1.5


@pytest.mark.slow
@pytest.mark.parametrize("cls,scale", [(BatchedPrivateBandit, 1.0), (_HalfNoise, 0.5)])
def test_oracle_matches_the_learner(cls, scale):
    # 3000 runs of the learner itself against the exact law; chi-square, small cells pooled;
    # fixed seeds, false-alarm rate 1e-4 per case.
    assert law_pvalue(_law(D, scale), lambda g: _play(cls, D, g), seed=5, runs=3000) > 1e-4


def test_inner_feedback_fixes_the_middle_and_maps_the_margin_onto_the_range():
    assert inner_feedback(0.5, 0.0, 1.0, 0.3) == 0.5
    assert inner_feedback(-0.3, 0.0, 1.0, 0.3) == pytest.approx(0.0)
    assert inner_feedback(1.3, 0.0, 1.0, 0.3) == pytest.approx(1.0)
    assert inner_feedback(9.0, -1.0, 1.0, 0.0) == 1.0
    assert noise_margin(1.0, 10, 100, 1.0) == pytest.approx(0.2 * math.log(100))


# -- protocol, budget, refusals ---------------------------------------------------------------
def _stream(T: int, seed: int = 0) -> list[Modular]:
    rng = np.random.default_rng(seed)
    means = np.array([0.05, 0.5, 0.4, 0.05])
    return [Modular((rng.random(4) < means) * 0.5) for _ in range(T)]


def _run(learner, stream) -> list[tuple[int, ...]]:
    out = []
    for f in stream:
        S = learner.select()
        out.append(S)
        learner.update(f(S))
    return out


def _make(T: int = 1000, **kw) -> BatchedPrivateBandit:
    kw.setdefault("batch", 10)
    return BatchedPrivateBandit(BanditOnlineGreedy(4, T, 2, gamma=0.2), epsilon=1.0, **kw)


def test_protocol_replay_clone_reset_and_batches():
    stream = _stream(1005)
    learner = _make(1005, rng=3)
    sets = _run(learner, stream)
    p = learner.resolved_params
    assert p["batch"] == 10 and p["batches"] == 100 and p["tail_rounds"] == 5
    # A batch plays one set; the tail replays the last batch's.
    assert all(len(set(sets[j:j + 10])) == 1 for j in range(0, 1000, 10))
    assert set(sets[995:]) == {sets[999]}
    assert _run(learner.reset(), stream) == sets
    assert _run(learner.clone(), stream) == sets
    assert _run(learner.clone(rng=4), stream) != sets
    # The template is never played.
    assert learner.learner.t == 0 and learner.learner.T == 1005
    with pytest.raises(DPSubmodError, match="built for T=1005"):
        learner.select()


def test_whole_run_charged_at_construction():
    budget = Budget(epsilon=1.5)
    learner = _make(200, rng=0, budget=budget)
    assert budget.spent[0] == pytest.approx(1.0)
    assert learner.privacy.epsilon == 1.0 and learner.privacy.delta == 0.0
    assert "parallel composition" in str(learner.privacy)
    assert learner.plan.events[0].count == 20
    with pytest.raises(BudgetExceededError):
        _make(200, rng=0, budget=budget)
    assert budget.spent[0] == pytest.approx(1.0)
    _run(learner, _stream(200))
    assert learner._allowance.unused == 0


def test_small_noise_replays_the_inner_learner_on_the_batch_means():
    # epsilon large: the batched run is the inner learner's own run (same seed) on the exact
    # batch means, up to noise of scale 5e-6.
    stream = _stream(4000)
    learner = BatchedPrivateBandit(BanditOnlineGreedy(4, 4000, 2, gamma=0.2), epsilon=1e4,
                                   batch=20, rng=0)
    sets = _run(learner, stream)
    inner = BanditOnlineGreedy(4, 200, 2, gamma=0.2,
                               rng=as_generator(0).spawn(2)[0])
    direct = []
    for j in range(200):
        S = inner.select()
        direct.append(S)
        inner.update(float(np.mean([f(S) for f in stream[20 * j:20 * (j + 1)]])))
    assert sets[::20] == direct


def test_refuses_private_and_full_information_inner_learners():
    with pytest.raises(DPSubmodError, match="private.*BanditOnlineGreedy instead"):
        BatchedPrivateBandit(NaiveBanditDP(4, 100, 2, epsilon=1.0, delta=1e-6), epsilon=1.0)
    with pytest.raises(DPSubmodError, match="full-information learner"):
        BatchedPrivateBandit(OnlineGreedy(4, 100, 2), epsilon=1.0)
    with pytest.raises(ParameterTypeError, match="'learner'"):
        BatchedPrivateBandit("BanditOnlineGreedy", epsilon=1.0)
    for bad in ({"epsilon": math.inf}, {"epsilon": 0.0}, {"epsilon": 1.0, "batch": 0},
                {"epsilon": 1.0, "batch": 101}):
        with pytest.raises(DPSubmodError):
            BatchedPrivateBandit(BanditOnlineGreedy(4, 100, 2, gamma=0.2), **bad)


def test_guarantee_names_the_oblivious_adversary_and_the_inner_bound():
    learner = BatchedPrivateBandit(BanditHazanKale(4, 20000, M=1.0), epsilon=1.0, batch=50)
    g = learner.guarantee
    assert g.assumption == "oblivious" == type(learner).assumption
    assert learner.sense == "min" and g.units.startswith("regret of costs")
    inner = BanditHazanKale(4, 400, M=1.0).guarantee.bound
    assert g.bound == pytest.approx(50 * (1 + 4 * math.log(400) / 50) * inner + 2 * 2 * 50)
    assert g.vacuous == (not g.bound < g.trivial)


def test_minimization_inner_learner_plays_costs():
    stream = [Modular([0.5, -0.5, 0.2])] * 600
    tr = run(BatchedPrivateBandit(BanditHazanKale(3, 600, M=1.0), epsilon=1.0, batch=6, rng=0),
             stream, comparator=None, progress=False)
    assert len(tr.selections) == 600


def test_registered_with_its_assumption():
    spec = LEARNERS["BatchedPrivateBandit"]
    assert spec.assumption == "oblivious" and spec.private and spec.sense == "max"
    learner = spec.factory(6, 300, 2, 1.0, 0.0, 0)
    assert isinstance(learner, BatchedPrivateBandit) and learner.privacy.epsilon == 1.0


def test_default_batch_comes_from_public_parameters():
    a = BatchedPrivateBandit(BanditOnlineGreedy(12, 20000, 3), epsilon=1.0)
    b = BatchedPrivateBandit(BanditOnlineGreedy(12, 20000, 3), epsilon=0.5)
    assert 1 <= a.resolved_params["batch"] <= 20000
    assert b.resolved_params["batch"] >= a.resolved_params["batch"]



def test_secure_backend_draws_the_planned_noise():
    with pytest.warns(SeedWarning, match="does not make a run on the secure backend repeat"):
        learner = _make(200, rng=0, backend="secure")
    _run(learner, _stream(200))
    assert "secure" in str(learner.privacy) and learner._allowance.unused == 0
