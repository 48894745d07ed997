"""Coverage: orientation, formats, person-level records and their sensitivity."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from dpsubmod.errors import DPSubmodError, ParameterTypeError, SensitivityError, ValidationError
from dpsubmod.functions import Coverage
from oracles import all_subsets, max_value_change


def _direct(inc: np.ndarray, w: np.ndarray, S) -> float:
    covered = inc[list(S)].any(axis=0) if len(S) else np.zeros(inc.shape[1], dtype=bool)
    return float(w[covered].sum())


def test_values_match_definition_on_every_subset():
    rng = np.random.default_rng(0)
    inc = rng.random((6, 9)) < 0.3
    w = rng.random(9)
    f = Coverage(sp.csr_array(inc.astype(float)), w)
    for S in all_subsets(6):
        assert f(S) == pytest.approx(_direct(inc, w, S), abs=1e-12)


def test_dense_and_sparse_and_positive_values_agree():
    rng = np.random.default_rng(1)
    raw = rng.random((5, 7)) * (rng.random((5, 7)) < 0.5) * 3.0  # positive means "covers"
    fa, fb = Coverage(raw), Coverage(sp.coo_matrix(raw))
    sa, sb = fa.state(), fb.state()
    for e in [3, 0, 4]:
        np.testing.assert_array_equal(sa.gains(), sb.gains())
        sa.add(e)
        sb.add(e)
    assert sa.value == sb.value == _direct(raw > 0, np.ones(7), [3, 0, 4])


def test_caller_sparse_matrix_is_not_modified():
    m = sp.csr_array((np.array([1.0, 0.0, 2.0]), np.array([0, 1, 2]), np.array([0, 2, 3])),
                     shape=(2, 3))
    before = (m.data.copy(), m.indices.copy(), m.indptr.copy())
    Coverage(m)
    for a, b in zip(before, (m.data, m.indices, m.indptr)):
        np.testing.assert_array_equal(a, b)


def test_from_records_is_the_fraction_covered():
    records = [[0], [1, 2], [], [2]]
    f = Coverage.from_records(records, 3)
    assert f.n == 3 and f.n_elements == 4
    assert f([2]) == pytest.approx(0.5) and f([0, 1, 2]) == pytest.approx(0.75)
    assert f.sensitivity == 0.25 and f.data_model == "monotone-records"


def test_records_sensitivity_bounds_every_replacement():
    rng = np.random.default_rng(2)
    n_sets, N = 5, 7
    records = [np.flatnonzero(rng.random(n_sets) < 0.4) for _ in range(N)]
    f = Coverage.from_records(records, n_sets)
    nbrs = [f.neighbour(rng) for _ in range(60)]
    nbrs += [f.neighbour(index=i, record=r) for i in range(N) for r in ([], range(n_sets))]
    worst = max(max_value_change(f, g) for g in nbrs)
    assert worst <= f.sensitivity * (1 + 1e-12)
    assert worst == pytest.approx(f.sensitivity)  # tight: a person covered by all vs by none


def test_neighbour_is_seeded_and_replaces_one_column():
    f = Coverage.from_records([[0], [1], [0, 1]], 2)
    g1, g2 = f.neighbour(rng=3), f.neighbour(rng=3)
    assert (g1.incidence != g2.incidence).nnz == 0
    changed = np.flatnonzero(np.asarray(abs(g1.incidence - f.incidence).sum(axis=0)).ravel())
    assert changed.size <= 1


def test_neighbour_validates_before_drawing():
    f = Coverage.from_records([[0], [1]], 2)
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    with pytest.raises(ValidationError, match="'index'"):
        f.neighbour(rng, index=2)
    with pytest.raises(ValidationError, match="'record'"):
        f.neighbour(rng, record=[5])
    assert rng.bit_generator.state == state


def test_no_records_no_neighbour():
    with pytest.raises(SensitivityError):
        Coverage(np.eye(2)).neighbour(0)


@pytest.mark.parametrize(
    ("call", "exc", "needle"),
    [
        (lambda: Coverage([[1.0, np.nan]]), ValidationError, "'incidence'"),
        (lambda: Coverage([[1.0, -1.0]]), ValidationError, "'incidence'"),
        (lambda: Coverage([1.0, 0.0]), ValidationError, "'incidence'"),
        (lambda: Coverage(np.eye(2), weights=[1.0]), ValidationError, "'weights'"),
        (lambda: Coverage(np.eye(2), weights=[1.0, np.nan]), ValidationError, "'weights'"),
        (lambda: Coverage(np.eye(2), weights=[1.0, -2.0]), ValidationError, "'weights'"),
        (lambda: Coverage.from_records([[0], [3]], 3), ValidationError, r"'records\[1\]'"),
        (lambda: Coverage.from_records([[0], ["a"]], 3), ParameterTypeError, r"'records\[1\]'"),
        (lambda: Coverage.from_records([], 3), ValidationError, "'records'"),
        (lambda: Coverage.from_records(5, 3), ValidationError, "'records'"),
        (lambda: Coverage.from_records([[0]], 0), ValidationError, "'n_sets'"),
    ],
)
def test_bad_input_names_the_argument(call, exc, needle):
    with pytest.raises(exc, match=needle) as info:
        call()
    assert isinstance(info.value, DPSubmodError)
