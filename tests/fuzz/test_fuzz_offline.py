"""Fuzz: ``maximize`` with every registered method, ``maximize_ksubmodular`` with every
k-submodular method, and ``minimize``."""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import pytest
from fuzz_harness import Case, expect, finite, fuzz_settings, invoke, privacy_problem
from fuzz_inputs import (
    boolean,
    choice,
    delta_value,
    epsilon_value,
    integer,
    new_case,
    real,
    rng_value,
)
from fuzz_objects import ALWAYS_BAD, constraint, is_feasible, objective
from hypothesis import given
from hypothesis import strategies as st

import dpsubmod
from dpsubmod import Budget, maximize, maximize_ksubmodular
from dpsubmod.constraints import GraphicMatroid, Knapsack, PartitionMatroid, UniformMatroid
from dpsubmod.offline import minimize
from dpsubmod.offline.registry import get_method

COMMON = {"f", "constraint", "method", "epsilon", "delta", "budget", "rng", "k"}


def _option(draw: Any, case: Case, name: str, n: int, spec: Any) -> Any:
    """A fuzzed value of one method option (its domain from the method's docstring)."""
    if name == "steps":
        return integer(draw, case, name, low=1, typical=(1, 4), optional=True)
    if name == "cover_size":
        return integer(draw, case, name, low=1, typical=(1, 3), optional=False)
    if name == "n_samples":
        return integer(draw, case, name, low=2, typical=(2, 40))
    if name == "sensitivity":
        return real(draw, case, name, low=0.0, low_open=True, typical=(0.01, 1.0),
                    optional=True)
    if name == "composition":
        return choice(draw, case, name, ["auto", "basic", "advanced", "kov", "zcdp"])
    if name == "backend":
        return choice(draw, case, name, [None, *spec.backends],
                      bad=["nonsense", 3, "opendp-ish"])
    if name == "gradient":
        return choice(draw, case, name, ["auto", "exact", "sampling"])
    if name == "sample_size":
        return integer(draw, case, name, low=1, high=n, typical=(1, n), optional=True)
    if name == "accuracy":
        return real(draw, case, name, low=0.0, high=1.0, low_open=True, high_open=True,
                    typical=(0.05, 0.5))
    if name in ("stop_if_negative", "lazy"):
        return boolean(draw, case, name)
    if name == "noise":  # None: the documented default (Laplace at delta = 0, else Gaussian)
        return choice(draw, case, name, [None, "laplace", "gaussian"])
    if name == "calibration":
        return choice(draw, case, name, ["tight", "paper"])
    if name == "gaussian_calibration":
        return choice(draw, case, name, ["auto", "paper", "analytic", "zcdp"])
    if name == "value_bound":
        return real(draw, case, name, low=0.0, low_open=True, typical=(0.5, 5.0),
                    optional=True)
    if name == "n_subsample":
        return integer(draw, case, name, low=1, typical=(1, 12), optional=True)
    if name == "layer_width":
        return real(draw, case, name, low=0.0, typical=(0.0, 0.5))
    if name == "n_targets":
        return integer(draw, case, name, low=1, typical=(1, 3))
    if name == "target":
        return real(draw, case, name, low=0.0, typical=(0.0, 0.5), optional=True)
    if name == "failure_probability":
        return real(draw, case, name, low=0.0, high=1.0, low_open=True, high_open=True,
                    typical=(0.01, 0.2))
    if name == "gamma":
        return real(draw, case, name, low=0.0, high=1.0, low_open=True, high_open=True,
                    typical=(0.05, 0.5))
    if name == "on_empty":
        return choice(draw, case, name, ["fallback", "resample"])
    raise KeyError(name)


#: Options whose combinations can make a valid-looking call impossible; a refusal then names one.
_INTERACTING = ("noise", "gaussian_calibration", "composition", "backend", "delta", "steps",
                "target", "epsilon", "sample_size")
#: Options not fuzzed (a public array of the objective's size, or a tuple of shares).
_SKIP = {"linear_term", "budget_split"}


def _greedy_bound(f: Any, con: Any, n: int, sel: tuple[int, ...], method: str) -> str | None:
    """Greedy on a monotone submodular objective reaches (1 - 1/e) OPT under a cardinality
    constraint and OPT / 2 under a matroid (brute force over every feasible set)."""
    if n > 7 or isinstance(con, Knapsack):
        return None
    best = -math.inf
    for r in range(n + 1):
        for S in itertools.combinations(range(n), r):
            if is_feasible(con, n, S):
                best = max(best, f.value(list(S)))
    got = f.value(list(sel))
    ratio = (1 - 1 / math.e) if isinstance(con, int | np.integer | UniformMatroid) else 0.5
    if got < ratio * best - 1e-9 * max(1.0, abs(best)):
        return f"{method} reached {got!r}, below {ratio:.3f} x OPT = {ratio * best!r}"
    return None


@st.composite
def maximize_call(draw: Any, method: str) -> tuple[Case, dict[str, Any]]:
    spec = get_method(method)
    case = new_case(draw, f"maximize[{method}]")
    case.allow(*COMMON, *spec.options)
    f = objective(draw, case, private=spec.private,
                  monotone_records=method == "private_greedy_decomposable")
    n = f.n
    case.allow(*(["similarity", "weights", "sensitivity", "data_model"]))
    con = constraint(draw, case, n)
    kw: dict[str, Any] = {}
    if spec.private:
        kw["epsilon"] = epsilon_value(draw, case)
        kw["delta"] = delta_value(draw, case, positive=spec.needs_delta)
        if draw(st.integers(0, 3)) == 0:
            b_eps = draw(st.sampled_from([0.5, 5.0, 100.0]))
            b_delta = draw(st.sampled_from([0.0, 1e-3]))
            case.budget = Budget(b_eps, b_delta)
            kw["budget"] = case.budget
            case.mark_degenerate("budget", "Budget")
        elif draw(st.integers(0, 9)) == 0:
            kw["budget"] = draw(st.sampled_from(["abc", 1.0, {"epsilon": 1}]))
            case.mark_bad("budget")
    elif draw(st.integers(0, 9)) == 0:
        arg = draw(st.sampled_from(["epsilon", "budget"]))
        kw[arg] = 1.0 if arg == "epsilon" else Budget(1.0)
        case.mark_bad(arg, arg, "private")
    for opt in spec.options:
        if opt in _SKIP or draw(st.integers(0, 2)) != 0:
            continue
        kw[opt] = _option(draw, case, opt, n, spec)
    if draw(st.integers(0, 19)) == 0:
        kw["bogus_option"] = 1
        case.mark_bad("bogus_option", "bogus_option", "option")
    kw["rng"] = rng_value(draw, case)

    # -- what the generator knows about validity -----------------------------------------------
    notes = case.notes
    if spec.private and "no-sensitivity" in notes and "sensitivity" not in kw:
        case.mark_bad("f", "sensitivity", "f")
    kinds = {"cardinality", "matroid", "knapsack"} & set(notes)
    if kinds and not kinds <= set(spec.constraints):
        case.mark_bad("constraint", "constraint", "matroid", "knapsack", "method")
    if method.startswith("private_continuous_greedy") and "matroid" in notes and \
            not isinstance(con, GraphicMatroid | PartitionMatroid | UniformMatroid):
        case.mark_bad("constraint", "constraint", "matroid", "method")
    if method == "private_greedy_decomposable" and f.data_model != "monotone-records":
        case.mark_bad("f", "data_model", "f", "sensitivity")
    mis = next((x for x in notes if x.startswith("misbehaving:")), "")
    if mis[len("misbehaving:"):] in ALWAYS_BAD:
        case.mark_bad("f", "f", "objective")
        case.data_refusal_ok = True
    elif mis.endswith("nan_big"):
        case.mark_degenerate("f", "objective")
        case.data_refusal_ok = True
    if any(o in kw for o in _INTERACTING) or spec.private:
        words = [o for o in _INTERACTING if o in kw or o in ("epsilon", "delta")]
        case.mark_degenerate(*words)
    return case, {"f": f, "constraint": con, **kw}


def _check(case: Case, args: dict[str, Any], method: str, events0: int) -> Any:
    spec = get_method(method)
    f, con = args["f"], args["constraint"]
    n = f.n

    def check(res: Any) -> str | None:
        sel = res.selection
        if not isinstance(sel, tuple) or not all(type(e) is int for e in sel):
            return f"selection {sel!r} is not a tuple of Python ints"
        if len(set(sel)) != len(sel) or any(not 0 <= e < n for e in sel):
            return f"selection {sel!r} repeats an element or leaves range({n})"
        if not is_feasible(con, n, sel):
            return f"selection {sel!r} is infeasible for {con!r}"
        if not finite(res.diagnostics.value):
            return f"diagnostic value {res.diagnostics.value!r} is not finite"
        ref = f.value(list(sel))
        if not math.isclose(res.diagnostics.value, ref, rel_tol=1e-9, abs_tol=1e-9):
            return f"diagnostic value {res.diagnostics.value!r} != f(selection) = {ref!r}"
        if spec.private:
            return privacy_problem(res.privacy, float(args["epsilon"]), float(args["delta"]),
                                   case.budget, events0)
        if res.privacy is not None:
            return "a non-private method reported a privacy guarantee"
        if "monotone" in case.notes and method in ("greedy", "lazy_greedy") and \
                not isinstance(con, Knapsack):
            return _greedy_bound(f, con, n, sel, method)
        return None

    return check


METHODS = dpsubmod.list_methods()
_WEIGHT = {"private_continuous_greedy_layers": 0.6, "dpcg_curvature": 0.8}


@pytest.mark.parametrize("method", METHODS)
def test_maximize(method: str) -> None:
    @fuzz_settings(_WEIGHT.get(method, 1.0))
    @given(maximize_call(method))
    def inner(call: tuple[Case, dict[str, Any]]) -> None:
        case, args = call
        events0 = len(case.budget.events) if case.budget is not None else 0
        out = invoke(case, lambda: maximize(method=method, **args),
                     check=_check(case, args, method, events0))
        expect(out)

    inner()


# -- k-submodular ---------------------------------------------------------------------------------

@st.composite
def ks_call(draw: Any, method: str) -> tuple[Case, dict[str, Any]]:
    from dpsubmod.functions.ksubmodular import KCoverage, KFacilityLocation

    spec = get_method(method, kind="ksubmodular")
    case = new_case(draw, f"maximize_ksubmodular[{method}]")
    case.allow(*COMMON, *spec.options, "B", "similarities", "max_similarity", "incidence")
    k = draw(st.integers(1, 3))
    n = draw(st.integers(1, 5))
    kind = draw(st.sampled_from(["facility", "coverage", "facility_bad"]))
    if kind == "coverage":
        m = draw(st.integers(1, 4))
        inc = np.array(draw(st.lists(st.booleans(), min_size=k * m * n,
                                     max_size=k * m * n))).reshape(k, n, m)
        f = KCoverage(inc.astype(float))
    else:
        c = draw(st.integers(1, 5))
        sim = np.array(draw(st.lists(st.floats(0, 1, allow_nan=False), min_size=k * c * n,
                                     max_size=k * c * n))).reshape(k, c, n)
        if kind == "facility_bad" and draw(st.booleans()):
            sim[:] = 0.0
        f = KFacilityLocation(sim, max_similarity=1.0)
    con: Any
    ck = draw(st.sampled_from(["B", "B", "uniform", "partition"]))
    if ck == "B":
        con = integer(draw, case, "B", low=1, high=n, typical=(1, n), p_bad=0.3,
                      words=("B", "k", "constraint"))
    elif ck == "uniform":
        con = UniformMatroid(n, draw(st.integers(1, n)))
    else:
        con = PartitionMatroid(draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)), 1)
        if "matroid" not in spec.constraints:
            case.mark_bad("constraint", "constraint", "matroid", "method")
    kw: dict[str, Any] = {}
    if spec.private:
        kw["epsilon"] = epsilon_value(draw, case)
        kw["delta"] = delta_value(draw, case)
        if draw(st.integers(0, 3)) == 0:
            case.budget = Budget(draw(st.sampled_from([0.5, 50.0])))
            kw["budget"] = case.budget
            case.mark_degenerate("budget", "Budget")
        case.mark_degenerate("epsilon", "delta", "composition", "backend")
    for opt in spec.options:
        if draw(st.integers(0, 2)) == 0:
            kw[opt] = _option(draw, case, opt, n, spec)
    kw["rng"] = rng_value(draw, case)
    if spec.private and f.sensitivity is None and "sensitivity" not in kw:
        case.mark_bad("f", "f", "sensitivity")
    return case, {"f": f, "constraint": con, **kw}


KS_METHODS = dpsubmod.list_methods(kind="ksubmodular")


@pytest.mark.parametrize("method", KS_METHODS)
def test_maximize_ksubmodular(method: str) -> None:
    spec = get_method(method, kind="ksubmodular")

    @fuzz_settings(0.6)
    @given(ks_call(method))
    def inner(call: tuple[Case, dict[str, Any]]) -> None:
        case, args = call
        f, con = args["f"], args["constraint"]
        events0 = len(case.budget.events) if case.budget is not None else 0

        def check(res: Any) -> str | None:
            items = [e for e, _ in res.selection]
            if len(set(items)) != len(items) or any(not 0 <= e < f.n for e in items):
                return f"selection {res.selection!r} repeats or leaves the ground set"
            if any(not 1 <= lab <= f.k for _, lab in res.selection):
                return f"selection {res.selection!r} has a label outside 1..{f.k}"
            if not is_feasible(con, f.n, tuple(items)):
                return f"support {items} is infeasible for {con!r}"
            if not finite(res.diagnostics.value):
                return f"diagnostic value {res.diagnostics.value!r} is not finite"
            if spec.private:
                return privacy_problem(res.privacy, float(args["epsilon"]),
                                       float(args["delta"]), case.budget, events0)
            return None

        expect(invoke(case, lambda: maximize_ksubmodular(method=method, **args), check=check))

    inner()


# -- minimize -------------------------------------------------------------------------------------

@st.composite
def minimize_call(draw: Any) -> tuple[Case, dict[str, Any]]:
    case = new_case(draw, "minimize")
    case.allow("f", "method", "tol", "max_iter", "exact_point")
    f = objective(draw, case, allow_misbehaving=True)
    kw: dict[str, Any] = {}
    if draw(st.booleans()):
        kw["method"] = choice(draw, case, "method",
                              ["auto", "brute-force", "min-norm-point", "maxflow"])
        # maxflow needs a cut-plus-modular objective, min-norm-point a submodular one
        case.mark_degenerate("method", "f")
    if draw(st.integers(0, 2)) == 0:
        kw["tol"] = real(draw, case, "tol", low=0.0, low_open=True, typical=(1e-9, 1e-3))
    if draw(st.integers(0, 3)) == 0:
        kw["max_iter"] = integer(draw, case, "max_iter", low=1, typical=(1, 200), optional=True)
        case.mark_degenerate("max_iter")
    mis = next((x for x in case.notes if x.startswith("misbehaving:")), "")
    # every method evaluates some set of two or more elements, where nan_big is NaN, once n >= 2
    if mis[len("misbehaving:"):] in ALWAYS_BAD or (mis.endswith("nan_big") and f.n >= 2):
        case.mark_bad("f", "f", "objective")
    return case, {"f": f, **kw}


@fuzz_settings(1.5)
@given(minimize_call())
def test_minimize(call: tuple[Case, dict[str, Any]]) -> None:
    case, args = call
    f = args["f"]

    def check(res: Any) -> str | None:
        sel = tuple(sorted(res.set))
        if any(not 0 <= e < f.n for e in sel) or len(set(sel)) != len(sel):
            return f"selection {sel!r} leaves range({f.n}) or repeats"
        if not finite(res.value):
            return f"value {res.value!r} is not finite"
        if f.n <= 7:
            best = min(f.value(list(S)) for r in range(f.n + 1)
                       for S in itertools.combinations(range(f.n), r))
            gap = getattr(res, "certificate_gap", 0.0) or 0.0
            if res.value > best + max(gap, 1e-7 * max(1.0, abs(best))):
                return f"value {res.value!r} above the minimum {best!r}"
        return None

    expect(invoke(case, lambda: minimize(**args), check=check))
