"""Online learners: rounds per second at n = 100, 300 and 1000, and how the cost of a round grows
with n (log-log slope), beside the figures measured before the one-pass chain evaluation and
the per-family fast paths (``BEFORE``).

Each learner is driven directly (``select()`` then ``update(feedback)``), without the regret
harness, so the figure is the learner's own cost plus the environment's evaluation of the played
set. The first round (lazy state construction) is timed apart as "setup"; rounds per second are
counted over the following rounds, until ``--rounds`` rounds or ``--budget`` seconds, whichever
comes first (the horizon ``T`` the learner is built with is larger, so no learner is near its
end).

Time is the process's CPU time (``time.process_time``), not wall time: on a shared machine
other processes stretch wall time by their load, which is not the learner's cost (the learners
are single-threaded at these sizes). ``--clock wall`` measures wall time instead.

Floors (``FLOORS``, written in ``_online_floors.py`` and ``_online_floors_max.py``): at the
largest n, every learner also runs against a plain-numpy round of the same algorithm (same
draws per round, same function family, the same evaluation of the played set by the
environment, no validation, ledger or protocol bookkeeping), alternating blocks of rounds of
each in CPU time; the ratio is the learner's time per round over the floor's, median and spread
over ``--floor-repeats`` repeats. The bandit convex learners' blocks hold at least one of their
own blocks of rounds (``FLOOR_MIN_ROUNDS``). Targets at n = 1000: at most 2, and 1.5 for
MetaFrankWolfe, whose slope in n must be at most 1.0.

Environments (a pool of 8 functions per n, cycled, built once outside the timing):

* minimization (SubmodPFTAL, BanditSubmodPFTAL, HazanKale, BanditHazanKale): the planted stream
  of ``dpsubmod.online.stochastic_stream`` at any n, ``f(S) = (sum_{i in S} c(i) +
  0.5 sqrt|S|) / Z`` with random signs ``c``, range [-1, 1] (the "benchmark stream"); the
  full-information learners also on a **cut stream** (a graph cut of a random graph with 4n edges
  and weights in [0, 1], plus a modular term in [-1, 1] per element, over their total) and a
  **facility-location stream** (one round is 10 people's facility location over the n
  candidates, similarities in [0, 1], plus a modular term; one round's data as in the Uber
  stream of the experiments);
* maximization, k = 5 (FIDP, BanditDP, OnlineGreedy (Streeter-Golovin), BanditOnlineGreedy,
  MetaFrankWolfe, DPMetaFrankWolfe, PFTALMetaFrankWolfe): weighted coverage of 200 elements by
  n random sets (each element in a set with probability 0.05), values in [0, 1];
* experts (Hedge over n experts, private FTRL over the uniform-matroid polytope of rank 5):
  random gain / loss vectors in [0, 1]^n;
* bandit convex optimization over the uniform-matroid polytope of rank 5 in R^n (PrivateBandit,
  GarberKretzu; FlaxmanKalaiMcMahan, which projects exactly, over the box [0, 1]^n): linear
  losses ``theta . x`` with ``|theta|_2 = 1``.
"""

from __future__ import annotations

import argparse
import math
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import numpy as np
import scipy.sparse as sp

import _online_floors as F
import _online_floors_max as FM
from _harness import Report, Target, loglog_slope
from dpsubmod import online as O
from dpsubmod.constraints import UniformMatroid
from dpsubmod.functions import (
    Coverage,
    FacilityLocation,
    FeatureBased,
    GraphCut,
    Modular,
    Scaled,
    Sum,
)
from dpsubmod.polytopes import Box, MatroidPolytope

K = 5
POOL = 8
HORIZON = 100_000

#: Rounds per CPU-second at n = 1000 and the slope in n, measured with this script on the code
#: before the chain evaluation (git 65a21cf, 2 cores, same clock): the reference column.
BEFORE: dict[str, tuple[float, float]] = {
    "SubmodPFTAL (eps=1)": (16.9, 1.08),
    "BanditSubmodPFTAL (eps=1)": (4142.0, 0.47),
    "HazanKale": (14.9, 1.11),
    "SubmodPFTAL (eps=1) [cut stream]": (45.6, 0.95),
    "HazanKale [cut stream]": (49.1, 0.91),
    "SubmodPFTAL (eps=1) [FL stream]": (49.0, 0.93),
    "HazanKale [FL stream]": (47.2, 0.94),
    "BanditHazanKale": (10843.4, 0.28),
    "FIDP (eps=1)": (1855.8, 0.06),
    "BanditDP (eps=1)": (17036.1, 0.07),
    "OnlineGreedy (Streeter-Golovin)": (1795.1, 0.13),
    "BanditOnlineGreedy": (5175.1, 0.48),
    "MetaFrankWolfe (K=10)": (18.5, 1.4),
    "DPMetaFrankWolfe (K=10, eps=1)": (151.1, 0.71),
    "PFTALMetaFrankWolfe (K=10, eps=1)": (63.7, 0.18),
    "Hedge (n experts)": (42683.5, 0.17),
    "PrivateFTRL (uniform polytope, eps=1)": (2920.9, 0.26),
    "PrivateBandit (eps=1)": (4758.6, 0.54),
    "GarberKretzu": (4086.7, 0.92),
    "FlaxmanKalaiMcMahan (box)": (10342.1, 0.62),
}


@dataclass
class Env:
    min_fs: list
    max_fs: list
    vecs: np.ndarray
    thetas: np.ndarray
    cut_fs: list
    fl_fs: list


def make_env(n: int, seed: int = 0) -> Env:
    rng = np.random.default_rng(seed)
    lam = 0.5
    Z = n + lam * math.sqrt(n)
    card = Scaled(FeatureBased(np.ones((n, 1))), lam / Z)
    min_fs = [Sum([Modular(rng.choice([-1.0, 1.0], n) / Z), card]) for _ in range(POOL)]
    m = 200
    max_fs = []
    for _ in range(POOL):
        A = sp.csr_array((rng.random((n, m)) < 0.05).astype(np.float64))
        max_fs.append(Coverage(A, np.full(m, 1.0 / m)))
    vecs = rng.random((POOL, n))
    th = rng.standard_normal((POOL, n))
    th /= np.linalg.norm(th, axis=1, keepdims=True)
    cut_fs = []
    for _ in range(POOL):
        m_edges = 4 * n
        u, v = rng.integers(n, size=m_edges), rng.integers(n, size=m_edges)
        keep = u != v
        w = rng.random(int(keep.sum()))
        Zc = float(w.sum()) + n
        W = sp.coo_array((np.concatenate([w, w]) / Zc,
                          (np.concatenate([u[keep], v[keep]]),
                           np.concatenate([v[keep], u[keep]]))), shape=(n, n)).tocsr()
        cut_fs.append(Sum([GraphCut(W), Modular(rng.uniform(-1.0, 1.0, n) / Zc)]))
    fl_fs = []
    for _ in range(POOL):
        clients = 10
        fl = FacilityLocation(rng.random((clients, n)), np.full(clients, 0.5 / clients))
        fl_fs.append(Sum([fl, Modular(rng.uniform(-0.5, 0.5, n) / n)]))
    return Env(min_fs, max_fs, vecs, th, cut_fs, fl_fs)


# name -> (kind, factory(n))
LEARNERS: dict[str, tuple[str, Callable[[int], object]]] = {
    "SubmodPFTAL (eps=1)": ("full-min", lambda n: O.SubmodPFTAL(n, HORIZON, M=1.0, epsilon=1.0,
                                                                rng=0)),
    "BanditSubmodPFTAL (eps=1)": ("bandit-min", lambda n: O.BanditSubmodPFTAL(
        n, HORIZON, M=1.0, epsilon=1.0, rng=0)),
    "HazanKale": ("full-min", lambda n: O.HazanKale(n, HORIZON, M=1.0, rng=0)),
    "SubmodPFTAL (eps=1) [cut stream]": ("full-cut", lambda n: O.SubmodPFTAL(
        n, HORIZON, M=1.0, epsilon=1.0, rng=0)),
    "HazanKale [cut stream]": ("full-cut", lambda n: O.HazanKale(n, HORIZON, M=1.0, rng=0)),
    "SubmodPFTAL (eps=1) [FL stream]": ("full-fl", lambda n: O.SubmodPFTAL(
        n, HORIZON, M=1.0, epsilon=1.0, rng=0)),
    "HazanKale [FL stream]": ("full-fl", lambda n: O.HazanKale(n, HORIZON, M=1.0, rng=0)),
    "BanditHazanKale": ("bandit-min", lambda n: O.BanditHazanKale(n, HORIZON, M=1.0, rng=0)),
    "FIDP (eps=1)": ("full-max", lambda n: O.FIDP(n, HORIZON, K, epsilon=1.0, delta=1e-6,
                                                         rng=0)),
    "BanditDP (eps=1)": ("bandit-max", lambda n: O.BanditDP(n, HORIZON, K, epsilon=1.0, delta=1e-6,
                                                            gamma=HORIZON ** (-1 / 3), rng=0)),
    "OnlineGreedy (Streeter-Golovin)": ("full-max", lambda n: O.OnlineGreedy(n, HORIZON, K,
                                                                             rng=0)),
    "BanditOnlineGreedy": ("bandit-max", lambda n: O.BanditOnlineGreedy(
        n, HORIZON, K, gamma=HORIZON ** (-1 / 3), rng=0)),
    "MetaFrankWolfe (K=10)": ("full-max", lambda n: O.MetaFrankWolfe(n, HORIZON, K, K=10,
                                                                     rng=0)),
    "DPMetaFrankWolfe (K=10, eps=1)": ("full-max", lambda n: O.DPMetaFrankWolfe(
        n, HORIZON, K, epsilon=1.0, delta=1e-6, K=10, rng=0)),
    "PFTALMetaFrankWolfe (K=10, eps=1)": ("full-max", lambda n: O.PFTALMetaFrankWolfe(
        n, HORIZON, K, epsilon=1.0, K=10, rng=0)),
    "Hedge (n experts)": ("hedge", lambda n: O.Hedge(n, 0.1, rng=0)),
    "PrivateFTRL (uniform polytope, eps=1)": ("ftrl", lambda n: O.PrivateFTRL(
        K, HORIZON, n=n, epsilon=1.0, loss_range=(0.0, 1.0), rng=0)),
    "PrivateBandit (eps=1)": ("convex", lambda n: O.PrivateBandit(
        MatroidPolytope(UniformMatroid(n, K)), HORIZON, epsilon=1.0, mode="extend", rng=0)),
    "GarberKretzu": ("convex", lambda n: O.GarberKretzu(
        MatroidPolytope(UniformMatroid(n, K)), HORIZON, mode="extend", rng=0)),
    # Flaxman-Kalai-McMahan projects exactly, onto boxes and simplices only: the box [0, 1]^n.
    "FlaxmanKalaiMcMahan (box)": ("convex", lambda n: O.FlaxmanKalaiMcMahan(
        Box(0.0, 1.0, n), HORIZON, mode="extend", rng=0)),
}


#: Rounds per second at n = 1000 the full-information minimization learners must reach.
TARGETS = {name: 3000.0 for name in LEARNERS
           if name.startswith(("SubmodPFTAL", "HazanKale"))}
#: Largest slope in n allowed.
SLOPE_TARGETS = {"MetaFrankWolfe (K=10)": 1.0}


#: The plain-numpy floor of each case (on the case's own stream).
FLOORS: dict[str, Callable[[int, Env, object], Callable[[int], None]]] = {
    "SubmodPFTAL (eps=1)": F.floor_submod_pftal,
    "BanditSubmodPFTAL (eps=1)": F.floor_bandit_submod_pftal,
    "HazanKale": F.floor_hazan_kale,
    "SubmodPFTAL (eps=1) [cut stream]": partial(F.floor_submod_pftal, stream="cut"),
    "HazanKale [cut stream]": partial(F.floor_hazan_kale, stream="cut"),
    "SubmodPFTAL (eps=1) [FL stream]": partial(F.floor_submod_pftal, stream="fl"),
    "HazanKale [FL stream]": partial(F.floor_hazan_kale, stream="fl"),
    "BanditHazanKale": F.floor_bandit_hazan_kale,
    "FIDP (eps=1)": FM.floor_fidp,
    "BanditDP (eps=1)": FM.floor_bandit_experts,
    "OnlineGreedy (Streeter-Golovin)": FM.floor_fidp,
    "BanditOnlineGreedy": FM.floor_bandit_experts,
    "MetaFrankWolfe (K=10)": FM.floor_meta_frank_wolfe,
    "DPMetaFrankWolfe (K=10, eps=1)": FM.floor_dp_meta_frank_wolfe,
    "PFTALMetaFrankWolfe (K=10, eps=1)": FM.floor_pftal_meta_frank_wolfe,
    "Hedge (n experts)": F.floor_hedge,
    "PrivateFTRL (uniform polytope, eps=1)": F.floor_private_ftrl,
    "PrivateBandit (eps=1)": F.floor_private_bandit,
    "GarberKretzu": F.floor_garber_kretzu,
    "FlaxmanKalaiMcMahan (box)": F.floor_flaxman_kalai_mcmahan,
}
#: Largest ratio of a learner's round to its floor's at n = 1000.
FLOOR_TARGETS = {name: 2.0 for name in FLOORS} | {"MetaFrankWolfe (K=10)": 1.5}
#: Fewest rounds per interleaved block: the bandit convex learners do their heavy work once per
#: block of rounds (a Frank-Wolfe response and a tree update every 317 rounds at T = 100,000,
#: sphere directions 317 or 1024 at a time), so every timed block holds one such block end.
FLOOR_MIN_ROUNDS = {"PrivateBandit (eps=1)": 317, "GarberKretzu": 317,
                    "FlaxmanKalaiMcMahan (box)": 1024}


def _round(kind: str, learner, env: Env, t: int) -> None:
    i = t % POOL
    if kind.startswith("full-"):
        learner.select()
        learner.update({"full-min": env.min_fs, "full-max": env.max_fs, "full-cut": env.cut_fs,
                        "full-fl": env.fl_fs}[kind][i])
    elif kind in ("bandit-min", "bandit-max"):
        S = learner.select()
        f = env.min_fs[i] if kind == "bandit-min" else env.max_fs[i]
        learner.update(f(S))
    elif kind == "hedge":
        learner.sample()
        learner.update(env.vecs[i][None, :])
    elif kind == "ftrl":
        learner.predict()
        learner.update(env.vecs[i][None, :])
    elif kind == "convex":
        x = learner.select()
        learner.update(float(env.thetas[i] @ x))
    else:  # pragma: no cover
        raise ValueError(kind)


def time_learner(name: str, n: int, env: Env, max_rounds: int, budget: float,
                 clock: Callable[[], float] = time.process_time) -> tuple[float, float, int]:
    """``(setup seconds, rounds per second, rounds timed)``."""
    kind, factory = LEARNERS[name]
    learner = factory(n)
    t0 = clock()
    _round(kind, learner, env, 0)
    setup = clock() - t0
    t0 = clock()
    r = 0
    while r < max_rounds:
        _round(kind, learner, env, r + 1)
        r += 1
        if clock() - t0 > budget:
            break
    return setup, r / max(clock() - t0, 1e-9), r


def floor_ratio(name: str, n: int, env: Env, rounds: int, blocks: int,
                clock: Callable[[], float] = time.process_time) -> tuple[float, float, float]:
    """``(learner rounds/s, floor rounds/s, ratio)``: ``blocks`` alternating blocks of
    ``rounds`` rounds of the learner and of its floor (after one untimed round of each), so
    both see the same load; the ratio is the learner's CPU time per round over the floor's."""
    kind, factory = LEARNERS[name]
    learner = factory(n)
    fl = FLOORS[name](n, env, factory(n))
    _round(kind, learner, env, 0)
    fl(0)
    t_l = t_f = 0.0
    t = 1
    for _ in range(blocks):
        t0 = clock()
        for r in range(rounds):
            _round(kind, learner, env, t + r)
        t1 = clock()
        for r in range(rounds):
            fl(t + r)
        t2 = clock()
        t_l += t1 - t0
        t_f += t2 - t1
        t += rounds
    total = rounds * blocks
    return total / max(t_l, 1e-9), total / max(t_f, 1e-9), t_l / max(t_f, 1e-9)


def floor_section(rep: Report, n: int, env: Env, names: list[str], rounds: int, blocks: int,
                  repeats: int, clock_name: str) -> None:
    clock = time.process_time if clock_name == "cpu" else time.perf_counter
    head = (f"{'learner':<40}{'rounds/s':>10}{'floor rounds/s':>16}{'ratio median [min-max]':>26}"
            f"{'target':>8}")
    lines = [head, "-" * len(head)]
    for name in names:
        if name not in FLOORS:
            continue
        rr = max(rounds, FLOOR_MIN_ROUNDS.get(name, 0))
        runs = [floor_ratio(name, n, env, rr, blocks, clock) for _ in range(repeats)]
        ratios = sorted(r[2] for r in runs)
        med = float(np.median(ratios))
        lines.append(f"{name:<40}{np.median([r[0] for r in runs]):10.1f}"
                     f"{np.median([r[1] for r in runs]):16.1f}"
                     f"{f'{med:.2f} [{ratios[0]:.2f}-{ratios[-1]:.2f}]':>26}"
                     f"{FLOOR_TARGETS[name]:8.1f}")
        if n == 1000:  # the targets are stated at n = 1000 (fixed costs weigh at --quick sizes)
            rep.targets.append(Target(f"online {name}: round / plain-numpy floor at n={n}",
                                      med, FLOOR_TARGETS[name]))
    lines.append(f"({repeats} repeats of {blocks} interleaved blocks of {rounds} rounds (at least "
                 "FLOOR_MIN_ROUNDS), "
                 f"{clock_name} time; the floors are FLOORS in this file)")
    rep.print_section(f"\nOnline learners against a plain-numpy floor of their round, n = {n}\n"
                      + "\n".join(lines))


def main(argv: list[str] | None = None) -> Report:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--n", type=int, nargs="+", default=[100, 300, 1000])
    p.add_argument("--rounds", type=int, default=2000)
    p.add_argument("--budget", type=float, default=3.0, help="seconds per learner and n")
    p.add_argument("--learners", nargs="*", default=None)
    p.add_argument("--clock", choices=("cpu", "wall"), default="cpu",
                   help="process CPU time (default) or wall time")
    p.add_argument("--floor-rounds", type=int, default=20,
                   help="rounds per interleaved block against the floors (0: skip the floors)")
    p.add_argument("--floor-blocks", type=int, default=5)
    p.add_argument("--floor-repeats", type=int, default=3)
    p.add_argument("--floors-only", action="store_true",
                   help="only the comparison with the floors (at the largest n)")
    args = p.parse_args(argv)
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    warnings.filterwarnings("ignore")
    if args.quick:
        args.n, args.rounds, args.budget = [30, 100], 50, 0.5
        args.floor_rounds, args.floor_blocks, args.floor_repeats = 5, 2, 1
    names = args.learners or list(LEARNERS)
    envs = {n: make_env(n) for n in args.n}
    rep = Report("online")
    if args.floors_only:
        big = max(args.n)
        floor_section(rep, big, envs[big], names, args.floor_rounds, args.floor_blocks,
                      args.floor_repeats, args.clock)
        return rep
    rate: dict[str, list[float]] = {}
    setup: dict[str, list[float]] = {}
    cnt: dict[str, list[int]] = {}
    for name in names:
        for n in args.n:
            try:
                s, rps, r = time_learner(name, n, envs[n], args.rounds, args.budget, clock)
            except Exception as exc:  # report, do not abort the whole benchmark
                print(f"{name} n={n}: failed: {type(exc).__name__}: {exc}")
                s, rps, r = math.nan, math.nan, 0
            rate.setdefault(name, []).append(rps)
            setup.setdefault(name, []).append(s)
            cnt.setdefault(name, []).append(r)
    big = max(args.n)
    head = (f"{'learner':<40}" + "".join(f"{'n=' + str(n) + ' rounds/s':>17}" for n in args.n)
            + f"{'setup s (max n)':>16}{'slope':>7}{'before: n=1000':>16}{'slope':>7}")
    lines = [head, "-" * len(head)]
    for name in names:
        per_round = [1.0 / x if x and x > 0 else math.nan for x in rate[name]]
        slope = loglog_slope(args.n, per_round)
        rep.exponents[f"online {name}: seconds per round ~ n^a"] = slope
        b_rate, b_slope = BEFORE.get(name, (math.nan, math.nan))
        lines.append(f"{name:<40}" + "".join(f"{x:17.1f}" for x in rate[name])
                     + f"{setup[name][-1]:16.3f}{slope:7.2f}{b_rate:16.1f}{b_slope:7.2f}")
        if name in TARGETS and big == 1000:
            rep.targets.append(Target(f"online {name}: rounds per {args.clock} second at n=1000",
                                      rate[name][-1], TARGETS[name], higher_is_better=True))
        if name in SLOPE_TARGETS and len(args.n) > 1:
            rep.targets.append(Target(f"online {name}: slope of a round's cost in n", slope,
                                      SLOPE_TARGETS[name]))
    lines.append(f"(rounds per {args.clock} second over up to {args.rounds} rounds or "
                 f"{args.budget:g} s after the first round; slope = log-log slope of seconds "
                 "per round against n; 'before' = BEFORE, the code before the chain evaluation)")
    rep.print_section(f"\nOnline learners, rounds per second (k = {K} where a learner selects k "
                      "items)\n" + "\n".join(lines))
    if args.floor_rounds > 0:
        floor_section(rep, big, envs[big], names, args.floor_rounds, args.floor_blocks,
                      args.floor_repeats, args.clock)
    return rep


if __name__ == "__main__":
    main()
