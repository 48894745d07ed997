"""Combinators: values, declared sensitivities and data models, operators and input checks."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from dpsubmod.errors import (
    DPSubmodError,
    GroundSetMismatchError,
    ParameterTypeError,
    SensitivityError,
    ValidationError,
)
from dpsubmod.functions import (
    Coverage,
    FacilityLocation,
    GraphCut,
    Modular,
    Restricted,
    Scaled,
    Sum,
    Truncated,
)
from oracles import all_subsets, max_value_change, submodularity_violation


def _records_fl(seed: int = 0) -> FacilityLocation:
    rng = np.random.default_rng(seed)
    return FacilityLocation.from_records(rng.normal(size=(6, 2)), rng.normal(size=(4, 2)),
                                         bandwidth=1.0)


def _records_cov() -> Coverage:
    return Coverage.from_records([[0, 1], [2], [3], [], [0, 3]], 4)


def test_values():
    f, g = Modular([1.0, 2.0, 3.0]), GraphCut(nx.path_graph(3))
    for S in all_subsets(3):
        assert Sum([f, g], [2.0, 0.5])(S) == pytest.approx(2 * f(S) + 0.5 * g(S))
        assert Scaled(g, 3.0)(S) == pytest.approx(3 * g(S))
        assert Truncated(f, 2.5)(S) == pytest.approx(min(f(S), 2.5))
    r = Restricted(f, [2, 0])
    assert r.n == 2 and r([0]) == 3.0 and r([1]) == 1.0 and r([0, 1]) == 4.0


def test_operators_build_combinators():
    f, g = Modular([1.0, 2.0]), Modular([0.0, 5.0])
    assert isinstance(f + g, Sum) and (f + g)([1]) == 7.0
    for h in (3 * f, f * 3):
        assert isinstance(h, Scaled) and h([0, 1]) == 9.0
    with pytest.raises(ParameterTypeError, match="'c'"):
        f * g


def test_declared_sensitivities_and_models():
    fl, cov = _records_fl(), _records_cov()
    s = Sum([fl, cov], [2.0, 1.0])
    assert s.sensitivity == pytest.approx(2 * fl.sensitivity + cov.sensitivity)
    assert s.data_model == "monotone-records" and s.monotone and s.submodular
    public = Modular([1.0, 0.0, 0.0, 2.0])
    assert Sum([fl, public]).sensitivity is None  # a part declares nothing
    assert Sum([fl, public], sensitivity=0.5).sensitivity == 0.5
    assert Sum([fl, public]).data_model == "general"
    assert Scaled(fl, 3.0).sensitivity == pytest.approx(3 * fl.sensitivity)
    assert Scaled(fl, 3.0).data_model == "monotone-records"
    assert Scaled(fl, 0.0).sensitivity is None
    assert Restricted(fl, [1, 3]).sensitivity == fl.sensitivity
    t = Truncated(fl, 0.2)
    assert t.sensitivity == fl.sensitivity and t.data_model == "general"
    assert t.monotone and t.submodular
    cut = Truncated(GraphCut(nx.path_graph(3)), 1.0)
    assert not cut.monotone and not cut.submodular


def test_derived_sensitivities_bound_neighbour_changes():
    rng = np.random.default_rng(1)
    fl = _records_fl(2)
    for h in (Scaled(fl, 2.0), Restricted(fl, [3, 1, 0]), Truncated(fl, 0.3)):
        worst = max(max_value_change(h, h.neighbour(rng)) for _ in range(30))
        assert worst <= h.sensitivity * (1 + 1e-12)


def test_truncated_can_break_submodularity_of_non_monotone_functions():
    # Why Truncated declares submodular only for monotone parts: min(cut, 2) on a 4-path.
    g = GraphCut(nx.path_graph(4))
    assert submodularity_violation(g) == 0.0
    assert submodularity_violation(Truncated(g, 2.0)) == pytest.approx(1.0)
    # With the cap: adding 3 to {1} gains min(3, 2) - 2 = 0, but to {0, 1} it gains 2 - 1 = 1.
    t = Truncated(g, 2.0)
    assert t([1, 3]) - t([1]) == 0.0 and t([0, 1, 3]) - t([0, 1]) == 1.0


def test_sum_state_copies_do_not_share_parts():
    f = Sum([_records_fl(), Modular([1.0, 2.0, 3.0, 4.0])])
    st = f.state()
    twin = st.copy()
    twin.add(2)
    assert st.selected == [] and all(p.selected == [] for p in st.parts)
    assert st.value == 0.0 and twin.value == pytest.approx(f([2]))


def test_neighbour_forwarding_and_missing_neighbour():
    sc = Scaled(_records_cov(), 2.0)
    assert isinstance(sc.neighbour(0), Scaled)
    with pytest.raises(SensitivityError):
        Sum([_records_cov(), _records_cov()]).neighbour(0)


@pytest.mark.parametrize(
    ("call", "exc", "needle"),
    [
        (lambda: Sum([Modular([1.0]), Modular([1.0, 2.0])]), GroundSetMismatchError,
         "functions\\[1\\]"),
        (lambda: Sum([]), ValidationError, "'functions'"),
        (lambda: Sum(Modular([1.0])), ParameterTypeError, "'functions'"),
        (lambda: Sum([Modular([1.0]), 3.0]), ParameterTypeError, "'functions\\[1\\]'"),
        (lambda: Sum([Modular([1.0])], [-1.0]), ValidationError, "'weights'"),
        (lambda: Sum([Modular([1.0])], [1.0, 2.0]), ValidationError, "'weights'"),
        (lambda: Scaled(Modular([1.0]), -2.0), ValidationError, "'c'"),
        (lambda: Scaled(Modular([1.0]), np.nan), ValidationError, "'c'"),
        (lambda: Scaled([1.0], 2.0), ParameterTypeError, "'f'"),
        (lambda: Restricted(Modular([1.0, 2.0]), [0, 0]), ValidationError, "'subset'"),
        (lambda: Restricted(Modular([1.0, 2.0]), [2]), ValidationError, "'subset'"),
        (lambda: Restricted(Modular([1.0, 2.0]), []), ValidationError, "'subset'"),
        (lambda: Truncated(Modular([1.0]), 0.0), ValidationError, "'cap'"),
        (lambda: -1.0 * Modular([1.0]), ValidationError, "'c'"),
    ],
)
def test_bad_input(call, exc, needle):
    with pytest.raises(exc, match=needle) as info:
        call()
    assert isinstance(info.value, DPSubmodError)
