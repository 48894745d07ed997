"""End-to-end: the README's main job, run as a user would (a subprocess)."""

from __future__ import annotations

import csv
import subprocess
import sys

import pytest

pytest.importorskip("sklearn")


def run(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dpsubmod.cli", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=300)


def test_demo_writes_table_and_plot(tmp_path):
    out = tmp_path / "demo"
    p = run("demo", "--out", str(out), "--seeds", "5")
    assert p.returncode == 0, p.stderr
    assert "private_greedy" in p.stdout and "not private" in p.stdout
    rows = list(csv.DictReader(open(out / "demo.csv")))
    by = {(r["method"], r["epsilon"]): float(r["relative_utility"]) for r in rows}
    assert by[("greedy", "nan")] == 1.0
    assert len([m for m, _ in by if m == "private_greedy"]) == 4
    # the private rows sit between the random baseline and the greedy, improving with epsilon
    priv = [by[("private_greedy", e)] for e in ("0.5", "2.0", "8.0", "32.0")]
    assert priv[-1] > priv[0]
    assert all(v <= 1.0 + 1e-9 for v in priv)
    pytest.importorskip("matplotlib")
    assert (out / "demo.png").stat().st_size > 1000
    assert f"Plot written to {out / 'demo.png'}" in p.stdout
    assert sorted(x.name for x in out.iterdir()) == ["demo.csv", "demo.png"]


def test_python_dash_m_dpsubmod_runs_the_command():
    p = subprocess.run([sys.executable, "-m", "dpsubmod", "demo", "--help"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and "--epsilons" in p.stdout


def test_demo_bad_input_is_a_one_line_error(tmp_path):
    p = run("demo", "--k", "0", "--out", str(tmp_path))
    assert p.returncode != 0
    assert "error" in p.stderr and "'--k'" in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1
