"""Weighted coverage, 10^4 candidate sets over 10^5 elements (sparse incidence), k = 100.

Instance (fixed seed): set sizes are log-normal (median 30 elements) and elements are drawn with
Zipf-like popularity, so sets overlap heavily and greedy gains fall quickly; element weights are
exponential. About 5 x 10^5 incidences.

Peers and what is comparable:

* submodlib ``SetCoverFunction`` is weighted set cover, ``f(S) = w(union of S's concepts)``:
  exactly our ``Coverage``. Its input is a list of Python sets (built once, outside the timing,
  from the same incidence); the timing covers building the function and its lazy greedy.
* apricot ``MaxCoverageSelection`` is **unweighted** maximum coverage,
  ``f(S) = sum_d min(sum_{i in S} X_id, 1)`` on a binary matrix (rows = sets, columns =
  elements), with no per-element weight. The honest equivalent is our ``Coverage`` with all
  weights 1 on the same incidence, so the comparison with apricot is run on that unweighted
  instance (ours and submodlib's as well, for a like-for-like row).

Ours: ``greedy`` (all gains each step), ``lazy_greedy`` and ``maximize(method="private_greedy")``
(eps = 1; sensitivity = the largest element weight, one element per record).
Targets: private greedy <= 0.5 x apricot's lazy greedy and <= 1.5 x our non-private greedy; the
ratio to submodlib's lazy greedy is printed for information.
"""

from __future__ import annotations

import argparse
import warnings
from functools import partial

import numpy as np
import scipy.sparse as sp

from _harness import Case, Report, Target, measure_cases, ratio, table
from dpsubmod.functions import Coverage
from dpsubmod.offline import greedy, lazy_greedy, list_methods, maximize

list_methods()

EPSILON = 1.0


def make_instance(n_sets: int, n_elements: int, seed: int = 0
                  ) -> tuple[sp.csr_matrix, np.ndarray]:
    rng = np.random.default_rng(seed)
    sizes = np.clip(np.rint(rng.lognormal(np.log(30), 0.8, n_sets)), 1, n_elements // 10)
    sizes = sizes.astype(np.int64)
    pop = 1.0 / np.arange(1, n_elements + 1) ** 0.7
    pop = rng.permutation(pop / pop.sum())
    cols = rng.choice(n_elements, size=int(sizes.sum()), p=pop)
    rows = np.repeat(np.arange(n_sets), sizes)
    A = sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(n_sets, n_elements))
    A.sum_duplicates()
    A.data[:] = 1.0
    # int32 indices: apricot's compiled kernels accept no other index type.
    A = sp.csr_matrix((A.data, A.indices.astype(np.int32), A.indptr.astype(np.int32)),
                      shape=A.shape)
    w = rng.exponential(1.0, n_elements)
    return A, w


def _cov(A: sp.csr_matrix, w: np.ndarray) -> Coverage:
    return Coverage(A, w, sensitivity=float(w.max()), data_model="monotone-records")


def ours_greedy(A, w, k):
    return greedy(_cov(A, w), k).selection


def ours_lazy(A, w, k):
    return lazy_greedy(_cov(A, w), k).selection


def ours_private(A, w, k):
    return maximize(_cov(A, w), k, method="private_greedy", epsilon=EPSILON, rng=0).selection


def cover_sets(A: sp.csr_matrix) -> list[set[int]]:
    return [set(A.indices[A.indptr[j]:A.indptr[j + 1]].tolist()) for j in range(A.shape[0])]


def submodlib_lazy(sets: list[set[int]], w: np.ndarray, k: int):
    from submodlib import SetCoverFunction

    f = SetCoverFunction(n=len(sets), cover_set=sets, num_concepts=w.size,
                         concept_weights=w.tolist())
    return [e for e, _ in f.maximize(budget=k, optimizer="LazyGreedy", show_progress=False)]


def apricot_lazy(A: sp.csr_matrix, k: int):
    from apricot import MaxCoverageSelection

    return list(MaxCoverageSelection(k, optimizer="lazy").fit(A).ranking)


def _block(rep: Report, A, w, sets, k, rounds, weighted: bool) -> None:
    small = A[:300]
    small_sets = cover_sets(small)
    kind = "weighted" if weighted else "unweighted (all weights 1)"
    cases = [
        Case("ours greedy (all gains each step)", partial(ours_greedy, A, w, k),
             lambda: ours_private(small, w, 5)),
        Case("ours lazy greedy", partial(ours_lazy, A, w, k)),
        Case(f"ours private greedy (eps={EPSILON:g})", partial(ours_private, A, w, k)),
        Case("submodlib SetCover lazy greedy", partial(submodlib_lazy, sets, w, k),
             lambda: submodlib_lazy(small_sets, w, 5)),
    ]
    if not weighted:
        cases.append(Case("apricot MaxCoverage lazy greedy", partial(apricot_lazy, A, k),
                          lambda: apricot_lazy(small, 5)))
    meas = measure_cases(cases, rounds)
    ref = "submodlib SetCover lazy greedy" if weighted else "apricot MaxCoverage lazy greedy"
    n_sets, n_el = A.shape
    rep.print_section(f"\nCoverage, {kind}: {n_sets} sets over {n_el} elements, {A.nnz} "
                      f"incidences, k = {k}\n" + table(meas, ref))
    base = meas["ours greedy (all gains each step)"].output
    f = _cov(A, w)
    for lbl, m in meas.items():
        if m.ok and lbl != "ours greedy (all gains each step)":
            same = list(m.output) == list(base)
            print(f"  {lbl}: value {f(m.output):.6g} vs ours greedy {f(base):.6g}"
                  f"{' (same sequence)' if same else ''}")
    priv = f"ours private greedy (eps={EPSILON:g})"
    r_own = ratio(meas, priv, "ours greedy (all gains each step)")
    rep.targets.append(Target(f"coverage {kind}: private greedy / ours greedy (time)",
                              r_own.median, 1.5, f"spread {r_own.fmt()}"))
    if not weighted:
        r_ap = ratio(meas, priv, ref)
        rep.targets.append(Target(f"coverage {kind}: private greedy / apricot lazy greedy (time)",
                                  r_ap.median, 0.5, f"spread {r_ap.fmt()}"))
    r_sm = ratio(meas, priv, "submodlib SetCover lazy greedy")
    print(f"  (information, no target: private greedy / submodlib lazy greedy = {r_sm.fmt()})")


def main(argv: list[str] | None = None) -> Report:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--sets", type=int, default=10_000)
    p.add_argument("--elements", type=int, default=100_000)
    p.add_argument("--k", type=int, default=100)
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args(argv)
    warnings.filterwarnings("ignore")
    if args.quick:
        args.sets, args.elements, args.k, args.rounds = 1000, 10_000, 20, 1
    A, w = make_instance(args.sets, args.elements)
    sets = cover_sets(A)
    rep = Report("coverage")
    _block(rep, A, w, sets, args.k, args.rounds, weighted=True)
    _block(rep, A, np.ones_like(w), sets, args.k, args.rounds, weighted=False)
    for t in rep.targets:
        print(t.line())
    return rep


if __name__ == "__main__":
    main()
