"""What a sweep can run: offline objectives, online streams and online learners, by name.

Each table maps a name (as written in an experiment file) to a builder and the parameters it
accepts, so that a configuration is checked against them before anything runs and a misspelt
name fails with the list of valid ones.

* Offline objectives (``[objective] kind = ...``): ``"facility_location"`` (private records
  drawn as clustered points in the unit square, public candidate locations drawn uniformly,
  a public Gaussian bandwidth; :meth:`~dpsubmod.functions.FacilityLocation.from_records`) and
  ``"mutual_information"`` (feature selection on the Wisconsin breast-cancer table bundled
  with scikit-learn; :meth:`~dpsubmod.functions.MutualInformation.from_records`).
* Online streams (``[stream] kind = ...``): ``"stochastic"``, ``"ftl_trap"`` and
  ``"karate_cut"`` for minimization (:func:`~dpsubmod.online.stochastic_stream`,
  :func:`~dpsubmod.online.ftl_trap_stream`, and the karate-club labelling
  stream of :mod:`dpsubmod.experiments.online_minimization`); ``"facility_location"`` for
  maximization (round ``t`` is one person's facility-location function over public candidates;
  values in ``[0, 1]``).
* Online learners (:data:`LEARNERS`): each with its sense (min/max) and the exponent ``a`` of
  its regret bound ``O(T^a)`` (drawn as the reference slope); whether it is private and the
  stream its regret bound assumes (``"iid"``, ``"oblivious"`` or ``"adaptive"``) are read
  from the learner class's tags.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import online
from ..datasets.synthetic import clustered_points
from ..datasets.tables import load_breast_cancer
from ..functions import FacilityLocation, MutualInformation
from ..offline import maximize
from ..online import FunctionStream, ftl_trap_stream, stochastic_stream
from .online_minimization import karate_stream


@dataclass(frozen=True)
class Param:
    """One accepted parameter: its type (``"int"``/``"real"``), default and closed bounds."""

    kind: str
    default: Any
    low: float | None = None
    high: float | None = None
    doc: str = ""


# =============================================================================================
# offline objectives
# =============================================================================================
OBJECTIVES: dict[str, dict[str, Param]] = {
    "facility_location": {
        "records": Param("int", 200, 2, None, "private records (people), clustered points"),
        "candidates": Param("int", 20, 1, None, "public candidate locations (the ground set)"),
        "clusters": Param("int", 5, 1, None, "clusters of the records"),
        "spread": Param("real", 0.05, 0.0, None, "standard deviation of a cluster"),
        "bandwidth": Param("real", 0.15, 1e-12, None, "public Gaussian similarity bandwidth"),
    },
    "mutual_information": {
        "bins": Param("int", 4, 2, 64, "equal-width bins per feature (public edges)"),
    },
}


def _facility_location(p: Mapping[str, Any], data_seed: np.random.SeedSequence) -> Any:
    records_ss, public_ss = data_seed.spawn(2)
    pts = clustered_points(p["records"], 2, n_clusters=p["clusters"], spread=p["spread"],
                           rng=np.random.default_rng(records_ss))
    cands = np.random.default_rng(public_ss).random((p["candidates"], 2))
    return FacilityLocation.from_records(pts, cands, "gaussian", bandwidth=p["bandwidth"])


def _mutual_information(p: Mapping[str, Any], data_seed: np.random.SeedSequence) -> Any:
    d = load_breast_cancer(bins=p["bins"])
    return MutualInformation.from_records(d.X, d.y)


_OBJECTIVE_BUILDERS: dict[str, Callable[[Mapping[str, Any], np.random.SeedSequence], Any]] = {
    "facility_location": _facility_location,
    "mutual_information": _mutual_information,
}

# Per-process cache: every cell of a sweep on one worker reuses the objective and its greedy
# reference instead of rebuilding them (they depend only on the spec and the sweep seed).
_CACHE: dict[tuple, tuple[Any, float]] = {}


def build_objective(spec: Mapping[str, Any], seed: int) -> tuple[Any, float]:
    """``(objective, value of the non-private greedy)`` for an ``[objective]`` spec.

    The private records come from ``SeedSequence(seed, spawn_key=(0,))``: the same data set for
    every cell of the sweep, on every worker.
    """
    key = (seed, tuple(sorted(spec.items())))
    if key not in _CACHE:
        kind = spec["kind"]
        params = {k: v for k, v in spec.items() if k not in ("kind", "k")}
        f = _OBJECTIVE_BUILDERS[kind](params, np.random.SeedSequence(seed, spawn_key=(0,)))
        ref = float(maximize(f, spec["k"], "greedy").diagnostics.value)
        _CACHE[key] = (f, ref)
    return _CACHE[key]


# =============================================================================================
# online streams
# =============================================================================================
STREAMS: dict[str, tuple[str, dict[str, Param]]] = {
    "stochastic": ("min", {
        "n": Param("int", 6, 1, 20, "ground-set size"),
        "coupling": Param("real", 0.5, 0.0, None, "weight of the concave cardinality term"),
    }),
    "ftl_trap": ("min", {
        "n": Param("int", 4, 1, 20, "ground-set size"),
    }),
    "karate_cut": ("min", {
        "affinity": Param("real", 1.0, 0.0, None, "strength of the faction signal"),
        "noise": Param("real", 1.0, 0.0, None, "amplitude of the noise on unary terms"),
    }),
    "facility_location": ("max", {
        "records": Param("int", 500, 1, None, "people the rounds are drawn from"),
        "candidates": Param("int", 9, 1, 30, "public candidate locations (the ground set)"),
        "clusters": Param("int", 4, 1, None, "clusters of the people"),
        "spread": Param("real", 0.05, 0.0, None, "standard deviation of a cluster"),
        "bandwidth": Param("real", 0.15, 1e-12, None, "public Gaussian similarity bandwidth"),
    }),
}


def build_stream(spec: Mapping[str, Any], T: int, seed: int, rep: int) -> Any:
    """The stream of ``T`` rounds for replicate ``rep``: drawn from
    ``SeedSequence(seed, spawn_key=(2, T, rep))``, so every learner of a (T, replicate) pair
    sees the same rounds (a paired comparison)."""
    ss = np.random.SeedSequence(seed, spawn_key=(2, int(T), int(rep)))
    kind = spec["kind"]
    if kind == "stochastic":
        return stochastic_stream(spec["n"], T, coupling=spec["coupling"],
                                 rng=np.random.default_rng(ss))
    if kind == "ftl_trap":
        # Deterministic: the stream that makes full-information regret grow like sqrt(T).
        w = (-1.0) ** np.arange(spec["n"]) * np.arange(spec["n"], 0, -1)
        return ftl_trap_stream(w / np.abs(w).sum(), T)
    if kind == "karate_cut":
        return karate_stream(T, affinity=spec["affinity"], noise=spec["noise"],
                             rng=np.random.default_rng(ss))
    if kind == "facility_location":
        people_ss, public_ss, draw_ss = ss.spawn(3)
        pts = clustered_points(spec["records"], 2, n_clusters=spec["clusters"],
                               spread=spec["spread"], rng=np.random.default_rng(people_ss))
        cands = np.random.default_rng(public_ss).random((spec["candidates"], 2))
        who = np.random.default_rng(draw_ss).integers(pts.shape[0], size=T)
        d2 = ((pts[who, None, :] - cands[None, :, :]) ** 2).sum(axis=2)
        sim = np.exp(-d2 / (2.0 * spec["bandwidth"] ** 2))
        return FunctionStream([FacilityLocation(sim[t:t + 1]) for t in range(T)], bound=1.0)
    raise KeyError(kind)


# =============================================================================================
# online learners
# =============================================================================================
@dataclass(frozen=True)
class LearnerSpec:
    """A learner a sweep can run: its class in :mod:`dpsubmod.online`, sense, regret exponent
    and a factory ``factory(n, T, k, epsilon, delta, rng, **options)``.

    Whether it is private and the stream its regret bound assumes (``"iid"``: rounds drawn
    independently from one distribution; ``"oblivious"``: any sequence fixed before the run;
    ``"adaptive"``: functions that may react to earlier plays) are read from the class's tags
    (:meth:`dpsubmod.online.OnlineBase.tags`), not kept here."""

    name: str
    sense: str
    slope: float
    factory: Callable[..., Any]
    learner: str

    @property
    def tags(self) -> Any:
        """The :class:`~dpsubmod.online.tags.LearnerTags` of the learner's class."""
        return getattr(online, self.learner).tags()

    @property
    def private(self) -> bool:
        """Whether the learner is private (it runs at every epsilon of a sweep)."""
        return bool(self.tags.private)

    @property
    def assumption(self) -> str:
        """What the learner's regret bound assumes of the stream."""
        return str(self.tags.assumption)


def _learner_class(cls_name: str) -> Any:
    return getattr(online, cls_name)


def _min(cls_name: str) -> Callable[..., Any]:
    def make(n: int, T: int, k: int, eps: float | None, delta: float, rng: Any,
             **opts: Any) -> Any:
        cls = _learner_class(cls_name)
        if cls.tags().private:
            return cls(n, T, M=1.0, epsilon=eps, rng=rng, **opts)
        return cls(n, T, M=1.0, rng=rng, **opts)

    return make


def _max(cls_name: str) -> Callable[..., Any]:
    def make(n: int, T: int, k: int, eps: float | None, delta: float, rng: Any,
             **opts: Any) -> Any:
        cls = _learner_class(cls_name)
        if cls.tags().private:
            return cls(n, T, k, epsilon=eps, delta=delta, rng=rng, **opts)
        return cls(n, T, k, rng=rng, **opts)

    return make


def _iid(cls_name: str) -> Callable[..., Any]:
    def make(n: int, T: int, k: int, eps: float | None, delta: float, rng: Any,
             **opts: Any) -> Any:
        return _learner_class(cls_name)(n, T, k, epsilon=eps, rng=rng, **opts)

    return make


def _batched(n: int, T: int, k: int, eps: float | None, delta: float, rng: Any,
             **opts: Any) -> Any:
    """BatchedPrivateBandit around the non-private Streeter-Golovin bandit (``inner=`` takes
    the inner learner's own options)."""
    inner = online.BanditOnlineGreedy(n, T, k, **dict(opts.pop("inner", {})))
    return online.BatchedPrivateBandit(inner, epsilon=eps, rng=rng, **opts)


def _spec(name: str, sense: str, slope: float, factory: Callable[[str], Callable[..., Any]]
          ) -> LearnerSpec:
    return LearnerSpec(name, sense, slope, factory(name), name)


LEARNERS: dict[str, LearnerSpec] = {s.name: s for s in (
    # minimization (Cardoso and Cummings 2018; Hazan and Kale 2012)
    _spec("SubmodPFTAL", "min", 0.5, _min),
    _spec("BanditSubmodPFTAL", "min", 0.75, _min),
    _spec("HazanKale", "min", 0.5, _min),
    _spec("BanditHazanKale", "min", 2 / 3, _min),
    # maximization (Perez-Salazar and Cummings 2021; Streeter and Golovin 2008;
    # Sadeghi and Fazel 2021; Chen, Hassani and Karbasi 2018)
    _spec("FIDP", "max", 0.5, _max),
    _spec("BanditDP", "max", 2 / 3, _max),
    _spec("PresampledBanditDP", "max", 2 / 3, _max),
    _spec("NaiveBanditDP", "max", 0.75, _max),
    _spec("DPMetaFrankWolfe", "max", 0.5, _max),
    _spec("OnlineGreedy", "max", 0.5, _max),
    _spec("BanditOnlineGreedy", "max", 2 / 3, _max),
    _spec("MetaFrankWolfe", "max", 0.5, _max),
    # i.i.d. rounds, private by parallel composition over disjoint rounds
    _spec("PrivateEpochGreedy", "max", 0.5, _iid),
    _spec("PrivateExploreThenCommit", "max", 2 / 3, _iid),
    # batching a non-private bandit learner (Asi, Raman and Talwar 2025)
    LearnerSpec("BatchedPrivateBandit", "max", 2 / 3, _batched, "BatchedPrivateBandit"),
    # adaptive adversaries: Hedge experts over tree-aggregated noisy gains
    _spec("PrivateTreeExperts", "max", 0.5, _max),
)}


def build_learner(name: str, n: int, T: int, k: int, epsilon: float | None, delta: float,
                  rng: Any, options: Mapping[str, Any]) -> Any:
    """A fresh learner from :data:`LEARNERS` (``epsilon`` is ignored by non-private ones)."""
    spec = LEARNERS[name]
    eps = math.inf if epsilon is None else epsilon
    return spec.factory(n, T, k, eps, delta, rng, **dict(options))
