"""The package's layout: faces that list what users call, and a test tree that mirrors the
sub-packages (the offline families, the online problems, the function families)."""

from __future__ import annotations

import ast
import importlib
import inspect
from collections import Counter
from pathlib import Path

import dpsubmod.online as online
from dpsubmod.online.protocol import OnlineBase

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "dpsubmod"
TESTS = ROOT / "tests"


def _all_lengths() -> dict[str, int]:
    """Length of every literal ``__all__`` in the package, by file; a computed one is evaluated
    by importing its module."""
    out = {}
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
                rel = path.relative_to(SRC.parent).with_suffix("")
                if isinstance(node.value, (ast.List, ast.Tuple)):
                    out[str(rel)] = len(node.value.elts)
                else:
                    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
                    module = __import__(".".join(parts), fromlist=["__all__"])
                    out[str(rel)] = len(module.__all__)
    return out


def _concrete_learners() -> set[str]:
    def subclasses(cls: type) -> set[type]:
        found = set()
        for sub in cls.__subclasses__():
            found |= {sub} | subclasses(sub)
        return found

    # the protocol module's own classes are the bases learners are built on; the experiments'
    # baselines (dpsubmod.experiments) are not learners of the library
    return {c.__name__ for c in subclasses(OnlineBase)
            if c.__module__.startswith("dpsubmod.online.")
            and c.__module__ != OnlineBase.__module__ and not inspect.isabstract(c)}


def test_the_online_face_lists_the_learners_and_little_else():
    assert len(online.__all__) <= 45
    assert len(set(online.__all__)) == len(online.__all__)
    # every learner the library ships is called from the face (imported through it, every
    # learner module is loaded here)
    assert _concrete_learners() <= set(online.__all__), \
        _concrete_learners() - set(online.__all__)


def test_the_package_lists_at_most_600_public_names():
    lengths = _all_lengths()
    assert "dpsubmod/__init__" in lengths and "dpsubmod/extensions/__init__" in lengths
    assert sum(lengths.values()) <= 600, sorted(lengths.items(), key=lambda kv: -kv[1])[:10]


def test_internal_modules_carry_no_all():
    listed = [f for f in _all_lengths() if any(p.startswith("_") and p != "__init__"
                                               for p in Path(f).parts)]
    assert listed == [], listed


def _sub_packages(package: str) -> set[str]:
    return {p.name for p in (SRC / package).iterdir() if (p / "__init__.py").is_file()}


def _test_folders(package: str) -> set[str]:
    return {p.name for p in (TESTS / package).iterdir()
            if p.is_dir() and p.name != "__pycache__"}


def _named_after(test: Path, name: str) -> bool:
    stem = test.stem.removeprefix("test_")
    return stem == name or stem.startswith(name + "_")


def test_the_offline_tests_mirror_the_offline_families():
    families = _sub_packages("offline")
    assert families == {"continuous", "discrete", "ksubmodular", "minimization"}
    assert _test_folders("offline") == families
    for family in families:
        assert list((TESTS / "offline" / family).glob("test_*.py")), family


def test_the_online_tests_mirror_the_online_sub_packages():
    problems = _sub_packages("online")
    assert problems == {"convex", "maximization", "minimization", "oco"}
    assert _test_folders("online") == problems
    for problem in problems:
        assert list((TESTS / "online" / problem).glob("test_*.py")), problem


def test_every_test_folder_is_a_sub_package_and_tests_named_after_one_sit_in_it():
    packages = [p.name for p in TESTS.iterdir() if (SRC / p.name / "__init__.py").is_file()]
    assert {"offline", "online", "functions"} <= set(packages)
    for package in packages:
        subs = _sub_packages(package)
        assert _test_folders(package) <= subs, (package, _test_folders(package) - subs)
        for test in (TESTS / package).rglob("test_*.py"):
            for sub in subs:
                if _named_after(test, sub):
                    assert test.parent == TESTS / package / sub, \
                        f"{test.relative_to(TESTS)}: move it to tests/{package}/{sub}/"


def _owner(module: str, name: str) -> str:
    """The module that defines ``name`` as imported from ``module`` (a face re-exports it)."""
    obj = getattr(importlib.import_module(module), name, None)
    if inspect.ismodule(obj):
        return obj.__name__
    if obj is None:  # a submodule not yet imported by its package
        return importlib.import_module(f"{module}.{name}").__name__
    return getattr(obj, "__module__", None) or module


def _online_references(test: Path) -> Counter:
    """How often a test file names the code of each part of ``dpsubmod.online`` (a sub-package
    or a top-level module): names imported from it and attributes of it imported as a module."""
    tree = ast.parse(test.read_text(encoding="utf-8"))
    names, modules = {}, {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                if full.startswith("dpsubmod.online") and _owner(node.module, alias.name) == full:
                    modules[alias.asname or alias.name] = full
                elif node.module.startswith("dpsubmod.online"):
                    names[alias.asname or alias.name] = _owner(node.module, alias.name)
        elif isinstance(node, ast.Import):
            modules.update({a.asname: a.name for a in node.names
                            if a.asname and a.name.startswith("dpsubmod.online")})
    owners = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.value.id in modules):
            owners.append(_owner(modules[node.value.id], node.attr))
        elif isinstance(node, ast.Name) and node.id in names:
            owners.append(names[node.id])
    return Counter(o.split(".")[2] for o in owners if o.startswith("dpsubmod.online."))


def _modules(folder: Path) -> set[str]:
    return {p.stem.lstrip("_") for p in folder.glob("*.py") if p.stem != "__init__"}


def test_each_online_test_sits_in_the_folder_of_what_it_tests():
    # By name: a test named after a top-level module of online/ (test_harness.py,
    # test_trace_frame.py) may sit at the top, one named after a sub-package or one of its
    # modules (test_hedge.py) in that sub-package's folder. By what it calls: a test in a folder
    # calls that sub-package more than any other; a test at the top is about the top-level
    # modules or about several sub-packages, so no single sub-package takes 3/4 of its calls
    # into them (when it makes 5 or more).
    problems = _sub_packages("online")
    top = _modules(SRC / "online")
    within = {p: _modules(SRC / "online" / p) | {p} for p in problems}
    placed = {}
    for test in sorted((TESTS / "online").rglob("test_*.py")):
        folder = test.parent.relative_to(TESTS / "online").as_posix().strip(".")
        by_name = {p for p, names in within.items() if any(_named_after(test, m) for m in names)}
        if any(_named_after(test, m) for m in top):
            by_name.add("")
        where = test.relative_to(TESTS)
        assert not by_name or folder in by_name, f"{where}: named after {sorted(by_name)}" \
            " (the empty name is the top of tests/online/); move it there"
        calls = Counter({p: n for p, n in _online_references(test).items() if p in problems})
        if folder:
            assert calls[folder] > max((n for p, n in calls.items() if p != folder), default=0), \
                f"{where} calls mostly another sub-package: {dict(calls)}"
        elif "" not in by_name and calls:
            problem, most = calls.most_common(1)[0]
            total = sum(calls.values())
            assert total < 5 or 4 * most < 3 * total, \
                f"{where} tests {problem} ({dict(calls)}); move it to tests/online/{problem}/"
        placed[test.name] = folder
    assert placed["test_hedge.py"] == "oco" and placed["test_protocol.py"] == "", placed
