"""Failures the fuzz suite found in code owned by other parts of the project (issue 15).

Each entry lets the generated tests count a matching call as ``known`` instead of failing, and
names the strict xfail test in ``test_known_failures.py`` that pins it: when the owner fixes
the code, that test passes, strict xfail turns it into a failure, and the entry and the
marker go together.
"""

from __future__ import annotations

from fuzz_harness import KNOWN, Known

#: One ``Known(...)`` per failure found in code owned elsewhere, each naming its strict xfail
#: test in ``test_known_failures.py``; none at present.
ENTRIES: list[Known] = []

KNOWN.extend(ENTRIES)
