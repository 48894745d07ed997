"""Replacing a file atomically, through a fresh temporary file that never follows a link.

Every file dpsubmod writes for the user (the budget file, the release of ``dpsubmod select
--out``, its diagnostics, results tables and summaries) is written here: the bytes go to a new
temporary file in the target's folder, created exclusively (``O_CREAT | O_EXCL``, with
``O_NOFOLLOW``) under an unpredictable name, so a file or symbolic link planted at any name is
never opened, let alone overwritten; then the temporary file is flushed to disk and renamed over
the target with :func:`os.replace`, so a reader sees the old file or the new one, never half of
one. A failure removes the temporary file and leaves the target as it was.

:class:`PendingFile` splits the two halves, so a command can create its output (and reserve the
space it needs) before it charges a budget, and fill it in afterwards.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import IO

_FLAGS = (os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
          | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))


def _mode_for(path: Path) -> int:
    """The permission bits of the new file: those of the file it replaces, else 0o666 less the
    umask (what a plain ``open(path, "w")`` would give)."""
    try:
        st = os.stat(path)
    except OSError:
        return 0o666
    return st.st_mode & 0o7777


class PendingFile:
    """A new temporary file beside ``path``, to be renamed over ``path`` by :meth:`commit`.

    Parameters
    ----------
    path : str or path-like
        The file to replace (or create). Its folder must exist.
    reserve : int, default=0
        Bytes to allocate now, so that a full disk shows before :meth:`commit` (and, in a
        command, before its budget is charged). :meth:`commit` writes over the reservation and
        cuts the file to the bytes written.

    Raises
    ------
    OSError
        When the folder cannot be written or the space cannot be reserved; nothing is left
        behind.
    """

    def __init__(self, path: str | os.PathLike[str], *, reserve: int = 0) -> None:
        self.path = Path(path)
        folder = self.path.parent
        mode = _mode_for(self.path)
        for _ in range(100):
            tmp = folder / f".{self.path.name}.{secrets.token_hex(8)}.tmp"
            try:
                fd = os.open(tmp, _FLAGS, mode)
            except FileExistsError:
                continue  # something already holds that name: never touch it, draw another
            break
        else:  # pragma: no cover - 100 collisions of 64 random bits
            raise FileExistsError(errno.EEXIST, "no free temporary name", str(folder))
        self.tmp: Path | None = tmp
        self._fd: int | None = fd
        try:
            if mode != 0o666 and hasattr(os, "fchmod"):
                os.fchmod(fd, mode)  # keep the replaced file's permissions (the umask cut them)
            if reserve > 0:
                _reserve(fd, int(reserve))
        except BaseException:
            self.discard()
            raise

    def commit(self, data: bytes) -> None:
        """Write ``data`` (over the reservation), flush it to disk and rename over the target.

        On any failure the temporary file is removed, the target is left as it was, and the
        error is raised.
        """
        fd = self._fd
        if fd is None:
            raise ValueError("this PendingFile was already committed or discarded")
        try:
            os.lseek(fd, 0, os.SEEK_SET)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.ftruncate(fd, len(data))
            os.fsync(fd)
            self._fd = None
            os.close(fd)
            os.replace(self.tmp, self.path)  # type: ignore[arg-type]
            self.tmp = None
        except BaseException:
            self.discard()
            raise

    def discard(self) -> None:
        """Remove the temporary file (the target is untouched); safe to call twice."""
        fd, self._fd = self._fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)
        tmp, self.tmp = self.tmp, None
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)

    def __enter__(self) -> PendingFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.discard()


def _reserve(fd: int, size: int) -> None:
    """Allocate ``size`` bytes of ``fd`` on disk (ENOSPC when they are not there)."""
    if hasattr(os, "posix_fallocate"):
        try:
            os.posix_fallocate(fd, 0, size)
            return
        except OSError as exc:
            if exc.errno not in (errno.EOPNOTSUPP, errno.EINVAL, getattr(errno, "ENOTSUP", -1)):
                raise
    # no fallocate on this file system: write the bytes, which allocates them as well
    block = b"\0" * min(size, 1 << 16)
    left = size
    while left > 0:
        left -= os.write(fd, block[:left])
    os.fsync(fd)


def write_atomic(path: str | os.PathLike[str], data: bytes | str) -> None:
    """Replace ``path`` by ``data`` (``str`` is written as UTF-8) through a fresh temporary file."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    PendingFile(path).commit(data)


@contextlib.contextmanager
def replacing(path: str | os.PathLike[str], *, text: bool = True,
              newline: str | None = None) -> Iterator[IO]:
    """A file object whose content replaces ``path`` when the block ends without an error.

    The content is gathered in memory, then written by :func:`write_atomic`: an error inside the
    block leaves ``path`` untouched and no temporary file behind.
    """
    buf = io.BytesIO()
    fh: IO = io.TextIOWrapper(buf, encoding="utf-8", newline=newline) if text else buf
    yield fh
    fh.flush()
    write_atomic(path, buf.getvalue())
