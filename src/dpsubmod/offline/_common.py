"""Helpers shared by the offline algorithms: constraint resolution and result assembly."""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._rng import RNGLike, as_generator, check_rng
from .._validation import check_delta, check_epsilon, check_int, check_same_ground_set
from ..constraints import Constraint, Knapsack, UniformMatroid
from ..errors import NonFiniteObjectiveError, ParameterTypeError, ValidationError
from ..functions.base import SetFunction
from ..privacy.backends import NoiseBackend, NumpyBackend, resolve_backend
from ..privacy.events import PrivacyEvent
from ..privacy.ledger import PrivacyReport
from ..privacy.plan import Allowance, PrivacyPlan, backend_name, is_simulation
from ..privacy.selection import ExponentialMechanism
from .result import Diagnostics, Result


def resolve(f: object, constraint: object, caller: str) -> tuple[SetFunction, Constraint]:
    """Validate ``f`` and turn ``constraint`` (an int k, or a Constraint) into a Constraint."""
    if not isinstance(f, SetFunction):
        raise ParameterTypeError(
            f"The 'f' parameter of {caller} must be a dpsubmod SetFunction; got "
            f"{type(f).__name__}. Wrap your objective in a family from dpsubmod.functions."
        )
    if isinstance(constraint, numbers.Integral) and not isinstance(constraint, bool):
        k = check_int(constraint, "k", low=1, high=f.n, caller=caller,
                      fix=f"Pass 1 <= k <= {f.n}, the ground-set size.")
        return f, UniformMatroid(f.n, k)
    if not isinstance(constraint, Constraint):
        raise ParameterTypeError(
            f"The 'constraint' parameter of {caller} must be an int k (cardinality) or a "
            f"dpsubmod Constraint (a Matroid or Knapsack); got {type(constraint).__name__}."
        )
    check_same_ground_set(f.n, constraint.n, "The objective 'f'", "the 'constraint'")
    return f, constraint


def is_knapsack(constraint: Constraint) -> bool:
    return isinstance(constraint, Knapsack)


def require_finite(values: Any, f: Any, caller: str, what: str, *, private: bool = False
                   ) -> np.ndarray:
    """``values`` as an array, or :class:`NonFiniteObjectiveError` naming the objective 'f'.

    A selection computed from NaN or infinite values would be garbage (for a private method,
    garbage released under a guarantee), so every value an offline method acts on passes here.
    A private method meets such a value only while it runs, after its charge; the refusal then
    depends on the private data and the charge stands.
    """
    a = np.asarray(values, dtype=np.float64)
    if np.isfinite(a).all():
        return a
    bad = a.ravel()[~np.isfinite(a.ravel())][0]
    stands = (" The privacy cost of this call was charged before it ran and stands, since the "
              "refusal depends on the private data." if private else "")
    raise NonFiniteObjectiveError(
        f"The objective 'f' ({type(f).__name__}) of {caller} returned {float(bad)!r} for {what}; "
        "a selection computed from it would be meaningless, so nothing was released. Make the "
        f"objective return finite values (check its data for NaN or infinity).{stands}"
    )


def check_noise_parameter(value: float, what: str, caller: str) -> float:
    """Refuse, before the budget is charged, a noise scale or mechanism weight outside
    floating-point range (its inverse must be finite too): the mechanism would refuse it at its
    first draw, after the charge. The arguments it comes from are named."""
    if not (math.isfinite(value) and value > 0.0 and math.isfinite(1.0 / value)):
        raise ValidationError(
            f"The 'epsilon' parameter of {caller} gives {what} {value!r} (from epsilon, the "
            "number of steps and the sensitivity), outside floating-point range. Pass an "
            "epsilon (or a 'sensitivity') for which epsilon / sensitivity lies between about "
            "1e-300 and 1e300."
        )
    return value


def check_score_sensitivity(value: float, sensitivity: float, caller: str) -> float:
    """Refuse a declared sensitivity so large that the score sensitivity derived from it (twice
    it, or it over the smallest cost) overflows."""
    if not math.isfinite(value):
        raise ValidationError(
            f"The 'sensitivity' of {caller} is {sensitivity!r}: the score sensitivity derived "
            "from it overflows floating point. Rescale the objective so that its sensitivity "
            "is below about 1e300."
        )
    return value


def make_result(f: SetFunction, selection: list[int], method: str, *, privacy: Any,
                evaluations: int, params: dict[str, Any], trace: list[float],
                guarantee: Any = None) -> Result:
    """Assemble a Result; the diagnostic value is computed without touching the counter (and
    refused when it is not finite: the selection would not be what it claims)."""
    mask = np.zeros(f.n, dtype=bool)
    mask[selection] = True
    value = float(require_finite(f._value(mask), f, method, "the value of the selection",
                                 private=privacy is not None))
    return Result(
        selection=tuple(int(e) for e in selection),
        method=method,
        privacy=privacy,
        evaluations=int(evaluations),
        params=params,
        diagnostics=Diagnostics(value=value, trace=tuple(float(t) for t in trace)),
        guarantee=bound_guarantee(guarantee, f),
    )


def bound_guarantee(guarantee: Any, f: Any) -> Any:
    """``guarantee`` with ``OPT`` bounded by the objective's public range
    (:meth:`~dpsubmod.functions.SetFunction.upper_bound`), so that a bound at most 0 for every
    value the objective can take is marked vacuous; ``None`` stays ``None``."""
    if guarantee is None or not hasattr(guarantee, "bounded_by"):
        return guarantee
    return guarantee.bounded_by(f.upper_bound())


def exponential_step(caller: str, eps_step: float, noise: NoiseBackend,
                     **sensitivity: float) -> ExponentialMechanism:
    """The exponential mechanism of one step of a private method, built (and so validated)
    before the charge; a per-step budget whose weight leaves floating-point range is refused in
    the terms of the user's arguments (``epsilon``, ``sensitivity``), not the mechanism's."""
    try:
        return ExponentialMechanism._named(caller, epsilon=eps_step, backend=noise,
                                           **sensitivity)
    except ValidationError:
        raise ValidationError(
            f"The 'epsilon' parameter of {caller} gives an exponential-mechanism weight "
            "outside floating-point range (from epsilon, the number of steps and the "
            "sensitivity). Pass an epsilon (or a 'sensitivity') for which epsilon / "
            "sensitivity lies between about 1e-300 and 1e300."
        ) from None


@dataclass(frozen=True)
class PrivateCall:
    """The arguments every private offline method shares, validated once by its public entry
    (:func:`~dpsubmod.offline.maximize`, or the method's own function) and trusted below it.

    Attributes
    ----------
    caller : str
        The method's name, which its refusals give.
    f : SetFunction or KSubmodularFunction
        As the method's kind resolves it.
    constraint : Constraint
        ``k`` already turned into a uniform matroid.
    epsilon, delta : float
        The call's total budget.
    budget : Budget, Ledger or None
        Charged once with the whole plan before the first draw.
    rng : int, Generator or None
        As the user passed it (a seeded numpy run is reported as a simulation).
    backend : str, NoiseBackend or None
        As chosen by the library's default rule (the report names it).
    noise : NoiseBackend
        ``backend`` resolved once: every mechanism of the run draws from it.
    gen : numpy.random.Generator
        The run's public randomness (the numpy backend's own generator on a numpy run).
    """

    caller: str
    f: Any
    constraint: Constraint
    epsilon: float
    delta: float
    budget: Any
    rng: RNGLike
    backend: Any
    noise: NoiseBackend
    gen: np.random.Generator

    def charge_plan(self, label: str, events: list[PrivacyEvent], *, delta: float | None,
                    composition: str, guarantee: tuple[float, float] | None = None
                    ) -> tuple[PrivacyReport, Allowance]:
        """Plan the run from ``events`` (its mechanisms' privacy maps, from public parameters
        only), charge the whole plan once to the call's budget, before any draw, and return the
        statement with an allowance that admits exactly the planned uses (the mechanisms'
        ``budget=`` for their releases).

        Raises :class:`~dpsubmod.errors.BudgetExceededError`, changing nothing, when the plan
        does not fit the budget.
        """
        f = self.f
        plan = PrivacyPlan(label=label, events=tuple(events), delta=delta,
                           composition=composition,
                           neighbouring=f"{getattr(f, 'statement_name', None) or type(f).__name__}"
                                        f": {f.neighbouring}",
                           backend=backend_name(self.backend),
                           simulation=is_simulation(self.backend, self.rng), guarantee=guarantee)
        return plan.charge(self.budget, caller=self.caller), plan.allowance()


def private_call(caller: str, f: object, constraint: object, *, epsilon: float, delta: float,
                 budget: Any, rng: RNGLike, backend: Any,
                 resolver: Callable[[object, object, str], tuple[Any, Constraint]] | None = None
                 ) -> PrivateCall:
    """Resolve the objective, the constraint and the noise source of a private call whose
    ``epsilon`` and ``delta`` its public entry has validated (``resolver``: the method kind's
    own resolution of ``f`` and ``constraint``; :func:`resolve`, for set functions, when None)."""
    f, constraint = (resolver or resolve)(f, constraint, caller)
    noise, gen = noise_source(backend, rng)
    return PrivateCall(caller, f, constraint, epsilon, delta, budget, rng, backend, noise, gen)


def checked_call(caller: str, f: object, constraint: object, *, epsilon: object,
                 delta: object, budget: Any, rng: RNGLike, backend: Any,
                 resolver: Callable[[object, object, str], tuple[Any, Constraint]] | None = None
                 ) -> PrivateCall:
    """The :class:`PrivateCall` of a method called by its own public function, which is then
    the public entry: ``rng``, ``epsilon`` and ``delta`` are checked here, once
    (:func:`~dpsubmod.offline.maximize` checks them itself and calls :func:`private_call`)."""
    check_rng(rng, caller)
    return private_call(caller, f, constraint, epsilon=check_epsilon(epsilon, caller=caller),
                        delta=check_delta(delta, caller=caller), budget=budget, rng=rng,
                        backend=backend, resolver=resolver)


def noise_source(backend: Any, rng: RNGLike) -> tuple[NoiseBackend, np.random.Generator]:
    """The run's noise backend, resolved once, and the generator of its public randomness.

    Resolved before the budget is charged, so that a bad ``backend=`` (or a backend instance
    together with ``rng=``) is refused before anything is spent. The mechanisms of the run are
    then called with ``backend=`` the returned instance and no ``rng`` (an instance owns its
    randomness); on the numpy backend the generator is the backend's own, so noise and public
    randomness (candidate subsets, rounding) come from one stream, as one seed promises.
    """
    be = resolve_backend(backend, rng)
    gen = be.generator if isinstance(be, NumpyBackend) else as_generator(rng)
    return be, gen
