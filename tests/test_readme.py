"""The README's Python example runs as written and says what the README says it does."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_python_example_runs():
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert blocks, "the README has no Python example"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(blocks[0], "README.md", "exec"), {})
    lines = out.getvalue().splitlines()
    assert "differential privacy" in lines[1] and "epsilon=1" in lines[1]
    assert 0.0 < float(lines[2]) <= 1.0 + 1e-9


def test_readme_first_lines_give_the_two_commands():
    head = README.read_text().splitlines()[:15]
    text = "\n".join(head)
    assert "dpsubmod demo" in text and "pytest" in text
