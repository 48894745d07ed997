"""Composition through privacy loss distributions (PLD), with Google's dp-accounting.

``composition="pld"`` composes the events of one call, whose steps are all fixed before it
starts, by convolving their privacy loss distributions (Koskela, Jalko & Honkela 2020; Doroshenko,
Ghazi, Kamath, Kumar & Manurangsi 2022, "Connect the dots"). It is never a privacy filter:
``Budget`` refuses it, because PLD composition holds for parameters fixed in advance only.

Each event enters with the most specific law it states:

* ``law=("laplace", b / Delta)``: the Laplace mechanism's own PLD;
* ``law=("gaussian", sigma / Delta)``: the Gaussian mechanism's own PLD;
* otherwise ``(epsilon, delta)``: the dominating pair of every ``(epsilon, delta)``-DP mechanism
  (``delta`` of mass at infinity and ``epsilon``-randomized response), which is valid for any
  mechanism with that guarantee, the exponential mechanism and every grid release included;
* an event with only a zCDP cost (``epsilon = inf``) and no law has no PLD, and the rule does not
  apply.

dp-accounting's PLDs are pessimistic: losses are rounded up to a grid of width
:data:`VALUE_DISCRETIZATION` and truncated tails are counted as infinite loss, so the epsilon
returned is an upper bound of the exact composition's. dp-accounting is an optional dependency
(the ``[pld]`` extra), imported only when the rule is used.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from ..errors import MissingDependencyError
from .events import PrivacyEvent

__all__ = ["pld_epsilon", "PLDNotApplicable", "VALUE_DISCRETIZATION", "INSTALL"]

#: Width of dp-accounting's grid of privacy-loss values (its default).
VALUE_DISCRETIZATION = 1e-4
#: The command that installs the PLD accountant.
INSTALL = 'pip install "dpsubmod[pld]"'


class PLDNotApplicable(Exception):
    """An event has no privacy loss distribution (only a zCDP cost)."""


def _import_dp_accounting() -> tuple[Any, Any]:
    # One function, so that tests can simulate an environment without dp-accounting.
    from dp_accounting.pld import common, privacy_loss_distribution

    return common, privacy_loss_distribution


def load() -> tuple[Any, Any]:
    """dp-accounting's ``common`` and ``privacy_loss_distribution`` modules.

    Raises
    ------
    MissingDependencyError
        When dp-accounting is not installed (the message gives the install command).
    """
    try:
        return _import_dp_accounting()
    except ImportError as exc:
        raise MissingDependencyError(
            "composition='pld' composes through dp-accounting's privacy loss distributions, "
            f"which are not installed. Install them with {INSTALL}, or use composition='kov' "
            "(exact for pure events), 'zcdp' or 'auto'."
        ) from exc


def _group(events: Iterable[PrivacyEvent]) -> dict[tuple, int]:
    groups: dict[tuple, int] = {}
    for e in events:
        if e.law is not None:
            key: tuple = ("law", *e.law)
        elif math.isfinite(e.epsilon):
            key = ("dp", e.epsilon, e.delta)
        else:
            raise PLDNotApplicable(
                f"PLD composition: the event {e.mechanism!r} has only a zCDP cost and no noise "
                "law, so it has no privacy loss distribution"
            )
        groups[key] = groups.get(key, 0) + e.count
    return groups


def pld_epsilon(events: Iterable[PrivacyEvent], delta: float, *,
                value_discretization: float = VALUE_DISCRETIZATION) -> float:
    """The epsilon at ``delta`` of the events composed through their PLDs (an upper bound).

    Parameters
    ----------
    events : iterable of PrivacyEvent
        Uses fixed before the call starts.
    delta : float
        Target total delta in ``[0, 1)``.
    value_discretization : float, default=VALUE_DISCRETIZATION
        Width of the grid of privacy-loss values.

    Returns
    -------
    float
        ``inf`` when the events' mass at infinite loss exceeds ``delta``.

    Raises
    ------
    PLDNotApplicable
        When an event has only a zCDP cost and no law.
    MissingDependencyError
        When dp-accounting is not installed.
    """
    groups = _group(events)
    if not groups:
        return 0.0
    common, pld = load()
    total = None
    for key, count in groups.items():
        if key[0] == "law":
            _, name, ratio = key
            if name == "laplace":
                one = pld.from_laplace_mechanism(ratio, sensitivity=1.0,
                                                 value_discretization_interval=value_discretization)
            else:
                one = pld.from_gaussian_mechanism(ratio, sensitivity=1.0,
                                                  value_discretization_interval=value_discretization)
        else:
            _, eps, dlt = key
            if eps == 0.0 and dlt == 0.0:
                continue  # a use with no privacy loss
            one = pld.from_privacy_parameters(common.DifferentialPrivacyParameters(eps, dlt),
                                              value_discretization_interval=value_discretization)
        composed = one.self_compose(count) if count > 1 else one
        total = composed if total is None else total.compose(composed)
    if total is None:
        return 0.0
    return max(0.0, float(total.get_epsilon_for_delta(delta)))
