"""Draw the documentation's figures from the library (needs matplotlib: the ``[plot]`` extra).

Run from the repository root; each figure is written beside this script, as a PNG::

    python docs/figures/make_figures.py budget     # budget_spent.png, a few seconds
    python docs/figures/make_figures.py utility    # utility_vs_epsilon.png, about 30 minutes

``utility`` runs the offline facility-location experiment of docs/results.md
(:mod:`dpsubmod.experiments.offline_facility_location`: k = 10, 10 seeds, master seed 0, with
the variants, so the same runs as the tables there) and draws the methods' defaults, on the
Uber pickups, read from ``--uber`` (default ``../shared/data/uber-apr14-pickups-10k.csv``,
beside the repository; the data are not part of it), and on the breast-cancer table (the
``[data]`` extra). ``budget`` charges real releases to :class:`dpsubmod.Budget` objects and
draws what each one spends.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

import dpsubmod
from dpsubmod.errors import BudgetExceededError
from dpsubmod.experiments import offline_facility_location as ofl
from dpsubmod.experiments.plots import figure, save_figure
from dpsubmod.functions import FacilityLocation
from dpsubmod.privacy import laplace

HERE = Path(__file__).resolve().parent
DEFAULT_UBER = Path("../shared/data/uber-apr14-pickups-10k.csv")
TITLES = {"uber": "Uber pickups (10,000 riders, 100 grid sites)",
          "breast_cancer": "breast cancer (569 patients, 64 grid sites)"}


def utility(uber: Path, seeds: int = 10, out: Path = HERE / "utility_vs_epsilon.png") -> Path:
    """Utility relative to the non-private greedy against epsilon, one panel per data set."""
    if not uber.is_file():
        raise SystemExit(f"utility: the Uber pickups are not at {uber}; pass --uber PATH")
    # With the variants, as for the tables: the second data set's seed streams are spawned
    # after the first's cells, whose number the variants change.
    rows = ofl.run(["uber", "breast_cancer"], ofl.DEFAULT_EPSILONS, seeds, 10, uber_path=uber,
                   seed=0, variants=True)
    summary = ofl.summarize(rows)
    for s in summary:
        if s["method"] not in ofl.PRIVATE and s["method"] not in ofl.BASELINES:
            continue  # a variant: not drawn
        print(f"{s['dataset']:<14} {s['method']:<28} eps={s['epsilon']!s:<5} "
              f"utility={s['mean']:.3f} +/- {s['sd']:.3f}")
    fig = figure((11, 4.4))
    panels = fig.subplots(1, 2, sharey=True)
    for ax, name in zip(panels, ("uber", "breast_cancer")):
        cells = [s for s in summary if s["dataset"] == name]
        for method in ofl.PRIVATE:
            pts = sorted((s["epsilon"], s["mean"], s["sd"]) for s in cells
                         if s["method"] == method)
            e, m, sd = map(np.array, zip(*pts))
            (line,) = ax.plot(e, m, "o-", ms=4, label=method)
            ax.fill_between(e, m - sd, m + sd, color=line.get_color(), alpha=0.12, lw=0)
        rnd = next(s["mean"] for s in cells if s["method"] == "random")
        ax.axhline(1.0, color="k", ls="--", lw=1, label="greedy (not private) = 1")
        ax.axhline(rnd, color="0.45", ls=":", lw=1.2, label="random set (not private)")
        ax.set_xscale("log")
        ax.set_xticks(ofl.DEFAULT_EPSILONS, [f"{e:g}" for e in ofl.DEFAULT_EPSILONS])
        ax.set_xlim(0.08, 12.5)
        ax.set_ylim(0.0, 1.08)
        ax.set_xlabel("epsilon (whole release)")
        ax.set_title(TITLES[name], fontsize=10)
        ax.grid(alpha=0.3)
    panels[0].set_ylabel("utility / non-private greedy (k = 10)")
    handles, labels = panels[0].get_legend_handles_labels()
    band = panels[0].fill_between([], [], [], color="0.6", alpha=0.3, lw=0)
    # Below the Uber curves and above nothing: they stay over 0.45 from epsilon 0.3 on.
    panels[0].legend([*handles, band], [*labels, f"band: mean +/- 1 sd, {seeds} seeds"],
                     loc="lower right", ncol=2, fontsize=7.5, framealpha=0.95)
    return save_figure(fig, out, dpi=110)


def budget(out: Path = HERE / "budget_spent.png") -> Path:
    """What a budget spends per release: a session of selections under the basic rule, and
    the level of each privacy filter over a stream of equal releases."""
    rng = np.random.default_rng(0)
    f = FacilityLocation.from_records(rng.random((1000, 2)), rng.random((50, 2)),
                                      similarity="gaussian", bandwidth=0.1)
    session = dpsubmod.Budget(1.0)
    asked = [0.3, 0.2, 0.3, 0.3, 0.1]
    spent, refused = [], []
    for i, eps in enumerate(asked):
        try:
            dpsubmod.maximize(f, 5, "private_greedy", epsilon=eps, budget=session, rng=i)
            refused.append(False)
        except BudgetExceededError:
            refused.append(True)
        spent.append(session.spent[0])
    print(session.statement())

    step, filters = 0.02, {}
    for rule, delta in (("basic", 0.0), ("advanced", 1e-6), ("zcdp", 1e-6)):
        b, levels = dpsubmod.Budget(1.0, delta, rule), []
        for i in range(10_000):
            try:
                laplace(0.0, epsilon=step, sensitivity=1.0, budget=b, rng=i)
            except BudgetExceededError:
                break
            levels.append(b.spent[0])
        filters[rule, delta] = levels
        print(f"{rule}: {len(levels)} releases of epsilon {step} fit in Budget(1, {delta:g})")

    fig = figure((11, 4.2))
    left, right = fig.subplots(1, 2)
    x = np.arange(1, len(asked) + 1)
    left.bar(x, [0 if r else a for a, r in zip(asked, refused)], width=0.6,
             color="tab:blue", label="epsilon charged by the release")
    left.bar(x[refused], np.array(asked)[refused], width=0.6, fill=False, hatch="//",
             edgecolor="tab:red", label="refused: nothing released, nothing charged")
    left.step(x, spent, where="mid", color="k", lw=1.5, label="spent so far")
    left.axhline(1.0, color="tab:red", ls="--", lw=1, label="the budget, epsilon = 1")
    left.set_xticks(x, [f"{i}\neps {a:g}" for i, a in zip(x, asked)])
    left.set_xlim(0.4, len(asked) + 0.6)
    left.set_ylim(0, 1.6)
    left.set_xlabel("release (private_greedy, k = 5; epsilon asked)")
    left.set_ylabel("epsilon")
    left.set_title("one Budget(1.0), basic composition", fontsize=10)
    left.legend(fontsize=8, loc="upper left", ncol=2)
    for (rule, delta), levels in filters.items():
        n = np.arange(1, len(levels) + 1)
        right.plot(n, levels, lw=1.5,
                   label=f"{rule}{'' if delta == 0 else f', delta {delta:g}'}: "
                         f"{len(levels)} releases fit")
    right.axhline(1.0, color="tab:red", ls="--", lw=1, label="the budget, epsilon = 1")
    right.set_xlim(0, 1.05 * max(map(len, filters.values())))
    right.set_ylim(0, 1.1)
    right.set_xlabel(f"releases of epsilon {step} each (Laplace)")
    right.set_ylabel("epsilon spent (the filter's level)")
    right.set_title("one budget, three composition rules", fontsize=10)
    right.legend(fontsize=8, loc="lower right")
    right.grid(alpha=0.3)
    fig.subplots_adjust(left=0.06, right=0.99, top=0.92, bottom=0.2, wspace=0.18)
    return save_figure(fig, out, dpi=110, tight_bbox=False)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("figure", choices=["utility", "budget"])
    p.add_argument("--uber", type=Path, default=DEFAULT_UBER,
                   help="the Uber pickups CSV (utility only; default %(default)s)")
    p.add_argument("--seeds", type=int, default=10, help="seeds per cell (utility only)")
    a = p.parse_args(argv)
    png = utility(a.uber, a.seeds) if a.figure == "utility" else budget()
    print(f"wrote {png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
