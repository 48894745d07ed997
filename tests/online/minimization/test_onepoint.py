"""The bandit estimator and the rounding, checked exactly over the learner's own randomness.

Every random choice of a round is enumerated, not sampled: the threshold U of the full-information
rounding (one interval of U per chain set) and, in the bandit learners, the uniform that picks the
chain index and the fair sign xi. The learners are driven through their own ``select``/``update``
code with a stub generator that returns the enumerated uniforms, so these tests check the code
path that runs, not a re-implementation.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpsubmod.extensions.lovasz import lovasz_subgradient
from dpsubmod.online import BanditHazanKale, BanditSubmodPFTAL, HazanKale, SubmodPFTAL
from dpsubmod.online.minimization import estimator_law, exploration_probabilities
from dpsubmod.online.minimization.onepoint import (
    chain_order,
    chain_values,
    chain_weights,
    sample_index,
)
from oracles import (
    TableFunction,
    all_masks,
    random_concave_minus_modular,
    random_cut_plus_modular,
)


class _Stub:
    """Stands in for the learner's play generator: returns the enumerated uniforms."""

    def __init__(self, values):
        self.values = np.asarray(values, dtype=float)

    def random(self, size=None):
        if size is None:
            return float(self.values[0])
        return self.values[:size].copy()


def _point(n: int, rng: np.random.Generator, ties: bool) -> np.ndarray:
    x = rng.random(n)
    if ties and n >= 2:
        x[rng.integers(n)] = x[0]  # a tie
        x[rng.integers(n)] = 1.0
        x[rng.integers(n)] = 0.0
    return x


def _functions(n: int, rng: np.random.Generator):
    yield random_cut_plus_modular(n, rng)
    yield random_concave_minus_modular(n, rng)


def _bandit_outcomes(learner_cls, f, x, gamma, M):
    """(probability, played mask, estimate) for every (k, xi), through the learner's own code."""
    n = f.n
    order = chain_order(x)
    rho = exploration_probabilities(chain_weights(x, order), gamma)
    c = np.concatenate(([0.0], np.cumsum(rho) / rho.sum()))
    out = []
    for k in range(n + 1):
        width = c[k + 1] - c[k]
        if width <= 0:
            continue
        u = (c[k] + c[k + 1]) / 2
        signs = (1,) if k in (0, n) else (1, -1)
        for xi in signs:
            kw = dict(M=M, gamma=gamma, x1=x, rng=0)
            if learner_cls is BanditSubmodPFTAL:
                kw.update(epsilon=math.inf, clip=False)
            learner = learner_cls(n, 4, **kw)
            learner.reset()
            stub = _Stub([u, 0.25 if xi > 0 else 0.75])
            if learner_cls is BanditSubmodPFTAL:
                learner._play_rng = stub
            else:
                learner._rng = stub
            S = learner.select()
            learner.update(f(S))
            out.append((width / len(signs), S, learner.last_gradient))
    return out


@pytest.mark.parametrize("learner_cls", [BanditSubmodPFTAL, BanditHazanKale])
@pytest.mark.parametrize("n", [1, 2, 3, 5])
@pytest.mark.parametrize("ties", [False, True])
def test_bandit_estimator_is_unbiased_exactly(learner_cls, n, ties):
    # Lemma 4: E[ghat | x_t] is the chain subgradient of the Lovasz extension at x_t (same chain).
    rng = np.random.default_rng(100 + n + 10 * ties)
    for f in _functions(n, rng):
        x = _point(n, rng, ties)
        for gamma in (0.05, 0.5, 1.0):
            outcomes = _bandit_outcomes(learner_cls, f, x, gamma, M=10.0)
            assert math.isclose(sum(p for p, _, _ in outcomes), 1.0, abs_tol=1e-12)
            mean = sum(p * g for p, _, g in outcomes)
            _, g = lovasz_subgradient(f, x)
            np.testing.assert_allclose(mean, g, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("n", [1, 2, 4])
def test_bandit_exploration_distribution_and_cost(n):
    rng = np.random.default_rng(7 + n)
    for f in _functions(n, rng):
        M = float(max(abs(f._value(m)) for m in all_masks(n)))
        x = _point(n, rng, ties=True)
        order = chain_order(x)
        values = chain_values(f, order, count=False)
        mu = chain_weights(x, order)
        for gamma in (0.1, 0.7, 1.0):
            rho = exploration_probabilities(mu, gamma)
            assert rho.min() >= gamma / (n + 1) - 1e-15
            assert math.isclose(rho.sum(), 1.0, abs_tol=1e-12)
            law = estimator_law(values, order, rho)
            # Exact second moment (Lemma 5, corrected form) and its bounds.
            second = sum(o.probability * float(o.gradient @ o.gradient) for o in law)
            exact = values[0] ** 2 / rho[0] + values[n] ** 2 / rho[n] + sum(
                4 * values[k] ** 2 / rho[k] for k in range(1, n))
            assert math.isclose(second, exact, rel_tol=1e-12, abs_tol=1e-12)
            assert second <= 4 * M * M * (n + 1) ** 2 / gamma * (1 + 1e-12)
            # Worst-case norm, which sets the bandit sensitivity 4M(n+1)/gamma.
            assert max(np.linalg.norm(o.gradient) for o in law) <= 2 * M * (n + 1) / gamma + 1e-9
            # Lemma 6: exploring costs at most 2 gamma M in expectation.
            cost = float(rho @ values)
            assert abs(cost - float(mu @ values)) <= 2 * gamma * M + 1e-12
            learner = BanditSubmodPFTAL(n, 4, M=M, epsilon=math.inf, gamma=gamma, x1=x, rng=1)
            learner.select()
            assert math.isclose(learner.expected_value(f), cost, rel_tol=1e-12, abs_tol=1e-12)


@pytest.mark.parametrize("learner_cls", [SubmodPFTAL, HazanKale])
@pytest.mark.parametrize("n", [1, 3, 5])
def test_threshold_rounding_is_exact_in_expectation(learner_cls, n):
    # E_U f({x >= U}) = Lovasz extension at x: enumerate the intervals of U (one per chain set).
    rng = np.random.default_rng(3 * n)
    for f in _functions(n, rng):
        x = _point(n, rng, ties=True)
        breaks = np.unique(np.concatenate(([0.0, 1.0], x)))
        total = 0.0
        for lo, hi in zip(breaks[:-1], breaks[1:]):
            u = (lo + hi) / 2
            kw = dict(M=10.0, x1=x, rng=0)
            if learner_cls is SubmodPFTAL:
                kw["epsilon"] = math.inf
            learner = learner_cls(n, 2, **kw)
            learner.reset()
            stub = _Stub([1.0 - u])  # the learners threshold at U = 1 - uniform
            if learner_cls is SubmodPFTAL:
                learner._play_rng = stub
            else:
                learner._rng = stub
            S = learner.select()
            assert set(S) == set(np.flatnonzero(x >= u).tolist())
            total += (hi - lo) * f(S)
        value, _ = lovasz_subgradient(f, x)
        assert math.isclose(total, value, rel_tol=1e-10, abs_tol=1e-10)
        learner = learner_cls(n, 2, **kw)
        learner.select()
        assert math.isclose(learner.expected_value(f), value, rel_tol=1e-12, abs_tol=1e-12)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=6),
       st.floats(1e-3, 1.0))
def test_sample_index_inverts_the_cumulative_distribution(xs, gamma):
    x = np.array(xs)
    order = chain_order(x)
    rho = exploration_probabilities(chain_weights(x, order), gamma)
    c = np.cumsum(rho) / rho.sum()
    for u in np.linspace(0.0, 1.0, 23, endpoint=False):
        k = sample_index(rho, float(u))
        assert 0 <= k <= x.size
        assert (c[k - 1] if k else 0.0) <= u < c[k]


def test_estimator_needs_the_same_chain_for_ties():
    # With ties the chain is the index order; the estimate targets that chain's subgradient.
    f = TableFunction(np.array([0.0, 1.0, -1.0, 0.5]))  # not submodular: still unbiased
    x = np.array([0.4, 0.4])
    outcomes = _bandit_outcomes(BanditSubmodPFTAL, f, x, 0.3, M=2.0)
    mean = sum(p * g for p, _, g in outcomes)
    np.testing.assert_allclose(mean, lovasz_subgradient(f, x)[1], atol=1e-12)
