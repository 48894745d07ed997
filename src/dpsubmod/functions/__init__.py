"""Set functions: the SetFunction contract, the families and the combinators.

One module per family (``modular``, ``coverage``, ``facility_location``, ``graph_cut``,
``feature_based``, ``mutual_information``, ``influence``) and one for the combinators; every
public class is re-exported here under a flat name.
"""

from .._lazy import lazy_exports

#: Where each exported name is defined; it loads on first use (PEP 562).
_WHERE = {
    "base": ("DataModel", "FunctionState", "SetFunction",),
    "combinators": ("Restricted", "Scaled", "Sum", "Truncated",),
    "coverage": ("Coverage",),
    "facility_location": ("FacilityLocation",),
    "feature_based": ("FeatureBased",),
    "graph_cut": ("GraphCut",),
    "influence": ("InfluenceSpread",),
    "ksubmodular": (
        "KCoverage", "KFacilityLocation", "KSensorPlacement", "KSubmodularFunction",
        "KTopicInfluence", "PerLabelSum",
    ),
    "modular": ("Modular",),
    "mutual_information": ("MutualInformation",),
}

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

__getattr__, __dir__ = lazy_exports(__name__, _WHERE)
