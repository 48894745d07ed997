"""A name-to-class registry of the constraint families."""

from __future__ import annotations

import difflib
import inspect

from ..errors import ParameterTypeError, ValidationError
from .base import Constraint
from .generic import GenericMatroid
from .graphic import GraphicMatroid
from .knapsack import Knapsack
from .laminar import LaminarMatroid
from .partition import PartitionMatroid
from .transversal import TransversalMatroid
from .uniform import UniformMatroid

#: Name -> constraint class. ``"cardinality"`` is an alias of ``"uniform"``.
CONSTRAINTS: dict[str, type[Constraint]] = {
    "uniform": UniformMatroid,
    "cardinality": UniformMatroid,
    "partition": PartitionMatroid,
    "graphic": GraphicMatroid,
    "laminar": LaminarMatroid,
    "transversal": TransversalMatroid,
    "generic": GenericMatroid,
    "knapsack": Knapsack,
}


def make_constraint(name: str, **kwargs: object) -> Constraint:
    """Build a constraint from its family name and the family's keyword arguments.

    Parameters
    ----------
    name : str
        One of ``CONSTRAINTS``: "uniform" (alias "cardinality"), "partition", "graphic",
        "laminar", "transversal", "generic", "knapsack". Case and surrounding spaces are ignored;
        "-" and "_" are accepted for spaces.
    **kwargs
        The constructor's arguments, e.g. ``make_constraint("uniform", n=10, k=3)`` or
        ``make_constraint("knapsack", costs=c, budget=1.0)``.

    Raises
    ------
    ValidationError
        If ``name`` is not a registered family; the message lists the valid names.

    Examples
    --------
    >>> make_constraint("uniform", n=5, k=2)
    UniformMatroid(n=5, k=2)
    """
    if not isinstance(name, str):
        raise ParameterTypeError(
            f"The 'name' parameter of make_constraint must be a string; got {type(name).__name__}."
        )
    key = name.strip().lower().replace("-", "_").replace(" ", "_")
    key = key.removesuffix("_matroid")
    if key not in CONSTRAINTS:
        close = difflib.get_close_matches(key, list(CONSTRAINTS), n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise ValidationError(
            f"The 'name' parameter of make_constraint must be one of {sorted(CONSTRAINTS)}; got "
            f"{name!r}.{hint}"
        )
    cls = CONSTRAINTS[key]
    params = inspect.signature(cls.__init__).parameters
    accepted = [p for p in params if p != "self"]
    unknown = sorted(set(kwargs) - set(accepted))
    missing = [p for p, v in params.items() if p != "self" and v.default is v.empty
               and v.kind in (v.POSITIONAL_OR_KEYWORD, v.KEYWORD_ONLY) and p not in kwargs]
    if unknown or missing:
        what = (f"takes no argument(s) {', '.join(map(repr, unknown))}" if unknown else
                f"needs the argument(s) {', '.join(map(repr, missing))}")
        raise ValidationError(
            f"make_constraint({name!r}, ...): {cls.__name__} {what}. Its arguments are: "
            f"{', '.join(accepted)}."
        )
    return cls(**kwargs)
