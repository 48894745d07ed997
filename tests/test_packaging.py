"""What a package needs beyond its code: a licence, typing marker, one version, an entry point
for ``python -m``, shipped data that exists, honest extras, and a light core import."""

from __future__ import annotations

import importlib.metadata
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import dpsubmod

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = Path(dpsubmod.__file__).resolve().parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_license_is_the_bsd_3_clause_the_metadata_names():
    text = (ROOT / "LICENSE").read_text()
    assert PYPROJECT["project"]["license"] == "BSD-3-Clause"
    assert text.startswith("BSD 3-Clause License")
    assert "The dpsubmod developers" in text
    assert "Neither the name of the copyright holder" in text


def test_one_version_everywhere():
    v = dpsubmod.__version__
    assert re.fullmatch(r"\d+\.\d+\.\d+([ab]|rc|\.dev)?\d*", v)
    assert "version" in PYPROJECT["project"]["dynamic"]
    assert importlib.metadata.version("dpsubmod") == v
    cff = (ROOT / "CITATION.cff").read_text()
    assert re.search(rf'^version: "{re.escape(v)}"$', cff, flags=re.M)
    changelog = (ROOT / "CHANGELOG.md").read_text()
    assert f"## [{v}]" in changelog


def test_version_flag_and_python_dash_m():
    for cmd in (["-m", "dpsubmod", "--version"], ["-m", "dpsubmod.cli", "--version"]):
        p = subprocess.run([sys.executable, *cmd], capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, p.stderr
        assert p.stdout.strip() == f"dpsubmod {dpsubmod.__version__}"
    p = subprocess.run([sys.executable, "-m", "dpsubmod", "--help"], capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 0 and "demo" in p.stdout and "audit" in p.stdout


def test_package_data_exists_and_is_shipped():
    patterns = PYPROJECT["tool"]["setuptools"]["package-data"]["dpsubmod"]
    for pattern in patterns:
        assert list(PACKAGE.glob(pattern)), f"package-data {pattern!r} matches no file"
    assert (PACKAGE / "py.typed").is_file()
    shipped = sorted(p.name for p in (PACKAGE / "experiments" / "examples").glob("*.toml"))
    assert shipped == sorted(p.name for p in (ROOT / "examples").glob("*.toml"))


def test_every_declared_dependency_is_used_and_floors_are_pinned():
    deps = PYPROJECT["project"]["dependencies"]
    extras = PYPROJECT["project"]["optional-dependencies"]
    names = [re.split(r"[<>=!~\[ ;]", d, maxsplit=1)[0].lower()
             for d in deps + [d for v in extras.values() for d in v]]
    assert "psutil" not in names
    for spec in deps + [d for v in extras.values() for d in v]:
        assert ">=" in spec, f"{spec!r} declares no floor"
    # the core is light: the parts only some users need are extras, each on its own
    core = {re.split(r"[<>=!~\[ ;]", d, maxsplit=1)[0].lower() for d in deps}
    assert core == {"numpy", "scipy", "networkx", "filelock", "tqdm"}
    assert [d.split(">=")[0] for d in extras["parquet"]] == ["pyarrow"]
    assert [d.split(">=")[0] for d in extras["parallel"]] == ["joblib"]
    assert {d.split(">=")[0] for d in extras["distributed"]} == {"dask", "distributed"}


def test_importing_the_package_loads_no_optional_dependency():
    code = ("import sys, dpsubmod, dpsubmod.cli, dpsubmod.experiments.sweep; "
            "print(sorted(m for m in ('matplotlib', 'pyarrow', 'dask', 'distributed', 'joblib', "
            "'sklearn', 'opendp', 'pandas') if m in sys.modules))")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "[]"
