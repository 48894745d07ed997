"""Pieces shared by the gradient-based private algorithms (continuous greedy and DPCG).

Gradient sensitivity
--------------------
Both algorithms look at the data only through the gradient of the multilinear extension,
:math:`\\partial_e f_D(x) = E_R[F_D(R + e) - F_D(R - e)]`. Under the replace-one relation with
declared sensitivity ``Delta`` (:math:`|F_D(S) - F_{D'}(S)| \\le \\Delta` for every ``S``):

* general data model: each coordinate moves by at most ``2 Delta`` (a difference of two values,
  and nothing cancels because the subtracted term depends on ``e``). The bound is attained as
  ``x`` nears a vertex (seed 004 review, item 1a; seed 002 review, C1);
* ``data_model == "monotone-records"`` (``F_D = sum_i g_i`` with monotone ``g_i`` in
  ``[0, Delta]``): only one term changes and its marginals lie in ``[0, Delta]``, so each
  coordinate moves by at most ``Delta`` (seed 004 review, item 1b).

The same bounds hold for the common-random-numbers estimate with its samples fixed, and the
samples are data-independent, so sampling costs no privacy.

Mechanisms
----------
A run builds its mechanisms before its plan is charged; building one validates it, and a noise
parameter out of floating-point range is refused there (:func:`built`), in the terms of the
user's ``epsilon`` (shared over the run's steps) and ``sensitivity``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
import scipy.sparse as sp

from ..._validation import check_int
from ...errors import ValidationError
from ...extensions.multilinear import multilinear_gradient
from ...functions.base import SetFunction
from ...functions.facility_location import FacilityLocation
from ...privacy.mechanisms import Mechanism
from .._common import check_score_sensitivity, require_finite

_GRADIENT_METHODS = ("auto", "exact", "sampling")

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


def gradient_sensitivity(f: SetFunction, sensitivity: float | None, caller: str
                         ) -> tuple[float, float]:
    """``(Delta, s)``: the declared value sensitivity and the per-coordinate gradient bound
    (``2 Delta`` in the general model, ``Delta`` for monotone records)."""
    delta_f = f.require_sensitivity(sensitivity, caller=caller)
    factor = 1.0 if f.data_model == "monotone-records" else 2.0
    return delta_f, check_score_sensitivity(factor * delta_f, delta_f, caller)


@dataclass
class GradientOracle:
    """The multilinear gradient used by a run: exact (closed form or enumeration) or sampled."""

    f: SetFunction
    method: str
    n_samples: int
    gen: Any
    caller: str = ""
    calls: int = 0
    resolved: str = "none"

    @classmethod
    def build(cls, f: SetFunction, method: object, n_samples: object, gen: Any, caller: str
              ) -> GradientOracle:
        if method not in _GRADIENT_METHODS:
            raise ValidationError(
                f"The 'gradient' parameter of {caller} must be one of {list(_GRADIENT_METHODS)}; "
                f"got {method!r}."
            )
        n_samples = check_int(n_samples, "n_samples", low=2, caller=caller)
        return cls(f, str(method), n_samples, gen, caller)

    def __call__(self, x: np.ndarray) -> np.ndarray:
        self.calls += 1
        if stores_nothing(self.f):
            # Identically zero: so is its gradient (and the closed form cannot index a sparse
            # similarity without entries).
            self.resolved = "exact"
            return np.zeros(self.f.n)
        # a misbehaving objective gives inf - inf inside the estimator: the result is checked
        # right below and refused, so the arithmetic warning would only repeat it
        with np.errstate(invalid="ignore", over="ignore"):
            est = multilinear_gradient(self.f, x, method=self.method,  # type: ignore[arg-type]
                                       n_samples=self.n_samples, rng=self.gen)
        self.resolved = est.method
        return require_finite(est.estimate, self.f, self.caller, "its multilinear gradient",
                              private=True)


def stores_nothing(f: SetFunction) -> bool:
    """A facility-location objective whose sparse similarity stores no entry."""
    sim = getattr(f, "similarity", None)
    return isinstance(f, FacilityLocation) and sp.issparse(sim) and sim.nnz == 0
