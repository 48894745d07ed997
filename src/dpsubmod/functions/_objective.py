"""What every objective shares: the evaluation counter and the privacy metadata.

:class:`~dpsubmod.functions.SetFunction` (subsets of ``range(n)``) and
:class:`~dpsubmod.functions.KSubmodularFunction` (label vectors in ``{0..k}^n``) differ in what
they are evaluated on, not in how they declare privacy: both count evaluations in the papers'
units, declare the ``sensitivity`` of one record under their ``neighbouring`` relation and a
``data_model``, may build a neighbouring instance for the auditors, and refuse to calibrate
noise without a declared sensitivity. :class:`Objective` holds that shared part once.
"""

from __future__ import annotations

import math
from typing import Any, Literal

from .._validation import check_real
from ..errors import SensitivityError

DataModel = Literal["general", "monotone-records"]
DATA_MODELS: tuple[str, ...] = ("general", "monotone-records")


class Objective:
    """Evaluation counter, declared sensitivity, data model, neighbour and repr.

    Subclasses set ``n`` and call :meth:`_declare` from their constructor.

    Attributes
    ----------
    n : int
        Size of the ground set.
    evaluations : int
        Oracle work in the papers' units.
    sensitivity : float or None
        Declared largest change of the objective, over all inputs, between neighbouring data
        sets (``None``: undeclared; private algorithms then refuse it without an override).
    data_model : {"general", "monotone-records"}
        How records enter the objective (see :mod:`dpsubmod.functions.base`).
    """

    #: The neighbouring relation behind ``sensitivity``, in words.
    neighbouring: str = "replace one record"

    #: The family that privacy statements name with ``neighbouring``; the class name when
    #: ``None`` (set by a family's objective held in another representation).
    statement_name: str | None = None

    #: The declared public bound behind :meth:`upper_bound` (``inf``: none declared).
    _value_upper: float = math.inf

    n: int

    def _declare(self, sensitivity: float | None, data_model: str) -> None:
        """Validate and store the privacy metadata and start the evaluation counter."""
        name = type(self).__name__
        self.evaluations = 0
        if sensitivity is not None:
            sensitivity = check_real(sensitivity, "sensitivity", low=0.0, low_open=True,
                                     caller=name)
        self.sensitivity = sensitivity
        if data_model not in DATA_MODELS:
            raise SensitivityError(
                f"The 'data_model' parameter of {name} must be 'general' or "
                f"'monotone-records'; got {data_model!r}."
            )
        self.data_model: DataModel = data_model  # type: ignore[assignment]

    def upper_bound(self) -> float:
        """A public upper bound on the objective's value over every input, or ``inf``.

        Declared from public parameters only, never computed from the data, so that it can be
        published beside a release: ``s_max`` for facility location built from records (an
        average of similarities in ``[0, s_max]``), 1 for coverage built from records (the
        fraction of records covered), the matching bound of each combinator over its parts.
        The offline results use it as the default bound on ``OPT`` when they decide whether a
        stated guarantee is vacuous.

        Returns
        -------
        float
        """
        return float(self._value_upper)

    def reset_evaluations(self) -> None:
        """Set the evaluation counter back to 0."""
        self.evaluations = 0

    def require_sensitivity(self, override: float | None = None, *, caller: str = "") -> float:
        """The sensitivity a private algorithm must calibrate from.

        Returns ``override`` when given (validated), else the declared sensitivity; raises
        :class:`~dpsubmod.errors.SensitivityError` when neither exists.
        """
        if override is not None:
            return check_real(override, "sensitivity", low=0.0, low_open=True, caller=caller)
        if self.sensitivity is None:
            who = caller or "a private algorithm"
            raise SensitivityError(
                f"{type(self).__name__} declares no sensitivity, so {who} cannot calibrate its "
                "noise. Build the objective from records (from_records(...)) or pass "
                "sensitivity= explicitly."
            )
        return float(self.sensitivity)

    def neighbour(self, rng: Any = None) -> Objective:
        """A neighbouring instance: the same objective with one record replaced.

        Families built from records override this; auditors use it.
        """
        raise SensitivityError(
            f"{type(self).__name__} was not built from records, so it has no neighbouring instance."
        )

    @property
    def ground_set(self) -> range:
        return range(self.n)

    def _repr_fields(self) -> str:
        """The size fields of the repr (``n=...``; k-submodular functions add ``k``)."""
        return f"n={self.n}"

    def __repr__(self) -> str:
        sens = "undeclared" if self.sensitivity is None else f"{self.sensitivity:.4g}"
        return f"{type(self).__name__}({self._repr_fields()}, sensitivity={sens})"
