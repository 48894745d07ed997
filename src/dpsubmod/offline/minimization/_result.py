"""What the exact submodular minimizers return (:mod:`dpsubmod.offline.minimization.minimize`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, eq=False)
class MinimizeResult:
    r"""The outcome of :func:`minimize` (non-private: computed from the function itself).

    Attributes
    ----------
    set : frozenset of int
        The minimizer returned.
    value : float
        ``f(set)``, as ``f`` or its incremental state computes it (the two can differ by
        rounding).
    x : ndarray of float64, shape (n,), or None
        ``"min-norm-point"``: the final iterate of Wolfe's algorithm, a point of the base polytope
        :math:`B(f - f(\emptyset))` whose negative part certifies the gap. With
        ``exact_point=True`` it is the minimum-norm point :math:`x^*` (to ``tol * scale`` in
        Euclidean norm, or to rounding); by default the run stops once the set is certified,
        which can be before ``x`` reaches :math:`x^*`. ``None`` for the other methods.
    certificate_gap : float
        An upper bound on ``value - min_S f(S)``, proved by a lower bound on the minimum:
        :math:`f(\emptyset) + \sum_e \min(x_e, 0)` for a point ``x`` of the base polytope
        (min-norm point), the maximum-flow value (max-flow min-cut duality), or 0 (exhaustive
        enumeration). Non-negative up to floating-point rounding.
    iterations : int
        Major cycles of Wolfe's algorithm (``"min-norm-point"``); 0 for the other methods.
    evaluations : int
        Oracle work spent, in the papers' units (one ``f(S)`` = 1, a batch of ``m`` gains = ``m``).
    method : str
        The method that ran (``"auto"`` is resolved to the method it chose).
    """

    set: frozenset[int]
    value: float
    x: np.ndarray | None
    certificate_gap: float
    iterations: int
    evaluations: int
    method: str

    def __repr__(self) -> str:
        return (
            f"MinimizeResult(set={sorted(self.set)}, value={self.value:.6g}, "
            f"certificate_gap={self.certificate_gap:.3g}, iterations={self.iterations}, "
            f"evaluations={self.evaluations}, method={self.method!r})"
        )
