"""Differentially private mechanisms: additive noise (Laplace, Gaussian, l2 Laplace) and
selection (exponential mechanism, report-noisy-max, permute-and-flip).

Conventions shared by every mechanism here.

* **Privacy parameters are keyword-only** and validated at call start (``epsilon`` finite
  and > 0, ``delta`` in [0, 1), ``sensitivity`` finite and > 0, scores without NaN); a bad value
  raises a :class:`~dpsubmod.errors.DPSubmodError` subclass naming the argument, and nothing is
  recorded or drawn.
* **Neighbouring relation.** The mechanisms are agnostic: ``sensitivity`` is the largest change
  of the query (in the stated norm) between any two neighbouring data sets under whatever
  relation the caller's objective declares (for dpsubmod objectives built from records: one
  record replaced). Monotone variants additionally need every score to move in the same
  direction for each neighbouring pair.
* **Budget.** Each call charges exactly one
  :class:`~dpsubmod.privacy.events.PrivacyEvent` to ``budget`` (a
  :class:`~dpsubmod.privacy.budget.Budget`, or a :class:`~dpsubmod.privacy.ledger.Ledger` that
  only records) *before* any noise is drawn, so a budget that refuses the spend stops the
  release and nothing changes. Events carry ``rho`` whenever a zCDP
  guarantee is known (pure eps-DP: eps**2/2; exponential mechanism: eps**2/8; Gaussian:
  Delta**2/(2 sigma**2)), and their ``note`` names the backend (and grid) that drew the noise.
* **Randomness** goes through a noise backend (:mod:`dpsubmod.privacy.backends`):
  ``backend=None``/``"numpy"`` (seeded by ``rng``, for simulation, not secure) or ``"secure"``
  (exact discrete samplers on a CSPRNG, releases on a grid), or a backend instance. On grid
  backends the noise is calibrated to the backend's effective sensitivity (the declared one plus
  at most one grid step), which keeps the stated guarantee exact.
* **Calibration helpers** (``laplace_scale``, ``gaussian_sigma``, ``exponential_mechanism_weight``,
  ...) turn a target budget into a noise parameter, and **privacy maps** (``laplace_epsilon``,
  ``gaussian_delta``, ``gaussian_rho``, ``exponential_mechanism_epsilon``, ...) turn a noise
  parameter back into the guarantee, so that nobody derives scales by hand. Scales are rounded
  up, and weights and budgets spent rounded so that the floating-point result never claims
  more privacy than the real-number formula.

References
----------
.. [DR14] C. Dwork, A. Roth. The Algorithmic Foundations of Differential Privacy. 2014.
.. [MT07] F. McSherry, K. Talwar. Mechanism Design via Differential Privacy. FOCS 2007.
.. [DR19] D. Durfee, R. Rogers. Practical Differentially Private Top-k Selection with
   Pay-what-you-get Composition. NeurIPS 2019 (bounded range).
.. [CR21] M. Cesar, R. Rogers. Bounding, Concentrating, and Truncating: Unifying Privacy Loss
   Composition for Data Analytics. ALT 2021 (arXiv:2004.07223).
.. [BW18] B. Balle, Y.-X. Wang. Improving the Gaussian Mechanism for Differential Privacy:
   Analytical Calibration and Optimal Denoising. ICML 2018.
.. [BS16] M. Bun, T. Steinke. Concentrated Differential Privacy: Simplifications, Extensions,
   and Lower Bounds. TCC 2016.
.. [MS20] R. McKenna, D. Sheldon. Permute-and-Flip: A New Mechanism for Differentially Private
   Selection. NeurIPS 2020.
.. [D+21] Z. Ding, D. Kifer, S. M. Saghaian N. E., T. Steinke, Y. Wang, Y. Xiao, D. Zhang. The
   Permute-and-Flip Mechanism is Identical to Report-Noisy-Max with Exponential Noise.
   arXiv:2105.07260, 2021.
.. [HT10] M. Hardt, K. Talwar. On the Geometry of Differential Privacy. STOC 2010 (K-norm
   mechanism).
.. [CKS20] C. L. Canonne, G. Kamath, T. Steinke. The Discrete Gaussian for Differential Privacy.
   NeurIPS 2020 (exact samplers of the secure backend).
.. [Ilv20] C. Ilvento. Implementing the Exponential Mechanism with Base-2 Differential Privacy.
   CCS 2020 (why the exponential mechanism needs exact arithmetic).
"""

from __future__ import annotations

from .additive import gaussian, l2_laplace, laplace
from .calibration import (
    exponential_mechanism_epsilon,
    exponential_mechanism_weight,
    gaussian_delta,
    gaussian_rho,
    gaussian_sigma,
    gaussian_sigma_analytic,
    gaussian_sigma_classic,
    gaussian_sigma_zcdp,
    l2_laplace_epsilon,
    l2_laplace_scale,
    laplace_epsilon,
    laplace_scale,
    report_noisy_max_epsilon,
    report_noisy_max_scale,
    zcdp_rho_for,
)
from .selection import (
    exponential_mechanism,
    exponential_mechanism_probabilities,
    permute_and_flip,
    permute_and_flip_probabilities,
    report_noisy_max,
)

__all__ = [
    # additive noise
    "laplace",
    "gaussian",
    "l2_laplace",
    # selection
    "exponential_mechanism",
    "report_noisy_max",
    "permute_and_flip",
    # exact output distributions
    "exponential_mechanism_probabilities",
    "permute_and_flip_probabilities",
    # calibration (budget -> noise) and privacy maps (noise -> budget)
    "laplace_scale",
    "laplace_epsilon",
    "l2_laplace_scale",
    "l2_laplace_epsilon",
    "gaussian_sigma",
    "gaussian_sigma_classic",
    "gaussian_sigma_analytic",
    "gaussian_sigma_zcdp",
    "gaussian_delta",
    "gaussian_rho",
    "zcdp_rho_for",
    "exponential_mechanism_weight",
    "exponential_mechanism_epsilon",
    "report_noisy_max_scale",
    "report_noisy_max_epsilon",
]
