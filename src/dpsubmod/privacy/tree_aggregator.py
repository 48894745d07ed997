"""The tree-aggregation mechanism (the binary mechanism) as a mechanism object:
:class:`TreeAggregator` releases private prefix sums of a vector stream, one noisy node per dyadic
block, with an optional Honaker estimator.

Its calibration (node-noise scale and variance, the levels an item touches) and the privacy
argument are in :mod:`~dpsubmod.privacy.continual`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .._rng import RNGLike
from .._validation import check_finite, check_int, check_real
from ..errors import (
    BudgetExceededError,
    ParameterTypeError,
    StreamLengthError,
    ValidationError,
)
from ._inputs import _check_budget, _div_up, _mul_up
from .backends import NoiseBackend, resolve_backend
from .continual import NOISES, _node_noise, _stream_budget
from .events import PrivacyEvent
from .ledger import Ledger, charge
from .mechanisms import Mechanism

__all__ = ["TreeAggregator"]



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
        eps, dlt, rho = _stream_budget(self.noise, self.epsilon, self.delta, self.rho, caller)
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
