"""Sweeps: the same cells give the same rows serially, in processes and on a Dask cluster;
interrupted sweeps resume without re-running finished cells; bad experiment files fail clearly."""

from __future__ import annotations

import numpy as np
import pytest

from dpsubmod.errors import DPSubmodError
from dpsubmod.experiments import sweep as sw
from dpsubmod.experiments.config import ConfigError, load_config, parse_config
from dpsubmod.experiments.results import read_table, write_table

EPSILONS = [0.1, 0.3, 1.0, 3.0, 10.0]
METHODS = ["greedy", "random", "private_greedy", "private_stochastic_greedy"]


def offline_doc(**exp):
    doc = {"experiment": {"name": "small", "problem": "offline", "seed": 7, "seeds": 20, "k": 3,
                          "methods": METHODS, "epsilons": EPSILONS},
           "objective": {"kind": "facility_location", "records": 60, "candidates": 20}}
    doc["experiment"].update(exp)
    return doc


CONFIG = parse_config(offline_doc())  # 20 + 20 + 2 * 5 * 20 = 240 cells, n = 20, k = 3


def strip(rows):
    """Rows without the wall-time column, the only non-deterministic one."""
    return [{k: v for k, v in r.items() if k != "seconds"} for r in rows]


@pytest.fixture(scope="module")
def serial():
    res = sw.run_sweep(CONFIG)
    assert res.ran == len(res.rows) == 240 and res.resumed == 0
    return strip(res.rows)


def test_plan_and_cell_seeds_depend_on_the_key_only(serial):
    keys = sw.plan(CONFIG)
    assert len(keys) == len(set(keys)) == 240
    assert [sw.cell_key(r) for r in serial] == keys
    # same key, same seed; other keys, other seeds
    a = sw.cell_seed(7, ("private_greedy", 1.0, None, 3)).generate_state(4)
    b = sw.cell_seed(7, ("private_greedy", 1.0, None, 3)).generate_state(4)
    c = sw.cell_seed(7, ("private_greedy", 1.0, None, 4)).generate_state(4)
    d = sw.cell_seed(8, ("private_greedy", 1.0, None, 3)).generate_state(4)
    assert np.array_equal(a, b) and not np.array_equal(a, c) and not np.array_equal(a, d)
    # running cells in reverse order (fresh per-process cache aside) gives the same rows
    rev = [sw.run_cell(CONFIG, k) for k in reversed(keys[-30:])]
    assert strip(rev[::-1]) == serial[-30:]
    # the rows are not all alike: the private methods are random, greedy is not
    utils = {r["utility"] for r in serial if r["method"] == "private_greedy"}
    assert len(utils) > 5
    assert {r["utility"] for r in serial if r["method"] == "greedy"} == {1.0}


def test_private_rows_report_their_budget(serial):
    for r in serial:
        if r["method"].startswith("private"):
            assert r["epsilon_spent"] == pytest.approx(r["epsilon"])
            assert r["delta_spent"] == 0.0
        else:
            assert r["epsilon"] is None and r["epsilon_spent"] is None
    # utility rises with epsilon (mean over 20 seeds; at 0.1 the choice is nearly random)
    s = {(x["method"], x["epsilon"]): x["mean"] for x in sw.summarize(serial, "utility")}
    assert s[("private_greedy", 10.0)] > s[("private_greedy", 0.1)] + 0.1


def test_dask_local_cluster_matches_serial(serial, tmp_path):
    distributed = pytest.importorskip("distributed")
    out = tmp_path / "dask.csv"
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        res = sw.run_sweep(CONFIG, out=out, scheduler=cluster.scheduler_address)
    assert res.ran == 240
    assert strip(res.rows) == serial
    # the table on disk is complete, typed and in plan order
    assert strip(sw.load_results(CONFIG, out)) == serial


def test_joblib_workers_match_serial(serial):
    pytest.importorskip("joblib")
    res = sw.run_sweep(CONFIG, workers=2)
    assert strip(res.rows) == serial


def test_resume_runs_only_missing_cells(serial, tmp_path, monkeypatch):
    out = tmp_path / "resume.csv"
    first = sw.run_sweep(CONFIG, out=out, max_cells=100)
    assert first.ran == 100 and len(read_table(out)) == 100
    calls = []
    real = sw.run_cell

    def counting(config, key):
        calls.append(key)
        return real(config, key)

    monkeypatch.setattr(sw, "run_cell", counting)
    second = sw.run_sweep(CONFIG, out=out)
    assert second.ran == 140 and second.resumed == 100
    assert calls == sw.plan(CONFIG)[100:]
    assert strip(second.rows) == serial
    assert strip(sw.load_results(CONFIG, out)) == serial
    calls.clear()
    third = sw.run_sweep(CONFIG, out=out)
    assert third.ran == 0 and calls == [] and strip(third.rows) == serial


def test_interrupted_sweep_keeps_finished_cells(serial, tmp_path, monkeypatch):
    out = tmp_path / "crash.csv"
    real = sw.run_cell
    calls = []

    def crashing(config, key):
        if len(calls) == 57:
            raise KeyboardInterrupt
        calls.append(key)
        return real(config, key)

    monkeypatch.setattr(sw, "run_cell", crashing)
    with pytest.raises(KeyboardInterrupt):
        sw.run_sweep(CONFIG, out=out)
    assert len(read_table(out)) == 57
    # a crash in the middle of a line: the partial row is dropped and its cell re-run
    with open(out, "a") as fh:
        fh.write("private_greedy,0.3,,1,0.5")
    monkeypatch.setattr(sw, "run_cell", real)
    res = sw.run_sweep(CONFIG, out=out)
    assert res.resumed == 57 and res.ran == 183
    assert strip(sw.load_results(CONFIG, out)) == serial


def test_parquet_output_resumes(serial, tmp_path):
    pytest.importorskip("pyarrow")
    out = tmp_path / "res.parquet"
    part = sw.run_sweep(CONFIG, out=out, max_cells=70)
    assert part.ran == 70 and len(read_table(out)) == 70
    assert (tmp_path / "res.parquet.parts").is_dir()
    res = sw.run_sweep(CONFIG, out=out)
    assert res.resumed == 70 and res.ran == 170
    assert not (tmp_path / "res.parquet.parts").exists()
    assert strip(sw.load_results(CONFIG, out)) == serial


def test_output_of_another_configuration_is_refused(tmp_path):
    out = tmp_path / "r.csv"
    small = parse_config(offline_doc(seeds=1, methods=["greedy"]))
    sw.run_sweep(small, out=out)
    other = parse_config(offline_doc(seeds=1, methods=["greedy"], seed=8))
    with pytest.raises(ConfigError, match="another experiment or configuration"):
        sw.run_sweep(other, out=out)
    with pytest.raises(ConfigError, match="not both"):
        sw.run_sweep(small, workers=2, scheduler="tcp://127.0.0.1:1")
    with pytest.raises(ConfigError, match="workers"):
        sw.run_sweep(small, workers=0)


def test_online_sweep_rows():
    cfg = parse_config({
        "experiment": {"problem": "online", "learners": ["SubmodPFTAL", "HazanKale"],
                       "T": [16, 32], "epsilons": [1.0, 4.0], "seeds": 2, "seed": 1},
        "stream": {"kind": "stochastic", "n": 3}})
    res = sw.run_sweep(cfg)
    assert len(res.rows) == 2 * 2 * 2 + 2 * 2
    for r in res.rows:
        assert np.isfinite(r["regret"]) and r["regret_per_round"] == r["regret"] / r["T"]
        if r["method"] == "SubmodPFTAL":
            assert r["epsilon_spent"] == pytest.approx(r["epsilon"])
        else:
            assert r["epsilon"] is None and r["epsilon_spent"] is None
    # the learners of one (T, seed) see the same stream: the same comparator
    comp = {}
    for r in res.rows:
        comp.setdefault((r["T"], r["seed"]), set()).add(round(r["comparator_value"], 12))
    assert all(len(v) == 1 for v in comp.values())
    assert strip(sw.run_sweep(cfg).rows) == strip(res.rows)


def test_plots_are_written(tmp_path):
    pytest.importorskip("matplotlib")
    cfg = parse_config(offline_doc(seeds=3, epsilons=[0.5, 5.0]))
    pngs = sw.make_plots(sw.run_sweep(cfg), tmp_path, "x")
    names = sorted(p.name for p in pngs)
    assert names == ["x_privacy_per_step.png", "x_utility_vs_epsilon.png"]
    assert all(p.stat().st_size > 10_000 for p in pngs)


def test_progress_bar_on_stderr_only_when_asked(capsys):
    cfg = parse_config(offline_doc(seeds=2, epsilons=[1.0]))
    quiet = sw.run_sweep(cfg, progress=False)
    assert capsys.readouterr().err == ""
    shown = sw.run_sweep(cfg, progress=True)
    err = capsys.readouterr().err
    assert "small" in err and "8/8" in err and "cell" in err
    assert strip(shown.rows) == strip(quiet.rows)
    sw.run_sweep(cfg)  # stderr is not a terminal under pytest: silent by default
    assert capsys.readouterr().err == ""


def test_shipped_examples_load_by_name(tmp_path, monkeypatch):
    from dataclasses import replace
    from pathlib import Path

    from dpsubmod.experiments.examples import example_names

    folder = Path(__file__).resolve().parents[2] / "examples"
    assert example_names() == sorted(p.stem for p in folder.glob("*.toml"))
    monkeypatch.chdir(tmp_path)  # no examples/ folder here
    for name in example_names():
        by_name, by_file = load_config(name), load_config(folder / f"{name}.toml")
        assert by_name.source == f"{name} (shipped example)"
        assert replace(by_name, source="") == replace(by_file, source="")
        assert load_config(name + ".toml") == by_name
    with pytest.raises(ConfigError, match="shipped example"):
        load_config("no_such_example")
    # a file of that name in the working folder wins over the shipped example
    (tmp_path / "online_minimization").write_text("not toml [")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config("online_minimization")


def bad(path, value):
    doc = offline_doc()
    table, _, key = path.partition(".")
    if value is None:
        del doc[table][key]
    else:
        doc[table][key] = value
    return doc


@pytest.mark.parametrize("doc, match", [
    ({}, r"\[experiment\]: the table is missing"),
    (bad("experiment.problem", "batch"), r"problem: must be \"offline\" or \"online\""),
    (bad("experiment.methods", ["greedy", "privte_greedy"]),
     r"unknown method 'privte_greedy'. Did you mean 'private_greedy'"),
    (bad("experiment.epsilons", [1.0, -2.0]), r"\[experiment\] epsilons.*\(0.0, inf\)"),
    (bad("experiment.epsilons", None), r"epsilons: is missing"),
    (bad("experiment.epsilons", []), r"non-empty list"),
    (bad("experiment.k", 0), r"\[experiment\] k.*\[1, inf\]"),
    (bad("experiment.k", 30), r"k=30 exceeds the 20 candidates"),
    (bad("experiment.seeds", 0), r"seeds.*number of replicates"),
    (bad("experiment.seeds", [1, 1]), r"twice"),
    (bad("experiment.T", [10]), r"\[experiment\] T: applies to online problems only"),
    (bad("experiment.learners", ["FIDP"]), r"methods'"),
    (bad("experiment.epsilon", 1.0), r"unknown key 'epsilon'. Did you mean 'epsilons'"),
    (bad("objective.kind", "coverage"), r"\[objective\] kind: must be one of"),
    (bad("experiment.note", ["read", "me"]), r"\[experiment\] note: must be a string"),
    (bad("objective.record", 10), r"unknown key 'record'. Did you mean 'records'"),
    (bad("objective.bandwidth", "wide"), r"\[objective\] bandwidth.*real number"),
    (bad("objective.candidates", 2.5), r"candidates.*integer"),
    ({**offline_doc(), "stream": {"kind": "stochastic"}}, r"unknown key 'stream'"),
    ({**offline_doc(), "options": {"dpcg": {}}}, r"\[options.dpcg\]: names a method"),
    ({**offline_doc(), "options": {"greedy": {"epsilon": 1}}}, r"sets \['epsilon'\]"),
])
def test_config_errors_name_the_key_and_the_fix(doc, match):
    with pytest.raises(ConfigError, match=match) as info:
        parse_config(doc, source="exp.toml")
    assert isinstance(info.value, DPSubmodError) and isinstance(info.value, ValueError)
    assert str(info.value).startswith("exp.toml: ")


def test_online_config_errors():
    doc = {"experiment": {"problem": "online", "learners": ["SubmodPFTAL", "FIDP"],
                          "T": [16], "epsilons": [1.0]},
           "stream": {"kind": "stochastic"}}
    with pytest.raises(ConfigError, match="'FIDP' is a maximization learner but stream "
                       "'stochastic' is a minimization problem"):
        parse_config(doc)
    doc["experiment"]["learners"] = ["SubmodPFTAL"]
    doc["stream"]["n"] = 40
    with pytest.raises(ConfigError, match=r"\[stream\] n.*\[1, 20\]"):
        parse_config(doc)
    del doc["stream"]["n"]
    doc["experiment"]["T"] = [0]
    with pytest.raises(ConfigError, match=r"\[experiment\] T"):
        parse_config(doc)
    del doc["experiment"]["T"]
    with pytest.raises(ConfigError, match="T: is missing"):
        parse_config(doc)


def test_load_config_file_errors(tmp_path):
    with pytest.raises(ConfigError, match="no such experiment file"):
        load_config(tmp_path / "absent.toml")
    p = tmp_path / "broken.toml"
    p.write_text("[experiment\nproblem = 1\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(p)
    p.write_text('[experiment]\nproblem = "offline"\nmethods = ["greedy"]\nepsilons = [1.0]\n'
                 '[objective]\nkind = "facility_location"\n')
    cfg = load_config(p)
    assert cfg.name == "broken" and cfg.seeds == (0,) and cfg.Ts == (None,)


def test_write_table_round_trip(tmp_path):
    rows = [{"a": 1, "b": 0.1 + 0.2, "c": None}, {"a": 2, "b": float("nan"), "c": "x,y"}]
    schema = {"a": "int", "b": "float", "c": "str"}
    back = read_table(write_table(rows, tmp_path / "t.csv"), schema=schema)
    assert back[0] == rows[0] and back[1]["c"] == "x,y" and np.isnan(back[1]["b"])
    pytest.importorskip("pyarrow")
    back = read_table(write_table(rows, tmp_path / "t.parquet", schema=schema), schema=schema)
    assert back[0] == rows[0] and np.isnan(back[1]["b"])


def test_a_note_is_kept_but_not_part_of_the_fingerprint():
    plain = parse_config(offline_doc(seeds=1))
    noted = parse_config(offline_doc(seeds=1, note="Read the bands."))
    assert noted.note == "Read the bands." and plain.note == ""
    assert sw.config_id(noted) == sw.config_id(plain)  # a reworded note resumes the same rows
