"""The public inputs of ``dpsubmod select``, parsed from its command line.

Candidates, bounds, bins, thresholds, groups and capacities are public: they come from options
and public files, matched to the record columns by name. Options that only one task reads are
refused for the others rather than ignored. Nothing here reads a record.
"""

from __future__ import annotations

import argparse
import codecs
import math
import os
import re
from pathlib import Path
from typing import Any

from ..errors import ValidationError

# options that only one task reads; passing them to another task is refused, not ignored
_TASK_OPTIONS: dict[str, tuple[str, ...]] = {
    "candidates": ("facility-location",),
    "candidate_names": ("facility-location",),
    "grid": ("facility-location",),
    "similarity": ("facility-location",),
    "bandwidth": ("facility-location",),
    "radius": ("facility-location",),
    "partition_column": ("facility-location",),
    "label": ("feature-selection",),
    "bins": ("feature-selection",),
    "bounds_file": ("feature-selection",),
    "label_thresholds": ("feature-selection",),
    "bounds": ("facility-location", "feature-selection"),
}


def error(msg: str) -> Exception:
    """The ValidationError the command reports (exit status 2)."""
    return ValidationError(msg)


def _split(text: str, option: str) -> list[str]:
    parts = [p.strip() for p in text.split(",")]
    if any(p == "" for p in parts):
        raise error(f"{option} must be a comma-separated list without empty entries; got "
                     f"{text!r}.")
    return parts


def _floats(text: str, option: str, count: int | None = None) -> list[float]:
    try:
        vals = [float(p) for p in _split(text, option)]
    except ValueError:
        raise error(f"{option} must hold numbers separated by commas; got {text!r}.") from None
    if not all(math.isfinite(v) for v in vals):
        raise error(f"{option} must hold finite numbers; got {text!r}.")
    if count is not None and len(vals) != count:
        raise error(f"{option} must hold {count} numbers; got {len(vals)} in {text!r}.")
    return vals


def _bounds(args: argparse.Namespace) -> dict[str, tuple[float, float]] | None:
    table: dict[str, tuple[float, float]] = {}
    if args.bounds_file is not None:
        from ..datasets.records import public_column, read_public_csv

        bf = read_public_csv(args.bounds_file, "--bounds-file", text_columns=["column"])
        lo, hi = public_column(bf, "low", "--bounds-file"), public_column(bf, "high",
                                                                          "--bounds-file")
        for name, a, b in zip(bf.text_column("column", "--bounds-file"), lo, hi):
            table[str(name)] = (float(a), float(b))
    for entry in args.bounds or []:
        name, sep, pair = entry.partition("=")
        if not sep or not name.strip() or re.fullmatch(r"[-+.\deE]+", name.strip()):
            raise error(
                f"--bounds {entry}: name the column, as --bounds NAME=LOW,HIGH, once per "
                "column (for example --bounds lat=40.6,40.9 --bounds lon=-74.1,-73.8). Bounds "
                "are matched to record columns by name, never by position.")
        table[name.strip()] = tuple(_floats(pair, f"--bounds {entry}", 2))  # type: ignore
    return table or None


def _bin_rule(text: str, option: str) -> int | str | list[float]:
    """One --bins rule: a count, ``categorical``, or comma-separated edges."""
    text = text.strip()
    if text == "categorical":
        return text
    if "," in text:
        return _floats(text, option)
    try:
        return int(text)
    except ValueError:
        raise error(f"{option}: a rule is a number of bins (with --bounds), edges E0,E1,... "
                     f"or 'categorical'; got {text!r}.") from None


def _bins(entries: list[str] | None, bounds: dict[str, Any] | None) -> Any:
    """``--bins``: rules per column (NAME=RULE) and for all other columns (RULE).

    A count alone bins the columns with --bounds; it may be given with one other rule for the
    remaining columns (``--bins 4 --bins categorical``).
    """
    if not entries:
        return None
    per: dict[str, Any] = {}
    count: int | None = None
    for entry in entries:
        name, sep, text = entry.partition("=")
        rule = _bin_rule(text if sep else entry, f"--bins {entry}")
        key = name.strip() if sep else ("#" if isinstance(rule, int) else "*")
        if key in per or (key == "#" and count is not None):
            raise error(f"--bins {entry}: " + ("that rule for all columns is given twice"
                                               if key in "#*" else f"column {key!r} is given "
                                               "twice") + "; give each once.")
        if key == "#":
            count = rule  # type: ignore[assignment]
        else:
            per[key] = rule
    if count is None:
        return per["*"] if list(per) == ["*"] else per
    if not per:
        return count
    for name in bounds or {}:
        per.setdefault(name, count)
    return per


def _grid(text: str | None) -> tuple[int, int] | None:
    if text is None:
        return None
    try:
        r, c = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise error(f"--grid must look like RxC (e.g. 10x10); got {text!r}.") from None
    return r, c


def parse_capacities(text: str | None) -> int | dict[str, int] | None:
    """``--capacities``: one whole number for every group, or ``NAME=CAP,...``."""
    if text is None:
        return None

    def as_int(v: str, where: str) -> int:
        try:
            return int(v)
        except ValueError:
            raise error(f"--capacities: {where} must be a whole number; got {v!r}.") from None

    if "=" not in text:
        return as_int(text.strip(), "the capacity")
    caps = {}
    for entry in _split(text, "--capacities"):
        name, sep, v = entry.partition("=")
        if not sep:
            raise error(f"--capacities: write NAME=CAP for every group; got {entry!r}.")
        caps[name.strip()] = as_int(v.strip(), f"the capacity of {name.strip()!r}")
    return caps


def read_groups(path: str | None) -> dict[str, str] | None:
    """``--groups``: item name to group name from a public CSV; an item listed twice is refused."""
    if path is None:
        return None
    from ..datasets.records import read_public_csv

    gf = read_public_csv(path, "--groups", text_columns=["item", "group"])
    out: dict[str, str] = {}
    for i, (item, g) in enumerate(zip(gf.text["item"], gf.text["group"])):
        if item in out:
            raise error(f"--groups {Path(path).name}, {gf.line_of(i)}: item {item!r} is "
                         "listed twice; each item belongs to one group.")
        out[str(item)] = str(g)
    return out


def public_inputs(args: argparse.Namespace) -> dict[str, Any]:
    """The task's public inputs from the options, each refused for a task that does not read it."""
    for opt, tasks in _TASK_OPTIONS.items():
        if getattr(args, opt) is not None and args.task not in tasks:
            flag = "--" + opt.replace("_", "-")
            raise error(f"{flag} does not apply to --task {args.task} (it is for "
                         f"{' and '.join(tasks)}). Remove it.")
    if args.task == "facility-location":
        pub = {"candidates": args.candidates, "candidate_names": args.candidate_names,
               "partition_column": args.partition_column, "grid": _grid(args.grid),
               "bounds": _bounds(args), "similarity": args.similarity or "gaussian",
               "bandwidth": args.bandwidth, "radius": args.radius}
        if pub["grid"] is not None and pub["bounds"] is None:
            raise error("--grid needs public bounds for its two columns, by name: --bounds "
                         "NAME=LOW,HIGH for each (from the map, never from the records).")
        if pub["candidates"] is None and pub["grid"] is None:
            raise error("facility-location needs public candidate locations: pass "
                         "--candidates FILE.csv (with a header naming the record columns) or "
                         "--grid RxC with --bounds NAME=LOW,HIGH for each of the two columns. "
                         "They are never taken from the private records.")
    elif args.task == "feature-selection":
        if args.label is None:
            raise error("feature-selection needs the label column: pass --label NAME.")
        bounds = _bounds(args)
        pub = {"label": args.label, "bins": _bins(args.bins, bounds), "bounds": bounds,
               "label_thresholds": (None if args.label_thresholds is None else
                                    _floats(args.label_thresholds, "--label-thresholds"))}
    else:
        pub = {}
    return {k: v for k, v in pub.items() if v is not None}

def record_columns(args: argparse.Namespace) -> list[str] | None:
    """``--columns``, split."""
    return _split(args.columns, "--columns") if args.columns else None


def column_names(args: argparse.Namespace) -> list[str] | None:
    """``--names``, split."""
    return _split(args.names, "--names") if args.names else None


def dialect_options(args: argparse.Namespace) -> dict[str, str]:
    """``--delimiter`` and ``--encoding`` for the readers (checked there, with the option named)."""
    out = {}
    if args.delimiter is not None:
        delim = {"\\t": "\t", "tab": "\t"}.get(args.delimiter, args.delimiter)
        if len(delim) != 1:
            raise error(f"--delimiter must be one character (for example ';', or '\\t' for "
                        f"tabs); got {args.delimiter!r}.")
        out["delimiter"] = delim
    if args.encoding is not None:
        try:
            codecs.lookup(args.encoding)
        except LookupError:
            raise error(f"--encoding {args.encoding}: unknown encoding; use a name such as "
                        "utf-8, latin-1 or cp1252.") from None
        out["encoding"] = args.encoding
    return out


def scale_options(args: argparse.Namespace) -> dict[str, Any]:
    """Persons-and-scale options (user bound, relation, chunks, scheduler, threads), checked."""
    if args.task == "feature-selection":
        for opt in ("user_column", "max_rows_per_user", "relation", "chunk_rows", "scheduler"):
            if getattr(args, opt) is not None:
                raise error(f"--{opt.replace('_', '-')} does not apply to --task "
                             "feature-selection (the mutual information is not a sum over "
                             "rows). Remove it.")
        return {}
    if (args.user_column is None) != (args.max_rows_per_user is None):
        raise error("--user-column and --max-rows-per-user go together: which rows belong to "
                     "one person, and how many of them count (for example --user-column "
                     "rider --max-rows-per-user 5).")
    if args.max_rows_per_user is not None and args.max_rows_per_user < 1:
        raise error(f"--max-rows-per-user must be at least 1; got {args.max_rows_per_user}.")
    if args.chunk_rows is not None and args.chunk_rows < 1:
        raise error(f"--chunk-rows must be at least 1; got {args.chunk_rows}.")
    if args.chunk_rows is not None and args.scheduler is not None:
        raise error("Pass either --chunk-rows (one machine, the file re-read in chunks) or "
                     "--scheduler (a Dask cluster), not both.")
    if args.jobs is not None and args.jobs < 1:
        raise error(f"--jobs must be at least 1; got {args.jobs}.")
    return {"user_column": args.user_column, "max_rows_per_user": args.max_rows_per_user,
            "relation": args.relation, "chunk_rows": args.chunk_rows,
            "scheduler": args.scheduler,
            "n_jobs": args.jobs if args.jobs is not None else min(4, os.cpu_count() or 1)}
