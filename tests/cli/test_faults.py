"""The commands under faults, run as a user would (subprocesses): interrupts, two runs into one
results file, output paths that cannot be written, empty statistics."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dpsubmod.cli import main

EXPERIMENT = """\
[experiment]
name = "interrupted"
problem = "offline"
seed = 0
seeds = 300
k = 5
methods = ["private_greedy"]
epsilons = [1.0]

[objective]
kind = "facility_location"
records = 4000
candidates = 40
clusters = 4
spread = 0.1
bandwidth = 0.12
"""
CELLS = 300
LINUX_PROC = Path("/proc/self/stat").exists()


def command(*args: str) -> list[str]:
    return [sys.executable, "-m", "dpsubmod", *args]


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    # Every warning is an error but a DeprecationWarning: at the floor versions, matplotlib
    # 3.8 calls pyparsing names that current pyparsing deprecates, on import.
    return subprocess.run(command(*args), cwd=cwd, capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, PYTHONWARNINGS="error,ignore::DeprecationWarning"))


@pytest.fixture
def dpsubmod(monkeypatch, capsys):
    """The command called in this process, for the faults that involve no signal: the same
    ``main`` as the installed command, without a Python start-up per call."""

    def call(*args: str, cwd: Path) -> subprocess.CompletedProcess:
        monkeypatch.chdir(cwd)
        capsys.readouterr()
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse's usage errors
            code = exc.code
        out, err = capsys.readouterr()
        return subprocess.CompletedProcess(list(args), code, out, err)

    return call


def one_line_error(p: subprocess.CompletedProcess, *words: str) -> None:
    assert p.returncode == 2, (p.returncode, p.stderr[-2000:])
    assert "Traceback" not in p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("dpsubmod: error:"), p.stderr
    for w in words:
        assert w in lines[0], (w, lines[0])


# -- processes -----------------------------------------------------------------------------------

def _state(pid: int) -> str | None:
    """The process state letter from /proc (None once the process is gone)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text.rsplit(")", 1)[1].split()[0]


def descendants(pid: int) -> set[int]:
    parents: dict[int, int] = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                parents[int(d)] = int(Path(f"/proc/{d}/stat").read_text().rsplit(")", 1)[1]
                                      .split()[1])
            except (OSError, IndexError, ValueError):
                continue
    found, todo = set(), [pid]
    while todo:
        p = todo.pop()
        kids = {c for c, pp in parents.items() if pp == p}
        todo += list(kids - found)
        found |= kids
    return found


def alive(pids: set[int]) -> set[int]:
    return {p for p in pids if _state(p) not in (None, "Z", "X")}


def rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def wait_for_rows(proc: subprocess.Popen, path: Path, n: int, children: int = 0,
                  limit: float = 120.0) -> set[int]:
    """Wait until the running command has written ``n`` rows (and has ``children`` worker
    processes); returns every descendant seen meanwhile."""
    seen: set[int] = set()
    start = time.monotonic()
    while time.monotonic() - start < limit:
        assert proc.poll() is None, proc.communicate()
        seen |= descendants(proc.pid)
        if path.exists() and len(path.read_text().splitlines()) > n and len(seen) >= children:
            return seen
        time.sleep(0.05)
    raise AssertionError(f"no {n} rows within {limit} s")


def check_consistent(path: Path) -> list[dict[str, str]]:
    """Every line of the results file is a whole row, and no cell appears twice."""
    table = rows(path)
    header = path.read_text().splitlines()[0].split(",")
    assert all(None not in r and len(r) == len(header) for r in table)
    assert all(r["seed"] != "" and r["utility"] != "" for r in table)
    keys = [(r["method"], r["epsilon"], r["seed"]) for r in table]
    assert len(keys) == len(set(keys))
    return table


@pytest.mark.skipif(not LINUX_PROC, reason="finds the worker processes in /proc")
@pytest.mark.parametrize("workers", [None, 2], ids=["serial", "workers"])
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_interrupt_stops_workers_and_the_same_command_continues(tmp_path, sig, workers):
    (tmp_path / "exp.toml").write_text(EXPERIMENT)
    args = ["run", "exp.toml", "--out", "res", "--no-plots", "--no-progress"]
    if workers:
        args += ["--workers", str(workers)]
    results = tmp_path / "res" / "interrupted.csv"
    proc = subprocess.Popen(command(*args), cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        # joblib's pool: the workers and its resource trackers
        seen = wait_for_rows(proc, results, 3, children=workers or 0)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 128 + sig, err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"dpsubmod: interrupted by {sig.name}; the finished cells are "
                               f"in res{os.sep}interrupted.csv; run the same command again")
    # no worker outlives the command (stopped workers are reaped within a few seconds)
    deadline = time.monotonic() + 10
    while alive(seen) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive(seen), [Path(f"/proc/{p}/cmdline").read_bytes()[:200]
                             for p in alive(seen)]
    done = check_consistent(results)
    assert 3 <= len(done) < CELLS
    # re-running the same command continues: the finished cells are kept, the others run
    again = run(*args, cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert f"({CELLS - len(done)} cell(s) run, {len(done)} resumed from the file)" in again.stdout
    final = check_consistent(results)
    assert len(final) == CELLS
    # the resumed rows are the interrupted run's own rows, unchanged
    before = {(r["seed"], r["utility"]) for r in done}
    assert before <= {(r["seed"], r["utility"]) for r in final}


def test_a_second_run_into_the_same_results_is_refused_at_once(tmp_path):
    # long enough to outlast the second command's start; stopped by SIGINT below
    (tmp_path / "exp.toml").write_text(EXPERIMENT.replace("seeds = 300", "seeds = 5000"))
    args = ["run", "exp.toml", "--out", "res", "--no-plots", "--no-progress"]
    results = tmp_path / "res" / "interrupted.csv"
    first = subprocess.Popen(command(*args), cwd=tmp_path, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        wait_for_rows(first, results, 1)
        second = run(*args, cwd=tmp_path)
        # refused without waiting for the first run, which is still going
        assert first.poll() is None
        one_line_error(second, "--out", "another 'dpsubmod run' is writing",
                       "interrupted.csv", "pass another --out")
        assert second.stdout == ""
        # the same file named directly is the same lock
        direct = run("run", "exp.toml", "--out", str(results), "--no-plots", cwd=tmp_path)
        one_line_error(direct, "another 'dpsubmod run' is writing")
        first.send_signal(signal.SIGINT)
        first.communicate(timeout=60)
    finally:
        if first.poll() is None:
            first.kill()
            first.communicate()
    assert first.returncode == 130
    check_consistent(results)
    # the interrupted run removed its lock file on the way out (the refused ones had none)
    assert not (results.parent / "interrupted.csv.lock").exists()
    # a different experiment may write into the same folder meanwhile; the lock is per file
    other = EXPERIMENT.replace('name = "interrupted"', 'name = "other"').replace(
        "seeds = 300", "seeds = 2")
    (tmp_path / "other.toml").write_text(other)
    assert run("run", "other.toml", "--out", "res", "--no-plots", cwd=tmp_path).returncode == 0
    assert not list((tmp_path / "res").glob("*.lock"))


def test_other_commands_stop_on_a_signal_with_one_line(tmp_path):
    pytest.importorskip("sklearn")
    proc = subprocess.Popen(command("demo", "--seeds", "100000", "--out", "o"), cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, PYTHONUNBUFFERED="1"))
    try:
        assert proc.stdout.readline().startswith("Data:")  # the work has begun
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130 and err == "dpsubmod: interrupted by SIGINT\n", err
    assert not (tmp_path / "o").exists()


SECOND_SIGNAL = """
import os, signal, time
from dpsubmod.cli._signals import Interrupted, interrupts
with interrupts():
    try:
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(30)
    except Interrupted:
        # a cleanup that would hang; a second signal must end the process at once
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(30)
"""


def test_a_second_signal_during_the_cleanup_ends_the_process_at_once():
    p = subprocess.run([sys.executable, "-c", SECOND_SIGNAL], capture_output=True, text=True,
                       timeout=25)
    assert p.returncode == 128 + signal.SIGTERM
    assert p.stderr == "dpsubmod: interrupted by SIGINT again; stopped at once\n"


def test_a_reader_that_goes_away_ends_the_command_quietly():
    # as in `dpsubmod audit --list | head -0`: no traceback, the status of a SIGPIPE
    proc = subprocess.Popen(command("audit", "--list"), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    proc.stdout.close()
    err = proc.stderr.read()
    proc.wait(timeout=60)
    proc.stderr.close()
    assert proc.returncode == 141 and err == b""


# -- output paths --------------------------------------------------------------------------------

@pytest.fixture
def blocked(tmp_path: Path, dpsubmod) -> Path:
    """A folder holding a file named ``blocker``, a budget file and a small data file."""
    (tmp_path / "blocker").write_text("a file")
    (tmp_path / "exp.toml").write_text(EXPERIMENT.replace("seeds = 300", "seeds = 2"))
    (tmp_path / "data.csv").write_text("s0,s1,s2\n1,0,1\n0,1,1\n1,1,0\n0,0,1\n")
    assert dpsubmod("budget", "new", "b.json", "--dataset", "d", "--epsilon", "5",
                    cwd=tmp_path).returncode == 0
    return tmp_path


def _readonly(tmp_path: Path) -> Path:
    """A folder nobody may write in: a 0o555 folder, or for root (who ignores permissions)
    the sysfs root, which refuses new files to everyone."""
    if os.geteuid() != 0:
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(0o555)
        return ro
    sysfs = Path("/sys")
    try:
        (sysfs / ".dpsubmod-probe").touch()
    except OSError:
        return sysfs
    (sysfs / ".dpsubmod-probe").unlink()
    pytest.skip("no folder here is read-only for root")


SELECT = ["select", "data.csv", "--task", "coverage", "--k", "1", "--epsilon", "1",
          "--backend", "numpy", "--seed", "0", "--budget", "b.json", "--dataset", "d"]
WRONG_PATHS = {
    "demo under a file": (["demo", "--seeds", "2", "--out", "blocker/sub"], "--out",
                          "blocker is a file"),
    "demo onto a file": (["demo", "--seeds", "2", "--out", "blocker"], "--out",
                         "blocker is a file, not a folder"),
    "run under a file": (["run", "exp.toml", "--no-plots", "--out", "blocker/sub"], "--out",
                         "blocker is a file"),
    "run onto a file in a file": (["run", "exp.toml", "--out", "blocker/r.csv"], "--out",
                                  "blocker is a file"),
    "run onto a folder": (["run", "exp.toml", "--out", "sub.csv"], "--out", "is a folder"),
    "audit under a file": (["audit", "laplace", "--runs", "20", "--json", "blocker/a.json"],
                           "--json", "blocker is a file"),
    "audit onto a folder": (["audit", "laplace", "--runs", "20", "--json", "sub.csv"],
                            "--json", "is a folder"),
    "select under a file": ([*SELECT, "--out", "blocker/r.json"], "--out", "blocker is a file"),
    "select missing folder": ([*SELECT, "--out", "missing/r.json"], "--out",
                              "does not exist"),
    "budget file under a file": (["budget", "new", "blocker/b2.json", "--dataset", "d", "--epsilon",
                                  "1"], "FILE",
                                 "blocker is a file"),
    "select diagnostics under a file": ([*SELECT, "--diagnostics", "blocker/d.json"],
                                        "--diagnostics", "blocker is a file"),
}


def _nothing_done(cwd: Path, p: subprocess.CompletedProcess) -> None:
    # no work printed, no results, no release charged to the budget file
    assert p.stdout == ""
    assert not (cwd / "blocker" / "sub").exists() and not (cwd / "missing").exists()
    assert json.loads((cwd / "b.json").read_text())["releases"] == []
    assert sorted(f.name for f in cwd.iterdir()) == sorted(
        ["blocker", "exp.toml", "data.csv", "b.json", "sub.csv"])


@pytest.mark.parametrize("case", list(WRONG_PATHS))
def test_an_output_path_that_cannot_be_written_is_refused_before_any_work(blocked, dpsubmod,
                                                                         case):
    args, option, words = WRONG_PATHS[case]
    (blocked / "sub.csv").mkdir()
    p = dpsubmod(*args, cwd=blocked)
    one_line_error(p, option, words)
    _nothing_done(blocked, p)


@pytest.mark.parametrize("args,option", [
    (["demo", "--seeds", "2", "--out", "{ro}/sub"], "--out"),
    (["run", "exp.toml", "--out", "{ro}"], "--out"),
    (["audit", "laplace", "--runs", "20", "--json", "{ro}/a.json"], "--json"),
    ([*SELECT, "--out", "{ro}/r.json"], "--out"),
], ids=["demo", "run", "audit", "select"])
def test_a_read_only_folder_is_refused_before_any_work(blocked, dpsubmod, args, option):
    ro = _readonly(blocked)
    p = dpsubmod(*[a.format(ro=ro) for a in args], cwd=blocked)
    one_line_error(p, option, f"cannot write in the folder {ro}", "pass " + option)
    assert p.stdout == ""
    assert json.loads((blocked / "b.json").read_text())["releases"] == []


def test_missing_folders_of_an_output_are_created(blocked, dpsubmod):
    # demo, run and audit make their output folders; select writes only into an existing one
    p = dpsubmod("audit", "laplace", "--runs", "20", "--json", "new/deeper/a.json", cwd=blocked)
    assert p.returncode == 0, p.stderr
    assert json.loads((blocked / "new" / "deeper" / "a.json").read_text())["runs_per_input"] == 20


# -- demo's statistics ----------------------------------------------------------------------------

@pytest.mark.parametrize("seeds", ["0", "-1", "1.5", "abc"])
def test_demo_refuses_a_bad_seed_count(tmp_path, dpsubmod, seeds):
    p = dpsubmod("demo", "--seeds", seeds, "--out", "o", cwd=tmp_path)
    one_line_error(p, "--seeds")
    assert not (tmp_path / "o").exists() and p.stdout == ""


def test_demo_with_one_seed_shows_no_spread(tmp_path):
    pytest.importorskip("sklearn")
    p = run("demo", "--seeds", "1", "--out", "o", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    table = {r["method"]: r for r in rows(tmp_path / "o" / "demo.csv")}
    # deterministic rows have no spread at all; a randomized row run once has no estimate
    assert float(table["greedy"]["sd"]) == 0.0
    assert table["random"]["sd"] == "nan" and table["private_greedy"]["sd"] == "nan"
    line = next(ln for ln in p.stdout.splitlines() if ln.startswith("random "))
    assert line.split()[-3] == "-"
    assert "over 1 seed." in p.stdout and "no spread to show" in p.stdout
