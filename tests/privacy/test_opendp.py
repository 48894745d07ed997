"""The secure backend on OpenDP: engine selection and its errors, the map-versus-charge check
(with mis-calibrated measurements that it refuses), the OpenDP draws against the exact laws and
against the pure-Python engine, and the exponential mechanism's privacy on a worst-case pair.

Goodness-of-fit tests are chi-square tests at false-alarm rate ALPHA = 1e-6; each also shows power
against a wrong parameter. OpenDP draws from its own CSPRNG and cannot be seeded; the pure-Python
engine runs on a seeded ``random.Random``. Tests that need OpenDP skip cleanly without it.
"""

from __future__ import annotations

import math
import random
import sys
import types
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

import dpsubmod.privacy as M
from dpsubmod.errors import MissingDependencyError, PrivacyMapError, ValidationError
from dpsubmod.privacy import Budget, Ledger, TreeAggregator, audit, opendp_engine
from dpsubmod.privacy import backends as B
from dpsubmod.privacy.exact import grid_units
from dpsubmod.privacy.plan import PrivacyPlan, backend_engine, backend_name
from oracles import chi_square_pvalue

ALPHA = 1e-6  # false-alarm rate of every statistical test below

try:
    import opendp  # noqa: F401

    HAVE_OPENDP = True
except ImportError:
    HAVE_OPENDP = False

needs_opendp = pytest.mark.skipif(not HAVE_OPENDP, reason="OpenDP (the [secure] extra) absent")


@pytest.fixture(autouse=True)
def fresh_engine():
    """Each test loads OpenDP afresh (and leaves no patched engine behind)."""
    opendp_engine.clear_cache()
    yield
    opendp_engine.clear_cache()


def opendp_backend(g=None):
    return B.SecureBackend(g, engine="opendp")


def python_backend(seed, g=None):
    return B.SecureBackend(g, random_source=random.Random(seed))


def dlap_pmf(z, t):
    a = math.exp(-1.0 / t)
    return (1 - a) / (1 + a) * np.exp(-np.abs(z) / t)


def dgauss_pmf(z, sigma2):
    support = np.arange(-4000, 4001)
    norm = np.exp(-support.astype(float) ** 2 / (2 * sigma2)).sum()
    return np.exp(-np.asarray(z, dtype=float) ** 2 / (2 * sigma2)) / norm


def pooled(draws, lo, hi, pmf):
    """Counts on lo..hi (tails pooled into the end cells) and the matching probabilities."""
    counts = np.bincount(np.clip(np.asarray(draws), lo, hi) - lo, minlength=hi - lo + 1)
    z = np.arange(lo, hi + 1)
    p = pmf(z)
    p[0] += max(0.0, 1.0 - p.sum()) / 2
    p[-1] += max(0.0, 1.0 - p.sum())
    return counts, p


def two_sample_pvalue(a, b, cells):
    """Chi-square test that two samples of integers (clipped to ``cells``) share one law."""
    lo, hi = cells
    ca = np.bincount(np.clip(a, lo, hi) - lo, minlength=hi - lo + 1)
    cb = np.bincount(np.clip(b, lo, hi) - lo, minlength=hi - lo + 1)
    keep = (ca + cb) >= 10
    table = np.vstack([ca[keep], cb[keep]])
    return stats.chi2_contingency(table)[1]


class InvokeSpy:
    """Counts OpenDP draws (every OpenDP noise goes through ``OpenDPEngine.invoke``)."""

    def __init__(self, monkeypatch):
        self.calls = []
        real = opendp_engine.OpenDPEngine.invoke

        def spy(engine, measurement, units):
            self.calls.append(np.array(units))
            return real(engine, measurement, units)

        monkeypatch.setattr(opendp_engine.OpenDPEngine, "invoke", spy)


Q = np.array([0.0, 0.3, 1.1, 2.0, -np.inf, 1.6])

SELECTIONS = {
    "exponential_mechanism": lambda be, budget=None: M.exponential_mechanism(
        Q, epsilon=1.5, sensitivity=0.5, backend=be, budget=budget),
    "report_noisy_max": lambda be, budget=None: M.report_noisy_max(
        Q, epsilon=1.5, sensitivity=0.5, backend=be, budget=budget),
    "permute_and_flip": lambda be, budget=None: M.permute_and_flip(
        Q, epsilon=1.5, sensitivity=0.5, backend=be, budget=budget),
}
ALL = {
    **SELECTIONS,
    "laplace": lambda be, budget=None: M.laplace([0.3, 1.0], epsilon=1.0, sensitivity=1.0,
                                                 backend=be, budget=budget),
    "gaussian": lambda be, budget=None: M.gaussian([0.3, 1.0], rho=0.5, sensitivity=1.0,
                                                   backend=be, budget=budget),
    "gaussian_eps_delta": lambda be, budget=None: M.gaussian(
        [0.3, 1.0], epsilon=1.0, delta=1e-6, sensitivity=1.0, backend=be, budget=budget),
    "exponential_range": lambda be, budget=None: M.exponential_mechanism(
        Q, epsilon=1.0, range_sensitivity=0.7, backend=be, budget=budget),
    "exponential_monotone": lambda be, budget=None: M.exponential_mechanism(
        Q, epsilon=1.0, sensitivity=0.5, monotonic=True, backend=be, budget=budget),
    "tree": lambda be, budget=None: TreeAggregator(
        4, 2, sensitivity=1.0, epsilon=1.0, backend=be, budget=budget).update([0.5, 0.25]),
    "tree_gaussian": lambda be, budget=None: TreeAggregator(
        4, 2, noise="gaussian", sensitivity=1.0, epsilon=1.0, delta=1e-6, backend=be,
        budget=budget).update([0.5, 0.25]),
}


# =============================================================================================
# engine selection and its errors (no OpenDP needed: the import is simulated)
# =============================================================================================
def without_opendp(monkeypatch):
    def missing():
        raise ImportError("No module named 'opendp'")

    monkeypatch.setattr(opendp_engine, "_import_opendp", missing)
    opendp_engine.clear_cache()


def test_backend_opendp_without_opendp_gives_the_install_command(monkeypatch):
    without_opendp(monkeypatch)
    with pytest.raises(MissingDependencyError, match=r'pip install "dpsubmod\[secure\]"'):
        B.resolve_backend("opendp")
    with pytest.raises(MissingDependencyError, match="not installed"):
        B.SecureBackend(engine="opendp")
    budget = Budget(5.0)
    for name, call in ALL.items():
        with pytest.raises(MissingDependencyError):
            call("opendp", budget)
        assert budget.spent == (0.0, 0.0), name  # refused before anything was charged
    assert isinstance(MissingDependencyError("x"), ImportError)


def test_backend_secure_without_opendp_falls_back_to_the_exact_python_engine(monkeypatch):
    without_opendp(monkeypatch)
    be = B.resolve_backend("secure")
    assert be.engine.startswith("python-dpsubmod-") and be.secure
    led = Ledger()
    M.exponential_mechanism(Q, epsilon=1.0, sensitivity=0.5, backend="secure", budget=led)
    assert "@python-dpsubmod-" in led.events[0].note
    assert backend_engine("secure").startswith("python-dpsubmod-")
    rep = PrivacyPlan("m", tuple(led.events), backend="secure").report()
    assert rep.engine.startswith("python-dpsubmod-") and "engine python-dpsubmod-" in str(rep)


def fake_opendp(monkeypatch, version, drop=()):
    """A stand-in OpenDP package whose submodules lack the constructors in ``drop``."""
    pkg = types.ModuleType("fake_opendp")
    pkg.__version__ = version
    for mod, attr in opendp_engine._NEEDED:
        sub = sys.modules.get(f"fake_opendp.{mod}") or types.ModuleType(f"fake_opendp.{mod}")
        if attr not in drop:
            setattr(sub, attr, lambda *a, **k: None)
        monkeypatch.setitem(sys.modules, f"fake_opendp.{mod}", sub)
    monkeypatch.setattr(opendp_engine, "_import_opendp", lambda: pkg)
    monkeypatch.setattr(opendp_engine, "_version", lambda mod: version)
    opendp_engine.clear_cache()


@pytest.mark.parametrize("backend", ["secure", "opendp"])
def test_an_opendp_without_a_needed_constructor_is_refused(monkeypatch, backend):
    fake_opendp(monkeypatch, "0.16.0", drop=("make_noisy_max",))
    budget = Budget(5.0)
    with pytest.raises(MissingDependencyError, match=r"opendp\.measurements\.make_noisy_max"):
        M.exponential_mechanism(Q, epsilon=1.0, sensitivity=0.5, backend=backend, budget=budget)
    assert budget.spent == (0.0, 0.0)


def test_an_opendp_too_old_is_refused(monkeypatch):
    fake_opendp(monkeypatch, "0.11.1")
    with pytest.raises(MissingDependencyError, match=r">= 0\.16.*engine='python'"):
        B.resolve_backend("secure")
    assert B.SecureBackend(engine="python").engine.startswith("python-dpsubmod-")


def test_a_constructor_that_refuses_its_arguments_is_caught_before_charging(monkeypatch):
    fake_opendp(monkeypatch, "0.16.0")

    def refuse(*args, **kwargs):
        raise TypeError("unexpected keyword argument 'scale'")

    monkeypatch.setattr(sys.modules["fake_opendp.measurements"], "make_noisy_max", refuse)
    budget = Budget(5.0)
    with pytest.raises(MissingDependencyError, match="refused to build"):
        M.exponential_mechanism(Q, epsilon=1.0, sensitivity=0.5, backend="opendp", budget=budget)
    assert budget.spent == (0.0, 0.0)


def test_engine_argument_validation():
    with pytest.raises(ValidationError, match="engine"):
        B.SecureBackend(engine="rust")
    with pytest.raises(ValidationError, match="random_source"):
        B.SecureBackend(engine="opendp", random_source=random.Random(0))
    # a seeded test source always runs the pure-Python engine
    be = python_backend(0)
    assert be.engine.startswith("python-dpsubmod-") and not be.secure
    assert "secure-algorithm/test-source" in be.label(1.0)


# =============================================================================================
# with OpenDP
# =============================================================================================
@needs_opendp
def test_secure_uses_opendp_and_says_so_with_its_version():
    import importlib.metadata

    version = importlib.metadata.version("opendp")
    be = B.resolve_backend("secure")
    assert be.engine == f"opendp-{version}" == B.resolve_backend("opendp").engine
    assert repr(be).startswith("SecureBackend(granularity=auto, engine='opendp-")
    for name, call in ALL.items():
        led = Ledger()
        call("secure", led)
        assert f"@opendp-{version}" in led.events[0].note, name
        assert f"@opendp-{version}" in led.report().backend, name
    rep = PrivacyPlan("m", (), backend="opendp").report()
    assert rep.engine == f"opendp-{version}" and rep.to_dict()["engine"] == rep.engine
    plan = PrivacyPlan("m", tuple(led.events), backend=be)
    assert plan.backend == "secure" and f"(engine opendp-{version})" in str(plan.report())


@needs_opendp
def test_backend_instances_are_accepted_wherever_a_backend_is():
    be = B.SecureBackend(2.0 ** -4)
    assert B.resolve_backend(be) is be
    for name, call in ALL.items():
        led = Ledger()
        call(be, led)
        assert "granularity=2^-4" in led.events[0].note and "@opendp-" in led.events[0].note, name
    py = B.SecureBackend(2.0 ** -4, engine="python")
    led = Ledger()
    SELECTIONS["exponential_mechanism"](py, led)
    assert "@python-dpsubmod-" in led.events[0].note
    # a plan built from the instance's reported name states the instance's engine
    for backend in (py, backend_name(py)):
        rep = PrivacyPlan("m", tuple(led.events), backend=backend).report()
        assert rep.backend == "secure" and type(rep.backend) is str
        assert rep.engine.startswith("python-dpsubmod-")


@needs_opendp
@pytest.mark.parametrize("name", list(ALL))
def test_every_opendp_map_is_checked_and_matches_the_charge(monkeypatch, name):
    """The map is evaluated before the first draw, is at most the charge, and is the charge up
    to the scale margin (so the check has no slack a calibration error could hide in)."""
    seen = []
    real = opendp_engine.check_map

    def spy(measurement, d_in, charged, **kw):
        got = real(measurement, d_in, charged, **kw)
        seen.append((got * kw.get("uses", 1), charged))
        return got

    monkeypatch.setattr(opendp_engine, "check_map", spy)
    draws = InvokeSpy(monkeypatch)
    ALL[name](B.SecureBackend(), Ledger())
    assert seen, "no map was checked"
    for got, charged in seen:
        assert got <= charged
        assert got >= charged * (1 - 1e-9)
    assert len(draws.calls) >= 1


@needs_opendp
def test_map_check_boundary():
    """OpenDP's exponential-mechanism map at scale s and range 2 d is (2d/s)^2/8; the check
    accepts that value and refuses anything below it."""
    eng = opendp_engine.load(required=True)
    meas = eng.measurement("exponential", 4.0)
    exact = float(meas.map(1))
    assert exact == pytest.approx((2 / 4) ** 2 / 8, rel=1e-12)
    assert opendp_engine.check_map(meas, 1, exact) == exact
    with pytest.raises(PrivacyMapError, match="refused"):
        opendp_engine.check_map(meas, 1, exact * (1 - 1e-9))
    with pytest.raises(PrivacyMapError, match="2 x"):
        opendp_engine.check_map(meas, 1, 1.5 * exact, uses=2)
    with pytest.raises(PrivacyMapError, match="could not evaluate"):
        opendp_engine.check_map(meas, "not a distance", 1.0)


@needs_opendp
@pytest.mark.parametrize("name", list(ALL))
def test_a_miscalibrated_measurement_is_refused_before_any_noise(monkeypatch, name):
    """Half the noise scale doubles the map: refused before charging and before any draw."""
    monkeypatch.setattr(opendp_engine, "SCALE_MARGIN", 0.5)
    draws = InvokeSpy(monkeypatch)
    budget = Budget(50.0, 1e-3, "zcdp")
    with pytest.raises(PrivacyMapError, match="more than"):
        ALL[name](B.SecureBackend(), budget)
    assert draws.calls == [] and len(budget) == 0


@needs_opendp
def test_opendp_receives_the_grid_units_of_the_python_engine(monkeypatch):
    draws = InvokeSpy(monkeypatch)
    g = 2.0 ** -3
    q = np.array([0.3, -1.06, 7.5, 2.0 ** -40, -np.inf, 1e6])
    M.exponential_mechanism(q, epsilon=1.0, sensitivity=1.0, backend=opendp_backend(g))
    assert draws.calls[0].tolist() == grid_units(q[np.isfinite(q)], Fraction(g))
    # values beyond the 64-bit grid range go to the pure-Python engine, which says so
    led = Ledger()
    M.exponential_mechanism([0.0, 1e300], epsilon=1.0, sensitivity=1.0,
                            backend=B.SecureBackend(), budget=led)
    assert "@python-dpsubmod-" in led.events[0].note and len(draws.calls) == 1


# -- the OpenDP draws against the exact laws and against the pure-Python engine ---------------
@needs_opendp
def test_opendp_laplace_matches_the_discrete_laplace_and_the_python_engine():
    g = 2.0 ** -3
    out = opendp_backend(g).add_laplace(np.full(12_000, 0.3), 0.5, sensitivity=1.0)
    units = out / g
    assert np.all(units == np.round(units))  # every release is a multiple of g
    noise = np.round(units).astype(int) - 2  # 0.3 rounds to 2 grid units
    t = 0.5 / g
    counts, p = pooled(noise, -40, 40, lambda z: dlap_pmf(z, t))
    assert chi_square_pvalue(counts, p) > ALPHA
    _, wrong = pooled(noise, -40, 40, lambda z: dlap_pmf(z, 1.3 * t))
    assert chi_square_pvalue(counts, wrong) < ALPHA  # power against a 30% wrong scale
    ref = python_backend(11, g).add_laplace(np.full(12_000, 0.3), 0.5, sensitivity=1.0)
    ref_noise = np.round(ref / g).astype(int) - 2
    assert two_sample_pvalue(noise, ref_noise, (-40, 40)) > ALPHA


@needs_opendp
def test_opendp_gaussian_matches_the_discrete_gaussian_and_the_python_engine():
    g = 2.0 ** -2
    out = opendp_backend(g).add_gaussian(np.full(8_000, -1.1), 1.5, sensitivity=1.0)
    noise = np.round(out / g).astype(int) + 4  # -1.1 rounds to -4 grid units
    s2 = (1.5 / g) ** 2
    counts, p = pooled(noise, -45, 45, lambda z: dgauss_pmf(z, s2))
    assert chi_square_pvalue(counts, p) > ALPHA
    _, wrong = pooled(noise, -45, 45, lambda z: dgauss_pmf(z, 1.69 * s2))
    assert chi_square_pvalue(counts, wrong) < ALPHA
    ref = python_backend(12, g).add_gaussian(np.full(8_000, -1.1), 1.5, sensitivity=1.0)
    assert two_sample_pvalue(noise, np.round(ref / g).astype(int) + 4, (-45, 45)) > ALPHA


def rnm_probabilities(n, t):
    """Exact law of argmax_i n_i + Z_i, Z discrete Laplace(t), uniform tie-break, integers n."""
    n = np.asarray(n)
    zs = np.arange(-60 * int(t) - 60, 60 * int(t) + 61)
    pz = dlap_pmf(zs, t)
    below = np.concatenate(([0.0], np.cumsum(pz)[:-1]))  # P[Z < zs[i]]
    nodes, w = np.polynomial.legendre.leggauss(len(n) + 1)
    u, w = (nodes + 1) / 2, w / 2
    out = np.zeros(len(n))
    for i in range(len(n)):
        for k, z in enumerate(zs):
            prod = np.ones_like(u)
            for j in range(len(n)):
                if j != i:
                    idx = n[i] + z - n[j] - zs[0]
                    a = below[idx] if 0 <= idx < zs.size else float(idx >= zs.size)
                    b = pz[idx] if 0 <= idx < zs.size else 0.0
                    prod = prod * (a + b * u)
            out[i] += pz[k] * float((w * prod).sum())
    return out


@needs_opendp
@pytest.mark.parametrize("name", list(SELECTIONS))
def test_opendp_selections_match_their_exact_laws_and_the_python_engine(name):
    g = 2.0 ** -2
    be = opendp_backend(g)
    call = SELECTIONS[name]
    counts = np.bincount([call(be) for _ in range(6000)], minlength=Q.size)
    assert counts[4] == 0
    if name == "exponential_mechanism":
        p = M.exponential_mechanism_probabilities(Q, epsilon=1.5, sensitivity=0.5, backend=be)
        wrong = M.exponential_mechanism_probabilities(Q, epsilon=1.2, sensitivity=0.5, backend=be)
    elif name == "permute_and_flip":
        p = M.permute_and_flip_probabilities(Q, epsilon=1.5, sensitivity=0.5, backend=be)
        # the exponential mechanism at the same epsilon is a different law
        wrong = M.exponential_mechanism_probabilities(Q, epsilon=1.5, sensitivity=0.5, backend=be)
    else:
        live = np.flatnonzero(np.isfinite(Q))
        n = np.round(Q[live] / g).astype(int)
        t = M.report_noisy_max_scale(1.5, be.effective_sensitivity(0.5)) / g
        p, wrong = np.zeros(Q.size), np.zeros(Q.size)
        p[live], wrong[live] = rnm_probabilities(n, t), rnm_probabilities(n, 0.6 * t)
    assert chi_square_pvalue(counts, p) > ALPHA
    assert chi_square_pvalue(counts, wrong) < ALPHA
    py = python_backend(13, g)
    ref = np.array([call(py) for _ in range(6000)])
    got = np.repeat(np.arange(Q.size), counts)
    assert two_sample_pvalue(got, ref, (0, Q.size - 1)) > ALPHA


@needs_opendp
def test_opendp_tree_node_noise_is_the_discrete_laplace():
    g = 2.0 ** -2
    be = opendp_backend(g)
    noise = []
    for _ in range(5000):  # one node per stream of one item: its noise is the release's
        agg = TreeAggregator(1, 1, sensitivity=0.5, epsilon=1.0, backend=be)
        agg.update([0.75])
        noise.append(round(agg.prefix()[0] / g) - 3)  # 0.75 is 3 grid units
    assert "@opendp-" in agg.event.note
    t = agg.scale / g
    assert t == 2.0  # the l1 sensitivity 0.5 is 2 grid units, at epsilon 1
    counts, p = pooled(noise, -30, 30, lambda z: dlap_pmf(z, t))
    assert chi_square_pvalue(counts, p) > ALPHA
    _, wrong = pooled(noise, -30, 30, lambda z: dlap_pmf(z, 1.3 * t))
    assert chi_square_pvalue(counts, wrong) < ALPHA


# -- the exponential mechanism on OpenDP is epsilon-DP on a worst-case pair --------------------
def em_law(units, scale):
    z = -(np.max(units) - np.asarray(units, dtype=float)) / scale
    return np.exp(z - np.logaddexp.reduce(z))


@needs_opendp
def test_opendp_exponential_mechanism_is_epsilon_dp_on_the_worst_case_pair():
    """Neighbours q = (0, ..., 0) and q' = (D, -D, ..., -D): every score moves by D, the
    range of the differences is 2 D, and the log ratio of candidate 0 tends to epsilon as the
    number of candidates grows. Exact check on the law OpenDP draws (its scale, on grid units;
    the law itself is checked by chi-square above), then a mis-calibrated half-scale
    measurement, which both the exact check and a Clopper-Pearson audit catch."""
    eps, sens, g = 1.0, 1.0, 2.0 ** -4
    d_units = int(sens / g)
    scale = 2 * d_units / eps * opendp_engine.SCALE_MARGIN  # what the engine hands OpenDP
    eng = opendp_engine.load(required=True)
    # the law OpenDP draws on q' (m = 10) is the softmax at this scale (chi-square, ALPHA)
    good = eng.checked("exponential", 2 * d_units / eps, d_units, eps * eps / 8)
    q10 = np.r_[d_units, -d_units * np.ones(9, dtype=int)]
    counts = np.bincount([eng.index(good, q10) for _ in range(6000)], minlength=10)
    assert chi_square_pvalue(counts, em_law(q10, scale)) > ALPHA
    assert chi_square_pvalue(counts, em_law(q10, scale / 2)) < ALPHA
    worst = 0.0
    for m in (2, 10, 1000):
        a = em_law(np.zeros(m, dtype=int), scale)
        b = em_law(np.r_[d_units, -d_units * np.ones(m - 1, dtype=int)], scale)
        worst = max(worst, float(np.max(np.abs(np.log(a) - np.log(b)))))
        half = em_law(np.r_[d_units, -d_units * np.ones(m - 1, dtype=int)], scale / 2)
        a_half = em_law(np.zeros(m, dtype=int), scale / 2)
        assert np.max(np.abs(np.log(a_half) - np.log(half))) > eps  # the half scale leaks
    assert 0.99 * eps < worst <= eps

    # Statistical: OpenDP's own draws on the pair (m = 2), correct and half scale.
    q, q2 = np.zeros(2, dtype=np.int64), np.array([d_units, -d_units], dtype=np.int64)

    def algorithm(meas):
        return lambda data, rng: eng.index(meas, data)

    res = audit(algorithm(good), q, q2, 8000, eps, rng=0, event=lambda o: o == 1, alpha=ALPHA)
    assert not res.violation  # false alarm ALPHA
    bad = eng.measurement("exponential", scale / 2)  # never checked: built directly
    res = audit(algorithm(bad), q, q2, 8000, eps, rng=0, event=lambda o: o == 1, alpha=ALPHA)
    assert res.violation and res.epsilon_lower_bound > eps
    with pytest.raises(PrivacyMapError):
        opendp_engine.check_map(bad, d_units, eps * eps / 8)


@needs_opendp
@pytest.mark.parametrize("enabled_before", [False, True])
def test_contrib_is_switched_on_only_while_dpsubmod_builds(monkeypatch, enabled_before):
    import opendp.mod as mod

    monkeypatch.setattr(mod, "GLOBAL_FEATURES", set(mod.GLOBAL_FEATURES))  # restored after
    mod.disable_features("contrib")
    if enabled_before:
        mod.enable_features("contrib")
    seen = []
    build = opendp_engine.OpenDPEngine._build

    def spy(self, *args):
        seen.append("contrib" in mod.GLOBAL_FEATURES)
        return build(self, *args)

    monkeypatch.setattr(opendp_engine.OpenDPEngine, "_build", spy)
    led = Ledger()
    M.exponential_mechanism(Q, epsilon=1.0, sensitivity=0.5, backend="opendp", budget=led)
    M.laplace(np.zeros(3), epsilon=1.0, sensitivity=1.0, backend="opendp")
    assert seen and all(seen)  # on while building
    assert ("contrib" in mod.GLOBAL_FEATURES) is enabled_before  # the caller's setting
    if not enabled_before:  # control: OpenDP itself refuses the constructor outside dpsubmod
        import opendp.prelude as dp

        with pytest.raises(Exception, match="contrib"):
            dp.m.make_laplace(dp.vector_domain(dp.atom_domain(T="i64")),
                              dp.l1_distance(T="i64"), scale=1.0)


@needs_opendp
def test_contrib_is_restored_when_a_build_fails(monkeypatch):
    import opendp.mod as mod

    monkeypatch.setattr(mod, "GLOBAL_FEATURES", set(mod.GLOBAL_FEATURES))
    mod.disable_features("contrib")

    def refuse(self, *args):
        assert "contrib" in mod.GLOBAL_FEATURES
        raise TypeError("refused")

    monkeypatch.setattr(opendp_engine.OpenDPEngine, "_build", refuse)
    with pytest.raises(MissingDependencyError, match="refused to build"):
        M.exponential_mechanism(Q, epsilon=1.0, sensitivity=0.5, backend="opendp")
    assert "contrib" not in mod.GLOBAL_FEATURES
