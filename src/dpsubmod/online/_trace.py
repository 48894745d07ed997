"""What the set harness (:func:`dpsubmod.online.run`) and the convex harness
(:func:`dpsubmod.online.run_convex`) share: the trace's common fields and summary, the per-round
columns that grow as a stream of unknown length is played, the progress bar, and the choice of
the object that plays (a clone, or a budgeted learner itself).
"""

from __future__ import annotations

import copy
import math
import sys
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from .._rng import RNGLike, as_generator
from ..errors import MissingDependencyError, ValidationError

#: ``progress=None`` shows progress for runs at least this long when stderr is a terminal.
AUTO_PROGRESS_T = 5000


@dataclass(frozen=True, eq=False, repr=False, kw_only=True)
class TraceSummary(ABC):
    """What the trace of a set learner and of a convex learner share: the per-round arrays,
    the final regrets, the per-round table and the one-line summary (fields are documented on
    :class:`~dpsubmod.online.Trace`). ``_plays`` gives the column name and per-round values of
    what was played."""

    learner: str
    name: str
    n: int
    T: int
    values: np.ndarray
    expected_values: np.ndarray | None
    comparator: Any
    comparator_values: np.ndarray | None
    alpha: float
    regret: np.ndarray | None
    expected_regret: np.ndarray | None
    epsilon: np.ndarray
    privacy: Any
    evaluations: int
    elapsed: np.ndarray
    wall_time: float
    comparator_time: float
    params: dict[str, Any] = field(default_factory=dict)
    guarantee: Any = None

    @property
    def final_regret(self) -> float:
        """:math:`R_T` (NaN without a comparator)."""
        return math.nan if self.regret is None else float(self.regret[-1])

    @property
    def final_expected_regret(self) -> float:
        """:math:`R_T` from the expected values (NaN when unavailable)."""
        return math.nan if self.expected_regret is None else float(self.expected_regret[-1])

    @abstractmethod
    def _plays(self) -> tuple[str, list[Any]]:
        """The column name and the per-round values of what was played."""

    def records(self) -> list[dict[str, Any]]:
        """One flat dict per round (``pandas.DataFrame(trace.records())`` makes a table).

        Keys: ``round`` (1-based), ``learner``, what was played (``selection`` for a set learner,
        ``point`` as a tuple for a convex one), ``value``, ``expected_value``,
        ``comparator_value``, ``regret``, ``expected_regret``, ``epsilon``, ``elapsed``.
        """
        nan = math.nan
        key, plays = self._plays()

        def at(a: np.ndarray | None, t: int) -> float:
            return nan if a is None else float(a[t])

        return [{
            "round": t + 1,
            "learner": self.name,
            key: plays[t],
            "value": float(self.values[t]),
            "expected_value": at(self.expected_values, t),
            "comparator_value": at(self.comparator_values, t),
            "regret": at(self.regret, t),
            "expected_regret": at(self.expected_regret, t),
            "epsilon": float(self.epsilon[t]),
            "elapsed": float(self.elapsed[t]),
        } for t in range(self.T)]

    #: The per-round arrays :meth:`to_frame` makes columns of, in column order.
    _FRAME_ARRAYS = ("values", "expected_values", "comparator_values", "regret",
                     "expected_regret", "epsilon", "elapsed")

    def to_frame(self) -> Any:
        """The trace as a pandas DataFrame: one row per round, a column per per-round array.

        The index is ``round`` (1 to ``T``). The columns are named as the trace's arrays: what
        was played (``selections``, sorted tuples of ints, for a set learner; ``points``,
        tuples of floats, for a convex one), then ``values``, ``expected_values``,
        ``comparator_values``, ``regret``, ``expected_regret``, ``epsilon`` and ``elapsed``; an
        array the run did not record (``expected_values`` with ``expected=False``, the
        comparator's with ``comparator=None``) is a column of NaN. ``DataFrame.attrs`` holds
        the run's ``learner``, ``name``, ``n``, ``T``, ``alpha``, ``params``, ``guarantee``,
        ``privacy``, ``evaluations``, ``wall_time`` and ``comparator_time``. Everything but what
        was played and ``privacy`` is non-private (computed from the stream without noise).

        Returns
        -------
        pandas.DataFrame

        Raises
        ------
        MissingDependencyError
            pandas is not installed (an ImportError); ``pip install 'dpsubmod[pandas]'``.
        """
        try:
            import pandas as pd
        except ImportError:
            raise MissingDependencyError(
                f"{type(self).__name__}.to_frame needs pandas, which is not installed: pip "
                "install 'dpsubmod[pandas]' (or use records(), plain dicts, without pandas)."
            ) from None
        played, plays = self._plays()
        # records() names one round's play ("selection", "point"); the trace's array is plural
        data: dict[str, Any] = {played + "s": plays}
        for name in self._FRAME_ARRAYS:
            col = getattr(self, name)
            data[name] = np.full(self.T, np.nan) if col is None else np.asarray(col, dtype=float)
        frame = pd.DataFrame(data, index=pd.RangeIndex(1, self.T + 1, name="round"))
        frame.attrs.update(
            learner=self.learner, name=self.name, n=self.n, T=self.T, alpha=self.alpha,
            params=dict(self.params), guarantee=self.guarantee, privacy=self.privacy,
            evaluations=self.evaluations, wall_time=self.wall_time,
            comparator_time=self.comparator_time)
        return frame

    def __repr__(self) -> str:
        eps = self.epsilon[-1] if self.T else math.nan
        return (f"{type(self).__name__}({self.name}, T={self.T}, n={self.n}, "
                f"regret={self.final_regret:.6g}, expected_regret="
                f"{self.final_expected_regret:.6g}, epsilon={eps:.4g}, "
                f"wall_time={self.wall_time:.3g}s)")


class Columns:
    """Per-round columns of a run whose length may be unknown in advance: preallocated for the
    declared length, doubled when a longer stream needs room, trimmed at the end. A few numbers
    per round is all a run keeps (no function, no tuple)."""

    def __init__(self, capacity: int, specs: dict[str, tuple[tuple[int, ...], Any]]):
        self._cap = max(1, int(capacity))
        self._specs = specs
        self._cols = {name: np.empty((self._cap, *shape), dtype=dt)
                      for name, (shape, dt) in specs.items()}
        self.size = 0

    def row(self) -> int:
        """Index of a new row (grows the columns when full)."""
        if self.size == self._cap:
            self._cap *= 2
            for name, col in self._cols.items():
                grown = np.empty((self._cap, *col.shape[1:]), dtype=col.dtype)
                grown[:self.size] = col[:self.size]
                self._cols[name] = grown
        self.size += 1
        return self.size - 1

    def __getitem__(self, name: str) -> np.ndarray:
        return self._cols[name]

    def final(self, name: str) -> np.ndarray:
        """The column trimmed to the rows written (the buffer itself when it is full, else a
        copy, so the rest of the buffer can be freed)."""
        col = self._cols[name]
        return col if self.size == col.shape[0] else col[:self.size].copy()


class Progress:
    """A tqdm progress bar on stderr (the total is unknown for a one-shot stream)."""

    def __init__(self, total: int | None, desc: str):
        self.total = total
        # disable=None: silent when stderr is not a terminal (a log file, a pipe, CI)
        self._bar = tqdm(total=total, desc=desc, leave=False, mininterval=0.5, file=sys.stderr,
                         disable=None)

    def update(self, t: int) -> None:
        self._bar.update(1)

    def close(self) -> None:
        self._bar.close()


def prepare_player(learner: Any, stream: Any, rng: RNGLike, caller: str
                   ) -> tuple[Any, Iterator[Any], Callable[[], Iterator[Any]] | None]:
    """The object to play (a clone, or the learner itself when it holds a budget, since a
    clone would be a second, charged release), reset; the stream's iterator; and, for a
    re-iterable stream, a callable giving a second pass over the same items (the stream's
    randomness is resolved once and copied, so both passes see the same items)."""
    budgeted = getattr(learner, "budget", None) is not None
    if budgeted and rng is not None:
        raise ValidationError(
            f"{caller}(..., rng=...) replaces the learner's randomness by cloning it, but "
            f"{type(learner).__name__} was built with a budget and a clone would be a second "
            "release, charged again. Build the learner with the rng you want (its rng= "
            f"parameter) and call {caller} without rng."
        )
    if rng is not None:
        l_rng, s_rng = as_generator(rng).spawn(2)
        player = learner.clone(rng=l_rng)
    else:
        s_rng = None
        player = learner if budgeted else learner.clone()
    replay = None
    if getattr(stream, "reiterable", True):
        gen = as_generator(stream.rng if s_rng is None else s_rng)
        again = copy.deepcopy(gen)
        items = stream.iterate(rng=gen)

        def replay() -> Iterator[Any]:
            return stream.iterate(rng=copy.deepcopy(again))
    else:
        items = stream.iterate()
    # a budgeted learner that already played starts a new run here, charged before it plays
    player.reset()
    return player, items, replay
