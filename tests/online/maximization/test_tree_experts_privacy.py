r"""Privacy of :class:`PrivateTreeExperts`, checked exactly on tiny neighbouring streams.

Neighbouring relation: streams differing in one round's function. The learner's only
data-dependent releases are the nodes of its tree-aggregation counter; the played sets are
post-processing of them (and of public randomness). Two exact checks:

* **The node releases.** Given the same released history, neighbouring streams feed the counter
  the same item in every round but the changed one, so each released node is a Gaussian
  (Laplace) mechanism whose mean moves by the changed round's item difference when the node
  contains that round, and not at all otherwise. The test records, from the learner's own
  counter, every released node and the exact (noise-free) sum it was released around, on both
  streams with the played sets forced equal (all orders of play enumerated), and computes the
  exact privacy loss of the joint release: for Gaussian noise the hockey-stick divergence of
  the Gaussian mechanism of l2 sensitivity :math:`\sqrt{\sum_\text{nodes}\|\Delta\|_2^2}`
  (adaptive composition of Gaussian mechanisms is exactly a Gaussian mechanism of the
  root-sum-square sensitivity, Dong, Roth and Su 2022), for Laplace noise the largest density
  ratio :math:`\sum_\text{nodes}\|\Delta\|_1 / b`. The control is the learner with half the
  sensitivity declared (half the noise): caught.
* **The played sets.** For ``n = 2``, ``k = 1``, ``T = 3`` the law of the three played
  elements is a two-dimensional Gaussian integral (Gauss-Hermite quadrature, error below
  1e-12): it is checked with :func:`~dpsubmod.privacy.audit.exact_check` and validated against
  the learner's own runs (chi-square). Post-processing loses most of the privacy loss here (a
  softmax of one noisy difference sees one node, not all of them), so this law cannot catch the
  half-noise control; the node check above does.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.special import expit
from scipy.stats import norm

from dpsubmod.functions import Modular
from dpsubmod.online import PrivateTreeExperts
from dpsubmod.privacy.audit import exact_check
from oracles import law_pvalue

EPS, DELTA = 1.0, 1e-6


class _HalfNoise(PrivateTreeExperts):
    """Control: declares half the gain matrix's sensitivity, so the counter adds half the
    noise the privacy claim needs."""

    def _sensitivity(self) -> float:
        return 0.5 * super()._sensitivity()


class _Forced(PrivateTreeExperts):
    """Plays a given sequence of ordered tuples (one per round) and records every node the
    counter releases with its exact sum."""

    plays: list[tuple[int, ...]] = []

    def _reset(self) -> None:
        super()._reset()
        self.released: dict[tuple[int, int], np.ndarray] = {}
        release = self._tree._release

        def record(level, index, exact):
            self.released[(level, index)] = np.array(exact, dtype=float)
            return release(level, index, exact)

        self._tree._release = record

    def _select(self) -> np.ndarray:
        a = type(self).plays[self._round]
        self._a[:] = a
        mask = np.zeros(int(self.n), dtype=bool)
        mask[list(a)] = True
        return mask


def _node_differences(cls, stream, stream2, n, k, plays, **kw):
    """Per released node, the difference of the exact sums on the two streams, the plays
    forced equal; and the learner's node-noise scale."""
    out = []
    for s in (stream, stream2):
        forced = type("F", (_Forced, cls), {"plays": plays})
        learner = forced(n, len(stream), k, epsilon=EPS, rng=0, **kw)
        for f in s:
            learner.select()
            learner.update(f)
        out.append(learner.released)
    assert out[0].keys() == out[1].keys()
    return [out[0][key] - out[1][key] for key in out[0]], learner.resolved_params["scale"]


def _gaussian_delta(mu: float, eps: float) -> float:
    """Exact hockey-stick divergence of the Gaussian mechanism with sensitivity / sigma = mu."""
    if mu == 0.0:
        return 0.0
    return float(norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * norm.cdf(-eps / mu - mu / 2))


def _worst_loss(cls, n, k, T, changed, noise):
    """Worst privacy loss of the node releases over all forced plays: Gaussian -> delta at EPS,
    Laplace -> the largest log density ratio. Round ``changed`` is ``Modular(1, .., 1)`` on one
    stream and the zero function on the other (every fed gain moves by 1, except an expert's
    own earlier picks)."""
    fill = [Modular(np.linspace(0.2, 0.6, n))] * T
    D = list(fill)
    D2 = list(fill)
    D[changed], D2[changed] = Modular(np.ones(n)), Modular(np.zeros(n))
    kw = {"delta": DELTA} if noise == "gaussian" else {"noise": "laplace"}
    worst = 0.0
    tuples = list(itertools.permutations(range(n), k))
    for plays in itertools.product(tuples, repeat=T):
        diffs, scale = _node_differences(cls, D, D2, n, k, list(plays), **kw)
        if noise == "gaussian":
            mu = math.sqrt(sum(float(d @ d) for d in diffs)) / scale
            worst = max(worst, _gaussian_delta(mu, EPS))
        else:
            worst = max(worst, sum(float(np.abs(d).sum()) for d in diffs) / scale)
    return worst


@pytest.mark.parametrize("k,n", [(1, 3), (2, 3)])
@pytest.mark.parametrize("changed", [0, 1])
def test_node_releases_are_dp_gaussian(k, n, changed):
    delta = _worst_loss(PrivateTreeExperts, n, k, 3, changed, "gaussian")
    # Measured: 1.0e-6 for k = 1, either round changed (the claim is tight: the changed round
    # lies in two released nodes, one per level, and moves every fed gain by 1); 1.3e-7 for
    # k = 2 (an expert's gain at the element the earlier expert picked is 0 on both streams).
    assert delta <= DELTA * (1 + 1e-6)
    if k == 1:
        assert delta >= 0.99 * DELTA


@pytest.mark.parametrize("k,n", [(1, 3), (2, 3)])
def test_node_releases_are_dp_laplace(k, n):
    loss = _worst_loss(PrivateTreeExperts, n, k, 3, 0, "laplace")
    # k = 1: exactly epsilon (tight); k = 2: (k n - 1) / (k n) epsilon, since an expert's gain
    # at the element the earlier expert picked is 0 on both streams.
    assert loss <= EPS * (1 + 1e-9)
    assert loss == pytest.approx(EPS if k == 1 else EPS * 5 / 6, rel=1e-9)


@pytest.mark.parametrize("noise", ["gaussian", "laplace"])
def test_node_releases_half_noise_is_caught(noise):
    loss = _worst_loss(_HalfNoise, 3, 1, 3, 0, noise)
    if noise == "gaussian":
        # Measured 4.8e-3 >> 1e-6.
        assert loss > 100 * DELTA
    else:
        assert loss == pytest.approx(2 * EPS, rel=1e-9)


# -- the law of the played sets: n = 2, k = 1, T = 3 ------------------------------------------
ETA = 0.5
GH_X, GH_W = np.polynomial.hermite_e.hermegauss(120)  # nodes for the standard normal weight
GH_W = GH_W / GH_W.sum()


def _played_law(stream, sigma: float) -> dict:
    """Exact law of (a_1, a_2, a_3) with the learner's defaults (Gaussian nodes, Honaker).

    a_1 is uniform (no data). a_2 is a softmax of the leaf [1]: with two elements, a logistic of
    the difference d_1 + u_1, u_1 ~ N(0, 2 sigma^2). a_3 uses Honaker's estimate of [1, 2]:
    w (node) + (1 - w)(leaf 1 + leaf 2), w = 2/3, whose difference is
    d_1 + d_2 + (1 - w) u_1 + v with v ~ N(0, 2 sigma^2 (w^2 + (1 - w)^2)) independent of u_1.
    """
    w = 2.0 / 3.0
    d = [float(f._value(np.array([True, False])) - f._value(np.array([False, True])))
         for f in stream[:2]]
    u1 = math.sqrt(2.0) * sigma * GH_X
    v = math.sqrt(2.0 * (w * w + (1 - w) ** 2)) * sigma * GH_X
    p2 = expit(ETA * (d[0] + u1))  # P(a_2 = 0 | u_1)
    p3 = expit(ETA * (d[0] + d[1] + (1 - w) * u1[:, None] + v[None, :]))  # P(a_3 = 0 | u_1, v)
    law = {}
    for a2, a3 in itertools.product(range(2), repeat=2):
        q2 = p2 if a2 == 0 else 1 - p2
        q3 = p3 if a3 == 0 else 1 - p3
        q = float(GH_W @ (q2[:, None] * q3) @ GH_W)
        for a1 in range(2):
            law[(a1, a2, a3)] = 0.5 * q
    return law


def _sigma(cls) -> float:
    return cls(2, 3, 1, epsilon=EPS, delta=DELTA, eta=ETA).resolved_params["scale"]


STREAM = [Modular([1.0, 0.0]), Modular([0.7, 0.2]), Modular([0.4, 0.4])]
STREAM2 = [Modular([0.0, 1.0]), Modular([0.7, 0.2]), Modular([0.4, 0.4])]


def test_played_law_is_dp():
    sigma = _sigma(PrivateTreeExperts)
    law = _played_law(STREAM, sigma)
    assert sum(law.values()) == pytest.approx(1.0, abs=1e-12)
    res = exact_check(lambda s: _played_law(s, sigma), STREAM, STREAM2, epsilon=EPS,
                      delta=DELTA)
    assert res.passed
    # The law really depends on the changed round (the check is not trivially passed):
    # measured 0.22 and 0.23 (0.41 and 0.43 with half the noise, still below epsilon: the
    # played sets lose most of the nodes' privacy loss, see the module docstring).
    assert max(res.max_log_ratio, res.max_log_ratio_reverse) > 0.2


def _play(cls, stream, rng) -> tuple:
    learner = cls(2, 3, 1, epsilon=EPS, delta=DELTA, eta=ETA, rng=rng)
    out = []
    for f in stream:
        out.append(learner.select()[0])
        learner.update(f)
    return tuple(out)


@pytest.mark.slow
@pytest.mark.parametrize("cls", [PrivateTreeExperts, _HalfNoise])
def test_played_law_matches_the_learner(cls):
    # The oracle re-derives the learner; its own runs must follow it. 3000 runs, fixed seeds,
    # chi-square over the 8 outcomes (false-alarm rate 1e-4). The test has power: the default
    # learner's runs against the half-noise oracle give p = 3e-11.
    law = _played_law(STREAM, _sigma(cls))
    assert law_pvalue(law, lambda g: _play(cls, STREAM, g), seed=11,
                      runs=3000) > 1e-4
