"""scikit-learn estimators: private selection with ``fit``, ``transform`` and a Pipeline.

* :class:`PrivateFeatureSelector`: a ``SelectorMixin`` that chooses the features with the most
  mutual information with ``y`` (``fit(X, y)``, ``transform``, ``get_support``, ``ranking_``).
* :class:`PrivateFacilityLocationSelector`: chooses exemplars from **public** candidates (or a
  public grid) that serve the private records best, in the manner of apricot's
  ``FacilityLocationSelection(k).fit(X)``; ``transform`` returns the chosen candidates.

Both are thin layers over :mod:`dpsubmod.tasks` (records and public inputs to an objective with
a declared sensitivity) and take ``epsilon``, ``delta``, ``method`` (a name from
``dpsubmod.list_methods(private=True)``), ``backend``, ``budget`` and ``random_state``.

**Each ``fit`` is a release**, charged to ``budget`` before any noise is drawn. Clones made by
scikit-learn (cross-validation, grid search) share the caller's budget, so a 5-fold
cross-validation charges it five times. Bounds, bins, thresholds and candidates are public
inputs: fix them without looking at the records, never by tuning them on the private data.

scikit-learn (>= 1.6) is an optional dependency, imported here only:
``pip install 'dpsubmod[sklearn]'``. Importing :mod:`dpsubmod` does not import it.
"""

from __future__ import annotations

from ..errors import MissingDependencyError

_SKLEARN_FLOOR = (1, 6)

try:
    import sklearn as _sklearn
except ImportError:  # pragma: no cover - exercised in environments without the extra
    raise MissingDependencyError(
        "dpsubmod.estimators needs scikit-learn >= 1.6: pip install 'dpsubmod[sklearn]'."
    ) from None


def _version(text: str) -> tuple[int, ...]:
    parts = []
    for p in text.split(".")[:2]:
        digits = "".join(c for c in p if c.isdigit())
        parts.append(int(digits or 0))
    return tuple(parts)


if _version(_sklearn.__version__) < _SKLEARN_FLOOR:  # pragma: no cover - floor is tested in CI
    raise MissingDependencyError(
        f"dpsubmod.estimators needs scikit-learn >= 1.6 (estimator tags and validate_data); "
        f"found {_sklearn.__version__}. Upgrade: pip install 'dpsubmod[sklearn]'."
    )

from ._base import expected_failed_checks  # noqa: E402
from .facility_location import PrivateFacilityLocationSelector  # noqa: E402
from .feature_selection import PrivateFeatureSelector  # noqa: E402

__all__ = ["PrivateFeatureSelector", "PrivateFacilityLocationSelector",
           "expected_failed_checks"]
