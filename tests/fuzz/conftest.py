"""The fuzz suite: every test here carries the ``fuzz`` marker (``pytest -m fuzz`` runs only it,
``-m "not fuzz"`` skips it) and the session ends with the suite's counts.

Profiles (see docs/reliability.md): the default is the CI profile, a fixed set of examples
(derandomized, a few per test) that the ordinary ``pytest`` command runs; setting
``DPSUBMOD_FUZZ_EXAMPLES=N`` runs ``N`` fresh examples per test (``DPSUBMOD_FUZZ_SEED`` fixes
them), and ``DPSUBMOD_FUZZ_REPORT=path.json`` writes the counts and failures to a file.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

_HERE = Path(__file__).resolve().parent
for p in (str(_HERE), str(_HERE.parent)):
    if p not in sys.path:
        sys.path.insert(0, p)

import fuzz_harness  # noqa: E402
import known_failures  # noqa: E402,F401 - registers the known failures


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "fuzz: the fuzzed public API and command line (tests/fuzz; CI profile by "
        "default, DPSUBMOD_FUZZ_EXAMPLES=N for the on-demand profile)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if _HERE in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.fuzz)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    lines = fuzz_harness.summary_lines()
    if not lines:
        return
    terminalreporter.section("fuzz counts")
    for line in lines:
        terminalreporter.write_line(line)
    for failure in fuzz_harness.describe_failures():
        terminalreporter.write_line("  " + failure)
    path = os.environ.get("DPSUBMOD_FUZZ_REPORT")
    if path:
        Path(path).write_text(json.dumps({
            "counts": dict(fuzz_harness.COUNTS),
            "known": dict(fuzz_harness.KNOWN_COUNTS),
            "entries": dict(fuzz_harness.ENTRY_COUNTS),
            "failures": fuzz_harness.FAILURES,
        }, indent=1))
