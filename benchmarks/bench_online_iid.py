"""The i.i.d.-rounds private learners on the Uber online stream: reward per round at epsilon = 1.

The stream is the one of ``docs/results.md`` (``dpsubmod.experiments.online_maximization``): round
``t`` is one rider's facility-location function over the public 4 x 3 grid of Manhattan
candidates, bandwidth 0.01, values in [0, 1], ``k = 3``; riders drawn without replacement from
``uber-apr14-pickups-10k.csv`` (read from ``--data``, or from ``../shared/data`` beside the
repository root; the benchmark says so and stops when the file is absent).

For each horizon and seed one stream is drawn and every learner plays it (paired), with its
defaults at ``epsilon`` (``PrivateEpochGreedy``: doubling epochs from one round, the private
greedy on the previous epoch's mean; ``PrivateExploreThenCommit``: greedy stages with the
default ``m`` and sequential halving within each stage). Printed beside them, on the same
streams: the greedy set in hindsight and a uniformly random 3-set (its exact expectation),
per round.

Targets (issue 26; the prototypes' means rounded down): epoch greedy >= 0.49 at T = 2000;
explore-then-commit >= 0.40 at T = 2000 and >= 0.48 at T = 20,000. Quality, not speed, is
measured here; the wall time of each learner is printed for information.
"""

from __future__ import annotations

import argparse
import itertools
import time
from pathlib import Path

import numpy as np

from _harness import Report, Target
from dpsubmod.experiments.online_maximization import load_uber, uber_stream_builder
from dpsubmod.online import FunctionStream, PrivateEpochGreedy, PrivateExploreThenCommit, run

K = 3
DATA = "uber-apr14-pickups-10k.csv"
LEARNERS = {
    "PrivateEpochGreedy": lambda n, T, eps, s: PrivateEpochGreedy(n, T, K, epsilon=eps, rng=s),
    "PrivateExploreThenCommit": lambda n, T, eps, s: PrivateExploreThenCommit(
        n, T, K, epsilon=eps, rng=s),
}
TARGETS = {("PrivateEpochGreedy", 2000): 0.49, ("PrivateExploreThenCommit", 2000): 0.40,
           ("PrivateExploreThenCommit", 20000): 0.48}


def default_data() -> Path:
    return Path(__file__).resolve().parents[1].parent / "shared" / "data" / DATA


def references(inst, T: int) -> tuple[float, float]:
    """Greedy in hindsight and a uniform random k-set, reward per round."""
    S: list[int] = []
    for _ in range(K):
        cand = [e for e in range(inst.n) if e not in S]
        S.append(cand[int(np.argmax([inst.value_of([*S, e]) for e in cand]))])
    rand = np.mean([inst.value_of(c) for c in itertools.combinations(range(inst.n), K)])
    return inst.value_of(S) / T, float(rand) / T


def main(argv: list[str] | None = None) -> Report:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="T = 500, 2 seeds (no targets)")
    p.add_argument("--horizons", type=int, nargs="+", default=[2000, 20000])
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--epsilon", type=float, default=1.0)
    p.add_argument("--learners", nargs="*", default=None)
    p.add_argument("--data", default=None, help=f"path to {DATA}")
    args = p.parse_args(argv)
    if args.quick:
        args.horizons, args.seeds = [500], 2
    rep = Report("online_iid")
    path = Path(args.data) if args.data else default_data()
    if not path.is_file():
        rep.print_section(f"\nOnline i.i.d. learners on the Uber stream: skipped ({DATA} not "
                          f"found at {path.name}; pass --data)")
        return rep
    build = uber_stream_builder(load_uber(path))
    names = args.learners or list(LEARNERS)
    rows = []
    for T in args.horizons:
        got: dict[str, list[float]] = {name: [] for name in names}
        secs: dict[str, list[float]] = {name: [] for name in names}
        refs = []
        for s in range(args.seeds):
            inst = build(T, np.random.default_rng(np.random.SeedSequence([T, s])))
            refs.append(references(inst, T))
            for name in names:
                t0 = time.perf_counter()
                learner = LEARNERS[name](inst.n, T, args.epsilon, s)
                tr = run(learner, FunctionStream(inst.functions), comparator=None,
                         progress=False)
                secs[name].append(time.perf_counter() - t0)
                got[name].append(float(np.mean(tr.values)))
        g, r = np.mean(refs, axis=0)
        for name in names:
            v = np.array(got[name])
            rows.append((name, T, v.mean(), v.std(ddof=1) if v.size > 1 else 0.0, g, r,
                         float(np.mean(secs[name]))))
            bound = TARGETS.get((name, T))
            if bound is not None and not args.quick:
                rep.targets.append(Target(
                    f"online_iid {name}: reward per round at T={T}, epsilon={args.epsilon:g} "
                    f"(mean of {args.seeds} seeds)", float(v.mean()), bound,
                    higher_is_better=True))
    head = (f"{'learner':<28}{'T':>7}{'reward/round':>14}{'sd':>8}{'greedy':>9}{'random':>9}"
            f"{'s/run':>8}")
    lines = [head, "-" * len(head)]
    for name, T, mean, sd, g, r, sec in rows:
        lines.append(f"{name:<28}{T:>7}{mean:14.4f}{sd:8.4f}{g:9.4f}{r:9.4f}{sec:8.1f}")
    lines.append(f"(epsilon = {args.epsilon:g}, k = {K}, {args.seeds} seeds per T, one stream per "
                 "(T, seed) shared by the learners; greedy = the greedy set in hindsight, random "
                 "= a uniform 3-set, both per round on the same streams)")
    rep.print_section("\nOnline i.i.d. learners on the Uber stream, reward per round\n"
                      + "\n".join(lines))
    return rep


if __name__ == "__main__":
    for t in main().targets:
        print(t.line())
