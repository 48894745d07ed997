"""The command line's budget file and outputs under links, damage, edits and a full disk.

Run in process (``dpsubmod.cli.main``): an exception escaping a command would fail the test
with its traceback, so a test that sees exit status 2 and one line on stderr has seen no
traceback.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from budget_files import CASES, EDITS, charged, corrupt_files
from dpsubmod import _atomic
from dpsubmod.cli import main

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX links")

GRID = ["--task", "facility-location", "--grid", "3x3", "--bounds", "lat=0,1", "--bounds",
        "lon=0,1", "--k", "2", "--backend", "numpy", "--seed", "0"]


@pytest.fixture
def rides(tmp_path) -> Path:
    path = tmp_path / "rides.csv"
    np.savetxt(path, np.random.default_rng(0).random((60, 2)), delimiter=",",
               header="lat,lon", comments="")
    return path


def run(capsys, *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def select(capsys, data, budget, eps, *extra):
    return run(capsys, "select", data, *GRID, "--epsilon", eps, "--budget", budget,
               "--dataset", "rides", *extra)


def refused(code: int, out: str, err: str, *words: str) -> None:
    assert code == 2 and out == "", (code, out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    for w in words:
        assert w in lines[0], (w, lines[0])


# -- links -----------------------------------------------------------------------------------


def test_two_selects_through_a_link_and_the_real_path_cannot_both_pass(tmp_path, rides,
                                                                        capsys):
    real, link = tmp_path / "b.json", tmp_path / "link.json"
    assert run(capsys, "budget", "new", real, "--dataset", "rides", "--epsilon", "1")[0] == 0
    link.symlink_to(real)
    code, out, err = select(capsys, rides, link, "0.6")
    assert code == 0, err
    before = real.read_bytes()
    refused(*select(capsys, rides, real, "0.6"), "refuses", "at most epsilon 0.4")
    assert real.read_bytes() == before and link.is_symlink()
    code, out, _ = run(capsys, "budget", "show", link)
    assert code == 0 and "releases (1)" in out
    os.link(real, tmp_path / "hard.json")
    refused(*select(capsys, rides, tmp_path / "hard.json", "0.1"), "'hard.json' has 2 hard "
            "links")
    refused(*select(capsys, rides, real, "0.1"), "hard links")
    assert real.read_bytes() == before


# -- damaged files and edits, through every command --------------------------------------------


def _commands(capsys, rides, path):
    return {"show": lambda: run(capsys, "budget", "show", path),
            "verify": lambda: run(capsys, "budget", "verify", path),
            "select": lambda: select(capsys, rides, path, "0.1")}


@pytest.mark.parametrize("case", CASES)
def test_every_command_refuses_a_damaged_file_on_one_line_and_leaves_it(tmp_path, rides,
                                                                        capsys, case):
    raw, word = corrupt_files(tmp_path)[case]
    path = tmp_path / "b.json"
    path.write_bytes(raw)
    for name, command in _commands(capsys, rides, path).items():
        refused(*command(), "'b.json'", word)
        assert path.read_bytes() == raw, name
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.json", "rides.csv", "valid.json"]


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_every_command_refuses_an_edited_file(tmp_path, rides, capsys, edit):
    path = tmp_path / "b.json"
    charged(path, 0.3, 0.3, 0.3)
    assert run(capsys, "budget", "verify", path)[0] == 0  # the control: intact before the edit
    doc = json.loads(path.read_text())
    EDITS[edit](doc)
    path.write_text(json.dumps(doc, indent=1))
    raw = path.read_bytes()
    for name, command in _commands(capsys, rides, path).items():
        refused(*command(), "'b.json' was modified outside dpsubmod")
        assert path.read_bytes() == raw, name


def test_verify_and_upgrade(tmp_path, capsys):
    path = tmp_path / "b.json"
    assert run(capsys, "budget", "new", path, "--dataset", "rides", "--epsilon", "1")[0] == 0
    code, out, _ = run(capsys, "budget", "verify", path)
    assert code == 0 and "is intact" in out and "0 releases" in out
    v1 = {"format": "dpsubmod-budget", "version": 1, "epsilon": 1.0, "delta": 0.0,
          "composition": "basic", "slack": 0.0, "data": {"name": "r.csv", "sha256": "cd" * 32},
          "releases": [{"time": "t", "command": "c", "mechanism": "m", "epsilon": 0.5,
                        "delta": 0.0, "rho": None, "rule": "basic", "note": "",
                        "data_name": "r.csv", "data_sha256": "cd" * 32}]}
    old = tmp_path / "old.json"
    old.write_text(json.dumps(v1))
    refused(*run(capsys, "budget", "verify", old), "version 1", "budget upgrade")
    code, out, _ = run(capsys, "budget", "upgrade", old, "--dataset", "rides")
    assert code == 0 and "1 release(s) kept" in out
    code, out, _ = run(capsys, "budget", "show", old)
    assert code == 0 and "spent: epsilon 0.5" in out and "cd" * 32 not in old.read_text()


def test_budget_show_never_ends_in_a_traceback(tmp_path):
    # one run in a fresh interpreter, as a user would: a release without a time field
    path = tmp_path / "b.json"
    raw, _ = corrupt_files(tmp_path)["a release without time"]
    path.write_bytes(raw)
    p = subprocess.run([sys.executable, "-m", "dpsubmod.cli", "budget", "show", str(path)],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert p.stderr.count("\n") == 1 and "no field 'time'" in p.stderr


# -- planted links at temporary names ----------------------------------------------------------


class _Names:
    """Temporary names known in advance: each new file first draws the same three names, at
    which links are planted, then a fresh one."""

    PLANTED = ("00000000000000a1", "00000000000000a2", "00000000000000a3")

    def __init__(self, monkeypatch):
        self.used: list[str] = []
        self._fresh = 0
        monkeypatch.setattr(_atomic.secrets, "token_hex", self._next)

    def _next(self, n):
        k = len(self.used) % 4
        if k < 3:
            tok = self.PLANTED[k]
        else:
            self._fresh += 1
            tok = f"{self._fresh:016x}"
        self.used.append(tok)
        return tok

    def plant(self, folder: Path, target: Path, names: list[str]) -> None:
        for name in names:
            for tok in self.PLANTED:
                (folder / f".{name}.{tok}.tmp").symlink_to(target)


def test_links_planted_at_every_temporary_name_are_never_followed(tmp_path, rides, capsys,
                                                                 monkeypatch):
    precious = tmp_path / "precious.txt"
    precious.write_text("keep")
    budget = tmp_path / "b.json"
    assert run(capsys, "budget", "new", budget, "--dataset", "rides", "--epsilon", "2")[0] == 0
    names = _Names(monkeypatch)
    # the old fixed names too
    for old in ("r.json.tmp", "d.json.tmp", "b.json.tmp"):
        (tmp_path / old).symlink_to(precious)
    names.plant(tmp_path, precious, ["r.json", "d.json", "b.json"])
    code, out, err = select(capsys, rides, budget, "0.5", "--out", tmp_path / "r.json",
                            "--diagnostics", tmp_path / "d.json")
    assert code == 0, err
    assert precious.read_text() == "keep"
    assert json.loads((tmp_path / "r.json").read_text())["task"] == "facility-location"
    assert len(json.loads(budget.read_text())["releases"]) == 1
    assert not (tmp_path / "r.json").is_symlink()
    # each of the three files (release, diagnostics, budget) tried every planted name first
    assert len(names.used) == 3 * 4
    leftovers = {p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")}
    assert all((tmp_path / n).is_symlink() for n in leftovers)  # only the planted links


def test_results_tables_pass_over_planted_links(tmp_path, monkeypatch):
    from dpsubmod.experiments.results import write_table

    precious = tmp_path / "precious.txt"
    precious.write_text("keep")
    names = _Names(monkeypatch)
    names.plant(tmp_path, precious, ["t.csv", "t.parquet"])
    write_table([{"a": 1}], tmp_path / "t.csv")
    assert (tmp_path / "t.csv").read_text().splitlines() == ["a", "1"]
    assert len(names.used) == 4
    pytest.importorskip("pyarrow")
    write_table([{"a": 1}], tmp_path / "t.parquet", schema={"a": "int"})
    assert len(names.used) == 8 and precious.read_text() == "keep"


def test_a_pending_file_replaces_a_link_at_the_target_not_its_target(tmp_path):
    precious = tmp_path / "precious.txt"
    precious.write_text("keep")
    (tmp_path / "out.json").symlink_to(precious)
    _atomic.write_atomic(tmp_path / "out.json", "{}")
    assert precious.read_text() == "keep" and (tmp_path / "out.json").read_text() == "{}"


# -- a full disk -------------------------------------------------------------------------------


@pytest.fixture
def tiny_disk(tmp_path):
    """A 64 KiB tmpfs (skipped where it cannot be mounted)."""
    mnt = tmp_path / "disk"
    mnt.mkdir()
    if sys.platform != "linux" or os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root on Linux")
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mnt)],
                       capture_output=True, text=True)
    if p.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {p.stderr.strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True)


def _fill(folder: Path) -> Path:
    """Fill the file system of ``folder`` to the last byte."""
    filler = folder / "filler"
    with contextlib.suppress(OSError), open(filler, "wb") as fh:
        for _ in range(1 << 12):
            fh.write(b"\0" * 1024)
            fh.flush()
    with contextlib.suppress(OSError), open(filler, "ab") as fh:
        for _ in range(4096):
            fh.write(b"\0")
            fh.flush()
    return filler


def test_a_full_disk_under_out_is_found_before_the_charge(tiny_disk, tmp_path, rides, capsys):
    budget = tmp_path / "b.json"
    assert run(capsys, "budget", "new", budget, "--dataset", "rides", "--epsilon", "2")[0] == 0
    before = budget.read_bytes()
    _fill(tiny_disk)
    refused(*select(capsys, rides, budget, "0.5", "--out", tiny_disk / "r.json"),
            "--out r.json", "No space left", "nothing was charged or released")
    assert budget.read_bytes() == before
    assert sorted(p.name for p in tiny_disk.iterdir()) == ["filler"]


def test_a_disk_that_fills_after_the_charge_says_the_budget_wascharged(
        tiny_disk, tmp_path, rides, capsys, monkeypatch):
    import dpsubmod.cli.select as sel
    import dpsubmod.tasks.release as release

    budget = tmp_path / "b.json"
    assert run(capsys, "budget", "new", budget, "--dataset", "rides", "--epsilon", "2")[0] == 0
    real = release._checked_select  # the selection the command runs

    def then_fill(*a, **k):  # another program fills the disk while the selection runs
        rel = real(*a, **k)
        _fill(tiny_disk)
        return rel

    monkeypatch.setattr(release, "_checked_select", then_fill)
    # with the space reserved before the charge, the release is still written
    code, out, err = select(capsys, rides, budget, "0.5", "--out", tiny_disk / "r.json")
    assert code == 0, err
    assert json.loads((tiny_disk / "r.json").read_text())["privacy"]["epsilon"] == 0.5
    (tiny_disk / "filler").unlink()
    (tiny_disk / "r.json").unlink()
    # where nothing could be reserved (the control), the write fails after the charge, and
    # the message says so plainly
    monkeypatch.setattr(sel, "_RESERVE", 0)
    code, out, err = select(capsys, rides, budget, "0.5", "--out", tiny_disk / "r.json")
    refused(code, out, err, "--out r.json", "No space left", "nothing was released",
            "the budget file b.json WAS charged (epsilon 0.5")
    assert len(json.loads(budget.read_text())["releases"]) == 2
    assert sorted(p.name for p in tiny_disk.iterdir()) == ["filler"]


def test_a_full_disk_under_the_budget_file_charges_nothing(tiny_disk, rides, capsys):
    budget = tiny_disk / "b.json"
    assert run(capsys, "budget", "new", budget, "--dataset", "rides", "--epsilon", "2")[0] == 0
    before = budget.read_bytes()
    _fill(tiny_disk)
    refused(*select(capsys, rides, budget, "0.5"), "'b.json' cannot be written",
            "No space left", "not charged and nothing was released")
    assert budget.read_bytes() == before
    assert sorted(p.name for p in tiny_disk.iterdir()) == ["b.json", "filler"]


def test_an_error_after_the_charge_says_so_without_a_disk(tmp_path, rides, capsys,
                                                        monkeypatch):
    # the same message where no tmpfs can be mounted: the rename fails after the charge
    budget = tmp_path / "b.json"
    assert run(capsys, "budget", "new", budget, "--dataset", "rides", "--epsilon", "2")[0] == 0
    real_replace = os.replace

    def failing(src, dst, *a, **k):
        if str(dst).endswith("r.json"):
            raise OSError(errno.EIO, "Input/output error")
        return real_replace(src, dst, *a, **k)

    monkeypatch.setattr(_atomic.os, "replace", failing)
    refused(*select(capsys, rides, budget, "0.5", "--out", tmp_path / "r.json",
                    "--diagnostics", tmp_path / "d.json"),
            "--out r.json", "Input/output error", "nothing was released", "WAS charged")
    assert not (tmp_path / "r.json").exists() and (tmp_path / "d.json").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
