"""Plain-numpy floors of the online maximization learners' rounds (``bench_online.py``): the
coverage state, pipage rounding, the Frank-Wolfe path and its projections, as
``_online_floors.py`` states for every floor."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from _online_floors import Tree, distinct_draw, kl_capped


# -- coverage, pipage, projections ------------------------------------------------------------
def _coverage_parts(f) -> tuple:
    A = f.incidence
    csc = A.tocsc()
    return (A.indptr, A.indices, csc.indptr, csc.indices, f.element_weights,
            A @ f.element_weights, A)


def _cover_add(parts: tuple, cache: np.ndarray, covered: np.ndarray, e: int) -> None:
    """Add set ``e``: subtract the newly covered elements' weights from the sets holding them."""
    ip, ix, cp, cx, w = parts[:5]
    elems = ix[ip[e]:ip[e + 1]]
    new = elems[~covered[elems]]
    if new.size:
        lens = cp[new + 1] - cp[new]
        rows = np.concatenate([cx[cp[u]:cp[u + 1]] for u in new.tolist()])
        cache -= np.bincount(rows, weights=np.repeat(w[new], lens), minlength=cache.size)
        np.maximum(cache, 0.0, out=cache)
        covered[new] = True
    cache[e] = 0.0


def _pipage(x: np.ndarray, cap: float, gen: np.random.Generator) -> np.ndarray:
    """Randomized pipage rounding of ``x`` (unit costs, sum ``cap``): the sequential walk on
    Python floats, one uniform per step."""
    eps = 1e-12
    y = np.clip(x, 0.0, 1.0)
    y[y < eps] = 0.0
    y[y > 1 - eps] = 1.0
    frac = np.flatnonzero((y > 0) & (y < 1)).tolist()
    y = y.tolist()
    u = gen.random(len(frac)).tolist()
    used = 0
    carry = None
    for j in frac:
        if carry is None:
            carry = j
            continue
        i = carry
        yi, yj = y[i], y[j]
        up = 1 - yi if 1 - yi <= yj else yj
        down = yi if yi <= 1 - yj else 1 - yj
        t = up if u[used] < down / (up + down) else -down
        used += 1
        yi += t
        yj -= t
        yi = 0.0 if yi < eps else (1.0 if yi > 1 - eps else yi)
        yj = 0.0 if yj < eps else (1.0 if yj > 1 - eps else yj)
        y[i], y[j] = yi, yj
        carry = i if 0.0 < yi < 1.0 else (j if 0.0 < yj < 1.0 else None)
    chosen = [j for j, v in enumerate(y) if v == 1.0]
    if carry is not None and len(chosen) + 1 <= cap and u[used] < y[carry]:
        chosen.append(carry)
    return np.asarray(chosen)


def _coverage_gradients(A, w: np.ndarray, X: np.ndarray) -> np.ndarray:
    """Multilinear gradients of coverage at the rows of ``X`` (points in [0, 1), as the
    Frank-Wolfe paths are after their clip, plus the x = 1 case)."""
    one = X >= 1.0
    log1m = np.zeros_like(X)
    log1m[~one] = np.log1p(-X[~one])
    AT = A.T
    P = np.exp(AT @ log1m.T) * w[:, None]
    if not one.any():
        return (A @ P).T * np.exp(-log1m)
    z = AT @ one.T.astype(np.float64)
    g = (A @ np.where(z < 0.5, P, 0.0)).T * np.exp(-log1m)
    return np.where(one, (A @ np.where((z > 0.5) & (z < 1.5), P, 0.0)).T, g)


def _project_capped(Y: np.ndarray, k: float) -> np.ndarray:
    """Rows onto {0 <= x <= 1, sum x <= k}: vectorised bisection, then the exact multiplier of
    the piece at the upper end, accepted once it lies on that piece."""
    out = np.clip(Y, 0.0, 1.0)
    need = np.flatnonzero(out.sum(axis=1) > k)
    if not need.size:
        return out
    Yt = Y[need]
    lo, hi = np.zeros(need.size), Yt.max(axis=1)
    lam = hi.copy()
    left = np.ones(need.size, dtype=bool)
    for step in range(100):
        mid = 0.5 * (lo + hi)
        over = np.clip(Yt - mid[:, None], 0.0, 1.0).sum(axis=1) > k
        lo, hi = np.where(over, mid, lo), np.where(over, hi, mid)
        if step % 4 == 3:
            Z = Yt - hi[:, None]
            free, sat = (Z > 0) & (Z < 1), Z >= 1
            with np.errstate(divide="ignore", invalid="ignore"):
                c = ((Yt * free).sum(axis=1) + sat.sum(axis=1) - k) / free.sum(axis=1)
            Zc = Yt - c[:, None]
            ok = left & np.isfinite(c) & (((Zc > 0) & (Zc < 1)) == free).all(axis=1) \
                & ((Zc >= 1) == sat).all(axis=1)
            lam[ok] = c[ok]
            left &= ~ok
            if not left.any():
                break
    lam[left] = hi[left]
    out[need] = np.clip(Yt - lam[:, None], 0.0, 1.0)
    return out


def _fw_path(V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    Kc = V.shape[0]
    path = np.zeros_like(V)
    path[1:] = np.cumsum(V[:-1], axis=0) / Kc
    return np.clip(path, 0.0, 1.0), V.sum(axis=0) / Kc


def floor_fidp(n: int, env, learner) -> Callable[[int], None]:
    """FIDP and OnlineGreedy: k Hedge experts; k distinct Gumbel-max draws, then the gain
    vectors of the coverage greedy path (incremental state; the last item's push feeds no
    one), clipped, added to the experts' sums."""
    eta, k = learner.resolved_params["eta"], int(learner.k)
    gen = np.random.default_rng(1)
    S = np.zeros((k, n))
    parts = [_coverage_parts(f) for f in env.max_fs]
    pool, m = len(parts), env.max_fs[0].n_elements

    def round_(t: int) -> None:
        p = parts[t % pool]
        a = distinct_draw(S, eta, gen)
        cache, covered = p[5].copy(), np.zeros(m, dtype=bool)
        G = np.empty((k, n))
        for i, e in enumerate(a):
            G[i] = cache
            if i + 1 < k:
                _cover_add(p, cache, covered, e)
        S[:] += np.clip(G, 0.0, 1.0)

    return round_


def floor_bandit_experts(n: int, env, learner) -> Callable[[int], None]:
    """BanditDP (the experts redraw after an exploration) and BanditOnlineGreedy (they redraw
    every round): one uniform for the explore test; exploring, a uniform expert ``i`` and item
    ``e``, play ``a[:i] + e``, add the clipped value to expert ``i`` at ``e``; else play ``a``.
    The environment evaluates the played set."""
    p = learner.resolved_params
    eta, gamma, k = p["eta"], p["gamma"], int(learner.k)
    every_round = type(learner).__name__ in ("NaiveBanditDP", "BanditOnlineGreedy")
    gen = np.random.default_rng(1)
    S = np.zeros((k, n))
    fs = env.max_fs
    a = distinct_draw(S, eta, gen)

    def round_(t: int) -> None:
        nonlocal a
        if every_round:
            a = distinct_draw(S, eta, gen)
        explore = gen.random() < gamma
        played = np.zeros(n, dtype=bool)
        if explore:
            i, e = int(gen.integers(k)), int(gen.integers(n))
            played[a[:i]] = True
            played[e] = True
        else:
            played[a] = True
        y = float(fs[t % len(fs)](played))
        if explore:
            S[i, e] += min(max(y, 0.0), 1.0)
            if not every_round:
                a = distinct_draw(S, eta, gen)

    return round_


def _played_gradients(V: np.ndarray, k: int, gen: np.random.Generator, fs: list, t: int,
                      hi: float) -> np.ndarray:
    """The Meta-Frank-Wolfe round shared by the three floors: the Frank-Wolfe path of the
    copies' points, pipage rounding of the played point, and the K coverage gradients along the
    path on round ``t``'s function, clipped to ``[0, hi]``."""
    path, x = _fw_path(V)
    _pipage(x, k, gen)
    A, w = fs[t % len(fs)]
    return np.clip(_coverage_gradients(A, w, path), 0.0, hi)


def floor_meta_frank_wolfe(n: int, env, learner) -> Callable[[int], None]:
    """MetaFrankWolfe (online gradient ascent oracles): the Frank-Wolfe path, pipage rounding
    of the played point, the K coverage gradients, one batched projection."""
    p = learner.resolved_params
    step, Kc, k = p["step"], p["K"], int(learner.constraint)
    gen = np.random.default_rng(1)
    V = np.zeros((Kc, n))
    fs = [(f.incidence, f.element_weights) for f in env.max_fs]

    def round_(t: int) -> None:
        nonlocal V
        G = _played_gradients(V, k, gen, fs, t, 1.0)
        V = _project_capped(V + step * G, k)

    return round_


def floor_dp_meta_frank_wolfe(n: int, env, learner) -> Callable[[int], None]:
    """DPMetaFrankWolfe: K entropic FTRL copies over the capped simplex (exact KL projection of
    the noisy loss sums), path, pipage, K coverage gradients, one Laplace tree of dimension
    K n fed the clipped losses."""
    p = learner.resolved_params
    eta, Kc, k, bound = p["eta"], p["K"], int(learner.constraint), float(learner.bound)
    learner.reset()
    scale = float(learner._ftrl._tree.scale)
    gen = np.random.default_rng(1)
    tree = Tree(1, Kc * n, learner.T, scale, gen, noise="laplace")
    Lsum = np.zeros((Kc, n))
    fs = [(f.incidence, f.element_weights) for f in env.max_fs]

    def round_(t: int) -> None:
        nonlocal Lsum
        V = kl_capped(-1.0 - eta * Lsum, k)
        G = _played_gradients(V, k, gen, fs, t, bound)
        Lsum = tree.update(np.clip(-G, -bound, 0.0).reshape(1, -1))[0].reshape(Kc, n)

    return round_


def floor_pftal_meta_frank_wolfe(n: int, env, learner) -> Callable[[int], None]:
    """PFTALMetaFrankWolfe: K PFTAL copies (tree-aggregated l2-Laplace prefix sums of the
    regularised gradients, FTAL step), projected in one batched call; path, pipage, K coverage
    gradients as in MetaFrankWolfe."""
    p = learner.resolved_params
    H, Kc, T, k = p["H"], p["K"], learner.T, int(learner.constraint)
    learner.reset()
    scale = float(learner._copies[0]._tree.scale)
    gen = np.random.default_rng(1)
    tree = Tree(Kc, n, T, scale, gen)
    V = np.zeros((Kc, n))
    Xsum = np.zeros((Kc, n))
    fs = [(f.incidence, f.element_weights) for f in env.max_fs]

    def round_(t: int) -> None:
        nonlocal V
        G = _played_gradients(V, k, gen, fs, t, 1.0)
        Xsum[:] += V
        prefix = tree.update(-G + H * V)
        V = _project_capped(Xsum / tree.t - prefix / (tree.t * H), k)

    return round_
