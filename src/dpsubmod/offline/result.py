"""The Result of every offline algorithm."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .._version import __version__

_NOT_PRIVATE = ("NOT differentially private: computed from the private data without noise; "
                "for evaluating a run, never for publication")


def _plain(v: Any) -> Any:
    """``v`` as JSON-ready data: numpy values become Python ones, tuples lists, non-finite
    floats the strings ``"nan"``, ``"inf"``, ``"-inf"``, and other objects their ``repr``."""
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        v = float(v)
        return v if math.isfinite(v) else str(v)
    if v is None or isinstance(v, str):
        return v
    if isinstance(v, Mapping):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple, np.ndarray)):
        return [_plain(x) for x in v]
    return repr(v)


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

    def to_dict(self) -> dict[str, Any]:
        """The diagnostics as JSON-ready data, under a ``warning`` that they are not private."""
        return {"warning": _NOT_PRIVATE, "value": _plain(self.value),
                "trace": _plain(self.trace)}


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
    guarantee : UtilityGuarantee or None
        The method's theorem read at this run's public parameters:
        ``E[F(S)] >= ratio * OPT - additive`` in the objective's units, naming the theorem and
        marked ``vacuous`` when it says nothing: when the bound is at most 0 for every ``OPT`` up
        to the objective's public range (``f.upper_bound()``) or ``k * value_bound``
        (:mod:`dpsubmod.offline.guarantees`).
    """

    selection: tuple[Any, ...]
    method: str
    privacy: Any
    evaluations: int
    params: dict[str, Any] = field(default_factory=dict)
    diagnostics: Diagnostics = field(default_factory=lambda: Diagnostics(float("nan")))
    guarantee: Any = None

    @property
    def is_private(self) -> bool:
        """Whether the selection was released under a differential-privacy guarantee."""
        return self.privacy is not None

    def to_dict(self, *, diagnostics: bool = False) -> dict[str, Any]:
        """The result as JSON-ready data.

        Parameters
        ----------
        diagnostics : bool, default=False
            Also include, under ``"diagnostics"`` and labelled as not private, the value of the
            selection on the private objective, its trace and the oracle work. Leave it off
            for anything you publish.

        Returns
        -------
        dict
            ``dpsubmod_version``, ``method``, ``selection`` (a list; ``[item, label]`` pairs for
            k-submodular methods), ``privacy`` (the report's
            :meth:`~dpsubmod.privacy.PrivacyReport.to_dict`, or None for a non-private method),
            ``params`` and ``guarantee`` (computed from public parameters only). Non-finite
            numbers are written as the strings ``"nan"``, ``"inf"`` and ``"-inf"``; objects
            in ``params`` that are not plain data, as their ``repr``.

        Examples
        --------
        >>> import numpy as np
        >>> from dpsubmod import maximize
        >>> from dpsubmod.functions import FacilityLocation
        >>> rng = np.random.default_rng(0)
        >>> f = FacilityLocation.from_records(rng.random((100, 2)), rng.random((10, 2)),
        ...                                   bandwidth=0.2)
        >>> d = maximize(f, 2, method="private_greedy", epsilon=1.0, rng=0).to_dict()
        >>> d["privacy"]["epsilon"], len(d["selection"]), "diagnostics" in d
        (1.0, 2, False)
        """
        out = {
            "dpsubmod_version": __version__,
            "method": self.method,
            "selection": _plain(self.selection),
            "privacy": None if self.privacy is None else _plain(self.privacy.to_dict()),
            "params": _plain(self.params),
            "guarantee": None if self.guarantee is None else self.guarantee.to_dict(),
        }
        if diagnostics:
            out["diagnostics"] = {**self.diagnostics.to_dict(), "evaluations": self.evaluations}
        return out

    def to_json(self, path: str | os.PathLike[str] | None = None, *,
                diagnostics: bool = False, indent: int | None = 2) -> str:
        """:meth:`to_dict` as JSON text, also written to ``path`` when given.

        Parameters
        ----------
        path : str or path-like, optional
            A file to write (its folder must exist).
        diagnostics : bool, default=False
            As in :meth:`to_dict`: include the non-private diagnostics.
        indent : int or None, default=2
            Indentation of the JSON text (None: one line).

        Returns
        -------
        str
            The JSON text (strict JSON: no ``NaN`` or ``Infinity`` literals).
        """
        text = json.dumps(self.to_dict(diagnostics=diagnostics), indent=indent,
                          allow_nan=False)
        if path is not None:
            Path(path).write_text(text + "\n")
        return text

    def __repr__(self) -> str:
        priv = "not private" if self.privacy is None else str(self.privacy)
        sel = list(self.selection)
        return (
            f"Result(method={self.method!r}, selection={sel}, privacy={priv}, "
            f"evaluations={self.evaluations}, value (non-private diagnostic)="
            f"{self.diagnostics.value:.6g})"
        )
