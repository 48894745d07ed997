"""Whole-run privacy plans of the online learners, built from public parameters only.

A private learner knows before round 1, from ``T``, ``epsilon``, ``n``, ... alone, every
mechanism use a run of ``T`` rounds can make. These helpers turn that knowledge into a
:class:`~dpsubmod.privacy.plan.PrivacyPlan`, and into the refusal raised when a calibration would
spend more than the ``epsilon`` the user asked for.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import Any

from ..errors import ParameterTypeError, ValidationError
from ..privacy.backends import BACKENDS, NoiseBackend, choose_backend, resolve_backend
from ..privacy.events import PrivacyEvent
from ..privacy.ledger import fmt
from ..privacy.plan import PrivacyPlan, backend_name, is_simulation
from ..privacy.tree_aggregator import TreeAggregator


def run_plan(label: str, events: Iterable[PrivacyEvent], *, neighbouring: str,
             backend: Any = None, rng: Any = None, delta: float | None = None,
             composition: str = "basic",
             guarantee: tuple[float, float] | None = None) -> PrivacyPlan:
    """The plan of one whole run of a learner (its label, planned uses and their rule).

    The engine reported is the one the events' ``engine`` fields name when they agree (a
    counter whose node-noise scale is beyond OpenDP's range draws with the pure-Python engine,
    and its event says so), else the backend's own.
    """
    events = tuple(events)
    engines = {e.engine for e in events if e.engine}
    return PrivacyPlan(label=label, events=events, delta=delta, composition=composition,
                       neighbouring=neighbouring, backend=backend_name(backend),
                       simulation=is_simulation(backend, rng), guarantee=guarantee,
                       engine=engines.pop() if len(engines) == 1 else None)


def learner_backend(owner: Any, backend: Any, rng: Any, caller: str,
                    noise: str | None = None) -> Any:
    """A learner's ``backend=``, chosen by the library's one default rule
    (:func:`~dpsubmod.privacy.backends.choose_backend`): no seed, the secure backend; a seed, a
    numpy simulation. l2-Laplace noise has no exact sampler, so with it the default is numpy.

    ``owner`` (the learner) remembers the argument as given, so that ``clone(rng=...)`` chooses
    again for the clone's seed rather than inheriting the choice made for the original's."""
    object.__setattr__(owner, "_backend_given", backend)
    supported = ("numpy",) if noise == "l2laplace" else ("numpy", "secure", "opendp")
    # The constructor chain (a subclass's __init__ calling its parent's) is skipped: the code
    # that built the learner is the user's, who is warned, or the library's (an inner learner
    # built with the backend the outer one chose, a clone), which is not.
    frame, level = sys._getframe(2), 4
    while (frame is not None and frame.f_code.co_name == "__init__"
           and frame.f_globals.get("__name__", "").startswith("dpsubmod.")):
        frame, level = frame.f_back, level + 1
    by_library = frame is not None and frame.f_globals.get("__name__", "").startswith(
        "dpsubmod.")
    return choose_backend(backend, rng, caller=caller, supported=supported, stacklevel=level,
                          warn=not by_library)


def tree_event(T: int, dim: int, *, noise: str, sensitivity: float,
               epsilon: float | None = None, delta: float = 0.0, rho: float | None = None,
               backend: Any = None) -> PrivacyEvent:
    """The single event of a tree-aggregation counter with these parameters on ``backend``.

    The counter is only calibrated here, never fed: nothing is drawn, and the caller's random
    generator is not touched (a numpy counter gets its own seed). Whatever the counter refuses
    (a noise scale outside float range, l2-Laplace noise on a grid backend, an OpenDP map above
    the charge) is refused here, when the plan is built, before anything is charged.
    """
    if rho is not None:
        return TreeAggregator(T, dim, noise=noise, sensitivity=sensitivity, rho=rho,
                              **tree_backend(backend, 0)).event
    return TreeAggregator(T, dim, noise=noise, sensitivity=sensitivity, epsilon=epsilon,
                          delta=delta if noise == "gaussian" else 0.0,
                          **tree_backend(backend, 0)).event


def tree_backend(backend: Any, rng: Any) -> dict[str, Any]:
    """The ``backend=`` / ``rng=`` keywords of a learner's counter.

    On the numpy backend the counter draws from ``rng``; a secure backend (a name or an
    instance) owns its randomness, so the learner's generator is kept for its public
    randomness only.
    """
    if backend is None or (isinstance(backend, str) and backend == "numpy"):
        return {"backend": None, "rng": rng}
    return {"backend": backend, "rng": None}


def is_grid_backend(backend: Any) -> bool:
    """Whether a ``backend=`` argument draws discrete noise on a grid (the secure backends)."""
    if isinstance(backend, NoiseBackend):
        return bool(backend.discrete)
    return backend not in (None, "numpy")


def check_backend(backend: Any, caller: str, noise: str | None = None) -> None:
    """Refuse a ``backend=`` that is not a known name or a backend instance, at construction.

    ``"opendp"`` without OpenDP raises :class:`~dpsubmod.errors.MissingDependencyError` with
    the install command; a grid backend with l2-Laplace node noise (which has no exact
    sampler) is refused naming ``noise``. Nothing is charged or drawn.
    """
    if noise == "l2laplace" and is_grid_backend(backend):
        raise ValidationError(
            f"{caller}(backend={backend!r}) draws exact noise on a grid and has no l2-Laplace "
            "sampler; pass noise='laplace' or noise='gaussian' (with delta), or backend='numpy'."
        )
    if backend is None or isinstance(backend, NoiseBackend):
        return
    if not isinstance(backend, str):
        raise ParameterTypeError(
            f"The 'backend' parameter of {caller} must be 'numpy', 'secure', 'opendp', a "
            f"NoiseBackend instance or None; got {type(backend).__name__}."
        )
    if backend not in BACKENDS:
        raise ValidationError(
            f"The 'backend' parameter of {caller} must be one of {sorted(BACKENDS)} or a "
            f"NoiseBackend instance; got {backend!r}."
        )
    if backend == "opendp":
        resolve_backend(backend)  # OpenDP or the install command, now


def check_spend(caller: str, spent: float, requested: float, *, parameter: str,
                fix: str) -> None:
    """Refuse a calibration whose whole run would spend more epsilon than requested.

    Raises
    ------
    ValidationError
        Naming ``parameter``, the parameter to change, and ``fix``. The error carries the
        numbers as attributes: ``parameter``, ``epsilon_spent`` (what the run would spend) and
        ``epsilon_requested``.
    """
    if spent > requested:  # exact: a statement above the request by any amount is refused
        err = ValidationError(
            f"{caller}: with these parameters the run would spend epsilon={fmt(spent)}, more "
            f"than the requested epsilon={fmt(requested)}; the learner is refused and nothing "
            f"was released. Change the '{parameter}' parameter: {fix}"
        )
        err.parameter = parameter  # type: ignore[attr-defined]
        err.epsilon_spent = float(spent)  # type: ignore[attr-defined]
        err.epsilon_requested = float(requested)  # type: ignore[attr-defined]
        raise err
