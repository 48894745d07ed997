"""Facility location over private points held in memory, as a record objective.

What :meth:`dpsubmod.functions.FacilityLocation.from_records` returns for its built-in
similarities: the record objective of ``FacilityLocation.from_chunks`` (O(N) state, float32
fixed-point kernels, no ``N x n`` matrix) over the points as one block, plus what callers of the
dense objective read from it (the similarities on demand, the weights, a neighbour that replaces
one row of ``points``).
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

from ...errors import ValidationError
from .._inputs import replaced_points
from .build import _objective
from .kernels import UNITS, DistanceKernel, GaussianKernel
from .objective import LocalBlocks, RecordObjective, prepare

#: Public scales (bandwidth, radius, spread of the candidates around their centre) for which
#: the float32 kernels neither overflow nor underflow; outside them ``from_records`` keeps the
#: dense float64 matrix.
FLOAT32_SCALES = (1e-15, 1e15)


def _origin(C: np.ndarray) -> np.ndarray:
    """Centre of the candidates' bounding box (public): coordinates are taken relative to it
    before rounding to float32, so that the rounding is relative to the candidates' spread and
    not to the coordinates' distance from 0 (longitudes near -74, say)."""
    return 0.5 * (C.min(axis=0) + C.max(axis=0))


def float32_scales(C: np.ndarray, scale: float) -> bool:
    """Whether the float32 kernels fit the public candidates and bandwidth or radius."""
    lo, hi = FLOAT32_SCALES
    spread = float(np.abs(C - _origin(C)).max()) if C.size else 0.0
    return lo <= scale <= hi and spread <= hi


class RecordFacilityLocation(RecordObjective):
    r"""Average facility location over private points held in memory (no ``N x n`` matrix).

    Returned by :meth:`dpsubmod.functions.FacilityLocation.from_records` for the built-in
    similarities: the :class:`~dpsubmod.functions.records.RecordObjective` of
    ``FacilityLocation.from_chunks`` over the points as one block, with coordinates taken
    relative to the centre of the candidates' bounding box (a public shift) before they are
    rounded to float32. Same sensitivity ``s_max / N``, ``data_model = "monotone-records"`` and
    replace-one relation as the dense objective.

    Attributes
    ----------
    similarity : ndarray of float64, shape (N, n)
        Every point's similarity to every candidate as the objective uses it (a multiple of
        ``s_max / 2**24``), rows in the order of ``points``. Built on first access and kept
        (``N n`` floats: the matrix the objective otherwise never holds).
    weights : ndarray of float64, shape (N,)
        ``1 / N`` for every point.
    n_clients : int
        ``N``.
    """

    # The privacy statement of the dense objective, word for word: same family, same relation
    # (replace one row of ``points``, N public).
    statement_name = "FacilityLocation"

    _points: np.ndarray
    _candidates: np.ndarray
    _dense: np.ndarray | None

    @classmethod
    def build(cls, points: np.ndarray, candidates: np.ndarray, similarity: str,
              scale: float) -> RecordFacilityLocation:
        """The objective over validated float64 ``points`` and ``candidates`` (kept, not
        copied)."""
        o = _origin(candidates)
        if similarity == "gaussian":
            kernel: Any = GaussianKernel(candidates - o, scale)
        else:
            kernel = DistanceKernel(candidates - o, scale)
        with np.errstate(over="ignore"):  # beyond float32: infinitely far, similarity 0
            X = (points - o).astype(np.float32)
        block = prepare(kernel, X)
        # partial(iter, ...) rather than a lambda: the objective pickles
        local = LocalBlocks(partial(iter, (block,)), 1, [X.shape[0]])
        f = _objective(kernel, local, X.shape[0], None, "replace-one", cls=cls)
        f.neighbouring = "replace one record"
        f._points, f._candidates = points, candidates
        f._origin, f._similarity_kind, f._scale = o, similarity, float(scale)
        f._rows32 = X  # in the order of points (the block is sorted)
        f._dense = None
        return f

    @property
    def similarity(self) -> np.ndarray:
        if self._dense is None:
            S = self.kernel.block(self._rows32).astype(np.float64)
            S *= self.kernel.s_max / UNITS
            self._dense = S
        return self._dense

    @property
    def weights(self) -> np.ndarray:
        return np.full(self.n_rows, 1.0 / self.n_rows)

    @property
    def n_clients(self) -> int:
        return self.n_rows

    def neighbour(self, rng: Any = None, *, index: int | None = None, point: object = None,
                  record: object = None) -> RecordFacilityLocation:
        """The same objective with one row of ``points`` replaced (replace-one relation).

        Parameters
        ----------
        rng : int, Generator or None, default=None
            Used only for what is not given: the index (uniform over the rows) and the new point
            (uniform in the bounding box of the public candidates).
        index : int, optional
            Which row of ``points`` to replace.
        point : array-like, shape (d,), optional
            The replacement record (``record`` is accepted as another name for it).
        """
        caller = "FacilityLocation.neighbour"
        if point is not None and record is not None:
            raise ValidationError(f"{caller} takes the replacement as 'point' or 'record', not "
                                  "both; pass one.")
        point = record if point is None else point
        P, _ = replaced_points(self._points, self._candidates, rng, index, point, caller)
        return type(self).build(P, self._candidates, self._similarity_kind, self._scale)
