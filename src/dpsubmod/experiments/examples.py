"""The example experiment files shipped with dpsubmod, by name.

A module apart from the parser of experiment files (:mod:`dpsubmod.experiments.config`): the
``dpsubmod run`` parser lists the names in its help, and building the parser of every command
then does not import the TOML reader and the experiment problems.
"""

from __future__ import annotations

from importlib import resources
from typing import Any

__all__ = ["example_names", "example_files"]


def example_files() -> dict[str, Any]:
    """The shipped example files by name (the file name without ``.toml``), as importlib
    resources; empty when the package was installed without them."""
    folder = resources.files("dpsubmod.experiments") / "examples"
    if not folder.is_dir():
        return {}
    return {f.name.removesuffix(".toml"): f for f in folder.iterdir() if f.name.endswith(".toml")}


def example_names() -> list[str]:
    """Names of the example experiments shipped with dpsubmod, which
    :func:`~dpsubmod.experiments.config.load_config` (and ``dpsubmod run NAME``) accepts in place
    of a path."""
    return sorted(example_files())
