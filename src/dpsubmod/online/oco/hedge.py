r"""Hedge (exponential weights) with log-space weights (Freund and Schapire 1997; Algorithm 1 of
Perez-Salazar and Cummings 2021).

:class:`Hedge` keeps, for each action ``a`` of a finite set ``[N]``, the cumulative gain
:math:`G_t(a) = \sum_{\tau < t} g_\tau(a)` of gain vectors :math:`g_\tau \in [0, 1]^N` and draws
its action from :math:`x_t(a) \propto \exp(\eta\, G_t(a))`. The weights are never stored: it
works with the log-weights :math:`\eta G` (log-sum-exp for probabilities, the Gumbel-max trick
for draws), so no overflow occurs however large :math:`\eta t` grows.

Every draw is an exponential-mechanism draw with score sensitivity 1 (gains are clipped to
``[0, 1]``), hence :math:`2\eta`-DP: a release of the
:class:`~dpsubmod.privacy.weights.ExponentialWeights` mechanism, whose privacy map gives the
run's plan and which charges each data-dependent draw to the plan's allowance before drawing;
:mod:`dpsubmod.online.oco.hedge_privacy` composes the draws and calibrates the rate.

References
----------
Y. Freund and R. E. Schapire, "A decision-theoretic generalization of on-line learning and an
application to boosting", JCSS 55(1), 1997. O. Perez-Salazar and R. Cummings, "Differentially
private online submodular maximization", AISTATS 2021 (arXiv:2010.12816), Algorithm 1.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ..._rng import RNGLike, as_generator
from ..._validation import check_delta, check_finite, check_int, check_real
from ...errors import GroundSetMismatchError, StreamLengthError, ValidationError
from ...privacy.backends import resolve_backend
from ...privacy.composition import check_composition, compose
from ...privacy.plan import PrivacyPlan
from ...privacy.weights import ExponentialWeights
from .._plans import learner_backend, run_plan
from ..protocol import OnlineBase
from ..tags import NOISE_BACKENDS, LearnerTags
from .hedge_privacy import check_backend_param, check_eta


def clip_gains(g: np.ndarray) -> np.ndarray:
    """Gains enter the weights only through this clip to ``[0, 1]``: the score sensitivity is 1,
    and the privacy of a draw holds, whatever the gain source does."""
    return np.clip(g, 0.0, 1.0)


class Hedge(OnlineBase):
    r"""Hedge with log-space weights: ``copies`` independent learners over ``n`` actions sharing
    one learning rate (Freund and Schapire 1997; Algorithm 1 of Perez-Salazar and Cummings 2021).

    A river-style state machine: :meth:`sample` draws one action per copy, :meth:`update` adds a
    gain vector per copy (clipped to ``[0, 1]``), :meth:`probabilities` returns the current
    distributions :math:`x_t \propto \exp(\eta G_t)`. The state (cumulative gains, generator) is
    built lazily and rebuilt by :meth:`reset`; :meth:`clone` gives a fresh copy.

    Privacy: each draw of each copy is an exponential-mechanism draw with score ``G`` (sensitivity
    1 under "one gain vector replaced", gains in ``[0, 1]``) and weight ``eta``, hence
    ``2 eta``-DP; see the module docstring for the composition over draws and copies. A draw
    depends on the data only once a gain has been added (before that the weights are uniform).
    With ``max_draws`` given, Hedge states the guarantee of a whole run of at most
    ``max_draws`` data-dependent draws per copy (:attr:`privacy`, before the first draw) and
    refuses a draw beyond them; without it, it states none.

    Parameters
    ----------
    n : int
        Number of actions ``N``.
    eta : float
        Learning rate, > 0.
    copies : int, default=1
        Number of independent Hedge learners (the ``k`` ordered experts of the online greedy).
    max_draws : int or None, default=None
        The most data-dependent draws per copy of the run (the horizon of the private run).
        ``None``: no privacy statement (a learner used inside another, whose plan covers the
        draws).
    delta : float, default=0.0
        Target delta of the statement (``max_draws`` given).
    composition : {"auto", "basic", "advanced", "kov", "zcdp"}, default="auto"
        How the ``copies * max_draws`` draws compose in the statement (see
        :mod:`dpsubmod.privacy.composition`).
    backend : {None, "numpy", "secure", "opendp"} or NoiseBackend, default=None
        Sampler of the draws: numpy Gumbel-max (seeded by ``rng``), or the exact secure sampler
        (OpenDP's noisy max when it is installed, else dpsubmod's exact Python sampler;
        randomness from the operating system, ``rng`` then unused); ``"opendp"`` requires
        OpenDP; an instance such as ``SecureBackend(...)`` is used as is.
        ``None`` (the default): ``"secure"`` without ``rng``, a seeded ``"numpy"`` simulation
        with one (:func:`~dpsubmod.privacy.backends.choose_backend`).
    rng : int, Generator, SeedSequence or None, default=None
        Resolved when the state is built.
    budget : Budget or None, default=None
        With ``max_draws``: charged the whole run's guarantee at construction, before any draw
        (:class:`~dpsubmod.errors.BudgetExceededError` when it does not fit; then nothing
        changes), again by :meth:`reset` after play and by every clone.

    Examples
    --------
    >>> h = Hedge(3, eta=1.0, rng=0)
    >>> h.update([1.0, 0.0, 0.0])
    >>> h.probabilities().round(3).tolist()
    [[0.576, 0.212, 0.212]]
    >>> h.sample().shape
    (1,)
    >>> Hedge(3, eta=0.01, max_draws=100, delta=1e-6).privacy.epsilon < 2 * 0.01 * 100
    True
    """

    _tags = LearnerTags(private=True, feedback="full", problem="experts",
                        assumption="oblivious", backends=NOISE_BACKENDS)

    def __init__(self, n: int, eta: float, *, copies: int = 1, max_draws: int | None = None,
                 delta: float = 0.0, composition: str = "auto", backend: str | None = None,
                 rng: RNGLike = None, budget: Any = None):
        caller = "Hedge"
        check_int(n, "n", low=1, caller=caller)
        check_eta(eta, caller)
        check_int(copies, "copies", low=1, caller=caller)
        if max_draws is not None:
            check_int(max_draws, "max_draws", low=1, caller=caller,
                      fix="Pass the number of data-dependent draws per copy of the run, or "
                          "None for no privacy statement.")
        check_delta(delta, caller=caller)
        check_composition(composition, caller)
        check_backend_param(backend, caller)
        self.n = n
        self.eta = eta
        self.copies = copies
        self.max_draws = max_draws
        self.delta = delta
        self.composition = composition
        self.backend = learner_backend(self, backend, rng, caller)
        self.rng = rng
        self.budget = budget
        _ = self.privacy  # a rule that does not apply at this delta fails here, not at first use
        self._finish_construction(Hedge)

    # -- privacy ------------------------------------------------------------------------------
    @property
    def noise_off(self) -> bool:
        """Whether the run has no privacy statement (``max_draws=None``)."""
        return self.max_draws is None

    def _draw_mechanism(self, backend: Any) -> ExponentialWeights:
        """The mechanism of a draw: one exponential-weights row per copy, at weight ``eta``."""
        return ExponentialWeights(weight=float(self.eta), rows=int(self.copies), backend=backend)

    def _privacy_plan(self) -> PrivacyPlan | None:
        """``max_draws`` releases of the draw's mechanism (``copies * max_draws``
        exponential-mechanism draws), from its privacy map; ``None`` without ``max_draws``."""
        if self.max_draws is None:
            return None

        def build() -> PrivacyPlan:
            # calibrated only, never drawn from: a numpy backend here needs no seed
            draw = self._draw_mechanism(self.backend).privacy_map()
            event = dataclasses.replace(
                draw, count=draw.count * int(self.max_draws),
                note=f"{int(self.copies)} copies x {int(self.max_draws)} data-dependent draws, "
                     f"eta={float(self.eta):.6g}, score sensitivity 1")
            dlt = float(self.delta)
            if self.composition == "auto":
                rule = compose([event], dlt, "auto", caller="Hedge")[2]
            else:
                rule = self.composition
            return run_plan("Hedge", [event], delta=dlt, composition=rule,
                            neighbouring="gain streams differing in one round's gain vectors "
                                         "(each clipped to [0, 1])",
                            backend=self.backend, rng=self.rng)

        return self._memo_plan(build)

    def _has_played(self) -> bool:
        return bool(getattr(self, "_draws", 0) or getattr(self, "_fed", False))

    # -- state --------------------------------------------------------------------------------
    def _reset(self) -> None:
        self._G = np.zeros((int(self.copies), int(self.n)))
        self._gen = as_generator(self.rng)
        # only the numpy backend draws from rng; a secure one (name or instance) owns its
        # randomness
        numpy_named = self.backend is None or (isinstance(self.backend, str)
                                               and self.backend == "numpy")
        self._backend = resolve_backend(self.backend, self._gen if numpy_named else None)
        self._mechanism = self._draw_mechanism(self._backend)
        self._draws = 0
        self._fed = False  # no gain yet: the weights are uniform and a draw is data-independent
        self._dependent = 0
        # the data-dependent draws are charged to the plan's allowance (None without a plan)
        self._allowance = self._run_allowance()

    def _ensure_state(self) -> None:
        if not hasattr(self, "_G"):
            self._reset()

    @property
    def gains(self) -> np.ndarray:
        """Cumulative (clipped) gains ``G``, shape ``(copies, n)`` (a copy; not private)."""
        self._ensure_state()
        return self._G.copy()

    @property
    def draws(self) -> int:
        """Number of :meth:`sample` calls so far."""
        self._ensure_state()
        return self._draws

    def log_probabilities(self) -> np.ndarray:
        """Log of the current distributions, shape ``(copies, n)`` (non-private diagnostic)."""
        self._ensure_state()
        # A huge eta takes a gap below the leader to -inf (probability 0): the limit law of
        # Hedge as eta grows, so that overflow is not an error.
        with np.errstate(over="ignore"):
            z = float(self.eta) * (self._G - self._G.max(axis=1, keepdims=True))
        return z - np.log(np.exp(z).sum(axis=1, keepdims=True))

    def probabilities(self) -> np.ndarray:
        """The current distributions :math:`x_t`, shape ``(copies, n)`` (non-private diagnostic)."""
        return np.exp(self.log_probabilities())

    # -- protocol -----------------------------------------------------------------------------
    def sample(self, *, distinct: bool = False) -> np.ndarray:
        """One exponential-mechanism draw per copy; returns an int array of shape ``(copies,)``.

        Parameters
        ----------
        distinct : bool, default=False
            Draw the copies in order, each from its distribution restricted to the actions the
            earlier copies have not drawn (``copies <= n``). Restricting an exponential
            mechanism to a candidate set fixed by earlier outputs keeps its privacy: every
            likelihood ratio is a ratio of the same weights over a smaller normaliser, so each
            copy's draw is as private as the unrestricted one.

        Raises
        ------
        StreamLengthError
            With ``max_draws`` given, when the run's data-dependent draws are all made (nothing
            is drawn).
        ValidationError
            With ``distinct=True`` and more copies than actions.
        """
        self._ensure_state()
        if distinct and int(self.copies) > int(self.n):
            raise ValidationError(
                f"Hedge.sample(distinct=True) needs copies <= n; this Hedge has "
                f"copies={self.copies} and n={self.n}. Pass distinct=False.")
        budget = None
        if self._fed and self._allowance is not None:
            if self._dependent >= int(self.max_draws):  # type: ignore[arg-type]
                raise StreamLengthError(
                    f"Hedge was built for max_draws={self.max_draws} data-dependent draws per "
                    "copy and has made them all; nothing was drawn. Build it with a larger "
                    "max_draws, or reset() it (a new run)."
                )
            budget = self._allowance
        # charge (a data-dependent draw), then draw
        out = self._release(self._mechanism, budget, distinct)
        if budget is not None:
            self._dependent += 1
        return out

    def _release(self, mechanism: ExponentialWeights, budget: Any,
                 distinct: bool) -> np.ndarray:
        """One draw per copy from the current gains through ``mechanism`` (built on
        ``self._backend``), charged to ``budget`` first: the path of :meth:`sample`, and of a
        learner that owns this bank and states its draws' privacy by its own mechanism."""
        out = mechanism.release(self._G, budget=budget, distinct=distinct)
        self._draws += 1
        return out

    def update(self, gains: object) -> None:
        """Add one gain vector per copy (shape ``(copies, n)``, or ``(n,)`` when ``copies == 1``);
        entries are clipped to ``[0, 1]``.

        Raises
        ------
        ValidationError
            On non-finite gains or a wrong shape.
        """
        self._ensure_state()
        g = check_finite(gains, "gains", caller="Hedge.update").astype(np.float64)
        if g.ndim == 1 and self._G.shape[0] == 1:
            g = g[None, :]
        if g.shape != self._G.shape:
            raise GroundSetMismatchError(
                f"The 'gains' of Hedge.update must have shape {self._G.shape}; got {g.shape}."
            )
        self._G += clip_gains(g)
        self._fed = True

    def update_one(self, copy: int, action: int, gain: float) -> None:
        """Add ``gain`` (clipped to ``[0, 1]``) to one action of one copy: the sparse update of
        the bandit algorithms (every other entry of the gain vectors is 0)."""
        self._ensure_state()
        c = check_int(copy, "copy", low=0, high=self._G.shape[0] - 1, caller="Hedge.update_one")
        a = check_int(action, "action", low=0, high=self._G.shape[1] - 1,
                      caller="Hedge.update_one")
        v = check_real(gain, "gain", caller="Hedge.update_one")
        self._G[c, a] += float(clip_gains(np.float64(v)))
        self._fed = True

    def _trusted_update(self, gains: np.ndarray) -> None:
        """Add already-validated gains (the learners clip before calling)."""
        self._G += gains
        self._fed = True
