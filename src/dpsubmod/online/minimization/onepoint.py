r"""Chains of a point of the cube, the exploration distribution, and the one-point estimator.

The bandit learners of online submodular minimization play a chain set of their iterate and learn
from that single value. For :math:`x \in [0, 1]^n` sort the coordinates decreasingly (ties by
increasing index, as :mod:`dpsubmod.extensions.lovasz` does), let :math:`\pi^{-1}(k)` be the
element added at step ``k`` and :math:`B_k` the first ``k`` elements, with chain weights
:math:`\mu_0 = 1 - x_{(1)}`, :math:`\mu_k = x_{(k)} - x_{(k+1)}`, :math:`\mu_n = x_{(n)}`.

The exploration distribution (Hazan and Kale 2012; Cardoso and Cummings 2018, Algorithm 2) mixes
the chain weights with the uniform distribution over the ``n + 1`` chain sets,

.. math:: \rho_k = (1 - \gamma)\,\mu_k + \frac{\gamma}{n + 1}, \qquad k = 0, \dots, n,

and the corrected one-point estimator (Cardoso and Cummings 2018, Algorithm 2 and Eq. 4) is, with
``y = f(B_k)`` the only value observed,

* ``k = 0``: :math:`\hat g = -\frac{y}{\rho_0} e_{\pi^{-1}(1)}`;
* ``k = n``: :math:`\hat g = +\frac{y}{\rho_n} e_{\pi^{-1}(n)}`;
* ``0 < k < n``: a fair sign :math:`\xi`; :math:`\hat g = +\frac{2y}{\rho_k} e_{\pi^{-1}(k)}` if
  :math:`\xi = +1`, else :math:`\hat g = -\frac{2y}{\rho_k} e_{\pi^{-1}(k+1)}`.

Its expectation is the chain subgradient of the Lovász extension at ``x`` for the chain used
(Lemma 4): the coefficient of :math:`e_{\pi^{-1}(k)}` is :math:`f(B_k) - f(B_{k-1})`. Its norm is at
most :math:`2 M (n + 1)/\gamma` when :math:`|f| \le M` (every :math:`\rho_k \ge \gamma/(n+1)`), and
its second moment is exactly
:math:`f(B_0)^2/\rho_0 + f(B_n)^2/\rho_n + \sum_{0<k<n} 4 f(B_k)^2/\rho_k \le 4M^2(n+1)^2/\gamma`
(Lemma 5 states the looser :math:`16 M^2 n^2/\gamma`).

These are plain functions on arrays so that tests and auditors can enumerate the estimator's
exact law (:func:`estimator_law`) instead of sampling it.

References
----------
E. Hazan and S. Kale, "Online submodular minimization", JMLR 13, 2012. A. Cardoso and
R. Cummings, "Differentially private online submodular optimization", arXiv 2018, Algorithm 2,
Lemmas 4-6 (footnote 2: the estimator printed by Hazan and Kale is not unbiased; this one is).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...functions.base import SetFunction


def chain_order(x: np.ndarray) -> np.ndarray:
    """Elements of ``x`` in decreasing order of coordinate, ties by increasing index."""
    return np.argsort(-x, kind="stable")


def chain_weights(x: np.ndarray, order: np.ndarray) -> np.ndarray:
    """Chain weights ``mu`` (length n + 1, exactly >= 0, summing to 1) of ``x`` along ``order``."""
    xs = x[order]
    mu = np.empty(x.size + 1)
    mu[0] = 1.0 - xs[0]
    mu[1:-1] = xs[:-1] - xs[1:]
    mu[-1] = xs[-1]
    return mu


def chain_values(f: SetFunction, order: np.ndarray, *, count: bool = True) -> np.ndarray:
    """``[f(B_0), ..., f(B_n)]`` along ``order`` in one call
    (:meth:`~dpsubmod.functions.SetFunction.chain_values`).

    Counts ``n + 1`` evaluations in ``f.evaluations`` unless ``count=False`` (diagnostics).
    """
    return f.chain_values(order, count=count)


def chain_subgradient(f: SetFunction, x: np.ndarray) -> np.ndarray:
    r"""The chain (Edmonds greedy) subgradient of the Lovász extension of ``f`` at the learner's
    own iterate ``x``: :math:`g_{\pi(k)} = f(B_k) - f(B_{k-1})` along :func:`chain_order`.

    The same vector as :func:`~dpsubmod.extensions.lovasz_subgradient` without re-validating
    ``x`` (the learners' iterates are points of the cube by construction); counts ``n + 1``
    evaluations.
    """
    order = chain_order(x)
    g = np.empty(x.size)
    # ``order`` is a permutation by construction: the public chain_values' checks of a
    # caller's order would cost a fifth of a round at n = 1000.
    g[order] = np.diff(np.asarray(f._chain_values(order), dtype=np.float64))
    f.evaluations += order.size + 1
    return g


def exploration_probabilities(mu: np.ndarray, gamma: float) -> np.ndarray:
    """``rho_k = (1 - gamma) mu_k + gamma / (n + 1)`` for ``gamma`` in (0, 1]."""
    return (1.0 - gamma) * mu + gamma / mu.size


def sample_index(rho: np.ndarray, u: float) -> int:
    """Index ``k`` with ``sum(rho[:k]) <= u < sum(rho[:k + 1])`` for ``u`` in [0, 1).

    The cumulative sum is renormalised by its last entry, so a total of ``1 - 1e-16`` can neither
    leave a gap at the top nor return ``n + 1``.
    """
    c = np.cumsum(rho)
    return int(min(np.searchsorted(c / c[-1], u, side="right"), rho.size - 1))


def one_point_gradient(order: np.ndarray, rho: np.ndarray, k: int, y: float, xi: int
                       ) -> np.ndarray:
    """The one-point estimate of the chain subgradient from ``y = f(B_k)`` and the sign ``xi``.

    ``xi`` (+1 or -1) is used only for ``0 < k < n``.
    """
    n = order.size
    g = np.zeros(n)
    if k == 0:
        g[order[0]] = -y / rho[0]
    elif k == n:
        g[order[n - 1]] = y / rho[n]
    elif xi > 0:
        g[order[k - 1]] = 2.0 * y / rho[k]
    else:
        g[order[k]] = -2.0 * y / rho[k]
    return g


@dataclass(frozen=True)
class EstimatorOutcome:
    """One outcome of the exploration draw: probability, chain index, sign, played set, estimate."""

    probability: float
    k: int
    xi: int
    mask: np.ndarray
    gradient: np.ndarray


def estimator_law(values: np.ndarray, order: np.ndarray, rho: np.ndarray
                  ) -> list[EstimatorOutcome]:
    """The exact law of (played set, estimate): ``2n`` outcomes for ``n >= 2`` (2 for ``n = 1``).

    Parameters
    ----------
    values : ndarray, shape (n + 1,)
        ``f(B_0), ..., f(B_n)`` along ``order``.
    order, rho : ndarray
        The chain order and the exploration probabilities.
    """
    n = order.size
    out: list[EstimatorOutcome] = []
    for k in range(n + 1):
        mask = np.zeros(n, dtype=bool)
        mask[order[:k]] = True
        signs = (1,) if k in (0, n) else (1, -1)
        for xi in signs:
            p = rho[k] / len(signs)
            out.append(EstimatorOutcome(float(p), k, xi, mask,
                                        one_point_gradient(order, rho, k, float(values[k]), xi)))
    return out
