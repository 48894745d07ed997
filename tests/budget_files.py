"""Budget files for the tests: charged ones, every kind of damaged one, every kind of edit."""

from __future__ import annotations

import json

import numpy as np

from dpsubmod.privacy import FileBudget, PrivacyEvent
from dpsubmod.privacy import _budget_format as fmt

__all__ = ["CASES", "EDITS", "charged", "corrupt_files"]


def charged(path, *eps: float, limit: float = 1.0) -> FileBudget:
    fb = FileBudget.create(path, limit, dataset="rides")
    for e in eps:
        fb.charge(PrivacyEvent.pure("laplace", e))
    return fb


def _valid(tmp_path) -> dict:
    path = tmp_path / "valid.json"
    if not path.exists():
        charged(path, 0.3)
    return json.loads(path.read_text())


def _mutated(tmp_path, change) -> bytes:
    doc = _valid(tmp_path)
    change(doc)
    return json.dumps(doc).encode()


def corrupt_files(tmp_path) -> dict[str, tuple[bytes, str]]:
    """Every kind of damaged file: its bytes and a word of the expected message."""
    valid = json.dumps(_valid(tmp_path)).encode()
    rng = np.random.default_rng(5)

    def without_time(d):
        del d["releases"][0]["time"]

    def set_(key, value):
        return lambda d: d.__setitem__(key, value)

    def set_release(key, value):
        return lambda d: d["releases"][0].__setitem__(key, value)

    def rechained(change):
        # a valid chain over an invalid value: the value itself is refused
        return lambda d: (change(d), fmt.chain(d))

    return {
        "random bytes": (bytes(rng.integers(0, 256, 300, dtype=np.uint8)), "UTF-8"),
        "UTF-16 text": (valid.decode().encode("utf-16"), "UTF-16"),
        "UTF-16-LE text without BOM": (valid.decode().encode("utf-16-le"), "UTF-16"),
        "truncated": (valid[: len(valid) // 2], "not valid JSON"),
        "empty": (b"", "empty"),
        "not JSON": (b"{not json", "not valid JSON"),
        "a JSON list": (b"[]", "not a dpsubmod budget file"),
        "another format": (b'{"format": "x"}', "not a dpsubmod budget file"),
        "newer version": (_mutated(tmp_path, set_("version", 3)), "newer version"),
        "version as text": (_mutated(tmp_path, set_("version", "2")), "not a whole number"),
        "nested too deeply": (b"[" * 100_000, "not valid JSON"),
        "a NaN": (valid.replace(b'"epsilon": 1.0', b'"epsilon": NaN'), "not valid JSON"),
        "releases holding text": (_mutated(tmp_path, set_("releases", "none")), "releases"),
        "data set holding a number": (_mutated(tmp_path, set_("dataset", 3)), "dataset"),
        "limit holding text": (_mutated(tmp_path, set_("epsilon", "1")), "epsilon"),
        "no head": (_mutated(tmp_path, lambda d: d.pop("head")), "'head' is missing"),
        "a release without time": (_mutated(tmp_path, without_time), "no field 'time'"),
        "a release holding a number": (_mutated(tmp_path, set_("releases", [3])),
                                       "release 1 holds a number"),
        "a release's epsilon as text": (_mutated(tmp_path, set_release("epsilon", "0.3")),
                                        "'epsilon' holds text"),
        "a negative release": (_mutated(tmp_path, rechained(set_release("epsilon", -1.0))),
                               "not a valid release"),
        "an invalid limit": (_mutated(tmp_path, rechained(set_("epsilon", -1.0))),
                             "invalid limit"),
        "version 1 with a data string": (json.dumps(
            {"format": "dpsubmod-budget", "version": 1, "epsilon": 1.0, "delta": 0.0,
             "composition": "basic", "slack": 0.0, "data": "rides.csv",
             "releases": []}).encode(), "budget upgrade"),
    }


CASES = sorted([
    "random bytes", "UTF-16 text", "UTF-16-LE text without BOM", "truncated", "empty",
    "not JSON", "a JSON list", "another format", "newer version", "version as text",
    "nested too deeply", "a NaN", "releases holding text", "data set holding a number",
    "limit holding text", "no head", "a release without time", "a release holding a number",
    "a release's epsilon as text", "a negative release", "an invalid limit",
    "version 1 with a data string"])


def _drop(i):
    return lambda d: d["releases"].pop(i)


EDITS = {
    "emptied releases": lambda d: d.__setitem__("releases", []),
    "lowered spend": lambda d: d["releases"][1].__setitem__("epsilon", 0.01),
    "raised limit": lambda d: d.__setitem__("epsilon", 2.0),
    "raised delta": lambda d: d.__setitem__("delta", 0.5),
    "another data set": lambda d: d.__setitem__("dataset", "trips"),
    "first release removed": _drop(0),
    "middle release removed": _drop(1),
    "last release removed": _drop(2),
    "reordered": lambda d: d["releases"].reverse(),
    "a release duplicated": lambda d: d["releases"].append(dict(d["releases"][2])),
    "a command rewritten": lambda d: d["releases"][0].__setitem__("command", "x"),
    "head rewritten": lambda d: d.__setitem__("head", "0" * 64),
    "a header field added": lambda d: d.__setitem__("note", "hi"),
}
