"""The fast kernels against straightforward reference implementations kept here: the same
numbers (bit for bit where the arithmetic is the same, to 1e-12 where it is reordered) and the
same random streams, at several seeds."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from dpsubmod.constraints import Knapsack
from dpsubmod.extensions._closed_forms import _coverage_gradient, _coverage_gradients
from dpsubmod.functions import Coverage
from dpsubmod.online import Hedge
from dpsubmod.polytopes import KnapsackPolytope, euclidean_projection, knapsack_rounding
from dpsubmod.privacy.backends import standard_gumbel

SEEDS = range(6)


def _coverage(rng: np.random.Generator, n: int, m: int, p: float) -> Coverage:
    return Coverage(sp.csr_array((rng.random((n, m)) < p).astype(float)), rng.random(m))


@pytest.mark.parametrize("seed", SEEDS)
def test_coverage_state_matches_fancy_slicing(seed):
    rng = np.random.default_rng(seed)
    f = _coverage(rng, 80, 300, 0.05 + 0.05 * seed)
    st = f.state()
    covered = np.zeros(f.n_elements, dtype=bool)
    cache = np.asarray(f.incidence @ f.element_weights, dtype=np.float64)
    for e in rng.permutation(f.n)[:20].tolist():
        st.add(e)
        A = f.incidence
        elems = A.indices[A.indptr[e]:A.indptr[e + 1]]
        new = elems[~covered[elems]]
        if new.size:  # the previous kernel: scipy's column slice and a mat-vec
            cache -= f._csc[:, new] @ f.element_weights[new]
            np.maximum(cache, 0.0, out=cache)
            covered[new] = True
        cache[e] = 0.0
        np.testing.assert_array_equal(st.gains(), np.where(st.mask, 0.0, cache))


def _reference_pipage(c, budget, x, gen):
    """The walk on numpy scalars with one scalar draw per use (the previous kernel)."""
    y = np.clip(np.asarray(x, dtype=float), 0.0, 1.0)
    eps = 1e-12
    y[y < eps] = 0.0
    y[y > 1 - eps] = 1.0
    carry = None
    for j in np.flatnonzero((y > 0) & (y < 1)).tolist():
        if carry is None:
            carry = j
            continue
        i = carry
        up = min((1 - y[i]) * c[i], y[j] * c[j])
        down = min(y[i] * c[i], (1 - y[j]) * c[j])
        t = up if gen.random() < down / (up + down) else -down
        y[i] += t / c[i]
        y[j] -= t / c[j]
        for e in (i, j):
            if y[e] < eps:
                y[e] = 0.0
            elif y[e] > 1 - eps:
                y[e] = 1.0
        carry = i if 0.0 < y[i] < 1.0 else (j if 0.0 < y[j] < 1.0 else None)
    chosen = y == 1.0
    if carry is not None:
        if float(c[chosen].sum()) + c[carry] <= budget * (1 + 1e-12) and gen.random() < y[carry]:
            chosen[carry] = True
    return np.flatnonzero(chosen)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("unit", [True, False])
def test_knapsack_rounding_matches_reference_and_stream(seed, unit):
    rng = np.random.default_rng(seed)
    n = 150
    c = np.ones(n) if unit else rng.uniform(0.3, 2.0, n)
    x = rng.random(n)
    x[rng.random(n) < 0.2] = 0.0
    x[rng.random(n) < 0.1] = 1.0
    budget = float(c @ x) * (1.0 if seed % 2 else 1.3)  # tight and slack budgets
    g1, g2 = np.random.default_rng(seed), np.random.default_rng(seed)
    got = knapsack_rounding(KnapsackPolytope(c, budget), x, rng=g1)
    np.testing.assert_array_equal(got, _reference_pipage(c, budget, x, g2))
    # the generator is left where one draw per use leaves it
    assert g1.random() == g2.random()


@pytest.mark.parametrize("seed", SEEDS)
def test_batched_coverage_gradients_match_single_point(seed):
    rng = np.random.default_rng(seed)
    f = _coverage(rng, 60, 90, 0.1)
    X = rng.random((7, 60))
    X[rng.random(X.shape) < 0.15] = 1.0
    X[rng.random(X.shape) < 0.1] = 0.0
    if seed == 0:
        X[:, :] = np.minimum(X, 0.99)  # no coordinate at 1
    G = _coverage_gradients(f, X)
    R = np.stack([_coverage_gradient(f, x) for x in X])
    np.testing.assert_allclose(G, R, rtol=1e-12, atol=1e-15)


def _reference_projection(Y, c, b):
    out = np.clip(Y, 0.0, 1.0)
    for r in range(Y.shape[0]):
        if out[r] @ c <= b:
            continue
        lo, hi = 0.0, float((Y[r] / c).max())
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            if np.clip(Y[r] - mid * c, 0.0, 1.0) @ c > b:
                lo = mid
            else:
                hi = mid
        out[r] = np.clip(Y[r] - hi * c, 0.0, 1.0)
    return out


@pytest.mark.parametrize("seed", SEEDS)
def test_projections_exact_and_match_bisection(seed):
    rng = np.random.default_rng(seed)
    n, k = 80, 5
    Y = rng.normal(0.2, [0.05, 0.3, 1.0, 5.0][seed % 4], (6, n))
    if seed == 5:
        Y = np.round(Y, 1)  # ties between breakpoints
    X = euclidean_projection(k, Y, n=n)
    np.testing.assert_allclose(X, _reference_projection(Y, np.ones(n), k), atol=1e-12)
    proj = np.clip(Y, 0, 1).sum(axis=1) > k
    np.testing.assert_allclose(X[proj].sum(axis=1), k, rtol=1e-13)
    costs = rng.uniform(0.2, 2.0, n)
    Xk = euclidean_projection(Knapsack(costs, 4.0), Y)
    np.testing.assert_allclose(Xk, _reference_projection(Y, costs, 4.0), atol=1e-12)
    assert (Xk @ costs <= 4.0 * (1 + 1e-12)).all()


@pytest.mark.parametrize("seed", SEEDS)
def test_hedge_distinct_draws_match_restricted_reference(seed):
    n, copies, eta = 40, 6, 0.7
    h = Hedge(n, eta, copies=copies, rng=seed)
    h.reset()
    G = np.random.default_rng(seed).random((copies, n)) * 5
    G[:, :3] = G[:, :3].max() + 1.0  # leaders shared by the copies
    h.update(G)
    # a copy of the sampler's generator, to draw the same Gumbel noise
    gen = np.random.Generator(np.random.PCG64())
    gen.bit_generator.state = h._backend.generator.bit_generator.state
    got = h.sample(distinct=True)
    noise = standard_gumbel(gen, (copies, n))
    allowed = np.ones(n, dtype=bool)
    for i in range(copies):
        cand = np.flatnonzero(allowed)
        row = h._G[i, cand]
        j = int(np.argmax(eta * (row - row.max()) + noise[i, cand]))
        assert got[i] == cand[j]
        allowed[cand[j]] = False
