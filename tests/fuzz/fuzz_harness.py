"""The contract every fuzzed call is held to, and the counts the suite reports.

One call of a public entry point must end in exactly one of two ways:

* a **result** that passes the entry point's own check (feasible, on the ground set, finite,
  privacy no larger than requested, the budget charged what the result states);
* a **clean refusal**: a :class:`~dpsubmod.errors.DPSubmodError` whose message names the user's
  argument (one the generator made bad, or another parameter of the call) and no internal name,
  raised with the budget's events and the caller's generator untouched.

Anything else is a failure of one of these kinds: ``crash`` (another exception type),
``hang`` (the call outlived its time limit), ``warning`` (a numpy/scipy/Python warning escaped:
calls run with warnings as errors), ``accepted_bad`` (a bad input gave a result),
``wrong_result`` (a result failed its check), ``refused_valid`` (an ordinary valid input was
refused), ``bad_message`` (the refusal names no user argument, or an internal one),
``charged_on_error`` / ``rng_on_error`` (a refusal changed the budget or the generator).

Known failures in code owned elsewhere are listed in :data:`KNOWN`; a call whose failure matches
one is counted as ``known`` (and pinned by a strict xfail test that flips when it is fixed).
"""

from __future__ import annotations

import collections
import copy
import faulthandler
import os
import re
import signal
import sys
import threading
import traceback
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import hypothesis
import numpy as np
from hypothesis import HealthCheck, settings

from dpsubmod.errors import DPSubmodError, NonFiniteObjectiveError

# -- profiles -------------------------------------------------------------------------------------

#: Examples per test in CI (fixed seed); ``DPSUBMOD_FUZZ_EXAMPLES`` overrides it (the on-demand
#: profile, e.g. ``DPSUBMOD_FUZZ_EXAMPLES=300``), ``DPSUBMOD_FUZZ_SEED`` picks a non-derandomized
#: run with that seed.
CI_EXAMPLES = 25
EXAMPLES = int(os.environ.get("DPSUBMOD_FUZZ_EXAMPLES", CI_EXAMPLES))
LONG = "DPSUBMOD_FUZZ_EXAMPLES" in os.environ
#: Seconds one call may take before it counts as a hang.
TIMEOUT = float(os.environ.get("DPSUBMOD_FUZZ_TIMEOUT", "20"))


def fuzz_settings(weight: float = 1.0) -> Callable[[Any], Any]:
    """Hypothesis settings of one fuzz test: ``weight`` scales its share of the examples.

    CI derandomizes (the same examples on every run, no example database), so the suite is a
    fixed regression test; an on-demand run draws fresh examples, from ``DPSUBMOD_FUZZ_SEED``
    when it is set.
    """
    fixed = os.environ.get("DPSUBMOD_FUZZ_SEED")
    chosen = settings(
        max_examples=max(1, round(EXAMPLES * weight)),
        derandomize=not LONG,
        database=None,
        deadline=None,
        print_blob=True,
        suppress_health_check=list(HealthCheck),
    )

    def deco(test: Any) -> Any:
        test = chosen(test)
        return hypothesis.seed(int(fixed))(test) if LONG and fixed is not None else test

    return deco


# -- counts ---------------------------------------------------------------------------------------

COUNTS: collections.Counter[str] = collections.Counter()
ENTRY_COUNTS: collections.Counter[str] = collections.Counter()
KNOWN_COUNTS: collections.Counter[str] = collections.Counter()
FAILURES: list[str] = []

FAILURE_KINDS = ("crash", "hang", "warning", "accepted_bad", "wrong_result", "refused_valid",
                 "bad_message", "charged_on_error", "rng_on_error")


def summary_lines() -> list[str]:
    calls = COUNTS["calls"]
    if not calls:
        return []
    lines = [
        f"fuzz: {calls} calls: {COUNTS['result']} results, {COUNTS['refusal']} clean refusals, "
        f"{COUNTS['known']} known failures (strict xfail, owned elsewhere), "
        f"{sum(COUNTS[k] for k in FAILURE_KINDS)} failures",
        "fuzz: failures by kind: " + ", ".join(f"{k} {COUNTS[k]}" for k in FAILURE_KINDS),
    ]
    if KNOWN_COUNTS:
        lines.append("fuzz: known failures: " + ", ".join(
            f"{k} {v}" for k, v in sorted(KNOWN_COUNTS.items())))
    lines.append(f"fuzz: {len(ENTRY_COUNTS)} entry points, calls per family: " + ", ".join(
        f"{k} {v}" for k, v in sorted(_families().items())))
    return lines


def _families() -> dict[str, int]:
    fam: collections.Counter[str] = collections.Counter()
    for entry, n in ENTRY_COUNTS.items():
        fam[entry.split("[")[0].split(".")[0]] += n
    return dict(fam)


# -- time limit -----------------------------------------------------------------------------------

class CallTimeout(BaseException):
    """Raised in the fuzzed call when it outlives its time limit (a BaseException, so that
    library code catching Exception cannot swallow it)."""


def _alarm(signum: int, frame: Any) -> None:
    raise CallTimeout()


def _with_deadline(fn: Callable[[], Any], seconds: float) -> Any:
    """Run ``fn()`` with a time limit.

    On the main thread of a POSIX process a real-time interval timer interrupts the call (the
    CI case). Elsewhere the call runs in a daemon thread that is abandoned at the deadline. A
    call stuck inside C code that never returns to the interpreter is caught by a faulthandler
    watchdog, which dumps every thread's stack and ends the process after twice the limit
    rather than letting CI hang.
    """
    faulthandler.dump_traceback_later(2 * seconds + 30, exit=True)
    try:
        if hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread():
            old = signal.signal(signal.SIGALRM, _alarm)
            signal.setitimer(signal.ITIMER_REAL, seconds)
            try:
                return fn()
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
                signal.signal(signal.SIGALRM, old)
        box: dict[str, Any] = {}

        def target() -> None:
            try:
                box["value"] = fn()
            except BaseException as exc:  # noqa: BLE001 - handed back to the caller
                box["error"] = exc

        th = threading.Thread(target=target, daemon=True)
        th.start()
        th.join(seconds)
        if th.is_alive():
            raise CallTimeout()
        if "error" in box:
            raise box["error"]
        return box.get("value")
    finally:
        faulthandler.cancel_dump_traceback_later()


# -- warnings -------------------------------------------------------------------------------------

#: Warnings dpsubmod issues on purpose (DESIGN: impossible values are clipped with a warning,
#: never silently). Everything else escaping a call is a leak.
INTENTIONAL_WARNINGS = (
    r".*which is not a probability; clipped to 1",
    r".*the smoothing radius zeta = .* exceeds the inner radius",
    r"minimize\(method='min-norm-point'\) stopped after",
    # a seed passed with the secure backend (SeedWarning): the seed cannot make the run repeat
    r".* does not make a run on the (secure|opendp) backend repeat",
)


# -- the case -------------------------------------------------------------------------------------

@dataclass
class Case:
    """What the generator knows about one call.

    Attributes
    ----------
    entry : str
        The entry point, e.g. ``"maximize[private_greedy]"``.
    bad : dict
        Arguments made bad, each with the words one of which a refusal must contain.
    extreme : dict
        Arguments with valid but extreme values (1e308, 1e-320, huge sizes): refusing them is
        allowed, naming one of the given words.
    degenerate : tuple of str or None
        The problem is valid but degenerate (nothing feasible, all-zero data): a result or a
        refusal naming one of these words is allowed.
    names : set of str
        Every user-facing argument name of the call; a refusal may quote only these.
    budget : Budget or None
        The budget passed, whose events must not change on a refusal.
    gen : numpy Generator or None
        The generator passed as ``rng``, whose state must not change on a refusal.
    data_refusal_ok : bool
        A call on an objective that can return non-finite values: its refusal
        (:class:`NonFiniteObjectiveError`) comes from the data, mid-run, after the generator
        drew and (for a private method) after the charge, which stands (refunding it would let
        a caller probe the data for free).
    """

    entry: str
    bad: dict[str, tuple[str, ...]] = field(default_factory=dict)
    extreme: dict[str, tuple[str, ...]] = field(default_factory=dict)
    degenerate: tuple[str, ...] | None = None
    names: set[str] = field(default_factory=set)
    budget: Any = None
    gen: Any = None
    data_refusal_ok: bool = False
    notes: list[str] = field(default_factory=list)
    #: 0 for a call whose generated arguments are all valid, 1 otherwise (set per call, so about
    #: half the calls exercise results and half refusals)
    bad_scale: float = 1.0

    def mark_bad(self, arg: str, *words: str) -> None:
        self.bad[arg] = tuple(words) or (arg,)

    def mark_extreme(self, arg: str, *words: str) -> None:
        self.extreme[arg] = tuple(words) or (arg,)

    def mark_degenerate(self, *words: str) -> None:
        self.degenerate = tuple(words) + (self.degenerate or ())

    def allow(self, *names: str) -> None:
        self.names.update(names)


@dataclass
class Outcome:
    kind: str  # "result", "refusal", or one of FAILURE_KINDS, or "known"
    value: Any = None
    error: BaseException | None = None
    detail: str = ""
    tb: str = ""
    inputs: str = ""


#: Quoted argument names in a refusal: "The 'epsilon' parameter of ...", "'k' argument".
_QUOTED = re.compile(r"'([A-Za-z_][A-Za-z0-9_]*)' (?:parameter|argument|option)")
#: Internal names that must never reach a user (issue 15).
INTERNAL_NAMES = ("n_runs", "grid_candidates", "run_audit", "logw", "eps_step", "eps_prime",
                  "delta_sens", "_value", "scores_", "bad_rows")


def _mentions(msg: str, word: str) -> bool:
    return re.search(rf"(?<![A-Za-z0-9_]){re.escape(word)}(?![A-Za-z0-9_])", msg) is not None


def _where(exc: BaseException) -> str:
    """The innermost frame of the traceback inside dpsubmod (or the innermost one)."""
    frames = traceback.extract_tb(exc.__traceback__)
    mine = [f for f in frames if "dpsubmod" in f.filename.replace("\\", "/")]
    f = (mine or frames or [None])[-1]
    if f is None:
        return "?"
    path = f.filename.replace("\\", "/")
    path = path.split("src/")[-1] if "src/" in path else path.rsplit("/", 2)[-1]
    return f"{path}:{f.lineno} in {f.name}"


def _state(gen: Any) -> Any:
    return None if gen is None else copy.deepcopy(gen.bit_generator.state)


def _events(budget: Any) -> Any:
    return None if budget is None else tuple(budget.events)


# -- known failures in code owned elsewhere -------------------------------------------------------

@dataclass(frozen=True)
class Known:
    """A failure found by the suite in code this suite's owner does not own.

    ``entry`` is a prefix of :attr:`Case.entry`; ``kind`` the failure kind; ``where`` a prefix
    of the innermost dpsubmod frame (``"online/harness.py"``) or of the message; ``test`` names
    the strict xfail test that pins it.
    """

    key: str
    entry: str
    kind: str
    where: str = ""
    message: str = ""
    test: str = ""

    def matches(self, case: Case, out: Outcome) -> bool:
        if not case.entry.startswith(self.entry) or out.kind != self.kind:
            return False
        if self.where and not out.detail.startswith(self.where) and self.where not in out.tb:
            return False
        return not self.message or re.search(self.message, out.detail + " " + str(out.error))


#: Filled in by the test modules (tests/fuzz/known_failures.py).
KNOWN: list[Known] = []


# -- the call -------------------------------------------------------------------------------------

def invoke(case: Case, fn: Callable[[], Any],
           check: Callable[[Any], str | None] | None = None,
           timeout: float | None = None, inputs: Any = None, known: bool = True) -> Outcome:
    """Run one fuzzed call under the contract; count it; return its outcome (not asserted).

    ``inputs`` (the call's arguments) is shown with a failure, and ``fn.__closure__`` is shown
    when it is not given. ``known=False`` (the strict xfail tests) reports a known failure as
    the failure it is.
    """
    events0, state0 = _events(case.budget), _state(case.gen)
    COUNTS["calls"] += 1
    ENTRY_COUNTS[case.entry] += 1
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("error")
        for pattern in INTENTIONAL_WARNINGS:
            warnings.filterwarnings("always", message=pattern)
        # numpy's defaults, whatever earlier code set: trouble warns (then errors), underflow
        # to zero is ordinary arithmetic
        np_err = np.seterr(divide="warn", over="warn", invalid="warn", under="ignore")
        try:
            value = _with_deadline(fn, TIMEOUT if timeout is None else timeout)
        except CallTimeout as stop:
            why = str(stop) or f"no return within {timeout or TIMEOUT:g} s"
            out = Outcome("hang", detail=why)
        except Warning as w:
            out = Outcome("warning", error=w, detail=f"{_where(w)}: {type(w).__name__}: {w}",
                          tb=traceback.format_exc())
        except DPSubmodError as exc:
            out = _judge_refusal(case, exc, events0, state0)
        except Exception as exc:  # noqa: BLE001 - classified, not swallowed
            out = Outcome("crash", error=exc, detail=f"{_where(exc)}: {type(exc).__name__}: "
                          f"{str(exc)[:300]}", tb=traceback.format_exc())
        else:
            out = _judge_result(case, value, check)
        finally:
            np.seterr(**np_err)
    del caught
    out.inputs = _inputs(fn, inputs) if out.kind in FAILURE_KINDS else ""
    for k in KNOWN:
        if k.matches(case, out):
            KNOWN_COUNTS[k.key] += 1
            COUNTS["known"] += 1
            if known:
                out = Outcome("known", value=out.value, error=out.error,
                              detail=f"[{k.key}] {out.detail}", tb=out.tb, inputs=out.inputs)
            return out
    COUNTS[out.kind] += 1
    if out.kind in FAILURE_KINDS:
        FAILURES.append(f"{out.kind}: {case.entry}: {out.detail} || inputs: "
                        f"{_short(out.inputs, 600)}")
    return out


def _judge_refusal(case: Case, exc: DPSubmodError, events0: Any, state0: Any) -> Outcome:
    msg = str(exc)
    tb = traceback.format_exc()
    detail = f"{_where(exc)}: {type(exc).__name__}: {msg[:400]}"
    data_refusal = case.data_refusal_ok and isinstance(exc, NonFiniteObjectiveError)
    if _events(case.budget) != events0 and not data_refusal:
        return Outcome("charged_on_error", error=exc, detail=detail, tb=tb)
    if state0 is not None and _state(case.gen) != state0 and not data_refusal:
        return Outcome("rng_on_error", error=exc, detail=detail, tb=tb)
    quoted = set(_QUOTED.findall(msg))
    foreign = sorted(q for q in quoted if q not in case.names and q not in case.bad
                     and q not in case.extreme)
    internal = [w for w in INTERNAL_NAMES if _mentions(msg, w)]
    if foreign or internal:
        return Outcome("bad_message", error=exc, tb=tb,
                       detail=f"names {foreign + internal}, not an argument of the call: {detail}")
    allowed = [w for ws in case.extreme.values() for w in ws] + list(case.degenerate or ())
    if case.bad:
        # a call with a bad argument may also hold an impossible combination: naming either is
        # a clean refusal
        words = [w for ws in case.bad.values() for w in ws]
        if any(_mentions(msg, w) for w in words + allowed):
            return Outcome("refusal", error=exc, detail=detail)
        return Outcome("bad_message", error=exc, tb=tb,
                       detail=f"names none of {words} (the bad arguments): {detail}")
    if allowed:
        if any(_mentions(msg, w) for w in allowed):
            return Outcome("refusal", error=exc, detail=detail)
        return Outcome("bad_message", error=exc, tb=tb,
                       detail=f"refusal of a valid call names none of {allowed}: {detail}")
    if data_refusal:
        return Outcome("refusal", error=exc, detail=detail)
    return Outcome("refused_valid", error=exc, detail=detail, tb=tb)


def _judge_result(case: Case, value: Any, check: Callable[[Any], str | None] | None) -> Outcome:
    if case.bad:
        return Outcome("accepted_bad", value=value,
                       detail=f"bad {sorted(case.bad)} accepted; returned {_short(value)}")
    if check is not None:
        try:
            problem = check(value)
        except Exception as exc:  # noqa: BLE001 - a result the check cannot read is wrong
            problem = f"the result cannot be checked: {type(exc).__name__}: {exc}"
        if problem:
            return Outcome("wrong_result", value=value, detail=problem)
    return Outcome("result", value=value)


def _short(value: Any, limit: int = 200) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) < limit else text[:limit] + "..."


def _inputs(fn: Any, inputs: Any) -> str:
    if inputs is not None:
        return repr(inputs)
    cells = getattr(fn, "__closure__", None) or ()
    names = getattr(getattr(fn, "__code__", None), "co_freevars", ())
    parts = []
    for name, cell in zip(names, cells):
        try:
            parts.append(f"{name}={cell.cell_contents!r}")
        except ValueError:
            continue
    return ", ".join(parts)


def expect(out: Outcome) -> None:
    """Fail the test with the outcome's story unless it keeps the contract."""
    if out.kind in FAILURE_KINDS:
        raise AssertionError(f"{out.kind}: {out.detail}\ninputs: {out.inputs[:2000]}\n{out.tb}")


# -- result checks shared by the modules ----------------------------------------------------------

def finite(x: Any) -> bool:
    try:
        return bool(np.all(np.isfinite(np.asarray(x, dtype=float))))
    except (TypeError, ValueError):
        return False


def privacy_problem(report: Any, epsilon: float, delta: float, budget: Any,
                    events0: int | None = None) -> str | None:
    """The released privacy must not exceed the request, and a budget must hold the charge."""
    if report is None:
        return "a private call returned no privacy report"
    rel = 1e-9
    if not (report.epsilon <= epsilon * (1 + rel) + 1e-300):
        return f"reported epsilon {report.epsilon!r} exceeds the requested {epsilon!r}"
    if not (report.delta <= delta * (1 + rel) + 1e-300):
        return f"reported delta {report.delta!r} exceeds the requested {delta!r}"
    if budget is not None:
        spent_eps, spent_delta = budget.spent
        if len(budget.events) == (events0 or 0):
            return "a private call with a budget charged nothing"
        if spent_eps > budget.epsilon * (1 + rel) or \
                spent_delta > budget.delta * (1 + rel) + 1e-300:
            return f"the budget overspent: {budget.spent} of {(budget.epsilon, budget.delta)}"
    return None


def iter_names(*groups: Iterable[str]) -> set[str]:
    out: set[str] = set()
    for g in groups:
        out.update(g)
    return out


def describe_failures(limit: int = 40) -> list[str]:
    """The distinct failures (the same kind, entry point and first words once), with counts."""
    seen: collections.Counter[str] = collections.Counter()
    for f in FAILURES:
        seen[f[:160]] += 1
    return [f"{n} x {key}" for key, n in seen.most_common(limit)]


def print_summary(stream: Any = sys.stderr) -> None:  # pragma: no cover - debugging aid
    for line in summary_lines():
        print(line, file=stream)
