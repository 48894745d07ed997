"""How a call's total budget is split over its steps, fixed before it starts.

:func:`split_budget` is the one function that turns a private algorithm's total ``(epsilon,
delta)`` into a per-step epsilon: it inverts the composition of
:mod:`~dpsubmod.privacy.composition` under the rule that ``"auto"`` (or the caller) picks, and
rounds down so that the steps never compose above the total. :func:`even_share` and
:func:`proportional_shares` divide a privacy parameter into equal or weighted shares exactly.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction

from .._lazy import lazy_module
from .._validation import check_delta, check_int
from ..errors import ValidationError
from .composition import (
    _AUTO_ORDER,
    _bool,
    _compose_homogeneous,
    _gain,
    auto_composition,
    check_composition,
)
from .events import check_epsilon_finite
from .exact import float_down

__all__ = ["Split", "split_budget", "even_share", "proportional_shares"]

# Brent's method inverts a composition; only a rule other than basic composition needs it
optimize = lazy_module("scipy.optimize")


@dataclass(frozen=True)
class Split:
    """How a call's total budget is split over its steps (from :func:`split_budget`).

    Attributes
    ----------
    epsilon_step : float
        The epsilon of each step.
    composition : str
        The rule under which ``steps`` steps of ``epsilon_step`` compose to the total.
    steps : int
    delta : float
        The delta the call's statement spends: 0 under basic composition of pure steps, else the
        requested delta.
    """

    epsilon_step: float
    composition: str
    steps: int
    delta: float


def split_budget(epsilon: float, delta: float, steps: int, *, composition: str = "auto",
                 bounded_range: bool = False, caller: str = "split_budget") -> Split:
    """Split a call's total ``(epsilon, delta)`` over ``steps`` pure steps fixed in advance.

    The one place where a private algorithm turns its total budget into a per-step epsilon.
    ``"auto"`` lets :func:`~dpsubmod.privacy.composition.auto_composition` choose among the
    rules valid at ``delta`` (only basic composition when ``delta == 0``): basic composition,
    which spends no delta, unless another rule gives each step more than 1% more. The per-step
    epsilon inverts :func:`~dpsubmod.privacy.composition.compose_epsilon` (continuous and
    increasing: bracketing, Brent's method, then a confirming check), so
    ``compose_epsilon(split.epsilon_step, steps, delta, composition=split.composition) <=
    epsilon`` always holds, with equality to about 1e-13.

    Parameters
    ----------
    epsilon : float
        The call's total epsilon ``> 0``.
    delta : float
        The call's total delta in ``[0, 1)``.
    steps : int
        Number of steps ``>= 1``.
    composition : {"auto", "basic", "advanced", "kov", "zcdp", "pld"}, default="auto"
        ``"pld"`` inverts dp-accounting's composition (a few seconds: each evaluation
        convolves ``steps`` distributions); the pure steps have no noise law, so it matches
        ``"kov"`` up to dp-accounting's discretisation.
    bounded_range : bool, default=False
        The steps are exponential mechanisms (zCDP cost ``epsilon^2 / 8``).
    caller : str
        Named in error messages.

    Returns
    -------
    Split

    Examples
    --------
    >>> split_budget(1.0, 0.0, 10).epsilon_step  # rounded down: ten steps compose to at most 1
    0.09999999999999999
    >>> from dpsubmod.privacy.composition import compose_epsilon
    >>> s = split_budget(1.0, 1e-6, 100, composition="advanced")
    >>> round(compose_epsilon(s.epsilon_step, 100, 1e-6, composition="advanced"), 9)
    1.0
    """
    return _split(check_epsilon_finite(epsilon, caller=caller), check_delta(delta, caller=caller),
                  check_int(steps, "steps", low=1, caller=caller),
                  check_composition(composition, caller), _bool(bounded_range, caller), caller)


def _split(total: float, d: float, steps: int, composition: str, bounded_range: bool,
           caller: str) -> Split:
    """:func:`split_budget` of validated arguments: a method calls it with the values its
    public entry validated."""
    if composition not in ("basic", "auto") and d == 0.0:
        raise ValidationError(
            f"composition={composition!r} in {caller} needs delta > 0 (it trades delta for "
            "epsilon). Pass delta=1e-6 (say) or composition='basic'."
        )
    rules = (("basic",) if d == 0.0 else _AUTO_ORDER) if composition == "auto" else (composition,)
    found: dict[str, float] = {}
    for rule in rules:
        try:
            found[rule] = _basic_step(total, steps) if rule == "basic" else _invert_cached(
                total, steps, d, rule, bounded_range)
        except ValidationError:
            if composition != "auto":
                raise
            # this rule does not apply here; "auto" keeps the others
    used = composition if composition != "auto" else auto_composition(
        {m: _gain(e, found["basic"]) for m, e in found.items()})
    return Split(found[used], used, steps, 0.0 if used == "basic" else d)


def _basic_step(total: float, steps: int) -> float:
    """``total / steps`` rounded down so that ``steps`` steps never compose above ``total``."""
    return even_share(total, steps)


def even_share(total: float, parts: int) -> float:
    """The largest float ``x`` with ``parts * x <= total`` exactly (in rational arithmetic).

    The one way dpsubmod divides a privacy parameter (an epsilon, a delta, a zCDP rho) into
    equal shares: ``total / parts`` rounded to nearest may be a hair above the exact quotient,
    and then the shares would add up to more than ``total`` (ten shares of ``0.1`` are
    ``1.0000000000000000555``), which an exact budget refuses.

    Examples
    --------
    >>> even_share(1.0, 10) < 0.1
    True
    >>> from fractions import Fraction
    >>> 10 * Fraction(even_share(1.0, 10)) <= 1
    True
    """
    x = total / parts
    if not math.isfinite(x):  # an overflowing total: no share can be exact
        return x
    whole = Fraction(total)
    while x > 0.0 and parts * Fraction(x) > whole:
        x = math.nextafter(x, 0.0)
    return x


def proportional_shares(total: float, weights: Iterable[float]) -> tuple[float, ...]:
    """Shares of ``total`` in proportion to ``weights``, each rounded down from its exact value,
    so that they add up to at most ``total`` exactly (a zero weight gets 0).

    Examples
    --------
    >>> proportional_shares(1.0, [1, 1, 0])
    (0.5, 0.5, 0.0)
    """
    w = [Fraction(float(x)) for x in weights]
    whole = sum(w, Fraction(0))
    return tuple(float_down(Fraction(total) * x / whole) for x in w)


@functools.lru_cache(maxsize=512)
def _invert_cached(total: float, k: int, delta: float, composition: str,
                   bounded_range: bool) -> float:
    # A pure function of public parameters, cached because audits repeat the same split.
    return _invert(total, k, delta, composition, bounded_range, "split_budget")


def _invert(total: float, k: int, delta: float, composition: str, bounded_range: bool,
            caller: str) -> float:
    def f(e0: float) -> float:
        return _compose_homogeneous(e0, k, delta, composition, bounded_range, caller)

    lo = total / k
    f(lo)  # raises ValidationError when the rule does not apply at this delta
    while lo > 0.0 and f(lo) > total:
        lo = math.nextafter(lo, 0.0)
    hi = 2.0 * lo
    for _ in range(2000):
        if f(hi) > total:
            break
        lo, hi = hi, 2.0 * hi
    if lo > 0.0:
        # Brent's method on the continuous, increasing composed epsilon, then step down until
        # the composition is confirmed to fit (rounding may put the root a hair above)
        root = optimize.brentq(lambda e: f(e) - total, lo, hi, xtol=1e-300, rtol=1e-14,
                               maxiter=200)
        for r in (0.0, 1e-15, 1e-14, 1e-13, 1e-12, 1e-11, 1e-10):
            cand = root * (1.0 - r)
            if lo <= cand and f(cand) <= total:
                return cand
    for _ in range(400):  # fallback: plain bisection keeping f(lo) <= total
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi or hi - lo <= 1e-14 * hi:
            break
        if f(mid) <= total:
            lo = mid
        else:
            hi = mid
    return lo
