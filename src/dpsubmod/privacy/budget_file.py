"""A privacy budget kept in a file: the command line's budget, shared between processes.

The file is a JSON ledger bound to one data set, which the owner names (``dataset="rides"``): the
people whose records the releases are computed from. Appending rows, re-exporting the table or
converting it to another format keeps charging the same budget; nothing in the file is computed
from the data. Each release (time, command, epsilon, delta, rho, rule) is chained to the one
before it and to the header by SHA-256 (see :mod:`dpsubmod.privacy._budget_format`), so an edit
made outside dpsubmod is refused by every reader.

The path is resolved to the real file (through symbolic links) before anything is locked or
read, and a file with several hard links is refused, so every name charges one ledger. Each
charge takes a lock held in ``REAL.json.lock`` beside the real file (removed again when the
charge ends), re-reads and checks the file, decides with the budget's privacy filter, and
replaces the file through a fresh temporary file, so two concurrent runs can never both pass
when only one fits, and a refused or failed charge leaves the file byte for byte unchanged.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .._atomic import write_atomic
from .._filelock import LockFile
from ..errors import BudgetFileError, ParameterTypeError
from ._budget_format import (
    FORMAT,
    VERSION,
    Damaged,
    chain,
    check_dataset,
    check_document,
    decode,
    error,
    upgrade_v1,
)
from .budget import Budget
from .events import PrivacyEvent
from .ledger import as_events

__all__ = ["FileBudget"]

_LOCK_TIMEOUT = 60.0


def _locked(path: Path) -> LockFile:
    """The lock of the real budget file ``path``, taken (waiting up to ``_LOCK_TIMEOUT``
    seconds) before any read that leads to a write."""
    lock = LockFile(str(path) + ".lock")
    try:
        acquired = lock.acquire(_LOCK_TIMEOUT)
    except OSError as exc:
        raise BudgetFileError(
            f"The lock file {path.name + '.lock'!r} of the budget file cannot be created "
            f"({exc.strerror}); nothing was released. Keep the budget file in a folder you can "
            "write to, with no other file at that name."
        ) from None
    if not acquired:
        raise BudgetFileError(
            f"The budget file {path.name!r} stayed locked for {_LOCK_TIMEOUT:g} s by another "
            "run; nothing was released. Retry when that run has finished."
        )
    return lock


def _num(x: Any) -> Any:
    return "inf" if isinstance(x, float) and math.isinf(x) else x


def _unnum(x: Any) -> Any:
    return math.inf if x == "inf" else x


def _real(path: str | os.PathLike, caller: str) -> tuple[Path, Path]:
    if not isinstance(path, (str, os.PathLike)):
        raise ParameterTypeError(f"The 'path' parameter of {caller} must be a file path; got "
                                 f"{type(path).__name__}.")
    return Path(path), Path(os.path.realpath(path))


def _dump(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=1, allow_nan=False) + "\n"


def _write(shown: Path, real: Path, doc: dict[str, Any], what: str) -> None:
    try:
        write_atomic(real, _dump(doc))
    except OSError as exc:
        raise BudgetFileError(
            f"The budget file {shown.name!r} cannot be written ({exc.strerror or exc}); {what}"
        ) from None


class FileBudget(Budget):
    """A :class:`~dpsubmod.privacy.budget.Budget` persisted in a JSON file under a file lock.

    Build the file once with :meth:`create` (or ``dpsubmod budget new FILE --dataset NAME
    --epsilon E``), then open it in every process that releases something computed from the data
    set it protects.

    Parameters
    ----------
    path : str or path-like
        The budget file (a symbolic link to it charges the real file).
    dataset : str, optional
        The data set this process releases from, as named when the budget was created; a budget
        bound to another data set is refused. Omitted, the file's own data set is taken.
    command : str, default=""
        Recorded with each release (for example the command line that made it).

    Raises
    ------
    BudgetFileError
        When the file is missing, not UTF-8 JSON, truncated, wrongly typed, written by a newer
        version, in the old format version 1, modified outside dpsubmod (its hash chain is
        broken), hard-linked under several names, or bound to another data set. The file is
        left unchanged.
    """

    #: The refusal's advice: a budget file protects its people for good, so it never suggests
    #: starting a new budget for them.
    _refusal_fix = ("Lower the release's epsilon (or delta); the budget file protects these "
                    "people for good and is never reset.")
    _exhausted_fix = ("The budget file protects these people for good and is never reset: no "
                      "further release about them can be made.")

    def __init__(self, path: str | os.PathLike, *, dataset: str | None = None,
                 command: str = "") -> None:
        self.path, self._real = _real(path, "FileBudget")
        self._dataset = None if dataset is None else check_dataset(dataset, "dataset")
        self.command = str(command)
        doc = self._read()
        super().__init__(doc["epsilon"], doc["delta"], doc["composition"],
                         slack=None if doc["composition"] == "basic" else doc["slack"])
        self._load(doc)

    # -- file format ----------------------------------------------------------------------
    @classmethod
    def create(cls, path: str | os.PathLike, epsilon: float, delta: float = 0.0,
               composition: str = "basic", *, dataset: str,
               slack: float | None = None) -> FileBudget:
        """Write a new budget file bound to ``dataset`` (refused if ``path`` exists) and open it.

        Parameters
        ----------
        path : str or path-like
            The file to create; nothing may exist at that name (not even a dangling link).
        epsilon, delta, composition, slack
            The limit and the privacy filter, as for :class:`~dpsubmod.privacy.Budget`.
        dataset : str
            The data set (the people) the budget protects, for example ``"rides"``; every
            process that charges the budget names it again. More rows, a new export or another
            file format of the same data set keep the name.

        Returns
        -------
        FileBudget

        Raises
        ------
        BudgetFileError
            When something exists at ``path`` or the file cannot be written.
        ValidationError
            For an invalid limit or data set name.
        """
        name = check_dataset(dataset, "dataset")
        b = Budget(epsilon, delta, composition, slack=slack)  # validates the limit
        shown, real = _real(path, "FileBudget.create")
        doc: dict[str, Any] = {
            "format": FORMAT, "version": VERSION, "dataset": name, "epsilon": b.epsilon,
            "delta": b.delta, "composition": b.composition, "slack": b.slack, "releases": []}
        chain(doc)
        with _locked(real):
            if os.path.lexists(shown) or os.path.lexists(real):
                raise BudgetFileError(
                    f"The budget file {shown.name!r} already exists; it was left unchanged. Use "
                    "another path, or 'dpsubmod budget show' to read it."
                )
            _write(shown, real, doc, "no budget was created.")
        return cls(shown, dataset=name)

    @classmethod
    def upgrade(cls, path: str | os.PathLike, *, dataset: str) -> FileBudget:
        """Convert a format-version-1 budget file in place and open it.

        Parameters
        ----------
        path : str or path-like
            A budget file of format version 1 (which stored a hash of its data file).
        dataset : str
            The data set (the people) the budget protects from now on.

        Returns
        -------
        FileBudget
            Every release is kept, so what was spent still counts; the data file's hash and
            name are dropped.

        Raises
        ------
        BudgetFileError
            When the file is not a readable version-1 budget file; it is left unchanged.
        """
        name = check_dataset(dataset, "dataset")
        shown, real = _real(path, "FileBudget.upgrade")
        with _locked(real):
            raw = _read_bytes(shown, real)
            try:
                _check_links(real)
                doc = upgrade_v1(decode(raw), name)
            except Damaged as exc:
                raise error(shown, exc) from None
            _write(shown, real, doc, "it was left unchanged.")
        return cls(shown, dataset=name)

    def _read(self) -> dict[str, Any]:
        raw = _read_bytes(self.path, self._real)
        try:
            _check_links(self._real)
            doc = check_document(decode(raw))
        except Damaged as exc:
            raise error(self.path, exc) from None
        if self._dataset is not None and doc["dataset"] != self._dataset:
            raise BudgetFileError(
                f"The budget file {self.path.name!r} protects the data set {doc['dataset']!r}, "
                f"not {self._dataset!r}; nothing was released. If these records are about the "
                f"same people, name the data set {doc['dataset']!r}; otherwise use the budget "
                f"file of {self._dataset!r}."
            )
        return doc

    def _load(self, doc: dict[str, Any]) -> None:
        self._doc = doc
        self._events = [
            PrivacyEvent(r["mechanism"], float(_unnum(r["epsilon"])), float(r["delta"]),
                         None if r["rho"] is None else float(r["rho"]), 1, r["note"],
                         backend=r.get("backend", ""), engine=r.get("engine", ""))
            for r in doc["releases"]
        ]

    @property
    def releases(self) -> list[dict[str, Any]]:
        """Every release recorded in the file, oldest first."""
        return [dict(r) for r in self._doc["releases"]]

    @property
    def dataset(self) -> str:
        """The name of the data set the budget protects."""
        return self._doc["dataset"]

    @property
    def real_path(self) -> Path:
        """The file charged: ``path`` with every symbolic link resolved."""
        return self._real

    # -- charging ---------------------------------------------------------------------------
    def charge(self, events: PrivacyEvent | Iterable[PrivacyEvent]) -> None:
        """Charge a release under the file lock: re-read, check, decide, append, replace."""
        ev = as_events(events, "FileBudget.charge")
        with _locked(self._real), self._lock:
            doc = self._read()
            self._load(doc)
            super().charge(ev)  # raises BudgetExceededError; the file is then untouched
            now = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
            for e in ev:
                release = {
                    "time": now, "command": self.command, "mechanism": e.mechanism,
                    "epsilon": _num(e.epsilon), "delta": e.delta, "rho": e.rho,
                    "rule": self.composition, "note": e.note, "prev": ""}
                # optional fields: files written before they existed stay readable
                release.update({k: v for k, v in (("backend", e.backend),
                                                  ("engine", e.engine)) if v})
                doc["releases"].append(release)
            chain(doc)
            try:
                _write(self.path, self._real, doc,
                       "the release was not charged and nothing was released.")
            except BaseException:
                self._load(self._read())  # the file was not replaced: forget the charge
                raise
            self._doc = doc

    def _describe(self) -> str:
        return (f"The budget file {self.path.name} of data set {self._doc['dataset']!r} "
                f"(epsilon {self.epsilon:.6g}, delta {self.delta:.6g}, {self.composition} "
                "composition)")

    def __repr__(self) -> str:
        return (f"FileBudget({self.path.name!r}, dataset={self._doc['dataset']!r}, "
                f"epsilon={self.epsilon:.6g}, delta={self.delta:.6g}, "
                f"composition={self.composition!r})")


def _read_bytes(shown: Path, real: Path) -> bytes:
    where = f"The budget file {shown.name!r}"
    try:
        return real.read_bytes()
    except FileNotFoundError:
        raise BudgetFileError(
            f"{where} does not exist. Create it with 'dpsubmod budget new {shown.name} "
            "--dataset NAME --epsilon E' (or FileBudget.create)."
        ) from None
    except IsADirectoryError:
        raise BudgetFileError(f"{where} is a folder, not a budget file.") from None
    except OSError as exc:
        raise BudgetFileError(f"{where} cannot be read ({exc.strerror}).") from None


def _check_links(real: Path) -> None:
    """Refuse a budget file with several hard links: replacing it would split its ledger."""
    try:
        links = os.stat(real).st_nlink
    except OSError:
        return  # gone meanwhile: the next read says so
    if links > 1:
        raise Damaged(
            f"has {links} hard links (names for the same file): a charge replaces the file "
            "under one name only and would split its ledger. Keep one name (remove the other "
            "hard links; a symbolic link is fine)")
