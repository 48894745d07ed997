"""Regret of the online minimization learners grows at the theorems' rates (log-log slopes).

Expected regret (over the learner's own rounding) against the best fixed set in hindsight, one
fresh learner per horizon T in 2^8, 2^10, ..., 2^16, fitted slope of log R_T against log T.

Full information (Theorem 7 of Cardoso and Cummings; Hazan and Kale 2012): slope 1/2. The stream
is the one that defeats Follow the Leader, on a modular function with values in [-1, 1]: a half
step, then alternating signs, so the cumulative loss of every element swings around zero and any
learner that follows it too closely pays every round. On this stream the regret of these
learners is Theta(sqrt T) (up to FTAL's log T factor, see below), so the slope tests the rate
from both sides; a learner whose step size ignores T (a constant step) pays linearly and is
caught.

Bandit (Theorem 9; Hazan and Kale's bandit algorithm): slopes 3/4 and 2/3. The stream alternates
two modular regimes; the regret there is dominated by the exploration term gamma * T.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpsubmod.functions import Modular
from dpsubmod.online import (
    BanditHazanKale,
    BanditSubmodPFTAL,
    FunctionStream,
    HazanKale,
    SubmodPFTAL,
    SwitchingStream,
    ftl_trap_stream,
    run,
)

HORIZONS = (2**8, 2**10, 2**12, 2**14, 2**16)
W = np.array([0.6, -0.4, 0.2])


def ftl_killer(T: int) -> FunctionStream:
    return ftl_trap_stream(W, T)


def switching(T: int) -> SwitchingStream:
    return SwitchingStream([Modular([0.6, -0.4, 0.2]), Modular([-0.5, 0.5, -0.1])], T=T, period=1)


def slope(make, stream, seed: int) -> float:
    regrets = []
    for T in HORIZONS:
        trace = run(make(T, seed), stream(T), rng=seed)
        regrets.append(max(trace.final_expected_regret, 1e-9))
    return float(np.polyfit(np.log(HORIZONS), np.log(regrets), 1)[0])


FULL = {
    # Noise off: deterministic in expectation, one seed suffices.
    "SubmodPFTAL, noise off": (lambda T, s: SubmodPFTAL(3, T, M=1.0, epsilon=math.inf, rng=s), 1),
    "SubmodPFTAL, epsilon=1e4": (lambda T, s: SubmodPFTAL(3, T, M=1.0, epsilon=1e4, rng=s), 2),
    "HazanKale": (lambda T, s: HazanKale(3, T, M=1.0), 1),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(FULL))
def test_full_information_rate(name):
    make, seeds = FULL[name]
    slopes = [slope(make, ftl_killer, s) for s in range(seeds)]
    print(f"{name}: slopes {np.round(slopes, 3)}")
    # Measured over T = 2^8 .. 2^16: 0.585 (noise off), 0.580-0.585 over seeds 0-2
    # (epsilon = 1e4; seeds 0 and 1 are run), 0.470 (Hazan-Kale).
    # FTAL's bound is (G^2 / 2H)(1 + log T) with H ~ 1/sqrt(T), so its local slope approaches
    # 1/2 from above like 1/2 + 1/log T; the band allows that and nothing near 1.
    assert all(0.4 <= s <= 0.66 for s in slopes), slopes


@pytest.mark.slow
def test_full_information_rate_catches_an_untuned_step():
    s = slope(lambda T, _: HazanKale(3, T, M=1.0, eta=0.5), ftl_killer, 0)
    assert s > 0.9, s


BANDIT = {
    "BanditSubmodPFTAL, noise off": (
        lambda T, s: BanditSubmodPFTAL(3, T, M=1.0, epsilon=math.inf, rng=s), 0.75),
    "BanditSubmodPFTAL, epsilon=100": (
        lambda T, s: BanditSubmodPFTAL(3, T, M=1.0, epsilon=100.0, rng=s), 0.75),
    "BanditHazanKale": (lambda T, s: BanditHazanKale(3, T, M=1.0, rng=s), 2 / 3),
}


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("name", list(BANDIT))
def test_bandit_rate(name):
    make, rate = BANDIT[name]
    slopes = [slope(make, switching, s) for s in range(2)]
    print(f"{name}: slopes {np.round(slopes, 3)} (theorem {rate:.3f})")
    # Measured over seeds 0-2, T = 2^8 .. 2^16: 0.724/0.703/0.758 (noise off), 0.737/0.751/0.780
    # (epsilon 100), 0.689/0.718/0.706 (Hazan-Kale). The bandit regret is noisy; the mean of
    # seeds 0 and 1 (each fit costs about 20 s) is held within 0.1.
    assert abs(np.mean(slopes) - rate) <= 0.1, slopes
