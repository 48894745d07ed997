"""The ``dpsubmod`` command.

Each subcommand lives in its own module with a ``register(subparsers)`` function; this module
builds the parser and turns library errors into a one-line message and exit status 2.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from .._version import __version__
from ..errors import DPSubmodError

__all__ = ["main", "build_parser"]

_SUBCOMMANDS = ("demo", "select", "budget", "run", "audit")


def build_parser() -> argparse.ArgumentParser:
    """The ``dpsubmod`` argument parser with every available subcommand."""
    # Subcommand modules import their heavy dependencies inside their handlers, so building
    # the parser stays fast.
    import importlib

    parser = argparse.ArgumentParser(
        prog="dpsubmod", description="Differentially private submodular optimization.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in _SUBCOMMANDS:
        importlib.import_module(f"{__name__}.{name}").register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``dpsubmod`` command; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except DPSubmodError as exc:
        message = " ".join(str(exc).split())
        print(f"dpsubmod: error: {message}", file=sys.stderr)
        return 2
