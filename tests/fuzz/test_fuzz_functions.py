"""Fuzz: the constructors of the set-function families, the combinators and the k-submodular
families. A built function must answer finite values on every set it is asked about."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp
from fuzz_harness import Case, expect, fuzz_settings, invoke
from fuzz_inputs import choice, integer, matrix, new_case, real, vector
from hypothesis import given
from hypothesis import strategies as st

from dpsubmod.functions import (
    Coverage,
    FacilityLocation,
    FeatureBased,
    GraphCut,
    InfluenceSpread,
    KCoverage,
    KFacilityLocation,
    KSensorPlacement,
    Modular,
    MutualInformation,
    Restricted,
    Scaled,
    SetFunction,
    Sum,
    Truncated,
)

COMMON = ("sensitivity", "data_model")


def _sensitivity(draw: Any, case: Case, kw: dict[str, Any]) -> None:
    if draw(st.booleans()):
        kw["sensitivity"] = real(draw, case, "sensitivity", low=0.0, low_open=True,
                                 typical=(0.01, 1.0), optional=True)


def _data_model(draw: Any, case: Case, kw: dict[str, Any]) -> None:
    if draw(st.integers(0, 3)) == 0:
        kw["data_model"] = choice(draw, case, "data_model", ["general", "monotone-records"])


def check_set_function(f: Any) -> str | None:
    """Finite values on the empty set, singletons, pairs and the ground set; gains agree with
    differences of values."""
    if not isinstance(f, SetFunction):
        return f"built {type(f).__name__}, not a SetFunction"
    n = f.n
    if not isinstance(n, int) or n < 1:
        return f"ground-set size {n!r}"
    if f.sensitivity is not None and not (np.isfinite(f.sensitivity) and f.sensitivity > 0):
        return f"declared sensitivity {f.sensitivity!r}"
    sets = [[], list(range(n))] + [[e] for e in range(min(n, 6))] + \
        [list(p) for p in itertools.islice(itertools.combinations(range(n), 2), 6)]
    vals = {}
    for S in sets:
        v = f.value(S)
        if not np.isfinite(v):
            return f"f({S}) = {v!r} is not finite"
        vals[tuple(S)] = v
    g = f.state().gains()
    if g.shape != (n,) or not np.isfinite(g).all():
        return f"gains at the empty set {g!r}"
    for e in range(min(n, 6)):
        want = vals[(e,)] - vals[()]
        if not np.isclose(g[e], want, rtol=1e-6, atol=1e-9 * max(1.0, abs(vals[(e,)]))):
            return f"gain of {e} at the empty set is {g[e]!r}, f({{e}}) - f(empty) = {want!r}"
    return None


def _run(case: Case, build: Any) -> None:
    expect(invoke(case, build, check=check_set_function))


# -- one strategy per constructor -----------------------------------------------------------------

@st.composite
def modular(draw: Any) -> tuple[Case, Any]:
    case = new_case(draw, "functions.Modular")
    case.allow("weights", *COMMON)
    n = draw(st.integers(1, 6))
    w = vector(draw, case, "weights", n, low=-5, high=5, nonnegative=False, sized=False)
    kw: dict[str, Any] = {}
    _sensitivity(draw, case, kw)
    _data_model(draw, case, kw)
    if kw.get("data_model") == "monotone-records":  # refused when a weight is negative
        case.mark_degenerate("data_model", "monotone-records")
    return case, lambda: Modular(w, **kw)


@st.composite
def coverage(draw: Any) -> tuple[Case, Any]:
    case = new_case(draw, "functions.Coverage")
    case.allow("incidence", "weights", *COMMON)
    inc = matrix(draw, case, "incidence", binary=draw(st.booleans()))
    kw: dict[str, Any] = {}
    shape = getattr(inc, "shape", None)
    if draw(st.booleans()) and isinstance(shape, tuple) and len(shape) == 2 and shape[1] > 0:
        kw["weights"] = vector(draw, case, "weights", shape[1], high=3.0, optional=True)
    _sensitivity(draw, case, kw)
    _data_model(draw, case, kw)
    return case, lambda: Coverage(inc, **kw)


@st.composite
def coverage_records(draw: Any) -> tuple[Case, Any]:
    case = new_case(draw, "functions.Coverage.from_records")
    case.allow("records", "n_sets")
    n_sets = integer(draw, case, "n_sets", low=1, typical=(1, 6))
    records: Any = draw(st.lists(st.lists(st.integers(0, 5), max_size=4), max_size=8))
    kind = draw(st.integers(0, 9)) if case.bad_scale else -1
    if kind == 0:
        records = [[0, 1.5]]
        case.mark_bad("records")
    elif kind == 1:
        records = [[-1]]
        case.mark_bad("records")
    elif kind == 2:
        records = "abc"
        case.mark_bad("records")
    elif kind == 3:
        records = [[0, 0, 0]]  # a duplicated set in one record
    if not case.bad and isinstance(n_sets, int | np.integer) and records and \
            max((max(r) for r in records if r), default=-1) >= n_sets:
        case.mark_bad("records", "records", "n_sets")
    if not case.bad and not records:
        case.mark_degenerate("records")
    return case, lambda: Coverage.from_records(records, n_sets)


@st.composite
def facility(draw: Any) -> tuple[Case, Any]:
    case = new_case(draw, "functions.FacilityLocation")
    case.allow("similarity", "weights", *COMMON)
    sim = matrix(draw, case, "similarity")
    kw: dict[str, Any] = {}
    shape = getattr(sim, "shape", None)
    if draw(st.booleans()) and isinstance(shape, tuple) and len(shape) == 2 and shape[0] > 0:
        kw["weights"] = vector(draw, case, "weights", shape[0], high=3.0, optional=True)
    _sensitivity(draw, case, kw)
    _data_model(draw, case, kw)
    return case, lambda: FacilityLocation(sim, **kw)


@st.composite
def facility_records(draw: Any) -> tuple[Case, Any]:
    case = new_case(draw, "functions.FacilityLocation.from_records")
    case.allow("points", "candidates", "similarity", "bandwidth", "radius", "s_max", "dtype")
    d = draw(st.integers(1, 3))
    pts = matrix(draw, case, "points", shape=(draw(st.integers(1, 8)), d), nonnegative=False,
                 low=-5, high=5, sparse_ok=False)
    cand = matrix(draw, case, "candidates", shape=(draw(st.integers(1, 5)), d),
                  nonnegative=False, low=-5, high=5, sparse_ok=False)
    kind = choice(draw, case, "similarity", ["gaussian", "negative_distance"],
                  bad=["cosine", 3, None])
    kw: dict[str, Any] = {"similarity": kind}
    # a public bandwidth (radius) is required: it must not be tuned on the private points
    if kind == "gaussian":
        kw["bandwidth"] = real(draw, case, "bandwidth", low=0.0, low_open=True,
                               typical=(0.1, 5.0))
    if kind == "negative_distance":
        kw["radius"] = real(draw, case, "radius", low=0.0, low_open=True, typical=(0.1, 5.0))
    if draw(st.integers(0, 3)) == 0:
        kw["dtype"] = choice(draw, case, "dtype", [np.float64, np.float32],
                             bad=[np.int64, "complex", complex])
    return case, lambda: FacilityLocation.from_records(pts, cand, **kw)


@st.composite
def graph_cut(draw: Any) -> tuple[Case, Any]:
    case = new_case(draw, "functions.GraphCut")
    case.allow("graph_or_weights", "directed", "sensitivity")
    n = draw(st.integers(1, 6))
    w = matrix(draw, case, "graph_or_weights", shape=(n, n), high=2.0,
               words=("graph_or_weights", "weights", "matrix"))
    kw: dict[str, Any] = {}
    directed = draw(st.sampled_from([None, True, False]))
    if directed is not None:
        kw["directed"] = directed
    if "graph_or_weights" not in case.bad and directed is not True:
        dense = w.toarray() if sp.issparse(w) else np.asarray(w, dtype=float)
        # symmetric up to round-off relative to the largest weight, as GraphCut judges it
        if np.abs(dense - dense.T).max() > 1e-12 * np.abs(dense).max():
            case.mark_bad("graph_or_weights", "graph_or_weights", "symmetric", "directed")
    _sensitivity(draw, case, kw)
    return case, lambda: GraphCut(w, **kw)


@st.composite
def feature_based(draw: Any) -> tuple[Case, Any]:
    case = new_case(draw, "functions.FeatureBased")
    case.allow("features", "concave", "weights", *COMMON)
    feats = matrix(draw, case, "features", high=4.0)
    concave = choice(draw, case, "concave", ["sqrt", "log1p", "min"], bad=["log", 3, None])
    kw: dict[str, Any] = {}
    shape = getattr(feats, "shape", None)
    if draw(st.booleans()) and isinstance(shape, tuple) and len(shape) == 2 and shape[1] > 0:
        kw["weights"] = vector(draw, case, "weights", shape[1], high=3.0, optional=True)
    _sensitivity(draw, case, kw)
    _data_model(draw, case, kw)
    return case, lambda: FeatureBased(feats, concave, **kw)


@st.composite
def mutual_information(draw: Any) -> tuple[Case, Any]:
    case = new_case(draw, "functions.MutualInformation.from_records")
    case.allow("X", "y", "sensitivity")
    N = draw(st.integers(2, 10))
    n = draw(st.integers(1, 4))
    X: Any = np.array(draw(st.lists(st.integers(0, 2), min_size=N * n, max_size=N * n)))
    X = X.reshape(N, n)
    y: Any = np.array(draw(st.lists(st.integers(0, 1), min_size=N, max_size=N)))
    k = draw(st.integers(0, 9)) if case.bad_scale else -1
    if k == 0:
        X = X.astype(float)
        X[0, 0] = np.nan
        case.mark_bad("X")
    elif k == 1:
        X = X + 0.5
        case.mark_bad("X")
    elif k == 2:
        y = y[:-1]
        case.mark_bad("y", "y", "X")
    elif k == 3:
        y = y.astype(str)
        case.mark_bad("y")
    elif k == 4:
        X = X.ravel()
        case.mark_bad("X")
    use_records = draw(st.booleans())
    if use_records:
        return case, lambda: MutualInformation.from_records(X, y)
    kw: dict[str, Any] = {}
    _sensitivity(draw, case, kw)
    case.entry = "functions.MutualInformation"
    return case, lambda: MutualInformation(X, y, **kw)


@st.composite
def influence(draw: Any) -> tuple[Case, Any]:
    import networkx as nx

    case = new_case(draw, "functions.InfluenceSpread")
    case.allow("graph", "n_samples", "probability", "rng", "sensitivity")
    n = draw(st.integers(1, 6))
    g = nx.gnp_random_graph(n, 0.5, seed=draw(st.integers(0, 100)), directed=draw(st.booleans()))
    prob: Any = real(draw, case, "probability", low=0.0, high=1.0, typical=(0.05, 0.9))
    if isinstance(prob, str) and g.number_of_edges() == 0:
        # a string is an edge-attribute name, which a graph without edges never reads
        case.bad.pop("probability", None)
    ns = integer(draw, case, "n_samples", low=1, typical=(1, 50))
    from fuzz_inputs import rng_value

    r = rng_value(draw, case)
    return case, lambda: InfluenceSpread(g, ns, probability=prob, rng=r)


@st.composite
def combinator(draw: Any) -> tuple[Case, Any]:
    kind = draw(st.sampled_from(["sum", "scaled", "restricted", "truncated"]))
    case = new_case(draw, f"functions.{kind.capitalize()}")
    case.allow("functions", "weights", "sensitivity", "f", "c", "subset", "cap")
    n = draw(st.integers(1, 5))
    base = Modular(np.linspace(0.1, 1.0, n), sensitivity=0.1)
    if kind == "sum":
        other = Modular(np.ones(n), sensitivity=0.2)
        fs: Any = [base, other]
        k = draw(st.integers(0, 6)) if case.bad_scale else -1
        if k == 0:
            fs = []
            case.mark_bad("functions")
        elif k == 1:
            fs = [base, Modular(np.ones(n + 1))]
            case.mark_bad("functions", "functions", "ground set")
        elif k == 2:
            fs = [base, "f"]
            case.mark_bad("functions")
        kw: dict[str, Any] = {}
        if draw(st.booleans()):
            kw["weights"] = vector(draw, case, "weights", len(fs) if isinstance(fs, list) else 1,
                                   optional=True)
        return case, lambda: Sum(fs, **kw)
    if kind == "scaled":
        c = real(draw, case, "c", low=0.0, typical=(0.0, 5.0))
        return case, lambda: Scaled(base, c)
    if kind == "restricted":
        subset: Any = draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=n, unique=True))
        k = draw(st.integers(0, 5)) if case.bad_scale else -1
        if k == 0:
            subset = [n]
            case.mark_bad("subset")
        elif k == 1:
            subset = []
            case.mark_bad("subset")
        elif k == 2 and n > 1:
            subset = [0, 0]
            case.mark_bad("subset")
        elif k == 3:
            subset = [0.5]
            case.mark_bad("subset")
        return case, lambda: Restricted(base, subset)
    cap = real(draw, case, "cap", low=0.0, low_open=True, typical=(0.1, 3.0))
    return case, lambda: Truncated(base, cap)


@st.composite
def k_families(draw: Any) -> tuple[Case, Any]:
    kind = draw(st.sampled_from(["facility", "coverage", "sensor"]))
    k = draw(st.integers(1, 3))
    n = draw(st.integers(1, 4))
    if kind == "facility":
        case = new_case(draw, "functions.KFacilityLocation")
        case.allow("similarities", "max_similarity", "average")
        c = draw(st.integers(1, 4))
        sims: Any = np.array(draw(st.lists(st.floats(0, 1), min_size=k * c * n,
                                           max_size=k * c * n))).reshape(k, c, n)
        j = draw(st.integers(0, 7)) if case.bad_scale else -1
        if j == 0:
            sims[0, 0, 0] = np.nan
            case.mark_bad("similarities")
        elif j == 1:
            sims = sims[0]
            case.mark_bad("similarities")
        elif j == 2:
            sims[0, 0, 0] = -1.0
            case.mark_bad("similarities")
        kw: dict[str, Any] = {}
        if draw(st.booleans()):
            kw["max_similarity"] = real(draw, case, "max_similarity", low=1.0,
                                        typical=(1.0, 2.0), optional=True)
            mx = kw["max_similarity"]
            if isinstance(mx, float | np.floating) and np.isfinite(mx) and mx > 0 \
                    and "similarities" not in case.bad:
                # any bound at least the largest similarity is valid, a smaller one is not
                if mx >= np.max(sims):
                    case.bad.pop("max_similarity", None)
                else:
                    case.mark_bad("max_similarity")
        return case, lambda: KFacilityLocation(sims, **kw)
    if kind == "coverage":
        case = new_case(draw, "functions.KCoverage")
        case.allow("incidence", "weights", "mode", "record_bound")
        m = draw(st.integers(1, 4))
        inc: Any = np.array(draw(st.lists(st.booleans(), min_size=k * n * m,
                                          max_size=k * n * m))).reshape(k, n, m)
        j = draw(st.integers(0, 7)) if case.bad_scale else -1
        if j == 0:
            inc = inc.astype(float)
            inc[0, 0, 0] = np.inf
            case.mark_bad("incidence")
        elif j == 1:
            inc = inc[0]
            case.mark_bad("incidence")
        mode = choice(draw, case, "mode", ["union", "sum"])
        return case, lambda: KCoverage(inc, mode=mode)
    case = new_case(draw, "functions.KSensorPlacement")
    case.allow("points", "locations", "radii", "demands", "average")
    pts = matrix(draw, case, "points", shape=(draw(st.integers(1, 6)), 2), nonnegative=False,
                 sparse_ok=False)
    locs = matrix(draw, case, "locations", shape=(n, 2), nonnegative=False, sparse_ok=False)
    # k is the number of radii: any length is valid
    radii = vector(draw, case, "radii", k, low=0.1, high=2.0, sized=False)
    return case, lambda: KSensorPlacement(pts, locs, radii)


def _check_k(f: Any) -> str | None:
    n, k = f.n, f.k
    for lab in itertools.islice(itertools.product(range(k + 1), repeat=n), 40):
        v = f(np.array(lab))
        if not np.isfinite(v):
            return f"value of the labelling {lab} is {v!r}"
    return None


STRATEGIES = {
    "Modular": modular(), "Coverage": coverage(), "Coverage.from_records": coverage_records(),
    "FacilityLocation": facility(), "FacilityLocation.from_records": facility_records(),
    "GraphCut": graph_cut(), "FeatureBased": feature_based(),
    "MutualInformation": mutual_information(), "InfluenceSpread": influence(),
    "combinators": combinator(),
}


@pytest.mark.parametrize("family", list(STRATEGIES))
def test_family_constructor(family: str) -> None:
    @fuzz_settings(0.8)
    @given(STRATEGIES[family])
    def inner(call: tuple[Case, Any]) -> None:
        case, build = call
        _run(case, build)

    inner()


@fuzz_settings(1.0)
@given(k_families())
def test_ksubmodular_family_constructor(call: tuple[Case, Any]) -> None:
    case, build = call
    expect(invoke(case, build, check=_check_k))


def test_sparse_similarity_without_entries_is_a_zero_function() -> None:
    case = Case("functions.FacilityLocation")
    case.allow("similarity")
    out = invoke(case, lambda: FacilityLocation(sp.csr_array((3, 4)), sensitivity=0.1),
                 check=check_set_function)
    expect(out)
    assert out.value.value([0, 1]) == 0.0
