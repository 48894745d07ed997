"""The exponential mechanism as an object (:class:`ExponentialMechanism`) and as one-line free
functions, with its exact output distribution, and the parameters every selection mechanism
shares. Report-noisy-max and permute-and-flip are in :mod:`~dpsubmod.privacy.noisy_max`; the
exponential mechanism drawn row by row from a weight, as Hedge draws, is
:class:`~dpsubmod.privacy.weights.ExponentialWeights`.

Conventions and references: :mod:`dpsubmod.privacy.mechanisms`.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Any

import numpy as np

from .._rng import RNGLike
from ._inputs import (
    _clip_range,
    _div_down,
    _epsilon,
    _mul_up,
    _noise_parameter,
    _note,
    _scores,
    _selection_sensitivity,
)
from ._noise_backend import Release
from ._special import logsumexp
from .backends import NoiseBackend, resolve_backend
from .events import PrivacyEvent, rho_exponential, rho_pure
from .mechanisms import PreparedMechanism

__all__ = [
    "ExponentialMechanism",
    "exponential_mechanism",
    "exponential_mechanism_probabilities",
]

Backend = str | NoiseBackend | None


def _sensitivity_name(kind: str) -> str:
    """The user's argument a selection's sensitivity came from, for refusals."""
    return "range_sensitivity" if kind == "range" else "sensitivity"


class _Selection(PreparedMechanism):
    """Shared parameters of the selection mechanisms: epsilon, the sensitivity (its kind and the
    factor ``c`` with range ``c * sensitivity``), the clip range and the backend."""

    def _setup(self, epsilon: object, sensitivity: object, monotonic: object,
               range_sensitivity: object, clip_range: object, backend: Backend,
               rng: RNGLike) -> float:
        """Validate, resolve the backend; returns ``c`` times the effective sensitivity."""
        caller = self._caller
        self._eps = float(epsilon) if self._epsilon_checked else _epsilon(epsilon, caller)
        self._sens, self._kind, self._c = _selection_sensitivity(sensitivity, monotonic,
                                                                 range_sensitivity, caller)
        self._mono = bool(monotonic)
        self._clip = _clip_range(clip_range, caller)
        self._backend = resolve_backend(backend, rng)
        return self._c * self._effective()

    def _input(self, scores: Any) -> np.ndarray:
        return _scores(scores, self._caller, self._clip)

    def _law_scores(self, scores: Any) -> np.ndarray:
        """The scores as the sampler sees them: checked, clipped, and rounded to a grid
        backend's grid (exact output distributions are computed from these)."""
        return self._backend.quantize_scores(self._input(scores), sensitivity=self._sens)

    @abstractmethod
    def _calibrate(self, unit: float) -> float:
        """The noise parameter from ``c`` times the effective sensitivity."""

    @abstractmethod
    def _epsilon_at(self, unit: float) -> float:
        """The privacy map: epsilon from ``c`` times an effective sensitivity."""

    @abstractmethod
    def _params(self) -> dict[str, Any]:
        """The noise parameter and the options the event's note states."""

    def _pure_event(self, eps: float, engine: str, sens: float) -> PrivacyEvent:
        rho = rho_exponential(eps) if self.mechanism == "exponential_mechanism" else rho_pure(eps)
        return PrivacyEvent._trusted(self.mechanism, eps, 0.0, rho,
                                     note=_note(self._backend, sens, 1, engine,
                                                **self._params()),
                                     **self._fields(engine))

    def _event(self, engine: str) -> PrivacyEvent:
        return self._pure_event(self._eps, engine, self._sens)

    def _event_at(self, d_in: float) -> PrivacyEvent:
        return self._pure_event(self._epsilon_at(self._c * self._effective(d_in)),
                                self._backend.engine, d_in)

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(epsilon={self.epsilon!r}, "
                f"sensitivity={self.sensitivity!r}, monotonic={self.monotonic!r}, "
                f"backend={self.backend!r})")


class ExponentialMechanism(_Selection):
    """Exponential mechanism: index ``i`` with probability proportional to ``exp(w * q_i)``.

    Built from public parameters and validated once; :meth:`release` charges
    :meth:`privacy_map`'s event, then draws (Gumbel-max in log space on numpy, exact rejection
    sampling on grid-rounded scores on the secure backend).

    Parameters
    ----------
    epsilon : float
        Privacy budget of one selection, > 0.
    sensitivity : float, optional
        ``Delta``: the largest ``|q_D(c) - q_D'(c)|`` over candidates and neighbours.
    monotonic : bool, default=False
        All score differences of a neighbouring pair have one sign (halves the noise).
    range_sensitivity : float, optional
        ``R``, instead of ``sensitivity``: every neighbouring pair's score differences lie in
        one interval of width ``R``.
    clip_range : (float, float), optional
        Clip finite scores to ``[low, high]`` before selecting.
    backend, rng
        As in :class:`~dpsubmod.privacy.additive.Laplace`.

    Attributes
    ----------
    weight : float
        ``w = epsilon / (c Delta_eff)``, rounded down (``c = 2``, 1 when monotone or for a
        range sensitivity).

    Notes
    -----
    Guarantee (epsilon-DP and epsilon-bounded range, epsilon**2/8-zCDP), input domain and
    citations: :func:`exponential_mechanism` ([MT07]; [DR14] Thm 3.10; [DR19]; [CR21]). The
    privacy map at input distance ``d`` is ``w c d_eff``, rounded up.

    Examples
    --------
    >>> mech = ExponentialMechanism(epsilon=1.0, sensitivity=0.5, rng=0)
    >>> mech.weight, mech.privacy_map().epsilon, mech.privacy_map(1.0).epsilon
    (1.0, 1.0, 2.0)
    >>> mech.release([0.0, 3.0, 1.0])
    2
    """

    mechanism = "exponential_mechanism"

    def __init__(self, *, epsilon: float, sensitivity: float | None = None,
                 monotonic: bool = False, range_sensitivity: float | None = None,
                 clip_range: tuple[float, float] | None = None, backend: Backend = None,
                 rng: RNGLike = None) -> None:
        self.epsilon, self.sensitivity, self.monotonic = epsilon, sensitivity, monotonic
        self.range_sensitivity, self.clip_range = range_sensitivity, clip_range
        self.backend, self.rng = backend, rng
        self._weight = self._calibrate(self._setup(epsilon, sensitivity, monotonic,
                                                   range_sensitivity, clip_range, backend, rng))

    @property
    def weight(self) -> float:
        """The weight ``w`` of ``exp(w * score)``."""
        return self._weight

    def _calibrate(self, unit: float) -> float:
        return _noise_parameter(_div_down(self._eps, unit), "weight", self._caller,
                                sensitivity=_sensitivity_name(self._kind))

    def _epsilon_at(self, unit: float) -> float:
        return _mul_up(self._weight, unit)

    def _params(self) -> dict[str, Any]:
        return {"weight": self._weight, "kind": self._kind, "monotonic": self._mono}

    def _prepare(self, q: np.ndarray) -> Release:
        return self._backend.prepare_exponential(q, self._weight, sensitivity=self._sens,
                                                 kind=self._kind, monotonic=self._mono,
                                                 epsilon=self._eps)

    def probabilities(self, scores: Any, *, log: bool = False) -> np.ndarray:
        """The exact output distribution of :meth:`release` on ``scores`` (softmax in log space,
        on the scores as the sampler sees them); nothing is drawn or charged.

        Returns
        -------
        numpy.ndarray, shape (m,)
            Probabilities (or log-probabilities with ``log=True``; ``-inf`` for infeasible
            candidates).
        """
        q, weight = self._law_scores(scores), self._weight
        # a huge weight may overflow a gap to -inf: the limit law (probability 0), no warning
        with np.errstate(over="ignore"):
            z = weight * (q - q[np.isfinite(q)].max())
        logp = z - logsumexp(z[np.isfinite(z)])
        return logp if log else np.exp(logp)


def exponential_mechanism(scores: np.ndarray, *, epsilon: float,
                          sensitivity: float | None = None, monotonic: bool = False,
                          range_sensitivity: float | None = None,
                          clip_range: tuple[float, float] | None = None, budget: Any = None,
                          rng: RNGLike = None, backend: Backend = None) -> int:
    """Exponential mechanism: index ``i`` with probability proportional to ``exp(w * scores[i])``.

    A one-line convenience over :class:`ExponentialMechanism` (same draws at the same seed).

    ``w = epsilon / (2 sensitivity)`` for general scores, ``epsilon / sensitivity`` with
    ``monotonic=True``, ``epsilon / range_sensitivity`` for bounded-range scores. Drawn by the
    Gumbel-max trick in log space (numpy backend: ``argmax_i w (q_i - max q) + G_i`` with i.i.d.
    standard Gumbel ``G_i``) or by exact rejection sampling on grid-rounded scores (secure
    backend).

    Parameters
    ----------
    scores : array-like of float, shape (m,)
        One score per candidate; ``-inf`` marks an infeasible candidate (never selected). NaN
        and ``+inf`` are refused, and so is a vector of only ``-inf``.
    epsilon : float
        Privacy budget of this selection, > 0.
    sensitivity : float, optional
        ``Delta``: the largest ``|q_D(c) - q_D'(c)|`` over candidates and neighbours.
    monotonic : bool, default=False
        Declare that for each neighbouring pair all score differences ``q_D(c) - q_D'(c)`` have
        the same sign (e.g. add/remove-one-record neighbours with scores that can only rise
        when a record is added). Halves the noise.
    range_sensitivity : float, optional
        ``R``, instead of ``sensitivity``: for every neighbouring pair there is an ``a`` with
        ``q_D(c) - q_D'(c)`` in ``[a, a + R]`` for every candidate ``c``.
    clip_range : (float, float), optional
        Clip finite scores to ``[low, high]`` before selecting. Clipping is 1-Lipschitz, so
        any sensitivity bound of the raw scores still holds, and with ``high - low <=
        sensitivity`` the guarantee holds even if the scoring function misbehaves.
    budget : Budget or Ledger, optional
        Charged with ``PrivacyEvent("exponential_mechanism", epsilon, rho=epsilon**2/8)`` before
        the draw.
    rng, backend
        As in :func:`laplace`.

    Returns
    -------
    int
        Index of the selected candidate.

    Guarantee
    ---------
    epsilon-DP and epsilon-bounded-range, hence epsilon**2/8-zCDP [CR21]. Write
    ``delta(c) = q_D(c) - q_D'(c)`` for neighbours ``D, D'``. Then

        ``ln P_D(c) / P_D'(c) = w delta(c) - ln sum_c' P_D'(c') exp(w delta(c'))``,

    which lies in ``[w (delta(c) - max delta), w (delta(c) - min delta)]``; so the privacy loss
    is at most ``w (max_c delta(c) - min_c delta(c))`` in absolute value, and two outcomes'
    losses differ by at most the same amount (bounded range [DR19]). With ``|delta| <= Delta``
    the range is at most ``2 Delta`` (``w = epsilon / (2 Delta)``, [MT07]); with monotone
    scores at most ``Delta`` (``w = epsilon / Delta``); with range sensitivity ``R`` at most
    ``R`` (``w = epsilon / R``). Both general bounds are attained (tests). A data-dependent
    term common to every candidate cancels: marginal gains ``F_D(S + e) - F_D(S)`` have range
    sensitivity ``2 Delta`` when ``F`` has sensitivity ``Delta``, so a greedy step drawing with
    weights ``exp(eps' * gain)`` costs ``2 eps' Delta``
    (:func:`exponential_mechanism_epsilon`). The set of ``-inf`` candidates must not depend on
    the data (e.g. a constraint's feasibility), or the ratio is unbounded.

    Secure backend: scores are rounded to the grid ``g Z`` exactly; this moves each score
    difference by less than one grid step on each side, so ``Delta`` is replaced by
    ``g ceil(Delta / g)`` (and ``R`` by ``g (ceil(R / g) + 1)``) and the guarantee stays exact.

    Neighbouring relation / sensitivity assumed
    -------------------------------------------
    Any relation for which the score vector obeys the declared bound.

    Input domain
    ------------
    Real scores, ``-inf`` allowed for infeasible candidates.

    Citations
    ---------
    [MT07]; [DR14] Thm 3.10; [DR19]; [CR21]; [CKS20] and [Ilv20] for the exact sampler.

    Runtime
    -------
    O(m) vectorised (numpy); expected O(m) exact Bernoulli trials (secure).
    """
    return ExponentialMechanism._named(
        "exponential_mechanism", epsilon=epsilon, sensitivity=sensitivity, monotonic=monotonic,
        range_sensitivity=range_sensitivity, clip_range=clip_range, backend=backend, rng=rng,
    ).release(scores, budget=budget)


def exponential_mechanism_probabilities(scores: np.ndarray, *, epsilon: float,
                                        sensitivity: float | None = None,
                                        monotonic: bool = False,
                                        range_sensitivity: float | None = None,
                                        clip_range: tuple[float, float] | None = None,
                                        log: bool = False, backend: Backend = None
                                        ) -> np.ndarray:
    """Exact output distribution of :func:`exponential_mechanism` (softmax in log space): a
    one-line convenience over :meth:`ExponentialMechanism.probabilities`.

    Same parameters as :func:`exponential_mechanism`. With a grid ``backend`` (an instance or
    ``"secure"``) the distribution is that of its draws: scores rounded to its grid and the
    weight computed from its effective sensitivity. Nothing is drawn or recorded. A weight
    outside floating-point range (``epsilon / sensitivity`` overflowing or underflowing) is
    refused with a :class:`~dpsubmod.errors.ValidationError`, as the sampler refuses it.

    Returns
    -------
    numpy.ndarray, shape (m,)
        Probabilities (or log-probabilities with ``log=True``; ``-inf`` for infeasible
        candidates).
    """
    return ExponentialMechanism._named(
        "exponential_mechanism_probabilities", epsilon=epsilon, sensitivity=sensitivity,
        monotonic=monotonic, range_sensitivity=range_sensitivity, clip_range=clip_range,
        backend=backend,
    ).probabilities(scores, log=log)
