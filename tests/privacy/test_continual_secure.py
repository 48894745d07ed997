"""Tree aggregation on the secure backends: the exact output law of a tiny tree, and the node
noise each engine draws.

The exact check writes down the law of the released nodes of a secure tree on a worst-case
neighbouring pair (grid-rounded sums plus independent discrete Laplace noise of the tree's scale
in grid units) and checks epsilon-DP exactly; two mis-calibrated variants (noise for the declared
rather than the grid-rounded sensitivity, and for one tree level) are caught. The goodness-of-fit
tests check that the noise each engine really adds to the nodes follows that law: chi-square at
false-alarm rate ALPHA = 1e-6, with a tree drawing at half the claimed scale rejected.
"""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from dpsubmod.privacy import SecureBackend, TreeAggregator, opendp_engine
from dpsubmod.privacy.checking import exact_check
from oracles import chi_square_pvalue

ALPHA = 1e-6  # false-alarm rate of every statistical test below

try:
    import opendp  # noqa: F401

    HAVE_OPENDP = True
except ImportError:
    HAVE_OPENDP = False

needs_opendp = pytest.mark.skipif(not HAVE_OPENDP, reason="OpenDP (the [secure] extra) absent")

G = 0.25  # grid of the tiny cases: sensitivity 0.3 is 1.2 grid units, rounded up to 2


@pytest.fixture(autouse=True)
def fresh_engine():
    opendp_engine.clear_cache()
    yield
    opendp_engine.clear_cache()


def dlap_pmf(z, t):
    a = math.exp(-1.0 / t)
    return (1 - a) / (1 + a) * np.exp(-np.abs(np.asarray(z, dtype=float)) / t)


def dgauss_pmf(z, sigma2):
    support = np.arange(-4000, 4001)
    norm = np.exp(-support.astype(float) ** 2 / (2 * sigma2)).sum()
    return np.exp(-np.asarray(z, dtype=float) ** 2 / (2 * sigma2)) / norm


def pooled(draws, lo, hi, pmf):
    counts = np.bincount(np.clip(np.asarray(draws), lo, hi) - lo, minlength=hi - lo + 1)
    p = pmf(np.arange(lo, hi + 1))
    p[0] += max(0.0, 1.0 - p.sum()) / 2
    p[-1] += max(0.0, 1.0 - p.sum())
    return counts, p


class Recording(TreeAggregator):
    """Logs every released node (its value in grid units) and its exact sum in grid units."""

    def _release(self, level, index, exact):
        out = super()._release(level, index, exact)
        self.log = getattr(self, "log", [])
        self.log.append((list(exact), np.round(out / G).astype(int).tolist()))
        return out


# -- the exact law of a tiny secure tree ----------------------------------------------------------
K = 120  # outcomes -K..K grid units per node: the tails beyond hold less than 1e-12


def node_law(sums, t):
    """Joint law of two released nodes: grid sums plus independent discrete Laplace(t)."""
    z = np.arange(-K, K + 1)
    a, b = dlap_pmf(z - sums[0], t), dlap_pmf(z - sums[1], t)
    return np.outer(a, b).ravel()


def worst_pair_sums(be):
    """Item 1 of T = 3 lies in the first leaf and in the level-1 node. Neighbours x1 = 0.1225 and
    x1' = 0.4225 differ by the sensitivity 0.3 (1.2 grid units), and their rounded units by 2."""
    out = []
    for x1 in (0.1225, 0.4225):
        agg = Recording(3, 1, sensitivity=0.3, epsilon=1.0, backend=be)
        for x in (x1, 0.0):
            agg.update([x])
        out.append([agg.log[0][0][0], agg.log[1][0][0]])  # the two nodes item 1 touches
    return out


def test_secure_tree_release_is_exactly_epsilon_dp_on_the_worst_pair_and_miscalibration_is_caught():
    be = SecureBackend(G, random_source=random.Random(0))
    s, s2 = worst_pair_sums(be)
    assert (s, s2) == ([0, 0], [2, 2])  # the grid moves each node by 2 units, not 1.2
    t = TreeAggregator(3, 1, sensitivity=0.3, epsilon=1.0, backend=be).scale / G
    assert t == 4.0  # L = 2 levels x 2 grid units / epsilon 1
    res = exact_check(lambda sums: node_law(sums, t), s, s2, 1.0)
    assert res.passed and res.epsilon_exact == pytest.approx(1.0, abs=1e-9)
    # noise for the declared sensitivity (1.2 units) instead of the grid-rounded one: caught
    declared = exact_check(lambda sums: node_law(sums, 2 * 1.2), s, s2, 1.0)
    assert not declared.passed and declared.epsilon_exact > 1.6
    # noise for one tree level (the noise of T = 1): caught
    one_level = TreeAggregator(1, 1, sensitivity=0.3, epsilon=1.0, backend=be).scale / G
    assert not exact_check(lambda sums: node_law(sums, one_level), s, s2, 1.0).passed


# -- the node noise each engine draws -------------------------------------------------------------
def node_noise(be, T, **kw):
    agg = Recording(T, 1, sensitivity=0.3, backend=be, **kw)
    for _ in range(T):
        agg.update([0.0])
    assert len(agg.log) == T  # the plain mechanism releases one node per step
    return [released[0] - exact[0] for exact, released in agg.log], agg


def engines():
    out = [pytest.param(lambda: SecureBackend(G, random_source=random.Random(5)), id="python")]
    out.append(pytest.param(lambda: SecureBackend(G, engine="opendp"), id="opendp",
                            marks=needs_opendp))
    return out


@pytest.mark.slow
@pytest.mark.parametrize("make", engines())
def test_secure_tree_node_noise_is_the_discrete_laplace_of_its_scale(make):
    T = 4096  # 13 levels: t = 13 x 2 units / 6.5 = 4 grid units
    noise, agg = node_noise(make(), T, epsilon=6.5)
    t = agg.scale / G
    assert t == 4.0
    assert agg.event.epsilon == 6.5 and f"@{make().engine}" in agg.event.note
    counts, p = pooled(noise, -30, 30, lambda z: dlap_pmf(z, t))
    assert chi_square_pvalue(counts, p) > ALPHA
    # a tree drawing at half the claimed scale (epsilon 13 instead of 6.5) is rejected
    half, _ = node_noise(make(), T, epsilon=13.0)
    counts, p = pooled(half, -30, 30, lambda z: dlap_pmf(z, t))
    assert chi_square_pvalue(counts, p) < ALPHA


@pytest.mark.slow
@pytest.mark.parametrize("make", engines())
def test_secure_tree_node_noise_is_the_discrete_gaussian_of_its_scale(make):
    T = 4096
    noise, agg = node_noise(make(), T, noise="gaussian", epsilon=None, rho=2.0)
    sigma2 = (agg.scale / G) ** 2
    # l2 sensitivity 1.2 units + sqrt(dim) for the rounding, 13 levels, rho 2
    assert sigma2 == pytest.approx(2.2**2 * 13 / 4.0, rel=1e-9)
    counts, p = pooled(noise, -30, 30, lambda z: dgauss_pmf(z, sigma2))
    assert chi_square_pvalue(counts, p) > ALPHA
    half, _ = node_noise(make(), T, noise="gaussian", epsilon=None, rho=8.0)
    counts, p = pooled(half, -30, 30, lambda z: dgauss_pmf(z, sigma2))
    assert chi_square_pvalue(counts, p) < ALPHA


def test_secure_tree_with_honaker_releases_finite_grid_based_prefixes():
    be = SecureBackend(G, random_source=random.Random(2))
    agg = TreeAggregator(16, 2, sensitivity=1.0, epsilon=1.0, backend=be, honaker=True)
    for _ in range(16):
        agg.update([0.5, -0.25])
        assert np.all(np.isfinite(agg.prefix()))
    assert "secure" in agg.event.note and "Honaker" in agg.event.note
