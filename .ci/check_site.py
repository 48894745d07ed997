"""Fail if the built documentation site shows raw docstring markup.

Usage: ``python .ci/check_site.py SITE_DIR``. Every ``*.html`` page under ``SITE_DIR`` is read,
and its visible text outside code (``<code>``, ``<pre>``), scripts, styles and math elements
(``class="arithmatex"``, rendered by the bundled KaTeX) must hold no Sphinx role
(``:func:`x```, ``:class:``, ``:math:``...), no reStructuredText directive (``.. math::``), and
no raw LaTeX (``\\epsilon``, ``\\frac{``, ``x_{i}``, ``$...$``, ``\\(``). A math element must
also be well formed: its text is delimited as arithmatex's generic mode writes it
(``\\(...\\)`` inline, ``\\[...\\]`` display) so the renderer finds it, and, when Node.js is
installed, the bundled KaTeX must parse it (strict mode; without Node.js this step is skipped
and says so). Exit status 1 lists each finding with its page and an excerpt.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
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
KATEX = Path(__file__).resolve().parents[1] / "docs" / "assets" / "katex" / "katex.min.js"
#: Parse every formula with the bundled KaTeX, as the site's init script renders it.
_KATEX_CHECK = """
const katex = require(process.argv[1]);
const items = JSON.parse(require("fs").readFileSync(0, "utf8"));
const out = [];
for (const [where, tex] of items) {
  try {
    katex.renderToString(tex.slice(2, -2),
                         {displayMode: tex.startsWith("\\\\["), throwOnError: true,
                          strict: "error"});
  } catch (e) { out.push(where + ": KaTeX cannot render " + JSON.stringify(tex.slice(0, 60))
                         + ": " + e.message.split("\\n")[0]); }
}
process.stdout.write(JSON.stringify(out));
"""
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


def _parse(html: str) -> _Visible:
    parser = _Visible()
    parser.feed(html)
    parser.close()
    return parser


def katex_errors(items: list[tuple[str, str]]) -> list[str] | None:
    """KaTeX's refusals of ``(where, delimited formula)`` items; None without Node.js."""
    node = shutil.which("node")
    if node is None or not items:
        return None if node is None else []
    done = subprocess.run([node, "-e", _KATEX_CHECK, str(KATEX)], input=json.dumps(items),
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def findings(html: str) -> list[str]:
    """Each raw-markup finding in one page, as ``kind: excerpt``."""
    parser = _parse(html)
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
    result: dict[str, list[str]] = {}
    formulas = []
    for page in pages:
        html = page.read_text(encoding="utf-8")
        name = page.relative_to(site).as_posix()
        found = findings(html)
        if found:
            result[name] = found
        formulas += [(name, t.strip()) for t in _parse(html).math
                     if t.strip()[:2] in ("\\(", "\\[")]
    errors = katex_errors(formulas)
    if errors is None:
        print("check_site: Node.js not found; the formulas were not parsed with KaTeX",
              file=sys.stderr)
    for error in errors or []:
        name, _, text = error.partition(": ")
        result.setdefault(name, []).append(text)
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
