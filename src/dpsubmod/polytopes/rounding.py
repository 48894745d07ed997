"""Oblivious rounding of fractional points to sets.

Every rounding here reads only the point (or its convex decomposition), the public constraint
and its own coins, never the objective or the data. Applied to a privately released point it is
post-processing and costs no privacy. Deterministic pipage rounding, which compares objective
values, is deliberately absent: it is not post-processing (seed 002 notes, Section 2.4; seed 004
notes, Section 2.4).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from .._rng import RNGLike, as_generator
from .._validation import as_mask, check_finite, check_int, check_real
from ..constraints.base import Matroid, set_mask
from ..constraints.knapsack import Knapsack
from ..errors import ParameterTypeError, ValidationError
from .explicit import KnapsackPolytope
from .region import Region, as_region

_WEIGHT_TOL = 1e-9


def _check_matroid(m: object, caller: str) -> Matroid:
    if not isinstance(m, Matroid):
        raise ParameterTypeError(
            f"The 'matroid' parameter of {caller} must be a dpsubmod Matroid; got "
            f"{type(m).__name__}."
        )
    return m


def swap_rounding(matroid: Matroid, sets: Iterable[object], weights: object, *,
                  pad: str = "dummy", size: int | None = None,
                  rng: RNGLike = None) -> np.ndarray | list[np.ndarray]:
    r"""Swap rounding (Chekuri, Vondrak and Zenklusen 2010, "Dependent randomized rounding via
    exchange properties of combinatorial structures", MergeBases / SwapRound).

    Given :math:`x = \sum_i \beta_i 1_{B_i}` with bases :math:`B_i` and weights summing to 1,
    the bases are merged left to right: ``C = B_1``, then ``C = MERGE(beta_1 + .. + beta_{i-1}, C,
    beta_i, B_i)``. ``MERGE(b1, B1, b2, B2)``: while ``B1 != B2``, take the smallest
    ``a in B1 - B2``, find ``b in B2 - B1`` with ``B1 - a + b`` and ``B2 - b + a`` both bases (the
    strong exchange property guarantees one), and with probability ``b1 / (b1 + b2)`` set
    ``B2 = B2 - b + a``, else ``B1 = B1 - a + b``.

    Guarantee: the output is a base with :math:`E[1_{output}] = x`; for a monotone submodular
    ``F`` with multilinear extension ``f``, :math:`E[F(output)] \ge f(x)` (CVZ 2010, Theorem
    II.1). The rounding uses only the matroid, the decomposition and its own coins, so it is
    post-processing and costs no privacy.

    Independent sets that are not bases (continuous-greedy vertices of the independence polytope)
    are padded, chosen by ``pad``:

    * ``"dummy"`` (default): add ``rank`` dummy elements and round in the truncation of ``M``
      plus the dummies to rank ``r``, whose bases are the independent sets of ``M`` padded with
      dummies; dropping the dummies gives an independent set with :math:`E[1_{output}] = x`
      exactly (CVZ 2010, Section II).
    * ``"greedy"``: extend each set to a base in increasing index order (data-independent); the
      output is a base, with :math:`E[1_{output}] \ge x` coordinatewise (exact on the padded point).
    * ``"error"``: refuse non-bases.

    Parameters
    ----------
    matroid : Matroid
    sets : sequence of array-like of int (or boolean masks)
        The independent sets ``B_i``.
    weights : array-like of float
        Non-negative, summing to 1 (to 1e-9). Zero-weight sets are skipped.
    pad : {"dummy", "greedy", "error"}, default="dummy"
    size : int, optional
        Number of independent roundings to draw (the inputs are validated once).
    rng : int, Generator or None
        The rounding's coins (SPEC 7).

    Returns
    -------
    ndarray of int64, or list of them when ``size`` is given
        The rounded set(s), sorted.

    Cost: at most ``rank`` exchange steps per merge, each one vectorised ``can_add`` call plus
    up to ``rank`` single checks.
    """
    caller = "swap_rounding"
    m = _check_matroid(matroid, caller)
    if pad not in ("dummy", "greedy", "error"):
        raise ValidationError(
            f"The 'pad' parameter of {caller} must be 'dummy', 'greedy' or 'error'; got {pad!r}."
        )
    set_list = list(sets)
    w = check_finite(weights, "weights", caller=caller, ndim=1, nonnegative=True, dtype=float)
    if w.size != len(set_list) or w.size == 0:
        raise ValidationError(
            f"The 'weights' argument of {caller} must hold one weight per set; got {w.size} "
            f"weights for {len(set_list)} sets."
        )
    if abs(float(w.sum()) - 1.0) > _WEIGHT_TOL * max(1, w.size):
        raise ValidationError(
            f"The 'weights' of {caller} must sum to 1; they sum to {float(w.sum())!r}. Normalise "
            "them, or use ConvexDecomposition, which fills a deficit with the empty set."
        )
    n, r = m.n, m.rank
    masks = []
    for i, S in enumerate(set_list):
        mask = as_mask(S, n, f"sets[{i}]", caller=caller)
        if not m.is_independent(mask):
            raise ValidationError(
                f"The set sets[{i}] passed to {caller} is not independent in the matroid."
            )
        masks.append(mask.copy())
    sizes = [int(mk.sum()) for mk in masks]
    n_dummy = 0
    if any(s != r for s in sizes):
        if pad == "error":
            i = next(i for i, s in enumerate(sizes) if s != r)
            raise ValidationError(
                f"The set sets[{i}] passed to {caller} has {sizes[i]} elements but the matroid's "
                f"bases have {r}; pass pad='dummy' or pad='greedy', or extend it with "
                "matroid.extend_to_base."
            )
        if pad == "greedy":
            masks = [as_mask(m.extend_to_base(mk), n) for mk in masks]
        else:
            n_dummy = r
    if size is not None:
        size = check_int(size, "size", low=1, caller=caller)
    gen = as_generator(rng)
    padded = []
    for mk in masks:
        full = np.zeros(n + n_dummy, dtype=bool)
        full[:n] = mk
        if n_dummy:
            full[n:n + r - int(mk.sum())] = True
        padded.append(full)
    keep = [i for i in range(len(padded)) if w[i] > 0]
    draws = []
    for _ in range(1 if size is None else size):
        current = padded[keep[0]]
        acc = float(w[keep[0]])
        for i in keep[1:]:
            current = _merge(m, current, acc, padded[i], float(w[i]), gen)
            acc += float(w[i])
        draws.append(np.flatnonzero(current[:n]))
    return draws[0] if size is None else draws


def _merge(m: Matroid, B1: np.ndarray, b1: float, B2: np.ndarray, b2: float,
           gen: np.random.Generator) -> np.ndarray:
    """CVZ MergeBases on padded masks (indices >= n are dummies, free in the truncation)."""
    n = m.n
    B1, B2 = B1.copy(), B2.copy()
    p_keep_1 = b1 / (b1 + b2)
    while True:
        only1 = np.flatnonzero(B1 & ~B2)
        if only1.size == 0:
            return B1
        a = int(only1[0])
        only2 = np.flatnonzero(B2 & ~B1)
        # First exchange: B1 - a + b must be a base. A dummy b always is; a real b must keep
        # the real part independent.
        ok1 = only2 >= n
        real = only2[only2 < n]
        if real.size:
            rest1 = B1[:n].copy()
            if a < n:
                rest1[a] = False
            ok1[only2 < n] = m.can_add(rest1, real)
        chosen = -1
        for b in only2[ok1].tolist():
            # Second exchange: B2 - b + a must be a base (automatic when a is a dummy).
            if a >= n:
                chosen = b
                break
            rest2 = B2[:n].copy()
            if b < n:
                rest2[b] = False
            if m.can_add(rest2, [a])[0]:
                chosen = b
                break
        if chosen < 0:
            raise ValidationError(
                "swap_rounding found no symmetric exchange between two bases; the constraint's "
                "independence oracle does not satisfy the matroid axioms (check_matroid_axioms "
                "can locate the violation on a small instance)."
            )
        if gen.random() < p_keep_1:
            B2[chosen] = False
            B2[a] = True
        else:
            B1[a] = False
            B1[chosen] = True


class ConvexDecomposition:
    r"""A point of a matroid polytope kept as a convex combination of independent sets.

    Continuous greedy and DPCG build :math:`x = \sum_k \tfrac1K 1_{I_k}` from the sets their
    linear oracle returns (``MatroidPolytope.linear_max_set``), so they can record each step
    here instead of decomposing ``x`` afterwards. Repeated sets are merged. A total weight below 1
    is completed by the empty set (the vertex 0 of the independence polytope).

    Parameters
    ----------
    n : int
        Size of the ground set.

    Examples
    --------
    >>> from dpsubmod.constraints import UniformMatroid
    >>> d = ConvexDecomposition(4)
    >>> d.add([0, 1], 0.5); d.add([2, 3], 0.5)
    >>> d.point().tolist()
    [0.5, 0.5, 0.5, 0.5]
    >>> len(d.round(UniformMatroid(4, 2), rng=0))
    2
    """

    def __init__(self, n: int):
        self.n = int(n)
        self._index: dict[bytes, int] = {}
        self._sets: list[np.ndarray] = []
        self._weights: list[float] = []

    def add(self, S: object, weight: float) -> None:
        """Add ``weight * 1_S``."""
        wt = check_real(weight, "weight", low=0.0, caller="ConvexDecomposition.add")
        mask = set_mask(S, self.n)
        key = np.packbits(mask).tobytes()
        if key in self._index:
            self._weights[self._index[key]] += wt
        else:
            self._index[key] = len(self._sets)
            self._sets.append(np.flatnonzero(mask))
            self._weights.append(wt)

    @property
    def sets(self) -> list[np.ndarray]:
        return [s.copy() for s in self._sets]

    @property
    def weights(self) -> np.ndarray:
        return np.asarray(self._weights, dtype=float)

    @property
    def total_weight(self) -> float:
        return float(sum(self._weights))

    def point(self) -> np.ndarray:
        """``sum_i w_i 1_{S_i}``."""
        x = np.zeros(self.n)
        for s, wt in zip(self._sets, self._weights):
            x[s] += wt
        return x

    def round(self, matroid: Matroid, *, pad: str = "dummy", size: int | None = None,
              rng: RNGLike = None) -> np.ndarray | list[np.ndarray]:
        """Swap-round the decomposition (see :func:`swap_rounding`); a weight deficit goes to the
        empty set. Raises if the weights sum to more than 1."""
        total = self.total_weight
        if total > 1.0 + _WEIGHT_TOL * max(1, len(self._sets)):
            raise ValidationError(
                f"The weights of this ConvexDecomposition sum to {total!r} > 1; the point is not "
                "in the polytope."
            )
        sets, weights = self.sets, list(self._weights)
        if total < 1.0:
            sets.append(np.zeros(0, dtype=np.int64))
            weights.append(1.0 - total)
        w = np.asarray(weights) / max(1.0, total) if total > 1.0 else np.asarray(weights)
        return swap_rounding(matroid, sets, w, pad=pad, size=size, rng=rng)


def knapsack_rounding(knapsack: Knapsack | KnapsackPolytope, x: object, *,
                      rng: RNGLike = None) -> np.ndarray:
    r"""Cost-preserving randomized pipage rounding for the knapsack polytope
    :math:`\{x \in [0,1]^n : c^\top x \le b\}` (seed 002 notes, Section 2.4; Calinescu, Chekuri,
    Pal and Vondrak 2011 for the pipage idea).

    While two coordinates ``i < j`` (the two smallest indices) are fractional, move along
    ``d = e_i / c_i - e_j / c_j`` (which keeps ``c.x``) to one of the two points where ``x_i`` or
    ``x_j`` becomes 0 or 1, choosing them with the probabilities that keep ``E[x]`` unchanged.
    At most one fractional coordinate ``l`` remains; it is included with probability ``x_l`` if
    it fits in the leftover budget, and dropped otherwise.

    Guarantees:

    * the output always fits the budget (``c(S) <= c.x <= b``, up to rounding error of order
      1e-12 b);
    * the pipage steps are a martingale, so the final point ``y`` has :math:`E[y] = x`, and
      :math:`E[1_S] \le x` coordinatewise; the deficit comes only from the leftover item, so
      :math:`\|x - E[1_S]\|_1 \le 1` and :math:`c^\top(x - E[1_S]) \le \max_e c_e`. Which
      item is left over is random, so the deficit can spread over several coordinates;
    * if :math:`c^\top x \le b - \max_e c_e` the leftover always fits and is kept with
      probability ``y_l``, so :math:`E[1_S] = x` exactly;
    * for monotone submodular ``F`` with multilinear extension ``f``,
      :math:`E[F(S)] \ge f(x) - \max_e F(\{e\})`: ``f`` is convex along each pipage direction
      (:math:`d_i d_j < 0` and :math:`\partial^2_{ij} f \le 0`), and losing the leftover costs at
      most ``y_l F({l})`` (seed 002 notes, Section 2.4).

    Data-independent: no privacy cost.

    Parameters
    ----------
    knapsack : Knapsack or KnapsackPolytope
    x : array-like of float, shape (n,)
        A point of the knapsack polytope (checked to 1e-9).
    rng : int, Generator or None

    Returns
    -------
    ndarray of int64
        The chosen items, sorted.
    """
    caller = "knapsack_rounding"
    if isinstance(knapsack, Knapsack):
        poly = KnapsackPolytope(knapsack)
    elif isinstance(knapsack, KnapsackPolytope):
        poly = knapsack
    else:
        raise ParameterTypeError(
            f"The 'knapsack' parameter of {caller} must be a Knapsack or a KnapsackPolytope; got "
            f"{type(knapsack).__name__}."
        )
    xa = check_finite(x, "x", caller=caller, ndim=1, dtype=float)
    if xa.size != poly.dim or not poly.contains(xa):
        raise ValidationError(
            f"The 'x' argument of {caller} must be a point of the knapsack polytope "
            "(0 <= x <= 1 and costs.x <= budget)."
        )
    return _pipage(xa, poly.costs, float(poly.budget), as_generator(rng))


def _pipage(x: np.ndarray, c: np.ndarray, budget: float, gen: np.random.Generator,
            unit: bool | None = None) -> np.ndarray:
    """The walk of :func:`knapsack_rounding` on a point already checked to lie in the
    polytope (``unit``: whether all costs are 1, computed when None)."""
    y = np.clip(x, 0.0, 1.0)
    eps = 1e-12
    y[y < eps] = 0.0
    y[y > 1 - eps] = 1.0
    # A step makes i or j integral, and coordinates never turn fractional again: the pair of
    # the two smallest fractional indices is the one still fractional (carried) and the next
    # fractional index in order, so one pass over the fractional indices does every step.
    frac = np.flatnonzero((y > 0) & (y < 1)).tolist()
    # The walk is sequential, so it runs on Python floats (the same IEEE arithmetic as numpy's
    # scalars, at a fraction of their cost), on uniforms drawn in one call: at most one per
    # step and one for the leftover. The generator is then rewound and advanced by the number
    # actually used, so its stream is exactly that of one scalar draw per use.
    saved = gen.bit_generator.state
    u = gen.random(len(frac)).tolist()
    used = 0
    yl = y.tolist()
    cl = c.tolist()
    # Unit costs (the matroid blocks of round_point): multiplying or dividing by 1.0 is exact,
    # so the walk below skips it and stays bit-identical.
    if unit is None:
        unit = bool((c == 1.0).all())
    carry: int | None = None
    for j in frac:
        if carry is None:
            carry = j
            continue
        i = carry
        yi, yj = yl[i], yl[j]
        # Moving by t along e_i / c_i - e_j / c_j: x_i += t / c_i, x_j -= t / c_j.
        # (``a if a <= b else b`` is min(a, b), first argument on ties.)
        if unit:
            a, b = 1 - yi, yj
            up = a if a <= b else b
            a, b = yi, 1 - yj
            down = a if a <= b else b
            t = up if u[used] < down / (up + down) else -down
            yi += t
            yj -= t
        else:
            ci, cj = cl[i], cl[j]
            a, b = (1 - yi) * ci, yj * cj
            up = a if a <= b else b
            a, b = yi * ci, (1 - yj) * cj
            down = a if a <= b else b
            t = up if u[used] < down / (up + down) else -down
            yi += t / ci
            yj -= t / cj
        used += 1
        if yi < eps:
            yi = 0.0
        elif yi > 1 - eps:
            yi = 1.0
        if yj < eps:
            yj = 0.0
        elif yj > 1 - eps:
            yj = 1.0
        yl[i], yl[j] = yi, yj
        if 0.0 < yi < 1.0:
            carry = i
        elif 0.0 < yj < 1.0:
            carry = j
        else:
            carry = None
    y = np.asarray(yl)
    chosen = y == 1.0
    take_last = False
    if carry is not None:
        last = carry
        spent = float(c[chosen].sum())
        if spent + c[last] <= budget * (1 + 1e-12):
            take_last = u[used] < y[last]
            used += 1
            chosen[last] = take_last
    gen.bit_generator.state = saved
    if used:
        gen.random(used)
    return np.flatnonzero(chosen)


def threshold_rounding(x: object, *, rng: RNGLike = None, threshold: float | None = None
                       ) -> np.ndarray:
    r"""Threshold rounding: ``{e : x_e >= U}`` with ``U`` uniform on ``(0, 1]``.

    Each ``e`` is included with probability ``clip(x_e, 0, 1)``, and the outputs for different
    ``U`` form a chain, so :math:`E[F(\{x \ge U\})]` is the Lovasz extension of ``F`` at
    :math:`x \in [0, 1]^n` (Lovasz 1983); for a submodular ``F`` some level set is at least as
    good as the expectation. Data-independent.

    Parameters
    ----------
    x : array-like of float, shape (n,)
    rng : int, Generator or None
        Draws ``U`` when ``threshold`` is not given.
    threshold : float in (0, 1], optional
        A fixed ``U`` (deterministic level set).

    Returns
    -------
    ndarray of int64
        The level set, sorted.
    """
    xa = check_finite(x, "x", caller="threshold_rounding", ndim=1, dtype=float)
    if threshold is None:
        u = 1.0 - float(as_generator(rng).random())
    else:
        u = check_real(threshold, "threshold", low=0.0, high=1.0, low_open=True,
                       caller="threshold_rounding")
    return np.flatnonzero(xa >= u)


def _sanitize(x: np.ndarray, reg: Region) -> np.ndarray:
    """Clip rounding error so the point passes the rounding procedures' membership checks."""
    x = np.clip(x, 0.0, 1.0)
    if reg.kind in ("uniform", "partition"):
        for idx, cap in reg.blocks:
            s = float(x[idx].sum())
            if s > cap:
                x[idx] *= cap / s
    elif reg.kind == "knapsack":
        s = float(np.asarray(reg.costs) @ x)
        if s > float(reg.budget):
            x *= float(reg.budget) / s
    return x


def round_point(region: object, x: object, *, decomposition: object = None, n: int | None = None,
                rng: RNGLike = None) -> np.ndarray:
    r"""Round a point of a region to a feasible set, obliviously (post-processing).

    * box: independent rounding (:math:`E[F(S)] = f(x)`);
    * uniform / partition matroid: randomized pipage per block
      (:func:`~dpsubmod.polytopes.knapsack_rounding` with unit costs), which keeps every block's
      sum and the marginals: :math:`E[1_S] = x` and :math:`E[F(S)] \ge f(x)`;
    * knapsack: :func:`~dpsubmod.polytopes.knapsack_rounding` (:math:`E[F(S)] \ge f(x) -
      \max_e F(\{e\})`);
    * other matroids: swap rounding of ``decomposition`` (a list of independent sets and weights,
      as returned by the Frank-Wolfe projections), :math:`E[F(S)] \ge f(x)`.

    Parameters
    ----------
    region : Region or anything :func:`~dpsubmod.polytopes.as_region` accepts
    x : array-like, shape (n,)
    decomposition : (sets, weights), optional
        Required for a general matroid.
    n : int, optional
        Ground-set size (with an int ``k``).
    rng : int, Generator or None

    Returns
    -------
    ndarray of bool, shape (n,)
        The mask of the rounded set.
    """
    reg = region if isinstance(region, Region) else as_region(region, n)
    gen = as_generator(rng)
    xv = _sanitize(np.asarray(x, dtype=np.float64).copy(), reg)
    mask = np.zeros(reg.n, dtype=bool)
    if reg.kind == "box":
        mask = gen.random(reg.n) < xv
    elif reg.kind in ("uniform", "partition"):
        for idx, cap in reg.blocks:
            if cap <= 0 or idx.size == 0:
                continue
            xb = xv[idx]
            if float(xb.sum()) <= 0.0:
                continue
            if np.isfinite(xb).all():
                # _sanitize put the block in its polytope: the walk without the re-checks
                chosen = _pipage(xb, np.ones(idx.size), float(cap), gen, unit=True)
            else:  # knapsack_rounding refuses it, with its message
                chosen = knapsack_rounding(KnapsackPolytope(np.ones(idx.size), float(cap)), xb,
                                           rng=gen)
            mask[idx[chosen]] = True
    elif reg.kind == "knapsack":
        poly = KnapsackPolytope(np.asarray(reg.costs), float(reg.budget))
        mask[knapsack_rounding(poly, xv, rng=gen)] = True
    else:
        if decomposition is None:
            raise ValidationError(
                "round_point on a general matroid needs the point's convex decomposition into "
                "independent sets (decomposition=(sets, weights))."
            )
        sets, weights = decomposition  # type: ignore[misc]
        w = np.asarray(weights, dtype=float)
        total = float(w.sum())
        sets = list(sets)
        if total < 1.0 - 1e-12:
            sets.append(np.zeros(0, dtype=np.int64))
            w = np.append(w, 1.0 - total)
        w = w / w.sum()
        mask[swap_rounding(reg.matroid, sets, w, pad="dummy", rng=gen)] = True
    return mask
