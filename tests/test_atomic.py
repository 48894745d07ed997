"""Replacing a file through a fresh temporary file (dpsubmod._atomic)."""

from __future__ import annotations

import os
import sys

import pytest

from dpsubmod import _atomic
from dpsubmod._atomic import PendingFile, replacing, write_atomic

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions and links")


def test_a_replaced_file_keeps_its_permissions_and_a_new_one_follows_the_umask(tmp_path):
    old = tmp_path / "old.json"
    old.write_text("x")
    old.chmod(0o640)
    write_atomic(old, "new")
    assert old.read_text() == "new" and old.stat().st_mode & 0o777 == 0o640
    mask = os.umask(0o027)
    try:
        write_atomic(tmp_path / "fresh.json", b"y")
    finally:
        os.umask(mask)
    assert (tmp_path / "fresh.json").stat().st_mode & 0o777 == 0o640


def test_the_reservation_is_allocated_and_cut_to_the_content(tmp_path):
    pending = PendingFile(tmp_path / "r.json", reserve=64 * 1024)
    assert pending.tmp.stat().st_size == 64 * 1024
    pending.commit(b"{}\n")
    assert (tmp_path / "r.json").read_bytes() == b"{}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]


def test_a_failed_write_leaves_the_target_and_no_temporary_file(tmp_path, monkeypatch):
    target = tmp_path / "t.csv"
    target.write_text("before")
    with pytest.raises(RuntimeError), replacing(target) as fh:
        fh.write("half")
        raise RuntimeError
    monkeypatch.setattr(_atomic.os, "fsync", lambda fd: (_ for _ in ()).throw(OSError(28, "full")))
    with pytest.raises(OSError, match="full"):
        write_atomic(target, "after")
    assert target.read_text() == "before"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.csv"]
    pending = PendingFile(target)
    pending.discard()
    pending.discard()
    with pytest.raises(ValueError, match="already"):
        pending.commit(b"x")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.csv"]
