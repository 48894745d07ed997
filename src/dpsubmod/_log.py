"""The library's logger: ``logging.getLogger("dpsubmod")``, silent unless the caller asks.

dpsubmod logs, as a library should, through :mod:`logging` only: a ``NullHandler`` on the
package logger keeps it silent by default, and an application turns it on with
``logging.basicConfig(level=logging.INFO)`` (or a handler on the ``"dpsubmod"`` logger). The
estimators' ``verbose=`` does that for one fit (:func:`verbose`).

Messages carry public parameters only (method names, epsilon, delta, the backend, the number
of mechanism uses): never a value computed from private data, which would leak around the
guarantee through a log file.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Iterator

#: The package logger; modules log through children (``dpsubmod.offline``, ...).
logger = logging.getLogger("dpsubmod")
if not any(isinstance(h, logging.NullHandler) for h in logger.handlers):
    logger.addHandler(logging.NullHandler())


def get_logger(name: str) -> logging.Logger:
    """The logger of a dpsubmod module (``dpsubmod.<part>``), a child of :data:`logger`."""
    return logging.getLogger(name if name.startswith("dpsubmod") else f"dpsubmod.{name}")


@contextlib.contextmanager
def verbose(level: int) -> Iterator[None]:
    """For the body only: with ``level > 0``, show dpsubmod's INFO messages (DEBUG too for
    ``level > 1``) on standard error, as scikit-learn's ``verbose`` prints progress. Nothing
    changes for ``level <= 0``; the logger's level and handlers are restored on exit."""
    if not level or level <= 0:
        yield
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("[dpsubmod] %(message)s"))
    old = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG if level > 1 else logging.INFO)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(old)
