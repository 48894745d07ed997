"""Modular: weights as gains, monotonicity flag, input checks."""

from __future__ import annotations

import numpy as np
import pytest

from dpsubmod.errors import DPSubmodError, ParameterTypeError, SensitivityError, ValidationError
from dpsubmod.functions import Modular


def test_gains_are_the_weights():
    f = Modular([1.0, -2.0, 0.5])
    st = f.state()
    assert st.gains().tolist() == [1.0, -2.0, 0.5]
    st.add(1)
    assert st.gains().tolist() == [1.0, 0.0, 0.5] and st.value == -2.0


def test_monotone_only_for_nonnegative_weights():
    assert Modular([0.0, 1.0]).monotone and not Modular([1.0, -1e-9]).monotone
    assert Modular([1.0], sensitivity=0.1, data_model="monotone-records").sensitivity == 0.1
    with pytest.raises(SensitivityError, match="data_model"):
        Modular([1.0, -1.0], data_model="monotone-records")


def test_weights_are_copied():
    w = np.array([1.0, 2.0])
    f = Modular(w)
    w[0] = 100.0
    assert f([0]) == 1.0


@pytest.mark.parametrize(
    ("weights", "exc"),
    [([1.0, np.nan], ValidationError), ([[1.0]], ValidationError), ([], ValidationError),
     (["a"], ParameterTypeError)],
)
def test_bad_weights(weights, exc):
    with pytest.raises(exc, match="'weights'") as info:
        Modular(weights)
    assert isinstance(info.value, DPSubmodError)
