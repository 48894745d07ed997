"""``dpsubmod budget``: create, read, verify and upgrade a privacy budget file.

A budget file bounds the total privacy spent on one data set, which the owner names, over every
``dpsubmod select`` run given ``--budget FILE --dataset NAME``: each release is charged to it
before any noise is drawn, and a release that does not fit is refused (exit status 2, the file
unchanged). A file that is damaged or was modified outside dpsubmod is refused by every action.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from ..privacy._filter_names import FILTERS
from ..privacy.budget import _left_text
from ._paths import check_output_file


def _new(args: argparse.Namespace) -> int:
    from ..privacy.budget_file import FileBudget

    if not os.path.lexists(args.file):  # an existing file is refused by name below
        check_output_file("FILE", args.file, example="budget.json")
    fb = FileBudget.create(args.file, args.epsilon, args.delta, args.composition,
                           dataset=args.dataset, slack=args.slack)
    print(f"Created {Path(args.file).name} for the data set {fb.dataset!r}: "
          f"epsilon={fb.epsilon:g}, delta={fb.delta:g}, rule: {FILTERS[fb.composition]}. "
          f"Charge it with 'dpsubmod select ... --budget {Path(args.file).name} --dataset "
          f"{fb.dataset}'.")
    return 0


def _show(args: argparse.Namespace) -> int:
    from ..privacy.budget_file import FileBudget

    fb = FileBudget(args.file)
    lines = [f"Budget file {Path(args.file).name}",
             f"  data set: {fb.dataset}",
             f"  limit: epsilon={fb.epsilon:g}, delta={fb.delta:g}",
             f"  rule: {FILTERS[fb.composition]}"]
    releases = fb.releases
    if releases:
        lines.append(f"  releases ({len(releases)}):")
        for i, r in enumerate(releases, 1):
            # a zCDP cost means something only to a budget under the zCDP rule
            rho = ("" if r["rho"] is None or fb.composition != "zcdp"
                   else f", rho={float(r['rho']):.6g}")
            lines.append(f"    {i}. {r['time']}  {r['mechanism']}: epsilon={r['epsilon']}, "
                         f"delta={r['delta']}{rho}  [{r['command']}]")
    else:
        lines.append("  releases: none")
    eps, dlt = fb.spent
    lines += [f"  spent: epsilon {eps:.6g}, delta {dlt:.6g}",
              f"  {_left_text(fb.remaining)}"]
    print("\n".join(lines))
    return 0


def _verify(args: argparse.Namespace) -> int:
    from ..privacy.budget_file import FileBudget

    fb = FileBudget(args.file)  # refuses (exit 2) a file that is damaged or was modified
    n = len(fb.releases)
    print(f"Budget file {Path(args.file).name} is intact: data set {fb.dataset!r}, {n} "
          f"release{'s' if n != 1 else ''}, hash chain unbroken.")
    return 0


def _upgrade(args: argparse.Namespace) -> int:
    from ..privacy.budget_file import FileBudget

    fb = FileBudget.upgrade(args.file, dataset=args.dataset)
    print(f"Upgraded {Path(args.file).name} to format version 2: bound to the data set "
          f"{fb.dataset!r}, {len(fb.releases)} release(s) kept, the data file's hash removed.")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "budget", help="Create, read or verify a privacy budget file (one per data set).",
        description="A budget file bounds the total privacy spent on one data set, named by "
                    "you: pass it to 'dpsubmod select --budget FILE --dataset NAME'. Every "
                    "release is recorded in it (time, command, epsilon, delta, rule), chained "
                    "by SHA-256 so that an edit made outside dpsubmod is refused. Nothing in it "
                    "is computed from the data.")
    bsub = p.add_subparsers(dest="budget_command", required=True, metavar="ACTION")
    new = bsub.add_parser("new", help="create a budget file",
                          description="Create a budget file (refused if the file exists).")
    new.add_argument("file", metavar="FILE", help="the budget file to create (JSON)")
    new.add_argument("--dataset", required=True, metavar="NAME",
                     help="the data set (the people) the budget protects, for example rides; "
                          "a new export, more rows or another file format of the same data set "
                          "keep this name and this budget")
    new.add_argument("--epsilon", type=float, required=True, help="total epsilon > 0")
    new.add_argument("--delta", type=float, default=0.0, help="total delta in [0, 1) (default 0)")
    new.add_argument("--composition", choices=tuple(FILTERS), default="basic",
                     help="the privacy filter deciding whether a release fits (default basic; "
                          "advanced and zcdp need --delta > 0)")
    new.add_argument("--slack", type=float, default=None,
                     help="part of delta reserved by the advanced or zcdp rule (default: half "
                          "of delta for advanced, all of it for zcdp)")
    new.set_defaults(func=_new)
    show = bsub.add_parser("show", help="what each release spent and what is left")
    show.add_argument("file", metavar="FILE", help="the budget file")
    show.set_defaults(func=_show)
    verify = bsub.add_parser(
        "verify", help="check that the file is intact (exit 0) or not (exit 2)",
        description="Check a budget file: readable, well formed, and not modified outside "
                    "dpsubmod (its hash chain is unbroken). Exit 0 when intact, 2 otherwise.")
    verify.add_argument("file", metavar="FILE", help="the budget file")
    verify.set_defaults(func=_verify)
    upgrade = bsub.add_parser(
        "upgrade", help="convert a format-1 budget file (keeps every release)",
        description="Convert a budget file of format version 1, which held a hash of its data "
                    "file, in place: every release is kept, the hash is removed, and the budget "
                    "is bound to the data set you name.")
    upgrade.add_argument("file", metavar="FILE", help="the budget file")
    upgrade.add_argument("--dataset", required=True, metavar="NAME",
                         help="the data set (the people) the budget protects")
    upgrade.set_defaults(func=_upgrade)
