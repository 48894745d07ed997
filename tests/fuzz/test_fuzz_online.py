"""Fuzz: the online learners, played directly (construction, ``select`` and ``update`` as
separate calls, with bad feedback and too many rounds) and through ``run`` / ``run_convex``
(streams of length 0, T and more, endless generators, misbehaving functions)."""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from fuzz_harness import COUNTS, FAILURES, CallTimeout, Case, expect, finite, fuzz_settings, invoke
from fuzz_inputs import (
    INF,
    NAN,
    choice,
    delta_value,
    epsilon_value,
    integer,
    maybe,
    new_case,
    real,
    rng_value,
)
from fuzz_objects import Misbehaving
from hypothesis import given
from hypothesis import strategies as st

import dpsubmod.online as O
from dpsubmod import Budget
from dpsubmod.constraints import PartitionMatroid, UniformMatroid
from dpsubmod.functions import Coverage, Modular, SetFunction

#: name -> (class, sense, feedback, builder of the keyword arguments)
Builder = Any


def _eps(draw: Any, case: Case, kw: dict[str, Any], *, inf_ok: bool = True) -> None:
    kw["epsilon"] = epsilon_value(draw, case, inf_ok=inf_ok)


def _min_kw(bandit: bool, pftal: bool) -> Builder:
    def build(draw: Any, case: Case, n: int, T: int) -> dict[str, Any]:
        kw: dict[str, Any] = {"M": real(draw, case, "M", low=0.0, low_open=True,
                                        typical=(0.5, 3.0))}
        if pftal:
            _eps(draw, case, kw)
            if draw(st.integers(0, 3)) == 0:
                kw["noise"] = choice(draw, case, "noise", ["l2laplace", "gaussian"])
                kw["delta"] = delta_value(draw, case, positive=kw["noise"] == "gaussian")
                case.mark_degenerate("noise", "delta")
        elif draw(st.booleans()):
            kw["eta"] = real(draw, case, "eta", low=0.0, low_open=True, typical=(0.01, 1.0),
                             optional=True)
        if bandit and draw(st.booleans()):
            kw["gamma"] = real(draw, case, "gamma", low=0.0, high=1.0, low_open=True,
                               typical=(0.05, 1.0), optional=True)
        return kw
    return build


def _experts_kw(bandit: bool, private: bool) -> Builder:
    def build(draw: Any, case: Case, n: int, T: int) -> dict[str, Any]:
        kw: dict[str, Any] = {"k": integer(draw, case, "k", low=1, high=n, typical=(1, n))}
        if private:
            _eps(draw, case, kw)
            if draw(st.booleans()):
                kw["delta"] = delta_value(draw, case, positive=True)
            case.mark_degenerate("delta", "epsilon", "eta", "calibration")
        if draw(st.integers(0, 2)) == 0:
            kw["eta"] = real(draw, case, "eta", low=0.0, low_open=True, typical=(0.01, 1.0),
                             optional=True)
        if bandit and draw(st.booleans()):
            kw["gamma"] = real(draw, case, "gamma", low=0.0, high=1.0, low_open=True,
                               typical=(0.05, 1.0), optional=True)
        if bandit and n == 1 and "gamma" not in kw:  # the default rate involves ln(n) = 0
            case.mark_degenerate("gamma")
        return kw
    return build


def _fw_kw(private: str) -> Builder:
    def build(draw: Any, case: Case, n: int, T: int) -> dict[str, Any]:
        k = draw(st.integers(1, n))
        kw: dict[str, Any] = {"constraint": draw(st.sampled_from(
            [k, UniformMatroid(n, k), PartitionMatroid([i % 2 for i in range(n)], 1)]))}
        if private:
            _eps(draw, case, kw)
        if private == "dp" and draw(st.booleans()):
            kw["delta"] = delta_value(draw, case)
            case.mark_degenerate("delta", "noise", "epsilon")
        if draw(st.booleans()):
            kw["K"] = integer(draw, case, "K", low=1, typical=(1, 4), optional=True)
        return kw
    return build


LEARNERS: dict[str, tuple[Any, Builder]] = {
    "SubmodPFTAL": (O.SubmodPFTAL, _min_kw(False, True)),
    "BanditSubmodPFTAL": (O.BanditSubmodPFTAL, _min_kw(True, True)),
    "HazanKale": (O.HazanKale, _min_kw(False, False)),
    "BanditHazanKale": (O.BanditHazanKale, _min_kw(True, False)),
    "FIDP": (O.FIDP, _experts_kw(False, True)),
    "BanditDP": (O.BanditDP, _experts_kw(True, True)),
    "NaiveBanditDP": (O.NaiveBanditDP, _experts_kw(True, True)),
    "PresampledBanditDP": (O.PresampledBanditDP, _experts_kw(True, True)),
    "OnlineGreedy": (O.OnlineGreedy, _experts_kw(False, False)),
    "BanditOnlineGreedy": (O.BanditOnlineGreedy, _experts_kw(True, False)),
    "DPMetaFrankWolfe": (O.DPMetaFrankWolfe, _fw_kw("dp")),
    "MetaFrankWolfe": (O.MetaFrankWolfe, _fw_kw("")),
    "PFTALMetaFrankWolfe": (O.PFTALMetaFrankWolfe, _fw_kw("pftal")),
}


def round_function(draw: Any, cls: Any, n: int, M: float = 1.0) -> SetFunction:
    """A valid round function: a loss in [-M, M] (minimization) or a monotone submodular reward
    in [0, 1] (maximization)."""
    if cls.sense == "min":
        w = np.array(draw(st.lists(st.floats(-1, 1), min_size=n, max_size=n))) * M / n
        return Modular(w)
    if draw(st.booleans()):
        return Modular(np.array(draw(st.lists(st.floats(0, 1), min_size=n, max_size=n))) / n)
    m = draw(st.integers(1, 4))
    inc = np.array(draw(st.lists(st.booleans(), min_size=n * m, max_size=n * m))).reshape(n, m)
    return Coverage(inc.astype(float), weights=np.full(m, 1.0 / m))


def _selection_problem(learner: Any, n: int) -> Any:
    def check(sel: Any) -> str | None:
        if not isinstance(sel, tuple) or not all(type(e) is int for e in sel):
            return f"selection {sel!r} is not a tuple of ints"
        if list(sel) != sorted(set(sel)) or any(not 0 <= e < n for e in sel):
            return f"selection {sel!r} is not a sorted set in range({n})"
        k = getattr(learner, "k", None)
        if isinstance(k, int) and len(sel) > k:
            return f"selection {sel!r} has more than k = {k} elements"
        con = getattr(learner, "constraint", None)
        if con is not None and not isinstance(con, int | np.integer) and \
                not con.is_independent(list(sel)):
            return f"selection {sel!r} is infeasible for {con!r}"
        if isinstance(con, int | np.integer) and len(sel) > con:
            return f"selection {sel!r} exceeds the cardinality {con}"
        return None
    return check


@st.composite
def play(draw: Any, name: str) -> tuple[Any, ...]:
    cls, builder = LEARNERS[name]
    case = new_case(draw, f"online.{name}")
    case.allow("n", "T", "rng", "budget", "M", "epsilon", "delta", "eta", "gamma", "k", "H",
               "noise", "constraint", "K", "calibration", "composition", "bound", "sensitivity",
               "clip", "x1", "cap", "backend", "oracle", "step", "gradient", "n_samples")
    n = draw(st.integers(1, 5))
    T = draw(st.integers(1, 6))
    n_arg = integer(draw, case, "n", low=1, typical=(n, n), p_bad=0.1)
    T_arg = integer(draw, case, "T", low=1, typical=(T, T), p_bad=0.1)
    kw = builder(draw, case, n, T)
    kw["rng"] = rng_value(draw, case)
    eps = kw.get("epsilon")
    if draw(st.integers(0, 4)) == 0 and isinstance(eps, float) and math.isfinite(eps) and \
            eps > 0:
        case.budget = Budget(draw(st.sampled_from([0.5, 50.0])), 1e-3)
        kw["budget"] = case.budget
        case.mark_degenerate("budget", "Budget")
    # rounds: T valid ones, maybe one too many; maybe a bad feedback at some round
    rounds = T + (1 if draw(st.integers(0, 4)) == 0 else 0)
    bad_at = draw(st.integers(0, T - 1)) if case.bad_scale and draw(st.booleans()) else -1
    bad_kind = draw(st.sampled_from(["nan", "inf", "wrong_n", "type", "none"]))
    fs = [round_function(draw, cls, n, float(kw["M"]) if isinstance(kw.get("M"), float)
                         and math.isfinite(kw["M"]) else 1.0) for _ in range(T)]
    return case, cls, n_arg, T_arg, kw, n, T, rounds, bad_at, bad_kind, fs


def _bad_feedback(kind: str, cls: Any, n: int) -> Any:
    if cls.feedback == "bandit":
        return {"nan": NAN, "inf": INF, "wrong_n": "0.5", "type": Modular(np.ones(n)),
                "none": None}[kind]
    return {"nan": Misbehaving(n, "nan"), "inf": Misbehaving(n, "inf"),
            "wrong_n": Modular(np.ones(n + 1)), "type": 0.5, "none": None}[kind]


@pytest.mark.parametrize("name", list(LEARNERS))
def test_learner_played_directly(name: str) -> None:
    @fuzz_settings(0.6)
    @given(play(name))
    def inner(call: tuple[Any, ...]) -> None:
        case, cls, n_arg, T_arg, kw, n, T, rounds, bad_at, bad_kind, fs = call
        events0 = 0

        def check_learner(lr: Any) -> str | None:
            rep = lr.privacy
            eps = kw.get("epsilon")
            if rep is not None and isinstance(eps, float) and math.isfinite(eps) and \
                    rep.epsilon > eps * (1 + 1e-9):
                return f"states epsilon {rep.epsilon!r} above the requested {eps!r}"
            if case.budget is not None and len(case.budget.events) == events0 and \
                    rep is not None:
                return "a private learner with a budget charged nothing"
            return None

        out = invoke(case, lambda: cls(n_arg, T_arg, **kw), check=check_learner)
        expect(out)
        if out.kind != "result":
            return
        learner = out.value
        base = Case(case.entry + ".select")
        base.allow(*case.names, "feedback", "f")
        for t in range(rounds):
            sel_case = Case(base.entry, names=base.names)
            if t >= T:
                sel_case.mark_bad("T", "T", "rounds", "played")
            s = invoke(sel_case, learner.select, check=_selection_problem(learner, n))
            expect(s)
            if s.kind != "result":
                return
            upd = Case(case.entry + ".update", names=base.names)
            if t == bad_at:
                fb = _bad_feedback(bad_kind, cls, n)
                upd.mark_bad("feedback", "feedback", "f", "function", "value", "SetFunction",
                             "ground set", "objective", "float")
                upd.data_refusal_ok = True
            else:
                fb = fs[t](list(s.value)) if cls.feedback == "bandit" else fs[t]
            u = invoke(upd, lambda fb=fb: learner.update(fb))
            expect(u)
            if u.kind != "result":
                return

    inner()


# -- run ------------------------------------------------------------------------------------------

class _Endless:
    """An endless stream of round functions that counts what was read and stops a reader that
    goes past ``limit`` items (reading all of it would never end)."""

    def __init__(self, f: SetFunction, limit: int):
        self.f, self.limit, self.read = f, limit, 0

    def __iter__(self) -> Iterator[SetFunction]:
        while True:
            self.read += 1
            if self.read > self.limit:
                raise CallTimeout(f"read {self.read} items of an endless stream")
            yield self.f


@st.composite
def run_call(draw: Any) -> tuple[Any, ...]:
    name = draw(st.sampled_from(["SubmodPFTAL", "HazanKale", "FIDP", "OnlineGreedy",
                                 "BanditDP", "MetaFrankWolfe"]))
    cls, _ = LEARNERS[name]
    case = new_case(draw, f"online.run[{name}]")
    case.allow("learner", "stream", "comparator", "constraint", "alpha", "expected", "rng",
               "progress", "T", "n")
    n = draw(st.integers(1, 4))
    T = draw(st.integers(1, 5))
    # the learner is valid here (its constructor is fuzzed by test_learner_played_directly)
    eps = draw(st.sampled_from([0.5, 2.0, math.inf])) if name != "BanditDP" else 1.0
    kw = {"SubmodPFTAL": {"M": 1.0, "epsilon": eps}, "HazanKale": {"M": 1.0},
          "FIDP": {"k": 1, "epsilon": eps, "delta": 1e-6}, "OnlineGreedy": {"k": 1},
          "BanditDP": {"k": 1, "epsilon": eps, "delta": 1e-6, "gamma": 0.5},
          "MetaFrankWolfe": {"constraint": 1}}[name]
    learner = cls(n, T, rng=draw(st.integers(0, 99)), **kw)
    fs = [round_function(draw, cls, n) for _ in range(T)]
    kind = draw(st.sampled_from(["list", "list", "short", "empty", "long", "endless",
                                 "generator", "bad_item", "nan_item"]))
    endless = None
    stream: Any
    if kind == "list":
        stream = fs
    elif kind == "short":
        stream = fs[: max(0, T - 1)]
        if not stream:
            case.mark_degenerate("stream", "T", "empty")
    elif kind == "empty":
        stream = []
        case.mark_degenerate("stream", "T", "empty", "rounds")
    elif kind == "long" and case.bad_scale:
        stream = fs + fs[:1]
        case.mark_bad("stream", "stream", "T", "rounds")
    elif kind == "endless" and case.bad_scale:
        endless = _Endless(fs[0], T + 1)
        stream = iter(endless)
        case.mark_bad("stream", "stream", "T", "rounds", "endless", "length", "generator")
    elif kind == "generator":
        stream = (f for f in fs)
        case.mark_degenerate("stream", "length", "generator", "T")
    elif kind == "bad_item" and case.bad_scale:
        stream = fs[:-1] + ["not a function"]
        case.mark_bad("stream", "stream", "SetFunction", "function", "f")
    elif kind == "nan_item" and case.bad_scale:
        stream = fs[:-1] + [Misbehaving(n, "nan")]
        case.mark_bad("stream", "stream", "f", "function", "objective", "feedback", "value")
        case.data_refusal_ok = True
    else:
        stream = fs
    kwr: dict[str, Any] = {}
    if draw(st.booleans()):
        kwr["comparator"] = choice(draw, case, "comparator", ["auto", None],
                                   bad=["nonsense", 3.5])
    if draw(st.integers(0, 3)) == 0:
        kwr["alpha"] = real(draw, case, "alpha", low=0.0, high=1.0, low_open=True, optional=True,
                            typical=(0.3, 1.0))
    if draw(st.booleans()):
        kwr["rng"] = rng_value(draw, case)
    return case, learner, stream, kwr, T, n, endless


@fuzz_settings(4.0)
@given(run_call())
def test_run(call: tuple[Any, ...]) -> None:
    case, learner, stream, kwr, T, n, endless = call

    def check(trace: Any) -> str | None:
        if trace.T > T or len(trace.selections) != trace.T:
            return f"trace of {trace.T} rounds for a horizon of {T}"
        for sel in trace.selections:
            problem = _selection_problem(learner, n)(sel)
            if problem:
                return problem
        if not finite(trace.values):
            return f"round values {trace.values!r}"
        if trace.regret is not None and not finite(trace.regret):
            return f"regret {trace.regret!r}"
        return None

    out = invoke(case, lambda: O.run(learner, stream, **kwr), check=check)
    if endless is not None and endless.read > T + 1 and out.kind in ("result", "refusal"):
        COUNTS[out.kind] -= 1
        COUNTS["hang"] += 1
        FAILURES.append(f"hang: {case.entry}: read {endless.read} items of an endless stream "
                        f"for T={T}")
        out.kind, out.detail = "hang", f"read {endless.read} items of an endless stream"
    expect(out)


# -- convex learners ------------------------------------------------------------------------------

@st.composite
def convex_call(draw: Any) -> tuple[Any, ...]:
    from dpsubmod.online import linear_losses
    from dpsubmod.polytopes import Box, Simplex

    name = draw(st.sampled_from(["PrivateBandit", "GarberKretzu", "FlaxmanKalaiMcMahan"]))
    cls = getattr(O, name)
    case = new_case(draw, f"online.run_convex[{name}]")
    case.allow("polytope", "T", "epsilon", "delta", "lipschitz", "bound", "diameter", "eta",
               "zeta", "rng", "losses", "comparator", "noise", "mode")
    dim = draw(st.integers(2, 3))  # a 1-d simplex is a single point: nothing to learn
    poly = draw(st.sampled_from([Box(np.zeros(dim), np.ones(dim)), Simplex(dim)]))
    T = integer(draw, case, "T", low=1, typical=(1, 6), p_bad=0.15)
    kw: dict[str, Any] = {}
    if name == "PrivateBandit":
        kw["epsilon"] = epsilon_value(draw, case, inf_ok=True)
        case.mark_degenerate("epsilon", "lipschitz", "bound", "T")
    if draw(st.booleans()):
        kw["lipschitz"] = real(draw, case, "lipschitz", low=0.0, low_open=True,
                               typical=(0.5, 2.0))
    kw["rng"] = rng_value(draw, case)
    t_len = int(T) if isinstance(T, numbers.Integral) and not isinstance(T, bool) and \
        1 <= T <= 6 else 3
    losses = linear_losses(dim, t_len, rng=draw(st.integers(0, 99)))
    if maybe(draw, case, 0.3):
        losses = list(losses) + list(losses)[:1]
        case.mark_bad("losses", "losses", "T", "rounds", "stream")
    case.mark_degenerate("zeta", "radius", "mode")

    def go() -> Any:
        learner = cls(poly, T, **kw)
        return O.run_convex(learner, losses, comparator=None)

    return case, go, poly


@fuzz_settings(2.0)
@given(convex_call())
def test_run_convex(call: tuple[Any, ...]) -> None:
    case, go, poly = call

    def check(trace: Any) -> str | None:
        pts = np.asarray(trace.points)
        if not finite(pts) or not finite(trace.values):
            return f"points {pts!r}, values {trace.values!r}"
        return None

    expect(invoke(case, go, check=check))
