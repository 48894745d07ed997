"""Plots fit notebooks: each plotting function returns a Figure, draws into a given ``ax``,
leaves the matplotlib backend alone and writes nothing unless asked."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("matplotlib")

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from dpsubmod.errors import DPSubmodError  # noqa: E402
from dpsubmod.experiments import plots  # noqa: E402


def rows(metric="utility", Ts=(None,)):
    return [{"method": m, "epsilon": e, "T": T, "seed": s,
             metric: (1.0 if e is None else 1 - 0.5 / (e * (s + 1))) * (T or 1)}
            for m, eps in (("greedy", [None]), ("private_greedy", [0.5, 2.0, 8.0]))
            for e in eps for T in Ts for s in range(3)]


def release():
    import numpy as np

    from dpsubmod import maximize
    from dpsubmod.functions import FacilityLocation

    rng = np.random.default_rng(0)
    f = FacilityLocation.from_records(rng.random((50, 2)), rng.random((8, 2)), bandwidth=0.2)
    return maximize(f, 3, method="private_greedy", epsilon=1.0, rng=0)


CASES = {
    "metric_vs_epsilon": lambda ax: plots.plot_metric_vs_epsilon(
        plots.summarize(rows(), "utility"), ax=ax, title="t"),
    "regret_vs_T": lambda ax: plots.plot_regret_vs_T(
        plots.summarize(rows("regret", Ts=(10, 100, 1000)), "regret"), ax=ax,
        slopes={"private_greedy": 0.5}),
    "privacy_per_step": lambda ax: plots.plot_privacy_per_step(release(), ax=ax),
}


@pytest.mark.parametrize("name", list(CASES))
def test_draws_into_the_given_axes_and_returns_its_figure(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    fig = plots.figure((6, 4))
    ax = fig.subplots(1, 2)[1]
    before = plt.get_fignums()
    out = CASES[name](ax)
    assert out is fig and isinstance(out, Figure)
    assert ax.has_data() and not fig.axes[0].has_data()
    assert plt.get_fignums() == before  # no pyplot figure was opened
    assert list(tmp_path.iterdir()) == []  # nothing written


@pytest.mark.parametrize("name", list(CASES))
def test_without_axes_a_new_pyplot_figure(name):
    before = set(plt.get_fignums())
    fig = CASES[name](None)
    try:
        assert isinstance(fig, Figure) and fig.number not in before
        assert fig.axes and fig.axes[0].has_data()
    finally:
        plt.close(fig)


def test_save_figure_writes_only_where_asked(tmp_path):
    fig = plots.plot_metric_vs_epsilon(plots.summarize(rows(), "utility"),
                                       ax=plots.figure().subplots())
    path = plots.save_figure(fig, tmp_path / "sub" / "u.png")
    assert path == tmp_path / "sub" / "u.png" and path.stat().st_size > 10_000


def test_axes_row_needs_one_axes_per_panel():
    fig = plots.figure()
    two = fig.subplots(1, 2)
    got, panels = plots.axes_row(two, 2, (4, 4))
    assert got is fig and list(panels) == list(two)
    with pytest.raises(DPSubmodError, match="2 Axes"):
        plots.axes_row(two[:1], 2, (4, 4))


def test_the_backend_is_never_changed(tmp_path):
    # A notebook's backend (here: pdf, which no code of ours would pick) must survive a plot.
    code = textwrap.dedent("""
        import matplotlib
        matplotlib.use("pdf")
        from dpsubmod.experiments import plots
        rows = [{"method": "m", "epsilon": e, "T": None, "u": e} for e in (1.0, 2.0)]
        plots.plot_metric_vs_epsilon(plots.summarize(rows, "u"))
        assert matplotlib.get_backend() == "pdf", matplotlib.get_backend()
    """)
    env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path,
                       env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    assert list(tmp_path.iterdir()) == []


def test_the_experiment_scripts_plot_functions_take_axes():
    from dpsubmod.experiments import online_maximization, online_minimization

    rows_T = [{"learner": "SubmodPFTAL", "T": T, "epsilon": 1.0, "expected_regret": T ** 0.5,
               "private": True} for T in (8, 16, 32)]
    ax = plots.figure().subplots()
    assert online_minimization.plot_regret_vs_T(rows_T, ax=ax) is ax.figure
    summary = [{"learner": "FIDP", "T": T, "epsilon": e, "regret_greedy_mean": T / 10}
               for T in (8, 16) for e in (1.0, 10.0)]
    ax = plots.figure().subplots()
    assert online_maximization.plot_regret_vs_epsilon(summary, 16, ax=ax) is ax.figure


def test_regret_below_zero_is_drawn_not_dropped():
    summary = plots.summarize(
        [{"method": "L", "epsilon": 1.0, "T": T, "seed": s, "regret": r + s}
         for T, r in ((10, 2.0), (100, -3.0), (1000, 5.0)) for s in (0, 1)], "regret")
    fig = plots.plot_regret_vs_T(summary, ax=plots.figure().subplots(), slopes={"L": 0.5})
    ax = fig.axes[0]
    assert ax.get_yscale() == "symlog"
    line = ax.get_lines()[0]
    assert list(line.get_xdata()) == [10, 100, 1000]  # the negative mean is a point too
    assert line.get_ydata()[1] == pytest.approx(-2.5)
    assert "on the 2 positive points" in line.get_label()
    assert "below 0" in ax.get_title()


def test_an_online_run_charged_before_round_1_shows_its_charge():
    import math

    from dpsubmod.online import SubmodPFTAL, ftl_trap_stream, run

    tr = run(SubmodPFTAL(3, T=400, M=1.0, epsilon=2.0, rng=0),
             ftl_trap_stream([0.5, -0.3, 0.2], 400))
    steps, what = plots.privacy_steps(tr)
    assert what == "per round" and steps[0] == 2.0 and not steps[1:].any()
    fig = plots.plot_privacy_per_step(tr, ax=plots.figure().subplots())
    ax = fig.axes[0]
    stems = [c for c in ax.collections if len(c.get_segments()) == 1]
    assert stems and math.isclose(stems[0].get_segments()[0][1][1], 2.0)
    assert any("charged before round 1" in t.get_text() for t in ax.texts)
