"""The package's layout: faces that list what users call, and a test tree that mirrors the
offline families."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import dpsubmod.online as online
from dpsubmod.online.protocol import OnlineBase

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "dpsubmod"


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


def test_the_offline_tests_mirror_the_offline_families():
    families = {p.name for p in (SRC / "offline").iterdir() if (p / "__init__.py").is_file()}
    assert families == {"continuous", "discrete", "ksubmodular", "minimization"}
    test_dirs = {p.name for p in (ROOT / "tests" / "offline").iterdir()
                 if p.is_dir() and p.name != "__pycache__"}
    assert test_dirs == families
    for family in families:
        assert list((ROOT / "tests" / "offline" / family).glob("test_*.py")), family
