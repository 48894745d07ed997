"""A griffe extension for the API reference: Sphinx roles in docstrings as Markdown code.

The docstrings are numpy style and cross-reference with Sphinx roles (``:func:`maximize```,
``:class:`~dpsubmod.offline.Result```, ``:math:`f(S)```); Markdown would print the role
markup as it stands. A role becomes inline code of its target, and a leading ``~`` keeps the
last dotted part only, as Sphinx shows it.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_ROLE = re.compile(r":(?:py:)?(?:func|class|meth|mod|attr|data|obj|exc|const|math|ref|term):"
                   r"`(~?)([^`]+)`")


def _code(m: re.Match[str]) -> str:
    target = m.group(2).strip()
    if m.group(1):
        target = target.rsplit(".", 1)[-1]
    return f"`{target}`"


class SphinxRoles(griffe.Extension):
    """Rewrite Sphinx roles in every docstring as inline code."""

    def on_object(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = _ROLE.sub(_code, obj.docstring.value)
