"""The exponential mechanism over a ground set scored in partitions, e.g. on Dask workers.

For very large ground sets the scores of one greedy step need not be gathered in one place:
each partition of the candidates is scored where it lives, and returns only its Gumbel-max
winner and that winner's key. By the Gumbel-max trick (every candidate ``i`` gets the key
``w q_i + G_i`` with i.i.d. standard Gumbel ``G_i``, and the largest key wins) the overall argmax
of the partition winners is the argmax over all candidates, which is an exact draw from the
exponential mechanism ``P(i) ∝ exp(w q_i)``, whatever the partitioning.

References
----------
.. [MT07] F. McSherry, K. Talwar. Mechanism Design via Differential Privacy. FOCS 2007.
.. [DR14] C. Dwork, A. Roth. The Algorithmic Foundations of Differential Privacy. 2014, Thm 3.10.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .._rng import RNGLike, as_generator, standard_gumbel
from ..errors import InfeasibleConstraintError, ParameterTypeError, ValidationError
from ._inputs import (
    _charge,
    _check_budget,
    _clip_range,
    _div_down,
    _epsilon,
    _note,
    _selection_sensitivity,
)
from .backends import NumpyBackend
from .events import PrivacyEvent

__all__ = ["distributed_exponential_mechanism", "partition_winner", "contiguous_partitions"]

_CALLER = "distributed_exponential_mechanism"


def contiguous_partitions(m: int, parts: int) -> list[range]:
    """``parts`` contiguous ranges covering ``range(m)`` with sizes differing by at most one."""
    if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or m < 1:
        raise ValidationError(f"The 'm' argument of contiguous_partitions must be a positive "
                              f"integer; got {m!r}.")
    if isinstance(parts, bool) or not isinstance(parts, (int, np.integer)) or parts < 1:
        raise ValidationError(f"The 'parts' argument of contiguous_partitions must be a positive "
                              f"integer; got {parts!r}.")
    bounds = np.linspace(0, int(m), min(int(parts), int(m)) + 1).round().astype(int)
    return [range(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:])]


def _as_index(part: Any) -> np.ndarray:
    if isinstance(part, range):
        return np.arange(part.start, part.stop, part.step, dtype=np.int64)
    return np.asarray(part, dtype=np.int64).reshape(-1)


def partition_winner(task: tuple) -> tuple[float, int]:
    """Score one partition and return its Gumbel-max winner ``(key, candidate id)``.

    ``task = (score_fn, part, weight, shift, clip_range, generator)``. The key of candidate
    ``i`` is ``weight * (clip(q_i) - shift) + G_i`` with ``G_i`` standard Gumbel from
    ``generator``; ``(-inf, -1)`` when every score of the partition is ``-inf``. Runs on a
    worker: it must be importable (it is) and ``score_fn`` picklable.

    Raises
    ------
    ValidationError
        ``score_fn`` returned the wrong shape, NaN or ``+inf``.
    """
    score_fn, part, weight, shift, clip, gen = task
    idx = _as_index(part)
    try:
        q = np.array(score_fn(part), dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise ParameterTypeError(
            f"The 'score_fn' of {_CALLER} must return real numbers for a partition."
        ) from None
    if q.shape != idx.shape:
        raise ValidationError(
            f"The 'score_fn' of {_CALLER} returned {q.size} scores for a partition of "
            f"{idx.size} candidates; return one score per candidate, in the partition's order."
        )
    bad = np.isnan(q) | np.isposinf(q)
    if bad.any():
        j = int(np.flatnonzero(bad)[0])
        raise ValidationError(
            f"The 'score_fn' of {_CALLER} gave {q[j]!r} for candidate {int(idx[j])}; scores must "
            "be real numbers, or -inf to mark an infeasible candidate."
        )
    finite = np.isfinite(q)
    if not finite.any():
        return -np.inf, -1
    if clip is not None:
        q[finite] = np.clip(q[finite], clip[0], clip[1])
    # Gumbel-max as in NumpyBackend.exponential, with a shift common to all partitions (the
    # top of the clip range, else 0) since no partition knows the global maximum.
    keys = weight * (q - shift) + standard_gumbel(gen, q.shape)
    j = int(np.argmax(keys))
    return float(keys[j]), int(idx[j])


def _check_partitions(partitions: object) -> list[Any]:
    if isinstance(partitions, (str, bytes)) or not isinstance(partitions, Sequence):
        raise ParameterTypeError(
            f"The 'partitions' argument of {_CALLER} must be a sequence of index arrays or "
            f"ranges; got {type(partitions).__name__}."
        )
    parts = list(partitions)
    if not parts:
        raise ValidationError(f"The 'partitions' argument of {_CALLER} is empty; pass at least "
                              "one partition of candidate ids (see contiguous_partitions).")
    sizes = []
    for p in parts:
        if isinstance(p, range):
            if p.step != 1 and p.step != -1:
                raise ValidationError(f"The ranges in 'partitions' of {_CALLER} must have step "
                                      f"1; got {p!r}.")
            sizes.append(len(p))
        else:
            a = np.asarray(p)
            if a.ndim != 1 or (a.size and not np.issubdtype(a.dtype, np.integer)):
                raise ParameterTypeError(
                    f"Each partition passed to {_CALLER} must be a 1-d array of integer "
                    f"candidate ids or a range; got {a.dtype} of shape {a.shape}."
                )
            sizes.append(a.size)
    if min(sizes) == 0:
        raise ValidationError(f"A partition passed to {_CALLER} is empty; drop empty "
                              "partitions.")
    if all(isinstance(p, range) for p in parts):
        spans = sorted((min(p), max(p)) for p in parts)
        overlap = any(b[0] <= a[1] for a, b in zip(spans, spans[1:]))
        negative = spans[0][0] < 0
    else:
        ids = np.concatenate([_as_index(p) for p in parts])
        overlap = np.unique(ids).size != ids.size
        negative = bool((ids < 0).any())
    if overlap:
        raise ValidationError(
            f"The partitions passed to {_CALLER} overlap; each candidate must be in exactly one "
            "partition (a repeated candidate would be drawn with twice its weight)."
        )
    if negative:
        raise ValidationError(f"The partitions passed to {_CALLER} hold a negative candidate "
                              "id; ids must be >= 0.")
    return parts


def _map(executor: Any, tasks: list[tuple]) -> list[tuple[float, int]]:
    if executor is None:
        return [partition_winner(t) for t in tasks]
    if hasattr(executor, "submit") and hasattr(executor, "gather"):  # dask.distributed.Client
        futures = executor.map(partition_winner, tasks, pure=False)
        return list(executor.gather(futures))
    if hasattr(executor, "map"):  # concurrent.futures.Executor, multiprocessing.Pool
        return list(executor.map(partition_winner, tasks))
    if callable(executor):  # a map function
        return list(executor(partition_winner, tasks))
    raise ParameterTypeError(
        f"The 'executor' parameter of {_CALLER} must be None, a dask.distributed Client, an "
        f"object with map(fn, iterable), or a map function; got {type(executor).__name__}."
    )


def distributed_exponential_mechanism(
        score_fn: Callable[[Any], Any], partitions: Sequence[Any], *, epsilon: float,
        sensitivity: float | None = None, monotonic: bool = False,
        range_sensitivity: float | None = None, clip_range: tuple[float, float] | None = None,
        budget: Any = None, rng: RNGLike = None, executor: Any = None) -> int:
    """Exponential mechanism over candidates scored partition by partition (Gumbel-max).

    Selects candidate ``i`` with probability proportional to ``exp(w * q_i)``, exactly as
    :func:`~dpsubmod.privacy.mechanisms.exponential_mechanism` with the numpy backend, where
    ``w = epsilon / (2 sensitivity)`` (``epsilon / sensitivity`` with ``monotonic=True``,
    ``epsilon / range_sensitivity`` for bounded-range scores). Each partition is scored by
    ``score_fn`` on the executor and returns only its Gumbel-max winner and key; the winner of
    the largest key is returned.

    Parameters
    ----------
    score_fn : callable
        ``score_fn(part) -> array of float``: one score per candidate of ``part`` (an index
        array or a ``range``, as given in ``partitions``), in its order; ``-inf`` marks an
        infeasible candidate. Must be picklable for a process or cluster executor (a top-level
        function or a ``functools.partial`` of one).
    partitions : sequence of 1-d int arrays or ranges
        Disjoint, non-empty sets of candidate ids (e.g. :func:`contiguous_partitions`). The
        result does not depend on the partitioning in distribution.
    epsilon : float
        Privacy budget of this selection, > 0.
    sensitivity, monotonic, range_sensitivity, clip_range
        As in :func:`~dpsubmod.privacy.mechanisms.exponential_mechanism`; finite scores are
        clipped to ``clip_range`` on the worker before the draw.
    budget : Budget or Ledger, optional
        Charged with ``PrivacyEvent("exponential_mechanism", epsilon, rho=epsilon**2/8)`` before
        any partition is scored (if scoring then fails nothing is released and the charge is
        conservative).
    rng : int, Generator, SeedSequence or None
        Resolved once; partition ``j`` draws its Gumbel noise from the ``j``-th child of
        ``Generator.spawn``, so the result is reproducible for a given seed and partitioning
        whichever executor runs the partitions, and in whatever order.
    executor : None, dask.distributed.Client, concurrent.futures.Executor or map function
        Where partitions are scored: ``None`` scores them in this process.

    Returns
    -------
    int
        The selected candidate id.

    Guarantee
    ---------
    The same as :func:`~dpsubmod.privacy.mechanisms.exponential_mechanism`: epsilon-DP and
    epsilon-bounded range, hence epsilon**2/8-zCDP [MT07, DR14 Thm 3.10], under any
    neighbouring relation for which the scores obey the declared sensitivity. Exactness: the
    keys ``w (q_i - s) + G_i`` are independent Gumbel variables with locations ``w (q_i - s)``;
    the argmax of such keys is ``i`` with probability ``exp(w q_i) / sum_j exp(w q_j)``, and the
    maximum over partitions of the per-partition maxima is the maximum over all candidates, so
    the partitioning does not change the law. The common shift ``s`` (top of ``clip_range``,
    else 0) cancels; without ``clip_range`` keep ``|w q|`` well below 1e15 so that the Gumbel
    noise is not lost to rounding.

    Input domain
    ------------
    Real scores, ``-inf`` allowed for infeasible candidates (the set of ``-inf`` candidates
    must not depend on the data). Numpy backend only (simulation; not hardened against
    floating-point attacks).

    Runtime
    -------
    O(m) total scoring work spread over the partitions; O(number of partitions) transfer.

    Examples
    --------
    >>> import functools
    >>> import numpy as np
    >>> scores = np.array([0.0, 1.0, 5.0, 2.0])
    >>> distributed_exponential_mechanism(functools.partial(np.take, scores),
    ...                                   contiguous_partitions(4, 2), epsilon=100.0,
    ...                                   sensitivity=1.0, rng=0)
    2
    """
    eps = _epsilon(epsilon, _CALLER)
    base, kind, c = _selection_sensitivity(sensitivity, monotonic, range_sensitivity, _CALLER)
    clip = _clip_range(clip_range, _CALLER)
    _check_budget(budget, _CALLER)
    if not callable(score_fn):
        raise ParameterTypeError(f"The 'score_fn' argument of {_CALLER} must be callable; got "
                                 f"{type(score_fn).__name__}.")
    parts = _check_partitions(partitions)
    gen = as_generator(rng)
    weight = _div_down(eps, c * base)
    shift = 0.0 if clip is None else clip[1]
    backend = NumpyBackend(gen)
    _charge(budget, _CALLER, lambda: PrivacyEvent(
        "exponential_mechanism", eps, 0.0, rho=eps * eps / 8.0,
        note=_note(backend, base, 1, weight=weight, kind=kind, monotonic=bool(monotonic),
                   partitions=len(parts))))
    children = gen.spawn(len(parts))
    tasks = [(score_fn, p, weight, shift, clip, child) for p, child in zip(parts, children)]
    winners = _map(executor, tasks)
    keys = np.array([k for k, _ in winners], dtype=float)
    if not np.isfinite(keys).any():
        raise InfeasibleConstraintError(
            f"Every score passed to {_CALLER} is -inf, so no candidate is feasible; make at "
            "least one candidate feasible."
        )
    return int(winners[int(np.argmax(keys))][1])
