"""Continual release of prefix sums: tree aggregation (the binary mechanism).

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
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np

from .._rng import RNGLike
from .._validation import check_delta, check_finite, check_int, check_real
from ..errors import (
    BudgetExceededError,
    ParameterTypeError,
    StreamLengthError,
    ValidationError,
)
from ._inputs import MAX_NOISE_SCALE, _check_budget, _div_up, _mul_up, _noise_parameter
from .backends import NoiseBackend, resolve_backend
from .events import PrivacyEvent, check_epsilon_finite
from .gaussian_calibration import gaussian_sigma_analytic
from .ledger import Ledger, charge
from .mechanisms import Mechanism
from .zcdp import rho_for_target

__all__ = ["TreeAggregator", "tree_levels", "NOISES", "honaker_variance_ratio",
           "prefix_noise_sd"]

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


class TreeAggregator(Mechanism):
    """Private prefix sums of a vector stream by tree aggregation (binary mechanism).

    A river-style state machine: :meth:`update` takes one item, :meth:`prefix` returns the
    current noisy prefix sum; :meth:`release` does both. As every
    :class:`~dpsubmod.privacy.mechanisms.Mechanism`, it is validated once at construction and
    states its privacy map (:meth:`privacy_map`, the whole stream's one event).
    Chan, Shi & Song 2011 (Algorithm 2, "binary mechanism");
    Dwork, Naor, Pitassi & Rothblum 2010. See the module docstring for the guarantee.

    Guarantee
        ``epsilon``-DP (Laplace, l2-Laplace), ``(epsilon, delta)``-DP and ``rho``-zCDP
        (Gaussian) for the whole sequence of ``T`` releases.
    Neighbouring relation
        Streams of length ``<= T`` differing in one item, with
        ``||x_t - x'_t|| <= sensitivity`` (l1 for Laplace, l2 otherwise).
    Runtime and memory
        ``O(d log T)`` memory; ``O(d log T)`` work per step. The plain mechanism draws one noise
        vector per step (the node completed at that step that a prefix can use); Honaker's draws
        one per completed node (``2T - popcount(T)`` in all).

    Parameters
    ----------
    T : int
        Horizon: the largest number of items the stream may have (``>= 1``).
    dim : int, default=1
        Dimension ``d`` of every item.
    noise : {"laplace", "l2laplace", "gaussian"}, default="laplace"
        Node-noise family.
    sensitivity : float
        Largest norm of the change of one item between neighbouring streams (l1 for
        ``"laplace"``, l2 otherwise), ``> 0``. Required.
    epsilon : float or None, default=None
        Privacy budget of the whole stream, ``> 0``. Required unless ``noise="gaussian"`` with
        ``rho``.
    delta : float, default=0.0
        For ``noise="gaussian"`` with ``epsilon``: in ``(0, 1)``. Must be 0 otherwise.
    rho : float or None, default=None
        For ``noise="gaussian"`` only, instead of ``epsilon``/``delta``: the zCDP budget.
    honaker : bool, default=False
        Use Honaker's variance-reducing estimator (same privacy, lower variance).
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None, default=None
        Randomness of the numpy backend, resolved once at construction (so clones built from
        the same integer seed release the same values).
    backend : {"numpy", "secure", "opendp"}, NoiseBackend or None, default=None
        Noise backend (:func:`~dpsubmod.privacy.backends.resolve_backend`); the secure backends
        round items to a grid, sum nodes in exact integer grid units and add exact discrete
        node noise (through OpenDP when it is installed, its map checked against the charge at
        construction); they refuse l2-Laplace noise and ignore ``rng``.
    budget : Budget, Ledger or None, default=None
        Charged with the whole stream's single :class:`~dpsubmod.privacy.events.PrivacyEvent`
        at the first :meth:`update`, before any noise is drawn (a
        :class:`~dpsubmod.privacy.budget.Budget` may refuse it; then nothing changes). A
        ``Budget`` that cannot fit the event is refused at construction.
    noise_sampler : callable or None, default=None
        For testing only: ``noise_sampler(level, index) -> array of shape (dim,)`` replaces the
        calibrated node noise (``level`` is the node's height, ``index`` its 0-based position at
        that level). The privacy guarantee then no longer holds.

    Attributes
    ----------
    t : int
        Items received so far.
    levels : int
        ``tree_levels(T)``.
    scale : float
        Node-noise scale: Laplace ``b``, l2-Laplace ``s``, Gaussian ``sigma``.
    node_variance : float
        Per-coordinate variance of one node's noise.
    event : PrivacyEvent
        The privacy cost of the whole stream.

    Raises
    ------
    ValidationError, ParameterTypeError
        On bad parameters, at construction, including a node-noise scale outside float range
        (an epsilon tiny against the sensitivity, or huge).
    BudgetExceededError
        At construction, when ``budget`` cannot fit the stream's event.
    StreamLengthError
        From :meth:`update` on item ``T + 1``, before anything is drawn or released.

    Examples
    --------
    >>> agg = TreeAggregator(8, 1, sensitivity=1.0, epsilon=1.0, rng=0)
    >>> for _ in range(5):
    ...     agg.update([1.0])
    >>> agg.t, agg.levels, agg.noise_variance()  # prefix of 5 = nodes [1..4] and [5]
    (5, 4, 64.0)
    """

    def __init__(self, T: int, dim: int = 1, *, noise: str = "laplace",
                 sensitivity: float, epsilon: float | None = None, delta: float = 0.0,
                 rho: float | None = None, honaker: bool = False, rng: RNGLike = None,
                 backend: str | NoiseBackend | None = None, budget: Any = None,
                 noise_sampler: Callable[[int, int], Any] | None = None) -> None:
        self.T = T
        self.dim = dim
        self.noise = noise
        self.sensitivity = sensitivity
        self.epsilon = epsilon
        self.delta = delta
        self.rho = rho
        self.honaker = honaker
        self.rng = rng
        self.backend = backend
        self.budget = budget
        self.noise_sampler = noise_sampler
        self._setup()

    # -- construction -----------------------------------------------------------------------
    def _setup(self) -> None:
        caller = "TreeAggregator"
        T = check_int(self.T, "T", low=1, caller=caller,
                      fix="Pass the largest number of items the stream may have.")
        d = check_int(self.dim, "dim", low=1, caller=caller)
        if not isinstance(self.noise, str) or self.noise not in NOISES:
            raise ValidationError(
                f"The 'noise' parameter of {caller} must be one of {sorted(NOISES)}; "
                f"got {self.noise!r}."
            )
        sens = check_real(self.sensitivity, "sensitivity", low=0.0, low_open=True, caller=caller,
                          fix="Pass the largest norm of the change of one item between "
                              "neighbouring streams.")
        if not isinstance(self.honaker, bool):
            raise ParameterTypeError(
                f"The 'honaker' parameter of {caller} must be a bool; got {self.honaker!r}."
            )
        if self.budget is not None and not isinstance(self.budget, Ledger):
            raise ParameterTypeError(
                f"The 'budget' parameter of {caller} must be a dpsubmod Budget (or a Ledger, or "
                f"None); got {type(self.budget).__name__}."
            )
        if self.noise_sampler is not None and not callable(self.noise_sampler):
            raise ParameterTypeError(
                f"The 'noise_sampler' parameter of {caller} must be callable or None."
            )
        eps, dlt, rho = self._check_budget(caller)
        self._calibrate(T, d, sens, eps, dlt, rho, resolve_backend(self.backend, self.rng))

    @classmethod
    def _from_checked(cls, T: int, dim: int, *, noise: str, sensitivity: float,
                      epsilon: float, delta: float, backend: str | NoiseBackend | None,
                      rng: RNGLike, budget: Any = None) -> TreeAggregator:
        """The aggregator of a caller that has validated these values itself (a learner's
        constructor, from its user's arguments): ``T`` and ``dim`` positive ints, ``noise`` a
        name of :data:`NOISES`, ``sensitivity`` and ``epsilon`` finite and > 0, ``delta`` in
        (0, 1) (read only for Gaussian noise). Calibrated, stated and checked against
        ``budget`` as by the public constructor, whose checks are not run again."""
        obj = cls.__new__(cls)
        obj.T, obj.dim, obj.noise, obj.sensitivity = T, dim, noise, sensitivity
        dlt = float(delta) if noise == "gaussian" else 0.0
        obj.epsilon, obj.delta, obj.rho, obj.honaker = epsilon, dlt, None, False
        obj.rng, obj.backend, obj.budget, obj.noise_sampler = rng, backend, budget, None
        obj._calibrate(int(T), int(dim), float(sensitivity), float(epsilon), dlt, None,
                       resolve_backend(backend, rng))
        return obj

    def _calibrate(self, T: int, d: int, sens: float, eps: float | None, dlt: float,
                   rho: float | None, backend: NoiseBackend) -> None:
        """Calibrate the node noise to the checked parameters, state the stream's event,
        refuse a budget that cannot fit it, and start an empty stream."""
        caller = "TreeAggregator"
        if backend.discrete and self.noise == "l2laplace":
            raise ValidationError(
                f"The {backend.name} backend has no exact l2-Laplace sampler; use "
                "noise='gaussian' or noise='laplace' with an l1 sensitivity, or backend='numpy'."
            )
        L = T.bit_length()
        norm = NOISES[self.noise]
        eff = backend.effective_sensitivity(sens, kind=norm, dim=d)
        scale, node_var, rho = _node_noise(self.noise, L, d, eff, eps, dlt, rho,
                                           discrete=backend.discrete, caller=caller)
        self._T, self._d, self._L = T, d, L
        self._sens = sens
        self._backend = backend
        self._scale = float(scale)
        self._node_var = float(node_var)
        # On a grid backend the node noise is built and checked once, before anything is
        # charged: on OpenDP, L nodes' privacy maps at the node sensitivity must fit the charge.
        self._node = None
        if backend.discrete and self.noise_sampler is None and hasattr(backend, "node_noise"):
            self._node = backend.node_noise(
                self.noise, float(scale), sensitivity=sens, dim=d, uses=L,
                epsilon=eps if self.noise == "laplace" else None,
                rho=rho if self.noise == "gaussian" else None)
        self._kind, self._dim, self._engine = norm, d, (backend.engine if self._node is None
                                                        else self._node.engine)
        note = self._note(norm, backend)
        # The whole stream is one Gaussian mechanism of l2 sensitivity sqrt(L) Delta over the
        # nodes (Honaker's estimator is post-processing), which the PLD accountant can use.
        law = None
        if self.noise == "gaussian" and not backend.discrete:
            # rounded down by far more than the few rounding errors of the quotient
            law = ("gaussian", self._scale / (math.sqrt(L) * eff) * (1.0 - 1e-12))
        fields = self._fields(self._engine)
        # derived from the checked parameters: not validated a second time
        if eps is None:
            event = PrivacyEvent._trusted("tree_aggregation", math.inf, 0.0, rho, 1, note, law,
                                          **fields)
        else:
            event = PrivacyEvent._trusted("tree_aggregation", eps, dlt, rho, 1, note, law,
                                          **fields)
        self._stream_event = event
        # A budget that cannot fit the stream's cost is refused now, not at the first item;
        # it is still charged only at the first update (a Budget shared with other releases
        # may refuse it then, before any noise).
        can_charge = getattr(self.budget, "can_charge", None)
        if can_charge is not None and not can_charge(event):
            raise BudgetExceededError(
                f"The 'budget' parameter of {caller} ({self.budget!r}) cannot fit the stream's "
                f"cost (epsilon={event.epsilon:.6g}, delta={event.delta:.6g}); nothing was "
                "charged or released. Pass a smaller epsilon (or delta), or a larger budget."
            )
        # Honaker weight on a node's own noisy value at each height (the rest goes to the sum
        # of its children's estimates): w_h = r_h with r_h the variance ratio 2^h / (2^(h+1)-1).
        self._w = np.array([2.0**h / (2.0 ** (h + 1) - 1.0) for h in range(L)])
        self._t = 0
        self._recorded = False
        self._open = np.zeros((L, d))   # exact sums of the nodes still being filled
        # On a grid backend each item is rounded to the grid and nodes are summed in exact
        # integer units: a floating-point sum could move by more than the declared sensitivity
        # between neighbouring streams (Casacuberta et al. 2022).
        self._open_units = [[0] * d for _ in range(L)] if backend.discrete else None
        self._done = np.zeros((L, d))   # released value of the latest completed node per level
        self._prefix = np.zeros(d)

    def _check_budget(self, caller: str) -> tuple[float | None, float, float | None]:
        if self.noise == "gaussian":
            if self.rho is not None:
                if self.epsilon is not None or self.delta != 0.0:
                    raise ValidationError(
                        f"{caller}: pass either rho, or epsilon and delta, not both."
                    )
                rho = check_real(self.rho, "rho", low=0.0, low_open=True, caller=caller)
                return None, 0.0, rho
            if self.epsilon is None:
                raise ValidationError(
                    f"{caller} with noise='gaussian' needs epsilon and delta (or rho)."
                )
            eps = check_epsilon_finite(self.epsilon, caller=caller)
            dlt = check_real(self.delta, "delta", low=0.0, high=1.0, low_open=True,
                             high_open=True, caller=caller,
                             fix="Gaussian noise needs 0 < delta < 1; use noise='laplace' for "
                                 "pure DP.")
            return eps, dlt, None
        if self.rho is not None:
            raise ValidationError(
                f"The 'rho' parameter of {caller} applies only to noise='gaussian'."
            )
        if self.epsilon is None:
            raise ValidationError(f"{caller} needs epsilon (the budget of the whole stream).")
        eps = check_epsilon_finite(self.epsilon, caller=caller)
        dlt = check_delta(self.delta, caller=caller)
        if dlt != 0.0:
            raise ValidationError(
                f"The 'delta' parameter of {caller} must be 0 with noise={self.noise!r} "
                "(pure DP); use noise='gaussian' for (epsilon, delta)-DP."
            )
        return eps, 0.0, None

    def _note(self, norm: str, backend: NoiseBackend, sens: float | None = None) -> str:
        engine = None if self._node is None else self._node.engine
        return (f"binary mechanism, T={self._T}, levels={self._L}, node noise {self.noise} "
                f"(scale {self._scale:.6g}), per-step {norm} sensitivity="
                f"{self._sens if sens is None else sens:g}"
                f"{', Honaker estimator' if self.honaker else ''}, "
                f"backend={backend.label(self._sens, dim=self._d, engine=engine)}")

    # -- the privacy map ------------------------------------------------------------------------
    def _event(self, engine: str) -> PrivacyEvent:
        return self._stream_event  # one engine draws every node, fixed at construction

    def privacy_map(self, d_in: float | None = None) -> PrivacyEvent:
        """The privacy cost of the whole stream when one item moves by at most ``d_in``.

        Parameters
        ----------
        d_in : float or None, default=None
            The per-item sensitivity bound (l1 for Laplace noise, l2 otherwise); ``None``
            means the declared ``sensitivity``.

        Returns
        -------
        PrivacyEvent
            At the declared sensitivity: :attr:`event`, the one event the stream charges. At
            another ``d_in``: ``L d_eff / scale`` (rounded up) for Laplace and l2-Laplace
            noise; the zCDP cost ``L d_eff^2 / (2 sigma^2)`` for Gaussian noise.
        """
        return super().privacy_map(d_in)

    def _event_at(self, d_in: float) -> PrivacyEvent:
        eff = self._effective(d_in)
        note = self._note(self._kind, self._backend, d_in)
        fields = self._fields(self._engine)
        if self.noise == "gaussian":
            r = eff / self._scale
            return PrivacyEvent("tree_aggregation", math.inf, 0.0, self._L * r * r / 2.0, 1,
                                note, **fields)
        eps = _div_up(_mul_up(float(self._L), eff), self._scale)
        return PrivacyEvent("tree_aggregation", eps, 0.0, None, 1, note, **fields)

    def release(self, data: Any, *, budget: Any = None) -> np.ndarray:
        """Add item ``data`` to the stream (:meth:`update`) and return the new noisy prefix.

        Parameters
        ----------
        data : array-like, shape (dim,)
            The next item.
        budget : Budget, Ledger or None, default=None
            Charged with :meth:`privacy_map`'s event at the first item, before any noise is
            drawn (instead of a ``budget`` given at construction); ``None`` uses that one.

        Returns
        -------
        numpy.ndarray, shape (dim,)
        """
        given = self.budget
        if budget is not None:
            _check_budget(budget, "TreeAggregator.release")
            if given is not None and budget is not given:
                raise ValidationError(
                    "TreeAggregator.release: this aggregator was built with a budget; pass "
                    "budget= once, at construction or here."
                )
            self.budget = budget
        try:
            self.update(data)  # checks the item, charges at the first one, then draws
        finally:
            self.budget = given
        return self.prefix()

    # -- public state -----------------------------------------------------------------------
    @property
    def t(self) -> int:
        """Number of items received."""
        return self._t

    @property
    def levels(self) -> int:
        """``tree_levels(T)``: the most nodes an item touches or a prefix uses."""
        return self._L

    @property
    def scale(self) -> float:
        """Node-noise scale (Laplace ``b``, l2-Laplace ``s`` or Gaussian ``sigma``)."""
        return self._scale

    @property
    def node_variance(self) -> float:
        """Per-coordinate variance of one node's noise."""
        return self._node_var

    @property
    def event(self) -> PrivacyEvent:
        """The privacy cost of the whole stream (charged to ``budget`` at the first update)."""
        return self._stream_event

    def noise_variance(self, t: int | None = None) -> float:
        """Per-coordinate variance of the noise in the prefix sum after ``t`` items.

        Plain: ``popcount(t) * node_variance``. Honaker:
        ``node_variance * sum over set bits h of t of 2^h / (2^(h+1) - 1)``. For a grid
        (secure) backend this is the variance of the continuous noise it approximates.

        Parameters
        ----------
        t : int or None, default=None
            Step in ``[0, T]``; ``None`` means the current step.
        """
        t = self._t if t is None else check_int(t, "t", low=0, high=self._T,
                                                caller="TreeAggregator.noise_variance")
        bits = [h for h in range(self._L) if (t >> h) & 1]
        if self.honaker:
            return self._node_var * float(sum(self._w[h] for h in bits))
        return self._node_var * len(bits)

    # -- the stream -------------------------------------------------------------------------
    def update(self, x: Any) -> None:
        """Add item ``x`` (shape ``(dim,)``, or a scalar when ``dim == 1``) to the stream.

        Raises
        ------
        StreamLengthError
            When ``T`` items were already received; nothing is drawn or released.
        BudgetExceededError
            From a :class:`~dpsubmod.privacy.budget.Budget` at the first update.
        """
        if self._t >= self._T:
            raise StreamLengthError(
                f"TreeAggregator was declared with horizon T={self._T} and has received "
                f"{self._t} items; item {self._t + 1} is refused and nothing was released. "
                "Build a new aggregator with a larger T (its noise is calibrated to T)."
            )
        arr = check_finite(x, "x", caller="TreeAggregator.update")
        if arr.ndim == 0 and self._d == 1:
            arr = arr.reshape(1)
        if arr.shape != (self._d,):
            raise ValidationError(
                f"The 'x' argument of TreeAggregator.update must have shape ({self._d},); "
                f"got {arr.shape}."
            )
        if not self._recorded:
            charge(self.budget, self._stream_event, "TreeAggregator.update")
            self._recorded = True
        t = self._t + 1
        if self._open_units is not None:
            units = self._backend.to_units(arr, sensitivity=self._sens, dim=self._d)
            for row in self._open_units:
                for i, u in enumerate(units):
                    row[i] += u
        else:
            self._open += arr
        top = (t & -t).bit_length() - 1  # trailing zeros: the levels whose node ends at t
        left_prev = None
        child = None
        for h in range(top + 1):
            if self._open_units is not None:
                exact = self._open_units[h]
                self._open_units[h] = [0] * self._d
            else:
                exact = self._open[h].copy()
                self._open[h] = 0.0
            if not self.honaker and h < top:
                continue  # never part of a prefix: not released, no noise drawn
            value = self._release(h, (t >> h) - 1, exact)
            if self.honaker and h > 0:
                w = self._w[h]
                value = w * value + (1.0 - w) * (left_prev + child)
            left_prev = self._done[h].copy()  # left sibling of the node completed above
            self._done[h] = value
            child = value
        self._t = t
        self._prefix = np.zeros(self._d)
        for h in range(self._L):
            if (t >> h) & 1:
                self._prefix += self._done[h]

    def _release(self, level: int, index: int, exact: Any) -> np.ndarray:
        """The noisy value of the node at (``level``, ``index``); each node is released once.

        ``exact`` is the node's sum: floats, or exact integer grid units on a grid backend.
        """
        b = self._backend
        if self._open_units is not None:
            if self.noise_sampler is not None:
                g = float(b.grid(self._sens, self._d))
                return np.array(exact, dtype=float) * g + np.asarray(
                    self.noise_sampler(level, index), dtype=float).reshape(self._d)
            if self._node is not None:
                return self._node(exact)
            if self.noise == "laplace":
                return b.add_laplace_units(exact, self._scale, sensitivity=self._sens,
                                           dim=self._d)
            return b.add_gaussian_units(exact, self._scale, sensitivity=self._sens, dim=self._d)
        if self.noise_sampler is not None:
            noise = np.asarray(self.noise_sampler(level, index), dtype=float).reshape(self._d)
            return exact + noise
        if self.noise == "laplace":
            return b.add_laplace(exact, self._scale, sensitivity=float(self.sensitivity))
        if self.noise == "l2laplace":
            return b.add_l2_laplace(exact, self._scale, sensitivity=float(self.sensitivity))
        return b.add_gaussian(exact, self._scale, sensitivity=float(self.sensitivity))

    def prefix(self) -> np.ndarray:
        """The noisy sum of the items received so far (zeros before the first item)."""
        return self._prefix.copy()

    # -- river-style helpers ----------------------------------------------------------------
    def _get_params(self) -> dict[str, Any]:
        return {
            "T": self.T, "dim": self.dim, "noise": self.noise, "sensitivity": self.sensitivity,
            "epsilon": self.epsilon, "delta": self.delta, "rho": self.rho,
            "honaker": self.honaker, "rng": self.rng, "backend": self.backend,
            "budget": self.budget, "noise_sampler": self.noise_sampler,
        }

    def clone(self) -> TreeAggregator:
        """A fresh aggregator with the same parameters (an integer ``rng`` gives the same noise).

        A clone is a new release: it charges its own event to ``budget`` when used.
        """
        return TreeAggregator(**self._get_params())

    def __repr__(self) -> str:
        budget = (f"rho={self.rho}" if self.epsilon is None
                  else f"epsilon={self.epsilon}" + (f", delta={self.delta}" if self.delta else ""))
        return (f"TreeAggregator(T={self.T}, dim={self.dim}, noise={self.noise!r}, "
                f"sensitivity={self.sensitivity}, {budget}, honaker={self.honaker}, t={self._t})")
