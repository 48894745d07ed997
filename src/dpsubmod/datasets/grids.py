"""Public candidate grids: the centres of a grid of cells on a public box."""

from __future__ import annotations

import numpy as np

from .._validation import check_finite, check_int
from ..errors import ValidationError


def grid_candidates(rows: int, cols: int, bounds: object) -> np.ndarray:
    """Public candidate locations: the centres of a ``rows x cols`` grid of cells on a box.

    ``bounds = (xmin, xmax, ymin, ymax)`` must be public (fixed from the map, not from the
    private points). The result has shape ``(rows * cols, 2)``, columns ``(x, y)``, ordered by
    row (increasing ``y``) then by column (increasing ``x``). Not random.

    Examples
    --------
    >>> grid_candidates(1, 2, (0, 2, 0, 1)).tolist()
    [[0.5, 0.5], [1.5, 0.5]]
    """
    caller = "grid_candidates"
    rows = check_int(rows, "rows", low=1, caller=caller)
    cols = check_int(cols, "cols", low=1, caller=caller)
    b = check_finite(np.asarray(bounds, dtype=float), "bounds", caller=caller, ndim=1)
    if b.shape != (4,) or not (b[0] < b[1] and b[2] < b[3]):
        raise ValidationError(
            f"The 'bounds' parameter of {caller} must be (xmin, xmax, ymin, ymax) with "
            f"xmin < xmax and ymin < ymax; got {tuple(b.tolist())}."
        )
    xs = b[0] + (np.arange(cols) + 0.5) * (b[1] - b[0]) / cols
    ys = b[2] + (np.arange(rows) + 0.5) * (b[3] - b[2]) / rows
    gx, gy = np.meshgrid(xs, ys)
    return np.column_stack([gx.ravel(), gy.ravel()])
