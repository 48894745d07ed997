"""Whole-run privacy plans of the online learners, built from public parameters only.

A private learner knows before round 1, from ``T``, ``epsilon``, ``n``, ... alone, every
mechanism use a run of ``T`` rounds can make. These helpers turn that knowledge into a
:class:`~dpsubmod.privacy.plan.PrivacyPlan`, and into the refusal raised when a calibration would
spend more than the ``epsilon`` the user asked for.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..errors import ValidationError
from ..privacy.continual import TreeAggregator
from ..privacy.events import PrivacyEvent
from ..privacy.ledger import fmt
from ..privacy.plan import PrivacyPlan, backend_name, is_simulation

__all__ = ["run_plan", "tree_event", "check_spend"]


def run_plan(label: str, events: Iterable[PrivacyEvent], *, neighbouring: str,
             backend: Any = None, rng: Any = None, delta: float | None = None,
             composition: str = "basic",
             guarantee: tuple[float, float] | None = None) -> PrivacyPlan:
    """The plan of one whole run of a learner (its label, planned uses and their rule)."""
    return PrivacyPlan(label=label, events=tuple(events), delta=delta, composition=composition,
                       neighbouring=neighbouring, backend=backend_name(backend),
                       simulation=is_simulation(backend, rng), guarantee=guarantee)


def tree_event(T: int, dim: int, *, noise: str, sensitivity: float, epsilon: float,
               delta: float = 0.0) -> PrivacyEvent:
    """The single event of a numpy tree-aggregation counter with these parameters.

    The counter is only calibrated here, never fed: nothing is drawn, and the caller's random
    generator is not touched (the throwaway counter gets its own seed).
    """
    return TreeAggregator(T, dim, noise=noise, sensitivity=sensitivity, epsilon=epsilon,
                          delta=delta if noise == "gaussian" else 0.0, rng=0).event


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
    if spent > requested * (1.0 + 1e-9):
        err = ValidationError(
            f"{caller}: with these parameters the run would spend epsilon={fmt(spent)}, more "
            f"than the requested epsilon={fmt(requested)}; the learner is refused and nothing "
            f"was released. Change the '{parameter}' parameter: {fix}"
        )
        err.parameter = parameter  # type: ignore[attr-defined]
        err.epsilon_spent = float(spent)  # type: ignore[attr-defined]
        err.epsilon_requested = float(requested)  # type: ignore[attr-defined]
        raise err
