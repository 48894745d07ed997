"""``dpsubmod audit``: an empirical lower bound on the epsilon of a named algorithm.

Exit status: 0 when the audit is consistent with the claim, 1 when it finds a violation (the
lower bound exceeds the claimed epsilon), 2 for a usage error (a bad option value, an unknown
algorithm, a ``--json`` path that cannot be written), always before any run.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from .._atomic import write_atomic
from .._validation import check_delta, check_epsilon, check_int, check_real
from ..errors import ValidationError
from ._paths import check_output_file

EXIT_CONSISTENT = 0
EXIT_VIOLATION = 1
_CALLER = "dpsubmod audit"


def _check(args: argparse.Namespace) -> Path | None:
    """Every option, by its own name, and the --json path, before the first run."""
    from ..experiments.audits import AUDITS

    if args.name not in AUDITS:
        raise ValidationError(f"No audit named {args.name!r}; choose one of "
                              f"{', '.join(AUDITS)} (see 'dpsubmod audit --list').")
    check_epsilon(args.epsilon, "--epsilon", caller=_CALLER)
    if args.delta is not None:
        check_delta(args.delta, "--delta", caller=_CALLER)
    check_int(args.runs, "--runs", low=10, caller=_CALLER,
              fix="An audit needs at least 10 runs per input (default 2000).")
    check_real(args.noise_factor, "--noise-factor", low=0.0, low_open=True, caller=_CALLER)
    check_real(args.alpha, "--alpha", low=0.0, high=1.0, low_open=True, high_open=True,
               caller=_CALLER)
    if args.workers is not None:
        check_int(args.workers, "--workers", low=1, caller=_CALLER)
    check_int(args.seed, "--seed", low=0, caller=_CALLER)
    return None if args.json is None else check_output_file("--json", args.json,
                                                            example="audit.json")


def _audit(args: argparse.Namespace) -> int:
    from ..experiments.audits import AUDITS, run_audit

    if args.list or args.name is None:
        for s in AUDITS.values():
            print(f"{s.name:<16} {s.description}")
        return 0
    out = _check(args)
    res = run_audit(args.name, epsilon=args.epsilon, delta=args.delta, n_runs=args.runs,
                    noise_factor=args.noise_factor, alpha=args.alpha, n_jobs=args.workers,
                    rng=args.seed, progress=args.progress)
    setup = AUDITS[args.name]
    print(f"Algorithm:   {setup.description}")
    print(f"Neighbours:  {setup.pair}")
    if args.noise_factor != 1.0:
        print(f"Calibration: noise scaled by {args.noise_factor:g} (deliberately mis-calibrated)")
    print(f"Runs:        {res.n_runs} per input ({res.n_selection} to choose the event, "
          f"{res.n_eval} to bound it); event {res.event}, {res.direction}")
    print(f"Claimed:     epsilon = {res.epsilon_claimed:g}, delta = {res.delta:g}")
    print(f"Empirical:   epsilon >= {res.epsilon_lower_bound:.3f} "
          f"(with confidence {1 - res.alpha:.0%})")
    if res.violation:
        print("Verdict:     VIOLATION: the runs show more privacy loss than claimed.")
    else:
        print("Verdict:     consistent with the claim (an audit can refute a claim, "
              "never prove it).")
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(out, json.dumps({
            "algorithm": args.name, "epsilon_claimed": res.epsilon_claimed, "delta": res.delta,
            "epsilon_lower_bound": res.epsilon_lower_bound, "violation": res.violation,
            "noise_factor": args.noise_factor, "runs_per_input": res.n_runs,
            "alpha": res.alpha, "event": res.event, "seed": args.seed}, indent=2))
        print(f"Result written to {out}")
    return EXIT_VIOLATION if res.violation else EXIT_CONSISTENT


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``audit`` subcommand to the ``dpsubmod`` parser."""
    p = sub.add_parser(
        "audit", help="Audit a named algorithm: empirical epsilon lower bound vs the claim.",
        description="Run a named algorithm many times on a worst-case pair of neighbouring "
        "inputs and report a Clopper-Pearson lower bound on its epsilon next to the claimed "
        "epsilon. Exit status: 0 when the runs are consistent with the claim, 1 when the bound "
        "exceeds the claim (a violation), 2 for a usage error (checked before any run).")
    p.add_argument("name", nargs="?", help="algorithm to audit (see --list)")
    p.add_argument("--list", action="store_true", help="list the available audits")
    p.add_argument("--epsilon", type=float, default=1.0, help="claimed epsilon (default 1)")
    p.add_argument("--delta", type=float, default=None,
                   help="claimed delta (default 1e-5 where needed, else 0)")
    p.add_argument("--runs", type=int, default=2000, help="runs per input (default 2000)")
    p.add_argument("--noise-factor", type=float, default=1.0,
                   help="scale the calibrated noise (below 1: a mis-calibrated variant)")
    p.add_argument("--alpha", type=float, default=0.05,
                   help="false-alarm rate of the audit (default 0.05)")
    p.add_argument("--workers", type=int, default=None, help="parallel processes (joblib)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--json", default=None, help="also write the result to this JSON file")
    prog = p.add_mutually_exclusive_group()
    prog.add_argument("--progress", dest="progress", action="store_true", default=None,
                      help="show a progress bar (default: when stderr is a terminal)")
    prog.add_argument("--no-progress", dest="progress", action="store_false")
    p.set_defaults(func=_audit)
