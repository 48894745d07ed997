"""Sweeps over methods x epsilon x T x seeds: serial, in local processes, or on a Dask cluster.

A sweep is a list of *cells* ``(method, epsilon, T, seed)`` (``epsilon`` is ``None`` for a
non-private method, ``T`` is ``None`` offline). Each cell is a pure function of the
configuration and its key (:func:`run_cell`): its randomness comes from
``SeedSequence(sweep seed, spawn_key=(1, *digest(key)))``, a child stream determined by the cell
key itself and not by the order in which cells are scheduled, so a cell gives the same row
serially, in worker processes, or on a cluster. The private data set (offline) is drawn from
``spawn_key=(0,)`` and an online stream from ``spawn_key=(2, T, seed)``, shared by every method
(paired comparisons).

Backends of :func:`run_sweep`:

* serial (default);
* ``workers=N``: ``N`` local processes (joblib, the ``[parallel]`` extra);
* ``scheduler=ADDRESS``: an existing Dask cluster (``dask.distributed``; an address such as
  ``"tcp://10.0.0.5:8786"``, a ``Client``, or a ``LocalCluster``), one future per cell.

Results are appended to the output table as cells finish (:class:`ResultStore`, CSV or Parquet);
on a re-run the cells already in the table are not run again. When every cell is done the table
is rewritten in plan order. Every column but ``seconds`` (wall time) is deterministic.

Example
-------
>>> from dpsubmod.experiments.config import parse_config
>>> cfg = parse_config({"experiment": {"problem": "offline", "methods": ["private_greedy"],
...                                    "epsilons": [1.0], "seeds": 2, "k": 2},
...                     "objective": {"kind": "facility_location", "records": 50,
...                                   "candidates": 8}})
>>> res = run_sweep(cfg)
>>> len(res.rows), res.ran
(2, 2)
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import sys
import time
import warnings
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from ..offline import maximize
from ..online import run
from .config import ConfigError, SweepConfig, load_config
from .plots import (
    figure,
    plot_metric_vs_epsilon,
    plot_privacy_per_step,
    plot_regret_vs_T,
    save_figure,
    summarize,
)
from .problems import LEARNERS, build_learner, build_objective, build_stream
from .results import MissingDependencyError, ResultStore, read_table

__all__ = ["CellKey", "plan", "cell_key", "cell_seed", "config_id", "run_cell", "columns",
           "schema", "run_sweep", "SweepResult", "metric_of", "example_release", "make_plots",
           "load_results"]

#: ``(method, epsilon or None, T or None, seed)``
CellKey = tuple[str, float | None, int | None, int]

_KEY_COLUMNS = ["method", "epsilon", "T", "seed"]
_OFFLINE_COLUMNS = ["value", "utility", "selection", "epsilon_spent", "delta_spent",
                    "evaluations"]
_ONLINE_COLUMNS = ["regret", "regret_realized", "regret_per_round", "total",
                   "comparator_value", "epsilon_spent", "delta_spent", "evaluations"]
_TAIL = ["warnings", "config_id", "seconds"]
_TYPES = {"method": "str", "epsilon": "float", "T": "int", "seed": "int", "value": "float",
          "utility": "float", "selection": "str", "epsilon_spent": "float",
          "delta_spent": "float", "evaluations": "int", "regret": "float",
          "regret_realized": "float", "regret_per_round": "float", "total": "float",
          "comparator_value": "float", "warnings": "str", "config_id": "str",
          "seconds": "float"}


def columns(config: SweepConfig) -> list[str]:
    """Columns of the results table of ``config``'s problem."""
    body = _OFFLINE_COLUMNS if config.problem == "offline" else _ONLINE_COLUMNS
    return [*_KEY_COLUMNS, *body, *_TAIL]


def schema(config: SweepConfig) -> dict[str, str]:
    """Column types of the results table (``"str"``, ``"float"``, ``"int"``)."""
    return {c: _TYPES[c] for c in columns(config)}


def metric_of(config: SweepConfig) -> str:
    """The headline metric: ``"utility"`` offline, ``"regret"`` online."""
    return "utility" if config.problem == "offline" else "regret"


def plan(config: SweepConfig) -> list[CellKey]:
    """Every cell of the sweep, in table order (method, T, epsilon, seed)."""
    cells: list[CellKey] = []
    for method in config.methods:
        eps_list: Sequence[float | None] = (config.epsilons if config.is_private(method)
                                            else (None,))
        for T in config.Ts:
            for eps in eps_list:
                for s in config.seeds:
                    cells.append((method, eps, T, s))
    return cells


def cell_key(row: dict[str, Any]) -> CellKey:
    """The key of a results row (types normalised as in :func:`plan`)."""
    eps = row.get("epsilon")
    T = row.get("T")
    eps = None if eps is None or (isinstance(eps, float) and math.isnan(eps)) else float(eps)
    return (str(row["method"]), eps, None if T is None else int(T), int(row["seed"]))


def _key_text(key: CellKey) -> str:
    method, eps, T, seed = key
    e = "-" if eps is None else float(eps).hex()
    return f"{method}\x1f{e}\x1f{'-' if T is None else int(T)}\x1f{int(seed)}"


def cell_seed(seed: int, key: CellKey) -> np.random.SeedSequence:
    """The cell's own seed: ``SeedSequence(seed, spawn_key=(1, w0, w1, w2, w3))`` with the
    ``w`` the 32-bit words of a BLAKE2b digest of the key, so it depends on the key only."""
    digest = hashlib.blake2b(_key_text(key).encode(), digest_size=16).digest()
    words = tuple(int.from_bytes(digest[i:i + 4], "little") for i in range(0, 16, 4))
    return np.random.SeedSequence(int(seed), spawn_key=(1, *words))


def config_id(config: SweepConfig) -> str:
    """A short fingerprint of everything but the swept dimensions (problem, data/stream, seed,
    k, delta, options): rows of another configuration are never mistaken for finished cells."""
    blob = json.dumps({"problem": config.problem, "spec": config.spec, "seed": config.seed,
                       "k": config.k, "delta": config.delta, "options": config.options},
                      sort_keys=True, default=repr)
    return hashlib.blake2b(blob.encode(), digest_size=6).hexdigest()


# =============================================================================================
# one cell
# =============================================================================================
def run_cell(config: SweepConfig, key: CellKey) -> dict[str, Any]:
    """Run one cell; a pure function of ``(config, key)`` except for the ``seconds`` column.

    Offline rows: the method's selection on the sweep's private objective, its value, the
    value relative to the non-private greedy (``utility``), the privacy spent and the oracle
    work. Online rows: the final (expected, when the learner reports it) regret against the best
    fixed set in hindsight, the realized regret, the total reward or loss and the privacy spent.
    Values computed on private data are diagnostics, not private releases.

    Warnings raised by the method (e.g. a parameter clipped to its range) are collected in the
    ``warnings`` column instead of being printed once per cell.
    """
    method, eps, T, seed = key
    rng = np.random.default_rng(cell_seed(config.seed, key))
    opts = dict(config.options.get(method, {}))
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if config.problem == "offline":
            row = _offline_cell(config, method, eps, opts, rng)
        else:
            row = _online_cell(config, method, eps, int(T), seed, opts, rng)  # type: ignore
    seconds = time.perf_counter() - t0
    msgs = sorted({" ".join(str(w.message).split()) for w in caught})
    text = " | ".join(msgs)
    return {"method": method, "epsilon": eps, "T": T, "seed": seed, **row,
            "warnings": text[:500] or None, "config_id": config_id(config), "seconds": seconds}


def _offline_cell(config: SweepConfig, method: str, eps: float | None, opts: dict[str, Any],
                  rng: np.random.Generator) -> dict[str, Any]:
    f, ref = build_objective(config.spec, config.seed)
    if eps is not None:
        opts.setdefault("delta", config.delta)
        res = maximize(f, config.k, method, epsilon=eps, rng=rng, **opts)
    else:
        res = maximize(f, config.k, method, rng=rng, **opts)
    value = float(res.diagnostics.value)
    return {"value": value, "utility": value / ref if ref > 0 else math.nan,
            "selection": " ".join(str(e) for e in res.selection),
            "epsilon_spent": None if res.privacy is None else float(res.privacy.epsilon),
            "delta_spent": None if res.privacy is None else float(res.privacy.delta),
            "evaluations": int(res.evaluations)}


def _online_trace(config: SweepConfig, method: str, eps: float | None, T: int, seed: int,
                  opts: dict[str, Any], rng: np.random.Generator) -> Any:
    stream = build_stream(config.spec, T, config.seed, seed)
    delta = float(opts.pop("delta", config.delta))
    learner = build_learner(method, stream.n, T, config.k, eps, delta, rng, opts)
    return run(learner, stream, progress=False)


def _online_cell(config: SweepConfig, method: str, eps: float | None, T: int, seed: int,
                 opts: dict[str, Any], rng: np.random.Generator) -> dict[str, Any]:
    tr = _online_trace(config, method, eps, T, seed, opts, rng)
    expected = tr.final_expected_regret
    regret = expected if math.isfinite(expected) else tr.final_regret
    private = LEARNERS[method].private
    return {"regret": regret, "regret_realized": tr.final_regret, "regret_per_round": regret / T,
            "total": float(np.sum(tr.values)),
            "comparator_value": None if tr.comparator is None else float(tr.comparator.value),
            "epsilon_spent": float(tr.epsilon[-1]) if private else None,
            "delta_spent": (float(getattr(tr.privacy, "delta", 0.0))
                            if private and tr.privacy is not None else None),
            "evaluations": int(tr.evaluations)}


def example_release(config: SweepConfig) -> tuple[CellKey, Any] | None:
    """One private cell re-run in this process for its full output (an offline
    :class:`~dpsubmod.offline.Result` or an online :class:`~dpsubmod.online.Trace`), e.g. to
    plot the privacy spent per step: the first private method at the median epsilon, the
    largest T and the first seed. ``None`` when no method is private."""
    private = [m for m in config.methods if config.is_private(m)]
    if not private:
        return None
    eps = config.epsilons[len(config.epsilons) // 2]
    key: CellKey = (private[0], eps, config.Ts[-1], config.seeds[0])
    rng = np.random.default_rng(cell_seed(config.seed, key))
    opts = dict(config.options.get(key[0], {}))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if config.problem == "offline":
            f, _ = build_objective(config.spec, config.seed)
            opts.setdefault("delta", config.delta)
            return key, maximize(f, config.k, key[0], epsilon=eps, rng=rng, **opts)
        return key, _online_trace(config, key[0], eps, int(key[2]), key[3], opts, rng)


# =============================================================================================
# execution backends
# =============================================================================================
def _serial(config: SweepConfig, keys: Sequence[CellKey]) -> Iterator[dict[str, Any]]:
    for key in keys:
        yield run_cell(config, key)


def _joblib(config: SweepConfig, keys: Sequence[CellKey], workers: int
            ) -> Iterator[dict[str, Any]]:
    try:
        from joblib import Parallel, delayed
    except ImportError:
        raise MissingDependencyError(
            "workers=N runs cells in local processes with joblib, which is not installed: "
            "pip install 'dpsubmod[parallel]' (or run serially)."
        ) from None
    par = Parallel(n_jobs=workers, return_as="generator_unordered")
    yield from par(delayed(run_cell)(config, key) for key in keys)


def _dask(config: SweepConfig, keys: Sequence[CellKey], scheduler: Any
          ) -> Iterator[dict[str, Any]]:
    try:
        from distributed import Client, as_completed
    except ImportError:
        raise MissingDependencyError(
            "scheduler=ADDRESS runs cells on a Dask cluster, which needs dask.distributed: "
            "pip install 'dpsubmod[distributed]'."
        ) from None
    own = not (hasattr(scheduler, "submit") and hasattr(scheduler, "gather"))
    client = Client(scheduler) if own else scheduler
    futures = []
    try:
        futures = client.map(run_cell, [config] * len(keys), list(keys), pure=False)
        for fut in as_completed(futures):
            yield fut.result()
    finally:
        for fut in futures:
            fut.cancel()
        if own:
            client.close()


# =============================================================================================
# the sweep
# =============================================================================================
@dataclass
class SweepResult:
    """What :func:`run_sweep` returns.

    Attributes
    ----------
    config : SweepConfig
    rows : list of dict
        One row per cell of the plan, in plan order (resumed and new rows alike).
    ran : int
        Cells run by this call.
    resumed : int
        Cells found finished in the output table and not run again.
    path : pathlib.Path or None
        The results table (None when run without an output).
    """

    config: SweepConfig
    rows: list[dict[str, Any]]
    ran: int
    resumed: int
    path: Path | None

    def summary(self, metric: str | None = None) -> list[dict[str, Any]]:
        """Mean, sd and quantiles of ``metric`` (default :func:`metric_of`) per method,
        epsilon and T, over seeds (see :func:`dpsubmod.experiments.plots.summarize`)."""
        return summarize(self.rows, metric or metric_of(self.config))


def _check_backend(workers: int | None, scheduler: Any) -> None:
    if workers is not None and scheduler is not None:
        raise ConfigError("Pass either workers=N (local processes) or scheduler=ADDRESS (a Dask "
                          "cluster), not both.")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int)
                                or workers < 1):
        raise ConfigError(f"The 'workers' parameter must be a positive integer; got {workers!r}.")


def run_sweep(config: SweepConfig | str | os.PathLike[str], *,
              out: str | os.PathLike[str] | None = None, workers: int | None = None,
              scheduler: Any = None, progress: bool | None = None,
              max_cells: int | None = None) -> SweepResult:
    """Run every cell of a sweep not yet in ``out``, appending rows as cells finish.

    Parameters
    ----------
    config : SweepConfig, or path of an experiment file
    out : str or path-like, optional
        Results table (``.csv``, or ``.parquet``). Cells already in it (same configuration
        fingerprint) are not run again. Without ``out`` nothing is written.
    workers : int, optional
        Run cells in this many local processes (joblib). ``workers=1`` is the serial path.
    scheduler : str, distributed.Client or distributed.LocalCluster, optional
        Run cells on this Dask cluster, one future per cell.
    progress : bool, optional
        Show a progress bar of the cells on stderr. Default: on when stderr is a terminal.
    max_cells : int, optional
        Run at most this many of the missing cells (in plan order) and stop; the next call
        resumes. Useful to split a long sweep into sessions.

    Returns
    -------
    SweepResult
        The table is rewritten in plan order once every cell is done.

    Raises
    ------
    ConfigError
        A bad configuration or backend choice, or an ``out`` that holds results of another
        configuration.
    """
    if not isinstance(config, SweepConfig):
        config = load_config(config)
    _check_backend(workers, scheduler)
    keys = plan(config)
    cols, types = columns(config), schema(config)
    store = ResultStore(out, cols, schema=types) if out is not None else None
    done: dict[CellKey, dict[str, Any]] = {}
    if store is not None:
        cid = config_id(config)
        for r in store.read():
            if set(r) != set(cols) or r.get("config_id") != cid:
                raise ConfigError(
                    f"{out} holds results of another experiment or configuration (its columns "
                    f"or config_id differ from this sweep's {cid}); choose another output path "
                    "or delete the file."
                )
            done[cell_key(r)] = r
    todo = [k for k in keys if k not in done]
    resumed = len(keys) - len(todo)
    if max_cells is not None:
        todo = todo[:max(0, int(max_cells))]
    if progress is None:
        progress = sys.stderr.isatty()
    bar = tqdm(total=len(todo), desc=config.name, unit="cell", disable=not (progress and todo))
    if scheduler is not None:
        results: Iterable[dict[str, Any]] = _dask(config, todo, scheduler)
    elif workers is not None and workers > 1:
        results = _joblib(config, todo, workers)
    else:
        results = _serial(config, todo)
    ran = 0
    try:
        for row in results:
            done[cell_key(row)] = row
            if store is not None:
                store.append(row)
            ran += 1
            bar.update()
    finally:
        bar.close()
        if store is not None:
            store.close()
    rows = [done[k] for k in keys if k in done]
    if store is not None and len(rows) == len(keys):
        store.finalize(rows)
    return SweepResult(config, rows, ran, resumed, None if out is None else Path(out))


def load_results(config: SweepConfig, path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The rows of a results table written by :func:`run_sweep`, typed as in :func:`schema`."""
    return read_table(path, schema=schema(config))


def make_plots(result: SweepResult, directory: str | os.PathLike[str], stem: str, *,
               band: str = "sd") -> list[Path]:
    """Write the sweep's figures into ``directory`` as ``<stem>_*.png``; returns their paths.

    Offline: utility against epsilon. Online: regret against T on log-log axes with each
    learner's theorem slope (:data:`~dpsubmod.experiments.problems.LEARNERS`), when there are
    several horizons, and regret against epsilon at the largest T, when there are several
    budgets. Both: the privacy budget spent per step by one private cell
    (:func:`example_release`). To draw one of them in a notebook instead, call the function of
    :mod:`dpsubmod.experiments.plots` on ``result.summary()``.

    Raises
    ------
    MissingDependencyError
        When matplotlib is not installed.
    """

    cfg = result.config
    d = Path(directory)
    made: list[Path] = []
    summ = result.summary()
    if cfg.problem == "offline":
        title = f"{cfg.name}: {cfg.spec['kind']}, k={cfg.k}"
        fig = plot_metric_vs_epsilon(summ, ax=figure((7.5, 4.5)).subplots(),
                                     ylabel="utility / non-private greedy", title=title,
                                     band=band)
        made.append(save_figure(fig, d / f"{stem}_utility_vs_epsilon.png"))
    else:
        sense = "(1 - 1/e)-regret" if cfg.sense == "max" else "regret"
        title = f"{cfg.name}: stream {cfg.spec['kind']}"
        if len(cfg.Ts) >= 2:
            slopes = {m: LEARNERS[m].slope for m in cfg.methods}
            fig = plot_regret_vs_T(summ, ax=figure((7.5, 4.8)).subplots(), slopes=slopes,
                                   ylabel=f"expected {sense}", title=title, band=band)
            made.append(save_figure(fig, d / f"{stem}_regret_vs_T.png"))
        if len(cfg.epsilons) >= 2:
            T = cfg.Ts[-1]
            rows = [s for s in summ if s["T"] == T]
            fig = plot_metric_vs_epsilon(rows, ax=figure((7.5, 4.5)).subplots(),
                                         ylabel=f"expected {sense} at T={T}", title=title,
                                         band=band)
            made.append(save_figure(fig, d / f"{stem}_regret_vs_epsilon.png"))
    example = example_release(cfg)
    if example is not None:
        (method, eps, T, seed), out = example
        where = f"{method}, eps={eps:g}" + ("" if T is None else f", T={T}") + f", seed {seed}"
        fig = plot_privacy_per_step(out, ax=figure((7.5, 4.6)).subplots(),
                                    title=f"privacy budget per step: {where}")
        made.append(save_figure(fig, d / f"{stem}_privacy_per_step.png"))
    return made
