"""The reader of private tables against ``numpy.loadtxt``, without pyarrow, in one run.

    python benchmarks/bench_reader.py            # 10^6 rows x 3 numeric columns
    python benchmarks/bench_reader.py --quick    # 10^5 rows

One CSV file of ``N`` rows (a header, then three numeric columns written with six decimals) is
read by each case in a fresh subprocess in which ``import pyarrow`` fails, so no case can use it:

* ``numpy.loadtxt(path, delimiter=",", skiprows=1)``, the floor;
* ``dpsubmod.datasets.records.as_table(path)``, the one reader (what ``dpsubmod select``, the
  tasks layer and the estimators read files with);
* ``dpsubmod.datasets.load_csv(path)``, the strict loader built on it;
* one full pass of ``dpsubmod.datasets.scan_records(path, ..., chunk_rows=65536)``, the chunked
  mode (the same engine, one chunk at a time).

Each subprocess imports numpy and dpsubmod first, then measures the CPU time (user + system,
``time.process_time``) of the read alone and its peak memory: the peak resident set size during
the read (``resource.getrusage(...).ru_maxrss``) minus the resident set size just before it.
Cases are interleaved in rounds; each ratio to ``loadtxt`` is formed within a round and
reported as the median with the min-max spread. Targets (issue: reading 10^6 numeric rows
without pyarrow): at most 2 x the time and 3 x the memory of ``loadtxt``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _harness import Report, Target  # noqa: E402

_CHILD = r"""
import sys
sys.modules["pyarrow"] = None  # no case may use pyarrow
import json, resource, time
import numpy as np
import dpsubmod.datasets.records as records
from dpsubmod.datasets import load_csv, scan_records

case, path = sys.argv[1], sys.argv[2]


def rss_kib():
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])


def run():
    if case == "loadtxt":
        return np.loadtxt(path, delimiter=",", skiprows=1)
    if case == "as_table":
        return records.as_table(path)
    if case == "load_csv":
        return load_csv(path)
    n = 0
    for X in scan_records(path, ["a", "b", "c"], chunk_rows=65536).chunks():
        n += X.shape[0]
    return n


before = rss_kib()
t = time.process_time()
out = run()
cpu = time.process_time() - t
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"cpu": cpu, "mem_mib": (peak - before) / 1024}))
"""

CASES = ("loadtxt", "as_table", "load_csv", "scan_records")


def _write(path: Path, n: int) -> None:
    rng = np.random.default_rng(0)
    X = rng.random((n, 3)) * [0.3, 0.3, 100] + [40.6, -74.1, 0]
    np.savetxt(path, X, delimiter=",", fmt="%.6f", header="a,b,c", comments="")


def _measure(case: str, path: Path) -> dict:
    out = subprocess.run([sys.executable, "-c", _CHILD, case, str(path)], check=True,
                         capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> Report:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args(argv)
    n = 10 ** 5 if args.quick else 10 ** 6
    rep = Report(f"Reading {n:,} numeric rows without pyarrow")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "rows.csv"
        _write(path, n)
        rounds = [{c: _measure(c, path) for c in CASES} for _ in range(args.rounds)]
    lines = [rep.title, f"{'case':<14}{'CPU s':>9}{'x loadtxt':>22}{'memory MiB':>12}"
             f"{'x loadtxt':>22}"]
    for c in CASES:
        cpu = [r[c]["cpu"] for r in rounds]
        mem = [r[c]["mem_mib"] for r in rounds]
        tr = [r[c]["cpu"] / r["loadtxt"]["cpu"] for r in rounds]
        mr = [r[c]["mem_mib"] / max(r["loadtxt"]["mem_mib"], 1e-9) for r in rounds]
        lines.append(f"{c:<14}{statistics.median(cpu):>9.2f}"
                     f"{statistics.median(tr):>9.2f} [{min(tr):.2f}-{max(tr):.2f}]"
                     f"{statistics.median(mem):>12.1f}"
                     f"{statistics.median(mr):>9.2f} [{min(mr):.2f}-{max(mr):.2f}]")
        if c in ("as_table", "load_csv"):
            rep.targets.append(Target(f"reader {c}: CPU time / loadtxt ({n:,} rows)",
                                      statistics.median(tr), 2.0))
            rep.targets.append(Target(f"reader {c}: peak memory / loadtxt ({n:,} rows)",
                                      statistics.median(mr), 3.0))
    table = "\n".join(lines)
    rep.tables.append(table)
    print(table)
    for t in rep.targets:
        print(t.line())
    return rep


if __name__ == "__main__":
    main()
