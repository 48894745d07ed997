"""What a theorem promises for one run, stated from the run's public parameters.

An offline release states its theorem's bound on the expected utility,
``E[F(S)] >= ratio * OPT - additive`` (:class:`UtilityGuarantee`), in the objective's units and
naming the theorem; it is marked ``vacuous`` when it says nothing. Every number in it comes from
public parameters (epsilon, delta, the sensitivity, the constraint, the number of steps), never
from the private data, so it may be published beside the release.

This module sits below every layer that states a guarantee, so that the offline results and the
online learners can share one vocabulary.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

__all__ = ["UtilityGuarantee", "utility_guarantee"]


@dataclass(frozen=True)
class UtilityGuarantee:
    """A theorem's lower bound on the expected value of one run's selection.

    ``E[F(S)] >= ratio * OPT - additive`` over the algorithm's own randomness, for every input
    that meets the theorem's assumptions (stated in ``theorem``; monotone submodular ``F`` for
    the maximization methods).

    Attributes
    ----------
    ratio : float
        The multiplicative factor of ``OPT`` (``1 - 1/e``, ``1/2``, ...), after any term that
        was bounded by a multiple of ``OPT`` was moved into it.
    additive : float
        The additive error, in the objective's units (``inf`` when no explicit term is known).
    units : str
        What ``additive`` measures.
    theorem : str
        The paper and theorem, and the reading used.
    vacuous : bool
        Whether the bound says nothing: ``ratio <= 0``, no finite additive term, or
        ``additive >= ratio * opt_bound`` for the public bound ``opt_bound`` on ``OPT``.
    opt_bound : float
        A public upper bound on ``OPT`` used to decide ``vacuous`` (``inf`` when none is known).

    Examples
    --------
    >>> g = utility_guarantee(1 - 1 / math.e, 0.25, units="objective", theorem="Nemhauser 1978")
    >>> round(g.lower_bound(1.0), 4), g.vacuous
    (0.3821, False)
    """

    ratio: float
    additive: float
    units: str
    theorem: str
    vacuous: bool
    opt_bound: float = math.inf

    def lower_bound(self, opt: float) -> float:
        """The bound on ``E[F(S)]`` when the optimum is ``opt``."""
        return self.ratio * float(opt) - self.additive

    def to_dict(self) -> dict[str, Any]:
        """The guarantee as JSON-ready data (``inf`` written as the string ``"inf"``)."""
        def num(v: float) -> float | str:
            return v if math.isfinite(v) else str(v)
        return {"ratio": num(self.ratio), "additive": num(self.additive), "units": self.units,
                "theorem": self.theorem, "vacuous": self.vacuous,
                "opt_bound": num(self.opt_bound)}

    def __str__(self) -> str:
        tag = " (vacuous)" if self.vacuous else ""
        return (f"E[F(S)] >= {self.ratio:.4g} OPT - {self.additive:.4g} {self.units}{tag} "
                f"[{self.theorem}]")


def utility_guarantee(ratio: float, additive: float, *, units: str, theorem: str,
                      opt_bound: float = math.inf) -> UtilityGuarantee:
    """A :class:`UtilityGuarantee`, vacuous when ``ratio <= 0``, ``additive`` is not finite, or
    ``additive >= ratio * opt_bound``."""
    r, a, ob = float(ratio), float(additive), float(opt_bound)
    says = r > 0.0 and math.isfinite(a) and a < r * ob
    return UtilityGuarantee(ratio=r, additive=a, units=units, theorem=theorem,
                            vacuous=not says, opt_bound=ob)
