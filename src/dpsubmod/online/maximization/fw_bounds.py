r"""Explicit regret bounds of the online Meta-Frank-Wolfe learners, and the numbers of
Frank-Wolfe steps (and PFTAL's strong convexity) that minimise them.

Every learner is bounded through Lemma 7 of Perez-Salazar and Cummings (from Chen, Hassani and
Karbasi 2018): the :math:`(1 - 1/e)`-regret of the multilinear extensions is at most the
oracles' average regret plus the Frank-Wolfe bias :math:`\beta R^2 T/(2K)`. Over a polytope of
:math:`\ell_1` radius :math:`R_1` with singleton values at most :math:`m_F`, the multilinear
extension's Hessian entries are at most :math:`m_F` in absolute value, so
:math:`\beta R^2 \le m_F R_1^2` (Lemma 2 of Sadeghi and Fazel). The oracles' regret:

* entropic FTRL (:class:`~dpsubmod.online.DPMetaFrankWolfe`, Sadeghi and Fazel 2021,
  Theorem 4 through Agarwal and Singh 2017, Theorem 3.1): :math:`R_1\ln n/\eta +
  \eta T m_F^2 R_1` plus the tree noise's :math:`E[\max_P\langle Z, x\rangle - \min_P\langle Z,
  x\rangle] \le 2 R_1 L\, E\|Y\|_\infty` (``L`` tree levels, ``Y`` one node's noise:
  :math:`E\|Y\|_\infty \le b H_n` for Laplace of scale ``b``, :math:`\sigma\sqrt{2\ln 2n}` for
  Gaussian);
* projected online gradient ascent (:class:`~dpsubmod.online.MetaFrankWolfe`, Zinkevich 2003):
  :math:`D G\sqrt T`, ``D`` the diameter and :math:`G = \sqrt n\,m_F`;
* PFTAL (:class:`~dpsubmod.online.PFTALMetaFrankWolfe`, Perez-Salazar and Cummings 2021,
  Theorem 9 through Theorem 5 of Smith and Thakurta 2013, read as for SubmodPFTAL):
  :math:`2(G + HD)^2\ln T/H + 8n(G + HD)\Delta K\ln^{2.5}T/(H\varepsilon) + HTD^2/2` with
  :math:`\Delta = \sqrt n\,m_F` (l2-Laplace; :math:`n m_F` for coordinate Laplace) and each
  copy :math:`\varepsilon/K`-DP.

``ln T`` is floored at 1. Only public parameters enter.
"""

from __future__ import annotations

import math

import numpy as np


def harmonic(n: int) -> float:
    """:math:`H_n = \\sum_{i \\le n} 1/i` (the expected maximum of ``n`` unit exponentials)."""
    return float(np.sum(1.0 / np.arange(1, n + 1)))


def frank_wolfe_bias(T: int, K: int, r1: float, m_F: float) -> float:
    """:math:`m_F R_1^2 T/(2K)`."""
    return m_F * r1 * r1 * T / (2.0 * K)


def ftrl_oracle_regret(n: int, T: int, r1: float, m_F: float, eta: float, *,
                       noise_sup: float = 0.0, levels: int = 1) -> float:
    """Entropic FTRL's regret at rate ``eta`` plus the tree noise term ``2 R_1 L noise_sup``
    (``noise_sup`` the expected sup norm of one node's noise)."""
    ln = math.log(max(n, 2))
    return r1 * ln / eta + eta * T * m_F * m_F * r1 + 2.0 * r1 * levels * noise_sup


def ogd_oracle_regret(n: int, T: int, diameter: float, m_F: float) -> float:
    """Projected online gradient ascent at its tuned step: :math:`D\\sqrt n\\,m_F\\sqrt T`."""
    return diameter * math.sqrt(n) * m_F * math.sqrt(T)


def noise_sensitivity(n: int, m_F: float, noise: str = "l2laplace") -> float:
    r"""The sensitivity a PFTAL copy's tree is calibrated to: both clipped gradients lie in
    :math:`[0, m_F]^n`, so :math:`\sqrt n\,m_F` in l2 (``"l2laplace"``) and :math:`n m_F` in l1
    (``"laplace"``, coordinate-wise noise)."""
    return (n if noise == "laplace" else math.sqrt(n)) * m_F


def _pftal_terms(n: int, T: int, D: float, m_F: float, K: np.ndarray, epsilon: float,
                 noise: str = "l2laplace") -> tuple[np.ndarray, np.ndarray, float]:
    lt = max(1.0, math.log(T))
    G = math.sqrt(n) * m_F
    if math.isinf(epsilon):
        noise_term = np.zeros_like(K, dtype=float)
    else:
        # The noise enters Smith and Thakurta's bound through E||Y||_2 of one node's noise:
        # n Delta_2 b for l2-Laplace, and at most E||Y||_1 = n Delta_1 b for coordinate
        # Laplace calibrated to the l1 sensitivity, so Delta is the calibrated sensitivity.
        # A subnormal epsilon overflows to an infinite (vacuous) term, which is the answer.
        with np.errstate(over="ignore"):
            noise_term = (8.0 * n * noise_sensitivity(n, m_F, noise) * K * lt ** 2.5
                          / epsilon)
    a = 2.0 * lt * G * G + noise_term * G
    b = 4.0 * lt * G * D + noise_term * D
    d = 2.0 * lt * D * D + T * D * D / 2.0
    return a, b, d


def pftal_copies_bound(n: int, T: int, r1: float, D: float, m_F: float, K: int, H: float,
                       epsilon: float, noise: str = "l2laplace") -> float:
    """The ``(1 - 1/e)``-regret bound of ``K`` PFTAL copies at strong convexity ``H``."""
    a, b, d = _pftal_terms(n, T, D, m_F, np.array([float(K)]), epsilon, noise)
    if not (math.isfinite(a[0]) and math.isfinite(H)):
        return math.inf  # the noise term of a subnormal epsilon: vacuous
    return float(a[0] / H + b[0] + d * H) + frank_wolfe_bias(T, K, r1, m_F)


def best_pftal_copies(n: int, T: int, r1: float, D: float, m_F: float, epsilon: float, *,
                      K: int | None = None, k_max: int = 256,
                      noise: str = "l2laplace") -> tuple[int, float]:
    """``(K, H)`` minimising :func:`pftal_copies_bound` (``K`` fixed when given)."""
    Ks = np.arange(1, k_max + 1, dtype=float) if K is None else np.array([float(K)])
    a, b, d = _pftal_terms(n, T, D, m_F, Ks, epsilon, noise)
    bound = 2.0 * np.sqrt(a * d) + b + m_F * r1 * r1 * T / (2.0 * Ks)
    j = int(np.argmin(bound))
    return int(Ks[j]), float(math.sqrt(a[j] / d))
