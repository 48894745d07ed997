"""Multilinear extension: closed forms, enumeration and the common-random-numbers estimator.

Every exact method is held to the brute-force sum over all 2^n sets (``oracles``); the sampling
estimator is checked for unbiasedness against that reference within its own standard error.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from dpsubmod.errors import (
    DPSubmodError,
    GroundSetMismatchError,
    ParameterTypeError,
    ValidationError,
)
from dpsubmod.extensions import (
    MultilinearEstimate,
    has_closed_form,
    multilinear_gradient,
    multilinear_gradients,
    multilinear_value,
    register_closed_form,
)
from dpsubmod.extensions import _closed_forms as ml
from dpsubmod.functions import Coverage, FacilityLocation, Modular
from dpsubmod.functions.combinators import Restricted, Scaled, Sum

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from oracles import (  # noqa: E402
    ConcaveOfModular,
    TableFunction,
    multilinear_brute_force,
    random_cut_plus_modular,
)


def _point(rng: np.random.Generator, n: int) -> np.ndarray:
    """A point of [0, 1]^n with some coordinates exactly 0 and exactly 1 (the edge cases)."""
    x = rng.random(n)
    x[rng.random(n) < 0.25] = 1.0
    x[rng.random(n) < 0.15] = 0.0
    return x


def _coverage(rng: np.random.Generator, n: int, sparse: bool = False) -> Coverage:
    A = (rng.random((n, 9)) < 0.35).astype(float)
    return Coverage(sp.csr_array(A) if sparse else A, weights=rng.random(9) + 0.1)


def _facility(rng: np.random.Generator, n: int, kind: str = "dense") -> FacilityLocation:
    S = rng.random((6, n))
    S[rng.random(S.shape) < 0.3] = 0.0
    if n >= 4:
        S[0, 1] = S[0, 2] = S[0, 3]  # ties within a client
    S[1] = 0.0  # a client served by nobody
    w = rng.random(6) + 0.1
    if kind == "sparse":
        return FacilityLocation(sp.csr_array(S), weights=w)
    if kind == "float32":
        return FacilityLocation(S.astype(np.float32), weights=w)
    return FacilityLocation(S, weights=w)


def _check_exact(f, x, *, atol=1e-12):
    v_ref, g_ref = multilinear_brute_force(f, x)
    val = multilinear_value(f, x, method="exact")
    grad = multilinear_gradient(f, x, method="exact")
    scale = max(1.0, abs(v_ref))
    assert val.exact and grad.exact
    assert val.n_samples == 0 and np.all(grad.standard_error == 0)
    np.testing.assert_allclose(val.estimate, v_ref, atol=atol * scale, rtol=0)
    np.testing.assert_allclose(grad.estimate, g_ref, atol=atol * scale, rtol=0)
    return val, grad


# -- closed forms against enumeration ------------------------------------------------------------

@pytest.mark.parametrize("seed", range(6))
def test_modular_closed_form(seed):
    rng = np.random.default_rng(seed)
    f = Modular(rng.normal(size=8))
    x = _point(rng, 8)
    _, grad = _check_exact(f, x)
    assert grad.method == "closed-form"
    np.testing.assert_array_equal(grad.estimate, f.weights)


@pytest.mark.parametrize("sparse_input", [False, True])
@pytest.mark.parametrize("seed", range(6))
def test_coverage_closed_form(seed, sparse_input):
    rng = np.random.default_rng(seed)
    f = _coverage(rng, 10, sparse_input)
    _, grad = _check_exact(f, _point(rng, 10))
    assert grad.method == "closed-form"


@pytest.mark.parametrize("kind", ["dense", "sparse", "float32"])
@pytest.mark.parametrize("seed", range(6))
def test_facility_location_closed_form(seed, kind):
    rng = np.random.default_rng(seed)
    f = _facility(rng, 9, kind)
    _, grad = _check_exact(f, _point(rng, 9))
    assert grad.method == "closed-form"


def test_facility_location_from_records_average():
    rng = np.random.default_rng(3)
    f = FacilityLocation.from_records(rng.random((15, 2)), rng.random((8, 2)), bandwidth=0.3)
    _check_exact(f, _point(rng, 8))


def test_combinators_closed_form():
    rng = np.random.default_rng(11)
    cov, fl, mod = _coverage(rng, 8), _facility(rng, 8), Modular(rng.random(8))
    x = _point(rng, 8)
    for f in (Sum([cov, fl, mod], weights=[0.5, 2.0, 1.0]), Scaled(fl, 3.0),
              Restricted(cov, [0, 2, 3, 5, 7])):
        assert has_closed_form(f)
        _check_exact(f, x[: f.n])
    # A sum with a part that has no closed form falls back to enumeration.
    mixed = Sum([cov, random_cut_plus_modular(8, rng)])
    assert not has_closed_form(mixed)
    assert multilinear_gradient(mixed, x, method="exact").method == "enumeration"


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 9),
       family=st.sampled_from(["coverage", "facility", "facility-sparse"]))
def test_closed_forms_property(seed, n, family):
    rng = np.random.default_rng(seed)
    if family == "coverage":
        f = _coverage(rng, n)
    else:
        f = _facility(rng, n, "sparse" if family == "facility-sparse" else "dense")
    x = _point(rng, n)
    _check_exact(f, x)


def test_vertices_give_set_values_and_monotone_gradient_is_nonnegative():
    rng = np.random.default_rng(5)
    f = _facility(rng, 7)
    for _ in range(10):
        mask = rng.random(7) < 0.5
        val = multilinear_value(f, mask.astype(float)).estimate
        assert val == pytest.approx(f._value(mask), abs=1e-12)
        assert (multilinear_gradient(f, rng.random(7)).estimate >= -1e-15).all()


def test_concave_along_nonnegative_directions():
    # Calinescu et al. 2011: f is concave along d >= 0 for submodular F.
    rng = np.random.default_rng(8)
    f = _coverage(rng, 8)
    for _ in range(20):
        x, d = rng.random(8) * 0.5, rng.random(8) * 0.25
        vals = [multilinear_value(f, x + t * d).estimate for t in (0.0, 0.5, 1.0, 1.5, 2.0)]
        assert np.all(np.diff(vals, 2) <= 1e-12)


# -- enumeration -------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(4))
def test_enumeration_matches_reference_without_closed_form(seed):
    rng = np.random.default_rng(seed)
    f = random_cut_plus_modular(7, rng)
    assert not has_closed_form(f)
    f.reset_evaluations()
    val, grad = _check_exact(f, _point(rng, 7))
    assert val.method == grad.method == "enumeration"
    assert grad.evaluations == 2**7
    assert f.evaluations == 2 * 2**7  # one table for the value, one for the gradient


def test_auto_picks_the_cheaper_exact_or_sampled_method():
    rng = np.random.default_rng(0)
    small = TableFunction(rng.random(2**5))
    assert multilinear_gradient(small, np.full(5, 0.5)).method == "enumeration"
    big = ConcaveOfModular(rng.random((3, 14)), rng.random(3), np.zeros(14))
    # 2^14 = 16384 > 100 * 15 evaluations of sampling
    grad = multilinear_gradient(big, np.full(14, 0.5), n_samples=100, rng=0)
    assert grad.method == "sampling"
    assert multilinear_gradient(_coverage(rng, 14), np.full(14, 0.5)).method == "closed-form"


def test_exact_refused_beyond_enumeration_limit():
    rng = np.random.default_rng(0)
    big = ConcaveOfModular(rng.random((2, 21)), rng.random(2), np.zeros(21))
    with pytest.raises(ValidationError, match="method='sampling'"):
        multilinear_gradient(big, np.full(21, 0.5), method="exact")


# -- sampling with common random numbers ---------------------------------------------------------

@pytest.mark.parametrize("seed", range(3))
def test_sampling_is_unbiased_within_its_standard_error(seed):
    # |estimate - exact| <= 4.5 standard errors per coordinate. Under unbiasedness each
    # coordinate fails with probability about 6.8e-6 (normal tail; N = 3000 makes the t law
    # indistinguishable), so the 3 x (8 + 1) checks here raise a false alarm with probability
    # below 2e-4; fixed seeds make the test deterministic.
    rng = np.random.default_rng(100 + seed)
    f = ConcaveOfModular(rng.random((3, 8)), rng.random(3), rng.normal(size=8), c=0.3)
    x = 0.1 + 0.8 * rng.random(8)
    v_ref, g_ref = multilinear_brute_force(f, x)
    grad = multilinear_gradient(f, x, method="sampling", n_samples=3000, rng=seed)
    val = multilinear_value(f, x, method="sampling", n_samples=3000, rng=seed)
    assert grad.method == "sampling" and not grad.exact and grad.n_samples == 3000
    assert (grad.standard_error > 0).all()
    assert (np.abs(grad.estimate - g_ref) <= 4.5 * grad.standard_error).all()
    assert abs(val.estimate - v_ref) <= 4.5 * val.standard_error


def test_sampling_mean_of_replicates_converges():
    # The average of 40 independent estimates has standard error sqrt(40) times smaller; the
    # bound 4.5 x (that error) fails with probability < 1e-4 over the 6 coordinates.
    rng = np.random.default_rng(7)
    f = random_cut_plus_modular(6, rng)
    x = rng.random(6)
    _, g_ref = multilinear_brute_force(f, x)
    reps = [multilinear_gradient(f, x, method="sampling", n_samples=200, rng=s)
            for s in range(40)]
    mean = np.mean([r.estimate for r in reps], axis=0)
    se = np.sqrt(np.mean([r.standard_error ** 2 for r in reps], axis=0) / 40)
    assert (np.abs(mean - g_ref) <= 4.5 * se).all()


def test_sampling_uses_common_random_numbers_and_counts_evaluations():
    rng = np.random.default_rng(1)
    f = _coverage(rng, 6)
    x = rng.random(6)
    f.reset_evaluations()
    a = multilinear_gradient(f, x, method="sampling", n_samples=50, rng=123)
    assert a.evaluations == f.evaluations == 50 * (6 + 1)
    b = multilinear_gradient(f, x, method="sampling", n_samples=50, rng=123)
    np.testing.assert_array_equal(a.estimate, b.estimate)
    # Common random numbers: the sets are drawn once, U < x, and shared by all coordinates,
    # so the per-sample differences can be rebuilt from the same U.
    U = np.random.default_rng(123).random((50, 6))
    D = np.empty((50, 6))
    for s in range(50):
        R = U[s] < x
        for e in range(6):
            up, down = R.copy(), R.copy()
            up[e], down[e] = True, False
            D[s, e] = f._value(up) - f._value(down)
    np.testing.assert_allclose(a.estimate, D.mean(axis=0), atol=1e-12)
    np.testing.assert_allclose(a.standard_error, D.std(axis=0, ddof=1) / np.sqrt(50),
                               atol=1e-12)


def test_sampling_at_integral_points_is_exact():
    rng = np.random.default_rng(2)
    f = random_cut_plus_modular(6, rng)
    x = (rng.random(6) < 0.5).astype(float)
    _, g_ref = multilinear_brute_force(f, x)
    grad = multilinear_gradient(f, x, method="sampling", n_samples=5, rng=0)
    np.testing.assert_allclose(grad.estimate, g_ref, atol=1e-12)
    assert np.all(grad.standard_error == 0)


# -- facility-location kernel details ------------------------------------------------------------

def test_descending_order_is_exact_when_keys_collide():
    # Values equal in their high bits: the packed integer key cannot order them, the check
    # must catch it and fall back to an exact sort.
    one = 1.0
    row = np.array([one, np.nextafter(one, 2.0), 0.5, np.nextafter(np.nextafter(one, 2.0), 2.0)])
    order, ss = ml._descending(np.vstack([row, row[::-1]]))
    assert (np.diff(ss, axis=1) <= 0).all()
    np.testing.assert_array_equal(ss[0], np.sort(row)[::-1])
    np.testing.assert_array_equal(np.take_along_axis(np.vstack([row, row[::-1]]), order, 1), ss)


def test_facility_blocks_and_threads_do_not_change_the_result(monkeypatch):
    rng = np.random.default_rng(4)
    S = rng.random((50, 9))
    S[rng.random(S.shape) < 0.5] = 0.0
    x = _point(rng, 9)
    ref = {kind: multilinear_gradient(FacilityLocation(m), x, n_threads=1).estimate
           for kind, m in (("dense", S), ("sparse", sp.csr_array(S)))}
    monkeypatch.setattr(ml, "_FL_BLOCK_ENTRIES", 20)  # many small blocks
    for kind, m in (("dense", S), ("sparse", sp.csr_array(S))):
        f = FacilityLocation(m)
        one = multilinear_gradient(f, x, n_threads=1).estimate
        two = multilinear_gradient(f, x, n_threads=2).estimate
        np.testing.assert_array_equal(one, two)
        np.testing.assert_allclose(one, ref[kind], atol=1e-12)
        _, g_ref = multilinear_brute_force(f, x)
        np.testing.assert_allclose(one, g_ref, atol=1e-12)


def test_sparse_rows_of_different_lengths_including_empty():
    rng = np.random.default_rng(9)
    S = np.zeros((5, 8))
    S[0, :8] = rng.random(8)
    S[2, 3] = 0.7
    S[3, [1, 5]] = [0.2, 0.9]
    f = FacilityLocation(sp.csr_array(S))
    _check_exact(f, _point(rng, 8))


# -- validation and registry ---------------------------------------------------------------------

def test_bad_inputs_are_refused():
    f = Modular([1.0, 2.0, 3.0])
    with pytest.raises(ValidationError, match="\\[0, 1\\]"):
        multilinear_value(f, [0.5, 1.5, 0.0])
    with pytest.raises(GroundSetMismatchError, match="shape \\(3,\\)"):
        multilinear_gradient(f, [0.5, 0.5])
    with pytest.raises(ValidationError, match="'method'"):
        multilinear_gradient(f, [0.5] * 3, method="fast")
    with pytest.raises(ValidationError, match="n_samples"):
        multilinear_gradient(f, [0.5] * 3, method="sampling", n_samples=1)
    with pytest.raises(ParameterTypeError, match="SetFunction"):
        multilinear_value(lambda s: 0.0, [0.5])
    with pytest.raises(ValidationError, match="n_threads"):
        multilinear_gradient(f, [0.5] * 3, n_threads=0)
    with pytest.raises(DPSubmodError, match="NaN"):
        multilinear_value(f, [np.nan, 0.0, 0.0])
    with pytest.raises(ParameterTypeError):
        register_closed_form(int, value=len, gradient=len)


def test_register_closed_form_for_a_user_family():
    class Doubled(ConcaveOfModular):
        pass

    rng = np.random.default_rng(0)
    A = rng.random((2, 5))
    f = Doubled(A, np.zeros(2), np.array([1.0, 2.0, 3.0, 4.0, 5.0]))  # purely modular part
    assert not has_closed_form(f)
    register_closed_form(Doubled, value=lambda g, x: float(g.m @ x), gradient=lambda g, x: g.m)
    try:
        grad = multilinear_gradient(f, np.full(5, 0.3))
        assert grad.method == "closed-form"
        np.testing.assert_array_equal(grad.estimate, f.m)
    finally:
        ml._CLOSED_FORMS.pop(Doubled)


def test_estimate_is_a_frozen_dataclass():
    est = multilinear_value(Modular([1.0]), [1.0])
    assert isinstance(est, MultilinearEstimate) and est.estimate == 1.0
    with pytest.raises(AttributeError):
        est.estimate = 2.0  # type: ignore[misc]


def test_gradients_at_a_batch_of_points_match_the_single_point_gradients():
    rng = np.random.default_rng(5)
    n = 7
    fl = FacilityLocation(rng.random((6, n)))
    families = [
        Modular(rng.normal(size=n)),
        Coverage(rng.random((n, 12)) < 0.3, rng.random(12)),
        fl,
        FacilityLocation(sp.csr_array(rng.random((6, n)) * (rng.random((6, n)) < 0.5))),
        Sum([fl, Modular(rng.random(n))], weights=[2.0, 0.5]),
        Scaled(fl, 3.0),
        Restricted(FacilityLocation(rng.random((4, n + 3))), np.arange(n)),
    ]
    X = rng.random((5, n))
    X[0] = 0.0
    X[1, :3] = 1.0
    for f in families:
        G = multilinear_gradients(f, X)
        single = np.array([multilinear_gradient(f, x).estimate for x in X])
        np.testing.assert_allclose(G, single, rtol=1e-12, atol=1e-12)
    f = Modular(np.ones(n))
    multilinear_gradients(f, X)
    assert f.evaluations == X.size
    with pytest.raises(ValidationError, match="X"):
        multilinear_gradients(f, X + 1.0)
