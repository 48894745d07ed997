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


def test_progress_bar_on_stderr_only_when_asked(capsys):
    quiet = run_audit("laplace", n_runs=200, rng=1, progress=False)
    assert capsys.readouterr().err == ""
    shown = run_audit("laplace", n_runs=200, rng=1, progress=True)
    err = capsys.readouterr().err
    assert "audit laplace" in err and "400/400" in err
    assert shown == quiet  # the bar does not touch the runs
    # not a terminal (pytest captures stderr): silent by default
    run_audit("laplace", n_runs=200, rng=1)
    assert capsys.readouterr().err == ""


def test_parallel_runs_match_serial_and_show_no_bar(capsys):
    pytest.importorskip("joblib")
    serial = run_audit("exponential", n_runs=200, rng=2, progress=False)
    parallel = run_audit("exponential", n_runs=200, rng=2, n_jobs=2, progress=True)
    assert parallel == serial
    assert capsys.readouterr().err == ""
