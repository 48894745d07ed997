"""Exponential weights: the exponential mechanism drawn from a weight (a learning rate), once per
row of a score matrix, as Hedge draws (Freund and Schapire 1997).

Conventions and references: :mod:`dpsubmod.privacy.mechanisms`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._rng import RNGLike
from .._validation import check_int
from ..errors import ValidationError
from ._inputs import (
    _charge,
    _check_bool,
    _check_budget,
    _mul_up,
    _positive,
    _sensitivity,
)
from .backends import NoiseBackend, resolve_backend, standard_gumbel
from .events import PrivacyEvent, rho_exponential
from .mechanisms import Mechanism

__all__ = ["ExponentialWeights"]

Backend = str | NoiseBackend | None


class ExponentialWeights(Mechanism):
    """The exponential mechanism drawn from a weight, once per row of a score matrix: row ``i``
    draws index ``j`` with probability proportional to ``exp(weight * scores[i, j])``.

    The draw of Hedge (exponential weights; Freund and Schapire 1997), whose learning rate is
    the weight and whose cumulative gains are the scores: each row is one exponential-mechanism
    draw, and a release of ``rows`` rows is ``rows`` uses, or ``moving_rows`` uses when
    neighbours move the scores of that many rows only.

    Parameters
    ----------
    weight : float
        The weight (learning rate) ``w``, > 0 and finite.
    sensitivity : float, default=1.0
        Largest change of one score between neighbours (Hedge: gains clipped to [0, 1]).
    monotonic : bool, default=False
        Neighbours move every score of a row in one direction.
    rows : int, default=1
        Number of rows of a release.
    moving_rows : int or None, default=None
        Largest number of rows whose scores differ between neighbours (the other rows' scores
        are equal); ``None`` means every row. Hedge's bandit experts feed one observed value to
        one copy, so one row moves.
    backend, rng
        As in :class:`ExponentialMechanism`.

    Attributes
    ----------
    epsilon : float
        The privacy of one row's draw: ``c w Delta_eff`` rounded up (``c = 2``, 1 when
        monotone), as :func:`~dpsubmod.privacy.calibration.exponential_mechanism_epsilon`.

    Notes
    -----
    Guarantee: each row's draw is the exponential mechanism with weight ``w`` on scores of
    sensitivity ``Delta``, hence ``epsilon``-DP and ``epsilon``-bounded range
    (epsilon**2/8-zCDP) [MT07; DR19; CR21]. With ``distinct=True`` each row draws from its
    weights restricted to the indices the earlier rows did not draw; restricting to a candidate
    set fixed by earlier outputs keeps every likelihood ratio a ratio of the same weights over
    a smaller normaliser, so the privacy per row is unchanged. Numpy backend: Gumbel-max in log
    space for all rows at once; other backends: their exact exponential sampler row by row.
    The score matrix is the caller's state and is trusted (real numbers, ``-inf`` never drawn);
    its shape is checked. A row whose scores are equal between neighbours has, given the
    earlier rows' draws, the same law in both (its weights and, with ``distinct=True``, its
    candidates are the same), so it adds nothing to the privacy loss: a release whose
    neighbours move ``moving_rows`` rows is ``moving_rows`` uses of the row's guarantee,
    composed adaptively.

    Examples
    --------
    >>> mech = ExponentialWeights(weight=0.5, rows=2, rng=0)
    >>> mech.epsilon, mech.privacy_map().count
    (1.0, 2)
    >>> mech.release(np.array([[0.0, 3.0, 1.0], [2.0, 0.0, 0.0]])).tolist()
    [2, 0]
    """

    mechanism = "hedge_draw"

    def __init__(self, *, weight: float, sensitivity: float = 1.0, monotonic: bool = False,
                 rows: int = 1, moving_rows: int | None = None, backend: Backend = None,
                 rng: RNGLike = None) -> None:
        self.weight, self.sensitivity, self.monotonic = weight, sensitivity, monotonic
        self.rows, self.moving_rows, self.backend, self.rng = rows, moving_rows, backend, rng
        caller = self._caller
        self._weight = _positive(weight, "weight", caller)
        self._sens = _sensitivity(sensitivity, caller)
        self._c = 1 if _check_bool(monotonic, "monotonic", caller) else 2
        self._rows = check_int(rows, "rows", low=1, caller=caller)
        self._moving = self._rows if moving_rows is None else check_int(
            moving_rows, "moving_rows", low=1, high=self._rows, caller=caller,
            fix="moving_rows counts the rows neighbours can change: 1 <= moving_rows <= rows.")
        self._backend = resolve_backend(backend, rng)
        self._eps = _mul_up(self._weight, self._c * self._effective())

    @property
    def epsilon(self) -> float:
        """The privacy of one row's draw."""
        return self._eps

    def _event(self, engine: str) -> PrivacyEvent:
        return self._row_event(self._eps, engine)

    def _event_at(self, d_in: float) -> PrivacyEvent:
        return self._row_event(_mul_up(self._weight, self._c * self._effective(d_in)),
                               self._backend.engine)

    def _row_event(self, eps: float, engine: str) -> PrivacyEvent:
        return PrivacyEvent._trusted(self.mechanism, eps, 0.0, rho_exponential(eps), self._moving,
                                     **self._fields(engine))

    def _input(self, scores: Any) -> np.ndarray:
        G = np.asarray(scores, dtype=np.float64)
        if G.ndim != 2 or G.shape[0] != self._rows:
            raise ValidationError(
                f"The 'scores' argument of {self._caller}.release must have shape "
                f"({self._rows}, m); got {G.shape}."
            )
        return G

    def release(self, scores: Any, *, budget: Any = None, distinct: bool = False) -> np.ndarray:
        """Charge :meth:`privacy_map`'s event to ``budget``, then draw one index per row.

        Parameters
        ----------
        scores : numpy.ndarray, shape (rows, m)
        budget : Budget, Ledger or None, default=None
        distinct : bool, default=False
            Row ``i`` draws among the indices rows ``0..i-1`` did not draw (``rows <= m``).

        Returns
        -------
        numpy.ndarray of int64, shape (rows,)
        """
        # The base class's path without its prepared Release: every engine here draws row by
        # row after the charge, and Hedge calls this once a round.
        _check_budget(budget, self._caller)
        G = self._input(scores)
        if distinct and G.shape[0] > G.shape[1]:
            raise ValidationError(
                f"{self._caller}.release(distinct=True) needs rows <= m; got scores of shape "
                f"{G.shape}. Pass distinct=False."
            )
        if budget is not None:
            _charge(budget, self._caller, lambda: self._event(self._backend.engine))
        return self._distinct_draw(G) if distinct else self._rows_draw(G)

    def _rows_draw(self, G: np.ndarray) -> np.ndarray:
        be, w = self._backend, self._weight
        if be.name == "numpy":
            # Gumbel-max for all rows at once: the same draw as NumpyBackend.exponential row
            # by row (argmax of w * (G - max G) + Gumbel noise), vectorised. A huge weight
            # takes a gap below the leader to -inf (probability 0): the limit law.
            with np.errstate(over="ignore"):
                z = w * (G - G.max(axis=1, keepdims=True))
            return np.argmax(z + standard_gumbel(be.generator, z.shape), axis=1)
        return np.array([be.exponential(row, w, sensitivity=self._sens) for row in G],
                        dtype=np.int64)

    def _distinct_draw(self, G: np.ndarray) -> np.ndarray:
        """Row ``i`` draws from its weights restricted to the indices rows ``0..i-1`` did not
        draw (Gumbel-max over the allowed indices on numpy, the backend's exponential mechanism
        over them otherwise)."""
        be, w = self._backend, self._weight
        copies, n = G.shape
        out = np.empty(copies, dtype=np.int64)
        if be.name == "numpy":
            noise = standard_gumbel(be.generator, (copies, n))
            for i in range(copies):
                # Relative to the best allowed index, so one allowed log-weight is 0 even when
                # the overall leader was drawn by an earlier row. Computed on the whole row,
                # the drawn indices then excluded: the allowed ones get the same numbers, and
                # the same first maximum, as on the allowed indices alone.
                row = G[i]
                drawn = out[:i]
                if i:
                    rest = row.copy()
                    rest[drawn] = -np.inf
                    top = rest.max()
                else:
                    top = row.max()
                with np.errstate(over="ignore", invalid="ignore"):
                    z = w * (row - top)
                z += noise[i]
                z[drawn] = -np.inf
                out[i] = int(np.argmax(z))
            return out
        allowed = np.ones(n, dtype=bool)
        for i in range(copies):
            cand = np.flatnonzero(allowed)
            j = int(be.exponential(G[i, cand], w, sensitivity=self._sens))
            out[i] = cand[j]
            allowed[cand[j]] = False
        return out

    def __repr__(self) -> str:
        moving = "" if self.moving_rows is None else f", moving_rows={self.moving_rows!r}"
        return (f"ExponentialWeights(weight={self.weight!r}, sensitivity={self.sensitivity!r}, "
                f"rows={self.rows!r}{moving}, backend={self.backend!r})")
