"""Names and modules that load on first use.

A package ``__init__`` lists where each public name is defined (PEP 562); ``import dpsubmod.x``
then loads no submodule, and ``dpsubmod.x.Name`` (or ``from dpsubmod.x import Name``) imports
the one module that defines it. ``dir()`` and ``__all__`` still list every name.

Code that needs scipy lives in modules that import it at their top, and the select path
does not load them (sparse inputs are converted by the module that made them, see
:func:`dpsubmod._validation.sparse_module`). Where one function serves the select path and a
rarer path that needs scipy (the knapsack bound, the k-d tree of a large candidate set, the
approximate-DP calibrations), the module binds scipy's module with :func:`lazy_module` at its
top (where its imports are read): ``dpsubmod select`` with pure differential privacy calls
none of scipy's optimisers or special functions, whose imports would double the CPU time of
its own. Each such binding is listed, with its reason, by the import tests.
"""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Callable, Iterable, Mapping
from typing import Any


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

    Raises
    ------
    ValueError
        If an exported name is also the name of a direct submodule: importing that submodule
        would rebind the package attribute, so one address would name two objects.

    Notes
    -----
    A loaded name is stored in the package, so the next look-up does not come back.
    """
    pkg = sys.modules[package]
    origin = {name: sub for sub, names in where.items() for name in names}
    submodules = frozenset(modules)
    clash = sorted(n for n, sub in origin.items() if sub.partition(".")[0] == n)
    if clash:
        raise ValueError(f"{package} exports {clash}, each also the name of its submodule; "
                         "rename the submodule")

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


def lazy_module(name: str) -> types.ModuleType:
    """A stand-in for the module ``name`` that imports it on the first use of an attribute.

    Parameters
    ----------
    name : str
        The module's full name (``"scipy.optimize"``).

    Returns
    -------
    module
        ``stand_in.attr`` is ``importlib.import_module(name).attr``; nothing is imported, and
        ``sys.modules`` is untouched, until then.

    Notes
    -----
    Every attribute is looked up in the real module each time (nothing is cached), so the
    stand-in always agrees with it. The import machinery returns an imported module from
    ``sys.modules`` in about a microsecond.
    """
    return _LazyModule(name)


class _LazyModule(types.ModuleType):
    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):  # copy, pickle and doctest probe dunders: not the module's
            raise AttributeError(attr)
        return getattr(importlib.import_module(self.__name__), attr)

    def __repr__(self) -> str:
        return f"<module {self.__name__!r}, imported on first use>"
