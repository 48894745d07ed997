"""The privacy-path tracer of ``benchmarks/trace_privacy_path.py`` finds the first noise draw of
a public call and counts the path up to it (the figures themselves are the benchmark's)."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import dpsubmod
from dpsubmod.functions import Modular
from scripts import load_script


@pytest.fixture(scope="module")
def tracer():
    yield load_script("benchmarks/trace_privacy_path.py")
    del sys.modules["trace_privacy_path"]


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


def test_a_draw_from_a_generator_inside_privacy_is_found(tracer):
    """numpy's ``Generator`` methods emit no profiler event: the privacy function that calls one
    marks the draw (here the product-base sampler's inverse CDF, on the numpy backend)."""
    rng = np.random.default_rng(0)
    f = dpsubmod.functions.FacilityLocation.from_records(rng.random((30, 2)), rng.random((6, 2)),
                                                      bandwidth=0.3)
    t = tracer.trace(lambda: dpsubmod.maximize(f, 2, "private_continuous_greedy", epsilon=1.0,
                                               rng=0, steps=2))
    assert t.first_draw is not None and "privacy/" in t.first_draw


def test_private_greedy_validates_epsilon_at_most_twice(tracer):
    """Once at the public entry (``maximize``), once where the step's mechanism is built."""
    t = tracer.trace(tracer.CASES["private_greedy"](20, 5, 2))
    assert t.epsilon_validations <= 2, t.epsilon_checks


def test_submod_pftal_validates_epsilon_at_most_twice(tracer):
    # The constructor checks the user's arguments; the plan's counter, the run's counter and
    # the inner PFTAL are built from the checked values, and their events are derived without
    # a second check, so nothing below the constructor checks epsilon again.
    t = tracer.trace(tracer.CASES["SubmodPFTAL"](3, 3))
    assert t.first_draw is not None
    assert t.epsilon_validations <= 2, t.epsilon_checks


@pytest.mark.parametrize("method", ["private_greedy", "dpcg_curvature"])
def test_the_command_line_validates_epsilon_at_its_entry_and_at_most_once_below_it(
        tracer, method):
    """``dpsubmod select`` checks ``--epsilon`` once, then passes the checked value down
    (``private_select`` and ``maximize`` do not check it again); a greedy step's mechanism
    checks its epsilon when built."""
    t = tracer.trace(tracer.CASES["dpsubmod select"](60, 3, 2, method))
    assert t.first_draw is not None
    assert t.epsilon_validations <= 2, t.epsilon_checks
    sites = " ".join(t.epsilon_checks)
    assert "cli/select.py" in sites
    assert "offline/registry.py" not in sites and "tasks/" not in sites


def test_private_select_validates_epsilon_at_its_entry_only(tracer):
    """Called by a user, :func:`dpsubmod.tasks.private_select` is the public entry: it checks
    ``epsilon`` and ``maximize`` below it does not."""
    from dpsubmod.tasks import build_constraint, build_task, private_select

    rng = np.random.default_rng(0)
    task = build_task("facility-location", {"x": rng.random(60), "y": rng.random(60)},
                      grid=(3, 3), bounds={"x": (0, 1), "y": (0, 1)})
    spec = build_constraint(task, k=2)
    t = tracer.trace(lambda: private_select(task, spec, epsilon=1.0, backend="numpy", rng=0))
    assert t.first_draw is not None
    assert t.epsilon_validations <= 2, t.epsilon_checks
    sites = " ".join(t.epsilon_checks)
    assert "tasks/release.py" in sites and "offline/registry.py" not in sites


def test_an_estimators_fit_validates_epsilon_where_it_checks_its_parameters(tracer):
    """A scikit-learn selector checks ``epsilon`` with its other parameters before reading the
    data; the selection below it does not check it again."""
    from dpsubmod.estimators import PrivateFacilityLocationSelector

    X = np.random.default_rng(0).random((60, 2))
    t = tracer.trace(lambda: PrivateFacilityLocationSelector(
        2, grid=3, bounds=(0, 1), epsilon=1.0, random_state=0).fit(X))
    assert t.first_draw is not None
    assert t.epsilon_validations <= 2, t.epsilon_checks
    sites = " ".join(t.epsilon_checks)
    assert "estimators/" in sites and "tasks/" not in sites and "offline/" not in sites
