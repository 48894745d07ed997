"""Every docstring example of the package runs and prints what it says (numpy's and scipy's
habit): the examples are rendered on the API pages, so a wrong one is a wrong claim.

Each module of ``dpsubmod`` is imported and its examples are run with ``doctest`` (ellipsis and
whitespace normalisation on, as in the documentation pages' checks). A module whose import
needs an optional extra that is not installed is skipped, naming the extra's module.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import dpsubmod

MODULES = sorted(m.name for m in pkgutil.walk_packages(dpsubmod.__path__, "dpsubmod.")
                 if not m.name.endswith("__main__"))
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


@pytest.mark.parametrize("name", MODULES)
def test_examples_print_what_they_say(name):
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:  # an optional extra
        if exc.name and not exc.name.startswith("dpsubmod"):
            pytest.skip(f"{name} needs {exc.name}")
        raise
    finder = doctest.DocTestFinder(exclude_empty=True)
    failed = []
    for t in finder.find(module, name, module=module):
        runner = doctest.DocTestRunner(optionflags=FLAGS)
        runner.run(t, out=lambda _: None)
        if runner.summarize(verbose=False).failed:
            failed.append(t.name)
    assert failed == []


def test_a_wrong_example_is_caught():
    # control: the same machinery fails an example whose printed value is wrong
    def wrong():
        """
        >>> 1 + 1
        3
        """
    t = doctest.DocTestFinder().find(wrong, "wrong", globs={})[0]
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    runner.run(t, out=lambda _: None)
    assert runner.summarize(verbose=False).failed == 1
