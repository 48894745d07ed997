"""The privacy path of the private continuous methods, measured by the tracer of
``benchmarks/trace_privacy_path.py``: epsilon is validated once at the public entry, then at
most once more up to the first draw (continuous greedy's mechanism checks its epsilon when
built; DPCG's mechanisms are built from shares of the validated epsilon and trust them)."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import dpsubmod
from dpsubmod.functions import FacilityLocation
from scripts import load_script


@pytest.fixture(scope="module")
def tracer():
    yield load_script("benchmarks/trace_privacy_path.py")
    del sys.modules["trace_privacy_path"]


def _objective() -> FacilityLocation:
    rng = np.random.default_rng(0)
    return FacilityLocation.from_records(rng.random((40, 2)), rng.random((8, 2)),
                                         similarity="gaussian", bandwidth=0.3)


#: (method, options, epsilon checks below the public entry)
ROUTES = [
    ("private_continuous_greedy", {}, 1),  # its product-base mechanism, when built
    ("private_continuous_greedy_layers", {"cover_size": 2, "n_subsample": 3}, 1),
    ("dpcg", {}, 0),
    # Gaussian: the analytic calibration (privacy/calibration.py) checks its epsilon; "auto"
    # computes it to compare it with the zCDP calibration, which it then chooses
    ("dpcg", {"delta": 1e-6}, 1),
    ("dpcg", {"delta": 1e-6, "gaussian_calibration": "analytic"}, 1),
    # the runs' noise, the linear part's, the choice of the run: three mechanisms
    ("dpcg_curvature", {}, 0),
    ("dpcg_curvature", {"delta": 1e-6, "noise": "gaussian",
                        "gaussian_calibration": "analytic"}, 1),
    ("dpcg_curvature", {"linear_term": np.full(8, 0.01)}, 0),
]


@pytest.mark.parametrize(("method", "options", "below"), ROUTES,
                         ids=[f"{m}-{sorted(o)}" for m, o, _ in ROUTES])
def test_epsilon_is_validated_at_the_entry_and_at_most_once_below_it(
        tracer, method, options, below):
    f = _objective()
    t = tracer.trace(lambda: dpsubmod.maximize(f, 2, method, epsilon=1.0, rng=0, steps=2,
                                               **options))
    assert t.first_draw is not None
    assert t.epsilon_validations <= 1 + below, t.epsilon_checks
    assert any("offline/registry.py" in site for site in t.epsilon_checks)


@pytest.mark.parametrize("method", ["private_continuous_greedy", "dpcg", "dpcg_curvature"])
def test_the_methods_own_functions_validate_epsilon_once_at_their_entry(tracer, method):
    f = _objective()
    fn = getattr(dpsubmod.offline, method)
    t = tracer.trace(lambda: fn(f, 2, epsilon=1.0, rng=0, steps=2))
    assert t.first_draw is not None
    assert t.epsilon_validations <= 2, t.epsilon_checks
    assert not any("offline/registry.py" in site for site in t.epsilon_checks)
