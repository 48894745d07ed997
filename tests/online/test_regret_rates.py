"""Regret of the online minimization learners grows at the theorems' rates (log-log slopes).

Stream: two modular regimes on n = 3 that alternate every round (the sequence that defeats
Follow the Leader), values in [-1, 1]. Expected regret (over the learner's own rounding) against
the best fixed set in hindsight, one fresh learner per horizon T. Theorem 9: slope 3/4 with
bandit feedback. (The full-information learners are held to their explicit regret bounds in
test_hazan_kale.py and test_pftal.py.)
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpsubmod.functions import Modular
from dpsubmod.online import BanditSubmodPFTAL, SwitchingStream, run

HORIZONS = (2**8, 2**10, 2**12)


def _slope(make, seed: int = 0) -> float:
    regimes = [Modular([0.6, -0.4, 0.2]), Modular([-0.5, 0.5, -0.1])]
    regrets = []
    for T in HORIZONS:
        stream = SwitchingStream(regimes, T=T, period=1)
        trace = run(make(T), stream, rng=seed)
        regrets.append(max(trace.final_expected_regret, 1e-9))
    return float(np.polyfit(np.log(HORIZONS), np.log(regrets), 1)[0])


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_bandit_rate():
    s = _slope(lambda T: BanditSubmodPFTAL(3, T, M=1.0, epsilon=math.inf, rng=0))
    assert 0.6 <= s <= 0.9, s
