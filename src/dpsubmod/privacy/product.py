"""The exponential mechanism over the bases of a matroid with a linear score, drawn through a
product law: a base ``B`` with probability proportional to ``prod_{e in B} exp(w g_e)``.

Rafiey and Yoshida 2020 ("Fast and private submodular and k-submodular functions maximization
with matroid constraints", ICML 2020, Algorithm 1) select, at each step of private continuous
greedy, a base ``B`` by the exponential mechanism with score ``<1_B, g>``, ``g`` the gradient;
over the cover of averages of ``m`` bases they draw ``m`` independent bases with weights
``exp(w g_e / m)``. This module holds the privacy side of that draw: parameters, privacy map,
the charge, the weights, and every random draw (:class:`InverseCDF`). The combinatorial part of
an exact sampler of a product law over one matroid family's bases is the caller's (it knows the
matroid; this layer does not): it states, choice by choice, the conditional law of the next
choice given the choices so far, and :class:`InverseCDF` draws the uniform and inverts it.

Conventions and references: :mod:`dpsubmod.privacy.mechanisms`.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from .._rng import RNGLike
from .._validation import check_finite, check_int
from ..errors import ValidationError
from ._inputs import (
    _charge,
    _check_budget,
    _div_down,
    _mul_up,
    _noise_parameter,
)
from .backends import NoiseBackend
from .events import PrivacyEvent, rho_exponential
from .mechanisms import Mechanism

__all__ = ["InverseCDF", "ProductBaseExponential", "ProductLaw"]

Backend = str | NoiseBackend | None


class InverseCDF:
    """The random draws of a sequential sampler, by inverse CDF: the sampler states the
    conditional law of its next choice given its choices so far, and each method here draws
    the uniform from its generator and inverts that law.

    A :class:`ProductLaw` receives one from :meth:`ProductBaseExponential.release`, after the
    charge, bound to the mechanism's generator; it is the only randomness the law sees.

    Parameters
    ----------
    gen : numpy.random.Generator
        The stream of the uniforms (used as is, continuing its stream).

    Examples
    --------
    >>> draws = InverseCDF(np.random.default_rng(0))
    >>> draws.index(np.array([0.5, np.inf])), draws.accept(0.0)
    (1, True)
    """

    def __init__(self, gen: np.random.Generator) -> None:
        self._gen = gen

    def next_positions(self, log_tail: np.ndarray, pos: np.ndarray) -> np.ndarray:
        """For each of ``pos.size`` independent draws, the next position ``j >= pos[i]``, with
        ``P(next >= j) = exp(log_tail[j] - log_tail[pos[i]])``.

        Parameters
        ----------
        log_tail : numpy.ndarray of float
            Log tail masses, non-increasing in the position.
        pos : numpy.ndarray of int64
            Each draw's current position (the first position it may choose).

        Returns
        -------
        numpy.ndarray of int64, shape like ``pos``
        """
        u = 1.0 - self._gen.random(pos.size)  # in (0, 1]
        threshold = log_tail[pos] + np.log(u)
        # next = max{j : log_tail[j] > threshold}: the tail probability still exceeds u there.
        nxt = np.searchsorted(-log_tail, -threshold, side="left") - 1
        return np.maximum(nxt, pos)  # u = 1 up to rounding: the next one is at pos itself

    def accept(self, odds_against: float) -> bool:
        """``True`` with probability ``1 / (1 + odds_against)``; a sure event
        (``odds_against == 0``) draws nothing."""
        return odds_against == 0.0 or self._gen.random() * (1.0 + odds_against) < 1.0

    def index(self, cumulative: np.ndarray) -> int:
        """An index ``i`` with probability ``cumulative[i] - cumulative[i - 1]``
        (``cumulative`` non-decreasing, its last entry at least 1)."""
        return int(np.searchsorted(cumulative, self._gen.random(), side="right"))


class ProductLaw(Protocol):
    """An exact sampler of the product law ``P(B) ~ exp(sum_{e in B} logw_e)`` over the bases of
    one matroid (``dpsubmod.offline``'s product-base samplers are such laws), which draws
    through the :class:`InverseCDF` it is given and no other randomness."""

    def bases(self, logw: np.ndarray, size: int, draws: InverseCDF) -> np.ndarray:
        """``size`` independent bases, shape ``(size, rank)``."""


class ProductBaseExponential(Mechanism):
    """Exponential mechanism over the bases of a matroid with score ``<1_B, g>``, as ``m``
    independent draws of the product law with log-weights ``w g_e / m``.

    Parameters
    ----------
    epsilon : float
        Privacy budget of one release (``m`` bases), > 0.
    sensitivity : float
        ``s``: the largest change of ``<1_B, g>`` for any base ``B`` between neighbours (the
        score sensitivity of the step).
    cover_size : int, default=1
        ``m``, the number of bases averaged.
    backend : {"numpy"}, NumpyBackend or None, default=None
        Only the numpy backend: the product samplers work in floating point (no exact discrete
        sampler exists); a grid backend is refused.
    rng : int, Generator, SeedSequence or None, default=None
        The generator of the draws (a ``Generator`` is used as is, continuing its stream).

    Attributes
    ----------
    weight : float
        ``w = epsilon / (2 s)``, rounded down, as
        :func:`~dpsubmod.privacy.calibration.exponential_mechanism_weight`.

    Notes
    -----
    Guarantee: the ``m`` bases are drawn with probability proportional to
    ``exp((w / m) sum_k <1_{B_k}, g>)``, the exponential mechanism with weight ``w`` on the
    average score, whose sensitivity is ``s``; hence ``epsilon``-DP and ``epsilon``-bounded
    range (epsilon**2/8-zCDP) [MT07; CR21]. The privacy map at input distance ``d`` is
    ``2 w d``, rounded up. Citations: Rafiey and Yoshida 2020, Algorithm 1 and Section 2.3 of
    its engineering note (the cover of averages).

    Examples
    --------
    >>> class OneOfThree:  # the bases of U(1, 3): one element, weight exp(logw_e)
    ...     def bases(self, logw, size, draws):
    ...         cum = np.cumsum(np.exp(logw - logw.max())); cum /= cum[-1]; cum[-1] = np.inf
    ...         return np.array([[draws.index(cum)] for _ in range(size)])
    >>> mech = ProductBaseExponential(epsilon=1.0, sensitivity=0.5, rng=0)
    >>> mech.weight, mech.privacy_map().epsilon
    (1.0, 1.0)
    >>> mech.release([0.0, 2.0, 1.0], OneOfThree()).tolist()
    [[1]]
    """

    mechanism = "exponential_mechanism"

    def __init__(self, *, epsilon: float, sensitivity: float, cover_size: int = 1,
                 backend: Backend = None, rng: RNGLike = None) -> None:
        self.epsilon, self.sensitivity, self.cover_size = epsilon, sensitivity, cover_size
        self.backend, self.rng = backend, rng
        caller = self._caller
        self._m = check_int(cover_size, "cover_size", low=1, caller=caller)
        self._validate(epsilon, sensitivity, backend, rng)
        if self._backend.name != "numpy":
            raise ValidationError(
                f"{caller} draws with a floating-point product sampler; only the 'numpy' noise "
                f"backend is available for it (no exact discrete sampler exists); got "
                f"backend={backend!r}. Use backend=None."
            )
        self._weight = _noise_parameter(_div_down(self._eps, 2 * self._sens), "weight", caller)

    @property
    def weight(self) -> float:
        """The weight ``w`` of the exponential mechanism."""
        return self._weight

    def _note(self) -> str:
        return (f"weight={self._weight!r}; range sensitivity={2 * self._sens!r}; cover of "
                f"averages of {self._m} bases")

    def _event(self, engine: str, note: str = "") -> PrivacyEvent:
        # from the parameters validated at construction: not validated again
        return PrivacyEvent._trusted(self.mechanism, self._eps, 0.0,
                                     rho_exponential(self._eps),
                                     note=f"{note}; {self._note()}" if note else self._note(),
                                     **self._fields(engine))

    def _event_at(self, d_in: float) -> PrivacyEvent:
        eps = _mul_up(self._weight, 2 * d_in)
        return PrivacyEvent(self.mechanism, eps, 0.0, rho=rho_exponential(eps),
                            note=self._note(), **self._fields(self._backend.engine))

    def release(self, gains: Any, law: ProductLaw, *, budget: Any = None,
                note: str = "") -> np.ndarray:
        """Charge :meth:`privacy_map`'s event to ``budget``, then draw ``cover_size`` bases.

        Parameters
        ----------
        gains : array-like of float, shape (n,)
            The score vector ``g`` (finite).
        law : ProductLaw
            The combinatorial part of the exact sampler of the product law over the matroid's
            bases; its uniforms are drawn here, after the charge.
        budget : Budget, Ledger or None, default=None
            Charged before anything is drawn.
        note : str, default=""
            Put before the event's note (such as the step of the caller's run).

        Returns
        -------
        numpy.ndarray of int64, shape (cover_size, rank)
        """
        _check_budget(budget, self._caller)
        g = check_finite(gains, "gains", caller=self._caller)
        if g.ndim != 1:
            raise ValidationError(
                f"The 'gains' argument of {self._caller}.release must be a vector; got shape "
                f"{g.shape}."
            )
        _charge(budget, self._caller, lambda: self._event(self._backend.engine, note))
        # Every base has the same size, so a constant subtracted from every coordinate leaves
        # the law unchanged: shifted by the maximum, the log-weights are <= 0, and those below
        # -1e300 (probability 0 next to the heaviest) are kept finite for the samplers.
        with np.errstate(over="ignore"):
            logw = np.maximum(self._weight * (g - g.max()) / self._m, -1e300)
        return law.bases(logw, self._m, InverseCDF(self._backend.generator))

    def __repr__(self) -> str:
        return (f"ProductBaseExponential(epsilon={self.epsilon!r}, "
                f"sensitivity={self.sensitivity!r}, cover_size={self.cover_size!r})")
