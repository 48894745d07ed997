"""One meaning of ``composition="auto"``: :func:`~dpsubmod.privacy.composition.auto_composition`
decides it for every user in the package, offline and online (basic composition unless another
valid rule gains more than 1% in per-step epsilon)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
import sys
from pathlib import Path

import numpy as np
import pytest

import dpsubmod
from dpsubmod import maximize
from dpsubmod.constraints import UniformMatroid
from dpsubmod.functions import Coverage, FacilityLocation
from dpsubmod.functions.ksubmodular import KFacilityLocation
from dpsubmod.offline.continuous import _greedy_calibration as cgc
from dpsubmod.offline.continuous import continuous_greedy as cg
from dpsubmod.offline.discrete import private_greedy as pg
from dpsubmod.offline.ksubmodular import _exact as kse
from dpsubmod.offline.ksubmodular import methods as ks
from dpsubmod.online import (
    FIDP,
    BanditDP,
    DPMetaFrankWolfe,
    Hedge,
    NaiveBanditDP,
    PresampledBanditDP,
    PrivateEpochGreedy,
    PrivateFTRL,
)
from dpsubmod.online.oco import hedge_epsilon, tight_hedge_eta
from dpsubmod.privacy import composition as comp
from dpsubmod.privacy import split as spl
from dpsubmod.privacy.composition import AUTO_MIN_GAIN, auto_composition, compose, compose_epsilon
from dpsubmod.privacy.events import PrivacyEvent
from dpsubmod.privacy.ledger import Ledger
from dpsubmod.privacy.split import split_budget

SRC = Path(dpsubmod.__file__).parent


def facility() -> FacilityLocation:
    rng = np.random.default_rng(0)
    return FacilityLocation.from_records(rng.random((40, 2)), rng.random((12, 2)),
                                         similarity="gaussian", bandwidth=0.3)


def coverage() -> Coverage:
    rng = np.random.default_rng(1)
    return Coverage.from_records([np.flatnonzero(rng.random(6) < 0.4) for _ in range(30)], 6)


def kfacility() -> KFacilityLocation:
    return KFacilityLocation(np.random.default_rng(2).random((2, 5, 4)))


# ------------------------------------------------------------------------------------------------
# the rule


def test_the_chooser_keeps_basic_unless_another_rule_gains_over_one_percent():
    assert AUTO_MIN_GAIN == 1.01
    assert auto_composition({"basic": 1.0, "kov": 1.01, "zcdp": 1.005}) == "basic"
    assert auto_composition({"basic": 1.0, "kov": 1.0101, "advanced": 1.0102}) == "advanced"
    assert auto_composition({"basic": 1.0, "kov": 1.5, "advanced": 1.5}) == "kov"  # first
    assert auto_composition({"kov": 1.001, "zcdp": 1.0005}) == "kov"  # basic not valid


def test_fidp_with_three_rounds_now_states_pure_dp_like_private_greedy():
    """At epsilon 1 and delta 1e-6 optimal composition of 3 draws gains 0.0005% per step: both
    the offline and the online "auto" keep basic composition, pure DP."""
    kov = split_budget(1.0, 1e-6, 3, composition="kov", bounded_range=True).epsilon_step
    gain = kov / split_budget(1.0, 0.0, 3).epsilon_step
    assert 1.0 < gain < 1.0001  # the rule that used to be stated gains almost nothing
    online = FIDP(5, T=3, k=1, epsilon=1.0, delta=1e-6, rng=0).privacy
    assert (online.epsilon, online.delta, online.composition) == (1.0, 0.0, "basic")
    offline = maximize(facility(), 3, method="private_greedy", epsilon=1.0, delta=1e-6,
                       rng=0).privacy
    assert (offline.epsilon, offline.delta, offline.composition) == (1.0, 0.0, "basic")


def test_a_rule_gaining_over_one_percent_is_still_chosen_offline_and_online():
    # exponential-mechanism steps: bounded-range zCDP gains 40% at 10 steps
    steps, delta = 10, 1e-6
    split = split_budget(1.0, delta, steps, bounded_range=True)
    assert split.composition == "zcdp"
    assert split.epsilon_step * steps > 1.3
    online = FIDP(5, T=steps, k=1, epsilon=1.0, delta=delta, rng=0).privacy
    offline = maximize(facility(), steps, method="private_greedy", epsilon=1.0,
                       delta=delta, rng=0).privacy
    assert online.composition == offline.composition == "zcdp"
    assert online.delta == offline.delta == delta
    # pure steps: optimal (KOV) composition gains over 1%, for a ledger and for the Laplace
    # trees of K private FTRL oracles (those of DPMetaFrankWolfe) alike
    K = 20
    kov = split_budget(1.0, delta, K, composition="kov").epsilon_step
    assert kov > AUTO_MIN_GAIN * split_budget(1.0, 0.0, K).epsilon_step
    assert split_budget(1.0, delta, K).composition == "kov"
    led = Ledger([PrivacyEvent.pure("laplace", kov, count=K)]).report(delta=delta)
    assert led.composition == "kov" and led.epsilon <= 1.0
    trees = PrivateFTRL(2, 400, n=3, copies=K, epsilon=1.0, delta=delta, rng=0).privacy
    assert trees.composition == "kov" and trees.epsilon <= 1.0 and trees.delta == delta
    learner = DPMetaFrankWolfe(4, 400, 1, epsilon=1.0, delta=delta, K=K, rng=0)
    assert "by kov composition" in learner.privacy.events[0].note


def test_a_calibration_and_its_statement_agree():
    """``k`` steps of a split's epsilon are stated by the split's rule, within its total; only in
    a narrow band does a split that kept basic composition state by another rule (with less
    epsilon, as auto_composition says), never the converse."""
    band = []
    for br in (True, False):
        for delta in (1e-6, 1e-3):
            for k in (2, 3, 5, 9, 16):
                for total in np.geomspace(0.05, 20.0, 8):
                    s = split_budget(float(total), delta, k, bounded_range=br)
                    ev = PrivacyEvent.exponential(s.epsilon_step, count=k) if br else \
                        PrivacyEvent.pure("m", s.epsilon_step, count=k)
                    eps, dlt, rule = compose([ev], delta)
                    assert eps <= total
                    if rule != s.composition:
                        assert s.composition == "basic" and eps < total, (br, delta, k, total)
                        band.append(rule)
                    else:
                        assert dlt == s.delta
    assert len(band) <= 8  # a narrow band: at most 5% of the 160 cases


# ------------------------------------------------------------------------------------------------
# every user of "auto" asks the one chooser

#: How to call each user of ``composition="auto"`` in a tiny case, by qualified name. A new user
#: (a parameter defaulting to "auto", or a literal ``composition="auto"``) fails the test below
#: until it is listed here.
CASES = {
    "dpsubmod.privacy.composition.compose":
        lambda: compose([PrivacyEvent.pure("m", 0.1, count=10)], 1e-6),
    "dpsubmod.privacy.composition.compose_epsilon": lambda: compose_epsilon(0.1, 10, 1e-6),
    "dpsubmod.privacy.split.split_budget": lambda: split_budget(1.0, 1e-6, 10),
    "dpsubmod.privacy.ledger.Ledger.total":
        lambda: Ledger([PrivacyEvent.pure("m", 0.1, count=10)]).total(delta=1e-6),
    "dpsubmod.privacy.ledger.Ledger.report":
        lambda: Ledger([PrivacyEvent.pure("m", 0.1, count=10)]).report(delta=1e-6),
    "dpsubmod.online.oco.hedge_privacy.hedge_epsilon": lambda: hedge_epsilon(0.01, 100, 1e-6),
    "dpsubmod.online.oco.hedge_privacy.tight_hedge_eta": lambda: tight_hedge_eta(1.0, 1e-6, 100),
    "dpsubmod.offline.discrete.private_greedy.private_greedy":
        lambda: pg.private_greedy(facility(), 2, epsilon=1.0, delta=1e-6, rng=0),
    "dpsubmod.offline.discrete.private_greedy.private_stochastic_greedy":
        lambda: pg.private_stochastic_greedy(facility(), 2, epsilon=1.0, delta=1e-6, rng=0),
    "dpsubmod.offline.continuous.continuous_greedy.private_continuous_greedy":
        lambda: cg.private_continuous_greedy(coverage(), 2, epsilon=1.0, delta=1e-6, rng=0),
    "dpsubmod.offline.continuous.continuous_greedy.private_continuous_greedy_layers":
        lambda: cg.private_continuous_greedy_layers(coverage(), 2, epsilon=2.0, steps=2,
                                                    delta=1e-6, rng=0),
    "dpsubmod.offline.continuous._greedy_calibration.continuous_greedy_calibration":
        lambda: cgc.continuous_greedy_calibration(1.0, 1e-6, steps=3, rank=2,
                                                  gradient_sensitivity=1.0),
    "dpsubmod.offline.ksubmodular.methods.ks_private":
        lambda: ks.ks_private(kfacility(), 2, epsilon=1.0, delta=1e-6, sensitivity=0.1,
                              rng=0),
    "dpsubmod.offline.ksubmodular.methods.ks_private_sampled":
        lambda: ks.ks_private_sampled(kfacility(), 2, epsilon=1.0, delta=1e-6, sensitivity=0.1,
                                      rng=0),
    "dpsubmod.offline.ksubmodular._exact.ks_private_output_distribution":
        lambda: kse.ks_private_output_distribution(kfacility(), UniformMatroid(4, 2),
                                                   epsilon=1.0, delta=1e-6, sensitivity=0.1),
    "dpsubmod.online.maximization.fidp.FIDP":
        lambda: FIDP(5, 3, 1, epsilon=1.0, delta=1e-6, rng=0).privacy,
    "dpsubmod.online.maximization.bandit_experts.BanditDP":
        lambda: BanditDP(4, 50, 1, epsilon=1.0, delta=1e-6, rng=0).privacy,
    "dpsubmod.online.maximization.bandit_appendix.NaiveBanditDP":
        lambda: NaiveBanditDP(4, 50, 1, epsilon=1.0, delta=1e-6, rng=0).privacy,
    "dpsubmod.online.maximization.bandit_appendix.PresampledBanditDP":
        lambda: PresampledBanditDP(4, 50, 1, epsilon=1.0, delta=1e-6, rng=0).privacy,
    "dpsubmod.online.maximization.dp_meta_frank_wolfe.DPMetaFrankWolfe":
        lambda: DPMetaFrankWolfe(4, 50, 1, epsilon=1.0, delta=1e-6, rng=0).privacy,
    "dpsubmod.online.oco.ftrl.PrivateFTRL":
        lambda: PrivateFTRL(2, 20, n=3, copies=2, epsilon=1.0, delta=1e-6, rng=0).privacy,
    "dpsubmod.online.oco.hedge.Hedge":
        lambda: Hedge(3, eta=0.1, max_draws=10, delta=1e-6, rng=0).privacy,
    "dpsubmod.online.maximization.epoch_greedy":  # passes composition="auto" itself
        lambda: PrivateEpochGreedy(4, 20, 1, epsilon=1.0, delta=1e-6, rng=0).guarantee,
}

#: Users whose statement composes one event per inner call (each inner call chose its rule).
NESTED = {"dpsubmod.online.maximization.dp_meta_frank_wolfe.DPMetaFrankWolfe"}

#: Abstract bases: their users are their concrete subclasses, listed above.
ABSTRACT = {"dpsubmod.online.maximization.bandit_base._BanditExperts"}


def _auto_users() -> set[str]:
    """Every callable whose ``composition`` defaults to "auto", and every module passing a
    literal ``composition="auto"``."""
    found: set[str] = set()
    for info in pkgutil.walk_packages(dpsubmod.__path__, "dpsubmod."):
        if info.name.endswith("__main__"):
            continue
        mod = importlib.import_module(info.name)
        for name, obj in vars(mod).items():
            if getattr(obj, "__module__", None) != mod.__name__:
                continue
            members = [(name, obj)]
            if inspect.isclass(obj):
                members += [(f"{name}.{k}", v) for k, v in vars(obj).items()
                            if inspect.isfunction(v) and k != "__init__"]
            for qual, f in members:
                try:
                    p = inspect.signature(f).parameters.get("composition")
                except (TypeError, ValueError):
                    continue
                if p is not None and p.default == "auto":
                    found.add(f"{mod.__name__}.{qual}")
    literal = re.compile(r"""composition\s*=\s*["']auto["']\s*[,)]""")
    for path in SRC.rglob("*.py"):
        code = "\n".join(line for line in path.read_text().splitlines()
                         if not re.match(r"\s*(def |#|\w+\s*:|.*``)", line))
        if literal.search(code):
            rel = path.relative_to(SRC.parent).with_suffix("")
            found.add(".".join(rel.parts))
    return found


def test_the_enumeration_finds_the_known_users():
    users = _auto_users()
    assert {"dpsubmod.offline.discrete.private_greedy.private_greedy",
            "dpsubmod.online.maximization.fidp.FIDP",
            "dpsubmod.online.maximization.epoch_greedy"} <= users
    assert users - ABSTRACT == set(CASES), "list every new user of 'auto' in CASES"


@pytest.mark.parametrize("user", sorted(CASES))
def test_every_auto_user_asks_the_one_chooser(user, monkeypatch):
    calls = []

    def spy(gains):
        calls.append(auto_composition(gains))
        return calls[-1]

    # every module that holds the chooser under any name sees the spy
    for mod in list(sys.modules.values()):
        if getattr(mod, "__name__", "").startswith("dpsubmod"):
            for name, value in list(vars(mod).items()):
                if value is auto_composition:
                    monkeypatch.setattr(mod, name, spy)
    assert comp.auto_composition is spy
    spl._invert_cached.cache_clear()
    out = CASES[user]()
    assert calls, f"{user} decided 'auto' without auto_composition"
    # ... and states by the rule it chose (not by one a chooser of its own picked)
    report = getattr(out, "privacy", out)
    stated = out[2] if isinstance(out, tuple) and len(out) == 3 \
        else getattr(report, "composition", None)
    if stated in comp.COMPOSITIONS and user not in NESTED:
        assert stated in calls, (user, stated, calls)
