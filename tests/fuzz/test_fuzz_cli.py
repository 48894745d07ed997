"""Fuzz: the ``dpsubmod`` commands run as subprocesses on generated files and arguments.

A command must end with exit status 0 (it did what was asked), 2 (a one-line error on stderr, no
traceback) or, for ``audit`` only, 1 (a privacy violation found); never another status, a
traceback, a leaked warning, or a hang. Each run costs a Python start-up (about a second), so
the CI profile runs a handful of them.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fuzz_harness import (
    COUNTS,
    ENTRY_COUNTS,
    FAILURES,
    KNOWN,
    KNOWN_COUNTS,
    TIMEOUT,
    Case,
    Outcome,
    fuzz_settings,
)
from hypothesis import given
from hypothesis import strategies as st

CELLS = ["0.1", "0.5", "0.9", "0", "1", "-3", "1e308", "-1e308", "1e-320", "nan", "inf", "-inf",
         "", "abc", "1,5", " 0.3 ", "0x10", "1e400"]
NUMBERS = ["0.1", "0.5", "0.9", "0", "1", "0.25", "0.75"]


def _run_cli(args: list[str], cwd: Path, timeout: float) -> tuple[int | None, str, str]:
    env = dict(os.environ, PYTHONWARNINGS="error", COLUMNS="200")
    try:
        p = subprocess.run([sys.executable, "-m", "dpsubmod", *args], cwd=cwd, env=env,
                           capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "", ""
    return p.returncode, p.stdout, p.stderr


def judge(case: Case, args: list[str], code: int | None, out: str, err: str,
          *, audit: bool = False) -> str:
    """The outcome's kind, counted like the in-process calls."""
    COUNTS["calls"] += 1
    ENTRY_COUNTS[case.entry] += 1
    if code is None:
        kind, detail = "hang", f"no exit within {TIMEOUT:g} s"
    elif "Traceback (most recent call last)" in err:
        kind, detail = "crash", err.strip().splitlines()[-1][:300]
    elif "Warning:" in err or "Warning: " in out:
        kind, detail = "warning", next(ln for ln in (err + out).splitlines() if "Warning" in ln)
    elif code == 0:
        kind, detail = ("accepted_bad", f"bad {sorted(case.bad)} accepted") if case.bad else \
            ("result", "")
    elif code == 2:
        lines = [ln for ln in err.strip().splitlines() if ln.strip()]
        named = any(w in err for ws in case.bad.values() for w in ws) if case.bad else True
        if not lines:
            kind, detail = "bad_message", "exit 2 with nothing on stderr"
        elif case.bad and not named:
            kind, detail = "bad_message", f"names none of {sorted(case.bad)}: {lines[-1][:300]}"
        elif not case.bad and not case.degenerate and not case.extreme:
            kind, detail = "refused_valid", lines[-1][:300]
        else:
            kind, detail = "refusal", lines[-1][:200]
    elif code == 1 and audit:
        kind, detail = "result", "violation reported"
    else:
        kind, detail = "crash", f"exit status {code}: {err.strip()[-300:]}"
    for k in KNOWN:
        if k.entry.startswith("cli.") and k.matches(case, Outcome(kind, detail=detail, tb=err)):
            KNOWN_COUNTS[k.key] += 1
            COUNTS["known"] += 1
            return "known"
    COUNTS[kind] += 1
    if kind not in ("result", "refusal"):
        FAILURES.append(f"{kind}: {case.entry}: {detail} || dpsubmod {' '.join(args)[:400]}")
    return kind


def _expect(kind: str, args: list[str], err: str) -> None:
    if kind not in ("result", "refusal", "known"):
        raise AssertionError(f"{kind}: dpsubmod {' '.join(args)}\n{err[-3000:]}")


def _csv(rows: list[list[str]], header: list[str] | None) -> str:
    lines = [",".join(header)] if header is not None else []
    lines += [",".join(f'"{c}"' if "," in c else c for c in r) for r in rows]
    return "\n".join(lines) + "\n"


@st.composite
def select_call(draw: Any) -> tuple[Case, list[str], dict[str, str]]:
    task = draw(st.sampled_from(["facility-location", "coverage", "feature-selection"]))
    case = Case(f"cli.select[{task}]", bad_scale=draw(st.sampled_from([0.0, 1.0])))
    bad = case.bad_scale > 0
    n_rows = draw(st.integers(0 if bad else 1, 8))
    files: dict[str, str] = {}
    args = ["select", "data.csv", "--task", task, "--backend", "numpy",
            "--seed", str(draw(st.integers(0, 99)))]
    cell = st.sampled_from(CELLS) if bad and draw(st.booleans()) else st.sampled_from(NUMBERS)
    if n_rows < 2:  # mutual information needs two records; no records at all is empty data
        case.mark_degenerate("data", "rows", "empty", "records")
    if task == "facility-location":
        rows = [[draw(cell), draw(cell)] for _ in range(n_rows)]
        files["data.csv"] = _csv(rows, ["x", "y"])
        args += ["--grid", draw(st.sampled_from(["2x2", "3x1", "0x2", "ax2"]) if bad else
                                st.sampled_from(["2x2", "3x1"])),
                 "--bounds", "x=0,1", "--bounds", draw(st.sampled_from(
                     ["y=0,1", "y=-1,-0.5", "y=1,0", "y=nan,1"]) if bad else
                     st.sampled_from(["y=0,1", "y=-1,1"]))]
        if draw(st.booleans()):
            bw = draw(st.sampled_from(["0.5", "inf", "nan", "0", "-1", "1e-300", "1e308"])
                      if bad else st.sampled_from(["0.5", "2"]))
            args += ["--bandwidth", bw]
            if bw in ("inf", "nan", "0", "-1"):
                case.mark_bad("bandwidth", "bandwidth")
            elif bw in ("1e-300", "1e308"):
                case.mark_extreme("bandwidth")
        if "0x2" in args or "ax2" in args:
            case.mark_bad("grid", "grid")
        if any(b in args for b in ("y=1,0", "y=nan,1")):
            case.mark_bad("bounds", "bounds")
    elif task == "coverage":
        m = draw(st.integers(1, 4))
        rows = [[draw(st.sampled_from(["0", "1"])) for _ in range(m)] for _ in range(n_rows)]
        if bad and rows and draw(st.booleans()):
            rows[0][0] = draw(st.sampled_from(CELLS))
        files["data.csv"] = _csv(rows, [f"s{j}" for j in range(m)])
    else:
        m = draw(st.integers(1, 3))
        rows = [[draw(st.sampled_from(["0", "1", "2"])) for _ in range(m + 1)]
                for _ in range(n_rows)]
        if bad and rows and draw(st.booleans()):
            rows[0][0] = draw(st.sampled_from(CELLS))
        files["data.csv"] = _csv(rows, [f"c{j}" for j in range(m)] + ["label"])
        args += ["--label", "label", "--bins", "categorical"]
    k = draw(st.sampled_from(["1", "2", "0", "-1", "2.5", "99", "abc"]) if bad else
             st.sampled_from(["1", "2"]))
    args += ["--k", k]
    if k in ("0", "-1", "2.5", "abc"):
        case.mark_bad("k", "k")
    elif k == "99" or k == "2":
        case.mark_degenerate("k", "candidates", "items")
    eps = draw(st.sampled_from(["1", "0.5", "0", "-1", "nan", "inf", "1e308", "1e-320", "abc"])
               if bad else st.sampled_from(["1", "0.5", "3"]))
    args += ["--epsilon", eps]
    if eps in ("0", "-1", "nan", "inf", "abc"):
        case.mark_bad("epsilon", "epsilon")
    elif eps in ("1e308", "1e-320"):
        case.mark_extreme("epsilon")
    if bad and draw(st.integers(0, 3)) == 0:
        args += ["--out", draw(st.sampled_from(["missing_dir/r.json", "data.csv/r.json"]))]
        case.mark_bad("out", "out", "missing_dir", "data.csv", "folder", "directory", "write")
    elif draw(st.integers(0, 3)) == 0:
        args += ["--out", "r.json"]
    if bad and not files["data.csv"].strip():
        case.mark_degenerate("data")
    if bad and draw(st.integers(0, 5)) == 0:
        files["data.csv"] = "\x00\xff garbage \x01\n"
        case.mark_bad("data", "data", "data.csv", "read", "parse", "column")
    if any(c in files["data.csv"] for c in ("nan", "inf", "abc", "1e400", "0x10", "1e308",
                                            "1e-320", "-3", '"1,5"', ",,")) or \
            files["data.csv"].count("\n") <= 1:
        case.mark_degenerate("data", "invalid", "row", "rows", "records", "column")
    return case, args, files


def _run_case(tmp: Path, case: Case, args: list[str], files: dict[str, str],
              audit: bool = False) -> None:
    for name, text in files.items():
        (tmp / name).write_text(text)
    code, out, err = _run_cli(args, tmp, timeout=TIMEOUT * 3)
    _expect(judge(case, args, code, out, err, audit=audit), args, err)


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    return tmp_path


@fuzz_settings(0.25)
@given(call=select_call())
def test_select(workdir: Path, call: tuple[Case, list[str], dict[str, str]]) -> None:
    case, args, files = call
    sub = workdir / f"run{COUNTS['calls']}"
    sub.mkdir()
    _run_case(sub, case, args, files)


@st.composite
def budget_call(draw: Any) -> tuple[Case, list[str], dict[str, str]]:
    action = draw(st.sampled_from(["new", "show"]))
    case = Case(f"cli.budget[{action}]", bad_scale=draw(st.sampled_from([0.0, 1.0])))
    bad = case.bad_scale > 0
    files: dict[str, str] = {"data.csv": "x\n1\n"}
    if action == "new":
        eps = draw(st.sampled_from(["1", "0", "-1", "nan", "inf", "abc", "1e308"]) if bad else
                   st.sampled_from(["1", "2.5"]))
        args = ["budget", "new", "b.json", "--epsilon", eps, "--dataset", "data"]
        if eps in ("0", "-1", "nan", "inf", "abc"):
            case.mark_bad("epsilon", "epsilon")
        elif eps == "1e308":
            case.mark_extreme("epsilon")
        if bad and draw(st.booleans()):
            files["b.json"] = "{}"
            case.mark_bad("b.json", "exists", "b.json")
        return case, args, files
    content = draw(st.sampled_from(["valid", "empty", "garbage", "missing", "truncated"])
                   if bad else st.just("valid"))
    args = ["budget", "show", "b.json"]
    if content != "valid":
        case.mark_bad("b.json", "b.json", "budget", "corrupt", "truncated", "exist", "file")
    return case, args, {**files, "__content__": content}


@fuzz_settings(0.15)
@given(call=budget_call())
def test_budget_command(workdir: Path, call: tuple[Case, list[str], dict[str, str]]) -> None:
    case, args, files = call
    sub = workdir / f"run{COUNTS['calls']}"
    sub.mkdir()
    content = files.pop("__content__", None)
    if content is not None:
        code, _, err = _run_cli(["budget", "new", "b.json", "--epsilon", "1", "--dataset",
                                 "data"], sub, TIMEOUT) if (sub / "data.csv").write_text(
                                     files["data.csv"]) else (0, "", "")
        assert code == 0, err
        text = (sub / "b.json").read_text()
        if content == "empty":
            (sub / "b.json").write_text("")
        elif content == "garbage":
            (sub / "b.json").write_text("\x00not json")
        elif content == "missing":
            (sub / "b.json").unlink()
        elif content == "truncated":
            (sub / "b.json").write_text(text[: len(text) // 2])
    _run_case(sub, case, args, files)


@st.composite
def misc_call(draw: Any) -> tuple[Case, list[str], dict[str, str], bool]:
    cmd = draw(st.sampled_from(["audit", "run", "demo", "top"]))
    case = Case(f"cli.{cmd}", bad_scale=1.0)
    files: dict[str, str] = {}
    if cmd == "audit":
        kind = draw(st.sampled_from(["list", "unknown", "runs0", "eps", "alpha", "json"]))
        if kind == "list":
            return case, ["audit", "--list"], files, True
        if kind == "unknown":
            case.mark_bad("name", "name", "nonsense", "--list", "audit")
            return case, ["audit", "nonsense"], files, True
        args = ["audit", "private_greedy", "--runs", "50", "--seed", "1", "--no-progress"]
        if kind == "runs0":
            case.mark_bad("runs", "runs", "--runs")
            args[3] = draw(st.sampled_from(["0", "-5", "abc"]))
        elif kind == "eps":
            case.mark_bad("epsilon", "epsilon")
            args += ["--epsilon", draw(st.sampled_from(["0", "nan", "inf", "-1", "abc"]))]
        elif kind == "alpha":
            case.mark_bad("alpha", "alpha")
            args += ["--alpha", draw(st.sampled_from(["0", "1", "2", "nan"]))]
        else:
            files["blocker"] = "a file"
            case.mark_bad("json", "json", "blocker", "write", "folder", "directory")
            args += ["--json", "blocker/out.json"]
        return case, args, files, True
    if cmd == "run":
        kind = draw(st.sampled_from(["garbage", "missing", "unknown_example", "out"]))
        if kind == "out":
            files["blocker"] = "a file"
            case.mark_bad("out", "--out", "blocker")
            target = draw(st.sampled_from(["blocker/sub", "blocker/r.csv", "blocker"]))
            return case, ["run", "offline_facility_location", "--out", target, "--no-plots",
                          "--no-progress"], files, False
        case.mark_bad("EXPERIMENT.toml", "toml", "TOML", "experiment", "exp.toml", "example",
                      "nonsense", "file", "found")
        if kind == "garbage":
            files["exp.toml"] = draw(st.sampled_from(["[[[", "method = 3\n", "\x00\x01",
                                                      "seeds = -1\n"]))
            return case, ["run", "exp.toml", "--no-plots", "--no-progress"], files, False
        if kind == "missing":
            return case, ["run", "missing.toml", "--no-plots"], files, False
        return case, ["run", "nonsense_example", "--no-plots"], files, False
    if cmd == "demo":
        kind = draw(st.sampled_from(["seeds0", "k0", "eps", "out"]))
        if kind == "seeds0":
            case.mark_bad("seeds", "seeds", "--seeds")
            return case, ["demo", "--seeds", draw(st.sampled_from(["0", "-1", "1.5"])), "--out",
                          "o"], files, False
        if kind == "k0":
            case.mark_bad("k", "k", "--k")
            return case, ["demo", "--k", draw(st.sampled_from(["0", "-2", "abc"])), "--out",
                          "o"], files, False
        if kind == "eps":
            case.mark_bad("epsilons", "epsilon", "--epsilons")
            return case, ["demo", "--epsilons", draw(st.sampled_from(["0", "nan", "-1"])),
                          "--out", "o"], files, False
        files["blocker"] = "a file"
        case.mark_bad("out", "out", "blocker", "folder", "directory", "write")
        return case, ["demo", "--seeds", "1", "--out", "blocker/sub"], files, False
    case.mark_bad("command", "command", "choose", "invalid choice", "COMMAND", "required",
                  "data", "unrecognized")
    return case, [draw(st.sampled_from(["nonsense", "--bogus", "select"]))], files, False


@fuzz_settings(0.2)
@given(call=misc_call())
def test_other_commands(workdir: Path, call: tuple[Case, list[str], dict[str, str], bool]
                        ) -> None:
    case, args, files, audit = call
    sub = workdir / f"run{COUNTS['calls']}"
    sub.mkdir()
    _run_case(sub, case, args, files, audit=audit)
