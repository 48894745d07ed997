"""A mechanism built with ``_trusted`` from a share of an epsilon that a public entry validated
is the mechanism the public constructor builds: the same privacy map and the same draws at a
seed; only the check of ``epsilon`` is left out."""

from __future__ import annotations

import numpy as np
import pytest

from dpsubmod.errors import ValidationError
from dpsubmod.privacy import ExponentialMechanism, Gaussian, Laplace
from dpsubmod.privacy.backends import NumpyBackend

CASES = [
    (Laplace, {"epsilon": 0.3, "sensitivity": 2.0, "dim": 3}, np.array([1.0, -2.0, 0.5])),
    (Gaussian, {"epsilon": 0.3, "delta": 1e-6, "sensitivity": 2.0, "dim": 3,
                "calibration": "analytic"}, np.array([1.0, -2.0, 0.5])),
    (ExponentialMechanism, {"epsilon": 0.3, "sensitivity": 2.0}, np.array([1.0, 3.0, 2.0])),
]


@pytest.mark.parametrize(("cls", "params", "data"), CASES, ids=[c[0].__name__ for c in CASES])
def test_a_trusted_mechanism_is_the_public_one(cls, params, data):
    public = cls(**params, backend=NumpyBackend(7))
    trusted = cls._trusted("some_method", **params, backend=NumpyBackend(7))
    assert trusted.privacy_map() == public.privacy_map()
    for _ in range(3):
        np.testing.assert_array_equal(trusted.release(data), public.release(data))


@pytest.mark.parametrize(("cls", "params", "data"), CASES, ids=[c[0].__name__ for c in CASES])
def test_only_epsilon_is_trusted(cls, params, data):
    bad = {**params, "sensitivity": -1.0}
    with pytest.raises(ValidationError, match="'sensitivity' parameter of some_method"):
        cls._trusted("some_method", **bad)
    with pytest.raises(ValidationError, match="'epsilon' parameter of some_method"):
        cls._named("some_method", **{**params, "epsilon": -1.0})  # the checked way refuses
