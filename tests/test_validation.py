"""The shared validators (issue 15): +inf is refused unless a parameter opts in, integers beyond
float range and non-real arrays are refused by name, and no check leaks a numpy warning."""

from __future__ import annotations

import copy
import math
import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from dpsubmod._selection import Selection
from dpsubmod._validation import (
    as_mask,
    check_bool,
    check_epsilon,
    check_finite,
    check_indices,
    check_real,
    check_sparse_finite,
)
from dpsubmod.errors import GroundSetMismatchError, ParameterTypeError, ValidationError


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


def test_check_sparse_finite_converts_with_the_inputs_module_and_refuses_dense():
    m = check_sparse_finite(sp.coo_matrix(np.array([[0.0, 2.0], [3.0, 0.0]])), "m")
    assert isinstance(m, sp.csr_array) and m.toarray().tolist() == [[0.0, 2.0], [3.0, 0.0]]
    with pytest.raises(ParameterTypeError, match="'m' argument of f must be a scipy.sparse"):
        check_sparse_finite(np.eye(2), "m", caller="f")


def test_a_selection_is_its_tuple_and_is_evaluated_through_its_kept_mask():
    mask = np.array([False, True, False, True, True, False])
    S = Selection.from_mask(mask)
    assert S == (1, 3, 4) and hash(S) == hash((1, 3, 4)) and repr(S) == "(1, 3, 4)"
    assert all(type(e) is int for e in S)
    mask[0] = True  # the learner's array may change afterwards: the selection keeps its copy
    kept = as_mask(S, 6)
    assert kept.tolist() == [False, True, False, True, True, False]
    assert as_mask(S, 6) is kept and not kept.flags.writeable
    with pytest.raises(ValueError):
        kept[0] = True
    assert check_indices(S, 6, "S", unique=True).tolist() == [1, 3, 4]
    # another ground set: the indices are read as those of any tuple, and checked as such
    assert as_mask(S, 8).tolist() == [False, True, False, True, True, False, False, False]
    assert as_mask(S, 8).flags.writeable
    with pytest.raises(ValidationError, match="index 4, outside the ground set range"):
        as_mask(S, 4)
    # a selection without a kept mask (built from indices, or a set of under n / 8 elements,
    # whose mask would outweigh the tuple) is a tuple like any other
    assert as_mask(Selection([0, 2]), 3).tolist() == [True, False, True]
    sparse = Selection.from_mask(np.isin(np.arange(40), [3, 9, 17, 30]))
    assert sparse == (3, 9, 17, 30) and sparse.mask_for(40) is None
    assert np.flatnonzero(as_mask(sparse, 40)).tolist() == [3, 9, 17, 30]
    assert Selection.from_mask(np.isin(np.arange(40), [3, 9, 17, 30, 31])).mask_for(40) is not None
    for back in (pickle.loads(pickle.dumps(S)), copy.deepcopy(S)):
        assert type(back) is Selection and back == S
        assert as_mask(back, 6).tolist() == kept.tolist()


@pytest.mark.parametrize("n", [5, 10_000])  # a mask of the ground set, and np.unique
def test_check_indices_unique_finds_a_repeat(n):
    assert check_indices([4, 0, 2], n, "order", unique=True).tolist() == [4, 0, 2]
    assert check_indices([3], n, "order", unique=True).tolist() == [3]
    with pytest.raises(ValidationError, match="'order' argument of g holds repeated indices"):
        check_indices([4, 0, 4], n, "order", caller="g", unique=True)
    with pytest.raises(GroundSetMismatchError):
        check_indices(np.zeros(n + 1, dtype=bool), n, "order", unique=True)
