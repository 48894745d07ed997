"""The privacy-path tracer of ``benchmarks/trace_privacy_path.py`` finds the first noise draw of
a public call and counts the path up to it (the figures themselves are the benchmark's)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

import dpsubmod
from dpsubmod.functions import Modular

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "trace_privacy_path.py"


@pytest.fixture(scope="module")
def tracer():
    spec = importlib.util.spec_from_file_location("trace_privacy_path", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up by name
    spec.loader.exec_module(mod)
    yield mod
    del sys.modules[spec.name]


@pytest.mark.parametrize("case", ["private_greedy", "SubmodPFTAL"])
def test_the_tracer_finds_the_first_draw_and_the_files_before_it(tracer, case):
    make = tracer.CASES[case]
    t = tracer.trace(make(20, 5, 2) if case == "private_greedy" else make(3, 3))
    assert t.first_draw is not None
    assert len(t.files) > 0 and t.cross_file_calls > 0 and t.epsilon_validations > 0
    assert all(not f.startswith("/") for f in t.files)  # relative to the package
    assert sys.getprofile() is None  # the profiler is removed


def test_a_call_without_noise_has_no_first_draw(tracer):
    f = Modular(np.arange(4.0))
    t = tracer.trace(lambda: dpsubmod.maximize(f, 2, method="greedy"))
    assert t.first_draw is None
    assert "offline/registry.py" in t.files and t.epsilon_validations == 0


def test_submod_pftal_checks_the_users_epsilon_once(tracer):
    # The constructor checks the user's arguments; the plan's counter, the run's counter and
    # the inner PFTAL are built from the checked values, so nothing below it checks epsilon
    # again. PrivacyEvent's checks of its own fields (privacy/events.py) are counted apart.
    t = tracer.trace(tracer.CASES["SubmodPFTAL"](3, 3))
    assert t.first_draw is not None
    above = {site: c for site, c in t.epsilon_checks.items()
             if "<- privacy/events.py:" not in site}
    assert sum(above.values()) <= 1, above
