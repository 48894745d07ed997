"""The tree-aggregation learners on the secure backends.

Each learner runs with ``backend="secure"`` (OpenDP when installed, else the exact pure-Python
engine), with a pure-Python ``SecureBackend`` instance, and with ``backend="opendp"`` when OpenDP
is installed; the budget is charged the same events (epsilon, delta) as with numpy, and the
privacy report names the engine that drew. Bad backends are refused at construction, before
anything is charged.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

import dpsubmod.online as O
from dpsubmod import Budget
from dpsubmod.errors import MissingDependencyError, ParameterTypeError, ValidationError
from dpsubmod.functions import Modular
from dpsubmod.online import Hedge, linear_losses
from dpsubmod.polytopes import Simplex
from dpsubmod.privacy import SecureBackend, TreeAggregator, opendp_engine

try:
    import opendp  # noqa: F401

    HAVE_OPENDP = True
except ImportError:
    HAVE_OPENDP = False

T = 6
FS = [Modular([0.1, -0.2, 0.3])] * T


@pytest.fixture(autouse=True)
def fresh_engine():
    opendp_engine.clear_cache()
    yield
    opendp_engine.clear_cache()


def play_submod(learner):
    O.run(learner, FS, comparator=None)


def play_pftal(learner):
    play_pftal_rounds(learner, T)


def play_pftal_rounds(learner, rounds):
    for _ in range(rounds):
        learner.update(learner.point() - 0.3)


def play_bandit(learner):
    O.run_convex(learner, linear_losses(3, T, rng=0), comparator=None)


def play_fw(learner):
    O.run(learner, [Modular([0.1, 0.2, 0.3, 0.4])] * T, comparator=None)


def play_ftrl(learner):
    for _ in range(T):
        learner.predict()
        learner.update([[0.5, -0.5, 0.2]])


# name -> (constructor(backend, rng, budget, noise, extra), player, noises)
LEARNERS = {
    "PFTAL": (lambda be, rng, b, noise, kw: O.PFTAL(
        3, T, H=1.0, epsilon=1.0, lipschitz=1.0, noise=noise, backend=be, rng=rng, budget=b,
        **kw), play_pftal),
    "SubmodPFTAL": (lambda be, rng, b, noise, kw: O.SubmodPFTAL(
        3, T, M=1.0, epsilon=1.0, noise=noise, backend=be, rng=rng, budget=b, **kw),
        play_submod),
    "BanditSubmodPFTAL": (lambda be, rng, b, noise, kw: O.BanditSubmodPFTAL(
        3, T, M=1.0, epsilon=1.0, gamma=0.5, noise=noise, backend=be, rng=rng, budget=b, **kw),
        play_submod),
    "PrivateFTRL": (lambda be, rng, b, noise, kw: O.PrivateFTRL(
        1, T, n=3, epsilon=1.0, noise=noise, backend=be, rng=rng, budget=b, **kw), play_ftrl),
    "DPMetaFrankWolfe": (lambda be, rng, b, noise, kw: O.DPMetaFrankWolfe(
        4, T, 2, epsilon=1.0, K=2, noise=noise, backend=be, rng=rng, budget=b, **kw), play_fw),
    "PrivateBandit": (lambda be, rng, b, noise, kw: O.PrivateBandit(
        Simplex(3), T, epsilon=1.0, mode="extend", noise=noise, backend=be, rng=rng, budget=b,
        **kw), play_bandit),
}
NOISES = {"laplace": {}, "gaussian": {"delta": 1e-6}}


def backends():
    out = [pytest.param("secure", id="secure"),
           pytest.param(lambda: SecureBackend(random_source=random.Random(3)), id="instance")]
    out.append(pytest.param("opendp", id="opendp", marks=pytest.mark.skipif(
        not HAVE_OPENDP, reason="OpenDP (the [secure] extra) absent")))
    return out


def charged(name, backend, noise, monkeypatch=None):
    """The (epsilon, delta) of the events charged by one run, the learner, and the engines of
    the node noise its counters drew."""
    drawn = set()
    if monkeypatch is not None:
        release = TreeAggregator._release

        def spy(self, level, index, exact):
            drawn.add(self._backend.engine if self._node is None else self._node.engine)
            return release(self, level, index, exact)

        monkeypatch.setattr(TreeAggregator, "_release", spy)
    make, play = LEARNERS[name]
    budget = Budget(10.0, 1e-3)
    be = backend() if callable(backend) else backend
    learner = make(be, 0 if be is None else None, budget, noise, NOISES[noise])
    play(learner)
    learner.notes = [e.note for e in budget.events]
    learner.drawn = drawn
    return [(e.epsilon, e.delta) for e in budget.events], learner


@pytest.mark.parametrize("backend", backends())
@pytest.mark.parametrize("noise", list(NOISES))
@pytest.mark.parametrize("name", list(LEARNERS))
def test_secure_learners_charge_what_numpy_charges_and_name_their_engine(name, noise, backend,
                                                                         monkeypatch):
    ref, _ = charged(name, None, noise)
    got, learner = charged(name, backend, noise, monkeypatch)
    assert got == ref and got  # the same events, charged once, at construction
    engine = learner.privacy.engine
    # the counters drew on that engine, and the charged events say so
    assert learner.drawn == {engine}
    assert all(f"@{engine}" in note for note in learner.notes)
    if backend == "opendp":
        assert engine.startswith("opendp-")
    elif backend == "secure":
        assert engine.startswith("opendp-" if HAVE_OPENDP else "python-dpsubmod-")
    else:
        assert engine.startswith("python-dpsubmod-")
    assert learner.privacy.backend == ("opendp" if backend == "opendp" else "secure")


def without_opendp(monkeypatch):
    def missing():
        raise ImportError("No module named 'opendp'")

    monkeypatch.setattr(opendp_engine, "_import_opendp", missing)
    opendp_engine.clear_cache()


@pytest.mark.parametrize("name", list(LEARNERS))
def test_backend_opendp_without_opendp_gives_the_install_command(name, monkeypatch):
    without_opendp(monkeypatch)
    make, _ = LEARNERS[name]
    budget = Budget(10.0, 1e-3)
    with pytest.raises(MissingDependencyError, match=r'pip install "dpsubmod\[secure\]"'):
        make("opendp", None, budget, "laplace", {})
    assert budget.spent == (0.0, 0.0)
    # "secure" falls back to the exact pure-Python engine and says so
    _, learner = charged(name, "secure", "laplace")
    assert learner.privacy.engine.startswith("python-dpsubmod-")


@pytest.mark.parametrize("name", list(LEARNERS))
@pytest.mark.parametrize("bad, exc", [("gpu", ValidationError), (3, ParameterTypeError)])
def test_unknown_backends_are_refused_by_name(name, bad, exc):
    make, _ = LEARNERS[name]
    budget = Budget(10.0, 1e-3)
    with pytest.raises(exc, match="'backend'"):
        make(bad, None, budget, "laplace", {})
    assert budget.spent == (0.0, 0.0)


@pytest.mark.parametrize("name", ["PFTAL", "SubmodPFTAL", "BanditSubmodPFTAL",
                                  "PrivateBandit"])
def test_l2_laplace_noise_on_a_grid_is_refused_naming_noise(name):
    make, _ = LEARNERS[name]
    with pytest.raises(ValidationError, match="noise='laplace'"):
        make("secure", None, None, "l2laplace", {})


def test_pftal_meta_frank_wolfe_refuses_l2_laplace_on_a_grid_by_name():
    with pytest.raises(ValidationError, match="noise='laplace'"):
        O.PFTALMetaFrankWolfe(4, T, 2, epsilon=1.0, backend="secure")
    with pytest.raises(ValidationError, match="'noise'.*DPMetaFrankWolfe"):
        O.PFTALMetaFrankWolfe(4, T, 2, epsilon=1.0, noise="gaussian")
    O.PFTALMetaFrankWolfe(4, T, 2, epsilon=1.0, backend="numpy")


@pytest.mark.parametrize("backend", ["secure", "pure-python"]
                         + (["opendp"] if HAVE_OPENDP else []))
def test_pftal_meta_frank_wolfe_on_a_grid_charges_what_numpy_charges(backend):
    be = SecureBackend(engine="python") if backend == "pure-python" else backend
    charged = {}
    for name, b in (("numpy", "numpy"), (backend, be)):
        budget = Budget(5.0)
        # a seed reproduces numpy runs only (with a secure backend it would be a SeedWarning)
        learner = O.PFTALMetaFrankWolfe(4, T, 2, epsilon=1.2, K=2, noise="laplace", backend=b,
                                        rng=3 if name == "numpy" else None, budget=budget)
        play_fw(learner)
        charged[name] = budget.spent
        assert all(np.all(np.isfinite(c.point())) for c in learner._copies)
    assert charged[backend] == charged["numpy"] == pytest.approx((1.2, 0.0))


def test_pftal_meta_frank_wolfe_laplace_copies_are_calibrated_to_the_l1_sensitivity():
    # The clipped multilinear gradients of f = 0 and of f = |S| (singletons at the bound 1)
    # are 0 and 1 in every coordinate: their l1 distance n is attained, so the copies' trees
    # must be calibrated to n; the l2 value sqrt(n) (right for l2-Laplace) would be too small.
    n, K = 4, 2
    learner = O.PFTALMetaFrankWolfe(n, T, 2, epsilon=1.0, K=K, noise="laplace", rng=0)
    learner.reset()
    worst = float(np.abs(np.ones(n) - np.zeros(n)).sum())
    for oco in learner._copies:
        assert oco.noise == "laplace"
        assert oco.calibrated_sensitivity >= worst
        assert oco.epsilon == pytest.approx(1.0 / K)
    assert np.sqrt(n) < worst  # the l2 calibration, as a control, is caught
    # Its stated bound pays for the larger noise.
    l2 = O.PFTALMetaFrankWolfe(n, 10**6, 2, epsilon=1.0, K=K, H=0.01).guarantee.bound
    l1 = O.PFTALMetaFrankWolfe(n, 10**6, 2, epsilon=1.0, K=K, H=0.01,
                               noise="laplace").guarantee.bound
    assert l1 > l2


def test_a_secure_learner_and_its_clone_release_finite_points():
    learner = O.SubmodPFTAL(3, T, M=1.0, epsilon=1.0, noise="laplace", backend="secure")
    for lr in (learner, learner.clone()):
        play_submod(lr)
        assert np.all(np.isfinite(lr.iterate))
        assert lr.backend == "secure"


# -- Hedge and the experts learners -------------------------------------------------------------
@pytest.mark.parametrize("backend", backends())
def test_hedge_draws_on_every_secure_backend_from_its_exact_law(backend):
    be = backend() if callable(backend) else backend
    h = Hedge(3, eta=1.0, max_draws=400, backend=be)
    h.update([1.0, 0.0, 0.5])
    p = h.probabilities()[0]
    m = 300
    counts = np.bincount([int(h.sample()[0]) for _ in range(m)], minlength=3)
    # two-sided, six standard deviations per cell: false-alarm rate below 1e-8
    assert np.all(np.abs(counts - m * p) <= 6 * np.sqrt(m * p * (1 - p)))
    assert h.privacy.engine == (be.engine if isinstance(be, SecureBackend) else
                                SecureBackend().engine)


def test_hedge_with_a_numpy_backend_instance_replays_its_seed():
    from dpsubmod.privacy import NumpyBackend

    def draws(**kw):
        h = Hedge(4, eta=0.5, copies=2, **kw)
        h.update(np.full((2, 4), 0.5) + np.arange(4) * 0.1)
        return [h.sample().tolist() for _ in range(5)]

    assert draws(backend=NumpyBackend(11)) == draws(backend="numpy", rng=11)


def test_experts_learner_accepts_opendp_and_instances():
    for be in (SecureBackend(random_source=random.Random(1)),
               *(("opendp",) if HAVE_OPENDP else ())):
        budget = Budget(10.0, 1e-3)
        lr = O.FIDP(4, 6, 2, epsilon=1.0, delta=1e-4, backend=be, budget=budget)
        O.run(lr, [Modular([0.1, 0.2, 0.3, 0.4])] * 6, comparator=None)
        ref = O.FIDP(4, 6, 2, epsilon=1.0, delta=1e-4)
        assert lr.privacy.epsilon == pytest.approx(ref.privacy.epsilon)
        assert budget.spent[0] == pytest.approx(ref.privacy.epsilon)


@pytest.mark.parametrize("make", [lambda be: Hedge(3, eta=1.0, backend=be),
                                  lambda be: O.FIDP(4, 6, 2, epsilon=1.0, delta=1e-4,
                                                    backend=be)])
def test_hedge_and_experts_refuse_bad_backends_by_name(make, monkeypatch):
    for bad, exc in (("gpu", ValidationError), (3, ParameterTypeError)):
        with pytest.raises(exc, match="'backend'"):
            make(bad)
    without_opendp(monkeypatch)
    with pytest.raises(MissingDependencyError, match=r'pip install "dpsubmod\[secure\]"'):
        make("opendp")


def test_the_report_names_the_engine_that_draws_beyond_opendps_range(monkeypatch):
    """At epsilon 1e-11 the node-noise scale is beyond 2^55 grid units, where OpenDP's map is
    not evaluated: the counter draws with the pure-Python engine, and the report says so."""
    drawn = set()
    release = TreeAggregator._release

    def spy(self, level, index, exact):
        drawn.add(self._node.engine)
        return release(self, level, index, exact)

    monkeypatch.setattr(TreeAggregator, "_release", spy)
    learner = O.PFTAL(2, 4, H=1.0, epsilon=1e-11, lipschitz=1.0, noise="laplace",
                      backend="secure")
    play_pftal_rounds(learner, 4)
    assert drawn == {learner.privacy.engine}
    assert learner.privacy.engine.startswith("python-dpsubmod-")
