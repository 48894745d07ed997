"""Import the key modules of every extra pyproject.toml declares, after installing them.

Usage: ``python .ci/smoke_extras.py [EXTRA ...]`` checks the named extras (default: all);
``--list`` prints every extra, comma-separated, for ``pip install ".[...]"``. An extra without
an entry in SMOKE is an error, so a new extra cannot skip its smoke test. Exit status 1 lists
the imports that failed, with the error.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import tomllib
from pathlib import Path

#: extra -> modules that must import once it is installed (its dependencies, and the dpsubmod
#: modules that need them)
SMOKE: dict[str, tuple[str, ...]] = {
    "plot": ("matplotlib.pyplot", "dpsubmod.experiments.plots"),
    "secure": ("opendp.prelude", "dpsubmod.privacy.opendp_engine"),
    "pld": ("dp_accounting", "dpsubmod.privacy.pld"),
    "parallel": ("joblib", "dpsubmod.experiments.sweep"),
    "distributed": ("dask", "distributed", "dask.distributed"),
    "parquet": ("pyarrow", "pyarrow.parquet"),
    "pandas": ("pandas",),
    "data": ("sklearn.datasets", "dpsubmod.datasets.tables"),
    "sklearn": ("sklearn", "dpsubmod.estimators"),
    "bench": ("apricot", "submodlib", "pyarrow"),
    "test": ("pytest", "xdist", "hypothesis", "ruff"),
    "docs": ("mkdocs", "material", "mkdocstrings", "mkdocstrings_handlers.python"),
}

#: beyond importing: the one call that shows an extra is usable, not only importable
CHECKS = {
    "secure": "dpsubmod.privacy.opendp_engine:load(required=True)",
    "data": "dpsubmod.datasets.tables:load_breast_cancer(bins=4)",
}


def extras() -> list[str]:
    root = Path(__file__).resolve().parents[1]
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    return list(project.get("optional-dependencies", {}))


def smoke(names: list[str]) -> list[str]:
    """The failures (``extra: module: error``) of importing each extra's modules."""
    failed = []
    for extra in names:
        for module in SMOKE[extra]:
            try:
                importlib.import_module(module)
            except Exception as exc:  # an ImportError, or a module that breaks on import
                failed.append(f"{extra}: import {module}: {type(exc).__name__}: {exc}")
        if extra in CHECKS:
            where, _, call = CHECKS[extra].partition(":")
            try:
                eval(call, vars(importlib.import_module(where)))  # noqa: S307 - fixed text
            except Exception as exc:
                failed.append(f"{extra}: {CHECKS[extra]}: {type(exc).__name__}: {exc}")
    return failed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("extras", nargs="*", help="extras to check (default: every one)")
    ap.add_argument("--list", action="store_true", help="print the extras, comma-separated")
    args = ap.parse_args(argv)
    declared = extras()
    missing = [e for e in declared if e not in SMOKE]
    if missing:
        print(f"no smoke test for extra(s) {missing}: add them to SMOKE in {__file__}",
              file=sys.stderr)
        return 1
    if args.list:
        print(",".join(declared))
        return 0
    unknown = [e for e in args.extras if e not in declared]
    if unknown:
        print(f"unknown extra(s) {unknown}; pyproject declares {declared}", file=sys.stderr)
        return 1
    failed = smoke(args.extras or declared)
    for line in failed:
        print(line, file=sys.stderr)
    if not failed:
        print(f"smoke imports: {len(args.extras or declared)} extras OK")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
