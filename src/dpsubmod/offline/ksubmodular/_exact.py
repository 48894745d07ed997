"""The exact output distribution of Algorithm 3 of Rafiey and Yoshida (ICML 2020) on a tiny
instance, calibrated exactly as :func:`~dpsubmod.offline.ksubmodular.methods.ks_private` is, for
exact privacy checks on neighbouring objectives.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..._validation import check_delta, check_epsilon
from ...constraints import Matroid
from ...functions.ksubmodular.base import KSubmodularFunction, KSubmodularState
from ._calibration import _calibrate, _resolve, _step_mechanism


def _path_distribution(f: KSubmodularFunction, constraint: Matroid, eps_step: float,
                       sens: float, caller: str = "_path_distribution"
                       ) -> dict[tuple[tuple[int, int], ...], float]:
    """Exact distribution of Algorithm 3's ordered output, each step drawn by the exponential
    mechanism at ``eps_step`` on gains of range sensitivity ``2 sens`` (the mechanism
    :func:`ks_private` draws through)."""
    step = _step_mechanism(caller, eps_step, sens, "numpy")
    out: dict[tuple[tuple[int, int], ...], float] = {}
    r = constraint.rank

    def walk(st: KSubmodularState, path: tuple[tuple[int, int], ...], logp: float) -> None:
        cand = np.flatnonzero(constraint.can_add(st)) if len(path) < r else np.zeros(0, int)
        if cand.size == 0:
            out[path] = out.get(path, 0.0) + math.exp(logp)
            return
        g = st.gains(cand)
        logq = step.probabilities(g.ravel(), log=True)
        for j, lq in enumerate(logq):
            row, col = divmod(j, f.k)
            nxt = st.copy()
            nxt.add(int(cand[row]), col + 1)
            walk(nxt, path + ((int(cand[row]), col + 1),), logp + float(lq))

    walk(f.state(), (), 0.0)
    return out


def ks_private_output_distribution(f: KSubmodularFunction, constraint: Any, *, epsilon: float,
                                   delta: float = 0.0, composition: str = "auto",
                                   sensitivity: float | None = None
                                   ) -> dict[tuple[tuple[int, int], ...], float]:
    """Exact output distribution of :func:`ks_private` (Algorithm 3) on a tiny instance.

    Every selection path is enumerated with the mechanism's exact per-step probabilities
    (:func:`~dpsubmod.privacy.selection.exponential_mechanism_probabilities`, i.e.
    ``softmax(eps' * gains)`` with ``eps' = eps_step / (2 Delta)``), calibrated exactly as
    :func:`ks_private` does. The number of paths is ``prod_t k |Lambda_t|``: use ``n <= 6``,
    ``k <= 3``, ``r <= 3``. Feed two neighbouring objectives to an exact checker
    (:func:`dpsubmod.privacy.audit.exact_check`) to verify the privacy claim.

    Returns
    -------
    dict
        Maps each ordered tuple of ``(item, label)`` pairs to its probability.
    """
    caller = "ks_private_output_distribution"
    f, constraint = _resolve(f, constraint, caller)
    sens, split = _calibrate(caller, f, constraint.rank, check_epsilon(epsilon, caller=caller),
                             check_delta(delta, caller=caller), composition, sensitivity)
    return _path_distribution(f, constraint, split.epsilon_step, sens, caller)
