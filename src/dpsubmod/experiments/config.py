"""Experiment files: a sweep over methods x epsilon x T x seeds, written in TOML.

Offline problem (one private data set, one release per cell)::

    [experiment]
    name = "fl-small"            # names the output files (default: the file's stem)
    problem = "offline"
    seed = 0                     # the sweep seed: data set and every cell's randomness
    seeds = 5                    # replicates 0..4 (or an explicit list such as [0, 3, 7])
    k = 3                        # cardinality constraint
    methods = ["greedy", "private_greedy"]   # names from dpsubmod.offline.list_methods()
    epsilons = [0.1, 1.0, 10.0]  # total budgets of the private methods
    delta = 0.0                  # optional; the delta of (epsilon, delta)-DP methods
    note = "..."                 # optional; how to read the results, printed after them

    [objective]
    kind = "facility_location"   # or "mutual_information"
    records = 200                # kind-specific parameters (see experiments.problems)

    [options.private_greedy]     # optional keyword arguments of one method
    # ...

Online problem (a stream, one release per round)::

    [experiment]
    problem = "online"
    learners = ["SubmodPFTAL", "HazanKale"]  # names from experiments.problems.LEARNERS
    T = [128, 256, 512]          # horizons
    epsilons = [1.0]
    seeds = 3
    k = 3                        # maximization learners only

    [stream]
    kind = "stochastic"          # "stochastic", "karate_cut" (min) or "facility_location" (max)
    n = 6

Non-private methods and learners run once per (T, seed), with an empty epsilon. Every
mistake raises :class:`ConfigError` naming the file, the key and the fix, before anything runs.
"""

from __future__ import annotations

import difflib
import os
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._validation import check_delta, check_epsilon, check_int, check_real
from ..errors import DPSubmodError, ValidationError
from ..offline import get_method, list_methods
from .examples import example_files
from .problems import LEARNERS, OBJECTIVES, STREAMS, Param

__all__ = ["ConfigError", "SweepConfig", "load_config", "parse_config"]

_PROBLEMS = ("offline", "online")
_EXPERIMENT_KEYS = {
    "offline": ("name", "problem", "seed", "seeds", "k", "methods", "epsilons", "delta", "out",
                "note"),
    "online": ("name", "problem", "seed", "seeds", "k", "learners", "epsilons", "delta", "T",
               "out", "note"),
}
_TABLES = {"offline": ("experiment", "objective", "options"),
           "online": ("experiment", "stream", "options")}


class ConfigError(ValidationError):
    """An experiment file is missing a key, has an unknown one, or a value out of range."""


@dataclass(frozen=True)
class SweepConfig:
    """A validated experiment (plain data, so it pickles to any worker).

    Attributes
    ----------
    name : str
    problem : {"offline", "online"}
    seed : int
        The sweep seed.
    seeds : tuple of int
        Replicate labels.
    methods : tuple of str
        Offline method names or online learner names, in the file's order.
    epsilons : tuple of float
    Ts : tuple of int or (None,)
        Horizons (online); ``(None,)`` for an offline problem.
    k : int
    delta : float
    spec : dict
        The ``[objective]`` (offline) or ``[stream]`` (online) table with defaults filled in and
        ``k`` added.
    options : dict
        Method name to its keyword arguments.
    out : str or None
        The output path the file asks for (relative to the current directory).
    note : str
        How to read the results (paragraphs separated by blank lines), printed by
        ``dpsubmod run`` after the summary; not part of the configuration's fingerprint.
    source : str
        Where the configuration came from (for messages).
    """

    name: str
    problem: str
    seed: int
    seeds: tuple[int, ...]
    methods: tuple[str, ...]
    epsilons: tuple[float, ...]
    Ts: tuple[int | None, ...]
    k: int
    delta: float
    spec: dict[str, Any] = field(default_factory=dict)
    options: dict[str, dict[str, Any]] = field(default_factory=dict)
    out: str | None = None
    note: str = ""
    source: str = "<config>"

    def is_private(self, method: str) -> bool:
        """Whether ``method`` is a private method (it runs at every epsilon)."""
        if self.problem == "online":
            return LEARNERS[method].private
        return get_method(method).private

    @property
    def sense(self) -> str:
        """``"max"`` (offline, and online maximization streams) or ``"min"``."""
        return "max" if self.problem == "offline" else STREAMS[self.spec["kind"]][0]


def _err(source: str, where: str, msg: str) -> ConfigError:
    return ConfigError(f"{source}: {where}: {msg}")


def _unknown(source: str, where: str, key: str, valid: Sequence[str]) -> ConfigError:
    near = difflib.get_close_matches(key, list(valid), n=1)
    hint = f" Did you mean {near[0]!r}?" if near else ""
    return _err(source, where, f"unknown key {key!r}.{hint} Valid keys: {', '.join(valid)}.")


def _wrap(source: str, where: str, fn: Any, *args: Any, **kw: Any) -> Any:
    try:
        return fn(*args, **kw)
    except DPSubmodError as exc:
        raise _err(source, where, str(exc)) from None


def _list(source: str, where: str, value: Any, what: str) -> list[Any]:
    if isinstance(value, (int, float, str)) and not isinstance(value, bool):
        value = [value]
    if not isinstance(value, list) or not value:
        raise _err(source, where, f"must be a non-empty list of {what}; got {value!r}.")
    if len(set(map(repr, value))) != len(value):
        raise _err(source, where, f"lists a value twice: {value!r}; remove the duplicate.")
    return value


def _params(source: str, where: str, table: Mapping[str, Any],
            accepted: Mapping[str, Param]) -> dict[str, Any]:
    out = {}
    for key in table:
        if key != "kind" and key not in accepted:
            raise _unknown(source, where, key, ["kind", *accepted])
    for key, p in accepted.items():
        v = table.get(key, p.default)
        if p.kind == "int":
            hi = None if p.high is None else int(p.high)
            lo = None if p.low is None else int(p.low)
            out[key] = _wrap(source, f"{where} {key}", check_int, v, key, low=lo, high=hi)
        else:
            out[key] = _wrap(source, f"{where} {key}", check_real, v, key, low=p.low,
                             high=p.high)
    return out


def parse_config(data: Mapping[str, Any], *, source: str = "<config>") -> SweepConfig:
    """Validate a parsed TOML document (a dict) into a :class:`SweepConfig`.

    Raises
    ------
    ConfigError
        Naming the file, the table and key, what is accepted and the fix.
    """
    exp = data.get("experiment")
    if not isinstance(exp, dict):
        raise _err(source, "[experiment]", "the table is missing; start the file with "
                   "[experiment] and problem = \"offline\" or \"online\".")
    problem = exp.get("problem")
    if problem not in _PROBLEMS:
        raise _err(source, "[experiment] problem",
                   f"must be \"offline\" or \"online\"; got {problem!r}.")
    for table in data:
        if table not in _TABLES[problem]:
            raise _unknown(source, "top level", table, _TABLES[problem])
    for key in exp:
        if key not in _EXPERIMENT_KEYS[problem]:
            other = "online" if problem == "offline" else "offline"
            if key in _EXPERIMENT_KEYS[other]:
                raise _err(source, f"[experiment] {key}",
                           f"applies to {other} problems only; remove it "
                           + ("(offline methods go under 'methods')." if key == "learners"
                              else "(online learners go under 'learners')." if key == "methods"
                              else "."))
            raise _unknown(source, "[experiment]", key, _EXPERIMENT_KEYS[problem])
    name = exp.get("name", Path(source).stem if source != "<config>" else "experiment")
    if not isinstance(name, str) or not name or any(c in name for c in "/\\"):
        raise _err(source, "[experiment] name", f"must be a non-empty file-name-safe string; "
                   f"got {name!r}.")
    seed = _wrap(source, "[experiment] seed", check_int, exp.get("seed", 0), "seed", low=0)
    seeds_raw = exp.get("seeds", 1)
    if isinstance(seeds_raw, int) and not isinstance(seeds_raw, bool):
        n_seeds = _wrap(source, "[experiment] seeds", check_int, seeds_raw, "seeds", low=1,
                        fix="Give the number of replicates, or a list of replicate labels.")
        seeds = tuple(range(n_seeds))
    else:
        seeds = tuple(_wrap(source, "[experiment] seeds", check_int, s, "seeds", low=0)
                      for s in _list(source, "[experiment] seeds", seeds_raw, "integers"))
    k = _wrap(source, "[experiment] k", check_int, exp.get("k", 3), "k", low=1)
    delta = _wrap(source, "[experiment] delta", check_delta,
                  exp.get("delta", 0.0 if problem == "offline" else 1e-6), "delta")
    eps_raw = exp.get("epsilons")
    if eps_raw is None:
        raise _err(source, "[experiment] epsilons",
                   "is missing; list the privacy budgets, e.g. epsilons = [0.5, 1.0, 4.0].")
    epsilons = tuple(sorted(
        _wrap(source, "[experiment] epsilons", check_epsilon, e, "epsilons")
        for e in _list(source, "[experiment] epsilons", eps_raw, "positive numbers")))
    out = exp.get("out")
    if out is not None and not isinstance(out, str):
        raise _err(source, "[experiment] out", f"must be a path string; got {out!r}.")
    note = exp.get("note", "")
    if not isinstance(note, str):
        raise _err(source, "[experiment] note", f"must be a string; got {note!r}.")

    if problem == "offline":
        methods, spec, Ts = _offline(source, data, exp, k)
    else:
        methods, spec, Ts = _online(source, data, exp, k)

    options_raw = data.get("options", {})
    if not isinstance(options_raw, dict):
        raise _err(source, "[options]", "must be a table of [options.METHOD] tables.")
    options: dict[str, dict[str, Any]] = {}
    for m, kw in options_raw.items():
        if m not in methods:
            raise _err(source, f"[options.{m}]", f"names a method that is not in the sweep; "
                       f"methods: {', '.join(methods)}.")
        if not isinstance(kw, dict):
            raise _err(source, f"[options.{m}]", "must be a table of keyword arguments.")
        reserved = {"epsilon", "rng", "k", "n", "T"} & set(kw)
        if reserved:
            raise _err(source, f"[options.{m}]", f"sets {sorted(reserved)}, which the sweep "
                       "sets itself; use the [experiment] keys instead.")
        options[m] = dict(kw)
    return SweepConfig(name=name, problem=problem, seed=seed, seeds=seeds,
                       methods=tuple(methods), epsilons=epsilons, Ts=Ts, k=k, delta=delta,
                       spec=spec, options=options, out=out, note=note, source=source)


def _offline(source: str, data: Mapping[str, Any], exp: Mapping[str, Any], k: int
             ) -> tuple[list[str], dict[str, Any], tuple[None]]:
    valid = list_methods()
    methods = _list(source, "[experiment] methods", exp.get("methods"), "method names")
    for m in methods:
        if m not in valid:
            near = difflib.get_close_matches(str(m), valid, n=1)
            hint = f" Did you mean {near[0]!r}?" if near else ""
            raise _err(source, "[experiment] methods",
                       f"unknown method {m!r}.{hint} Valid methods: {', '.join(valid)}.")
    obj = data.get("objective")
    if not isinstance(obj, dict):
        raise _err(source, "[objective]", "the table is missing; add [objective] with "
                   f"kind = one of {', '.join(map(repr, OBJECTIVES))}.")
    kind = obj.get("kind")
    if kind not in OBJECTIVES:
        raise _err(source, "[objective] kind",
                   f"must be one of {', '.join(map(repr, OBJECTIVES))}; got {kind!r}.")
    spec = {"kind": kind, **_params(source, "[objective]", obj, OBJECTIVES[kind]), "k": k}
    if kind == "facility_location" and k > spec["candidates"]:
        raise _err(source, "[experiment] k", f"k={k} exceeds the {spec['candidates']} "
                   "candidates of the objective; lower k or raise [objective] candidates.")
    return methods, spec, (None,)


def _online(source: str, data: Mapping[str, Any], exp: Mapping[str, Any], k: int
            ) -> tuple[list[str], dict[str, Any], tuple[int, ...]]:
    st = data.get("stream")
    if not isinstance(st, dict):
        raise _err(source, "[stream]", "the table is missing; add [stream] with kind = one of "
                   f"{', '.join(map(repr, STREAMS))}.")
    kind = st.get("kind")
    if kind not in STREAMS:
        raise _err(source, "[stream] kind",
                   f"must be one of {', '.join(map(repr, STREAMS))}; got {kind!r}.")
    sense, accepted = STREAMS[kind]
    spec = {"kind": kind, **_params(source, "[stream]", st, accepted), "k": k}
    learners = _list(source, "[experiment] learners", exp.get("learners"), "learner names")
    for m in learners:
        if m not in LEARNERS:
            near = difflib.get_close_matches(str(m), list(LEARNERS), n=1)
            hint = f" Did you mean {near[0]!r}?" if near else ""
            raise _err(source, "[experiment] learners",
                       f"unknown learner {m!r}.{hint} Valid learners: {', '.join(LEARNERS)}.")
        if LEARNERS[m].sense != sense:
            fits = [n for n, s in LEARNERS.items() if s.sense == sense]
            raise _err(source, "[experiment] learners",
                       f"{m!r} is a {LEARNERS[m].sense}imization learner but stream "
                       f"{kind!r} is a {sense}imization problem; use one of {', '.join(fits)}.")
    if sense == "max" and kind == "facility_location" and k > spec["candidates"]:
        raise _err(source, "[experiment] k", f"k={k} exceeds the {spec['candidates']} "
                   "candidates of the stream; lower k or raise [stream] candidates.")
    T_raw = exp.get("T")
    if T_raw is None:
        raise _err(source, "[experiment] T", "is missing; list the horizons, e.g. "
                   "T = [128, 256, 512].")
    Ts = tuple(sorted(_wrap(source, "[experiment] T", check_int, t, "T", low=1)
                      for t in _list(source, "[experiment] T", T_raw, "positive integers")))
    return learners, spec, Ts


def load_config(path: str | os.PathLike[str]) -> SweepConfig:
    """Read and validate an experiment file (TOML, see the module docstring).

    Parameters
    ----------
    path : str or path-like
        An experiment file, or the name of a shipped example
        (:func:`~dpsubmod.experiments.examples.example_names`, e.g. ``"online_minimization"``)
        when no file of that name exists.

    Raises
    ------
    ConfigError
        When the file is missing, is not valid TOML, or fails validation.
    """
    p: Any = Path(path)
    source = str(p)
    examples = example_files()
    name = p.name.removesuffix(".toml")
    if not p.exists() and p.name == str(path) and name in examples:
        p, source = examples[name], f"{name} (shipped example)"
    try:
        with p.open("rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        raise ConfigError(f"{p}: no such experiment file; pass the path of a .toml file or the "
                          f"name of a shipped example ({', '.join(sorted(examples))}).") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{source}: not valid TOML ({exc}); fix the syntax.") from None
    except IsADirectoryError:
        raise ConfigError(f"{p}: is a folder; pass the path of a .toml file.") from None
    if source != str(p) and isinstance(data.get("experiment"), dict):
        data["experiment"].setdefault("name", name)
    return parse_config(data, source=source)
