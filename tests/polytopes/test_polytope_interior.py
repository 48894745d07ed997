"""Affine hulls, certified inner balls, shrinkage and sphere sampling."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from dpsubmod.constraints import PartitionMatroid, UniformMatroid
from dpsubmod.errors import ValidationError
from dpsubmod.polytopes import (
    Box,
    KnapsackPolytope,
    MatroidBasePolytope,
    MatroidPolytope,
    ShrunkPolytope,
    Simplex,
    SphereSampler,
    SubmodularBasePolytope,
    affine_hull,
    inner_ball,
    shrink,
    sphere_sampler,
    vertex_simplex_ball,
)
from oracles import MATROID_FAMILIES, ConcaveOfModular, all_masks, random_matroid


def _separable_submodular(rng, scale=1.0):
    """A submodular function that splits over {0, 1, 2} and {3, 4}: B(f) has dimension 3."""
    A = np.zeros((2, 5))
    A[0, :3] = rng.random(3) + 0.1
    A[1, 3:] = rng.random(2) + 0.1
    return ConcaveOfModular(A, scale * np.ones(2), scale * rng.normal(size=5), c=0.0)


def _polytopes():
    rng = np.random.default_rng(0)
    out = [
        Box([0.0, -1.0, 2.0, 0.0], [1.0, 1.0, 2.0, 3.0]),  # one degenerate coordinate
        Simplex(5, 2.0),
        Simplex(4, 1.5, full=False),
        KnapsackPolytope(rng.uniform(0.2, 1.0, 6), 1.2),
        SubmodularBasePolytope(_separable_submodular(rng)),
        SubmodularBasePolytope(_separable_submodular(rng, scale=1e-3)),  # tiny values
        SubmodularBasePolytope.cardinality_based(np.sqrt(np.arange(7.0))),
        MatroidBasePolytope(UniformMatroid(7, 3)),
        MatroidBasePolytope(PartitionMatroid([0, 0, 0, 1, 1, 2, 2], [2, 1, 0])),
        MatroidPolytope(PartitionMatroid([0, 0, 0, 1, 1, 2, 2], [2, 1, 0])),
    ]
    for family in MATROID_FAMILIES:
        m, _ = random_matroid(family, 6, rng)
        out += [MatroidPolytope(m), MatroidBasePolytope(m)]
    return out


POLYTOPES = _polytopes()
IDS = [repr(p)[:40] for p in POLYTOPES]


def _all_vertices(p):
    """Every vertex, enumerated independently of the oracle under test where possible."""
    if isinstance(p, Box):
        return np.array(list(itertools.product(*zip(p.lo, p.hi))))
    if isinstance(p, Simplex):
        V = p.scale * np.eye(p.dim)
        return V if p.full else np.vstack([V, np.zeros(p.dim)])
    if isinstance(p, (MatroidPolytope, MatroidBasePolytope)):
        masks = all_masks(p.dim)
        ind = np.array([p.matroid.is_independent(mk) for mk in masks])
        if isinstance(p, MatroidBasePolytope):
            ind &= masks.sum(axis=1) == p.matroid.rank
        return masks[ind].astype(float)
    if isinstance(p, SubmodularBasePolytope):
        V = []
        for perm in itertools.permutations(range(p.dim)):
            x, cur, prev = np.zeros(p.dim), np.zeros(p.dim, dtype=bool), 0.0
            for e in perm:
                cur[e] = True
                val = p.f._value(cur)
                x[e], prev = val - prev, val
            V.append(x)
        return np.array(V)
    rng = np.random.default_rng(1)
    return np.array([p.linear_max(rng.normal(size=p.dim)) for _ in range(300)])


@pytest.mark.parametrize("p", POLYTOPES, ids=IDS)
def test_affine_hull_matches_vertex_span(p):
    hull = affine_hull(p)
    V = _all_vertices(p)
    D = V - V[0]
    expected_dim = int(np.linalg.matrix_rank(D, tol=1e-8)) if len(V) > 1 else 0
    assert hull.dim == expected_dim
    assert np.allclose(hull.basis.T @ hull.basis, np.eye(hull.dim), atol=1e-10)
    assert hull.normals.shape == (p.dim, p.dim - hull.dim)
    assert np.abs(D @ hull.normals).max(initial=0.0) < 1e-8  # normals are constant on K
    assert np.abs(hull.normals.T @ (hull.point - V[0])).max(initial=0.0) < 1e-8
    assert p.contains(hull.point)


def _boundary_points(ball, count, seed):
    if ball.dim == 0:
        return ball.center[None, :]
    u = SphereSampler(ball.basis).sample(count, rng=seed)
    return ball.center + ball.radius * u


@pytest.mark.parametrize("p", POLYTOPES, ids=IDS)
def test_inner_ball_is_inside(p):
    for ball in (inner_ball(p), vertex_simplex_ball(p)):
        assert ball.radius > 0 if ball.dim else ball.radius == 0  # a single point: radius 0
        assert ball.dim == affine_hull(p).dim
        assert p.contains(ball.center)
        for x in _boundary_points(ball, 200, 0):
            assert p.contains(x, tol=1e-9)


def _push_out(p, ball, direction, factor=1.02):
    d = direction / np.linalg.norm(direction)
    return p.contains(ball.center + factor * ball.radius * d, tol=1e-12)


def test_closed_form_balls_are_tight():
    # A ball 2% larger leaves the polytope along the direction of its nearest facet: the
    # closed forms are the inradii, not loose bounds.
    box = Box([0.0, 0.0], [4.0, 1.0])
    assert not _push_out(box, inner_ball(box), np.array([0.0, 1.0]))
    for full in (True, False):
        s = Simplex(5, 2.0, full=full)
        d = -(np.eye(5)[0] - (0.2 if full else 0.0))
        assert not _push_out(s, inner_ball(s), d)
    for p in (MatroidBasePolytope(UniformMatroid(7, 3)),
              SubmodularBasePolytope.cardinality_based(np.sqrt(np.arange(7.0)))):
        n = p.dim
        g = np.minimum(np.arange(n + 1), 3.0) if isinstance(p, MatroidBasePolytope) else p.profile
        s = np.arange(1, n)
        k = int(s[np.argmin((g[1:n] - s * g[n] / n) / np.sqrt(s * (n - s) / n))])
        d = (np.arange(n) < k) - k / n
        assert not _push_out(p, inner_ball(p), d)
        assert _push_out(p, inner_ball(p), d, factor=0.98)


def test_single_point_polytope():
    p = MatroidBasePolytope(UniformMatroid(4, 4))
    ball = inner_ball(p)
    assert ball.dim == 0 and ball.radius == 0.0
    assert np.array_equal(ball.center, np.ones(4))
    with pytest.raises(ValidationError, match="single point"):
        sphere_sampler(p)


@pytest.mark.parametrize("p", POLYTOPES, ids=IDS)
def test_shrinkage_keeps_points_feasible_with_margin(p):
    rng = np.random.default_rng(2)
    ball = inner_ball(p)
    if ball.dim == 0:  # a single point: shrinking towards it is the identity on K
        assert np.allclose(shrink(p.linear_max(rng.normal(size=p.dim)), 0.5, ball.center),
                           ball.center)
        return
    V = np.array([p.linear_max(rng.normal(size=p.dim)) for _ in range(8)])
    sampler = SphereSampler(ball.basis)
    for _ in range(10):
        x = rng.dirichlet(np.ones(len(V))) @ V
        alpha = float(rng.uniform(0.05, 1.0))
        y = shrink(x, alpha, ball.center)
        assert p.contains(y)
        # The shrunk point keeps a relative ball of radius alpha * r inside the polytope.
        for u in sampler.sample(10, rng=rng):
            assert p.contains(y + alpha * ball.radius * u, tol=1e-9)
    K = ShrunkPolytope(p, 0.3)
    for _ in range(5):
        v = K.linear_max(rng.normal(size=p.dim))
        assert K.contains(v) and p.contains(v)
        assert p.contains(v + 0.3 * ball.radius * sampler.sample(rng=rng), tol=1e-9)
    kb = inner_ball(K)
    assert all(K.contains(z) for z in _boundary_points(kb, 50, 3))


def test_shrink_validates():
    with pytest.raises(ValidationError, match="'alpha'"):
        shrink(np.zeros(3), 1.5, np.ones(3))
    with pytest.raises(ValidationError, match="'x'"):
        shrink(np.zeros(2), 0.5, np.ones(3))
    with pytest.raises(ValidationError, match="'center'"):
        ShrunkPolytope(Simplex(3), 0.5, center=[1.0, 1.0, 1.0])


SPHERE_CASES = [
    MatroidBasePolytope(UniformMatroid(7, 3)),  # affine hull normal: 1
    MatroidBasePolytope(PartitionMatroid([0, 0, 0, 1, 1, 2, 2], [2, 1, 2])),  # 3 normals
    Box(0.0, 1.0, dim=4),  # full-dimensional
]


@pytest.mark.parametrize("p", SPHERE_CASES, ids=[repr(p)[:40] for p in SPHERE_CASES])
def test_sphere_samples_lie_in_hull_directions_and_are_uniform(p):
    hull = affine_hull(p)
    sampler = sphere_sampler(p)
    assert sampler.dim == hull.dim and sampler.ambient_dim == p.dim
    N = 20_000
    U = sampler.sample(N, rng=123)
    assert U.shape == (N, p.dim)
    assert np.allclose(np.linalg.norm(U, axis=1), 1.0)
    assert np.abs(U @ hull.normals).max(initial=0.0) < 1e-12
    # Uniformity on S^{d-1}: for a fixed unit a, (1 + <a, z>) / 2 ~ Beta((d-1)/2, (d-1)/2).
    # Kolmogorov-Smirnov on one coordinate axis and one diagonal of the hull's basis; each test
    # has false-alarm rate 1e-3 (the two together at most 2e-3).
    d = hull.dim
    Z = U @ hull.basis
    for a in (np.eye(d)[0], np.ones(d) / math.sqrt(d)):
        t = (1 + Z @ a) / 2
        assert stats.kstest(t, stats.beta((d - 1) / 2, (d - 1) / 2).cdf).pvalue > 1e-3
    # Second moments: E[u u^T] = P / d with P the projection on the hull's directions. Each
    # entry is a mean of N terms bounded by 1 in absolute value, so 6 / sqrt(N) is > 6 standard
    # deviations (false-alarm rate < 1e-6 per entry by Hoeffding: 2 exp(-18)).
    M = U.T @ U / N
    assert np.abs(M - hull.basis @ hull.basis.T / d).max() < 6 / math.sqrt(N)


def test_sphere_sampler_checks_basis_and_seeds():
    with pytest.raises(ValidationError, match="orthonormal"):
        SphereSampler(np.ones((3, 2)))
    s = SphereSampler(np.eye(3)[:, :2])
    assert np.array_equal(s.sample(5, rng=4), s.sample(5, rng=4))
    assert s.sample(rng=0).shape == (3,)
