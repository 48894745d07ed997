"""From a Task to a release: the constraint, the private selection and what may be published.

A :class:`Release` keeps what is released (the selection, the privacy statement and the
public parameters) apart from what is not (the objective's value and the data diagnostics),
so that a release file can never carry a non-private value by accident.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .._validation import check_delta, check_epsilon, check_int
from ..constraints import PartitionMatroid
from ..errors import BudgetExceededError, ParameterTypeError, ValidationError
from ..offline.registry import _maximize_checked, get_method, list_methods
from ..privacy.backends import backend_chosen, choose_backend
from ..privacy.composition import COMPOSITIONS
from ..privacy.plan import backend_name
from ._common import Task

BACKEND_GUARANTEE = {
    "secure": (
        "exact discrete sampling from a cryptographic random source (OpenDP's measurements "
        "when OpenDP is installed, else dpsubmod's samplers of Canonne, Kamath and Steinke "
        "2020; the engine is named with the privacy statement); the guarantee is exact, with the "
        "sensitivity rounded up to the sampler's grid; not open to floating-point attacks; "
        "timing side channels are not covered"
    ),
    "opendp": (
        "exact discrete sampling by OpenDP's measurements from its cryptographic random source, "
        "each measurement's privacy map checked against the charge before the first draw; the "
        "guarantee is exact, with the sensitivity rounded up to the sampler's grid; not open to "
        "floating-point attacks; timing side channels are not covered"
    ),
    "numpy": (
        "seeded floating-point sampling for simulation and reproducibility; the guarantee holds "
        "for the idealised mechanism in exact arithmetic only, and floating-point samplers are "
        "open to known attacks (Mironov 2012): use it for trials, not to protect real people's "
        "data (use the secure backend)"
    ),
}


@dataclass(frozen=True)
class ConstraintSpec:
    """A constraint with its public description."""

    constraint: Any
    description: str
    as_dict: dict[str, Any]
    public: tuple[str, ...] = ()


def build_constraint(task: Task, *, k: int | None = None,
                     groups: Mapping[str, str] | None = None,
                     capacities: int | Mapping[str, int] | None = None,
                     k_name: str = "k") -> ConstraintSpec:
    """``k`` items, or a partition matroid from public groups and capacities.

    Parameters
    ----------
    task : Task
    k : int, optional
        Choose ``k`` items.
    groups : mapping of item name to group, optional
        Public groups; default: the task's own groups (from a candidates column).
    capacities : int or mapping of group to int
        Items allowed per group (one number for all groups, or per group; 0 excludes one).
    k_name : str, default="k"
        How the caller's user spells ``k`` (the command line passes ``"--k"``), for messages.
    """
    n = len(task.names)
    matroid = groups is not None or (task.groups is not None and capacities is not None)
    if k is not None and (groups is not None or capacities is not None):
        raise ValidationError("Pass either k (choose k items) or a partition matroid (groups "
                              "with capacities), not both.")
    if k is not None:
        k = check_int(k, k_name, low=1, high=n,
                      fix=f"There are {n} {task.items}; pass 1 <= {k_name} <= {n}.")
        return ConstraintSpec(k, f"choose k={k} of {n} {task.items}",
                              {"type": "cardinality", "k": k})
    if not matroid:
        if capacities is not None:
            raise ValidationError("capacities need groups: pass groups (item -> group) or "
                                  "build the task with a partition column.")
        raise ValidationError("Say how many items to choose: pass k, or a partition matroid "
                              "(groups with capacities).")
    if capacities is None:
        raise ValidationError("A partition matroid needs capacities: one number for every "
                              "group, or one per group.")
    if groups is not None:
        unknown = [g for g in groups if g not in task.names]
        if unknown:
            raise ValidationError(
                f"groups name {unknown[0]!r}, which is not one of the {task.items} "
                f"({', '.join(task.names[:6])}{', ...' if n > 6 else ''}).")
        missing = [nm for nm in task.names if nm not in groups]
        if missing:
            raise ValidationError(
                f"No group for {missing[0]!r}"
                f"{f' and {len(missing) - 1} more' if len(missing) > 1 else ''}; list every "
                f"one of the {task.items} with its group.")
        per_item = [str(groups[nm]) for nm in task.names]
        src = "groups given per item"
    else:
        per_item = list(task.groups)
        src = "groups from the candidates' partition column"
    labels = sorted(set(per_item))
    if isinstance(capacities, Mapping):
        unknown = [g for g in capacities if g not in labels]
        if unknown:
            raise ValidationError(f"capacities: {unknown[0]!r} is not a group (groups: "
                                  f"{', '.join(labels)}).")
        missing = [g for g in labels if g not in capacities]
        if missing:
            raise ValidationError(f"capacities: no capacity for group {missing[0]!r}; give "
                                  "every group one (0 excludes a group).")
        caps = [check_int(capacities[g], f"capacities[{g!r}]", low=0) for g in labels]
    else:
        caps = [check_int(capacities, "capacities", low=0)] * len(labels)
    code = {g: i for i, g in enumerate(labels)}
    m = PartitionMatroid(np.array([code[g] for g in per_item]), caps)
    desc = (f"choose at most {', '.join(f'{c} from {g!r}' for g, c in zip(labels, caps))} "
            f"({n} {task.items} in {len(labels)} groups; rank {m.rank})")
    return ConstraintSpec(
        m, desc, {"type": "partition", "groups": dict(zip(task.names, per_item)),
                  "capacities": dict(zip(labels, caps)), "rank": int(m.rank)},
        public=(src + ", capacities " + ", ".join(f"{g}={c}" for g, c in zip(labels, caps)),))


@dataclass(frozen=True)
class Release:
    """A private selection and its statement.

    :meth:`to_dict` holds only what is released; :meth:`diagnostics` holds what is not and says
    so. ``value`` is NOT private.
    """

    task: Task
    constraint: ConstraintSpec
    selection: tuple[int, ...]
    privacy: Any
    method: str
    params: dict[str, Any]
    requested: tuple[float, float]
    budget: Any = None
    budget_file: str | None = None
    value: float = math.nan
    evaluations: int = 0
    trace: tuple[float, ...] = field(default_factory=tuple)

    @property
    def names(self) -> list[str]:
        return [self.task.names[e] for e in self.selection]

    def neighbouring(self) -> str:
        return self.task.neighbouring

    def to_dict(self, version: str = "") -> dict[str, Any]:
        """What is released: selection, privacy statement and public parameters only."""
        rep, t = self.privacy, self.task
        eps, delta = self.requested
        data = {"file": t.source, "record": t.record, "columns": list(t.columns)}
        if t.n_records is not None:
            data["records"] = t.n_records
        budget = None
        if self.budget is not None:
            budget = {"file": self.budget_file, "epsilon": self.budget.epsilon,
                      "delta": self.budget.delta, "rule": self.budget.composition,
                      "spent_epsilon": self.budget.spent[0],
                      "spent_delta": self.budget.spent[1]}
        return {
            "dpsubmod_version": version, "task": t.task, "data": data,
            "selection": list(self.selection), "names": self.names,
            "constraint": self.constraint.as_dict,
            "privacy": {
                "epsilon": rep.epsilon, "delta": rep.delta, "requested_epsilon": eps,
                "requested_delta": delta, "composition": rep.composition,
                "composition_rule": COMPOSITIONS.get(rep.composition, rep.composition),
                "mechanism_uses": rep.uses, "neighbouring": t.neighbouring,
                "backend": rep.backend, "backend_guarantee": BACKEND_GUARANTEE.get(rep.backend,
                                                                                   ""),
                "statement": str(rep), "budget": budget,
            },
            "sensitivity": t.sensitivity, "sensitivity_note": t.sensitivity_note,
            "objective": t.objective,
            "public_inputs": list(t.public) + list(self.constraint.public)
            + [self.constraint.description],
            "data_rules": list(t.rules),
            "params": {**self.params, **_public_params(t.params)},
        }

    def diagnostics(self) -> dict[str, Any]:
        """What is NOT released: computed from the raw records without noise."""
        return {
            "warning": ("NOT differentially private: computed from the raw records without "
                        "noise; for checking a run on your own machine, never for publication"),
            "task": self.task.task, "selection": list(self.selection),
            "objective_value": self.value, "gains_of_chosen_items": list(self.trace),
            "evaluations": self.evaluations, "data": dict(self.task.diagnostics),
        }


def _method_options(options: Mapping[str, Any] | None, spec: Any) -> dict[str, Any]:
    """The method options of :func:`private_select`, checked against the method's own."""
    if options is None:
        return {}
    if not isinstance(options, Mapping) or not all(isinstance(k, str) for k in options):
        raise ParameterTypeError(
            "The 'options' parameter of private_select must be a mapping from option name to "
            f"value, e.g. {{'composition': 'basic'}}; got {type(options).__name__}.")
    if "backend" in options:
        raise ValidationError("The 'options' parameter of private_select sets no backend; pass "
                              "backend= to private_select instead.")
    if "sensitivity" in options:
        # the release states the task's declared sensitivity: an override would make it false
        raise ValidationError("The 'options' parameter of private_select cannot set the "
                              "sensitivity: the task declares it from its neighbouring relation "
                              "and the release states it. Remove 'sensitivity'.")
    unknown = sorted(set(options) - set(spec.options))
    if unknown:
        valid = ", ".join(o for o in spec.options if o != "backend") or "none"
        raise ValidationError(
            f"The 'options' parameter of private_select names option(s) "
            f"{', '.join(map(repr, unknown))} that method {spec.name!r} does not take. Its "
            f"options are: {valid}.")
    return dict(options)


def _public_params(p: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in p.items() if not isinstance(v, np.ndarray)}


def private_select(task: Task, constraint: ConstraintSpec, *, epsilon: float,
                   delta: float = 0.0, method: str = "private_greedy", backend: Any = None,
                   budget: Any = None, rng: Any = None,
                   options: Mapping[str, Any] | None = None) -> Release:
    """Run a private method of :func:`dpsubmod.list_methods` on a task and wrap the release.

    The budget is charged by the method before any noise; a method that reports more than was
    requested releases nothing (:class:`~dpsubmod.errors.BudgetExceededError`).

    Parameters
    ----------
    task : Task
    constraint : ConstraintSpec
    epsilon, delta : float
        The release's privacy cost.
    method : str, default="private_greedy"
        A private method (``dpsubmod.list_methods(private=True)``).
    backend : {"secure", "opendp", "numpy"}, NoiseBackend or None, default=None
        The noise backend: a name, or an instance such as ``SecureBackend(engine="python")``
        (reported by its name). ``None``: ``"secure"`` without ``rng`` (a release),
        ``"numpy"`` with one (a seeded simulation), as everywhere in dpsubmod
        (:func:`~dpsubmod.privacy.backends.choose_backend`).
    budget : Budget, optional
        Charged before any noise.
    rng : int, Generator or None
    options : mapping, optional
        The method's own options (its ``MethodSpec.options``, for example ``composition`` or
        ``steps``), passed through; an unknown one is refused by name before any charge. The
        backend is set by ``backend=``, and the sensitivity is the task's (the release states
        it), so neither is accepted here.

    Returns
    -------
    Release
    """
    caller = "private_select"
    return _checked_select(task, constraint, epsilon=check_epsilon(epsilon, caller=caller),
                           delta=check_delta(delta, caller=caller), method=method,
                           backend=backend, budget=budget, rng=rng, options=options,
                           caller=caller)


def _checked_select(task: Task, constraint: ConstraintSpec, *, epsilon: float, delta: float,
                    method: str, backend: Any, budget: Any, rng: Any,
                    options: Mapping[str, Any] | None, caller: str) -> Release:
    """:func:`private_select` of an ``epsilon`` and ``delta`` that the caller's public entry
    (``caller``, such as ``dpsubmod select``) validated: they are not checked again below it.

    Parameters
    ----------
    task, constraint, method, backend, budget, rng, options
        As in :func:`private_select`.
    epsilon, delta : float
        The release's privacy cost, already validated (``epsilon`` finite and > 0, ``delta``
        in [0, 1)).
    caller : str
        The public entry, which the method's refusals name.

    Returns
    -------
    Release
    """
    spec = get_method(method)
    if not spec.private:
        raise ValidationError(f"method {method!r} is not private; a release needs one of: "
                              f"{', '.join(list_methods(private=True))}.")
    backend = choose_backend(backend, rng, caller=caller, supported=spec.backends)
    name = str(backend_name(backend))
    if name not in spec.backends:
        raise ValidationError(f"method {method} draws its noise on the "
                              f"{' or '.join(spec.backends)} backend only; choose backend "
                              f"{spec.backends[0]!r} or another method.")
    opts = _method_options(options, spec)
    with backend_chosen():
        result = _maximize_checked(task.f, constraint.constraint, method, epsilon=epsilon,
                                   delta=delta, budget=budget, rng=rng, backend=backend,
                                   caller=caller, **opts)
    rep = result.privacy
    if rep is None or rep.epsilon > epsilon or rep.delta > delta:
        raise BudgetExceededError(
            f"{method} reported a spend of {rep} above the requested (epsilon={epsilon:g}, "
            f"delta={delta:g}); nothing was released.")
    params = {"method": method, "backend": name,
              "seed": rng if isinstance(rng, (int, np.integer)) else None,
              "epsilon": epsilon, "delta": delta,
              "method_params": {k: v for k, v in result.params.items()
                                if isinstance(v, (int, float, str, bool, type(None)))}}
    budget_file = None
    if budget is not None and getattr(budget, "path", None) is not None:
        budget_file = Path(budget.path).name
    return Release(task=task, constraint=constraint,
                   selection=tuple(int(e) for e in result.selection), privacy=rep,
                   method=method, params=params, requested=(epsilon, delta), budget=budget,
                   budget_file=budget_file, value=float(result.diagnostics.value),
                   evaluations=int(result.evaluations), trace=tuple(result.diagnostics.trace))
