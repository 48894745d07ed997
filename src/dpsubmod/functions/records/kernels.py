"""Per-record kernels of the record-partitioned objectives, in fixed point.

A kernel maps a block of records (rows) to each record's term for every candidate, as
**integers** in ``[0, 2**UNIT_BITS]`` stored in float32 (exact up to 2**24). Every sum over
records is taken in float64 over these integers, which is exact while it stays below 2**53,
that is for up to 2**29 rows: the sum is the same bit for bit in any order, on any partition of
the records, on one machine or many. This is how the declared sensitivity survives
floating-point summation (Casacuberta, Shoemate, Vadhan and Wagaman, CCS 2022): each record's
term is a function of that record alone (elementwise float32 arithmetic, never a BLAS
reduction across records), rounded down to the grid, so it lies in ``[0, 2**UNIT_BITS]``
units, and the sum of the terms is exact; ``docs/privacy.md`` has the argument.

The quantized term differs from the real one by less than one unit (``s_max / 2**24``).
"""

from __future__ import annotations

import itertools
import math

import numpy as np

#: Fixed-point resolution of a record's term: ``2**UNIT_BITS`` units is its largest value.
UNIT_BITS = 24
UNITS = float(2 ** UNIT_BITS)
#: Largest number of rows whose sum of terms stays exact in float64 (2**53 / 2**24).
MAX_ROWS = 2 ** 29
_F32_MAX = float(np.finfo(np.float32).max)


class GaussianKernel:
    """``floor(2**24 * prod_k exp(-(x_k - c_k)^2 / (2 h^2)))``: the Gaussian similarity.

    The product of per-coordinate factors equals ``exp(-||x - c||^2 / (2 h^2))``; computing it
    per coordinate lets a grid of candidates reuse one factor per distinct coordinate value.
    Each entry is the same float32 expression of one record and one candidate whichever path
    computes it (full block, one column, any block size), so a record's term never depends on
    its neighbours in the block.
    """

    s_max = 1.0

    def __init__(self, candidates: np.ndarray, bandwidth: float):
        C = np.asarray(candidates, dtype=np.float64)
        self.n, self.d = C.shape
        self.bandwidth = float(bandwidth)
        # 1/(2h^2) without overflow or a division by zero for tiny h: capped at float32's max,
        # where exp(-d2 * inv) is 0 for any d2 > 0 and 1 at d2 == 0.
        inv = 0.5 / self.bandwidth / self.bandwidth
        self.inv = np.float32(min(inv, _F32_MAX))
        self.values: list[np.ndarray] = []
        self.index: list[np.ndarray] = []
        for k in range(self.d):
            u, idx = np.unique(C[:, k].astype(np.float32), return_inverse=True)
            self.values.append(u)
            self.index.append(idx.astype(np.intp))
        # A full product grid (in some axis order) multiplies factor tables by broadcasting
        # instead of gathering. The factors are always multiplied in ``order``, on every path,
        # so that a record's term is the same float32 product whichever path computes it.
        self.order = tuple(range(self.d))
        self.grid: tuple[int, ...] | None = None
        # Beyond ``reach`` along any axis a factor is at most 2**-25 (with float32 rounding
        # far inside the margin), so the term floor(2**24 * product) is exactly 0 there: a
        # block of nearby records needs only the candidates in its window.
        self.reach = float(np.sqrt(25.0 * math.log(2.0) / float(self.inv)))
        sizes = [u.size for u in self.values]
        if math.prod(sizes) == self.n and self.d <= 4:
            for order in itertools.permutations(range(self.d)):
                expect = np.indices([sizes[k] for k in order]).reshape(self.d, -1)
                if all(np.array_equal(self.index[k], expect[pos])
                       for pos, k in enumerate(order)):
                    self.order, self.grid = order, tuple(sizes[k] for k in order)
                    break

    def random_record(self, gen: np.random.Generator) -> np.ndarray:
        """A record uniform in the candidates' bounding box (for neighbouring instances)."""
        lo = np.array([u[0] for u in self.values], dtype=np.float64)
        hi = np.array([u[-1] for u in self.values], dtype=np.float64)
        return lo + (hi - lo) * gen.random(self.d)

    def _factor(self, x: np.ndarray, u: np.ndarray) -> np.ndarray:
        t = np.subtract(x[:, None], u[None, :], dtype=np.float32)
        t *= t
        with np.errstate(over="ignore"):
            t *= -self.inv
        return np.exp(t, out=t)

    def sort_rows(self, P: np.ndarray) -> np.ndarray:
        """An order of the rows that keeps nearby records together (cells of side reach)."""
        if P.shape[0] < 2 or not math.isfinite(self.reach) or self.reach <= 0:
            return np.arange(P.shape[0])
        side = self.reach / 8.0
        cells = [np.floor((P[:, k] - self.values[k][0]) / side) for k in self.order]
        return np.lexsort(cells[::-1])

    def window(self, P: np.ndarray, floor: float = 0.0) -> list[tuple[int, int]]:
        """Per axis (in ``order``), the range of candidate values within reach of ``P``.

        With ``floor > 0`` (every row's current best term is at least ``floor`` units) the
        reach shrinks to where a factor can still exceed ``floor / 2`` units: beyond it a term
        is below the row's best and adds nothing to a gain.
        """
        reach = self.reach
        if floor >= 2.0:
            reach = min(reach, float(np.sqrt(-math.log(floor / 2.0 / UNITS) /
                                             float(self.inv))))
        out = []
        for k in self.order:
            x = P[:, k]
            u = self.values[k]
            a = int(np.searchsorted(u, float(x.min()) - reach, side="left"))
            b = int(np.searchsorted(u, float(x.max()) + reach, side="right"))
            out.append((a, b))
        return out

    def columns(self, win: list[tuple[int, int]]) -> np.ndarray | None:
        """Candidate indices inside a window, in the column order of ``block``; None = all."""
        if all(a == 0 and b == self.values[k].size for (a, b), k in zip(win, self.order)):
            return None
        if self.grid is not None:
            axes = np.ix_(*[np.arange(a, b) for a, b in win])
            return np.ravel_multi_index(axes, self.grid).ravel()
        inside = np.ones(self.n, dtype=bool)
        for (a, b), k in zip(win, self.order):
            inside &= (self.index[k] >= a) & (self.index[k] < b)
        return np.flatnonzero(inside)

    def block(self, P: np.ndarray, win: list[tuple[int, int]] | None = None,
              cols: np.ndarray | None = None) -> np.ndarray:
        """Terms of every record of ``P`` (float32, shape (B, d)) for every candidate, or for
        the candidates ``cols = columns(win)`` of a window."""
        B = P.shape[0]
        if cols is None:
            win = [(0, self.values[k].size) for k in self.order]
        tabs = [self._factor(np.ascontiguousarray(P[:, k]), self.values[k][a:b])
                for (a, b), k in zip(win, self.order)]
        if self.grid is not None:
            out = tabs[0]
            for t in tabs[1:]:
                out = out.reshape(B, -1)[:, :, None] * t[:, None, :]
            out = out.reshape(B, -1)
        else:
            sel = np.arange(self.n) if cols is None else cols
            ks = self.order
            out = tabs[0].take(self.index[ks[0]][sel] - win[0][0], axis=1)
            for t, k, (a, _) in zip(tabs[1:], ks[1:], win[1:]):
                out *= t.take(self.index[k][sel] - a, axis=1)
        out *= np.float32(UNITS)
        return np.floor(out, out=out)

    def column(self, P: np.ndarray, e: int) -> np.ndarray:
        """Terms of every record of ``P`` for candidate ``e`` (equal to ``block(P)[:, e]``)."""
        out = None
        for k in self.order:
            u = self.values[k][self.index[k][e]:self.index[k][e] + 1]
            f = self._factor(np.ascontiguousarray(P[:, k]), u)[:, 0]
            out = f if out is None else out * f
        out = out * np.float32(UNITS)
        return np.floor(out, out=out)


class DistanceKernel:
    """``floor(2**24 * max(0, D - ||x - c||) / D)``: negative distance in units of D / 2**24."""

    def __init__(self, candidates: np.ndarray, radius: float):
        self.C = np.asarray(candidates, dtype=np.float32)
        self.n, self.d = self.C.shape
        self.radius = float(radius)
        self.s_max = self.radius
        self._D = np.float32(radius)
        self._scale = np.float32(UNITS / radius)

    def _finish(self, d2: np.ndarray) -> np.ndarray:
        np.sqrt(d2, out=d2)
        np.subtract(self._D, d2, out=d2)
        np.maximum(d2, 0, out=d2)
        d2 *= self._scale
        np.minimum(d2, np.float32(UNITS), out=d2)
        return np.floor(d2, out=d2)

    def random_record(self, gen: np.random.Generator) -> np.ndarray:
        lo, hi = self.C.min(axis=0).astype(np.float64), self.C.max(axis=0).astype(np.float64)
        return lo + (hi - lo) * gen.random(self.d)

    def sort_rows(self, P: np.ndarray) -> np.ndarray:
        if P.shape[0] < 2:
            return np.arange(P.shape[0])
        lo = self.C.min(axis=0)
        cells = [np.floor((P[:, k] - lo[k]) / self.radius) for k in range(self.d)]
        return np.lexsort(cells[::-1])

    def window(self, P: np.ndarray, floor: float = 0.0) -> list[tuple[float, float]]:
        # beyond D (with a margin for float32 rounding) along any axis the term is exactly 0
        r = self.radius * (1.0 + 1e-5)
        return [(float(P[:, k].min()) - r, float(P[:, k].max()) + r) for k in range(self.d)]

    def columns(self, win: list[tuple[float, float]]) -> np.ndarray | None:
        inside = np.ones(self.n, dtype=bool)
        for k, (a, b) in enumerate(win):
            inside &= (self.C[:, k] >= a) & (self.C[:, k] <= b)
        return None if inside.all() else np.flatnonzero(inside)

    def block(self, P: np.ndarray, win: object = None,
              cols: np.ndarray | None = None) -> np.ndarray:
        C = self.C if cols is None else self.C[cols]
        d2 = np.zeros((P.shape[0], C.shape[0]), dtype=np.float32)
        for k in range(self.d):
            t = np.subtract(P[:, k:k + 1], C[None, :, k], dtype=np.float32)
            t *= t
            d2 += t
        return self._finish(d2)

    def column(self, P: np.ndarray, e: int) -> np.ndarray:
        d2 = np.zeros((P.shape[0], 1), dtype=np.float32)
        for k in range(self.d):
            t = np.subtract(P[:, k:k + 1], self.C[None, e:e + 1, k], dtype=np.float32)
            t *= t
            d2 += t
        return self._finish(d2)[:, 0]


class CoverageKernel:
    """Coverage of a person (a row of a 0/1 membership table): ``2**24`` units when covered."""

    s_max = 1.0

    def __init__(self, n_sets: int):
        self.n = int(n_sets)

    def block(self, M: np.ndarray, win: object = None,
              cols: np.ndarray | None = None) -> np.ndarray:
        return np.where(M > 0, np.float32(UNITS), np.float32(0))

    def column(self, M: np.ndarray, e: int) -> np.ndarray:
        return np.where(M[:, e] > 0, np.float32(UNITS), np.float32(0))

    def random_record(self, gen: np.random.Generator) -> np.ndarray:
        return (gen.random(self.n) < 0.5).astype(np.float64)


class ConcaveKernel:
    """A record's term ``floor(2**24 * clip(g(sum_{e in S} m_e), 0, cap) / cap)`` (feature based).

    Not of the max form above: the state is the record's running sum ``sum_{e in S} m_e``.
    ``g`` must act elementwise (a built-in ufunc, or a :class:`PublicTable` of a user's
    function), so a record's term depends on its own sum alone; the clip from both sides keeps
    it in ``[0, cap]`` whatever ``g`` returns, which is what the sensitivity ``cap / N`` needs.
    """

    def __init__(self, n_items: int, g: object, cap: float, value_max: float):
        self.n = int(n_items)
        self.g = g
        self.s_max = float(cap)
        self.value_max = float(value_max)

    def term(self, c: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", over="ignore"):
            v = np.asarray(self.g(c), dtype=np.float64)  # type: ignore[operator]
        v = np.clip(np.nan_to_num(v, nan=0.0), 0.0, self.s_max)
        return np.floor(v * (UNITS / self.s_max))

    def values(self, M: np.ndarray) -> np.ndarray:
        return np.clip(M.astype(np.float64), 0.0, self.value_max)

    def random_record(self, gen: np.random.Generator) -> np.ndarray:
        return self.value_max * gen.random(self.n)


class PublicTable:
    """A user's function ``g``, read once on a public grid and interpolated linearly.

    ``g`` is called once, on the grid (equally spaced public points from 0), never on a record:
    whatever it does with its input (look across the array, keep state between calls), the
    table is a function of public inputs only. Each value is then the interpolation at one
    record's own sum (elementwise: the cell index is computed, not searched), so a record's
    term depends on that record alone. Sums beyond the grid take its last value.
    """

    def __init__(self, grid: np.ndarray, table: np.ndarray):
        self.grid = np.asarray(grid, dtype=np.float64)
        self.table = np.asarray(table, dtype=np.float64)
        self.step = float(self.grid[-1] / (self.grid.size - 1))
        self.slope = np.append(np.diff(self.table), 0.0)

    def __call__(self, c: np.ndarray) -> np.ndarray:
        last = self.grid.size - 1
        x = np.nan_to_num(np.asarray(c, dtype=np.float64), nan=0.0) / self.step
        np.clip(x, 0.0, float(last), out=x)
        i = x.astype(np.intp)
        x -= i
        return self.table[i] + x * self.slope[i]
