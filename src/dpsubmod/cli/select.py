"""``dpsubmod select``: a private selection on your own table of records.

Parsing and printing only: the task, the constraint and the release are built by
:mod:`dpsubmod.tasks`. One row of the data file is one record (one person). Everything that
calibrates or shapes the output (candidates, bandwidths, bounds, thresholds, groups,
capacities) is public and comes from the command line or from public files, matched to the
record columns by name.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from .._atomic import PendingFile
from .._validation import check_delta, check_epsilon, check_int
from .._version import __version__
from ._paths import check_output_file
from ._select_inputs import (
    column_names,
    dialect_options,
    error,
    parse_capacities,
    public_inputs,
    read_groups,
    record_columns,
    scale_options,
)

TASKS = ("facility-location", "feature-selection", "coverage")
_CALLER = "dpsubmod select"

#: Bytes reserved for each output file before the budget is charged (a release is a few KiB),
#: so that a full disk is found while nothing has been spent.
_RESERVE = 16 * 1024


def _outputs(diag: Path | None, out: Path | None) -> list[Any]:
    """Fresh temporary files for ``--diagnostics`` and ``--out`` (None where not asked for),
    with their space reserved, made before any charge; none is left behind on failure."""
    made: list[Any] = []
    try:
        for path, opt in ((diag, "--diagnostics"), (out, "--out")):
            made.append(None if path is None else _pending(path, opt))
    except BaseException:
        _discard(made)
        raise
    return made


def _discard(pending: list[Any]) -> None:
    for p in pending:
        if p is not None:
            p.discard()


def _pending(path: Path, opt: str) -> Any:
    try:
        return PendingFile(path, reserve=_RESERVE)
    except OSError as exc:
        raise error(f"{opt} {path.name}: cannot write in {path.parent} ({exc.strerror}; "
                    f"{_RESERVE // 1024} KiB are needed); nothing was charged or "
                    f"released. Free some space or pass {opt} with another file.") from None


def _commit(pending: Any, opt: str, doc: dict[str, Any], budget: Any, args: Any) -> None:
    """Write one output after the charge; a failure says what was spent."""
    try:
        pending.commit((json.dumps(doc, indent=2, default=_json_default) + "\n").encode())
    except OSError as exc:
        if budget is None:
            spent = "no budget file was given, so none was charged"
        else:
            eps, dlt = args.epsilon, args.delta
            spent = (f"the budget file {Path(args.budget).name} WAS charged (epsilon {eps:g}, "
                     f"delta {dlt:g}) and that spend stands")
        raise error(f"{opt} {pending.path.name}: cannot write ({exc.strerror}) after the "
                    f"selection was made; nothing was released (the selection was not "
                    f"written or printed), but {spent}.") from None


def _json_default(obj: Any) -> Any:
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, (set, frozenset, tuple)):
        return list(obj)
    return str(obj)


def _check_data(args: argparse.Namespace, public: dict[str, Any]) -> int:
    from ..tasks import check_data

    issue = check_data(args.task, args.data, columns=record_columns(args), names=column_names(args),
                       user_column=args.user_column, **dialect_options(args), **public)
    head = ("DATA CHECK, not a release: this output quotes private values; keep it on your "
            "machine. No noise was drawn and no budget was charged.")
    if issue is None:
        print(f"{head}\nEvery record can be read, and there are no invalid values in the "
              f"columns the {args.task} task reads.")
        return 0
    if issue.column == "(all)":
        print(f"{head}\nFirst unreadable record: {issue.where} of {Path(args.data).name}: "
              f"{issue.value} ({issue.reason}).")
        return 1
    value = issue.value if issue.value != "nan" else "empty, text, NaN or infinite"
    print(f"{head}\nFirst invalid value: {issue.where} of {Path(args.data).name}, column "
          f"{issue.column!r}: {value} ({issue.reason}). In a release it is handled by the "
          "--invalid-rows rule.")
    return 1


def _owner_warnings(task: Any) -> None:
    """Warnings for the data's owner, on standard error only: never in the release."""
    from ..tasks import owner_warnings

    for text in owner_warnings(task):
        print(f"dpsubmod select: OWNER WARNING, not part of the release: {text}",
              file=sys.stderr)


class _NoBar:
    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass

    def __enter__(self) -> _NoBar:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _progress(task: Any, spec: Any) -> Any:
    """A progress bar over the passes of the records (none when stderr is not a terminal)."""
    # tqdm's own rule (disable=None), applied before tqdm is imported: where no bar would be
    # drawn, its import (and that of multiprocessing's locks) is not paid for either
    isatty = getattr(sys.stderr, "isatty", None)
    if not hasattr(task.f, "progress") or (isatty is not None and not isatty()):
        return _NoBar()
    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover - tqdm ships with the distributed extra
        return _NoBar()
    steps = spec.as_dict.get("k", spec.as_dict.get("rank", 1))
    bar = tqdm(total=int(steps) + 1, desc="dpsubmod select", unit="pass", disable=None,
               file=sys.stderr, leave=False)
    task.f.progress = bar.update
    return bar


def _choose_backend(args: argparse.Namespace, spec: Any) -> str:
    """``--backend`` by the library's one default rule: no --seed, secure; a --seed, a numpy
    simulation. Its warning (a --seed with a secure backend) is one line on standard error."""
    from ..privacy.backends import choose_backend

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        backend = choose_backend(args.backend, args.seed, caller=_CALLER,
                                 supported=spec.backends, seed_name="--seed")
    for w in caught:
        print(f"dpsubmod select: warning: {str(w.message).partition(': ')[2]}",
              file=sys.stderr)
    return str(backend)


def _select(args: argparse.Namespace) -> int:
    from ..privacy.backends import backend_chosen
    from ..tasks import build_constraint, build_task
    from ..tasks.release import _checked_select

    # -- everything is validated before any record is read or any noise is drawn ----------------
    if args.task is None:
        raise error(f"Pass --task, one of: {', '.join(TASKS)}.")
    public = public_inputs(args)
    if args.check_data:
        return _check_data(args, public)
    if args.epsilon is None:
        raise error("Pass the privacy budget: --epsilon EPS (for example --epsilon 1).")
    eps = check_epsilon(args.epsilon, "--epsilon", caller=_CALLER)
    delta = check_delta(args.delta, "--delta", caller=_CALLER)
    if args.seed is not None:
        check_int(args.seed, "--seed", low=0, caller=_CALLER)
    out = None if args.out is None else check_output_file("--out", args.out,
                                                          create_folder=False)
    diag = None if args.diagnostics is None else check_output_file(
        "--diagnostics", args.diagnostics, create_folder=False, example="diagnostics.json")
    if out is not None and diag is not None and out.resolve() == diag.resolve():
        raise error("--out and --diagnostics must be different files: the release and the "
                     "non-private diagnostics are never mixed.")
    from ..offline.registry import get_method

    matroid = args.groups is not None or args.partition_column is not None
    if args.k is not None and (matroid or args.capacities is not None):
        raise error("Pass either --k (choose k items) or a partition matroid (--groups or "
                     "--partition-column, with --capacities), not both.")
    if args.k is None and not matroid:
        raise error("Say how many items to choose: pass --k K, or a partition matroid "
                     "(--groups FILE.csv or --partition-column NAME, with --capacities).")
    if matroid and args.capacities is None:
        raise error("A partition matroid needs --capacities: one number for every group, or "
                     "NAME=CAP,NAME=CAP,...")
    method = args.method or "private_greedy"
    spec = get_method(method)
    if not spec.private:
        from ..offline import list_methods

        raise error(f"--method {method} is not private; dpsubmod select releases only private "
                     f"selections. Choose one of: {', '.join(list_methods(private=True))}.")
    if args.backend is not None and args.backend not in spec.backends:
        raise error(f"--method {method} draws its noise on the {' or '.join(spec.backends)} "
                     f"backend only; pass --backend {spec.backends[0]} or choose another "
                     "method.")
    budget = None
    if args.budget is not None:
        from ..privacy.budget_file import FileBudget

        if args.dataset is None:
            raise error("--budget needs --dataset NAME: the data set (the people) the budget "
                        "protects, as named in 'dpsubmod budget new FILE --dataset NAME' "
                        "('dpsubmod budget show FILE' prints it).")
        # Opened (and checked against the named data set) before any record is read or noise
        # drawn.
        budget = FileBudget(args.budget, dataset=args.dataset,
                            command="dpsubmod select " + " ".join(sys.argv[2:]))
    elif args.dataset is not None:
        raise error("--dataset names the data set of a budget file; pass --budget FILE too "
                    "(or drop --dataset).")
    backend = _choose_backend(args, spec)
    scale = scale_options(args)
    task = build_task(args.task, args.data, columns=record_columns(args), names=column_names(args),
                      invalid=args.invalid_rows, **dialect_options(args), **scale, **public)
    spec = build_constraint(task, k=args.k, groups=read_groups(args.groups),
                            capacities=parse_capacities(args.capacities), k_name="--k")
    # the outputs are created, with their space reserved, before anything is charged
    pending = _outputs(diag, out)
    try:
        with _progress(task, spec) as bar, backend_chosen():
            # --epsilon and --delta were validated above: not checked again below
            rel = _checked_select(task, spec, epsilon=eps, delta=delta, method=method,
                                  backend=backend, budget=budget, rng=args.seed, options=None,
                                  caller=_CALLER)
            bar.close()
    except BaseException:
        _discard(pending)
        raise
    finally:
        client = getattr(getattr(task.f, "blocks", None), "client", None)
        if args.scheduler is not None and client is not None:
            client.close()
    try:
        doc = rel.to_dict(__version__)
        # the owner's diagnostics first: when the release then fails, nothing was released
        if pending[0] is not None:
            _commit(pending[0], "--diagnostics", rel.diagnostics(), budget, args)
        if pending[1] is not None:
            _commit(pending[1], "--out", doc, budget, args)
    finally:
        _discard(pending)  # what was not committed
    _print(args, rel, doc, out, diag)
    _owner_warnings(task)
    return 0


def _print(args: argparse.Namespace, rel: Any, doc: dict[str, Any], out: Path | None,
           diag: Path | None) -> None:
    from ..offline.registry import get_method

    t, rep, priv = rel.task, rel.privacy, doc["privacy"]
    eps, delta = rel.requested
    n_rec = f"{t.n_records} records; " if t.n_records is not None else ""
    lines = [
        f"dpsubmod select: {t.task} on {t.source} ({n_rec}one record = {t.record})",
        f"Objective: {t.objective}",
        f"Constraint: {rel.constraint.description}",
        f"Method: {rel.method} ({get_method(rel.method).summary})",
        "",
        "Selected (in the order chosen):",
    ]
    lines += [f"  {i + 1}. {nm}" for i, nm in enumerate(rel.names)]
    engine = f" (engine {rep.engine})" if rep.engine else ""
    seed_note = ("" if rep.backend == "numpy" or args.seed is None else
                 f" (--seed does not affect the noise of the {rep.backend} backend)")
    if rep.simulation:
        seed_note += (" (a seeded simulation: reproducible, and NOT a private release, since "
                      "anyone who knows the seed can tell neighbouring data sets apart)")
    uses = rep.uses
    lines += [
        "",
        "Privacy statement:",
        f"  The selection above is (epsilon={rep.epsilon:g}, delta={rep.delta:g})-differentially "
        f"private (requested epsilon={eps:g}, delta={delta:g}), by {priv['composition_rule']} "
        f"over {uses} mechanism use{'s' if uses != 1 else ''}.",
        f"  Neighbouring data sets: {t.neighbouring}.",
        f"  Declared sensitivity: {t.sensitivity:.6g} = {t.sensitivity_note}.",
        f"  Noise backend: {rep.backend}{engine}: {priv['backend_guarantee']}{seed_note}.",
        "  Public inputs (not protected; they must not be derived from the records): "
        + "; ".join(doc["public_inputs"]) + ".",
        "  Data rules (data-independent): " + "; ".join(t.rules) + ".",
        (f"  Budget {Path(args.budget).name}: {rel.budget.statement()}"
         if rel.budget is not None else
         "  No budget file was given: nothing bounds the total over repeated runs on the same "
         "data. Pass --budget FILE --dataset NAME (create it with 'dpsubmod budget new FILE "
         "--dataset NAME --epsilon E')."),
    ]
    if args.show_diagnostics:
        lines += ["", f"NON-PRIVATE diagnostic, asked for with --show-diagnostics: objective "
                  f"value {rel.value:.6g}. Computed from the raw records without noise; NOT "
                  "covered by the guarantee, do not publish it."]
    if out is not None:
        lines.append(f"Release written to {out.name} (the selection, the statement and the "
                     "public parameters only)")
    if diag is not None:
        lines.append(f"Non-private diagnostics written to {diag.name} (NOT private; keep it)")
    print("\n".join(lines))


_EPILOG = """\
examples:
  dpsubmod select rides.csv --task facility-location --grid 10x10 \\
      --bounds lat=40.6,40.9 --bounds lon=-74.1,-73.8 --k 5 --epsilon 1 --out result.json
  dpsubmod select riders.csv --task facility-location --candidates sites.csv \\
      --candidate-names name --partition-column district --capacities 1 --epsilon 1
  dpsubmod select survey.csv --task feature-selection --label outcome \\
      --bins 4 --bounds age=18,90 --bounds income=0,200000 --bins categorical --k 3 \\
      --epsilon 2
  dpsubmod select people.csv --task coverage --k 3 --epsilon 0.5 --delta 1e-6
  dpsubmod select rides.csv --task coverage --check-data
  dpsubmod budget new rides-budget.json --dataset rides --epsilon 3
  dpsubmod select rides.csv --task coverage --k 3 --epsilon 0.5 \\
      --budget rides-budget.json --dataset rides --out result.json

One row of the data file is one record (one person): the guarantee hides any single row being
replaced by any other. Candidates, bandwidths, bounds, thresholds, groups and capacities are
public inputs, matched to record columns by name: fix them without looking at the records.
A record that cannot be read (bytes that do not decode, an unbalanced quote, the wrong number
of cells) is kept with every cell invalid, a row without a user id is dropped, and invalid
values follow --invalid-rows: data-independent rules, named in the privacy statement; a bad row
never stops a release. --check-data finds the first one, with its line, without releasing
anything. Warnings for the data's owner (most records clipped, many bad rows) go to standard
error and never into the release.
"""


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``select`` subcommand to the ``dpsubmod`` parser."""
    p = sub.add_parser(
        "select", help="Privately select items from your own table of records.",
        description=("Choose items (facility locations, predictive features, covering sets) "
                     "from a CSV or Parquet file of private records, one row per person, with "
                     "a differentially private method; print the choice and a privacy "
                     "statement, and, with --out, write the release to a JSON file."),
        epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    # Values such as "-74.02,-73.9" are option values, not options: argparse only recognises a
    # plain negative number by default, so widen its pattern for this subcommand (no option of
    # select starts with a digit).
    p._negative_number_matcher = re.compile(r"^-\.?\d")
    p.add_argument("data", help="CSV or Parquet file of private records, one row per record")
    p.add_argument("--task", choices=TASKS, help="what to select (required)")
    p.add_argument("--columns", help="comma-separated record columns to use (default: per "
                   "task; by name)")
    p.add_argument("--names", help="comma-separated names for the columns of a CSV without a "
                   "header (public inputs are matched to these names)")
    p.add_argument("--delimiter", help="the cell delimiter of a CSV data file (default ','; "
                   "'\\t' or 'tab' for tabs); every reading mode reads the same dialect")
    p.add_argument("--encoding", help="the text encoding of a CSV data file (default utf-8; a "
                   "byte-order mark is dropped), e.g. latin-1 or cp1252")
    p.add_argument("--invalid-rows", choices=("clip", "drop", "impute"),
                   help="rule for invalid values in private rows (default per task: "
                   "facility-location drop, coverage clip, feature-selection impute)")
    p.add_argument("--check-data", action="store_true", help="a data check, not a release: "
                   "report the first invalid value and its position, draw no noise")
    g = p.add_argument_group("privacy and method")
    g.add_argument("--epsilon", type=float, help="total privacy budget epsilon > 0 (required)")
    g.add_argument("--delta", type=float, default=0.0, help="privacy parameter delta in [0, 1) "
                   "(default 0: pure differential privacy)")
    g.add_argument("--method", help="a private method of dpsubmod.list_methods(private=True) "
                   "(default private_greedy, Mitrovic et al. 2017)")
    g.add_argument("--backend", choices=("secure", "opendp", "numpy"),
                   help="noise backend (default: secure without --seed, numpy with one; "
                   "secure: OpenDP when installed, else dpsubmod's exact samplers; opendp: "
                   "OpenDP or an error with the install command; numpy is seeded and "
                   "reproducible but not hardened, a simulation for trials only)")
    g.add_argument("--seed", type=int, help="random seed: a seeded numpy simulation, "
                   "reproducible and NOT a private release (without --backend)")
    g.add_argument("--budget", metavar="FILE", help="the data set's budget file (from 'dpsubmod "
                   "budget new'): the release is charged to it before any noise, and refused "
                   "(exit 2, nothing written) when it does not fit; needs --dataset")
    g.add_argument("--dataset", metavar="NAME", help="the data set the --budget file protects, "
                   "as named when it was created (the same name for every export, format or "
                   "extension of that data set)")
    g.add_argument("--out", help="write the release (selection, statement, public parameters) "
                   "to this JSON file")
    g.add_argument("--diagnostics", metavar="FILE", help="write NON-PRIVATE diagnostics "
                   "(objective value, invalid-value counts) to this separate JSON file")
    g.add_argument("--show-diagnostics", action="store_true", help="also print the "
                   "non-private objective value")
    sc = p.add_argument_group("persons and scale (facility-location, coverage)")
    sc.add_argument("--user-column", help="column naming each row's person: one person = up "
                    "to --max-rows-per-user rows (rows beyond a person's first m are dropped)")
    sc.add_argument("--max-rows-per-user", type=int, metavar="M", help="the bound m on one "
                    "person's rows; the sensitivity is scaled by it")
    sc.add_argument("--relation", choices=("replace-one", "add-remove"), help="neighbouring "
                    "relation (default: replace one row; with --user-column, add or remove one "
                    "person); add-remove makes the objective a sum, with no public N")
    sc.add_argument("--chunk-rows", type=int, metavar="R", help="read the CSV or Parquet file "
                    "in chunks of R rows, re-read on every step (memory O(N))")
    sc.add_argument("--scheduler", metavar="ADDRESS", help="partition the records over the "
                    "Dask cluster at ADDRESS (tcp://HOST:8786; the [distributed] extra)")
    sc.add_argument("--jobs", type=int, help="threads for the passes over the records "
                    "(default: the number of cores, at most 4)")
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
                    "a header naming the record columns")
    fl.add_argument("--candidate-names", help="column of the --candidates file naming each "
                    "candidate (default: its coordinates)")
    fl.add_argument("--grid", help="RxC: a grid of candidate cell centres (needs --bounds for "
                    "both columns)")
    fl.add_argument("--bounds", action="append", metavar="NAME=LOW,HIGH",
                    help="public bounds of one record column, by name (repeatable): the box of "
                    "--grid, the clipping box of the records, the range of --bins")
    fl.add_argument("--similarity", choices=("gaussian", "negative-distance"),
                    help="similarity of a record to a location (default gaussian)")
    fl.add_argument("--bandwidth", type=float, help="public Gaussian bandwidth (default: median "
                    "distance between neighbouring candidates)")
    fl.add_argument("--radius", type=float, help="public radius D of negative-distance "
                    "similarity max(0, D - distance) (default: candidates' diameter)")
    fs = p.add_argument_group("feature-selection")
    fs.add_argument("--label", help="the label column the features should predict")
    fs.add_argument("--bins", action="append", metavar="[NAME=]RULE",
                    help="how a feature column becomes categories (public; repeatable): B "
                    "equal-width bins on its --bounds, edges E0,E1,...,EB, or 'categorical' "
                    "(integer codes); NAME=RULE for one column, RULE alone for every other "
                    "column. Every feature column needs a rule")
    fs.add_argument("--bounds-file", help="public CSV with columns column,low,high")
    fs.add_argument("--label-thresholds", help="public increasing cut points t1,t2,... turning a "
                    "numeric label into classes (class = number of t with label >= t)")
    p.set_defaults(func=_select)
