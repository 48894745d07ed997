"""BatchedPrivateBandit on the Uber online stream: reward per round at epsilon = 1, T = 20,000.

The stream is the one of ``benchmarks/bench_online_iid.py`` (one rider's facility-location
function per round over the public 4 x 3 grid, bandwidth 0.01, values in [0, 1], ``k = 3``;
read from ``--data``, or from ``../shared/data`` beside the repository root; the benchmark says
so and stops when the file is absent). For each seed one stream is drawn and every learner plays
it (paired).

Learners: the batched Streeter-Golovin bandit (:class:`BanditOnlineGreedy` with exploration
``gamma = 0.03``), with batches of 20 rounds, with the shrink its regret bound needs
(``shrink=True``, the default) and without (``shrink=False``: clipped noisy means, no stated
bound); and with batches of 10 rounds and the inner learning rate ``eta = 6``, about five times
its default at ``N = 2000`` (1.2), where the shrink multiplies the feedback by 0.25: the shrunk
feedback then moves the Hedge weights about as much as the unshrunk mean would. The stated
bound is computed at that rate and keeps holding. The three were chosen on seeds 100-103, not
on the benchmark's seeds 0-4. ``--seeds-learners`` adds the seed papers' private bandit
learners on the same streams.

Target (issue 26): above every seed bandit learner at T = 20,000 (BanditDP, NaiveBanditDP and
PresampledBanditDP earned 0.245-0.259 there in the issue's prototypes; the floor is the top of
that range). With ``--seeds-learners`` a second, paired target: above the best of the seed
learners measured on the same streams.
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np

from _harness import Report, Target
from dpsubmod.experiments.online_maximization import load_uber, uber_stream_builder
from dpsubmod.online import (
    BanditDP,
    BanditOnlineGreedy,
    BatchedPrivateBandit,
    FunctionStream,
    NaiveBanditDP,
    PresampledBanditDP,
    run,
)

K = 3
DATA = "uber-apr14-pickups-10k.csv"
SEED_TOP = 0.259


def _batched(shrink: bool, batch: int = 20, eta: float | None = None):
    def make(n: int, T: int, eps: float, s: int) -> BatchedPrivateBandit:
        return BatchedPrivateBandit(BanditOnlineGreedy(n, T, K, gamma=0.03, eta=eta),
                                    epsilon=eps, batch=batch, shrink=shrink, rng=s)
    return make


LEARNERS = {
    "Batched(B=20)": _batched(True),
    "Batched(B=20, shrink=False)": _batched(False),
    "Batched(B=10, eta=6)": _batched(True, 10, 6.0),
}
SEEDS = {
    "BanditDP": lambda n, T, eps, s: BanditDP(n, T, K, epsilon=eps, delta=1e-6, rng=s),
    "NaiveBanditDP": lambda n, T, eps, s: NaiveBanditDP(n, T, K, epsilon=eps, delta=1e-6,
                                                        rng=s),
    "PresampledBanditDP": lambda n, T, eps, s: PresampledBanditDP(n, T, K, epsilon=eps,
                                                                  delta=1e-6, rng=s),
}


def default_data() -> Path:
    return Path(__file__).resolve().parents[1].parent / "shared" / "data" / DATA


def main(argv: list[str] | None = None) -> Report:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="T = 2000, 2 seeds (no targets)")
    p.add_argument("--T", type=int, default=20000)
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--epsilon", type=float, default=1.0)
    p.add_argument("--seeds-learners", action="store_true",
                   help="also run the seed papers' private bandit learners")
    p.add_argument("--data", default=None, help=f"path to {DATA}")
    args = p.parse_args(argv)
    if args.quick:
        args.T, args.seeds = 2000, 2
    rep = Report("online_batched")
    path = Path(args.data) if args.data else default_data()
    if not path.is_file():
        rep.print_section(f"\nBatchedPrivateBandit on the Uber stream: skipped ({DATA} not "
                          f"found at {path.name}; pass --data)")
        return rep
    build = uber_stream_builder(load_uber(path))
    makers = dict(LEARNERS)
    if args.seeds_learners:
        makers.update(SEEDS)
    T = args.T
    got: dict[str, list[float]] = {name: [] for name in makers}
    secs: dict[str, list[float]] = {name: [] for name in makers}
    for s in range(args.seeds):
        inst = build(T, np.random.default_rng(np.random.SeedSequence([T, s])))
        for name, make in makers.items():
            t0 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the seed learners' clipped defaults
                learner = make(inst.n, T, args.epsilon, s)
            tr = run(learner, FunctionStream(inst.functions), comparator=None, progress=False)
            secs[name].append(time.perf_counter() - t0)
            got[name].append(float(np.mean(tr.values)))
    # With the seed learners on the same streams, the paired floor is the best of them.
    paired = max((float(np.mean(got[name])) for name in SEEDS if name in got), default=None)
    head = f"{'learner':<30}{'T':>7}{'reward/round':>14}{'sd':>8}{'min':>8}{'s/run':>8}"
    lines = [head, "-" * len(head)]
    for name in makers:
        v = np.array(got[name])
        lines.append(f"{name:<30}{T:>7}{v.mean():14.4f}"
                     f"{(v.std(ddof=1) if v.size > 1 else 0.0):8.4f}{v.min():8.4f}"
                     f"{np.mean(secs[name]):8.1f}")
        if name in LEARNERS and not args.quick:
            rep.targets.append(Target(
                f"online_batched {name}: reward per round at T={T}, epsilon={args.epsilon:g} "
                f"(mean of {args.seeds} seeds) above the best seed bandit learner",
                float(v.mean()), SEED_TOP, higher_is_better=True))
            if paired is not None:
                rep.targets.append(Target(
                    f"online_batched {name}: above the best seed bandit learner measured on "
                    f"the same {args.seeds} streams", float(v.mean()), paired,
                    higher_is_better=True))
    lines.append(f"(epsilon = {args.epsilon:g}, k = {K}, {args.seeds} seeds, one stream per seed "
                 "shared by the learners; inner BanditOnlineGreedy with gamma = 0.03)")
    rep.print_section("\nBatchedPrivateBandit on the Uber stream, reward per round\n"
                      + "\n".join(lines))
    return rep


if __name__ == "__main__":
    for t in main().targets:
        print(t.line())
