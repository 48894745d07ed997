"""Brute-force references and small test instances shared by the tests (tiny ground sets only)."""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable

import numpy as np

from dpsubmod.functions.base import FunctionState, SetFunction

# ------------------------------------------------------------------------------------------------
# Set enumeration and minimization references.


def all_masks(n: int) -> np.ndarray:
    """All ``2^n`` subsets of ``range(n)`` as a boolean array of shape (2^n, n), in binary order."""
    codes = np.arange(1 << n)
    return ((codes[:, None] >> np.arange(n)) & 1).astype(bool)


def all_values(f: SetFunction) -> tuple[np.ndarray, np.ndarray]:
    """``(masks, values)`` of ``f`` on every subset, through ``_value`` (no counting)."""
    masks = all_masks(f.n)
    return masks, np.array([f._value(m) for m in masks])


def brute_force_minimum(f: SetFunction) -> tuple[float, np.ndarray]:
    """``(min_S f(S), masks of every minimizer)`` within 1e-9 relative of the minimum."""
    masks, vals = all_values(f)
    lo = float(vals.min())
    tie = 1e-9 * max(1.0, float(np.abs(vals).max()))
    return lo, masks[vals <= lo + tie]


def is_submodular(f: SetFunction, tol: float = 1e-9) -> bool:
    """Exhaustive check of ``f(S+i) + f(S+j) >= f(S) + f(S+i+j)`` (all S, i != j outside S)."""
    n = f.n
    _, vals = all_values(f)
    codes = np.arange(1 << n)
    for i in range(n):
        for j in range(i + 1, n):
            bi, bj = 1 << i, 1 << j
            S = codes[(codes & (bi | bj)) == 0]
            if np.any(vals[S | bi] + vals[S | bj] < vals[S] + vals[S | bi | bj] - tol):
                return False
    return True


# ------------------------------------------------------------------------------------------------
# Small self-contained instances (independent of the families under test).


class CutPlusModular(SetFunction):
    r"""``cut_W(S) + sum_{e in S} m_e + c``; ``cut_W(S) = sum_{i in S, j not in S} W_ij``.

    Undirected cuts use a symmetric ``W``. Submodular for nonnegative ``W``. Has its own
    vectorised incremental state (so algorithms walking states take their batched path).
    """

    submodular = True

    def __init__(self, W: np.ndarray, m: np.ndarray, c: float = 0.0):
        super().__init__(len(m))
        self.W = np.asarray(W, dtype=float)
        self.m = np.asarray(m, dtype=float)
        self.c = float(c)

    def _value(self, mask: np.ndarray) -> float:
        return float(self.W[mask][:, ~mask].sum() + self.m[mask].sum() + self.c)

    def state(self) -> FunctionState:
        return _CutState(self)


class _CutState(FunctionState):
    def __init__(self, f: CutPlusModular):
        super().__init__(f)
        self.out = f.W.sum(axis=1) - np.diag(f.W)  # weight leaving each element
        self.to_S = np.zeros(f.n)    # sum_{i in S} W_ie: arcs into e that stop being cut
        self.from_S = np.zeros(f.n)  # sum_{j in S} W_ej: arcs out of e that are not cut

    def _gains(self, cand: np.ndarray) -> np.ndarray:
        g = self.out[cand] - self.from_S[cand] - self.to_S[cand] + self.f.m[cand]
        return np.where(self.mask[cand], 0.0, g)

    def _add(self, e: int) -> None:
        self.value += float(self._gains(np.array([e]))[0])
        self.to_S += self.f.W[e]
        self.from_S += self.f.W[:, e]


class ConcaveOfModular(SetFunction):
    r"""``sum_j w_j sqrt(A_j . 1_S) + sum_{e in S} m_e + c`` with ``A, w >= 0`` (submodular)."""

    submodular = True

    def __init__(self, A: np.ndarray, w: np.ndarray, m: np.ndarray, c: float = 0.0):
        super().__init__(A.shape[1])
        self.A, self.w, self.m, self.c = A, w, np.asarray(m, dtype=float), float(c)

    def _value(self, mask: np.ndarray) -> float:
        return float(self.w @ np.sqrt(self.A[:, mask].sum(axis=1)) + self.m[mask].sum() + self.c)


class TableFunction(SetFunction):
    """A function given by its table of values, indexed by the binary code of the mask."""

    submodular = False

    def __init__(self, table: np.ndarray):
        n = int(np.log2(len(table)))
        super().__init__(n)
        self.table = np.asarray(table, dtype=float)
        self._pow = 1 << np.arange(n)

    def _value(self, mask: np.ndarray) -> float:
        return float(self.table[int(self._pow[mask].sum())])


def random_cut_plus_modular(n: int, rng: np.random.Generator, *, directed: bool = False,
                            density: float = 0.5, integer: bool = False) -> CutPlusModular:
    """A random cut plus a modular term of both signs (so minimizers are non-trivial)."""
    if integer:
        W = rng.integers(0, 3, (n, n)).astype(float)
        m = rng.integers(-3, 4, n).astype(float)
    else:
        W = rng.random((n, n))
        m = rng.normal(scale=1.5, size=n)
    W *= rng.random((n, n)) < density
    np.fill_diagonal(W, 0.0)
    if not directed:
        W = np.triu(W, 1)
        W = W + W.T
    return CutPlusModular(W, m, c=0.0 if integer else float(rng.normal()))


def random_concave_minus_modular(n: int, rng: np.random.Generator, d: int = 4
                                 ) -> ConcaveOfModular:
    """``sum_j w_j sqrt(A_j . 1_S) - m(S) + c`` with random ``A, w, m >= 0``."""
    A = rng.random((d, n)) * (rng.random((d, n)) < 0.7)
    return ConcaveOfModular(A, 2.0 * rng.random(d), -1.5 * rng.random(n), c=float(rng.normal()))


# ------------------------------------------------------------------------------------------------
# Maximization reference.


def brute_force_max(f: SetFunction, constraint) -> tuple[float, np.ndarray]:
    """``(max f(S) over feasible S, a maximizing mask)`` by enumerating every subset."""
    masks, vals = all_values(f)
    feasible = np.array([constraint.is_feasible(m) for m in masks])
    vals = np.where(feasible, vals, -np.inf)
    j = int(np.argmax(vals))
    return float(vals[j]), masks[j]


# ------------------------------------------------------------------------------------------------
# Matroid references (exhaustive over all 2^n subsets; n <= ~10) and random matroid instances.


def codes_of(masks: np.ndarray) -> np.ndarray:
    """Binary codes of boolean masks (rows), the inverse of :func:`all_masks`."""
    return (masks.astype(np.int64) << np.arange(masks.shape[1])).sum(axis=1)


def independence_table(is_independent, n: int) -> np.ndarray:
    """``indep[code]`` for every subset, from any callable taking a boolean mask."""
    return np.array([bool(is_independent(m)) for m in all_masks(n)])


def rank_table(indep: np.ndarray) -> np.ndarray:
    """``r(X)`` = size of a largest independent subset of X, for every X (by brute force)."""
    size = indep.size
    codes = np.arange(size)
    pop = np.array([bin(c).count("1") for c in codes])
    inside = (codes[None, :] & ~codes[:, None]) == 0  # [X, I]: I is a subset of X
    return np.where(inside & indep[None, :], pop[None, :], 0).max(axis=1)


def exchange_violations(indep: np.ndarray, n: int) -> np.ndarray:
    """Pairs ``(I, J)`` of independent codes with ``|I| < |J|`` and no ``e in J - I`` such that
    ``I + e`` is independent (empty for a matroid)."""
    codes = np.arange(indep.size)
    pop = np.array([bin(c).count("1") for c in codes])
    aug = np.zeros(indep.size, dtype=np.int64)  # elements that extend I independently
    for e in range(n):
        bit = 1 << e
        ok = ((codes & bit) == 0) & indep[codes | bit]
        aug |= np.where(ok, bit, 0)
    I, J = codes[:, None], codes[None, :]
    bad = (indep[:, None] & indep[None, :] & (pop[:, None] < pop[None, :])
           & ((J & ~I & aug[:, None]) == 0))
    return np.argwhere(bad)


def matroid_rank_inequalities(ranks: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``(A, b)`` with rows ``x(S) <= r(S)`` for every non-empty S (Edmonds' description of the
    matroid polytope, together with ``x >= 0``)."""
    masks = all_masks(n)[1:]
    return masks.astype(float), ranks[1:].astype(float)


def _random_laminar(n: int, rng: np.random.Generator) -> list[list[int]]:
    perm = rng.permutation(n)
    kept: list[tuple[int, int]] = []
    for _ in range(3 * n):
        a, b = sorted(rng.integers(0, n + 1, size=2))
        if b - a < 1:
            continue
        if all(b <= c or d <= a or (c <= a and b <= d) or (a <= c and d <= b) for c, d in kept):
            kept.append((int(a), int(b)))
    return [sorted(perm[a:b].tolist()) for a, b in kept]


MATROID_FAMILIES = ("uniform", "partition", "graphic", "laminar", "transversal", "generic")


def random_matroid(family: str, n: int, rng: np.random.Generator):
    """A random matroid of ``family`` on ``n`` elements and an independent reference oracle
    ``ref(mask) -> bool`` written from the family's definition (not from the class under test).

    Instances include loops, parallel edges, capacity-0 blocks and free elements.
    """
    from itertools import permutations

    import networkx as nx

    from dpsubmod.constraints import (
        GenericMatroid,
        GraphicMatroid,
        LaminarMatroid,
        PartitionMatroid,
        TransversalMatroid,
        UniformMatroid,
    )
    from dpsubmod.errors import InfeasibleConstraintError

    for _ in range(100):
        try:
            if family == "uniform":
                k = int(rng.integers(1, n + 1))
                return UniformMatroid(n, k), (lambda m, k=k: m.sum() <= k)
            if family == "partition":
                labels = rng.integers(0, max(1, n // 2), size=n)
                blocks = np.unique(labels)
                caps = rng.integers(0, 3, size=blocks.size)
                cap_of = dict(zip(blocks.tolist(), caps.tolist()))

                def ref(m, labels=labels, cap_of=cap_of):
                    return all((labels[m] == b).sum() <= c for b, c in cap_of.items())

                return PartitionMatroid(labels, caps), ref
            if family == "graphic":
                n_nodes = int(rng.integers(2, 6))
                edges = rng.integers(0, n_nodes, size=(n, 2))

                def ref(m, edges=edges, n_nodes=n_nodes):
                    g = nx.MultiGraph()
                    g.add_nodes_from(range(n_nodes))
                    g.add_edges_from(map(tuple, edges[m]))
                    return nx.is_forest(g) if m.any() else True

                return GraphicMatroid(edges, n_nodes=n_nodes), ref
            if family == "laminar":
                sets = _random_laminar(n, rng)
                if not sets:
                    continue
                caps = rng.integers(0, 3, size=len(sets))

                def ref(m, sets=sets, caps=caps):
                    return all(m[s].sum() <= c for s, c in zip(sets, caps))

                return LaminarMatroid(sets, caps, n=n), ref
            if family == "transversal":
                slots = int(rng.integers(1, 5))
                adj = rng.random((n, slots)) < 0.45

                def ref(m, adj=adj, slots=slots):
                    items = np.flatnonzero(m)
                    if items.size > slots:
                        return False
                    return any(all(adj[i, j] for i, j in zip(items, p))
                               for p in permutations(range(slots), items.size))

                return TransversalMatroid(adj), ref
            if family == "generic":
                # A linear matroid: columns of a small integer matrix, independent iff
                # linearly independent over the reals.
                d = int(rng.integers(1, 4))
                vecs = rng.integers(-1, 2, size=(d, n)).astype(float)

                def ref(m, vecs=vecs):
                    k = int(m.sum())
                    return k == 0 or np.linalg.matrix_rank(vecs[:, m]) == k

                def oracle(s, vecs=vecs):
                    return not s or np.linalg.matrix_rank(vecs[:, sorted(s)]) == len(s)

                return GenericMatroid(n, oracle), ref
        except InfeasibleConstraintError:
            continue
    raise RuntimeError(f"could not draw a feasible {family} matroid")


# ------------------------------------------------------------------------------------------------
# Set-function family references (value tables through ``_value``, so nothing is counted).


def all_subsets(n: int):
    """Every subset of ``range(n)`` as a sorted tuple, by increasing size."""
    from itertools import combinations

    for k in range(n + 1):
        yield from combinations(range(n), k)


def brute_force_gains(f: SetFunction, mask: np.ndarray) -> np.ndarray:
    """``f(S + e) - f(S)`` for every ``e`` (0 for ``e`` in ``S``), by direct evaluation."""
    base = f._value(mask)
    out = np.zeros(f.n)
    for e in np.flatnonzero(~mask):
        m = mask.copy()
        m[e] = True
        out[e] = f._value(m) - base
    return out


def monotonicity_violation(f: SetFunction) -> float:
    """``max(0, max_{S, e not in S} f(S) - f(S + e))``: 0 exactly when ``f`` is monotone."""
    vals = all_values(f)[1]
    codes = np.arange(vals.size)
    worst = 0.0
    for e in range(f.n):
        S = codes[(codes & (1 << e)) == 0]
        worst = max(worst, float((vals[S] - vals[S | (1 << e)]).max()))
    return worst


def submodularity_violation(f: SetFunction) -> float:
    """``max(0, max [f(S+i+j) - f(S+j)] - [f(S+i) - f(S)])`` over S and ``i != j`` outside S."""
    vals = all_values(f)[1]
    codes = np.arange(vals.size)
    worst = 0.0
    for i in range(f.n):
        for j in range(i + 1, f.n):
            bi, bj = 1 << i, 1 << j
            S = codes[(codes & (bi | bj)) == 0]
            gap = (vals[S | bi | bj] - vals[S | bj]) - (vals[S | bi] - vals[S])
            worst = max(worst, float(gap.max()))
    return worst


def max_value_change(f: SetFunction, g: SetFunction) -> float:
    """``max_S |f(S) - g(S)|`` over every subset (both on the same ground set)."""
    assert f.n == g.n
    return float(np.abs(all_values(f)[1] - all_values(g)[1]).max())


# ------------------------------------------------------------------------------------------------
# k-submodular references (exhaustive over all (k+1)^n label vectors; (k+1)^n <= ~5000).


def all_label_vectors(n: int, k: int) -> np.ndarray:
    """All ``(k+1)^n`` label vectors in ``{0..k}^n``, shape ((k+1)^n, n); row ``c`` has digit ``e``
    of ``c`` in base ``k+1`` at position ``e``."""
    codes = np.arange((k + 1) ** n)
    return (codes[:, None] // (k + 1) ** np.arange(n)) % (k + 1)


def all_ks_values(f) -> tuple[np.ndarray, np.ndarray]:
    """``(label vectors, values)`` of a k-submodular ``f`` on every selection (no counting)."""
    xs = all_label_vectors(f.n, f.k)
    return xs, np.array([f._value(x) for x in xs])


def ks_property_violations(f, tol: float = 1e-9) -> dict[str, float]:
    """Largest violation of each defining property of a (monotone) k-submodular function.

    * ``monotone``: ``-min Delta_{e,i} F(x)`` over unlabelled ``e``;
    * ``orthant``: ``max Delta_{e,i} F(x + (g, j)) - Delta_{e,i} F(x)`` over distinct unlabelled
      ``e, g`` (covering pairs suffice: any ``x <= y`` is a chain of single additions);
    * ``pairwise``: ``-min Delta_{e,i} F(x) + Delta_{e,j} F(x)`` over ``i != j``.

    Values ``<= tol`` mean the property holds (Ward and Zivny 2014 definitions).
    """
    n, k = f.n, f.k
    xs, vals = all_ks_values(f)
    pw = (k + 1) ** np.arange(n)
    codes = np.arange(xs.shape[0])
    out = {"monotone": 0.0, "orthant": 0.0, "pairwise": 0.0}
    for e in range(n):
        free = xs[:, e] == 0
        # Gains of labelled e are meaningless; index them at x itself (gain 0) to stay in range.
        gains = np.stack([vals[np.where(free, codes + i * pw[e], codes)] - vals
                          for i in range(1, k + 1)], axis=1)
        g_free = gains[free]
        out["monotone"] = max(out["monotone"], float(-g_free.min()))
        for i in range(k):
            for j in range(i + 1, k):
                out["pairwise"] = max(out["pairwise"], float(-(g_free[:, i] + g_free[:, j]).min()))
        for g in range(n):
            if g == e:
                continue
            both = free & (xs[:, g] == 0)
            for j in range(1, k + 1):
                nxt = codes[both] + j * pw[g]
                diff = gains[nxt] - gains[both]
                out["orthant"] = max(out["orthant"], float(diff.max()))
    return out


def ks_brute_force_max(f, constraint) -> tuple[float, np.ndarray]:
    """``(max F(x) over label vectors with an independent support, a maximizer)``."""
    xs, vals = all_ks_values(f)
    supp = (xs != 0) @ (1 << np.arange(f.n))  # feasibility depends on the support only
    ok = np.array([constraint.is_feasible(m) for m in all_masks(f.n)])
    vals = np.where(ok[supp], vals, -np.inf)
    j = int(np.argmax(vals))
    return float(vals[j]), xs[j]


# ------------------------------------------------------------------------------------------------
# Privacy-mechanism references: exact selection distributions and a goodness-of-fit helper.


def permute_and_flip_brute_force(accept: np.ndarray) -> np.ndarray:
    """Output distribution of permute-and-flip by enumerating every order of the candidates.

    ``accept[i]`` is candidate i's coin probability (1 for a maximal score); order ``pi`` has
    probability ``1/m!`` and selects its first candidate whose coin lands heads.
    """
    import itertools
    import math

    p = np.asarray(accept, dtype=float)
    out = np.zeros(p.size)
    w = 1.0 / math.factorial(p.size)
    for order in itertools.permutations(range(p.size)):
        left = w
        for r in order:
            out[r] += left * p[r]
            left *= 1.0 - p[r]
    return out


def chi_square_pvalue(counts: np.ndarray, probs: np.ndarray, min_expected: float = 5.0) -> float:
    """Pearson chi-square p-value of ``counts`` against ``probs``.

    Categories with expected count below ``min_expected`` are pooled into one bin (and
    dropped if even the pool is below it), so the asymptotic chi-square law applies.
    """
    from scipy import stats

    counts = np.asarray(counts, dtype=float)
    probs = np.asarray(probs, dtype=float)
    n = counts.sum()
    exp = n * probs / probs.sum()
    big = exp >= min_expected
    obs_b, exp_b = list(counts[big]), list(exp[big])
    if exp[~big].sum() >= min_expected:
        obs_b.append(counts[~big].sum())
        exp_b.append(exp[~big].sum())
    obs_b, exp_b = np.array(obs_b), np.array(exp_b)
    exp_b *= obs_b.sum() / exp_b.sum()
    return float(stats.chisquare(obs_b, exp_b).pvalue)



def law_pvalue(law: dict, play: Callable[[np.random.Generator], Hashable], *, seed: int,
               runs: int) -> float:
    """Chi-square p-value (:func:`chi_square_pvalue`) of ``runs`` outcomes of ``play``, one
    generator each spawned from ``seed``, against the exact ``law`` (outcome -> probability).
    An outcome outside the law's support raises ``KeyError``."""
    keys = sorted(law)
    counts = dict.fromkeys(keys, 0)
    for g in np.random.default_rng(seed).spawn(runs):
        counts[play(g)] += 1
    return chi_square_pvalue(np.array([counts[k] for k in keys]),
                             np.array([law[k] for k in keys]))

# ------------------------------------------------------------------------------------------------
# Multilinear extension reference (exhaustive over all 2^n subsets).


def multilinear_brute_force(f: SetFunction, x: np.ndarray) -> tuple[float, np.ndarray]:
    """``(f(x), grad f(x))`` of the multilinear extension by summing over every subset.

    ``f(x) = sum_S F(S) P_x(S)`` and ``d_e f(x) = sum_S [F(S + e) - F(S - e)] P_x(S)``, with
    ``P_x(S) = prod_{e in S} x_e prod_{e not in S} (1 - x_e)``.
    """
    masks, vals = all_values(f)
    x = np.asarray(x, dtype=float)
    probs = np.where(masks, x, 1.0 - x).prod(axis=1)
    codes = codes_of(masks)
    grad = np.empty(f.n)
    for e in range(f.n):
        with_e, without_e = codes | (1 << e), codes & ~(1 << e)
        grad[e] = float(probs @ (vals[with_e] - vals[without_e]))
    return float(probs @ vals), grad


# ------------------------------------------------------------------------------------------------
# Privacy references: composition by enumeration, and tree aggregation computed offline.


def rr_composition_delta(eps: float, eps0: float, k: int) -> float:
    """Hockey-stick divergence ``sum_o [P(o) - e^eps Q(o)]_+`` at ``eps`` of k-fold
    ``eps0``-randomized response, by enumerating all ``2^k`` output sequences (from the
    definition, not from a closed form; ``k <= ~14``), in 60-digit decimal arithmetic so that
    the cancellation near ``eps = k eps0`` does not matter."""
    from decimal import Decimal, localcontext

    with localcontext() as ctx:
        ctx.prec = 60
        e0 = Decimal(eps0).exp()
        p, q = e0 / (1 + e0), 1 / (1 + e0)
        scale = Decimal(eps).exp()
        total = Decimal(0)
        for agree in all_masks(k).sum(axis=1).tolist():
            diff = p**agree * q ** (k - agree) - scale * q**agree * p ** (k - agree)
            if diff > 0:
                total += diff
        return float(total)


def dyadic_prefix_reference(items: np.ndarray, noise, t: int, honaker: bool) -> np.ndarray:
    """Noisy prefix sum of the first ``t`` rows of ``items`` from the full dyadic tree, offline.

    Node ``(h, j)`` covers items ``j 2^h .. (j+1) 2^h - 1`` (0-based) and is released as its exact
    sum plus ``noise(h, j)``. Plain: the sum of the released maximal dyadic blocks of ``[0, t)``.
    Honaker: each block is replaced by its best linear unbiased estimate from its subtree,
    computed recursively by inverse-variance weighting (unit node variance).
    """
    items = np.asarray(items, dtype=float)

    def noisy(h: int, j: int) -> np.ndarray:
        return items[j << h:(j + 1) << h].sum(axis=0) + np.asarray(noise(h, j), dtype=float)

    def estimate(h: int, j: int) -> tuple[np.ndarray, float]:
        if h == 0 or not honaker:
            return noisy(h, j), 1.0
        (a, va), (b, vb) = estimate(h - 1, 2 * j), estimate(h - 1, 2 * j + 1)
        v_children = va + vb
        v = 1.0 / (1.0 + 1.0 / v_children)
        return v * (noisy(h, j) + (a + b) / v_children), v

    out = np.zeros(items.shape[1])
    start = 0
    for h in range(t.bit_length() - 1, -1, -1):
        if (t >> h) & 1:
            out = out + estimate(h, start >> h)[0]
            start += 1 << h
    return out


# ------------------------------------------------------------------------------------------------
# Exact output distributions of the Hedge-based online maximization learners (tiny instances).


class ForcedGenerator:
    """Stand-in for a numpy Generator that returns queued values, so an enumeration can force a
    learner down one branch of its randomness (``random()`` and ``integers()`` pop the queue)."""

    def __init__(self, values=()):
        self.values = list(values)

    def random(self, *args, **kwargs):
        return self.values.pop(0)

    def integers(self, *args, **kwargs):
        return self.values.pop(0)


def _force_sample(learner, tup) -> None:
    # the experts draw through their mechanism's release on the bank's gains
    learner._hedge._release = lambda mechanism, budget, distinct, tup=tuple(tup): np.array(
        tup, dtype=np.int64)


def experts_output_distribution(learner, functions, *, presampled_M: int | None = None) -> dict:
    """Exact law of the sequence of played sets of an experts learner (``FIDP``, ``BanditDP``,
    ``NaiveBanditDP``, ``PresampledBanditDP``) on ``functions``, by enumerating every draw.

    Each random choice of the learner is forced in turn (Hedge draws through ``_release``,
    exploration coins and uniform choices through :class:`ForcedGenerator`), and weighted by its
    probability as computed from the learner's own state (Hedge distributions, ``gamma``, the
    selection-sampling probabilities), so the learner's updates are exercised exactly. For
    ``PresampledBanditDP`` the law is conditional on ``M = presampled_M`` explorations (the
    guarantee holds for every ``M``).
    """
    import copy
    import itertools

    from dpsubmod.online import FIDP, BanditDP, Hedge, NaiveBanditDP, PresampledBanditDP

    L0 = learner.clone()
    L0.reset()
    n, k, T = int(L0.n), int(L0.k), len(functions)
    tuples = list(itertools.product(range(n), repeat=k))
    out: dict = {}

    def tuple_probs(L):
        # Independent draws, or (distinct) each expert's distribution renormalised over the
        # elements the earlier experts left.
        # (log-space: a restriction to actions of underflowing probability keeps its law).
        P = L.expert_probabilities()
        logP = L._hedge.log_probabilities()
        for tup in tuples:
            p, used = 1.0, []
            for i, a in enumerate(tup):
                if L.distinct:
                    if a in used:
                        p = 0.0
                        break
                    rest = [logP[i, b] for b in range(n) if b not in used]
                    p *= math.exp(logP[i, a] - np.logaddexp.reduce(rest))
                else:
                    p *= P[i, a]
                used.append(a)
            if p > 0.0:
                yield tup, p

    def done(prob, hist):
        out[hist] = out.get(hist, 0.0) + prob

    if isinstance(L0, FIDP):
        def rec(L, t, prob, hist):
            if t == T:
                return done(prob, hist)
            for tup, p in tuple_probs(L):
                L2 = copy.deepcopy(L)
                _force_sample(L2, tup)
                S = L2.select()
                L2.update(functions[t])
                rec(L2, t + 1, prob * p, hist + (S,))

        rec(L0, 0, 1.0, ())
        return out

    if isinstance(L0, PresampledBanditDP):
        if presampled_M is None:
            raise ValueError("pass presampled_M for PresampledBanditDP")

        class _Setup:
            def binomial(self, *a):
                return presampled_M

        L0._setup_rng = _Setup()
        L0._params = L0._resolve()
        L0._hedge = Hedge(n, L0._params["eta"], copies=k, backend="numpy")
        L0._hedge.reset()

    def explore_prob(L):
        if isinstance(L, PresampledBanditDP):
            return None
        g = L._params["gamma"]
        if isinstance(L, BanditDP) and L.cap and L._explorations >= L._params["exploration_budget"]:
            return 0.0
        return g

    def sched_branches(L, rounds_left):
        left = L._left
        if rounds_left <= 0 or left <= 0:
            return [(None, 1.0)]
        p = left / rounds_left
        br = []
        if p > 0:
            br.append((0.0, p))
        if p < 1:
            br.append((1.0, 1.0 - p))
        return br

    def rec(L, t, prob, hist):
        if t == T:
            return done(prob, hist)
        pres = isinstance(L, PresampledBanditDP)
        naive = isinstance(L, NaiveBanditDP)
        starts = [(None, 1.0)]
        if naive and not L._fresh:
            starts = list(tuple_probs(L))
        for tup0, p0 in starts:
            if pres:
                branches = [(True, 1.0)] if L._next_explores else [(False, 1.0)]
            else:
                g = explore_prob(L)
                branches = []
                if g > 0:
                    branches.append((True, g))
                if g < 1:
                    branches.append((False, 1.0 - g))
            for explore, pe in branches:
                choices = [(i, e, 1.0 / (k * n)) for i in range(k) for e in range(n)] \
                    if explore else [(None, None, 1.0)]
                for i, e, pc in choices:
                    L2 = copy.deepcopy(L)
                    if tup0 is not None:
                        _force_sample(L2, tup0)
                    if pres:
                        L2._play = ForcedGenerator([] if not explore else [i, e])
                    else:
                        L2._play = ForcedGenerator([-1.0, i, e] if explore else [2.0])
                    S = L2.select()
                    y = functions[t](S)
                    redraw = explore and not naive
                    sched = sched_branches(L2, T - t - 1) if pres else [(None, 1.0)]
                    if redraw:
                        probe = copy.deepcopy(L2)
                        _force_sample(probe, tuples[0])
                        probe._sched = ForcedGenerator([0.0])
                        probe.update(y)
                        redraws = list(tuple_probs(probe))
                    else:
                        redraws = [(None, 1.0)]
                    for tup, pr in redraws:
                        for sv, ps in sched:
                            L3 = copy.deepcopy(L2)
                            if tup is not None:
                                _force_sample(L3, tup)
                            if pres:
                                L3._sched = ForcedGenerator([] if sv is None else [sv])
                            L3.update(y)
                            rec(L3, t + 1, prob * p0 * pe * pc * pr * ps, hist + (S,))

    inits = []
    if isinstance(L0, PresampledBanditDP):
        L0._left = presampled_M
        for sv, ps in sched_branches(L0, T):
            L1 = copy.deepcopy(L0)
            L1._sched = ForcedGenerator([] if sv is None else [sv])
            L1._next_explores = L1._schedule(T)
            inits.append((L1, ps))
    else:
        inits.append((L0, 1.0))
    for L1, ps in inits:
        for tup in tuples:
            L2 = copy.deepcopy(L1)
            L2._a = np.array(tup, dtype=np.int64)
            rec(L2, 0, ps * (1.0 / n) ** k, ())
    return out
