"""The named audits behind ``dpsubmod audit``: each calibrated setup passes, and the same
setup with a quarter of the noise is caught (false-alarm rate alpha = 0.05 per audit, fixed
seeds)."""

from __future__ import annotations

import pytest

from dpsubmod.errors import DPSubmodError
from dpsubmod.experiments.audits import AUDITS, run_audit


@pytest.mark.slow
@pytest.mark.parametrize("name", list(AUDITS))
def test_calibrated_passes_and_quarter_noise_is_caught(name):
    ok = run_audit(name, epsilon=1.0, rng=0)
    assert not ok.violation and ok.epsilon_lower_bound <= 1.0, str(ok)
    bad = run_audit(name, epsilon=1.0, noise_factor=0.25, rng=0)
    assert bad.violation and bad.epsilon_lower_bound > 1.0, str(bad)


def test_same_seed_same_audit():
    a = run_audit("laplace", n_runs=500, rng=3)
    assert a == run_audit("laplace", n_runs=500, rng=3)


@pytest.mark.parametrize("kwargs,match", [
    (dict(name="nope"), "Unknown audit"),
    (dict(name="laplace", epsilon=0.0), "epsilon"),
    (dict(name="gaussian", delta=0.0), "delta"),
    (dict(name="laplace", n_runs=3), "n_runs"),
    (dict(name="laplace", noise_factor=0.0), "noise_factor"),
])
def test_bad_input(kwargs, match):
    with pytest.raises(DPSubmodError, match=match):
        run_audit(**kwargs)
