"""Every Python example of the README and the user guide runs on its own and prints what it says.

Every ```python block of ``README.md`` and of ``docs/**/*.md`` runs in a fresh namespace (in a
temporary working directory), as a reader copying one block would run it. A block that
genuinely cannot run on its own is preceded by a ``<!-- no-run: REASON -->`` line (the reason is
required); there are few. A ```text block that follows a Python block with nothing but blank
lines between is that block's output, and the block must print exactly it; ``...`` in it
stands for any text (for what varies from run to run, such as a secure release's selection).
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import warnings
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
README = ROOT / "README.md"
#: Every page with examples: the README and every page of the user guide.
PAGES = [README, *sorted(DOCS.rglob("*.md"))]
#: The few blocks that may not run, each with its reason.
MAX_NO_RUN = 3
NO_RUN = re.compile(r"^<!-- no-run: (?P<reason>\S.*?) -->$")
FENCE = re.compile(r"^```(?P<lang>[\w-]*)[^\n]*\n(?P<body>.*?)^```[ \t]*$", flags=re.S | re.M)


@dataclass(frozen=True)
class Block:
    """One ```python block: where it is, its code, its quoted output, why it may not run."""

    page: Path
    line: int
    code: str
    output: str | None = None
    no_run: str | None = None

    @property
    def id(self) -> str:
        return f"{self.page.relative_to(ROOT).as_posix()}:{self.line}"


def python_blocks(text: str, page: Path = README) -> list[Block]:
    """Every ```python block of ``text``, with the ```text block that follows it, if any."""
    fences = list(FENCE.finditer(text))
    out = []
    for i, m in enumerate(fences):
        if m.group("lang") != "python":
            continue
        before = text[:m.start()].rstrip("\n").splitlines()
        marker = NO_RUN.match(before[-1].strip()) if before else None
        output = None
        if i + 1 < len(fences):
            nxt = fences[i + 1]
            if nxt.group("lang") == "text" and not text[m.end():nxt.start()].strip():
                output = nxt.group("body")
        out.append(Block(page, text.count("\n", 0, m.start()) + 2, m.group("body"), output,
                         marker.group("reason") if marker else None))
    return out


def all_blocks() -> list[Block]:
    return [b for page in PAGES for b in python_blocks(page.read_text(), page)]


def output_matches(expected: str, printed: str) -> bool:
    """``printed`` is ``expected``, each ``...`` of it standing for any text."""
    norm = lambda s: "\n".join(line.rstrip() for line in s.strip("\n").splitlines())  # noqa: E731
    pattern = ".*?".join(re.escape(part) for part in norm(expected).split("..."))
    return re.fullmatch(pattern, norm(printed), flags=re.S) is not None


def run_block(block: Block) -> str:
    """Run one block in a fresh namespace; return what it printed."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), warnings.catch_warnings():
        # Examples may trigger the library's documented warnings (a clipped default).
        warnings.simplefilter("ignore", UserWarning)
        exec(compile(block.code, block.id, "exec"), {"__name__": "__docs__"})
    return out.getvalue()


def test_block_extraction_reads_markers_and_outputs():
    text = ("a\n```python\nx = 1\n```\n<!-- no-run: needs a cluster -->\n```python\n"
            "raise SystemExit\n```\n```python\nprint(2)\n```\n\n```text\n2\n```\n"
            "```bash\nls\n```\n")
    blocks = python_blocks(text)
    assert [(b.line, b.code, b.output, b.no_run) for b in blocks] == [
        (3, "x = 1\n", None, None), (7, "raise SystemExit\n", None, "needs a cluster"),
        (10, "print(2)\n", "2\n", None)]


def test_output_matching_is_exact_but_for_ellipses():
    assert output_matches("[3, 1]\nspent 1 ...\n", "[3, 1]\nspent 1 of 2\n")
    assert output_matches("a\n...\nz", "a\nb\nc\nz\n")
    assert not output_matches("[3, 1]\n", "[3, 2]\n")
    assert not output_matches("exponential_mechanism (epsilon=0.2)", "exponential (epsilon=0.2)")
    assert not output_matches("a\n", "a\nb\n")


BLOCKS = all_blocks()


@pytest.mark.parametrize("block", [b for b in BLOCKS if b.no_run is None], ids=lambda b: b.id)
def test_each_block_runs_on_its_own_and_prints_what_its_page_says(block: Block, tmp_path):
    cwd = os.getcwd()
    os.chdir(tmp_path)  # a block may write files (a budget, a figure)
    try:
        printed = run_block(block)
    finally:
        os.chdir(cwd)
    if block.output is not None:
        assert output_matches(block.output, printed), (
            f"{block.id} prints\n{printed}\nbut its page quotes\n{block.output}")


def test_blocks_that_do_not_run_are_few_and_say_why():
    skipped = [b.id for b in BLOCKS if b.no_run is not None]
    assert len(skipped) <= MAX_NO_RUN, skipped
    assert any(b.page == README for b in BLOCKS) and len(BLOCKS) > 20


def _slug(heading: str) -> str:
    """GitHub's anchor for a Markdown heading."""
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def test_links_to_the_errata_resolve():
    errata = (DOCS / "errata.md").read_text()
    anchors = {_slug(h) for h in re.findall(r"^#+ (.*)$", errata, flags=re.M)}
    missing = []
    for page in PAGES:
        for anchor in re.findall(r"errata\.md#([\w\-]+)", page.read_text()):
            if anchor not in anchors:
                missing.append(f"{page.name}: #{anchor}")
    assert not missing, f"links to missing errata sections: {missing}"


def test_quickstart_opens_like_the_readme():
    text = (DOCS / "quickstart.md").read_text()
    head = text[:text.index("```python")]
    assert 'pip install ".[plot,data]"' in head and "dpsubmod demo" in head


def test_relative_links_resolve():
    missing = []
    for page in PAGES:
        for target in re.findall(r"\]\(([^)#:\s]+)(?:#[^)]*)?\)", page.read_text()):
            if not (page.parent / target).exists():
                missing.append(f"{page.name}: {target}")
    assert not missing, f"links to missing files: {missing}"
