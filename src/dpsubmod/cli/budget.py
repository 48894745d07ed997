"""``dpsubmod budget``: create and read a privacy budget file.

A budget file bounds the total privacy spent on one data set over every ``dpsubmod select`` run
given ``--budget FILE``: each release is charged to it before any noise is drawn, and a release
that does not fit is refused (exit status 2, the file unchanged).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..privacy.budget_file import FileBudget
from ..privacy.filters import FILTERS
from ._paths import check_output_file

__all__ = ["register"]


def _new(args: argparse.Namespace) -> int:
    if not Path(args.file).exists():  # an existing file is refused by name below
        check_output_file("FILE", args.file, example="budget.json")
    fb = FileBudget.create(args.file, args.epsilon, args.delta, args.composition,
                           slack=args.slack, data=args.data)
    bound = (f", bound to {fb.data['name']}" if fb.data
             else " (bound to the data of its first release)")
    print(f"Created {Path(args.file).name}: epsilon={fb.epsilon:g}, delta={fb.delta:g}, "
          f"rule: {FILTERS[fb.composition]}{bound}.")
    return 0


def _show(args: argparse.Namespace) -> int:
    fb = FileBudget(args.file)
    data = fb.data
    lines = [f"Budget file {Path(args.file).name}",
             f"  limit: epsilon={fb.epsilon:g}, delta={fb.delta:g}",
             f"  rule: {FILTERS[fb.composition]}",
             f"  data: {data['name']} (sha256 {data['sha256'][:16]}...)" if data
             else "  data: not bound yet (the first release binds it)"]
    releases = fb.releases
    if releases:
        lines.append(f"  releases ({len(releases)}):")
        for i, r in enumerate(releases, 1):
            rho = "" if r.get("rho") is None else f", rho={float(r['rho']):.6g}"
            lines.append(f"    {i}. {r['time']}  {r['mechanism']}: epsilon={r['epsilon']}, "
                         f"delta={r['delta']}{rho}  [{r.get('command', '')}]")
    else:
        lines.append("  releases: none")
    eps, dlt = fb.spent
    lines += [f"  spent: epsilon {eps:.6g}, delta {dlt:.6g}",
              f"  left: one more release of at most epsilon {fb.remaining:.6g}"]
    print("\n".join(lines))
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "budget", help="Create or read a privacy budget file (one per data set).",
        description="A budget file bounds the total privacy spent on one data set: pass it to "
                    "'dpsubmod select --budget FILE'. Every release is recorded in it (time, "
                    "command, epsilon, delta, rule, data file name and content hash).")
    bsub = p.add_subparsers(dest="budget_command", required=True, metavar="ACTION")
    new = bsub.add_parser("new", help="create a budget file",
                          description="Create a budget file (refused if the file exists).")
    new.add_argument("file", metavar="FILE", help="the budget file to create (JSON)")
    new.add_argument("--epsilon", type=float, required=True, help="total epsilon > 0")
    new.add_argument("--delta", type=float, default=0.0, help="total delta in [0, 1) (default 0)")
    new.add_argument("--composition", choices=tuple(FILTERS), default="basic",
                     help="the privacy filter deciding whether a release fits (default basic; "
                          "advanced and zcdp need --delta > 0)")
    new.add_argument("--slack", type=float, default=None,
                     help="part of delta reserved by the advanced or zcdp rule (default: half "
                          "of delta for advanced, all of it for zcdp)")
    new.add_argument("--data", default=None,
                     help="bind the budget to this data file now (default: its first release)")
    new.set_defaults(func=_new)
    show = bsub.add_parser("show", help="what each release spent and what is left")
    show.add_argument("file", help="the budget file")
    show.set_defaults(func=_show)
