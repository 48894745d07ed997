"""Facility location, n points in 20 dimensions, k = 100, end to end (similarity included).

Ours: the greedy that computes every candidate's gain at each step (what the exponential
mechanism needs), and the exponential-mechanism greedy itself, against apricot's and submodlib's
lazy greedy (the ``[bench]`` extra), run side by side in one process.
"""

from __future__ import annotations

import argparse
import warnings
from functools import partial

import numpy as np

from _harness import measure, table
from dpsubmod.functions import FacilityLocation
from dpsubmod.offline import greedy, lazy_greedy, list_methods

list_methods()  # import every registered method now, so no run pays the import cost


def ours_greedy(X: np.ndarray, k: int, bandwidth: float):
    f = FacilityLocation.from_records(X, X, similarity="gaussian", bandwidth=bandwidth,
                                      dtype=np.float32)
    return greedy(f, k).selection


def ours_lazy(X: np.ndarray, k: int, bandwidth: float):
    f = FacilityLocation.from_records(X, X, similarity="gaussian", bandwidth=bandwidth,
                                      dtype=np.float32)
    return lazy_greedy(f, k).selection


def ours_private(X: np.ndarray, k: int, bandwidth: float):
    from dpsubmod.offline import maximize

    f = FacilityLocation.from_records(X, X, similarity="gaussian", bandwidth=bandwidth,
                                      dtype=np.float32)
    return maximize(f, k, method="private_greedy", epsilon=1.0, rng=0).selection


def apricot_lazy(X: np.ndarray, k: int):
    from apricot import FacilityLocationSelection

    return FacilityLocationSelection(k, metric="euclidean", optimizer="lazy").fit(X).ranking


def submodlib_lazy(X: np.ndarray, k: int):
    from submodlib import FacilityLocationFunction

    f = FacilityLocationFunction(n=X.shape[0], mode="dense", data=X, metric="euclidean")
    return f.maximize(budget=k, optimizer="LazyGreedy", show_progress=False)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--n", type=int, nargs="+", default=[5000])
    p.add_argument("--k", type=int, default=100)
    p.add_argument("--repeat", type=int, default=1)
    args = p.parse_args(argv)
    warnings.filterwarnings("ignore")
    for n in args.n:
        rng = np.random.default_rng(0)
        X = rng.random((n, 20)).astype(np.float32)
        bw = 0.5
        ours = (("dpsubmod greedy (all gains each step)", ours_greedy),
                ("dpsubmod lazy greedy", ours_lazy),
                ("dpsubmod private greedy (eps=1)", ours_private))
        rows = [measure(label, partial(fn, X, args.k, bw), args.repeat) for label, fn in ours]
        for label, fn in (("apricot lazy greedy", apricot_lazy),
                          ("submodlib lazy greedy", submodlib_lazy)):
            try:
                rows.append(measure(label, partial(fn, X, args.k), args.repeat))
            except ImportError:
                print(f"{label}: not installed (pip install -e '.[bench]')")
        ref = "apricot lazy greedy" if any(r.label.startswith("apricot") for r in rows) else \
            rows[0].label
        print(f"\nFacility location, n = {n} points in 20-d, k = {args.k}, end to end")
        print(table(rows, ref))


if __name__ == "__main__":
    main()
