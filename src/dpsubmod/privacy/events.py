"""Privacy events: one use (or ``count`` identical uses) of a mechanism and its cost.

An event states an ``(epsilon, delta)``-DP guarantee and, when known, a zCDP cost ``rho`` that is
a complete guarantee by itself. Events are frozen: ledgers and budgets hold them, never edit them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .._validation import check_delta, check_int, check_real
from ..errors import ParameterTypeError

__all__ = ["PrivacyEvent", "rho_pure", "rho_exponential"]


def check_epsilon_finite(value: object, name: str = "epsilon", *,
                         caller: str | None = None) -> float:
    """A privacy parameter epsilon: a finite real number > 0 (``inf`` would mean no noise)."""
    return check_real(value, name, low=0.0, low_open=True, high=math.inf, high_open=True,
                      caller=caller, fix="Pass a positive, finite privacy budget such as 1.0.")


def rho_pure(epsilon: float) -> float:
    """zCDP cost ``epsilon^2 / 2`` of a pure ``epsilon``-DP mechanism (Bun & Steinke 2016)."""
    e = float(epsilon)
    return 0.5 * e * e  # a product overflows to inf; ``**`` would raise


def rho_exponential(epsilon: float) -> float:
    """zCDP cost ``epsilon^2 / 8`` of an ``epsilon``-bounded-range (exponential) mechanism.

    Cesar & Rogers 2021 ("Bounding, concentrating, and truncating: unifying privacy loss
    composition for data analytics", ALT 2021).
    """
    e = float(epsilon)
    return 0.125 * e * e


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

    Raises
    ------
    ValidationError, ParameterTypeError
        On a negative epsilon or rho, a delta outside ``[0, 1)``, or a count below 1.
    """

    mechanism: str
    epsilon: float
    delta: float = 0.0
    rho: float | None = None
    count: int = 1
    note: str = ""

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
        object.__setattr__(self, "epsilon", eps)
        object.__setattr__(self, "delta", dlt)
        object.__setattr__(self, "rho", rho)
        object.__setattr__(self, "count", cnt)

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
        return {"mechanism": self.mechanism,
                "epsilon": self.epsilon if math.isfinite(self.epsilon) else "inf",
                "delta": self.delta, "rho": self.rho, "count": self.count, "note": self.note}
