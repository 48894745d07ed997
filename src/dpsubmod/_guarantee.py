"""What a theorem promises for one run, stated from the run's public parameters.

An offline release states its theorem's bound on the expected utility,
``E[F(S)] >= ratio * OPT - additive`` (:class:`UtilityGuarantee`), in the objective's units and
naming the theorem; it is marked ``vacuous`` when it says nothing. Every number in it comes from
public parameters (epsilon, delta, the sensitivity, the constraint, the number of steps), never
from the private data, so it may be published beside the release.

An online learner states its theorem's bound on the expected regret of its run
(:class:`RegretGuarantee`), from ``T``, ``epsilon``, ``n`` and its resolved learning rates and
exploration, before round 1. The bounds are on the expectation over the learner's own
randomness, under the stream assumption each learner declares (``learner.assumption``, copied
into ``guarantee.assumption``: an oblivious adversary for the seed papers' learners, i.i.d.
rounds for the epoch-greedy and explore-then-commit learners) and the theorem's other
assumptions (stated with each learner: submodular costs in ``[-M, M]`` for minimization;
monotone submodular rewards in ``[0, 1]``, or with singleton values at most ``bound``, for
maximization). They are explicit
readings of the papers' proofs; where a paper gives only an order of magnitude the theorem
string says so.

This module sits below every layer that states a guarantee, so that the offline results and the
online learners share one vocabulary (``units``, ``theorem``, ``vacuous``, ``to_dict``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any


def _num(v: float) -> float | str:
    """A number for JSON: ``inf`` and ``nan`` written as strings."""
    return v if math.isfinite(v) else str(v)


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
        ``ratio * opt_bound - additive <= 0``, so that the bound is at most 0 for every value
        ``OPT`` can take up to the public bound ``opt_bound``.
    opt_bound : float
        A public upper bound on ``OPT`` used to decide ``vacuous``: by default the objective's
        public range (:meth:`~dpsubmod.functions.SetFunction.upper_bound`, 1 for an objective
        built from records), or ``k * value_bound`` where a method was given one; ``inf`` when
        none is known.

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

    def bounded_by(self, opt_bound: float) -> UtilityGuarantee:
        """The same bound, with ``OPT`` known to be at most ``opt_bound`` (the smaller of it and
        the bound already known), and ``vacuous`` decided again."""
        ob = min(float(opt_bound), self.opt_bound)
        return utility_guarantee(self.ratio, self.additive, units=self.units,
                                 theorem=self.theorem, opt_bound=ob)

    def to_dict(self) -> dict[str, Any]:
        """The guarantee as JSON-ready data (``inf`` written as the string ``"inf"``)."""
        return {"ratio": _num(self.ratio), "additive": _num(self.additive), "units": self.units,
                "theorem": self.theorem, "vacuous": self.vacuous,
                "opt_bound": _num(self.opt_bound)}

    def __str__(self) -> str:
        tag = " (vacuous)" if self.vacuous else ""
        return (f"E[F(S)] >= {self.ratio:.4g} OPT - {self.additive:.4g} {self.units}{tag} "
                f"[{self.theorem}]")


def utility_guarantee(ratio: float, additive: float, *, units: str, theorem: str,
                      opt_bound: float = math.inf) -> UtilityGuarantee:
    """A :class:`UtilityGuarantee`, vacuous when ``ratio <= 0``, ``additive`` is not finite, or
    ``ratio * opt_bound - additive <= 0`` (the bound is at most 0 for every ``OPT`` up to the
    public ``opt_bound``)."""
    r, a, ob = float(ratio), float(additive), float(opt_bound)
    says = r > 0.0 and math.isfinite(a) and a < r * ob
    return UtilityGuarantee(ratio=r, additive=a, units=units, theorem=theorem,
                            vacuous=not says, opt_bound=ob)


@dataclass(frozen=True)
class RegretGuarantee:
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
    assumption : str
        What the bound assumes of the stream: ``"iid"`` (rounds drawn independently from one
        distribution), ``"oblivious"`` (any sequence fixed before the run) or ``"adaptive"``
        (each function may depend on the learner's earlier plays); ``""`` when not stated.

    Examples
    --------
    >>> g = RegretGuarantee(bound=120.0, units="cost", theorem="Hazan and Kale (2012)",
    ...                     vacuous=False)
    >>> g.per_round(1000)
    0.12
    """

    bound: float
    units: str
    theorem: str
    vacuous: bool
    trivial: float = math.inf
    assumption: str = ""

    def per_round(self, T: int) -> float:
        """The bound divided by the number of rounds."""
        return float(self.bound) / float(T)

    def to_dict(self) -> dict[str, Any]:
        """The guarantee as JSON-ready data (``inf`` written as the string ``"inf"``)."""
        return {"bound": _num(self.bound), "units": self.units, "theorem": self.theorem,
                "vacuous": self.vacuous, "trivial": _num(self.trivial),
                "assumption": self.assumption}

    def __str__(self) -> str:
        tag = " (vacuous)" if self.vacuous else ""
        who = f", {ASSUMPTION_TEXT[self.assumption]}" if self.assumption in ASSUMPTION_TEXT \
            else ""
        return f"regret <= {self.bound:.4g} {self.units}{tag}{who} [{self.theorem}]"


#: The streams a regret bound may assume, and how a statement names them.
ASSUMPTION_TEXT = {
    "iid": "for i.i.d. rounds",
    "oblivious": "against an oblivious adversary",
    "adaptive": "against an adaptive adversary",
}
#: The assumptions, weakest stream first.
ASSUMPTIONS = tuple(ASSUMPTION_TEXT)


def regret_guarantee(bound: float, trivial: float, *, units: str, theorem: str,
                     assumption: str = "") -> RegretGuarantee:
    """A :class:`RegretGuarantee` of ``bound``, vacuous when it is not below ``trivial`` (or is
    not a finite number); ``assumption`` is one of :data:`ASSUMPTIONS` (or ``""``, and the
    learner's declared one is filled in by ``learner.guarantee``)."""
    if assumption not in ("", *ASSUMPTIONS):
        raise ValueError(f"assumption must be one of {ASSUMPTIONS}; got {assumption!r}")
    b = float(bound)
    vac = not (math.isfinite(b) and b < float(trivial))
    return RegretGuarantee(bound=b, units=units, theorem=theorem, vacuous=vac,
                           trivial=float(trivial), assumption=assumption)
