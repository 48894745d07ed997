"""Private facility location: utility against epsilon for every offline method.

Each record is one person's location; the candidates are a public grid; the objective is the
average over records of the best Gaussian similarity to a chosen candidate (declared sensitivity
``1 / N`` under replace-one). Two data sets:

* ``uber``: the 10,000 New York Uber pickups of April 2014 (a reservoir sample of the public FOIL
  release), read from ``--uber PATH`` when the file is present (skipped cleanly otherwise). The
  grid covers Manhattan and nearby Brooklyn and Queens; it is fixed in advance, not fitted.
* ``breast_cancer``: the Wisconsin breast-cancer patients (bundled with scikit-learn), each
  patient a point of two measurements (mean radius, mean texture) scaled by the published
  feature ranges; candidates are a public grid on the unit square.

Every (data set, method, epsilon, seed) cell draws from a child stream spawned from one master
seed. Writes ``runs.csv``, ``summary.csv`` (mean and standard deviation of the utility relative
to the non-private greedy) and, with matplotlib, ``utility_vs_epsilon.png``::

    python -m dpsubmod.experiments.offline_facility_location --out results/offline_fl
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..functions import FacilityLocation
from ..offline import maximize
from .plots import axes_row, figure, optional_figure, save_figure
from .results import write_table

__all__ = ["load_points", "run", "summarize", "plot", "main"]

DEFAULT_EPSILONS = (0.1, 0.3, 1.0, 3.0, 10.0)
PRIVATE = {
    "private_greedy": {},
    "private_stochastic_greedy": {},
    "private_greedy_decomposable": {"delta": 1e-6},
    "private_continuous_greedy": {},
    "dpcg": {},
}
BASELINES = ("greedy", "stochastic_greedy", "random")
DEFAULT_UBER = Path("../shared/data/uber-apr14-pickups-10k.csv")


def _grid(lo: Sequence[float], hi: Sequence[float], m: int) -> np.ndarray:
    a = np.linspace(lo[0], hi[0], m)
    b = np.linspace(lo[1], hi[1], m)
    return np.array([[x, y] for x in a for y in b])


def load_points(name: str, uber_path: Path | None = None
                ) -> tuple[np.ndarray, np.ndarray, float] | None:
    """``(records, public candidates, public bandwidth)`` of a data set, or None if absent."""
    if name == "uber":
        path = uber_path or DEFAULT_UBER
        if not Path(path).exists():
            return None
        pts = np.loadtxt(path, delimiter=",")
        # a public 10 x 10 grid over lower Manhattan to Harlem (degrees), about 1 km bandwidth
        return pts, _grid((40.70, -74.02), (40.82, -73.93), 10), 0.01
    if name == "breast_cancer":
        from ..datasets.tables import load_breast_cancer

        d = load_breast_cancer(bins=None)
        # mean radius and mean texture, scaled by the ranges published with the data set
        lo, hi = np.array([6.981, 9.71]), np.array([28.11, 39.28])
        pts = (d.X[:, :2] - lo) / (hi - lo)
        return pts, _grid((0.0, 0.0), (1.0, 1.0), 8), 0.1
    raise ValueError(f"Unknown data set {name!r}; choose 'uber' or 'breast_cancer'.")


def run(datasets: Sequence[str], epsilons: Sequence[float], seeds: int, k: int,
        uber_path: Path | None = None, seed: int = 0) -> list[dict]:
    rows: list[dict] = []
    master = np.random.SeedSequence(seed)
    for name in datasets:
        loaded = load_points(name, uber_path)
        if loaded is None:
            print(f"{name}: data not found, skipped")
            continue
        pts, cands, bw = loaded
        f = FacilityLocation.from_records(pts, cands, similarity="gaussian", bandwidth=bw)
        ref = maximize(f, k).diagnostics.value
        cells = [(m, None) for m in BASELINES] + [(m, e) for m in PRIVATE for e in epsilons]
        streams = master.spawn(len(cells))
        for (method, eps), ss in zip(cells, streams):
            reps = 1 if method == "greedy" else seeds
            for r, child in enumerate(ss.spawn(reps)):
                kw = dict(PRIVATE.get(method, {}))
                res = maximize(f, k, method=method, epsilon=eps, rng=np.random.default_rng(child),
                               **kw)
                rows.append({
                    "dataset": name, "records": len(pts), "candidates": len(cands), "k": k,
                    "method": method, "epsilon": "" if eps is None else eps,
                    "delta": "" if res.privacy is None else res.privacy.delta, "seed": r,
                    "utility": res.diagnostics.value / ref, "evaluations": res.evaluations,
                })
    return rows


def summarize(rows: list[dict]) -> list[dict]:
    groups: dict[tuple, list[float]] = {}
    for r in rows:
        groups.setdefault((r["dataset"], r["method"], r["epsilon"]), []).append(r["utility"])
    return [{"dataset": d, "method": m, "epsilon": e, "mean": float(np.mean(v)),
             "sd": float(np.std(v)), "runs": len(v)} for (d, m, e), v in groups.items()]


def plot(summary: list[dict], *, axes: Any = None) -> Any:
    """Utility against epsilon, one panel per data set; returns the Figure (drawn into
    ``axes``, one Axes per data set, when given, else a new pyplot figure)."""
    names = sorted({s["dataset"] for s in summary})
    fig, panels = axes_row(axes, len(names), (6 * len(names), 4.2))
    for ax, name in zip(panels, names):
        for method in PRIVATE:
            pts = sorted((s["epsilon"], s["mean"], s["sd"]) for s in summary
                         if s["dataset"] == name and s["method"] == method)
            if not pts:
                continue
            e, m, sd = map(np.array, zip(*pts))
            ax.plot(e, m, "o-", label=method)
            ax.fill_between(e, m - sd, m + sd, alpha=0.15)
        for method, style in (("greedy", "k--"), ("random", "r:")):
            v = [s["mean"] for s in summary if s["dataset"] == name and s["method"] == method]
            if v:
                ax.axhline(v[0], color=style[0], linestyle=style[1:], label=method)
        ax.set_xscale("log")
        ax.set_xlabel("epsilon (total)")
        ax.set_ylabel("utility / non-private greedy")
        ax.set_title(f"private facility location: {name}")
        ax.legend(fontsize=7, loc="lower right")
    return fig


def _write(rows: list[dict], path: Path) -> None:
    write_table(rows, path)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", default="results/offline_facility_location")
    p.add_argument("--datasets", nargs="+", default=["uber", "breast_cancer"])
    p.add_argument("--uber", type=Path, default=None, help="path of the Uber pickups CSV")
    p.add_argument("--epsilons", type=float, nargs="+", default=list(DEFAULT_EPSILONS))
    p.add_argument("--seeds", type=int, default=10)
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = run(a.datasets, a.epsilons, a.seeds, a.k, a.uber, a.seed)
    if not rows:
        print("no data set available")
        return 1
    summ = summarize(rows)
    _write(rows, out / "runs.csv")
    _write(summ, out / "summary.csv")
    png = None
    if optional_figure() is not None:
        n = len({s["dataset"] for s in summ})
        panels = figure((6 * n, 4.2)).subplots(1, n, squeeze=False)[0]
        png = save_figure(plot(summ, axes=panels), out / "utility_vs_epsilon.png", dpi=110,
                          tight_bbox=False)
    for s in summ:
        print(f"{s['dataset']:<14} {s['method']:<28} eps={s['epsilon']!s:<5} "
              f"utility={s['mean']:.3f} +/- {s['sd']:.3f}")
    print(f"wrote {out / 'runs.csv'}, {out / 'summary.csv'}" + (f", {png}" if png else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
