"""k-submodular functions: the KSubmodularFunction contract and its families.

A selection gives each item of ``range(n)`` at most one of ``k`` labels (a label vector in
``{0..k}^n``). See :mod:`dpsubmod.functions.ksubmodular.base` for the definitions and the
incremental-state contract.
"""

from .base import KSubmodularFunction, KSubmodularState, as_labels, labels_to_pairs
from .coverage import KCoverage
from .facility_location import KFacilityLocation
from .influence import KTopicInfluence, directed_edges, sample_rr_incidence
from .per_label import PerLabelSum
from .sensor import KSensorPlacement

__all__ = [
    "KSubmodularFunction",
    "KSubmodularState",
    "as_labels",
    "labels_to_pairs",
    "PerLabelSum",
    "KFacilityLocation",
    "KCoverage",
    "KTopicInfluence",
    "KSensorPlacement",
    "directed_edges",
    "sample_rr_incidence",
]
