"""``dpsubmod select --task feature-selection --bins``: every feature column gets a declared,
public binning (a count on --bounds, explicit edges, or integer codes), per column or one rule
for all; a continuous column without one is refused before the budget is charged."""

from __future__ import annotations

import json

import numpy as np
import pytest


def _main(args: list[str]) -> int:
    from dpsubmod.cli import main

    try:
        return main(args)
    except SystemExit as exc:  # argparse errors exit from inside the parser
        return int(exc.code)


@pytest.fixture
def survey(tmp_path, monkeypatch):
    """"size" (continuous) decides the label; "code" (integer codes) and "noise" do not."""
    rng = np.random.default_rng(5)
    N = 400
    size = rng.uniform(0.0, 10.0, N)
    code = rng.integers(0, 3, N)
    noise = rng.uniform(0.0, 10.0, N)
    label = (size > 5.0).astype(int)
    lines = ["noise,code,size,label"] + [f"{a:.4f},{c},{s:.4f},{y}"
                                          for a, c, s, y in zip(noise, code, size, label)]
    (tmp_path / "survey.csv").write_text("\n".join(lines) + "\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


BASE = ["select", "survey.csv", "--task", "feature-selection", "--label", "label", "--k", "1",
        "--epsilon", "50", "--backend", "numpy", "--seed", "0"]


@pytest.mark.parametrize("rules", [
    # one count for the bounded columns, integer codes for the others
    ["--bins", "4", "--bounds", "size=0,10", "--bounds", "noise=0,10", "--bins", "categorical"],
    # per column: edges, a count with bounds, codes
    ["--bins", "size=0,2.5,5,7.5,10", "--bins", "noise=3", "--bounds", "noise=0,10",
     "--bins", "code=categorical"],
    # per column for one, one rule (edges) for every other column
    ["--bins", "code=categorical", "--bins", "0,5,10"],
])
def test_bins_per_column_or_for_all_release(survey, capsys, rules):
    status = _main([*BASE, *rules, "--out", "r.json"])
    out = capsys.readouterr()
    assert status == 0, out.err
    doc = json.loads((survey / "r.json").read_text())
    assert doc["names"] == ["size"]
    bins = doc["params"]["bins"]
    assert set(bins) == {"noise", "code", "size"} and bins["code"] == "categorical"
    assert out.err == ""
    assert "integer category codes declared for code" in out.out


def test_a_continuous_column_without_bins_is_refused_before_the_charge(survey, capsys):
    assert _main(["budget", "new", "b.json", "--epsilon", "100", "--dataset", "patients"]) == 0
    before = (survey / "b.json").read_text()
    capsys.readouterr()
    status = _main([*BASE, "--bins", "code=categorical", "--budget", "b.json",
                    "--dataset", "patients", "--out", "r.json"])
    err = capsys.readouterr().err
    assert status == 2
    line = err.strip()
    assert line.startswith("dpsubmod: error:") and len(line.splitlines()) == 1
    assert "'noise', 'size' have no declared bins" in line
    assert "--bins NAME=B with --bounds NAME=LOW,HIGH" in line and "Nothing was charged" in line
    assert (survey / "b.json").read_text() == before
    assert not (survey / "r.json").exists()
    # the same budget then pays for the declared run
    assert _main([*BASE, "--bins", "categorical", "--bins", "size=0,5,10",
                  "--budget", "b.json", "--dataset", "patients"]) == 0
    assert (survey / "b.json").read_text() != before


@pytest.mark.parametrize("rules, needle", [
    (["--bins", "size=abc"], "a rule is a number of bins"),
    (["--bins", "categorical", "--bins", "0,1"], "given twice"),
    (["--bins", "size=3", "--bins", "size=4"], "column 'size' is given twice"),
    (["--bins", "size=3", "--bins", "categorical"], "bins=3 for column 'size' needs its "
     "public range"),
    (["--bins", "size=5,1,2", "--bins", "categorical"], "increasing edges"),
    (["--bins", "colour=categorical", "--bins", "categorical"], "'colour', not among the "
     "feature columns"),
])
def test_bad_bins_are_named(survey, capsys, rules, needle):
    status = _main([*BASE, *rules, "--out", "r.json"])
    err = capsys.readouterr().err
    assert status == 2 and needle in err, err
    assert not (survey / "r.json").exists()


@pytest.mark.parametrize("declared", [False, True])
def test_one_row_cannot_flip_the_decision(tmp_path, monkeypatch, capsys, declared):
    """All-integer codes, and the same file with one real value in one row: without --bins
    both are refused, with --bins categorical both release (the decision reads no value)."""
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(6)
    rows = [[int(a), int(b), int(a > 0)] for a, b in rng.integers(0, 3, (60, 2))]
    results = []
    for variant, cell in (("codes.csv", None), ("one_real.csv", "1.5")):
        lines = ["a,b,label"] + [",".join(map(str, r)) for r in rows]
        if cell is not None:
            lines[17] = f"{cell},{rows[16][1]},{rows[16][2]}"
        (tmp_path / variant).write_text("\n".join(lines) + "\n")
        args = ["select", variant, "--task", "feature-selection", "--label", "label", "--k",
                "1", "--epsilon", "1", "--backend", "numpy", "--seed", "0"]
        status = _main(args + (["--bins", "categorical"] if declared else []))
        out = capsys.readouterr()
        results.append((status, out.out.replace(variant, "FILE"), out.err))
    (s0, out0, err0), (s1, out1, err1) = results
    assert s0 == s1 == (0 if declared else 2)
    assert err0 == err1 and "1.5" not in out1 + err1
    if declared:  # the same statement, the same shape of release
        assert out0.count("\n") == out1.count("\n") and "Selected" in out1
    else:
        assert "'a', 'b' have no declared bins" in err1
