"""Fail if the built documentation site shows raw docstring markup.

Usage: ``python .ci/check_site.py SITE_DIR``. Every ``*.html`` page under ``SITE_DIR`` is read,
and its visible text outside code (``<code>``, ``<pre>``), scripts, styles and math elements
(``class="arithmatex"``, rendered by the bundled KaTeX) must hold no Sphinx role
(``:func:`x```, ``:class:``, ``:math:``...), no reStructuredText directive (``.. math::``), and
no raw LaTeX (``\\epsilon``, ``\\frac{``, ``x_{i}``, ``$...$``, ``\\(``). A math element must
also be well formed: its text is delimited as arithmatex's generic mode writes it
(``\\(...\\)`` inline, ``\\[...\\]`` display) so the renderer finds it. Exit status 1 lists
each finding with its page and an excerpt.
"""

from __future__ import annotations

import re
import sys
from html.parser import HTMLParser
from pathlib import Path

#: Markers that must not appear in visible text outside code and math.
RAW = {
    "Sphinx role": re.compile(r":(?:py:)?(?:func|class|meth|mod|attr|data|obj|exc|const|math|"
                              r"ref|term|doc|cite):`"),
    "reST directive": re.compile(r"\.\.\s+(?:math|note|warning|seealso|versionadded|"
                                 r"versionchanged|deprecated|code-block|rubric)::"),
    "LaTeX command": re.compile(r"\\(?:[A-Za-z]{2,}|[{}()\[\]|,;!])"),
    "LaTeX sub/superscript": re.compile(r"[_^]\{"),
    "dollar math": re.compile(r"\$[^$\s][^$]*\\[A-Za-z]+[^$]*\$"),
}
SKIP_TAGS = {"code", "pre", "script", "style", "kbd", "samp", "textarea"}
VOID = {"br", "hr", "img", "input", "meta", "link", "source", "wbr", "col", "area", "base",
        "embed", "param", "track"}


class _Visible(HTMLParser):
    """Collect visible text outside code and math, and the text of each math element."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, bool, bool]] = []  # (tag, skipped, math)
        self.text: list[str] = []
        self.math: list[str] = []
        self._math_buf: list[str] | None = None

    def _inside(self) -> tuple[bool, bool]:
        skipped = any(s for _, s, _ in self.stack)
        math = any(m for _, _, m in self.stack)
        return skipped, math

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in VOID:
            return
        classes = (dict(attrs).get("class") or "").split()
        is_math = "arithmatex" in classes or tag == "math" or "katex" in classes
        _, in_math = self._inside()
        if is_math and not in_math:
            self._math_buf = []
        self.stack.append((tag, tag in SKIP_TAGS, is_math))

    def handle_endtag(self, tag: str) -> None:
        # Pop to the matching tag; tolerate unclosed inner tags as browsers do.
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                del self.stack[i:]
                break
        _, in_math = self._inside()
        if not in_math and self._math_buf is not None:
            self.math.append("".join(self._math_buf))
            self._math_buf = None

    def handle_data(self, data: str) -> None:
        skipped, math = self._inside()
        if math:
            if self._math_buf is not None:
                self._math_buf.append(data)
        elif not skipped:
            self.text.append(data)


def findings(html: str) -> list[str]:
    """Each raw-markup finding in one page, as ``kind: excerpt``."""
    parser = _Visible()
    parser.feed(html)
    parser.close()
    out = []
    for chunk in parser.text:
        for kind, pattern in RAW.items():
            for m in pattern.finditer(chunk):
                lo, hi = max(0, m.start() - 30), m.end() + 30
                out.append(f"{kind}: {chunk[lo:hi].strip()!r}")
    for tex in parser.math:
        t = tex.strip()
        if not ((t.startswith("\\(") and t.endswith("\\)"))
                or (t.startswith("\\[") and t.endswith("\\]"))):
            out.append(f"math element without \\( \\) or \\[ \\] delimiters: {t[:60]!r}")
    return out


def check(site: Path) -> dict[str, list[str]]:
    """Findings per page (relative path) under a built site; pages without findings omitted."""
    pages = sorted(site.rglob("*.html"))
    if not pages:
        raise SystemExit(f"{site}: no HTML pages; build the site first (mkdocs build)")
    result = {}
    for page in pages:
        found = findings(page.read_text(encoding="utf-8"))
        if found:
            result[page.relative_to(site).as_posix()] = found
    return result


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    result = check(Path(argv[0]))
    for page, found in result.items():
        for f in found:
            print(f"{page}: {f}")
    if result:
        total = sum(map(len, result.values()))
        print(f"{total} raw markup findings on {len(result)} pages", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
