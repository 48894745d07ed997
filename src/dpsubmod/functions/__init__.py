"""Set functions: the SetFunction contract, the families and the combinators.

One module per family (``modular``, ``coverage``, ``facility_location``, ``graph_cut``,
``feature_based``, ``mutual_information``, ``influence``) and one for the combinators; every
public class is re-exported here under a flat name.
"""

from .base import DataModel, FunctionState, SetFunction
from .combinators import Restricted, Scaled, Sum, Truncated
from .coverage import Coverage
from .facility_location import FacilityLocation
from .feature_based import FeatureBased
from .graph_cut import GraphCut
from .influence import InfluenceSpread
from .ksubmodular import (
    KCoverage,
    KFacilityLocation,
    KSensorPlacement,
    KSubmodularFunction,
    KTopicInfluence,
    PerLabelSum,
)
from .modular import Modular
from .mutual_information import MutualInformation

__all__ = [
    "SetFunction",
    "FunctionState",
    "DataModel",
    "Modular",
    "Coverage",
    "FacilityLocation",
    "GraphCut",
    "FeatureBased",
    "MutualInformation",
    "InfluenceSpread",
    "Sum",
    "Scaled",
    "Restricted",
    "Truncated",
    "KSubmodularFunction",
    "PerLabelSum",
    "KFacilityLocation",
    "KCoverage",
    "KTopicInfluence",
    "KSensorPlacement",
]
