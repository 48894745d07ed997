"""``dpsubmod select``: a private selection on your own CSV of records.

One row of the CSV is one record (one person). The command builds the objective of the chosen
task from the records, runs a private maximization method, prints the chosen items by name with
a privacy statement, and writes a JSON result. Everything that calibrates or shapes the output
(candidate locations, bandwidths, bin bounds, label thresholds, groups and capacities) must be
public and is taken from the command line or from public files, never from the records.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["register", "TASKS"]

TASKS = ("facility-location", "feature-selection", "coverage")
_CALLER = "dpsubmod select"

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

_BACKEND_GUARANTEE = {
    "secure": (
        "exact discrete sampling from the operating system's cryptographic random source "
        "(Canonne, Kamath and Steinke 2020); the guarantee is exact, with the sensitivity rounded "
        "up to the sampler's grid; not open to floating-point attacks; timing side channels are "
        "not covered"
    ),
    "numpy": (
        "seeded floating-point sampling for simulation and reproducibility; the guarantee holds "
        "for the idealised mechanism in exact arithmetic only, and floating-point samplers are "
        "open to known attacks (Mironov 2012): use it for trials, not to protect real people's "
        "data (pass --backend secure)"
    ),
}


@dataclass
class _Problem:
    """A task's objective over public items, and what the privacy statement needs."""

    f: Any
    names: list[str]
    items: str
    objective: str
    sensitivity_note: str
    records: int
    record: str
    columns: list[str]
    public: list[str] = field(default_factory=list)
    params: dict[str, Any] = field(default_factory=dict)


def _error(msg: str) -> Exception:
    from ..errors import ValidationError

    return ValidationError(msg)


# ------------------------------------------------------------------------------------------------
# parsing helpers
# ------------------------------------------------------------------------------------------------
def _split(text: str, option: str) -> list[str]:
    parts = [p.strip() for p in text.split(",")]
    if not parts or any(p == "" for p in parts):
        raise _error(f"{option} must be a comma-separated list without empty entries; got "
                     f"{text!r}.")
    return parts


def _floats(text: str, option: str, count: int | None = None) -> list[float]:
    parts = _split(text, option)
    try:
        vals = [float(p) for p in parts]
    except ValueError:
        raise _error(f"{option} must hold numbers separated by commas; got {text!r}.") from None
    if not all(math.isfinite(v) for v in vals):
        raise _error(f"{option} must hold finite numbers; got {text!r}.")
    if count is not None and len(vals) != count:
        raise _error(f"{option} must hold {count} numbers; got {len(vals)} in {text!r}.")
    return vals


def _fmt(x: float) -> str:
    return f"{x:.6g}"


def _check_task_options(args: argparse.Namespace) -> None:
    for opt, tasks in _TASK_OPTIONS.items():
        if getattr(args, opt) is not None and args.task not in tasks:
            flag = "--" + opt.replace("_", "-")
            raise _error(f"{flag} does not apply to --task {args.task} (it is for "
                         f"{' and '.join(tasks)}). Remove it.")


# ------------------------------------------------------------------------------------------------
# tasks
# ------------------------------------------------------------------------------------------------
def _facility_location(args: argparse.Namespace) -> tuple[_Problem, Any]:
    from scipy.spatial import cKDTree

    from ..datasets import grid_candidates, load_csv
    from ..functions import FacilityLocation

    cols = _split(args.columns, "--columns") if args.columns else None
    data = load_csv(args.data, columns=cols)
    d = data.X.shape[1]
    if d == 0:
        raise _error(f"{args.data}: no coordinate columns to use; pass --columns.")
    public: list[str] = []
    groups = None
    if args.candidates is not None and args.grid is not None:
        raise _error("Pass either --candidates FILE.csv or --grid RxC, not both.")
    if args.candidates is not None:
        if args.bounds is not None:
            raise _error("--bounds goes with --grid (the grid's public box); with --candidates "
                         "it is not used. Remove it.")
        text = [c for c in (args.candidate_names, args.partition_column) if c is not None]
        probe = load_csv(args.candidates, columns=[], text_columns=text)
        # match coordinates by header name when both files have one, else take the file as is
        by_name = (data.has_header and probe.has_header
                   and set(data.feature_names) <= set(probe.columns))
        cand = load_csv(args.candidates, text_columns=text, record="one public candidate",
                        columns=list(data.feature_names) if by_name else None)
        C = cand.X
        if C.shape[1] != d:
            raise _error(
                f"{args.candidates}: the candidates have {C.shape[1]} coordinate columns "
                f"({', '.join(cand.feature_names)}) but the records have {d} "
                f"({', '.join(data.feature_names)}). Give both files the same coordinates "
                "(same header names), or pass --columns."
            )
        if args.candidate_names is not None:
            names = list(cand.text[args.candidate_names])
        else:
            names = ["(" + ", ".join(_fmt(v) for v in row) + ")" for row in C]
        if args.partition_column is not None:
            groups = list(cand.text[args.partition_column])
        public.append(f"candidate locations from {args.candidates}")
        where = f"{C.shape[0]} public candidate locations from {Path(args.candidates).name}"
    elif args.grid is not None:
        if args.partition_column is not None:
            raise _error("--partition-column names a column of the --candidates file; with "
                         "--grid use --groups FILE.csv (item,group) instead.")
        try:
            r_txt, c_txt = args.grid.lower().split("x")
            rows, ncols = int(r_txt), int(c_txt)
        except ValueError:
            raise _error(f"--grid must look like RxC (e.g. 10x10); got {args.grid!r}.") from None
        if rows < 1 or ncols < 1:
            raise _error(f"--grid needs at least one row and one column; got {args.grid!r}.")
        if args.bounds is None:
            raise _error("--grid needs explicit public bounds: --bounds xmin,xmax,ymin,ymax "
                         "(from the map, never from the records).")
        if len(args.bounds) != 1:
            raise _error("--grid takes one --bounds xmin,xmax,ymin,ymax.")
        if d != 2:
            raise _error(f"--grid places candidates in the plane, but the records have {d} "
                         f"coordinate columns ({', '.join(data.feature_names)}); pass "
                         "--columns x,y or use --candidates.")
        b = _floats(args.bounds[0], "--bounds", 4)
        C = grid_candidates(rows, ncols, b)
        names = ["(" + ", ".join(_fmt(v) for v in row) + ")" for row in C]
        public.append(f"a {rows}x{ncols} grid of cell centres on the box "
                      f"x in [{_fmt(b[0])}, {_fmt(b[1])}], y in [{_fmt(b[2])}, {_fmt(b[3])}]")
        where = f"{C.shape[0]} public candidate locations on a {rows}x{ncols} grid"
    else:
        raise _error(
            "facility-location needs public candidate locations: pass --candidates FILE.csv "
            "(one candidate per row) or --grid RxC with --bounds xmin,xmax,ymin,ymax. They are "
            "never taken from the private records, since that would publish them."
        )
    similarity = args.similarity or "gaussian"
    if similarity == "gaussian":
        if args.radius is not None:
            raise _error("--radius goes with --similarity negative-distance; use --bandwidth.")
        h = args.bandwidth
        if h is None:
            h = _candidate_spacing(C, cKDTree)
            public.append(f"bandwidth {_fmt(h)} (median distance between neighbouring "
                          "candidates; computed from the public candidates only)")
        else:
            public.append(f"bandwidth {_fmt(h)}")
        f = FacilityLocation.from_records(data.X, C, "gaussian", bandwidth=h)
        desc = (f"average over records of the best Gaussian similarity exp(-d^2 / (2 h^2)) to a "
                f"chosen location, h = {_fmt(h)}")
        params = {"similarity": "gaussian", "bandwidth": h}
        s_max = 1.0
    else:
        if args.bandwidth is not None:
            raise _error("--bandwidth goes with --similarity gaussian; use --radius.")
        rad = args.radius
        if rad is None:
            span = C.max(axis=0) - C.min(axis=0)
            rad = float(np.sqrt((span ** 2).sum()))
            if not rad > 0:
                raise _error("Pass --radius: the default (the diameter of the candidates' "
                             "bounding box) is 0 for a single candidate location.")
            public.append(f"radius {_fmt(rad)} (diameter of the candidates' bounding box)")
        else:
            public.append(f"radius {_fmt(rad)}")
        f = FacilityLocation.from_records(data.X, C, "negative_distance", radius=rad)
        desc = (f"average over records of the best max(0, D - distance) to a chosen location, "
                f"D = {_fmt(rad)}")
        params = {"similarity": "negative-distance", "radius": rad}
        s_max = rad
    N = data.n_records
    prob = _Problem(
        f=f, names=names, items="candidate locations", objective=desc,
        sensitivity_note=(f"s_max / N = {_fmt(s_max)} / {N}: one record moves only its own "
                          "term, which lies in [0, s_max / N]"),
        records=N, record=data.record, columns=list(data.feature_names), public=public,
        params={**params, "candidates": where,
                "candidate_coordinates": C.tolist()},
    )
    return prob, groups


def _candidate_spacing(C: np.ndarray, tree_cls: Any) -> float:
    if C.shape[0] < 2:
        raise _error("Pass --bandwidth: the default (the median distance between neighbouring "
                     "candidates) needs at least two candidate locations.")
    dist, _ = tree_cls(C).query(C, k=2)
    h = float(np.median(dist[:, 1]))
    if not h > 0:
        raise _error("Pass --bandwidth: the candidates coincide, so the default (median "
                     "distance between neighbouring candidates) is 0.")
    return h


def _bounds_table(args: argparse.Namespace, features: tuple[str, ...]
                  ) -> dict[str, tuple[float, float]]:
    """Public (low, high) per feature from --bounds and --bounds-file."""
    from ..datasets import load_csv

    table: dict[str, tuple[float, float]] = {}
    if args.bounds_file is not None:
        bf = load_csv(args.bounds_file, header=True, columns=["low", "high"],
                      text_columns=["column"], record="public bounds")
        for name, (lo, hi) in zip(bf.text["column"], bf.X):
            table[name] = (float(lo), float(hi))
    for entry in args.bounds or []:
        if "=" in entry:
            name, _, rng_txt = entry.partition("=")
            lo, hi = _floats(rng_txt, f"--bounds {entry}", 2)
            table[name.strip()] = (lo, hi)
        else:
            lo, hi = _floats(entry, "--bounds", 2)
            for name in features:
                table.setdefault(name, (lo, hi))
    unknown = [n for n in table if n not in features]
    if unknown:
        raise _error(f"Bounds were given for {unknown[0]!r}, which is not a feature column "
                     f"(features: {', '.join(features)}). Fix the name.")
    for name, (lo, hi) in table.items():
        if not lo < hi:
            raise _error(f"The bounds of column {name!r} must satisfy low < high; got "
                         f"({_fmt(lo)}, {_fmt(hi)}).")
    return table


def _first_non_integer(v: np.ndarray) -> int | None:
    bad = np.flatnonzero(v != np.round(v))
    return int(bad[0]) if bad.size else None


def _feature_selection(args: argparse.Namespace) -> tuple[_Problem, Any]:
    from ..datasets import discretize, load_csv
    from ..functions import MutualInformation

    if args.label is None:
        raise _error("feature-selection needs the label column: pass --label NAME (the column "
                     "the features should predict).")
    cols = _split(args.columns, "--columns") if args.columns else None
    data = load_csv(args.data, columns=cols, label_column=args.label)
    if data.X.shape[1] == 0:
        raise _error(f"{args.data}: no feature columns besides the label; pass --columns.")
    public: list[str] = []
    y = data.y
    params: dict[str, Any] = {"label": data.label_name}
    if args.label_thresholds is not None:
        t = np.array(_floats(args.label_thresholds, "--label-thresholds"))
        if np.any(np.diff(t) <= 0):
            raise _error("--label-thresholds must be increasing.")
        y = (y[:, None] >= t[None, :]).sum(axis=1)
        public.append(f"label thresholds {', '.join(_fmt(v) for v in t)} on {data.label_name!r}")
        params["label_thresholds"] = t.tolist()
    else:
        r = _first_non_integer(y)
        if r is not None:
            raise _error(
                f"{args.data}, line {data.line_of(r)}, column {data.label_name!r}: the label "
                f"{_fmt(y[r])} is not a class code. Labels must be integers; for a numeric "
                "label pass --label-thresholds t1,t2,... (public cut points) to form classes."
            )
    X = data.X
    codes = np.empty(X.shape, dtype=np.int64)
    if args.bins is None and (args.bounds is not None or args.bounds_file is not None):
        raise _error("--bounds / --bounds-file set the range of --bins; pass --bins B too.")
    table = _bounds_table(args, data.feature_names) if args.bins is not None else {}
    if args.bins is not None and args.bins < 1:
        raise _error(f"--bins must be at least 1; got {args.bins}.")
    binned = []
    for j, name in enumerate(data.feature_names):
        if name in table:
            lo, hi = table[name]
            codes[:, j] = discretize(X[:, j:j + 1], args.bins, np.array([lo]),
                                     np.array([hi]))[:, 0]
            binned.append(name)
            continue
        r = _first_non_integer(X[:, j])
        if r is not None:
            raise _error(
                f"{args.data}, line {data.line_of(r)}, column {name!r}: the value {_fmt(X[r, j])} "
                "is not a category code. Feature columns must hold integer codes, or be "
                "discretized with public bounds: pass --bins B with --bounds "
                f"{name}=LOW,HIGH (or --bounds-file)."
            )
        codes[:, j] = X[:, j].astype(np.int64)
    if binned:
        public.append(f"{args.bins} equal-width bins on public bounds for "
                      f"{', '.join(binned)}")
        params.update(bins=args.bins, bounds={n: list(table[n]) for n in binned})
    f = MutualInformation.from_records(codes, y.astype(np.int64))
    N = data.n_records
    prob = _Problem(
        f=f, names=list(data.feature_names), items="features",
        objective=(f"empirical mutual information (nats) between the chosen features and "
                   f"{data.label_name!r} (Krause and Guestrin 2005; not submodular in general, "
                   "so greedy is a heuristic here)"),
        sensitivity_note=(f"B(N)/N for N = {N} rows (MutualInformation.replace_one_sensitivity: "
                          "the largest change of the plug-in mutual information when one row, "
                          "label included, is replaced)"),
        records=N, record=data.record, columns=list(data.feature_names) + [data.label_name],
        public=public, params=params,
    )
    return prob, None


def _coverage(args: argparse.Namespace) -> tuple[_Problem, Any]:
    import scipy.sparse as sp

    from ..datasets import load_csv
    from ..functions import Coverage

    cols = _split(args.columns, "--columns") if args.columns else None
    data = load_csv(args.data, columns=cols)
    X = data.X
    if X.shape[1] == 0:
        raise _error(f"{args.data}: no set columns to use; pass --columns.")
    neg = np.argwhere(X < 0)
    if neg.size:
        r, c = neg[0]
        raise _error(
            f"{args.data}, line {data.line_of(int(r))}, column {data.feature_names[c]!r}: the "
            f"value {_fmt(X[r, c])} is negative. A coverage cell is 1 (or any positive value) "
            "when the set covers the person and 0 otherwise."
        )
    A = sp.csr_array(X > 0)
    records = np.split(A.indices.astype(np.int64), A.indptr[1:-1])
    f = Coverage.from_records(records, X.shape[1])
    N = data.n_records
    prob = _Problem(
        f=f, names=list(data.feature_names), items="sets",
        objective="fraction of records (people) covered by at least one chosen set",
        sensitivity_note=(f"1/N for N = {N} rows: one person's coverage indicator, worth 1/N, "
                          "is the only term that changes"),
        records=N, record=data.record, columns=list(data.feature_names), public=[],
        params={"cell_rule": "a positive cell means the set covers the person"},
    )
    return prob, None


_BUILDERS = {"facility-location": _facility_location, "feature-selection": _feature_selection,
             "coverage": _coverage}


# ------------------------------------------------------------------------------------------------
# constraint
# ------------------------------------------------------------------------------------------------
def _constraint(args: argparse.Namespace, prob: _Problem, groups: list[str] | None
                ) -> tuple[Any, str, dict[str, Any]]:
    from .._validation import check_int
    from ..constraints import PartitionMatroid

    n = len(prob.names)
    matroid = args.groups is not None or args.partition_column is not None
    if args.k is not None and (matroid or args.capacities is not None):
        raise _error("Pass either --k (choose k items) or a partition matroid (--groups or "
                     "--partition-column, with --capacities), not both.")
    if args.k is not None:
        k = check_int(args.k, "--k", low=1, high=n, caller=_CALLER,
                      fix=f"There are {n} {prob.items}; pass 1 <= --k <= {n}.")
        return k, f"choose k={k} of {n} {prob.items}", {"type": "cardinality", "k": k}
    if not matroid:
        if args.capacities is not None:
            raise _error("--capacities needs groups: pass --groups FILE.csv or "
                         "--partition-column NAME.")
        raise _error("Say how many items to choose: pass --k K, or a partition matroid "
                     "(--groups FILE.csv or --partition-column NAME, with --capacities).")
    if args.groups is not None and args.partition_column is not None:
        raise _error("Pass either --groups or --partition-column, not both.")
    if args.capacities is None:
        raise _error("A partition matroid needs --capacities: one number for every group, or "
                     "NAME=CAP,NAME=CAP,...")
    if args.groups is not None:
        groups = _groups_from_file(args.groups, prob)
        public_src = f"groups from {args.groups}"
    elif groups is None:  # pragma: no cover - the facility-location builder always sets them
        raise _error("--partition-column needs --candidates.")
    else:
        public_src = f"groups from column {args.partition_column!r} of {args.candidates}"
    labels = sorted(set(groups))
    code = {g: i for i, g in enumerate(labels)}
    caps = _capacities(args.capacities, labels)
    matroid_obj = PartitionMatroid(np.array([code[g] for g in groups]), caps)
    desc = (f"choose at most {', '.join(f'{c} from {g!r}' for g, c in zip(labels, caps))} "
            f"({n} {prob.items} in {len(labels)} groups; rank {matroid_obj.rank})")
    prob.public.append(public_src + ", capacities " + ", ".join(
        f"{g}={c}" for g, c in zip(labels, caps)))
    return matroid_obj, desc, {"type": "partition", "groups": dict(zip(prob.names, groups)),
                               "capacities": dict(zip(labels, caps)),
                               "rank": int(matroid_obj.rank)}


def _groups_from_file(path: str, prob: _Problem) -> list[str]:
    from ..datasets import load_csv

    gf = load_csv(path, header=True, columns=[], text_columns=["item", "group"],
                  record="public groups")
    group_of: dict[str, str] = {}
    for line, item, g in zip(gf.line_numbers, gf.text["item"], gf.text["group"]):
        if item in group_of:
            raise _error(f"{path}, line {line}: item {item!r} is listed twice; each item belongs "
                         "to one group.")
        if item not in prob.names:
            raise _error(f"{path}, line {line}: {item!r} is not one of the {prob.items} "
                         f"({', '.join(prob.names[:6])}{', ...' if len(prob.names) > 6 else ''}).")
        group_of[item] = g
    missing = [nm for nm in prob.names if nm not in group_of]
    if missing:
        raise _error(f"{path}: no group for {missing[0]!r}"
                     f"{f' and {len(missing) - 1} more' if len(missing) > 1 else ''}; list "
                     f"every one of the {prob.items} with its group.")
    return [group_of[nm] for nm in prob.names]


def _capacities(text: str, labels: list[str]) -> list[int]:
    def as_int(v: str, where: str) -> int:
        try:
            c = int(v)
        except ValueError:
            raise _error(f"--capacities: {where} must be a whole number; got {v!r}.") from None
        if c < 0:
            raise _error(f"--capacities: {where} must be >= 0; got {c}.")
        return c

    if "=" not in text:
        c = as_int(text.strip(), "the capacity")
        return [c] * len(labels)
    caps: dict[str, int] = {}
    for entry in _split(text, "--capacities"):
        name, sep, v = entry.partition("=")
        if not sep:
            raise _error(f"--capacities: write NAME=CAP for every group; got {entry!r}.")
        name = name.strip()
        if name not in labels:
            raise _error(f"--capacities: {name!r} is not a group (groups: "
                         f"{', '.join(labels)}).")
        caps[name] = as_int(v.strip(), f"the capacity of {name!r}")
    missing = [g for g in labels if g not in caps]
    if missing:
        raise _error(f"--capacities: no capacity for group {missing[0]!r}; give every group "
                     "one (0 excludes a group).")
    return [caps[g] for g in labels]


# ------------------------------------------------------------------------------------------------
# the command
# ------------------------------------------------------------------------------------------------
def _resolve_method(name: str | None, backend: str) -> tuple[str, dict[str, Any]]:
    from ..offline import list_methods
    from ..offline.registry import get_method

    name = name or "private_greedy"
    spec = get_method(name)
    if not spec.private:
        raise _error(f"--method {name} is not private; dpsubmod select releases only private "
                     f"selections. Choose one of: {', '.join(list_methods(private=True))}.")
    if backend not in spec.backends:
        raise _error(f"--method {name} draws its noise on the {' or '.join(spec.backends)} "
                     f"backend only; pass --backend {spec.backends[0]} or choose another "
                     "method.")
    return name, {"backend": backend}


def _select(args: argparse.Namespace) -> int:
    from .. import __version__
    from .._validation import check_delta, check_epsilon, check_int
    from ..errors import BudgetExceededError
    from ..offline import maximize
    from ..offline.registry import get_method
    from ..privacy.composition import COMPOSITIONS

    # -- everything is validated before any record is read or any noise is drawn ----------------
    if args.task is None:
        raise _error(f"Pass --task, one of: {', '.join(TASKS)}.")
    _check_task_options(args)
    if args.epsilon is None:
        raise _error("Pass the privacy budget: --epsilon EPS (for example --epsilon 1).")
    eps = check_epsilon(args.epsilon, "--epsilon", caller=_CALLER)
    delta = check_delta(args.delta, "--delta", caller=_CALLER)
    if args.seed is not None:
        check_int(args.seed, "--seed", low=0, caller=_CALLER)
    method, options = _resolve_method(args.method, args.backend)
    budget = None
    if args.budget is not None:
        from ..privacy.budget_file import FileBudget

        # Opened (and checked against this data file) before any record is read or noise drawn.
        budget = FileBudget(args.budget, data=args.data,
                            command="dpsubmod select " + " ".join(sys.argv[2:]))
    out = Path(args.out) if args.out is not None else None
    if out is not None:
        if out.is_dir():
            raise _error(f"--out {out} is a directory; give a file name such as result.json.")
        if not out.parent.exists():
            raise _error(f"--out {out}: the folder {out.parent} does not exist.")

    prob, groups = _BUILDERS[args.task](args)
    constraint, cdesc, cjson = _constraint(args, prob, groups)

    result = maximize(prob.f, constraint, method, epsilon=eps, delta=delta, budget=budget,
                      rng=args.seed, **options)
    rep = result.privacy
    # a method must never report more than was asked; if one did, release nothing
    if rep is None or rep.epsilon > eps * (1 + 1e-9) or rep.delta > delta * (1 + 1e-9):
        raise BudgetExceededError(
            f"{method} reported a spend of {rep} above the requested (epsilon={eps:g}, "
            f"delta={delta:g}); nothing was released."
        )
    sel = [int(e) for e in result.selection]
    names = [prob.names[e] for e in sel]
    data_name = Path(args.data).name
    neighbouring = (f"replace one row of {data_name} by any other row (one record = one row; "
                    f"the number of rows, {prob.records}, is treated as public)")
    rule = COMPOSITIONS.get(rep.composition, rep.composition)
    uses = rep.uses
    public = prob.public + [cdesc]
    spec = get_method(method)
    doc = {
        "dpsubmod_version": __version__,
        "task": args.task,
        "data": {"file": str(args.data), "records": prob.records, "record": prob.record,
                 "columns": prob.columns},
        "selection": sel,
        "names": names,
        "constraint": cjson,
        "privacy": {
            "epsilon": rep.epsilon, "delta": rep.delta,
            "requested_epsilon": eps, "requested_delta": delta,
            "composition": rep.composition, "composition_rule": rule,
            "mechanism_uses": uses, "neighbouring": neighbouring,
            "backend": rep.backend, "backend_guarantee": _BACKEND_GUARANTEE.get(rep.backend, ""),
            "statement": str(rep),
            "budget": (None if budget is None else
                       {"file": Path(args.budget).name, "epsilon": budget.epsilon,
                        "delta": budget.delta, "rule": budget.composition,
                        "spent_epsilon": budget.spent[0], "spent_delta": budget.spent[1]}),
        },
        "sensitivity": prob.f.sensitivity,
        "sensitivity_note": prob.sensitivity_note,
        "objective": prob.objective,
        "public_inputs": public,
        "params": {
            "method": method, "backend": args.backend, "seed": args.seed,
            "epsilon": eps, "delta": delta, **prob.params,
            "method_params": result.params,
        },
        "non_private_diagnostics": {
            "warning": ("NOT differentially private: computed from the raw records without "
                        "noise; for checking a run, never for publication"),
            "utility": result.diagnostics.value,
            "evaluations": result.evaluations,
        },
    }
    text = json.dumps(doc, indent=2, default=_json_default)
    if out is not None:
        tmp = out.with_name(out.name + ".tmp")
        try:
            tmp.write_text(text + "\n")
            os.replace(tmp, out)
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            raise _error(f"--out {out}: cannot write the result ({exc.strerror}).") from None

    lines = [
        f"dpsubmod select: {args.task} on {data_name} ({prob.records} records; one record = "
        f"{prob.record})",
        f"Objective: {prob.objective}",
        f"Constraint: {cdesc}",
        f"Method: {method} ({spec.summary})",
        "",
        "Selected (in the order chosen):",
    ]
    lines += [f"  {i + 1}. {nm}" for i, nm in enumerate(names)]
    seed_note = ("" if rep.backend != "secure" or args.seed is None else
                 " (--seed does not affect the noise of the secure backend)")
    lines += [
        "",
        "Privacy statement:",
        f"  The selection above is (epsilon={rep.epsilon:g}, delta={rep.delta:g})-differentially "
        f"private (requested epsilon={eps:g}, delta={delta:g}), by {rule} over {uses} mechanism "
        f"use{'s' if uses != 1 else ''}.",
        f"  Neighbouring data sets: {neighbouring}.",
        f"  Declared sensitivity: {prob.f.sensitivity:.6g} = {prob.sensitivity_note}.",
        f"  Noise backend: {rep.backend}: {_BACKEND_GUARANTEE.get(rep.backend, '')}{seed_note}.",
        "  Public inputs (not protected; they must not be derived from the records): "
        + "; ".join(public) + ".",
        (f"  Budget {Path(args.budget).name}: {budget.statement()}" if budget is not None else
         "  No budget file was given: nothing bounds the total over repeated runs on the same "
         "data. Pass --budget FILE (create it with 'dpsubmod budget new FILE --epsilon E')."),
        "",
        f"Non-private diagnostic (objective value {result.diagnostics.value:.6g}): computed from "
        "the raw records without noise; NOT covered by the guarantee, do not publish it.",
    ]
    if out is not None:
        lines.append(f"Result written to {out}")
    print("\n".join(lines))
    return 0


def _json_default(obj: Any) -> Any:
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, (set, frozenset, tuple)):
        return list(obj)
    return str(obj)


def _one_line_error(message: str) -> None:
    """argparse's error hook for this subcommand: one line on stderr, exit status 2."""
    sys.stderr.write(f"dpsubmod: error: select: {message} (see 'dpsubmod select --help')\n")
    sys.exit(2)


_EPILOG = """\
examples:
  dpsubmod select riders.csv --task facility-location --columns x,y \\
      --grid 10x10 --bounds 0,1,0,1 --k 5 --epsilon 1 --out result.json
  dpsubmod select riders.csv --task facility-location --candidates sites.csv \\
      --candidate-names name --partition-column district --capacities 1 --epsilon 1
  dpsubmod select survey.csv --task feature-selection --label outcome \\
      --bins 4 --bounds age=18,90 --bounds income=0,200000 --k 3 --epsilon 2
  dpsubmod select people.csv --task coverage --k 3 --epsilon 0.5 --delta 1e-6

One row of the CSV is one record (one person): the guarantee hides any single row being
replaced by any other. Candidates, bandwidths, bounds, thresholds, groups and capacities are
public inputs: fix them without looking at the records.
"""


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``select`` subcommand to the ``dpsubmod`` parser."""
    p = sub.add_parser(
        "select", help="Privately select items from your own CSV of records.",
        description=("Choose items (facility locations, predictive features, covering sets) "
                     "from a CSV file of private records, one row per person, with a "
                     "differentially private method; print the choice and a privacy "
                     "statement and write a JSON result."),
        epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.error = _one_line_error  # type: ignore[method-assign]
    p.add_argument("data", help="CSV file of private records, one row per record (person)")
    p.add_argument("--task", choices=TASKS, help="what to select (required)")
    p.add_argument("--columns", help="comma-separated record columns to use (default: all; for "
                   "feature-selection all but the label)")
    g = p.add_argument_group("privacy and method")
    g.add_argument("--epsilon", type=float, help="total privacy budget epsilon > 0 (required)")
    g.add_argument("--delta", type=float, default=0.0, help="privacy parameter delta in [0, 1) "
                   "(default 0: pure differential privacy)")
    g.add_argument("--method", help="a private method of dpsubmod.list_methods(private=True) "
                   "(default private_greedy, Mitrovic et al. 2017)")
    g.add_argument("--backend", choices=("secure", "numpy"), default="secure",
                   help="noise backend (default secure; numpy is seeded and reproducible but "
                   "not hardened, for trials only)")
    g.add_argument("--seed", type=int, help="random seed (reproduces numpy-backend runs)")
    g.add_argument("--budget", metavar="FILE", help="the data set's budget file (from 'dpsubmod "
                   "budget new'): the release is charged to it before any noise, and refused "
                   "(exit 2, nothing written) when it does not fit")
    g.add_argument("--out", help="write the JSON result to this file")
    c = p.add_argument_group("constraint")
    c.add_argument("--k", type=int, help="choose k items")
    c.add_argument("--groups", help="public CSV with columns item,group (item = the name "
                   "printed for each candidate, feature or set): a partition matroid")
    c.add_argument("--partition-column", help="facility-location: column of the --candidates "
                   "file holding each candidate's group: a partition matroid")
    c.add_argument("--capacities", help="items allowed per group: one number for all groups, "
                   "or NAME=CAP,NAME=CAP,...")
    fl = p.add_argument_group("facility-location (public candidates)")
    fl.add_argument("--candidates", help="public CSV of candidate locations, one per row, with "
                    "the same coordinate columns as the records")
    fl.add_argument("--candidate-names", help="column of the --candidates file naming each "
                    "candidate (default: its coordinates)")
    fl.add_argument("--grid", help="RxC: a grid of candidate cell centres (needs --bounds)")
    fl.add_argument("--bounds", action="append", help="facility-location with --grid: "
                    "xmin,xmax,ymin,ymax. feature-selection: LOW,HIGH for every binned column "
                    "or NAME=LOW,HIGH for one (repeatable)")
    fl.add_argument("--similarity", choices=("gaussian", "negative-distance"),
                    help="similarity of a record to a location (default gaussian)")
    fl.add_argument("--bandwidth", type=float, help="public Gaussian bandwidth (default: median "
                    "distance between neighbouring candidates)")
    fl.add_argument("--radius", type=float, help="public radius D of negative-distance "
                    "similarity max(0, D - distance) (default: candidates' diameter)")
    fs = p.add_argument_group("feature-selection")
    fs.add_argument("--label", help="the label column the features should predict")
    fs.add_argument("--bins", type=int, help="equal-width bins for columns with public bounds")
    fs.add_argument("--bounds-file", help="public CSV with columns column,low,high")
    fs.add_argument("--label-thresholds", help="public increasing cut points t1,t2,... turning a "
                    "numeric label into classes (class = number of t with label >= t)")
    p.set_defaults(func=_select)
