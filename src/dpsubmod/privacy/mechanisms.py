"""The mechanism contract: a :class:`Mechanism` is built from public parameters, validated
once, carries its privacy map and releases through one path (charge, then draw).

The mechanisms live one family per module: pure-DP additive noise
(:class:`~.additive.Laplace`, :class:`~.additive.L2Laplace`) in
:mod:`~dpsubmod.privacy.additive`, the Gaussian mechanism (:class:`~.gaussian_mechanism.Gaussian`)
in :mod:`~dpsubmod.privacy.gaussian_mechanism`; selection: the exponential mechanism
(:class:`~.selection.ExponentialMechanism`) in :mod:`~dpsubmod.privacy.selection`, and
report-noisy-max and permute-and-flip (:class:`~.noisy_max.ReportNoisyMax`,
:class:`~.noisy_max.PermuteAndFlip`) in :mod:`~dpsubmod.privacy.noisy_max`; the batched draw of
Hedge (:class:`~.weights.ExponentialWeights`) in :mod:`~dpsubmod.privacy.weights`; the exponential
mechanism over the bases of a product law (:class:`~.product.ProductBaseExponential`) in
:mod:`~dpsubmod.privacy.product`; tree aggregation (:class:`~.tree_aggregator.TreeAggregator`)
in :mod:`~dpsubmod.privacy.tree_aggregator`. Each family's free functions (``laplace``,
``exponential_mechanism``, ...) are one-line conveniences over its objects, with the same
signatures, errors and draws. Calibration helpers and privacy maps as functions are in
:mod:`~dpsubmod.privacy.calibration` (pure DP) and :mod:`~dpsubmod.privacy.gaussian_calibration`
(the Gaussian mechanism).

Conventions shared by every mechanism.

* **Privacy parameters are keyword-only** and validated once, when the mechanism is built
  (``epsilon`` finite and > 0, ``delta`` in [0, 1), ``sensitivity`` finite and > 0); the data
  (values, scores) are checked when released (finite values; scores without NaN or ``+inf``).
  A bad value raises a :class:`~dpsubmod.errors.DPSubmodError` subclass naming the argument,
  and nothing is recorded or drawn.
* **Privacy map.** ``mechanism.privacy_map(d_in)`` returns the typed
  :class:`~dpsubmod.privacy.events.PrivacyEvent` of one release whose input moves by at most
  ``d_in`` between neighbours (default: the declared sensitivity), with the ``backend`` and
  ``engine`` fields naming who draws; at the declared sensitivity it is the event that
  :meth:`Mechanism.release` charges.
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
  Delta**2/(2 sigma**2)); their ``backend`` and ``engine`` fields name the backend (with its
  grid) and the sampling engine that drew, and their ``note`` repeats them for readers.
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

from abc import ABC, abstractmethod
from typing import Any

from .._rng import RNGLike
from ._inputs import _charge, _check_budget, _epsilon, _sensitivity
from ._noise_backend import NoiseBackend, Release
from .backends import resolve_backend
from .events import PrivacyEvent

__all__ = ["Mechanism"]


class Mechanism(ABC):
    """A mechanism built from public parameters, validated once, with a privacy map.

    Subclasses validate every parameter in their constructor (nothing is charged or drawn
    there), resolve the noise backend and compute the noise parameter. Releasing then follows
    one path: check the budget's type, check the data, prepare the draw (whatever the engine
    can refuse, it refuses here), charge :meth:`privacy_map`'s event, draw.

    In the manner of OpenDP's ``Measurement`` (input domain and metric, a privacy map, checked
    when built) and of the typed ``DpEvent`` of Google's ``dp_accounting``.

    Attributes
    ----------
    noise_backend : NoiseBackend
        The backend the draws come from, resolved once at construction (a seeded numpy backend
        continues one stream over successive releases).
    """

    #: The ``mechanism`` label of the events it charges.
    mechanism: str = "mechanism"
    _caller: str = "Mechanism"

    # Set by subclasses' constructors: the backend, the declared sensitivity, its norm and the
    # dimension of a release (they fix the grid of a grid backend).
    _backend: NoiseBackend
    _sens: float
    _kind: str = "linf"
    _dim: int = 1

    #: Set by :meth:`_trusted`: ``epsilon`` is a share of one that a public entry validated.
    _epsilon_checked: bool = False

    @classmethod
    def _named(cls, caller: str, **params: Any) -> Mechanism:
        """The mechanism built for the free function ``caller``, whose name its errors give."""
        obj = cls.__new__(cls)
        obj._caller = caller
        obj.__init__(**params)  # type: ignore[misc]
        return obj

    @classmethod
    def _trusted(cls, caller: str, **params: Any) -> Mechanism:
        """The mechanism of ``caller``'s run whose ``epsilon`` is a share of one that
        ``caller``'s public entry validated, so its constructor does not check it again
        (``_epsilon_checked``; the pattern of
        :meth:`PrivacyEvent._trusted <dpsubmod.privacy.events.PrivacyEvent._trusted>`).

        The caller vouches that the share is finite and > 0 (a share that underflows to 0 is
        refused by the caller, in the terms of its user's arguments). Every other parameter is
        checked as by the constructor, and so is the noise parameter computed from ``epsilon``.
        """
        obj = cls.__new__(cls)
        obj._caller = caller
        obj._epsilon_checked = True
        obj.__init__(**params)  # type: ignore[misc]
        return obj

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._caller = cls.__name__  # the name its errors give; a free function sets its own

    def _validate(self, epsilon: object, sensitivity: object, backend: object,
                  rng: RNGLike) -> None:
        """The shared part of a constructor: ``epsilon`` and ``sensitivity`` checked under the
        caller's name, the backend resolved once."""
        self._eps = float(epsilon) if self._epsilon_checked else _epsilon(epsilon, self._caller)
        self._sens = _sensitivity(sensitivity, self._caller)
        self._backend = resolve_backend(backend, rng)  # type: ignore[arg-type]

    @property
    def noise_backend(self) -> NoiseBackend:
        """The backend the draws come from."""
        return self._backend

    # -- the privacy map ----------------------------------------------------------------------
    def privacy_map(self, d_in: float | None = None) -> PrivacyEvent:
        """The privacy cost of one release whose input moves by at most ``d_in``.

        Parameters
        ----------
        d_in : float or None, default=None
            The sensitivity bound of the input between neighbours, in the mechanism's norm;
            ``None`` means the declared sensitivity.

        Returns
        -------
        PrivacyEvent
            At the declared sensitivity: exactly the event :meth:`release` charges (its
            ``backend`` and ``engine`` fields name the backend and engine that draw; a grid
            draw whose values leave OpenDP's 64-bit range falls back to the pure-Python engine,
            and the event it charges names that engine). At another ``d_in``: the guarantee
            the same noise gives at that distance.
        """
        if d_in is None:
            return self._charged(self._backend.engine)
        d = _sensitivity(d_in, f"{type(self).__name__}.privacy_map", "d_in")
        if d == self._sens:
            return self._charged(self._backend.engine)
        return self._event_at(d)

    def _charged(self, engine: str) -> PrivacyEvent:
        """The event a release drawn by ``engine`` charges, built once per engine: it depends
        only on the parameters validated at construction."""
        cache = self.__dict__.setdefault("_charged_events", {})
        event = cache.get(engine)
        if event is None:
            event = cache[engine] = self._event(engine)
        return event

    def _effective(self, d_in: float | None = None) -> float:
        """The sensitivity the backend's noise meets for input distance ``d_in`` (on a grid
        backend, measured on the grid the declared sensitivity chose)."""
        if d_in is None:
            return self._backend.effective_sensitivity(self._sens, kind=self._kind,
                                                       dim=self._dim)
        return self._backend.effective_sensitivity(d_in, kind=self._kind, dim=self._dim,
                                                   grid_of=self._sens)

    def _fields(self, engine: str) -> dict[str, str]:
        """The ``backend`` and ``engine`` fields of an event drawn by ``engine``."""
        return {"backend": self._backend.label(self._sens, dim=self._dim, engine=engine),
                "engine": engine}

    @abstractmethod
    def _event(self, engine: str) -> PrivacyEvent:
        """The event of one release at the declared sensitivity, drawn by ``engine``."""

    @abstractmethod
    def _event_at(self, d_in: float) -> PrivacyEvent:
        """The event of one release at input distance ``d_in`` (another than declared)."""

    # -- releasing ------------------------------------------------------------------------------
    @abstractmethod
    def release(self, data: Any, *, budget: Any = None) -> Any:
        """Charge :meth:`privacy_map`'s event to ``budget``, then draw.

        Parameters
        ----------
        data : array-like
            The exact query answer (additive mechanisms) or the candidates' scores
            (selection).
        budget : Budget, Ledger or None, default=None
            Charged before anything is drawn; a budget that refuses the charge stops the
            release and nothing changes (no event, no draw, the generator untouched).

        Returns
        -------
        object
            The release (see the subclass).
        """


class PreparedMechanism(Mechanism):
    """A mechanism whose release is one prepared draw: check the data, prepare the draw
    (whatever the engine can refuse, it refuses here), charge, draw.

    The additive and selection mechanisms release this way; those whose release draws in
    several steps (tree aggregation, Hedge's rows, the product-base sampler) write their own
    :meth:`release` on the same order: budget checked, data checked, charge, draw.
    """

    def release(self, data: Any, *, budget: Any = None) -> Any:
        _check_budget(budget, self._caller)
        x = self._input(data)
        draw = self._prepare(x)
        _charge(budget, self._caller, lambda: self._charged(draw.engine))
        return self._output(draw(), x)

    release.__doc__ = Mechanism.release.__doc__

    @abstractmethod
    def _input(self, data: Any) -> Any:
        """The data, checked (a refusal names the user's argument)."""

    @abstractmethod
    def _prepare(self, x: Any) -> Release:
        """The draw, built and checked but not run."""

    def _output(self, out: Any, x: Any) -> Any:
        return out
