"""One default backend across the API: an unseeded private call is secure (OpenDP when
installed, the exact Python engine otherwise), a seeded one is a numpy simulation that says so,
an explicit backend is kept, and a seed with a secure backend gives one SeedWarning."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from dpsubmod import maximize
from dpsubmod.errors import SeedWarning
from dpsubmod.functions import Modular
from dpsubmod.offline import private_greedy
from dpsubmod.online import FIDP, SubmodPFTAL, run
from dpsubmod.online.streams import FunctionStream
from dpsubmod.privacy import opendp_engine
from dpsubmod.privacy.backends import choose_backend
from dpsubmod.tasks import build_constraint, build_task, private_select


def f():
    return Modular(np.array([0.9, 0.1, 0.5, 0.3]), sensitivity=0.05)


def no_warning():
    ctx = warnings.catch_warnings()
    ctx.__enter__()
    warnings.simplefilter("error")
    return ctx


def test_the_rule():
    assert choose_backend(None, None, caller="x") == "secure"
    assert choose_backend(None, 0, caller="x") == "numpy"
    assert choose_backend(None, None, caller="x", supported=("numpy",)) == "numpy"
    assert choose_backend("numpy", None, caller="x") == "numpy"
    with pytest.warns(SeedWarning, match="x: rng does not make"):
        assert choose_backend("opendp", 0, caller="x") == "opendp"


@pytest.mark.parametrize("call", [
    lambda **kw: maximize(f(), 2, method="private_greedy", epsilon=1.0, **kw),
    lambda **kw: private_greedy(f(), 2, epsilon=1.0, **kw),
    lambda **kw: maximize(f(), 2, method="private_stochastic_greedy", epsilon=1.0, **kw),
])
def test_offline_entries(call):
    ctx = no_warning()
    try:
        unseeded, seeded = call().privacy, call(rng=0).privacy
    finally:
        ctx.__exit__(None, None, None)
    assert unseeded.backend == "secure" and not unseeded.simulation
    engine = opendp_engine.load(required=False)
    assert unseeded.engine == (engine.name if engine else unseeded.engine)
    assert "engine" in str(unseeded) and "simulation" not in str(unseeded)
    assert seeded.backend == "numpy" and seeded.simulation and "simulation" in str(seeded)
    assert call(rng=0).selection == call(rng=0).selection  # a simulation repeats
    with pytest.warns(SeedWarning) as caught:
        explicit = call(rng=0, backend="secure").privacy
    assert explicit.backend == "secure" and len(caught) == 1
    assert call(backend="numpy").privacy.backend == "numpy"  # explicit is honoured


def test_methods_without_an_exact_sampler_stay_on_numpy():
    g = Modular(np.array([0.9, 0.1, 0.5, 0.3]), sensitivity=0.05, data_model="monotone-records")
    res = maximize(g, 2, method="private_greedy_decomposable", epsilon=1.0, delta=1e-6)
    assert res.privacy.backend == "numpy" and not res.privacy.simulation


def test_tasks_private_select():
    rng = np.random.default_rng(0)
    records = {"x": rng.random(50), "y": rng.random(50)}
    task = build_task("facility-location", records, grid=(2, 2),
                      bounds={"x": (0, 1), "y": (0, 1)})
    spec = build_constraint(task, k=1)
    assert private_select(task, spec, epsilon=1.0).privacy.backend == "secure"
    rel = private_select(task, spec, epsilon=1.0, rng=0)
    assert rel.privacy.backend == "numpy" and rel.to_dict()["params"]["backend"] == "numpy"


def test_online_learners_and_their_clones():
    assert FIDP(4, 5, 2, epsilon=1.0, delta=1e-6).backend == "secure"
    seeded = FIDP(4, 5, 2, epsilon=1.0, delta=1e-6, rng=0)
    assert seeded.backend == "numpy" and seeded.privacy.simulation
    unseeded = FIDP(4, 5, 2, epsilon=1.0, delta=1e-6)
    assert not unseeded.privacy.simulation
    # a clone with a seed chooses again: a simulation, with no warning
    ctx = no_warning()
    try:
        assert unseeded.clone(rng=3).backend == "numpy"
        trace = run(unseeded, FunctionStream([f()] * 5, bound=1.0), rng=1)
    finally:
        ctx.__exit__(None, None, None)
    assert trace is not None
    with pytest.warns(SeedWarning, match="FIDP: rng does not make") as caught:
        FIDP(4, 5, 2, epsilon=1.0, delta=1e-6, backend="secure", rng=0).reset()
    assert len(caught) == 1  # not again from its inner Hedge
    # l2-Laplace noise has no exact sampler: numpy whatever the seed
    assert SubmodPFTAL(4, 5, epsilon=1.0, M=1.0).backend == "numpy"
    assert SubmodPFTAL(4, 5, epsilon=1.0, M=1.0, noise="laplace").backend == "secure"
