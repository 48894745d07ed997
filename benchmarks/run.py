"""Run every benchmark at its default size: ``python benchmarks/run.py``."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

BENCHMARKS = ["bench_facility_location"]


def main() -> None:
    sys.path.insert(0, str(Path(__file__).parent))
    for name in BENCHMARKS:
        print(f"== {name}")
        importlib.import_module(name).main([])


if __name__ == "__main__":
    main()
