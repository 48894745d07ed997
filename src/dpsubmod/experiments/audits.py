"""Named privacy audits: each a worst-case neighbouring pair and the algorithm run on it.

These are the setups behind ``dpsubmod audit``. Every setup builds ``algorithm(data, rng)``,
the pair ``(D, D')`` where the privacy loss of that algorithm reaches its bound (or close), and
hands them to :func:`dpsubmod.privacy.audit`, which returns a Clopper-Pearson lower bound on the
epsilon actually spent. ``noise_factor`` rescales the noise the algorithm adds (``0.5`` = half
the calibrated noise, i.e. a deliberately mis-calibrated variant whose true epsilon is about
twice the claim), so a user can see the auditor catch a broken calibration.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from tqdm import tqdm

from .._rng import RNGLike
from .._validation import check_delta, check_epsilon, check_int, check_real
from ..errors import ValidationError
from ..functions import FacilityLocation, Modular
from ..offline import maximize
from ..online import FIDP
from ..privacy.additive import laplace
from ..privacy.audit import AuditResult, audit
from ..privacy.gaussian_mechanism import gaussian
from ..privacy.selection import exponential_mechanism

__all__ = ["AUDITS", "AuditSetup", "run_audit"]

Algorithm = Callable[[Any, np.random.Generator], Any]


@dataclass(frozen=True)
class AuditSetup:
    """One named audit.

    Attributes
    ----------
    name : str
    description : str
        The algorithm and its paper.
    pair : str
        What the neighbouring inputs are.
    build : callable
        ``build(epsilon, delta, noise_factor) -> (algorithm, D, D_prime)``.
    needs_delta : bool
        Whether the mechanism is only ``(epsilon, delta)``-DP with ``delta > 0``.
    """

    name: str
    description: str
    pair: str
    build: Callable[[float, float, float], tuple[Algorithm, Any, Any]]
    needs_delta: bool = False


def _laplace(eps: float, delta: float, factor: float):
    def alg(d, g):
        return float(laplace(d, epsilon=eps, sensitivity=factor, rng=g))

    return alg, 0.0, 1.0


def _gaussian(eps: float, delta: float, factor: float):
    def alg(d, g):
        return float(gaussian(d, epsilon=eps, delta=delta, sensitivity=factor, rng=g))

    return alg, 0.0, 1.0


def _exponential(eps: float, delta: float, factor: float):
    def alg(d, g):
        return int(exponential_mechanism(d, epsilon=eps, sensitivity=factor, rng=g))

    # Candidate 0 gains one unit in D and every other candidate gains one in D': each score
    # moves by the sensitivity, in opposite directions, which is the worst case of the
    # general (non-monotone) calibration.
    return alg, np.array([1.0, 0.0, 0.0, 0.0, 0.0]), np.array([0.0, 1.0, 1.0, 1.0, 1.0])


_CANDIDATES = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.5, 0.5]])


def _facility_pair():
    # One record at candidate 1 and one replaced record that sits on candidate 0 in D and on
    # candidate 1 in D': the gains of candidates 0 and 1 move by +Delta and -Delta.
    crowd = _CANDIDATES[1][None, :]

    def fl(points):
        return FacilityLocation.from_records(points, _CANDIDATES, similarity="gaussian",
                                             bandwidth=0.05)

    return fl(np.vstack([_CANDIDATES[0], crowd])), fl(np.vstack([_CANDIDATES[1], crowd]))


def _private_greedy(eps: float, delta: float, factor: float):
    f, fp = _facility_pair()

    def alg(h, g):
        return maximize(h, 1, method="private_greedy", epsilon=eps,
                        sensitivity=h.sensitivity * factor, rng=g).selection

    return alg, f, fp


def _fidp(eps: float, delta: float, factor: float):
    unit = [Modular(row) for row in np.eye(3)]
    D = [unit[0], unit[1], unit[1]]
    Dp = [unit[1], unit[1], unit[1]]
    # Basic composition with the tight per-draw calibration: over three rounds the advanced
    # bound of the default is far from its worst case, and the audit could not show it.
    kw = dict(epsilon=eps, delta=delta, calibration="tight", composition="basic")
    eta = FIDP(3, 3, 1, **kw).resolved_params["eta"] / factor
    if factor < 1.0:
        # A rate above the calibrated one spends more than eps, and the learner refuses to claim
        # eps for it; the same rate without a claim plays the same law, which is the point here.
        kw = dict(kw, epsilon=math.inf)

    def alg(stream, g):
        played = []
        learner = FIDP(3, 3, 1, eta=eta, rng=g, **kw)
        for f in stream:
            played.append(tuple(learner.select()))
            learner.update(f)
        return tuple(played)

    return alg, D, Dp


AUDITS: dict[str, AuditSetup] = {s.name: s for s in (
    AuditSetup("laplace", "Laplace mechanism (Dwork et al. 2006) on a count",
               "a count of 0 vs 1 (one record added)", _laplace),
    AuditSetup("gaussian", "analytic Gaussian mechanism (Balle and Wang 2018) on a count",
               "a count of 0 vs 1 (one record added)", _gaussian, needs_delta=True),
    AuditSetup("exponential", "exponential mechanism (McSherry and Talwar 2007), Gumbel-max",
               "five scores where one record moves every score by the sensitivity",
               _exponential),
    AuditSetup("private_greedy",
               "private greedy, one step (Mitrovic et al. 2017, Algorithm 1) on facility location",
               "2 points; one point moved from candidate 0 to candidate 1", _private_greedy),
    AuditSetup("fidp",
               "private experts, full information (Perez-Salazar and Cummings 2021, "
               "Algorithm 2), basic composition",
               "3 rounds on 3 items; the first round's reward moved from item 0 to item 1",
               _fidp, needs_delta=True),
)}


def _bare(algorithm: Algorithm) -> Algorithm:
    return algorithm


class _Counted:
    """``algorithm`` advancing a progress bar at each run. A bar cannot follow runs into other
    processes, so a pickled copy is the bare algorithm."""

    def __init__(self, algorithm: Algorithm, bar: Any):
        self.algorithm, self.bar = algorithm, bar

    def __call__(self, data: Any, g: np.random.Generator) -> Any:
        out = self.algorithm(data, g)
        self.bar.update()
        return out

    def __reduce__(self) -> tuple[Any, tuple[Algorithm]]:
        return _bare, (self.algorithm,)


def run_audit(name: str, *, epsilon: float = 1.0, delta: float | None = None,
              n_runs: int = 2000, noise_factor: float = 1.0, alpha: float = 0.05,
              n_jobs: int | None = None, rng: RNGLike = None,
              progress: bool | None = None) -> AuditResult:
    """Audit a named algorithm on its worst-case neighbouring pair.

    Parameters
    ----------
    name : str
        One of :data:`AUDITS`.
    epsilon : float, default=1.0
        The claimed epsilon the algorithm is calibrated to.
    delta : float or None, default=None
        The claimed delta; ``None`` gives ``1e-5`` for setups that need one and 0 otherwise.
    n_runs : int, default=2000
        Runs per input.
    noise_factor : float, default=1.0
        Multiplies the sensitivity the algorithm calibrates to (below 1: too little noise, a
        deliberately mis-calibrated variant).
    alpha : float, default=0.05
        False-alarm rate of the audit (a correctly calibrated algorithm is flagged with
        probability at most ``alpha``).
    n_jobs : int or None, default=None
        Parallel runs with joblib; the result does not depend on it.
    rng : seed or Generator, optional
    progress : bool, optional
        Show a progress bar of the runs on stderr (serial runs only: with ``n_jobs`` the runs
        happen in other processes). Default: on when stderr is a terminal.

    Returns
    -------
    AuditResult
        With ``epsilon_lower_bound`` (the empirical lower bound) and ``violation``.
    """
    if name not in AUDITS:
        raise ValidationError(f"Unknown audit {name!r}: choose one of {', '.join(AUDITS)}.")
    eps = check_epsilon(epsilon, "epsilon", caller="run_audit")
    setup = AUDITS[name]
    if delta is None:
        delta = 1e-5 if setup.needs_delta else 0.0
    dlt = check_delta(delta, "delta", caller="run_audit")
    if setup.needs_delta and dlt == 0.0:
        raise ValidationError(f"The audit {name!r} needs delta > 0: pass e.g. delta=1e-5.")
    runs = check_int(n_runs, "n_runs", low=10, caller="run_audit")
    factor = check_real(noise_factor, "noise_factor", low=0.0, low_open=True,
                        caller="run_audit")
    if not math.isfinite(factor):
        raise ValidationError("The 'noise_factor' argument of run_audit must be finite.")
    algorithm, D, Dp = setup.build(eps, dlt, factor)
    if progress is None:
        progress = sys.stderr.isatty()
    serial = n_jobs is None or n_jobs == 1
    with tqdm(total=2 * runs, desc=f"audit {name}", unit="run",
              disable=not (progress and serial)) as bar:
        return audit(_Counted(algorithm, bar), D, Dp, runs, eps, dlt, rng=rng, alpha=alpha,
                     n_jobs=n_jobs)
