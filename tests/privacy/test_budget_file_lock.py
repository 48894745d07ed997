"""The budget file's lock: exclusive between processes, and its file removed after each use."""

from __future__ import annotations

import json
import subprocess
import sys
import threading

import pytest

from dpsubmod._filelock import LockFile
from dpsubmod.errors import BudgetExceededError, BudgetFileError
from dpsubmod.privacy import FileBudget, PrivacyEvent
from dpsubmod.privacy import budget_file as bf

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="flock protocol (POSIX)")


def test_no_lock_file_remains_after_create_charge_refusal_or_failure(tmp_path, monkeypatch):
    path = tmp_path / "b.json"
    FileBudget.create(path, 1.0, dataset="d")
    assert [f.name for f in tmp_path.iterdir()] == ["b.json"]
    fb = FileBudget(path)
    fb.charge(PrivacyEvent.pure("laplace", 0.6))
    with pytest.raises(BudgetExceededError):
        fb.charge(PrivacyEvent.pure("laplace", 0.6))
    with pytest.raises(BudgetFileError, match="already exists"):
        FileBudget.create(path, 1.0, dataset="d")

    def disk_full(p, data):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(bf, "write_atomic", disk_full)
    with pytest.raises(BudgetFileError, match="No space.*not charged and nothing was released"):
        fb.charge(PrivacyEvent.pure("laplace", 0.1))
    assert [f.name for f in tmp_path.iterdir()] == ["b.json"]
    assert len(json.loads(path.read_text())["releases"]) == 1


def test_a_charge_waits_for_the_holder_and_a_timeout_changes_nothing(tmp_path, monkeypatch):
    path = tmp_path / "b.json"
    FileBudget.create(path, 1.0, dataset="d")
    before = path.read_text()
    fb = FileBudget(path)
    holder = LockFile(str(path) + ".lock")  # another process's charge, in the middle
    assert holder.try_acquire()
    monkeypatch.setattr(bf, "_LOCK_TIMEOUT", 0.2)
    with pytest.raises(BudgetFileError, match=r"'b.json' stayed locked for 0.2 s.*nothing"):
        fb.charge(PrivacyEvent.pure("laplace", 0.5))
    assert path.read_text() == before and fb.spent == (0.0, 0.0)
    assert (tmp_path / "b.json.lock").exists()  # the refused charge removed nothing

    monkeypatch.setattr(bf, "_LOCK_TIMEOUT", 30.0)
    done = threading.Event()
    waiter = threading.Thread(
        target=lambda: (fb.charge(PrivacyEvent.pure("laplace", 0.5)), done.set()))
    waiter.start()
    assert not done.wait(0.3)  # it waits while the lock is held
    holder.release()
    waiter.join(10)
    assert done.is_set() and len(json.loads(path.read_text())["releases"]) == 1
    assert [f.name for f in tmp_path.iterdir()] == ["b.json"]


def test_a_lock_path_that_is_a_symbolic_link_is_refused_and_its_target_untouched(tmp_path):
    path = tmp_path / "b.json"
    FileBudget.create(path, 1.0, dataset="d")
    target = tmp_path / "precious.txt"
    target.write_text("keep")
    (tmp_path / "b.json.lock").symlink_to(target)
    with pytest.raises(BudgetFileError, match="lock file 'b.json.lock'.*cannot be created"):
        FileBudget(path).charge(PrivacyEvent.pure("laplace", 0.5))
    assert target.read_text() == "keep"
    assert json.loads(path.read_text())["releases"] == []


SPENDER = """
import contextlib, glob, os, sys, time
from dpsubmod.errors import BudgetExceededError
from dpsubmod.privacy import FileBudget, PrivacyEvent
from dpsubmod.privacy import budget_file as bf
path, go, broken = sys.argv[1], sys.argv[2], sys.argv[3] == "broken"
write = bf.write_atomic
first = [True]

def slow_write(p, doc):
    if broken and first[0]:
        # the control's interleaving, made certain: every spender has read the empty ledger
        # (and been granted its first release) before any of them writes
        first[0] = False
        open(go + ".read." + str(os.getpid()), "w").close()
        deadline = time.monotonic() + 60
        while len(glob.glob(go + ".read.*")) < 4 and time.monotonic() < deadline:
            time.sleep(0.001)
    time.sleep(0.002)  # widen the window between reading the file and replacing it
    write(p, doc)

bf.write_atomic = slow_write
if broken:  # the control: a charge that takes no lock at all
    bf._locked = lambda p: contextlib.nullcontext()
fb = FileBudget(path)
while not os.path.exists(go):
    time.sleep(0.001)
released = 0
while True:
    try:
        fb.charge(PrivacyEvent.pure("laplace", 0.0625))
    except BudgetExceededError:
        break
    released += 1
print(released)
"""


def _race(tmp_path, mode: str) -> tuple[int, int]:
    """(releases the spenders reported, releases the file recorded) for 4 spenders of 1/16."""
    path, go = tmp_path / f"{mode}.json", tmp_path / f"{mode}.go"
    FileBudget.create(path, 1.0, dataset="d")
    procs = [subprocess.Popen([sys.executable, "-c", SPENDER, str(path), str(go), mode],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(4)]
    go.touch()
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0] * 4, [err for _, err in outs]
    go.unlink()
    for ready in tmp_path.glob(f"{mode}.go.read.*"):
        ready.unlink()
    reported = sum(int(out) for out, _ in outs)
    return reported, len(json.loads(path.read_text())["releases"])


@pytest.mark.slow
def test_concurrent_spenders_never_overspend_and_leave_no_lock_file(tmp_path):
    # Every release a spender was granted is in the file, and they add up to the budget
    # (16 x 1/16 = 1.0 exactly: budgets compare exactly, and 20 x the float 0.05 exceeds 1.0)
    # and no more. The control takes no lock, and its four spenders all read the empty ledger
    # before the first write: they overwrite each other's releases and are granted more than
    # the budget (at least 19), which this check catches.
    reported, recorded = _race(tmp_path, "locked")
    assert reported == recorded == 16
    assert sorted(f.name for f in tmp_path.iterdir()) == ["locked.json"]
    reported, recorded = _race(tmp_path, "broken")
    assert reported >= 19 and recorded == 16  # overspent: the control is caught
