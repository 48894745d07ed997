"""Progress of one long call, as a tqdm bar that the lower layers advance without knowing of it.

:func:`progress_bar` opens the bar for the current context (a :class:`contextvars.ContextVar`, so
threads and concurrent calls do not see each other's bar). Two cheap hooks advance it:

* :func:`planned` and :func:`used`, called by a private run's allowance
  (:class:`dpsubmod.privacy.plan.Allowance`): one step per planned mechanism use, so every private
  method reports its greedy steps, rounds or iterations as the noise is drawn;
* :func:`selected`, called when a set function's incremental state grows: the size of the largest
  set built so far, for the non-private greedies (ignored once a private run has planned its uses).

Outside :func:`progress_bar` the hooks do nothing. The bar only reads these counters: it never
draws randomness and never changes a result.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import numpy as np

from .errors import ParameterTypeError


class _Steps:
    """The bar of one call and which counter drives it."""

    def __init__(self, bar: Any):
        self.bar = bar
        self.from_plan = False

    def planned(self, uses: int) -> None:
        if not self.from_plan:
            self.from_plan = True
            self.bar.reset(total=uses)
        else:  # a second allowance in the same call (a method built on another)
            self.bar.total = (self.bar.total or 0) + uses
            self.bar.refresh()

    def used(self, uses: int) -> None:
        if self.from_plan:
            self.bar.update(uses)

    def selected(self, size: int) -> None:
        if self.from_plan or size <= self.bar.n:
            return
        if self.bar.total is not None:
            size = min(size, int(self.bar.total))
        self.bar.update(size - self.bar.n)


_CURRENT: ContextVar[_Steps | None] = ContextVar("dpsubmod_progress", default=None)


def planned(uses: int) -> None:
    """A private run planned ``uses`` mechanism uses (no-op without a bar)."""
    steps = _CURRENT.get()
    if steps is not None:
        steps.planned(int(uses))


def used(uses: int) -> None:
    """A private run made ``uses`` of its planned mechanism uses (no-op without a bar)."""
    steps = _CURRENT.get()
    if steps is not None:
        steps.used(int(uses))


def selected(size: int) -> None:
    """An incremental state now holds ``size`` elements (no-op without a bar)."""
    steps = _CURRENT.get()
    if steps is not None:
        steps.selected(size)


def check_progress(progress: object, caller: str, *, allow_none: bool = False) -> bool | None:
    """``progress`` as a bool (or None where ``allow_none``, meaning the caller's default);
    anything else is refused by name."""
    if progress is None and allow_none:
        return None
    if isinstance(progress, bool | np.bool_):
        return bool(progress)
    accepted = "True, False or None" if allow_none else "True or False"
    raise ParameterTypeError(
        f"The 'progress' parameter of {caller} must be {accepted}; got {progress!r}. Pass "
        "progress=True for a bar on stderr (shown only when stderr is a terminal)."
    )


@contextmanager
def progress_bar(progress: bool, *, total: int | None, desc: str, unit: str = "step"
                 ) -> Iterator[None]:
    """A tqdm bar on stderr for the calls made inside the block, when ``progress`` is True.

    tqdm decides from ``disable=None``: the bar is silent when stderr is not a terminal.
    """
    if not progress:
        yield
        return
    # tqdm costs about 50 ms to import, as much as the rest of a release's import path: only a
    # call that asks for a bar pays for it.
    from tqdm import tqdm

    bar = tqdm(total=total, desc=desc, unit=unit, disable=None, file=sys.stderr, leave=False)
    token = _CURRENT.set(_Steps(bar))
    try:
        yield
    finally:
        _CURRENT.reset(token)
        bar.close()
