"""Differential privacy building blocks: the budget, mechanisms, noise backends, continual
release, composition and auditing.

* :class:`Budget` (:mod:`~dpsubmod.privacy.budget`): the user's budget, charged before any noise
  by every release, with adaptive privacy filters (:mod:`~dpsubmod.privacy.filters`);
  :class:`FileBudget` persists one in a file shared between processes;
* :mod:`~dpsubmod.privacy.mechanisms`: Laplace, Gaussian (classic, analytic, zCDP), l2 Laplace,
  exponential mechanism, report-noisy-max, permute-and-flip, with calibration helpers and
  privacy maps;
* :mod:`~dpsubmod.privacy.composition`: composition inside one call whose steps are fixed in
  advance, and :func:`split_budget`, the one way a call splits its budget over its steps;
* :mod:`~dpsubmod.privacy.backends`: the seeded numpy backend (simulation) and the secure backend;
* :mod:`~dpsubmod.privacy.continual`: tree aggregation (binary mechanism) for vector streams;
* :mod:`~dpsubmod.privacy.checking` (an exact checker) and :mod:`~dpsubmod.privacy.audit` (a
  black-box auditor, :func:`~dpsubmod.privacy.audit.audit_mechanism`).

The auditor needs ``scipy.stats``, whose import costs about as much as the rest of the package
together, and no release uses it; :mod:`~dpsubmod.privacy.audit` and its names load on first
use. ``dpsubmod.privacy.audit`` is always that module; calling it runs ``audit_mechanism``, as
the earlier ``audit`` function did.
"""

import importlib
from typing import TYPE_CHECKING

from .backends import BACKENDS, NoiseBackend, NumpyBackend, SecureBackend, resolve_backend
from .budget import Budget
from .budget_file import FileBudget
from .calibration import (
    exponential_mechanism_epsilon,
    exponential_mechanism_weight,
    gaussian_delta,
    gaussian_rho,
    gaussian_sigma,
    laplace_epsilon,
    laplace_scale,
    report_noisy_max_epsilon,
    report_noisy_max_scale,
)
from .checking import ExactCheckResult, exact_check, hockey_stick
from .composition import COMPOSITIONS, Split, compose, compose_epsilon, split_budget
from .continual import TreeAggregator
from .events import PrivacyEvent
from .filters import FILTERS
from .kov import advanced_composition, basic_composition, kov_composition
from .ledger import Ledger, PrivacyReport
from .mechanisms import (
    exponential_mechanism,
    exponential_mechanism_probabilities,
    gaussian,
    l2_laplace,
    laplace,
    permute_and_flip,
    permute_and_flip_probabilities,
    report_noisy_max,
)
from .plan import PrivacyPlan
from .zcdp import rho_for_target, zcdp_to_dp

if TYPE_CHECKING:
    from . import audit
    from .audit import AuditResult, audit_mechanism, clopper_pearson

_AUDIT_NAMES = frozenset({"AuditResult", "audit_mechanism", "clopper_pearson"})

__all__ = [
    # the budget and its records
    "Budget", "FileBudget", "Ledger", "PrivacyEvent", "PrivacyReport", "PrivacyPlan",
    "FILTERS", "COMPOSITIONS",
    # mechanisms
    "laplace", "gaussian", "l2_laplace", "exponential_mechanism", "report_noisy_max",
    "permute_and_flip", "exponential_mechanism_probabilities", "permute_and_flip_probabilities",
    # calibration and privacy maps
    "laplace_scale", "laplace_epsilon", "gaussian_sigma", "gaussian_delta", "gaussian_rho",
    "exponential_mechanism_weight", "exponential_mechanism_epsilon", "report_noisy_max_scale",
    "report_noisy_max_epsilon",
    # composition
    "compose", "compose_epsilon", "split_budget", "Split", "basic_composition",
    "advanced_composition", "kov_composition", "zcdp_to_dp", "rho_for_target",
    # backends and continual release
    "NoiseBackend", "NumpyBackend", "SecureBackend", "BACKENDS", "resolve_backend",
    "TreeAggregator",
    # auditing
    "exact_check", "ExactCheckResult", "hockey_stick", "audit_mechanism", "AuditResult",
    "clopper_pearson", "audit",
]


def __getattr__(name: str):
    # Loads the auditor on first use (PEP 562); importing the submodule also binds
    # ``dpsubmod.privacy.audit`` to it, so later look-ups do not come here.
    if name == "audit" or name in _AUDIT_NAMES:
        module = importlib.import_module(f"{__name__}.audit")
        return module if name == "audit" else getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | _AUDIT_NAMES | {"audit"})
