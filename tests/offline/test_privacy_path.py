"""The privacy path of the offline methods: the grid-rounded exponential step, the decomposable
greedy's data model, a-priori reports, and the user's budget charged before any noise by every
private method of the registry (parametrized over the registry, so a new method is covered)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from dpsubmod import Budget, BudgetExceededError, maximize, maximize_ksubmodular
from dpsubmod.constraints import Knapsack, PartitionMatroid
from dpsubmod.errors import SensitivityError, ValidationError
from dpsubmod.functions import FacilityLocation, Modular
from dpsubmod.functions.ksubmodular import KFacilityLocation
from dpsubmod.offline.discrete import private_greedy as pg
from dpsubmod.offline.registry import KINDS, get_method, list_methods
from dpsubmod.privacy import PrivacyEvent, SecureBackend
from dpsubmod.privacy.selection import ExponentialMechanism, exponential_mechanism_probabilities
from oracles import TableFunction, max_value_change

# ------------------------------------------------------------------------------------------------
# a step of private greedy on the secure backend's grid

#: The sensitivity Delta of the pair below, and the secure backend's grid: one grid step per Delta.
GRID = 2.0 ** -4


def grid_worst_pair() -> tuple[TableFunction, TableFunction]:
    """Objectives on two candidates with ``|F_D(S) - F_D'(S)| <= Delta`` on every set whose
    first-step gains differ by ``+1.5 Delta`` (candidate 0) and ``-0.5 Delta`` (candidate 1):
    the common term ``F_D(empty) - F_D'(empty) = -Delta / 2`` shifts both, so the range is
    ``2 Delta``. The scores sit where rounding to the grid widens that range to ``3 Delta``, and
    candidate 1 carries almost all the mass, so one step's privacy loss reaches its bound."""
    big = 20.0  # in grid units: makes candidate 1 all but certain on both inputs
    f_prime = np.array([0.0, 0.0, (big + 0.99) * GRID, (big + 1.0) * GRID])
    f = f_prime + np.array([-0.5, 1.0, -1.0, 0.0]) * GRID  # rows: {}, {0}, {1}, {0, 1}
    return TableFunction(f), TableFunction(f_prime)


def _keywords(mech: ExponentialMechanism) -> dict:
    """The keywords an exponential mechanism was built with (those that were given)."""
    kw = {"epsilon": mech.epsilon, "backend": mech.noise_backend, "monotonic": mech.monotonic,
          "sensitivity": mech.sensitivity, "range_sensitivity": mech.range_sensitivity}
    return {k: v for k, v in kw.items() if v is not None and v is not False}


def _spy_step(monkeypatch, method: str, h, **options) -> tuple[np.ndarray, dict]:
    """Run one step of ``method`` on ``h`` and return the scores it handed to its exponential
    mechanism and the keywords that mechanism was built with."""
    calls: list[tuple[np.ndarray, dict]] = []
    real = ExponentialMechanism.release

    def spy(self, scores, **kw):
        calls.append((np.array(scores, dtype=float), _keywords(self)))
        return real(self, scores, **kw)

    monkeypatch.setattr(ExponentialMechanism, "release", spy)
    backend = SecureBackend(granularity=GRID, random_source=random.Random(0))
    res = maximize(h, 1, method, epsilon=1.0, sensitivity=GRID, backend=backend, **options)
    assert len(calls) == 1 and len(res.selection) == 1
    return calls[0]


@pytest.mark.parametrize("method", ["private_greedy", "private_stochastic_greedy"])
def test_secure_step_keeps_its_epsilon_on_a_coarse_grid(method, monkeypatch):
    f, fp = grid_worst_pair()
    assert max_value_change(f, fp) <= GRID
    opts = {"sample_size": 2} if method == "private_stochastic_greedy" else {}
    q_d, kw = _spy_step(monkeypatch, method, f, **opts)
    q_p, kw_p = _spy_step(monkeypatch, method, fp, **opts)
    sens_keys = ("sensitivity", "range_sensitivity", "monotonic")
    keyword = {k: v for k, v in kw.items() if k in sens_keys}
    assert keyword == {k: v for k, v in kw_p.items() if k in sens_keys}
    # gains share a common term: a range sensitivity, which the grid rounds as a range
    assert keyword == {"range_sensitivity": 2 * GRID}
    eps_step, be = kw["epsilon"], kw["backend"]
    assert eps_step == 1.0 and isinstance(be, SecureBackend)

    def loss(**sens) -> float:
        lp = exponential_mechanism_probabilities(q_d, epsilon=eps_step, backend=be, log=True,
                                                 **sens)
        lq = exponential_mechanism_probabilities(q_p, epsilon=eps_step, backend=be, log=True,
                                                 **sens)
        return float(np.abs(lp - lq).max())

    assert loss(**keyword) <= eps_step * (1 + 1e-12)  # measured 0.998
    # The per-score keyword the step used to pass is exceeded once the scores are rounded:
    # measured 1.4999 epsilon on this pair.
    assert loss(sensitivity=GRID) > 1.49 * eps_step
    # On the numpy backend the two keywords give the same law.
    for q in (q_d, q_p):
        np.testing.assert_array_equal(
            exponential_mechanism_probabilities(q, epsilon=eps_step, **keyword),
            exponential_mechanism_probabilities(q, epsilon=eps_step, sensitivity=GRID))


# ------------------------------------------------------------------------------------------------
# the decomposable greedy's data model


def test_decomposable_refuses_a_general_objective_even_with_a_sensitivity():
    general = Modular([1.0, 2.0, 0.5])
    assert general.data_model == "general"
    with pytest.raises(SensitivityError,
                       match=r"monotone-records.*even with\s+sensitivity=.*Use private_greedy"):
        maximize(general, 1, "private_greedy_decomposable", epsilon=1.0, delta=1e-6,
                 sensitivity=1.0)
    budget = Budget(2.0, 1e-5)
    with pytest.raises(SensitivityError):
        maximize(general, 1, "private_greedy_decomposable", epsilon=1.0, delta=1e-6,
                 sensitivity=1.0, budget=budget)
    assert budget.events == ()


# ------------------------------------------------------------------------------------------------
# a-priori reports


def _records(seed: int = 0, n: int = 5) -> FacilityLocation:
    rng = np.random.default_rng(seed)
    return FacilityLocation.from_records(rng.random((20, 2)), rng.random((n, 2)), bandwidth=0.3)


def test_knapsack_private_greedy_reports_the_a_priori_epsilon_on_every_run():
    f = _records()
    # Up to three cheap items fit, or one expensive one: the runs stop after 1 to 3 steps.
    kn = Knapsack([1.0, 1.0, 1.0, 3.0, 3.0], 3.0)
    reports, lengths = set(), set()
    for seed in range(60):
        res = maximize(f, kn, "private_greedy", epsilon=1.0, rng=seed)
        reports.add((res.privacy.epsilon, res.privacy.delta, res.privacy.uses))
        lengths.add(len(res.selection))
    assert len(lengths) > 1  # the path depends on the run...
    ((eps, delta, uses),) = reports  # ...the statement does not
    assert eps == pytest.approx(1.0, rel=1e-12) and delta == 0.0 and uses == 3 + 2


# ------------------------------------------------------------------------------------------------
# the budget charged by private_greedy releases the same law


@pytest.mark.parametrize("constraint", [3, PartitionMatroid([0, 0, 1, 1, 1], [1, 2]),
                                        Knapsack([1.0, 2.0, 1.0, 3.0, 1.5], 3.0)],
                         ids=["cardinality", "partition", "knapsack"])
def test_charged_private_greedy_releases_the_uncharged_law(constraint):
    f = _records(1)
    eps = 0.9
    for seed in range(40):
        g_free, g_charged = np.random.default_rng(seed), np.random.default_rng(seed)
        free = pg.private_greedy(f, constraint, epsilon=eps, rng=g_free)
        budget = Budget(eps)
        charged = pg.private_greedy(f, constraint, epsilon=eps, budget=budget, rng=g_charged)
        assert charged.selection == free.selection
        assert charged.diagnostics.trace == free.diagnostics.trace
        assert g_charged.bit_generator.state == g_free.bit_generator.state
        assert charged.privacy == free.privacy
        (event,) = budget.events
        assert (event.epsilon, event.delta) == (charged.privacy.epsilon, charged.privacy.delta)
        assert event.epsilon == pytest.approx(eps, rel=1e-12) and event.delta == 0.0


# ------------------------------------------------------------------------------------------------
# every private method of the registry: charged before any noise


def _problem(kind: str):
    rng = np.random.default_rng(3)
    if kind == "set":
        return _records(3), 2, maximize
    return KFacilityLocation(rng.random((2, 20, 5)), max_similarity=1.0), 2, maximize_ksubmodular


PRIVATE = [(kind, name) for kind in KINDS for name in list_methods(private=True, kind=kind)]


def _deltas(kind: str, name: str) -> list[float]:
    return [1e-6] if get_method(name, kind=kind).needs_delta else [0.0, 1e-6]


CASES = [pytest.param(kind, name, delta, id=f"{name}-delta={delta:g}")
         for kind, name in PRIVATE for delta in _deltas(kind, name)]


def test_the_registry_lists_every_private_method():
    assert {n for _, n in PRIVATE} >= {
        "private_greedy", "private_stochastic_greedy", "private_greedy_decomposable",
        "private_continuous_greedy", "private_continuous_greedy_layers", "dpcg",
        "dpcg_curvature", "ks_private", "ks_private_sampled"}


@pytest.mark.parametrize(("kind", "name", "delta"), CASES)
def test_budget_too_small_is_refused_before_any_noise(kind, name, delta):
    f, constraint, entry = _problem(kind)
    budget = Budget(1.0, 1e-5)
    budget.charge(PrivacyEvent.pure("an earlier release", 0.2))
    before = budget.events
    gen = np.random.default_rng(7)
    state = gen.bit_generator.state
    evaluations = f.evaluations
    with pytest.raises(BudgetExceededError):
        entry(f, constraint, name, epsilon=1.0, delta=delta, budget=budget, rng=gen)
    assert budget.events == before
    assert gen.bit_generator.state == state  # nothing drawn
    assert f.evaluations == evaluations  # the data was not even read


@pytest.mark.parametrize(("kind", "name", "delta"), CASES)
def test_adequate_budget_is_charged_the_call_guarantee_once(kind, name, delta):
    f, constraint, entry = _problem(kind)
    budget = Budget(2.0, 1e-5)
    res = entry(f, constraint, name, epsilon=1.0, delta=delta, budget=budget, rng=7)
    (event,) = budget.events
    assert event.mechanism == name and event.count == 1
    assert (event.epsilon, event.delta) == (res.privacy.epsilon, res.privacy.delta)
    assert res.privacy.epsilon <= 1.0 * (1 + 1e-12) and res.privacy.delta <= delta
    if delta == 0.0:
        assert res.privacy.epsilon == pytest.approx(1.0, rel=1e-9)
    # the same call without a budget releases the same selection
    assert entry(f, constraint, name, epsilon=1.0, delta=delta, rng=7).selection == res.selection


@pytest.mark.parametrize(("kind", "name", "delta"), CASES)
def test_bad_backend_is_refused_before_the_budget_is_charged(kind, name, delta):
    f, constraint, entry = _problem(kind)
    budget = Budget(2.0, 1e-5)
    with pytest.raises(ValidationError, match="backend"):
        entry(f, constraint, name, epsilon=1.0, delta=delta, budget=budget, rng=0,
              backend="fancy")
    # a backend instance owns its randomness: passing rng= as well is refused, before charging
    with pytest.raises(ValidationError, match="backend"):
        entry(f, constraint, name, epsilon=1.0, delta=delta, budget=budget, rng=0,
              backend=SecureBackend(random_source=random.Random(0)))
    assert budget.events == ()


#: Configurations a method cannot run on the secure backend: dpcg_curvature's default noise at
#: delta > 0 is Gaussian, and it composes by basic composition what the discrete Gaussian
#: certifies through zCDP only.
SECURE_REFUSED = {("dpcg_curvature", 1e-6)}


@pytest.mark.parametrize(("kind", "name", "delta"),
                         [c for c in CASES if "secure" in get_method(c.values[1],
                                                                     kind=c.values[0]).backends])
def test_secure_backend_instance_runs_every_method_that_offers_it(kind, name, delta):
    f, constraint, entry = _problem(kind)
    budget = Budget(2.0, 1e-5)
    backend = SecureBackend(random_source=random.Random(0))
    if (name, delta) in SECURE_REFUSED:
        with pytest.raises(ValidationError, match="secure"):
            entry(f, constraint, name, epsilon=1.0, delta=delta, budget=budget, backend=backend)
        assert budget.events == ()  # refused before the charge
        return
    res = entry(f, constraint, name, epsilon=1.0, delta=delta, budget=budget, backend=backend)
    assert len(res.selection) >= 1 and res.privacy.backend == "secure"
    assert len(budget.events) == 1


def test_dpcg_gaussian_calibration_the_secure_backend_cannot_certify_is_refused_first():
    f, constraint, _ = _problem("set")
    budget = Budget(2.0, 1e-5)
    with pytest.raises(ValidationError, match="zCDP only"):
        maximize(f, constraint, "dpcg", epsilon=1.0, delta=1e-6, noise="gaussian",
                 gaussian_calibration="analytic", backend="secure", budget=budget)
    assert budget.events == ()


# ------------------------------------------------------------------------------------------------
# maximize's own refusals


def test_maximize_refuses_an_unknown_option_listing_the_valid_ones():
    f = _records()
    with pytest.raises(ValidationError, match=r"'smaple_size'.*Its options are: .*sample_size"):
        maximize(f, 2, "private_greedy", epsilon=1.0, smaple_size=2)
    with pytest.raises(ValidationError, match=r"'lazy'.*Its options are: stop_if_negative"):
        maximize(f, 2, "greedy", lazy=True)
    kf, _, _ = _problem("ksubmodular")
    with pytest.raises(ValidationError, match=r"'gamma'.*Its options are: .*composition"):
        maximize_ksubmodular(kf, 2, "ks_private", epsilon=1.0, gamma=0.1)


def test_maximize_refuses_a_budget_for_a_non_private_method():
    f = _records()
    budget = Budget(1.0)
    with pytest.raises(ValidationError, match=r"'greedy' is not private, so it takes no budget"):
        maximize(f, 2, "greedy", budget=budget)
    kf, _, _ = _problem("ksubmodular")
    with pytest.raises(ValidationError, match=r"not private, so it takes no budget"):
        maximize_ksubmodular(kf, 2, "ks_greedy", budget=budget)
    assert budget.events == ()
