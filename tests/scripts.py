"""The project's scripts outside the package (``benchmarks/``, ``.ci/``, ``docs/figures/``),
loaded by path for their tests."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def load_script(relative: str) -> ModuleType:
    """The script at ``ROOT / relative`` as a module named after its file, registered in
    ``sys.modules`` (dataclasses look their module up by name)."""
    path = ROOT / relative
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
