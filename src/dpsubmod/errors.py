"""Exception types of dpsubmod.

Every error the library raises on bad input subclasses :class:`DPSubmodError` and
:class:`ValueError` (or :class:`TypeError` for a wrong type), so existing ``except``
clauses keep working. Messages name the argument, what is accepted, what arrived, and the fix.
Errors are raised before any noise is drawn: nothing is released on error.
"""

from __future__ import annotations

__all__ = [
    "DPSubmodError",
    "ValidationError",
    "ParameterTypeError",
    "GroundSetMismatchError",
    "InfeasibleConstraintError",
    "SensitivityError",
    "BudgetExceededError",
    "BudgetFileError",
    "StreamLengthError",
    "NonFiniteObjectiveError",
    "MissingDependencyError",
    "PrivacyMapError",
    "FrozenParameterError",
    "SeedWarning",
]


class DPSubmodError(Exception):
    """Base class of every error raised by dpsubmod."""


class ValidationError(DPSubmodError, ValueError):
    """A parameter or data value is outside what the callee accepts."""


class ParameterTypeError(DPSubmodError, TypeError):
    """A parameter has the wrong type."""


class GroundSetMismatchError(ValidationError):
    """Two objects that must share a ground set ``range(n)`` do not."""


class InfeasibleConstraintError(ValidationError):
    """The constraint admits no feasible non-empty solution (or contradicts the request)."""


class SensitivityError(ValidationError):
    """A private algorithm was given an objective with no declared (or an invalid) sensitivity."""


class BudgetExceededError(DPSubmodError):
    """A privacy spend would exceed the budget; it was refused before anything was released."""


class BudgetFileError(ValidationError):
    """A budget file is missing, corrupt, truncated, from a newer version, or for other data;
    nothing was released and the file was left unchanged."""


class StreamLengthError(ValidationError):
    """A continual-release stream received more items than its declared horizon."""


class NonFiniteObjectiveError(ValidationError):
    """The objective returned NaN or an infinite value, so no meaningful selection exists; nothing
    was released.

    A non-private method checks every value it uses. A private method finds such a value only
    while it runs on the private data, after its cost was charged: the charge then stands, since
    refunding it would let repeated calls probe the data for free.
    """


class MissingDependencyError(DPSubmodError, ImportError):
    """An optional dependency a feature needs is missing or too old; the message gives the
    install command. Raised before anything is charged or drawn."""


class PrivacyMapError(DPSubmodError, RuntimeError):
    """A measurement's own privacy map states a larger cost than dpsubmod charges for it; the
    measurement was refused before any noise was drawn."""


class FrozenParameterError(DPSubmodError, AttributeError):
    """A parameter of a built learner was assigned (or deleted). A learner resolves its public
    parameters once, at construction, and its privacy statement and charge describe exactly
    those; build a new learner (``learner.clone(name=value)``) to change one."""


class SeedWarning(UserWarning):
    """A seed (``rng=``, ``random_state=``, ``--seed``) was passed together with a secure noise
    backend, whose noise comes from the operating system's cryptographic source: the seed does
    not make the run repeat. Pass no seed for a release, or ``backend="numpy"`` (or no backend)
    with the seed for a reproducible simulation."""
