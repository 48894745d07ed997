"""Print the lowest version pyproject.toml allows of each dependency, as pip pins.

Usage: ``python .ci/floors.py [EXTRA ...] [--all-extras-but EXTRA ...] [--skip NAME ...]``.
The pins cover the core dependencies and those of the named extras (or of every extra but
those listed). A package declared in several places (scikit-learn in [data], [sklearn] and
[test]) must declare one floor everywhere: two floors would leave the lower one untested, so
they are refused. CI installs exactly these versions in a second environment and runs the
tests there, so a floor in pyproject.toml is a version the tests have passed with.
"""

from __future__ import annotations

import argparse
import re
import sys
import tomllib
from pathlib import Path

SPEC = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*>=\s*([0-9][0-9.]*)\s*$")


def floors(project: dict, extras: list[str], skip: set[str]) -> dict[str, str]:
    """Package name (normalised) -> its one declared floor (every extra is checked for it)."""
    specs = list(project.get("dependencies", []))
    optional = project.get("optional-dependencies", {})
    check_one_floor(specs + [s for group in optional.values() for s in group])
    unknown = [e for e in extras if e not in optional]
    if unknown:
        raise SystemExit(f"unknown extra(s) {unknown}; pyproject declares {sorted(optional)}")
    for extra in extras:
        specs += optional[extra]
    out: dict[str, str] = {}
    for spec in specs:
        m = SPEC.match(spec.split(";")[0])
        if m is None:
            raise SystemExit(f"{spec!r}: every dependency needs a plain 'name>=version' floor")
        name = re.sub(r"[-_.]+", "-", m.group(1)).lower()
        if name in skip:
            continue
        version = m.group(3)
        if name not in out or _key(version) > _key(out[name]):
            out[name] = version
    return out


def check_one_floor(specs: list[str]) -> None:
    """Refuse a package declared with different floors in different places."""
    seen: dict[str, set[str]] = {}
    for spec in specs:
        m = SPEC.match(spec.split(";")[0])
        if m is not None:
            name = re.sub(r"[-_.]+", "-", m.group(1)).lower()
            seen.setdefault(name, set()).add(m.group(3))
    split = {n: sorted(v, key=_key) for n, v in seen.items() if len(v) > 1}
    if split:
        raise SystemExit("one floor per package: " + "; ".join(
            f"{n} is declared >= {' and >= '.join(v)}" for n, v in sorted(split.items()))
            + ". Declare the same floor in every extra (the tested one).")


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split("."))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("extras", nargs="*", help="extras whose dependencies to pin as well")
    ap.add_argument("--all-extras-but", nargs="*", default=None, metavar="EXTRA",
                    help="pin the dependencies of every extra but these")
    ap.add_argument("--skip", nargs="*", default=[], help="packages to leave unpinned")
    args = ap.parse_args(argv)
    project = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml")
                            .read_text())["project"]
    extras = list(args.extras)
    if args.all_extras_but is not None:
        extras += [e for e in project.get("optional-dependencies", {})
                   if e not in args.all_extras_but and e not in extras]
    for name, version in sorted(floors(project, extras, set(args.skip)).items()):
        print(f"{name}=={version}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
