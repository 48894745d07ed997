r"""The private calibration of Hedge (exponential weights): the privacy of one draw, the paper's
learning rate, the guarantee of a given rate, and the largest rate within a budget.

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
the exact guarantee of a given :math:`\eta` (the paper's formula, or a rule of the library
composing all draws), and :func:`tight_hedge_eta` inverts it.

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

from ..._validation import check_int, check_real
from ...errors import ParameterTypeError, ValidationError
from ...privacy.backends import NoiseBackend, resolve_backend
from ...privacy.calibration import exponential_mechanism_epsilon
from ...privacy.composition import compose_epsilon
from ...privacy.split import split_budget

#: Composition rules of :func:`hedge_epsilon`: ``"paper"`` is the argument of Perez-Salazar and
#: Cummings (advanced composition per expert at ``delta / experts``, basic composition over the
#: experts); the others are the rules of :mod:`dpsubmod.privacy.composition` applied to all draws
#: as one sequence, ``"auto"`` chosen by :func:`~dpsubmod.privacy.composition.auto_composition`.
HEDGE_COMPOSITIONS = ("paper", "auto", "basic", "advanced", "kov", "zcdp")

#: How the paper's composition is named in privacy statements.
PAPER_RULE = ("advanced composition per expert and basic over the experts (Perez-Salazar and "
              "Cummings, Theorem 5)")

#: Names of the samplers of a Hedge draw (``None`` is numpy); a NoiseBackend instance is also
#: accepted.
BACKENDS = (None, "numpy", "secure", "opendp")


def check_eta(eta: object, caller: str) -> float:
    return check_real(eta, "eta", low=0.0, low_open=True, caller=caller,
                      fix="The learning rate must be a positive finite number.")


def backend_sensitivity(backend: object) -> float:
    """The score sensitivity the backend's sampler really has for a declared sensitivity 1."""
    if backend in (None, "numpy"):
        return 1.0
    return float(resolve_backend(backend).effective_sensitivity(1.0, kind="linf"))


def hedge_draw_epsilon(eta: float, *, backend: str | None = None,
                       monotone: bool = False) -> float:
    """Privacy of one Hedge draw: ``2 * eta`` (exponential mechanism, score sensitivity 1), or
    ``eta`` when neighbouring runs move the scores in one direction only (``monotone``).

    ``monotone`` is the case of the bandit experts: a neighbouring stream changes one observed
    value, which enters one expert's score of one action, so at every later draw of that expert
    the scores of the two runs differ in one coordinate, by at most 1. Then the probability of
    every action moves by a factor within ``[e^-eta, e^eta]`` (either the action's own weight or
    the normaliser changes, never both against each other), and the log-ratios of all actions
    lie in one interval of width ``eta``: the draw is ``eta``-DP and ``eta``-bounded-range.

    On the secure backend the score sensitivity is the effective (grid-rounded) one, which is
    1 for its default grid.

    >>> hedge_draw_epsilon(0.01), hedge_draw_epsilon(0.01, monotone=True)
    (0.02, 0.01)
    """
    e = check_eta(eta, "hedge_draw_epsilon")
    check_backend_param(backend, "hedge_draw_epsilon")
    return exponential_mechanism_epsilon(e, backend_sensitivity(backend), monotonic=monotone)


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


def paper_epsilon(eps0: float, draws: int, delta: float, experts: int) -> float:
    # Theorem 4 (Dwork, Rothblum and Vadhan) per expert with slack delta / experts, then basic
    # composition over the experts, exactly as in the proof of Theorem 5.
    dp = delta / experts
    per = math.sqrt(2.0 * draws * math.log(1.0 / dp)) * eps0 + draws * eps0 * math.expm1(eps0)
    return experts * per


def hedge_epsilon(eta: float, draws: int, delta: float, *, experts: int = 1,
                  composition: str = "auto", backend: str | None = None,
                  monotone: bool = False) -> float:
    r"""The epsilon at total ``delta`` of ``experts`` Hedge copies making ``draws`` draws each.

    Each draw is :math:`2\eta`-DP and :math:`2\eta`-bounded-range (see the module docstring),
    or :math:`\eta` with ``monotone`` (see :func:`hedge_draw_epsilon`).

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
        before it); ``"auto"`` is chosen among basic, advanced, optimal (KOV, up to
        ``KOV_MAX_USES`` draws) and bounded-range zCDP composition by
        :func:`~dpsubmod.privacy.composition.auto_composition`.
    backend : {None, "numpy", "secure", "opendp"} or NoiseBackend, default=None
        The sampler (the secure backends' grid can inflate the score sensitivity).
    monotone : bool, default=False
        Each draw is :math:`\eta`-DP (one score moves, in one direction); ignored by
        ``"paper"``, which is the paper's own argument.

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
    e0 = hedge_draw_epsilon(eta, backend=backend, monotone=monotone and composition != "paper")
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
        return paper_epsilon(e0, D, dlt, k)
    return compose_epsilon(e0, k * D, delta, composition=composition, bounded_range=True)


def tight_hedge_eta(epsilon: float, delta: float, draws: int, *, experts: int = 1,
                    composition: str = "auto", backend: str | None = None,
                    monotone: bool = False) -> float:
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
    scale = (1.0 if monotone and composition != "paper" else 2.0) * backend_sensitivity(backend)
    if composition == "paper":
        dlt = check_real(delta, "delta", low=0.0, high=1.0, low_open=True, high_open=True,
                         caller=caller, fix="Advanced composition needs delta > 0.")
        # The paper's per-expert expression is increasing in eps0: bisect it.
        lo, hi = 0.0, eps / k
        while paper_epsilon(hi, D, dlt, k) <= eps:
            lo, hi = hi, 2.0 * hi
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            if mid <= lo or mid >= hi:
                break
            if paper_epsilon(mid, D, dlt, k) <= eps:
                lo = mid
            else:
                hi = mid
        e0 = lo
    else:
        split = split_budget(eps, delta, k * D, composition=composition, bounded_range=True,
                             caller=caller)
        # the rule "auto" chose states this rate again (see auto_composition); checking by it
        # keeps the step-down below to rounding
        e0, composition = split.epsilon_step, split.composition
    eta = e0 / scale
    # exponential_mechanism_epsilon rounds up; step down until the map agrees. Among the
    # subnormals the composed epsilon (rounded up) may stay above a subnormal budget down to 0.
    while eta > 0.0 and hedge_epsilon(eta, D, delta, experts=k, composition=composition,
                                      backend=backend, monotone=monotone) > eps:
        eta = math.nextafter(eta, 0.0)
    if not eta > 0.0:
        raise ValidationError(
            f"The 'epsilon' parameter of {caller} is {eps!r}: no positive learning rate in "
            f"floating point spends at most that over {D} draws of {k} expert(s); pass a larger "
            "epsilon (above about 1e-300)."
        )
    return eta


def check_backend_param(backend: object, caller: str) -> None:
    """Refuse a ``backend=`` other than None, ``"numpy"``, ``"secure"``, ``"opendp"`` or a
    NoiseBackend instance; ``"opendp"`` without OpenDP raises
    :class:`~dpsubmod.errors.MissingDependencyError` with the install command."""
    if isinstance(backend, NoiseBackend):
        return
    if not isinstance(backend, str) and backend is not None:
        raise ParameterTypeError(
            f"The 'backend' parameter of {caller} must be None, 'numpy', 'secure', 'opendp' or "
            f"a NoiseBackend instance; got {type(backend).__name__}."
        )
    if backend not in BACKENDS:
        raise ValidationError(
            f"The 'backend' parameter of {caller} must be one of {BACKENDS} or a NoiseBackend "
            f"instance; got {backend!r}."
        )
    if backend == "opendp":
        resolve_backend(backend)  # OpenDP, or the install command now
