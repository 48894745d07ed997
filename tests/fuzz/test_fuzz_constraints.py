"""Fuzz: the constraint constructors (every family and ``make_constraint``) and their queries
(``is_independent``/``is_feasible``, ``can_add``, ``rank_of``, ``greedy_independent``,
``random_base``/``random_maximal``) with bad sets, candidates and seeds. A built matroid must
satisfy the matroid axioms and have the rank brute force finds."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest
from fuzz_harness import Case, expect, fuzz_settings, invoke
from fuzz_inputs import (
    INF,
    NAN,
    choice,
    integer,
    maybe,
    new_case,
    real,
    rng_value,
    vector,
)
from hypothesis import given
from hypothesis import strategies as st

from dpsubmod.constraints import (
    GenericMatroid,
    GraphicMatroid,
    Knapsack,
    LaminarMatroid,
    Matroid,
    PartitionMatroid,
    TransversalMatroid,
    UniformMatroid,
    check_matroid_axioms,
    make_constraint,
)


def _brute_rank(m: Matroid) -> int:
    return max(len(S) for r in range(m.n + 1) for S in itertools.combinations(range(m.n), r)
               if m.is_independent(list(S)))


def check_constraint(c: Any) -> str | None:
    if isinstance(c, Knapsack):
        if not (np.isfinite(c.budget) and c.budget > 0 and np.all(c.costs > 0)):
            return f"knapsack with budget {c.budget!r} and costs {c.costs!r}"
        if not c.can_add([]).any():
            return "no single item fits the knapsack"
        return None
    if not isinstance(c, Matroid):
        return f"built {type(c).__name__}, not a Matroid"
    if c.n > 8:
        return None
    try:
        check_matroid_axioms(c, max_n=8)
    except AssertionError as exc:  # pragma: no cover - a real failure
        return f"not a matroid: {exc}"
    r = _brute_rank(c)
    if r != c.rank or r < 1:
        return f"rank {c.rank!r}, brute force {r}"
    return None


def _bad_index_set(draw: Any, n: int) -> Any:
    return draw(st.sampled_from([[n], [-1], [0.5], ["a"], [[0]], np.ones(n + 1, bool), None,
                                 object(), [NAN], [10**20]]))


# -- constructors ---------------------------------------------------------------------------------

@st.composite
def uniform(draw: Any) -> tuple[Case, Any]:
    case = new_case(draw, "constraints.UniformMatroid")
    case.allow("n", "k")
    n = integer(draw, case, "n", low=1, typical=(1, 7))
    hi = n if isinstance(n, int | np.integer) and not isinstance(n, bool) and n >= 1 else None
    k = integer(draw, case, "k", low=1, high=hi, typical=(1, 7))
    if hi is not None and isinstance(k, int | np.integer) and not isinstance(k, bool) and \
            not 1 <= k <= hi and "k" not in case.bad:
        case.mark_bad("k")
    return case, lambda: UniformMatroid(n, k)


@st.composite
def partition(draw: Any) -> tuple[Case, Any]:
    case = new_case(draw, "constraints.PartitionMatroid")
    case.allow("partition", "capacities", "n")
    n = draw(st.integers(1, 7))
    labels: Any = draw(st.lists(st.integers(-2, 3), min_size=n, max_size=n))
    as_blocks = draw(st.booleans())
    n_blocks = len(set(labels))
    caps: Any = draw(st.one_of(st.integers(1, 3),
                               st.lists(st.integers(0, 3), min_size=n_blocks,
                                        max_size=n_blocks)))
    if isinstance(caps, list) and not any(
            c for c, lab in zip(caps, sorted(set(labels)))):
        case.mark_degenerate("rank", "capacities")
    part: Any = labels
    if as_blocks:
        part = [[i for i, v in enumerate(labels) if v == lab] for lab in sorted(set(labels))]
    if maybe(draw, case, 0.5):
        kind = draw(st.sampled_from(["overlap", "gap", "float", "negcap", "capfloat", "caplen",
                                     "nanlabel", "str"]))
        if kind == "overlap" and as_blocks:
            part = part + [[0]]
            case.mark_bad("partition", "partition", "blocks", "overlap")
        elif kind == "gap" and as_blocks and n > 1:
            part = [[b for b in blk if b != 0] for blk in part]
            part = [b for b in part if b]
            case.mark_bad("partition", "partition", "blocks", "cover", "n")
        elif kind == "float":
            part = [x + 0.5 for x in labels]
            case.mark_bad("partition")
        elif kind == "negcap":
            caps = -1
            case.mark_bad("capacities")
        elif kind == "capfloat":
            caps = 1.5
            case.mark_bad("capacities")
        elif kind == "caplen":
            caps = [1] * (n_blocks + 1)
            case.mark_bad("capacities")
        elif kind == "nanlabel":
            part = [NAN] * n
            case.mark_bad("partition")
        else:
            part = "abc"
            case.mark_bad("partition")
    kw: dict[str, Any] = {}
    if as_blocks and draw(st.integers(0, 3)) == 0:
        kw["n"] = n
    return case, lambda: PartitionMatroid(part, caps, **kw)


@st.composite
def graphic(draw: Any) -> tuple[Case, Any]:
    case = new_case(draw, "constraints.GraphicMatroid")
    case.allow("edges", "n_nodes")
    nodes = draw(st.integers(2, 5))
    m = draw(st.integers(1, 7))
    edges: Any = [(draw(st.integers(0, nodes - 1)), draw(st.integers(0, nodes - 1)))
                  for _ in range(m)]
    if all(u == v for u, v in edges):
        case.mark_degenerate("rank", "loop", "edges")
    kw: dict[str, Any] = {}
    if draw(st.booleans()):
        kw["n_nodes"] = integer(draw, case, "n_nodes", low=nodes, typical=(nodes, nodes + 2))
    if maybe(draw, case, 0.5):
        kind = draw(st.sampled_from(["neg", "float", "shape", "empty", "nan", "big"]))
        if kind == "neg":
            edges = edges + [(-1, 0)]
        elif kind == "float":
            edges = [(0.5, 1.0)]
        elif kind == "shape":
            edges = [(0, 1, 2)]
        elif kind == "empty":
            edges = []
        elif kind == "nan":
            edges = [(NAN, 0)]
        else:
            edges = [(0, 10**6)]
            kw["n_nodes"] = 3
        case.mark_bad("edges", "edges", "n_nodes")
    return case, lambda: GraphicMatroid(edges, **kw)


@st.composite
def laminar(draw: Any) -> tuple[Case, Any]:
    case = new_case(draw, "constraints.LaminarMatroid")
    case.allow("sets", "capacities", "n")
    n = draw(st.integers(1, 6))
    sets: Any = [list(range(n))]
    if n > 1:
        sets.append(list(range(draw(st.integers(1, n - 1)))))
    caps: Any = [draw(st.integers(1, 3)) for _ in sets]
    kw: dict[str, Any] = {"n": n} if draw(st.booleans()) else {}
    if maybe(draw, case, 0.5):
        kind = draw(st.sampled_from(["cross", "dup", "neg", "out", "capnan", "empty", "str"]))
        if kind == "cross" and n >= 3:
            sets = [[0, 1], [1, 2]]
            caps = [1, 1]
            case.mark_bad("sets", "sets", "laminar")
        elif kind == "dup":
            sets = [[0, 0]]
            caps = [1]
            case.mark_bad("sets", "sets", "repeated")
        elif kind == "neg":
            caps = [-1] * len(sets)
            case.mark_bad("capacities")
        elif kind == "out":
            sets = [[n + 3]]
            caps = [1]
            kw = {"n": n}
            case.mark_bad("sets", "sets", "n")
        elif kind == "capnan":
            caps = [NAN] * len(sets)
            case.mark_bad("capacities")
        elif kind == "empty":
            sets = []
            case.mark_bad("sets")
        else:
            sets = "abc"
            case.mark_bad("sets")
    return case, lambda: LaminarMatroid(sets, caps, **kw)


@st.composite
def transversal(draw: Any) -> tuple[Case, Any]:
    case = new_case(draw, "constraints.TransversalMatroid")
    case.allow("adjacency")
    from fuzz_inputs import matrix

    adj = matrix(draw, case, "adjacency", rows=(1, 6), cols=(1, 3), binary=True)
    if "adjacency" not in case.bad and not np.asarray(
            adj.toarray() if hasattr(adj, "toarray") else adj, dtype=float).any():
        case.mark_degenerate("adjacency")
    return case, lambda: TransversalMatroid(adj)


@st.composite
def generic(draw: Any) -> tuple[Case, Any]:
    case = new_case(draw, "constraints.GenericMatroid")
    case.allow("n", "is_independent_fn", "rank")
    n = integer(draw, case, "n", low=1, typical=(1, 6))
    r = draw(st.integers(1, 6))
    fn: Any = lambda s, r=r: len(s) <= r  # noqa: E731
    if maybe(draw, case, 0.4):
        kind = draw(st.sampled_from(["notcallable", "empty_rejected", "none"]))
        if kind == "notcallable":
            fn = 3
            case.mark_bad("is_independent_fn")
        elif kind == "empty_rejected":
            fn = lambda s: False  # noqa: E731
            case.mark_bad("is_independent_fn", "is_independent_fn", "empty")
        else:
            fn = None
            case.mark_bad("is_independent_fn")
    kw: dict[str, Any] = {}
    if draw(st.integers(0, 3)) == 0 and isinstance(n, int) and not isinstance(n, bool) \
            and n >= 1:
        # a declared rank is trusted (documented): only the true one is generated
        kw["rank"] = integer(draw, case, "rank", low=1, high=n, typical=(min(r, n), min(r, n)))
    return case, lambda: GenericMatroid(n, fn, **kw)


@st.composite
def knapsack(draw: Any) -> tuple[Case, Any]:
    case = new_case(draw, "constraints.Knapsack")
    case.allow("costs", "budget")
    n = draw(st.integers(1, 6))
    costs = vector(draw, case, "costs", n, low=0.1, high=3.0, sized=False)
    budget = real(draw, case, "budget", low=0.0, low_open=True, typical=(0.05, 8.0))
    if not case.bad and not case.extreme:
        c = np.asarray(costs, dtype=float)
        if c.size and c.min() > float(budget) * (1 + 1e-9):  # no item fits
            case.mark_bad("budget", "budget", "costs", "fits")
    if maybe(draw, case, 0.2):
        costs = draw(st.sampled_from([[0.0, 1.0], [-1.0], []]))
        case.mark_bad("costs")
    return case, lambda: Knapsack(costs, budget)


@st.composite
def registry(draw: Any) -> tuple[Case, Any]:
    case = new_case(draw, "constraints.make_constraint")
    case.allow("name", "n", "k", "costs", "budget")
    name = choice(draw, case, "name", ["uniform", "cardinality", "Uniform Matroid", "knapsack"],
                  bad=["unifrom", "", 3, None])
    if name == "knapsack":
        return case, lambda: make_constraint(name, costs=[1.0, 2.0], budget=2.5)
    if maybe(draw, case, 0.3):
        case.mark_bad("kk", "kk", "k", "unexpected")
        return case, lambda: make_constraint(name, n=4, kk=2)
    return case, lambda: make_constraint(name, n=4, k=2)


CONSTRUCTORS = {"uniform": uniform(), "partition": partition(), "graphic": graphic(),
                "laminar": laminar(), "transversal": transversal(), "generic": generic(),
                "knapsack": knapsack(), "make_constraint": registry()}


@pytest.mark.parametrize("family", list(CONSTRUCTORS))
def test_constraint_constructor(family: str) -> None:
    @fuzz_settings(0.8)
    @given(CONSTRUCTORS[family])
    def inner(call: tuple[Case, Any]) -> None:
        case, build = call
        expect(invoke(case, build, check=check_constraint))

    inner()


# -- queries --------------------------------------------------------------------------------------

FIXED = {
    "uniform": UniformMatroid(5, 2),
    "partition": PartitionMatroid([0, 0, 1, 1, 2], [1, 2, 1]),
    "graphic": GraphicMatroid([(0, 1), (1, 2), (0, 2), (2, 3), (3, 3)]),
    "laminar": LaminarMatroid([[0, 1, 2, 3, 4], [0, 1]], [3, 1]),
    "transversal": TransversalMatroid(np.array([[1, 0], [1, 1], [0, 1], [1, 0], [0, 0]])),
    "generic": GenericMatroid(5, lambda s: len(s) <= 2),
    "knapsack": Knapsack([1.0, 2.0, 0.5, 3.0, 1.5], 3.0),
}


@st.composite
def query(draw: Any, name: str) -> tuple[Case, Any, Any]:
    con = FIXED[name]
    n = con.n
    what = draw(st.sampled_from(["independent", "can_add", "random"] + (
        ["rank_of", "greedy"] if isinstance(con, Matroid) else [])))
    case = new_case(draw, f"constraints.{type(con).__name__}.{what}")
    case.allow("S", "candidates", "order", "rng", "e")
    S: Any = draw(st.lists(st.integers(0, n - 1), max_size=3, unique=True))
    if draw(st.booleans()):
        mask = np.zeros(n, bool)
        mask[S] = True
        S = mask
    if maybe(draw, case, 0.5):
        S = _bad_index_set(draw, n)
        case.mark_bad("S", "S")
    if what == "independent":
        fn = con.is_feasible if isinstance(con, Knapsack) else con.is_independent
        return case, con, lambda: fn(S)
    if what == "can_add":
        cand: Any = None
        if draw(st.booleans()):
            cand = draw(st.lists(st.integers(0, n - 1), max_size=n))
            if maybe(draw, case, 0.5):
                cand = _bad_index_set(draw, n)
                case.mark_bad("candidates", "candidates")
        return case, con, lambda: con.can_add(S, cand)
    if what == "rank_of" and isinstance(con, Matroid):
        return case, con, lambda: con.rank_of(S)
    if what == "greedy" and isinstance(con, Matroid):
        order: Any = draw(st.permutations(list(range(n))))
        if maybe(draw, case, 0.5):
            order = draw(st.sampled_from([[0, 0], [n], [0.5], "abc"]))
            case.mark_bad("order", "order")
        case.bad.pop("S", None)
        return case, con, lambda: con.greedy_independent(order)
    case.bad.pop("S", None)
    r = rng_value(draw, case)
    if isinstance(con, Matroid):
        return case, con, lambda: con.random_base(rng=r)
    return case, con, lambda: con.random_maximal(rng=r)


def _check_query(con: Any, case: Case) -> Any:
    def check(out: Any) -> str | None:
        if case.entry.endswith(("independent", "rank_of")):
            return None if isinstance(out, bool | int | np.integer | np.bool_) else \
                f"returned {out!r}"
        a = np.asarray(out)
        if case.entry.endswith("can_add"):
            return None if a.dtype == bool else f"can_add returned dtype {a.dtype}"
        sel = [int(e) for e in a]
        if len(set(sel)) != len(sel) or any(not 0 <= e < con.n for e in sel):
            return f"returned {sel!r}"
        feasible = con.is_feasible(sel) if isinstance(con, Knapsack) else \
            con.is_independent(sel)
        return None if feasible else f"returned the infeasible set {sel!r}"

    return check


@pytest.mark.parametrize("name", list(FIXED))
def test_constraint_queries(name: str) -> None:
    @fuzz_settings(0.5)
    @given(query(name))
    def inner(call: tuple[Case, Any, Any]) -> None:
        case, con, fn = call
        expect(invoke(case, fn, check=_check_query(con, case)))

    inner()


@pytest.mark.parametrize("value", [INF, -INF, NAN, 0.0, -1.0, "2", None, True])
def test_knapsack_budget_edges(value: Any) -> None:
    case = Case("constraints.Knapsack")
    case.allow("costs", "budget")
    case.mark_bad("budget")
    expect(invoke(case, lambda: Knapsack([1.0, 2.0], value), check=check_constraint))
