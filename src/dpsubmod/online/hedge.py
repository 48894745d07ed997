r"""Hedge (exponential weights) with log-space weights, and its private calibration.

Hedge (Freund and Schapire 1997; Algorithm 1 of Perez-Salazar and Cummings 2021) keeps, for each
action ``a`` of a finite set ``[N]``, the cumulative gain :math:`G_t(a) = \sum_{\tau < t}
g_\tau(a)` of gain vectors :math:`g_\tau \in [0, 1]^N`, and draws its action at round ``t`` from

.. math::

    x_t(a) = \frac{\exp(\eta\, G_t(a))}{\sum_b \exp(\eta\, G_t(b))}.

The weights are never stored: :class:`Hedge` keeps the gains ``G`` and works with the log-weights
:math:`\eta G` (log-sum-exp for probabilities, the Gumbel-max trick for draws), so no overflow
occurs however large :math:`\eta t` grows.

Regret (Theorem 3 of Perez-Salazar and Cummings, from Freund and Schapire): for every action
``a``, :math:`\sum_t g_t(a) - \sum_t x_t^\top g_t \le \eta \sum_t x_t^\top g_t^2 + \ln N / \eta
\le \eta T + \ln N / \eta` (the proof needs :math:`\eta \le 1`).

Privacy: every draw is an exponential-mechanism draw
------------------------------------------------------
The draw at round ``t`` samples ``a`` with probability proportional to
:math:`\exp(\eta\, q(a))` with the score :math:`q(a) = G_t(a)`. Two neighbouring gain streams
differ in one vector :math:`g_\tau` (any change inside :math:`[0, 1]^N`), so every score moves by
at most 1: the score has sensitivity :math:`\Delta q = 1`. The exponential mechanism with
weight :math:`\varepsilon_0 / (2 \Delta q)` is :math:`\varepsilon_0`-DP (McSherry and Talwar
2007), so a Hedge draw is :math:`\varepsilon_0 = 2\eta`-DP, and it is also
:math:`2\eta`-bounded-range, hence :math:`(2\eta)^2/8`-zCDP (Cesar and Rogers 2021). The whole
run is an adaptive composition of its draws (each later draw depends on the data only through
its own scores; earlier draws are released). Proposition 2 of Perez-Salazar and Cummings calibrates
:math:`\eta = \varepsilon / \sqrt{32\, D \ln(1/\delta)}` for ``D`` draws, which by advanced
composition (Dwork, Rothblum and Vadhan 2010, with slack :math:`\delta`) gives

.. math::

    \varepsilon' = 2\eta\sqrt{2 D \ln(1/\delta)} + 2\eta D (e^{2\eta} - 1)
                 = \varepsilon/2 + O(\varepsilon^2 / \ln(1/\delta)) \le \varepsilon

whenever :math:`\varepsilon e^{2\eta} \le 4 \ln(1/\delta)` (the calibration is about twice
conservative: 0.509 at :math:`\varepsilon = 1`, :math:`\delta = 10^{-6}`). With ``k`` experts each
calibrated to :math:`(\varepsilon/k, \delta/k)` (:func:`hedge_eta` with ``experts=k``), basic
composition over the experts gives :math:`(\varepsilon, \delta)`. :func:`hedge_epsilon` evaluates
the exact guarantee of a given :math:`\eta` (the paper's formula, or the library's tightest valid
composition of all draws), and :func:`tight_hedge_eta` inverts it.

Gains outside :math:`[0, 1]` are clipped before they reach the weights, so the sensitivity bound,
and with it the guarantee, holds even for a misbehaving gain source.

The numpy backend draws by Gumbel-max in floating point (fast, seeded, for simulation; not
hardened against floating-point attacks); ``backend="secure"`` draws every action with the exact
exponential-mechanism sampler of :mod:`dpsubmod.privacy.backends` on grid-rounded scores.

References
----------
Y. Freund and R. E. Schapire, "A decision-theoretic generalization of on-line learning and an
application to boosting", JCSS 55(1), 1997. F. McSherry and K. Talwar, "Mechanism design via
differential privacy", FOCS 2007. C. Dwork, G. N. Rothblum and S. Vadhan, "Boosting and
differential privacy", FOCS 2010. O. Perez-Salazar and R. Cummings, "Differentially private
online submodular maximization", AISTATS 2021 (arXiv:2010.12816), Algorithm 1, Proposition 2,
Theorem 3. M. Cesar and R. Rogers, "Bounding, concentrating, and truncating: unifying privacy
loss composition for data analytics", ALT 2021.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._rng import RNGLike, as_generator, standard_gumbel
from .._validation import check_delta, check_finite, check_int, check_real
from ..errors import GroundSetMismatchError, ParameterTypeError, StreamLengthError, ValidationError
from ..privacy.composition import check_composition, compose, compose_epsilon, split_budget
from ..privacy.events import PrivacyEvent
from ..privacy.plan import PrivacyPlan
from ._plans import run_plan
from .protocol import OnlineBase

__all__ = [
    "Hedge",
    "hedge_eta",
    "hedge_draw_epsilon",
    "hedge_epsilon",
    "tight_hedge_eta",
    "best_composition",
    "HEDGE_COMPOSITIONS",
    "KOV_MAX_COUNT",
]

#: Composition rules of :func:`hedge_epsilon`: ``"paper"`` is the argument of Perez-Salazar and
#: Cummings (advanced composition per expert at ``delta / experts``, basic composition over the
#: experts); the others are the rules of :mod:`dpsubmod.privacy.composition` applied to all draws
#: as one sequence, ``"auto"`` the tightest of them.
HEDGE_COMPOSITIONS = ("paper", "auto", "basic", "advanced", "kov", "zcdp")

#: How the paper's composition is named in privacy statements.
PAPER_RULE = ("advanced composition per expert and basic over the experts (Perez-Salazar and "
              "Cummings, Theorem 5)")

_RULES = ("basic", "advanced", "kov", "zcdp")

_BACKENDS = (None, "numpy", "secure")


def _check_eta(eta: object, caller: str) -> float:
    return check_real(eta, "eta", low=0.0, low_open=True, caller=caller,
                      fix="The learning rate must be a positive finite number.")


def _backend_sensitivity(backend: object) -> float:
    """The score sensitivity the backend's sampler really has for a declared sensitivity 1."""
    if backend in (None, "numpy"):
        return 1.0
    from ..privacy.backends import resolve_backend

    return float(resolve_backend(backend).effective_sensitivity(1.0, kind="linf"))


def hedge_draw_epsilon(eta: float, *, backend: str | None = None) -> float:
    """Privacy of one Hedge draw: ``2 * eta`` (exponential mechanism, score sensitivity 1).

    On the secure backend the score sensitivity is the effective (grid-rounded) one, which is
    1 for its default grid.

    >>> hedge_draw_epsilon(0.01)
    0.02
    """
    from ..privacy.mechanisms import exponential_mechanism_epsilon

    e = _check_eta(eta, "hedge_draw_epsilon")
    if backend not in _BACKENDS:
        raise ValidationError(
            f"The 'backend' parameter of hedge_draw_epsilon must be one of {_BACKENDS}; got "
            f"{backend!r}."
        )
    return exponential_mechanism_epsilon(e, _backend_sensitivity(backend))


def hedge_eta(epsilon: float, delta: float, draws: float, *, experts: int = 1) -> float:
    r"""The private learning rate of Proposition 2 and Algorithms 2 and 3 of Perez-Salazar and
    Cummings: :math:`\eta = \varepsilon / (k \sqrt{32\, D \ln(k/\delta)})`.

    ``D`` is the number of draws each expert makes (``T`` in Algorithm 2 and Appendix B.1, the
    exploration budget :math:`2\gamma T` in Algorithm 3, ``M + 1`` in Appendix B.2) and ``k`` the
    number of experts (each then :math:`(\varepsilon/k, \delta/k)`-DP).

    Parameters
    ----------
    epsilon : float
        Total epsilon, > 0.
    delta : float
        Total delta, in (0, 1) (advanced composition needs a positive slack).
    draws : float
        ``D`` > 0 (need not be an integer).
    experts : int, default=1
        ``k``.

    Returns
    -------
    float

    Examples
    --------
    >>> round(hedge_eta(1.0, 1e-6, 10**4, experts=3), 8)
    0.00015258
    """
    caller = "hedge_eta"
    eps = check_real(epsilon, "epsilon", low=0.0, low_open=True, caller=caller)
    dlt = check_real(delta, "delta", low=0.0, high=1.0, low_open=True, high_open=True,
                     caller=caller, fix="Advanced composition needs delta > 0 (e.g. 1e-6).")
    D = check_real(draws, "draws", low=0.0, low_open=True, caller=caller)
    k = check_int(experts, "experts", low=1, caller=caller)
    return eps / (k * math.sqrt(32.0 * D * math.log(k / dlt)))


def _paper_epsilon(eps0: float, draws: int, delta: float, experts: int) -> float:
    # Theorem 4 (Dwork, Rothblum and Vadhan) per expert with slack delta / experts, then basic
    # composition over the experts, exactly as in the proof of Theorem 5.
    dp = delta / experts
    per = math.sqrt(2.0 * draws * math.log(1.0 / dp)) * eps0 + draws * eps0 * math.expm1(eps0)
    return experts * per


def hedge_epsilon(eta: float, draws: int, delta: float, *, experts: int = 1,
                  composition: str = "auto", backend: str | None = None) -> float:
    r"""The epsilon at total ``delta`` of ``experts`` Hedge copies making ``draws`` draws each.

    Each draw is :math:`2\eta`-DP and :math:`2\eta`-bounded-range (see the module docstring).

    Parameters
    ----------
    eta : float
        Learning rate, > 0.
    draws : int
        Data-dependent draws per expert, >= 1.
    delta : float
        Total delta in (0, 1) (``"basic"`` also accepts 0).
    experts : int, default=1
        Number of Hedge copies (adaptively composed, as in Lemma 1 of Perez-Salazar and
        Cummings).
    composition : {"paper", "auto", "basic", "advanced", "kov", "zcdp"}, default="auto"
        ``"paper"``: advanced composition per expert with slack ``delta / experts`` and basic
        composition over the experts (the proof of Theorem 5). The others apply the rule of
        :func:`~dpsubmod.privacy.composition.compose_epsilon` to all ``experts * draws`` draws
        as one sequence (valid since each draw is :math:`2\eta`-DP given everything released
        before it); ``"auto"`` is the tightest of basic, advanced, optimal (KOV) and
        bounded-range zCDP composition.
    backend : {None, "numpy", "secure"}, default=None
        The sampler (the secure backend's grid can inflate the score sensitivity).

    Returns
    -------
    float

    Examples
    --------
    The calibration of Proposition 2 is about twice conservative:

    >>> eta = hedge_eta(1.0, 1e-6, 1000)
    >>> round(hedge_epsilon(eta, 1000, 1e-6, composition="paper"), 4)
    0.5091
    """
    caller = "hedge_epsilon"
    e0 = hedge_draw_epsilon(eta, backend=backend)
    D = check_int(draws, "draws", low=1, caller=caller)
    k = check_int(experts, "experts", low=1, caller=caller)
    if composition not in HEDGE_COMPOSITIONS:
        raise ValidationError(
            f"The 'composition' parameter of {caller} must be one of {HEDGE_COMPOSITIONS}; got "
            f"{composition!r}."
        )
    if composition == "paper":
        dlt = check_real(delta, "delta", low=0.0, high=1.0, low_open=True, high_open=True,
                         caller=caller, fix="Advanced composition needs delta > 0.")
        return _paper_epsilon(e0, D, dlt, k)
    if composition == "auto":
        return best_composition(e0, k * D, delta)[0]
    return compose_epsilon(e0, k * D, delta, composition=composition, bounded_range=True)


#: Above this many draws ``"auto"`` skips the optimal (KOV) rule, whose cost grows linearly with
#: the count; for exponential-mechanism draws bounded-range zCDP is tighter there anyway.
KOV_MAX_COUNT = 10**5


def _auto_rules(count: int) -> tuple[str, ...]:
    return _RULES if count <= KOV_MAX_COUNT else ("basic", "advanced", "zcdp")


def best_composition(eps0: float, count: int, delta: float) -> tuple[float, str]:
    """``(epsilon, rule)``: the tightest valid composition of ``count`` bounded-range
    exponential-mechanism draws of ``eps0`` each at total ``delta`` (``"auto"``, without the
    optimal rule above :data:`KOV_MAX_COUNT` draws), and the rule that gives it."""
    found = []
    for m in _auto_rules(count):
        try:
            eps, _, used = compose([PrivacyEvent.exponential(eps0, count=count)], delta, m,
                                   caller="best_composition")
        except ValidationError:
            continue
        found.append((eps, used))
    return min(found)


def tight_hedge_eta(epsilon: float, delta: float, draws: int, *, experts: int = 1,
                    composition: str = "auto", backend: str | None = None) -> float:
    r"""The largest learning rate whose :func:`hedge_epsilon` is at most ``epsilon``.

    Not in the paper (its Proposition 2 is about twice conservative); offered as
    ``calibration="tight"`` by the learners. Same parameters as :func:`hedge_epsilon`.

    Examples
    --------
    >>> eta = tight_hedge_eta(1.0, 1e-6, 1000, composition="paper")
    >>> round(hedge_epsilon(eta, 1000, 1e-6, composition="paper"), 9)
    1.0
    """
    caller = "tight_hedge_eta"
    eps = check_real(epsilon, "epsilon", low=0.0, low_open=True, caller=caller)
    D = check_int(draws, "draws", low=1, caller=caller)
    k = check_int(experts, "experts", low=1, caller=caller)
    if composition not in HEDGE_COMPOSITIONS:
        raise ValidationError(
            f"The 'composition' parameter of {caller} must be one of {HEDGE_COMPOSITIONS}; got "
            f"{composition!r}."
        )
    scale = 2.0 * _backend_sensitivity(backend)
    if composition == "paper":
        dlt = check_real(delta, "delta", low=0.0, high=1.0, low_open=True, high_open=True,
                         caller=caller, fix="Advanced composition needs delta > 0.")
        # The paper's per-expert expression is increasing in eps0: bisect it.
        lo, hi = 0.0, eps / k
        while _paper_epsilon(hi, D, dlt, k) <= eps:
            lo, hi = hi, 2.0 * hi
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            if mid <= lo or mid >= hi:
                break
            if _paper_epsilon(mid, D, dlt, k) <= eps:
                lo = mid
            else:
                hi = mid
        e0 = lo
    elif composition == "auto":
        # the largest per-draw epsilon over the rules (each exact for its own rule), so the
        # tightest composition at that rate meets the budget with equality
        e0 = max(_try_per_step(eps, k * D, delta, m) for m in _auto_rules(k * D))
    else:
        e0 = split_budget(eps, delta, k * D, composition=composition, bounded_range=True,
                          caller=caller).epsilon_step
    eta = e0 / scale
    # exponential_mechanism_epsilon rounds up; step down until the map agrees.
    while hedge_epsilon(eta, D, delta, experts=k, composition=composition,
                        backend=backend) > eps * (1.0 + 1e-12):
        eta = math.nextafter(eta, 0.0)
    return eta


def _try_per_step(total: float, count: int, delta: float, rule: str) -> float:
    try:
        return split_budget(total, delta, count, composition=rule, bounded_range=True,
                            caller="tight_hedge_eta").epsilon_step
    except ValidationError:
        return 0.0


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
    backend : {None, "numpy", "secure"}, default=None
        Sampler of the draws: numpy Gumbel-max (seeded by ``rng``), or the exact secure sampler
        (randomness from the operating system; ``rng`` is then unused).
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

    def __init__(self, n: int, eta: float, *, copies: int = 1, max_draws: int | None = None,
                 delta: float = 0.0, composition: str = "auto", backend: str | None = None,
                 rng: RNGLike = None, budget: Any = None):
        caller = "Hedge"
        check_int(n, "n", low=1, caller=caller)
        _check_eta(eta, caller)
        check_int(copies, "copies", low=1, caller=caller)
        if max_draws is not None:
            check_int(max_draws, "max_draws", low=1, caller=caller,
                      fix="Pass the number of data-dependent draws per copy of the run, or "
                          "None for no privacy statement.")
        check_delta(delta, caller=caller)
        check_composition(composition, caller)
        if backend not in _BACKENDS:
            raise ValidationError(
                f"The 'backend' parameter of {caller} must be one of {_BACKENDS}; got {backend!r}."
            )
        self.n = n
        self.eta = eta
        self.copies = copies
        self.max_draws = max_draws
        self.delta = delta
        self.composition = composition
        self.backend = backend
        self.rng = rng
        self.budget = budget
        _ = self.privacy  # a rule that does not apply at this delta fails here, not at first use

    # -- privacy ------------------------------------------------------------------------------
    def _privacy_plan(self) -> PrivacyPlan | None:
        """``copies * max_draws`` exponential-mechanism draws; ``None`` without ``max_draws``."""
        if self.max_draws is None:
            return None

        def build() -> PrivacyPlan:
            e0 = hedge_draw_epsilon(self.eta, backend=self.backend)
            count = int(self.copies) * int(self.max_draws)
            event = PrivacyEvent.exponential(
                e0, mechanism="hedge_draw", count=count,
                note=f"{int(self.copies)} copies x {int(self.max_draws)} data-dependent draws, "
                     f"eta={float(self.eta):.6g}, score sensitivity 1")
            dlt = float(self.delta)
            if self.composition == "auto":
                rule = best_composition(e0, count, dlt)[1]
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
        from ..privacy.backends import resolve_backend

        self._G = np.zeros((int(self.copies), int(self.n)))
        self._gen = as_generator(self.rng)
        self._backend = resolve_backend(self.backend, None if self.backend == "secure"
                                        else self._gen)
        self._draws = 0
        self._fed = False  # no gain yet: the weights are uniform and a draw is data-independent
        self._dependent = 0
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
        z = float(self.eta) * self._G
        z -= z.max(axis=1, keepdims=True)
        return z - np.log(np.exp(z).sum(axis=1, keepdims=True))

    def probabilities(self) -> np.ndarray:
        """The current distributions :math:`x_t`, shape ``(copies, n)`` (non-private diagnostic)."""
        return np.exp(self.log_probabilities())

    # -- protocol -----------------------------------------------------------------------------
    def sample(self) -> np.ndarray:
        """One exponential-mechanism draw per copy; returns an int array of shape ``(copies,)``.

        Raises
        ------
        StreamLengthError
            With ``max_draws`` given, when the run's data-dependent draws are all made (nothing
            is drawn).
        """
        self._ensure_state()
        if self._fed and self._allowance is not None:
            if self._dependent >= int(self.max_draws):  # type: ignore[arg-type]
                raise StreamLengthError(
                    f"Hedge was built for max_draws={self.max_draws} data-dependent draws per "
                    "copy and has made them all; nothing was drawn. Build it with a larger "
                    "max_draws, or reset() it (a new run)."
                )
            self._allowance.charge(PrivacyEvent.exponential(
                hedge_draw_epsilon(self.eta, backend=self.backend), mechanism="hedge_draw",
                count=int(self.copies)))
            self._dependent += 1
        self._draws += 1
        eta = float(self.eta)
        if self._backend.name == "numpy":
            # Gumbel-max for all copies at once: the same draw as NumpyBackend.exponential row
            # by row (argmax of eta * (G - max G) + Gumbel noise), vectorised.
            z = eta * (self._G - self._G.max(axis=1, keepdims=True))
            return np.argmax(z + standard_gumbel(self._gen, z.shape), axis=1)
        return np.array([self._backend.exponential(row, eta, sensitivity=1.0)
                         for row in self._G], dtype=np.int64)

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
        self._G += np.clip(g, 0.0, 1.0)
        self._fed = True

    def update_one(self, copy: int, action: int, gain: float) -> None:
        """Add ``gain`` (clipped to ``[0, 1]``) to one action of one copy: the sparse update of
        the bandit algorithms (every other entry of the gain vectors is 0)."""
        self._ensure_state()
        c = check_int(copy, "copy", low=0, high=self._G.shape[0] - 1, caller="Hedge.update_one")
        a = check_int(action, "action", low=0, high=self._G.shape[1] - 1,
                      caller="Hedge.update_one")
        v = check_real(gain, "gain", caller="Hedge.update_one")
        self._G[c, a] += min(max(v, 0.0), 1.0)
        self._fed = True

    def _trusted_update(self, gains: np.ndarray) -> None:
        """Add already-validated gains (the learners clip before calling)."""
        self._G += gains
        self._fed = True


def _check_backend_param(backend: object, caller: str) -> None:
    if backend not in _BACKENDS:
        if not isinstance(backend, str) and backend is not None:
            raise ParameterTypeError(
                f"The 'backend' parameter of {caller} must be None, 'numpy' or 'secure'; got "
                f"{type(backend).__name__}."
            )
        raise ValidationError(
            f"The 'backend' parameter of {caller} must be one of {_BACKENDS}; got {backend!r}."
        )
