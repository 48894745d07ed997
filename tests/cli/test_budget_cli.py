"""End-to-end: ``dpsubmod budget`` and ``dpsubmod select --budget``, run as a user would."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest


def dpsubmod(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dpsubmod.cli", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=300)


@pytest.fixture
def rides(tmp_path):
    rng = np.random.default_rng(0)
    path = tmp_path / "rides.csv"
    np.savetxt(path, rng.random((300, 2)), delimiter=",", header="lat,lon", comments="")
    return path


def select(data, *extra, out=None):
    args = ["select", str(data), "--task", "facility-location", "--grid", "4x4", "--bounds",
            "lat=0,1", "--bounds", "lon=0,1", "--k", "2", *extra]
    if out is not None:
        args += ["--out", str(out)]
    return dpsubmod(*args)


def test_a_budget_file_bounds_repeated_selections(tmp_path, rides):
    budget = tmp_path / "budget.json"
    p = dpsubmod("budget", "new", str(budget), "--epsilon", "1.0")
    assert p.returncode == 0 and "Created budget.json" in p.stdout
    first = select(rides, "--epsilon", "0.6", "--budget", str(budget), out=tmp_path / "r1.json")
    assert first.returncode == 0, first.stderr
    assert "one more release of at most epsilon 0.4 fits" in first.stdout
    doc = json.loads((tmp_path / "r1.json").read_text())
    assert doc["privacy"]["budget"]["spent_epsilon"] == pytest.approx(0.6)
    before = budget.read_text()
    # the second run does not fit: refused before any noise, one line, exit 2, nothing written
    second = select(rides, "--epsilon", "0.6", "--budget", str(budget), out=tmp_path / "r2.json")
    assert second.returncode == 2
    assert second.stdout == "" and len(second.stderr.strip().splitlines()) == 1
    assert "refuses" in second.stderr and "at most epsilon 0.4" in second.stderr
    assert "Traceback" not in second.stderr
    assert not (tmp_path / "r2.json").exists() and budget.read_text() == before
    # what is left still fits
    third = select(rides, "--epsilon", "0.4", "--budget", str(budget))
    assert third.returncode == 0, third.stderr
    show = dpsubmod("budget", "show", str(budget))
    assert show.returncode == 0
    assert "releases (2)" in show.stdout and "data: rides.csv" in show.stdout
    assert "spent: epsilon 1" in show.stdout
    releases = json.loads(budget.read_text())["releases"]
    assert [r["epsilon"] for r in releases] == [0.6, 0.4]
    assert all(r["data_name"] == "rides.csv" and len(r["data_sha256"]) == 64 for r in releases)


def test_select_without_a_budget_says_nothing_bounds_repeated_runs(rides):
    p = select(rides, "--epsilon", "0.5")
    assert p.returncode == 0, p.stderr
    assert "nothing bounds the total over repeated runs on the same data" in p.stdout


def test_a_budget_file_for_other_data_or_damaged_is_refused(tmp_path, rides):
    other = tmp_path / "other.csv"
    other.write_text(rides.read_text() + "0.5,0.5\n")
    budget = tmp_path / "budget.json"
    assert dpsubmod("budget", "new", str(budget), "--epsilon", "1", "--data",
                    str(other)).returncode == 0
    before = budget.read_text()
    p = select(rides, "--epsilon", "0.5", "--budget", str(budget), out=tmp_path / "r.json")
    assert p.returncode == 2 and "protects the data file 'other.csv'" in p.stderr
    assert budget.read_text() == before and not (tmp_path / "r.json").exists()
    damaged = tmp_path / "damaged.json"
    damaged.write_text(before[: len(before) // 2])
    p = select(rides, "--epsilon", "0.5", "--budget", str(damaged))
    assert p.returncode == 2 and "corrupt or truncated" in p.stderr
    assert damaged.read_text() == before[: len(before) // 2]
    p = dpsubmod("budget", "new", str(budget), "--epsilon", "1")
    assert p.returncode == 2 and "already exists" in p.stderr
    p = dpsubmod("budget", "new", str(tmp_path / "x.json"), "--epsilon", "-1")
    assert p.returncode == 2 and "epsilon" in p.stderr


def test_advanced_budget_file_needs_delta(tmp_path):
    p = dpsubmod("budget", "new", str(tmp_path / "b.json"), "--epsilon", "1",
                 "--composition", "advanced")
    assert p.returncode == 2 and "delta > 0" in p.stderr
    p = dpsubmod("budget", "new", str(tmp_path / "b.json"), "--epsilon", "1", "--delta", "1e-6",
                 "--composition", "advanced")
    assert p.returncode == 0 and "Whitehouse" in p.stdout
