"""``dpsubmod demo``: the README's main job, feature selection on a bundled real table."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from .._atomic import replacing
from .._validation import check_epsilon, check_int
from ._paths import check_output_folder

_CALLER = "dpsubmod demo"


def _demo(args: argparse.Namespace) -> int:
    from ..datasets.tables import load_breast_cancer
    from ..functions import MutualInformation
    from ..offline import maximize

    # every argument and the output folder are checked before any work
    seeds = check_int(args.seeds, "--seeds", low=1, caller=_CALLER,
                      fix="Pass --seeds 1 or more (the runs of each randomized method).")
    check_int(args.seed, "--seed", low=0, caller=_CALLER)
    for eps in args.epsilons:
        check_epsilon(eps, "--epsilons", caller=_CALLER)
    out = check_output_folder("--out", args.out)
    data = load_breast_cancer(bins=4)
    f = MutualInformation.from_records(data.X, data.y)
    k = check_int(args.k, "--k", low=1, high=f.n, caller=_CALLER,
                  fix=f"Pass 1 <= --k <= {f.n}, the number of features.")
    print(f"Data: {data.source}; {data.X.shape[0]} records, one record = {data.record}.")
    print(f"Task: choose k={k} of {f.n} features that best predict the diagnosis "
          "(empirical mutual information, Krause and Guestrin).")
    print(f"Declared sensitivity (replace one record): {f.sensitivity:.4g}; "
          f"private rows: mean and spread over {seeds} seed{'s' if seeds != 1 else ''}.\n")
    children = np.random.SeedSequence(args.seed).spawn(seeds)
    cases: list[tuple[str, float | None]] = [("greedy", None), ("lazy_greedy", None),
                                             ("stochastic_greedy", None), ("random", None)]
    cases += [("private_greedy", eps) for eps in args.epsilons]
    rows = []
    ref = None
    for method, eps in cases:
        deterministic = method in ("greedy", "lazy_greedy")
        runs = 1 if deterministic else seeds
        t0 = time.perf_counter()
        results = [maximize(f, k, method=method, epsilon=eps, rng=children[i])
                   for i in range(runs)]
        dt = (time.perf_counter() - t0) / runs
        vals = np.array([r.diagnostics.value for r in results])
        ref = float(vals.mean()) if ref is None else ref
        priv = results[0].privacy
        ptxt = "not private" if priv is None else f"eps={priv.epsilon:g}, delta={priv.delta:g}"
        # a deterministic method has no spread; a randomized one run once has no estimate of it
        sd = 0.0 if deterministic else (vals.std(ddof=1) if runs > 1 else np.nan)
        rows.append({"method": method, "privacy": ptxt, "mean": vals.mean() / ref,
                     "sd": sd / ref, "value": vals.mean(), "evals": results[0].evaluations,
                     "seconds": dt, "epsilon": np.nan if eps is None else eps})
    header = (f"{'method':<18} {'privacy':<22} {'vs greedy':>9} {'+/- sd':>7} {'evals':>6} "
              f"{'sec/run':>8}")
    print(header)
    print("-" * len(header))
    for r in rows:
        sd = "-" if np.isnan(r["sd"]) else f"{r['sd']:.3f}"
        print(f"{r['method']:<18} {r['privacy']:<22} {r['mean']:9.3f} {sd:>7} "
              f"{r['evals']:6d} {r['seconds']:8.4f}")
    if seeds == 1:
        print("(one run per randomized method: no spread to show; pass --seeds 2 or more)")
    lazy = next(r for r in rows if r["method"] == "lazy_greedy")
    if abs(lazy["mean"] - 1.0) > 1e-12:
        print("\nLazy greedy differs from greedy here: its stale upper bounds assume "
              "submodularity, and empirical mutual information is monotone but not exactly "
              "submodular.")
    greedy_sel = maximize(f, k).selection
    print("\nFeatures chosen by the non-private greedy:",
          ", ".join(data.feature_names[e] for e in greedy_sel))
    print("Utility is measured on the private data; it is a diagnostic, not a private release.")
    out.mkdir(parents=True, exist_ok=True)
    with replacing(out / "demo.csv") as fh:
        fh.write("method,epsilon,privacy,relative_utility,sd,mean_value,evaluations,seconds\n")
        for r in rows:
            fh.write(f"{r['method']},{r['epsilon']},\"{r['privacy']}\",{r['mean']:.6g},"
                     f"{r['sd']:.6g},{r['value']:.6g},{r['evals']},{r['seconds']:.6g}\n")
    print(f"Table written to {out / 'demo.csv'}")
    png = _demo_plot(rows, out / "demo.png", seeds)
    if png:
        print(f"Plot written to {png}")
    return 0


def _demo_plot(rows: list[dict], path: Path, seeds: int) -> Path | None:
    from ..experiments.plots import optional_figure, save_figure

    fig = optional_figure((6, 5))
    if fig is None:
        print("(matplotlib is not installed: pip install 'dpsubmod[plot]' for the plot)")
        return None
    priv = [r for r in rows if r["method"] == "private_greedy"]
    ax = fig.subplots()
    eps = [r["epsilon"] for r in priv]
    mean = np.array([r["mean"] for r in priv])
    sd = np.nan_to_num(np.array([r["sd"] for r in priv]))
    ax.plot(eps, mean, "o-", label="private greedy (Mitrovic et al. 2017): mean")
    if seeds > 1:
        ax.fill_between(eps, mean - sd, mean + sd, alpha=0.2,
                        label=f"private greedy: mean +/- 1 sd over {seeds} seeds")
    greedy, random = rows[0], next(r for r in rows if r["method"] == "random")
    ax.axhline(greedy["mean"], linestyle="--", color="k", label="greedy (non-private)")
    ax.axhline(random["mean"], linestyle=":", color="r",
               label=f"random feasible set (mean of {seeds})")
    # Every line and the band inside the axes, with a margin: the reference lines would
    # otherwise sit on the frame (greedy is the top of the data, random its bottom).
    values = np.concatenate([mean - sd, mean + sd, [greedy["mean"], random["mean"]]])
    low, high = float(np.min(values)), float(np.max(values))
    pad = 0.08 * max(high - low, 1e-3)
    ax.set_ylim(low - pad, high + pad)
    ax.set_xscale("log")
    ax.set_xlabel("epsilon (total)")
    ax.set_ylabel("utility relative to greedy")
    ax.set_title("Feature selection, breast-cancer data")
    # below the axes, where it hides no line
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2, fontsize=8,
              frameon=False)
    fig.subplots_adjust(bottom=0.3)
    return save_figure(fig, path, dpi=120, tight_bbox=False)


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``demo`` subcommand to the ``dpsubmod`` parser."""
    demo = sub.add_parser("demo", help="Run the demonstration on a bundled real data set.",
                          description="Select k features of the Wisconsin breast-cancer data "
                          "with the library's methods and print a comparison table.")
    demo.add_argument("--k", type=int, default=5, help="number of items to select (default 5)")
    demo.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    demo.add_argument("--seeds", type=int, default=20,
                      help="repetitions of each randomized method (default 20)")
    demo.add_argument("--epsilons", type=float, nargs="+", default=[0.5, 2.0, 8.0, 32.0],
                      help="total privacy budgets of the private rows (default 0.5 2 8 32)")
    demo.add_argument("--out", default="dpsubmod-demo",
                      help="output folder (default ./dpsubmod-demo)")
    demo.set_defaults(func=_demo)
