"""Tables and the regret-against-T figure of the online part of ``docs/results.md``, from the
logs of ``python -m dpsubmod.experiments.online_maximization`` runs.

Each run prints one line per (stream, T, seed, learner, epsilon)::

    uber T=2000 seed=0 PrivateExploreThenCommit eps=1      regret/T=-0.0566 (3.7s)

This script reads such logs (one file per run; the seeds of different files are different
streams when the runs used different ``--seed`` roots), so a run stopped before its end still
counts for the lines it printed. It prints, per stream, the mean (1 - 1/e)-regret per round
against the offline greedy with the number of runs, against T at ``--epsilon`` and against
epsilon at ``--t-eps``, plus each learner's measured rounds per second at its largest T, and
draws the regret-per-round-against-T figure (one panel per stream) to ``--figure``.

Usage::

    python benchmarks/online_results.py LOG [LOG ...] --figure docs/online_regret_vs_T.png
"""

from __future__ import annotations

import argparse
import math
import re
from collections import defaultdict
from pathlib import Path

import numpy as np

LINE = re.compile(r"^(\S+) T=(\d+) seed=(\d+) (.+?)\s+eps=(\S+)\s+regret/T=([+-]?\d+\.\d+) "
                  r"\((\d+\.\d+)s\)")


def read_logs(paths: list[str]) -> list[dict]:
    """The runs of the logs: stream, T, replicate (file and seed), learner, epsilon, regret per
    round and seconds."""
    rows = []
    for i, p in enumerate(paths):
        for line in Path(p).read_text().splitlines():
            m = LINE.match(line.strip())
            if m:
                data, T, seed, name, eps, reg, sec = m.groups()
                rows.append({"data": data, "T": int(T), "rep": (i, int(seed)),
                             "learner": name.strip(), "eps": float(eps),
                             "regret": float(reg), "sec": float(sec)})
    return rows


def _cell(vals: list[float]) -> str:
    v = np.array(vals)
    sd = f" +/- {v.std(ddof=1):.3f}" if v.size > 1 else ""
    return f"{v.mean():+.3f}{sd} ({v.size})"


def tables(rows: list[dict], epsilon: float, t_eps: int) -> str:
    out = []
    for data in sorted({r["data"] for r in rows}):
        rs = [r for r in rows if r["data"] == data]
        Ts = sorted({r["T"] for r in rs})
        names = sorted({r["learner"] for r in rs})
        by = defaultdict(list)
        for r in rs:
            by[(r["learner"], r["T"], r["eps"])].append(r["regret"])
        out.append(f"\n{data}: (1 - 1/e)-regret per round against T (private learners at "
                   f"epsilon = {epsilon:g}; mean +/- sd (runs))\n")
        out.append("| learner | " + " | ".join(f"T = {T}" for T in Ts) + " | rounds/s |")
        out.append("|---|" + "---|" * (len(Ts) + 1))
        for name in names:
            cells = []
            for T in Ts:
                v = by.get((name, T, epsilon)) or by.get((name, T, math.inf))
                cells.append(_cell(v) if v else "not run")
            big = [r for r in rs if r["learner"] == name]
            Tm = max(r["T"] for r in big)
            rate = np.mean([Tm / r["sec"] for r in big if r["T"] == Tm and r["sec"] > 0])
            out.append(f"| {name} | " + " | ".join(cells) + f" | {rate:.0f} (T = {Tm}) |")
        epss = sorted({r["eps"] for r in rs if r["T"] == t_eps and math.isfinite(r["eps"])})
        if len(epss) > 1:
            out.append(f"\n{data}: (1 - 1/e)-regret per round against epsilon (T = {t_eps})\n")
            out.append("| learner | " + " | ".join(f"eps = {e:g}" for e in epss) + " |")
            out.append("|---|" + "---|" * len(epss))
            for name in names:
                cells = [_cell(by[(name, t_eps, e)]) if by.get((name, t_eps, e)) else ""
                         for e in epss]
                if any(cells):
                    out.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def figure(rows: list[dict], epsilon: float, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    datas = sorted({r["data"] for r in rows})
    names = sorted({r["learner"] for r in rows})
    # One style per learner on every panel: 20 colours, markers and line styles cycling, so
    # that no two of up to 15 learners look alike; the non-private ones dashed.
    colours = plt.get_cmap("tab20").colors
    markers = "osD^v<>phX*"
    public = {r["learner"] for r in rows if math.isinf(r["eps"])}
    style = {name: dict(color=colours[(2 * i) % 20 + (i // 10) % 2], marker=markers[i % 11],
                        ls="--" if name in public else "-")
             for i, name in enumerate(names)}
    fig, axes = plt.subplots(1, len(datas), figsize=(5.5 * len(datas) + 2.6, 5), squeeze=False)
    handles: dict = {}
    for ax, data in zip(axes[0], datas):
        rs = [r for r in rows if r["data"] == data and (r["eps"] == epsilon
                                                        or math.isinf(r["eps"]))]
        for name in sorted({r["learner"] for r in rs}):
            Ts = sorted({r["T"] for r in rs if r["learner"] == name})
            if len(Ts) < 2:
                continue
            ys = [np.mean([r["regret"] for r in rs if r["learner"] == name and r["T"] == T])
                  for T in Ts]
            label = name + (" (not private)" if name in public else "")
            (handles[label],) = ax.plot(Ts, ys, ms=5, label=label, **style[name])
        ax.set_xscale("log")
        ax.axhline(0.0, color="grey", lw=0.5)
        ax.set_xlabel("T")
        ax.set_ylabel("(1 - 1/e)-regret per round vs offline greedy")
        ax.set_title(f"{data} stream, private learners at epsilon = {epsilon:g}")
    labels = sorted(handles)
    fig.legend([handles[k] for k in labels], labels, fontsize=7, loc="center right")
    fig.tight_layout(rect=(0.0, 0.0, 1.0 - 2.4 / fig.get_figwidth(), 1.0))
    fig.savefig(path, dpi=110)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("logs", nargs="+")
    p.add_argument("--epsilon", type=float, default=1.0)
    p.add_argument("--t-eps", type=int, default=2000)
    p.add_argument("--figure", default=None)
    args = p.parse_args(argv)
    rows = read_logs(args.logs)
    print(tables(rows, args.epsilon, args.t_eps))
    if args.figure:
        figure(rows, args.epsilon, Path(args.figure))


if __name__ == "__main__":
    main()
