"""The regret guarantee a learner states for its run: the theorem's bound at the run's parameters.

A learner knows, from its public parameters (``T``, ``epsilon``, ``n``, the resolved learning
rates and exploration), what its theorem promises: :attr:`~dpsubmod.online.Learner.guarantee`
returns that bound as a :class:`Guarantee`, in the objective's units, naming the theorem, and
marked ``vacuous`` when it says nothing (when it is at least the regret of the worst possible
play, which no theorem is needed for).

The bounds are on the **expected** regret over the learner's own randomness (noise, rounding,
exploration), against an oblivious adversary, under the theorem's assumptions (stated with each
learner: submodular costs in ``[-M, M]`` for minimization; monotone submodular rewards in
``[0, 1]``, or with singleton values at most ``bound``, for maximization). They are explicit
readings of the papers' proofs; where a paper gives only an order of magnitude the theorem
string says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["Guarantee", "regret_guarantee"]


@dataclass(frozen=True)
class Guarantee:
    """A theorem's bound on the expected regret of one run, for its parameters.

    Attributes
    ----------
    bound : float
        The bound on the expected regret after ``T`` rounds (``(1 - 1/e)``-regret for
        maximization), in ``units``.
    units : str
        What the bound measures, e.g. ``"cost (f_t in [-M, M], M = 1)"``.
    theorem : str
        The paper, theorem or lemma, and the reading of it used.
    vacuous : bool
        Whether the bound says nothing: it is at least ``trivial``, the regret of the worst play.
    trivial : float
        The regret no learner can exceed (``2 M T`` for costs in ``[-M, M]``; ``alpha T F_max``
        for rewards in ``[0, F_max]``).

    Examples
    --------
    >>> g = Guarantee(bound=120.0, units="cost", theorem="Hazan and Kale (2012)", vacuous=False)
    >>> g.per_round(1000)
    0.12
    """

    bound: float
    units: str
    theorem: str
    vacuous: bool
    trivial: float = math.inf

    def per_round(self, T: int) -> float:
        """The bound divided by the number of rounds."""
        return float(self.bound) / float(T)

    def __str__(self) -> str:
        tag = " (vacuous)" if self.vacuous else ""
        return f"regret <= {self.bound:.4g} {self.units}{tag} [{self.theorem}]"


def regret_guarantee(bound: float, trivial: float, *, units: str, theorem: str) -> Guarantee:
    """A :class:`Guarantee` of ``bound``, vacuous when it is not below ``trivial`` (or is not a
    finite number)."""
    b = float(bound)
    vac = not (math.isfinite(b) and b < float(trivial))
    return Guarantee(bound=b, units=units, theorem=theorem, vacuous=vac, trivial=float(trivial))
