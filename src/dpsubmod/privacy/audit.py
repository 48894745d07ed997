"""Checking privacy claims: an exact checker and a black-box statistical auditor.

Two tools, for two situations.

:func:`exact_check`
    When the output distribution of an algorithm on two neighbouring inputs can be written down
    exactly (tiny instances), compare the two distributions directly: the largest privacy-loss
    (log-probability ratio) in both directions, and the hockey-stick divergence
    ``max_E P(E) - e^eps Q(E) = sum_o [P(o) - e^eps Q(o)]_+`` at the claimed epsilon. A mechanism
    is ``(eps, delta)``-DP on this pair exactly when both hockey-stick divergences are at most
    ``delta`` (``delta = 0``: every log ratio is at most ``eps``). :func:`sequential_distribution`
    enumerates the output distribution of a sequential algorithm given as a tree of choices (for
    example every selection path of an exponential-mechanism greedy).

:func:`audit_mechanism`
    When only samples are available: run the algorithm many times on each of two neighbouring
    inputs, choose a distinguishing event on one part of the runs, and bound
    ``P[E | D] <= e^eps P[E | D'] + delta`` from the other part with Clopper-Pearson intervals.
    The result is a lower bound on the true epsilon that holds with probability ``1 - alpha``;
    a violation is reported when it exceeds the claim. Such audits can only find violations,
    never prove privacy (Wang et al. 2024 build mechanisms whose leaks hide in rare events), and
    their power depends on the neighbouring pair and the event family (Ding et al. 2018, StatDP;
    Bichsel et al. 2021, DP-Sniper; Jagielski et al. 2020).
"""

from __future__ import annotations

import math
import numbers
import os
import sys
import types
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from .._rng import RNGLike, as_generator
from .._validation import check_delta, check_int, check_real
from ..errors import ParameterTypeError, ValidationError
from .checking import ExactCheckResult, exact_check, hockey_stick, sequential_distribution
from .events import check_epsilon_finite

__all__ = [
    "ExactCheckResult",
    "exact_check",
    "hockey_stick",
    "sequential_distribution",
    "AuditResult",
    "audit_mechanism",
    "audit",
    "clopper_pearson",
]



# ----------------------------------------------------------------------------------------------
# Black-box auditing
# ----------------------------------------------------------------------------------------------
def clopper_pearson(k: int | np.ndarray, n: int, alpha: float,
                    side: str = "lower") -> float | np.ndarray:
    """One-sided Clopper-Pearson bound at confidence ``1 - alpha`` for ``k`` successes in ``n``.

    ``side="lower"``: ``beta.ppf(alpha, k, n - k + 1)`` (0 when ``k = 0``);
    ``side="upper"``: ``beta.ppf(1 - alpha, k + 1, n - k)`` (1 when ``k = n``).
    """
    k = np.asarray(k, dtype=float)
    if side == "lower":
        with np.errstate(invalid="ignore"):
            out = np.where(k > 0, stats.beta.ppf(alpha, np.maximum(k, 1), n - k + 1), 0.0)
    elif side == "upper":
        with np.errstate(invalid="ignore"):
            out = np.where(k < n, stats.beta.ppf(1 - alpha, k + 1, np.maximum(n - k, 1)), 1.0)
    else:
        raise ValidationError(f"The 'side' parameter must be 'lower' or 'upper'; got {side!r}.")
    return float(out) if out.ndim == 0 else out


@dataclass(frozen=True)
class AuditResult:
    """Outcome of :func:`audit_mechanism`.

    Attributes
    ----------
    epsilon_lower_bound : float
        ``ln((p_lo - delta) / p_hi)`` for the chosen event, clipped at 0: with probability at
        least ``confidence`` the algorithm's true epsilon (at this delta, on this pair) is at
        least this.
    epsilon_claimed, delta : float
        The claim audited.
    violation : bool
        ``epsilon_lower_bound > epsilon_claimed``. For an algorithm that satisfies its claim
        this happens with probability at most ``alpha`` (the false-alarm rate).
    event : str
        Description of the distinguishing event ``E``.
    direction : str
        ``"D vs D'"`` (``P[E|D]`` large) or ``"D' vs D"``.
    counts : tuple of int
        Occurrences of ``E`` in the evaluation runs: (on the favoured input, on the other).
    n_eval : int
        Evaluation runs per input.
    n_selection : int
        Runs per input used to choose the event (0 when ``event`` was given).
    p_lower, p_upper : float
        Clopper-Pearson bounds: lower on ``P[E | favoured]``, upper on ``P[E | other]``, each
        one-sided at level ``alpha / 2`` (``alpha / 4`` with a fixed ``event``, where both
        directions are tested).
    confidence, alpha : float
        ``confidence = 1 - alpha``.
    n_runs : int
        Runs per input in all.
    """

    epsilon_lower_bound: float
    epsilon_claimed: float
    delta: float
    violation: bool
    event: str
    direction: str
    counts: tuple[int, int]
    n_eval: int
    n_selection: int
    p_lower: float
    p_upper: float
    confidence: float
    alpha: float
    n_runs: int

    def __str__(self) -> str:
        verdict = "VIOLATION" if self.violation else "no violation found"
        return (
            f"audit: {verdict}; epsilon >= {self.epsilon_lower_bound:.4g} with confidence "
            f"{self.confidence:.4g} (claimed {self.epsilon_claimed:.4g}, delta={self.delta:.3g}); "
            f"event {self.event} ({self.direction}), counts {self.counts[0]} vs {self.counts[1]} "
            f"of {self.n_eval} runs each."
        )


def _run_chunk(algorithm: Callable[[Any, np.random.Generator], Any], data: Any,
               gens: list[np.random.Generator]) -> list[Any]:
    return [algorithm(data, g) for g in gens]


def _run_all(algorithm: Callable, data: Any, root: np.random.Generator, n: int,
             n_jobs: int | None) -> list[Any]:
    # one spawned child stream per run, so results do not depend on n_jobs or scheduling
    gens = root.spawn(n)
    if n_jobs is None or n_jobs == 1:
        return _run_chunk(algorithm, data, gens)
    try:
        from joblib import Parallel, delayed
    except ImportError:  # pragma: no cover - joblib ships with the [distributed] extra
        raise ValidationError(
            "audit_mechanism(n_jobs=...) needs joblib; install it (pip install joblib) or pass "
            "n_jobs=None."
        ) from None
    workers = n_jobs if n_jobs > 0 else (os.cpu_count() or 1)
    size = max(1, math.ceil(n / (4 * workers)))
    chunks = [gens[i:i + size] for i in range(0, n, size)]
    parts = Parallel(n_jobs=n_jobs)(delayed(_run_chunk)(algorithm, data, c) for c in chunks)
    return [o for part in parts for o in part]


def _normalise(value: Any) -> Hashable:
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, numbers.Real) and not isinstance(value, numbers.Integral):
        return float(value)
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, np.ndarray):
        if value.size == 1:
            return _normalise(value.reshape(()).item())
        return tuple(value.ravel().tolist())
    if isinstance(value, list):
        return tuple(value)
    return value


def _is_numeric(values: list[Hashable]) -> bool:
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)


@dataclass(frozen=True)
class _Candidate:
    kind: str        # "ge", "le" or "eq"
    value: Any
    code: int = -1   # integer code of ``value`` for "eq"

    def describe(self, label: str) -> str:
        op = {"ge": ">=", "le": "<=", "eq": "=="}[self.kind]
        return f"{label} {op} {self.value!r}"

    def mask(self, x: np.ndarray | None, codes: np.ndarray) -> np.ndarray:
        if self.kind == "ge":
            return x >= self.value
        if self.kind == "le":
            return x <= self.value
        return codes == self.code


def _candidates(x_sel: np.ndarray | None, codes_sel: np.ndarray, values: list[Hashable],
                n_candidates: int) -> list[_Candidate]:
    cands: list[_Candidate] = []
    present, counts = np.unique(codes_sel, return_counts=True)
    if x_sel is not None:
        qs = np.unique(np.quantile(x_sel, np.linspace(0.0, 1.0, n_candidates + 2)[1:-1]))
        cands += [_Candidate("ge", float(c)) for c in qs]
        cands += [_Candidate("le", float(c)) for c in qs]
        if present.size <= n_candidates:
            cands += [_Candidate("eq", values[c], int(c)) for c in present]
    else:
        top = present[np.argsort(-counts, kind="stable")][: 4 * n_candidates]
        cands += [_Candidate("eq", values[c], int(c)) for c in top]
    return cands


def _eps_lb(k1: np.ndarray, k2: np.ndarray, n: int, bound_alpha: float,
            delta: float) -> np.ndarray:
    """ln((p_lo - delta) / p_hi), each Clopper-Pearson bound one-sided at ``bound_alpha``."""
    lo = np.asarray(clopper_pearson(k1, n, bound_alpha, "lower"))
    hi = np.asarray(clopper_pearson(k2, n, bound_alpha, "upper"))
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(lo > delta, np.log(np.maximum(lo - delta, 1e-300) / hi), -np.inf)
    return out


def audit_mechanism(algorithm: Callable[[Any, np.random.Generator], Any], D: Any, D_prime: Any,
                    n_runs: int, epsilon_claimed: float, delta: float = 0.0, *,
                    rng: RNGLike = None, event: Callable[[Any], bool] | None = None,
                    statistic: Callable[[Any], Any] | None = None, alpha: float = 0.05,
                    selection_fraction: float = 0.5, n_candidates: int = 64,
                    n_jobs: int | None = None) -> AuditResult:
    """Black-box audit: a Clopper-Pearson lower bound on the epsilon of ``algorithm``.

    Runs ``algorithm(D, g)`` and ``algorithm(D_prime, g)`` ``n_runs`` times each, every run on
    its own child stream ``g`` spawned from ``rng`` (one seed reproduces the whole audit, for any
    ``n_jobs``). Unless an ``event`` is given, the first ``selection_fraction`` of the runs
    choose a distinguishing event and direction: among the candidate events on the statistic
    (thresholds ``s >= c`` and ``s <= c`` at quantiles for numeric statistics, plus ``s == v``
    for each value when there are few values; ``s == v`` for other outputs), the one with the
    largest lower bound on the selection runs. The remaining runs, independent of that choice,
    give ``p_lo`` (lower bound on ``P[E | favoured input]``) and ``p_hi`` (upper bound on
    ``P[E | other input]``), each one-sided Clopper-Pearson at level ``alpha / 2``, and
    ``eps_lb = ln((p_lo - delta) / p_hi)``.

    False-alarm rate: if the algorithm is ``(epsilon_claimed, delta)``-DP, then
    ``P[E|D] <= e^eps P[E|D'] + delta`` for every event, so with probability at least
    ``1 - alpha`` both bounds hold and ``eps_lb <= epsilon_claimed``: a correctly calibrated
    algorithm is flagged with probability at most ``alpha``. A violation is evidence; no
    violation is not proof of privacy.

    Parameters
    ----------
    algorithm : callable
        ``algorithm(data, rng) -> output``; must draw all its randomness from ``rng``.
    D, D_prime : object
        Neighbouring inputs (choose a pair where the worst case shows, e.g. counts 0 and 1).
    n_runs : int
        Runs per input (``>= 2``).
    epsilon_claimed : float
        Claimed epsilon ``> 0``.
    delta : float, default=0.0
        Claimed delta in ``[0, 1)``.
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None, default=None
        Root of the spawned run streams.
    event : callable or None, default=None
        A fixed event ``event(output) -> bool``; then every run is used for evaluation and both
        directions are tested at level ``alpha / 2`` each (Bonferroni).
    statistic : callable or None, default=None
        Maps an output to the value candidate events are defined on (a number, or any hashable
        value); ``None`` uses the output (arrays become tuples).
    alpha : float, default=0.05
        False-alarm rate, in ``(0, 1)``.
    selection_fraction : float, default=0.5
        Share of the runs used to choose the event, in ``(0, 1)``.
    n_candidates : int, default=64
        Number of threshold quantiles (and the cap on equality events is 4x this).
    n_jobs : int or None, default=None
        Run the algorithm in parallel with joblib (``-1``: all cores). Results do not depend on
        it.

    Returns
    -------
    AuditResult
    """
    caller = "audit_mechanism"
    if not callable(algorithm):
        raise ParameterTypeError("The 'algorithm' parameter of audit_mechanism must be callable "
                                 "algorithm(data, rng).")
    n_runs = check_int(n_runs, "n_runs", low=2, caller=caller)
    eps = check_epsilon_finite(epsilon_claimed, "epsilon_claimed", caller=caller)
    dlt = check_delta(delta, caller=caller)
    alpha = check_real(alpha, "alpha", low=0.0, high=1.0, low_open=True, high_open=True,
                       caller=caller)
    frac = check_real(selection_fraction, "selection_fraction", low=0.0, high=1.0,
                      low_open=True, high_open=True, caller=caller)
    n_candidates = check_int(n_candidates, "n_candidates", low=1, caller=caller)
    if n_jobs is not None:
        n_jobs = check_int(n_jobs, "n_jobs", caller=caller)
        if n_jobs == 0:
            raise ValidationError("The 'n_jobs' parameter of audit_mechanism must be nonzero "
                                  "(or None).")
    if event is not None and not callable(event):
        raise ParameterTypeError("The 'event' parameter of audit_mechanism must be callable or "
                                 "None.")
    if statistic is not None and not callable(statistic):
        raise ParameterTypeError("The 'statistic' parameter of audit_mechanism must be callable "
                                 "or None.")
    root = as_generator(rng)
    out_a = _run_all(algorithm, D, root, n_runs, n_jobs)
    out_b = _run_all(algorithm, D_prime, root, n_runs, n_jobs)

    if event is not None:
        ka = int(sum(bool(event(o)) for o in out_a))
        kb = int(sum(bool(event(o)) for o in out_b))
        # both directions on the same runs: alpha/2 each (Bonferroni), alpha/4 per bound
        lb_ab = float(_eps_lb(np.array(ka), np.array(kb), n_runs, alpha / 4, dlt))
        lb_ba = float(_eps_lb(np.array(kb), np.array(ka), n_runs, alpha / 4, dlt))
        fwd = lb_ab >= lb_ba
        k1, k2 = (ka, kb) if fwd else (kb, ka)
        return _result(max(lb_ab, lb_ba), eps, dlt, "the given event", fwd, (k1, k2), n_runs,
                       0, alpha / 4, alpha, n_runs)

    sa = [_normalise(statistic(o) if statistic else o) for o in out_a]
    sb = [_normalise(statistic(o) if statistic else o) for o in out_b]
    index: dict[Hashable, int] = {}
    ca = np.array([index.setdefault(v, len(index)) for v in sa], dtype=np.int64)
    cb = np.array([index.setdefault(v, len(index)) for v in sb], dtype=np.int64)
    values = list(index)
    numeric = _is_numeric(values)
    xa = np.asarray(sa, dtype=float) if numeric else None
    xb = np.asarray(sb, dtype=float) if numeric else None
    n_sel = min(max(int(round(frac * n_runs)), 1), n_runs - 1)
    n_ev = n_runs - n_sel

    def part(x: np.ndarray | None, sl: slice) -> np.ndarray | None:
        return None if x is None else x[sl]

    sel, ev = slice(0, n_sel), slice(n_sel, None)
    pooled_x = None if xa is None else np.concatenate([xa[sel], xb[sel]])
    cands = _candidates(pooled_x, np.concatenate([ca[sel], cb[sel]]), values, n_candidates)
    ka = np.array([c.mask(part(xa, sel), ca[sel]).sum() for c in cands])
    kb = np.array([c.mask(part(xb, sel), cb[sel]).sum() for c in cands])
    score_ab = _eps_lb(ka, kb, n_sel, alpha / 2, dlt)
    score_ba = _eps_lb(kb, ka, n_sel, alpha / 2, dlt)
    # ties (nothing separates on the selection runs) fall back to the empirical ratio
    emp = np.log((ka + 0.5) / (kb + 0.5))
    keys = [(score_ab[i], emp[i], i, True) for i in range(len(cands))]
    keys += [(score_ba[i], -emp[i], i, False) for i in range(len(cands))]
    _, _, best, fwd = max(keys, key=lambda t: (t[0], t[1]))
    cand = cands[best]
    ea = int(cand.mask(part(xa, ev), ca[ev]).sum())
    eb = int(cand.mask(part(xb, ev), cb[ev]).sum())
    k1, k2 = (ea, eb) if fwd else (eb, ea)
    lb = float(_eps_lb(np.array(k1), np.array(k2), n_ev, alpha / 2, dlt))
    label = "output" if statistic is None else "statistic"
    return _result(lb, eps, dlt, cand.describe(label), fwd, (k1, k2), n_ev, n_sel, alpha / 2,
                   alpha, n_runs)


def _result(lb: float, eps: float, dlt: float, event: str, fwd: bool, counts: tuple[int, int],
            n_eval: int, n_sel: int, bound_alpha: float, alpha: float, n_runs: int
            ) -> AuditResult:
    p_lo = float(clopper_pearson(counts[0], n_eval, bound_alpha, "lower"))
    p_hi = float(clopper_pearson(counts[1], n_eval, bound_alpha, "upper"))
    lb = max(lb, 0.0)
    return AuditResult(
        epsilon_lower_bound=lb, epsilon_claimed=eps, delta=dlt, violation=bool(lb > eps),
        event=event, direction="D vs D'" if fwd else "D' vs D", counts=counts, n_eval=n_eval,
        n_selection=n_sel, p_lower=p_lo, p_upper=p_hi, confidence=1.0 - alpha, alpha=alpha,
        n_runs=n_runs,
    )


# The earlier name of the auditor, kept for ``from dpsubmod.privacy.audit import audit``.
audit = audit_mechanism


class _CallableModule(types.ModuleType):
    """This module, callable as :func:`audit_mechanism`.

    ``dpsubmod.privacy.audit`` was once the auditor function and shadowed this module. It is now
    always the module (so ``import dpsubmod.privacy.audit as m`` gives the module), and calling
    it still runs the auditor, so ``from dpsubmod.privacy import audit; audit(...)`` keeps
    working.
    """

    def __call__(self, *args: Any, **kwargs: Any) -> AuditResult:
        return audit_mechanism(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
