"""``dpsubmod audit``: an empirical lower bound on the epsilon of a named algorithm."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

__all__ = ["register"]


def _audit(args: argparse.Namespace) -> int:
    from ..experiments.audits import AUDITS, run_audit

    if args.list or args.name is None:
        for s in AUDITS.values():
            print(f"{s.name:<16} {s.description}")
        return 0
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
    if args.json:
        out = Path(args.json)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps({
            "algorithm": args.name, "epsilon_claimed": res.epsilon_claimed, "delta": res.delta,
            "epsilon_lower_bound": res.epsilon_lower_bound, "violation": res.violation,
            "noise_factor": args.noise_factor, "runs_per_input": res.n_runs,
            "alpha": res.alpha, "event": res.event, "seed": args.seed}, indent=2))
        print(f"Result written to {out}")
    return 1 if res.violation else 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``audit`` subcommand to the ``dpsubmod`` parser."""
    p = sub.add_parser(
        "audit", help="Audit a named algorithm: empirical epsilon lower bound vs the claim.",
        description="Run a named algorithm many times on a worst-case pair of neighbouring "
        "inputs and report a Clopper-Pearson lower bound on its epsilon next to the claimed "
        "epsilon. Exit status 1 when the bound exceeds the claim (a violation).")
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
