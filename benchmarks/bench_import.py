"""Start-up cost: the CPU time of ``import dpsubmod`` plus every module ``dpsubmod select``
loads, against importing numpy and pyarrow alone, measured in the same run.

    python benchmarks/bench_import.py             # 7 interleaved rounds
    python benchmarks/bench_import.py --rounds 3

First one subprocess runs ``dpsubmod select`` (facility location on a 20 x 20 public grid,
k = 10, the numpy backend) on a small CSV and lists every module that run imported beyond those
of a bare interpreter: the select path, including the modules its handlers import on the way,
not only what ``import dpsubmod.cli`` loads. Then each round runs, each in a fresh
subprocess:

* the floor: ``import numpy, pyarrow``;
* ``import dpsubmod``;
* the select path: ``import dpsubmod`` and then every module of that list, in the order the run
  loaded them;
* the select path of the previous benchmark, ``import dpsubmod.cli.select, dpsubmod.tasks,
  dpsubmod.offline``;
* the parser: ``import dpsubmod`` and every module ``dpsubmod --help`` loads (listed the same
  way), what every command pays before its handler runs.

Each subprocess measures its own CPU time (``time.process_time``, user + system) around the
imports only, so the interpreter's start-up is left out on both sides. The ratio to the floor
is formed within a round and reported as the median over rounds with its min-max spread.
Target: the select path at most 2 x the floor. Also printed: whether the select path loads
scipy, networkx, continuous greedy, the privacy filters or the other tasks' builders.
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

TARGET = 2.0

_LIST_SELECT = r"""
import json, sys
before = set(sys.modules)
from dpsubmod.cli import main
status = main(sys.argv[2:])
assert status == 0, status
# modules an extension registers by itself (Cython's cython_runtime) have no spec to import
print(json.dumps([m for m in sys.modules if m not in before and m != "__main__"
                  and getattr(sys.modules[m], "__spec__", None) is not None]))
"""

_LIST_HELP = r"""
import contextlib, io, json, sys
before = set(sys.modules)
from dpsubmod.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    try:
        main(["--help"])
    except SystemExit:
        pass
print(json.dumps([m for m in sys.modules if m not in before and m != "__main__"
                  and getattr(sys.modules[m], "__spec__", None) is not None]))
"""

_TIME = r"""
import importlib, json, sys, time
names = json.loads(sys.argv[1])
c0 = time.process_time()
for name in names:
    importlib.import_module(name)
print(time.process_time() - c0)
"""


def select_args(data: Path, out: Path) -> list[str]:
    return ["select", str(data), "--task", "facility-location", "--grid", "20x20",
            "--bounds", "lat=40.6,40.9", "--bounds", "lon=-74.1,-73.8", "--k", "10",
            "--epsilon", "1", "--backend", "numpy", "--seed", "0", "--out", str(out)]


def select_modules(tmp: Path) -> list[str]:
    """The modules a ``dpsubmod select`` run imports, in the order it imported them."""
    rng = np.random.default_rng(0)
    X = rng.uniform([40.6, -74.1], [40.9, -73.8], size=(300, 2))
    data = tmp / "records.csv"
    np.savetxt(data, X, delimiter=",", header="lat,lon", comments="")
    return _listed(_LIST_SELECT, *select_args(data, tmp / "release.json"))


def help_modules() -> list[str]:
    """The modules ``dpsubmod --help`` imports, in the order it imported them."""
    return _listed(_LIST_HELP)


def _listed(script: str, *args: str) -> list[str]:
    p = subprocess.run([sys.executable, "-c", script, "-", *args],
                       capture_output=True, text=True, check=True)
    names = json.loads(p.stdout.strip().splitlines()[-1])
    # private modules of the standard library and extension internals load with their parents
    return [n for n in names if not n.startswith("_") and ".libs" not in n]


def cpu(names: list[str]) -> float:
    p = subprocess.run([sys.executable, "-c", _TIME, json.dumps(names)],
                       capture_output=True, text=True, check=True)
    return float(p.stdout.strip())


def spread(xs: list[float], fmt: str = "{:.2f}") -> str:
    return (fmt + " [" + fmt + ", " + fmt + "]").format(statistics.median(xs), min(xs), max(xs))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=7)
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="dpsubmod-bench-") as tmp:
        path = select_modules(Path(tmp))
    parser = help_modules()
    cases = {
        "numpy + pyarrow (floor)": ["numpy", "pyarrow"],
        "import dpsubmod": ["dpsubmod"],
        "dpsubmod + the select path": ["dpsubmod", *path],
        "previous list (cli.select, tasks, offline)": ["dpsubmod.cli.select", "dpsubmod.tasks",
                                                       "dpsubmod.offline"],
        "the parser (dpsubmod --help)": ["dpsubmod", *parser],
    }
    times: dict[str, list[float]] = {c: [] for c in cases}
    for _ in range(args.rounds):
        for case, names in cases.items():
            times[case].append(cpu(names))
    floor = times["numpy + pyarrow (floor)"]
    print(f"CPU time of the imports, median [min, max] of {args.rounds} interleaved rounds, "
          "each in a fresh subprocess")
    print(f"{'case':<46} {'CPU s':>22} {'/ floor':>22}")
    for case in cases:
        ratio = [t / f for t, f in zip(times[case], floor)]
        print(f"{case:<46} {spread(times[case], '{:.3f}'):>22} {spread(ratio):>22}")
    med = statistics.median(t / f for t, f in zip(times["dpsubmod + the select path"], floor))
    print(f"target: select path <= {TARGET:g} x the floor: {'PASS' if med <= TARGET else 'MISS'} "
          f"({med:.2f})")
    heavy = {"scipy": "scipy", "networkx": "networkx",
             "continuous greedy": "dpsubmod.offline.continuous.continuous_greedy",
             "privacy filters": "dpsubmod.privacy.filters",
             "scipy.optimize": "scipy.optimize",
             "the coverage task": "dpsubmod.tasks.coverage",
             "the feature-selection task": "dpsubmod.tasks.feature_selection"}
    print("the select path loads: " + ", ".join(
        f"{label} {'yes' if mod in path else 'no'}" for label, mod in heavy.items()))
    print(f"dpsubmod modules on the select path: {sum(m.startswith('dpsubmod') for m in path)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
