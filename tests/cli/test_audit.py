"""End-to-end: ``dpsubmod audit`` as a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dpsubmod.cli", "audit", *args],
                          capture_output=True, text=True, timeout=300)


def test_list_and_help():
    p = run("--list")
    assert p.returncode == 0
    names = [line.split()[0] for line in p.stdout.splitlines()]
    assert {"laplace", "exponential", "private_greedy", "fidp"} <= set(names)
    assert run("--help").returncode == 0


def test_calibrated_algorithm_is_consistent_and_writes_json(tmp_path):
    out = tmp_path / "audit.json"
    p = run("private_greedy", "--epsilon", "1", "--runs", "2000", "--json", str(out))
    assert p.returncode == 0, p.stderr
    assert "consistent with the claim" in p.stdout and "epsilon >= " in p.stdout
    res = json.loads(out.read_text())
    # The audit's false-alarm rate is alpha = 0.05; the seed is fixed (measured bound 0.46).
    assert res["violation"] is False and res["epsilon_lower_bound"] <= res["epsilon_claimed"]
    assert res["epsilon_claimed"] == 1.0 and res["runs_per_input"] == 2000


def test_miscalibrated_variant_is_caught():
    # A quarter of the calibrated noise: the true epsilon is 4; measured lower bound 2.6.
    p = run("private_greedy", "--noise-factor", "0.25")
    assert p.returncode == 1
    assert "VIOLATION" in p.stdout


def test_bad_input_is_a_one_line_error(tmp_path):
    out = tmp_path / "a.json"
    for args in (("laplace", "--epsilon", "0"), ("nope",), ("gaussian", "--delta", "0"),
                 ("laplace", "--noise-factor", "-1")):
        p = run(*args, "--json", str(out))
        assert p.returncode == 2, args
        assert len(p.stderr.strip().splitlines()) == 1 and "error" in p.stderr
        assert not out.exists()


def test_exit_statuses_are_documented_and_distinct():
    # 0 consistent, 1 violation (both measured above), 2 usage error: stated in the help
    text = " ".join(run("--help").stdout.split())
    assert "Exit status: 0 when the runs are consistent with the claim, 1 when the bound " \
           "exceeds the claim (a violation), 2 for a usage error" in text
    from dpsubmod.cli.audit import EXIT_CONSISTENT, EXIT_VIOLATION

    assert len({EXIT_CONSISTENT, EXIT_VIOLATION, 2}) == 3


def test_usage_errors_name_the_option_and_run_nothing(tmp_path, capsys):
    from dpsubmod.cli import main

    (tmp_path / "blocker").write_text("a file")
    for args, option in ((("--runs", "5"), "'--runs'"), (("--alpha", "1"), "'--alpha'"),
                         (("--workers", "0"), "'--workers'"), (("--seed", "-1"), "'--seed'"),
                         (("--epsilon", "inf"), "'--epsilon'"),
                         (("--noise-factor", "nan"), "'--noise-factor'"),
                         (("--json", str(tmp_path / "blocker" / "a.json")), "--json"),
                         (("--runs", "2.5"), "--runs")):
        # in this process: no signal is involved, and a start-up per case would dominate
        try:
            code = main(["audit", "private_greedy", *args])
        except SystemExit as exc:  # argparse's usage errors
            code = exc.code
        out, err = capsys.readouterr()
        assert code == 2, (args, err)
        assert out == "" and "Traceback" not in err
        lines = err.strip().splitlines()
        assert len(lines) == 1 and option in lines[0], (args, lines)
