"""dpsubmod logs through logging.getLogger("dpsubmod"): silent by default, public parameters
only, and the estimators' verbose= shows the release on standard error."""

from __future__ import annotations

import logging

import numpy as np
import pytest

import dpsubmod
from dpsubmod import maximize
from dpsubmod._log import logger
from dpsubmod.functions import Modular


def objective():
    return Modular(np.array([0.9, 0.1, 0.5, 0.3]), sensitivity=0.05)


def test_the_package_logger_has_a_null_handler_and_is_silent_by_default(capsys):
    assert logging.getLogger("dpsubmod") is logger
    assert any(isinstance(h, logging.NullHandler) for h in logger.handlers)
    maximize(objective(), 2, method="private_greedy", epsilon=1.0, rng=0,
             budget=dpsubmod.Budget(2.0))
    out = capsys.readouterr()
    assert out.out == "" and out.err == ""


def test_public_entries_log_public_parameters(caplog):
    with caplog.at_level(logging.DEBUG, logger="dpsubmod"):
        maximize(objective(), 2, method="private_greedy", epsilon=1.0)
    text = caplog.text
    assert "private_greedy" in text and "epsilon=1" in text
    assert "noise backend secure" in text  # the default rule, said at DEBUG
    # nothing computed from the data: the gains are 0.9, 0.1, 0.5, 0.3
    assert not any(v in text for v in ("0.9", "0.5", "0.3"))


def test_nothing_is_logged_below_the_level_asked_for(caplog):
    with caplog.at_level(logging.WARNING, logger="dpsubmod"):
        maximize(objective(), 2, method="private_greedy", epsilon=1.0, rng=0)
    assert caplog.records == []


@pytest.mark.parametrize("verbose", [0, 1])
def test_estimator_verbose_prints_the_release_on_stderr(capsys, verbose):
    pytest.importorskip("sklearn")
    from dpsubmod.estimators import PrivateFeatureSelector

    rng = np.random.default_rng(0)
    X = rng.integers(0, 3, size=(200, 4))
    y = (X[:, 1] > 0).astype(int)
    level = logger.level
    PrivateFeatureSelector(2, epsilon=1.0, random_state=0, verbose=verbose).fit(X, y)
    err = capsys.readouterr().err
    if verbose:
        assert "[dpsubmod] PrivateFeatureSelector.fit: one release of (epsilon=1, delta=0)" in err
        assert "numpy backend" in err
    else:
        assert err == ""
    assert logger.level == level and not any(
        isinstance(h, logging.StreamHandler) and not isinstance(h, logging.NullHandler)
        for h in logger.handlers)  # restored after the fit
