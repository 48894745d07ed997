"""k-type sensor placement: a per-type coverage objective on candidate locations."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from ..._rng import RNGLike, as_generator
from ..._validation import check_finite
from ...errors import ValidationError
from .._inputs import pow2_unscale
from .coverage import KCoverage


def _coverage_sets(points: np.ndarray, locations: np.ndarray, radii: np.ndarray
                   ) -> list[sp.csr_array]:
    e = pow2_unscale(points, locations, radii)
    if e:  # magnitudes near the float limit: compare on exactly rescaled coordinates
        points, locations, radii = (np.ldexp(a, -e) for a in (points, locations, radii))
    d2 = ((locations[:, None, :] - points[None, :, :]) ** 2).sum(axis=2)   # (n, N)
    return [sp.csr_array((d2 <= r * r).astype(np.float64)) for r in radii]


class KSensorPlacement(KCoverage):
    r"""k-type sensor placement: each location hosts at most one sensor, of one of ``k`` types.

    A type-``i`` sensor at location ``q_e`` measures quantity ``i`` (temperature, humidity, ...)
    at every point within its range ``rho_i``. Each record is a point ``p_c`` (for example a
    household) with a demand ``d_{ci}`` in ``[0, 1]`` for each quantity; the objective is the mean
    satisfied demand

    .. math::
        F(\mathbf x) = \frac{1}{N} \sum_{c=1}^{N} \sum_{i=1}^{k} d_{ci}\,
        [\exists e: x_e = i,\ \|p_c - q_e\| \le \rho_i],

    a per-type coverage (:class:`KCoverage` in ``"sum"`` mode), hence **monotone k-submodular**.
    Ohsaka and Yoshida (2015) place k kinds of sensors to maximise an entropy; this coverage form
    keeps the same structure (one sensor type per location) with a declared sensitivity.

    Parameters
    ----------
    points : array-like of shape (N, d)
        The records' positions (private).
    locations : array-like of shape (n, d)
        Candidate sensor locations (public; the ground set).
    radii : array-like of shape (k,)
        Range ``rho_i > 0`` of each sensor type.
    demands : array-like of shape (N, k), optional
        Demands in ``[0, 1]``; default 1.
    average : bool, default=True
        Divide by ``N`` (otherwise sum over records).

    Attributes
    ----------
    sensitivity : float
        ``k / N`` (``k`` without averaging) under **replace one record** (a point and its demands):
        one record contributes at most ``sum_i d_ci <= k`` before averaging.

    Examples
    --------
    >>> f = KSensorPlacement([[0.0, 0.0], [3.0, 0.0]], [[0.0, 0.0], [2.0, 0.0]], [1.0, 1.5])
    >>> f([1, 2])    # type 1 at (0, 0) covers point 0; type 2 at (2, 0) covers point 1
    1.0
    """

    neighbouring = "replace one record (a point and its k demands)"

    def __init__(self, points: Any, locations: Any, radii: Any, demands: Any = None, *,
                 average: bool = True):
        caller = type(self).__name__
        p = check_finite(points, "points", caller=caller, ndim=2, dtype=np.float64)
        q = check_finite(locations, "locations", caller=caller, ndim=2, dtype=np.float64)
        r = check_finite(radii, "radii", caller=caller, ndim=1, dtype=np.float64)
        if p.shape[1] != q.shape[1]:
            raise ValidationError(
                f"The 'points' and 'locations' of {caller} must have the same number of "
                f"coordinates; got {p.shape[1]} and {q.shape[1]}."
            )
        if q.shape[0] == 0 or p.shape[0] == 0 or q.shape[1] == 0:
            raise ValidationError(
                f"The 'locations' and 'points' of {caller} must each hold at least one row (a "
                f"candidate location, a record) of at least one coordinate; got locations of "
                f"shape {q.shape} and points of shape {p.shape}."
            )
        if r.size < 1 or r.min() <= 0:
            raise ValidationError(f"The 'radii' of {caller} must be positive, one per sensor type.")
        k, n_rec = r.size, p.shape[0]
        if demands is None:
            d = np.ones((k, n_rec))
        else:
            d = check_finite(demands, "demands", caller=caller, ndim=2, nonnegative=True,
                             dtype=np.float64)
            if d.shape != (n_rec, k):
                raise ValidationError(
                    f"The 'demands' of {caller} must have shape (N, k)=({n_rec}, {k}); got "
                    f"{d.shape}."
                )
            if d.size and d.max() > 1.0:
                raise ValidationError(f"The 'demands' of {caller} must lie in [0, 1].")
            d = d.T.copy()
        scale = 1.0 / n_rec if average else 1.0
        super().__init__(_coverage_sets(p, q, r), d * scale, mode="sum", record_bound=k * scale)
        self.points = p
        self.locations = q
        self.radii = r
        self.average = bool(average)

    @classmethod
    def from_records(cls, points: Any, locations: Any, radii: Any, demands: Any = None, *,
                     average: bool = True) -> KSensorPlacement:
        """Same as the constructor (the uniform entry point of record-built families)."""
        return cls(points, locations, radii, demands, average=average)

    def neighbour(self, rng: RNGLike = None) -> KSensorPlacement:
        """Replace one uniformly chosen record by a uniform point in the locations' bounding box
        with uniform demands in [0, 1]."""
        gen = as_generator(rng)
        j = int(gen.integers(self.n_records))
        lo, hi = self.locations.min(axis=0), self.locations.max(axis=0)
        pts = self.points.copy()
        pts[j] = gen.uniform(lo, hi)
        dem = self.weights.T * (self.n_records if self.average else 1.0)
        dem[j] = gen.uniform(0.0, 1.0, self.k)
        return type(self)(pts, self.locations, self.radii, np.clip(dem, 0.0, 1.0),
                          average=self.average)
