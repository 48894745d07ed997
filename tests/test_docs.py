"""The user guide's Python examples run as written, and its links into the errata resolve.

Every ```python block of ``docs/quickstart.md``, ``docs/coming_from.md``, ``docs/privacy.md``,
``docs/estimators.md`` and each ``docs/algorithms/*.md`` page is executed, in page order, in
one namespace per page (a later block may reuse an earlier block's names, as a reader would).
The blocks of the quick start, of the page for users of other libraries and of the estimators
page also run each in a fresh namespace, since a newcomer copies one block at a time. A block
preceded by a ``<!-- skip-test -->`` line is skipped (for examples that need optional data).
"""

from __future__ import annotations

import contextlib
import io
import re
import warnings
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"
PAGES = [DOCS / "quickstart.md", DOCS / "coming_from.md", DOCS / "privacy.md",
         DOCS / "estimators.md", *sorted((DOCS / "algorithms").glob("*.md"))]
#: Pages whose every block runs on its own, as a reader copying one block would run it.
STANDALONE = [DOCS / "quickstart.md", DOCS / "coming_from.md", DOCS / "estimators.md"]
SKIP = "<!-- skip-test -->"
BLOCK = re.compile(r"^```python\n(.*?)^```", flags=re.S | re.M)


def python_blocks(text: str) -> list[tuple[int, str]]:
    """``(line number, code)`` of every ```python block not marked to skip."""
    out = []
    for m in BLOCK.finditer(text):
        before = text[:m.start()].rstrip("\n").splitlines()
        if before and before[-1].strip() == SKIP:
            continue
        out.append((text.count("\n", 0, m.start()) + 2, m.group(1)))
    return out


def test_block_extraction_honours_the_skip_marker():
    text = "a\n```python\nx = 1\n```\n<!-- skip-test -->\n```python\nraise SystemExit\n```\n"
    assert python_blocks(text) == [(3, "x = 1\n")]


def run_block(page: Path, line: int, code: str, namespace: dict) -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), warnings.catch_warnings():
        # Examples may trigger the library's documented warnings (a clipped default).
        warnings.simplefilter("ignore", UserWarning)
        exec(compile(code, f"{page.name}:{line}", "exec"), namespace)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(DOCS).as_posix())
def test_page_examples_run(page: Path):
    blocks = python_blocks(page.read_text())
    assert blocks, f"{page.name} has no runnable Python example"
    namespace: dict = {"__name__": "__docs__"}
    for line, code in blocks:
        run_block(page, line, code, namespace)


@pytest.mark.parametrize("page", STANDALONE, ids=lambda p: p.name)
def test_each_block_runs_on_its_own(page: Path):
    for line, code in python_blocks(page.read_text()):
        run_block(page, line, code, {"__name__": "__docs__"})


def _slug(heading: str) -> str:
    """GitHub's anchor for a Markdown heading."""
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def test_links_to_the_errata_resolve():
    errata = (DOCS / "errata.md").read_text()
    anchors = {_slug(h) for h in re.findall(r"^#+ (.*)$", errata, flags=re.M)}
    pages = [DOCS / "index.md", *PAGES]
    missing = []
    for page in pages:
        for anchor in re.findall(r"errata\.md#([\w\-]+)", page.read_text()):
            if anchor not in anchors:
                missing.append(f"{page.name}: #{anchor}")
    assert not missing, f"links to missing errata sections: {missing}"


def test_quickstart_opens_like_the_readme():
    text = (DOCS / "quickstart.md").read_text()
    head = text[:text.index("```python")]
    assert 'pip install ".[plot,data]"' in head and "dpsubmod demo" in head


def test_relative_links_resolve():
    pages = [DOCS / "index.md", *PAGES]
    missing = []
    for page in pages:
        for target in re.findall(r"\]\(([^)#:\s]+)(?:#[^)]*)?\)", page.read_text()):
            if not (page.parent / target).exists():
                missing.append(f"{page.name}: {target}")
    assert not missing, f"links to missing files: {missing}"
