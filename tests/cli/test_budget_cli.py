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
    p = dpsubmod("budget", "new", str(budget), "--dataset", "rides", "--epsilon", "1.0")
    assert p.returncode == 0 and "Created budget.json for the data set 'rides'" in p.stdout
    first = select(rides, "--epsilon", "0.6", "--budget", str(budget), "--dataset", "rides",
                   out=tmp_path / "r1.json")
    assert first.returncode == 0, first.stderr
    assert "one more release of at most epsilon 0.4 fits" in first.stdout
    doc = json.loads((tmp_path / "r1.json").read_text())
    assert doc["privacy"]["budget"]["spent_epsilon"] == pytest.approx(0.6)
    before = budget.read_text()
    # the second run does not fit: refused before any noise, one line, exit 2, nothing written
    second = select(rides, "--epsilon", "0.6", "--budget", str(budget), "--dataset", "rides",
                    out=tmp_path / "r2.json")
    assert second.returncode == 2
    assert second.stdout == "" and len(second.stderr.strip().splitlines()) == 1
    assert "refuses" in second.stderr and "at most epsilon 0.4" in second.stderr
    assert "larger budget" not in second.stderr and "never reset" in second.stderr
    assert "Traceback" not in second.stderr
    assert not (tmp_path / "r2.json").exists() and budget.read_text() == before
    assert sorted(f.name for f in tmp_path.iterdir()) == ["budget.json", "r1.json", "rides.csv"]
    # what is left still fits, charged from a new export of the same data set (one more row,
    # as Parquet): the budget is bound to the data set's name, not to a file's bytes
    pq = pytest.importorskip("pyarrow.parquet")
    import pyarrow as pa

    grown = np.vstack([np.loadtxt(rides, delimiter=",", skiprows=1), [[0.5, 0.5]]])
    export = tmp_path / "rides_v2.parquet"
    pq.write_table(pa.table({"lat": grown[:, 0], "lon": grown[:, 1]}), export)
    third = select(export, "--epsilon", "0.4", "--budget", str(budget), "--dataset", "rides")
    assert third.returncode == 0, third.stderr
    show = dpsubmod("budget", "show", str(budget))
    assert show.returncode == 0
    assert "releases (2)" in show.stdout and "data set: rides" in show.stdout
    assert "spent: epsilon 1" in show.stdout
    saved = json.loads(budget.read_text())
    assert [r["epsilon"] for r in saved["releases"]] == [0.6, 0.4]
    # nothing in the file is computed from the data: no field names a hash of it, and no
    # 64-hex string other than the chain's own links
    text = budget.read_text()
    assert "sha256" not in text and "fingerprint" not in text
    links = {r["prev"] for r in saved["releases"]} | {saved["head"]}
    import re

    assert set(re.findall(r"[0-9a-f]{64}", text)) == links
    fourth = select(export, "--epsilon", "0.01", "--budget", str(budget), "--dataset", "rides")
    assert fourth.returncode == 2 and "new budget" not in fourth.stderr


def test_select_without_a_budget_says_nothing_bounds_repeated_runs(rides):
    p = select(rides, "--epsilon", "0.5")
    assert p.returncode == 0, p.stderr
    assert "nothing bounds the total over repeated runs on the same data" in p.stdout


def test_a_budget_file_for_another_data_set_or_damaged_is_refused(tmp_path, rides):
    budget = tmp_path / "budget.json"
    assert dpsubmod("budget", "new", str(budget), "--dataset", "trips",
                    "--epsilon", "1").returncode == 0
    before = budget.read_text()
    p = select(rides, "--epsilon", "0.5", "--budget", str(budget), "--dataset", "rides",
               out=tmp_path / "r.json")
    assert p.returncode == 2 and "protects the data set 'trips', not 'rides'" in p.stderr
    assert "new" not in p.stderr
    assert budget.read_text() == before and not (tmp_path / "r.json").exists()
    p = select(rides, "--epsilon", "0.5", "--budget", str(budget))
    assert p.returncode == 2 and "--budget needs --dataset" in p.stderr
    p = select(rides, "--epsilon", "0.5", "--dataset", "rides")
    assert p.returncode == 2 and "pass --budget FILE too" in p.stderr
    damaged = tmp_path / "damaged.json"
    damaged.write_text(before[: len(before) // 2])
    p = select(rides, "--epsilon", "0.5", "--budget", str(damaged), "--dataset", "trips")
    assert p.returncode == 2 and "corrupt or truncated" in p.stderr
    assert damaged.read_text() == before[: len(before) // 2]
    p = dpsubmod("budget", "new", str(budget), "--dataset", "trips", "--epsilon", "1")
    assert p.returncode == 2 and "already exists" in p.stderr
    p = dpsubmod("budget", "new", str(tmp_path / "x.json"), "--dataset", "t", "--epsilon", "-1")
    assert p.returncode == 2 and "epsilon" in p.stderr
    p = dpsubmod("budget", "new", str(tmp_path / "x.json"), "--dataset", " ", "--epsilon", "1")
    assert p.returncode == 2 and "dataset" in p.stderr and not (tmp_path / "x.json").exists()
    p = dpsubmod("budget", "new", str(tmp_path / "x.json"), "--epsilon", "1")
    assert p.returncode == 2 and "--dataset" in p.stderr


def test_advanced_budget_file_needs_delta(tmp_path):
    p = dpsubmod("budget", "new", str(tmp_path / "b.json"), "--dataset", "d", "--epsilon", "1",
                 "--composition", "advanced")
    assert p.returncode == 2 and "delta > 0" in p.stderr
    p = dpsubmod("budget", "new", str(tmp_path / "b.json"), "--dataset", "d", "--epsilon", "1",
                 "--delta", "1e-6", "--composition", "advanced")
    assert p.returncode == 0 and "Whitehouse" in p.stdout
