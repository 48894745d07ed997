"""Make the shared brute-force references (tests/oracles.py) importable as ``oracles``."""

import sys
from pathlib import Path

_TESTS = str(Path(__file__).resolve().parents[1])
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)
