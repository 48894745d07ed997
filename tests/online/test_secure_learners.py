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
from dpsubmod.online.convex import linear_losses
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
    for _ in range(T):
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


def test_pftal_meta_frank_wolfe_refuses_a_grid_backend_by_name():
    with pytest.raises(ValidationError, match="'backend'.*DPMetaFrankWolfe"):
        O.PFTALMetaFrankWolfe(4, T, 2, epsilon=1.0, backend="secure")
    O.PFTALMetaFrankWolfe(4, T, 2, epsilon=1.0, backend="numpy")


def test_a_secure_learner_and_its_clone_release_finite_points():
    learner = O.SubmodPFTAL(3, T, M=1.0, epsilon=1.0, noise="laplace", backend="secure")
    for lr in (learner, learner.clone()):
        play_submod(lr)
        assert np.all(np.isfinite(lr.iterate))
        assert lr.backend == "secure"
