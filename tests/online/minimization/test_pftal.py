"""PFTAL and the calibration of the private minimization learners."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import optimize

from dpsubmod.errors import ValidationError
from dpsubmod.extensions.lovasz import lovasz_subgradient
from dpsubmod.functions import Modular
from dpsubmod.online import PFTAL, BanditSubmodPFTAL, SubmodPFTAL
from dpsubmod.privacy.continual import tree_levels
from oracles import TableFunction, random_concave_minus_modular, random_cut_plus_modular


def _ftal_objective(v, H, xs):
    def obj(x):
        return float(v @ x + 0.5 * H * sum(np.sum((x - xj) ** 2) for xj in xs))

    return obj


def test_closed_form_update_is_the_ftal_argmin_on_the_box():
    rng = np.random.default_rng(0)
    d, T, H = 4, 12, 0.7
    oco = PFTAL(d, T, H=H, epsilon=math.inf, x1=rng.random(d))
    xs, v = [], np.zeros(d)
    for _ in range(T):
        x = oco.point()
        xs.append(x)
        z = rng.normal(scale=2.0, size=d) + H * x
        v += z
        nxt = oco.update(z)
        res = optimize.minimize(_ftal_objective(v, H, xs), x0=np.full(d, 0.5), method="L-BFGS-B",
                                bounds=[(0, 1)] * d, options={"ftol": 1e-14, "gtol": 1e-12})
        np.testing.assert_allclose(nxt, res.x, atol=1e-6)
        np.testing.assert_allclose(oco.prefix, v, atol=1e-12)


def test_closed_form_update_with_a_custom_projection():
    # Unit ball: projection y / max(1, ||y||); FTAL's argmin is still proj(xbar - v / (tH)).
    def ball(y):
        return y / max(1.0, float(np.linalg.norm(y)))

    rng = np.random.default_rng(1)
    d, T, H = 3, 6, 0.5
    oco = PFTAL(d, T, H=H, epsilon=math.inf, project=ball)
    xs, v = [], np.zeros(d)
    for _ in range(T):
        x = oco.point()
        xs.append(x)
        z = rng.normal(scale=3.0, size=d)
        v += z
        nxt = oco.update(z)
        cons = {"type": "ineq", "fun": lambda y: 1.0 - y @ y}
        res = optimize.minimize(_ftal_objective(v, H, xs), x0=np.zeros(d), method="SLSQP",
                                constraints=[cons], options={"ftol": 1e-14, "maxiter": 500})
        np.testing.assert_allclose(nxt, res.x, atol=1e-5)


@pytest.mark.parametrize("kw, centre", [({}, 0.5), ({"H": "paper"}, 0.0),
                                         ({"centre": [0.0, 0.2, 0.5, 0.9, 1.0]},
                                          np.array([0.0, 0.2, 0.5, 0.9, 1.0]))])
def test_noise_off_submod_pftal_plays_clip_of_minus_gradient_sum(kw, centre):
    # Without noise v_t = sum_j (g_j + H (x_j - c)), so x_{t+1} = clip(c - G_t / (t H)): the
    # default regulariser is centred at the middle of the cube, the paper's (H="paper") at 0.
    rng = np.random.default_rng(2)
    n, T = 5, 25
    learner = SubmodPFTAL(n, T, M=20.0, epsilon=math.inf, rng=0, **kw)
    H = learner.resolved_params["H"]
    np.testing.assert_array_equal(learner.iterate, np.broadcast_to(centre, (n,)))
    G = np.zeros(n)
    for t in range(1, T + 1):
        f = random_cut_plus_modular(n, rng) if t % 2 else random_concave_minus_modular(n, rng)
        learner.select()
        x = learner.iterate
        G += lovasz_subgradient(f, x)[1]
        learner.update(f)
        np.testing.assert_allclose(learner.iterate, np.clip(centre - G / (t * H), 0, 1),
                                   atol=1e-12)


@pytest.mark.parametrize("calibration, noise, expected", [
    ("sound", "l2laplace", 4 * math.sqrt(2)),
    ("conservative", "l2laplace", 8.0),
    ("sound", "laplace", 8.0),
    ("paper", "l2laplace", None),
])
def test_full_information_sensitivities(calibration, noise, expected):
    n, T, M = 4, 100, 2.5
    H = M / math.sqrt(n * T)
    L = 4 * M + H * math.sqrt(n)
    if expected is None:
        # The paper's L is below the sensitivity 4 sqrt(2) M: the run would spend more than
        # epsilon, so the learner is refused, with the epsilon it would really give.
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            with pytest.raises(ValidationError, match="'calibration'") as exc:
                SubmodPFTAL(n, T, M=M, epsilon=1.0, calibration=calibration, noise=noise)
        assert exc.value.epsilon_spent == pytest.approx(4 * math.sqrt(2) * M / L)
        # With an H large enough for L to cover the sensitivity the paper's L is used as is.
        big = 2.0 * M
        q = SubmodPFTAL(n, T, M=M, epsilon=1.0, H=big, calibration=calibration,
                        noise=noise).resolved_params
        assert q["calibrated_sensitivity"] == pytest.approx(4 * M + big * math.sqrt(n))
        assert q["epsilon_effective"] == 1.0
        return
    p = SubmodPFTAL(n, T, M=M, epsilon=1.0, H="paper", calibration=calibration,
                    noise=noise).resolved_params
    assert p["H"] == pytest.approx(H)
    assert p["lipschitz"] == pytest.approx(L)
    assert p["calibrated_sensitivity"] == pytest.approx(expected * M)
    assert p["epsilon_effective"] == 1.0


def test_bandit_sensitivity_gamma_and_h():
    n, T, M = 3, 10_000, 1.5
    p = BanditSubmodPFTAL(n, T, M=M, epsilon=2.0, gamma="paper", H="paper").resolved_params
    gamma = n / T ** 0.25
    assert p["gamma"] == pytest.approx(gamma)
    assert p["H"] == pytest.approx(M / (math.sqrt(n) * T ** 0.25))
    assert p["calibrated_sensitivity"] == pytest.approx(4 * M * (n + 1) / gamma)
    # The paper's L = 4M + 2 H sqrt(n) is far below the sensitivity: refused, with the epsilon
    # the run would really spend.
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.raises(ValidationError, match="'calibration'") as exc:
            BanditSubmodPFTAL(n, T, M=M, epsilon=2.0, gamma="paper", H="paper",
                              calibration="paper")
    L = 4 * M + 2 * p["H"] * math.sqrt(n)
    assert exc.value.epsilon_spent == pytest.approx(2.0 * 4 * M * (n + 1) / (gamma * L))
    # An H large enough for L to reach the sensitivity is accepted, and L is used as is.
    big = 25.0
    q = BanditSubmodPFTAL(n, T, M=M, epsilon=2.0, H=big, calibration="paper").resolved_params
    assert q["calibrated_sensitivity"] == pytest.approx(4 * M + 2 * big * math.sqrt(n))
    assert q["epsilon_effective"] == 2.0


def test_tuned_h():
    n, T, M, eps = 3, 5000, 1.0, 1.0
    p = SubmodPFTAL(n, T, M=M, epsilon=eps, H="tuned").resolved_params
    lt = math.log(T)
    a = 72 * M * M * lt + 48 * n * M * 4 * math.sqrt(2) * M * lt ** 2.5 / eps
    assert p["H"] == pytest.approx(math.sqrt(2 * a / (n * T)))
    off = SubmodPFTAL(n, T, M=M, epsilon=math.inf, H="tuned").resolved_params
    assert off["H"] == pytest.approx(12 * M * math.sqrt(lt / (n * T)))


@pytest.mark.parametrize("make, d", [
    (lambda s: SubmodPFTAL(3, 8, M=1.0, epsilon=2.0, rng=s), 3),
    (lambda s: BanditSubmodPFTAL(3, 8, M=1.0, epsilon=2.0, gamma=0.5, rng=s), 3),
])
def test_released_noise_has_the_calibrated_scale(make, d):
    # After round 1, v_1 - z_1 is one l2-Laplace draw: radius ~ Gamma(d, s) with
    # s = levels(T) * Delta / epsilon. Mean radius d s, sd sqrt(d) s; 1500 clones; a deviation of
    # 5 standard errors has probability < 1e-6 (false-alarm rate).
    radii = []
    f = Modular([0.3, -0.2, 0.1])
    for seed in range(1500):
        learner = make(seed)
        S = learner.select()
        learner.update(f if learner.feedback == "full" else f(S))
        z1 = learner.last_gradient  # x_1 = 0, so H x_1 adds nothing
        radii.append(np.linalg.norm(learner.prefix - z1))
    p = learner.resolved_params
    s = tree_levels(8) * p["calibrated_sensitivity"] / 2.0
    se = math.sqrt(d) * s / math.sqrt(len(radii))
    assert abs(np.mean(radii) - d * s) < 5 * se


def test_clipping_enforces_the_sensitivity_on_bad_inputs():
    # A function far outside [-M, M]: the chain vector is rescaled to norm Delta / 2, the
    # observed value clipped to [-M, M].
    bad = TableFunction(np.array([0.0, 50.0, -40.0, 30.0, 0.0, 10.0, 5.0, -60.0]))
    full = SubmodPFTAL(3, 4, M=1.0, epsilon=1.0, rng=0)
    full.select()
    full.update(bad)
    assert np.linalg.norm(full.last_gradient) == pytest.approx(2 * math.sqrt(2))
    lap = SubmodPFTAL(3, 4, M=1.0, epsilon=1.0, noise="laplace", rng=0)
    lap.select()
    lap.update(bad)
    assert np.abs(lap.last_gradient).sum() == pytest.approx(4.0)
    bandit = BanditSubmodPFTAL(3, 4, M=1.0, epsilon=1.0, gamma=0.5, rng=0)
    for _ in range(4):
        S = bandit.select()
        bandit.update(bad(S))
        assert np.linalg.norm(bandit.last_gradient) <= 2 * 1.0 * 4 / 0.5 + 1e-12
    raw = BanditSubmodPFTAL(3, 4, M=1.0, epsilon=1.0, gamma=0.5, clip=False, rng=0)
    norms = []
    for _ in range(4):
        S = raw.select()
        raw.update(bad(S))
        norms.append(np.linalg.norm(raw.last_gradient))
    assert max(norms) > 2 * 4 / 0.5  # unclipped: the bound fails on this input


def test_pftal_generic_privacy_and_lipschitz_clipping():
    oco = PFTAL(2, 4, H=1.0, epsilon=0.5, lipschitz=1.0, rng=0)
    assert oco.privacy.epsilon == pytest.approx(0.5)  # the whole run, before the first update
    assert oco.calibrated_sensitivity == 2.0
    oco.update([30.0, 40.0])  # rescaled to norm 1 before the noise
    assert oco.privacy.epsilon == pytest.approx(0.5)
    off = PFTAL(2, 4, H=1.0, epsilon=math.inf)
    assert off.privacy is None and off.noise_off and off.calibrated_sensitivity is None
    # Rescaling is visible without noise: the exact prefix holds the clipped gradient.
    clipped = PFTAL(2, 4, H=1.0, epsilon=math.inf, lipschitz=1.0)
    clipped.update([30.0, 40.0])
    np.testing.assert_allclose(clipped.prefix, [0.6, 0.8])
    l1 = PFTAL(2, 4, H=1.0, epsilon=math.inf, lipschitz=1.0, noise="laplace")
    l1.update([30.0, 10.0])
    np.testing.assert_allclose(l1.prefix, [0.75, 0.25])


@pytest.mark.parametrize("make,names", [
    (lambda b: SubmodPFTAL(5, 4, M=1e308, epsilon=3.4, budget=b),
     "'M' and 'epsilon' parameters"),
    (lambda b: SubmodPFTAL(1, 1, M=5e-324, epsilon=1.0, noise="gaussian", delta=5e-4,
                           budget=b), "'M' and 'epsilon' parameters"),
    (lambda b: SubmodPFTAL(5, 4, M=1.0, epsilon=1e-320, budget=b),
     "'M' and 'epsilon' parameters"),
    (lambda b: SubmodPFTAL(5, 4, M=1.0, epsilon=1.0, H=1e308, budget=b), "'H' parameter"),
    (lambda b: BanditSubmodPFTAL(2, 3, M=1.0, epsilon=1.0, gamma=1e-320, budget=b),
     "'M' and 'gamma' parameters"),
    (lambda b: BanditSubmodPFTAL(3, 5, M=2.3, epsilon=7.0, gamma=1e-300, budget=b),
     "'M', 'epsilon' and 'gamma' parameters of BanditSubmodPFTAL .* node-noise scale"),
    (lambda b: SubmodPFTAL(5, 4, M=1.0, epsilon=1e-300, sensitivity=1.0, budget=b),
     "'sensitivity' and 'epsilon' parameters"),
])
def test_derived_parameters_out_of_float_range_are_refused_by_the_users_name(make, names):
    from dpsubmod import Budget

    budget = Budget(50.0, 1e-3)
    with pytest.raises(ValidationError, match=names) as err:
        make(budget)
    assert "PFTAL's" not in str(err.value) and "TreeAggregator" not in str(err.value)
    assert not budget.events
    # a moderate M still builds and plays
    SubmodPFTAL(3, 4, M=1.0, epsilon=1.0, rng=0).select()


def test_pftal_refuses_a_lipschitz_whose_sensitivity_overflows_by_its_name():
    with pytest.raises(ValidationError, match="'lipschitz' parameter of PFTAL"):
        PFTAL(2, 4, H=1.0, epsilon=1.0, lipschitz=1e308)
    assert PFTAL(2, 4, H=1.0, epsilon=math.inf, lipschitz=1e308).privacy is None
