"""The budget file can be trusted: links charge one ledger, damaged files are refused unchanged,
edits made outside dpsubmod are evident, and version-1 files are upgraded keeping their ledger."""

from __future__ import annotations

import json
import os
import sys

import pytest

from budget_files import CASES, EDITS, charged, corrupt_files
from dpsubmod._filelock import LockFile
from dpsubmod.errors import BudgetExceededError, BudgetFileError
from dpsubmod.privacy import FileBudget, PrivacyEvent
from dpsubmod.privacy import _budget_format as fmt
from dpsubmod.privacy import budget_file as bf

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX links")


# -- links -----------------------------------------------------------------------------------


def test_a_symbolic_link_charges_the_one_ledger_and_the_lock_is_beside_the_real_file(tmp_path):
    real_dir, link_dir = tmp_path / "real", tmp_path / "elsewhere"
    real_dir.mkdir()
    link_dir.mkdir()
    real = real_dir / "b.json"
    FileBudget.create(real, 1.0, dataset="rides")
    link = link_dir / "link.json"
    link.symlink_to(real)
    hop = tmp_path / "hop.json"  # a link to the link
    hop.symlink_to(link)
    FileBudget(link, dataset="rides").charge(PrivacyEvent.pure("laplace", 0.6))
    assert link.is_symlink() and not real.is_symlink()
    with pytest.raises(BudgetExceededError):
        FileBudget(real, dataset="rides").charge(PrivacyEvent.pure("laplace", 0.6))
    with pytest.raises(BudgetExceededError):
        FileBudget(hop, dataset="rides").charge(PrivacyEvent.pure("laplace", 0.6))
    assert len(json.loads(real.read_text())["releases"]) == 1
    assert FileBudget(hop).real_path == real.resolve()
    # the lock is taken beside the real file: holding it there stops a charge through the link
    holder = LockFile(str(real) + ".lock")
    assert holder.try_acquire()
    try:
        old = bf._LOCK_TIMEOUT
        bf._LOCK_TIMEOUT = 0.2
        with pytest.raises(BudgetFileError, match="stayed locked"):
            FileBudget(link).charge(PrivacyEvent.pure("laplace", 0.1))
    finally:
        bf._LOCK_TIMEOUT = old
        holder.release()
    assert sorted(p.name for p in link_dir.iterdir()) == ["link.json"]


def test_control_without_resolving_links_the_ledger_splits(tmp_path, monkeypatch):
    # The check above fails on the old behaviour: a charge through the link replaces the link
    # by a new file, and the real file, never charged, grants the same 0.6 again.
    real, link = tmp_path / "b.json", tmp_path / "link.json"
    FileBudget.create(real, 1.0, dataset="rides")
    link.symlink_to(real)
    monkeypatch.setattr(bf.os.path, "realpath", lambda p: os.fspath(p))
    FileBudget(link).charge(PrivacyEvent.pure("laplace", 0.6))
    FileBudget(real).charge(PrivacyEvent.pure("laplace", 0.6))  # no refusal: split
    assert not link.is_symlink()


def test_a_hard_link_is_refused_by_name_and_nothing_changes(tmp_path):
    real, hard = tmp_path / "b.json", tmp_path / "copy.json"
    charged(real, 0.2)
    os.link(real, hard)
    before = real.read_bytes()
    for name in (real, hard):
        with pytest.raises(BudgetFileError, match=rf"'{name.name}' has 2 hard links"):
            FileBudget(name)
    os.unlink(hard)
    fb_opened_before = FileBudget(real)
    os.link(real, hard)  # made after opening: the charge re-checks under the lock
    with pytest.raises(BudgetFileError, match="hard links"):
        fb_opened_before.charge(PrivacyEvent.pure("laplace", 0.1))
    assert real.read_bytes() == before == hard.read_bytes()
    assert os.stat(real).st_ino == os.stat(hard).st_ino


def test_create_refuses_a_planted_link_at_the_budget_path(tmp_path):
    target = tmp_path / "target.json"
    (tmp_path / "b.json").symlink_to(target)  # dangling
    with pytest.raises(BudgetFileError, match="already exists"):
        FileBudget.create(tmp_path / "b.json", 1.0, dataset="rides")
    assert not target.exists()


# -- damaged files ---------------------------------------------------------------------------


def test_the_case_list_is_the_whole_matrix(tmp_path):
    assert sorted(corrupt_files(tmp_path)) == CASES


@pytest.mark.parametrize("case", CASES)
def test_every_kind_of_damaged_file_is_refused_on_one_line_and_left_unchanged(tmp_path, case):
    raw, word = corrupt_files(tmp_path)[case]
    path = tmp_path / "b.json"
    path.write_bytes(raw)
    for attempt in (lambda: FileBudget(path), lambda: FileBudget(path, dataset="rides")):
        with pytest.raises(BudgetFileError, match=word) as info:
            attempt()
        msg = str(info.value)
        assert msg.startswith("The budget file 'b.json' ") and "\n" not in msg
    assert path.read_bytes() == raw
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.json", "valid.json"]


# -- edits -----------------------------------------------------------------------------------


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_every_kind_of_edit_is_evident(tmp_path, edit):
    path = tmp_path / "b.json"
    charged(path, 0.3, 0.3, 0.3)
    doc = json.loads(path.read_text())
    EDITS[edit](doc)
    path.write_text(json.dumps(doc, indent=1))
    raw = path.read_bytes()
    for attempt in (lambda: FileBudget(path), lambda: FileBudget(path, dataset="rides")):
        with pytest.raises(BudgetFileError, match=r"'b.json' was modified outside dpsubmod"):
            attempt()
    assert path.read_bytes() == raw


def test_rewriting_the_json_without_changing_it_is_not_an_edit(tmp_path):
    # The chain hashes the content (canonical JSON), not the bytes: re-indenting or reordering
    # keys keeps the file intact. This is also the control of the edits above: an untouched
    # ledger passes.
    path = tmp_path / "b.json"
    charged(path, 0.3, 0.3)
    doc = json.loads(path.read_text())
    path.write_text(json.dumps(doc, sort_keys=True))
    fb = FileBudget(path, dataset="rides")
    assert len(fb.releases) == 2
    fb.charge(PrivacyEvent.pure("laplace", 0.3))
    with pytest.raises(BudgetExceededError):
        fb.charge(PrivacyEvent.pure("laplace", 0.3))


def test_the_chain_hashes_only_the_ledger(tmp_path):
    path = tmp_path / "b.json"
    charged(path, 0.3)
    doc = json.loads(path.read_text())
    header = {k: v for k, v in doc.items() if k not in ("releases", "head")}
    assert set(header) == {"format", "version", "dataset", "epsilon", "delta", "composition",
                           "slack"}
    assert doc["releases"][0]["prev"] == fmt.canonical_digest(header)
    assert doc["head"] == fmt.canonical_digest(doc["releases"][0])


# -- version 1 -------------------------------------------------------------------------------


def _v1(path, releases=2):
    doc = {"format": "dpsubmod-budget", "version": 1, "epsilon": 1.0, "delta": 0.0,
           "composition": "basic", "slack": 0.0,
           "data": {"name": "rides.csv", "sha256": "ab" * 32},
           "releases": [{"time": "2026-01-01T00:00:00+00:00", "command": "dpsubmod select",
                         "mechanism": "private_greedy", "epsilon": 0.4, "delta": 0.0,
                         "rho": None, "rule": "basic", "note": "", "data_name": "rides.csv",
                         "data_sha256": "ab" * 32}] * releases}
    path.write_text(json.dumps(doc))


def test_a_version_1_file_is_refused_until_upgraded_keeping_its_ledger(tmp_path):
    path = tmp_path / "b.json"
    _v1(path)
    raw = path.read_bytes()
    with pytest.raises(BudgetFileError, match="version 1.*'dpsubmod budget upgrade FILE"):
        FileBudget(path)
    assert path.read_bytes() == raw
    fb = FileBudget.upgrade(path, dataset="rides")
    assert fb.dataset == "rides" and fb.spent[0] == pytest.approx(0.8)
    text = path.read_text()
    assert "sha256" not in text and "ab" * 32 not in text and "rides.csv" not in text
    with pytest.raises(BudgetExceededError):
        FileBudget(path, dataset="rides").charge(PrivacyEvent.pure("laplace", 0.3))
    with pytest.raises(BudgetFileError, match="not 1: there is nothing to upgrade"):
        FileBudget.upgrade(path, dataset="rides")
