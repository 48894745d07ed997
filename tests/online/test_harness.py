"""The run harness: regret against a brute-force comparator, records, seeding, errors."""

from __future__ import annotations

import io
import math
import sys
import tracemalloc

import numpy as np
import pytest

from dpsubmod.errors import (
    GroundSetMismatchError,
    ParameterTypeError,
    StreamLengthError,
    ValidationError,
)
from dpsubmod.functions import FeatureBased, Modular
from dpsubmod.online import (
    BanditHazanKale,
    BanditSubmodPFTAL,
    FunctionStream,
    HazanKale,
    IIDStream,
    Learner,
    SubmodPFTAL,
    run,
    stochastic_stream,
)
from dpsubmod.online.tags import LearnerTags
from oracles import all_values, random_concave_minus_modular, random_cut_plus_modular

N, T = 4, 30


def _stream(seed=0):
    rng = np.random.default_rng(seed)
    fs = [random_cut_plus_modular(N, rng) if t % 3 else random_concave_minus_modular(N, rng)
          for t in range(T)]
    return FunctionStream(fs)


LEARNERS = [
    SubmodPFTAL(N, T, M=10.0, epsilon=2.0, rng=1),
    BanditSubmodPFTAL(N, T, M=10.0, epsilon=math.inf, gamma=0.4, rng=1),
    HazanKale(N, T, M=10.0, rng=1),
    BanditHazanKale(N, T, M=10.0, rng=1),
]


@pytest.mark.parametrize("learner", LEARNERS, ids=lambda lr: type(lr).__name__)
def test_regret_against_brute_force(learner):
    stream = _stream()
    tr = run(learner, stream, rng=3, progress=False)
    fs = list(stream)
    # Brute force: the value of every set summed over the stream.
    tables = np.array([all_values(f)[1] for f in fs])
    masks = all_values(fs[0])[0]
    best = int(np.argmin(tables.sum(axis=0)))
    played = [int(np.flatnonzero((masks == np.isin(np.arange(N), S)).all(axis=1))[0])
              for S in tr.selections]
    losses = tables[np.arange(T), played]
    np.testing.assert_allclose(tr.values, losses, atol=1e-12)
    assert tr.comparator.exact and tr.comparator.value == pytest.approx(tables.sum(0)[best])
    np.testing.assert_allclose(tr.comparator_values, tables[:, best], atol=1e-12)
    np.testing.assert_allclose(tr.regret, np.cumsum(losses - tables[:, best]), atol=1e-9)
    assert tr.final_regret == pytest.approx(losses.sum() - tables.sum(0).min())
    # Expected values: Lovasz value (full information) or the exploration average (bandit).
    assert tr.expected_values is not None and np.isfinite(tr.expected_regret).all()
    # Oracle work: one observation per round, plus n + 1 chain values for full information.
    per_round = 1 + (N + 1 if learner.feedback == "full" else 0)
    assert tr.evaluations == per_round * T
    assert tr.T == T and tr.n == N and len(tr.selections) == T
    assert np.all(np.diff(tr.elapsed) >= 0) and tr.wall_time >= tr.elapsed[-1]


def test_privacy_and_records():
    tr = run(SubmodPFTAL(N, T, M=10.0, epsilon=0.5), _stream(), rng=0)
    assert tr.epsilon[-1] == 0.5 and tr.privacy.epsilon == pytest.approx(0.5)
    recs = tr.records()
    assert len(recs) == T and recs[0]["round"] == 1 and recs[-1]["regret"] == tr.final_regret
    assert set(recs[0]) == {"round", "learner", "selection", "value", "expected_value",
                            "comparator_value", "regret", "expected_regret", "epsilon", "elapsed"}
    off = run(SubmodPFTAL(N, T, M=10.0, epsilon=math.inf), _stream(), rng=0)
    assert off.privacy is None and np.all(off.epsilon == math.inf)
    assert "SubmodPFTAL" in repr(off) and off.params["H"] == pytest.approx(10 / math.sqrt(N * T))


@pytest.mark.parametrize("learner", LEARNERS, ids=lambda lr: type(lr).__name__)
def test_same_seed_same_trace_and_caller_untouched(learner):
    s = stochastic_stream(N, T, rng=None)
    a = run(learner, s, rng=11)
    b = run(learner, s, rng=11)
    assert a.selections == b.selections
    np.testing.assert_array_equal(a.values, b.values)
    np.testing.assert_array_equal(a.regret, b.regret)
    assert learner.t == 0  # the caller's learner was cloned, not advanced
    fast = learner.clone(M=1.0)  # the stream's bound, so the iterate moves
    others = {run(fast, s, rng=seed).selections for seed in range(5)}
    assert len(others) > 1
    # Without a run seed, the learner's and the stream's own seeds are used.
    s2 = stochastic_stream(N, T, rng=4)
    assert run(learner, s2).selections == run(learner, s2).selections


def test_comparator_options():
    stream = _stream(1)
    auto = run(HazanKale(N, T, M=10.0, rng=0), stream)
    given = run(HazanKale(N, T, M=10.0, rng=0), stream, comparator=auto.comparator)
    np.testing.assert_allclose(given.regret, auto.regret)
    as_set = run(HazanKale(N, T, M=10.0, rng=0), stream,
                 comparator=list(auto.comparator.selection))
    np.testing.assert_allclose(as_set.regret, auto.regret)
    assert as_set.comparator.method == "given"
    called = run(HazanKale(N, T, M=10.0, rng=0), stream, comparator=lambda fs: ())
    # Any fixed set is at most as good as the best one, so the regret against it is smaller.
    assert called.comparator.selection == () and called.final_regret <= auto.final_regret + 1e-9
    mnp = run(HazanKale(N, T, M=10.0, rng=0), stream, comparator="min-norm-point")
    assert mnp.final_regret == pytest.approx(auto.final_regret, abs=1e-7)
    none = run(HazanKale(N, T, M=10.0, rng=0), stream, comparator=None)
    assert none.regret is None and math.isnan(none.final_regret)
    with pytest.raises(ParameterTypeError, match="comparator"):
        run(HazanKale(N, T, M=10.0), stream, comparator=3.5)


class _FirstElement(Learner):
    """A maximization learner that always plays {0} (to test the maximization path)."""

    _tags = LearnerTags(private=False, feedback="full", problem="maximization",
                        assumption="oblivious")
    sense = "max"

    def __init__(self, n, T, *, k=1, rng=None):
        self.n, self.T, self.k, self.rng = n, T, k, rng

    def _select(self):
        m = np.zeros(self.n, dtype=bool)
        m[0] = True
        return m

    def _update(self, f):
        pass


def test_maximization_regret_uses_alpha_and_the_constraint():
    rng = np.random.default_rng(0)
    fs = [FeatureBased(rng.random((4, 3))) for _ in range(10)]
    tr = run(_FirstElement(4, 10, k=2), fs)
    best = tr.comparator
    assert best.sense == "max" and len(best.selection) <= 2
    alpha = 1 - 1 / math.e
    expected = alpha * best.value - sum(f([0]) for f in fs)
    assert tr.alpha == pytest.approx(alpha) and tr.final_regret == pytest.approx(expected)
    assert tr.expected_values is None  # the learner reports no expectation
    tr1 = run(_FirstElement(4, 10, k=2), fs, alpha=1.0)
    assert tr1.final_regret == pytest.approx(best.value - sum(f([0]) for f in fs))


def test_run_errors_before_playing():
    stream = _stream()
    with pytest.raises(ParameterTypeError, match="Learner"):
        run(object(), stream)
    with pytest.raises(GroundSetMismatchError, match="n=4"):
        run(HazanKale(3, T, M=1.0), stream)
    with pytest.raises(StreamLengthError, match=f"T={T}"):
        run(HazanKale(N, T - 1, M=1.0), stream)
    with pytest.raises(ParameterTypeError, match="Stream"):
        run(HazanKale(N, T, M=1.0), Modular([1.0] * N))
    # A shorter stream than the horizon is fine.
    assert run(HazanKale(N, 2 * T, M=10.0), stream).T == T


def test_progress_output(capsys, monkeypatch):
    # a bar on a terminal, silence in a log (tqdm's disable=None), the same trace either way
    quiet = run(HazanKale(N, T, M=10.0, rng=3), _stream(), progress=True)
    assert capsys.readouterr().err == ""

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    err = Terminal()
    monkeypatch.setattr(sys, "stderr", err)
    shown = run(HazanKale(N, T, M=10.0, rng=3), _stream(), progress=True)
    assert "HazanKale" in err.getvalue()
    assert shown.selections == quiet.selections
    np.testing.assert_array_equal(shown.values, quiet.values)


@pytest.mark.parametrize("bad", ["yes", 1, 0.0, [True]])
def test_progress_is_refused_by_name(bad):
    with pytest.raises(ParameterTypeError, match="'progress' parameter of run"):
        run(HazanKale(N, T, M=10.0), _stream(), progress=bad)


# -- streaming: nothing read ahead, nothing kept ------------------------------------------------

def _endless(n, seed=0):
    """Fresh modular functions forever (each round a new object, as from a data feed)."""
    rng = np.random.default_rng(seed)
    while True:
        yield Modular(rng.uniform(-1.0, 1.0, n) / n)


def test_an_endless_generator_is_stopped_at_round_T_plus_one():
    read = []

    def feed():
        for f in _endless(N):
            read.append(1)
            yield f

    with pytest.raises(StreamLengthError, match=f"T={T}.*round {T + 1}"):
        run(HazanKale(N, T, M=1.0, rng=0), feed(), comparator=None)
    # The first function (for n) and the T + 1 rounds: nothing more was read.
    assert len(read) == T + 1


def test_a_finite_generator_plays_like_the_list_of_its_functions():
    fs = list(_stream(2))
    from_list = run(HazanKale(N, T, M=10.0, rng=0), fs, comparator=None)
    from_gen = run(HazanKale(N, T, M=10.0, rng=0), iter(fs), comparator=None)
    assert from_gen.selections == from_list.selections
    np.testing.assert_array_equal(from_gen.values, from_list.values)
    # With a comparator the one-shot stream's functions are kept, up to HISTORY_LIMIT rounds.
    a = run(HazanKale(N, T, M=10.0, rng=0), iter(fs))
    b = run(HazanKale(N, T, M=10.0, rng=0), fs)
    np.testing.assert_allclose(a.regret, b.regret, atol=1e-12)


def test_a_one_shot_stream_that_would_have_to_be_kept_is_refused_before_round_1(monkeypatch):
    from dpsubmod.online import harness

    monkeypatch.setattr(harness, "HISTORY_LIMIT", T - 1)
    learner = HazanKale(N, T, M=10.0, rng=0)
    with pytest.raises(ValidationError, match="HISTORY_LIMIT"):
        run(learner, iter(list(_stream())))
    # A re-iterable stream is read twice instead, and needs no history.
    assert run(learner, _stream()).T == T


def test_regret_from_the_compact_sum_and_a_second_pass_equals_the_brute_force():
    # An i.i.d. stream of fresh cut-plus-modular functions: the comparator folds them into one
    # cut and one modular vector and reads the stream a second time for f_t(S*).
    rng = np.random.default_rng(4)
    fs = [random_cut_plus_modular(N, rng) for _ in range(T)]
    stream = IIDStream(lambda g: fs[int(g.integers(T))], n=N, T=T, rng=9)
    tr = run(HazanKale(N, T, M=10.0, rng=0), stream)
    played = list(stream.iterate(rng=9))
    tables = np.array([all_values(f)[1] for f in played])
    best = int(np.argmin(tables.sum(axis=0)))
    np.testing.assert_allclose(tr.comparator_values, tables[:, best], atol=1e-12)
    assert tr.comparator.value == pytest.approx(tables.sum(0)[best])


def _peak_bytes(fn):
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.slow
def test_memory_does_not_grow_with_the_functions_of_a_long_run():
    # 30,000 rounds of fresh functions (about 300 bytes each): keeping them takes 9 MB. The
    # trace keeps five numbers and a byte of packed selection per round; the comparator keeps
    # one summed modular vector: a peak of 2.0 to 2.1 MB measured, under the 3 MB limit.
    T_big, n = 30_000, 8

    def playing(comparator, stream):
        return lambda: run(HazanKale(n, T_big, M=1.0, rng=0), stream, comparator=comparator,
                           expected=False, progress=False)

    limit = 3 * 2**20
    endless = (f for _, f in zip(range(T_big), _endless(n)))
    assert _peak_bytes(playing(None, endless)) < limit
    iid = IIDStream(lambda g: Modular(g.uniform(-1.0, 1.0, n) / n), n=n, T=T_big, rng=1)
    assert _peak_bytes(playing("auto", iid)) < limit
    # control: the functions themselves are what would not fit
    assert _peak_bytes(lambda: list(iid.iterate())) > 2 * limit
