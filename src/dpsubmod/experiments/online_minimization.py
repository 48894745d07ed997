r"""Experiment: regret of online submodular minimization against T and against epsilon.

Real-data stream: the Zachary karate club (34 members, 78 friendships; bundled with networkx).
Round ``t`` brings one private observation of the club: a random strength :math:`w_t(e) \sim
U(0, 1)` for every friendship and a noisy affinity of every member to the first faction,
:math:`c_t(i) = a\, s_i + \sigma \xi_t(i)` with :math:`s_i = -1` for Mr. Hi's faction, :math:`+1`
for the officer's, :math:`\xi_t(i) \sim U(-1, 1)`. The learner labels a set ``S`` of members as the
first faction and pays the energy

.. math:: f_t(S) = \frac{1}{Z}\Bigl(\sum_{\{i,j\}:\, i \in S,\, j \notin S} w_t(ij)
          + \sum_{i \in S} c_t(i)\Bigr), \qquad Z = |E| + |V|(a + \sigma),

a graph cut plus a modular term (submodular, range ``[-1, 1]``), so the best fixed labelling in
hindsight is one s-t minimum cut. One round's observation is the privacy unit (replacing it is
replacing :math:`f_t`, the neighbouring relation of the online algorithms).

Learners: :class:`~dpsubmod.online.SubmodPFTAL` and :class:`~dpsubmod.online.BanditSubmodPFTAL`
(private; sound calibration), FTAL with the noise off (the same learner, ``epsilon=inf``, not
private), and the non-private baselines :class:`~dpsubmod.online.HazanKale` and
:class:`~dpsubmod.online.BanditHazanKale`. Two sweeps:

* regret against ``T`` (powers of two) at a fixed epsilon, every learner;
* regret against epsilon at a fixed ``T``, the private learners (the non-private ones at
  ``epsilon = inf`` for reference).

Regret is the expected regret of each run (the learner's own rounding or exploration averaged
exactly; see :func:`dpsubmod.online.run`), averaged over replicates. Every replicate draws its
stream from a child of the master seed and every (learner, replicate) cell its learner randomness
from another child, so results do not depend on ``n_jobs``; within a replicate all learners and
all horizons see the same stream (the first ``T`` rounds of one draw).

Writes ``regret_vs_T.csv``, ``regret_vs_epsilon.csv`` and, when matplotlib is installed, the
log-log plot ``regret_vs_T.png`` (with the theorems' slopes 1/2 and 3/4 drawn for reference) and
``regret_vs_epsilon.png``. Run ``python -m dpsubmod.experiments.online_minimization --out DIR``.

Note. Theorem 9's exploration rate :math:`\gamma = n/T^{1/4}` is a probability only when
:math:`T \ge n^4` (about 1.3 million rounds for 34 members); below that the bandit learners
explore uniformly at every round (``gamma = 1``, with a warning) and their regret is linear.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._rng import as_generator
from .._validation import check_int, check_real
from ..datasets import load_graph
from ..errors import ValidationError
from ..functions import SetFunction
from ..functions.cut_form import CutForm
from ..online import (
    BanditHazanKale,
    BanditSubmodPFTAL,
    HazanKale,
    IIDStream,
    Learner,
    SubmodPFTAL,
    modular_path_stream,
    run,
)
from ..online.minimization.bounds import best_submod_pftal_H
from ..online.tags import LearnerTags
from .plots import axes_of, figure, optional_figure, save_figure
from .results import write_table


class RandomSet(Learner):
    """Plays a uniformly random subset every round (each member with probability 1/2), or the
    empty set with ``empty=True``: references a learner must beat. They read no data, so they
    are trivially private; their expected value is exact for cut-plus-modular costs (from the
    cut form: an arc is cut with probability 1/4, a member is in with probability 1/2)."""

    _tags = LearnerTags(private=False, feedback="full", problem="minimization",
                        assumption="oblivious")
    sense = "min"

    def __init__(self, n: int, T: int, *, empty: bool = False, rng: object = None):
        self.n, self.T, self.empty, self.rng = n, T, empty, rng

    def _reset(self) -> None:
        super()._reset()
        self._gen = as_generator(self.rng)

    def _select(self) -> np.ndarray:
        if self.empty:
            return np.zeros(int(self.n), dtype=bool)
        return self._gen.random(int(self.n)) < 0.5

    def _update(self, f: Any) -> None:
        pass

    def expected_value(self, f: SetFunction) -> float:
        """``f(empty)``, or the mean of ``f`` over all subsets (exact through the cut form)."""
        if self.empty:
            return f.value(np.zeros(int(self.n), dtype=bool))
        form = f.cut_form()
        if form is None:
            raise ValidationError("RandomSet needs cut-plus-modular costs for its exact "
                                  "expected value.")
        return float(0.25 * form.arc_weights.sum() + 0.5 * form.modular.sum()
                     + f.value(np.zeros(int(self.n), dtype=bool)))


#: Learner factories ``(n, T, epsilon) -> Learner`` (cost bound M = 1 for the streams here):
#: the library's defaults.
LEARNERS: dict[str, Any] = {
    "SubmodPFTAL": lambda n, T, eps: SubmodPFTAL(n, T, M=1.0, epsilon=eps),
    "BanditSubmodPFTAL": lambda n, T, eps: BanditSubmodPFTAL(n, T, M=1.0, epsilon=eps),
    "FTAL (noise off, not private)": lambda n, T, eps: SubmodPFTAL(n, T, M=1.0,
                                                                   epsilon=math.inf),
    "HazanKale (not private)": lambda n, T, eps: HazanKale(n, T, M=1.0),
    "BanditHazanKale (not private)": lambda n, T, eps: BanditHazanKale(n, T, M=1.0),
    "random set (reads no data)": lambda n, T, eps: RandomSet(n, T),
    "empty set (reads no data)": lambda n, T, eps: RandomSet(n, T, empty=True),
}
#: The same learners with the theorems' parameters (``--calibrations paper``): SubmodPFTAL at
#: Theorem 7's ``H = M / sqrt(nT)`` (the default before ``H`` was tuned to the bound).
LEARNERS_PAPER: dict[str, Any] = {
    **LEARNERS,
    "SubmodPFTAL": lambda n, T, eps: SubmodPFTAL(n, T, M=1.0, epsilon=eps, H="paper"),
    "BanditSubmodPFTAL": lambda n, T, eps: BanditSubmodPFTAL(n, T, M=1.0, epsilon=eps,
                                                             gamma="paper", H="paper"),
}


def _is_private(name: str) -> bool:
    """Whether the learner :data:`LEARNERS` builds under ``name`` is private: read from its
    class's tags and its noise (a private class with ``epsilon=inf`` is not), on a tiny
    instance."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # default rates clipped at T = 2
        return bool(LEARNERS[name](2, 2, 1.0).is_private)

#: SubmodPFTAL's choices of the regulariser (``--compare-H``): the default (centred at the
#: middle of the cube, ``H`` from the counter's noise), Theorem 7's ``H`` at the origin (the
#: paper's Algorithm 1), and the previous default (the minimiser of the explicit Theorem 7
#: bound, at the origin), each with the sound calibration ``4 sqrt(2) M``.
H_VARIANTS: dict[str, Any] = {
    "SubmodPFTAL (default)": lambda n, T, eps: SubmodPFTAL(n, T, M=1.0, epsilon=eps),
    'SubmodPFTAL, H="paper"': lambda n, T, eps: SubmodPFTAL(n, T, M=1.0, epsilon=eps,
                                                            H="paper"),
    "SubmodPFTAL, previous default": lambda n, T, eps: SubmodPFTAL(
        n, T, M=1.0, epsilon=eps, centre=0.0,
        H=best_submod_pftal_H(n, T, 1.0, 4.0 * math.sqrt(2.0), eps)),
    "random set (reads no data)": lambda n, T, eps: RandomSet(n, T),
    "empty set (reads no data)": lambda n, T, eps: RandomSet(n, T, empty=True),
}
#: Members of the karate club: the ground set of the stream.
N_MEMBERS = 34


class LabellingEnergy(SetFunction):
    r"""One round's labelling cost on a fixed graph: :math:`f(S) = \sum_{\{u,v\} \in E} w_{uv}
    [\,|S \cap \{u, v\}| = 1\,] + \sum_{i \in S} c_i`, an undirected cut with this round's
    edge weights plus a modular term.

    The same function as ``GraphCut(W) + Modular(c)``, built without a sparse matrix: the
    stream makes one per round, and at ``T = 10^5`` building a sparse cut each round would
    dominate the run. Values, batched values, the one-pass chain (edge-endpoint ranks) and the
    cut form are computed from the edge list.

    Parameters
    ----------
    n : int
        Ground-set size.
    edges : ndarray of int64, shape (m, 2)
        The edges, each once (shared by every round; not copied).
    weights : ndarray of float64, shape (m,)
        Nonnegative edge weights ``w``.
    unary : ndarray of float64, shape (n,)
        The modular term ``c``.
    """

    monotone = False
    submodular = True
    batched_values = True

    def __init__(self, n: int, edges: np.ndarray, weights: np.ndarray, unary: np.ndarray):
        super().__init__(n)
        self.edges, self.weights, self.unary = edges, weights, unary

    def _value(self, mask: np.ndarray) -> float:
        u, v = self.edges[:, 0], self.edges[:, 1]
        return float(self.weights[mask[u] != mask[v]].sum() + self.unary[mask].sum())

    def _values(self, masks: np.ndarray) -> np.ndarray:
        u, v = self.edges[:, 0], self.edges[:, 1]
        return (masks[:, u] != masks[:, v]) @ self.weights + masks @ self.unary

    def _chain_values(self, order: np.ndarray) -> np.ndarray:
        # An edge crosses from the step its first endpoint enters to the step its second does.
        m = order.size
        pos = np.full(self.n, m + 1, dtype=np.int64)
        pos[order] = np.arange(1, m + 1)
        pu, pv = pos[self.edges[:, 0]], pos[self.edges[:, 1]]
        lo, hi = np.minimum(pu, pv), np.maximum(pu, pv)
        delta = (np.bincount(lo, weights=self.weights, minlength=m + 2)
                 - np.bincount(hi, weights=self.weights, minlength=m + 2))
        delta[1:m + 1] += self.unary[order]
        out = np.zeros(m + 1)
        np.cumsum(delta[1:m + 1], out=out[1:])
        return out

    def cut_form(self) -> CutForm:
        u, v = self.edges[:, 0], self.edges[:, 1]
        return CutForm(self.n, np.concatenate([u, v]), np.concatenate([v, u]),
                       np.concatenate([self.weights, self.weights]),
                       np.array(self.unary, dtype=np.float64), False)


def karate_stream(T: int, *, affinity: float = 1.0, noise: float = 1.0,
                  rng: object = None) -> IIDStream:
    """The karate-club labelling stream described in the module docstring (``bound = 1``).

    Parameters
    ----------
    T : int
        Rounds.
    affinity : float, default=1.0
        ``a``: strength of the faction signal in the unary terms.
    noise : float, default=1.0
        ``sigma``: amplitude of the uniform noise on the unary terms.
    rng : int, Generator, SeedSequence or None
        Randomness of the per-round observations.
    """
    T = check_int(T, "T", low=1, caller="karate_stream")
    a = check_real(affinity, "affinity", low=0.0, caller="karate_stream")
    sigma = check_real(noise, "noise", low=0.0, caller="karate_stream")
    G = load_graph("karate").graph
    nodes = list(G.nodes)
    index = {v: i for i, v in enumerate(nodes)}
    edges = np.array([(index[u], index[v]) for u, v in G.edges()], dtype=np.int64)
    n, m = len(nodes), len(edges)
    side = np.array([-1.0 if G.nodes[v]["club"] == "Mr. Hi" else 1.0 for v in nodes])
    Z = m + n * (a + sigma)

    def sample(gen: np.random.Generator) -> SetFunction:
        w = gen.random(m) / Z
        c = (a * side + sigma * gen.uniform(-1.0, 1.0, n)) / Z
        return LabellingEnergy(n, edges, w, c)

    return IIDStream(sample, n=n, T=T, bound=1.0, rng=rng)


#: The streams of ``--compare-H``: ``(n, stream(T, rng))``. On the karate-club stream the empty
#: set is a good play; on the modular-plus-path-cut stream (n = 4, means -0.6 .. -0.3) the
#: best fixed set is the whole ground set and the empty set pays 0.327 per round.
STREAMS: dict[str, tuple[int, Any]] = {
    "karate": (N_MEMBERS, lambda T, rng: karate_stream(T, rng=rng)),
    "path": (4, lambda T, rng: modular_path_stream(4, T, rng=rng)),
}


def compare_H(stream: str, Ts: Sequence[int], epsilons: Sequence[float], *, seeds: int = 5,
              seed: int = 0, learners: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """SubmodPFTAL's choices of the regulariser (:data:`H_VARIANTS`) on one of :data:`STREAMS`:
    expected regret per round at every ``(T, epsilon)``, one row per (learner, T, epsilon,
    seed). Seed ``s`` draws the stream from ``SeedSequence([seed, s])`` (the same stream for
    every learner) and each learner's randomness from a child of it."""
    if stream not in STREAMS:
        raise ValidationError(f"The 'stream' argument of compare_H must be one of "
                              f"{sorted(STREAMS)}; got {stream!r}.")
    n, make = STREAMS[stream]
    names = list(H_VARIANTS) if learners is None else list(learners)
    rows = []
    for s in range(int(seeds)):
        stream_seed, learner_seed = np.random.SeedSequence([int(seed), s]).spawn(2)
        for T in sorted(int(t) for t in Ts):
            for eps in epsilons:
                for name, child in zip(names, learner_seed.spawn(len(names))):
                    learner = H_VARIANTS[name](n, T, float(eps)).clone(rng=child)
                    tr = run(learner, make(T, stream_seed), progress=False)
                    rows.append({
                        "stream": stream, "learner": name, "T": T, "epsilon": float(eps),
                        "seed": s, "expected_regret": tr.final_expected_regret,
                        "regret_per_round": tr.final_expected_regret / T,
                        "H": tr.params.get("H", math.nan),
                    })
    return rows


def _cell(name: str, stream_seed: np.random.SeedSequence, Ts: Sequence[int], epsilon: float,
          seed: np.random.SeedSequence, calibrations: str = "tuned") -> list[dict[str, Any]]:
    """One learner on the prefixes of one replicate's stream (one child seed per horizon).

    The stream is regenerated from its seed for each horizon (an i.i.d. stream drawn from the
    same seed has the same first ``T`` rounds), so no run keeps the functions in memory."""
    rows = []
    for T, child in zip(Ts, seed.spawn(len(Ts))):
        table = LEARNERS if calibrations == "tuned" else LEARNERS_PAPER
        learner: Learner = table[name](N_MEMBERS, T, epsilon).clone(rng=child)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # gamma clipped to 1 (see docstring)
            tr = run(learner, karate_stream(T, rng=stream_seed), progress=False)
        private = learner.is_private
        rows.append({
            "learner": name, "calibrations": calibrations, "private": private,
            "feedback": learner.tags().feedback,
            "T": T, "epsilon": epsilon if private else math.inf,
            "regret": tr.final_regret, "expected_regret": tr.final_expected_regret,
            "regret_per_round": tr.final_expected_regret / T,
            "comparator_value": tr.comparator.value, "comparator": tr.comparator.method,
            "H": tr.params.get("H", math.nan), "gamma": tr.params.get("gamma", math.nan),
            "guarantee": math.nan if tr.guarantee is None else tr.guarantee.bound,
            "guarantee_vacuous": None if tr.guarantee is None else tr.guarantee.vacuous,
            "wall_time": tr.wall_time,
        })
    return rows


def _map(tasks: list[tuple], n_jobs: int) -> list[list[dict[str, Any]]]:
    if n_jobs == 1:
        return [_cell(*t) for t in tasks]
    try:
        from joblib import Parallel, delayed  # optional extra: only for n_jobs > 1
    except ImportError:  # pragma: no cover - joblib is an optional extra
        return [_cell(*t) for t in tasks]
    return Parallel(n_jobs=n_jobs)(delayed(_cell)(*t) for t in tasks)


def sweep_T(Ts: Sequence[int], *, epsilon: float = 1.0, reps: int = 2, seed: int = 0,
            learners: Sequence[str] | None = None, n_jobs: int = 1,
            calibrations: str = "tuned") -> list[dict[str, Any]]:
    """Regret against ``T`` for every learner (rows of a table; see the module docstring);
    ``calibrations="paper"`` runs the learners at the theorems' parameters."""
    Ts = sorted(int(T) for T in Ts)
    names = list(LEARNERS) if learners is None else list(learners)
    stream_root, learner_root = np.random.SeedSequence(seed).spawn(2)
    streams = stream_root.spawn(reps)
    cells = [(name, rep) for rep in range(reps) for name in names]
    tasks = [(name, streams[rep], Ts, epsilon, child, calibrations)
             for (name, rep), child in zip(cells, learner_root.spawn(len(cells)))]
    rows = []
    for (_name, rep), out in zip(cells, _map(tasks, n_jobs)):
        for r in out:
            rows.append({"sweep": "T", "replicate": rep, **r})
    return rows


def sweep_epsilon(epsilons: Sequence[float], *, T: int = 8192, reps: int = 2, seed: int = 1,
                  n_jobs: int = 1, calibrations: str = "tuned") -> list[dict[str, Any]]:
    """Regret against epsilon at a fixed ``T`` (private learners; non-private ones and the
    references at ``inf``)."""
    stream_root, learner_root = np.random.SeedSequence(seed).spawn(2)
    streams = stream_root.spawn(reps)
    private = [name for name in LEARNERS if _is_private(name)]
    cells = [(name, eps, rep) for rep in range(reps) for name in private for eps in epsilons]
    cells += [(name, math.inf, rep) for rep in range(reps) for name in LEARNERS
              if name not in private]
    tasks = [(name, streams[rep], [T], eps, child, calibrations)
             for (name, eps, rep), child in zip(cells, learner_root.spawn(len(cells)))]
    rows = []
    for (_name, _eps, rep), out in zip(cells, _map(tasks, n_jobs)):
        for r in out:
            rows.append({"sweep": "epsilon", "replicate": rep, **r})
    return rows


def write_csv(rows: list[dict[str, Any]], path: str) -> None:
    """Write rows (dicts with the same keys) to ``path``."""
    write_table(rows, path)


def _mean_by(rows: list[dict[str, Any]], key: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    out: dict[str, dict[float, list[float]]] = {}
    for r in rows:
        out.setdefault(r["learner"], {}).setdefault(r[key], []).append(r["expected_regret"])
    return {name: (np.array(sorted(d)), np.array([np.mean(d[k]) for k in sorted(d)]))
            for name, d in out.items()}


def fitted_slopes(rows: list[dict[str, Any]]) -> dict[str, float]:
    """Slope of log mean expected regret against log T, per learner."""
    out = {}
    for name, (Ts, R) in _mean_by(rows, "T").items():
        if len(Ts) >= 2 and np.all(R > 0):
            out[name] = float(np.polyfit(np.log(Ts), np.log(R), 1)[0])
    return out


def plot_regret_vs_T(rows_T: list[dict[str, Any]], *, ax: Any = None) -> Any:
    """Expected regret against T (log-log) with the theorems' slopes 1/2 and 3/4; returns the
    Figure (drawn into ``ax`` when given, else a new pyplot figure)."""
    fig, ax = axes_of(ax, (6.5, 4.5))
    for name, (Ts, R) in _mean_by(rows_T, "T").items():
        ax.loglog(Ts, R, marker="o", label=name)
    means = _mean_by(rows_T, "T")
    for name, slope in (("SubmodPFTAL", 0.5), ("BanditSubmodPFTAL", 0.75)):
        if name in means:
            Ts, R = means[name]
            ax.loglog(Ts, R[0] * (Ts / Ts[0]) ** slope, "k--" if slope == 0.5 else "k:",
                      lw=1, label=f"slope {slope} (theorem)")
    ax.set_xlabel("T (rounds)")
    ax.set_ylabel("expected regret")
    eps = rows_T[0]["epsilon"] if rows_T else math.nan
    ax.set_title(f"Karate club stream, private learners at epsilon={eps:g}")
    ax.legend(fontsize=7)
    return fig


def plot_regret_vs_epsilon(rows_eps: list[dict[str, Any]], *, ax: Any = None) -> Any:
    """Expected regret against epsilon (log-log), the non-private learners as horizontal
    lines; returns the Figure (drawn into ``ax`` when given, else a new pyplot figure)."""
    fig, ax = axes_of(ax, (6.5, 4.5))
    priv = [r for r in rows_eps if r["private"]]
    for name, (E, R) in _mean_by(priv, "epsilon").items():
        ax.loglog(E, R, marker="o", label=name)
    for name, (_, R) in _mean_by([r for r in rows_eps if not r["private"]],
                                 "epsilon").items():
        ax.axhline(R[0], lw=1, ls="--", color="gray")
        ax.annotate(name, (ax.get_xlim()[0], R[0]), fontsize=6, va="bottom")
    ax.set_xlabel("epsilon")
    ax.set_ylabel("expected regret")
    if rows_eps:
        ax.set_title(f"Karate club stream, T={rows_eps[0]['T']}")
    ax.legend(fontsize=7)
    return fig


def _write_plots(rows_T: list[dict[str, Any]], rows_eps: list[dict[str, Any]],
                 out: str) -> list[str]:
    """Write the two figures; returns their paths ([] without matplotlib)."""
    if optional_figure() is None:
        return []
    paths = []
    if rows_T:
        fig = plot_regret_vs_T(rows_T, ax=figure((6.5, 4.5)).subplots())
        paths.append(str(save_figure(fig, os.path.join(out, "regret_vs_T.png"), dpi=120,
                                     tight_bbox=False)))
    if rows_eps:
        fig = plot_regret_vs_epsilon(rows_eps, ax=figure((6.5, 4.5)).subplots())
        paths.append(str(save_figure(fig, os.path.join(out, "regret_vs_epsilon.png"),
                                     dpi=120, tight_bbox=False)))
    return paths


def _print_compare(rows: list[dict[str, Any]], out: Any) -> None:
    """Mean (and standard deviation over seeds) of the regret per round, by learner, T and
    epsilon."""
    cells: dict[tuple[str, int, float], list[float]] = {}
    for r in rows:
        cells.setdefault((r["learner"], r["T"], r["epsilon"]), []).append(r["regret_per_round"])
    for (name, T, eps), v in cells.items():
        out.write(f"  {name:34s} T={T:6d} epsilon={eps:<6g} regret per round "
                  f"{np.mean(v):.4f} (sd {np.std(v):.4f}, {len(v)} seeds)\n")


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point: run both sweeps, write CSVs and plots, print a summary."""
    ap = argparse.ArgumentParser(prog="python -m dpsubmod.experiments.online_minimization",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="output directory (created if missing)")
    ap.add_argument("--t-min", type=int, default=7, help="smallest T is 2**t_min (default 7)")
    ap.add_argument("--t-max", type=int, default=17, help="largest T is 2**t_max (default 17)")
    ap.add_argument("--epsilon", type=float, default=1.0, help="epsilon of the T sweep")
    ap.add_argument("--epsilons", type=float, nargs="+", default=[0.5, 1.0, 2.0, 5.0])
    ap.add_argument("--t-epsilon", type=int, default=8192, help="T of the epsilon sweep")
    ap.add_argument("--reps", type=int, default=2, help="replicates (streams) per cell")
    ap.add_argument("--seed", type=int, default=0, help="master seed")
    ap.add_argument("--n-jobs", type=int, default=1, help="parallel jobs (joblib)")
    ap.add_argument("--calibrations", choices=("tuned", "paper"), default="tuned",
                    help="'tuned': the learners' defaults (SubmodPFTAL's H minimises its "
                         "regret bound for T, epsilon and n); 'paper': the theorems' parameters")
    ap.add_argument("--skip-T", action="store_true", help="run only the epsilon sweep")
    ap.add_argument("--compare-H", choices=sorted(STREAMS), default=None,
                    help="instead of the sweeps: SubmodPFTAL's choices of H (default, 'paper', "
                         "the previous default) on this stream, at T = 2**t_min .. 2**t_max "
                         "and --epsilons, with --reps seeds; writes compare_H_<stream>.csv")
    ap.add_argument("--learners", default=None,
                    help="with --compare-H: a comma-separated subset of its learners")
    args = ap.parse_args(argv)
    if args.t_min < 1 or args.t_max < args.t_min:
        raise ValidationError("--t-min must be >= 1 and --t-max >= --t-min.")
    os.makedirs(args.out, exist_ok=True)
    as_generator(args.seed)  # validates the seed
    t0 = time.perf_counter()
    Ts = [2**k for k in range(args.t_min, args.t_max + 1)]
    if args.compare_H is not None:
        names = None if args.learners is None else [x.strip() for x in args.learners.split(",")]
        unknown = sorted(set(names or ()) - set(H_VARIANTS))
        if unknown:
            raise ValidationError(f"--learners: unknown {unknown}; choose among "
                                  f"{sorted(H_VARIANTS)}.")
        rows = compare_H(args.compare_H, Ts, args.epsilons, seeds=args.reps, seed=args.seed,
                         learners=names)
        write_csv(rows, os.path.join(args.out, f"compare_H_{args.compare_H}.csv"))
        _print_compare(rows, sys.stdout)
        sys.stdout.write(f"Wrote {len(rows)} rows to {args.out} in "
                         f"{time.perf_counter() - t0:.1f}s.\n")
        return 0
    rows_T = [] if args.skip_T else sweep_T(
        Ts, epsilon=args.epsilon, reps=args.reps, seed=args.seed, n_jobs=args.n_jobs,
        calibrations=args.calibrations)
    if rows_T:
        write_csv(rows_T, os.path.join(args.out, "regret_vs_T.csv"))
    rows_eps = sweep_epsilon(args.epsilons, T=args.t_epsilon, reps=args.reps,
                             seed=args.seed + 1, n_jobs=args.n_jobs,
                             calibrations=args.calibrations)
    write_csv(rows_eps, os.path.join(args.out, "regret_vs_epsilon.csv"))
    figures = _write_plots(rows_T, rows_eps, args.out)
    out = sys.stdout
    out.write(f"Karate club stream (n=34), T in {[] if args.skip_T else Ts}, {args.reps} "
              f"replicates, epsilon={args.epsilon:g} for the T sweep, calibrations="
              f"{args.calibrations}.\n")
    for name, (T_, R) in _mean_by(rows_T, "T").items():
        out.write(f"  {name:32s} expected regret at T={int(T_[-1])}: {R[-1]:9.3f} "
                  f"({R[-1] / T_[-1]:.4f} per round)\n")
    for name, slope in fitted_slopes(rows_T).items():
        out.write(f"  {name:32s} fitted slope of log regret vs log T: {slope:.3f}\n")
    out.write(f"Regret against epsilon at T={args.t_epsilon}:\n")
    for name, (E, R) in _mean_by(rows_eps, "epsilon").items():
        pairs = ", ".join(f"{e:g}: {r:.2f}" for e, r in zip(E, R))
        out.write(f"  {name:32s} {pairs}\n")
    out.write(f"Wrote {len(rows_T) + len(rows_eps)} rows and {len(figures)} figures to "
              f"{args.out} in {time.perf_counter() - t0:.1f}s.\n")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
