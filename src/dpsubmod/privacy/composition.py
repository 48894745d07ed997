"""Composition inside one call, whose steps are all fixed before it starts.

A private algorithm knows, from public parameters alone, every mechanism use it will make (say
``k`` exponential-mechanism steps of ``eps0`` each). It splits its total ``(epsilon, delta)``
over them with :func:`~dpsubmod.privacy.split.split_budget` (the one function that does so,
which inverts the rules below) and states the call's guarantee by :func:`compose`. Because the
steps are fixed in advance, every rule below is valid here, including the ones that need
parameters fixed in advance (advanced and optimal composition). Whether a *further* call fits a
user's budget is a different question, answered by a privacy filter
(:mod:`~dpsubmod.privacy.filters`).

Composition rules (``composition=``)
------------------------------------
``"basic"``
    The epsilons add and the deltas add (Dwork, McSherry, Nissim & Smith 2006; Dwork & Lei 2009).
``"advanced"``
    Advanced composition (Dwork, Rothblum & Vadhan 2010, Theorem III.3): ``k`` uses of
    ``eps0``-DP mechanisms are ``(sqrt(2 k ln(1/delta')) eps0 + k eps0 (e^eps0 - 1),
    k delta0 + delta')``-DP; heterogeneous events replace ``k eps0^2`` by ``sum eps_i^2``.
``"kov"``
    Optimal homogeneous composition (Kairouz, Oh & Viswanath 2015, Theorem 3.3), exact in log
    space; heterogeneous events are composed as if each had the largest epsilon (valid, loose).
``"zcdp"``
    The rhos add (Bun & Steinke 2016): Gaussian ``Delta^2 / (2 sigma^2)``, exponential mechanism
    ``eps^2 / 8`` (Cesar & Rogers 2021), pure ``eps^2 / 2``; converted to ``(eps, delta)`` by
    Canonne, Kamath & Steinke 2020, Proposition 12.
``"pld"``
    Privacy loss distributions composed numerically by Google's dp-accounting
    (:mod:`~dpsubmod.privacy.pld`): each event by its own Laplace or Gaussian law when it states
    one (``PrivacyEvent.law``), else by the dominating pair of its ``(epsilon, delta)``; a
    pessimistic (upper) bound within about 1e-4 of the exact composition. Tighter than every
    closed form on Laplace and Gaussian releases; on pure events with no law it equals optimal
    (KOV) composition. Needs the ``[pld]`` extra; it is never part of ``"auto"``, so results do
    not depend on which optional packages are installed.
``"auto"``
    Decided by :func:`auto_composition`, the one chooser of every ``composition="auto"`` in
    dpsubmod, offline and online: basic composition (pure DP when the events are pure) unless
    another closed-form rule (all but ``"pld"``) valid at the requested delta gains more than 1%
    in per-step epsilon.

Every rule other than ``"basic"`` is capped by basic composition whenever basic composition meets
the requested delta (both statements hold, so the smaller epsilon is valid).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from .._validation import check_delta, check_int
from ..errors import ParameterTypeError, ValidationError
from .events import PrivacyEvent, check_epsilon_finite, rho_exponential
from .exact import exact_sum, float_up
from .kov import KOV_MAX_USES, drift, kov_epsilon_rr, kov_rr_target
from .pld import PLDNotApplicable, pld_epsilon
from .zcdp import zcdp_to_dp

__all__ = ["COMPOSITIONS", "AUTO_MIN_GAIN", "auto_composition", "compose", "compose_epsilon",
           "check_composition"]

#: Composition rules inside one call (``composition=``), with the reference printed in privacy
#: statements.
COMPOSITIONS: dict[str, str] = {
    "basic": "basic composition (Dwork, McSherry, Nissim & Smith 2006)",
    "advanced": "advanced composition (Dwork, Rothblum & Vadhan 2010)",
    "kov": "optimal composition (Kairouz, Oh & Viswanath 2015)",
    "zcdp": "zCDP composition (Bun & Steinke 2016) converted by Canonne, Kamath & Steinke 2020",
    "pld": "privacy loss distribution composition (dp-accounting; Doroshenko et al. 2022)",
    "auto": "basic composition unless another rule gains over 1% per step",
}
_RULE_NAMES = ("basic", "advanced", "kov", "zcdp")

#: The factor of per-step epsilon over basic composition's that ``"auto"`` asks of a rule that
#: spends delta before it leaves basic composition (see :func:`auto_composition`).
AUTO_MIN_GAIN = 1.01


def auto_composition(gains: Mapping[str, float]) -> str:
    """The rule that ``composition="auto"`` uses: the one chooser, offline and online.

    Rule: keep basic composition -- pure DP when the steps are pure, as it spends no delta
    beyond the events' own -- unless another rule valid at the requested delta gains more than
    1% (:data:`AUTO_MIN_GAIN`) in per-step epsilon; then the rule that gains the most (ties go
    to the earlier rule of ``gains``). Without basic composition among the valid rules, the
    rule that gains the most.

    The gain of a rule is the epsilon it lets each step spend, relative to basic composition's,
    at one total. Calibrating a total ``tau`` over ``k`` steps (:func:`split_budget`), it is
    ``e_rule / e_basic`` for the per-step epsilons each rule allows. Stating fixed steps
    (:func:`compose`), it is ``eps_basic / eps_rule`` for the totals each rule states: at the
    total ``eps_rule`` a rule states for ``k`` steps of ``e0``, basic composition would allow
    ``eps_rule / k`` per step, and ``k e0 / eps_rule = eps_basic / eps_rule``. So a calibration
    that chose a rule states by that rule again, and a statement spends its delta only for more
    than 1% of epsilon (a 0.0005% gain is not worth a delta). The gains fall as the per-step
    epsilon grows, so in a narrow band a calibration that kept basic composition (a gain just
    under 1% at its total) states its steps by another rule (just over 1% at the smaller
    total that rule states); both statements are within the budget.

    Parameters
    ----------
    gains : mapping of str to float
        Each rule valid at the requested delta, and its per-step gain over basic composition
        (``"basic"`` itself, when valid, gains 1).

    Returns
    -------
    str

    Examples
    --------
    >>> auto_composition({"basic": 1.0, "kov": 1.000005})
    'basic'
    >>> auto_composition({"basic": 1.0, "kov": 1.3, "advanced": 1.2})
    'kov'
    """
    if not gains:
        raise ValidationError("auto_composition needs at least one valid rule.")
    best = max(gains, key=gains.__getitem__)  # the first of equal maxima
    if "basic" in gains and not gains[best] > AUTO_MIN_GAIN * gains["basic"]:
        return "basic"
    return best


def check_composition(composition: object, caller: str,
                      allowed: Iterable[str] = tuple(COMPOSITIONS)) -> str:
    """Validate a ``composition=`` argument against ``allowed``."""
    allowed = tuple(allowed)
    if not isinstance(composition, str):
        raise ParameterTypeError(
            f"The 'composition' parameter of {caller} must be a str, one of {list(allowed)}; "
            f"got {composition!r}."
        )
    if composition not in allowed:
        raise ValidationError(
            f"The 'composition' parameter of {caller} must be one of {list(allowed)}; got "
            f"{composition!r}."
        )
    return composition


class _NotApplicable(Exception):
    """A composition rule does not apply to these events at this delta."""


@dataclass(frozen=True)
class _Summary:
    uses: int
    eps_sum: float
    delta_sum: float
    eps_root: float
    eps_max: float
    delta_max: float
    rho: float | None
    events: tuple[PrivacyEvent, ...] = ()

    @classmethod
    def of(cls, events: Iterable[PrivacyEvent]) -> _Summary:
        ev = list(events)
        if not ev:
            return cls(0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
        c = [e.count for e in ev]
        eps = [e.epsilon for e in ev]
        zc = [e.zcdp for e in ev]
        rho = None if any(z is None for z in zc) else _sum_up(c, zc)  # type: ignore[arg-type]
        return cls(
            uses=sum(c),
            eps_sum=_sum_up(c, eps),
            delta_sum=min(_sum_up(c, [e.delta for e in ev]), 1.0),
            eps_root=_root_sum_squares(c, eps),
            eps_max=max(eps),
            delta_max=max(e.delta for e in ev),
            rho=rho,
            events=tuple(ev),
        )

    def drift_term(self) -> float:
        """``sum n eps (e^eps - 1)``, the drift term of advanced composition (computed only
        when that rule is tried)."""
        return math.fsum(e.count * drift(e.epsilon) for e in self.events)


def _sum_up(counts: list[int], values: list[float]) -> float:
    """``sum n_i x_i`` rounded up from its exact value (``inf`` when a value is)."""
    if not all(math.isfinite(x) for x in values):
        return math.inf
    return float_up(exact_sum(counts, values))


def _root_sum_squares(counts: list[int], eps: list[float]) -> float:
    """``sqrt(sum n eps^2)``, scaled by the largest epsilon so that squares of tiny epsilons
    do not underflow to 0 (nor huge ones overflow)."""
    top = max(eps)
    if top == 0.0 or not math.isfinite(top):
        return top
    return top * math.sqrt(math.fsum(n * (x / top) ** 2 for n, x in zip(counts, eps)))


def _basic(s: _Summary, target: float) -> tuple[float, float]:
    if s.delta_sum > target:  # exact: the deltas are summed exactly and rounded up
        raise _NotApplicable(
            f"basic composition: the events' own deltas sum to {s.delta_sum:.6g}, more than "
            f"delta={target:.6g}"
        )
    return s.eps_sum, s.delta_sum


def _advanced(s: _Summary, target: float) -> tuple[float, float]:
    slack = target - s.delta_sum
    if not slack > 1e-12 * target:  # a rounding residue is no slack
        raise _NotApplicable(
            f"advanced composition needs a slack delta' = delta - (sum of the events' deltas "
            f"= {s.delta_sum:.6g}) > 0; got delta={target:.6g}. Pass a larger delta (e.g. 1e-6)"
        )
    if s.uses == 0:
        return 0.0, target
    # Rounded up: at tiny epsilons the drift (about eps^2) underflows beside the root term.
    eps = math.sqrt(2.0 * -math.log(slack)) * s.eps_root + s.drift_term()
    return math.nextafter(eps, math.inf), target


# Beyond this per-use epsilon the randomized-response profile's log-weights overflow, and
# optimal composition cannot beat basic composition anyway (e^eps0 dwarfs every delta).
_KOV_MAX_EPSILON = 500.0


def _kov(s: _Summary, target: float) -> tuple[float, float]:
    if s.uses == 0:
        return 0.0, target
    if not s.eps_max <= _KOV_MAX_EPSILON:
        return _basic(s, target)  # a valid bound, and as tight as KOV gets there
    if s.uses > KOV_MAX_USES:
        raise _NotApplicable(
            f"optimal (KOV) composition evaluates its exact profile over every use, limited to "
            f"{KOV_MAX_USES} uses (steps); got {s.uses}. Pass composition='zcdp' or 'advanced', "
            "within a few percent of optimal at that many steps"
        )
    rr = kov_rr_target(target, s.delta_max, s.uses)
    if rr < 0.0:
        raise _NotApplicable(
            f"optimal (KOV) composition needs delta >= 1 - (1 - delta_max)^k = "
            f"{-math.expm1(s.uses * math.log1p(-s.delta_max)):.6g}; got delta={target:.6g}"
        )
    return kov_epsilon_rr(s.eps_max, s.uses, rr), target


def _zcdp(s: _Summary, target: float) -> tuple[float, float]:
    if s.rho is None:
        raise _NotApplicable(
            "zCDP composition: an event has delta > 0 and no zCDP cost (rho); record rho for it"
        )
    if s.rho == 0.0:
        return 0.0, target
    if target <= 0.0:
        raise _NotApplicable(
            "zCDP composition needs delta > 0 to convert to (epsilon, delta); pass e.g. delta=1e-6"
        )
    return zcdp_to_dp(s.rho, target), target


def _pld(s: _Summary, target: float) -> tuple[float, float]:
    if s.uses == 0:
        return 0.0, target
    try:
        return pld_epsilon(s.events, target), target
    except PLDNotApplicable as exc:
        raise _NotApplicable(str(exc)) from None


_RULES = {"basic": _basic, "advanced": _advanced, "kov": _kov, "zcdp": _zcdp, "pld": _pld}
_ORDER = {"basic": 0, "kov": 1, "advanced": 2, "zcdp": 3, "pld": 4}
#: The closed-form rules in the order that breaks ties.
_AUTO_ORDER = tuple(sorted(_RULE_NAMES, key=_ORDER.__getitem__))


def _gain(larger: float, smaller: float) -> float:
    """``larger / smaller``: a per-step gain over basic composition (see
    :func:`auto_composition`), from per-step epsilons ``(e_rule, e_basic)`` or from totals
    ``(eps_basic, eps_rule)``; equal values (0 and inf included) gain nothing."""
    if larger == smaller:
        return 1.0
    return math.inf if smaller == 0.0 else larger / smaller


def compose(events: Iterable[PrivacyEvent], delta: float | None = None,
            composition: str = "auto", *, caller: str = "compose") -> tuple[float, float, str]:
    """The ``(epsilon, delta)`` of a sequence of events fixed in advance, and the rule used.

    Parameters
    ----------
    events : iterable of PrivacyEvent
    delta : float or None, default=None
        Target total delta in ``[0, 1)``; ``None`` means the sum of the events' own deltas (so
        only basic composition applies, with no slack).
    composition : {"auto", "basic", "advanced", "kov", "zcdp", "pld"}, default="auto"
        See the module docstring.
    caller : str
        Named in error messages.

    Returns
    -------
    (epsilon, delta, rule) : tuple of (float, float, str)

    Raises
    ------
    ValidationError
        When the rule does not apply at ``delta``.
    MissingDependencyError
        For ``"pld"`` without dp-accounting (the ``[pld]`` extra).
    """
    delta = None if delta is None else check_delta(delta, caller=caller)
    return _compose(_Summary.of(events), delta, check_composition(composition, caller), caller)


def _compose(s: _Summary, delta: float | None, composition: str,
             caller: str) -> tuple[float, float, str]:
    """:func:`compose` of summarised events, with ``delta`` and ``composition`` validated."""
    target = s.delta_sum if delta is None else delta
    found: list[tuple[float, float, str]] = []
    if composition == "auto":
        reasons = []
        for m in _AUTO_ORDER:
            try:
                found.append((*_RULES[m](s, target), m))
            except _NotApplicable as exc:
                reasons.append(str(exc))
        if not found:
            raise ValidationError(
                f"{caller}: no composition rule applies at delta={target:.6g}: "
                + "; ".join(reasons) + "."
            )
        chosen = auto_composition({m: _gain(s.eps_sum, eps) for eps, _, m in found})
        return next(r for r in found if r[2] == chosen)
    else:
        try:
            found.append((*_RULES[composition](s, target), composition))
        except _NotApplicable as exc:
            raise ValidationError(
                f"{caller}: cannot compose with composition={composition!r}: {exc}."
            ) from None
        if composition != "basic":
            try:
                found.append((*_basic(s, target), "basic"))
            except _NotApplicable:
                pass
    return min(found, key=lambda r: (r[0], _ORDER[r[2]]))


def compose_epsilon(epsilon: float, k: int, delta: float = 0.0, *, composition: str = "auto",
                    bounded_range: bool = False) -> float:
    """Total epsilon of ``k`` uses, fixed in advance, of an ``epsilon``-DP mechanism.

    Parameters
    ----------
    epsilon : float
        Per-use epsilon ``> 0``.
    k : int
        Number of uses ``>= 1``.
    delta : float, default=0.0
        Total delta of the statement (the events are pure, so all of it is slack).
    composition : {"auto", "basic", "advanced", "kov", "zcdp", "pld"}, default="auto"
    bounded_range : bool, default=False
        The uses are exponential mechanisms (``epsilon``-bounded range), whose zCDP cost is
        ``epsilon^2 / 8`` instead of ``epsilon^2 / 2``.

    Returns
    -------
    float
    """
    caller = "compose_epsilon"
    e0 = check_epsilon_finite(epsilon, caller=caller)
    k = check_int(k, "k", low=1, caller=caller)
    d = check_delta(delta, caller=caller)
    composition = check_composition(composition, caller)
    return _compose_homogeneous(e0, k, d, composition, _bool(bounded_range, caller), caller)


def _bool(value: object, caller: str) -> bool:
    if not isinstance(value, bool):
        raise ParameterTypeError(f"The 'bounded_range' parameter of {caller} must be a bool; got "
                                 f"{value!r}.")
    return value


def _compose_homogeneous(e0: float, k: int, delta: float, composition: str,
                         bounded_range: bool, caller: str) -> float:
    rho = rho_exponential(e0) if bounded_range else None
    return compose([PrivacyEvent("step", e0, 0.0, rho, k)], delta, composition, caller=caller)[0]
