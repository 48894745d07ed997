"""The CI helpers: one tested floor per package (.ci/floors.py) and a smoke import for every
extra (.ci/smoke_extras.py)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from scripts import load_script

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def script(name):
    return load_script(f".ci/{name}.py")


def test_every_package_has_one_floor_and_scikit_learn_is_among_the_pinned():
    floors = script("floors")
    pins = floors.floors(PROJECT, [e for e in PROJECT["optional-dependencies"]
                                   if e not in ("bench", "docs")], {"ruff"})
    declared = {s.split(">=")[1] for group in ("data", "sklearn", "test")
                for s in PROJECT["optional-dependencies"][group] if s.startswith("scikit-learn")}
    assert declared == {pins["scikit-learn"]}  # the one floor is the one the floors step pins


def test_two_floors_for_one_package_are_refused():
    floors = script("floors")
    project = {"dependencies": ["numpy>=1.26"],
               "optional-dependencies": {"a": ["scikit-learn>=1.4"], "b": ["scikit_learn>=1.6"]}}
    with pytest.raises(SystemExit, match="scikit-learn is declared >= 1.4 and >= 1.6"):
        floors.floors(project, ["a"], set())


def test_every_extra_has_a_smoke_import_and_a_broken_one_is_reported(monkeypatch):
    smoke = script("smoke_extras")
    assert set(PROJECT["optional-dependencies"]) == set(smoke.SMOKE)
    assert smoke.main(["--list"]) == 0
    assert smoke.smoke(["pandas", "parallel"]) == []  # installed with [test]
    monkeypatch.setitem(smoke.SMOKE, "pandas", ("pandas", "no_such_module_xyz"))
    failed = smoke.smoke(["pandas"])
    assert len(failed) == 1 and "no_such_module_xyz" in failed[0]
