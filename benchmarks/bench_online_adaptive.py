"""The full-information learner for adaptive adversaries beside FIDP on the Uber online stream.

The stream is the one of ``bench_online_iid`` (one rider's facility-location function per round
over the public 4 x 3 grid of Manhattan candidates, bandwidth 0.01, values in [0, 1], ``k = 3``;
riders drawn without replacement from ``uber-apr14-pickups-10k.csv``, read from ``--data`` or
from ``../shared/data`` beside the repository root; the benchmark says so and stops when the
file is absent). For each seed one stream is drawn and both learners play it (paired), with
their defaults at ``epsilon`` and ``delta = 1e-6``: ``FIDP`` (Hedge experts, each draw charged
as an exponential mechanism) and ``PrivateTreeExperts`` (Hedge experts over tree-aggregated
noisy gains, Gaussian node noise, Honaker's estimator). The greedy set in hindsight and a
uniformly random 3-set are printed beside them.

Target (issue 26): ``PrivateTreeExperts`` earns more per round than ``FIDP`` at ``T = 2000``,
both means over the same seeds. Quality, not speed, is measured; wall times are informational.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from _harness import Report, Target
from bench_online_iid import DATA, K, default_data, references
from dpsubmod.experiments.online_maximization import load_uber, uber_stream_builder
from dpsubmod.online import FIDP, FunctionStream, PrivateTreeExperts, run

DELTA = 1e-6
LEARNERS = {
    "FIDP": lambda n, T, eps, s: FIDP(n, T, K, epsilon=eps, delta=DELTA, rng=s),
    "PrivateTreeExperts": lambda n, T, eps, s: PrivateTreeExperts(
        n, T, K, epsilon=eps, delta=DELTA, rng=s),
}


def main(argv: list[str] | None = None) -> Report:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="T = 300, 2 seeds (no target)")
    p.add_argument("--horizons", type=int, nargs="+", default=[2000])
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--epsilon", type=float, default=1.0)
    p.add_argument("--data", default=None, help=f"path to {DATA}")
    args = p.parse_args(argv)
    if args.quick:
        args.horizons, args.seeds = [300], 2
    rep = Report("online_adaptive")
    path = Path(args.data) if args.data else default_data()
    if not path.is_file():
        rep.print_section(f"\nAdaptive-adversary learner on the Uber stream: skipped ({DATA} "
                          f"not found at {path.name}; pass --data)")
        return rep
    build = uber_stream_builder(load_uber(path))
    rows = []
    for T in args.horizons:
        got: dict[str, list[float]] = {name: [] for name in LEARNERS}
        secs: dict[str, list[float]] = {name: [] for name in LEARNERS}
        refs = []
        for s in range(args.seeds):
            inst = build(T, np.random.default_rng(np.random.SeedSequence([T, s])))
            refs.append(references(inst, T))
            for name, make in LEARNERS.items():
                t0 = time.perf_counter()
                tr = run(make(inst.n, T, args.epsilon, s), FunctionStream(inst.functions),
                         comparator=None, progress=False)
                secs[name].append(time.perf_counter() - t0)
                got[name].append(float(np.mean(tr.values)))
        g, r = np.mean(refs, axis=0)
        for name in LEARNERS:
            v = np.array(got[name])
            rows.append((name, T, v.mean(), v.std(ddof=1) if v.size > 1 else 0.0, g, r,
                         float(np.mean(secs[name]))))
        if not args.quick:
            rep.targets.append(Target(
                f"online_adaptive PrivateTreeExperts above FIDP: reward per round at T={T}, "
                f"epsilon={args.epsilon:g} (mean of {args.seeds} seeds; bound = FIDP's mean)",
                float(np.mean(got["PrivateTreeExperts"])), float(np.mean(got["FIDP"])),
                higher_is_better=True))
    head = (f"{'learner':<22}{'T':>7}{'reward/round':>14}{'sd':>8}{'greedy':>9}{'random':>9}"
            f"{'s/run':>8}")
    lines = [head, "-" * len(head)]
    for name, T, mean, sd, g, r, sec in rows:
        lines.append(f"{name:<22}{T:>7}{mean:14.4f}{sd:8.4f}{g:9.4f}{r:9.4f}{sec:8.1f}")
    lines.append(f"(epsilon = {args.epsilon:g}, delta = {DELTA:g}, k = {K}, {args.seeds} seeds "
                 "per T, one stream per (T, seed) shared by the learners)")
    rep.print_section("\nFull-information learners on the Uber stream, reward per round\n"
                      + "\n".join(lines))
    return rep


if __name__ == "__main__":
    for t in main().targets:
        print(t.line())
