"""Real data at scale: ``dpsubmod select`` on 10^6 and 10^7 rows, chunked and on Dask, side by
side with a numpy floor measured in the same run.

    python benchmarks/bench_scale.py            # 10^6 and 10^7 rows (a few minutes on 2 cores)
    python benchmarks/bench_scale.py --quick    # 10^5 and 10^6 rows
    python benchmarks/bench_scale.py --cases a  # only (a)

Cases, all facility location on ride-like records (a mixture of Gaussian hot spots around
Manhattan) with 400 public grid candidates (20 x 20 on lat 40.6-40.9, lon -74.1--73.8), the
default bandwidth (the grid spacing) and k = 10:

(a) ``dpsubmod select rides.csv ...`` end to end in a subprocess (start-up, CSV parse, build,
    greedy, release file): wall time and peak resident memory (``/usr/bin/time``). Targets:
    at most 4 s and 1 GB.
(b) the same on 10^7 rows with ``--chunk-rows`` from Parquet (the file re-read on every step).
    Target: at most 2 GB.
(c) (a) on a 2-worker Dask LocalCluster (``--scheduler``): the same selection as (a) at the
    same seed, its time and each worker's peak memory.

The floor is the fair numpy floor of the same work, run like (a) as a fresh subprocess timed
by ``/usr/bin/time``: import numpy and pyarrow, read the CSV with ``pyarrow.csv``, then the
greedy with the grid's separable kernel (a record's Gaussian similarity to grid cell (u, v) is
``ex[u] * ey[v]``, 20 + 20 exponentials per record) and incremental gains (the gains of all
candidates are kept, and after each step only the records whose best similarity rose are
recomputed and their change subtracted), float32 similarities and float64 sums. It follows the
same sequence as the release of (a) (the items are read from (a)'s output), so both do the
work of the same greedy path; no validation, no privacy, no ledger. The ratio (a) / floor is
formed within a round, in CPU time (user + system) and in wall time, at every size of (a),
including 10^5 rows. The floor at 10^7 is 10 times the one measured at 10^6. The growth
exponent of time in N is the least-squares slope of log time against log N over the (a) sizes.

The start-up line is a subprocess that only imports what ``select`` imports, beside one that
imports only numpy and pyarrow's CSV reader: the part of (a) before any record is read
(``bench_import.py`` measures it in detail). On a shared machine wall time depends on the
load (printed at the start and the end); CPU time (user + system) is the fairer figure there.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

BOUNDS = {"lat": (40.6, 40.9), "lon": (-74.1, -73.8)}
GRID = (20, 20)
K = 10
SPOTS = np.array([[40.758, -73.985], [40.713, -74.006], [40.730, -73.99], [40.78, -73.96],
                  [40.645, -73.78], [40.77, -73.87], [40.69, -73.98]])
WEIGHTS = np.array([0.3, 0.2, 0.15, 0.15, 0.05, 0.05, 0.1])


def rides(n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    spot = rng.choice(len(SPOTS), size=n, p=WEIGHTS)
    return SPOTS[spot] + 0.015 * rng.standard_normal((n, 2))


def write(path: Path, X: np.ndarray) -> None:
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    tab = pa.table({"lat": X[:, 0], "lon": X[:, 1]})
    if path.suffix == ".parquet":
        pq.write_table(tab, path)
    else:
        pacsv.write_csv(tab, path)


def select_cmd(data: Path, out: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "dpsubmod.cli", "select", str(data), "--task",
            "facility-location", "--grid", f"{GRID[0]}x{GRID[1]}",
            "--bounds", "lat={},{}".format(*BOUNDS["lat"]),
            "--bounds", "lon={},{}".format(*BOUNDS["lon"]), "--k", str(K), "--epsilon", "1",
            "--backend", "numpy", "--seed", "0", "--out", str(out), *extra]


CPU: dict[str, list[float]] = {}


def timed(cmd: list[str], label: str = "") -> tuple[float, float]:
    """(wall seconds, peak RSS in MB) of a command, measured by /usr/bin/time; its CPU seconds
    (user + system) are kept in ``CPU[label]``."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as fh:
        t0 = time.perf_counter()
        p = subprocess.run(["/usr/bin/time", "-f", "%M %U %S", "-o", fh.name, *cmd],
                           capture_output=True, text=True)
        wall = time.perf_counter() - t0
        if p.returncode != 0:
            raise RuntimeError(p.stderr)
        rss, user, system = fh.read().strip().splitlines()[-1].split()
        CPU.setdefault(label, []).append(float(user) + float(system))
        return wall, int(rss) / 1024


#: What ``dpsubmod select`` imports, and the numpy and pyarrow it needs at the least.
IMPORTS = [sys.executable, "-c", "import dpsubmod.cli.select, dpsubmod.tasks, dpsubmod.offline"]
IMPORT_FLOOR = [sys.executable, "-c", "import numpy, pyarrow.csv"]


def load() -> str:
    return "load average " + " ".join(f"{x:.1f}" for x in os.getloadavg()) + \
        f" (1, 5, 15 min) on {os.cpu_count()} cores"


#: The fair floor (see the docstring): argv = CSV path, JSON file with the release.
FLOOR = r"""
import json, sys
import numpy as np
import pyarrow.csv as pacsv

lat0, lat1, lon0, lon1 = (float(v) for v in sys.argv[3:7])
rows, cols = int(sys.argv[7]), int(sys.argv[8])
tab = pacsv.read_csv(sys.argv[1])
P = np.column_stack([tab.column("lat").to_numpy(), tab.column("lon").to_numpy()])
P = P.astype(np.float32)
seq = json.load(open(sys.argv[2]))["selection"]
h = (lat1 - lat0) / cols
inv = np.float32(0.5 / h / h)
# candidate j = v * cols + u sits at (lat centre u, lon centre v), as grid_candidates orders them
a = (lat0 + (np.arange(cols) + 0.5) * (lat1 - lat0) / cols).astype(np.float32)
b = (lon0 + (np.arange(rows) + 0.5) * (lon1 - lon0) / rows).astype(np.float32)
ex = np.exp(-inv * (P[:, 0:1] - a) ** 2)
ey = np.exp(-inv * (P[:, 1:2] - b) ** 2)
n, B = rows * cols, 8192
best = np.zeros(len(P), dtype=np.float32)
gains = np.zeros(n)
for s in range(0, len(P), B):
    gains += (ey[s:s + B, :, None] * ex[s:s + B, None, :]).reshape(-1, n).sum(0, dtype=np.float64)
for j in seq:
    col = ex[:, j % cols] * ey[:, j // cols]
    rows = np.flatnonzero(col > best)
    for s in range(0, len(rows), B):
        r = rows[s:s + B]
        S = (ey[r, :, None] * ex[r, None, :]).reshape(-1, n)
        old = np.maximum(S - best[r, None], 0).sum(0, dtype=np.float64)
        new = np.maximum(S - col[r, None], 0).sum(0, dtype=np.float64)
        gains -= old - new
    best[rows] = col[rows]
"""


def floor_cmd(data: Path, release: Path) -> list[str]:
    """The fair floor (see the docstring) on the CSV of (a), following its release."""
    return [sys.executable, "-c", FLOOR, str(data), str(release), *map(str, BOUNDS["lat"]),
            *map(str, BOUNDS["lon"]), str(GRID[0]), str(GRID[1])]


def dask_run(data: Path, workers: int = 2) -> tuple[float, list[int], list[float]]:
    from distributed import Client, LocalCluster

    from dpsubmod.tasks import build_constraint, build_task, private_select

    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                           dashboard_address=None, silence_logs=50)
    client = Client(cluster)
    try:
        t0 = time.perf_counter()
        task = build_task("facility-location", str(data), grid=GRID, bounds=BOUNDS,
                          scheduler=client)
        rel = private_select(task, build_constraint(task, k=K), epsilon=1.0,
                             backend="numpy", rng=0)
        wall = time.perf_counter() - t0

        def peak_mb() -> float:
            with open("/proc/self/status") as fh:
                for line in fh:
                    if line.startswith("VmHWM:"):
                        return int(line.split()[1]) / 1024
            return math.nan

        mem = list(client.run(peak_mb).values())
        return wall, list(rel.selection), mem
    finally:
        client.close()
        cluster.close()


def spread(xs: list[float]) -> str:
    return f"{statistics.median(xs):.2f} [{min(xs):.2f}, {max(xs):.2f}]"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="10^5 and 10^6 rows")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--no-dask", action="store_true")
    p.add_argument("--cases", default="abc",
                   help="which cases to run, any of a, b, c (b and c need a); default abc")
    args = p.parse_args(argv)
    cases = set(args.cases)
    if not cases <= set("abc") or "a" not in cases:
        p.error("--cases takes letters from 'abc' and must include a (b and c compare to it)")
    big, huge = (10 ** 5, 10 ** 6) if args.quick else (10 ** 6, 10 ** 7)
    sizes = sorted({10 ** 5, big // 4, big // 2, big})
    tmp = Path(tempfile.mkdtemp(prefix="dpsubmod-bench-"))
    print(f"data in {tmp}; {load()}")
    X = rides(huge if "b" in cases else big)
    for n in sizes:
        write(tmp / f"rides{n}.csv", X[:n])
    if "b" in cases:
        write(tmp / f"rides{huge}.parquet", X)
    out = tmp / "release.json"

    res_a: dict[int, list[tuple[float, float]]] = {n: [] for n in sizes}
    fl_wall: dict[int, list[float]] = {n: [] for n in sizes}
    starts: list[float] = []
    for r in range(args.rounds):
        starts.append(timed(IMPORTS, "import")[0])
        timed(IMPORT_FLOOR, "import floor")
        for n in sizes:
            res_a[n].append(timed(select_cmd(tmp / f"rides{n}.csv", out), f"a{n}"))
            fl_wall[n].append(timed(floor_cmd(tmp / f"rides{n}.csv", out), f"floor{n}")[0])
        sel_a = json.loads(out.read_text())["selection"]
        print(f"round {r + 1}: (a) {res_a[big][-1][0]:.2f} s, floor {fl_wall[big][-1]:.2f} s "
              f"(wall, {big:.0e} rows)")
    floors = fl_wall[big]
    ratios = [t / f for (t, _), f in zip(res_a[big], floors)]
    if "b" in cases:
        t_b, m_b = timed(select_cmd(tmp / f"rides{huge}.parquet", out, "--chunk-rows",
                                    "262144"), "b")
    fl_huge = statistics.median(floors) * huge / big

    print(f"\n(a) dpsubmod select, {big:.0e} rows x {GRID[0] * GRID[1]} candidates, k={K}, "
          "end to end")
    t_a = [t for t, _ in res_a[big]]
    m_a = [m for _, m in res_a[big]]
    print(f"    time {spread(t_a)} s (target <= 4 s: "
          f"{'PASS' if statistics.median(t_a) <= 4 else 'MISS'}), peak memory "
          f"{max(m_a):.0f} MB (target <= 1024 MB: {'PASS' if max(m_a) <= 1024 else 'MISS'})")
    print(f"    CPU time (user + system) {spread(CPU[f'a{big}'])} s; fair floor "
          f"{spread(floors)} s wall; ratio of wall times (a) / floor {spread(ratios)}")
    for n, target in ((10 ** 5, 1.0), (10 ** 6, 0.7)):
        if n in sizes:
            cpu_ratio = [c / f for c, f in zip(CPU[f"a{n}"], CPU[f"floor{n}"])]
            print(f"    N={n:.0e}: CPU (a) {spread(CPU[f'a{n}'])} s, fair floor "
                  f"{spread(CPU[f'floor{n}'])} s; ratio of CPU times (a) / floor "
                  f"{spread(cpu_ratio)} (target <= {target}: "
                  f"{'PASS' if statistics.median(cpu_ratio) <= target else 'MISS'})")
    print(f"    start-up (imports only): time {spread(starts)} s, CPU {spread(CPU['import'])} s; "
          f"numpy and pyarrow alone: CPU {spread(CPU['import floor'])} s")
    if "b" in cases:
        print(f"(b) chunked from Parquet, {huge:.0e} rows: time {t_b:.2f} s, peak memory "
              f"{m_b:.0f} MB (target <= 2048 MB: {'PASS' if m_b <= 2048 else 'MISS'}), CPU "
              f"{CPU['b'][0]:.1f} s; floor "
              f"(10 x the {big:.0e} floor) {fl_huge:.2f} s, ratio {t_b / fl_huge:.2f}")
    if "c" in cases and not args.no_dask:
        t_c, sel_c, mem_c = dask_run(tmp / f"rides{big}.csv")
        print(f"(c) 2-worker LocalCluster, {big:.0e} rows: time {t_c:.2f} s (ratio to (a) "
              f"{t_c / statistics.median(t_a):.2f}), same selection as (a): "
              f"{sel_c == sel_a}, peak memory per worker "
              + ", ".join(f"{m:.0f} MB" for m in mem_c))
    med = [statistics.median([t for t, _ in res_a[n]]) for n in sizes]
    slope = np.polyfit(np.log(sizes), np.log(med), 1)[0]
    print("growth of (a)'s time in N: " + ", ".join(f"N={n:.1e}: {t:.2f} s"
                                                    for n, t in zip(sizes, med))
          + f"; exponent {slope:.2f}")
    if "b" in cases:
        print(f"growth from (a) at {big:.0e} to (b) at {huge:.0e}: exponent "
              f"{math.log(t_b / med[-1]) / math.log(huge / big):.2f}")
    print(f"at the end: {load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
