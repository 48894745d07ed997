"""The CSV engine of the one reader of private tables: dialect, lines, cells, bad rows.

A file is read in blocks of bytes, decoded with the declared encoding (undecodable bytes are
kept as escapes, never raised), and cut into lines at LF (a CR before it is dropped). One
non-blank line is one record: a quoted field cannot span lines, so a stray quote never changes
how the other lines are read. Each line is parsed on its own (by the :mod:`csv` module when it
holds a quote), so in memory and in chunks of any size every record gets the same cells. A line
that cannot be read is kept with every cell invalid and a status code saying why (for the data
check only). A clean block of numbers takes numpy's vectorised parser; anything else goes line by
line, with the same cell rule (:mod:`dpsubmod._cells`).
"""

from __future__ import annotations

import codecs
import csv
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import repeat
from pathlib import Path

import numpy as np

from .._cells import cells_to_float
from ..errors import ValidationError

#: Why a record could not be read (status code -> words), for the data check.
STATUS = {1: "bytes that do not decode as {encoding}", 2: "an unbalanced quote",
          3: "the wrong number of cells"}
_ESCAPED = re.compile("[\udc80-\udcff]")
_READ_BYTES = 1 << 20


@dataclass(frozen=True)
class Dialect:
    """How a CSV file is written: the cell delimiter, the quote character and the encoding."""

    delimiter: str = ","
    encoding: str = "utf-8"
    quotechar: str = '"'


def check_dialect(delimiter: object = ",", encoding: object = "utf-8",
                  what: str = "the reader") -> Dialect:
    """A checked :class:`Dialect`; ``what`` names the caller in messages."""
    if not isinstance(delimiter, str) or len(delimiter) != 1 or delimiter in '"\r\n':
        raise ValidationError(f"The delimiter of {what} must be one character other than a "
                              f"quote or a line break (for example ';' or '\\t'); got "
                              f"{delimiter!r}.")
    if not isinstance(encoding, str):
        raise ValidationError(f"The encoding of {what} must be a name such as 'utf-8' or "
                              f"'latin-1'; got {encoding!r}.")
    try:
        info = codecs.lookup(encoding)
    except LookupError:
        raise ValidationError(f"The encoding of {what} is unknown: {encoding!r}. Use a name "
                              "such as 'utf-8', 'latin-1' or 'cp1252'.") from None
    if info.name != "utf-8-sig" and "\n".encode(info.name) != b"\n":
        raise ValidationError(f"The encoding {encoding!r} of {what} is not supported (lines "
                              "must end with the byte LF); re-save the file as UTF-8.")
    name = "utf-8" if info.name == "utf-8-sig" else info.name  # the BOM is dropped anyway
    return Dialect(delimiter, name)


def _raw_lines(path: Path, dialect: Dialect) -> Iterator[tuple[int, list[str]]]:
    """``(number of the first line, lines)`` for each block read: every line, blank ones too."""
    decoder = codecs.getincrementaldecoder(dialect.encoding)(errors="surrogateescape")
    rest = ""
    first_line = 1
    start = True
    with open(path, "rb") as fh:
        while True:
            data = fh.read(_READ_BYTES)
            text = rest + decoder.decode(data, final=not data)
            if start and text:
                text = text.removeprefix("\ufeff")
                start = False
            if "\r" in text:
                text = text.replace("\r\n", "\n")
            lines = text.split("\n")
            if data:
                rest = lines.pop()
            else:
                if lines[-1] == "":
                    lines.pop()
                elif lines[-1].endswith("\r"):
                    lines[-1] = lines[-1][:-1]
            if lines:
                yield first_line, lines
                first_line += len(lines)
            if not data:
                return


def count_lines(path: Path) -> int:
    """An upper bound on the number of lines (line feeds + 1), read in blocks of bytes."""
    n = 1
    with open(path, "rb") as fh:
        while chunk := fh.read(_READ_BYTES):
            n += chunk.count(b"\n")
    return n


def line_text(path: Path, dialect: Dialect, number: int) -> str:
    """Line ``number`` (1-based) of the file, undecodable bytes as escapes (data check only)."""
    for start, lines in _raw_lines(path, dialect):
        if number < start + len(lines):
            return lines[number - start].encode(dialect.encoding, "surrogateescape").decode(
                dialect.encoding, "backslashreplace")
    return ""


def _split(line: str, dialect: Dialect) -> list[str] | None:
    if dialect.quotechar not in line:
        return line.split(dialect.delimiter)
    try:
        rows = list(csv.reader([line], delimiter=dialect.delimiter,
                               quotechar=dialect.quotechar, strict=True))
    except csv.Error:
        return None
    return rows[0] if len(rows) == 1 else None


split_line = _split


def header(path: Path, dialect: Dialect, what: str, *, strict: bool = True
           ) -> tuple[list[str], int]:
    """The cells of the first non-blank line (stripped) and its line number (0: none).

    With ``strict`` (the line is the header) a line that cannot be read is an error that names
    the fix; otherwise (the line may be a private record) its cells are returned as ``[]``
    with its line number, and the reader's policy handles it.
    """
    for start, lines in _raw_lines(path, dialect):
        for i, line in enumerate(lines):
            if line.strip():
                cells = None if _ESCAPED.search(line) else _split(line, dialect)
                if cells is None and not strict:
                    return [], start + i
                if _ESCAPED.search(line):
                    raise ValidationError(
                        f"{what} {path.name}: its first line does not decode as "
                        f"{dialect.encoding}. Pass the file's encoding (for example "
                        "--encoding latin-1, or encoding='latin-1').")
                if cells is None:
                    raise ValidationError(f"{what} {path.name}: its first line has an "
                                          "unbalanced quote. Fix the header.")
                return [c.strip() for c in cells], start + i
    return [], 0


@dataclass
class Block:
    """Records of consecutive lines: numeric columns, text columns, status, line numbers."""

    numeric: np.ndarray          # (rows, number of numeric columns), NaN = invalid
    text: list[np.ndarray]       # one array of str per text column ("" for an unreadable row)
    status: np.ndarray           # int8 per row: 0 read, else a STATUS code
    lines: np.ndarray            # int64 per row: the line number (1-based)


def _parse(lines: list[str], numbers: np.ndarray, width: int, num_idx: Sequence[int],
           text_idx: Sequence[int], dialect: Dialect) -> Block:
    n = len(lines)
    d = dialect.delimiter
    joined = "\n".join(lines)
    ascii_text = joined.isascii()
    clean = dialect.quotechar not in joined and (ascii_text or _ESCAPED.search(joined) is None)
    if clean and ascii_text and n and "\r" not in joined:
        fast = _vectorised(lines, width, num_idx, text_idx, d)
        if fast is not None:
            return Block(fast[0], fast[1], np.zeros(n, dtype=np.int8), numbers)
    keep = [i for i, line in enumerate(lines) if line and not line.isspace()]
    if len(keep) < n:
        lines = [lines[i] for i in keep]
        numbers = numbers[keep]
        n = len(lines)
    status = np.zeros(n, dtype=np.int8)
    if not num_idx and not text_idx:
        return Block(np.zeros((n, 0)), [], status, numbers)
    rows: list[list[str]] = []
    empty = [""] * width
    for i, line in enumerate(lines):
        cells = None if (not clean and _ESCAPED.search(line)) else _split(line, dialect)
        if cells is None:
            status[i] = 1 if _ESCAPED.search(line) else 2
            rows.append(empty)
        elif len(cells) != width:
            status[i] = 3
            rows.append(empty)
        else:
            rows.append(cells)
    cols = list(zip(*rows)) if rows else [()] * width
    X = np.empty((n, len(num_idx)))
    for k, j in enumerate(num_idx):
        X[:, k] = cells_to_float(list(cols[j]))
    text = [np.array([c.strip() for c in cols[j]], dtype=str) if n else np.zeros(0, dtype=str)
            for j in text_idx]
    return Block(X, text, status, numbers)


def _vectorised(lines: list[str], width: int, num_idx: Sequence[int],
                text_idx: Sequence[int], d: str) -> tuple[np.ndarray, list[np.ndarray]] | None:
    """An ASCII block without quotes through numpy's parser, or None to go line by line.

    Every line must have ``width`` cells (counted here: numpy only reads the columns asked
    for) and no line may be empty (numpy skips those: the shape shows it). On ASCII text
    numpy's parser accepts a finite number exactly when the cell rule does, so both paths give
    every cell the same value.
    """
    n = len(lines)
    counts = np.fromiter(map(str.count, lines, repeat(d)), dtype=np.int64, count=n)
    if not (counts == width - 1).all():
        return None
    opts = {"delimiter": d, "comments": None, "quotechar": None, "ndmin": 2}
    try:
        X = (np.loadtxt(lines, dtype=np.float64, usecols=list(num_idx), **opts) if num_idx
             else np.zeros((n, 0)))
        text = [np.char.strip(np.loadtxt(lines, dtype=str, usecols=[j], **opts)[:, 0])
                for j in text_idx]
    except ValueError:
        return None
    if X.shape[0] != n or any(t.shape[0] != n for t in text):
        return None
    X[~np.isfinite(X)] = np.nan
    return X, text


def blocks(path: Path, dialect: Dialect, *, width: int, skip_to: int,
           num_idx: Sequence[int], text_idx: Sequence[int], block_lines: int
           ) -> Iterator[Block]:
    """The records of the lines after line ``skip_to`` (the header's, or 0), in blocks of at
    most ``block_lines`` lines; blank lines are not records."""
    pending: list[str] = []
    numbers = np.zeros(0, dtype=np.int64)
    for start, lines in _raw_lines(path, dialect):
        if start <= skip_to:
            lines = lines[skip_to - start + 1:]
            start = skip_to + 1
        pending.extend(lines)
        numbers = np.concatenate([numbers, np.arange(start, start + len(lines))])
        while len(pending) >= block_lines:
            yield _parse(pending[:block_lines], numbers[:block_lines], width, num_idx,
                         text_idx, dialect)
            pending, numbers = pending[block_lines:], numbers[block_lines:]
    if pending:
        yield _parse(pending, numbers, width, num_idx, text_idx, dialect)
