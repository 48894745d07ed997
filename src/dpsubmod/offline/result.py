"""The Result of every offline algorithm."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["Result", "Diagnostics"]


@dataclass(frozen=True)
class Diagnostics:
    """Values computed on the PRIVATE objective. They are NOT differentially private.

    Use them to evaluate an algorithm in experiments; never publish them beside a private
    selection, since they are computed from the raw data without noise.

    Attributes
    ----------
    value : float
        The objective's value at the selection.
    trace : tuple of float
        Per-step marginal gains of the chosen elements (greedy-type methods), else empty.
    """

    value: float
    trace: tuple[float, ...] = ()


@dataclass(frozen=True)
class Result:
    """What an offline algorithm returns (the spirit of scipy's ``OptimizeResult``, fixed fields).

    Attributes
    ----------
    selection : tuple of int, or tuple of (item, label) pairs
        The released set, in the order the algorithm chose its elements; for k-submodular
        methods (:func:`maximize_ksubmodular`) the chosen ``(item, label)`` pairs.
    method : str
        Registry name of the algorithm.
    privacy : PrivacyReport or None
        The privacy actually spent (epsilon, delta, the composition used, the noise backend and the
        ledger of every mechanism use); ``None`` for a non-private method.
    evaluations : int
        Oracle work in the papers' units (one ``f(S)`` = 1; a batch of ``m`` gains = ``m``).
    params : dict
        Every parameter after defaults were resolved, so the run can be reproduced.
    diagnostics : Diagnostics
        Non-private diagnostics (value of the selection on the private objective, trace).
    """

    selection: tuple[Any, ...]
    method: str
    privacy: Any
    evaluations: int
    params: dict[str, Any] = field(default_factory=dict)
    diagnostics: Diagnostics = field(default_factory=lambda: Diagnostics(float("nan")))

    @property
    def is_private(self) -> bool:
        """Whether the selection was released under a differential-privacy guarantee."""
        return self.privacy is not None

    def __repr__(self) -> str:
        priv = "not private" if self.privacy is None else str(self.privacy)
        sel = list(self.selection)
        return (
            f"Result(method={self.method!r}, selection={sel}, privacy={priv}, "
            f"evaluations={self.evaluations}, value (non-private diagnostic)="
            f"{self.diagnostics.value:.6g})"
        )
