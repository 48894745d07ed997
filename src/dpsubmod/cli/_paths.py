"""Output paths of the commands, checked before any work.

Every command that writes checks where it will write before it reads a record, draws noise or
charges a budget, so that an unwritable path is a one-line error (exit status 2) and not a
traceback after minutes of work. The check tries what the write will do: it creates (and
removes) a temporary file in the folder, or in its nearest existing ancestor when the folder is
yet to be made, so permissions, read-only file systems and access lists all count.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from ..errors import ValidationError


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

