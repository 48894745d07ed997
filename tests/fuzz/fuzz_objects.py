"""Generated objectives and constraints for the fuzzed entry points (small ground sets, so a
call takes milliseconds and a brute-force reference is cheap)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import scipy.sparse as sp
from fuzz_harness import Case
from hypothesis import strategies as st

from dpsubmod.constraints import (
    GenericMatroid,
    GraphicMatroid,
    Knapsack,
    LaminarMatroid,
    PartitionMatroid,
    TransversalMatroid,
    UniformMatroid,
)
from dpsubmod.functions import (
    Coverage,
    FacilityLocation,
    FeatureBased,
    GraphCut,
    Modular,
    Scaled,
    SetFunction,
    Sum,
)


class Misbehaving(SetFunction):
    """A user objective that returns NaN, +/-inf or negative values.

    ``mode``: ``"nan"`` / ``"inf"`` / ``"-inf"`` on every non-empty set (always reached),
    ``"nan_big"`` NaN on sets of two or more elements (reached or not, depending on the method),
    ``"negative"`` a valid objective with negative values.
    """

    monotone = False
    submodular = False

    def __init__(self, n: int, mode: str, sensitivity: float | None = 0.1,
                 data_model: str = "general"):
        super().__init__(n, sensitivity=sensitivity, data_model=data_model)  # type: ignore[arg-type]
        self.mode = mode
        self._w = np.linspace(0.5, 1.0, n)

    def _value(self, mask: np.ndarray) -> float:
        k = int(mask.sum())
        if self.mode == "negative":
            return float(-self._w[mask].sum())
        if self.mode == "nan_big":
            return math.nan if k >= 2 else float(self._w[mask].sum())
        if k == 0:
            return 0.0
        return {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}[self.mode]

    def __repr__(self) -> str:
        return f"Misbehaving(n={self.n}, mode={self.mode!r})"


#: Modes of :class:`Misbehaving` whose non-finite values every method reaches.
ALWAYS_BAD = ("nan", "inf", "-inf")


def objective(draw: Any, case: Case, *, n: int | None = None, private: bool = False,
              allow_misbehaving: bool = True, monotone_records: bool = False) -> Any:
    """A SetFunction on a small ground set, with its facts recorded on ``case.notes``.

    ``case.notes`` gets ``"monotone"`` when the objective is monotone submodular (so a greedy
    bound can be checked) and ``"no-sensitivity"`` when it declares none.
    """
    n = draw(st.integers(1, 7)) if n is None else n
    kinds = ["modular", "coverage", "facility", "facility_sparse", "facility_zero_sparse",
             "facility_records", "cut", "feature", "sum", "scaled"]
    if allow_misbehaving:
        kinds += ["misbehaving"] * 2
    kind = draw(st.sampled_from(kinds))
    sens = draw(st.sampled_from([0.05, 0.1, 1.0, None])) if private else \
        draw(st.sampled_from([0.1, None]))
    dm = "monotone-records" if monotone_records and draw(st.booleans()) else "general"
    f: SetFunction
    if kind == "modular":
        w = draw(st.lists(st.floats(0, 5, allow_nan=False), min_size=n, max_size=n))
        f = Modular(w, sensitivity=sens, data_model=dm)
        case.notes.append("monotone")
    elif kind == "coverage":
        m = draw(st.integers(1, 6))
        inc = np.array(draw(st.lists(st.booleans(), min_size=m * n, max_size=m * n)),
                       dtype=float).reshape(m, n)
        f = Coverage(sp.csr_array(inc) if draw(st.booleans()) else inc, sensitivity=sens,
                     data_model=dm)
        case.notes.append("monotone")
    elif kind in ("facility", "facility_sparse"):
        c = draw(st.integers(1, 6))
        sim = np.array(draw(st.lists(st.floats(0, 1, allow_nan=False), min_size=c * n,
                                     max_size=c * n))).reshape(c, n)
        if kind == "facility_sparse":
            sim[sim < 0.5] = 0.0
            sim = sp.csr_array(sim)
        f = FacilityLocation(sim, sensitivity=sens, data_model=dm)
        case.notes.append("monotone")
    elif kind == "facility_zero_sparse":
        c = draw(st.integers(1, 6))
        fmt = draw(st.sampled_from(["csr_array", "csc_array", "csr_matrix"]))
        f = FacilityLocation(getattr(sp, fmt)((c, n)), sensitivity=sens, data_model=dm)
        case.notes.append("monotone")
    elif kind == "facility_records":
        N = draw(st.integers(1, 12))
        pts = np.array(draw(st.lists(st.floats(0, 1, allow_nan=False), min_size=2 * N,
                                     max_size=2 * N))).reshape(N, 2)
        cand = np.array(draw(st.lists(st.floats(0, 1, allow_nan=False), min_size=2 * n,
                                      max_size=2 * n))).reshape(n, 2)
        f = FacilityLocation.from_records(pts, cand, bandwidth=0.3)
        case.notes.append("monotone")
    elif kind == "cut":
        w = np.array(draw(st.lists(st.floats(0, 1, allow_nan=False), min_size=n * n,
                                   max_size=n * n))).reshape(n, n)
        w = (w + w.T) / 2
        np.fill_diagonal(w, 0.0)
        f = GraphCut(w, sensitivity=sens)
    elif kind == "feature":
        m = draw(st.integers(1, 4))
        feat = np.array(draw(st.lists(st.floats(0, 3, allow_nan=False), min_size=n * m,
                                      max_size=n * m))).reshape(n, m)
        f = FeatureBased(feat, draw(st.sampled_from(["sqrt", "log1p", "min"])), sensitivity=sens,
                         data_model=dm)
        case.notes.append("monotone")
    elif kind == "sum":
        a = Modular(np.linspace(0, 1, n), sensitivity=0.05)
        b = Modular(np.linspace(1, 0, n), sensitivity=0.05)
        f = Sum([a, b])
        case.notes.append("monotone")
    elif kind == "scaled":
        f = Scaled(Modular(np.linspace(0.2, 1, n), sensitivity=0.1), 2.0)
        case.notes.append("monotone")
    else:
        mode = draw(st.sampled_from(["nan", "inf", "-inf", "nan_big", "negative"]))
        f = Misbehaving(n, mode, sensitivity=sens, data_model=dm)
        case.notes.append(f"misbehaving:{mode}")
    if f.sensitivity is None:  # combinators derive one from their parts
        case.notes.append("no-sensitivity")
    return f


def constraint(draw: Any, case: Case, n: int, *, knapsack_ok: bool = True) -> Any:
    """A constraint on ``range(n)``: an int ``k`` (possibly bad), a matroid of each family, or a
    knapsack; records ``"cardinality"``, ``"matroid"`` or ``"knapsack"`` in ``case.notes``."""
    kinds = ["k", "k", "uniform", "partition", "graphic", "laminar", "transversal", "generic",
             "mismatch"]
    if knapsack_ok:
        kinds += ["knapsack", "knapsack"]
    kind = draw(st.sampled_from(kinds))
    if kind == "k":
        from fuzz_inputs import integer

        k = integer(draw, case, "k", low=1, high=n, typical=(1, n), p_bad=0.3,
                    words=("k", "constraint"))
        case.notes.append("cardinality")
        return k
    if kind == "uniform":
        case.notes.append("cardinality")
        return UniformMatroid(n, draw(st.integers(1, n)))
    if kind == "partition":
        labels = draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))
        caps = draw(st.integers(1, 2))
        case.notes.append("matroid")
        return PartitionMatroid(labels, caps)
    if kind == "graphic":
        nodes = draw(st.integers(2, 4))
        edges = [(draw(st.integers(0, nodes - 1)), draw(st.integers(0, nodes - 1)))
                 for _ in range(n)]
        if all(u == v for u, v in edges):
            edges[0] = (0, 1)
        case.notes.append("matroid")
        case.notes.append("graphic")
        return GraphicMatroid(edges, n_nodes=nodes)
    if kind == "laminar":
        case.notes.append("matroid")
        return LaminarMatroid([list(range(n)), [0]], [max(1, n - 1), 1], n=n)
    if kind == "transversal":
        slots = draw(st.integers(1, 3))
        adj = np.array(draw(st.lists(st.booleans(), min_size=n * slots,
                                     max_size=n * slots))).reshape(n, slots)
        adj[0, 0] = True
        case.notes.append("matroid")
        return TransversalMatroid(adj)
    if kind == "generic":
        r = draw(st.integers(1, n))
        case.notes.append("matroid")
        return GenericMatroid(n, lambda s, r=r: len(s) <= r)
    if kind == "mismatch":
        case.mark_bad("constraint", "constraint", "ground set", "f")
        return UniformMatroid(n + 1, 1)
    costs = draw(st.lists(st.floats(0.1, 3, allow_nan=False), min_size=n, max_size=n))
    budget = draw(st.floats(min(costs), 6, allow_nan=False))
    case.notes.append("knapsack")
    return Knapsack(costs, budget)


def is_feasible(con: Any, n: int, sel: tuple[int, ...]) -> bool:
    if isinstance(con, int | np.integer):
        return len(sel) <= int(con)
    if isinstance(con, Knapsack):
        return con.is_feasible(list(sel))
    return bool(con.is_independent(list(sel)))


def rank_of(con: Any, n: int) -> int:
    if isinstance(con, int | np.integer):
        return int(con)
    return int(con.rank)
