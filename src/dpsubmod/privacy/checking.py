"""Exact checking of a privacy claim on one neighbouring pair (tiny instances).

When the output distribution of an algorithm on two neighbouring inputs can be written down
exactly, :func:`exact_check` compares the two distributions directly: the largest privacy loss
(log-probability ratio) in both directions, and the hockey-stick divergence
``max_E P(E) - e^eps Q(E) = sum_o [P(o) - e^eps Q(o)]_+`` at the claimed epsilon. A mechanism is
``(eps, delta)``-DP on this pair exactly when both hockey-stick divergences are at most ``delta``.
:func:`sequential_distribution` enumerates the output distribution of a sequential algorithm
given as a tree of choices. The black-box auditor is in :mod:`dpsubmod.privacy.audit`.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from .._validation import check_delta, check_int, check_real
from ..errors import ParameterTypeError, ValidationError
from .events import check_epsilon_finite

__all__ = ["ExactCheckResult", "exact_check", "hockey_stick", "sequential_distribution"]

_SUM_TOL = 1e-9


# ----------------------------------------------------------------------------------------------
# Exact checking
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ExactCheckResult:
    """Outcome of :func:`exact_check`.

    Attributes
    ----------
    epsilon, delta : float
        The claim checked.
    max_log_ratio : float
        ``max_o ln P_D(o) / P_D'(o)`` over outcomes with ``P_D(o) > 0`` (``inf`` when some
        outcome is possible under ``D`` only).
    max_log_ratio_reverse : float
        The same with ``D`` and ``D'`` swapped.
    hockey_stick : float
        ``max`` of the two hockey-stick divergences at ``epsilon``.
    hockey_stick_forward, hockey_stick_reverse : float
        ``sum_o [P_D(o) - e^eps P_D'(o)]_+`` and the same with ``D``, ``D'`` swapped.
    epsilon_exact : float
        The smallest epsilon for which this pair satisfies the claim at ``delta`` (the max log
        ratio when ``delta = 0``): the exact privacy loss of the pair.
    worst_outcome : object
        An outcome attaining the largest log ratio (either direction).
    passed : bool
        ``max(max_log_ratio, max_log_ratio_reverse) <= epsilon + tol`` when ``delta = 0``,
        ``hockey_stick <= delta + tol`` otherwise.
    n_outcomes : int
        Size of the common outcome space.
    tol : float
        Numerical tolerance used.
    """

    epsilon: float
    delta: float
    max_log_ratio: float
    max_log_ratio_reverse: float
    hockey_stick: float
    hockey_stick_forward: float
    hockey_stick_reverse: float
    epsilon_exact: float
    worst_outcome: Any
    passed: bool
    n_outcomes: int
    tol: float

    def __str__(self) -> str:
        verdict = "PASSED" if self.passed else "FAILED"
        return (
            f"exact check {verdict}: claimed (epsilon={self.epsilon:.6g}, delta={self.delta:.6g}); "
            f"max log-ratio {max(self.max_log_ratio, self.max_log_ratio_reverse):.6g} "
            f"(outcome {self.worst_outcome!r}), hockey-stick {self.hockey_stick:.6g}, exact "
            f"epsilon at this delta {self.epsilon_exact:.6g}, over {self.n_outcomes} outcomes."
        )


def _as_distribution(dist: Any, name: str) -> dict[Hashable, float] | np.ndarray:
    if isinstance(dist, Mapping):
        out: dict[Hashable, float] = {}
        for k, v in dist.items():
            if isinstance(v, bool) or not isinstance(v, (numbers.Real, Fraction)):
                raise ParameterTypeError(
                    f"The distribution '{name}' must map outcomes to probabilities; got "
                    f"{v!r} for outcome {k!r}."
                )
            out[k] = float(v)
        vals = np.fromiter(out.values(), dtype=float, count=len(out))
    else:
        try:
            vals = np.asarray(dist, dtype=float)
        except (TypeError, ValueError):
            raise ParameterTypeError(
                f"The distribution '{name}' must be a dict outcome -> probability or a 1-d "
                f"array of probabilities; got {type(dist).__name__}."
            ) from None
        if vals.ndim != 1:
            raise ValidationError(
                f"The distribution '{name}' must be 1-dimensional; got shape {vals.shape}."
            )
        out = vals  # type: ignore[assignment]
    if vals.size == 0 or not np.isfinite(vals).all() or (vals < -_SUM_TOL).any():
        raise ValidationError(
            f"The distribution '{name}' must hold finite non-negative probabilities."
        )
    total = float(vals.sum())
    if abs(total - 1.0) > 1e-6:
        raise ValidationError(
            f"The distribution '{name}' must sum to 1; its probabilities sum to {total!r}."
        )
    return out


def hockey_stick(p: np.ndarray, q: np.ndarray, epsilon: float) -> float:
    """Hockey-stick divergence ``sum_o [p(o) - e^epsilon q(o)]_+`` of two distributions.

    Equals ``max_E P(E) - e^epsilon Q(E)``; a mechanism is ``(epsilon, delta)``-DP on a
    neighbouring pair iff this is at most ``delta`` in both directions.
    """
    p = np.asarray(p, dtype=float)
    q = np.asarray(q, dtype=float)
    if math.isinf(epsilon):
        return float(np.clip(p[q <= 0], 0.0, None).sum())
    return float(np.clip(p - math.exp(epsilon) * q, 0.0, None).sum())


def _max_log_ratio(p: np.ndarray, q: np.ndarray) -> tuple[float, int]:
    pos = p > 0
    if not pos.any():
        return -math.inf, -1
    if (pos & (q <= 0)).any():
        return math.inf, int(np.flatnonzero(pos & (q <= 0))[0])
    with np.errstate(divide="ignore"):
        r = np.where(pos, np.log(np.where(pos, p, 1.0)) - np.log(np.where(pos, q, 1.0)), -np.inf)
    i = int(np.argmax(r))
    return float(r[i]), i


def _exact_epsilon(p: np.ndarray, q: np.ndarray, delta: float, upper: float) -> float:
    """Smallest eps >= 0 with both hockey-stick divergences <= delta (bisection)."""
    def ok(e: float) -> bool:
        return hockey_stick(p, q, e) <= delta and hockey_stick(q, p, e) <= delta

    if ok(0.0):
        return 0.0
    if not ok(upper):
        return math.inf
    lo, hi = 0.0, upper
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if ok(mid):
            hi = mid
        else:
            lo = mid
        if hi - lo <= 1e-14 * max(hi, 1.0):
            break
    return hi


def exact_check(dist_fn: Callable[[Any], Any], D: Any, D_prime: Any, epsilon: float,
                delta: float = 0.0, *, tol: float = 1e-9) -> ExactCheckResult:
    """Check an ``(epsilon, delta)``-DP claim exactly on one neighbouring pair.

    Parameters
    ----------
    dist_fn : callable
        ``dist_fn(data)`` returns the exact output distribution on ``data``: a dict outcome ->
        probability (outcomes missing from one dict have probability 0 there), or a 1-d array of
        probabilities over an outcome space common to both inputs. ``fractions.Fraction``
        probabilities are accepted.
    D, D_prime : object
        Neighbouring inputs.
    epsilon : float
        Claimed epsilon ``> 0``.
    delta : float, default=0.0
        Claimed delta in ``[0, 1)``.
    tol : float, default=1e-9
        Absolute tolerance for floating-point error in the comparisons.

    Returns
    -------
    ExactCheckResult

    Examples
    --------
    Randomized response with ``P[truth] = e / (1 + e)`` is exactly 1-DP:

    >>> p = math.e / (1 + math.e)
    >>> rr = lambda bit: {bit: p, 1 - bit: 1 - p}
    >>> res = exact_check(rr, 0, 1, epsilon=1.0)
    >>> res.passed, round(res.max_log_ratio, 12)
    (True, 1.0)
    >>> exact_check(rr, 0, 1, epsilon=0.9).passed
    False
    """
    if not callable(dist_fn):
        raise ParameterTypeError("The 'dist_fn' parameter of exact_check must be callable.")
    eps = check_epsilon_finite(epsilon, caller="exact_check")
    dlt = check_delta(delta, caller="exact_check")
    tol = check_real(tol, "tol", low=0.0, caller="exact_check")
    a = _as_distribution(dist_fn(D), "dist_fn(D)")
    b = _as_distribution(dist_fn(D_prime), "dist_fn(D_prime)")
    if isinstance(a, dict) != isinstance(b, dict):
        raise ValidationError(
            "dist_fn must return the same kind of distribution (dict or array) on both inputs."
        )
    if isinstance(a, dict):
        outcomes = list(a) + [o for o in b if o not in a]
        p = np.array([a.get(o, 0.0) for o in outcomes])
        q = np.array([b.get(o, 0.0) for o in outcomes])  # type: ignore[union-attr]
    else:
        if a.shape != b.shape:
            raise ValidationError(
                f"dist_fn returned arrays of different shapes {a.shape} and {b.shape}; they "
                "must be over one common outcome space."
            )
        outcomes = list(range(a.size))
        p, q = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    p = np.clip(p, 0.0, None)
    q = np.clip(q, 0.0, None)
    fwd, i = _max_log_ratio(p, q)
    rev, j = _max_log_ratio(q, p)
    hs_f = hockey_stick(p, q, eps)
    hs_r = hockey_stick(q, p, eps)
    worst = outcomes[i] if fwd >= rev else outcomes[j]
    finite = [x for x in (fwd, rev) if math.isfinite(x)]
    upper = max(finite + [0.0]) + 1.0
    if dlt == 0.0:
        eps_exact = max(fwd, rev, 0.0)
        passed = eps_exact <= eps + tol
    else:
        eps_exact = _exact_epsilon(p, q, dlt, upper)
        passed = max(hs_f, hs_r) <= dlt + tol
    return ExactCheckResult(
        epsilon=eps, delta=dlt, max_log_ratio=fwd, max_log_ratio_reverse=rev,
        hockey_stick=max(hs_f, hs_r), hockey_stick_forward=hs_f, hockey_stick_reverse=hs_r,
        epsilon_exact=float(eps_exact), worst_outcome=worst, passed=bool(passed),
        n_outcomes=len(outcomes), tol=tol,
    )


def sequential_distribution(step: Callable[[tuple], Any], n_steps: int | None = None, *,
                            outcome: Callable[[tuple], Hashable] | None = None,
                            max_paths: int = 1_000_000) -> dict[Hashable, Any]:
    """Exact output distribution of a sequential randomized algorithm, by enumerating its paths.

    The algorithm is a tree of choices: ``step(history)`` receives the tuple of choices made so
    far and returns the probabilities of the next choice, as a 1-d array over choices
    ``0..m-1`` or a dict choice -> probability; ``None`` (or an empty result) ends the path.
    Path probabilities are products along the path; with ``fractions.Fraction`` probabilities
    in dicts they stay exact rationals.

    Parameters
    ----------
    step : callable
        ``step(history: tuple) -> array-like, dict or None``.
    n_steps : int or None, default=None
        Stop every path after this many choices (``None``: only ``step`` ends paths).
    outcome : callable or None, default=None
        Maps a full path to the released outcome (e.g. ``frozenset`` when only the selected set
        is released); paths with equal outcomes are merged. ``None`` keeps whole paths.
    max_paths : int, default=1_000_000
        Refuse to enumerate more paths than this.

    Returns
    -------
    dict
        Outcome (or path tuple) -> probability; zero-probability branches are skipped.

    Examples
    --------
    Two draws without replacement from weights (1, 1, 2):

    >>> def step(h):
    ...     w = np.array([1.0, 1.0, 2.0])
    ...     w[list(h)] = 0.0
    ...     return w / w.sum()
    >>> dist = sequential_distribution(step, 2, outcome=frozenset)
    >>> round(dist[frozenset({0, 1})], 6)
    0.166667
    """
    if not callable(step):
        raise ParameterTypeError("The 'step' parameter of sequential_distribution must be "
                                 "callable.")
    if n_steps is not None:
        n_steps = check_int(n_steps, "n_steps", low=0, caller="sequential_distribution")
    max_paths = check_int(max_paths, "max_paths", low=1, caller="sequential_distribution")
    result: dict[Hashable, Any] = {}
    n_done = 0
    stack: list[tuple[tuple, Any]] = [((), 1)]
    while stack:
        history, prob = stack.pop()
        probs = None if n_steps is not None and len(history) >= n_steps else step(history)
        items = _choices(probs, history)
        if not items:
            n_done += 1
            if n_done > max_paths:
                raise ValidationError(
                    f"sequential_distribution: more than max_paths={max_paths} paths; raise "
                    "max_paths or shrink the instance."
                )
            key = history if outcome is None else outcome(history)
            result[key] = result.get(key, 0) + prob
            continue
        for choice, pc in reversed(items):
            stack.append(((*history, choice), prob * pc))
    return result


def _choices(probs: Any, history: tuple) -> list[tuple[Any, Any]]:
    if probs is None:
        return []
    if isinstance(probs, Mapping):
        items = [(c, v) for c, v in probs.items()]
        vals = [float(v) for _, v in items]
    else:
        arr = np.asarray(probs, dtype=float)
        if arr.ndim != 1:
            raise ValidationError(
                f"step({history!r}) must return a 1-d probability vector; got shape {arr.shape}."
            )
        items = [(i, float(v)) for i, v in enumerate(arr)]
        vals = arr.tolist()
    if not items:
        return []
    if any((not math.isfinite(v)) or v < -_SUM_TOL for v in vals) or abs(sum(vals) - 1.0) > 1e-6:
        raise ValidationError(
            f"step({history!r}) must return probabilities summing to 1; got {vals!r}."
        )
    return [(c, v) for c, v in items if float(v) > 0.0]
