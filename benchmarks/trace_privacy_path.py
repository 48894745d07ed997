"""Trace the privacy path of a public call, from the call to its first noise draw.

Measured at run time with :func:`sys.setprofile` (Python 3.11 has no ``sys.monitoring``):

* **files**: the distinct dpsubmod source files whose functions run before the first draw;
* **cross-file calls**: calls from a function of one dpsubmod file into one of another;
* **epsilon validations**: outermost calls of an epsilon check (:data:`EPSILON_CHECKS`, and
  ``check_real`` whose ``name`` is ``"epsilon"``); a check called inside another counts once;
* **first draw**: the first call of a noise backend's draw method (:data:`BACKEND_DRAWS`, or
  running a prepared secure release) or of a ``dpsubmod/privacy`` function whose code calls a
  numpy ``Generator`` sampling method (:data:`GENERATOR_DRAWS`; numpy's ``Generator`` methods
  emit no profiler event of their own, so the function that calls one marks the draw).

Everything up to and including the first draw counts; the call then runs to its end untraced.
One untraced run comes first, so that one-time imports are not counted.

Run ``python benchmarks/trace_privacy_path.py`` (``--by-file`` lists the files and the epsilon
checks by call site; ``--methods`` adds every registered private offline method through
``maximize``).
"""

from __future__ import annotations

import argparse
import contextlib
import dis
import inspect
import io
import sys
import tempfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

import numpy as np

import dpsubmod
from dpsubmod import Budget
from dpsubmod.cli import main as command
from dpsubmod.functions import FacilityLocation, Modular
from dpsubmod.online import SubmodPFTAL, run
from dpsubmod.privacy.backends import NoiseBackend

PACKAGE = Path(dpsubmod.__file__).resolve().parent
PRIVACY = PACKAGE / "privacy"

#: Functions that validate an epsilon, by (file relative to the package, function name).
EPSILON_CHECKS = {
    ("_validation.py", "check_epsilon"),
    ("privacy/events.py", "check_epsilon_finite"),
    ("privacy/_inputs.py", "_epsilon"),
    ("online/_checks.py", "check_finite_epsilon"),
}

#: Draw methods of a :class:`~dpsubmod.privacy.backends.NoiseBackend` (a ``Release`` is a
#: secure backend's prepared draw, run when called).
BACKEND_DRAWS = {"add_laplace", "add_gaussian", "add_l2_laplace", "exponential",
                 "report_noisy_max", "permute_and_flip"}

#: The sampling methods of a numpy ``Generator``: a ``privacy/`` function naming one draws.
GENERATOR_DRAWS = frozenset(m for m in dir(np.random.Generator) if not m.startswith("_")) - {
    "bit_generator", "spawn"}

_GENERATOR = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR
_RESUME = dis.opmap["RESUME"]


def _resumed(frame: FrameType) -> bool:
    """Whether a "call" event resumes a generator (the profiler reports every resumption as a
    call; only the first entry, at ``RESUME 0``, is one)."""
    code = frame.f_code
    if not code.co_flags & _GENERATOR:
        return False
    i, raw = frame.f_lasti, code.co_code
    return not (0 <= i < len(raw) - 1 and raw[i] == _RESUME and raw[i + 1] == 0)


@dataclass
class PathTrace:
    """What :func:`trace` measured."""

    files: set[str] = field(default_factory=set)
    cross_file_calls: int = 0
    calls: int = 0
    epsilon_checks: Counter = field(default_factory=Counter)
    first_draw: str | None = None

    @property
    def epsilon_validations(self) -> int:
        return sum(self.epsilon_checks.values())


def _rel(filename: str) -> str | None:
    """The path relative to the package of a dpsubmod source file, else None."""
    try:
        return Path(filename).resolve().relative_to(PACKAGE).as_posix()
    except ValueError:
        return None


class _Tracer:
    def __init__(self) -> None:
        self.out = PathTrace()
        self.rel: dict[str, str | None] = {}  # filename -> relative path (cached)
        self.open_checks: set[int] = set()  # frames of epsilon checks still running
        self.drawing: dict[Any, bool] = {}  # code object -> calls a Generator sampling method
        self.done = False

    def where(self, frame: FrameType | None) -> str | None:
        if frame is None:
            return None
        name = frame.f_code.co_filename
        if name not in self.rel:
            self.rel[name] = _rel(name)
        return self.rel[name]

    def __call__(self, frame: FrameType, event: str, arg: Any) -> None:
        if self.done:
            return
        if event == "c_call":
            owner = getattr(arg, "__self__", None)
            if isinstance(owner, np.random.Generator):
                here = self.where(frame)
                if here is not None and here.startswith("privacy/"):
                    self.stop(f"Generator.{arg.__name__} from {here}:{frame.f_lineno}")
            return
        if event == "return":
            self.open_checks.discard(id(frame))
            return
        if event != "call":
            return
        here = self.where(frame)
        if here is None or _resumed(frame):
            return
        code = frame.f_code
        out = self.out
        out.calls += 1
        out.files.add(here)
        caller = self.where(frame.f_back)
        if caller is not None and caller != here:
            out.cross_file_calls += 1
        name = code.co_name
        if (here, name) in EPSILON_CHECKS or (
                name == "check_real" and frame.f_locals.get("name") == "epsilon"):
            if not self.open_checks:
                back = frame.f_back
                site = f"{caller}:{back.f_lineno}" if back is not None else "?"
                out.epsilon_checks[f"{name} <- {site}"] += 1
            self.open_checks.add(id(frame))
        if here.startswith("privacy/") and self.draws_noise(code):
            self.stop(f"{name} ({here}:{code.co_firstlineno}) calls a Generator")
        elif name in BACKEND_DRAWS and isinstance(frame.f_locals.get("self"), NoiseBackend):
            self.stop(f"{type(frame.f_locals['self']).__name__}.{name} ({here})")
        elif name == "__call__" and here == "privacy/_noise_backend.py":
            self.stop(f"Release.__call__ ({here})")

    def draws_noise(self, code: Any) -> bool:
        """Whether a function's code calls a ``Generator`` sampling method (cached)."""
        hit = self.drawing.get(code)
        if hit is None:
            hit = self.drawing[code] = bool(GENERATOR_DRAWS.intersection(code.co_names))
        return hit

    def stop(self, what: str) -> None:
        self.out.first_draw = what
        self.done = True


def trace(call: Callable[[], Any], *, warm: bool = True) -> PathTrace:
    """Run ``call()`` under the profiler and measure its privacy path up to the first draw.

    Parameters
    ----------
    call : callable
        The public call, without arguments (it is run twice with ``warm``).
    warm : bool, default=True
        Run ``call()`` once untraced first, so that one-time imports are not counted.

    Returns
    -------
    PathTrace
    """
    if warm:
        call()
    tracer = _Tracer()
    previous = sys.getprofile()
    sys.setprofile(tracer)
    try:
        call()
    finally:
        sys.setprofile(previous)
    return tracer.out


# ------------------------------------------------------------------------------------------------
# the paths of the issue


def private_greedy_call(n_records: int = 200, n_sites: int = 20, k: int = 5) -> Callable[[], Any]:
    """``dpsubmod.maximize(f, k, method="private_greedy", epsilon=1.0, rng=0)`` (the README's
    call) on a small facility-location instance."""
    rng = np.random.default_rng(0)
    f = FacilityLocation.from_records(rng.random((n_records, 2)), rng.random((n_sites, 2)),
                                      similarity="gaussian", bandwidth=0.1)
    return lambda: dpsubmod.maximize(f, k, method="private_greedy", epsilon=1.0, rng=0)


def submod_pftal_call(n: int = 4, T: int = 5) -> Callable[[], Any]:
    """Construct a ``SubmodPFTAL`` charged to a ``Budget`` and play it (``online.run``) on a
    stream of random modular costs until its first noise draw (the user's budget is built
    before the call)."""
    rng = np.random.default_rng(1)
    stream = [Modular(rng.uniform(-1.0, 1.0, n) / n) for _ in range(T)]

    budget = Budget(10.0)  # charged once by the untraced run and once by the traced one

    def call() -> Any:
        learner = SubmodPFTAL(n, T=T, M=1.0, epsilon=1.0, budget=budget, rng=0)
        return run(learner, stream)

    return call


def select_call(n_records: int = 200, grid: int = 4, k: int = 3,
                method: str = "private_greedy") -> Callable[[], Any]:
    """``dpsubmod select riders.csv --task facility-location --grid GxG --bounds x=0,1
    --bounds y=0,1 --k K --epsilon 1 --seed 0 --method METHOD`` (the command line's private
    selection, a seeded simulation) on a file of random records, its output discarded."""
    folder = tempfile.TemporaryDirectory()  # removed when the call is collected
    data = Path(folder.name) / "riders.csv"
    rows = np.random.default_rng(2).random((n_records, 2)).tolist()
    data.write_text("x,y\n" + "".join(f"{x!r},{y!r}\n" for x, y in rows))
    argv = ["select", str(data), "--task", "facility-location", "--grid", f"{grid}x{grid}",
            "--bounds", "x=0,1", "--bounds", "y=0,1", "--k", str(k), "--epsilon", "1",
            "--seed", "0", "--method", method]

    def call() -> Any:
        with contextlib.redirect_stdout(io.StringIO()):
            status = command(argv)
        if status != 0:
            raise RuntimeError(f"dpsubmod {' '.join(argv)} exited with status {status}")
        return folder

    return call


CASES = {
    "private_greedy": private_greedy_call,
    "SubmodPFTAL": submod_pftal_call,
    "dpsubmod select": select_call,
}


def method_calls() -> dict[str, Callable[[], Any]]:
    """Every registered private offline method through its public entry (``maximize`` or
    ``maximize_ksubmodular``), on small instances (``--methods``)."""
    from dpsubmod.functions.ksubmodular import KFacilityLocation
    from dpsubmod.offline import list_methods

    rng = np.random.default_rng(0)
    f = FacilityLocation.from_records(rng.random((200, 2)), rng.random((20, 2)),
                                      similarity="gaussian", bandwidth=0.1)
    kf = KFacilityLocation(rng.random((2, 20, 6)), max_similarity=1.0)
    options = {"private_greedy_decomposable": {"delta": 1e-6},
               "private_continuous_greedy": {"steps": 4},
               "private_continuous_greedy_layers": {"steps": 4},
               "dpcg": {"steps": 4}, "dpcg_curvature": {"steps": 4}}
    out: dict[str, Callable[[], Any]] = {}
    for name in list_methods(private=True):
        opts = options.get(name, {})
        out[name] = (lambda n=name, o=opts: dpsubmod.maximize(f, 5, n, epsilon=1.0, rng=0, **o))
    for name in list_methods(private=True, kind="ksubmodular"):
        out[name] = (lambda n=name: dpsubmod.maximize_ksubmodular(kf, 3, n, epsilon=1.0, rng=0))
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--by-file", action="store_true",
                        help="list the files touched and every epsilon check by call site")
    parser.add_argument("--methods", action="store_true",
                        help="also trace every registered private offline method")
    args = parser.parse_args(argv)
    rows = [(name, trace(make())) for name, make in CASES.items()]
    if args.methods:
        rows += [(name, trace(call)) for name, call in method_calls().items()]
    print(f"{'path':<32} {'files':>5} {'cross-file calls':>16} {'calls':>6} "
          f"{'eps validations':>15}  first draw")
    for name, t in rows:
        print(f"{name:<32} {len(t.files):>5} {t.cross_file_calls:>16} {t.calls:>6} "
              f"{t.epsilon_validations:>15}  {t.first_draw or 'none found'}")
    if args.by_file:
        for name, t in rows:
            print(f"\n{name}: files")
            for f in sorted(t.files):
                print(f"  {f}")
            print(f"{name}: epsilon checks (check <- call site: count)")
            for site, c in sorted(t.epsilon_checks.items()):
                print(f"  {site}: {c}")
    if any(t.first_draw is None for _, t in rows):
        sys.exit(1)


if __name__ == "__main__":
    main()
