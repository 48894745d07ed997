"""A griffe extension for the API reference: Sphinx markup in docstrings as Markdown.

The docstrings are numpy style: they cross-reference with Sphinx roles
(``:func:`maximize```, ``:class:`~dpsubmod.offline.Result```) and write mathematics with the
``:math:`f(S)``` role and the ``.. math::`` directive. Markdown would print that markup as it
stands, so before the docstrings are parsed:

- a cross-reference role becomes inline code of its target, a leading ``~`` keeping the last
  dotted part only, as Sphinx shows it;
- ``:math:`x``` becomes ``\\(x\\)``, and a ``.. math::`` directive (its argument and its
  indented body) becomes a display block ``\\[ ... \\]`` at the directive's indentation, one
  block per blank-line-separated equation. pymdownx.arithmatex (generic mode) turns both into
  math elements, which the site's bundled KaTeX renders.
"""

from __future__ import annotations

import ast

import re
import textwrap
from typing import Any

import griffe

_XREF = re.compile(r":(?:py:)?(?:func|class|meth|mod|attr|data|obj|exc|const|ref|term):"
                   r"`(~?)([^`]+)`")
_MATH_ROLE = re.compile(r":math:`([^`]+)`")
_MATH_DIRECTIVE = re.compile(r"^(?P<indent>[ \t]*)\.\. math::[ \t]*(?P<arg>.*)$")


def _code(m: re.Match[str]) -> str:
    target = m.group(2).strip()
    if m.group(1):
        target = target.rsplit(".", 1)[-1]
    return f"`{target}`"


def _inline_math(m: re.Match[str]) -> str:
    return f"\\({m.group(1).strip()}\\)"


def _indent_of(line: str) -> int:
    return len(line) - len(line.lstrip())


def math_directives(text: str) -> str:
    """``.. math::`` directives of ``text`` as ``\\[ ... \\]`` blocks (Markdown paragraphs)."""
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        m = _MATH_DIRECTIVE.match(lines[i])
        if m is None:
            out.append(lines[i])
            i += 1
            continue
        indent = m.group("indent")
        body = [m.group("arg")] if m.group("arg").strip() else []
        j = i + 1
        while j < len(lines) and (not lines[j].strip() or _indent_of(lines[j]) > len(indent)):
            j += 1
        while j > i + 1 and not lines[j - 1].strip():
            j -= 1  # trailing blank lines belong to the text after the directive
        # The argument on the directive line has no indentation of its own: align the body.
        rest = textwrap.dedent("\n".join(lines[i + 1:j])).split("\n") if j > i + 1 else []
        equations: list[list[str]] = [[]]
        for line in body + rest:
            if line.strip():
                equations[-1].append(line.strip())
            elif equations[-1]:
                equations.append([])
        if out and out[-1].strip():
            out.append("")
        for eq in (e for e in equations if e):
            out += [f"{indent}\\[", *(f"{indent}{line}" for line in eq), f"{indent}\\]", ""]
        if j < len(lines) and not lines[j].strip():
            out.pop()  # the text's own blank line follows
        i = j
    return "\n".join(out)


def convert(text: str) -> str:
    """A docstring's Sphinx roles and math directives as Markdown and arithmatex math."""
    text = math_directives(text)
    text = _MATH_ROLE.sub(_inline_math, text)
    return _XREF.sub(_code, text)


def _modules(module: griffe.Module) -> list[griffe.Module]:
    out = [module]
    for sub in module.modules.values():
        if not sub.is_alias:
            out += _modules(sub)
    return out


def lazy_names(pkg: griffe.Module) -> None:
    """Make every lazily exported name of the package's modules a member (see _lazy_aliases)."""
    modules = _modules(pkg)
    for module in modules:
        _lazy_aliases(module)


def _lazy_aliases(module: griffe.Module) -> None:
    """The names a package loads on first use (its ``_WHERE`` table, ``dpsubmod._lazy``).

    Griffe reads imports, and a lazily loaded name has none: each becomes an alias of its
    definition.
    """
    table = module.members.get("_WHERE")
    if table is None or table.is_alias or table.value is None:
        return
    for sub, names in ast.literal_eval(str(table.value)).items():
        for name in names:
            if name not in module.members:
                module.members[name] = griffe.Alias(
                    name, f"{module.path}.{sub}.{name}", parent=module)


def _objects(obj: griffe.Object) -> list[griffe.Object]:
    out = [obj]
    for member in obj.members.values():
        if not member.is_alias:
            out += _objects(member)
    return out


class SphinxRoles(griffe.Extension):
    """Rewrite Sphinx markup in every docstring of a package; lazily exported names as above."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        for obj in _objects(pkg):
            if obj.docstring is not None:
                obj.docstring.value = convert(obj.docstring.value)
        lazy_names(pkg)
