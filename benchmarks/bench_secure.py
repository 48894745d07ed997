"""The secure backend's exponential mechanism: time per draw on four paths, side by side.

For m = 10^3, 10^4 and 10^5 candidates, one exponential-mechanism draw through

* ``numpy``: ``exponential_mechanism(..., rng=generator)`` (floating-point Gumbel-max; a
  simulation, not secure);
* ``secure / OpenDP``: ``exponential_mechanism(..., backend="secure")`` with OpenDP installed
  (exact grid rounding in numpy, then OpenDP's ``make_noisy_max`` on the integer grid units; the
  measurement is built and its privacy map checked once per calibration, then reused);
* ``secure / pure Python``: ``backend=SecureBackend(engine="python")`` (dpsubmod's exact
  rejection sampler on Fractions);
* ``OpenDP direct``: OpenDP's ``make_noisy_max`` (zCDP measure: the exponential mechanism) on
  the float scores, built once outside the timing, called on a numpy array: what a user
  calling OpenDP by hand would run.

Two score models: random scores in [0, 1] with sensitivity 1 and epsilon 1 (the weight is
small, almost every proposal is accepted), and the same scores with the small sensitivity of
``dpsubmod select`` on a few thousand records (sensitivity 1/2000, epsilon 0.1 per step), where
the law concentrates on few candidates and a rejection sampler proposes many times.

Then ``dpsubmod select`` end to end in one process (``build_task`` from a CSV of ``--records``
synthetic ride records, then ``private_select`` of ``k = 10`` cells of a ``--grid`` candidate
grid, 10 exponential-mechanism draws of epsilon 0.1 at the select sensitivity): on the secure
backend with OpenDP, on the secure backend without it (OpenDP reported as not installed, as on a
machine without the ``[secure]`` extra: the pure-Python engine), and on numpy. Rounds
interleaved; ratios within a round.

Each path draws in batches sized to about ``--batch-seconds`` (after one untimed warm-up draw);
rounds are interleaved (``benchmarks/_harness.py``) and the time per draw is the batch time over
the batch size. Ratios are formed within a round. Target: the secure OpenDP path within 1.5 x
OpenDP called directly.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

from _harness import Case, Report, Target, measure_cases, ratio, table
from dpsubmod.privacy import SecureBackend, exponential_mechanism, opendp_engine

SCENARIOS = {
    "scores in [0,1], sensitivity 1, eps 1": (1.0, 1.0),
    "scores in [0,1], sensitivity 1/2000, eps 0.1": (1.0 / 2000, 0.1),
}
PATHS = ("numpy", "secure / OpenDP", "secure / pure Python", "OpenDP direct")


def _opendp_direct(q: np.ndarray, sensitivity: float, epsilon: float):
    import opendp.prelude as dp

    dp.enable_features("contrib")
    space = (dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.linf_distance(T=float))
    meas = dp.m.make_noisy_max(*space, dp.zero_concentrated_divergence(),
                               scale=2.0 * sensitivity / epsilon)
    return lambda: meas(q)


def _draw_fns(q: np.ndarray, sensitivity: float, epsilon: float) -> dict:
    gen = np.random.default_rng(0)
    python = SecureBackend(engine="python")
    fns = {
        "numpy": lambda: exponential_mechanism(q, epsilon=epsilon, sensitivity=sensitivity,
                                               rng=gen),
        "secure / OpenDP": lambda: exponential_mechanism(q, epsilon=epsilon,
                                                         sensitivity=sensitivity,
                                                         backend="secure"),
        "secure / pure Python": lambda: exponential_mechanism(q, epsilon=epsilon,
                                                              sensitivity=sensitivity,
                                                              backend=python),
    }
    try:
        fns["OpenDP direct"] = _opendp_direct(q, sensitivity, epsilon)
    except ImportError:
        pass
    return fns


def _batch(fn, budget: float, cap: int) -> int:
    fn()  # warm-up: imports, the measurement's first build and check
    t0 = time.perf_counter()
    fn()
    one = max(time.perf_counter() - t0, 1e-6)
    return max(1, min(cap, math.ceil(budget / one)))


def _block(rep: Report, name: str, sensitivity: float, epsilon: float, sizes: list[int],
           rounds: int, budget: float, python_limit: int) -> None:
    rows = []
    for m in sizes:
        q = np.random.default_rng(m).random(m)
        fns = _draw_fns(q, sensitivity, epsilon)
        if m > python_limit:
            fns.pop("secure / pure Python", None)
        sizes_of = {label: _batch(fn, budget, 2000) for label, fn in fns.items()}
        cases = [Case(label, (lambda f=fn, n=sizes_of[label]: [f() for _ in range(n)]))
                 for label, fn in fns.items()]
        meas = measure_cases(cases, rounds)
        per = {label: meas[label].median_s / sizes_of[label] * 1e3 for label in fns}
        rows.append((m, per, meas, sizes_of))
        if "OpenDP direct" in meas and meas["OpenDP direct"].ok:
            # per-draw ratio within each round (batches differ in size, so rescale)
            r = ratio(meas, "secure / OpenDP", "OpenDP direct")
            scale = sizes_of["OpenDP direct"] / sizes_of["secure / OpenDP"]
            r.values = [v * scale for v in r.values]
            rep.targets.append(Target(
                f"secure OpenDP path / OpenDP direct, EM per draw, m={m}, {name}", r.median,
                1.5, f"[{min(r.values):.2f}-{max(r.values):.2f}] over {len(r.values)} rounds"))
    short = {"numpy": "numpy", "secure / OpenDP": "OpenDP path",
             "secure / pure Python": "pure Python", "OpenDP direct": "OpenDP direct"}
    head = (f"{'m':>7} | " + " ".join(f"{short[p]:>13}" for p in PATHS)
            + " | " + " ".join(f"{short[p] + '/dir':>15}" for p in PATHS[:3]))
    lines = [f"\nExponential mechanism ({name}): ms per draw, median of {rounds} round(s), and "
             "ratios to OpenDP direct", head, "-" * len(head)]
    for m, per, _, _ in rows:
        ref = per.get("OpenDP direct")
        cells = [f"{per[p]:13.3f}" if p in per else f"{'skipped':>13}" for p in PATHS]
        rat = [f"{per[p] / ref:15.2f}" if p in per and ref else f"{'-':>15}" for p in PATHS[:3]]
        lines.append(f"{m:>7} | " + " ".join(cells) + " | " + " ".join(rat))
    rep.print_section("\n".join(lines))


@contextlib.contextmanager
def _without_opendp():
    """The secure backend as on a machine without OpenDP (its pure-Python engine). The loaded
    OpenDP engine, with the measurements it has built, is put back afterwards, so that the
    OpenDP path is timed in its steady state (loading OpenDP is a once-per-process cost)."""
    saved = dict(opendp_engine._state)
    opendp_engine._state["engine"] = None  # what load() caches when OpenDP is not installed
    try:
        yield
    finally:
        opendp_engine._state.clear()
        opendp_engine._state.update(saved)


def _select_block(rep: Report, records: int, grid: tuple[int, int], rounds: int) -> None:
    from bench_scale import BOUNDS, rides, write
    from dpsubmod.tasks import build_constraint, build_task, private_select

    tmp = Path(tempfile.mkdtemp())
    data = tmp / "rides.csv"
    write(data, rides(records))

    def select(backend: str):
        task = build_task("facility-location", str(data), grid=grid, bounds=BOUNDS)
        return private_select(task, build_constraint(task, k=10), epsilon=1.0, backend=backend,
                              rng=0 if backend == "numpy" else None)

    def python_path():
        with _without_opendp():
            rel = select("secure")
        return rel

    cases = [Case("secure / OpenDP", lambda: select("secure"), warmup=lambda: select("secure")),
             Case("secure / pure Python", python_path, warmup=python_path),
             Case("numpy", lambda: select("numpy"), warmup=lambda: select("numpy"))]
    meas = measure_cases(cases, rounds)
    engines = {label: (m.output.privacy.engine if m.ok else "-") for label, m in meas.items()}
    shutil.rmtree(tmp, ignore_errors=True)
    text = (f"\ndpsubmod select end to end ({records} records, {grid[0]}x{grid[1]} candidate "
            f"grid, k=10, epsilon=1): seconds per release\n"
            + table(meas, "secure / OpenDP", width=24)
            + "\nengines: " + ", ".join(f"{k}: {v}" for k, v in engines.items()))
    rep.print_section(text)
    r = ratio(meas, "secure / pure Python", "secure / OpenDP")
    if r.values:
        rep.print_section(f"select, pure-Python engine / OpenDP engine: {r.fmt()}")


def main(argv: list[str] | None = None) -> Report:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--batch-seconds", type=float, default=0.5)
    p.add_argument("--python-limit", type=int, default=100_000,
                   help="largest m run on the pure-Python path (it is slow)")
    p.add_argument("--records", type=int, default=3000,
                   help="records of the end-to-end select run")
    p.add_argument("--grid", type=int, nargs=2, default=[100, 100],
                   help="candidate grid of the end-to-end select run")
    p.add_argument("--no-select", action="store_true", help="skip the end-to-end select run")
    args = p.parse_args(argv)
    if args.quick:
        args.sizes, args.rounds, args.batch_seconds = [1_000, 10_000], 1, 0.1
        args.grid = [30, 30]
    rep = Report("secure backend")
    engine = SecureBackend().engine
    rep.print_section(f"secure backend engine: {engine}")
    for name, (sens, eps) in SCENARIOS.items():
        _block(rep, name, sens, eps, args.sizes, args.rounds, args.batch_seconds,
               args.python_limit)
    if not args.no_select:
        _select_block(rep, args.records, tuple(args.grid), args.rounds)
    for t in rep.targets:
        print(t.line())
    return rep


if __name__ == "__main__":
    main()
