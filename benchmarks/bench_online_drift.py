"""The drift-robust options of the i.i.d. learners on a drifting Uber stream: reward per round at
epsilon = 1.

The stream: the riders of the Uber online stream (``bench_online_iid.py``: one rider's
facility-location function per round over the public 4 x 3 grid, bandwidth 0.01, ``k = 3``)
drawn as there, then sorted by latitude, so the riders drift from the south of Manhattan to the
north over the run and the best 3-set changes with them. Read from ``--data``, or from
``../shared/data`` beside the repository root (skipped, and said so, when absent).

Each plain learner plays beside its drift-robust option on the same streams (paired):
``PrivateExploreThenCommit`` against ``restart=T // 8`` (eight periods of explore-then-commit)
and ``PrivateEpochGreedy`` against ``max_epoch=T // 16`` (capped epochs). Printed beside them:
the greedy set in hindsight (one fixed set for the whole drifting run) and a uniform 3-set.

Target: each option earns more than its plain learner (mean over the seeds) at every horizon.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from _harness import Report, Target
from bench_online_iid import DATA, K, default_data, references
from dpsubmod.experiments.online_maximization import (
    drifting_builder,
    load_uber,
    uber_stream_builder,
)
from dpsubmod.online import FunctionStream, PrivateEpochGreedy, PrivateExploreThenCommit, run

PAIRS = {
    "PrivateExploreThenCommit": (
        lambda n, T, eps, s: PrivateExploreThenCommit(n, T, K, epsilon=eps, rng=s),
        lambda n, T, eps, s: PrivateExploreThenCommit(n, T, K, epsilon=eps, restart=T // 8,
                                                      rng=s), "restart=T//8"),
    "PrivateEpochGreedy": (
        lambda n, T, eps, s: PrivateEpochGreedy(n, T, K, epsilon=eps, rng=s),
        lambda n, T, eps, s: PrivateEpochGreedy(n, T, K, epsilon=eps, max_epoch=T // 16,
                                                rng=s), "max_epoch=T//16"),
}


def drifting(build, T: int, rng: np.random.Generator):
    """The instance of ``build`` with its rounds sorted by the rider's latitude (the candidate
    grid's rows run south to north: a rider's nearest row moves north over the run); the
    experiments' ``--dataset uber-drift`` stream."""
    return drifting_builder(build)(T, rng)


def main(argv: list[str] | None = None) -> Report:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="T = 2000, 2 seeds (no targets)")
    p.add_argument("--horizons", type=int, nargs="+", default=[2000, 20000])
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--epsilon", type=float, default=1.0)
    p.add_argument("--learners", nargs="*", default=None, choices=sorted(PAIRS))
    p.add_argument("--data", default=None, help=f"path to {DATA}")
    args = p.parse_args(argv)
    pairs = {name: PAIRS[name] for name in (args.learners or PAIRS)}
    if args.quick:
        args.horizons, args.seeds = [2000], 2
    rep = Report("online_drift")
    path = Path(args.data) if args.data else default_data()
    if not path.is_file():
        rep.print_section(f"\nDrift-robust options on the drifting Uber stream: skipped ({DATA} "
                          f"not found at {path.name}; pass --data)")
        return rep
    build = uber_stream_builder(load_uber(path))
    head = (f"{'learner':<28}{'option':>17}{'T':>7}{'plain':>9}{'option':>9}{'greedy':>9}"
            f"{'random':>9}")
    lines = [head, "-" * len(head)]
    for T in args.horizons:
        got = {name: ([], []) for name in pairs}
        refs = []
        for s in range(args.seeds):
            inst = drifting(build, T, np.random.default_rng(np.random.SeedSequence([T, s])))
            refs.append(references(inst, T))
            for name, (plain, option, _) in pairs.items():
                for i, make in enumerate((plain, option)):
                    tr = run(make(inst.n, T, args.epsilon, s), FunctionStream(inst.functions),
                             comparator=None, progress=False)
                    got[name][i].append(float(np.mean(tr.values)))
        g, r = np.mean(refs, axis=0)
        for name, (plain_v, opt_v) in got.items():
            a, b = float(np.mean(plain_v)), float(np.mean(opt_v))
            lines.append(f"{name:<28}{PAIRS[name][2]:>17}{T:>7}{a:9.4f}{b:9.4f}{g:9.4f}"
                         f"{r:9.4f}")
            if not args.quick:
                rep.targets.append(Target(
                    f"online_drift {name} {PAIRS[name][2]} minus plain, reward per round at "
                    f"T={T} (mean of {args.seeds} seeds)", b - a, 0.0, higher_is_better=True))
    lines.append(f"(epsilon = {args.epsilon:g}, k = {K}; riders sorted south to north; greedy = "
                 "one fixed greedy set in hindsight, random = a uniform 3-set)")
    rep.print_section("\nDrift-robust options on the drifting Uber stream, reward per round\n"
                      + "\n".join(lines))
    return rep


if __name__ == "__main__":
    for t in main().targets:
        print(t.line())
