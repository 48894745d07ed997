"""FeatureBased: the formula, formats, concave functions and input checks."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from dpsubmod.errors import DPSubmodError, ParameterTypeError, ValidationError
from dpsubmod.functions import FeatureBased
from oracles import all_subsets

G = {"sqrt": np.sqrt, "log1p": np.log1p, "min": lambda x: np.minimum(x, 1.0)}


@pytest.mark.parametrize("concave", sorted(G))
def test_values_match_formula(concave):
    rng = np.random.default_rng(0)
    M = rng.random((5, 4)) * (rng.random((5, 4)) < 0.6)
    w = rng.random(4)
    f = FeatureBased(M, concave, w)
    for S in all_subsets(5):
        want = float(w @ G[concave](M[list(S)].sum(axis=0))) if S else 0.0
        assert f(S) == pytest.approx(want, abs=1e-12)


@pytest.mark.parametrize("fmt", ["csr", "float32", "coo"])
def test_formats_agree_with_dense_float64(fmt):
    rng = np.random.default_rng(1)
    M = rng.random((30, 12)) * (rng.random((30, 12)) < 0.3)
    if fmt == "float32":
        M = M.astype(np.float32).astype(np.float64)
        other = M.astype(np.float32)
    else:
        other = sp.csr_array(M) if fmt == "csr" else sp.coo_matrix(M)
    a, b = FeatureBased(M, "log1p").state(), FeatureBased(other, "log1p").state()
    for _ in range(10):
        ga, gb = a.gains(), b.gains()
        np.testing.assert_allclose(gb, ga, rtol=1e-12, atol=1e-12)
        e = int(np.argmax(ga))
        a.add(e)
        b.add(e)
    assert b.value == pytest.approx(a.value, rel=1e-12)


def test_items_without_features_have_zero_gain():
    f = FeatureBased(np.array([[0.0, 0.0], [1.0, 4.0]]))
    st = f.state()
    assert st.gains().tolist() == [0.0, 3.0]
    st.add(0)
    assert st.value == 0.0


@pytest.mark.parametrize(
    ("call", "exc", "needle"),
    [
        (lambda: FeatureBased([[1.0, -1.0]]), ValidationError, "'features'"),
        (lambda: FeatureBased([[1.0, np.nan]]), ValidationError, "'features'"),
        (lambda: FeatureBased([[1.0]], "cube"), ValidationError, "'concave'"),
        (lambda: FeatureBased([[1.0]], 3), ParameterTypeError, "'concave'"),
        (lambda: FeatureBased([[1.0]], lambda x: x + 1.0), ValidationError, "g\\(0\\) = 0"),
        (lambda: FeatureBased([[1.0]], lambda x: 0.0), ValidationError, "'concave'"),
        (lambda: FeatureBased([[1.0, 2.0]], weights=[1.0]), ValidationError, "'weights'"),
    ],
)
def test_bad_input(call, exc, needle):
    with pytest.raises(exc, match=needle) as info:
        call()
    assert isinstance(info.value, DPSubmodError)
