"""The cell rules shared by every reader of private records (below every layer that reads one).

A numeric cell is **valid** when it is a finite decimal number: optional ASCII white space, an
optional sign, digits with an optional decimal point (``1``, ``1.``, ``.5``, ``1.5``), an
optional exponent (``e-3``), optional ASCII white space. Anything else (empty, text, ``nan``,
``inf``, a number too large for float64, hexadecimal, digit separators, non-ASCII digits) is
**invalid** and becomes NaN, which the task's declared rule then handles. A user id is **null**
when it is missing, ``None``, NaN, or empty after stripping spaces. These rules look at one
cell alone, so they are the same in memory, in chunks and on a cluster.
"""

from __future__ import annotations

import re

import numpy as np

#: A valid numeric cell (before the finiteness check).
# ASCII white space as numpy's parser strips it
_SPACE = " \t\r\x0b\x0c\x1c\x1d\x1e\x1f"
_WS = "[ \t\r\x0b\x0c\x1c-\x1f]*"
NUMBER = re.compile(_WS + r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?" + _WS)
# Characters a column of valid cells may hold. With only these, numpy's and Python's float
# parsers accept exactly the NUMBER syntax, so the vectorised conversion and the cell-by-cell
# one agree on every cell.
_OTHER = re.compile(r"[^0-9.eE+\- \t\n]")

#: The declared rule for bad rows and cells, quoted by the privacy statement.
BAD_ROW_POLICY = (
    "one record is one non-blank line of a CSV file (or one row of a table); a record that "
    "cannot be read (bytes that do not decode in the declared encoding, an unbalanced quote, "
    "more or fewer cells than the header) is kept with every cell invalid; a cell that is not "
    "a finite decimal number is invalid; a record without a user id is dropped (it "
    "contributes nothing); each rule looks at that record alone")


def _cell(s: str) -> float:
    if NUMBER.fullmatch(s) is None:
        return np.nan
    v = float(s.strip(_SPACE))
    return v if np.isfinite(v) else np.nan


def cells_to_float(cells: list[str]) -> np.ndarray:
    """A list of text cells as float64, NaN for every invalid cell (vectorised when clean)."""
    if cells and _OTHER.search("\n".join(cells)) is None:
        try:
            out = np.array(cells, dtype=np.float64)
        except ValueError:
            pass
        else:
            out[~np.isfinite(out)] = np.nan
            return out
    return np.fromiter((_cell(s) for s in cells), dtype=np.float64, count=len(cells))


def to_float(values: object) -> np.ndarray:
    """``values`` as float64 with NaN for every invalid cell; never raises on a cell."""
    arr = np.asarray(values)
    if arr.dtype.kind in "biuf":
        out = arr.astype(np.float64)
    elif arr.dtype.kind in "US":
        flat = arr.astype(str).ravel().tolist()
        out = cells_to_float(flat).reshape(arr.shape)
    else:
        flat = arr.ravel().tolist()
        res = np.empty(len(flat))
        for i, v in enumerate(flat):
            if isinstance(v, str):
                res[i] = _cell(v)
            elif isinstance(v, (bool, np.bool_)) or v is None:
                res[i] = float(v) if v is not None else np.nan
            else:
                try:
                    res[i] = float(v)
                except (TypeError, ValueError, OverflowError):
                    res[i] = np.nan
        out = res.reshape(arr.shape)
    with np.errstate(invalid="ignore"):
        out[~np.isfinite(out)] = np.nan
    return out


def null_ids(ids: np.ndarray) -> np.ndarray:
    """Which user ids are null: missing, None, NaN or empty text."""
    ids = np.asarray(ids)
    if ids.dtype.kind == "f":
        return np.isnan(ids)
    if ids.dtype.kind in "biu":
        return np.zeros(ids.shape, dtype=bool)
    if ids.dtype.kind in "US":
        return np.char.str_len(np.char.strip(ids.astype(str))) == 0
    out = np.zeros(ids.shape, dtype=bool)
    for i, v in enumerate(ids.ravel().tolist()):
        out.flat[i] = (v is None or (isinstance(v, float) and v != v)
                       or (isinstance(v, str) and not v.strip()))
    return out
