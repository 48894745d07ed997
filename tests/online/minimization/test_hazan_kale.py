"""Non-private baselines, and the deterministic regret bounds of the noise-free learners.

With the rounding averaged out (the harness's expected values), the full-information learners
are deterministic, so their regret bounds can be checked on every run, not in expectation.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpsubmod.extensions.lovasz import lovasz_subgradient
from dpsubmod.functions import Modular
from dpsubmod.online import FunctionStream, HazanKale, SubmodPFTAL, SwitchingStream, run
from oracles import all_values, random_concave_minus_modular, random_cut_plus_modular


def _adversarial(n, T, seed):
    rng = np.random.default_rng(seed)
    fs = [random_cut_plus_modular(n, rng) if t % 2 else random_concave_minus_modular(n, rng)
          for t in range(T)]
    M = max(float(np.abs(all_values(f)[1]).max()) for f in fs)
    return FunctionStream(fs, bound=M)


def _alternating(T):
    a = Modular([-0.25, 0.5, 0.25])
    b = Modular([-0.25, -0.5, 0.25])
    return SwitchingStream([b, a], T=T, bound=1.0)


@pytest.mark.parametrize("seed", range(3))
def test_hazan_kale_update_and_regret_bound(seed):
    n, T = 5, 120
    stream = _adversarial(n, T, seed)
    M = stream.bound
    learner = HazanKale(n, T, M=M, rng=seed)
    eta = learner.resolved_params["eta"]
    assert eta == pytest.approx(math.sqrt(n) / (4 * M * math.sqrt(T)))
    x = np.zeros(n)
    for f in stream:  # the update is projected subgradient descent, exactly
        learner.select()
        learner.update(f)
        x = np.clip(x - eta * lovasz_subgradient(f, x)[1], 0, 1)
        np.testing.assert_allclose(learner.iterate, x, atol=1e-12)
    # OGD: regret of the Lovasz iterates <= n/(2 eta) + eta T G^2 / 2 with ||g|| <= 2 sqrt(2) M,
    # i.e. 3 M sqrt(nT) <= 4 M sqrt(nT) (Hazan and Kale's bound).
    tr = run(HazanKale(n, T, M=M), stream)
    assert tr.final_expected_regret <= 3 * M * math.sqrt(n * T) + 1e-9


@pytest.mark.parametrize("stream", [_adversarial(4, 200, 7), _alternating(200)],
                         ids=["random", "alternating"])
def test_noise_free_ftal_regret_bound(stream):
    # Lemma 11 (FTAL on the H-strongly convex models) + Lemma 7 (regularisation):
    # regret <= 2 (L + H D)^2 (1 + ln T) / H + T H D^2 / 2, L = 4M + H sqrt(n), D = sqrt(n).
    n, T, M = stream.n, stream.T, stream.bound
    tr = run(SubmodPFTAL(n, T, M=M, epsilon=math.inf), stream)
    H = tr.params["H"]
    L = 4 * M + H * math.sqrt(n)
    bound = 2 * (L + H * math.sqrt(n)) ** 2 * (1 + math.log(T)) / H + T * H * n / 2
    assert 0 < tr.final_expected_regret <= bound


def test_alternating_stream_defeats_follow_the_leader_but_not_the_learners():
    # FTL (H -> 0, regularised towards the origin as in the paper) oscillates and pays linear
    # regret; the tuned learners pay O(sqrt(T) log T).
    T = 400
    ftl = run(SubmodPFTAL(3, T, M=1.0, epsilon=math.inf, H=1e-9, centre=0.0), _alternating(T))
    tuned = run(SubmodPFTAL(3, T, M=1.0, epsilon=math.inf), _alternating(T))
    ogd = run(HazanKale(3, T, M=1.0), _alternating(T))
    assert ftl.final_expected_regret > 0.2 * T
    assert tuned.final_expected_regret < 0.1 * T and ogd.final_expected_regret < 0.1 * T


def test_a_tiny_bound_takes_the_limit_step_quietly_and_states_an_honest_bound():
    import warnings

    from dpsubmod.online.minimization.bounds import hazan_kale_bound

    # M = 1e-320 makes the default step overflow to inf: each coordinate with a nonzero
    # subgradient goes to the face its sign points to, the limit of the update; no inf * 0.
    learner = HazanKale(2, 4, M=1e-320, rng=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        learner.select()
        learner.update(Modular([5e-321, -5e-321]))
        assert learner.select() == (1,)
        assert learner.guarantee.bound == math.inf  # vacuous, never NaN
    # the bound scales with M (M * M underflowed to 0 and understated it at M = 1e-300)
    one = hazan_kale_bound(2, 4, 1.0, math.sqrt(2) / 8)
    assert hazan_kale_bound(2, 4, 1e-300, math.sqrt(2) / 8e-300) == pytest.approx(one * 1e-300)


def test_bandit_hazan_kale_refuses_a_bound_whose_estimate_overflows():
    from dpsubmod.errors import ValidationError
    from dpsubmod.online import BanditHazanKale

    with pytest.raises(ValidationError, match="'M' parameter of BanditHazanKale"):
        BanditHazanKale(1, 1, M=1.7976931348623157e308)
    BanditHazanKale(1, 1, M=1e300, gamma=1.0)  # 2 M (n + 1) / gamma = 4e300 fits
