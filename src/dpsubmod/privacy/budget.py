"""The user's privacy budget: one per data set, charged before any noise by every release.

Every private entry point of dpsubmod takes ``budget=``. It computes the whole cost of the call
from public parameters, and charges it here *before its first noise draw*; a call that does not
fit raises :class:`~dpsubmod.errors.BudgetExceededError` and changes nothing. Whether a call fits
is decided by a privacy filter (:mod:`~dpsubmod.privacy.filters`), so the guarantee holds when the
user chooses each epsilon after seeing earlier outputs. Charges are atomic under a lock, so
concurrent threads can never overspend.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .._validation import check_delta, check_real
from ..errors import BudgetExceededError, ValidationError
from .events import PrivacyEvent, check_epsilon_finite
from .filters import FILTERS, ExactSums, FilterLevel, default_slack, filter_level
from .ledger import Ledger, as_events, fmt
from .zcdp import rho_for_target

__all__ = ["Budget"]


def _request_text(events: tuple[PrivacyEvent, ...], rho: bool) -> str:
    """The refused release in the budget's own terms (``rho`` only for a zCDP budget)."""
    parts = []
    for e in events[:3]:
        cost = f"epsilon {fmt(e.epsilon)}"
        if e.delta > 0:
            cost += f", delta {fmt(e.delta)}"
        if rho and e.rho is not None:
            cost += f", rho {fmt(e.rho)}"
        parts.append(f"{e.mechanism} ({cost})" if e.count == 1
                     else f"{e.count} x {e.mechanism} ({cost} each)")
    if len(events) > 3:
        parts.append(f"and {len(events) - 3} more")
    return "; ".join(parts)


def _left_text(remaining: float) -> str:
    """What is left, said plainly: nothing, or the largest pure release that still fits."""
    if not remaining > 0.0:
        return "nothing is left: the budget is used up, and no further release can fit"
    left = fmt(remaining)
    if float(left) > remaining:  # the short form would overstate what is left
        left = repr(remaining)
    return f"left: one more release of at most epsilon {left} fits"


class Budget(Ledger):
    """A privacy budget ``(epsilon, delta)`` that refuses any release that would exceed it.

    Pass it as ``budget=`` to any private method, learner or mechanism of dpsubmod. Each call
    computes its whole cost from public parameters and charges it before drawing any noise; a
    call that does not fit raises :class:`~dpsubmod.errors.BudgetExceededError`, and then
    nothing is released, and the budget and the caller's random generator are unchanged.

    Parameters
    ----------
    epsilon : float
        Total epsilon ``> 0``.
    delta : float, default=0.0
        Total delta in ``[0, 1)``.
    composition : {"basic", "advanced", "zcdp"}, default="basic"
        The privacy filter that decides whether a further release fits (see
        :mod:`~dpsubmod.privacy.filters`). All three hold when each release's parameters are
        chosen after seeing earlier outputs. ``"advanced"`` and ``"zcdp"`` need ``delta > 0``.
    slack : float, optional
        The part of ``delta`` the ``"advanced"`` or ``"zcdp"`` rule reserves for its
        concentration step (the ``delta'`` of the references). Defaults to ``delta / 2`` for
        ``"advanced"`` (the other half pays the releases' own deltas) and ``delta`` for
        ``"zcdp"``; unused by ``"basic"``.

    Attributes
    ----------
    events : tuple of PrivacyEvent
        One event per charged release, in order.
    spent : (float, float)
        The filter's level in epsilon and the delta committed so far.

    Examples
    --------
    >>> import dpsubmod
    >>> from dpsubmod.privacy import laplace
    >>> b = dpsubmod.Budget(1.0)
    >>> x = laplace(3.0, epsilon=0.6, sensitivity=1.0, budget=b, rng=0)
    >>> b.can_charge(PrivacyEvent.pure("laplace", 0.6))
    False
    >>> round(b.remaining, 6)
    0.4
    """

    #: The advice that ends a refusal (a budget file never suggests a new budget).
    _refusal_fix = "Lower the release's epsilon (or delta), or start from a larger budget."
    #: ... and the one when nothing is left.
    _exhausted_fix = ("These people's budget is spent: a further release about them needs a "
                      "larger budget, chosen before the first release.")

    def __init__(self, epsilon: float, delta: float = 0.0, composition: str = "basic", *,
                 slack: float | None = None):
        super().__init__()
        self.epsilon = check_epsilon_finite(epsilon, caller="Budget")
        self.delta = check_delta(delta, caller="Budget")
        if not isinstance(composition, str) or composition not in FILTERS:
            hint = (" Optimal (KOV) and PLD composition hold only for parameters fixed in "
                    "advance, so they are used inside one call, never to decide whether the next "
                    "call fits." if composition in ("kov", "pld", "auto", "best") else "")
            raise ValidationError(
                f"The 'composition' parameter of Budget must be one of {list(FILTERS)}; got "
                f"{composition!r}.{hint}"
            )
        self.composition = composition
        if composition != "basic" and self.delta == 0.0:
            raise ValidationError(
                f"Budget(composition={composition!r}) needs delta > 0 (it trades delta for "
                "epsilon); pass delta=1e-6 (say), or composition='basic'."
            )
        if slack is None:
            self.slack = default_slack(composition, self.delta)
            if composition == "zcdp" and not rho_for_target(self.epsilon, self.slack) > 0.0:
                raise ValidationError(
                    f"The 'epsilon' and 'delta' parameters of Budget ({self.epsilon!r}, "
                    f"{self.delta!r}) leave the 'zcdp' rule a zCDP budget rho that underflows "
                    "to 0. Pass a larger epsilon (above about 1e-150) or delta, or "
                    "composition='basic'."
                )
            if composition != "basic" and not self.slack > 0.0:
                raise ValidationError(
                    f"The 'delta' parameter of Budget is {self.delta!r}: the {composition!r} "
                    f"rule reserves part of it as a slack, which underflows to 0. Pass a delta "
                    "above about 1e-300 (or composition='basic')."
                )
        else:
            self.slack = check_real(slack, "slack", low=0.0, high=self.delta, low_open=True,
                                    caller="Budget",
                                    fix=f"Pass 0 < slack <= delta = {self.delta:g}.")
            if composition == "basic":
                raise ValidationError("The 'slack' parameter of Budget is used by the "
                                      "'advanced' and 'zcdp' rules only; omit it.")

    # -- the check ----------------------------------------------------------------------------
    def _level(self, events: Iterable[PrivacyEvent]) -> FilterLevel:
        ev = list(events)
        return filter_level(ev, self.epsilon, self.delta, self.composition, self.slack,
                            sums=self._sums(ev))

    def _sums(self, events: list[PrivacyEvent]) -> ExactSums:
        """The exact sums of ``events``, extended from those of the charged events when they
        are a prefix (charges are append-only, so a request adds a few rational terms)."""
        cache = self.__dict__.get("_sums_cache")
        if cache is not None:
            known, sums = cache
            k = len(known)
            if len(events) >= k and all(a is b for a, b in zip(known, events)):
                return sums if len(events) == k else sums.extend(events[k:])
        return ExactSums().extend(events)

    def can_charge(self, events: PrivacyEvent | Iterable[PrivacyEvent]) -> bool:
        """Whether :meth:`charge` would accept ``events`` now."""
        ev = as_events(events, "Budget.can_charge")
        with self._lock:
            return self._level([*self._events, *ev]).fits

    def charge(self, events: PrivacyEvent | Iterable[PrivacyEvent]) -> None:
        """Charge one release (one event or several) if it fits, atomically.

        Raises
        ------
        BudgetExceededError
            When the release does not fit; the budget is then unchanged.
        """
        ev = as_events(events, "Budget.charge")
        with self._lock:
            after = [*self._events, *ev]
            sums = self._sums(after)
            level = filter_level(after, self.epsilon, self.delta, self.composition, self.slack,
                                 sums=sums)
            if level.fits:
                self._events.extend(ev)
                self._sums_cache = (tuple(self._events), sums)
                return
            now = self._level(self._events)
        raise BudgetExceededError(
            f"{self._describe()} refuses {_request_text(ev, self.composition == 'zcdp')}: "
            f"{level.why}, above the budget. Already spent: epsilon {fmt(now.epsilon)}, delta "
            f"{fmt(now.delta)} over {len(self)} release(s); {_left_text(now.remaining_epsilon)}."
            f" Nothing was released and the budget is unchanged. "
            f"{self._refusal_fix if now.remaining_epsilon > 0.0 else self._exhausted_fix}"
        )

    def _describe(self) -> str:
        """The budget in the user's words, for messages (not a Python repr)."""
        return (f"The budget (epsilon {fmt(self.epsilon)}, delta {fmt(self.delta)}, "
                f"{self.composition} composition)")

    # -- what was spent -----------------------------------------------------------------------
    @property
    def spent(self) -> tuple[float, float]:
        """``(epsilon, delta)``: the filter's level and the delta committed so far."""
        with self._lock:
            lv = self._level(self._events)
        return lv.epsilon, lv.delta

    @property
    def remaining(self) -> float:
        """The largest epsilon of one more pure release that would fit."""
        with self._lock:
            return self._level(self._events).remaining_epsilon

    def statement(self) -> str:
        """A sentence: the budget, its rule, what was spent and what is left."""
        eps, dlt = self.spent
        return (f"Budget (epsilon={fmt(self.epsilon)}, delta={fmt(self.delta)}) under "
                f"{FILTERS[self.composition]}: {len(self)} release(s), spent epsilon {fmt(eps)}, "
                f"delta {fmt(dlt)}; {_left_text(self.remaining)}.")

    def copy(self) -> Budget:
        """An independent budget with the same limit, rule and charges."""
        b = Budget(self.epsilon, self.delta, self.composition,
                   slack=None if self.composition == "basic" else self.slack)
        b._events = list(self._events)
        return b

    def _state(self) -> tuple[Any, ...]:
        return (self.epsilon, self.delta, self.composition, self.slack, tuple(self._events))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Budget):
            return NotImplemented
        return self._state() == other._state()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (f"Budget(epsilon={fmt(self.epsilon)}, delta={fmt(self.delta)}, "
                f"composition={self.composition!r})")
