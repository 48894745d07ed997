"""k-topic influence maximization on a real social network: utility against epsilon.

Runs the private k-submodular algorithms of Rafiey and Yoshida (ICML 2020, Algorithms 3 and 4)
and the non-private baselines (the greedy of Ohsaka and Yoshida 2015, a random labelling) on the
k-topic independent cascade model over a graph bundled with networkx (the co-appearance network
of *Les Miserables*, 77 characters and 254 edges, or Zachary's karate club), with per-topic arc
probabilities drawn from a seed. Writes ``runs.csv`` (one row per run), ``summary.csv`` (mean
and standard deviation per method and epsilon) and, when matplotlib is installed,
``utility_vs_epsilon.png``::

    python -m dpsubmod.experiments.ksubmodular_influence --out results/ks_influence

Design
------
* The private objective is the reverse-reachable estimate built from ``--samples`` records (one
  target user's k reverse-reachable sets each), with sensitivity ``n / samples`` under
  "replace one record" (:class:`~dpsubmod.functions.ksubmodular.KTopicInfluence`).
* Every released selection is scored on an independent estimate with ``--eval-samples`` fresh
  records, so the reported spread is not biased toward the records the algorithm saw.
* One master seed; the probabilities, both record sets and every (method, epsilon, repeat) cell
  draw from child streams spawned from it, so results do not depend on the order of the runs.
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..constraints import UniformMatroid
from ..datasets.graphs import load_graph as _load_graph
from ..functions.ksubmodular import KTopicInfluence, directed_edges
from ..offline import maximize_ksubmodular
from .plots import axes_of, figure, optional_figure, save_figure
from .results import write_table

GRAPHS = ("les_miserables", "karate")
DEFAULT_EPSILONS = (0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0)
PRIVATE = ("ks_private", "ks_private_sampled")


def load_graph(name: str) -> Any:
    """A graph bundled with networkx: ``"les_miserables"`` or ``"karate"``
    (see :func:`dpsubmod.datasets.load_graph`)."""
    if name not in GRAPHS:
        raise ValueError(f"Unknown graph {name!r}; choose one of {GRAPHS}.")
    return _load_graph(name).graph


def topic_probabilities(graph: Any, k: int, p_max: float, rng: np.random.Generator
                        ) -> np.ndarray:
    """Per-topic arc probabilities ``p^i_{uv} ~ Uniform(0, p_max)``, independent over topics
    and arcs (both directions of an undirected edge get their own), shape ``(k, arcs)``."""
    src, _, _ = directed_edges(graph)
    return rng.uniform(0.0, p_max, size=(k, src.size))


def run(*, graph: str = "les_miserables", topics: int = 3, budget: int = 10,
        samples: int = 20_000, eval_samples: int = 50_000, epsilons: Sequence[float] =
        DEFAULT_EPSILONS, repeats: int = 20, gamma: float = 0.1, p_max: float = 0.2,
        seed: int = 0) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Run the sweep; returns ``(rows, info)``: one flat record per run, and the setup."""
    g = load_graph(graph)
    root = np.random.SeedSequence(seed)
    s_prob, s_train, s_eval, s_cells = root.spawn(4)
    p = topic_probabilities(g, topics, p_max, np.random.default_rng(s_prob))
    f = KTopicInfluence.from_graph(g, p, n_samples=samples, rng=np.random.default_rng(s_train))
    f_eval = KTopicInfluence.from_graph(g, p, n_samples=eval_samples,
                                        rng=np.random.default_rng(s_eval))
    constraint = UniformMatroid(f.n, budget)
    cells: list[tuple[str, float | None]] = [("ks_greedy", None), ("ks_random", None)]
    cells += [(m, float(e)) for m in PRIVATE for e in epsilons]
    streams = s_cells.spawn(len(cells))
    rows: list[dict[str, Any]] = []
    for (method, eps), cell_seed in zip(cells, streams):
        reps = 1 if method == "ks_greedy" else repeats
        for rep, rs in enumerate(cell_seed.spawn(reps)):
            opts: dict[str, Any] = {"rng": np.random.default_rng(rs)}
            if eps is not None:
                opts["epsilon"] = eps
            if method == "ks_private_sampled":
                opts["gamma"] = gamma
            t0 = time.perf_counter()
            res = maximize_ksubmodular(f, constraint, method, **opts)
            elapsed = time.perf_counter() - t0
            rows.append({
                "method": method,
                "epsilon": "" if eps is None else eps,
                "repeat": rep,
                "spread_eval": f_eval(res.selection),
                "spread_train": res.diagnostics.value,
                "evaluations": res.evaluations,
                "seconds": elapsed,
            })
    info = {"graph": graph, "n": f.n, "arcs": int(p.shape[1]), "topics": topics,
            "budget": budget, "samples": samples, "eval_samples": eval_samples,
            "sensitivity": f.sensitivity, "repeats": repeats, "gamma": gamma, "p_max": p_max,
            "seed": seed}
    return rows, info


def summarize(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Mean and standard deviation of the held-out spread per (method, epsilon)."""
    groups: dict[tuple[str, Any], list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault((r["method"], r["epsilon"]), []).append(r)
    out = []
    for (method, eps), rs in groups.items():
        v = np.array([r["spread_eval"] for r in rs])
        out.append({
            "method": method, "epsilon": eps, "runs": len(rs),
            "spread_mean": float(v.mean()), "spread_sd": float(v.std(ddof=1)) if v.size > 1
            else 0.0,
            "evaluations_mean": float(np.mean([r["evaluations"] for r in rs])),
            "seconds_mean": float(np.mean([r["seconds"] for r in rs])),
        })
    return out


def _write_csv(path: Path, rows: list[dict[str, Any]]) -> None:
    write_table(rows, path)


def plot(summary: list[dict[str, Any]], title: str = "", *, ax: Any = None) -> Any:
    """Spread against epsilon; returns the Figure (drawn into ``ax`` when given, else a new
    pyplot figure)."""
    fig, ax = axes_of(ax, (6.4, 4.2))
    labels = {"ks_private": "Algorithm 3 (private)",
              "ks_private_sampled": "Algorithm 4 (private, sampled)"}
    for method, marker in (("ks_private", "o"), ("ks_private_sampled", "s")):
        pts = sorted((s for s in summary if s["method"] == method), key=lambda s: s["epsilon"])
        ax.errorbar([s["epsilon"] for s in pts], [s["spread_mean"] for s in pts],
                    yerr=[s["spread_sd"] for s in pts], marker=marker, capsize=3,
                    label=labels[method])
    for method, style in (("ks_greedy", "--"), ("ks_random", ":")):
        s = next(s for s in summary if s["method"] == method)
        ax.axhline(s["spread_mean"], linestyle=style, color="gray",
                   label="greedy (non-private)" if method == "ks_greedy" else "random labelling")
    ax.set_xscale("log")
    ax.set_xlabel("total privacy budget epsilon")
    ax.set_ylabel("influence spread (held-out estimate)")
    if title:
        ax.set_title(title)
    ax.legend(fontsize=8)
    return fig


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: run the sweep and write the CSVs and the plot into ``--out``."""
    ap = argparse.ArgumentParser(
        prog="python -m dpsubmod.experiments.ksubmodular_influence",
        description="k-topic influence maximization: utility of private k-submodular "
                    "maximization (Rafiey & Yoshida 2020, Algorithms 3 and 4) against epsilon.")
    ap.add_argument("--out", required=True, type=Path, help="output directory")
    ap.add_argument("--graph", choices=GRAPHS, default="les_miserables")
    ap.add_argument("--topics", type=int, default=3, help="number of topics k")
    ap.add_argument("--budget", type=int, default=10, help="number of seeds (total size)")
    ap.add_argument("--samples", type=int, default=20_000,
                    help="reverse-reachable records of the private objective")
    ap.add_argument("--eval-samples", type=int, default=50_000,
                    help="fresh records for the held-out evaluation")
    ap.add_argument("--epsilons", type=float, nargs="+", default=list(DEFAULT_EPSILONS))
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--gamma", type=float, default=0.1, help="Algorithm 4 failure probability")
    ap.add_argument("--p-max", type=float, default=0.2, help="arc probabilities ~ U(0, p_max)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    rows, info = run(graph=args.graph, topics=args.topics, budget=args.budget,
                     samples=args.samples, eval_samples=args.eval_samples,
                     epsilons=args.epsilons, repeats=args.repeats, gamma=args.gamma,
                     p_max=args.p_max, seed=args.seed)
    summary = summarize(rows)
    args.out.mkdir(parents=True, exist_ok=True)
    _write_csv(args.out / "runs.csv", rows)
    _write_csv(args.out / "summary.csv", summary)
    title = (f"{info['graph']}: n={info['n']}, k={info['topics']}, B={info['budget']}, "
             f"Delta={info['sensitivity']:.3g}")
    plotted = optional_figure() is not None
    if plotted:
        save_figure(plot(summary, title, ax=figure((6.4, 4.2)).subplots()),
                    args.out / "utility_vs_epsilon.png", dpi=150, tight_bbox=False)
    greedy = next(s for s in summary if s["method"] == "ks_greedy")["spread_mean"]
    print(f"{title}; {info['samples']} records (private), {info['eval_samples']} (held out); "
          f"{info['repeats']} repeats; {time.perf_counter() - t0:.1f} s")
    print(f"{'method':<20}{'epsilon':>9}{'spread':>10}{'sd':>8}{'/greedy':>9}{'evals':>9}")
    for s in sorted(summary, key=lambda s: (s["method"], s["epsilon"] or math.inf)):
        eps = "-" if s["epsilon"] == "" else f"{s['epsilon']:g}"
        print(f"{s['method']:<20}{eps:>9}{s['spread_mean']:>10.2f}{s['spread_sd']:>8.2f}"
              f"{s['spread_mean'] / greedy:>9.3f}{s['evaluations_mean']:>9.0f}")
    print(f"wrote {args.out / 'runs.csv'}, {args.out / 'summary.csv'}"
          + (f", {args.out / 'utility_vs_epsilon.png'}" if plotted else
             " (matplotlib not installed: no plot)"))
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
