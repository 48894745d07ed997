"""Regression tests of issue 15 for the offline methods: misbehaving objectives, extreme but
finite parameters, degenerate data and bad ``rng`` values end in a clean refusal (a
DPSubmodError naming the argument, with the budget and the caller's generator untouched when
nothing was drawn) or in a correct result; never another exception, a warning or garbage."""

from __future__ import annotations

import copy
import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from dpsubmod import Budget, maximize, maximize_ksubmodular
from dpsubmod.constraints import Knapsack, LaminarMatroid, UniformMatroid
from dpsubmod.errors import DPSubmodError, NonFiniteObjectiveError, ValidationError
from dpsubmod.functions import FacilityLocation, Modular, SetFunction
from dpsubmod.functions.ksubmodular import KFacilityLocation, KSubmodularFunction
from dpsubmod.offline import list_methods
from dpsubmod.offline.discrete.decomposable import _gupta_epsilon, gupta_step_epsilon
from dpsubmod.offline.registry import get_method

PRIVATE = list_methods(private=True)


@pytest.fixture(autouse=True)
def _warnings_are_errors():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


class Bad(SetFunction):
    """NaN (or +/-inf) on every non-empty set, with a declared sensitivity."""

    def __init__(self, n: int, value: float):
        super().__init__(n, sensitivity=0.1, data_model="monotone-records")
        self.bad = value

    def _value(self, mask: np.ndarray) -> float:
        return self.bad if mask.any() else 0.0


def _kwargs(method: str) -> dict:
    spec = get_method(method)
    if not spec.private:
        return {}
    return {"epsilon": 1.0, "delta": 1e-6 if spec.needs_delta else 0.0}


# -- objectives returning NaN or infinity ---------------------------------------------------------

@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
@pytest.mark.parametrize("method", list_methods())
def test_a_non_finite_objective_is_refused_by_every_method(method, value):
    # Before: greedy, lazy_greedy, knapsack_greedy, stochastic_greedy and random returned a
    # selection with value NaN; private_continuous_greedy released one reporting epsilon = 1.
    constraint = Knapsack([1.0] * 5, 2.0) if method == "knapsack_greedy" else 2
    with pytest.raises(NonFiniteObjectiveError, match="objective 'f'"):
        maximize(Bad(5, value), constraint, method, rng=0, **_kwargs(method))


@pytest.mark.parametrize("method", PRIVATE)
def test_a_private_refusal_from_the_data_keeps_its_charge(method):
    # The refusal depends on the private data, so the charge made before the run stands.
    budget = Budget(10.0, 1e-3)
    with pytest.raises(NonFiniteObjectiveError, match="charged before it ran and stands"):
        maximize(Bad(5, math.nan), 2, method, budget=budget, rng=0, **_kwargs(method))
    assert len(budget.events) == 1


class BadK(KSubmodularFunction):
    """A k-submodular objective that is NaN on every non-empty labelling."""

    def __init__(self):
        super().__init__(4, 2, sensitivity=0.1)

    def _value(self, x: np.ndarray) -> float:
        return math.nan if np.any(x) else 0.0


@pytest.mark.parametrize("method", list_methods(kind="ksubmodular"))
def test_a_nan_ksubmodular_objective_is_refused(method):
    kw = {"epsilon": 1.0} if get_method(method, kind="ksubmodular").private else {}
    with pytest.raises(NonFiniteObjectiveError, match="objective 'f'"):
        maximize_ksubmodular(BadK(), 2, method, rng=0, **kw)


# -- rng ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("rng", ["abc", 1.5, 2.0, True, False, -1, [1, 2],
                                 np.random.RandomState(0)])
@pytest.mark.parametrize("method", list_methods())
def test_a_bad_rng_is_refused_at_entry_by_every_method(method, rng):
    # Before: "abc", 1.5 and True were accepted by the deterministic methods, True by all.
    budget = Budget(10.0, 1e-3)
    kw = _kwargs(method)
    if kw:
        kw["budget"] = budget
    constraint = Knapsack([1.0] * 4, 2.0) if method == "knapsack_greedy" else 2
    f = Modular([0.1, 0.4, 0.2, 0.3], sensitivity=0.1, data_model="monotone-records")
    with pytest.raises(DPSubmodError, match="'rng'"):
        maximize(f, constraint, method, rng=rng, **kw)
    assert budget.events == ()
    assert f.evaluations == 0


@pytest.mark.parametrize("method", list_methods(kind="ksubmodular"))
def test_a_bad_rng_is_refused_by_the_ksubmodular_methods(method):
    f = KFacilityLocation(np.random.default_rng(0).random((2, 3, 4)), max_similarity=1.0)
    kw = {"epsilon": 1.0} if get_method(method, kind="ksubmodular").private else {}
    with pytest.raises(DPSubmodError, match="'rng'"):
        maximize_ksubmodular(f, 2, method, rng="abc", **kw)


# -- extreme but finite parameters ----------------------------------------------------------------

@pytest.mark.parametrize("epsilon", [1e-320, 1e-16, 1e4, 1e100, 1e308])
@pytest.mark.parametrize("delta", [1e-300, 1e-6, 0.5])
def test_decomposable_step_epsilon_at_extreme_budgets(epsilon, delta):
    # Before: OverflowError at epsilon 1e4 and a brentq ValueError below 1e-15.
    ep = gupta_step_epsilon(epsilon, delta)
    assert 0.0 <= ep <= epsilon
    assert _gupta_epsilon(ep, -math.log(delta) + ep) <= epsilon
    if epsilon >= 1e-300:
        # and it is the largest such step, up to rounding
        assert _gupta_epsilon(ep * (1 + 1e-9), -math.log(delta) + ep) > epsilon * (1 - 1e-9)


@pytest.mark.parametrize("epsilon", [1e-320, 1e-16, 1e4, 1e308])
@pytest.mark.parametrize("method", PRIVATE)
def test_extreme_epsilon_gives_a_result_or_a_refusal_before_the_charge(method, epsilon):
    # Before: OverflowError (zCDP conversions, the decomposable analysis, layer defaults),
    # ZeroDivisionError, MemoryError, or a refusal after the budget was charged.
    f = Modular([0.1, 0.4, 0.2, 0.3], sensitivity=0.1, data_model="monotone-records")
    budget = Budget(1e308, 0.5)
    gen = np.random.default_rng(1)
    state = copy.deepcopy(gen.bit_generator.state)
    kw = _kwargs(method) | {"epsilon": epsilon}
    try:
        res = maximize(f, 2, method, budget=budget, rng=gen, **kw)
    except DPSubmodError as exc:
        assert "epsilon" in str(exc) or "sensitivity" in str(exc)
        assert budget.events == ()
        assert gen.bit_generator.state == state
    else:
        assert len(res.selection) == 2 and res.privacy.epsilon <= epsilon * (1 + 1e-9)
        assert math.isfinite(res.diagnostics.value)


def test_a_sensitivity_whose_range_overflows_is_refused_by_name():
    f = Modular([0.1, 0.4, 0.2], sensitivity=1e308)
    budget = Budget(1.0)
    with pytest.raises(ValidationError, match="'sensitivity'"):
        maximize(f, 2, "private_greedy", epsilon=1.0, budget=budget)
    assert budget.events == ()


def test_layers_refuses_astronomical_default_sizes_before_anything():
    # Before: "Maximum allowed dimension exceeded", MemoryError (21 TiB) or ZeroDivisionError.
    budget = Budget(1.0)
    f = Modular([0.1, 0.4, 0.2, 0.3], sensitivity=0.1)
    with pytest.raises(ValidationError, match="cover_size"):
        maximize(f, 2, "private_continuous_greedy_layers", epsilon=1e-16, budget=budget)
    with pytest.raises(ValidationError, match="'epsilon'"):
        maximize(f, 2, "private_continuous_greedy_layers", epsilon=1e-320, budget=budget)
    assert budget.events == ()


@pytest.mark.parametrize("method", ["stochastic_greedy", "private_stochastic_greedy"])
def test_a_subnormal_accuracy_scores_every_candidate(method):
    # Before: OverflowError (ln(1 / 1e-320) is inf).
    f = Modular([0.1, 0.4, 0.2, 0.3], sensitivity=0.1)
    res = maximize(f, 2, method, accuracy=1e-320, rng=0, **_kwargs(method))
    assert res.params["sample_size"] == 4 and len(res.selection) == 2


def test_dpcg_gaussian_at_a_subnormal_epsilon_is_refused_before_the_charge():
    # The Gaussian calibration would search forever; sigma would be out of range anyway.
    budget = Budget(1.0, 1e-3)
    f = Modular([0.1, 0.4, 0.2, 0.3], sensitivity=0.1)
    with pytest.raises(ValidationError, match="'epsilon'"):
        maximize(f, 2, "dpcg", epsilon=1e-320, delta=1e-6, noise="gaussian", budget=budget)
    assert budget.events == ()


# -- degenerate data ------------------------------------------------------------------------------

@pytest.mark.parametrize("method", ["dpcg", "dpcg_curvature", "private_continuous_greedy",
                                    "private_continuous_greedy_layers"])
@pytest.mark.parametrize("fmt", ["csr_array", "csc_matrix"])
def test_an_all_zero_sparse_similarity_is_a_valid_objective(method, fmt):
    # Before: IndexError in the closed-form gradient.
    f = FacilityLocation(getattr(sp, fmt)((6, 5)), sensitivity=0.1)
    res = maximize(f, 2, method, epsilon=1.0, rng=0)
    assert len(res.selection) == 2 and res.diagnostics.value == 0.0


def test_dpcg_curvature_lowers_a_target_above_the_released_linear_part():
    # Before: a ValidationError after the charge, since the reachable maximum depends on the
    # released (noisy) linear part.
    budget = Budget(10.0, 1e-3)
    f = Modular([0.5, 0.2], sensitivity=0.05)
    res = maximize(f, 1, "dpcg_curvature", epsilon=1.25, delta=1e-4, target=1e6,
                   budget=budget, rng=0)
    assert res.params["targets"][0] < 1e6 and len(res.selection) == 1


@pytest.mark.parametrize("linear_term", ["private", np.array([0.5, 0.2])])
def test_dpcg_curvature_with_gaussian_noise_and_one_target_stays_in_its_plan(linear_term):
    # Before: PlanExceededError; the linear part's Laplace use filled the runs' Gaussian slot.
    f = Modular([0.5, 0.2], sensitivity=0.05)
    res = maximize(f, 1, "dpcg_curvature", epsilon=1.25, delta=5.7e-5, target=0.0,
                   linear_term=linear_term, rng=0)
    assert res.params["noise"] == "gaussian" and res.privacy.epsilon <= 1.25 * (1 + 1e-12)


# -- declared capabilities ------------------------------------------------------------------------

def test_maximize_refuses_a_constraint_the_method_does_not_declare():
    # Before: knapsack_greedy on a matroid silently ran lazy greedy.
    f = Modular([0.1, 0.4, 0.2, 0.3])
    with pytest.raises(ValidationError, match="'constraint'.*knapsack_greedy"):
        maximize(f, LaminarMatroid([[0, 1, 2, 3]], [2]), "knapsack_greedy")
    with pytest.raises(ValidationError, match="'constraint'.*Methods for a knapsack"):
        maximize(Modular([0.1, 0.4, 0.2, 0.3], sensitivity=0.1), Knapsack([1.0] * 4, 2.0),
                 "private_continuous_greedy", epsilon=1.0)
    f = KFacilityLocation(np.random.default_rng(0).random((2, 3, 4)), max_similarity=1.0)
    from dpsubmod.constraints import PartitionMatroid

    with pytest.raises(ValidationError, match="ks_matroid_greedy"):
        maximize_ksubmodular(f, PartitionMatroid([0, 0, 1, 1], 1), "ks_greedy")
    assert maximize(Modular([0.1, 0.4, 0.2]), UniformMatroid(3, 2), "greedy").selection == (1, 2)


@pytest.mark.parametrize("method", ["dpcg", "private_continuous_greedy"])
def test_a_gradient_sensitivity_that_overflows_is_refused_by_name(method):
    # Before: dpcg refused naming the internal 'gradient_sensitivity' of dpcg_noise_scale.
    budget = Budget(1.0)
    f = Modular([0.1, 0.4, 0.2], sensitivity=1e308)
    with pytest.raises(ValidationError, match="'sensitivity'"):
        maximize(f, 2, method, epsilon=1.0, budget=budget)
    assert budget.events == ()
