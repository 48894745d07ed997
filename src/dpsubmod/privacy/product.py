"""The exponential mechanism over the bases of a matroid with a linear score, drawn through a
product law: a base ``B`` with probability proportional to ``prod_{e in B} exp(w g_e)``.

Rafiey and Yoshida 2020 ("Fast and private submodular and k-submodular functions maximization
with matroid constraints", ICML 2020, Algorithm 1) select, at each step of private continuous
greedy, a base ``B`` by the exponential mechanism with score ``<1_B, g>``, ``g`` the gradient;
over the cover of averages of ``m`` bases they draw ``m`` independent bases with weights
``exp(w g_e / m)``. This module holds the privacy side of that draw (parameters, privacy map,
the charge, the weights and the generator); the exact sampler of a product law over one
matroid family's bases is the caller's (it knows the matroid; this layer does not).

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

__all__ = ["ProductBaseExponential", "ProductLaw"]

Backend = str | NoiseBackend | None


class ProductLaw(Protocol):
    """An exact sampler of the product law ``P(B) ~ exp(sum_{e in B} logw_e)`` over the bases of
    one matroid (``dpsubmod.offline``'s product-base samplers are such laws)."""

    def sample(self, logw: np.ndarray, size: int, gen: np.random.Generator) -> np.ndarray:
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
    >>> class TwoOfThree:  # the bases of U(1, 3): one element, weight exp(logw_e)
    ...     def sample(self, logw, size, gen):
    ...         p = np.exp(logw - logw.max()); p /= p.sum()
    ...         return gen.choice(3, size=(size, 1), p=p)
    >>> mech = ProductBaseExponential(epsilon=1.0, sensitivity=0.5, rng=0)
    >>> mech.weight, mech.privacy_map().epsilon
    (1.0, 1.0)
    >>> mech.release([0.0, 2.0, 1.0], TwoOfThree()).tolist()
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
        return PrivacyEvent(self.mechanism, self._eps, 0.0, rho=rho_exponential(self._eps),
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
            The exact sampler of the product law over the matroid's bases.
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
        return law.sample(logw, self._m, self._backend.generator)

    def __repr__(self) -> str:
        return (f"ProductBaseExponential(epsilon={self.epsilon!r}, "
                f"sensitivity={self.sensitivity!r}, cover_size={self.cover_size!r})")
