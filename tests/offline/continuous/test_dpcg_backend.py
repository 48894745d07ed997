"""DPCG decides its Gaussian calibration by whether the backend draws on a grid, whatever its
name: the discrete Gaussian of every grid backend is certified through zCDP only."""

from __future__ import annotations

import random

import numpy as np
import pytest

from dpsubmod import Budget
from dpsubmod.errors import ValidationError
from dpsubmod.functions import Modular
from dpsubmod.offline import dpcg
from dpsubmod.privacy import NumpyBackend, SecureBackend

try:
    import opendp  # noqa: F401

    HAVE_OPENDP = True
except ImportError:
    HAVE_OPENDP = False

F = Modular(np.linspace(0.1, 1.0, 6))


@pytest.mark.parametrize("backend", [
    "secure", lambda: SecureBackend(random_source=random.Random(0)),
    pytest.param("opendp", marks=pytest.mark.skipif(not HAVE_OPENDP, reason="OpenDP absent")),
])
def test_every_grid_backend_gets_the_zcdp_calibration(backend):
    be = backend() if callable(backend) else backend
    # one step: the default "auto" would pick the exact per-step calibration on numpy
    res = dpcg(F, 2, epsilon=1.0, delta=1e-6, steps=1, sensitivity=0.1, backend=be)
    assert res.params["gaussian_calibration"] == "zcdp"
    ref = dpcg(F, 2, epsilon=1.0, delta=1e-6, steps=1, sensitivity=0.1, rng=0)
    assert ref.params["gaussian_calibration"] != "zcdp"  # the case the check is about


def test_a_numpy_backend_instance_keeps_the_exact_calibration():
    res = dpcg(F, 2, epsilon=1.0, delta=1e-6, steps=1, sensitivity=0.1,
               backend=NumpyBackend(0))
    assert res.params["gaussian_calibration"] != "zcdp"


def test_an_unknown_backend_is_refused_before_any_charge():
    budget = Budget(5.0, 1e-3)
    with pytest.raises(ValidationError, match="'backend'"):
        dpcg(F, 2, epsilon=1.0, delta=1e-6, sensitivity=0.1, backend="gpu", budget=budget)
    assert budget.spent == (0.0, 0.0)
