"""The registry of offline maximization methods and the ``maximize`` entry point.

Methods are registered by name with :func:`register`, so later methods plug in without touching
callers, and a misspelt name fails with the list of valid ones.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .._rng import RNGLike
from .._validation import check_delta, check_epsilon
from ..errors import ValidationError
from .result import Result

__all__ = ["MethodSpec", "register", "get_method", "list_methods", "maximize"]


@dataclass(frozen=True)
class MethodSpec:
    """A registered method: its callable, whether it is private, and a one-line summary."""

    name: str
    fn: Callable[..., Result]
    private: bool
    summary: str


_METHODS: dict[str, MethodSpec] = {}


def register(name: str, *, private: bool, summary: str
             ) -> Callable[[Callable[..., Result]], Callable[..., Result]]:
    """Decorator adding a method to the registry under ``name``."""

    def deco(fn: Callable[..., Result]) -> Callable[..., Result]:
        if name in _METHODS and _METHODS[name].fn is not fn:
            raise ValueError(f"a method named {name!r} is already registered")
        _METHODS[name] = MethodSpec(name, fn, private, summary)
        return fn

    return deco


def list_methods(private: bool | None = None) -> list[str]:
    """Names of the registered methods (all, or only the private or non-private ones)."""
    _load_builtin()
    return sorted(n for n, m in _METHODS.items() if private is None or m.private == private)


def get_method(name: str) -> MethodSpec:
    """The registered method called ``name``; the error lists the valid names."""
    _load_builtin()
    try:
        return _METHODS[name]
    except KeyError:
        raise ValidationError(
            f"Unknown method {name!r}. Valid methods: {', '.join(list_methods())}."
        ) from None


def _load_builtin() -> None:
    # Importing the algorithm modules registers them; done lazily to keep imports acyclic.
    from . import builtin  # noqa: F401


def maximize(f: Any, constraint: Any, method: str = "greedy", *, epsilon: float | None = None,
             delta: float = 0.0, rng: RNGLike = None, **options: Any) -> Result:
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
        The total privacy budget; required by private methods, refused by non-private ones.
    rng : int, Generator or None
        All randomness of the run.
    **options
        Method-specific parameters (see each method's docstring).

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
    spec = get_method(method)
    if spec.private:
        if epsilon is None:
            raise ValidationError(
                f"Method {method!r} is private and needs a budget: pass epsilon= (and delta= for "
                "approximate DP)."
            )
        epsilon = check_epsilon(epsilon, caller="maximize")
        delta = check_delta(delta, caller="maximize")
        return spec.fn(f, constraint, epsilon=epsilon, delta=delta, rng=rng, **options)
    if epsilon is not None:
        raise ValidationError(
            f"Method {method!r} is not private, so it takes no epsilon. Choose a private method "
            f"({', '.join(list_methods(private=True)) or 'none registered'}) or omit epsilon."
        )
    return spec.fn(f, constraint, rng=rng, **options)
