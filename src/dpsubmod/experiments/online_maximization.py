r"""Online private submodular maximization on real data: :math:`(1 - 1/e)`-regret against the
horizon ``T`` and against the privacy budget ``epsilon`` for every online maximization learner.

Stream (one person per round, the privacy unit of the online algorithms):

* **Uber pickups** (default when the file is present): round ``t`` is rider ``t``'s facility
  location function :math:`f_t(S) = \max_{j \in S} \exp(-\|x_t - c_j\|^2 / (2h^2))` over a public
  grid of candidate locations ``c_j`` in Manhattan, with a public bandwidth ``h``; values lie in
  ``[0, 1]``, so one rider changes one round's function within the learners' promise. The file
  is ``uber-apr14-pickups-10k.csv`` (latitude, longitude; no header), read from ``--data`` or
  from ``../shared/data`` relative to the repository root; it is never copied.
* **Coverage on a bundled graph** (fallback, or ``--dataset karate``): the ground set is the
  members of Zachary's karate club (``networkx``); round ``t`` is a member ``u_t`` drawn
  uniformly, and :math:`f_t(S) = 1` when ``S`` contains ``u_t`` or one of its neighbours.

Learners: the private experts of Perez-Salazar and Cummings (FI-DP, BanditDP, NaiveBanditDP,
PresampledBanditDP), the Streeter-Golovin baselines, DPMFW (Sadeghi and Fazel) with Laplace and
Gaussian noise, Meta-Frank-Wolfe (Chen, Hassani and Karbasi) and Algorithm 4 of Perez-Salazar and
Cummings on PFTAL, and the i.i.d.-rounds learners PrivateEpochGreedy and
PrivateExploreThenCommit, under a cardinality constraint ``k``. The bandit learners use exploration
rates :math:`\gamma = T^{-1/3}` (Algorithm 3, B.2) and :math:`T^{-1/4}` (B.1), because the
theorems' constants give :math:`\gamma > 1` at these horizons.

Regret is :math:`(1 - 1/e)\sum_t f_t(S^*) - \sum_t f_t(S_t)` for ``S*`` the offline greedy set
on the summed functions (``regret_greedy``) and the best ``k``-set by enumeration
(``regret_opt``), computed from the learners' exact per-round expectations when they report
them. Everything except the played sets is computed from the private data and is **not
private**: it is evaluation only.

Outputs in ``--out``: ``online_maximization.csv`` (one row per learner, ``epsilon``, ``T`` and
seed), ``summary.csv`` (means and standard deviations over seeds), and, when matplotlib is
installed, ``regret_vs_T.png`` and ``regret_vs_epsilon.png``.

Run ``python -m dpsubmod.experiments.online_maximization --out DIR`` (``--help`` for the grid).
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..datasets import load_graph
from ..functions import Coverage, FacilityLocation
from ..online import (
    FIDP,
    BanditDP,
    BanditOnlineGreedy,
    BatchedPrivateBandit,
    DPMetaFrankWolfe,
    FunctionStream,
    Hindsight,
    Learner,
    MetaFrankWolfe,
    NaiveBanditDP,
    OnlineGreedy,
    PFTALMetaFrankWolfe,
    PresampledBanditDP,
    PrivateEpochGreedy,
    PrivateExploreThenCommit,
    PrivateTreeExperts,
    run,
)
from ..online.tags import LearnerTags
from .plots import axes_of, figure, optional_figure, save_figure
from .results import write_table

#: Public candidate grid over Manhattan (latitude, longitude bounds) and its shape.
MANHATTAN = ((40.70, 40.82), (-74.02, -73.93))
#: Public similarity bandwidth in degrees (about 1.1 km).
BANDWIDTH = 0.01

_DATA_NAME = "uber-apr14-pickups-10k.csv"


def default_data_path() -> Path:
    """``../shared/data/uber-apr14-pickups-10k.csv`` relative to the repository root."""
    return Path(__file__).resolve().parents[3].parent / "shared" / "data" / _DATA_NAME


def load_uber(path: str | Path) -> np.ndarray:
    """The pickups as an ``(N, 2)`` array of (latitude, longitude)."""
    data = np.loadtxt(path, delimiter=",", dtype=np.float64, ndmin=2)
    if data.shape[1] != 2 or not np.isfinite(data).all():
        raise ValueError(f"{path} must hold finite 'latitude, longitude' rows.")
    return data


def candidate_grid(rows: int = 4, cols: int = 3) -> np.ndarray:
    """A public ``rows x cols`` grid of candidate locations over :data:`MANHATTAN`."""
    (la0, la1), (lo0, lo1) = MANHATTAN
    lat = np.linspace(la0, la1, rows + 2)[1:-1]
    lon = np.linspace(lo0, lo1, cols + 2)[1:-1]
    return np.array([(a, b) for a in lat for b in lon])


@dataclass
class StreamInstance:
    """The functions of one run and what the comparators need."""

    functions: list
    n: int
    value_of: Callable[[Sequence[int]], float]  # sum_t f_t(S), for the comparators
    name: str


def uber_stream_builder(points: np.ndarray, *, rows: int = 4, cols: int = 3,
                        bandwidth: float = BANDWIDTH) -> Callable[[int, np.random.Generator],
                                                                 StreamInstance]:
    """``build(T, rng)``: ``T`` riders drawn without replacement, one facility-location function
    per rider over the public grid."""
    C = candidate_grid(rows, cols)

    def build(T: int, rng: np.random.Generator) -> StreamInstance:
        idx = rng.choice(points.shape[0], size=T, replace=T > points.shape[0])
        P = points[idx]
        d2 = ((P[:, None, :] - C[None, :, :]) ** 2).sum(axis=2)
        sim = np.exp(-d2 / (2.0 * bandwidth**2))
        fs = [FacilityLocation(sim[t:t + 1]) for t in range(T)]

        def value_of(S: Sequence[int]) -> float:
            S = list(S)
            return float(sim[:, S].max(axis=1).sum()) if S else 0.0

        return StreamInstance(fs, C.shape[0], value_of, "uber")

    return build


def drifting_builder(build: Callable[[int, np.random.Generator], StreamInstance], *,
                     cols: int = 3) -> Callable[[int, np.random.Generator], StreamInstance]:
    """``build`` with each instance's rounds sorted by the rider's nearest grid row (the grid's
    rows of ``cols`` candidates run south to north, a public-geometry proxy of latitude; stable
    in the draw order within a row): the riders drift from the south of Manhattan to the north
    over the run, and the best set changes with them. The summed function, hence every
    comparator, is unchanged."""

    def drifted(T: int, rng: np.random.Generator) -> StreamInstance:
        inst = build(T, rng)
        rows = [int(np.argmax(f.similarity[0])) // cols for f in inst.functions]
        order = np.argsort(rows, kind="stable")
        inst.functions = [inst.functions[i] for i in order]
        inst.name = f"{inst.name}-drift"
        return inst

    return drifted


def karate_stream_builder() -> Callable[[int, np.random.Generator], StreamInstance]:
    """``build(T, rng)``: members of the karate club drawn uniformly, one coverage function each."""
    g = load_graph("karate").graph
    n = g.number_of_nodes()
    closed = np.eye(n, dtype=bool)
    for u, v in g.edges():
        closed[u, v] = closed[v, u] = True
    per_member = [Coverage(closed[:, [u]].astype(float)) for u in range(n)]

    def build(T: int, rng: np.random.Generator) -> StreamInstance:
        members = rng.integers(n, size=T)
        counts = np.bincount(members, minlength=n)
        fs = [per_member[u] for u in members]

        def value_of(S: Sequence[int]) -> float:
            S = list(S)
            return float(counts @ closed[:, S].any(axis=1)) if S else 0.0

        return StreamInstance(fs, n, value_of, "karate")

    return build


def _comparators(inst: StreamInstance, k: int, T: int) -> dict[str, Any]:
    """Greedy and (when small) enumerated best ``k``-sets of the summed functions."""
    n = inst.n
    S: list[int] = []
    for _ in range(k):
        cand = [e for e in range(n) if e not in S]
        vals = [inst.value_of(S + [e]) for e in cand]
        S.append(cand[int(np.argmax(vals))])
    out = {"greedy": Hindsight(tuple(sorted(S)), inst.value_of(S), "max", "greedy", False)}
    if math.comb(n, k) <= 20000:
        best = max(itertools.combinations(range(n), k), key=inst.value_of)
        out["opt"] = Hindsight(tuple(best), inst.value_of(best), "max", "brute-force", True)
    return out


class UniformRandom(Learner):
    """Plays a uniformly random ``k``-set every round: the reference a learner must beat
    (it reads no data, so it is trivially private; its expected value is exact)."""

    _tags = LearnerTags(private=False, feedback="full", problem="maximization",
                        assumption="oblivious")
    sense = "max"

    def __init__(self, n: int, T: int, k: int, *, rng: object = None):
        self.n, self.T, self.k, self.rng = n, T, k, rng

    def _reset(self) -> None:
        super()._reset()
        self._gen = np.random.default_rng(self.rng)  # type: ignore[arg-type]
        combos = np.array(list(itertools.combinations(range(int(self.n)), int(self.k))))
        self._all = np.zeros((combos.shape[0], int(self.n)), dtype=bool)
        self._all[np.arange(combos.shape[0])[:, None], combos] = True

    def _select(self) -> np.ndarray:
        return self._all[int(self._gen.integers(self._all.shape[0]))].copy()

    def _update(self, f: Any) -> None:
        pass

    def expected_value(self, f: Any) -> float:
        return float(f.values(self._all).mean())


#: name -> (factory(n, T, k, epsilon, delta, rng), learner class): the defaults, tuned to (T,
#: epsilon, n). Whether a learner is private is read from its class's tags.
LEARNERS: dict[str, tuple[Callable[..., Any], type]] = {}
#: The same learners with the previous settings: the papers' calibrations and the fixed
#: exploration rates and numbers of Frank-Wolfe steps (``--calibrations paper``).
LEARNERS_PAPER: dict[str, tuple[Callable[..., Any], type]] = {}


def _paper_pftal_H(n: int, T: int, k: int, eps: float, K: int) -> float:
    """The strong convexity PFTALMetaFrankWolfe used before it was tuned to the bound."""
    lt = max(math.log(T), 1.0)
    return math.sqrt(n) * math.sqrt(max(n * lt ** 2.5 / (eps / K), 1.0) / T) / math.sqrt(k)


def _register() -> None:
    def K(T: int) -> int:
        return max(2, min(20, round(math.sqrt(T))))

    LEARNERS.update({
        "FIDP": (lambda n, T, k, e, d, r: FIDP(n, T, k, epsilon=e, delta=d, rng=r), FIDP),
        # The defaults: the exploration rate minimising the stated bound where it says
        # something, else the theorem's order T^(-1/3) (T^(-1/4) for B.1) without its constant,
        # which exceeds 1 at these horizons (every round would explore). The paper table
        # passes the same orders explicitly.
        "BanditDP": (lambda n, T, k, e, d, r: BanditDP(n, T, k, epsilon=e, delta=d, rng=r),
                     BanditDP),
        "PresampledBanditDP": (lambda n, T, k, e, d, r: PresampledBanditDP(
            n, T, k, epsilon=e, delta=d, rng=r), PresampledBanditDP),
        "NaiveBanditDP": (lambda n, T, k, e, d, r: NaiveBanditDP(
            n, T, k, epsilon=e, delta=d, rng=r), NaiveBanditDP),
        "DPMFW-laplace": (lambda n, T, k, e, d, r: DPMetaFrankWolfe(
            n, T, k, epsilon=e, delta=d, rng=r), DPMetaFrankWolfe),
        "DPMFW-gaussian": (lambda n, T, k, e, d, r: DPMetaFrankWolfe(
            n, T, k, epsilon=e, delta=d, noise="gaussian", rng=r), DPMetaFrankWolfe),
        "PFTAL-MFW": (lambda n, T, k, e, d, r: PFTALMetaFrankWolfe(
            n, T, k, epsilon=e, rng=r), PFTALMetaFrankWolfe),
        "OnlineGreedy": (lambda n, T, k, e, d, r: OnlineGreedy(n, T, k, rng=r), OnlineGreedy),
        "BanditOnlineGreedy": (lambda n, T, k, e, d, r: BanditOnlineGreedy(
            n, T, k, gamma=T ** (-1 / 3), rng=r), BanditOnlineGreedy),
        "MetaFrankWolfe": (lambda n, T, k, e, d, r: MetaFrankWolfe(n, T, k, K=K(T), rng=r),
                           MetaFrankWolfe),
        "PrivateEpochGreedy": (lambda n, T, k, e, d, r: PrivateEpochGreedy(
            n, T, k, epsilon=e, rng=r), PrivateEpochGreedy),
        "PrivateExploreThenCommit": (lambda n, T, k, e, d, r: PrivateExploreThenCommit(
            n, T, k, epsilon=e, rng=r), PrivateExploreThenCommit),
        "PrivateExploreThenCommit(restart=T/8)": (lambda n, T, k, e, d, r:
                                                  PrivateExploreThenCommit(
                                                      n, T, k, epsilon=e, restart=max(1, T // 8),
                                                      rng=r), PrivateExploreThenCommit),
        "PrivateEpochGreedy(max_epoch=T/16)": (lambda n, T, k, e, d, r: PrivateEpochGreedy(
            n, T, k, epsilon=e, max_epoch=max(1, T // 16), rng=r), PrivateEpochGreedy),
        # BanditOnlineGreedy by batches of 20 rounds (bench_online_batched.py's setting).
        "BatchedPrivateBandit": (lambda n, T, k, e, d, r: BatchedPrivateBandit(
            BanditOnlineGreedy(n, T, k, gamma=0.03), epsilon=e, batch=20, rng=r),
            BatchedPrivateBandit),
        "PrivateTreeExperts": (lambda n, T, k, e, d, r: PrivateTreeExperts(
            n, T, k, epsilon=e, delta=d, rng=r), PrivateTreeExperts),
        "random k-set": (lambda n, T, k, e, d, r: UniformRandom(n, T, k, rng=r), UniformRandom),
    })
    LEARNERS_PAPER.update(LEARNERS)
    LEARNERS_PAPER.update({
        "FIDP": (lambda n, T, k, e, d, r: FIDP(n, T, k, epsilon=e, delta=d,
                                               calibration="paper", distinct=False, rng=r),
                 FIDP),
        "BanditDP": (lambda n, T, k, e, d, r: BanditDP(
            n, T, k, epsilon=e, delta=d, gamma=T ** (-1 / 3), calibration="paper",
            composition="paper", distinct=False, rng=r), BanditDP),
        "PresampledBanditDP": (lambda n, T, k, e, d, r: PresampledBanditDP(
            n, T, k, epsilon=e, delta=d, gamma=T ** (-1 / 3), calibration="paper",
            composition="paper", distinct=False, rng=r), PresampledBanditDP),
        "NaiveBanditDP": (lambda n, T, k, e, d, r: NaiveBanditDP(
            n, T, k, epsilon=e, delta=d, gamma=T ** (-1 / 4), calibration="paper",
            composition="paper", distinct=False, rng=r), NaiveBanditDP),
        "DPMFW-laplace": (lambda n, T, k, e, d, r: DPMetaFrankWolfe(
            n, T, k, epsilon=e, delta=d, K=K(T), rng=r), DPMetaFrankWolfe),
        "DPMFW-gaussian": (lambda n, T, k, e, d, r: DPMetaFrankWolfe(
            n, T, k, epsilon=e, delta=d, K=K(T), noise="gaussian", rng=r), DPMetaFrankWolfe),
        "PFTAL-MFW": (lambda n, T, k, e, d, r: PFTALMetaFrankWolfe(
            n, T, k, epsilon=e, K=max(2, round(T ** 0.25)),
            H=_paper_pftal_H(n, T, k, e, max(2, round(T ** 0.25))), rng=r),
            PFTALMetaFrankWolfe),
    })


_register()


def _one_run(name: str, inst: StreamInstance, comps: dict[str, Any], k: int, epsilon: float,
             delta: float, rng: np.random.Generator,
             table: dict[str, tuple[Callable[..., Any], type]] | None = None
             ) -> dict[str, Any]:
    factory, cls = (LEARNERS if table is None else table)[name]
    private = cls.tags().private
    T = len(inst.functions)
    eps = epsilon if private else math.inf
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        learner = factory(inst.n, T, k, eps, delta, rng)
        trace = run(learner, FunctionStream(inst.functions), comparator=comps["greedy"],
                    progress=False)
    played = trace.expected_values if trace.expected_values is not None else trace.values
    reward = float(np.sum(played))
    alpha = 1.0 - 1.0 / math.e
    row: dict[str, Any] = {
        "learner": name, "private": private, "epsilon": eps, "T": T, "k": k,
        "reward": reward, "avg_reward": reward / T,
        "greedy_value": comps["greedy"].value,
        "regret_greedy": alpha * comps["greedy"].value - reward,
        "regret_opt": (alpha * comps["opt"].value - reward) if "opt" in comps else math.nan,
        "opt_value": comps["opt"].value if "opt" in comps else math.nan,
        "epsilon_spent": math.inf if trace.privacy is None else float(trace.privacy.epsilon),
        "delta_spent": math.nan if trace.privacy is None else float(trace.privacy.delta),
        "expected": trace.expected_values is not None,
        "wall_time": trace.wall_time,
        "learner_time": float(trace.elapsed[-1]),
    }
    params = trace.params
    row["gamma"] = params.get("gamma", math.nan)
    row["eta"] = params.get("eta", math.nan)
    return row


def run_grid(build: Callable[[int, np.random.Generator], StreamInstance], *,
             horizons: Sequence[int], epsilons: Sequence[float], eps_fixed: float,
             learners: Sequence[str], k: int, delta: float, seeds: int, seed: int,
             log: Callable[[str], None] = print, calibrations: str = "tuned"
             ) -> list[dict[str, Any]]:
    """Both sweeps: every learner at every ``T`` with ``eps_fixed``, and every private learner at
    every ``epsilon`` with the largest ``T``. Each (``T``, seed) gets one stream and its own
    child seeds (spawned from ``seed``), shared by all learners for a paired comparison."""
    table = LEARNERS if calibrations == "tuned" else LEARNERS_PAPER
    rows: list[dict[str, Any]] = []
    T_max = max(horizons)
    root = np.random.SeedSequence(seed)
    cells = root.spawn(len(horizons) * seeds)
    for ti, T in enumerate(horizons):
        for s in range(seeds):
            ss = cells[ti * seeds + s]
            stream_ss, learner_ss = ss.spawn(2)
            inst = build(T, np.random.default_rng(stream_ss))
            comps = _comparators(inst, k, T)
            eps_list = [eps_fixed] if T != T_max else sorted(set([eps_fixed, *epsilons]))
            for name in learners:
                private = table[name][1].tags().private
                for eps in (eps_list if private else [math.inf]):
                    t0 = time.perf_counter()
                    r = _one_run(name, inst, comps, k, eps, delta,
                                 np.random.default_rng(learner_ss), table)
                    r["calibrations"] = calibrations
                    r.update({"seed": s, "dataset": inst.name})
                    rows.append(r)
                    log(f"{inst.name} T={T} seed={s} {name:<20} eps={eps:<6g} "
                        f"regret/T={r['regret_greedy'] / T:+.4f} "
                        f"({time.perf_counter() - t0:.1f}s)")
    return rows


def _summary(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    groups: dict[tuple, list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault((r["learner"], r["epsilon"], r["T"]), []).append(r)
    out = []
    for (name, eps, T), rs in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][2],
                                                                       kv[0][1])):
        rg = np.array([r["regret_greedy"] for r in rs])
        ro = np.array([r["regret_opt"] for r in rs])
        out.append({"learner": name, "epsilon": eps, "T": T, "runs": len(rs),
                    "regret_greedy_mean": rg.mean(), "regret_greedy_sd": rg.std(ddof=1)
                    if len(rs) > 1 else 0.0, "regret_opt_mean": ro.mean(),
                    "regret_per_round": rg.mean() / T,
                    "avg_reward": float(np.mean([r["avg_reward"] for r in rs])),
                    "greedy_avg": float(np.mean([r["greedy_value"] for r in rs])) / T,
                    "learner_time_mean": float(np.mean([r["learner_time"] for r in rs]))})
    return out


def _write_csv(path: Path, rows: list[dict[str, Any]]) -> None:
    if rows:
        write_table(rows, path)


def plot_regret_vs_T(summary: list[dict[str, Any]], eps_fixed: float, *,
                     ax: Any = None) -> Any:
    """(1 - 1/e)-regret against T, the private learners at ``eps_fixed``; returns the Figure
    (drawn into ``ax`` when given, else a new pyplot figure)."""
    fig, ax = axes_of(ax, (7, 5))
    for name in sorted({s["learner"] for s in summary}):
        pts = sorted((s["T"], s["regret_greedy_mean"]) for s in summary
                     if s["learner"] == name and (s["epsilon"] == eps_fixed
                                                  or math.isinf(s["epsilon"])))
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=name)
    ax.set_xscale("log")
    ax.set_xlabel("T")
    ax.set_ylabel("(1 - 1/e)-regret vs offline greedy (mean over seeds)")
    ax.set_title(f"Regret against T (private learners at epsilon = {eps_fixed:g})")
    ax.axhline(0.0, color="grey", lw=0.5)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=7)
    return fig


def plot_regret_vs_epsilon(summary: list[dict[str, Any]], T_max: int, *,
                           ax: Any = None) -> Any:
    """(1 - 1/e)-regret per round against epsilon at ``T_max``; returns the Figure (drawn into
    ``ax`` when given, else a new pyplot figure)."""
    fig, ax = axes_of(ax, (7, 5))
    for name in sorted({s["learner"] for s in summary}):
        pts = sorted((s["epsilon"], s["regret_greedy_mean"]) for s in summary
                     if s["learner"] == name and s["T"] == T_max
                     and math.isfinite(s["epsilon"]))
        if pts:
            ax.plot([p[0] for p in pts], [p[1] / T_max for p in pts], marker="o", label=name)
    ax.set_xscale("log")
    ax.set_xlabel("epsilon")
    ax.set_ylabel("(1 - 1/e)-regret / T")
    ax.set_title(f"Regret per round against epsilon (T = {T_max})")
    ax.axhline(0.0, color="grey", lw=0.5)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=7)
    return fig


def _plots(summary: list[dict[str, Any]], out: Path, eps_fixed: float, T_max: int) -> list[Path]:
    if optional_figure() is None:  # pragma: no cover - optional dependency
        return []
    return [save_figure(plot_regret_vs_T(summary, eps_fixed, ax=figure((7, 5)).subplots()),
                        out / "regret_vs_T.png", dpi=120, tight_bbox=False),
            save_figure(plot_regret_vs_epsilon(summary, T_max, ax=figure((7, 5)).subplots()),
                        out / "regret_vs_epsilon.png", dpi=120, tight_bbox=False)]


def _floats(text: str) -> list[float]:
    return [math.inf if t.strip() in ("inf", "math.inf") else float(t) for t in text.split(",")]


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; returns the exit status."""
    ap = argparse.ArgumentParser(
        prog="python -m dpsubmod.experiments.online_maximization",
        description="(1 - 1/e)-regret of the online (private) submodular maximization learners "
                    "against T and epsilon on a real-data stream.")
    ap.add_argument("--out", required=True, help="output directory (created)")
    ap.add_argument("--data", default=None,
                    help=f"path to {_DATA_NAME} (default: ../shared/data beside the repo root)")
    ap.add_argument("--dataset", choices=("auto", "uber", "uber-drift", "karate"),
                    default="auto",
                    help="'auto': Uber when the file is present, else the karate-club coverage; "
                         "'uber-drift': the Uber riders sorted south to north (a drifting "
                         "stream)")
    ap.add_argument("--horizons", default="250,500,1000,2000", help="comma-separated T values")
    ap.add_argument("--epsilons", default="0.5,1,2,5",
                    help="epsilon grid of the second sweep (at the largest T)")
    ap.add_argument("--epsilon", type=float, default=1.0, help="epsilon of the T sweep")
    ap.add_argument("--delta", type=float, default=1e-6)
    ap.add_argument("--k", type=int, default=3)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--learners", default=",".join(LEARNERS),
                    help=f"comma-separated subset of {', '.join(LEARNERS)}")
    ap.add_argument("--calibrations", choices=("tuned", "paper"), default="tuned",
                    help="'tuned': the learners' defaults (tight accounting, rates and "
                         "exploration chosen from T, epsilon and n); 'paper': the papers' "
                         "calibrations with the fixed rates used before")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args(argv)

    learners = [s.strip() for s in args.learners.split(",") if s.strip()]
    unknown = [s for s in learners if s not in LEARNERS]
    if unknown:
        ap.error(f"unknown learner(s) {unknown}; choose from {list(LEARNERS)}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    log = (lambda s: None) if args.quiet else (lambda s: print(s, flush=True))

    path = Path(args.data) if args.data else default_data_path()
    dataset = args.dataset
    if dataset == "auto":
        dataset = "uber" if path.is_file() else "karate"
        if dataset == "karate":
            log(f"{path} not found: using the karate-club coverage stream instead.")
    if dataset in ("uber", "uber-drift"):
        if not path.is_file():
            print(f"error: {path} not found; pass --data or --dataset karate", file=sys.stderr)
            return 2
        build = uber_stream_builder(load_uber(path))
        if dataset == "uber-drift":
            build = drifting_builder(build)
    else:
        build = karate_stream_builder()

    horizons = sorted(int(t) for t in args.horizons.split(","))
    rows = run_grid(build, horizons=horizons, epsilons=_floats(args.epsilons),
                    eps_fixed=args.epsilon, learners=learners, k=args.k, delta=args.delta,
                    seeds=args.seeds, seed=args.seed, log=log,
                    calibrations=args.calibrations)
    summary = _summary(rows)
    _write_csv(out / "online_maximization.csv", rows)
    _write_csv(out / "summary.csv", summary)
    made = _plots(summary, out, args.epsilon, max(horizons))
    log(f"wrote {out / 'online_maximization.csv'}, {out / 'summary.csv'}"
        + "".join(f", {p}" for p in made))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
