"""One tiny instance of every online learner class the library exports, shared by the tests
that run one check over all of them (frozen parameters, the shared learner checker)."""

from __future__ import annotations

import inspect

import dpsubmod.online as online
from dpsubmod.online import (
    FIDP,
    PFTAL,
    BanditDP,
    BanditHazanKale,
    BanditOnlineGreedy,
    BanditSubmodPFTAL,
    BatchedPrivateBandit,
    DPMetaFrankWolfe,
    FlaxmanKalaiMcMahan,
    GarberKretzu,
    HazanKale,
    Hedge,
    MetaFrankWolfe,
    NaiveBanditDP,
    OnlineBase,
    OnlineGreedy,
    PFTALMetaFrankWolfe,
    PresampledBanditDP,
    PrivateBandit,
    PrivateEpochGreedy,
    PrivateExploreThenCommit,
    PrivateFTRL,
    PrivateTreeExperts,
    SubmodPFTAL,
    convex,
    maximization,
    minimization,
    oco,
)
from dpsubmod.polytopes import Box

N, T = 4, 8

#: one tiny instance of every learner class
FACTORIES = {
    "BanditDP": lambda: BanditDP(N, T, 2, epsilon=1.0, delta=1e-6, gamma=0.3, eta=0.1, rng=0),
    "BatchedPrivateBandit": lambda: BatchedPrivateBandit(BanditOnlineGreedy(N, T, 2, rng=0),
                                                         epsilon=1.0, batch=2, rng=0),
    "BanditHazanKale": lambda: BanditHazanKale(N, T, M=1.0, gamma=0.5, rng=0),
    "BanditOnlineGreedy": lambda: BanditOnlineGreedy(N, T, 2, rng=0),
    "BanditSubmodPFTAL": lambda: BanditSubmodPFTAL(N, T, M=1.0, epsilon=0.7, gamma=0.5, rng=0),
    "DPMetaFrankWolfe": lambda: DPMetaFrankWolfe(N, T, 2, epsilon=1.0, K=2, rng=0),
    "FIDP": lambda: FIDP(N, T, 2, epsilon=1.0, delta=1e-6, rng=0),
    "FlaxmanKalaiMcMahan": lambda: FlaxmanKalaiMcMahan(Box(-1.0, 1.0, dim=2), T,
                                                       mode="extend", rng=0),
    "GarberKretzu": lambda: GarberKretzu(Box(-1.0, 1.0, dim=2), T, mode="extend", rng=0),
    "HazanKale": lambda: HazanKale(N, T, M=1.0, rng=0),
    "Hedge": lambda: Hedge(N, 0.05, copies=2, max_draws=T, delta=1e-6, rng=0),
    "MetaFrankWolfe": lambda: MetaFrankWolfe(N, T, 2, rng=0),
    "NaiveBanditDP": lambda: NaiveBanditDP(N, T, 2, epsilon=1.0, delta=1e-6, gamma=0.3, rng=0),
    "OnlineGreedy": lambda: OnlineGreedy(N, T, 2, rng=0),
    "PFTAL": lambda: PFTAL(N, T, H=1.0, epsilon=0.8, lipschitz=1.0, rng=0),
    "PFTALMetaFrankWolfe": lambda: PFTALMetaFrankWolfe(N, T, 2, epsilon=1.2, K=3, rng=0),
    "PresampledBanditDP": lambda: PresampledBanditDP(N, T, 2, epsilon=1.0, delta=1e-6,
                                                     gamma=0.3, rng=0),
    "PrivateBandit": lambda: PrivateBandit(Box(-1.0, 1.0, dim=2), T, epsilon=0.6, mode="extend",
                                           rng=0),
    "PrivateEpochGreedy": lambda: PrivateEpochGreedy(N, T, 2, epsilon=1.0, rng=0),
    "PrivateExploreThenCommit": lambda: PrivateExploreThenCommit(N, T, 2, epsilon=1.0, m=1,
                                                                 rng=0),
    "PrivateFTRL": lambda: PrivateFTRL(2, T, n=N, copies=2, epsilon=0.9, delta=1e-6,
                                       loss_range=(-1.0, 0.0), rng=0),
    "PrivateTreeExperts": lambda: PrivateTreeExperts(N, T, 2, epsilon=1.0, delta=1e-6, rng=0),
    "SubmodPFTAL": lambda: SubmodPFTAL(N, T, M=1.0, epsilon=0.7, rng=0),
}


def _all_subclasses(cls: type) -> set[type]:
    out = set()
    for sub in cls.__subclasses__():
        out |= {sub} | _all_subclasses(sub)
    return out


def exported_learner_classes() -> set[type]:
    """Every concrete learner class exported by dpsubmod.online or one of its sub-packages."""
    exported = {name for mod in (online, convex, maximization, minimization, oco)
                for name in mod.__all__}
    return {c for c in _all_subclasses(OnlineBase)
            if c.__module__.startswith("dpsubmod.") and not inspect.isabstract(c)
            and c.__name__ in exported}
