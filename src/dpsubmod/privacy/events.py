"""Privacy events: one use (or ``count`` identical uses) of a mechanism and its cost.

An event states an ``(epsilon, delta)``-DP guarantee and, when known, a zCDP cost ``rho`` that is
a complete guarantee by itself. Events are frozen: ledgers and budgets hold them, never edit them.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from fractions import Fraction

from .._validation import check_delta, check_int, check_real
from ..errors import ParameterTypeError, ValidationError

__all__ = ["PrivacyEvent", "rho_pure", "rho_exponential", "LAWS"]

#: Noise laws an event may carry for the PLD accountant (see ``PrivacyEvent.law``).
LAWS = ("laplace", "gaussian")


def check_epsilon_finite(value: object, name: str = "epsilon", *,
                         caller: str | None = None) -> float:
    """A privacy parameter epsilon: a finite real number > 0 (``inf`` would mean no noise)."""
    return check_real(value, name, low=0.0, low_open=True, high=math.inf, high_open=True,
                      caller=caller, fix="Pass a positive, finite privacy budget such as 1.0.")


def _square_cost(c: float, epsilon: float) -> float:
    """``c epsilon^2`` rounded up (never below the exact value, also among the subnormals and
    where it would round to 0), so that a budget summing the costs exactly never understates
    them."""
    e = float(epsilon)
    r = c * e * e  # a product overflows to inf; ``**`` would raise
    if e == 0.0 or not math.isfinite(r):
        return r
    if r < sys.float_info.min or Fraction(r) < Fraction(c) * Fraction(e) ** 2:
        return math.nextafter(r, math.inf)
    return r


def rho_pure(epsilon: float) -> float:
    """zCDP cost ``epsilon^2 / 2`` of a pure ``epsilon``-DP mechanism (Bun & Steinke 2016)."""
    return _square_cost(0.5, epsilon)


def rho_exponential(epsilon: float) -> float:
    """zCDP cost ``epsilon^2 / 8`` of an ``epsilon``-bounded-range (exponential) mechanism.

    Cesar & Rogers 2021 ("Bounding, concentrating, and truncating: unifying privacy loss
    composition for data analytics", ALT 2021).
    """
    return _square_cost(0.125, epsilon)


@dataclass(frozen=True)
class PrivacyEvent:
    """One use (or ``count`` identical uses) of a mechanism and its privacy cost.

    Parameters
    ----------
    mechanism : str
        Name of the mechanism (``"laplace"``, ``"exponential"``, ...) or of the whole call.
    epsilon : float
        The ``epsilon`` of one use's ``(epsilon, delta)``-DP guarantee, ``>= 0``; ``inf`` when the
        use has only a zCDP guarantee (then set ``rho``).
    delta : float, default=0.0
        The ``delta`` of one use's guarantee, in ``[0, 1)``.
    rho : float or None, default=None
        The zCDP cost of one use, when known. It must be a complete guarantee by itself (a
        Gaussian's ``Delta^2 / (2 sigma^2)``; an exponential mechanism's ``eps^2 / 8``). ``None``
        means ``epsilon^2 / 2`` for a pure event (``delta == 0``) and no zCDP guarantee otherwise.
    count : int, default=1
        Number of identical uses (self-composition).
    note : str, default=""
        Free text (the sensitivity and scale used, the step).
    law : (str, float) or None, default=None
        The exact noise law behind the guarantee, which the PLD accountant
        (``composition="pld"``) composes instead of the generic ``(epsilon, delta)`` pair:
        ``("laplace", b / Delta)`` for continuous Laplace noise of scale ``b`` on a scalar query
        of sensitivity ``Delta``, or ``("gaussian", sigma / Delta)`` for continuous Gaussian
        noise on a query of l2 sensitivity ``Delta`` (any dimension: the Gaussian is rotation
        invariant). The numpy backend's mechanisms set it; grid releases (discrete noise) and
        unknown mechanisms leave it ``None``. It must not claim less than ``epsilon`` and
        ``rho`` state (a Laplace law's ``Delta / b`` at most ``epsilon``, a Gaussian law's
        ``Delta^2 / (2 sigma^2)`` at most the zCDP cost).
    backend : str, default=""
        The noise backend that drew, as its label reads (``"numpy"``,
        ``"secure(granularity=2^-20)@opendp-0.16.0"``); empty when unknown (an event built by
        hand, or read from a budget file written before the field existed).
    engine : str, default=""
        The sampling engine that drew, with its version (``"numpy-2.1.0"``,
        ``"opendp-0.16.0"``, ``"python-dpsubmod-0.1.0"``); empty when unknown.

    Raises
    ------
    ValidationError, ParameterTypeError
        On a negative epsilon or rho, a delta outside ``[0, 1)``, a count below 1, or a law
        that is malformed or claims more privacy than the event's own parameters.
    """

    mechanism: str
    epsilon: float
    delta: float = 0.0
    rho: float | None = None
    count: int = 1
    note: str = ""
    law: tuple[str, float] | None = None
    backend: str = ""
    engine: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.mechanism, str):
            raise ParameterTypeError(
                f"The 'mechanism' field of PrivacyEvent must be a str; got {self.mechanism!r}."
            )
        eps = check_real(self.epsilon, "epsilon", low=0.0, caller="PrivacyEvent")
        dlt = check_delta(self.delta, caller="PrivacyEvent")
        rho = None if self.rho is None else check_real(self.rho, "rho", low=0.0,
                                                        caller="PrivacyEvent")
        cnt = check_int(self.count, "count", low=1, caller="PrivacyEvent")
        for name in ("backend", "engine"):
            if not isinstance(getattr(self, name), str):
                raise ParameterTypeError(
                    f"The '{name}' field of PrivacyEvent must be a str; got "
                    f"{getattr(self, name)!r}."
                )
        object.__setattr__(self, "epsilon", eps)
        object.__setattr__(self, "delta", dlt)
        object.__setattr__(self, "rho", rho)
        object.__setattr__(self, "count", cnt)
        if self.law is not None:
            object.__setattr__(self, "law", self._check_law(self.law))

    @classmethod
    def _trusted(cls, mechanism: str, epsilon: float, delta: float = 0.0,
                 rho: float | None = None, count: int = 1, note: str = "",
                 law: tuple[str, float] | None = None, backend: str = "",
                 engine: str = "") -> PrivacyEvent:
        """An event from values the library computed from already validated parameters.

        Validation happens once, at the public boundary (a user's arguments, a budget file);
        an event a mechanism derives from its own validated parameters is not checked again.
        """
        self = object.__new__(cls)
        for name, value in (("mechanism", mechanism), ("epsilon", float(epsilon)),
                            ("delta", float(delta)),
                            ("rho", None if rho is None else float(rho)),
                            ("count", int(count)), ("note", note), ("law", law),
                            ("backend", backend), ("engine", engine)):
            object.__setattr__(self, name, value)
        return self

    def _times(self, n: int) -> PrivacyEvent:
        """This event repeated ``n`` times (a plan's ``n`` uses of one mechanism)."""
        return PrivacyEvent._trusted(self.mechanism, self.epsilon, self.delta, self.rho,
                                     self.count * n, self.note, self.law, self.backend,
                                     self.engine)

    def _check_law(self, law: object) -> tuple[str, float]:
        try:
            name, ratio = law  # type: ignore[misc]
        except (TypeError, ValueError):
            raise ParameterTypeError(
                "The 'law' field of PrivacyEvent must be a pair (name, noise / sensitivity) or "
                f"None; got {law!r}."
            ) from None
        if name not in LAWS:
            raise ValidationError(
                f"The 'law' field of PrivacyEvent must name one of {list(LAWS)}; got {name!r}."
            )
        r = check_real(ratio, "law[1]", low=0.0, low_open=True, high=math.inf, high_open=True,
                       caller="PrivacyEvent")
        # The law may only sharpen the stated guarantee, never contradict it.
        tol = 1.0 + 1e-9
        if name == "laplace" and not 1.0 / r <= self.epsilon * tol:
            raise ValidationError(
                f"PrivacyEvent: a Laplace law with noise/sensitivity {r!r} is "
                f"{1.0 / r!r}-DP, more than the event's epsilon {self.epsilon!r}."
            )
        z = self.zcdp
        if name == "gaussian" and z is not None and not 0.5 / (r * r) <= z * tol:
            raise ValidationError(
                f"PrivacyEvent: a Gaussian law with noise/sensitivity {r!r} costs rho "
                f"{0.5 / (r * r)!r}, more than the event's {z!r}."
            )
        return str(name), r

    @property
    def zcdp(self) -> float | None:
        """The zCDP cost of one use: ``rho``, else ``epsilon^2 / 2`` when pure, else ``None``."""
        if self.rho is not None:
            return self.rho
        if self.delta == 0.0:
            return rho_pure(self.epsilon) if math.isfinite(self.epsilon) else math.inf
        return None

    @classmethod
    def pure(cls, mechanism: str, epsilon: float, *, count: int = 1,
             note: str = "") -> PrivacyEvent:
        """An ``epsilon``-DP use (zCDP cost ``epsilon^2 / 2``, Bun & Steinke 2016, Prop. 1.4)."""
        return cls(mechanism, epsilon, 0.0, None, count, note)

    @classmethod
    def exponential(cls, epsilon: float, *, mechanism: str = "exponential", count: int = 1,
                    note: str = "") -> PrivacyEvent:
        """An exponential-mechanism use that is ``epsilon``-DP and ``epsilon``-bounded range.

        That is the mechanism sampling ``exp(epsilon u / (2 Delta))`` for scores ``u`` of
        sensitivity ``Delta`` (or ``exp(epsilon u / Delta)`` for monotone scores); its zCDP cost is
        ``epsilon^2 / 8`` (bounded range, Durfee & Rogers 2019, implies it: Cesar & Rogers 2021).
        """
        eps = check_epsilon_finite(epsilon, caller="PrivacyEvent.exponential")
        return cls(mechanism, eps, 0.0, rho_exponential(eps), count, note)

    @classmethod
    def zcdp_only(cls, mechanism: str, rho: float, *, count: int = 1,
                  note: str = "") -> PrivacyEvent:
        """A use with only a ``rho``-zCDP guarantee (``epsilon = inf`` under basic composition)."""
        return cls(mechanism, math.inf, 0.0, rho, count, note)

    def as_dict(self) -> dict:
        """The event as a JSON-ready dict (``inf`` written as the string ``"inf"``)."""
        out = {"mechanism": self.mechanism,
               "epsilon": self.epsilon if math.isfinite(self.epsilon) else "inf",
               "delta": self.delta, "rho": self.rho, "count": self.count, "note": self.note}
        if self.law is not None:
            out["law"] = list(self.law)
        # written only when known, so events of earlier versions read back as they were
        if self.backend:
            out["backend"] = self.backend
        if self.engine:
            out["engine"] = self.engine
        return out
