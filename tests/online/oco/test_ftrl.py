"""Projections (KL and Euclidean) onto matroid and knapsack polytopes, and private FTRL
(Agarwal and Singh 2017) with tree-aggregated noisy sums."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize

from dpsubmod.constraints import GenericMatroid, GraphicMatroid, Knapsack, PartitionMatroid
from dpsubmod.errors import DPSubmodError, StreamLengthError
from dpsubmod.online import PrivateFTRL
from dpsubmod.polytopes import euclidean_projection, kl_projection
from dpsubmod.privacy import TreeAggregator
from dpsubmod.privacy.continual import tree_levels


def _slsqp(objective, grad, n, constraints):
    res = minimize(objective, np.full(n, 1e-3), jac=grad, bounds=[(1e-12, 1.0)] * n,
                   constraints=constraints, method="SLSQP",
                   options=dict(ftol=1e-15, maxiter=2000))
    return res.x


def _kl(ly):
    y = np.exp(ly)

    def obj(x):
        x = np.maximum(x, 1e-300)
        return float(np.sum(x * np.log(x / y) - x))

    return obj, lambda x: np.log(np.maximum(x, 1e-300)) - ly


def _cases(n, rng):
    c = rng.uniform(0.2, 1.0, n)
    half = n // 2
    labels = [0] * half + [1] * (n - half)
    return [
        (3, [dict(type="ineq", fun=lambda x: 3 - x.sum())]),
        (Knapsack(c, 1.0), [dict(type="ineq", fun=lambda x: 1.0 - c @ x)]),
        (PartitionMatroid(labels, [1, 2]),
         [dict(type="ineq", fun=lambda x: 1 - x[:half].sum()),
          dict(type="ineq", fun=lambda x: 2 - x[half:].sum())]),
    ]


@pytest.mark.parametrize("seed", range(4))
def test_kl_projection_matches_slsqp(seed):
    rng = np.random.default_rng(seed)
    n = 6
    ly = rng.normal(size=n) * 2 - 0.5
    for cons, scipy_cons in _cases(n, rng):
        obj, grad = _kl(ly)
        x = kl_projection(cons, ly, n=n)
        ref = _slsqp(obj, grad, n, scipy_cons)
        assert obj(x) <= obj(ref) + 1e-9
        assert x.min() >= 0 and x.max() <= 1 + 1e-12


def test_uniform_kl_projection_does_not_force_the_sum_to_k():
    # The note's C14b counterexample: with sum min(1, y) < k the argmin is min(1, y), not a
    # rescaling to sum k (which has a larger objective).
    ly = np.array([-1.0, -1.2, -0.8, -2.0, -1.5, -3.0])
    x = kl_projection(4, ly, n=6)
    np.testing.assert_allclose(x, np.exp(ly))
    obj, grad = _kl(ly)
    scaled = np.minimum(1.0, np.exp(ly) * 4 / np.exp(ly).sum())
    assert obj(x) < obj(scaled) - 0.5


def test_kl_projection_is_stable_in_log_space():
    ly = np.array([800.0, 799.0, -900.0, 0.0])
    x = kl_projection(2, ly, n=4)
    assert np.isfinite(x).all() and x.sum() == pytest.approx(2.0)
    np.testing.assert_allclose(x[:2], 1.0)


@given(seed=st.integers(0, 2**31 - 1), k=st.integers(1, 5), scale=st.floats(0.1, 30.0))
@settings(max_examples=40, deadline=None)
def test_uniform_kl_projection_kkt(seed, k, scale):
    # KKT: x = min(1, theta y) with theta <= 1, and theta < 1 only if the sum is exactly k.
    rng = np.random.default_rng(seed)
    n = 7
    ly = rng.normal(size=n) * scale
    x = kl_projection(k, ly, n=n)
    assert x.sum() <= k * (1 + 1e-9)
    free = x < 1 - 1e-12
    if free.any():
        log_theta = np.log(x[free]) - ly[free]
        assert np.ptp(log_theta) <= 1e-8 * max(1.0, np.abs(ly).max())
        assert log_theta.max() <= 1e-9
        if log_theta.max() < -1e-9:
            assert x.sum() == pytest.approx(k, rel=1e-9)


@pytest.mark.parametrize("seed", range(3))
def test_frank_wolfe_projection_on_a_general_matroid(seed):
    # A generic (oracle-only) copy of the uniform matroid: Frank-Wolfe with away steps must
    # reach the closed form, and its convex decomposition must reproduce the point.
    rng = np.random.default_rng(seed)
    n, k = 6, 3
    ly = rng.normal(size=n) * 2
    gm = GenericMatroid(n, lambda S: len(S) <= k)
    x, (sets, w) = kl_projection(gm, ly, return_decomposition=True)
    obj, _ = _kl(ly)
    assert obj(x) <= obj(kl_projection(k, ly, n=n)) + 1e-7
    rebuilt = np.zeros(n)
    for S, wi in zip(sets, w):
        assert len(S) <= k
        rebuilt[S] += wi
    np.testing.assert_allclose(rebuilt, x, atol=1e-12)
    assert w.sum() == pytest.approx(1.0)
    xe = euclidean_projection(gm, ly)
    np.testing.assert_allclose(xe, euclidean_projection(k, ly, n=n), atol=1e-6)


def test_frank_wolfe_projection_on_a_graphic_matroid_matches_slsqp():
    # Graphic matroid of a triangle plus a pendant edge: the independence polytope is
    # {x >= 0, x <= 1, x(triangle) <= 2}.
    gm = GraphicMatroid([(0, 1), (1, 2), (0, 2), (2, 3)], n_nodes=4)
    ly = np.array([0.5, 0.3, 0.1, -0.2])
    x = kl_projection(gm, ly)
    obj, grad = _kl(ly)
    ref = _slsqp(obj, grad, 4, [dict(type="ineq", fun=lambda z: 2 - z[:3].sum())])
    assert obj(x) <= obj(ref) + 1e-7
    assert x[:3].sum() <= 2 + 1e-9


@pytest.mark.parametrize("seed", range(3))
def test_euclidean_projection_matches_slsqp(seed):
    rng = np.random.default_rng(seed)
    n = 6
    y = rng.normal(size=n)
    for cons, scipy_cons in _cases(n, rng):
        x = euclidean_projection(cons, y, n=n)
        ref = minimize(lambda z: 0.5 * np.sum((z - y) ** 2), np.zeros(n), jac=lambda z: z - y,
                       bounds=[(0, 1)] * n, constraints=scipy_cons, method="SLSQP",
                       options=dict(ftol=1e-15, maxiter=1000)).x
        assert 0.5 * np.sum((x - y) ** 2) <= 0.5 * np.sum((ref - y) ** 2) + 1e-9


def test_projections_are_vectorised_over_rows():
    rng = np.random.default_rng(5)
    Y = rng.normal(size=(4, 5))
    for proj in (kl_projection, euclidean_projection):
        rows = np.stack([proj(2, y, n=5) for y in Y])
        np.testing.assert_allclose(proj(2, Y, n=5), rows, atol=1e-12)


# ---------------------------------------------------------------------------------------------
# private FTRL
# ---------------------------------------------------------------------------------------------
def test_noise_off_ftrl_plays_the_entropic_leader():
    T, n = 30, 4
    rng = np.random.default_rng(1)
    ftrl = PrivateFTRL(2, T, n=n, copies=2, epsilon=math.inf, eta=0.3, loss_range=(-1.0, 0.0))
    S = np.zeros((2, n))
    for _ in range(T):
        x = ftrl.predict()
        np.testing.assert_allclose(x, kl_projection(2, -1.0 - 0.3 * S, n=n))
        L = -rng.random((2, n))
        ftrl.update(L)
        S += L
    assert ftrl.privacy is None


@pytest.mark.parametrize("T", [1, 2, 5, 100, 1000, 1024])
def test_tree_calibration_counts_levels_with_log2(T):
    n, K, eps = 5, 3, 1.0
    ftrl = PrivateFTRL(2, T, n=n, copies=K, epsilon=eps, loss_range=(-2.0, 0.0))
    p = ftrl.resolved_params
    assert p["levels"] == tree_levels(T) == math.floor(math.log2(T)) + 1
    # basic composition over the K trees at delta = 0; leaf l1 sensitivity n * (hi - lo)
    assert p["tree_epsilon"] == pytest.approx(eps / K)
    assert p["scale"] == pytest.approx(p["levels"] * n * 2.0 / (eps / K))
    assert ftrl._tree.scale == pytest.approx(p["scale"])


def test_joint_tree_noise_equals_one_tree_per_copy():
    # The K copies share one tree of dimension K n: its per-coordinate scale equals the scale of
    # a tree per copy calibrated to one copy's sensitivity and budget.
    T, n, K, eps0 = 64, 4, 3, 0.4
    joint = PrivateFTRL(1, T, n=n, copies=K, epsilon=K * eps0, tree_epsilon=eps0,
                        loss_range=(-1.0, 0.0)).reset()
    single = TreeAggregator(T, n, noise="laplace", sensitivity=n * 1.0, epsilon=eps0)
    assert joint._tree.scale == pytest.approx(single.scale)
    g = PrivateFTRL(1, T, n=n, copies=K, epsilon=1.0, delta=1e-6, noise="gaussian",
                    loss_range=(-1.0, 0.0)).reset()
    rho = g.resolved_params["rho"]
    single_g = TreeAggregator(T, n, noise="gaussian", sensitivity=math.sqrt(n), rho=rho / K)
    assert g._tree.scale == pytest.approx(single_g.scale)


def test_reports_meet_the_budget():
    for kw in (dict(epsilon=1.0), dict(epsilon=1.0, delta=1e-6),
               dict(epsilon=0.5, delta=1e-5, noise="gaussian")):
        ftrl = PrivateFTRL(3, 50, n=6, copies=8, loss_range=(-1.0, 0.0), rng=0, **kw)
        before = ftrl.privacy  # the whole run, stated before the first update
        assert before.uses == 8
        ftrl.predict()
        ftrl.update(-np.ones((8, 6)))
        rep = ftrl.privacy
        assert rep == before
        assert rep.epsilon <= kw["epsilon"] * (1 + 1e-9)
        assert rep.delta <= kw.get("delta", 0.0) + 1e-15
        assert rep.uses == 8


def test_laplace_with_delta_composes_better_than_basic():
    base = PrivateFTRL(3, 50, n=6, copies=100, epsilon=1.0, loss_range=(-1.0, 0.0))
    better = PrivateFTRL(3, 50, n=6, copies=100, epsilon=1.0, delta=1e-6,
                         loss_range=(-1.0, 0.0))
    assert better.resolved_params["tree_epsilon"] > 2 * base.resolved_params["tree_epsilon"]


def test_losses_are_clipped_before_the_tree():
    ftrl = PrivateFTRL(2, 10, n=3, epsilon=math.inf, loss_range=(-1.0, 0.0))
    ftrl.update([[5.0, -7.0, -0.5]])
    np.testing.assert_allclose(ftrl.prefix, [[0.0, -1.0, -0.5]])


def test_horizon_and_parameters_are_enforced():
    ftrl = PrivateFTRL(2, 1, n=3, epsilon=1.0, loss_range=(-1.0, 0.0), rng=0)
    ftrl.update([[-1.0, 0.0, 0.0]])
    with pytest.raises(StreamLengthError):
        ftrl.update([[-1.0, 0.0, 0.0]])
    for kw in (dict(epsilon=0.0), dict(epsilon=1.0, noise="gaussian"),
               dict(epsilon=1.0, loss_range=(1.0, 0.0)), dict(epsilon=1.0, noise="cauchy")):
        with pytest.raises(DPSubmodError):
            PrivateFTRL(2, 10, n=3, **kw)
