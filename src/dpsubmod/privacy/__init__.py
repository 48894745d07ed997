"""Differential privacy building blocks: the budget, mechanisms, noise backends, continual
release, composition and auditing.

* :class:`Budget` (:mod:`~dpsubmod.privacy.budget`): the user's budget, charged before any noise
  by every release, with adaptive privacy filters (:mod:`~dpsubmod.privacy.filters`);
  :class:`FileBudget` persists one in a file shared between processes;
* mechanisms as objects built from public parameters, validated once, with a privacy map
  (:mod:`~dpsubmod.privacy.mechanisms` states the contract): additive noise
  (:mod:`~dpsubmod.privacy.additive`: Laplace, l2 Laplace;
  :mod:`~dpsubmod.privacy.gaussian_mechanism`: Gaussian), selection
  (:mod:`~dpsubmod.privacy.selection`: exponential mechanism;
  :mod:`~dpsubmod.privacy.noisy_max`: report-noisy-max, permute-and-flip), Hedge's exponential
  weights (:mod:`~dpsubmod.privacy.weights`), the exponential mechanism over the bases of a
  product law (:mod:`~dpsubmod.privacy.product`), each with its one-line free function, and the
  calibration helpers and privacy maps as functions
  (:mod:`~dpsubmod.privacy.calibration`, :mod:`~dpsubmod.privacy.gaussian_calibration`);
* :mod:`~dpsubmod.privacy.composition`: composition inside one call whose steps are fixed in
  advance; :mod:`~dpsubmod.privacy.split`: :func:`split_budget`, the one way a call splits its
  budget over its steps;
* :mod:`~dpsubmod.privacy.backends`: the seeded numpy backend (simulation) and the secure backend;
* :mod:`~dpsubmod.privacy.tree_aggregator`: tree aggregation (binary mechanism) for vector
  streams, calibrated in :mod:`~dpsubmod.privacy.continual`;
* :mod:`~dpsubmod.privacy.checking` (an exact checker) and :mod:`~dpsubmod.privacy.audit` (a
  black-box auditor, :func:`~dpsubmod.privacy.audit.audit_mechanism`).

Every name loads from its module on first use, so a release loads only the pieces it uses
(the auditor, for one, needs ``scipy.stats``, and no release uses it).
``dpsubmod.privacy.audit`` is always that module; calling it runs ``audit_mechanism``, as the
earlier ``audit`` function did.
"""

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

#: Where each exported name is defined; it loads on first use (PEP 562).
_WHERE = {
    "backends": ("BACKENDS", "NoiseBackend", "NumpyBackend", "SecureBackend", "resolve_backend",),
    "budget": ("Budget",),
    "budget_file": ("FileBudget",),
    "calibration": (
        "exponential_mechanism_epsilon", "exponential_mechanism_weight", "l2_laplace_epsilon",
        "l2_laplace_scale", "laplace_epsilon", "laplace_scale", "report_noisy_max_epsilon",
        "report_noisy_max_scale",
    ),
    "gaussian_calibration": (
        "gaussian_delta", "gaussian_rho", "gaussian_sigma", "gaussian_sigma_analytic",
        "gaussian_sigma_classic", "gaussian_sigma_zcdp", "zcdp_rho_for",
    ),
    "checking": ("ExactCheckResult", "exact_check", "hockey_stick",),
    "composition": ("COMPOSITIONS", "compose", "compose_epsilon",),
    "split": ("Split", "split_budget",),
    "tree_aggregator": ("TreeAggregator",),
    "events": ("PrivacyEvent",),
    "filters": ("FILTERS",),
    "kov": ("advanced_composition", "basic_composition", "kov_composition",),
    "ledger": ("Ledger", "PrivacyReport",),
    "mechanisms": ("Mechanism",),
    "additive": ("L2Laplace", "Laplace", "l2_laplace", "laplace"),
    "gaussian_mechanism": ("Gaussian", "gaussian"),
    "selection": (
        "ExponentialMechanism", "exponential_mechanism", "exponential_mechanism_probabilities",
    ),
    "noisy_max": (
        "PermuteAndFlip", "ReportNoisyMax", "permute_and_flip", "permute_and_flip_probabilities",
        "report_noisy_max",
    ),
    "weights": ("ExponentialWeights",),
    "product": ("ProductBaseExponential",),
    "plan": ("PrivacyPlan",),
    "zcdp": ("rho_for_target", "zcdp_to_dp",),
    "audit": ("AuditResult", "audit_mechanism", "clopper_pearson"),
}

if TYPE_CHECKING:
    from . import audit
    from .audit import AuditResult, audit_mechanism, clopper_pearson

__all__ = [
    # the budget and its records
    "Budget", "FileBudget", "Ledger", "PrivacyEvent", "PrivacyReport", "PrivacyPlan",
    "FILTERS", "COMPOSITIONS",
    # mechanisms: objects, then their free functions
    "Mechanism", "Laplace", "Gaussian", "L2Laplace", "ExponentialMechanism", "ReportNoisyMax",
    "PermuteAndFlip", "ExponentialWeights", "ProductBaseExponential",
    "laplace", "gaussian", "l2_laplace", "exponential_mechanism", "report_noisy_max",
    "permute_and_flip", "exponential_mechanism_probabilities", "permute_and_flip_probabilities",
    # calibration and privacy maps
    "laplace_scale", "laplace_epsilon", "l2_laplace_scale", "l2_laplace_epsilon",
    "gaussian_sigma", "gaussian_sigma_classic", "gaussian_sigma_analytic", "gaussian_sigma_zcdp",
    "gaussian_delta", "gaussian_rho", "zcdp_rho_for", "exponential_mechanism_weight",
    "exponential_mechanism_epsilon", "report_noisy_max_scale", "report_noisy_max_epsilon",
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


__getattr__, __dir__ = lazy_exports(__name__, _WHERE, modules=("audit",))
