"""Sum of per-label set functions: f(x) = sum_i f_i({e : x_e = i})."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..._rng import RNGLike, as_generator
from ..._validation import check_same_ground_set
from ...errors import ParameterTypeError, SensitivityError, ValidationError
from ..base import SetFunction
from .base import KSubmodularFunction, KSubmodularState


class _PerLabelState(KSubmodularState):
    """One incremental state per component; label ``i`` adds to component ``i`` only."""

    def __init__(self, f: PerLabelSum):
        self.f = f
        self.x = np.zeros(f.n, dtype=np.int64)
        self.mask = np.zeros(f.n, dtype=bool)
        self.selected = []
        self.states = [g.state() for g in f.functions]
        self.value = float(sum(s.value for s in self.states))

    def _gains(self, items: np.ndarray) -> np.ndarray:
        return np.column_stack([s.gains(items) for s in self.states])

    def _add(self, e: int, label: int) -> None:
        st = self.states[label - 1]
        st.add(e)
        self.value = float(sum(s.value for s in self.states))

    def copy(self) -> _PerLabelState:
        new = object.__new__(type(self))
        new.f = self.f
        new.x = self.x.copy()
        new.mask = self.mask.copy()
        new.selected = list(self.selected)
        new.states = [s.copy() for s in self.states]
        new.value = self.value
        return new


class PerLabelSum(KSubmodularFunction):
    r"""The k-submodular function of k set functions, one per label.

    .. math:: F(\mathbf x) = \sum_{i=1}^{k} f_i(X_i), \qquad X_i = \{e : x_e = i\}.

    **Monotone k-submodular** when every ``f_i`` is monotone submodular: the gain
    ``Delta_{e,i} F(x) = f_i(X_i + e) - f_i(X_i)`` is non-negative and shrinks as ``X_i`` grows
    (Ward and Zivny 2014; seed 004 note, section 1.6). With a non-monotone ``f_i`` pairwise
    monotonicity can fail, and ``k_submodular`` is then not claimed.

    Example 5.1 of Rafiey and Yoshida (2020), ad allocation, is the per-label sum of ``k``
    coverage functions, one per agency's influence graph (users influenced by several agencies
    count several times); Example 5.2 is the per-label sum of facility-location functions
    (:class:`KFacilityLocation` is its vectorised form).

    Parameters
    ----------
    functions : sequence of k SetFunction
        The per-label functions, all on the same ground set ``range(n)``.
    sensitivity : float, optional
        Overrides the declared sensitivity (below).

    Attributes
    ----------
    sensitivity : float or None
        ``sum_i f_i.sensitivity`` when every component declares one, under the relation **one
        record replaced in each component at once** (for example one user's edges in every
        agency's graph, when the components are built from the same users): each ``f_i`` then
        moves by at most its own sensitivity. ``None`` if a component declares none.
    """

    neighbouring = "one record replaced in every component at once (one user's data in each f_i)"

    def __init__(self, functions: Sequence[SetFunction], *, sensitivity: float | None = None):
        name = type(self).__name__
        if isinstance(functions, SetFunction) or not isinstance(functions, Sequence):
            raise ParameterTypeError(
                f"The 'functions' argument of {name} must be a sequence of k SetFunctions (one "
                f"per label); got {type(functions).__name__}."
            )
        fs = list(functions)
        if not fs:
            raise ValidationError(f"The 'functions' argument of {name} needs at least one label.")
        for i, g in enumerate(fs):
            if not isinstance(g, SetFunction):
                raise ParameterTypeError(
                    f"functions[{i}] of {name} must be a dpsubmod SetFunction; got "
                    f"{type(g).__name__}."
                )
            check_same_ground_set(fs[0].n, g.n, "functions[0]", f"functions[{i}]")
        self._sensitivity_override = sensitivity
        if sensitivity is None and all(g.sensitivity is not None for g in fs):
            sensitivity = float(sum(g.sensitivity for g in fs))
        model = ("monotone-records" if all(g.data_model == "monotone-records" for g in fs)
                 else "general")
        super().__init__(fs[0].n, len(fs), sensitivity=sensitivity, data_model=model)
        self.functions = fs
        self.monotone = all(getattr(g, "monotone", False) for g in fs)
        self.k_submodular = self.monotone and all(getattr(g, "submodular", False) for g in fs)

    def _value(self, x: np.ndarray) -> float:
        return float(sum(g._value(x == i + 1) for i, g in enumerate(self.functions)))

    def state(self) -> KSubmodularState:
        return _PerLabelState(self)

    def neighbour(self, rng: RNGLike = None) -> PerLabelSum:
        """Replace one record in every component (each through its own ``neighbour``), with
        independent child streams of ``rng``."""
        gen = as_generator(rng)
        streams = gen.spawn(self.k)
        try:
            fs = [g.neighbour(s) for g, s in zip(self.functions, streams)]
        except SensitivityError as exc:
            raise SensitivityError(
                f"PerLabelSum has no neighbouring instance: a component cannot produce one ({exc})"
            ) from None
        return type(self)(fs, sensitivity=self._sensitivity_override)

    def __repr__(self) -> str:
        parts = ", ".join(type(g).__name__ for g in self.functions)
        sens = "undeclared" if self.sensitivity is None else f"{self.sensitivity:.4g}"
        return f"PerLabelSum([{parts}], n={self.n}, sensitivity={sens})"
