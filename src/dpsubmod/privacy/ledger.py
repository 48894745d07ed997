"""The ledger of mechanism uses and the privacy report of a release.

A :class:`Ledger` records events without a limit: an algorithm's record of its own steps, or the
diagnostics of an experiment. The user's limit is a :class:`~dpsubmod.privacy.budget.Budget`.
Both take :meth:`charge`, so a mechanism called with ``budget=`` accepts either.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..errors import ParameterTypeError
from .composition import COMPOSITIONS, _Summary, compose
from .events import PrivacyEvent

__all__ = ["PrivacyReport", "Ledger", "as_events", "charge"]


def fmt(x: float) -> str:
    return f"{x:.6g}"


#: How a statement was obtained: the composition rules, and the whole-call analyses of
#: algorithms that prove their guarantee directly.
RULE_TEXT: dict[str, str] = {
    **COMPOSITIONS,
    "gupta": "the decomposable-objective analysis (Gupta, Ligett, McSherry, Roth & Talwar 2010)",
}


@dataclass(frozen=True)
class PrivacyReport:
    """The privacy guarantee of a release (``Result.privacy``, a learner's ``privacy``).

    Attributes
    ----------
    epsilon, delta : float
        The release is ``(epsilon, delta)``-differentially private.
    composition : str
        The rule that gives this statement (a key of
        :data:`~dpsubmod.privacy.composition.COMPOSITIONS`).
    backend : str
        The noise backend that drew the noise (``"numpy"`` is seeded and fast, for simulation;
        it is not hardened against floating-point attacks).
    events : tuple of PrivacyEvent
        Every mechanism use the release was planned with, in order.
    rho : float or None
        Total zCDP cost when every event has one.
    neighbouring : str
        The neighbouring relation the guarantee refers to, as stated by the algorithm.
    simulation : bool
        The noise came from a seeded numpy generator: a reproducible simulation, not a private
        release (anyone who knows the seed can tell neighbouring data sets apart).
    engine : str
        The sampling engine behind the backend, with its version (``"opendp-0.16.0"``,
        ``"python-dpsubmod-0.1.0"``, ``"numpy-2.1.0"``); empty when unknown.
    """

    epsilon: float
    delta: float
    composition: str
    backend: str
    events: tuple[PrivacyEvent, ...] = ()
    rho: float | None = None
    neighbouring: str = ""
    simulation: bool = False
    engine: str = ""

    @property
    def uses(self) -> int:
        """Number of mechanism uses (events weighted by their count)."""
        return sum(e.count for e in self.events)

    def event(self, label: str, note: str = "") -> PrivacyEvent:
        """This guarantee as one event, the form in which a call is charged to a budget.

        Its ``backend`` and ``engine`` fields are those of the events when they all name the
        same one (empty otherwise).
        """
        backends = {e.backend for e in self.events}
        engines = {e.engine for e in self.events}
        return PrivacyEvent._trusted(label, self.epsilon, self.delta, self.rho, 1, note,
                                     backend=backends.pop() if len(backends) == 1 else "",
                                     engine=engines.pop() if len(engines) == 1 else "")

    def _uses_text(self) -> str:
        groups: dict[tuple, int] = {}
        for e in self.events:
            key = (e.mechanism, e.epsilon, e.delta, e.rho)
            groups[key] = groups.get(key, 0) + e.count
        parts = []
        for (mech, eps, dlt, rho), n in list(groups.items())[:5]:
            cost = f"epsilon={fmt(eps)}" if math.isfinite(eps) else f"rho={fmt(rho or 0.0)}"
            if dlt > 0:
                cost += f", delta={fmt(dlt)}"
            parts.append(f"{n} x {mech} ({cost})")
        if len(groups) > 5:
            parts.append(f"and {len(groups) - 5} more kinds")
        return "; ".join(parts)

    def __str__(self) -> str:
        if not self.events:
            return "(epsilon=0, delta=0)-differential privacy: no mechanism was used."
        text = (
            f"(epsilon={fmt(self.epsilon)}, delta={fmt(self.delta)})-differential privacy, "
            f"by {RULE_TEXT.get(self.composition, self.composition)} over {self.uses} "
            f"mechanism use{'s' if self.uses != 1 else ''} [{self._uses_text()}]"
        )
        if self.neighbouring:
            text += f"; neighbouring datasets: {self.neighbouring}"
        text += f"; noise backend: {self.backend}"
        if self.engine and self.backend != "numpy" and self.engine not in self.backend:
            text += f" (engine {self.engine})"
        if self.simulation:
            text += (" (a seeded simulation: reproducible, and NOT a private release, since "
                     "anyone who knows the seed can tell neighbouring data sets apart)")
        return text + "."

    def __repr__(self) -> str:
        return (
            f"PrivacyReport(epsilon={self.epsilon!r}, delta={self.delta!r}, "
            f"composition={self.composition!r}, backend={self.backend!r}, "
            f"uses={self.uses}, rho={self.rho!r})"
        )

    def to_dict(self) -> dict[str, Any]:
        """The report as a JSON-ready dict."""
        return {"epsilon": self.epsilon, "delta": self.delta, "composition": self.composition,
                "backend": self.backend, "rho": self.rho, "neighbouring": self.neighbouring,
                "simulation": self.simulation, "engine": self.engine, "statement": str(self),
                "events": [e.as_dict() for e in self.events]}


def backend_of(events: Iterable[PrivacyEvent]) -> str:
    """The distinct ``backend`` fields of the events, in order of first use, or
    ``"unspecified"`` when no event names one."""
    tags = list(dict.fromkeys(e.backend for e in events if e.backend))
    return ", ".join(tags) if tags else "unspecified"


def as_events(events: object, caller: str) -> tuple[PrivacyEvent, ...]:
    """One event or an iterable of events, as a tuple (type-checked)."""
    if isinstance(events, PrivacyEvent):
        return (events,)
    try:
        out = tuple(events)  # type: ignore[arg-type]
    except TypeError:
        out = None
    if out is None or not all(isinstance(e, PrivacyEvent) for e in out):
        raise ParameterTypeError(
            f"{caller} expects a PrivacyEvent or an iterable of them; got "
            f"{type(events).__name__}."
        )
    return out


class Ledger:
    """An append-only record of mechanism uses, with no limit.

    Examples
    --------
    >>> led = Ledger()
    >>> led.charge(PrivacyEvent.exponential(0.1, count=50))
    >>> led.total()  # fifty floating-point additions of 0.1
    (5.000000000000001, 0.0)
    >>> eps, delta = led.total(delta=1e-6)          # "auto" at delta = 1e-6 (zCDP)
    >>> round(eps, 2), delta
    (1.66, 1e-06)
    """

    def __init__(self, events: Iterable[PrivacyEvent] = ()):
        self._events: list[PrivacyEvent] = list(as_events(events, "Ledger"))
        self._lock = threading.RLock()

    @property
    def events(self) -> tuple[PrivacyEvent, ...]:
        """The recorded events, in order."""
        return tuple(self._events)

    def charge(self, events: PrivacyEvent | Iterable[PrivacyEvent]) -> None:
        """Record one event or several (a :class:`Budget` checks its limit first)."""
        ev = as_events(events, f"{type(self).__name__}.charge")
        with self._lock:
            self._events.extend(ev)

    def __len__(self) -> int:
        return len(self._events)

    @property
    def uses(self) -> int:
        """Number of mechanism uses (events weighted by their count)."""
        return sum(e.count for e in self._events)

    @property
    def rho(self) -> float | None:
        """Total zCDP cost, or ``None`` when some event has no zCDP guarantee."""
        return _Summary.of(self._events).rho

    def total(self, delta: float | None = None, composition: str = "auto") -> tuple[float, float]:
        """The ``(epsilon, delta)`` of the recorded events as a sequence fixed in advance.

        See :func:`~dpsubmod.privacy.composition.compose` for the parameters.
        """
        eps, dlt, _ = compose(self._events, delta, composition, caller="Ledger.total")
        return eps, dlt

    def report(self, delta: float | None = None, composition: str = "auto", *,
               backend: str | None = None, neighbouring: str = "",
               simulation: bool = False) -> PrivacyReport:
        """A :class:`PrivacyReport` of the recorded events (see :meth:`total`).

        ``backend=None`` reads the ``backend`` field that the library's mechanisms set on each
        event (``"unspecified"`` when there is none).
        """
        eps, dlt, used = compose(self._events, delta, composition, caller="Ledger.report")
        return PrivacyReport(epsilon=eps, delta=dlt, composition=used,
                             backend=backend_of(self._events) if backend is None else str(backend),
                             events=tuple(self._events), rho=self.rho,
                             neighbouring=str(neighbouring), simulation=bool(simulation))

    def copy(self) -> Ledger:
        """A ledger with the same events (events are immutable, so this is a full copy)."""
        return Ledger(self._events)

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        del state["_lock"]  # a lock does not pickle; each copy gets its own
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.RLock()

    def __repr__(self) -> str:
        return f"Ledger(events={len(self._events)}, uses={self.uses})"


def charge(budget: Any, events: PrivacyEvent | Iterable[PrivacyEvent], caller: str) -> None:
    """Charge ``events`` to ``budget`` (a Budget, a Ledger, or None for no accounting).

    Called by every mechanism and private entry point *before* the first noise draw.
    """
    if budget is None:
        return
    if not isinstance(budget, Ledger):
        raise ParameterTypeError(
            f"The 'budget' parameter of {caller} must be a dpsubmod Budget (or a Ledger, or "
            f"None); got {type(budget).__name__}. Build one with dpsubmod.Budget(epsilon=1.0)."
        )
    budget.charge(events)
