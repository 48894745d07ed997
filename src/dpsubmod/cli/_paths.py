"""Output paths of the commands, checked before any work, and the lock of a results file.

Every command that writes checks where it will write before it reads a record, draws noise or
charges a budget, so that an unwritable path is a one-line error (exit status 2) and not a
traceback after minutes of work. The check tries what the write will do: it creates (and
removes) a temporary file in the folder, or in its nearest existing ancestor when the folder is
yet to be made, so permissions, read-only file systems and access lists all count.
"""

from __future__ import annotations

import errno
import os
import tempfile
from contextlib import suppress
from pathlib import Path

from filelock import FileLock, Timeout

from ..errors import ValidationError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows, where filelock removes its lock file itself
    fcntl = None  # type: ignore[assignment]

__all__ = ["check_output_file", "check_output_folder", "lock_results", "ResultsLock"]


def _probe(option: str, shown: str, folder: Path) -> None:
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".dpsubmod-write-check-")
    except OSError as exc:
        raise ValidationError(
            f"{option} {shown}: cannot write in the folder {folder} ({exc.strerror}); pass "
            f"{option} with a folder you can write to.") from None
    os.close(fd)
    os.unlink(tmp)


def _folder(option: str, shown: str, path: Path, create: bool, *, of_file: bool) -> None:
    probe = path
    while not probe.exists() and probe.parent != probe:
        probe = probe.parent
    if not probe.exists() or (probe != path and not create):
        raise ValidationError(f"{option} {shown}: the folder {path} does not exist; create it "
                              f"first or pass another {option}.")
    if not probe.is_dir() and probe == path and not of_file:
        raise ValidationError(f"{option} {shown} is a file, not a folder; pass {option} with a "
                              "folder (a new one is created).")
    if not probe.is_dir():
        raise ValidationError(f"{option} {shown}: {probe} is a file, not a folder; pass "
                              f"{option} with a path under a folder.")
    _probe(option, shown, probe)


def check_output_folder(option: str, value: str | os.PathLike[str], *,
                        create: bool = True) -> Path:
    """Check that ``value`` is a folder the command can write in, or can create.

    Nothing is created: the nearest existing ancestor must be a writable folder (with
    ``create=False`` the folder itself must exist). ``option`` names the user's option in the
    message (``--out``); the error is a :class:`~dpsubmod.errors.ValidationError`.
    """
    path = Path(value)
    _folder(option, str(value), path, create, of_file=False)
    return path


def check_output_file(option: str, value: str | os.PathLike[str], *,
                      create_folder: bool = True, example: str = "result.json") -> Path:
    """Check that the file ``value`` can be written (replaced if it exists) by the command.

    Its folder is checked as by :func:`check_output_folder` (and created later when
    ``create_folder``); an existing folder, or an existing file that cannot be written, is
    refused, naming ``option``.
    """
    path = Path(value)
    if path.is_dir():
        raise ValidationError(f"{option} {value} is a folder; pass {option} with a file name "
                              f"such as {example}.")
    if path.exists() and not os.access(path, os.W_OK):
        raise ValidationError(f"{option} {value}: the file cannot be written (permission "
                              f"denied); pass {option} with another file.")
    _folder(option, str(value), path.parent, create_folder, of_file=True)
    return path


#: Attempts at locking the file at the lock path before a run gives up: a retry happens only
#: when a finishing run removed the file between this run's open and its flock.
_LOCK_ATTEMPTS = 50
_HELD = frozenset({errno.EAGAIN, errno.EWOULDBLOCK, errno.EACCES})


def _try_flock(fd: int) -> bool:
    """A non-blocking exclusive flock on ``fd``: False when another run holds it."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        if exc.errno in _HELD:
            return False
        raise
    return True


def _names(lock_path: str, fd: int) -> bool:
    """Whether ``lock_path`` is, right now, the file open as ``fd``."""
    try:
        now = os.stat(lock_path, follow_symlinks=False)
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return (now.st_dev, now.st_ino) == (held.st_dev, held.st_ino)


class ResultsLock:
    """The exclusive lock of one results file, held in ``NAME.csv.lock``; the file goes at the end.

    A plain ``flock`` lock file cannot simply be deleted after release: a run that opened it
    just before would then lock the deleted file while a third run creates and locks a new one,
    and both would write (the reason filelock keeps its lock files on Unix, tox-dev/filelock
    issues 27 and 574). Here the file is unlinked while the lock is still held, as the run's last
    act, and every run checks after its ``flock`` that the path still names the file it locked,
    starting over otherwise; so the lock stays exclusive and no file is left behind. Where
    ``flock`` is missing (Windows, some network file systems) a filelock ``FileLock`` is used
    instead, which removes its own file where that is safe.
    """

    def __init__(self, lock_path: str):
        self.lock_path = lock_path
        self._fd: int | None = None
        self._fallback: FileLock | None = None

    def try_acquire(self) -> bool:
        """Take the lock without waiting; False when another run holds it."""
        if fcntl is None:  # pragma: no cover - Windows
            return self._try_filelock()
        for _ in range(_LOCK_ATTEMPTS):
            flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
            try:
                fd, created = os.open(self.lock_path, flags | os.O_EXCL, 0o644), True
            except FileExistsError:
                fd, created = os.open(self.lock_path, flags, 0o644), False
            try:
                locked = _try_flock(fd)
            except OSError:
                # no flock on this file system: leave the file to filelock's own fallback
                if created:
                    with suppress(OSError):
                        os.unlink(self.lock_path)
                os.close(fd)
                return self._try_filelock()
            if not locked:
                os.close(fd)
                return False
            if _names(self.lock_path, fd):
                self._fd = fd
                return True
            os.close(fd)  # a finishing run removed the file this one opened; lock the new one
        return False

    def _try_filelock(self) -> bool:
        lock = FileLock(self.lock_path, timeout=0)
        try:
            lock.acquire()
        except Timeout:
            return False
        self._fallback = lock
        return True

    def release(self) -> None:
        """Remove the lock file, then release the lock (the order keeps it exclusive)."""
        fd, self._fd = self._fd, None
        if fd is not None:
            try:
                if _names(self.lock_path, fd):
                    with suppress(OSError):
                        os.unlink(self.lock_path)
            finally:
                os.close(fd)
        lock, self._fallback = self._fallback, None
        if lock is not None:
            lock.release(force=True)

    def __enter__(self) -> ResultsLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def lock_results(path: Path, option: str) -> ResultsLock:
    """Acquire, without waiting, the lock beside a results file (``NAME.csv.lock``).

    Two runs appending to one results table would interleave their rows and rewrite the
    table under each other; the second is refused at once, naming the file and the fix. The
    lock file is removed when the holder releases the lock (see :class:`ResultsLock`).
    """
    lock = ResultsLock(str(path) + ".lock")
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
