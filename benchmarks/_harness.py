"""Timing, memory, ratio and scaling helpers shared by the benchmarks.

Every case of a comparison runs in the same process, interleaved: round 1 runs each case once,
round 2 runs each case once again, and so on. Ratios are formed *within* a round (both sides saw
the same machine load) and reported as the median over rounds with the min-max spread, so a noisy
neighbour process shows up as a wide spread rather than as a biased ratio.

Memory is the peak resident set size of the process during the call minus the resident set size
just before it (Linux: the peak counter is reset through ``/proc/self/clear_refs`` and freed heap
pages are returned first with ``malloc_trim``). Unlike ``tracemalloc`` it also sees memory that a
C++ or numba extension allocates itself, so the peers' figures are complete. Where that is not
available the harness falls back to ``tracemalloc`` (numpy and Python allocations only) and says
so in the table.
"""

from __future__ import annotations

import ctypes
import gc
import math
import statistics
import time
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

# -- memory --------------------------------------------------------------------------------------

_LIBC: Any = None
try:
    _LIBC = ctypes.CDLL("libc.so.6")
except OSError:  # not glibc: peak RSS still works, only the trim is skipped
    _LIBC = None


def _status_kib(key: str) -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(key):
                return int(line.split()[1])
    raise OSError(key)


def _reset_peak() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def _rss_supported() -> bool:
    try:
        _status_kib("VmHWM:")
    except OSError:
        return False
    return _reset_peak()


MEMORY_METHOD = "peak RSS" if _rss_supported() else "tracemalloc"


def _settle() -> None:
    gc.collect()
    if _LIBC is not None:
        _LIBC.malloc_trim(0)


def run_once(fn: Callable[[], Any]) -> tuple[float, float, Any]:
    """``(seconds, peak extra MiB, output)`` of one call of ``fn``."""
    _settle()
    if MEMORY_METHOD == "peak RSS":
        _reset_peak()
        base = _status_kib("VmRSS:")
        t0 = time.perf_counter()
        out = fn()
        sec = time.perf_counter() - t0
        peak = (_status_kib("VmHWM:") - base) / 1024.0
    else:
        # tracemalloc slows allocation-heavy code, so time one untraced run, trace another.
        t0 = time.perf_counter()
        out = fn()
        sec = time.perf_counter() - t0
        _settle()
        tracemalloc.start()
        fn()
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
    return sec, peak, out


# -- cases and measurements -----------------------------------------------------------------------

@dataclass
class Case:
    """One contender: ``fn()`` is timed; ``warmup()`` (if given) runs once, untimed, before the
    first round, so one-off costs (imports, numba compilation) are not charged to a round."""

    label: str
    fn: Callable[[], Any]
    warmup: Callable[[], Any] | None = None


@dataclass
class Measurement:
    label: str
    seconds: list[float] = field(default_factory=list)
    peak_mib: list[float] = field(default_factory=list)
    output: Any = None
    error: str | None = None

    @property
    def median_s(self) -> float:
        return statistics.median(self.seconds) if self.seconds else math.nan

    @property
    def median_mib(self) -> float:
        return statistics.median(self.peak_mib) if self.peak_mib else math.nan

    @property
    def ok(self) -> bool:
        return bool(self.seconds)


def measure_cases(cases: Sequence[Case], rounds: int = 1) -> dict[str, Measurement]:
    """Run every case ``rounds`` times, interleaved (see the module docstring).

    A case whose peer library is missing (ImportError) is recorded with its error and skipped.
    """
    res = {c.label: Measurement(c.label) for c in cases}
    for c in cases:
        if c.warmup is not None:
            try:
                c.warmup()
            except ImportError as exc:
                res[c.label].error = f"not installed ({exc.name}); pip install -e '.[bench]'"
    for _ in range(rounds):
        for c in cases:
            m = res[c.label]
            if m.error:
                continue
            try:
                sec, peak, out = run_once(c.fn)
            except ImportError as exc:
                m.error = f"not installed ({exc.name}); pip install -e '.[bench]'"
                continue
            m.seconds.append(sec)
            m.peak_mib.append(peak)
            m.output = out
    return res


def measure(label: str, fn: Callable[[], Any], repeat: int = 1) -> Measurement:
    """A single case, ``repeat`` rounds."""
    return measure_cases([Case(label, fn)], repeat)[label]


@dataclass
class Ratio:
    """Per-round ratio ``num / den``: median and spread over rounds."""

    num: str
    den: str
    values: list[float]

    @property
    def median(self) -> float:
        return statistics.median(self.values) if self.values else math.nan

    @property
    def spread(self) -> tuple[float, float]:
        return (min(self.values), max(self.values)) if self.values else (math.nan, math.nan)

    def fmt(self) -> str:
        lo, hi = self.spread
        return f"{self.median:.3f} [{lo:.3f}-{hi:.3f}]"


def ratio(meas: dict[str, Measurement], num: str, den: str) -> Ratio:
    a, b = meas[num], meas[den]
    if not (a.ok and b.ok):
        return Ratio(num, den, [])
    return Ratio(num, den, [x / y for x, y in zip(a.seconds, b.seconds)])


def table(meas: dict[str, Measurement], reference: str, *, width: int = 48) -> str:
    """Median seconds, per-round ratio to ``reference`` (median [min-max]) and peak memory."""
    lines = [f"{'case':<{width}} {'median s':>9} {'ratio to ref [spread]':>24} "
             f"{'peak MiB':>9}", "-" * (width + 45)]
    ref_ok = reference in meas and meas[reference].ok
    for label, m in meas.items():
        if not m.ok:
            lines.append(f"{label:<{width}} {m.error or 'failed'}")
            continue
        r = ratio(meas, label, reference).fmt() if ref_ok else "n/a"
        lines.append(f"{label:<{width}} {m.median_s:9.3f} {r:>24} {m.median_mib:9.1f}")
    rounds = max((len(m.seconds) for m in meas.values()), default=0)
    lines.append(f"(ratio = seconds / seconds of '{reference}' in the same round; median "
                 f"[min-max] over {rounds} round(s); memory = {MEMORY_METHOD} above the "
                 "level before the call)")
    return "\n".join(lines)


# -- targets and scaling --------------------------------------------------------------------------

@dataclass
class Target:
    name: str
    measured: float
    bound: float
    detail: str = ""
    higher_is_better: bool = False

    @property
    def verdict(self) -> str:
        if math.isnan(self.measured):
            return "N/A"
        ok = self.measured >= self.bound if self.higher_is_better else self.measured <= self.bound
        return "PASS" if ok else "MISS"

    def line(self) -> str:
        op = ">=" if self.higher_is_better else "<="
        return (f"[{self.verdict}] {self.name}: {self.measured:.3g} (target {op} "
                f"{self.bound:.3g}){'  ' + self.detail if self.detail else ''}")


def loglog_slope(ns: Sequence[float], ys: Sequence[float]) -> float:
    """Least-squares slope of ``log y`` against ``log n`` (the exponent ``a`` in ``y ~ n^a``)."""
    pts = [(math.log(n), math.log(y)) for n, y in zip(ns, ys) if y > 0 and n > 0]
    if len(pts) < 2:
        return math.nan
    mx = sum(p[0] for p in pts) / len(pts)
    my = sum(p[1] for p in pts) / len(pts)
    sxx = sum((p[0] - mx) ** 2 for p in pts)
    sxy = sum((p[0] - mx) * (p[1] - my) for p in pts)
    return sxy / sxx


@dataclass
class Report:
    """What a benchmark hands back to ``run.py``: printed tables, targets, exponents."""

    title: str
    tables: list[str] = field(default_factory=list)
    targets: list[Target] = field(default_factory=list)
    exponents: dict[str, float] = field(default_factory=dict)

    def print_section(self, text: str) -> None:
        print(text, flush=True)
        self.tables.append(text)
