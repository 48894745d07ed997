"""The step-by-step reading of the continuous methods' guarantee, checked exactly.

``dpsubmod.offline.guarantees`` derives, for a step ``x -> x + y / T`` with every ``x_j <= t``,
``f(x + y/T) - f(x) >= c(t) <y, grad f(x)>`` (a coupling in the style of Calinescu, Chekuri, Pal
and Vondrak 2011, Lemma 3.3), and from it ``E f(x_T) >= rho_T (OPT - sigma)``. Here the
multilinear extension is computed by enumeration on small monotone submodular functions: the
step inequality holds on random points and directions, and a reading without the coupling's
product factor is caught; the noise-free continuous greedy meets ``rho_T OPT`` while the control
ratio ``1 - (1 - 1/T)^T`` fails on some instance; and the exact expectation of private
continuous greedy over every path of its exponential mechanism meets ``Result.guarantee``.
"""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np
import pytest

from dpsubmod import maximize
from dpsubmod.constraints import UniformMatroid
from dpsubmod.functions import Coverage, FacilityLocation, FeatureBased
from dpsubmod.functions.base import SetFunction
from dpsubmod.offline.guarantees import E1, stepwise_ratio
from oracles import brute_force_max, multilinear_brute_force

TOL = 1e-12


def multilinear(f: SetFunction, x: np.ndarray) -> float:
    return multilinear_brute_force(f, x)[0]


def gradient(f: SetFunction, x: np.ndarray) -> np.ndarray:
    return multilinear_brute_force(f, x)[1]


def random_function(rng: np.random.Generator, n: int, kind: str) -> SetFunction:
    """A small monotone submodular function."""
    if kind == "coverage":
        m = int(rng.integers(2, 6))
        covers = rng.random((n, m)) < rng.uniform(0.2, 0.8)
        return Coverage(covers.astype(float), weights=rng.random(m))
    if kind == "facility":
        return FacilityLocation(rng.random((int(rng.integers(2, 6)), n)) ** 3)
    if kind == "rank1":  # min(1, |S|): every element is a substitute of every other
        return Coverage(np.ones((n, 1)))
    return FeatureBased(rng.random((n, 1)), concave="sqrt")


def step_factor(t: float, d: float, e: float, *, product: bool = True) -> float:
    """``c(t) / delta`` of the module docstring of ``dpsubmod.offline.guarantees``."""
    if not product:
        return 1.0
    return max((1.0 - min(1.0, d / (1.0 - t))) ** e, (1.0 - d) ** e * (1.0 - t))


def test_the_step_inequality_holds_and_a_reading_without_the_product_is_caught():
    rng = np.random.default_rng(0)
    worst_control = math.inf
    for trial in range(400):
        n = int(rng.integers(2, 6))
        f = random_function(rng, n, ["coverage", "facility", "rank1", "sqrt"][trial % 4])
        T = int(rng.integers(1, 8))
        d = 1.0 / T
        s = int(rng.integers(0, T))
        t = s * d
        x = rng.random(n) * t
        if trial % 2:  # a 0/1 direction with r ones
            r = int(rng.integers(1, n + 1))
            y = np.zeros(n)
            y[rng.choice(n, r, replace=False)] = 1.0
            e = r - 1.0
        else:  # a fractional direction of l1 norm at most R
            y = rng.random(n) * (rng.random(n) < 0.7)
            e = float(y.sum())
        gain = multilinear(f, x + d * y) - multilinear(f, x)
        score = float(y @ gradient(f, x))
        assert gain >= d * step_factor(t, d, e) * score - TOL, (trial, gain, score)
        worst_control = min(worst_control, gain - d * step_factor(t, d, e, product=False) * score)
    assert worst_control < -0.05  # the control overstates a step's gain


def greedy_path_value(f: SetFunction, r: int, T: int) -> float:
    """The noise-free continuous greedy: each step the best base of the exact gradient."""
    x = np.zeros(f.n)
    for _ in range(T):
        y = np.zeros(f.n)
        y[np.argsort(-gradient(f, x), kind="stable")[:r]] = 1.0
        x += y / T
    return multilinear(f, x)


def test_the_noise_free_continuous_greedy_meets_the_stated_ratio_and_the_control_fails():
    rng = np.random.default_rng(1)
    for trial in range(900):
        n = int(rng.integers(3, 6))
        r = int(rng.integers(2, n))
        T = int(rng.integers(r, 2 * r + 1))
        f = random_function(rng, n, ["coverage", "facility", "sqrt"][trial % 3])
        opt, _ = brute_force_max(f, UniformMatroid(f.n, r))
        value = greedy_path_value(f, r, T)
        assert value >= stepwise_ratio(T, r - 1.0) * opt - TOL, (trial, n, r, T)
    # Two copies of an element of value 1 and one disjoint element of value 0.45, rank 2, T = 2:
    # both steps take the copies (partial derivatives 1 then 0.5, against 0.45), so f(x_T) = 1
    # where OPT = 1.45. The control, steps that lose nothing to the coupling, claims
    # 1 - (1 - 1/2)^2 = 0.75 of OPT; the stated ratio is 0.34.
    copies = Coverage(np.array([[1, 0], [1, 0], [0, 1]]), weights=[1.0, 0.45])
    value = greedy_path_value(copies, 2, 2)
    assert value == pytest.approx(1.0)
    assert value < (1.0 - (1.0 - 1.0 / 2) ** 2) * 1.45
    assert value >= stepwise_ratio(2, 1.0) * 1.45


@pytest.mark.parametrize("epsilon,steps", [(2.0, None), (8.0, None), (8.0, 3), (30.0, 4)])
def test_private_continuous_greedy_meets_its_guarantee_in_exact_expectation(epsilon, steps):
    """Every path of the exponential mechanism over the 10 bases of a rank-2 uniform matroid
    on 5 elements is summed over (10^T paths, memoized on how often each element was taken),
    so ``E f(x_T)`` is exact; swap rounding keeps ``E F(S) >= f(x_T)``."""
    rng = np.random.default_rng(4)
    f = Coverage.from_records([np.flatnonzero(rng.random(5) < p)
                               for p in rng.uniform(0.1, 0.6, size=60)], 5)
    n, r = 5, 2
    opt, _ = brute_force_max(f, UniformMatroid(f.n, r))
    res = maximize(f, r, method="private_continuous_greedy", epsilon=epsilon, steps=steps,
                   rng=0)
    g, T, w = res.guarantee, res.params["steps"], res.params["weight"]
    assert res.params["gradient"] == "closed-form"
    assert not g.vacuous and g.ratio == pytest.approx(stepwise_ratio(T, r - 1.0))
    bases = [np.array(b) for b in itertools.combinations(range(n), r)]

    @functools.cache
    def expected(counts: tuple[int, ...], left: int) -> float:
        # x = counts / T depends only on how often each element was taken, not on the order
        x = np.array(counts) / T
        if left == 0:
            return multilinear(f, x)
        g_x = gradient(f, x)
        scores = np.array([g_x[b].sum() for b in bases])
        p = np.exp(w * (scores - scores.max()))
        p /= p.sum()
        total = 0.0
        for b, pb in zip(bases, p):
            nxt = list(counts)
            for e in b:
                nxt[e] += 1
            total += pb * expected(tuple(nxt), left - 1)
        return total

    mean = expected((0,) * n, T)
    assert mean >= g.lower_bound(opt) - TOL
    assert g.lower_bound(opt) > 0.1 * opt  # a bound that says something here


def test_the_stepwise_ratio_is_positive_from_two_steps_and_tends_to_1_minus_1_over_e():
    assert stepwise_ratio(1, 0.0) == 1.0  # one element: the best singleton
    assert stepwise_ratio(1, 1.0) == 0.0  # one step of two elements: nothing proved
    for r in (2, 3, 5, 10, 40):
        ratios = [stepwise_ratio(T, r - 1.0) for T in (r, 2 * r, 10 * r, 100 * r)]
        assert all(0.0 < a < b < E1 for a, b in itertools.pairwise(ratios))
        assert ratios[-1] > E1 - 0.02
    # beats the smoothness reading's ratio 1 - 1/e - r^2 / (2T) at the papers' T = r
    for r in range(2, 30):
        assert stepwise_ratio(r, r - 1.0) > max(0.0, E1 - r / 2.0)
