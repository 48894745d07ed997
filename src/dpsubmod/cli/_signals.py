"""Interrupts of a command: SIGINT and SIGTERM stop it cleanly, with its workers.

While a command runs, both signals raise :class:`Interrupted` (a ``KeyboardInterrupt``) in the
main thread, so every ``finally`` on the way out runs: a sweep closes its results table with the
finished cells in it, and joblib aborts its pool. Whatever worker processes are still alive
afterwards are then terminated, so none outlives the command. A second signal during that
cleanup ends the process at once. The exit status follows the shell's convention, 128 plus the
signal number: 130 for SIGINT, 143 for SIGTERM.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupted(KeyboardInterrupt):
    """A command stopped by SIGINT or SIGTERM.

    Attributes
    ----------
    signum : int
    hint : str
        What the user can do next (set by the subcommand, e.g. how to resume), or ``""``.
    """

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum
        self.hint = ""

    @property
    def exit_status(self) -> int:
        """128 + the signal number, as a shell reports a process ended by that signal."""
        return 128 + self.signum

    def message(self) -> str:
        """The one line printed on stderr."""
        text = f"dpsubmod: interrupted by {signal.Signals(self.signum).name}"
        return f"{text}; {self.hint}" if self.hint else text


def _quiet() -> None:
    # A pool being torn down reports the tasks it dropped (a UserWarning from joblib, callback
    # errors logged by loky); after an interrupt they are expected and only bury the one line
    # that matters.
    warnings.simplefilter("ignore")
    logging.getLogger("concurrent.futures").disabled = True


def stop_children(timeout: float = 5.0) -> None:
    """Terminate this process's worker processes (joblib's loky pool, multiprocessing pools)
    and wait for them, killing any that ignore SIGTERM within ``timeout`` seconds."""
    # Worker processes are started through multiprocessing (joblib's loky included), so a
    # process that never imported it has none, and a command that runs in-process does not
    # pay for importing it at start-up.
    mp = sys.modules.get("multiprocessing")
    if mp is None:
        return
    children = mp.active_children()
    for p in children:
        p.terminate()
    for p in children:
        p.join(timeout / max(1, len(children)))
        if p.is_alive():
            p.kill()
            p.join(1.0)


@contextmanager
def interrupts() -> Iterator[None]:
    """Within the block, SIGINT and SIGTERM raise :class:`Interrupted` in the main thread.

    Outside the main thread (a command called from a worker thread) signals cannot be handled
    and the block runs unchanged. The previous handlers are restored on exit.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    first: list[int] = []

    def handler(signum: int, frame: object) -> None:
        if first:
            # a second signal while the first is being cleaned up: stop now
            stop_children(timeout=1.0)
            os.write(2, f"dpsubmod: interrupted by {signal.Signals(signum).name} again; "
                        "stopped at once\n".encode())
            os._exit(128 + first[0])
        first.append(signum)
        _quiet()
        raise Interrupted(signum)

    previous = {s: signal.signal(s, handler) for s in _SIGNALS}
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)
