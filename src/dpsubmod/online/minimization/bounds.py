r"""Explicit regret bounds of the online minimization learners, and the parameters that minimise
them (Cardoso and Cummings 2018, Theorems 7 and 9; Hazan and Kale 2012).

The papers state their rates up to constants and logarithms; the bounds here are assembled from
their lemmas (the readings of ``docs/algorithms/online_minimization.md`` and the paper notes),
with ``ln T`` floored at 1 and the counter calibrated to the sound sensitivity ``c``:

* SubmodPFTAL (Theorem 7; Lemmas 7, 9 and 11):
  :math:`2(4M + 2H\sqrt n)^2\ln T/H + 8n(4M + 2H\sqrt n)\,c\ln^{2.5}T/(H\varepsilon) + THn/2`;
* BanditSubmodPFTAL (Theorem 9; Lemmas 6, 7, 9, 10 and 11), with :math:`G = 2M(n+1)/\gamma`
  the one-point estimate's norm bound and :math:`c = 4M(n+1)/\gamma`:
  :math:`2(G + 2H\sqrt n)^2\ln T/H + 2\gamma MT + THn/2 + 8n(4M + 2H\sqrt n)\,c\ln^{2.5}T/
  (H\varepsilon) + 8nM\sqrt n\sqrt T/\sqrt\gamma`;
* Hazan-Kale (projected gradient descent on the cube, diameter :math:`\sqrt n`, subgradients of
  norm at most :math:`4M`): :math:`n/(2\eta) + 8M^2\eta T`; bandit, with the estimator's second
  moment :math:`4M^2(n+1)^2/\gamma`: :math:`n/(2\eta) + 2M^2(n+1)^2\eta T/\gamma + 2\gamma MT`.

The privacy terms vanish with the noise off (``epsilon = inf``). In ``H`` each bound has the
form :math:`a/H + b + dH`, minimised at :math:`H = \sqrt{a/d}`; the bandit one is then
minimised over :math:`\gamma \in (0, 1]` on a fine grid.
"""

from __future__ import annotations

import math

import numpy as np

#: What the minimization bounds measure (``M`` filled in by the learner).
COST_UNITS = "regret of costs f_t in [-M, M], M = {M:g}"


def _logs(T: int) -> tuple[float, float]:
    lt = max(1.0, math.log(T))
    return lt, lt ** 2.5


def submod_pftal_terms(n: int, T: int, M: float, c: float, epsilon: float
                       ) -> tuple[float, float, float]:
    """``(a, b, d)`` with SubmodPFTAL's bound equal to ``a / H + b + d H``."""
    lt, l25 = _logs(T)
    priv = 0.0 if math.isinf(epsilon) else 8.0 * n * c * l25 / epsilon
    a = 32.0 * M * M * lt + 4.0 * M * priv
    b = 32.0 * M * math.sqrt(n) * lt + 2.0 * math.sqrt(n) * priv
    d = 8.0 * n * lt + T * n / 2.0
    return a, b, d


def submod_pftal_bound(n: int, T: int, M: float, H: float, c: float, epsilon: float) -> float:
    """Theorem 7's explicit bound at strong convexity ``H``."""
    a, b, d = submod_pftal_terms(n, T, M, c, epsilon)
    return a / H + b + d * H


def best_submod_pftal_H(n: int, T: int, M: float, c: float, epsilon: float) -> float:
    """The ``H`` minimising :func:`submod_pftal_bound`: :math:`\\sqrt{a/d}`."""
    a, _, d = submod_pftal_terms(n, T, M, c, epsilon)
    return math.sqrt(a / d)


def noise_scaled_H(T: int, noise_sd: float, *, spread: float = 0.25) -> float:
    r"""The ``H`` at which the tree counter's noise moves SubmodPFTAL's iterate, on average
    over the run, by at most ``spread`` per coordinate.

    With the regulariser :math:`\frac H2\|x - c\|^2` the iterate is
    :math:`x_{t+1} = \mathrm{clip}(c - (G_t + \zeta_t)/(tH), 0, 1)`, with :math:`G_t` the sum
    of the chain subgradients and :math:`\zeta_t` the counter's noise, whose per-coordinate
    standard deviation is at most ``noise_sd`` (every tree level used). The noise moves the
    iterate by at most :math:`\mathrm{sd}/(tH)` at round ``t``, and on average over the run by
    :math:`\mathrm{sd}\,(1 + \ln T)/(TH)`; this returns the ``H`` that makes it ``spread``.
    Both the signal :math:`G_t/(tH)` and the noise scale as :math:`1/H`, so ``H`` does not change
    their ratio: a smaller ``H`` lets the signal reach a face of the cube sooner, and lets the
    noise throw the iterate to random corners for longer.
    """
    return noise_sd * (1.0 + math.log(T)) / (spread * T)


def _bandit_terms(n: int, T: int, M: float, gamma: np.ndarray, c: np.ndarray, epsilon: float
                  ) -> tuple[np.ndarray, np.ndarray, float]:
    lt, l25 = _logs(T)
    G = 2.0 * M * (n + 1) / gamma
    priv = 0.0 if math.isinf(epsilon) else 8.0 * n * c * l25 / epsilon
    a = 2.0 * G * G * lt + 4.0 * M * priv
    b = (8.0 * G * math.sqrt(n) * lt + 2.0 * math.sqrt(n) * priv + 2.0 * gamma * M * T
         + 8.0 * n * M * math.sqrt(n) * math.sqrt(T) / np.sqrt(gamma))
    d = 8.0 * n * lt + T * n / 2.0
    return a, b, d


def bandit_pftal_bound(n: int, T: int, M: float, H: float, gamma: float, c: float,
                       epsilon: float) -> float:
    """Theorem 9's explicit bound at ``H`` and exploration ``gamma`` (sensitivity ``c``)."""
    a, b, d = _bandit_terms(n, T, M, np.asarray(gamma, float), np.asarray(c, float), epsilon)
    return float(a / H + b + d * H)


def best_bandit_pftal(n: int, T: int, M: float, epsilon: float, *, gamma: float | None = None,
                      sensitivity: float | None = None) -> tuple[float, float]:
    """``(gamma, H)`` minimising :func:`bandit_pftal_bound` (``gamma`` fixed when given); the
    sensitivity is the sound ``4M(n+1)/gamma`` unless given."""
    gammas = np.geomspace(min(1.0, 1.0 / T), 1.0, 400) if gamma is None \
        else np.array([float(gamma)])
    c = 4.0 * M * (n + 1) / gammas if sensitivity is None else np.full_like(gammas, sensitivity)
    a, b, d = _bandit_terms(n, T, M, gammas, c, epsilon)
    bound = 2.0 * np.sqrt(a * d) + b
    j = int(np.argmin(bound))
    return float(gammas[j]), float(math.sqrt(a[j] / d))


def hazan_kale_bound(n: int, T: int, M: float, eta: float) -> float:
    """Projected online gradient descent on the cube with subgradients of norm ``<= 4M``."""
    # M * eta first: M * M underflows to 0 for a tiny M while eta = O(1/M) stays large.
    return n / (2.0 * eta) + 8.0 * M * (M * eta) * T


def bandit_hazan_kale_bound(n: int, T: int, M: float, eta: float, gamma: float) -> float:
    """The same with the one-point estimate's second moment and the exploration cost."""
    return n / (2.0 * eta) + 2.0 * M * (M * eta) * (n + 1) ** 2 * T / gamma + 2.0 * gamma * M * T
