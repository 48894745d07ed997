"""Timing and memory helpers shared by the benchmarks (side-by-side runs in one process)."""

from __future__ import annotations

import gc
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass
class Measurement:
    label: str
    seconds: float
    peak_mib: float
    output: Any = None


def measure(label: str, fn: Callable[[], Any], repeat: int = 1, memory: bool = True
            ) -> Measurement:
    """Best wall time of ``repeat`` untraced runs, then (if ``memory``) one more run under
    tracemalloc for the peak of Python-tracked allocations.

    Timing runs are untraced because tracing slows allocation-heavy code unevenly. tracemalloc
    sees numpy's buffers but not memory a C++ extension allocates itself, so the peak memory of
    extension-based peers is a lower bound.
    """
    best = float("inf")
    out = None
    for _ in range(repeat):
        gc.collect()
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    peak = float("nan")
    if memory:
        gc.collect()
        tracemalloc.start()
        fn()
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
    return Measurement(label, best, peak, out)


def table(rows: list[Measurement], reference: str) -> str:
    ref = next(r for r in rows if r.label == reference)
    lines = [f"{'case':<46} {'seconds':>9} {'ratio':>8} {'peak MiB':>9}",
             "-" * 75]
    for r in rows:
        lines.append(f"{r.label:<46} {r.seconds:9.3f} {r.seconds / ref.seconds:8.3f} "
                     f"{r.peak_mib:9.1f}")
    lines.append(f"(ratio = seconds / seconds of '{reference}')")
    return "\n".join(lines)
