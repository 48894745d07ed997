"""The one registry of offline maximization methods, and the ``maximize`` entry points.

Each method registers itself where it is defined, with :func:`register`, declaring what it can
do (private or not, the problem kind, constraints, noise backends, whether it needs delta). The
keyword options it accepts are read once from its signature at registration. :func:`maximize`
(set functions) and :func:`maximize_ksubmodular` (k-submodular functions) dispatch through it,
refuse an unknown method or option with the list of valid ones, and pass the user's ``budget=``
to private methods, which charge it before any noise.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import numbers
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .._log import get_logger
from .._progress import check_progress, progress_bar
from .._rng import RNGLike, check_rng
from .._validation import check_delta, check_epsilon
from ..constraints import Knapsack, Matroid, UniformMatroid
from ..errors import ValidationError
from ..privacy.backends import backend_chosen, choose_backend
from ._common import private_call
from .result import Result

_log = get_logger(__name__)

#: Problem kinds a method may solve.
KINDS = ("set", "ksubmodular")
#: Arguments every method takes that are not method-specific options.
_COMMON = frozenset({"f", "constraint", "epsilon", "delta", "rng", "budget"})


@dataclass(frozen=True)
class MethodSpec:
    """A registered method and its declared capabilities.

    Attributes
    ----------
    name : str
    fn : callable
        ``fn(f, constraint, *, [epsilon, delta, budget,] rng, **options) -> Result``.
    kind : {"set", "ksubmodular"}
        The objective it maximizes.
    private : bool
        Whether its release is differentially private (then it takes ``epsilon``, ``delta`` and
        ``budget``).
    summary : str
    constraints : tuple of str
        Constraint kinds it accepts: ``"cardinality"``, ``"matroid"``, ``"knapsack"``.
    needs_delta : bool
        Whether it needs ``delta > 0``.
    backends : tuple of str
        Noise backends it can draw from (empty for a non-private method).
    options : tuple of str
        Its method-specific keyword options.
    core : callable or None
        ``core(call, **options) -> Result``: the private method below its public checks, given
        the :class:`~dpsubmod.offline._common.PrivateCall` that :func:`maximize` validated and
        every option (``None``: :func:`maximize` calls ``fn``, which validates its arguments
        itself).
    defaults : dict
        The options' defaults, read from ``fn``'s signature (the one place they are written).
    resolve : callable or None
        ``resolve(f, constraint, caller) -> (f, constraint)`` for the ``PrivateCall`` of a
        method whose kind resolves its objective otherwise than a set function's (``None``:
        :func:`~dpsubmod.offline._common.resolve`).
    data_models : tuple of str
        The objectives' data models its privacy analysis covers (``"general"``,
        ``"monotone-records"``; see :class:`~dpsubmod.functions.SetFunction`).
    """

    name: str
    fn: Callable[..., Result]
    kind: str
    private: bool
    summary: str
    constraints: tuple[str, ...]
    needs_delta: bool
    backends: tuple[str, ...]
    options: tuple[str, ...]
    core: Callable[..., Result] | None = None
    defaults: dict[str, Any] = field(default_factory=dict)
    resolve: Callable[[object, object, str], tuple[Any, Any]] | None = None
    data_models: tuple[str, ...] = ("general", "monotone-records")

    @property
    def budget(self) -> bool:
        """Whether it accepts ``budget=`` (every private method does)."""
        return self.private


_REGISTRY: dict[tuple[str, str], MethodSpec] = {}

#: The module of ``dpsubmod.offline`` that registers each shipped method. A method's module is
#: imported the first time the method is asked for, so a call of ``private_greedy`` does not
#: load continuous greedy, DPCG or the k-submodular methods (and their dependencies).
SHIPPED: dict[tuple[str, str], str] = {
    **{("set", n): "discrete.greedy"
       for n in ("greedy", "lazy_greedy", "stochastic_greedy", "random", "knapsack_greedy")},
    **{("set", n): "discrete.private_greedy"
       for n in ("private_greedy", "private_stochastic_greedy")},
    ("set", "private_greedy_decomposable"): "discrete.decomposable",
    **{("set", n): "continuous.continuous_greedy"
       for n in ("private_continuous_greedy", "private_continuous_greedy_layers")},
    **{("set", n): "continuous.dpcg" for n in ("dpcg", "dpcg_curvature")},
    **{("ksubmodular", n): "ksubmodular.methods"
       for n in ("ks_greedy", "ks_matroid_greedy", "ks_random", "ks_private",
                 "ks_private_sampled")},
}


def _load(key: tuple[str, str] | None = None) -> None:
    """Import the module registering the shipped method ``key`` (every shipped method when
    None)."""
    modules = set(SHIPPED.values()) if key is None else {SHIPPED[key]} if key in SHIPPED else ()
    for module in sorted(modules):
        importlib.import_module(f"{__package__}.{module}")


def register(name: str, *, private: bool, summary: str, kind: str = "set",
             constraints: tuple[str, ...] = ("cardinality", "matroid"),
             needs_delta: bool = False, backends: tuple[str, ...] | None = None,
             core: Callable[..., Result] | None = None,
             resolve: Callable[[object, object, str], tuple[Any, Any]] | None = None,
             data_models: tuple[str, ...] = ("general", "monotone-records")
             ) -> Callable[[Callable[..., Result]], Callable[..., Result]]:
    """Decorator registering a method under ``name`` with its capabilities (and, for a private
    method, the ``core`` that :func:`maximize` calls with its validated arguments, with
    ``resolve`` the kind's resolution of the objective and constraint when it is not a set
    function's, and ``data_models`` the objectives' data models its analysis covers)."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}; got {kind!r}")

    def deco(fn: Callable[..., Result]) -> Callable[..., Result]:
        key = (kind, name)
        if key not in _REGISTRY and f"{__package__}.{SHIPPED.get(key)}" != fn.__module__:
            _load(key)  # a shipped name is taken even before its module is loaded
        if key in _REGISTRY and _REGISTRY[key].fn is not fn:
            raise ValueError(f"a {kind} method named {name!r} is already registered")
        params = inspect.signature(fn).parameters
        options = tuple(p for p, v in params.items()
                        if p not in _COMMON and v.kind not in (v.VAR_KEYWORD, v.VAR_POSITIONAL))
        # the public signature holds the options' defaults; a core takes them all explicitly
        defaults = {p: params[p].default for p in options if p != "backend"
                    and params[p].default is not params[p].empty}
        if private and "budget" not in params:
            raise ValueError(f"private method {name!r} must take budget=")
        bk = (("numpy", "secure", "opendp") if private else ()) if backends is None \
            else tuple(backends)
        if private and "backend" in params:
            fn = _choosing_backend(fn, name, bk)
        _REGISTRY[key] = MethodSpec(name, fn, kind, private, summary, tuple(constraints),
                                    needs_delta, bk, options, core, defaults, resolve,
                                    tuple(data_models))
        return fn

    return deco


def _choosing_backend(fn: Callable[..., Result], name: str,
                      supported: tuple[str, ...]) -> Callable[..., Result]:
    """``fn`` with its ``backend=`` chosen by the library's one default rule
    (:func:`~dpsubmod.privacy.backends.choose_backend`) when it is called, directly or through
    :func:`maximize`: no seed means the secure backend, a seed a numpy simulation."""
    @functools.wraps(fn)
    def method(*args: Any, **kwargs: Any) -> Result:
        kwargs["backend"] = choose_backend(kwargs.get("backend"), kwargs.get("rng"),
                                           caller=name, supported=supported)
        with backend_chosen():
            return fn(*args, **kwargs)

    return method


def list_methods(private: bool | None = None, *, kind: str = "set") -> list[str]:
    """Names of the registered methods of ``kind`` (all, or only the private or non-private ones).

    >>> "private_greedy" in list_methods(private=True)
    True
    """
    _load()
    return sorted(n for (k, n), m in _REGISTRY.items()
                  if k == kind and (private is None or m.private == private))


def get_method(name: str, *, kind: str = "set") -> MethodSpec:
    """The registered method called ``name``; the error lists the valid names."""
    if (kind, name) not in _REGISTRY:
        _load((kind, name))
    try:
        return _REGISTRY[(kind, name)]
    except KeyError:
        what = "k-submodular method" if kind == "ksubmodular" else "method"
        raise ValidationError(
            f"Unknown {what} {name!r}. Valid {what}s: {', '.join(list_methods(kind=kind))}."
        ) from None


def constraint_kind(constraint: Any) -> str | None:
    """``"cardinality"`` (an int ``k`` or a uniform matroid), ``"matroid"``, ``"knapsack"``, or
    None for anything else (left to the method to refuse)."""
    if isinstance(constraint, numbers.Integral) and not isinstance(constraint, bool):
        return "cardinality"
    if isinstance(constraint, UniformMatroid):
        return "cardinality"
    if isinstance(constraint, Matroid):
        return "matroid"
    if isinstance(constraint, Knapsack):
        return "knapsack"
    return None


def _check_capability(spec: MethodSpec, constraint: Any, caller: str) -> None:
    """Refuse a constraint the method does not declare (a cardinality constraint is a
    matroid)."""
    ck = constraint_kind(constraint)
    accepts = set(spec.constraints) | ({"cardinality"} if "matroid" in spec.constraints else set())
    if ck is None or ck in accepts:
        return
    _load()
    others = [n for (k, n), m in sorted(_REGISTRY.items())
              if k == spec.kind and ck in set(m.constraints) | (
                  {"cardinality"} if "matroid" in m.constraints else set())]
    if not others:
        return  # no method of this kind takes it: the method's own type check explains why
    raise ValidationError(
        f"The 'constraint' parameter of {caller} is a {ck} constraint "
        f"({type(constraint).__name__}), which method {spec.name!r} does not handle (it takes: "
        f"{', '.join(spec.constraints)}). Methods for a {ck} constraint: {', '.join(others)}."
    )


def _steps(constraint: Any) -> int | None:
    """The number of greedy steps a constraint allows, when known before the run (the bar's
    total; a private run replaces it by its planned number of mechanism uses)."""
    if isinstance(constraint, numbers.Integral) and not isinstance(constraint, bool):
        return int(constraint)
    rank = getattr(constraint, "rank", None)
    return int(rank) if isinstance(rank, numbers.Integral) else None


def _dispatch(kind: str, caller: str, f: Any, constraint: Any, method: str,
              epsilon: float | None, delta: float, budget: Any, rng: RNGLike,
              options: dict[str, Any], progress: object = False, *,
              checked: bool = False) -> Result:
    """The dispatch of :func:`maximize` and :func:`maximize_ksubmodular` (``checked``: the
    caller's own public entry validated ``epsilon`` and ``delta``, see
    :func:`_maximize_checked`)."""
    show = bool(check_progress(progress, caller))
    if not isinstance(method, str):
        raise ValidationError(f"The 'method' parameter of {caller} must be a method name (str); "
                              f"got {type(method).__name__}. See list_methods().")
    check_rng(rng, caller)
    spec = get_method(method, kind=kind)
    _check_capability(spec, constraint, caller)
    unknown = sorted(set(options) - set(spec.options))
    if unknown:
        valid = ", ".join(spec.options) if spec.options else "none"
        raise ValidationError(
            f"{caller}: method {method!r} takes no option(s) {', '.join(map(repr, unknown))}. "
            f"Its options are: {valid}."
        )
    _log.debug("%s: method %s on a ground set of %d items", caller, method,
               int(getattr(f, "n", -1)))
    if spec.private:
        if epsilon is None:
            raise ValidationError(
                f"Method {method!r} is private and needs its share of the budget: pass epsilon= "
                "(and delta= for approximate DP), and budget= to charge the data set's budget."
            )
        if not checked:
            epsilon = check_epsilon(epsilon, caller=caller)
            delta = check_delta(delta, caller=caller)
        if "backend" in spec.options:
            options["backend"] = choose_backend(options.get("backend"), rng, caller=caller,
                                                supported=spec.backends, stacklevel=4)
        with progress_bar(show, total=_steps(constraint), desc=f"{caller} {method}"), \
                backend_chosen():
            if spec.core is None:
                return spec.fn(f, constraint, epsilon=epsilon, delta=delta, budget=budget,
                               rng=rng, **options)
            call = private_call(method, f, constraint, epsilon=epsilon, delta=delta,
                                budget=budget, rng=rng, backend=options.pop("backend", None),
                                resolver=spec.resolve)
            return spec.core(call, **{**spec.defaults, **options})
    if epsilon is not None or budget is not None:
        arg = "epsilon" if epsilon is not None else "budget"
        raise ValidationError(
            f"Method {method!r} is not private, so it takes no {arg}. Choose a private method "
            f"({', '.join(list_methods(private=True, kind=kind)) or 'none registered'}) or omit "
            f"{arg}."
        )
    with progress_bar(show, total=_steps(constraint), desc=f"{caller} {method}"):
        return spec.fn(f, constraint, rng=rng, **options)


def maximize(f: Any, constraint: Any, method: str = "greedy", *, epsilon: float | None = None,
             delta: float = 0.0, budget: Any = None, rng: RNGLike = None,
             progress: bool = False, **options: Any) -> Result:
    """Maximize a set function under a constraint with a registered method.

    Parameters
    ----------
    f : SetFunction
        The objective. Private methods calibrate from ``f.sensitivity`` (or ``sensitivity=``
        passed in ``options``).
    constraint : int or Constraint
        ``k`` for a cardinality constraint, a Matroid, or a Knapsack.
    method : str, default="greedy"
        A name from :func:`list_methods`.
    epsilon, delta : float
        The privacy cost of this release; required by private methods, refused by non-private
        ones.
    budget : Budget, optional
        The data set's budget; a private method charges its whole cost to it before drawing any
        noise (and raises :class:`~dpsubmod.errors.BudgetExceededError`, releasing nothing, when
        it does not fit).
    rng : int, Generator or None
        All randomness of the run. With no ``backend=`` option, a private method runs on the
        secure backend when ``rng`` is None (a release: OpenDP when installed, else the exact
        Python engine) and on numpy when it is given: a reproducible simulation, not a private
        release, which the statement says. An explicit ``backend=`` is kept; a seed given with
        ``backend="secure"`` raises a :class:`~dpsubmod.errors.SeedWarning`
        (:func:`~dpsubmod.privacy.backends.choose_backend`).
    progress : bool, default=False
        Show a tqdm bar on stderr, silent when stderr is not a terminal: one step per planned
        mechanism use for a private method (greedy steps, rounds, iterations), one per element
        selected for a non-private greedy. It never changes the result or the random draws.
    **options
        Method-specific parameters (see each method's docstring); an unknown one is refused.

    Returns
    -------
    Result

    Examples
    --------
    >>> from dpsubmod import maximize
    >>> from dpsubmod.functions import Modular
    >>> maximize(Modular([3.0, 1.0, 2.0]), 2).selection
    (0, 2)
    """
    return _dispatch("set", "maximize", f, constraint, method, epsilon, delta, budget, rng,
                     options, progress)


def _maximize_checked(f: Any, constraint: Any, method: str, *, epsilon: float, delta: float,
                      budget: Any, rng: RNGLike, caller: str, **options: Any) -> Result:
    """:func:`maximize` with a private ``method``, called below another public entry (such as
    :func:`dpsubmod.tasks.private_select` or the command line) that validated ``epsilon`` and
    ``delta`` itself: they are not checked again. Everything else is checked as by
    :func:`maximize`, whose refusals name ``caller``."""
    return _dispatch("set", caller, f, constraint, method, epsilon, delta, budget, rng,
                     options, checked=True)


def maximize_ksubmodular(f: Any, constraint: Any, method: str = "ks_greedy", *,
                         epsilon: float | None = None, delta: float = 0.0, budget: Any = None,
                         rng: RNGLike = None, progress: bool = False,
                         **options: Any) -> Result:
    """Maximize a k-submodular function under a matroid with a registered method.

    Parameters are as in :func:`maximize` (``progress=True`` included); ``method`` is a name from
    ``list_methods(kind="ksubmodular")`` and ``constraint`` is ``B`` (at most ``B`` labelled
    items) or a Matroid on the support.

    Returns
    -------
    Result
        ``selection`` is the tuple of ``(item, label)`` pairs in the order chosen.

    Examples
    --------
    >>> import numpy as np
    >>> from dpsubmod.functions.ksubmodular import KFacilityLocation
    >>> sim = np.random.default_rng(0).uniform(size=(2, 30, 6))
    >>> f = KFacilityLocation(sim, max_similarity=1.0)
    >>> res = maximize_ksubmodular(f, 2, "ks_private", epsilon=1.0, rng=0)
    >>> len(res.selection), res.privacy.epsilon <= 1.0
    (2, True)
    """
    return _dispatch("ksubmodular", "maximize_ksubmodular", f, constraint, method, epsilon,
                     delta, budget, rng, options, progress)
