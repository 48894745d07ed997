"""The shared validators (issue 15): +inf is refused unless a parameter opts in, integers beyond
float range and non-real arrays are refused by name, and no check leaks a numpy warning."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from dpsubmod._validation import (
    check_bool,
    check_epsilon,
    check_finite,
    check_real,
    check_sparse_finite,
)
from dpsubmod.errors import ParameterTypeError, ValidationError


@pytest.fixture(autouse=True)
def _warnings_are_errors():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


def test_check_real_refuses_infinity_by_default():
    # Before: +inf passed whenever no upper bound was given (bandwidth=inf, s_max=inf, M=inf).
    with pytest.raises(ValidationError, match="'bandwidth' parameter of f must be a finite"):
        check_real(math.inf, "bandwidth", low=0.0, low_open=True, caller="f")
    for bad in (-math.inf, math.nan):
        with pytest.raises(ValidationError):
            check_real(bad, "x", allow_inf=True)
    assert check_real(math.inf, "epsilon", low=0.0, low_open=True, allow_inf=True) == math.inf
    # the opt-in does not widen a closed interval
    with pytest.raises(ValidationError):
        check_real(math.inf, "x", high=1.0, allow_inf=True)
    with pytest.raises(ValidationError):
        check_epsilon(math.inf)


@pytest.mark.parametrize("value", [10**400, -(10**400)])
def test_check_real_refuses_an_integer_beyond_float_range(value):
    with pytest.raises(ValidationError, match="an integer of 401 digits"):
        check_real(value, "x")


@pytest.mark.parametrize("value", [True, np.bool_(False), "1.0", None, 1j, [1.0]])
def test_check_real_refuses_non_reals_by_type(value):
    with pytest.raises(ParameterTypeError, match="'x'"):
        check_real(value, "x")


def test_check_bool():
    assert check_bool(np.bool_(True), "flag") is True
    for bad in (1, "yes", None, 0.0):
        with pytest.raises(ParameterTypeError, match="'flag' parameter must be True or False"):
            check_bool(bad, "flag")


@pytest.mark.parametrize("value", [np.array([1.0 + 1j]), np.array(["0.5", "1"]), ["0.5"],
                                   np.array([object()], dtype=object), [[1.0], [1.0, 2.0]]])
def test_check_finite_refuses_complex_strings_and_objects(value):
    # Before: complex values were accepted (or cast with a ComplexWarning) and numeric strings
    # were parsed when a dtype was requested.
    with pytest.raises(ParameterTypeError, match="'a'"):
        check_finite(value, "a", dtype=np.float64)
    with pytest.raises(ParameterTypeError, match="'a'"):
        check_finite(value, "a")


def test_check_finite_sums_huge_finite_values_without_a_warning():
    a = check_finite(np.full(4, 1e308), "a", dtype=np.float64)
    assert np.isfinite(a).all()
    with pytest.raises(ValidationError, match="NaN or infinite"):
        check_finite([1e308, math.inf], "a")
    # a mixed object list is still read as numbers; float32 overflow is refused, not warned
    assert check_finite(np.array([1, 2.5], dtype=object), "a", dtype=np.float64).dtype == float
    with pytest.raises(ValidationError, match="NaN or infinite"):
        check_finite(np.array([1e300]), "a", dtype=np.float32)


def test_check_sparse_finite_refuses_complex():
    with pytest.raises(ParameterTypeError, match="real numbers"):
        check_sparse_finite(sp.csr_array(np.array([[1j, 0]])), "m")
