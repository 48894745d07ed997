r"""Privacy of the i.i.d.-rounds learners, checked exactly on tiny neighbouring streams.

Neighbouring relation: streams differing in one round's function. Both learners are private by
parallel composition (each round enters exactly one mechanism use), so the law of the whole
sequence of played sets is enumerable on tiny instances:

* :class:`PrivateEpochGreedy`: epoch 0's set is uniform (public randomness) and epoch ``j``'s set
  is the private greedy's output on the previous epoch's mean, independently across epochs
  given the stream; :func:`greedy_path_distribution` gives each selection's exact law;
* :class:`PrivateExploreThenCommit`: the played sets are fixed by the stages' choices. Each
  choice of a one-phase stage is the argmax of Laplace-noised means, whose law is a
  one-dimensional integral (:func:`_argmax_law`, quadrature error below 1e-10); under the
  default sequential halving, a later phase ranks the survivors by their estimates pooled over
  the stage's phases, whose joint law with the first phase's elimination is a two-dimensional
  integral (:func:`_eliminate_then_pool_law`).

Each oracle is passed to :func:`~dpsubmod.privacy.audit.exact_check` and validated against the
learner's own runs (chi-square). The control is each learner with its sensitivity halved (half
the noise): the same check catches it.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import integrate

from dpsubmod.functions import Modular
from dpsubmod.offline.discrete.private_greedy import greedy_path_distribution
from dpsubmod.online import PrivateEpochGreedy, PrivateExploreThenCommit
from dpsubmod.online.maximization.epoch_greedy import _EpochMean, epoch_lengths
from dpsubmod.online.maximization.explore_then_commit import stage_phases
from dpsubmod.privacy.audit import exact_check
from dpsubmod.privacy.calibration import exponential_mechanism_weight
from oracles import law_pvalue

EPS = 1.0


class _HalfNoiseEpochGreedy(PrivateEpochGreedy):
    """Control: declares half the mean's sensitivity, so each selection draws with twice the
    weight its epsilon allows."""

    def _mean_sensitivity(self, L: int) -> float:
        return 0.5 * float(self.bound) / L


class _HalfNoiseETC(PrivateExploreThenCommit):
    """Control: Laplace noise of half the scale the stage's sensitivity needs."""

    def _mean_sensitivity(self, m: int) -> float:
        return 0.5 * float(self.bound) / m


# -- PrivateEpochGreedy -----------------------------------------------------------------------
N, T_EG = 3, 7  # epochs of 1, 2 and 4 rounds: two private selections


def _eg_law(stream, k: int, scale: float = 1.0) -> dict:
    """Exact law of the sets played in the three epochs."""
    lengths = epoch_lengths(T_EG, 1)
    starts = np.cumsum([0, *lengths])
    sets = list(itertools.combinations(range(N), k))
    laws = [{S: 1.0 / len(sets) for S in sets}]
    for j in range(1, len(lengths)):
        fs = stream[starts[j - 1]:starts[j]]
        sens = scale / len(fs)
        w = exponential_mechanism_weight(EPS / k, range_sensitivity=2.0 * sens)
        law: dict = {}
        for path, q in greedy_path_distribution(_EpochMean(fs, 1.0, sens), k, weight=w).items():
            key = tuple(sorted(path))
            law[key] = law.get(key, 0.0) + q
        laws.append(law)
    return {tuple(S for S, _ in combo): math.prod(q for _, q in combo)
            for combo in itertools.product(*[list(law.items()) for law in laws])}


def _eg_play(cls, stream, k: int, rng) -> tuple:
    learner = cls(N, T_EG, k, epsilon=EPS, rng=rng)
    played = []
    for f in stream:
        played.append(learner.select())
        learner.update(f)
    return tuple(played[s] for s in np.cumsum([0, *epoch_lengths(T_EG, 1)])[:-1])


# Round 0 (the data of the first selection) replaced: candidate 0 up, the others down, the
# pair that moves a one-step exponential mechanism the most among three candidates.
_FILL = [Modular([0.2, 0.1, 0.3])] * (T_EG - 1)
EG_D = [Modular([1.0, 0.0, 0.0]), *_FILL]
EG_D_PRIME = [Modular([0.0, 1.0, 1.0]), *_FILL]


@pytest.mark.parametrize("k", [1, 2])
def test_epoch_greedy_exact_law_is_epsilon_dp(k):
    laws = {id(d): _eg_law(d, k) for d in (EG_D, EG_D_PRIME)}
    assert sum(laws[id(EG_D)].values()) == pytest.approx(1.0, abs=1e-12)
    res = exact_check(lambda d: laws[id(d)], EG_D, EG_D_PRIME, epsilon=EPS)
    # Measured 0.664 (k = 1) and 0.30 (k = 2; the steps' epsilon / k shares).
    assert res.passed
    assert max(res.max_log_ratio, res.max_log_ratio_reverse) > (0.6 if k == 1 else 0.2)


def test_epoch_greedy_half_noise_is_caught():
    res = exact_check(lambda d: _eg_law(d, 1, scale=0.5), EG_D, EG_D_PRIME, epsilon=EPS)
    # Measured 1.31 > 1.
    assert not res.passed and max(res.max_log_ratio, res.max_log_ratio_reverse) > 1.2


@pytest.mark.slow
@pytest.mark.parametrize("cls,scale,k", [(PrivateEpochGreedy, 1.0, 2),
                                         (_HalfNoiseEpochGreedy, 0.5, 1)])
def test_epoch_greedy_oracle_matches_the_learner(cls, scale, k):
    # The oracle re-derives the learner; its own runs must follow it. 1500 runs, chi-square
    # with small cells pooled; fixed seeds, false-alarm rate 1e-4 per case.
    law = _eg_law(EG_D, k, scale)
    assert law_pvalue(law, lambda g: _eg_play(cls, EG_D, k, g), seed=7,
                      runs=1500) > 1e-4


# -- PrivateExploreThenCommit -----------------------------------------------------------------
def _argmax_law(mu: np.ndarray, b: float) -> np.ndarray:
    """P(argmax_i mu_i + Z_i = j) for i.i.d. Laplace(b) noise Z, by quadrature of
    density(x - mu_j) * prod_{i != j} cdf(x - mu_i)."""
    mu = np.asarray(mu, dtype=float)

    def cdf(z: np.ndarray) -> np.ndarray:
        return _laplace_cdf(z, b)

    out = []
    for j in range(mu.size):
        others = np.delete(mu, j)

        def g(x: float, j: int = j, others: np.ndarray = others) -> float:
            return math.exp(-abs(x - mu[j]) / b) / (2 * b) * float(np.prod(cdf(x - others)))

        v, _ = integrate.quad(g, mu.min() - 40 * b, mu.max() + 40 * b,
                              points=sorted(set(mu.tolist())), limit=200, epsabs=1e-13,
                              epsrel=1e-11)
        out.append(v)
    return np.array(out)


def _laplace_cdf(z: np.ndarray, b: float) -> np.ndarray:
    return np.where(z < 0, 0.5 * np.exp(np.minimum(z, 0.0) / b),
                    1.0 - 0.5 * np.exp(-np.maximum(z, 0.0) / b))


def _laplace_difference_cdf(x: np.ndarray, b: float) -> np.ndarray:
    """CDF of Z - Z' for i.i.d. Laplace(b) Z, Z': the tail is 0.5 exp(-|x|/b)(1 + |x|/(2b))."""
    tail = 0.5 * np.exp(-np.abs(x) / b) * (1.0 + np.abs(x) / (2.0 * b))
    return np.where(x < 0, tail, 1.0 - tail)


_GL_X, _GL_W = np.polynomial.legendre.leggauss(80)


def _piecewise_gauss(g, kinks: list[float], lo: float, hi: float) -> float:
    """Integral of the vectorised ``g`` over [lo, hi], 80-point Gauss-Legendre on each piece
    between the kinks (the integrand is analytic within each piece)."""
    cuts = sorted({lo, hi, *[c for c in kinks if lo < c < hi]})
    total = 0.0
    for a, c in zip(cuts[:-1], cuts[1:]):
        x = 0.5 * (c - a) * _GL_X + 0.5 * (c + a)
        total += 0.5 * (c - a) * float(_GL_W @ g(x))
    return total


def _eliminate_then_pool_law(mu1: np.ndarray, mu2: dict, b1: float, b2: float, p1: int,
                             p2: int) -> dict:
    """Joint law of a halving stage of three candidates: phase 1 (``p1`` plays each, noisy
    means with Laplace(``b1``) noise) drops the argmin ``j``; phase 2 (``p2`` plays of each
    survivor, Laplace(``b2``)) keeps the survivor with the larger pooled estimate
    ``(p1 * noisy1 + p2 * noisy2) / (p1 + p2)``. ``mu2[j]`` holds the survivors' phase-2
    means when ``j`` was dropped. Returns ``{(j, winner): probability}``, each the integral
    over the survivors' phase-1 noise (za, zb) of
    ``f(za) f(zb) P(z_j below both) P(pooled a > pooled b | za, zb)``: adaptive quadrature
    over za (both outcomes at once), piecewise Gauss-Legendre over zb at the integrand's kinks."""
    out = {}
    R = 40.0 * b1
    for j in range(3):
        a, b = [i for i in range(3) if i != j]
        d2 = mu2[j][0] - mu2[j][1]

        def inner(za: float, a: int = a, b: int = b, j: int = j, d2: float = d2) -> tuple:
            def joint(zb: np.ndarray) -> np.ndarray:
                low = np.minimum(mu1[a] + za, mu1[b] + zb) - mu1[j]
                c = (p1 / p2) * (mu1[a] - mu1[b] + za - zb) + d2
                return (np.exp(-np.abs(zb) / b1) / (2 * b1) * _laplace_cdf(low, b1)
                        * _laplace_difference_cdf(c, b2))

            def both(zb: np.ndarray) -> np.ndarray:
                low = np.minimum(mu1[a] + za, mu1[b] + zb) - mu1[j]
                return np.exp(-np.abs(zb) / b1) / (2 * b1) * _laplace_cdf(low, b1)

            kinks = [0.0, za + mu1[a] - mu1[b], mu1[j] - mu1[b],
                     za + mu1[a] - mu1[b] + (p2 / p1) * d2]
            dens = math.exp(-abs(za) / b1) / (2 * b1)
            win_a = _piecewise_gauss(joint, kinks, -R, R)
            return dens * np.array([win_a, _piecewise_gauss(both, kinks, -R, R) - win_a])

        pts = sorted({0.0, mu1[j] - mu1[a], mu1[b] - mu1[a]})
        v, _ = integrate.quad_vec(inner, -R, R, points=pts, limit=400, epsabs=1e-14,
                                  epsrel=1e-12)
        out[(j, a)], out[(j, b)] = float(v[0]), float(v[1])
    return out


def _etc_law(stream, n: int, k: int, m: int, scale: float = 1.0,
             schedule: str = "uniform") -> dict:
    """Exact law of the whole sequence of played sets. A stage's phases
    (:func:`stage_phases`) play their survivors round robin; each phase's Laplace-noised means
    keep the largest ``keep`` survivors (the next phase's count, 1 after the last phase): the
    argmax when ``keep == 1`` in a one-phase stage; under halving, a three-candidate stage
    whose first phase drops one and whose second phase keeps the larger pooled estimate (the
    only multi-phase stage these tiny instances reach), by :func:`_eliminate_then_pool_law`."""
    b1 = scale / EPS
    law: dict = {}

    def finish(S: list, t: int, played: tuple, p: float) -> None:
        key = (*played, *[tuple(sorted(S))] * (len(stream) - t))
        law[key] = law.get(key, 0.0) + p

    def stage(S: list, t: int, played: tuple, p: float) -> None:
        cands = [e for e in range(n) if e not in S]
        phases = stage_phases(len(cands), m, schedule)
        if len(S) == k or sum(a * q for a, q in phases) > len(stream) - t:
            finish(S, t, played, p)
            return
        phase(S, cands, phases, 0, t, played, p)

    def play(S, alive, plays, t, played) -> tuple:
        sums = np.zeros(len(alive))
        for i in range(len(alive) * plays):
            c = i % len(alive)
            A = tuple(sorted([*S, alive[c]]))
            played = (*played, A)
            sums[c] += min(max(stream[t + i](list(A)), 0.0), 1.0)
        return sums / plays, t + len(alive) * plays, played

    def phase(S, alive, phases, r, t, played, p) -> None:
        plays = phases[r][1]
        mu, t, played = play(S, alive, plays, t, played)
        if len(phases) == 1:
            for c, q in zip(alive, _argmax_law(mu, b1 / plays)):
                stage([*S, c], t, played, p * q)
            return
        assert [a for a, _ in phases] == [3, 2], phases
        p2 = phases[1][1]
        later = {j: play(S, [c for i, c in enumerate(alive) if i != j], p2, t, played)
                 for j in range(3)}
        law = _eliminate_then_pool_law(mu, {j: v[0] for j, v in later.items()}, b1 / plays,
                                       b1 / p2, plays, p2)
        for (j, w), q in law.items():
            stage([*S, alive[w]], later[j][1], later[j][2], p * q)

    stage([], 0, (), 1.0)
    return law


def _etc_play(cls, stream, n: int, k: int, m: int, rng, schedule: str = "uniform") -> tuple:
    """The sequence of sets one run of the learner plays."""
    learner = cls(n, len(stream), k, epsilon=EPS, m=m, schedule=schedule, rng=rng)
    played = []
    for f in stream:
        S = learner.select()
        played.append(tuple(sorted(S)))
        learner.update(f(S))
    return tuple(played)


# n = 3, k = 2, m = 1: stage 1 plays {0}, {1}, {2}; stage 2 the two pairs; then one commit
# round. Round 0 (candidate 0's only sample) gives reward 1 or 0; the others 1: under D' the
# choice of 0 is a tail event, where the Laplace ratio is largest.
ETC_FILL = [Modular([0.0, 1.0, 1.0])] * 5
ETC_D = [Modular([1.0, 0.0, 0.0]), *ETC_FILL]
ETC_D_PRIME = [Modular([0.0, 0.0, 0.0]), *ETC_FILL]


def test_etc_exact_law_is_epsilon_dp():
    laws = {id(d): _etc_law(d, 3, 2, 1) for d in (ETC_D, ETC_D_PRIME)}
    assert sum(laws[id(ETC_D)].values()) == pytest.approx(1.0, abs=1e-9)
    res = exact_check(lambda d: laws[id(d)], ETC_D, ETC_D_PRIME, epsilon=EPS, tol=1e-6)
    # Measured 0.853: below epsilon, and near it (the pair is close to the worst case).
    assert res.passed and max(res.max_log_ratio, res.max_log_ratio_reverse) > 0.8


def test_etc_exact_law_with_a_second_stage_round_replaced():
    # Round 3 is stage 2's first play, whose set depends on stage 1's choice: reward 1 on D,
    # 0 on D', whichever pair is played.
    fill = [Modular([0.3, 0.0, 0.2])] * 6
    D = [*fill[:3], Modular([1.0, 1.0, 1.0]), *fill[3:5]]
    D_prime = [*fill[:3], Modular([0.0, 0.0, 0.0]), *fill[3:5]]
    for scale, ok in ((1.0, True), (0.5, False)):
        res = exact_check(lambda d, s=scale: _etc_law(d, 3, 2, 1, s), D, D_prime, epsilon=EPS,
                          tol=1e-6)
        assert res.passed == ok, (scale, res.max_log_ratio, res.max_log_ratio_reverse)


def test_epoch_greedy_exact_law_with_a_later_epoch_round_replaced():
    # Round 2 is in epoch 1, whose mean of two rounds feeds the second selection
    # (sensitivity 1/2).
    D = [*EG_D[:2], Modular([1.0, 0.0, 0.0]), *EG_D[3:]]
    D_prime = [*EG_D[:2], Modular([0.0, 1.0, 1.0]), *EG_D[3:]]
    assert exact_check(lambda d: _eg_law(d, 1), D, D_prime, epsilon=EPS).passed
    assert not exact_check(lambda d: _eg_law(d, 1, scale=0.5), D, D_prime, epsilon=EPS).passed


def test_etc_half_noise_is_caught():
    res = exact_check(lambda d: _etc_law(d, 3, 2, 1, scale=0.5), ETC_D, ETC_D_PRIME,
                      epsilon=EPS, tol=1e-6)
    # Measured 1.80 > 1.
    assert not res.passed and max(res.max_log_ratio, res.max_log_ratio_reverse) > 1.5


@pytest.mark.slow
@pytest.mark.parametrize("cls,scale", [(PrivateExploreThenCommit, 1.0), (_HalfNoiseETC, 0.5)])
def test_etc_oracle_matches_the_learner(cls, scale):
    # 3000 runs of the learner itself against the quadrature law; chi-square, small cells
    # pooled; fixed seeds, false-alarm rate 1e-4 per case.
    law = _etc_law(ETC_D, 3, 2, 1, scale)
    assert law_pvalue(law, lambda g: _etc_play(cls, ETC_D, 3, 2, 1, g), seed=11,
                      runs=3000) > 1e-4


# The default schedule, sequential halving: n = 3, k = 2, m = 1 gives stage 1 a phase of the
# three singletons (keeping two) and a phase of the two survivors, stage 2 one phase of the two
# pairs, then one commit round (8 rounds).
HALVING_FILL = [Modular([0.0, 1.0, 1.0])] * 7
HALVING_D = [Modular([1.0, 0.0, 0.0]), *HALVING_FILL]
HALVING_D_PRIME = [Modular([0.0, 0.0, 0.0]), *HALVING_FILL]


def _halving_law(d, scale: float = 1.0) -> dict:
    return _etc_law(d, 3, 2, 1, scale, schedule="halving")


def test_etc_halving_schedule_of_the_tiny_instance():
    assert stage_phases(3, 1, "halving") == [(3, 1), (2, 1)]
    assert stage_phases(2, 1, "halving") == [(2, 1)]
    law = _halving_law(HALVING_D)
    assert sum(law.values()) == pytest.approx(1.0, abs=1e-9)
    # Every played sequence has 8 sets: 3 + 2 exploring stage 1, 2 stage 2, 1 commit.
    assert {len(key) for key in law} == {8}


@pytest.mark.parametrize("scale,ok", [(1.0, True), (0.5, False)])
def test_etc_halving_exact_law_first_phase_round_replaced(scale, ok):
    res = exact_check(lambda d: _halving_law(d, scale), HALVING_D, HALVING_D_PRIME, epsilon=EPS,
                      tol=1e-6)
    assert res.passed == ok, (scale, res.max_log_ratio, res.max_log_ratio_reverse)
    # Measured 0.736 at the right scale and 1.665 at half of it.
    assert max(res.max_log_ratio, res.max_log_ratio_reverse) > (0.7 if ok else 1.5)


@pytest.mark.parametrize("scale,ok", [(1.0, True), (0.5, False)])
def test_etc_halving_exact_law_second_phase_round_replaced(scale, ok):
    # Round 3 is the second phase's first play, whose set depends on the first phase's
    # released survivors: reward 1 on D, 0 on D', whichever singleton is played. The decision
    # ranks pooled estimates, in which this round's release has weight 1/2: of the fills
    # {0, 1}^3, candidate 0 alone rewarded moves the decision most (measured 0.480 at the
    # right scale, 1.148 at half of it).
    fill = [Modular([1.0, 0.0, 0.0])] * 7
    D = [*fill[:3], Modular([1.0, 1.0, 1.0]), *fill[3:]]
    D_prime = [*fill[:3], Modular([0.0, 0.0, 0.0]), *fill[3:]]
    res = exact_check(lambda d: _halving_law(d, scale), D, D_prime, epsilon=EPS, tol=1e-6)
    assert res.passed == ok, (scale, res.max_log_ratio, res.max_log_ratio_reverse)
    assert max(res.max_log_ratio, res.max_log_ratio_reverse) > (0.45 if ok else 1.1)


@pytest.mark.slow
@pytest.mark.parametrize("cls,scale", [(PrivateExploreThenCommit, 1.0), (_HalfNoiseETC, 0.5)])
def test_etc_halving_oracle_matches_the_learner(cls, scale):
    # 3000 runs of the learner (default schedule) against the quadrature law of its whole
    # played sequence; chi-square, small cells pooled; false-alarm rate 1e-4 per case.
    law = _halving_law(HALVING_D, scale)
    assert law_pvalue(law, lambda g: _etc_play(cls, HALVING_D, 3, 2, 1, g, schedule="halving"),
                      seed=12, runs=3000) > 1e-4
