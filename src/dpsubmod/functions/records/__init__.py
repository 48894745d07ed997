"""Record-partitioned objectives for data that do not fit as an N x n matrix.

Facility location, coverage and feature-based objectives built from records read in chunks
(an array, an iterable of arrays, a callable or chunk source re-read on every pass, see
:func:`dpsubmod.datasets.scan_records`) or partitioned on a Dask cluster (a Dask collection,
with ``scheduler=``). They hold O(N) per-record state and recompute the similarity blocks at
each greedy step; the gains are exact sums of fixed-point per-record terms, so in-memory,
chunked and distributed runs give the same selection at the same seed. Contribution bounding
(``user_id=``, ``max_rows_per_user=``) is in :mod:`.bounding`, the add/remove relation in
:mod:`.build`.

Build them with ``FacilityLocation.from_chunks``, ``Coverage.from_chunks`` and
``FeatureBased.from_chunks``; ``FacilityLocation.from_records`` builds a
:class:`RecordFacilityLocation` over points in memory.
"""

from .bounding import FirstRows
from .build import RELATIONS, build_record_objective
from .kernels import UNIT_BITS, ConcaveKernel, CoverageKernel, DistanceKernel, GaussianKernel
from .objective import RecordObjective
from .points import RecordFacilityLocation

__all__ = ["RecordObjective", "RecordFacilityLocation", "build_record_objective", "RELATIONS",
           "FirstRows", "UNIT_BITS", "GaussianKernel", "DistanceKernel", "CoverageKernel",
           "ConcaveKernel"]

