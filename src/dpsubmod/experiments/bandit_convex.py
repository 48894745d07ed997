"""Private projection-free bandit convex optimization over combinatorial polytopes: regret
against the horizon T and against epsilon.

Runs PrivateBandit (Ene, Nguyen and Vladu, AAAI 2021, Algorithm 1; Laplace and Gaussian tree
noise, one-loss sensitivity calibration, and the paper's own calibration as
``max(paper, sensitivity)``), its non-private version and the Garber-Kretzu reconstruction
(:mod:`dpsubmod.online.convex`) on linear bandit losses over two polytopes built from
Zachary's karate club (bundled with networkx, 34 members, 78 friendships):

* ``graphic``: the graphic matroid polytope of the friendship graph (78 edges, rank 33): the
  convex hull of its spanning forests;
* ``cut-base``: the base polytope of the graph's cut function (scaled by the largest degree so
  every vertex coordinate lies in ``[-1, 1]``), in the hyperplane ``x(V) = 0`` (dimension 33).

Losses: :math:`f_t(x) = \\langle\\theta_t, x - c\\rangle` with :math:`\\theta_t` a fixed random
unit drift plus Gaussian noise, norm at most 1
(:func:`dpsubmod.online.linear_losses`), vanishing at the centre ``c`` of the
polytope (assumption A4, so ``|f_t| <= D`` on it). Regret is against the best vertex in
hindsight (one linear-oracle call). The learners run in
``mode="extend"`` (queries may leave the polytope by ``zeta`` inside its affine hull, as the
paper's main text assumes; linear losses are defined everywhere): shrinkage would need
``T >= d^2 (D / r)^4``, about ``10^15`` rounds for the graphic polytope, whose certified inner
radius is ``1 / (78 + sqrt 78)``. The reported regret is the expected regret over each round's
exploration draw (same mean as the realized regret, lower variance).

Writes into ``--out``: ``runs.csv`` (one row per run), ``summary.csv`` (mean and standard
deviation per domain, sweep, method, epsilon and T), ``slopes.csv`` (log-log slope of regret
against T per domain and method, mean and spread over repetitions, against the theorem's 3/4)
and, when matplotlib is installed, ``regret_vs_T.png`` and ``regret_vs_epsilon.png``::

    python -m dpsubmod.experiments.bandit_convex --out results/bandit_convex

Every run draws its loss noise from a stream determined by (domain, T, repetition), shared by
all methods (paired comparison), and its learner randomness from one determined by the whole
cell, both derived from ``--seed``; results do not depend on ``--n-jobs`` or on the order of the
runs.
"""

from __future__ import annotations

import argparse
import math
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np

from ..constraints import GraphicMatroid
from ..datasets import load_graph
from ..functions import GraphCut
from ..online import GarberKretzu, PrivateBandit, linear_losses, run_convex
from ..polytopes import MatroidPolytope, Polytope, SubmodularBasePolytope, inner_ball
from .plots import axes_row, figure, optional_figure, save_figure
from .results import write_table

DOMAINS = ("graphic", "cut-base")
#: method -> (noise, calibration); None: non-private.
METHODS: dict[str, tuple[str, str] | None] = {
    "nonprivate": None,
    "garber-kretzu": None,
    "laplace": ("laplace", "sensitivity"),
    "laplace-paper": ("laplace", "paper"),
    "gaussian": ("gaussian", "sensitivity"),
}
DEFAULT_TS = (1024, 2048, 4096, 8192, 16384)
DEFAULT_T_EPSILONS = (1.0, 10.0, 100.0)
DEFAULT_EPSILONS = (0.3, 1.0, 3.0, 10.0, 30.0, 100.0, 1000.0)
DELTA = 1e-6


class _CutBasePolytope(SubmodularBasePolytope):
    """The base polytope of an undirected cut function with a vectorised Edmonds greedy.

    Along an order ``pi`` the marginal gain of ``pi_i`` is ``d_e - 2 W[e, {pi_1..pi_(i-1)}]``
    (the cut gain for a symmetric ``W``), i.e. the degrees minus twice the strictly-lower
    triangular row sums of ``W`` permuted by ``pi``: ``O(n^2)`` array work instead of ``n``
    incremental evaluations. Same vertices as the generic greedy (checked in :func:`build_domain`).
    """

    def __init__(self, weights: np.ndarray):
        super().__init__(GraphCut(weights))
        self._W = np.asarray(weights, dtype=float)
        self._deg = self._W.sum(axis=1)

    def greedy_vertex(self, order: object) -> np.ndarray:
        o = np.asarray(order, dtype=np.int64)
        M = self._W[np.ix_(o, o)]
        x = np.empty(self.dim)
        x[o] = self._deg[o] - 2.0 * np.tril(M, -1).sum(axis=1)
        return x


def build_domain(name: str) -> Polytope:
    """The polytope of a domain: ``"graphic"`` or ``"cut-base"`` (karate club)."""
    g = load_graph("karate").graph
    if name == "graphic":
        return MatroidPolytope(GraphicMatroid(g))
    if name == "cut-base":
        A = nx.to_numpy_array(g, weight=None)
        A /= A.sum(axis=1).max()
        P = _CutBasePolytope(A)
        ref = SubmodularBasePolytope(GraphCut(A))
        order = np.random.default_rng(0).permutation(P.dim)
        if not np.allclose(P.greedy_vertex(order), ref.greedy_vertex(order)):
            raise RuntimeError("the vectorised cut greedy disagrees with Edmonds' greedy")
        return P
    raise ValueError(f"Unknown domain {name!r}; choose one of {DOMAINS}.")


def _learner(method: str, P: Polytope, T: int, eps: float | None, rng: Any) -> Any:
    if method == "garber-kretzu":
        return GarberKretzu(P, T, mode="extend", rng=rng)
    if method == "nonprivate":
        return PrivateBandit(P, T, epsilon=math.inf, mode="extend", rng=rng)
    noise, cal = METHODS[method]  # type: ignore[misc]
    return PrivateBandit(P, T, epsilon=float(eps), delta=DELTA if noise == "gaussian" else 0.0,
                         noise=noise, calibration=cal, mode="extend", rng=rng)


_DOMAIN_CACHE: dict[str, tuple[Polytope, np.ndarray]] = {}


def _domain(name: str) -> tuple[Polytope, np.ndarray]:
    if name not in _DOMAIN_CACHE:
        P = build_domain(name)
        _DOMAIN_CACHE[name] = (P, inner_ball(P).center)
    return _DOMAIN_CACHE[name]


def _cell(task: dict[str, Any]) -> dict[str, Any]:
    P, centre = _domain(task["domain"])
    T = task["T"]
    drift = np.random.default_rng(task["drift_seed"]).standard_normal(P.dim)
    losses = linear_losses(P.dim, T, drift=drift, noise=0.5, lipschitz=1.0, center=centre,
                           rng=np.random.default_rng(task["stream_seed"]))
    learner = _learner(task["method"], P, T, task["epsilon"], np.random.default_rng(
        task["learner_seed"]))
    t0 = time.perf_counter()
    tr = run_convex(learner, losses)
    p = tr.params
    return {
        "domain": task["domain"], "sweep": task["sweep"], "method": task["method"],
        "epsilon": "" if task["epsilon"] is None else task["epsilon"],
        "delta": DELTA if task["method"] == "gaussian" else 0.0, "T": T, "rep": task["rep"],
        "expected_regret": tr.final_expected_regret, "regret": tr.final_regret,
        "static_regret": -tr.comparator.value,  # never moving from c: every loss is 0 there
        "noise_scale": p.get("noise_scale", 0.0), "zeta": p["zeta"], "eta": p["eta"],
        "dim": p["dim"], "diameter": p["diameter"], "seconds": time.perf_counter() - t0,
    }


def _tasks(domains: Sequence[str], Ts: Sequence[int], T_epsilons: Sequence[float],
           epsilons: Sequence[float], T_eps: int, reps: int, seed: int) -> list[dict[str, Any]]:
    tasks: list[dict[str, Any]] = []
    method_ids = {m: i for i, m in enumerate(METHODS)}

    def add(domain: str, sweep: str, method: str, eps: float | None, T: int) -> None:
        di = DOMAINS.index(domain)
        e_key = 0 if eps is None else int(round(eps * 1000))
        for rep in range(reps):
            tasks.append({
                "domain": domain, "sweep": sweep, "method": method, "epsilon": eps, "T": T,
                "rep": rep,
                "drift_seed": np.random.SeedSequence(seed, spawn_key=(di,)),
                "stream_seed": np.random.SeedSequence(seed, spawn_key=(di, T, rep)),
                "learner_seed": np.random.SeedSequence(
                    seed, spawn_key=(di, T, rep, method_ids[method], e_key)),
            })

    for domain in domains:
        for T in Ts:
            add(domain, "T", "nonprivate", None, T)
            add(domain, "T", "garber-kretzu", None, T)
            for eps in T_epsilons:
                add(domain, "T", "laplace", float(eps), T)
        for method in ("laplace", "gaussian", "laplace-paper"):
            for eps in epsilons:
                add(domain, "epsilon", method, float(eps), T_eps)
        add(domain, "epsilon", "nonprivate", None, T_eps)
        add(domain, "epsilon", "garber-kretzu", None, T_eps)
    return tasks


def run(*, domains: Sequence[str] = DOMAINS, Ts: Sequence[int] = DEFAULT_TS,
        T_epsilons: Sequence[float] = DEFAULT_T_EPSILONS,
        epsilons: Sequence[float] = DEFAULT_EPSILONS, T_eps: int = 8192, reps: int = 3,
        seed: int = 0, n_jobs: int = 1) -> list[dict[str, Any]]:
    """Run both sweeps; one flat record per run.

    Parameters
    ----------
    domains : sequence of {"graphic", "cut-base"}
    Ts : sequence of int
        Horizons of the regret-against-T sweep (non-private, Garber-Kretzu and Laplace at each
        of ``T_epsilons``).
    epsilons : sequence of float
        Budgets of the regret-against-epsilon sweep at horizon ``T_eps`` (Laplace, Gaussian with
        ``delta = 1e-6``, Laplace with the paper's calibration).
    reps : int
        Repetitions per cell.
    seed : int
    n_jobs : int
        Parallel workers (joblib); the results do not depend on it.
    """
    for d in domains:
        if d not in DOMAINS:
            raise ValueError(f"Unknown domain {d!r}; choose from {DOMAINS}.")
    tasks = _tasks(domains, Ts, T_epsilons, epsilons, T_eps, reps, seed)
    if n_jobs == 1:
        return [_cell(t) for t in tasks]
    from joblib import Parallel, delayed

    return list(Parallel(n_jobs=n_jobs)(delayed(_cell)(t) for t in tasks))


def _key(r: dict[str, Any]) -> tuple:
    return (r["domain"], r["sweep"], r["method"], r["epsilon"], r["T"])


def summarize(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Mean and standard deviation of the expected regret per (domain, sweep, method, epsilon,
    T), with the regret of never moving for scale."""
    groups: dict[tuple, list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault(_key(r), []).append(r)
    out = []
    for (domain, sweep, method, eps, T), rs in groups.items():
        v = np.array([r["expected_regret"] for r in rs])
        out.append({
            "domain": domain, "sweep": sweep, "method": method, "epsilon": eps, "T": T,
            "runs": len(rs), "regret_mean": float(v.mean()),
            "regret_sd": float(v.std(ddof=1)) if v.size > 1 else 0.0,
            "regret_per_round": float(v.mean()) / T,
            "static_regret_mean": float(np.mean([r["static_regret"] for r in rs])),
            "noise_scale": rs[0]["noise_scale"],
            "seconds_mean": float(np.mean([r["seconds"] for r in rs])),
        })
    return out


def slopes(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Log-log slope of the expected regret against T per (domain, method, epsilon), fitted per
    repetition; mean and standard deviation over repetitions (theory: at most 3/4)."""
    groups: dict[tuple, dict[int, list[tuple[int, float]]]] = {}
    for r in rows:
        if r["sweep"] != "T":
            continue
        groups.setdefault((r["domain"], r["method"], r["epsilon"]), {}).setdefault(
            r["rep"], []).append((r["T"], r["expected_regret"]))
    out = []
    for (domain, method, eps), per_rep in groups.items():
        fits = []
        for pts in per_rep.values():
            pts.sort()
            Ts = np.array([p[0] for p in pts], dtype=float)
            R = np.array([p[1] for p in pts])
            if len(pts) >= 2 and np.all(R > 0):
                fits.append(float(np.polyfit(np.log(Ts), np.log(R), 1)[0]))
        f = np.array(fits)
        out.append({"domain": domain, "method": method, "epsilon": eps, "fits": f.size,
                    "slope_mean": float(f.mean()) if f.size else math.nan,
                    "slope_sd": float(f.std(ddof=1)) if f.size > 1 else math.nan,
                    "theory": 0.75})
    return out


def _write_csv(path: Path, rows: list[dict[str, Any]]) -> None:
    write_table(rows, path)


def _label(method: str, eps: Any) -> str:
    names = {"nonprivate": "PrivateBandit, noise off", "garber-kretzu": "Garber-Kretzu (rec.)",
             "laplace": "Laplace", "gaussian": "Gaussian", "laplace-paper": "Laplace, paper"}
    return names[method] + ("" if eps == "" else f", eps={eps:g}")


def plot_T(summary: list[dict[str, Any]], *, axes: Any = None) -> Any:
    """Regret against T, log-log, with a T^(3/4) reference, one panel per domain; returns the
    Figure (drawn into ``axes``, one Axes per domain, when given, else a new pyplot figure)."""
    rows = [s for s in summary if s["sweep"] == "T"]
    domains = sorted({s["domain"] for s in rows}, key=DOMAINS.index)
    fig, panels = axes_row(axes, len(domains), (6.0 * len(domains), 4.4))
    for ax, domain in zip(panels, domains):
        sub = [s for s in rows if s["domain"] == domain]
        for key in sorted({(s["method"], s["epsilon"]) for s in sub}, key=str):
            pts = sorted((s for s in sub if (s["method"], s["epsilon"]) == key),
                         key=lambda s: s["T"])
            ax.errorbar([s["T"] for s in pts], [s["regret_mean"] for s in pts],
                        yerr=[s["regret_sd"] for s in pts], marker="o", capsize=3,
                        label=_label(*key))
        ref = sorted((s for s in sub if s["method"] == "nonprivate"), key=lambda s: s["T"])
        if ref:
            Ts = np.array([s["T"] for s in ref], dtype=float)
            ax.plot(Ts, ref[0]["regret_mean"] * (Ts / Ts[0]) ** 0.75, "k--", lw=1,
                    label="slope 3/4")
            ax.plot(Ts, [s["static_regret_mean"] for s in ref], ":", color="gray",
                    label="never moving")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("horizon T")
        ax.set_ylabel("expected regret")
        ax.set_title(f"karate club, {domain} polytope")
        ax.legend(fontsize=7)
    return fig


def plot_epsilon(summary: list[dict[str, Any]], *, axes: Any = None) -> Any:
    """Average regret against epsilon at fixed T, one panel per domain; returns the Figure
    (drawn into ``axes``, one Axes per domain, when given, else a new pyplot figure)."""
    rows = [s for s in summary if s["sweep"] == "epsilon"]
    domains = sorted({s["domain"] for s in rows}, key=DOMAINS.index)
    fig, panels = axes_row(axes, len(domains), (6.0 * len(domains), 4.4))
    for ax, domain in zip(panels, domains):
        sub = [s for s in rows if s["domain"] == domain]
        T = sub[0]["T"]
        for method, marker in (("laplace", "o"), ("gaussian", "s"), ("laplace-paper", "^")):
            pts = sorted((s for s in sub if s["method"] == method), key=lambda s: s["epsilon"])
            if pts:
                ax.errorbar([s["epsilon"] for s in pts], [s["regret_per_round"] for s in pts],
                            yerr=[s["regret_sd"] / T for s in pts], marker=marker, capsize=3,
                            label=_label(method, ""))
        for method, style in (("nonprivate", "--"), ("garber-kretzu", "-.")):
            s = next((s for s in sub if s["method"] == method), None)
            if s is not None:
                ax.axhline(s["regret_per_round"], linestyle=style, color="k", lw=1,
                           label=_label(method, ""))
        ax.axhline(sub[0]["static_regret_mean"] / T, linestyle=":", color="gray",
                   label="never moving")
        ax.set_xscale("log")
        ax.set_xlabel("privacy budget epsilon (Gaussian: delta = 1e-6)")
        ax.set_ylabel(f"expected regret / T (T = {T})")
        ax.set_title(f"karate club, {domain} polytope")
        ax.legend(fontsize=7)
    return fig


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: run both sweeps and write the CSVs and plots into ``--out``."""
    ap = argparse.ArgumentParser(
        prog="python -m dpsubmod.experiments.bandit_convex",
        description="Private projection-free bandit convex optimization (Ene, Nguyen & Vladu "
                    "2021) over karate-club polytopes: regret against T and epsilon.")
    ap.add_argument("--out", required=True, type=Path, help="output directory")
    ap.add_argument("--domains", nargs="+", choices=DOMAINS, default=list(DOMAINS))
    ap.add_argument("--T", dest="Ts", type=int, nargs="+", default=list(DEFAULT_TS),
                    help="horizons of the regret-against-T sweep")
    ap.add_argument("--T-epsilons", type=float, nargs="+", default=list(DEFAULT_T_EPSILONS),
                    help="Laplace budgets shown in the regret-against-T sweep")
    ap.add_argument("--epsilons", type=float, nargs="+", default=list(DEFAULT_EPSILONS))
    ap.add_argument("--T-eps", type=int, default=8192,
                    help="horizon of the regret-against-epsilon sweep")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--n-jobs", type=int, default=1)
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        rows = run(domains=args.domains, Ts=args.Ts, T_epsilons=args.T_epsilons,
                   epsilons=args.epsilons, T_eps=args.T_eps, reps=args.reps, seed=args.seed,
                   n_jobs=args.n_jobs)
    summary = summarize(rows)
    fits = slopes(rows)
    args.out.mkdir(parents=True, exist_ok=True)
    _write_csv(args.out / "runs.csv", rows)
    _write_csv(args.out / "summary.csv", summary)
    _write_csv(args.out / "slopes.csv", fits)
    plotted = optional_figure() is not None
    for draw, sweep in ((plot_T, "T"), (plot_epsilon, "epsilon")):
        n = len({s["domain"] for s in summary if s["sweep"] == sweep})
        if plotted and n:
            panels = figure((6.0 * n, 4.4)).subplots(1, n, squeeze=False)[0]
            save_figure(draw(summary, axes=panels), args.out / f"regret_vs_{sweep}.png",
                        dpi=150, tight_bbox=False)
    for f in fits:
        print(f"{f['domain']:9s} {_label(f['method'], f['epsilon']):32s} slope "
              f"{f['slope_mean']:.3f} +- {f['slope_sd']:.3f} (theory <= 0.75)")
    for s in summary:
        if s["sweep"] == "epsilon":
            print(f"{s['domain']:9s} {_label(s['method'], s['epsilon']):32s} T={s['T']} "
                  f"regret/T {s['regret_per_round']:.4f} (never moving "
                  f"{s['static_regret_mean'] / s['T']:.4f})")
    print(f"{len(rows)} runs in {time.perf_counter() - t0:.1f}s; wrote {args.out}"
          + ("" if plotted else " (matplotlib not installed: no plots)"))
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
