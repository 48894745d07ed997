"""The ``dpsubmod`` command.

Each subcommand lives in its own module with a ``register(subparsers)`` function; this module
builds the parser and turns library errors into a one-line message and exit status 2.

Exit statuses: 0 the command did what was asked; 2 a one-line error and nothing done (bad
arguments, unreadable files, an output path that cannot be written, a budget that does not
fit, a results file another run is writing); 1 only from ``dpsubmod audit`` (a privacy
violation found) and from ``dpsubmod select --check-data`` (an invalid value found); 130 after
SIGINT and 143 after SIGTERM (one line on stderr, worker processes stopped); 141 when the
reader of its output goes away (``dpsubmod audit --list | head -1``).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from .._version import __version__
from ..errors import DPSubmodError
from ._signals import Interrupted, interrupts, stop_children

__all__ = ["main", "build_parser"]

_SUBCOMMANDS = ("demo", "select", "budget", "run", "audit")


class _Parser(argparse.ArgumentParser):
    """argparse with a usage error on one line of stderr (exit status 2), like every other
    refusal of the command."""

    def error(self, message: str):  # type: ignore[override]
        where = self.prog.partition(" ")[2]
        where = f"{where}: " if where else ""
        sys.stderr.write(f"dpsubmod: error: {where}{message} (see '{self.prog} --help')\n")
        sys.exit(2)


def build_parser() -> argparse.ArgumentParser:
    """The ``dpsubmod`` argument parser with every available subcommand."""
    # Subcommand modules import their heavy dependencies inside their handlers, so building
    # the parser stays fast.
    parser = _Parser(
        prog="dpsubmod", description="Differentially private submodular optimization.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                parser_class=_Parser)
    for name in _SUBCOMMANDS:
        importlib.import_module(f"{__name__}.{name}").register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``dpsubmod`` command; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    with interrupts():
        try:
            status = int(args.func(args))
            sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's exit
            return status
        except BrokenPipeError:
            # the reader of the output went away (``dpsubmod ... | head``): stop quietly, as
            # shell tools do, with the status of a process ended by SIGPIPE
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 128 + 13
        except Interrupted as exc:
            stop_children()
            print(exc.message(), file=sys.stderr)
            return exc.exit_status
        except DPSubmodError as exc:
            _error(str(exc))
            return 2
        except OSError as exc:
            # the file system failed under a command whose paths were checked (a disk that
            # filled, a folder removed meanwhile): one line, not a traceback
            where = f" {exc.filename}" if exc.filename else ""
            _error(f"cannot access{where}: {exc.strerror or exc}.")
            return 2


def _error(message: str) -> None:
    message = " ".join(message.split())
    print(f"dpsubmod: error: {message}", file=sys.stderr)
