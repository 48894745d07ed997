"""The noisy-max selection mechanisms: report-noisy-max with Laplace noise
(:class:`ReportNoisyMax`) and permute-and-flip (:class:`PermuteAndFlip`, report-noisy-max with
exponential noise in distribution), as objects and as one-line free functions, with the exact
output distribution of permute-and-flip. Their shared parameters and privacy event are those of
every selection mechanism (:mod:`~dpsubmod.privacy.selection`).

Conventions and references: :mod:`dpsubmod.privacy.mechanisms`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import special

from .._rng import RNGLike
from ._inputs import _div_down, _div_up, _mul_up, _noise_parameter
from ._noise_backend import Release
from .selection import Backend, _Selection

__all__ = [
    "ReportNoisyMax",
    "PermuteAndFlip",
    "report_noisy_max",
    "permute_and_flip",
    "permute_and_flip_probabilities",
]


def _unit_interval_nodes(n: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``n``-point Gauss-Legendre nodes and weights on ``[0, 1]`` (scipy computes them in
    O(n); this module is not on the ``dpsubmod select`` path, so scipy is imported at its
    top)."""
    nodes, wts = special.roots_legendre(n)
    return (nodes + 1.0) / 2.0, wts / 2.0


class _PureSelection(_Selection):
    """The constructor of report-noisy-max and permute-and-flip (no range sensitivity)."""

    def __init__(self, *, epsilon: float, sensitivity: float, monotonic: bool = False,
                 clip_range: tuple[float, float] | None = None, backend: Backend = None,
                 rng: RNGLike = None) -> None:
        self.epsilon, self.sensitivity, self.monotonic = epsilon, sensitivity, monotonic
        self.clip_range, self.backend, self.rng = clip_range, backend, rng
        self._value = self._calibrate(self._setup(epsilon, sensitivity, monotonic, None,
                                                  clip_range, backend, rng))


class ReportNoisyMax(_PureSelection):
    """Report-noisy-max with Laplace noise: ``argmax_i q_i + Laplace(b)``.

    Parameters
    ----------
    epsilon : float
    sensitivity : float
        Largest ``|q_D(c) - q_D'(c)|`` over candidates and neighbours.
    monotonic : bool, default=False
    clip_range : (float, float), optional
    backend, rng
        As in :class:`~dpsubmod.privacy.selection.ExponentialMechanism`.

    Attributes
    ----------
    scale : float
        ``b = c Delta_eff / epsilon``, rounded up.

    Notes
    -----
    Guarantee (epsilon-DP) and citations: :func:`report_noisy_max` ([DR14] Claim 3.9;
    [D+21]). The privacy map at input distance ``d`` is ``c d_eff / b``, rounded up.
    """

    mechanism = "report_noisy_max"

    @property
    def scale(self) -> float:
        """The Laplace scale ``b``."""
        return self._value

    def _calibrate(self, unit: float) -> float:
        return _noise_parameter(_div_up(unit, self._eps), "noise scale", self._caller)

    def _epsilon_at(self, unit: float) -> float:
        return _div_up(unit, self._value)

    def _params(self) -> dict[str, Any]:
        return {"scale": self._value, "monotonic": self._mono}

    def _prepare(self, q: np.ndarray) -> Release:
        return self._backend.prepare_report_noisy_max(q, self._value, sensitivity=self._sens,
                                                      monotonic=self._mono, epsilon=self._eps)


class PermuteAndFlip(_PureSelection):
    """Permute-and-flip (McKenna and Sheldon 2020, Algorithm 1).

    Parameters
    ----------
    epsilon, sensitivity, monotonic, clip_range, backend, rng
        As in :class:`ReportNoisyMax`.

    Attributes
    ----------
    weight : float
        ``w = epsilon / (c Delta_eff)``, rounded down: a candidate's coin lands heads with
        probability ``exp(w (q_r - max q))``.

    Notes
    -----
    Guarantee (epsilon-DP) and citations: :func:`permute_and_flip` ([MS20]; [D+21]). The
    privacy map at input distance ``d`` is ``w c d_eff``, rounded up.
    """

    mechanism = "permute_and_flip"

    @property
    def weight(self) -> float:
        """The weight ``w`` of the acceptance probabilities."""
        return self._value

    def _calibrate(self, unit: float) -> float:
        return _noise_parameter(_div_down(self._eps, unit), "weight", self._caller)

    def _epsilon_at(self, unit: float) -> float:
        return _mul_up(self._value, unit)

    def _params(self) -> dict[str, Any]:
        return {"weight": self._value, "monotonic": self._mono}

    def _prepare(self, q: np.ndarray) -> Release:
        return self._backend.prepare_permute_and_flip(q, self._value, sensitivity=self._sens,
                                                      monotonic=self._mono, epsilon=self._eps)

    def probabilities(self, scores: Any) -> np.ndarray:
        """The exact output distribution of :meth:`release` on ``scores`` (see
        :func:`permute_and_flip_probabilities`); nothing is drawn or charged."""
        q, weight = self._law_scores(scores), self._value
        finite = np.isfinite(q)
        p = np.zeros(q.size)
        with np.errstate(over="ignore"):  # a gap overflowing to -inf: acceptance 0, the limit
            p[finite] = np.exp(weight * (q[finite] - q[finite].max()))
        live = np.flatnonzero(p > 0)
        pl = p[live]
        t, wts = _unit_interval_nodes(live.size // 2 + 1)
        log_all = np.zeros(t.size)
        block = max(1, 4_000_000 // t.size)
        for s in range(0, pl.size, block):
            log_all += np.log1p(-np.outer(t, pl[s:s + block])).sum(axis=1)
        out = np.zeros(q.size)
        for s in range(0, pl.size, block):
            lb = np.log1p(-np.outer(t, pl[s:s + block]))
            inner = (wts[:, None] * np.exp(log_all[:, None] - lb)).sum(axis=0)
            out[live[s:s + block]] = pl[s:s + block] * inner
        return out


def report_noisy_max(scores: np.ndarray, *, epsilon: float, sensitivity: float,
                     monotonic: bool = False, clip_range: tuple[float, float] | None = None,
                     budget: Any = None, rng: RNGLike = None, backend: Backend = None) -> int:
    """Report-noisy-max with Laplace noise: ``argmax_i scores[i] + Laplace(b)``.

    A one-line convenience over :class:`ReportNoisyMax` (same draws at the same seed).

    ``b = 2 sensitivity / epsilon`` for general scores, ``sensitivity / epsilon`` with
    ``monotonic=True``. (Report-noisy-max with *exponential* noise is permute-and-flip in
    distribution [D+21]: use :func:`permute_and_flip`.)

    Parameters
    ----------
    scores : array-like of float, shape (m,)
        As in :func:`~dpsubmod.privacy.selection.exponential_mechanism` (``-inf`` never wins).
    epsilon : float
    sensitivity : float
        Largest ``|q_D(c) - q_D'(c)|`` over candidates and neighbours.
    monotonic : bool, default=False
        As in :func:`~dpsubmod.privacy.selection.exponential_mechanism`.
    clip_range : (float, float), optional
        As in :func:`~dpsubmod.privacy.selection.exponential_mechanism`.
    budget : Budget or Ledger, optional
        Charged with ``PrivacyEvent("report_noisy_max", epsilon, rho=epsilon**2/2)``.
    rng, backend
        As in :func:`~dpsubmod.privacy.additive.laplace`.

    Returns
    -------
    int

    Guarantee
    ---------
    epsilon-DP (hence epsilon**2/2-zCDP). Fix the noise of every other candidate and let
    ``m(q) = max_{j != i} q_j + Z_j``; candidate ``i`` wins when ``Z_i > m(q) - q_i``. Between
    neighbours ``m(q) - q_i`` moves by at most ``2 Delta`` (``Delta`` when monotone), and the
    Laplace survival function satisfies ``S(x + t) >= exp(-t / b) S(x)``, so each winning
    probability changes by a factor at most ``exp(2 Delta / b)`` ([DR14, Claim 3.9] for the
    monotone counting case). Secure backend: discrete Laplace on grid-rounded scores with
    uniform tie-breaking (equivalent to adding Uniform[0,1) to the integer noise, which keeps
    the survival-function bound for integer shifts).

    Neighbouring relation / sensitivity assumed
    -------------------------------------------
    Any relation for which every score moves by at most ``sensitivity``.

    Input domain
    ------------
    Real scores, ``-inf`` allowed.

    Citations
    ---------
    [DR14] Claim 3.9; [D+21].

    Runtime
    -------
    O(m).
    """
    return ReportNoisyMax._named(
        "report_noisy_max", epsilon=epsilon, sensitivity=sensitivity, monotonic=monotonic,
        clip_range=clip_range, backend=backend, rng=rng,
    ).release(scores, budget=budget)


def permute_and_flip(scores: np.ndarray, *, epsilon: float, sensitivity: float,
                     monotonic: bool = False, clip_range: tuple[float, float] | None = None,
                     budget: Any = None, rng: RNGLike = None, backend: Backend = None) -> int:
    """Permute-and-flip (McKenna and Sheldon 2020, Algorithm 1).

    A one-line convenience over :class:`PermuteAndFlip` (same draws at the same seed). Visit the
    candidates in a uniformly random order and stop at the first ``r`` whose coin
    ``Bernoulli(exp(w (q_r - max q)))`` lands heads, ``w = epsilon / (2 sensitivity)``
    (``epsilon / sensitivity`` when monotonic). Equivalent in distribution to report-noisy-max
    with Exponential(1/w) noise [D+21], which is how the numpy backend draws it; the secure
    backend runs the permutation with exact coins on grid-rounded scores.

    Parameters
    ----------
    scores : array-like of float, shape (m,)
        As in :func:`~dpsubmod.privacy.selection.exponential_mechanism`.
    epsilon : float
    sensitivity : float
    monotonic : bool, default=False
    clip_range : (float, float), optional
    budget : Budget or Ledger, optional
        Charged with ``PrivacyEvent("permute_and_flip", epsilon, rho=epsilon**2/2)``.
    rng, backend
        As in :func:`~dpsubmod.privacy.additive.laplace`.

    Returns
    -------
    int

    Guarantee
    ---------
    epsilon-DP [MS20, Thm 1] (monotone case: the report-noisy-max argument above with the
    exponential survival function), hence epsilon**2/2-zCDP. Never worse in expected score than
    the exponential mechanism at the same epsilon [MS20]. The bound is attained: with two
    candidates the lower one is selected with probability ``exp(w (q_low - q_high)) / 2``.

    Neighbouring relation / sensitivity assumed
    -------------------------------------------
    Any relation for which every score moves by at most ``sensitivity``.

    Input domain
    ------------
    Real scores, ``-inf`` allowed.

    Citations
    ---------
    [MS20]; [D+21].

    Runtime
    -------
    O(m) (numpy); expected O(m) exact coins at worst (secure).
    """
    return PermuteAndFlip._named(
        "permute_and_flip", epsilon=epsilon, sensitivity=sensitivity, monotonic=monotonic,
        clip_range=clip_range, backend=backend, rng=rng,
    ).release(scores, budget=budget)


def permute_and_flip_probabilities(scores: np.ndarray, *, epsilon: float, sensitivity: float,
                                   monotonic: bool = False,
                                   clip_range: tuple[float, float] | None = None,
                                   backend: Backend = None) -> np.ndarray:
    """Exact output distribution of :func:`permute_and_flip`: a one-line convenience over
    :meth:`PermuteAndFlip.probabilities`.

    With acceptance probabilities ``p_j = exp(w (q_j - max q))`` and the random order given by
    i.i.d. uniform arrival times, candidate ``i`` is selected with probability

        ``P(i) = p_i * integral_0^1 prod_{j != i} (1 - t p_j) dt``,

    a polynomial integral of degree ``m - 1`` evaluated exactly (up to rounding) by
    ``floor(m/2) + 1``-point Gauss-Legendre quadrature. With a grid ``backend`` the scores are
    rounded to its grid and the weight uses its effective sensitivity, as in its draws.
    Candidates whose acceptance probability underflows (``w (max q - q_i) > ~745``) get 0.
    A weight outside floating-point range is refused as :func:`permute_and_flip` refuses it.

    Returns
    -------
    numpy.ndarray, shape (m,)

    Runtime
    -------
    O(m^2) time, O(m) memory per block of candidates.
    """
    return PermuteAndFlip._named(
        "permute_and_flip_probabilities", epsilon=epsilon, sensitivity=sensitivity,
        monotonic=monotonic, clip_range=clip_range, backend=backend,
    ).probabilities(scores)
