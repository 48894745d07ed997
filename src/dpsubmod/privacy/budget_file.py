"""A privacy budget kept in a file: the command line's budget, shared between processes.

The file is a JSON ledger of every release (time, command, epsilon, delta, rho, rule, data file
name and content hash). Each charge re-reads the file under a lock held in ``NAME.json.lock``
(removed again when the charge ends), decides with the budget's privacy filter, and replaces the
file atomically, so two concurrent runs can never both pass when only one fits, and a refused or
failed charge leaves the file unchanged. A budget file belongs to one data set: the first release
binds it to the data file's content hash (or ``create(..., data=...)`` does), and a release on
other data is refused.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import math
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .._filelock import LockFile
from ..errors import BudgetFileError, ParameterTypeError
from .budget import Budget
from .events import PrivacyEvent
from .ledger import as_events

__all__ = ["FileBudget", "data_fingerprint"]

FORMAT = "dpsubmod-budget"
VERSION = 1
_LOCK_TIMEOUT = 60.0


def data_fingerprint(path: str | os.PathLike) -> dict[str, str]:
    """``{"name": file name, "sha256": content hash}`` of a data file (no directory kept)."""
    p = Path(path)
    h = hashlib.sha256()
    try:
        with open(p, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
    except OSError as exc:
        raise BudgetFileError(
            f"The data file {p.name!r} cannot be read ({exc.strerror}); a budget is bound to the "
            "content of its data file. Check the path."
        ) from None
    return {"name": p.name, "sha256": h.hexdigest()}


def _locked(path: Path) -> LockFile:
    """The budget file's lock, taken (waiting up to ``_LOCK_TIMEOUT`` seconds) before any read."""
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


class FileBudget(Budget):
    """A :class:`~dpsubmod.privacy.budget.Budget` persisted in a JSON file under a file lock.

    Build the file once with :meth:`create` (or ``dpsubmod budget new FILE --epsilon E``), then
    open it in every process that releases something computed from the data set it protects.

    Parameters
    ----------
    path : str or path-like
        The budget file.
    data : str or path-like, optional
        The data file this process releases from; its content hash must match the one the
        budget is bound to (the first release binds an unbound budget).
    command : str, default=""
        Recorded with each release (for example the command line that made it).

    Raises
    ------
    BudgetFileError
        When the file is missing, corrupt, truncated, written by a newer version of dpsubmod, or
        bound to another data file.
    """

    def __init__(self, path: str | os.PathLike, *, data: str | os.PathLike | None = None,
                 command: str = "") -> None:
        if not isinstance(path, (str, os.PathLike)):
            raise ParameterTypeError(f"The 'path' parameter of FileBudget must be a file path; "
                                     f"got {type(path).__name__}.")
        self.path = Path(path)
        self.command = str(command)
        self._data = None if data is None else data_fingerprint(data)
        doc = self._read()
        super().__init__(doc["epsilon"], doc["delta"], doc["composition"],
                         slack=None if doc["composition"] == "basic" else doc["slack"])
        self._load(doc)

    # -- file format ----------------------------------------------------------------------
    @classmethod
    def create(cls, path: str | os.PathLike, epsilon: float, delta: float = 0.0,
               composition: str = "basic", *, slack: float | None = None,
               data: str | os.PathLike | None = None) -> FileBudget:
        """Write a new budget file (refused if ``path`` exists) and open it."""
        b = Budget(epsilon, delta, composition, slack=slack)  # validates the limit
        p = Path(path)
        doc = {"format": FORMAT, "version": VERSION, "epsilon": b.epsilon, "delta": b.delta,
               "composition": b.composition, "slack": b.slack,
               "data": None if data is None else data_fingerprint(data), "releases": []}
        with _locked(p):
            if p.exists():
                raise BudgetFileError(
                    f"The budget file {p.name!r} already exists; it was left unchanged. Use "
                    "another path, or 'dpsubmod budget show' to read it."
                )
            _atomic_write(p, doc)
        return cls(p, data=data)

    def _read(self) -> dict[str, Any]:
        p = self.path
        where = f"The budget file {p.name!r}"
        try:
            text = p.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise BudgetFileError(
                f"{where} does not exist. Create it with 'dpsubmod budget new {p.name} "
                "--epsilon E' (or FileBudget.create)."
            ) from None
        except OSError as exc:
            raise BudgetFileError(f"{where} cannot be read ({exc.strerror}).") from None
        try:
            doc = json.loads(text)
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise BudgetFileError(
                f"{where} is not valid JSON (corrupt or truncated); it was left unchanged. "
                "Restore it from a backup: a budget cannot be rebuilt from the releases alone."
            ) from None
        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            raise BudgetFileError(f"{where} is not a dpsubmod budget file.")
        version = doc.get("version")
        if not isinstance(version, int) or version > VERSION:
            raise BudgetFileError(
                f"{where} was written by a newer version of dpsubmod (format version "
                f"{version!r}; this one reads up to {VERSION}). Upgrade dpsubmod to use it."
            )
        try:
            for key in ("epsilon", "delta", "composition", "slack", "releases"):
                doc[key]  # noqa: B018
            if not isinstance(doc["releases"], list):
                raise TypeError
            for r in doc["releases"]:
                PrivacyEvent(str(r["mechanism"]), float(_unnum(r["epsilon"])),
                             float(r["delta"]), None if r.get("rho") is None else float(r["rho"]))
        except (KeyError, TypeError, ValueError):
            raise BudgetFileError(
                f"{where} is truncated or damaged (a field is missing or malformed); it was left "
                "unchanged."
            ) from None
        bound = doc.get("data")
        if self._data is not None and bound is not None and bound.get("sha256") != \
                self._data["sha256"]:
            raise BudgetFileError(
                f"{where} protects the data file {bound.get('name')!r} (sha256 "
                f"{str(bound.get('sha256'))[:12]}...), not {self._data['name']!r} (sha256 "
                f"{self._data['sha256'][:12]}...). Use the budget file made for this data set, or "
                "create a new one for it."
            )
        return doc

    def _load(self, doc: dict[str, Any]) -> None:
        self._doc = doc
        self._events = [
            PrivacyEvent(str(r["mechanism"]), float(_unnum(r["epsilon"])), float(r["delta"]),
                         None if r.get("rho") is None else float(r["rho"]), 1,
                         str(r.get("note", "")))
            for r in doc["releases"]
        ]

    @property
    def releases(self) -> list[dict[str, Any]]:
        """Every release recorded in the file, oldest first."""
        return [dict(r) for r in self._doc["releases"]]

    @property
    def data(self) -> dict[str, str] | None:
        """The data file the budget is bound to (name and sha256), or ``None`` while unbound."""
        return self._doc.get("data")

    # -- charging ---------------------------------------------------------------------------
    def charge(self, events: PrivacyEvent | Iterable[PrivacyEvent]) -> None:
        """Charge a release under the file lock: re-read, decide, append, replace atomically."""
        ev = as_events(events, "FileBudget.charge")
        with _locked(self.path), self._lock:
            doc = self._read()
            self._load(doc)
            super().charge(ev)  # raises BudgetExceededError; the file is then untouched
            now = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
            for e in ev:
                doc["releases"].append({
                    "time": now, "command": self.command, "mechanism": e.mechanism,
                    "epsilon": _num(e.epsilon), "delta": e.delta, "rho": e.rho,
                    "rule": self.composition, "note": e.note,
                    "data_name": None if self._data is None else self._data["name"],
                    "data_sha256": None if self._data is None else self._data["sha256"],
                })
            if doc.get("data") is None and self._data is not None:
                doc["data"] = dict(self._data)
            try:
                _atomic_write(self.path, doc)
            except BaseException:
                self._load(self._read())  # the file was not replaced: forget the charge
                raise
            self._doc = doc

    def __repr__(self) -> str:
        return (f"FileBudget({self.path.name!r}, epsilon={self.epsilon:.6g}, "
                f"delta={self.delta:.6g}, composition={self.composition!r})")


def _atomic_write(path: Path, doc: dict[str, Any]) -> None:
    """Write ``doc`` to a temporary file beside ``path`` and rename it over ``path``."""
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent or ".")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(doc, fh, indent=1)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
