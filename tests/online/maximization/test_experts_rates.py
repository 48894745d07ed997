"""Regret growth of the experts learners (Perez-Salazar and Cummings 2021): log-log slopes.

Instance: a fixed modular function :math:`f(S) = \\sum_{a \\in S} w_a` with
``w = (0.5, 0.3, 0.15, 0.05)``, ``k = 2``. The offline greedy is optimal here, so the regret
against OPT (``alpha = 1``) is what the experts' regrets bound (Proposition 3's recursion gives the
:math:`(1 - 1/e)`-regret, which is this regret minus :math:`\\mathrm{OPT}_T / e`: negative once the
learners learn, hence not fittable on a log scale). Regret is measured from the learners' exact
per-round expectations, averaged over seeds, and the slope of log(mean regret) against log T is
fitted.

Theory: 1/2 (full information, Theorem 6), 2/3 (bandit with gamma ~ T^(-1/3), Theorem 8 and
Appendix B.2) and 3/4 (naive bandit with gamma ~ T^(-1/4), Appendix B.1), at any fixed epsilon
(the private learning rates have the regret-optimal scaling in T). The horizons here are short to
keep the suite fast, so the bandit slopes sit above their limits; the bands are wide enough for
these pre-asymptotic values and still fail on linear regret. Longer runs (T up to 16000,
10 seeds) are reported in the docs.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from dpsubmod.functions import Modular
from dpsubmod.online import FIDP, BanditDP, FunctionStream, NaiveBanditDP, PresampledBanditDP, run
from dpsubmod.online.oco import hedge_epsilon, hedge_eta

pytestmark = pytest.mark.slow

W = np.array([0.5, 0.3, 0.15, 0.05])
N, K = 4, 2


def _slope(make, horizons, seeds):
    f = Modular(W)
    R = np.zeros((len(seeds), len(horizons)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for i, s in enumerate(seeds):
            for j, T in enumerate(horizons):
                trace = run(make(T), FunctionStream([f] * T), alpha=1.0,
                            comparator="brute-force", rng=s)
                R[i, j] = trace.final_expected_regret
    assert (R > 0).all()
    return float(np.polyfit(np.log(horizons), np.log(R.mean(axis=0)), 1)[0])


@pytest.mark.parametrize("epsilon", [math.inf, 300.0])
def test_full_information_regret_grows_like_sqrt_T(epsilon):
    # Measured: 0.535 (noise off) and 0.489 (epsilon = 300), 3 seeds, T = 250..2000.
    delta = None if math.isinf(epsilon) else 1e-3
    s = _slope(lambda T: FIDP(N, T, K, epsilon=epsilon, delta=delta),
               [250, 500, 1000, 2000], range(3))
    assert 0.40 <= s <= 0.62


@pytest.mark.parametrize("epsilon", [5.0, math.inf])
@pytest.mark.parametrize("cls", [BanditDP, PresampledBanditDP])
def test_bandit_regret_grows_like_T_two_thirds(cls, epsilon):
    # gamma = T^(-1/3), T = 500..4000, 6 seeds. At epsilon = 5 the tight calibration's rate is
    # below the non-private one at every T here (0.237 .. 0.118 for Algorithm 3; from epsilon
    # = 20 on it is the non-private rate, so the law is the noise-off one): measured 0.942
    # (Algorithm 3) and 0.903 (B.2). Noise off: 0.917 and 0.885. These short horizons are far
    # from the limit: with the non-private rate the local slope falls with T (0.86, 0.77,
    # 0.735, 0.68 over the doublings from 4000 to 64000, the last at the theorem's 2/3; Hedge's
    # worst-case rate learns this easy instance slowly), so the band only rules out linear
    # regret and a rate that does not learn.
    delta = None if math.isinf(epsilon) else 1e-3
    s = _slope(lambda T: cls(N, T, K, epsilon=epsilon, delta=delta, gamma=T ** (-1 / 3)),
               [500, 1000, 2000, 4000], range(6))
    assert 0.50 <= s <= 0.95


def _naive(T: int) -> NaiveBanditDP:
    # The paper's rate at epsilon = 1000 composes to about 1190 over these horizons, so that
    # claim is refused; the same rate is played, claiming what it really spends.
    eta = hedge_eta(1000.0, 1e-3, T, experts=K)
    spent = hedge_epsilon(eta, T - 1, 1e-3, experts=K)
    return NaiveBanditDP(N, T, K, epsilon=spent, delta=1e-3, gamma=T ** (-1 / 4), eta=eta)


def test_naive_bandit_regret_grows_faster():
    # gamma = T^(-1/4), the paper's rate at epsilon = 1000: measured 0.945 on T = 500..4000
    # (6 seeds); theory 3/4, approached only at longer horizons.
    s_naive = _slope(_naive, [500, 1000, 2000, 4000], range(6))
    assert 0.60 <= s_naive <= 0.97
    s_fi = _slope(lambda T: FIDP(N, T, K, epsilon=math.inf), [250, 500, 1000, 2000], range(3))
    assert s_naive > s_fi + 0.2
