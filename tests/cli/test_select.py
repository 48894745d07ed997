"""End-to-end: ``dpsubmod select`` on small CSV files, run as a user would (a subprocess)."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest


def run(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dpsubmod.cli", "select", *args],
                          capture_output=True, text=True, cwd=cwd, timeout=300)


def write_csv(path, header, rows, fmt="{:g}"):
    lines = [",".join(header)] + [",".join(v if isinstance(v, str) else fmt.format(v)
                                           for v in row) for row in rows]
    path.write_text("\n".join(lines) + "\n")
    return path


STATEMENT = ("differentially private", "Neighbouring data sets: replace one row",
             "Declared sensitivity", "Noise backend", "Public inputs")


def check_success(p, out, k, n_items, eps, delta=0.0):
    assert p.returncode == 0, p.stderr
    assert p.stderr == ""
    for phrase in STATEMENT:
        assert phrase in p.stdout, phrase
    doc = json.loads(out.read_text())
    sel = doc["selection"]
    assert len(sel) == k and len(set(sel)) == k
    assert all(0 <= e < n_items for e in sel)
    assert len(doc["names"]) == k
    for name in doc["names"]:
        assert name in p.stdout
    priv = doc["privacy"]
    assert 0 < priv["epsilon"] <= eps * (1 + 1e-9) and priv["delta"] <= delta
    assert priv["requested_epsilon"] == eps
    assert "replace one row" in priv["neighbouring"]
    assert priv["backend_guarantee"]
    assert doc["sensitivity"] > 0
    # the release holds no non-private value and no directory
    assert "non_private_diagnostics" not in doc and "objective value" not in p.stdout
    assert "/" not in doc["data"]["file"] and str(out.parent) not in out.read_text()
    return doc


@pytest.fixture
def coverage_csv(tmp_path):
    # "big" covers every person, the other sets a few each; with a large epsilon the private
    # greedy picks "big" first except with probability below 1e-100
    rng = np.random.default_rng(0)
    R = (rng.random((120, 5)) < 0.1).astype(int)
    R[:, 2] = 1
    return write_csv(tmp_path / "people.csv", ["a", "b", "big", "c", "d"], R)


def test_help():
    p = run("--help")
    assert p.returncode == 0
    for word in ("--task", "--candidates", "--epsilon", "--backend", "one record"):
        assert word in p.stdout


def test_coverage_task(tmp_path, coverage_csv):
    out = tmp_path / "result.json"
    p = run(str(coverage_csv), "--task", "coverage", "--k", "2", "--epsilon", "60",
            "--delta", "1e-6", "--out", str(out))
    doc = check_success(p, out, 2, 5, 60.0, 1e-6)
    assert doc["names"][0] == "big" and doc["selection"][0] == 2
    assert doc["sensitivity"] == pytest.approx(1 / 120)
    assert doc["data"]["records"] == 120 and doc["privacy"]["backend"] == "secure"
    assert doc["constraint"] == {"type": "cardinality", "k": 2}


def test_numpy_backend_is_reproducible_with_a_seed(tmp_path, coverage_csv, capsys):
    # in-process: the determinism of a seeded run does not need a fresh interpreter
    from dpsubmod.cli import main

    docs = []
    for i in range(2):
        out = tmp_path / f"r{i}.json"
        assert main(["select", str(coverage_csv), "--task", "coverage", "--k", "3",
                     "--epsilon", "0.5", "--backend", "numpy", "--seed", "5",
                     "--out", str(out)]) == 0
        docs.append(json.loads(out.read_text()))
    assert docs[0]["selection"] == docs[1]["selection"] and len(docs[0]["selection"]) == 3
    assert docs[0]["privacy"]["backend"] == "numpy"
    assert "not to protect" in capsys.readouterr().out


def test_default_backend_secure_without_seed_simulation_with_one(tmp_path, coverage_csv,
                                                                  capsys):
    from dpsubmod.cli import main

    out = tmp_path / "r.json"
    args = ["select", str(coverage_csv), "--task", "coverage", "--k", "2", "--epsilon", "1",
            "--out", str(out)]
    assert main(args) == 0
    printed = capsys.readouterr()
    doc = json.loads(out.read_text())
    assert doc["privacy"]["backend"] == "secure" and "simulation" not in printed.out
    engine = doc["privacy"]["statement"].split("(engine ")[1].split(")")[0]
    assert f"Noise backend: secure (engine {engine}):" in printed.out  # the printout names it
    assert printed.err == ""
    assert main(args + ["--seed", "3"]) == 0
    printed = capsys.readouterr()
    doc = json.loads(out.read_text())
    assert doc["privacy"]["backend"] == "numpy" and doc["privacy"]["statement"].count(
        "simulation") == 1
    assert "Noise backend: numpy (engine numpy-" in printed.out
    assert "a seeded simulation" in printed.out and printed.err == ""
    assert main(args + ["--seed", "3", "--backend", "secure"]) == 0
    printed = capsys.readouterr()
    assert json.loads(out.read_text())["privacy"]["backend"] == "secure"
    assert printed.err.count("dpsubmod select: warning: --seed does not make a run on the "
                             "secure backend repeat") == 1


def test_opendp_backend_by_name(tmp_path, coverage_csv, capsys):
    pytest.importorskip("opendp")
    from dpsubmod.cli import main

    out = tmp_path / "r.json"
    assert main(["select", str(coverage_csv), "--task", "coverage", "--k", "2",
                 "--epsilon", "1", "--backend", "opendp", "--seed", "5",
                 "--out", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["privacy"]["backend"] == "opendp" and len(doc["selection"]) == 2
    assert "does not affect the noise of the opendp backend" in capsys.readouterr().out


def test_facility_location_on_a_grid(tmp_path):
    # every person lives in the cell centred at (0.75, 0.25) of a 2x2 grid on [0, 1]^2
    rng = np.random.default_rng(1)
    pts = np.column_stack([0.75 + 0.05 * rng.standard_normal(200),
                           0.25 + 0.05 * rng.standard_normal(200)])
    data = write_csv(tmp_path / "riders.csv", ["x", "y"], pts)
    out = tmp_path / "fl.json"
    p = run(str(data), "--task", "facility-location", "--grid", "2x2", "--bounds", "x=0,1",
            "--bounds", "y=0,1", "--k", "2", "--epsilon", "200", "--out", str(out))
    doc = check_success(p, out, 2, 4, 200.0)
    assert doc["names"][0] == "(0.75, 0.25)"
    assert doc["sensitivity"] == pytest.approx(1 / 200)
    assert "grid" in " ".join(doc["public_inputs"])


def test_facility_location_with_candidates_and_a_partition_matroid(tmp_path):
    rng = np.random.default_rng(2)
    data = write_csv(tmp_path / "riders.csv", ["x", "y"], rng.random((80, 2)))
    sites = [["north-1", 0.2, 0.8, "north"], ["north-2", 0.7, 0.9, "north"],
             ["south-1", 0.3, 0.1, "south"], ["south-2", 0.8, 0.2, "south"],
             ["south-3", 0.5, 0.4, "south"]]
    cand = tmp_path / "sites.csv"
    cand.write_text("y,name,x,district\n" + "".join(
        f"{y},{nm},{x},{g}\n" for nm, x, y, g in sites))  # columns matched by name
    out = tmp_path / "fl.json"
    p = run(str(data), "--task", "facility-location", "--candidates", str(cand),
            "--candidate-names", "name", "--partition-column", "district",
            "--capacities", "north=1,south=2", "--epsilon", "1", "--backend", "numpy",
            "--seed", "0", "--out", str(out))
    doc = check_success(p, out, 3, 5, 1.0)
    names = doc["names"]
    assert sum(n.startswith("north") for n in names) == 1
    assert sum(n.startswith("south") for n in names) == 2
    assert doc["constraint"]["type"] == "partition" and doc["constraint"]["rank"] == 3
    coords = doc["params"]["candidate_coordinates"]
    assert coords[0] == [0.2, 0.8]  # (x, y) in the records' column order


def test_feature_selection_with_public_bins(tmp_path):
    # the label copies "key"; "age" is real-valued and binned on public bounds
    rng = np.random.default_rng(3)
    N = 300
    key = rng.integers(0, 3, N)
    rows = [[int(k), int(rng.integers(0, 2)), int(rng.integers(0, 4)),
             float(rng.uniform(18, 90)), int(k)] for k in key]
    data = write_csv(tmp_path / "survey.csv", ["noise1", "noise2", "key", "age", "label"],
                     [[r[1], r[2], r[0], r[3], r[4]] for r in rows])
    out = tmp_path / "fs.json"
    p = run(str(data), "--task", "feature-selection", "--label", "label", "--bins", "4",
            "--bounds", "age=18,90", "--bins", "categorical", "--k", "2", "--epsilon", "100",
            "--out", str(out))
    doc = check_success(p, out, 2, 4, 100.0)
    assert doc["names"][0] == "key"
    assert doc["params"]["bounds"] == {"age": [18.0, 90.0]}
    assert "label" not in doc["names"]


BAD = {
    "k too large": (
        "a,b\n1,0\n0,1\n", ["--task", "coverage", "--k", "3", "--epsilon", "1"],
        ["'--k'", "[1, 2]"]),
    "no candidates": (
        "x,y\n0.1,0.2\n0.3,0.4\n", ["--task", "facility-location", "--k", "1", "--epsilon", "1"],
        ["--candidates", "--grid"]),
    "epsilon 0": (
        "a,b\n1,0\n0,1\n", ["--task", "coverage", "--k", "1", "--epsilon", "0"],
        ["'--epsilon'"]),
    "label missing": (
        "a,b\n1,0\n0,1\n",
        ["--task", "feature-selection", "--label", "y", "--k", "1", "--epsilon", "1"],
        ["'y'"]),
    "unnamed bounds with minus signs": (
        "x,y\n0.1,0.2\n0.3,0.4\n",
        ["--task", "facility-location", "--grid", "2x2", "--bounds", "-74.02,-73.9,40.6,40.9",
         "--k", "1", "--epsilon", "1"],
        ["--bounds -74.02,-73.9,40.6,40.9", "NAME=LOW,HIGH", "by name"]),
    "infinite bandwidth": (
        "x,y\n0.1,0.2\n0.3,0.4\n",
        ["--task", "facility-location", "--grid", "2x2", "--bounds", "x=0,1", "--bounds",
         "y=0,1", "--bandwidth", "inf", "--k", "1", "--epsilon", "1"],
        ["'bandwidth'", "finite"]),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_input_is_one_line_and_releases_nothing(tmp_path, case):
    text, args, needles = BAD[case]
    data = tmp_path / "data.csv"
    data.write_text(text)
    out = tmp_path / "result.json"
    p = run(str(data), *args, "--out", str(out))
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("dpsubmod: error:")
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    assert p.stdout == ""
    assert not out.exists() and list(tmp_path.iterdir()) == [data]


# The same contract in-process (cheaper than a subprocess) for further refusals.
IN_PROCESS = {
    "grid without bounds": (
        "x,y\n0.1,0.2\n0.3,0.4\n",
        ["--task", "facility-location", "--grid", "2x2", "--k", "1", "--epsilon", "1"],
        ["--bounds"]),
    "bad task (argparse)": (
        "a,b\n1,0\n0,1\n", ["--task", "clustering", "--k", "1", "--epsilon", "1"],
        ["invalid choice", "--help"]),
    "option of another task": (
        "a,b\n1,0\n0,1\n", ["--task", "coverage", "--k", "1", "--epsilon", "1", "--bins", "3"],
        ["--bins", "feature-selection"]),
    "non-private method": (
        "a,b\n1,0\n0,1\n", ["--task", "coverage", "--k", "1", "--epsilon", "1", "--method",
                            "greedy"],
        ["not private", "private_greedy"]),
    "k and a matroid": (
        "a,b\n1,0\n0,1\n", ["--task", "coverage", "--k", "1", "--epsilon", "1", "--groups",
                            "g.csv", "--capacities", "1"],
        ["either --k"]),
    "no size": (
        "a,b\n1,0\n0,1\n", ["--task", "coverage", "--epsilon", "1"], ["--k"]),
    "unknown bounds column": (
        "a,y\n1.5,0\n0,1\n",
        ["--task", "feature-selection", "--label", "y", "--k", "1", "--epsilon", "1",
         "--bins", "2", "--bounds", "b=0,1"],
        ["'b'", "not one of the record columns"]),
    "group file misses an item": (
        "a,b\n1,0\n0,1\n", ["--task", "coverage", "--epsilon", "1", "--groups", "g.csv",
                            "--capacities", "1"],
        ["No group for 'b'"]),
    "headerless candidates": (
        "x,y\n0.1,0.2\n0.3,0.4\n",
        ["--task", "facility-location", "--candidates", "headerless.csv", "--k", "1",
         "--epsilon", "1"],
        ["no header", "by name", "by position"]),
    "invalid rule of another task": (
        "a,b\n1,0\n0,1\n", ["--task", "coverage", "--k", "1", "--epsilon", "1",
                            "--invalid-rows", "impute"],
        ["impute", "coverage"]),
    "capacity for an unknown group": (
        "a,b\n1,0\n0,1\n", ["--task", "coverage", "--epsilon", "1", "--groups", "g2.csv",
                            "--capacities", "g=1,h=1"],
        ["'h'", "not a group"]),
}


@pytest.mark.parametrize("case", sorted(IN_PROCESS))
def test_refusals_in_process(tmp_path, monkeypatch, capsys, case):
    from dpsubmod.cli import main

    text, args, needles = IN_PROCESS[case]
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data.csv").write_text(text)
    (tmp_path / "g.csv").write_text("item,group\na,g\n")
    (tmp_path / "g2.csv").write_text("item,group\na,g\nb,g\n")
    (tmp_path / "headerless.csv").write_text("0.1,0.2\n0.5,0.5\n")
    try:
        status = main(["select", "data.csv", *args, "--out", "result.json"])
    except SystemExit as exc:  # argparse errors exit from inside the parser
        status = exc.code
    captured = capsys.readouterr()
    assert status == 2
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("dpsubmod: error:")
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    assert captured.out == "" and not (tmp_path / "result.json").exists()


# ------------------------------------------------------------------------------------------------
# Matching by name, bounds with minus signs, invalid private rows, what the release holds.
def rides(tmp_path, n=300, seed=4, extra=""):
    rng = np.random.default_rng(seed)
    lat = 40.75 + 0.02 * rng.standard_normal(n)
    lon = -73.98 + 0.02 * rng.standard_normal(n)
    path = tmp_path / "rides.csv"
    path.write_text("lat,lon\n" + "".join(f"{a:.6f},{b:.6f}\n" for a, b in zip(lat, lon))
                    + extra)
    return path


def test_named_bounds_with_negative_values_parse_without_the_equals_trick(tmp_path):
    from dpsubmod.cli import main

    data = rides(tmp_path)
    out = tmp_path / "r.json"
    status = main(["select", str(data), "--task", "facility-location", "--grid", "4x4",
                   "--bounds", "lat=40.6,40.9", "--bounds", "lon=-74.1,-73.8", "--k", "2",
                   "--epsilon", "1", "--backend", "numpy", "--seed", "0", "--out", str(out)])
    assert status == 0
    doc = json.loads(out.read_text())
    assert doc["params"]["bounds"] == {"lat": [40.6, 40.9], "lon": [-74.1, -73.8]}
    assert any("clipped" in r for r in doc["data_rules"])


def test_candidates_are_matched_by_name_whatever_their_column_order(tmp_path):
    from dpsubmod.cli import main

    data = rides(tmp_path)
    sites = [("a", 40.75, -73.98), ("b", 40.80, -73.95), ("c", 40.70, -74.02)]
    (tmp_path / "latlon.csv").write_text("name,lat,lon\n" + "".join(
        f"{n},{a},{b}\n" for n, a, b in sites))
    (tmp_path / "lonlat.csv").write_text("lon,name,lat\n" + "".join(
        f"{b},{n},{a}\n" for n, a, b in sites))
    docs = []
    for cand in ("latlon.csv", "lonlat.csv"):
        out = tmp_path / f"{cand}.json"
        assert main(["select", str(data), "--task", "facility-location", "--candidates",
                     str(tmp_path / cand), "--candidate-names", "name", "--k", "2",
                     "--epsilon", "50", "--backend", "numpy", "--seed", "3",
                     "--out", str(out), "--diagnostics", str(tmp_path / f"{cand}.d.json")]) == 0
        docs.append(json.loads(out.read_text()))
    assert docs[0]["selection"] == docs[1]["selection"] and docs[0]["names"][0] == "a"
    assert docs[0]["params"]["candidate_coordinates"] == docs[1]["params"][
        "candidate_coordinates"]
    v = [json.loads((tmp_path / f"{c}.d.json").read_text())["objective_value"]
         for c in ("latlon.csv", "lonlat.csv")]
    assert v[0] == pytest.approx(v[1]) and v[0] > 0.1


def test_a_bad_private_row_is_handled_by_the_rule_and_not_quoted(tmp_path, capsys):
    from dpsubmod.cli import main

    data = rides(tmp_path, extra="40.7598123,secret-9137\n,\n")
    out, diag = tmp_path / "r.json", tmp_path / "d.json"
    status = main(["select", str(data), "--task", "facility-location", "--grid", "3x3",
                   "--bounds", "lat=40.6,40.9", "--bounds", "lon=-74.1,-73.8", "--k", "2",
                   "--epsilon", "1", "--out", str(out), "--diagnostics", str(diag)])
    printed = capsys.readouterr()
    assert status == 0 and printed.err == ""
    text = printed.out + out.read_text()
    for leak in ("9137", "40.7598", "line 30", "objective value"):
        assert leak not in text
    doc = json.loads(out.read_text())
    assert doc["data"]["records"] == 302
    assert any("contributes 0" in r for r in doc["data_rules"])
    d = json.loads(diag.read_text())
    assert "NOT differentially private" in d["warning"] and d["data"]["invalid_rows"] == 2
    # the data check names the row, says it is not a release, and writes nothing
    status = main(["select", str(data), "--task", "facility-location", "--grid", "3x3",
                   "--bounds", "lat=40.6,40.9", "--bounds", "lon=-74.1,-73.8", "--check-data"])
    printed = capsys.readouterr().out
    assert status == 1 and "DATA CHECK, not a release" in printed
    assert "line 302" in printed and "'lon'" in printed


def test_diagnostics_only_when_asked(tmp_path, capsys):
    from dpsubmod.cli import main

    data = rides(tmp_path)
    args = ["select", str(data), "--task", "facility-location", "--grid", "3x3", "--bounds",
            "lat=40.6,40.9", "--bounds", "lon=-74.1,-73.8", "--k", "1", "--epsilon", "1"]
    assert main(args) == 0
    assert "objective value" not in capsys.readouterr().out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rides.csv"]
    assert main(args + ["--show-diagnostics"]) == 0
    assert "NON-PRIVATE diagnostic" in capsys.readouterr().out


def test_headerless_records_are_named_with_names(tmp_path):
    from dpsubmod.cli import main

    path = tmp_path / "raw.csv"
    path.write_text("40.75,-73.98\n40.76,-73.97\n40.74,-73.99\n")
    out = tmp_path / "r.json"
    assert main(["select", str(path), "--names", "lat,lon", "--task", "facility-location",
                 "--grid", "2x2", "--bounds", "lon=-74.1,-73.8", "--bounds", "lat=40.6,40.9",
                 "--k", "1", "--epsilon", "1", "--out", str(out)]) == 0
    assert json.loads(out.read_text())["data"]["columns"] == ["lon", "lat"]


def test_a_refused_release_leaves_the_budget_unchanged(tmp_path, capsys):
    from dpsubmod.cli import main

    data = rides(tmp_path)
    (tmp_path / "headerless.csv").write_text("40.7,-73.9\n40.8,-74.0\n")
    budget = tmp_path / "b.json"
    assert main(["budget", "new", str(budget), "--dataset", "rides", "--epsilon", "2"]) == 0
    before = budget.read_text()
    status = main(["select", str(data), "--task", "facility-location", "--candidates",
                   str(tmp_path / "headerless.csv"), "--k", "1", "--epsilon", "1",
                   "--budget", str(budget), "--dataset", "rides"])
    assert status == 2 and "no header" in capsys.readouterr().err
    assert budget.read_text() == before


# ------------------------------------------------------------------------------------------------
# Real data at scale: Parquet, chunks, persons with many rows, the add/remove relation.
def rides_parquet(tmp_path, n=2000, seed=6):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    rng = np.random.default_rng(seed)
    path = tmp_path / "rides.parquet"
    pq.write_table(pa.table({"rider": rng.integers(0, 300, n).astype(str),
                             "lat": 40.75 + 0.03 * rng.standard_normal(n),
                             "lon": -73.98 + 0.03 * rng.standard_normal(n)}), path)
    return path


GRID = ["--task", "facility-location", "--grid", "5x5", "--bounds", "lat=40.6,40.9",
        "--bounds", "lon=-74.1,-73.8", "--k", "3"]


def test_parquet_chunked_and_in_memory_give_the_same_release(tmp_path):
    from dpsubmod.cli import main

    data = rides_parquet(tmp_path)
    docs = []
    for extra in ([], ["--chunk-rows", "333"]):
        out = tmp_path / f"r{len(docs)}.json"
        assert main(["select", str(data), *GRID, "--epsilon", "2", "--backend", "numpy",
                     "--seed", "4", "--out", str(out), *extra]) == 0
        docs.append(json.loads(out.read_text()))
    assert docs[0]["selection"] == docs[1]["selection"]
    assert docs[0]["sensitivity"] == docs[1]["sensitivity"] == pytest.approx(1 / 2000)


def test_persons_with_many_rows_scale_the_sensitivity_and_say_so(tmp_path, capsys):
    from dpsubmod.cli import main

    data = rides_parquet(tmp_path)
    out = tmp_path / "r.json"
    assert main(["select", str(data), *GRID, "--epsilon", "1", "--user-column", "rider",
                 "--max-rows-per-user", "4", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    doc = json.loads(out.read_text())
    assert doc["sensitivity"] == 4.0 and "records" not in doc["data"]
    assert "one person = up to 4 rows" in doc["privacy"]["neighbouring"]
    assert "add or remove one person" in printed and "up to 4 rows" in printed
    assert any("first 4" in r for r in doc["data_rules"])
    # the relation without persons: a sum, no public N
    assert main(["select", str(data), *GRID, "--epsilon", "1", "--relation", "add-remove",
                 "--out", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["sensitivity"] == 1.0 and "records" not in doc["data"]
    assert "add or remove one row" in doc["privacy"]["neighbouring"]


SCALE_BAD = {
    "user column without a bound": (["--user-column", "rider"], ["--max-rows-per-user"]),
    "missing user column": (["--user-column", "who", "--max-rows-per-user", "2"],
                            ["'who'", "rider, lat, lon"]),
    "unreachable scheduler": (["--scheduler", "tcp://127.0.0.1:9"], ["cannot be reached"]),
    "chunks and a scheduler": (["--chunk-rows", "10", "--scheduler", "tcp://127.0.0.1:9"],
                               ["either --chunk-rows"]),
}


@pytest.mark.parametrize("case", sorted(SCALE_BAD))
def test_scale_refusals_are_one_line_before_any_noise(tmp_path, capsys, case):
    from dpsubmod.cli import main

    extra, needles = SCALE_BAD[case]
    data = rides_parquet(tmp_path)
    budget = tmp_path / "b.json"
    assert main(["budget", "new", str(budget), "--dataset", "rides", "--epsilon", "2"]) == 0
    before = budget.read_text()
    capsys.readouterr()
    status = main(["select", str(data), *GRID, "--epsilon", "1", "--budget", str(budget),
                   "--dataset", "rides", "--out", str(tmp_path / "r.json"), *extra])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(err) == 1
    for needle in needles:
        assert needle in err[0], (needle, err[0])
    assert budget.read_text() == before and not (tmp_path / "r.json").exists()


def test_a_malformed_private_row_is_a_row_of_invalid_values_not_an_error(tmp_path, capsys):
    from dpsubmod.cli import main

    data = rides(tmp_path, extra="40.71,-73.99,secret-4471\n")
    out = tmp_path / "r.json"
    args = ["select", str(data), "--task", "facility-location", "--grid", "3x3", "--bounds",
            "lat=40.6,40.9", "--bounds", "lon=-74.1,-73.8", "--k", "1"]
    assert main([*args, "--epsilon", "1", "--out", str(out)]) == 0
    printed = capsys.readouterr()
    assert "4471" not in printed.out + printed.err + out.read_text()
    assert json.loads(out.read_text())["data"]["records"] == 301
    assert main([*args, "--check-data"]) == 1
    report = capsys.readouterr().out
    assert "DATA CHECK, not a release" in report and "secret-4471" in report
