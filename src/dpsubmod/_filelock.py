"""An exclusive lock between processes, held in a lock file that is removed at release.

Two things lock a file beside the one they write: a run of ``dpsubmod run`` (its results table,
``NAME.csv.lock``) and every charge of a budget file (``NAME.json.lock``), where exclusivity is
a privacy property: two processes must never both spend what remains of one budget.
"""

from __future__ import annotations

import errno
import os
import time
from contextlib import suppress

from filelock import FileLock, Timeout

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows, where filelock removes its lock file itself
    fcntl = None  # type: ignore[assignment]

#: Attempts at locking the file at the lock path before one try gives up: a retry happens only
#: when a finishing holder removed the file between this process's open and its flock.
_LOCK_ATTEMPTS = 50
_HELD = frozenset({errno.EAGAIN, errno.EWOULDBLOCK, errno.EACCES})
#: Seconds between two tries of a waiting :meth:`LockFile.acquire` (filelock's default).
_POLL = 0.05


def _try_flock(fd: int) -> bool:
    """A non-blocking exclusive flock on ``fd``: False when another process holds it."""
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


class LockFile:
    """An exclusive lock held in the file ``lock_path``; the file goes when the lock is released.

    A plain ``flock`` lock file cannot simply be deleted after release: a process that opened it
    just before would then lock the deleted file while a third one creates and locks a new one,
    and both would go on (the reason filelock keeps its lock files on Unix, tox-dev/filelock
    issues 27 and 574). Here the file is unlinked while the lock is still held, as the holder's
    last act, and every process checks after its ``flock`` that the path still names the file it
    locked, starting over otherwise; so the lock stays exclusive and no file is left behind. A
    lock path that is a symbolic link is refused (``OSError``). Where ``flock`` is missing
    (Windows, some network file systems) a filelock ``FileLock`` is used instead, which removes
    its own file where that is safe.
    """

    def __init__(self, lock_path: str):
        self.lock_path = lock_path
        self._fd: int | None = None
        self._fallback: FileLock | None = None

    def try_acquire(self) -> bool:
        """Take the lock without waiting; False when another process holds it."""
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
            os.close(fd)  # a finishing holder removed the file this one opened; lock the new one
        return False

    def acquire(self, timeout: float) -> bool:
        """Take the lock, waiting up to ``timeout`` seconds; False when it stayed held."""
        deadline = time.monotonic() + timeout
        while not self.try_acquire():
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            time.sleep(min(_POLL, left))
        return True

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

    def __enter__(self) -> LockFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
