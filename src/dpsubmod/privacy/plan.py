"""The privacy plan of one call: its whole cost, known from public parameters before any noise.

Every private entry point of dpsubmod (offline method, online learner) goes through this one
path:

1. from its public parameters it lists every mechanism use it will make (a
   :class:`PrivacyPlan`), and the rule that composes them inside the call;
2. :meth:`PrivacyPlan.charge` states the call's guarantee and charges it, as one event, to the
   user's budget, before the first noise draw (a refusal raises and changes nothing);
3. the run draws its noise through mechanisms charged to :meth:`PrivacyPlan.allowance`, a ledger
   that admits exactly the planned uses and fails loudly, before drawing, on any use beyond them;
4. the release reports the a-priori guarantee of step 2, whatever path the run took.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _progress
from .._log import get_logger
from ..errors import DPSubmodError
from . import opendp_engine
from ._noise_backend import NoiseBackend
from .backends import NumpyBackend
from .composition import _compose, _Summary, check_composition
from .events import PrivacyEvent
from .ledger import RULE_TEXT, Ledger, PrivacyReport, as_events, charge, fmt
from .secure import python_engine_name

__all__ = ["PrivacyPlan", "Allowance", "PlanExceededError", "is_simulation", "backend_name",
           "backend_engine"]


_log = get_logger(__name__)


class PlanExceededError(DPSubmodError, RuntimeError):
    """A run tried a mechanism use beyond its privacy plan (a library bug); nothing was drawn."""


def is_simulation(backend: Any, rng: Any) -> bool:
    """Whether a run is a seeded numpy simulation: numpy noise and a seed or generator given."""
    name = backend if isinstance(backend, str) or backend is None else getattr(backend, "name", "")
    return (name in (None, "numpy")) and rng is not None


class _BackendName(str):
    """A backend instance's name, remembering the instance's engine for the privacy report."""

    engine: str | None = None


def backend_name(backend: Any) -> str:
    """The name under which a ``backend=`` argument is reported.

    For an instance the name (``"secure"``) also carries the instance's engine, so that a
    :class:`PrivacyPlan` built from it reports the engine that really draws.
    """
    if backend is None:
        return "numpy"
    if isinstance(backend, str):
        return backend
    name = _BackendName(str(getattr(backend, "name", type(backend).__name__)))
    engine = getattr(backend, "engine", None)
    name.engine = None if engine is None else str(engine)
    return name


def backend_engine(backend: Any) -> str:
    """The sampling engine, with its version, that a ``backend=`` argument draws with.

    An instance states its own (``backend.engine``); ``"secure"`` is OpenDP when it is installed
    and dpsubmod's exact pure-Python samplers otherwise; ``"opendp"`` is OpenDP.
    """
    if isinstance(backend, NoiseBackend):
        return str(backend.engine)
    name = backend_name(backend)
    if name == "numpy":
        return NumpyBackend.engine
    if name in ("secure", "opendp"):
        try:
            eng = opendp_engine.load(required=False)
        except DPSubmodError:
            return "unknown"  # an unusable OpenDP: the release itself refused to run
        if eng is not None:
            return eng.name
        return "opendp-not-installed" if name == "opendp" else python_engine_name()
    return ""


@dataclass(frozen=True)
class PrivacyPlan:
    """Every mechanism use of one call, fixed before it starts, and how they compose.

    Parameters
    ----------
    label : str
        The call (a method or learner name); the budget records the call under it.
    events : tuple of PrivacyEvent
        The planned mechanism uses.
    delta : float or None
        The call's target delta (``None``: the events' own deltas, basic composition).
    composition : str
        The rule composing the events inside the call (a key of
        :data:`~dpsubmod.privacy.composition.COMPOSITIONS`).
    neighbouring : str
        The neighbouring relation the guarantee refers to.
    backend : str or NoiseBackend
        The noise backend's name, or the resolved backend itself (then stored as its name, and
        its engine recorded in ``engine``).
    simulation : bool
        A seeded numpy run: reproducible, not a private release.
    guarantee : (float, float) or None
        A whole-call ``(epsilon, delta)`` proved by the algorithm's own argument (for example
        the decomposable greedy), used instead of composing ``events``.
    engine : str or None
        The sampling engine and its version, for the report; ``None`` derives it from
        ``backend`` (:func:`backend_engine`). Pass the resolved backend (or its ``engine``)
        when it is an instance with a non-default engine.
    """

    label: str
    events: tuple[PrivacyEvent, ...]
    delta: float | None = None
    composition: str = "basic"
    neighbouring: str = ""
    backend: str = "numpy"
    simulation: bool = False
    guarantee: tuple[float, float] | None = None
    engine: str | None = None

    def __post_init__(self) -> None:
        if self.guarantee is None:  # composed by report(), which trusts the rule's name
            check_composition(self.composition, self.label)
        name = backend_name(self.backend)
        if self.engine is None and getattr(name, "engine", None) is not None:
            object.__setattr__(self, "engine", name.engine)
        object.__setattr__(self, "backend", str(name))

    def report(self) -> PrivacyReport:
        """The call's a-priori guarantee (computed from the plan alone)."""
        if self.guarantee is not None:
            (eps, dlt), used, rho = self.guarantee, self.composition, None
        else:
            summary = _Summary.of(self.events)
            eps, dlt, used = _compose(summary, self.delta, self.composition, self.label)
            rho = summary.rho
        engine = self.engine if self.engine is not None else backend_engine(self.backend)
        return PrivacyReport(epsilon=float(eps), delta=float(dlt), composition=used,
                             backend=self.backend, events=tuple(self.events), rho=rho,
                             neighbouring=self.neighbouring, simulation=self.simulation,
                             engine=engine)

    def charge(self, budget: Any, *, caller: str | None = None) -> PrivacyReport:
        """Charge the call's whole cost to ``budget`` (or do nothing for ``None``).

        Returns the call's :class:`~dpsubmod.privacy.ledger.PrivacyReport`. Raises
        :class:`~dpsubmod.errors.BudgetExceededError` when it does not fit, before any noise.
        """
        rep = self.report()
        note = (f"{rep.uses} mechanism use(s) by "
                f"{RULE_TEXT.get(rep.composition, rep.composition)}; backend={self.backend}"
                + (f"@{rep.engine}" if rep.engine and self.backend != "numpy" else ""))
        charge(budget, rep.event(self.label, note), caller or self.label)
        _log.info("%s: release of (epsilon=%s, delta=%s) over %d mechanism use(s), backend "
                  "%s%s%s", self.label, fmt(rep.epsilon), fmt(rep.delta), rep.uses,
                  self.backend, f" (engine {rep.engine})" if rep.engine else "",
                  ", charged to the budget" if budget is not None else ", no budget given")
        return rep

    def allowance(self) -> Allowance:
        """A ledger admitting exactly the planned uses (pass it as the mechanisms' budget)."""
        return Allowance(self.events, self.label)


class Allowance(Ledger):
    """A ledger that admits only the uses of a plan: each event must fit a planned one.

    An event fits a planned kind when its epsilon, delta and zCDP cost are each at most the
    planned ones (up to 1e-12 relative rounding) and uses of that kind remain.
    """

    def __init__(self, planned: Iterable[PrivacyEvent], label: str):
        super().__init__()
        self._slots = [[e, e.count] for e in planned]
        self._label = label
        _progress.planned(sum(c for _, c in self._slots))

    @staticmethod
    def _fits(event: PrivacyEvent, slot: PrivacyEvent) -> bool:
        def le(a: float, b: float) -> bool:
            return a <= b * (1.0 + 1e-12) + 1e-300

        if not (le(event.epsilon, slot.epsilon) and le(event.delta, slot.delta)):
            return False
        sz = slot.zcdp
        if sz is None:
            return True
        ez = event.zcdp
        return ez is not None and le(ez, sz)

    def charge(self, events: PrivacyEvent | Iterable[PrivacyEvent]) -> None:
        ev = as_events(events, "Allowance.charge")
        with self._lock:
            counts = [s[1] for s in self._slots]
            for e in ev:
                need = e.count
                for i, (slot, _) in enumerate(self._slots):
                    if need and counts[i] and self._fits(e, slot):
                        take = min(need, counts[i])
                        counts[i] -= take
                        need -= take
                if need:
                    raise PlanExceededError(
                        f"{self._label} tried a mechanism use beyond its privacy plan "
                        f"({e.mechanism}, epsilon={e.epsilon:.6g}, delta={e.delta:.6g}); "
                        "nothing was drawn. This is a bug in dpsubmod: please report it."
                    )
            for i, c in enumerate(counts):
                self._slots[i][1] = c
            self._events.extend(ev)
        _progress.used(sum(e.count for e in ev))

    @property
    def unused(self) -> int:
        """Planned uses not (yet) made."""
        return int(np.sum([s[1] for s in self._slots]))
