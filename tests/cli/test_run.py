"""``dpsubmod run EXPERIMENT.toml``, run as a user would (a subprocess)."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def run(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dpsubmod.cli", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=300)


def test_offline_example_writes_results_summary_and_plots(tmp_path):
    p = run("run", str(EXAMPLES / "offline_facility_location.toml"), "--out", str(tmp_path),
            "--no-progress")
    assert p.returncode == 0, p.stderr
    table = tmp_path / "offline_facility_location.csv"
    rows = list(csv.DictReader(open(table)))
    # 8 seeds x (greedy + random + 2 private methods x 5 epsilons)
    assert len(rows) == 8 * (2 + 2 * 5)
    assert {r["method"] for r in rows} == {"greedy", "random", "private_greedy",
                                           "private_stochastic_greedy"}
    assert f"Results: {table}" in p.stdout and "96 cell(s) run" in p.stdout
    assert "private_greedy" in p.stdout and "utility mean" in p.stdout
    summary = list(csv.DictReader(open(tmp_path / "offline_facility_location_summary.csv")))
    by = {(s["method"], s["epsilon"]): float(s["mean"]) for s in summary}
    assert by[("greedy", "")] == 1.0
    assert by[("private_greedy", "10.0")] > by[("private_greedy", "0.1")]
    if "matplotlib is not installed" not in p.stdout:
        for name in ("utility_vs_epsilon", "privacy_per_step"):
            png = tmp_path / f"offline_facility_location_{name}.png"
            assert png.stat().st_size > 10_000
            assert f"Plot: {png}" in p.stdout
    # a re-run resumes everything from the file
    again = run("run", str(EXAMPLES / "offline_facility_location.toml"), "--out", str(table),
                "--no-plots")
    assert again.returncode == 0, again.stderr
    assert "0 cell(s) run, 96 resumed" in again.stdout
    # the lock of the results file is gone once each run has released it
    assert not list(tmp_path.glob("*.lock"))


def test_online_example_with_workers_and_parquet(tmp_path):
    pytest.importorskip("joblib")
    pytest.importorskip("pyarrow")
    out = tmp_path / "online.parquet"
    p = run("run", str(EXAMPLES / "online_minimization.toml"), "--out", str(out),
            "--workers", "2")
    assert p.returncode == 0, p.stderr
    assert out.exists() and "2 local processes" in p.stdout
    assert "SubmodPFTAL" in p.stdout and "regret mean" in p.stdout
    # the file's own reading of its surprising results is printed after them
    assert "How to read these results" in p.stdout and "RISES with epsilon" in p.stdout
    if "matplotlib is not installed" not in p.stdout:
        assert (tmp_path / "online_regret_vs_T.png").stat().st_size > 10_000


def test_shipped_example_runs_by_name_from_any_folder(tmp_path):
    p = run("run", "offline_facility_location", "--out", str(tmp_path), cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "96 cell(s) run" in p.stdout
    assert p.stderr == ""  # stderr is not a terminal: no progress bar
    shown = run("run", "offline_facility_location", "--out", str(tmp_path / "again"),
                "--progress", "--no-plots", cwd=tmp_path)
    assert shown.returncode == 0 and "96/96" in shown.stderr
    if "matplotlib is not installed" not in p.stdout:
        assert (tmp_path / "offline_facility_location_utility_vs_epsilon.png").exists()


def test_run_help():
    p = run("run", "--help")
    assert p.returncode == 0
    for flag in ("EXPERIMENT.toml", "--out", "--workers", "--scheduler", "--format",
                 "--progress", "online_minimization"):
        assert flag in p.stdout


def test_bad_config_is_a_one_line_error(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('[experiment]\nproblem = "offline"\nmethods = ["greedy"]\n'
                   'epsilons = [1.0, -1.0]\n[objective]\nkind = "facility_location"\n')
    p = run("run", str(bad), "--out", str(tmp_path))
    assert p.returncode == 2
    assert len(p.stderr.strip().splitlines()) == 1
    assert "error" in p.stderr and "epsilons" in p.stderr
    missing = run("run", str(tmp_path / "nope.toml"))
    assert missing.returncode == 2 and len(missing.stderr.strip().splitlines()) == 1
    clash = run("run", str(EXAMPLES / "online_minimization.toml"), "--out",
                str(tmp_path / "x.csv"), "--format", "parquet")
    assert clash.returncode == 2 and "--format parquet contradicts" in clash.stderr
