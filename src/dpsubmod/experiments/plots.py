"""Shared figures of the experiments (matplotlib, the ``[plot]`` extra, imported lazily).

* :func:`plot_metric_vs_epsilon`: a metric (utility, regret) against epsilon on a log axis, one
  line per method with a spread band over seeds; non-private methods as horizontal lines with
  their band.
* :func:`plot_regret_vs_T`: regret against the horizon on log-log axes, one line per method,
  with the theorem's slope drawn through each method's first point as a reference.
* :func:`plot_privacy_per_step`: the privacy budget each mechanism use spent (bars) and the
  running total by basic composition (line), from a Result, a PrivacyReport, a Ledger, a list
  of PrivacyEvent, or an online Trace (cumulative epsilon per round).

Every plotting function draws into ``ax`` when given (so it fits a grid of subplots), else
into a new ``pyplot`` figure, and returns the :class:`matplotlib.figure.Figure`. None of them
changes the matplotlib backend or writes a file: save with ``fig.savefig(path)`` or
:func:`save_figure`. Programs that only write files (the command line) draw into a
:func:`figure`, which pyplot does not manage, so nothing is left open. Without matplotlib,
:func:`pyplot` and :func:`figure` raise a one-line
:class:`~dpsubmod.experiments.results.MissingDependencyError`.

Example
-------
>>> from dpsubmod.experiments.plots import plot_metric_vs_epsilon, summarize
>>> rows = [{"method": "private_greedy", "epsilon": e, "T": None, "seed": s,
...          "utility": 1 - 0.5 / (e * (s + 1))} for e in (0.5, 2.0) for s in range(3)]
>>> fig = plot_metric_vs_epsilon(summarize(rows, "utility"), ax=figure().subplots())
>>> fig.axes[0].get_xlabel()
'privacy budget epsilon (total)'
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .._atomic import replacing
from ..errors import ValidationError
from .results import MissingDependencyError

__all__ = ["save_figure", "pyplot", "figure", "optional_figure", "axes_of", "axes_row",
           "summarize", "plot_metric_vs_epsilon", "plot_regret_vs_T", "plot_privacy_per_step",
           "privacy_steps"]

_MISSING = "Plots need matplotlib, which is not installed: pip install 'dpsubmod[plot]'."


def pyplot() -> Any:
    """``matplotlib.pyplot`` on whatever backend the user has, or a clear error."""
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise MissingDependencyError(_MISSING) from None
    return plt


def figure(figsize: tuple[float, float] = (7.5, 4.5)) -> Any:
    """A new :class:`matplotlib.figure.Figure` that pyplot does not manage.

    For programs that draw only to save: it needs no display and no backend, and is freed
    when dropped (nothing to close). Draw with ``figure().subplots()``.
    """
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise MissingDependencyError(_MISSING) from None
    return Figure(figsize=figsize)


def optional_figure(figsize: tuple[float, float] = (7.5, 4.5)) -> Any:
    """:func:`figure`, or ``None`` when matplotlib is not installed."""
    try:
        return figure(figsize)
    except MissingDependencyError:
        return None


def axes_of(ax: Any, figsize: tuple[float, float]) -> tuple[Any, Any]:
    """``(figure, axes)`` to draw into: those of ``ax``, or a new pyplot figure's of size
    ``figsize`` when ``ax`` is None."""
    if ax is None:
        return pyplot().subplots(figsize=figsize)
    return ax.figure, ax


def axes_row(axes: Any, n: int, figsize: tuple[float, float]) -> tuple[Any, list[Any]]:
    """``(figure, list of n axes)`` to draw a row of panels into: ``axes`` (any sequence of
    at least ``n`` Axes of one figure), or a new pyplot figure's row of ``n`` panels."""
    if axes is None:
        fig, grid = pyplot().subplots(1, n, figsize=figsize, squeeze=False)
        return fig, list(grid[0])
    axes = list(np.ravel(axes))
    if len(axes) < n:
        raise ValidationError(f"The 'axes' argument needs {n} Axes, one per panel; got "
                              f"{len(axes)}.")
    return axes[0].figure, axes[:n]


def _colors() -> list[str]:
    import matplotlib

    return matplotlib.rcParams["axes.prop_cycle"].by_key()["color"]


def summarize(rows: Sequence[Mapping[str, Any]], metric: str, *,
              by: Sequence[str] = ("method", "epsilon", "T"),
              quantiles: tuple[float, float] = (0.1, 0.9)) -> list[dict[str, Any]]:
    """Mean, standard deviation and quantiles of ``metric`` per group of ``by`` (over seeds).

    Rows whose metric is missing or NaN are left out. Groups keep the order of first
    appearance. ``sd`` uses ``ddof=1`` (0 for a single run).
    """
    groups: dict[tuple, list[float]] = {}
    for r in rows:
        v = r.get(metric)
        if v is None or (isinstance(v, float) and math.isnan(v)):
            continue
        groups.setdefault(tuple(r.get(b) for b in by), []).append(float(v))
    out = []
    lo_q, hi_q = quantiles
    for key, vals in groups.items():
        v = np.asarray(vals)
        out.append({**dict(zip(by, key)), "runs": v.size, "mean": float(v.mean()),
                    "sd": float(v.std(ddof=1)) if v.size > 1 else 0.0,
                    "q_low": float(np.quantile(v, lo_q)), "q_high": float(np.quantile(v, hi_q)),
                    "median": float(np.median(v))})
    return out


def _band(s: Mapping[str, Any], band: str) -> tuple[float, float]:
    if band == "sd":
        return s["mean"] - s["sd"], s["mean"] + s["sd"]
    return s["q_low"], s["q_high"]


def _band_label(band: str) -> str:
    return "bands: mean +/- sd over seeds" if band == "sd" else "bands: 10%-90% over seeds"


def save_figure(fig: Any, path: str | Path, *, dpi: int = 130,
                tight_bbox: bool = True) -> Path:
    """Lay out and write a figure (creating the folder); returns the path written.

    The figure stays open: close a pyplot figure with ``plt.close(fig)`` when done (a
    :func:`figure` needs no closing).
    """
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    # through a fresh temporary file that follows no link, renamed over the figure
    with replacing(path, text=False) as fh:
        fig.savefig(fh, format=path.suffix.lstrip(".").lower() or "png", dpi=dpi,
                    bbox_inches="tight" if tight_bbox else None)
    return path


def _finish(fig: Any, ax: Any, *, legend_outside: bool) -> Any:
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        if legend_outside:
            ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0),
                      borderaxespad=0.0)
        else:
            ax.legend(fontsize=8)
    ax.grid(True, which="major", alpha=0.3)
    return fig


def plot_metric_vs_epsilon(summary: Sequence[Mapping[str, Any]], *, ax: Any = None,
                           ylabel: str = "utility", title: str = "", band: str = "sd",
                           log_y: bool = False) -> Any:
    """A metric against epsilon with spread bands, one line per method.

    Parameters
    ----------
    summary : sequence of dict
        Rows of :func:`summarize` grouped by at least ``method`` and ``epsilon`` (rows with
        several ``T`` values: pass only the rows of one horizon). Rows with ``epsilon=None``
        (non-private methods) are drawn as horizontal lines with their band.
    ax : matplotlib Axes, optional
        Where to draw; default: a new pyplot figure.
    ylabel, title : str
        Axis label and title.
    band : {"sd", "quantile"}, default="sd"
        Mean +/- standard deviation, or the 10%-90% quantile band with the median line.
    log_y : bool, default=False
        A logarithmic y axis.

    Returns
    -------
    matplotlib.figure.Figure
        The figure of ``ax``.
    """
    fig, ax = axes_of(ax, (7.5, 4.5))
    center = "mean" if band == "sd" else "median"
    methods = list(dict.fromkeys(s["method"] for s in summary))
    colors = _colors()
    private_eps = sorted({s["epsilon"] for s in summary if s["epsilon"] is not None})
    for i, method in enumerate(methods):
        color = colors[i % len(colors)]
        pts = [s for s in summary if s["method"] == method]
        if all(s["epsilon"] is None for s in pts):
            s = pts[0]
            lo, hi = _band(s, band)
            ax.axhline(s[center], color=color, linestyle="--", lw=1.2,
                       label=f"{method} (not private)")
            if private_eps and hi > lo:
                ax.axhspan(lo, hi, color=color, alpha=0.08)
            continue
        pts = sorted((s for s in pts if s["epsilon"] is not None), key=lambda s: s["epsilon"])
        e = np.array([s["epsilon"] for s in pts])
        m = np.array([s[center] for s in pts])
        lo, hi = np.array([_band(s, band) for s in pts]).T
        ax.plot(e, m, "o-", color=color, label=method, ms=4)
        ax.fill_between(e, lo, hi, color=color, alpha=0.18, lw=0)
    ax.set_xscale("log")
    if 0 < len(private_eps) <= 12:
        from matplotlib.ticker import FixedLocator, NullLocator

        ax.xaxis.set_major_locator(FixedLocator(private_eps))
        ax.xaxis.set_minor_locator(NullLocator())
        ax.set_xticklabels([f"{e:g}" for e in private_eps])
    if log_y:
        ax.set_yscale("log")
    ax.set_xlabel("privacy budget epsilon (total)")
    ax.set_ylabel(ylabel)
    ax.set_title(title + ("\n" if title else "") + _band_label(band), fontsize=10)
    return _finish(fig, ax, legend_outside=len(methods) > 3)


def plot_regret_vs_T(summary: Sequence[Mapping[str, Any]], *, ax: Any = None,
                     slopes: Mapping[str, float] | None = None, ylabel: str = "regret",
                     title: str = "", band: str = "sd") -> Any:
    """Regret against the horizon on log-log axes, with the theorem's slope as a reference.

    Parameters
    ----------
    summary : sequence of dict
        Rows of :func:`summarize` grouped by ``method``, ``epsilon`` and ``T``; one line per
        (method, epsilon).
    ax : matplotlib Axes, optional
        Where to draw; default: a new pyplot figure.
    slopes : dict, optional
        Method name to the exponent ``a`` of its regret bound ``O(T^a)``; a dashed line of that
        slope is drawn through the method's first point, in its colour.
    ylabel, title : str
        Axis label and title.
    band : {"sd", "quantile"}
        As in :func:`plot_metric_vs_epsilon`; the band is clipped to positive values (log axis).

    Notes
    -----
    Regret against the best *fixed* set in hindsight can be negative: a learner whose sets
    change from round to round may beat every fixed set. When some mean is 0 or below, the y
    axis is symmetric-logarithmic (linear around 0) so that every point is drawn, and slopes
    are fitted on the positive points only.

    Returns
    -------
    matplotlib.figure.Figure
        The figure of ``ax``.
    """
    slopes = dict(slopes or {})
    fig, ax = axes_of(ax, (7.5, 4.8))
    center = "mean" if band == "sd" else "median"
    lines = list(dict.fromkeys((s["method"], s["epsilon"]) for s in summary))
    colors = _colors()
    drawn_slope: set[str] = set()
    all_T: set[float] = set()
    centers = np.array([s[center] for s in summary], dtype=float)
    # the theorem's slope goes through a method's least noisy line: its largest epsilon
    anchor = {m: max((e for mm, e in lines if mm == m),
                     key=lambda e: math.inf if e is None else e) for m, _ in lines}
    # a log axis cannot show regret <= 0, and dropping those points hides results
    signed = bool(np.any(centers[np.isfinite(centers)] <= 0))
    for i, (method, eps) in enumerate(lines):
        color = colors[i % len(colors)]
        pts = sorted((s for s in summary if (s["method"], s["epsilon"]) == (method, eps)),
                     key=lambda s: s["T"])
        T = np.array([s["T"] for s in pts], dtype=float)
        m = np.array([s[center] for s in pts])
        keep = m > 0
        if not keep.any() and not signed:
            continue
        all_T.update(T.tolist())
        lo, hi = np.array([_band(s, band) for s in pts]).T
        label = method if eps is None else f"{method}, eps={eps:g}"
        if keep.sum() >= 2:
            fit = np.polyfit(np.log(T[keep]), np.log(m[keep]), 1)[0]
            label += f" (fitted slope {fit:.2f}"
            label += ")" if keep.all() else f" on the {keep.sum()} positive points)"
        if signed:
            ax.plot(T, m, "o-", color=color, label=label, ms=4)
            ax.fill_between(T, lo, hi, color=color, alpha=0.15, lw=0)
        else:
            floor = m[keep].min() / 10.0
            ax.plot(T[keep], m[keep], "o-", color=color, label=label, ms=4)
            ax.fill_between(T[keep], np.maximum(lo[keep], floor), hi[keep], color=color,
                            alpha=0.15, lw=0)
        if not keep.any():
            continue
        a = slopes.get(method)
        if a is not None and T.size >= 2 and method not in drawn_slope \
                and eps == anchor[method]:
            # the theorem fixes the slope, not the constant: place the line by least squares
            c = float(np.mean(np.log(m[keep]) - a * np.log(T[keep])))
            ax.plot(T, np.exp(c) * T ** a, "--", color=color, lw=1, alpha=0.8,
                    label=f"slope {_frac(a)}: theorem for {method}"
                    + ("" if eps is None or len({e for mm, e in lines if mm == method}) == 1
                       else f" (through eps={eps:g})"))
            drawn_slope.add(method)
    ax.set_xscale("log")
    if signed:
        nonzero = np.abs(centers[np.isfinite(centers) & (centers != 0)])
        lin = 10.0 ** math.floor(math.log10(nonzero.min())) if nonzero.size else 1.0
        ax.set_yscale("symlog", linthresh=lin)
        ax.axhline(0.0, color="0.4", lw=0.8)
    else:
        ax.set_yscale("log")
    if 0 < len(all_T) <= 12:
        from matplotlib.ticker import FixedLocator, NullLocator

        ticks = sorted(all_T)
        ax.xaxis.set_major_locator(FixedLocator(ticks))
        ax.xaxis.set_minor_locator(NullLocator())
        ax.set_xticklabels([f"{t:g}" for t in ticks])
    ax.set_xlabel("horizon T (rounds)")
    ax.set_ylabel(ylabel)
    note = ("\nmeans below 0 beat the best fixed set; symmetric log axis, linear near 0"
            if signed else "")
    ax.set_title(title + ("\n" if title else "") + _band_label(band) + note, fontsize=10)
    return _finish(fig, ax, legend_outside=True)


def _frac(a: float) -> str:
    for d in (2, 3, 4, 5, 6, 8):
        if abs(a * d - round(a * d)) < 1e-9:
            return f"{round(a * d)}/{d}" if round(a * d) % d else f"{round(a * d) // d}"
    return f"{a:g}"


def privacy_steps(source: Any) -> tuple[np.ndarray, str]:
    """Per-step epsilon of a release and a label of where it came from.

    ``source`` is a :class:`~dpsubmod.offline.Result` (its ``privacy.events``), a
    :class:`~dpsubmod.privacy.accounting.PrivacyReport`, a
    :class:`~dpsubmod.privacy.accounting.Ledger`, a sequence of
    :class:`~dpsubmod.privacy.accounting.PrivacyEvent` (an event with ``count=c`` is ``c``
    steps), or an online :class:`~dpsubmod.online.Trace` (the increments of its cumulative
    ``epsilon`` per round).
    """
    if hasattr(source, "privacy") and hasattr(source, "selection"):
        source = source.privacy
        if source is None:
            return np.zeros(0), "not private"
    if hasattr(source, "epsilon") and hasattr(source, "selections"):  # online Trace
        cum = np.asarray(source.epsilon, dtype=float)
        return np.diff(np.concatenate([[0.0], cum])), "per round"
    events = getattr(source, "events", source)
    steps: list[float] = []
    for e in events:
        steps += [float(e.epsilon)] * int(e.count)
    return np.asarray(steps), "per mechanism use"


def plot_privacy_per_step(source: Any, *, ax: Any = None, title: str = "") -> Any:
    """The privacy budget spent per step (bars) and its running sum (line, right axis).

    The running sum is basic composition; when ``source`` carries a composed total (a Result's
    or a PrivacyReport's ``epsilon``), it is drawn as a dashed line labelled with the rule.

    Parameters
    ----------
    source : Result, PrivacyReport, Ledger, sequence of PrivacyEvent or Trace
        See :func:`privacy_steps`.
    ax : matplotlib Axes, optional
        Where to draw the bars (the running sum goes on a twin axis); default: a new pyplot
        figure.
    title : str, optional

    Returns
    -------
    matplotlib.figure.Figure
        The figure of ``ax``.
    """
    fig, ax = axes_of(ax, (7.5, 4.6))
    from matplotlib.ticker import MaxNLocator

    steps, what = privacy_steps(source)
    report = source.privacy if hasattr(source, "selection") else source
    x = np.arange(1, steps.size + 1)
    finite = np.isfinite(steps)
    label = f"epsilon spent {what} (left axis)"
    if steps.size <= 200:
        ax.bar(x[finite], steps[finite], color="tab:blue", alpha=0.6, width=0.8, label=label)
    else:
        # a bar one step wide is thinner than a pixel on a long run: draw stems instead
        spent = finite & (steps > 0)
        ax.vlines(x[spent], 0.0, steps[spent], color="tab:blue", lw=1.5, label=label)
        ax.plot(x[spent], steps[spent], "o", color="tab:blue", ms=4)
    upfront = (what == "per round" and steps.size > 1 and finite.all() and steps[0] > 0
               and not np.any(steps[1:]))
    if upfront:
        ax.annotate(f"epsilon={steps[0]:.3g} for the whole run, charged before round 1;\n"
                    f"rounds 2 to {steps.size} add nothing: every round's data is covered "
                    "by that one statement", xy=(x[0], steps[0]), xytext=(0.2, 0.55),
                    textcoords="axes fraction", fontsize=8,
                    arrowprops={"arrowstyle": "->", "color": "0.3"})
    ax.set_xlabel("round" if what == "per round" else "step (mechanism use)")
    ax.set_ylabel("epsilon of the step")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax2 = ax.twinx()
    cum = np.cumsum(np.where(finite, steps, 0.0))
    ax2.plot(x, cum, color="tab:red", lw=1.8, marker="o" if steps.size <= 30 else None, ms=3,
             label="running sum, basic composition (right axis)")
    top = float(cum[-1]) if cum.size else 1.0
    total = getattr(report, "epsilon", None)
    composition = getattr(report, "composition", None)
    if isinstance(total, float) and math.isfinite(total) and composition is not None:
        delta = getattr(report, "delta", 0.0)
        ax2.axhline(total, color="k", ls="--", lw=1,
                    label=f"reported total: eps={total:.3g}, delta={delta:.2g} ({composition})")
        top = max(top, total)
    ax2.set_ylabel("cumulative epsilon")
    ax2.set_ylim(0.0, 1.25 * top if top > 0 else 1.0)
    peak = float(steps[finite].max()) if finite.any() else 1.0
    ax.set_ylim(0.0, 1.25 * peak if peak > 0 else 1.0)
    events = getattr(getattr(source, "privacy", report), "events", None)
    if events:
        groups: dict[tuple[str, float], int] = {}
        for e in events:
            groups[(e.mechanism, e.epsilon)] = groups.get((e.mechanism, e.epsilon), 0) + e.count
        text = "; ".join(f"{n} x {m} (eps={v:.3g})" for (m, v), n in list(groups.items())[:3])
        ax.text(0.01, 0.97, "ledger: " + text + ("; ..." if len(groups) > 3 else ""),
                transform=ax.transAxes, fontsize=8, va="top",
                bbox={"facecolor": "white", "alpha": 0.85, "edgecolor": "0.8"})
    h1, l1 = ax.get_legend_handles_labels()
    h2, l2 = ax2.get_legend_handles_labels()
    ax.legend(h1 + h2, l1 + l2, fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.16),
              ncol=2 if len(l1 + l2) > 2 else len(l1 + l2), frameon=False)
    ax.set_title(title or "privacy budget spent per step", fontsize=10)
    return fig
