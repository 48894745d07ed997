"""The offline facility-location experiment runs end to end on the bundled data set, and on the
Uber sample when it is present beside the project."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from dpsubmod.experiments import offline_facility_location as exp

pytest.importorskip("sklearn")
UBER = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "uber-apr14-pickups-10k.csv"


def test_breast_cancer_sweep_writes_results(tmp_path):
    code = exp.main(["--out", str(tmp_path), "--datasets", "breast_cancer", "--epsilons", "0.5",
                     "50", "--seeds", "2", "--k", "3", "--no-variants"])
    assert code == 0
    summary = list(csv.DictReader(open(tmp_path / "summary.csv")))
    by = {(s["method"], s["epsilon"]): float(s["mean"]) for s in summary}
    assert by[("greedy", "")] == 1.0
    assert by[("private_greedy", "50.0")] >= by[("random", "")]
    assert len(list(csv.DictReader(open(tmp_path / "runs.csv")))) == 1 + 2 * 2 + 5 * 2 * 2


def test_variants_run_beside_the_defaults_on_the_same_streams():
    """Each calibration beside the one it replaced; the defaults' cells draw from the same
    streams with or without the variants, so their numbers do not move."""
    base = exp.run(["breast_cancer"], [0.5], 2, 3, variants=False)
    rows = exp.run(["breast_cancer"], [0.5], 2, 3)
    assert rows[:len(base)] == base
    labels = {r["method"] for r in rows[len(base):]}
    assert labels == set(exp.VARIANTS)
    text = exp.markdown(exp.summarize(rows))
    assert "### breast_cancer" in text and "| private_greedy, knapsack | " in text
    assert text.count(" -> ") == len(exp.PAIRS) + 1  # and the heading "Before -> after"
    knap = exp.knapsack_of(64, 3)
    assert knap.budget == 4.5 and list(knap.costs[:4]) == [1.0, 1.5, 2.0, 1.0]


@pytest.mark.skipif(not UBER.exists(), reason="the Uber sample is not beside the project")
def test_uber_points_load():
    pts, cands, bw = exp.load_points("uber", UBER)
    assert pts.shape == (10000, 2) and cands.shape == (100, 2) and bw > 0


def test_missing_uber_file_is_skipped_cleanly(tmp_path):
    assert exp.load_points("uber", tmp_path / "absent.csv") is None
