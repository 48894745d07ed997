"""Every fast path gives the same answer as the slow definition it replaces.

Fast paths covered elsewhere (not repeated here):

* lazy vs naive greedy on tiny instances with ties: tests/offline/discrete/test_greedy.py
  (test_greedy_cardinality_bound_and_lazy_equals_naive);
* incremental gain caches vs brute force for every family: tests/functions/test_contract.py
  (test_state_gains_match_brute_force), facility location over a long run:
  tests/functions/test_facility_location.py
  (test_incremental_cache_is_exact_over_a_long_greedy_run);
* float32, sparse and integer similarity storage vs float64 dense:
  tests/functions/test_facility_location.py (test_other_formats_give_the_float64_gains);
  dense vs sparse coverage: tests/functions/test_coverage.py;
* closed-form multilinear value and gradient vs enumeration, block size and thread count:
  tests/extensions/test_multilinear.py.

Here: the same checks at sizes where the fast paths actually take their fast branches (several
row blocks, many changed clients, long runs), the private greedy on cached gains vs recomputed
gains with the same seed, lazy vs naive greedy under matroid and knapsack constraints, and the
blocked similarity build vs one whole-matrix kernel call.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from dpsubmod.constraints import Knapsack, PartitionMatroid
from dpsubmod.functions import Coverage, FacilityLocation
from dpsubmod.functions import _similarity as fl_module
from dpsubmod.functions.base import FunctionState, SetFunction
from dpsubmod.offline import greedy, knapsack_greedy, lazy_greedy, private_greedy


class Recomputed(SetFunction):
    """``f`` without its incremental state: every gain is ``f(S + e) - f(S)`` from scratch
    (the generic :class:`FunctionState`), the slow definition the caches replace."""

    monotone = True
    submodular = True

    def __init__(self, f: SetFunction):
        super().__init__(f.n, sensitivity=f.sensitivity, data_model=f.data_model)
        self.inner = f

    def _value(self, mask: np.ndarray) -> float:
        return self.inner._value(mask)

    def state(self) -> FunctionState:
        return FunctionState(self)


def _fl_instance(rng: np.random.Generator, n_clients: int, n: int, *, ties: bool = False
                 ) -> np.ndarray:
    sim = rng.random((n_clients, n)) ** 3 * (rng.random((n_clients, n)) < 0.4)
    if ties:
        sim = np.round(sim * 4) / 4  # many equal gains: tie-breaking must agree too
        sim[:, 7] = sim[:, 3]  # two identical candidates
    return sim


def _coverage_instance(rng: np.random.Generator, n_sets: int, n_el: int) -> Coverage:
    inc = sp.random(n_sets, n_el, density=0.03, random_state=rng, format="csr")
    return Coverage(inc, rng.random(n_el), sensitivity=1.0, data_model="monotone-records")


# -- lazy vs naive greedy -------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["fl-dense", "fl-sparse", "fl-ties", "fl-float32", "coverage"])
def test_lazy_equals_naive_greedy_at_size(kind):
    rng = np.random.default_rng(10)
    if kind == "coverage":
        f = _coverage_instance(rng, 400, 3000)
    else:
        sim = _fl_instance(rng, 700, 300, ties=kind == "fl-ties")
        f = FacilityLocation(sp.csr_array(sim) if kind == "fl-sparse" else
                             sim.astype(np.float32) if kind == "fl-float32" else sim)
    a, b = greedy(f, 40), lazy_greedy(f, 40)
    assert a.selection == b.selection
    np.testing.assert_allclose(a.diagnostics.trace, b.diagnostics.trace, rtol=1e-12, atol=0)
    assert b.evaluations < a.evaluations  # the lazy path was taken


def test_lazy_equals_naive_under_matroid_and_knapsack():
    rng = np.random.default_rng(11)
    f = FacilityLocation(_fl_instance(rng, 300, 120))
    m = PartitionMatroid(rng.integers(0, 6, size=120), [3, 1, 4, 2, 5, 2])
    assert greedy(f, m).selection == lazy_greedy(f, m).selection
    kn = Knapsack(rng.uniform(0.5, 2.0, size=120), 9.0)
    naive = knapsack_greedy(f, kn, lazy=False)
    assert naive.selection == knapsack_greedy(f, kn, lazy=True).selection


# -- incremental caches vs recomputation ----------------------------------------------------------

@pytest.mark.parametrize("kind", ["fl-dense-blocks", "fl-sparse", "coverage"])
def test_cached_gains_match_recomputation_over_a_long_run(kind, monkeypatch):
    rng = np.random.default_rng(12)
    if kind == "coverage":
        f = _coverage_instance(rng, 250, 2000)
    else:
        sim = _fl_instance(rng, 900, 250)
        if kind == "fl-dense-blocks":
            # Tiny blocks so that every gain update spans many row blocks.
            monkeypatch.setattr("dpsubmod.functions._inputs.BLOCK_ENTRIES", 1000)
        f = FacilityLocation(sp.csr_array(sim) if kind == "fl-sparse" else sim)
    ref = Recomputed(f)
    st, rs = f.state(), ref.state()
    for _ in range(30):
        g, h = st.gains(), rs.gains()
        np.testing.assert_allclose(g, h, rtol=0, atol=1e-10 * max(1.0, float(h.max())))
        e = int(np.argmax(g))
        st.add(e)
        rs.add(e)
        assert st.value == pytest.approx(rs.value, rel=1e-12)


@pytest.mark.parametrize("kind", ["fl-dense", "fl-sparse", "coverage"])
def test_private_greedy_on_cached_gains_equals_recomputed_with_same_seed(kind):
    rng = np.random.default_rng(13)
    if kind == "coverage":
        f = _coverage_instance(rng, 120, 800)
        eps = 60.0  # sharp enough that the draw depends on the gains, not only on the noise
    else:
        sim = _fl_instance(rng, 200, 100)
        f = FacilityLocation(sp.csr_array(sim) if kind == "fl-sparse" else sim,
                             sensitivity=1.0)
        eps = 1000.0
    for seed in range(5):
        a = private_greedy(f, 12, epsilon=eps, rng=seed)
        b = private_greedy(Recomputed(f), 12, epsilon=eps, rng=seed)
        assert a.selection == b.selection


# -- storage formats ------------------------------------------------------------------------------

def test_dense_sparse_float32_storage_give_the_same_private_and_lazy_selections():
    rng = np.random.default_rng(14)
    sim = _fl_instance(rng, 400, 150).astype(np.float32).astype(np.float64)
    forms = [sim, sim.astype(np.float32), sp.csr_array(sim), sp.csr_array(sim.astype(np.float32))]
    fs = [FacilityLocation(s, sensitivity=1.0) for s in forms]
    lazy = [lazy_greedy(f, 25).selection for f in fs]
    priv = [private_greedy(f, 25, epsilon=300.0, rng=5).selection for f in fs]
    assert all(s == lazy[0] for s in lazy)
    assert all(s == priv[0] for s in priv)


def test_float32_records_match_float64_records():
    # Different numbers (rounded to float32), so equality of the selection holds only away from
    # near-ties; gains agree to float32 precision.
    rng = np.random.default_rng(15)
    P, C = rng.random((500, 4)), rng.random((120, 4))
    f64 = FacilityLocation.from_records(P, C, bandwidth=0.3)
    f32 = FacilityLocation.from_records(P, C, bandwidth=0.3, dtype=np.float32)
    a, b = greedy(f64, 15), greedy(f32, 15)
    assert a.selection == b.selection
    np.testing.assert_allclose(a.diagnostics.trace, b.diagnostics.trace, rtol=1e-5)


# -- blocked similarity build ---------------------------------------------------------------------

@pytest.mark.parametrize("similarity", ["gaussian", "negative_distance"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_blocked_similarity_build_is_bitwise_the_whole_matrix_kernel(similarity, dtype,
                                                                     monkeypatch):
    rng = np.random.default_rng(16)
    P, C = rng.random((301, 6)), rng.random((90, 6))
    kw = {"bandwidth": 0.4} if similarity == "gaussian" else {"radius": 0.9}
    whole = FacilityLocation.from_records(P, C, similarity, dtype=dtype, **kw)
    # The kernel on the whole matrix at once: the reference.
    ref = whole._kernel(P).astype(dtype)
    np.testing.assert_array_equal(whole.similarity, ref)
    for entries in (2 * 90, 7 * 90, 100 * 90):  # 2-row, 7-row and 100-row blocks
        monkeypatch.setattr(fl_module, "_KERNEL_BLOCK_ENTRIES", entries)
        blocked = FacilityLocation.from_records(P, C, similarity, dtype=dtype, **kw)
        np.testing.assert_array_equal(blocked.similarity, ref)
