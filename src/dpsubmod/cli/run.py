"""``dpsubmod run EXPERIMENT.toml``: run a sweep from an experiment file, resumably.

A thin layer over :func:`dpsubmod.experiments.sweep.run_sweep`: it resolves where the results
go, runs the missing cells (serially, in ``--workers`` local processes or on a Dask cluster at
``--scheduler``), prints a summary table and writes the summary and the figures beside the
results. Library errors (a bad experiment file) become one line on stderr and exit status 2.

Faults: the results path is checked before any cell runs (exit 2 when it cannot be written); a
second run into the same results file is refused at once (exit 2) while the first holds its lock;
SIGINT or SIGTERM stops the workers and leaves the finished cells in the results file (exit 130
or 143), and running the same command again continues with the missing cells.
"""

from __future__ import annotations

import argparse
import math
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import ValidationError
from ..experiments.examples import example_names
from ._paths import check_output_file
from ._signals import Interrupted

if TYPE_CHECKING:
    from ..experiments.config import SweepConfig

_SUFFIXES = {".csv": "csv", ".parquet": "parquet"}


def resolve_output(out: str | None, config_out: str | None, name: str,
                   fmt: str | None) -> Path:
    """The results file: ``out`` (or the file's ``out`` key) when it names a ``.csv`` or
    ``.parquet`` file, else ``<folder>/<name>.<format>`` (folder default ``dpsubmod-results``).
    """
    from ..experiments.config import ConfigError

    target = out if out is not None else config_out
    if target is not None and Path(target).suffix.lower() in _SUFFIXES:
        path = Path(target)
        kind = _SUFFIXES[path.suffix.lower()]
        if fmt is not None and fmt != kind:
            raise ConfigError(f"--format {fmt} contradicts the output file {path} ({kind}); "
                              "drop --format or change the file's suffix.")
        return path
    folder = Path(target) if target is not None else Path("dpsubmod-results")
    return folder / f"{name}.{fmt or 'csv'}"


def _fmt(v: object) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return "nan" if math.isnan(v) else f"{v:g}"
    return str(v)


def _run(args: argparse.Namespace) -> int:
    from ..experiments.config import load_config
    from ._results_lock import lock_results

    if args.workers is not None and args.workers < 1:
        raise ValidationError(f"--workers must be at least 1; got {args.workers}.")
    config = load_config(args.experiment)
    # where the results go (--out, else the file's 'out' key, else ./dpsubmod-results) is
    # checked, created and locked before any cell runs
    path = resolve_output(args.out, config.out, config.name, args.format)
    check_output_file("--out", path, example=f"{config.name}.csv")
    path.parent.mkdir(parents=True, exist_ok=True)
    with lock_results(path, "--out"):
        return _sweep(args, config, path)


def _sweep(args: argparse.Namespace, config: SweepConfig, path: Path) -> int:
    from ..experiments.results import MissingDependencyError, write_table
    from ..experiments.sweep import make_plots, metric_of, run_sweep

    kind = "Dask cluster at " + args.scheduler if args.scheduler else (
        f"{args.workers} local processes" if args.workers and args.workers > 1 else "serially")
    print(f"Experiment {config.name!r} ({config.problem}, {config.spec['kind']}): "
          f"{len(config.methods)} method(s) x {len(config.epsilons)} epsilon(s) x "
          f"{sum(t is not None for t in config.Ts) or 1} T x {len(config.seeds)} seed(s); "
          f"running {kind}.")
    try:
        result = run_sweep(config, out=path, workers=args.workers, scheduler=args.scheduler,
                           progress=args.progress)
    except Interrupted as exc:
        exc.hint = (f"the finished cells are in {path}; run the same command again to "
                    "continue with the others.")
        raise
    metric = metric_of(config)
    summary = result.summary()
    header = f"{'method':<28} {'epsilon':>8} {'T':>7} {'runs':>5} {metric + ' mean':>14} " \
             f"{'sd':>10}"
    print(header)
    print("-" * len(header))
    for s in summary:
        print(f"{s['method']:<28} {_fmt(s['epsilon']):>8} {_fmt(s['T']):>7} {s['runs']:>5} "
              f"{s['mean']:>14.4g} {s['sd']:>10.3g}")
    if config.problem == "offline":
        print("utility = value of the selection / value of the non-private greedy, measured "
              "on the private data (a diagnostic, not a private release).")
    if config.note.strip():
        # the experiment file's own reading of its results, one paragraph per blank line
        print("\nHow to read these results (from the experiment file):")
        for par in (p for p in config.note.split("\n\n") if p.strip()):
            print(textwrap.fill(" ".join(par.split()), width=96, initial_indent="  * ",
                                subsequent_indent="    "))
        print()
    stem = path.stem
    summary_path = write_table(summary, path.with_name(f"{stem}_summary.csv"))
    print(f"Results: {path} ({result.ran} cell(s) run, {result.resumed} resumed from the file)")
    print(f"Summary: {summary_path}")
    if args.no_plots:
        return 0
    try:
        pngs = make_plots(result, path.parent, stem, band=args.band)
    except MissingDependencyError:
        print("(matplotlib is not installed: pip install 'dpsubmod[plot]' for the plots)")
        return 0
    for p in pngs:
        print(f"Plot: {p}")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``run`` subcommand to the ``dpsubmod`` parser."""
    p = sub.add_parser(
        "run", help="Run an experiment sweep from a TOML file (resumable; local or Dask).",
        description="Run every cell (method x epsilon x T x seed) of an experiment file not yet "
        "in the results table, then print a summary and write the figures beside the results. "
        "Each cell's randomness depends only on the sweep seed and the cell, so results do not "
        "depend on the backend. Shipped examples run by name: "
        f"{', '.join(example_names())}.")
    p.add_argument("experiment", metavar="EXPERIMENT.toml",
                   help="the experiment file, or the name of a shipped example")
    p.add_argument("--out", metavar="DIR|FILE", default=None,
                   help="results file (.csv or .parquet) or folder (default: the file's 'out' "
                   "key, else ./dpsubmod-results/NAME.csv)")
    backend = p.add_mutually_exclusive_group()
    backend.add_argument("--workers", type=int, default=None, metavar="N",
                         help="run cells in N local processes (joblib)")
    backend.add_argument("--scheduler", default=None, metavar="ADDRESS",
                         help="run cells on an existing Dask cluster, e.g. tcp://host:8786")
    p.add_argument("--format", choices=("csv", "parquet"), default=None,
                   help="table format when --out is a folder (default csv; parquet needs "
                   "the [parquet] extra)")
    p.add_argument("--band", choices=("sd", "quantile"), default="sd",
                   help="spread bands of the plots: mean +/- sd (default) or 10%%-90%% "
                   "quantiles over seeds")
    p.add_argument("--no-plots", action="store_true", help="do not draw figures")
    prog = p.add_mutually_exclusive_group()
    prog.add_argument("--progress", dest="progress", action="store_true", default=None,
                      help="show a progress bar (default: when stderr is a terminal)")
    prog.add_argument("--no-progress", dest="progress", action="store_false")
    p.set_defaults(func=_run)
