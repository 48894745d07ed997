"""Mechanisms as objects: validated once, a privacy map equal to the charged event, a refusal that
changes nothing, free functions that draw as the objects do, and an exact check of every
object's law on tiny neighbouring inputs with a mis-calibrated control that the check catches."""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
from scipy import special, stats

from dpsubmod.errors import BudgetExceededError, ParameterTypeError, ValidationError
from dpsubmod.privacy import (
    Budget,
    ExponentialMechanism,
    ExponentialWeights,
    FileBudget,
    Gaussian,
    L2Laplace,
    Laplace,
    Ledger,
    Mechanism,
    PermuteAndFlip,
    PrivacyEvent,
    ProductBaseExponential,
    ReportNoisyMax,
    TreeAggregator,
    exact_check,
    exponential_mechanism,
    gaussian,
    l2_laplace,
    laplace,
    permute_and_flip,
    permute_and_flip_probabilities,
    report_noisy_max,
)
from dpsubmod.privacy.backends import NumpyBackend, SecureBackend
from dpsubmod.privacy.ledger import backend_of

Q = np.array([0.2, 1.0, 0.7, -np.inf, 0.4])
V = np.array([0.3, -1.2, 2.0])

#: name -> (object factory, release data, free function call with the same parameters)
CASES = {
    "laplace": (lambda be, rng=None: Laplace(epsilon=0.7, sensitivity=1.5, dim=3, backend=be,
                                             rng=rng), V,
                lambda rng, budget=None: laplace(V, epsilon=0.7, sensitivity=1.5, rng=rng,
                                                 budget=budget)),
    "gaussian": (lambda be, rng=None: Gaussian(sensitivity=1.0, epsilon=0.9, delta=1e-5,
                                               dim=3, backend=be, rng=rng), V,
                 lambda rng, budget=None: gaussian(V, sensitivity=1.0, epsilon=0.9, delta=1e-5,
                                                   rng=rng, budget=budget)),
    "gaussian_rho": (lambda be, rng=None: Gaussian(sensitivity=1.0, rho=0.3, dim=3,
                                                   backend=be, rng=rng), V,
                     lambda rng, budget=None: gaussian(V, sensitivity=1.0, rho=0.3, rng=rng,
                                                       budget=budget)),
    "exponential": (lambda be, rng=None: ExponentialMechanism(
        epsilon=0.8, sensitivity=0.5, backend=be, rng=rng), Q,
        lambda rng, budget=None: exponential_mechanism(Q, epsilon=0.8, sensitivity=0.5,
                                                       rng=rng, budget=budget)),
    "exponential_range": (lambda be, rng=None: ExponentialMechanism(
        epsilon=0.8, range_sensitivity=0.5, backend=be, rng=rng), Q,
        lambda rng, budget=None: exponential_mechanism(Q, epsilon=0.8, range_sensitivity=0.5,
                                                       rng=rng, budget=budget)),
    "report_noisy_max": (lambda be, rng=None: ReportNoisyMax(
        epsilon=0.8, sensitivity=0.5, monotonic=True, backend=be, rng=rng), Q,
        lambda rng, budget=None: report_noisy_max(Q, epsilon=0.8, sensitivity=0.5,
                                                  monotonic=True, rng=rng, budget=budget)),
    "permute_and_flip": (lambda be, rng=None: PermuteAndFlip(
        epsilon=0.8, sensitivity=0.5, clip_range=(0.0, 0.9), backend=be, rng=rng), Q,
        lambda rng, budget=None: permute_and_flip(Q, epsilon=0.8, sensitivity=0.5,
                                                  clip_range=(0.0, 0.9), rng=rng,
                                                  budget=budget)),
}
L2_CASE = (lambda be, rng=None: L2Laplace(epsilon=0.7, sensitivity=1.5, dim=3, backend=be,
                                          rng=rng), V,
           lambda rng, budget=None: l2_laplace(V, epsilon=0.7, sensitivity=1.5, rng=rng,
                                               budget=budget))
NUMPY_CASES = {**CASES, "l2_laplace": L2_CASE}


def _secure():
    return SecureBackend(engine="python")


# =============================================================================================
# construction
# =============================================================================================
@pytest.mark.parametrize("build, name, err", [
    (lambda: Laplace(epsilon=-1.0, sensitivity=1.0), "epsilon", ValidationError),
    (lambda: Laplace(epsilon=1.0, sensitivity=0.0), "sensitivity", ValidationError),
    (lambda: Laplace(epsilon=1.0, sensitivity=1.0, dim=0), "dim", ValidationError),
    (lambda: Gaussian(sensitivity=1.0, epsilon=1.0, delta=0.0), "delta", ValidationError),
    (lambda: Gaussian(sensitivity=1.0, rho="a"), "rho", ParameterTypeError),
    (lambda: L2Laplace(epsilon=math.inf, sensitivity=1.0), "epsilon", ValidationError),
    (lambda: ExponentialMechanism(epsilon=1.0, sensitivity=1.0, monotonic="yes"), "monotonic",
     ParameterTypeError),
    (lambda: ReportNoisyMax(epsilon=1.0, sensitivity=-2.0), "sensitivity", ValidationError),
    (lambda: PermuteAndFlip(epsilon=1.0, sensitivity=1.0, clip_range=(1.0, 0.0)), "clip_range",
     ValidationError),
    (lambda: ExponentialWeights(weight=0.0), "weight", ValidationError),
    (lambda: ProductBaseExponential(epsilon=1.0, sensitivity=1.0, cover_size=0), "cover_size",
     ValidationError),
])
def test_construction_refuses_a_bad_argument_by_name_and_draws_nothing(build, name, err):
    with pytest.raises(err, match=name):
        build()


def test_construction_touches_no_generator_and_free_functions_keep_their_names():
    gen = np.random.default_rng(3)
    state = gen.bit_generator.state
    Laplace(epsilon=1.0, sensitivity=1.0, rng=gen)
    ExponentialMechanism(epsilon=1.0, sensitivity=1.0, rng=gen)
    assert gen.bit_generator.state == state
    with pytest.raises(ValidationError, match="'epsilon' parameter of Laplace"):
        Laplace(epsilon=0.0, sensitivity=1.0)
    with pytest.raises(ValidationError, match="'epsilon' parameter of laplace"):
        laplace(1.0, epsilon=0.0, sensitivity=1.0)
    with pytest.raises(ValidationError, match="product sampler"):
        ProductBaseExponential(epsilon=1.0, sensitivity=1.0, backend=_secure())


def test_every_object_is_a_mechanism():
    for build, _, _ in NUMPY_CASES.values():
        assert isinstance(build(None, 0), Mechanism)
    assert isinstance(TreeAggregator(4, sensitivity=1.0, epsilon=1.0, rng=0), Mechanism)
    assert isinstance(ExponentialWeights(weight=0.1), Mechanism)


# =============================================================================================
# privacy map == charged event, with backend and engine
# =============================================================================================
@pytest.mark.parametrize("name", sorted(NUMPY_CASES))
def test_privacy_map_is_the_charged_event_on_numpy(name):
    build, data, _ = NUMPY_CASES[name]
    mech = build(None, 1)
    led = Ledger()
    mech.release(data, budget=led)
    assert led.events == (mech.privacy_map(),) == (mech.privacy_map(mech._sens),)
    ev = led.events[0]
    assert ev.backend == "numpy" and ev.engine == mech.noise_backend.engine
    assert ev.engine.startswith("numpy-") and backend_of(led.events) == "numpy"


@pytest.mark.parametrize("name", sorted(CASES))
def test_privacy_map_is_the_charged_event_on_the_secure_backend(name):
    build, data, _ = CASES[name]
    mech = build(_secure())
    led = Ledger()
    mech.release(data, budget=led)
    ev = led.events[0]
    assert led.events == (mech.privacy_map(),)
    assert ev.backend.startswith("secure") and ev.backend.endswith("@" + ev.engine)
    assert ev.engine.startswith("python-dpsubmod-")
    assert f"backend={ev.backend}" in ev.note  # the note repeats the field for readers


def test_privacy_map_at_other_distances_scales_the_guarantee():
    lap = Laplace(epsilon=0.5, sensitivity=1.0)
    assert lap.privacy_map(2.0).epsilon == 1.0 and lap.privacy_map(0.5).epsilon == 0.25
    em = ExponentialMechanism(epsilon=1.0, sensitivity=0.5)
    assert em.privacy_map(1.0).epsilon == 2.0 and em.privacy_map(1.0).rho == 0.5
    g = Gaussian(sensitivity=1.0, rho=0.5)
    assert g.privacy_map(2.0).rho == 2.0 and g.privacy_map(2.0).epsilon == math.inf
    agg = TreeAggregator(8, sensitivity=1.0, epsilon=1.0, rng=0)
    assert agg.privacy_map() == agg.event
    assert agg.privacy_map(2.0).epsilon == pytest.approx(2.0, rel=1e-15)
    assert agg.privacy_map(2.0).epsilon >= 2.0  # rounded up, never below the real map
    with pytest.raises(ValidationError, match="d_in"):
        lap.privacy_map(-1.0)


def test_tree_release_charges_its_map_once_then_adds_items():
    agg = TreeAggregator(4, 2, sensitivity=1.0, epsilon=1.0, rng=0)
    twin = TreeAggregator(4, 2, sensitivity=1.0, epsilon=1.0, rng=0)
    led = Ledger()
    out = [agg.release([1.0, 0.0], budget=led) for _ in range(3)]
    for _ in range(3):
        twin.update([1.0, 0.0])
    assert led.events == (agg.privacy_map(),) and agg.privacy_map().engine.startswith("numpy")
    np.testing.assert_array_equal(out[-1], twin.prefix())


# =============================================================================================
# refusal and same draws
# =============================================================================================
@pytest.mark.parametrize("name", sorted(NUMPY_CASES))
def test_a_refused_release_changes_nothing(name):
    build, data, _ = NUMPY_CASES[name]
    gen = np.random.default_rng(5)
    mech = build(None, gen)
    budget = Budget(epsilon=1e-3, delta=1e-9)
    state = gen.bit_generator.state
    with pytest.raises(BudgetExceededError):
        mech.release(data, budget=budget)
    assert budget.events == () and gen.bit_generator.state == state
    with pytest.raises(ParameterTypeError, match="budget"):
        mech.release(data, budget="all of it")
    assert gen.bit_generator.state == state


@pytest.mark.parametrize("name", sorted(NUMPY_CASES))
def test_free_function_draws_as_the_object_at_the_same_seed(name):
    build, data, free = NUMPY_CASES[name]
    for seed in range(5):
        a, b = Ledger(), Ledger()
        out_obj = build(None, seed).release(data, budget=a)
        out_fun = free(seed, budget=b)
        np.testing.assert_array_equal(out_obj, out_fun)
        assert a.events == b.events


def test_exponential_weights_draw_as_the_row_by_row_exponential_mechanism():
    G = np.array([[0.0, 3.0, 1.0, 2.0], [2.0, 0.0, 0.5, 0.0]])
    for seed in range(20):
        rows = ExponentialWeights(weight=0.7, rows=2, rng=seed).release(G)
        be = NumpyBackend(seed)  # one row after the other from the same stream
        assert rows.tolist() == [be.exponential(r, 0.7, sensitivity=1.0) for r in G]
    mech = ExponentialWeights(weight=0.7, rows=2)
    assert mech.privacy_map().epsilon == 1.4 and mech.privacy_map().count == 2
    with pytest.raises(ValidationError, match="rows <= m"):
        ExponentialWeights(weight=0.7, rows=3).release(np.zeros((3, 2)), distinct=True)
    drawn = ExponentialWeights(weight=0.7, rows=4, rng=0).release(np.zeros((4, 4)),
                                                                  distinct=True)
    assert sorted(drawn.tolist()) == [0, 1, 2, 3]


# =============================================================================================
# exact checks on tiny neighbours, each with a mis-calibrated control that fails
# =============================================================================================
EM_D, EM_DP = np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 1.0])


def _softmax(w, q):
    z = w * (q - q.max())
    return np.exp(z - special.logsumexp(z))


def _check_and_control(law, mech, control, D, Dp, delta=0.0):
    """Each object's law against its own claim: the sound one holds, the control (a wrong
    sensitivity or monotonicity declared for these neighbours) is caught."""
    for m, holds in ((mech, True), (control, False)):
        eps = m.privacy_map().epsilon
        assert exact_check(lambda x, m=m: law(m, x), D, Dp, eps, delta).passed is holds


def test_exact_exponential_mechanism():
    _check_and_control(lambda m, q: _softmax(m.weight, q),
                       ExponentialMechanism(epsilon=1.0, sensitivity=1.0),
                       ExponentialMechanism(epsilon=1.0, sensitivity=1.0, monotonic=True),
                       EM_D, EM_DP)


def test_exact_exponential_weights():
    _check_and_control(lambda m, q: _softmax(m.weight, q), ExponentialWeights(weight=0.5),
                       ExponentialWeights(weight=0.5, monotonic=True), EM_D, EM_DP)


def _rows_law(w, G, distinct):
    """Joint law of a two-row exponential-weights release (row 1 renormalised over the
    indices row 0 left when ``distinct``)."""
    p0 = _softmax(w, G[0])
    out = []
    for i in range(G.shape[1]):
        q1 = G[1].copy()
        if distinct:
            q1[i] = -np.inf
        with np.errstate(invalid="ignore"):
            out.append(p0[i] * _softmax(w, q1))
    return np.concatenate(out)


@pytest.mark.parametrize("distinct", [False, True])
def test_exact_exponential_weights_with_one_moving_row(distinct):
    # Neighbours raise one score of row 0 by 1 (monotone); row 1 is the same in both: the
    # release costs one row's draw, which the map of moving_rows=1 states (one use). The
    # control moves a score of each row, which that map does not cover.
    mech = ExponentialWeights(weight=0.5, monotonic=True, rows=2, moving_rows=1)
    event = mech.privacy_map()
    assert (event.epsilon, event.count) == (0.5, 1)
    claim = event.epsilon * event.count
    G = np.array([[0.0, 0.0, 0.0], [0.5, 0.0, 1.0]])
    one, both = G.copy(), G.copy()
    one[0, 0] = both[0, 0] = both[1, 1] = 1.0
    law = functools.partial(_rows_law, mech.weight, distinct=distinct)
    assert exact_check(law, G, one, claim).passed
    assert not exact_check(law, G, both, claim).passed
    with pytest.raises(ValidationError, match="moving_rows"):
        ExponentialWeights(weight=0.5, rows=2, moving_rows=3)


def test_exact_permute_and_flip():
    def law(m, q):
        return permute_and_flip_probabilities(q, epsilon=2 * m.weight, sensitivity=1.0)

    _check_and_control(law, PermuteAndFlip(epsilon=1.0, sensitivity=1.0),
                       PermuteAndFlip(epsilon=1.0, sensitivity=0.5), np.array([1.0, 0.0]),
                       np.array([0.0, 1.0]))


def test_exact_report_noisy_max_two_candidates():
    def law(m, q):  # P(candidate 0 wins) = P(Z1 - Z0 < q0 - q1), Z i.i.d. Laplace(b)
        t, b = q[0] - q[1], m.scale
        tail = 0.5 * math.exp(-abs(t) / b) * (1.0 + abs(t) / (2.0 * b))
        p0 = 1.0 - tail if t >= 0 else tail
        return np.array([p0, 1.0 - p0])

    _check_and_control(law, ReportNoisyMax(epsilon=1.0, sensitivity=1.0),
                       ReportNoisyMax(epsilon=1.0, sensitivity=0.25), np.array([1.0, 0.0]),
                       np.array([0.0, 1.0]))


EDGES = np.concatenate([[-np.inf], np.linspace(-6.0, 7.0, 131), [np.inf]])


def _binned(cdf):
    return np.diff(cdf(EDGES))


def test_exact_laplace_and_l2_laplace_on_a_binned_line():
    def law(m, x):
        return _binned(lambda e: stats.laplace.cdf(e, loc=x, scale=m.scale))

    for cls in (Laplace, L2Laplace):
        _check_and_control(law, cls(epsilon=1.0, sensitivity=1.0),
                           cls(epsilon=1.0, sensitivity=0.5), 0.0, 1.0)


def test_exact_gaussian_on_a_fine_binned_line():
    edges = np.concatenate([[-np.inf], np.linspace(-30.0, 31.0, 6101), [np.inf]])

    def law(m, x):
        return np.diff(stats.norm.cdf(edges, loc=x, scale=m.sigma))

    mech = Gaussian(sensitivity=1.0, epsilon=1.0, delta=1e-5)
    control = Gaussian(sensitivity=0.5, epsilon=1.0, delta=1e-5)
    assert exact_check(lambda x: law(mech, x), 0.0, 1.0, 1.0, 1e-5).passed
    assert not exact_check(lambda x: law(control, x), 0.0, 1.0, 1.0, 1e-5).passed


def test_exact_tree_aggregation_two_releases():
    # T = 2: item 1 is in the leaf released at t = 1 and in the node released at t = 2, so
    # neighbouring streams shift both releases; independent noises make the law a product.
    def law(m, x):
        p = _binned(lambda e: stats.laplace.cdf(e, loc=x, scale=m.scale))
        return np.outer(p, p).ravel()

    _check_and_control(law, TreeAggregator(2, sensitivity=1.0, epsilon=1.0, rng=0),
                       TreeAggregator(2, sensitivity=0.5, epsilon=1.0, rng=0), 0.0, 1.0)


def test_exact_product_base_exponential_on_uniform_bases():
    class OneOfThree:  # the bases of U(1, 3), drawn exactly by the mechanism's inverse CDF
        def bases(self, logw, size, draws):
            cum = np.cumsum(np.exp(logw - special.logsumexp(logw)))
            cum[-1] = np.inf
            return np.array([[draws.index(cum)] for _ in range(size)])

    def law(m, g):
        return _softmax(m.weight, np.asarray(g))

    _check_and_control(law, ProductBaseExponential(epsilon=1.0, sensitivity=1.0),
                       ProductBaseExponential(epsilon=1.0, sensitivity=0.5), EM_D, EM_DP)
    mech = ProductBaseExponential(epsilon=1.0, sensitivity=1.0, rng=0)
    led = Ledger()
    bases = mech.release(EM_D, OneOfThree(), budget=led, note="step 1/1")
    assert bases.shape == (1, 1) and led.events[0].note.startswith("step 1/1; weight=")
    assert led.events[0].epsilon == mech.privacy_map().epsilon == 1.0


# =============================================================================================
# events: the new fields and the budget file
# =============================================================================================
def test_event_fields_default_empty_and_are_typed():
    ev = PrivacyEvent("m", 0.5)
    assert ev.backend == "" and ev.engine == "" and "backend" not in ev.as_dict()
    with pytest.raises(ParameterTypeError, match="engine"):
        PrivacyEvent("m", 0.5, engine=3)
    assert backend_of([ev]) == "unspecified"


def test_budget_file_round_trips_backend_and_engine(tmp_path):
    path = tmp_path / "b.json"
    FileBudget.create(path, 2.0, dataset="toy")
    fb = FileBudget(path, dataset="toy")
    laplace(1.0, epsilon=0.5, sensitivity=1.0, rng=0, budget=fb)
    fb.charge(PrivacyEvent.pure("by hand", 0.25))
    again = FileBudget(path, dataset="toy")
    first, second = again.events
    assert first.backend == "numpy" and first.engine.startswith("numpy-")
    assert second.backend == "" and "backend" not in again.releases[1]
    assert again.releases[0]["backend"] == "numpy"


def test_one_import_address_per_public_name():
    import importlib

    import dpsubmod.privacy as face

    homes: dict[str, list[str]] = {}
    for module in ("additive", "gaussian_mechanism", "selection", "noisy_max", "weights",
                   "product", "mechanisms", "calibration", "gaussian_calibration", "continual",
                   "tree_aggregator"):
        mod = importlib.import_module(f"dpsubmod.privacy.{module}")
        for name in mod.__all__:
            homes.setdefault(name, []).append(module)
    assert {n: m for n, m in homes.items() if len(m) > 1} == {}
    mechanisms = importlib.import_module("dpsubmod.privacy.mechanisms")
    assert mechanisms.__all__ == ["Mechanism"] and not hasattr(mechanisms, "laplace")
    for name in ("Laplace", "ExponentialWeights", "ProductBaseExponential", "laplace",
                 "exponential_mechanism", "gaussian_sigma_zcdp", "TreeAggregator"):
        assert getattr(face, name).__module__.rpartition(".")[2] in homes[name]
