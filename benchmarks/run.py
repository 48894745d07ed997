"""Run every benchmark and print a summary of targets and scaling exponents.

    python benchmarks/run.py            # full sizes (tens of minutes on 2 cores)
    python benchmarks/run.py --quick    # small smoke version (about a minute)
    python benchmarks/run.py --only coverage online

Each benchmark also runs alone, e.g. ``python benchmarks/bench_coverage.py --help``.
"""

from __future__ import annotations

import argparse
import importlib
import platform
import sys
import time
from pathlib import Path

BENCHMARKS = {
    "facility_location": "bench_facility_location",
    "coverage": "bench_coverage",
    "private_coverage": "bench_private_coverage",
    "continuous_greedy": "bench_continuous_greedy",
    "online": "bench_online",
    "online_iid": "bench_online_iid",
    "secure": "bench_secure",
    "reader": "bench_reader",
}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="small smoke-test sizes")
    p.add_argument("--only", nargs="+", choices=list(BENCHMARKS), default=list(BENCHMARKS))
    args = p.parse_args(argv)
    sys.path.insert(0, str(Path(__file__).parent))
    import numpy as np

    from _harness import MEMORY_METHOD

    print(f"python {platform.python_version()}, numpy {np.__version__}, "
          f"{platform.machine()}, memory measured as {MEMORY_METHOD}"
          f"{' (quick sizes)' if args.quick else ''}")
    reports = []
    t0 = time.perf_counter()
    for key in args.only:
        print(f"\n===== {key}", flush=True)
        mod = importlib.import_module(BENCHMARKS[key])
        reports.append(mod.main(["--quick"] if args.quick else []))
    print("\n===== summary")
    misses = 0
    for rep in reports:
        for t in rep.targets:
            print(t.line())
            misses += t.verdict == "MISS"
    for rep in reports:
        for name, a in rep.exponents.items():
            print(f"exponent  {name}: {a:.2f}")
    print(f"({time.perf_counter() - t0:.0f} s in all; {misses} target(s) missed)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
