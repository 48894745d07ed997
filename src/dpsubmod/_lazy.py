"""Names of a package that load from their submodules on first use (PEP 562).

A package ``__init__`` lists where each public name is defined; ``import dpsubmod.x`` then
loads no submodule, and ``dpsubmod.x.Name`` (or ``from dpsubmod.x import Name``) imports the
one module that defines it. ``dir()`` and ``__all__`` still list every name.
"""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(package: str, where: Mapping[str, Iterable[str]], *,
                 modules: Iterable[str] = ()
                 ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module ``__getattr__`` and ``__dir__`` of a package with lazily loaded names.

    Parameters
    ----------
    package : str
        The package's ``__name__`` (it must already be in ``sys.modules``).
    where : mapping of str to iterable of str
        Submodule (relative to ``package``) -> the names it defines that the package exports.
    modules : iterable of str
        Submodules the package exports as themselves (``dpsubmod.functions``).

    Returns
    -------
    (__getattr__, __dir__)

    Notes
    -----
    A loaded name is stored in the package, so the next look-up does not come back. Where a
    name is a function defined in a submodule of the same name (``offline.minimize``),
    importing that submodule would bind the package attribute to the module; the package then
    refuses that binding, so the name always means the function.
    """
    pkg = sys.modules[package]
    origin = {name: sub for sub, names in where.items() for name in names}
    submodules = frozenset(modules)
    shadowed = frozenset(n for n, sub in origin.items() if sub.rpartition(".")[2] == n)
    if shadowed:
        pkg.__class__ = _shadowing_module(shadowed)

    def __getattr__(name: str) -> Any:
        if name in submodules:
            return importlib.import_module(f"{package}.{name}")
        sub = origin.get(name)
        if sub is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{sub}"), name)
        pkg.__dict__[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(pkg.__dict__) | set(origin) | submodules)

    return __getattr__, __dir__


def _shadowing_module(shadowed: frozenset[str]) -> type[types.ModuleType]:
    class _Package(types.ModuleType):
        def __setattr__(self, name: str, value: Any) -> None:
            if name in shadowed and isinstance(value, types.ModuleType):
                return  # the import system binding the submodule; the name is the function
            super().__setattr__(name, value)

    return _Package
