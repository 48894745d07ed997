"""``progress=True`` on maximize and maximize_ksubmodular: a tqdm bar over the steps that never
changes a result or a random draw, silent when stderr is not a terminal."""

from __future__ import annotations

import io
import json
import sys

import numpy as np
import pytest
import tqdm

from dpsubmod import maximize, maximize_ksubmodular
from dpsubmod.constraints import Knapsack
from dpsubmod.errors import ParameterTypeError
from dpsubmod.functions import FacilityLocation
from dpsubmod.functions.ksubmodular import KFacilityLocation


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class _EveryUpdate(tqdm.tqdm):
    """Draws at every update, so that a fast test sees each step of the bar."""

    def __init__(self, *args, **kwargs):
        kwargs.update(mininterval=0, miniters=1)
        super().__init__(*args, **kwargs)


@pytest.fixture(scope="module")
def f():
    rng = np.random.default_rng(0)
    return FacilityLocation.from_records(rng.uniform(size=(120, 2)), rng.uniform(size=(25, 2)),
                                         bandwidth=0.3)


@pytest.fixture(scope="module")
def kf():
    sim = np.random.default_rng(1).uniform(size=(2, 30, 8))
    return KFacilityLocation(sim, max_similarity=1.0)


CASES = [
    ("greedy", 4, {}),
    ("lazy_greedy", 4, {}),
    ("stochastic_greedy", 4, {}),
    ("private_greedy", 4, {"epsilon": 1.0}),
    ("private_stochastic_greedy", 4, {"epsilon": 1.0}),
    ("private_greedy_decomposable", 3, {"epsilon": 1.0, "delta": 1e-6}),
    ("private_continuous_greedy", 2, {"epsilon": 1.0, "steps": 3, "n_samples": 4}),
    ("dpcg", 2, {"steps": 3, "epsilon": 1.0, "delta": 1e-6}),
]


def _fingerprint(res, gen):
    # the release, its privacy statement and diagnostics, and where the caller's stream stands
    out = res.to_dict(diagnostics=True)
    out.pop("time", None)
    return json.dumps(out, sort_keys=True, default=str), gen.integers(2**62)


@pytest.mark.parametrize("method,k,kwargs", CASES, ids=[c[0] for c in CASES])
def test_progress_changes_no_result_and_no_draw(f, method, k, kwargs, monkeypatch):
    monkeypatch.setattr(sys, "stderr", _Terminal())
    monkeypatch.setattr(tqdm, "tqdm", _EveryUpdate)
    g0, g1 = np.random.default_rng(7), np.random.default_rng(7)
    plain = _fingerprint(maximize(f, k, method, rng=g0, **kwargs), g0)
    shown = _fingerprint(maximize(f, k, method, rng=g1, progress=True, **kwargs), g1)
    assert plain == shown
    assert f"maximize {method}" in sys.stderr.getvalue()


def test_ksubmodular_progress_changes_nothing(kf, monkeypatch):
    monkeypatch.setattr(sys, "stderr", _Terminal())
    for method, kwargs in [("ks_greedy", {}), ("ks_private", {"epsilon": 1.0})]:
        g0, g1 = np.random.default_rng(3), np.random.default_rng(3)
        plain = _fingerprint(maximize_ksubmodular(kf, 3, method, rng=g0, **kwargs), g0)
        shown = _fingerprint(maximize_ksubmodular(kf, 3, method, rng=g1, progress=True,
                                                  **kwargs), g1)
        assert plain == shown
    assert "maximize_ksubmodular ks_private" in sys.stderr.getvalue()


def test_bar_counts_the_steps_when_forced(f, monkeypatch):
    monkeypatch.setattr(tqdm, "tqdm", _EveryUpdate)
    for method, kwargs, total in [("greedy", {}, 5), ("private_greedy", {"epsilon": 1.0}, 5),
                                  ("private_continuous_greedy",
                                   {"epsilon": 1.0, "steps": 4, "n_samples": 2}, 4)]:
        err = _Terminal()
        monkeypatch.setattr(sys, "stderr", err)
        k = 2 if method == "private_continuous_greedy" else 5
        maximize(f, k, method, rng=0, progress=True, **kwargs)
        text = err.getvalue()
        # every step is drawn, up to the planned total (one per greedy step, or per round)
        for i in range(total + 1):
            assert f"{i}/{total}" in text, (method, i, text)


def test_bar_over_a_knapsack_counts_elements_without_a_total(f, monkeypatch):
    monkeypatch.setattr(tqdm, "tqdm", _EveryUpdate)
    err = _Terminal()
    monkeypatch.setattr(sys, "stderr", err)
    res = maximize(f, Knapsack(np.ones(f.n), 3.0), "greedy", progress=True)
    assert f"{len(res.selection)}step" in err.getvalue().replace(" ", "")


def test_silent_when_stderr_is_not_a_terminal(f, monkeypatch):
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    maximize(f, 3, "private_greedy", epsilon=1.0, rng=0, progress=True)
    assert err.getvalue() == ""


@pytest.mark.parametrize("bad", ["yes", 1, None, 0.5, [True]])
def test_invalid_progress_is_refused_by_name(f, bad):
    with pytest.raises(ParameterTypeError, match="'progress' parameter of maximize"):
        maximize(f, 2, "greedy", progress=bad)
    with pytest.raises(ParameterTypeError, match="'progress' parameter of maximize_ksubmodular"):
        maximize_ksubmodular(f, 2, "ks_greedy", progress=bad)


def test_a_refused_progress_spends_nothing(f):
    from dpsubmod.privacy import Budget

    budget = Budget(epsilon=1.0)
    with pytest.raises(ParameterTypeError):
        maximize(f, 2, "private_greedy", epsilon=0.5, budget=budget, progress="on")
    assert budget.spent == (0.0, 0.0)
