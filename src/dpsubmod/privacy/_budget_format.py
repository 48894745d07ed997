"""The budget file's format: reading, checking and chaining, with no file locking or charging.

A budget file (format version 2) is a JSON object::

    {"format": "dpsubmod-budget", "version": 2, "dataset": "rides",
     "epsilon": 1.0, "delta": 0.0, "composition": "basic", "slack": 0.0,
     "releases": [{"time": ..., "command": ..., "mechanism": ..., "epsilon": ..., "delta": ...,
                   "rho": ..., "rule": ..., "note": ..., "prev": "<sha256 hex>",
                   "backend": ..., "engine": ...}, ...],
     "head": "<sha256 hex>"}

``backend`` and ``engine`` (the noise backend and sampling engine that drew) are optional:
written when known, absent from files written before they existed. Everything but
``releases`` and ``head`` is the header. The releases form a hash chain: the first
one's ``prev`` is the SHA-256 of the header's canonical JSON (sorted keys, no spaces), each next
one's ``prev`` is the SHA-256 of the previous release's canonical JSON, and ``head`` is the
SHA-256 of the last release (of the header when there is none). Any edit, removal, insertion or
reordering of a release, or a change of the header, breaks the chain. Only the ledger's own public
fields are hashed; nothing in the file is computed from the private data.

Version 1 bound a budget to the SHA-256 of its data file, which a reader who knows every other
row can invert by trying candidates for the last one; it is read only by :func:`upgrade_v1`.
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Any

from ..errors import BudgetFileError, DPSubmodError, ValidationError
from .budget import Budget
from .events import PrivacyEvent

FORMAT = "dpsubmod-budget"
VERSION = 2
#: The fields of one release, with the JSON types they hold.
RELEASE_FIELDS = ("time", "command", "mechanism", "epsilon", "delta", "rho", "rule", "note",
                  "prev")
#: Fields a release may hold, absent from files written before they existed.
OPTIONAL_RELEASE_FIELDS = ("backend", "engine")
_MAX_DATASET = 200


class Damaged(Exception):
    """What is wrong with a budget file (the text completes "The budget file 'F' ...")."""


class Modified(Damaged):
    """The hash chain is broken: the file was edited outside dpsubmod."""


def check_dataset(name: object, option: str) -> str:
    """The data set's name as the owner gave it: a short line of text.

    ``option`` names the user's argument in the error (``--dataset`` or ``dataset``).
    """
    if not isinstance(name, str) or not name.strip():
        raise ValidationError(
            f"{option} must name the data set the budget protects (for example {option} "
            f"rides): the people whose records every release charged to it is computed from; "
            f"got {name!r}.")
    name = name.strip()
    if len(name) > _MAX_DATASET or not name.isprintable():
        raise ValidationError(
            f"{option} must be a printable name of at most {_MAX_DATASET} characters (for "
            f"example {option} rides); got {name[:40]!r}.")
    return name


def canonical_digest(obj: Any) -> str:
    """SHA-256 (hex) of ``obj`` as canonical JSON: sorted keys, no spaces, ASCII only."""
    text = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                      allow_nan=False)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def _header(doc: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in doc.items() if k not in ("releases", "head")}


def chain(doc: dict[str, Any]) -> None:
    """Set ``prev`` on every release and ``head`` on ``doc`` (in place), linking them."""
    prev = canonical_digest(_header(doc))
    for r in doc["releases"]:
        r["prev"] = prev
        prev = canonical_digest(r)
    doc["head"] = prev


def _check_chain(doc: dict[str, Any]) -> None:
    prev = canonical_digest(_header(doc))
    for i, r in enumerate(doc["releases"], 1):
        if r["prev"] != prev:
            what = ("its header (limit, rule or data set) or its first release was changed"
                    if i == 1 else f"release {i} does not follow release {i - 1}: a release "
                    "was edited, removed, inserted or moved")
            raise Modified(f"was modified outside dpsubmod ({what})")
        prev = canonical_digest(r)
    if doc["head"] != prev:
        raise Modified("was modified outside dpsubmod (its releases do not end where the file "
                       "says: releases were removed or added, or its header was changed)")


def decode(raw: bytes) -> Any:
    """The JSON value held in ``raw``; :class:`Damaged` when it is not UTF-8 JSON."""
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")) or (len(raw) > 1 and b"\0" in raw[:2]):
        raise Damaged("is not UTF-8 text (it looks like UTF-16, perhaps saved by an editor)")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Damaged(f"is not UTF-8 text (byte {exc.start} cannot be decoded): it is "
                      "corrupt or not a budget file") from None
    if not text.strip():
        raise Damaged("is empty (truncated)")
    try:
        return json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise Damaged(f"is not valid JSON (corrupt or truncated: {exc.msg}; line "
                      f"{exc.lineno}, column {exc.colno})") from None
    except (RecursionError, ValueError):
        raise Damaged("is not valid JSON (corrupt: nested too deeply, or a number that is not "
                      "finite)") from None


def _no_constant(name: str) -> Any:
    raise ValueError(name)


def _kind(x: Any) -> str:
    return {dict: "an object", list: "a list", str: "text", bool: "true or false",
            type(None): "null", int: "a number", float: "a number"}.get(type(x), type(x).__name__)


def _number(where: str, x: Any, *, inf: bool = False, none: bool = False) -> float | None:
    if none and x is None:
        return None
    if inf and x == "inf":
        return math.inf
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
        want = "a finite number" + (' or "inf"' if inf else "") + (" or null" if none else "")
        raise Damaged(f"is damaged: {where} holds {_kind(x)} ({str(x)[:20]!r}), not {want}")
    return float(x)


def _text(where: str, x: Any) -> str:
    if not isinstance(x, str):
        raise Damaged(f"is damaged: {where} holds {_kind(x)}, not text")
    return x


def check_document(doc: Any) -> dict[str, Any]:
    """Check a decoded version-2 budget document: its types, its limit, its events and its hash
    chain. Returns it; raises :class:`Damaged` (or :class:`Modified`) naming the problem."""
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise Damaged("is not a dpsubmod budget file (it has no \"format\": \"dpsubmod-budget\")")
    version = doc.get("version")
    if isinstance(version, bool) or not isinstance(version, int):
        raise Damaged(f"is damaged: its format version is {version!r}, not a whole number")
    if version > VERSION:
        raise Damaged(f"was written by a newer version of dpsubmod (format version {version}; "
                      f"this one reads up to {VERSION}); upgrade dpsubmod to use it")
    if version == 1:
        raise Damaged("is in format version 1, which binds the budget to a hash of its data "
                      "file (a hash that can give away a row). Convert it once with 'dpsubmod "
                      "budget upgrade FILE --dataset NAME': every release is kept, the hash is "
                      "dropped, and the budget is bound to the data set you name")
    if version != VERSION:
        raise Damaged(f"is damaged: format version {version} does not exist")
    missing = [k for k in ("dataset", "epsilon", "delta", "composition", "slack", "releases",
                           "head") if k not in doc]
    if missing:
        raise Damaged(f"is truncated or damaged: the field {missing[0]!r} is missing")
    dataset = _text('"dataset"', doc["dataset"])
    if not dataset.strip():
        raise Damaged('is damaged: "dataset" is empty')
    eps = _number('"epsilon"', doc["epsilon"])
    delta = _number('"delta"', doc["delta"])
    composition = _text('"composition"', doc["composition"])
    slack = _number('"slack"', doc["slack"])
    _text('"head"', doc["head"])
    releases = doc["releases"]
    if not isinstance(releases, list):
        raise Damaged(f'is damaged: "releases" holds {_kind(releases)}, not a list')
    try:
        Budget(eps, delta, composition, slack=None if composition == "basic" else slack)
    except DPSubmodError as exc:
        raise Damaged(f"holds an invalid limit ({' '.join(str(exc).split())})") from None
    for i, r in enumerate(releases, 1):
        where = f"release {i}"
        if not isinstance(r, dict):
            raise Damaged(f"is damaged: {where} holds {_kind(r)}, not an object")
        for key in RELEASE_FIELDS:
            if key not in r:
                raise Damaged(f"is truncated or damaged: {where} has no field {key!r}")
        for key in ("time", "command", "mechanism", "rule", "note", "prev"):
            _text(f"{where}'s {key!r}", r[key])
        for key in OPTIONAL_RELEASE_FIELDS:
            if key in r:
                _text(f"{where}'s {key!r}", r[key])
        try:
            PrivacyEvent(r["mechanism"], _number(f"{where}'s 'epsilon'", r["epsilon"], inf=True),
                         _number(f"{where}'s 'delta'", r["delta"]),
                         _number(f"{where}'s 'rho'", r["rho"], none=True))
        except DPSubmodError as exc:
            raise Damaged(f"is damaged: {where} is not a valid release "
                          f"({' '.join(str(exc).split())})") from None
    _check_chain(doc)
    return doc


def upgrade_v1(doc: Any, dataset: str) -> dict[str, Any]:
    """A version-2 document holding every release of the version-1 document ``doc``, bound to
    ``dataset``; the data file's hash and name are dropped. :class:`Damaged` when ``doc`` is not a
    readable version-1 budget."""
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise Damaged("is not a dpsubmod budget file (it has no \"format\": \"dpsubmod-budget\")")
    if doc.get("version") != 1 or isinstance(doc.get("version"), bool):
        raise Damaged(f"is in format version {doc.get('version')!r}, not 1: there is nothing "
                      "to upgrade")
    releases = doc.get("releases")
    if not isinstance(releases, list):
        raise Damaged(f'is damaged: "releases" holds {_kind(releases)}, not a list')
    new = {"format": FORMAT, "version": VERSION, "dataset": dataset,
           "epsilon": doc.get("epsilon"), "delta": doc.get("delta"),
           "composition": doc.get("composition"), "slack": doc.get("slack"), "releases": []}
    for i, r in enumerate(releases, 1):
        if not isinstance(r, dict):
            raise Damaged(f"is damaged: release {i} holds {_kind(r)}, not an object")
        new["releases"].append({
            "time": str(r.get("time", "")), "command": str(r.get("command", "")),
            "mechanism": r.get("mechanism"), "epsilon": r.get("epsilon"),
            "delta": r.get("delta"), "rho": r.get("rho"), "rule": str(r.get("rule", "")),
            "note": str(r.get("note", "")), "prev": ""})
    try:
        chain(new)
        return check_document(new)
    except ValueError:  # a NaN in the canonical JSON
        raise Damaged("is damaged: a number is not finite") from None


def error(path: Path, problem: Damaged) -> BudgetFileError:
    """The one-line error of a budget file at ``path`` with ``problem``."""
    fix = (" Restore it from a backup; a budget cannot be rebuilt from memory." if
           isinstance(problem, Modified) else "")
    return BudgetFileError(f"The budget file {path.name!r} {problem}; it was left unchanged.{fix}")
