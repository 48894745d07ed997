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

Each path draws in batches sized to about ``--batch-seconds`` (after one untimed warm-up draw);
rounds are interleaved (``benchmarks/_harness.py``) and the time per draw is the batch time over
the batch size. Ratios are formed within a round. Target: the secure OpenDP path within 1.5 x
OpenDP called directly.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from _harness import Case, Report, Target, measure_cases, ratio
from dpsubmod.privacy import SecureBackend, exponential_mechanism

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


def main(argv: list[str] | None = None) -> Report:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--batch-seconds", type=float, default=0.5)
    p.add_argument("--python-limit", type=int, default=100_000,
                   help="largest m run on the pure-Python path (it is slow)")
    args = p.parse_args(argv)
    if args.quick:
        args.sizes, args.rounds, args.batch_seconds = [1_000, 10_000], 1, 0.1
    rep = Report("secure backend")
    engine = SecureBackend().engine
    rep.print_section(f"secure backend engine: {engine}")
    for name, (sens, eps) in SCENARIOS.items():
        _block(rep, name, sens, eps, args.sizes, args.rounds, args.batch_seconds,
               args.python_limit)
    for t in rep.targets:
        print(t.line())
    return rep


if __name__ == "__main__":
    main()
