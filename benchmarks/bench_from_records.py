"""``FacilityLocation.from_records`` against ``FacilityLocation.from_chunks`` on the same
records: build the objective and run the private greedy (k = 10, epsilon = 1, the numpy
backend, seed 0), in CPU time, interleaved rounds in one process.

    python benchmarks/bench_from_records.py               # 3 x 10^5 records, 400 candidates
    python benchmarks/bench_from_records.py --n 100000 --rounds 5

Records: ride-like points (``bench_scale.rides``); candidates: the 20 x 20 public grid of
``bench_scale``; Gaussian similarity with the grid spacing as bandwidth. ``from_records`` builds
the record objective over the points in memory (one block, no N x n matrix); ``from_chunks``
reads them in chunks of 2**14 rows; both keep O(N) state and recompute the changed records each
step. Both give the same selection (checked). The
ratio from_records / from_chunks is formed within a round and reported as the median with its
min-max spread. Target: at most 1.5.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_scale import BOUNDS, GRID, K, rides  # noqa: E402
from dpsubmod import maximize  # noqa: E402
from dpsubmod.datasets import grid_candidates  # noqa: E402
from dpsubmod.functions import FacilityLocation  # noqa: E402

TARGET = 1.5


def run(build, P, C, h):
    c0 = time.process_time()
    f = build(P, C, bandwidth=h)
    res = maximize(f, K, method="private_greedy", epsilon=1.0, rng=0, backend="numpy")
    return time.process_time() - c0, list(map(int, res.selection))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", type=int, default=300_000)
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args(argv)
    P = rides(args.n)
    C = grid_candidates(GRID[0], GRID[1], (*BOUNDS["lat"], *BOUNDS["lon"]))
    h = (BOUNDS["lat"][1] - BOUNDS["lat"][0]) / GRID[1]
    run(FacilityLocation.from_records, P[:1000], C, h)  # warm-up
    run(FacilityLocation.from_chunks, P[:1000], C, h)
    rec, chk, same = [], [], True
    for _ in range(args.rounds):
        t1, s1 = run(FacilityLocation.from_records, P, C, h)
        t2, s2 = run(FacilityLocation.from_chunks, P, C, h)
        rec.append(t1)
        chk.append(t2)
        same &= s1 == s2
    ratio = [a / b for a, b in zip(rec, chk)]
    med = statistics.median(ratio)
    print(f"N={args.n}, {len(C)} candidates, k={K}, private greedy (CPU seconds, median [min, "
          f"max] of {args.rounds} rounds)")
    print(f"  from_records {statistics.median(rec):.2f} [{min(rec):.2f}, {max(rec):.2f}]")
    print(f"  from_chunks  {statistics.median(chk):.2f} [{min(chk):.2f}, {max(chk):.2f}]")
    print(f"  ratio from_records / from_chunks {med:.2f} [{min(ratio):.2f}, {max(ratio):.2f}] "
          f"(target <= {TARGET}: {'PASS' if med <= TARGET else 'MISS'}); same selection: {same}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
