"""Continual release of prefix sums by tree aggregation (the binary mechanism): the
calibration of its node noise, from which the mechanism,
:class:`~dpsubmod.privacy.tree_aggregator.TreeAggregator`, and the learners that tune a step
size to its noise read the scale, the variance and the privacy cost.

The binary mechanism (Dwork, Naor, Pitassi & Rothblum 2010; Chan, Shi & Song 2011, "Private and
continual release of statistics", Algorithm 2) releases, after each of ``T`` items
``x_1, ..., x_T`` in ``R^d``, a noisy prefix sum ``x_1 + ... + x_t``. Each dyadic block of items
(a *node*: items ``j 2^h + 1 .. (j + 1) 2^h`` at level ``h``) gets its own noise, drawn once when
the node is completed; the prefix at step ``t`` is the sum of the nodes of the set bits of ``t``,
so at most ``popcount(t) <= L`` noisy nodes, where ``L = tree_levels(T) = floor(log2 T) + 1``.

Privacy. Neighbouring streams differ in one item, ``||x_t - x'_t|| <= sensitivity`` (l1 norm for
Laplace noise, l2 norm for l2-Laplace and Gaussian noise; the caller guarantees it, e.g. by
clipping items to norm ``sensitivity / 2``). An item lies in at most one completed node per
level, hence in at most ``L`` released nodes, so:

* ``noise="laplace"``: i.i.d. Laplace noise of scale ``L * sensitivity / epsilon`` per
  coordinate is ``epsilon``-DP for the whole stream of releases;
* ``noise="l2laplace"``: node noise with density ``prop. to exp(-||z||_2 / s)``,
  ``s = L * sensitivity / epsilon`` ("high-dimensional Laplace", as in Smith & Thakurta 2013 and
  Cardoso & Cummings 2018, with the sensitivity, not an item norm bound), is ``epsilon``-DP;
* ``noise="gaussian"``: the vector of all node values has l2 sensitivity
  ``sqrt(L) * sensitivity``; with ``N(0, sigma^2)`` noise it is ``rho``-zCDP for
  ``rho = L sensitivity^2 / (2 sigma^2)``. From ``(epsilon, delta)`` the numpy backend calibrates
  ``sigma`` exactly by the analytic Gaussian (Balle & Wang 2018) at sensitivity
  ``sqrt(L) * sensitivity``; grid (secure) backends calibrate through zCDP
  (``rho`` from :func:`~dpsubmod.privacy.zcdp.rho_for_target`), since their discrete
  Gaussian is certified through zCDP only.

Every prefix is post-processing of the node releases, so the whole stream costs one privacy event.

Honaker's estimator (Honaker 2015, "Efficient use of differentially private binary trees";
the online form of TensorFlow Privacy's ``EfficientTreeAggregator``): every completed node is
released, and each node's estimate is the inverse-variance-weighted combination of its own noisy
value and the sum of its two children's estimates. With node variance ``v`` the estimate at
height ``h`` has variance ``v 2^h / (2^(h+1) - 1)`` (``v`` at a leaf, tending to ``v / 2``), and it
is the best linear unbiased estimate of the node from its subtree (Hay, Rastogi, Miklau & Suciu
2010). At step ``t`` every completed node lies inside one block of the decomposition of
``[1, t]``, so the prefix built from these estimates is the best linear unbiased estimate from
everything released so far. Privacy is unchanged (the same nodes, post-processed).
"""

from __future__ import annotations

import math
from fractions import Fraction

from .._validation import check_delta, check_int, check_real
from ..errors import ValidationError
from ._inputs import MAX_NOISE_SCALE, _div_up, _mul_up, _noise_parameter
from .events import check_epsilon_finite
from .gaussian_calibration import gaussian_sigma_analytic
from .zcdp import rho_for_target

__all__ = ["tree_levels", "NOISES", "honaker_variance_ratio", "prefix_noise_sd"]


#: Node-noise families: name -> the norm the per-step sensitivity is measured in.
NOISES: dict[str, str] = {"laplace": "l1", "l2laplace": "l2", "gaussian": "l2"}


def tree_levels(T: int) -> int:
    """Number of tree levels an item of a stream of length ``T`` can touch: ``floor(log2 T) + 1``.

    Nodes at higher levels span more than ``T`` items and are never completed, so an item lies in
    at most this many released nodes and a prefix sum uses at most this many nodes. It equals
    ``ceil(log2 T) + 1`` when ``T`` is a power of two and is one less otherwise.

    >>> [tree_levels(T) for T in (1, 2, 3, 4, 5, 8, 1000, 1024)]
    [1, 2, 2, 3, 3, 4, 10, 11]
    """
    T = check_int(T, "T", low=1, caller="tree_levels")
    return T.bit_length()


def honaker_variance_ratio(height: int) -> float:
    """Variance of Honaker's estimate of a node at ``height`` over the node-noise variance.

    ``2^h / (2^(h+1) - 1)``: 1 at a leaf, 2/3 one level up, tending to 1/2.
    """
    h = check_int(height, "height", low=0, caller="honaker_variance_ratio")
    return 2.0**h / (2.0 ** (h + 1) - 1.0)


def _sigma_up(L: int, eff: float, rho: float) -> float:
    """``eff sqrt(L / (2 rho))`` rounded up: the smallest float ``sigma`` found with
    ``L eff^2 / (2 sigma^2) <= rho`` exactly, so the L levels cost at most ``rho``."""
    sigma = eff * math.sqrt(L / (2.0 * rho))
    if not (math.isfinite(sigma) and sigma > 0.0):
        return sigma  # out of float range: refused by the caller
    need, two_rho = L * Fraction(eff) ** 2, 2 * Fraction(rho)
    while Fraction(sigma) ** 2 * two_rho < need:
        sigma = math.nextafter(sigma, math.inf)
    return sigma


def _node_noise(noise: str, L: int, d: int, eff: float, eps: float | None, dlt: float,
                rho: float | None, *, discrete: bool,
                caller: str) -> tuple[float, float, float | None]:
    """The node-noise scale, its per-coordinate variance and the zCDP cost (``rho``, when
    known) of a tree of ``L`` levels over ``d`` coordinates at effective sensitivity ``eff``
    (checked parameters; a scale outside float range is refused naming ``caller``)."""
    # Node noise at the scale limit stays finite, and so do sums of L nodes; beyond it (a
    # tiny epsilon against the sensitivity) the prefixes would be inf, inf - inf = NaN.
    high = MAX_NOISE_SCALE / (d if noise == "l2laplace" else 1)
    if noise == "gaussian":
        if rho is None and not discrete:
            scale = gaussian_sigma_analytic(eps, dlt, math.sqrt(L) * eff)
        else:
            if rho is None:
                rho = rho_for_target(eps, dlt)
            scale = _sigma_up(L, eff, rho) if rho > 0.0 else math.inf
    else:
        # rounded up, as every scale: the L levels' noise then costs at most eps exactly
        scale = _div_up(_mul_up(float(L), eff), eps)
    scale = _noise_parameter(float(scale), "node-noise scale", caller, high=high)
    if noise == "laplace":
        node_var = 2.0 * scale * scale
    elif noise == "l2laplace":
        node_var = (d + 1.0) * scale * scale  # E||z||^2 = d (d + 1) s^2, split over d coords
    else:
        if rho is None:
            r = eff / scale  # first: eff * eff may underflow to 0
            rho = L * r * r / 2.0
        node_var = scale * scale
    return scale, node_var, rho


def prefix_noise_sd(T: int, dim: int, *, noise: str, sensitivity: float, epsilon: float,
                    delta: float = 0.0) -> float:
    """The largest per-coordinate standard deviation of the noise in a prefix sum (all
    ``tree_levels(T)`` nodes) of a numpy-backend aggregator, from parameters its caller has
    validated (as for a :class:`TreeAggregator`; ``delta`` only for Gaussian noise).

    Nothing is built or drawn: this is the calibration alone, for a caller that tunes another
    parameter to the noise (a learner's default step size).

    Parameters
    ----------
    T : int
        Horizon of the stream.
    dim : int
        Dimension of every item.
    noise : {"laplace", "l2laplace", "gaussian"}
        Node-noise family.
    sensitivity : float
        Per-item sensitivity (l1 for Laplace, l2 otherwise), finite and > 0.
    epsilon : float
        Budget of the whole stream, finite and > 0.
    delta : float, default=0.0
        For Gaussian noise, in (0, 1); ignored otherwise.

    Returns
    -------
    float
        ``sqrt(node_variance * levels)``.

    Raises
    ------
    ValidationError
        The node-noise scale is outside floating-point range.
    """
    L = int(T).bit_length()
    _, node_var, _ = _node_noise(noise, L, int(dim), float(sensitivity), float(epsilon),
                                 float(delta) if noise == "gaussian" else 0.0, None,
                                 discrete=False, caller="prefix_noise_sd")
    return math.sqrt(float(node_var) * L)


def _stream_budget(noise: str, epsilon: object, delta: object, rho: object,
                   caller: str) -> tuple[float | None, float, float | None]:
    """The budget of a whole stream with ``noise`` node noise, checked: ``(epsilon, delta,
    rho)`` with ``epsilon=None`` for a zCDP budget ``rho`` (Gaussian noise only) and ``rho=None``
    for an ``(epsilon, delta)`` one (``delta`` 0 unless the noise is Gaussian).

    Raises
    ------
    ValidationError, ParameterTypeError
        Naming the argument of ``caller`` that is missing, out of range, or not allowed with
        ``noise``.
    """
    if noise == "gaussian":
        if rho is not None:
            if epsilon is not None or delta != 0.0:
                raise ValidationError(
                    f"{caller}: pass either rho, or epsilon and delta, not both."
                )
            rho = check_real(rho, "rho", low=0.0, low_open=True, caller=caller)
            return None, 0.0, rho
        if epsilon is None:
            raise ValidationError(
                f"{caller} with noise='gaussian' needs epsilon and delta (or rho)."
            )
        eps = check_epsilon_finite(epsilon, caller=caller)
        dlt = check_real(delta, "delta", low=0.0, high=1.0, low_open=True,
                         high_open=True, caller=caller,
                         fix="Gaussian noise needs 0 < delta < 1; use noise='laplace' for "
                             "pure DP.")
        return eps, dlt, None
    if rho is not None:
        raise ValidationError(
            f"The 'rho' parameter of {caller} applies only to noise='gaussian'."
        )
    if epsilon is None:
        raise ValidationError(f"{caller} needs epsilon (the budget of the whole stream).")
    eps = check_epsilon_finite(epsilon, caller=caller)
    dlt = check_delta(delta, caller=caller)
    if dlt != 0.0:
        raise ValidationError(
            f"The 'delta' parameter of {caller} must be 0 with noise={noise!r} "
            "(pure DP); use noise='gaussian' for (epsilon, delta)-DP."
        )
    return eps, 0.0, None
