"""The mechanisms of a private continuous run, built before its plan is charged.

A mechanism validates its parameters when it is built: a noise parameter out of floating-point
range is refused there, before anything is charged or drawn. The parameters of a run's
mechanisms come from the user's ``epsilon`` (shared over the run's steps) and ``sensitivity``,
so the refusal is given in the terms of those arguments.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from ...errors import ValidationError
from ...privacy.mechanisms import Mechanism

M = TypeVar("M", bound=Mechanism)


def built(make: Callable[[], M], what: str, caller: str) -> M:
    """``make()``, a mechanism of ``caller``'s run whose other parameters were checked first;
    a noise parameter it refuses is refused naming the user's arguments."""
    try:
        return make()
    except ValidationError:
        raise ValidationError(
            f"The 'epsilon' parameter of {caller} gives {what} outside floating-point range "
            "(from epsilon, the number of steps and the sensitivity). Pass an epsilon (or a "
            "'sensitivity') for which epsilon / sensitivity lies between about 1e-300 and "
            "1e300."
        ) from None
