"""``Result.to_dict`` and ``Result.to_json``: the release and its statement as plain data, the
non-private diagnostics only when asked and labelled, strict JSON that round-trips."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from dpsubmod import __version__, maximize, maximize_ksubmodular
from dpsubmod.functions import FacilityLocation, KFacilityLocation
from dpsubmod.offline.result import Diagnostics, Result


@pytest.fixture(scope="module")
def f():
    rng = np.random.default_rng(0)
    return FacilityLocation.from_records(rng.random((80, 2)), rng.random((10, 2)),
                                         bandwidth=0.2)


def test_private_release_holds_selection_statement_and_parameters(f):
    res = maximize(f, 3, method="private_greedy", epsilon=1.0, rng=0)
    d = res.to_dict()
    assert set(d) == {"dpsubmod_version", "method", "selection", "privacy", "params",
                      "guarantee"}
    assert d["dpsubmod_version"] == __version__ and d["method"] == "private_greedy"
    assert d["selection"] == list(res.selection)
    assert d["privacy"]["epsilon"] == 1.0 and d["privacy"]["statement"] == str(res.privacy)
    assert d["params"]["epsilon_per_step"] == pytest.approx(1 / 3)
    # nothing computed from the private data without noise unless asked
    assert str(res.diagnostics.value) not in json.dumps(d)


def test_diagnostics_only_when_asked_and_labelled(f):
    res = maximize(f, 3, method="private_greedy", epsilon=1.0, rng=0)
    diag = res.to_dict(diagnostics=True)["diagnostics"]
    assert "NOT differentially private" in diag["warning"]
    assert diag["value"] == res.diagnostics.value
    assert diag["trace"] == list(res.diagnostics.trace)
    assert diag["evaluations"] == res.evaluations


def test_json_is_strict_and_round_trips(f, tmp_path):
    res = maximize(f, 3, method="private_greedy", epsilon=1.0, rng=0)
    path = tmp_path / "release.json"
    text = res.to_json(path)
    assert json.loads(path.read_text()) == json.loads(text) == res.to_dict()
    assert json.loads(res.to_json(indent=None, diagnostics=True)) == res.to_dict(diagnostics=True)
    # non-finite numbers and odd parameter values stay valid JSON
    odd = Result(selection=(np.int64(1),), method="x", privacy=None, evaluations=0,
                 params={"a": math.inf, "b": np.float32(0.5), "c": (1, 2), "d": object(),
                         "e": np.arange(2)},
                 diagnostics=Diagnostics(math.nan))
    out = json.loads(odd.to_json(diagnostics=True))
    assert out["selection"] == [1] and out["privacy"] is None
    assert out["params"]["a"] == "inf" and out["params"]["b"] == 0.5
    assert out["params"]["c"] == [1, 2] and out["params"]["e"] == [0, 1]
    assert out["params"]["d"].startswith("<object")
    assert out["diagnostics"]["value"] == "nan"


def test_non_private_and_ksubmodular_results():
    rng = np.random.default_rng(1)
    f = KFacilityLocation.from_records(rng.random((60, 2)), rng.random((6, 2)),
                                       bandwidths=[0.1, 0.3])
    ref = maximize_ksubmodular(f, 2, "ks_greedy")
    assert ref.to_dict()["privacy"] is None
    res = maximize_ksubmodular(f, 2, "ks_private", epsilon=1.0, rng=0)
    d = json.loads(res.to_json())
    assert d["selection"] == [list(pair) for pair in res.selection]
    assert d["privacy"]["epsilon"] == pytest.approx(1.0)
