"""Plain-numpy floors of the online learners' rounds (``bench_online.py``).

Each floor plays the same round as its learner (same draws per round, same arithmetic, same
function family), with no validation, no ledger, no protocol bookkeeping and with state kept in
bare arrays; it evaluates the played set (bandit learners) with the set function's public call,
as the benchmark's environment does. ``floor(n, env, learner)`` returns ``round(t)``; the learner
(built, not played) supplies only its resolved public parameters (rates, H, K, noise scales).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import scipy.sparse as sp


def gumbel(gen: np.random.Generator, size: int | tuple[int, ...]) -> np.ndarray:
    """Standard Gumbel variates as ``-log E``, ``E ~ Exp(1)`` (one exponential draw each)."""
    return -np.log(gen.standard_exponential(size))


def distinct_draw(S: np.ndarray, eta: float, gen: np.random.Generator) -> list[int]:
    """``k`` distinct Gumbel-max draws, expert ``i`` over the items experts ``0..i-1`` left."""
    k, n = S.shape
    g = gumbel(gen, (k, n))
    taken = np.zeros(n, dtype=bool)
    a = []
    for i in range(k):
        z = eta * S[i] + g[i]
        z[taken] = -np.inf
        e = int(np.argmax(z))
        taken[e] = True
        a.append(e)
    return a


def kl_capped(Z: np.ndarray, k: int) -> np.ndarray:
    """Rows of ``log y`` onto {0 <= x <= 1, sum x <= k} in generalized KL: ``min(1, theta y)``
    with the largest ``theta <= 1`` that fits; ``theta`` from the top ``k`` entries (exact)."""
    X = np.exp(np.minimum(Z, 0.0))
    need = np.flatnonzero(X.sum(axis=1) > k)
    if not need.size:
        return X
    Zr = Z[need]
    idx = np.argpartition(Zr, Zr.shape[1] - k, axis=1)[:, -k:]
    top = -np.sort(-np.take_along_axis(Zr, idx, axis=1), axis=1)
    m = top[:, :1]
    rest = np.exp(Zr - m)
    np.put_along_axis(rest, idx, 0.0, axis=1)
    with np.errstate(divide="ignore"):
        lrest = np.log(rest.sum(axis=1, keepdims=True)) + m
    # log of the sum of every entry below the c largest, c = 0..k-1 (no cancellation)
    tails = np.logaddexp.accumulate(np.concatenate([lrest, top[:, ::-1]], axis=1),
                                    axis=1)[:, :0:-1]
    s = np.log(k - np.arange(k))[None, :] - tails  # the shift with c entries capped at 1
    ok = top + s <= 1e-12
    ok[:, 1:] &= top[:, :-1] + s[:, 1:] >= -1e-12
    shift = s[np.arange(need.size), np.argmax(ok, axis=1)]
    X[need] = np.exp(np.minimum(Zr + shift[:, None], 0.0))
    return X


class Tree:
    """Binary-mechanism prefix sums of ``copies`` streams of vectors, node noise l2-Laplace
    (``gamma(n) * direction``) or Laplace per coordinate."""

    def __init__(self, copies: int, n: int, T: int, scale: float, gen: np.random.Generator,
                 noise: str = "l2laplace"):
        self.L = max(1, int(T).bit_length())
        self.open = np.zeros((copies, self.L, n))
        self.done = np.zeros((copies, self.L, n))
        self.t, self.n, self.scale, self.gen, self.noise = 0, n, scale, gen, noise

    def update(self, Z: np.ndarray) -> np.ndarray:
        self.t += 1
        t = self.t
        self.open += Z[:, None, :]
        top = (t & -t).bit_length() - 1
        if self.noise == "laplace":
            eta = self.gen.laplace(0.0, self.scale, Z.shape)
        else:
            u = self.gen.standard_normal(Z.shape)
            r = self.gen.gamma(self.n, self.scale, size=Z.shape[0])
            eta = (r / np.linalg.norm(u, axis=1))[:, None] * u
        self.done[:, top] = self.open[:, top] + eta
        self.open[:, :top + 1] = 0.0
        bits = [h for h in range(self.L) if (t >> h) & 1]
        return self.done[:, bits].sum(axis=1)


# -- minimization: chains of the three streams -----------------------------------------------
def _chain_min(parts: tuple, order: np.ndarray) -> np.ndarray:
    """The benchmark stream's ``c(S) + lam * sqrt(F(S)) . v`` along ``order`` (running sums of
    the modular and feature terms)."""
    c, F, v, lam = parts
    vals = np.zeros(order.size + 1)
    np.cumsum(c[order], out=vals[1:])
    vals[1:] += lam * (np.sqrt(np.cumsum(F[order], axis=0)) @ v)
    return vals


def _chain_cut(parts: tuple, order: np.ndarray) -> np.ndarray:
    """Graph cut plus modular along ``order``: an edge enters the cut when its first endpoint
    is added and leaves it with its second."""
    eu, ev, ew, c = parts
    n = order.size
    pos = np.empty(n, dtype=np.intp)
    pos[order] = np.arange(n)
    a, b = pos[eu], pos[ev]
    step = np.bincount(np.minimum(a, b), ew, n) - np.bincount(np.maximum(a, b), ew, n)
    vals = np.zeros(n + 1)
    np.cumsum(c[order] + step, out=vals[1:])
    return vals


def _chain_fl(parts: tuple, order: np.ndarray) -> np.ndarray:
    """Facility location plus modular along ``order``: the clients' running best similarity."""
    S, w, c = parts
    vals = np.zeros(order.size + 1)
    np.cumsum(c[order], out=vals[1:])
    vals[1:] += w @ np.maximum.accumulate(S[:, order], axis=1)
    return vals


def _stream(env, stream: str) -> tuple[Callable, list[tuple]]:
    if stream == "min":
        return _chain_min, [(f.functions[0].weights, f.functions[1].f.features,
                             f.functions[1].f.weights, float(f.functions[1].c))
                            for f in env.min_fs]
    if stream == "cut":
        parts = []
        for f in env.cut_fs:
            up = sp.triu(f.functions[0].adjacency, 1).tocoo()
            parts.append((up.row, up.col, up.data, f.functions[1].weights))
        return _chain_cut, parts
    return _chain_fl, [(f.functions[0].similarity, f.functions[0].weights,
                        f.functions[1].weights) for f in env.fl_fs]


def _chain_gradient(chain: Callable, parts: tuple, x: np.ndarray) -> np.ndarray:
    """Chain subgradient at ``x``: the chain's values along ``x`` sorted down, differenced."""
    order = np.argsort(-x, kind="stable")
    g = np.empty(x.size)
    g[order] = np.diff(chain(parts, order))
    return g


def _pftal_tree(learner, n: int, T: int) -> tuple[np.random.Generator, Tree]:
    """The floor's generator and its own l2-Laplace tree at the scale the (reset) PFTAL
    learner calibrated, for the two PFTAL floors."""
    learner.reset()
    gen = np.random.default_rng(1)
    return gen, Tree(1, n, T, float(learner._oco._tree.scale), gen)


def floor_submod_pftal(n: int, env, learner, stream: str = "min") -> Callable[[int], None]:
    """SubmodPFTAL: threshold rounding; chain subgradient, clipped; regularised towards the
    centre; tree-aggregated l2-Laplace prefix sum; FTAL step onto the cube."""
    p = learner.resolved_params
    H, centre, clip, T = p["H"], p["centre"], p["gradient_clip"], learner.T
    gen, tree = _pftal_tree(learner, n, T)
    chain, parts = _stream(env, stream)
    x = centre.copy()
    xsum = np.zeros(n)

    def round_(t: int) -> None:
        nonlocal x
        _ = x >= 1.0 - gen.random()
        g = _chain_gradient(chain, parts[t % len(parts)], x)
        nrm = float(np.linalg.norm(g))
        if nrm > clip:
            g *= clip / nrm
        xsum[:] += x
        v = tree.update((g + H * (x - centre))[None, :])[0]
        x = np.clip(xsum / tree.t - v / (tree.t * H), 0.0, 1.0)

    return round_


def floor_hazan_kale(n: int, env, learner, stream: str = "min") -> Callable[[int], None]:
    """Hazan-Kale: threshold rounding; chain subgradient; projected step onto the cube."""
    eta = learner.resolved_params["eta"]
    gen = np.random.default_rng(1)
    chain, parts = _stream(env, stream)
    x = np.full(n, 0.5)

    def round_(t: int) -> None:
        nonlocal x
        _ = x >= 1.0 - gen.random()
        x = np.clip(x - eta * _chain_gradient(chain, parts[t % len(parts)], x), 0.0, 1.0)

    return round_


def _one_point(x: np.ndarray, gamma: float, gen: np.random.Generator, f) -> np.ndarray:
    """One bandit round on the chain of ``x``: the exploration draw, the played chain set's
    value (the environment's evaluation), the corrected one-point estimate."""
    n = x.size
    order = np.argsort(-x, kind="stable")
    xs = x[order]
    mu = np.empty(n + 1)
    mu[0] = 1.0 - xs[0]
    mu[1:-1] = xs[:-1] - xs[1:]
    mu[-1] = xs[-1]
    rho = (1.0 - gamma) * mu + gamma / (n + 1)
    u, v = gen.random(2)
    c = np.cumsum(rho)
    k = int(min(np.searchsorted(c / c[-1], u, side="right"), n))
    mask = np.zeros(n, dtype=bool)
    mask[order[:k]] = True
    y = float(f(mask))
    g = np.zeros(n)
    if k == 0:
        g[order[0]] = -y / rho[0]
    elif k == n:
        g[order[n - 1]] = y / rho[n]
    elif v < 0.5:
        g[order[k - 1]] = 2.0 * y / rho[k]
    else:
        g[order[k]] = -2.0 * y / rho[k]
    return g


def floor_bandit_hazan_kale(n: int, env, learner) -> Callable[[int], None]:
    """BanditHazanKale: one-point round on the chain; projected step onto the cube."""
    p = learner.resolved_params
    eta, gamma = p["eta"], p["gamma"]
    gen = np.random.default_rng(1)
    fs = env.min_fs
    x = np.zeros(n)

    def round_(t: int) -> None:
        nonlocal x
        x = np.clip(x - eta * _one_point(x, gamma, gen, fs[t % len(fs)]), 0.0, 1.0)

    return round_


def floor_bandit_submod_pftal(n: int, env, learner) -> Callable[[int], None]:
    """BanditSubmodPFTAL: one-point round on the chain, value clipped to [-M, M]; ``g + H x``
    into the tree-aggregated l2-Laplace prefix sum; FTAL step onto the cube."""
    p = learner.resolved_params
    H, gamma, M, T = p["H"], p["gamma"], p["M"], learner.T
    gen, tree = _pftal_tree(learner, n, T)
    fs = [lambda S, f=f: min(max(float(f(S)), -M), M) for f in env.min_fs]
    x = np.zeros(n)
    xsum = np.zeros(n)

    def round_(t: int) -> None:
        nonlocal x
        g = _one_point(x, gamma, gen, fs[t % len(fs)])
        xsum[:] += x
        v = tree.update((g + H * x)[None, :])[0]
        x = np.clip(xsum / tree.t - v / (tree.t * H), 0.0, 1.0)

    return round_


# -- experts ---------------------------------------------------------------------------------
def floor_hedge(n: int, env, learner) -> Callable[[int], None]:
    """Hedge: one Gumbel-max draw over the scaled cumulative gains; add the clipped gains."""
    eta = float(learner.eta)
    gen = np.random.default_rng(1)
    G = np.zeros(n)
    vecs = env.vecs

    def round_(t: int) -> None:
        int(np.argmax(eta * G + gumbel(gen, n)))
        G[:] += np.clip(vecs[t % len(vecs)], 0.0, 1.0)

    return round_


def floor_private_ftrl(n: int, env, learner) -> Callable[[int], None]:
    """PrivateFTRL (entropic, uniform-matroid polytope): the exact KL projection of the noisy
    loss sum; the clipped losses into a Laplace tree."""
    p = learner.resolved_params
    eta, k = p["eta"], int(learner.region)
    learner.reset()
    gen = np.random.default_rng(1)
    tree = Tree(1, n, learner.T, float(learner._tree.scale), gen, noise="laplace")
    lo, hi = learner.loss_range
    Lsum = np.zeros((1, n))
    vecs = env.vecs

    def round_(t: int) -> None:
        nonlocal Lsum
        kl_capped(-1.0 - eta * Lsum, k)
        Lsum = tree.update(np.clip(vecs[t % len(vecs)], lo, hi)[None, :])

    return round_


# -- bandit convex optimization over full-dimensional polytopes (identity hull basis) ---------
class _Spheres:
    """Unit vectors of R^n, ``block`` at a time (normal draws, normalised)."""

    def __init__(self, n: int, gen: np.random.Generator):
        self.n, self.gen, self.u, self.i = n, gen, np.zeros((0, n)), 0

    def next(self, block: int) -> np.ndarray:
        if self.i >= self.u.shape[0]:
            z = self.gen.standard_normal((block, self.n))
            self.u = z / np.linalg.norm(z, axis=1)[:, None]
            self.i = 0
        self.i += 1
        return self.u[self.i - 1]


def _top_k_vertex(w: np.ndarray, k: int) -> np.ndarray:
    """The uniform-matroid polytope's vertex maximising ``<w, x>``: the ``k`` largest positive
    entries."""
    idx = np.argpartition(-w, k)[:k]
    v = np.zeros(w.size)
    v[idx[w[idx] > 0]] = 1.0
    return v


def floor_garber_kretzu(n: int, env, learner) -> Callable[[int], None]:
    """GarberKretzu (extend mode): play ``c + zeta u``, accumulate ``(d / zeta) y u`` over a
    block; at its end, Frank-Wolfe with line search on ``|x - (c - eta g)|^2 / 2`` from ``c``
    until the gap is at most the tolerance (or the step cap)."""
    p = learner.resolved_params
    eta, zeta, block, tol, cap = p["eta"], p["zeta"], p["block"], p["fw_tol"], p["fw_max_steps"]
    k = int(learner.polytope.matroid.k)
    scale = p["dim"] / zeta
    spheres = _Spheres(n, np.random.default_rng(1))
    centre = learner._resolved["geometry"].center.copy()
    g = np.zeros(n)
    in_block = 0
    thetas = env.thetas

    def round_(t: int) -> None:
        nonlocal centre, g, in_block
        u = spheres.next(block)
        y = float(thetas[t % len(thetas)] @ (centre + zeta * u))
        g += (scale * y) * u
        in_block += 1
        if in_block == block:
            target = centre - eta * g
            x = centre.copy()
            for _ in range(cap):
                grad = x - target
                d = _top_k_vertex(-grad, k) - x
                gap = float(-(grad @ d))
                if gap <= tol:
                    break
                dd = float(d @ d)
                x += (1.0 if dd <= 0.0 else min(1.0, gap / dd)) * d
            centre, g, in_block = x, np.zeros(n), 0

    return round_


def floor_private_bandit(n: int, env, learner) -> Callable[[int], None]:
    """PrivateBandit (extend mode): play ``c_R + zeta u``, accumulate ``(d / zeta) y u`` (``y``
    clipped to the declared range) over a batch; at its end, the regularised response
    (``fw_steps`` Frank-Wolfe steps with line search from ``c_R``) on the last released sum,
    and the batch's sum into a Laplace tree."""
    p = learner.resolved_params
    eta, zeta, batch, steps = p["eta"], p["zeta"], p["T_batch"], p["fw_steps"]
    sign = p["line14_sign"]
    lo, hi = (0.0 if p["nonnegative"] else -p["bound"]), p["bound"]
    k = int(learner.polytope.matroid.k)
    scale = p["dim"] / zeta
    learner.reset()
    gen = np.random.default_rng(1)
    tree = Tree(1, n, p["T_round"], float(learner._tree.scale), gen, noise="laplace")
    spheres = _Spheres(n, gen)
    c0 = learner._resolved["geometry"].center
    centre = c0.copy()
    s_prev = np.zeros(n)
    g = np.zeros(n)
    in_batch = 0
    thetas = env.thetas

    def round_(t: int) -> None:
        nonlocal centre, s_prev, g, in_batch
        u = spheres.next(batch)
        y = float(thetas[t % len(thetas)] @ (centre + zeta * u))
        g += (scale * min(max(y, lo), hi)) * u
        in_batch += 1
        if in_batch == batch:
            shift = sign * eta * s_prev - c0
            x = centre.copy()
            for _ in range(steps):
                grad = x + shift
                d = _top_k_vertex(-grad, k) - x
                gap = float(-(grad @ d))
                if gap <= 0.0:
                    break
                dd = float(d @ d)
                x += (1.0 if dd <= 0.0 else min(1.0, gap / dd)) * d
            s_prev = tree.update(g[None, :])[0]
            centre, g, in_batch = x, np.zeros(n), 0

    return round_


def floor_flaxman_kalai_mcmahan(n: int, env, learner) -> Callable[[int], None]:
    """FlaxmanKalaiMcMahan on the box [0, 1]^n (extend mode): play ``x + zeta u`` (sphere
    vectors 1024 at a time), step ``x - eta (d / zeta) y u``, clip to the box."""
    p = learner.resolved_params
    eta, zeta = p["eta"], p["zeta"]
    step = eta * p["dim"] / zeta
    lo, hi = learner.polytope.lo, learner.polytope.hi
    spheres = _Spheres(n, np.random.default_rng(1))
    x = learner._resolved["geometry"].center.copy()
    thetas = env.thetas

    def round_(t: int) -> None:
        nonlocal x
        u = spheres.next(1024)
        y = float(thetas[t % len(thetas)] @ (x + zeta * u))
        x = np.minimum(np.maximum(x - (step * y) * u, lo), hi)

    return round_
