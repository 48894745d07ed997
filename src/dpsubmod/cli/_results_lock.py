"""The lock of a results file of ``dpsubmod run``.

A module of its own, imported by the handler of ``dpsubmod run`` only: filelock costs more to
import than the rest of the command's parser, and no other command locks a results file.
"""

from __future__ import annotations

from pathlib import Path

from .._filelock import LockFile
from ..errors import ValidationError


def lock_results(path: Path, option: str) -> LockFile:
    """Acquire, without waiting, the lock beside a results file (``NAME.csv.lock``).

    Two runs appending to one results table would interleave their rows and rewrite the
    table under each other; the second is refused at once, naming the file and the fix. The
    lock file is removed when the holder releases the lock (see
    :class:`~dpsubmod._filelock.LockFile`).
    """
    lock = LockFile(str(path) + ".lock")
    try:
        acquired = lock.try_acquire()
    except OSError as exc:
        raise ValidationError(
            f"{option}: cannot create the lock file {path.name}.lock beside the results "
            f"({exc.strerror}); pass another {option}.") from None
    if not acquired:
        raise ValidationError(
            f"{option}: another 'dpsubmod run' is writing {path} now (it holds {path.name}.lock)"
            f"; wait for it to finish, or pass another {option}.")
    return lock
