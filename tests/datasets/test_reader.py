"""The one reader of private tables: one bad-row policy in every reading mode, the same dialects
everywhere, and the owner's data check kept apart from releases."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from dpsubmod.cli import main
from dpsubmod.datasets import load_csv, scan_records
from dpsubmod.datasets.records import as_table

MARK = "98765"  # every bad row carries it: it must never reach an output
#: One bad row of each kind (lat, lon, rider), each holding MARK.
BAD_ROWS = {
    "undecodable byte": b"40.7\xe9" + MARK.encode() + b",-73.95,r" + MARK.encode(),
    "unbalanced quote": b'40.7,"-73.95,r' + MARK.encode(),
    "extra cell": b"40.7,-73.95,r" + MARK.encode() + b",7",
    "missing cell": b"40." + MARK.encode() + b",-73.95",
    "empty user id": b"40." + MARK.encode() + b",-73.95,",
    "nan": b"nan,-73.9" + MARK.encode() + b",r1",
    "inf": b"40.7" + MARK.encode() + b",inf,r1",
    "text in a number": b"x" + MARK.encode() + b",-73.95,r1",
    "out of range": b"95." + MARK.encode() + b",-73.95,r1",
}
GRID = ["--task", "facility-location", "--grid", "3x3", "--bounds", "lat=40.6,40.9",
        "--bounds", "lon=-74.1,-73.8", "--k", "2", "--epsilon", "1", "--backend", "numpy",
        "--seed", "3"]
# a position, an offset or a line number of a row
WHERE = re.compile(r"(line|row|offset|position|byte) \d+|\bat \d+", re.IGNORECASE)


def rows(rng, n):
    lat = 40.6 + 0.3 * rng.random(n)
    lon = -74.1 + 0.3 * rng.random(n)
    riders = rng.integers(0, n // 2 + 1, n)
    return [f"{a:.5f},{b:.5f},r{u}".encode() for a, b, u in zip(lat, lon, riders)]


def write(path, lines, parquet=False):
    if parquet:
        pa = pytest.importorskip("pyarrow")
        pq = pytest.importorskip("pyarrow.parquet")
        tab = as_table(path.with_suffix(".csv"), text_columns=["rider"])
        pq.write_table(pa.table({"lat": tab.numeric["lat"], "lon": tab.numeric["lon"],
                                 "rider": pa.array([r or None for r in tab.text["rider"]])}),
                       path)
        return path
    path.write_bytes(b"lat,lon,rider\n" + b"\n".join(lines) + b"\n")
    return path


def release(capsys, path, extra):
    out = path.with_name(path.stem + "-release.json")
    status = main(["select", str(path), *GRID, "--out", str(out), *extra])
    printed = capsys.readouterr()
    return status, printed.out, printed.err, out.read_text() if out.exists() else ""


MODES = {
    "in memory": ([], False),
    "chunks": (["--chunk-rows", "7"], False),
    "parquet": ([], True),
    "parquet chunks": (["--chunk-rows", "5"], True),
}


@pytest.mark.parametrize("mode", list(MODES))
def test_one_bad_row_changes_nothing_but_the_selection_in_every_mode(tmp_path, capsys, mode):
    """Data independence: with or without one bad row of any kind, anywhere, the command exits
    0 with a release of the same shape, and no output holds the row's values or its place."""
    extra, parquet = MODES[mode]
    rng = np.random.default_rng(len(mode))
    # every kind with a user column (one person = up to 2 rows), every other one also without
    cases = [(kind, bad, True) for kind, bad in BAD_ROWS.items()]
    cases += [(kind, bad, False) for kind, bad in list(BAD_ROWS.items())[::2]]
    for i, (kind, bad, by_user) in enumerate(cases):
        good = rows(rng, int(rng.integers(12, 30)))
        at = int(rng.integers(0, len(good) + 1))
        users = ["--user-column", "rider", "--max-rows-per-user", "2"] if by_user else []
        runs = []
        for name, lines in (("good", good), ("bad", good[:at] + [bad] + good[at:])):
            folder = tmp_path / f"{name}{i}"
            folder.mkdir()
            csv = write(folder / "rides.csv", lines)
            path = write(csv.with_suffix(".parquet"), None, parquet=True) if parquet else csv
            runs.append(release(capsys, path, extra + users))
        (s0, o0, e0, r0), (s1, o1, e1, r1) = runs
        assert s0 == 0 and s1 == 0, (kind, e1)
        d0, d1 = json.loads(r0), json.loads(r1)
        assert sorted(d0) == sorted(d1) and len(d0["selection"]) == len(d1["selection"]) == 2
        assert re.sub(r"\d+", "N", d0["privacy"]["neighbouring"]) == \
            re.sub(r"\d+", "N", d1["privacy"]["neighbouring"])
        for text in (o1, e1, r1):
            assert MARK not in text, (kind, text)
            assert not WHERE.search(text), (kind, WHERE.search(text))
        # the declared rule is named in the statement
        assert "kept with every cell invalid" in o1 and "without a user id is dropped" in o1


def test_one_bad_row_on_dask_is_handled_like_in_memory(tmp_path):
    pytest.importorskip("distributed")
    from distributed import Client, LocalCluster

    from dpsubmod.tasks import build_constraint, build_task, private_select

    rng = np.random.default_rng(5)
    good = rows(rng, 40)
    csv = write(tmp_path / "bad.csv", good[:9] + [BAD_ROWS["text in a number"],
                                                 BAD_ROWS["extra cell"]] + good[9:])
    parquet = write(csv.with_suffix(".parquet"), None, parquet=True)
    public = {"grid": (3, 3), "bounds": {"lat": (40.6, 40.9), "lon": (-74.1, -73.8)}}
    ref = build_task("facility-location", parquet, **public)
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        task = build_task("facility-location", parquet, scheduler=client, **public)
        sel = [private_select(t, build_constraint(t, k=2), epsilon=1.0, backend="numpy",
                              rng=4).selection for t in (ref, task)]
    assert sel[0] == sel[1]


def test_estimators_take_a_bad_row_like_any_other():
    from dpsubmod.estimators import PrivateFacilityLocationSelector, PrivateFeatureSelector

    rng = np.random.default_rng(2)
    C = np.array([[0.2, 0.2], [0.8, 0.8], [0.2, 0.8]])
    bad_cells = [np.nan, np.inf, "x98765", 98765.0, None]
    for i, cell in enumerate(bad_cells):
        X = rng.random((25, 2)).astype(object)
        at = int(rng.integers(0, 25))
        Xb = np.insert(X, at, [cell, 0.5], axis=0)
        for data in (X, Xb):
            fl = PrivateFacilityLocationSelector(2, candidates=C, epsilon=1.0, backend="numpy",
                                                 random_state=i).fit(data)
            assert len(fl.ranking_) == 2 and MARK not in json.dumps(fl.release_, default=str)
        codes = rng.integers(0, 3, (30, 3)).astype(object)
        y = rng.integers(0, 2, 30)
        codes_b = np.insert(codes, at, [cell, 1, 2], axis=0)
        y_b = np.insert(y, at, 1)
        for data, labels in ((codes, y), (codes_b, y_b)):
            fs = PrivateFeatureSelector(2, epsilon=1.0, bins="categorical", backend="numpy",
                                        random_state=i).fit(data, labels)
            assert fs.support_.sum() == 2 and MARK not in json.dumps(fs.release_, default=str)


# -- dialects ------------------------------------------------------------------------------------
def dialect_files(tmp_path):
    rng = np.random.default_rng(11)
    n = 40
    lat, lon = 40.6 + 0.3 * rng.random(n), -74.1 + 0.3 * rng.random(n)
    names = [["José", "Zoë", "Ann"][i % 3] for i in range(n)]
    plain = ["lat,lon,name"] + [f"{a:.5f},{b:.5f},{m}" for a, b, m in zip(lat, lon, names)]
    variants = {
        "plain": ("\n".join(plain) + "\n", "utf-8", []),
        "quoted header": ('"lat","lon","name"\n' + "\n".join(plain[1:]) + "\n", "utf-8", []),
        "quoted fields": ('"lat","lon","name"\n' + "\n".join(
            f'"{a:.5f}","{b:.5f}","{m}"' for a, b, m in zip(lat, lon, names)) + "\n",
                          "utf-8", []),
        "crlf": ("\r\n".join(plain) + "\r\n", "utf-8", []),
        "bom": ("\ufeff" + "\n".join(plain) + "\n", "utf-8", []),
        "semicolon": ("\n".join(line.replace(",", ";") for line in plain) + "\n", "utf-8",
                      ["--delimiter", ";"]),
        "latin-1": ("\n".join(plain) + "\n", "latin-1", ["--encoding", "latin-1"]),
        "all at once": ("\ufeff" + '"lat";"lon";"name"\r\n' + "\r\n".join(
            f'{a:.5f};"{b:.5f}";"{m}"' for a, b, m in zip(lat, lon, names)) + "\r\n",
                        "utf-8", ["--delimiter", ";", "--encoding", "utf-8-sig"]),
        "cp1252": ("\n".join(plain) + "\n", "cp1252", ["--encoding", "cp1252"]),
    }
    out = {}
    for key, (text, enc, opts) in variants.items():
        p = tmp_path / f"{key.replace(' ', '_')}.csv"
        p.write_bytes(text.encode(enc))
        out[key] = (p, opts)
    return out, np.column_stack([lat, lon])


def test_every_reading_mode_reads_every_dialect_the_same(tmp_path, capsys):
    files, X = dialect_files(tmp_path)
    selections = {}
    args = [*GRID, "--columns", "lat,lon"]
    for key, (path, opts) in files.items():
        for mode in ([], ["--chunk-rows", "6"]):
            out = tmp_path / "rel.json"
            assert main(["select", str(path), *args, *opts, *mode, "--out", str(out)]) == 0, \
                capsys.readouterr().err
            capsys.readouterr()
            selections[key, bool(mode)] = json.loads(out.read_text())["selection"]
        # the API reads the same records
        kw = {"delimiter": ";"} if "--delimiter" in opts else {}
        if "--encoding" in opts:
            kw["encoding"] = opts[opts.index("--encoding") + 1]
        tab = as_table(path, text_columns=["name"], **kw)
        np.testing.assert_allclose(np.column_stack([tab.numeric["lat"], tab.numeric["lon"]]),
                                   X, rtol=0, atol=1e-5)
        assert tab.names == ("lat", "lon", "name") and not tab.status.any()
        assert set(tab.text["name"]) == {"José", "Zoë", "Ann"}
        chunks = list(scan_records(path, ["lat", "lon"], chunk_rows=7, **kw).chunks())
        np.testing.assert_array_equal(np.concatenate(chunks),
                                      np.column_stack([tab.numeric["lat"], tab.numeric["lon"]]))
        data = load_csv(path, columns=["lat", "lon"], text_columns=["name"], **kw)
        assert data.text["name"][:3] == ("José", "Zoë", "Ann")
    assert len({tuple(s) for s in selections.values()}) == 1, selections


def test_a_wrong_encoding_or_delimiter_is_named_for_the_owner(tmp_path, capsys):
    files, _ = dialect_files(tmp_path)
    path, _ = files["semicolon"]
    # without --delimiter the header is one column: refused before any record, naming the fix
    assert main(["select", str(path), *GRID]) == 2
    assert "--delimiter" not in capsys.readouterr().out
    latin, _ = files["latin-1"]
    # read as UTF-8, a third of the rows do not decode: the release goes on under the policy,
    # and the owner is warned on standard error only
    out = tmp_path / "rel.json"
    assert main(["select", str(latin), *GRID, "--columns", "lat,lon", "--out", str(out)]) == 0
    printed = capsys.readouterr()
    assert "OWNER WARNING, not part of the release" in printed.err
    assert "--encoding" in printed.err and "OWNER" not in printed.out + out.read_text()
    assert main(["select", str(latin), *GRID, "--encoding", "klingon"]) == 2
    assert "--encoding klingon" in capsys.readouterr().err


# -- the owner's data check ---------------------------------------------------------------------
@pytest.mark.parametrize("kind,line,needle", [
    ("undecodable byte", 5, "decode"),
    ("unbalanced quote", 9, "unbalanced quote"),
    ("extra cell", 2, "wrong number of cells"),
    ("missing cell", 12, "wrong number of cells"),
    ("empty user id", 7, "empty user id"),
    ("nan", 3, "'nan'"),
    ("text in a number", 4, MARK),
])
def test_check_data_stops_at_the_first_bad_row_and_says_where(tmp_path, capsys, kind, line,
                                                             needle):
    good = rows(np.random.default_rng(line), 15)
    at = line - 2  # the header is line 1
    lines = good[:at] + [BAD_ROWS[kind]] + good[at:]
    lines.insert(at + 3, BAD_ROWS["inf"])  # a later bad row is not the one reported
    path = write(tmp_path / "d.csv", lines)
    status = main(["select", str(path), *GRID[:8], "--user-column", "rider", "--check-data"])
    out = capsys.readouterr().out
    assert status == 1
    assert out.startswith("DATA CHECK, not a release")
    assert f"line {line} of d.csv" in out and needle in out
    clean = write(tmp_path / "c.csv", good)
    assert main(["select", str(clean), *GRID[:8], "--check-data"]) == 0
    assert "DATA CHECK, not a release" in capsys.readouterr().out


def test_check_data_in_the_api_says_where():
    from dpsubmod.tasks import check_data

    issue = check_data("coverage", {"a": np.array([1.0, 0.0, -2.0]), "b": np.ones(3)})
    assert issue.where == "row 2" and issue.column == "a"


# -- the engine: one cell rule whatever the block ------------------------------------------------
CELLS = ["1", "-2.5", " 3 ", "+.5", "7.", "1e3", "2E-2", "\t4", "", "x", "1_0", "0x1A", "nan",
         "inf", "1e999", "١", "1e", ".", "--1", "1 2"]
VALUE = {"1": 1, "-2.5": -2.5, " 3 ": 3, "+.5": 0.5, "7.": 7, "1e3": 1000, "2E-2": 0.02,
         "\t4": 4}


def test_every_chunk_size_reads_the_same_records_under_one_cell_rule(tmp_path):
    rng = np.random.default_rng(8)
    n = 300
    grid = rng.choice(len(CELLS), size=(n, 2), p=None)
    clean = rng.random(n) < 0.8  # most rows numbers only: the vectorised path
    lines = ["a,b,u"]
    for i in range(n):
        a = CELLS[grid[i, 0]] if not clean[i] else f"{rng.random():.4f}"
        lines.append(f"{a},{CELLS[grid[i, 1]] if not clean[i] else '2'},u{i % 7}")
    lines.insert(50, "")  # a blank line is not a record
    path = tmp_path / "cells.csv"
    path.write_text("\n".join(lines) + "\n")
    tab = as_table(path, text_columns=["u"])
    assert tab.n_rows == n and not tab.status.any()
    expect = [VALUE.get(CELLS[grid[i, 1]], np.nan) if not clean[i] else 2.0 for i in range(n)]
    np.testing.assert_array_equal(tab.numeric["b"], expect)
    ref = np.column_stack([tab.numeric["a"], tab.numeric["b"]])
    for size in (1, 3, 64, 10_000):
        parts = list(scan_records(path, ["a", "b"], user_column="u", chunk_rows=size).chunks())
        np.testing.assert_array_equal(np.concatenate([p[0] for p in parts]), ref)
        assert np.concatenate([p[1] for p in parts]).tolist() == tab.text["u"].tolist()
    # the same cells in memory, from an array of text
    from dpsubmod._cells import to_float

    np.testing.assert_array_equal(to_float(np.array([c for c in CELLS])),
                                  [VALUE.get(c, np.nan) for c in CELLS])


def test_numpys_parser_and_the_cell_rule_agree_on_ascii_cells(tmp_path):
    """The vectorised path (clean ASCII blocks) and the line-by-line path value every cell
    alike: a file of one odd cell per line gives the same column in one block and line by
    line (a bad row in a block sends it line by line)."""
    cells = set()
    for c in map(chr, range(1, 128)):
        if c in '\n\r,"':
            continue
        for base in ("1", "1.5", ".5", "1e5"):
            cells |= {c + base, base + c, base[:1] + c + base[1:]}
    cells = sorted(cells | {"1_0", "0x1A", "infinity", "1d5", "+", ".", "e5", "1e+"})
    path = tmp_path / "odd.csv"
    for bad_row in ("", '"\n'):
        path.write_text("a,b\n" + "".join(f"{c},1\n" for c in cells) + bad_row)
        col = as_table(path).numeric["a"][:len(cells)]
        from dpsubmod._cells import to_float

        np.testing.assert_array_equal(col, to_float(np.array(cells)))


# -- owner warnings ------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", [[], ["--chunk-rows", "9"]])
def test_bounds_of_another_column_warn_the_owner_outside_the_release(tmp_path, capsys, mode):
    path = write(tmp_path / "rides.csv", rows(np.random.default_rng(1), 60))
    out, diag = tmp_path / "rel.json", tmp_path / "diag.json"
    swapped = [*GRID[:6], "--bounds", "lon=40.6,40.9", *GRID[8:]]
    assert main(["select", str(path), *swapped, *mode, "--out", str(out), "--diagnostics",
                 str(diag)]) == 0
    printed = capsys.readouterr()
    warning = [line for line in printed.err.splitlines() if "OWNER WARNING" in line]
    assert len(warning) == 1
    assert "'lon'" in warning[0] and "[40.6, 40.9]" in warning[0]
    assert "not part of the release" in warning[0]
    for text in (printed.out, out.read_text()):
        assert "OWNER WARNING" not in text and "more than half" not in text
    assert json.loads(diag.read_text())  # the counts are in the diagnostics file only
    # the correct bounds: no warning
    assert main(["select", str(path), *GRID, *mode, "--out", str(out)]) == 0
    assert capsys.readouterr().err == ""


def test_the_uber_file_with_swapped_bounds_warns(tmp_path, capsys):
    from pathlib import Path

    uber = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / \
        "uber-apr14-pickups-10k.csv"
    if not uber.exists():
        pytest.skip("the Uber sample is not present")
    assert main(["select", str(uber), "--names", "lat,lon", "--task", "facility-location",
                 "--grid", "4x4", "--bounds", "lat=40.6,40.9", "--bounds", "lon=40.6,40.9",
                 "--k", "3", "--epsilon", "1", "--backend", "numpy", "--seed", "0"]) == 0
    err = capsys.readouterr().err
    assert "OWNER WARNING, not part of the release" in err and "'lon'" in err


def test_rows_all_without_user_id_still_release():
    """Dropping every row (no user id anywhere) is a release of an empty sum, not a refusal:
    its neighbour with one person would otherwise be told apart by the error."""
    from dpsubmod.tasks import build_constraint, build_task, private_select

    rng = np.random.default_rng(0)
    for ids in (["", " ", "", ""], ["", "a", "", ""]):
        task = build_task("facility-location",
                          {"x": rng.random(4), "y": rng.random(4), "u": np.array(ids)},
                          grid=(2, 2), bounds={"x": (0, 1), "y": (0, 1)}, user_column="u",
                          max_rows_per_user=1)
        rel = private_select(task, build_constraint(task, k=1), epsilon=1.0,
                             backend="numpy", rng=0)
        assert len(rel.selection) == 1
