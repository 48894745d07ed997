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

Besides the methods' defaults, ``VARIANTS`` runs each calibration beside the one it replaced (the
knapsack private greedy's ``calibration="tight"`` against ``"paper"``, under a public knapsack;
DPCG's Gaussian ``"auto"`` against ``"paper"`` at ``delta = 1e-6``) and the continuous methods
with a public ``value_bound = 1`` (the objective is an average of similarities in ``[0, 1]``),
which sets their number of steps from the stated guarantee.

Every (data set, method, epsilon, seed) cell draws from a child stream spawned from one master
seed. Writes ``runs.csv``, ``summary.csv`` (mean and standard deviation of the utility relative
to the non-private greedy under the same constraint, and ``Result.guarantee``'s bound at
``OPT`` = the greedy's value relative to it: a positive value means the guarantee certainly says
something on this data, since the bound grows with ``OPT``), ``results.md`` (the tables of
docs/results.md) and, with matplotlib, ``utility_vs_epsilon.png``::

    python -m dpsubmod.experiments.offline_facility_location --out results/offline_fl
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..constraints import Knapsack
from ..datasets.tables import load_breast_cancer
from ..errors import ValidationError
from ..functions import FacilityLocation
from ..offline import maximize
from .plots import axes_row, figure, optional_figure, save_figure
from .results import write_table

DEFAULT_EPSILONS = (0.1, 0.3, 1.0, 3.0, 10.0)
PRIVATE = {
    "private_greedy": {},
    "private_stochastic_greedy": {},
    "private_greedy_decomposable": {"delta": 1e-6},
    "private_continuous_greedy": {},
    "dpcg": {},
}
BASELINES = ("greedy", "stochastic_greedy", "random")
#: label -> (method, options, constraint): a calibration beside the one it replaced, or a method
#: with a public value bound ("knapsack": the public knapsack of :func:`knapsack_of`).
VARIANTS: dict[str, tuple[str, dict, str]] = {
    "private_greedy knapsack, tight": ("private_greedy", {"calibration": "tight"}, "knapsack"),
    "private_greedy knapsack, paper": ("private_greedy", {"calibration": "paper"}, "knapsack"),
    "dpcg gaussian, auto": ("dpcg", {"delta": 1e-6}, "k"),
    "dpcg gaussian, paper": ("dpcg", {"delta": 1e-6, "gaussian_calibration": "paper"}, "k"),
    "private_continuous_greedy, value_bound=1": ("private_continuous_greedy",
                                                 {"value_bound": 1.0}, "k"),
    "dpcg, value_bound=1": ("dpcg", {"value_bound": 1.0}, "k"),
}
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
        d = load_breast_cancer(bins=None)
        # mean radius and mean texture, scaled by the ranges published with the data set
        lo, hi = np.array([6.981, 9.71]), np.array([28.11, 39.28])
        pts = (d.X[:, :2] - lo) / (hi - lo)
        return pts, _grid((0.0, 0.0), (1.0, 1.0), 8), 0.1
    raise ValueError(f"Unknown data set {name!r}; choose 'uber' or 'breast_cancer'.")


def knapsack_of(n: int, k: int) -> Knapsack:
    """A public knapsack over the ``n`` candidates: costs 1, 1.5, 2 in turn (a candidate's cost
    set by its grid position, not by the data), budget ``1.5 k``."""
    return Knapsack(1.0 + 0.5 * (np.arange(n) % 3), budget=1.5 * k)


def _cell(f: FacilityLocation, constraint: Any, method: str, eps: float | None,
          kw: dict, rng: np.random.Generator) -> Any:
    try:
        return maximize(f, constraint, method=method, epsilon=eps, rng=rng, **kw)
    except ValidationError:
        return None  # a calibration that does not apply here (the paper's at epsilon / K >= 1)


def run(datasets: Sequence[str], epsilons: Sequence[float], seeds: int, k: int,
        uber_path: Path | None = None, seed: int = 0, variants: bool = True) -> list[dict]:
    rows: list[dict] = []
    master = np.random.SeedSequence(seed)
    for name in datasets:
        loaded = load_points(name, uber_path)
        if loaded is None:
            print(f"{name}: data not found, skipped")
            continue
        pts, cands, bw = loaded
        f = FacilityLocation.from_records(pts, cands, similarity="gaussian", bandwidth=bw)
        cons = {"k": k, "knapsack": knapsack_of(len(cands), k)}
        refs = {"k": maximize(f, k).diagnostics.value,
                "knapsack": maximize(f, cons["knapsack"], method="knapsack_greedy"
                                     ).diagnostics.value}
        cells = [(m, m, {}, "k", None) for m in BASELINES]
        cells += [(m, m, kw, "k", e) for m, kw in PRIVATE.items() for e in epsilons]
        if variants:
            cells += [(label, m, kw, c, e) for label, (m, kw, c) in VARIANTS.items()
                      for e in epsilons]
        # the cells of the defaults draw from the same streams as before the variants existed
        streams = master.spawn(len(cells))
        for (label, method, kw, con, eps), ss in zip(cells, streams):
            reps = 1 if method == "greedy" else seeds
            ref = refs[con]
            for r, child in enumerate(ss.spawn(reps)):
                res = _cell(f, cons[con], method, eps, kw, np.random.default_rng(child))
                if res is None:
                    continue
                g = res.guarantee
                rows.append({
                    "dataset": name, "records": len(pts), "candidates": len(cands), "k": k,
                    "method": label, "epsilon": "" if eps is None else eps,
                    "delta": "" if res.privacy is None else res.privacy.delta, "seed": r,
                    "utility": res.diagnostics.value / ref, "evaluations": res.evaluations,
                    "steps": res.params.get("steps", ""),
                    # the stated bound at OPT = the greedy's value (at most OPT, so at most
                    # the bound at the true OPT), relative to it; "" when vacuous
                    "bound": "" if g is None or g.vacuous else g.lower_bound(ref) / ref,
                })
    return rows


def summarize(rows: list[dict]) -> list[dict]:
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        groups.setdefault((r["dataset"], r["method"], r["epsilon"]), []).append(r)
    out = []
    for (d, m, e), rs in groups.items():
        v = [r["utility"] for r in rs]
        bounds = [r["bound"] for r in rs if r.get("bound", "") != ""]
        out.append({"dataset": d, "method": m, "epsilon": e, "mean": float(np.mean(v)),
                    "sd": float(np.std(v)), "runs": len(v),
                    "bound": float(max(bounds)) if bounds else ""})
    return out


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


#: (row label, the calibration or choice replaced, its replacement) of the before/after tables
PAIRS = (
    ("private_greedy, knapsack", "private_greedy knapsack, paper",
     "private_greedy knapsack, tight"),
    ("dpcg, Gaussian (delta = 1e-6)", "dpcg gaussian, paper", "dpcg gaussian, auto"),
    ("private_continuous_greedy: T = r / value_bound = 1", "private_continuous_greedy",
     "private_continuous_greedy, value_bound=1"),
    ("dpcg (Laplace): K = ceil(R) / value_bound = 1", "dpcg", "dpcg, value_bound=1"),
)


def markdown(summary: list[dict]) -> str:
    """The tables of docs/results.md: per data set, utility against epsilon of the defaults
    (mean +/- standard deviation), then each change as ``before -> after`` means. ``summary``
    as :func:`summarize` returns it, or read back from ``summary.csv``."""
    def num(v: Any) -> Any:
        return "" if v in ("", None) else float(v)
    summary = [{**s, "epsilon": num(s["epsilon"]), "mean": float(s["mean"]),
                "sd": float(s["sd"]), "bound": num(s.get("bound", ""))} for s in summary]
    eps = sorted({s["epsilon"] for s in summary if s["epsilon"] != ""})
    head = "| method | " + " | ".join(f"eps={e}" for e in eps) + " |\n" \
        + "|---" * (len(eps) + 1) + "|\n"
    out = []
    for name in sorted({s["dataset"] for s in summary}, reverse=True):
        by = {(s["method"], s["epsilon"]): s for s in summary if s["dataset"] == name}
        lines = [f"### {name}\n", head.rstrip("\n")]
        for m in PRIVATE:
            cells = [f"{by[m, e]['mean']:.3f} +/- {by[m, e]['sd']:.3f}" if (m, e) in by else ""
                     for e in eps]
            lines.append(f"| {m} | " + " | ".join(cells) + " |")
        for m in BASELINES[1:]:
            if (m, "") in by:
                s0 = by[m, ""]
                lines.append(f"| {m} (not private) | {s0['mean']:.3f} +/- {s0['sd']:.3f} |"
                             + " |" * (len(eps) - 1))
        lines += ["", f"Before -> after ({name}):", "", head.rstrip("\n")]
        for label, old, new in PAIRS:
            cells = []
            for e in eps:
                a, b = by.get((old, e)), by.get((new, e))
                cells.append("" if b is None else
                             f"{'n/a' if a is None else format(a['mean'], '.3f')} -> "
                             f"{b['mean']:.3f}")
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
        lines += ["", f"Stated guarantee ({name}): the bound of `Result.guarantee` at OPT = "
                      "the greedy's value, relative to it (positive: it says something here; "
                      "\"vacuous\": the bound is at most 0 for every value the objective can "
                      "take, OPT <= 1 for this average of similarities in [0, 1]):",
                  "", head.rstrip("\n")]
        for m in list(PRIVATE) + [v for v in VARIANTS if "value_bound" in v]:
            cells = ["" if (m, e) not in by else
                     "vacuous" if by[m, e]["bound"] == "" else f"{by[m, e]['bound']:.3f}"
                     for e in eps]
            lines.append(f"| {m} | " + " | ".join(cells) + " |")
        out.append("\n".join(lines))
    return "\n\n".join(out) + "\n"


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
    p.add_argument("--no-variants", action="store_true",
                   help="only the methods' defaults, not the calibrations they replaced")
    a = p.parse_args(argv)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = run(a.datasets, a.epsilons, a.seeds, a.k, a.uber, a.seed, variants=not a.no_variants)
    if not rows:
        print("no data set available")
        return 1
    summ = summarize(rows)
    _write(rows, out / "runs.csv")
    _write(summ, out / "summary.csv")
    (out / "results.md").write_text(markdown(summ))
    png = None
    if optional_figure() is not None:
        n = len({s["dataset"] for s in summ})
        panels = figure((6 * n, 4.2)).subplots(1, n, squeeze=False)[0]
        png = save_figure(plot(summ, axes=panels), out / "utility_vs_epsilon.png", dpi=110,
                          tight_bbox=False)
    for s in summ:
        print(f"{s['dataset']:<14} {s['method']:<28} eps={s['epsilon']!s:<5} "
              f"utility={s['mean']:.3f} +/- {s['sd']:.3f}")
    print(f"wrote {out / 'runs.csv'}, {out / 'summary.csv'}, {out / 'results.md'}"
          + (f", {png}" if png else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
