"""Generators of fuzzed arguments: each draws a value and tells the :class:`Case` whether it is
ordinary, extreme-but-valid, or bad (and which words a refusal of it must contain).

The pools follow issue 15: NaN, +/-inf, negative, huge (1e308) and tiny (1e-320, 5e-324) values;
empty arrays, wrong shapes and dtypes (object, bool, complex, strings), ragged lists, sparse
matrices (including one with no non-zero entry); non-integer, boolean and negative integers;
non-integer seeds and other bad ``rng`` values.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import scipy.sparse as sp
from fuzz_harness import Case
from hypothesis import strategies as st

NAN, INF = math.nan, math.inf
TINY = (1e-320, 5e-324, 1e-300)
HUGE = (1e308, 1.7976931348623157e308, 1e300)


class _Wrong:
    """An object of a type no parameter accepts."""

    def __repr__(self) -> str:
        return "<object>"


def new_case(draw: Any, entry: str) -> Case:
    """A case for one call: about half the calls get only valid arguments."""
    return Case(entry, bad_scale=draw(st.sampled_from([0.0, 1.0])))


def maybe(draw: Any, case: Case, p: float) -> bool:
    """Whether to inject a bad argument (never in an all-valid call)."""
    return case.bad_scale > 0 and draw(st.floats(0, 1)) < p


def _in(v: float, low: float | None, high: float | None, low_open: bool, high_open: bool) -> bool:
    if math.isnan(v):
        return False
    if low is not None and (v < low or (low_open and v == low)):
        return False
    return not (high is not None and (v > high or (high_open and v == high)))


def real(draw: Any, case: Case, name: str, *, low: float | None = None,
         high: float | None = None, low_open: bool = False, high_open: bool = False,
         typical: tuple[float, float] = (0.1, 10.0), inf_ok: bool = False,
         optional: bool = False, p_bad: float = 0.25, p_extreme: float = 0.15,
         words: tuple[str, ...] = ()) -> Any:
    """A real parameter in an interval; ``inf_ok``: ``+inf`` is a documented valid value."""
    words = words or (name,)
    u = draw(st.floats(0, 1))
    if u < p_bad * case.bad_scale:
        kind = draw(st.sampled_from(
            ["nan", "posinf", "neginf", "below", "above", "str", "bool", "complex", "list",
             "object", "none", "array"]))
        if kind == "nan":
            v: Any = draw(st.sampled_from([NAN, np.float64(NAN), np.float32(NAN)]))
        elif kind == "posinf":
            if inf_ok:
                kind = "neginf"
                v = -INF
            else:
                v = draw(st.sampled_from([INF, np.float64(INF)]))
        elif kind == "neginf":
            v = -INF
        elif kind == "below" and low is not None:
            v = draw(st.sampled_from([low - 1.0, low - 1e-9 * max(1.0, abs(low)), -1e308,
                                      low if low_open else low - 0.5]))
        elif kind == "above" and high is not None and math.isfinite(high):
            v = draw(st.sampled_from([high + 1.0, high * 2 + 1, 1e308,
                                      high if high_open else high + 0.5]))
        elif kind == "str":
            v = draw(st.sampled_from(["1.0", "abc", ""]))
        elif kind == "bool":
            v = draw(st.sampled_from([True, False, np.bool_(True)]))
        elif kind == "complex":
            v = complex(1.0, 0.0)
        elif kind == "list":
            v = [typical[0]]
        elif kind == "object":
            v = _Wrong()
        elif kind == "none" and not optional:
            v = None
        elif kind == "array":
            v = np.array([typical[0], typical[1]])
        else:
            v = NAN
        if isinstance(v, float | np.floating) and _in(float(v), low, high, low_open, high_open) \
                and (math.isfinite(v) or inf_ok):
            return v  # an edge draw that happens to be valid
        case.mark_bad(name, *words)
        return v
    if u < p_bad + p_extreme:
        cands = [v for v in (*TINY, *HUGE, 0.0, -0.0, 1e-15, 1e4, 1e15)
                 if _in(v, low, high, low_open, high_open)]
        for edge, closed in ((low, not low_open), (high, not high_open)):
            if edge is not None and closed and math.isfinite(edge):
                cands.append(edge)
        if cands:
            v = draw(st.sampled_from(cands))
            case.mark_extreme(name, *words)
            return v
    lo, hi = typical
    # subnormals are extreme values, drawn (and marked) above, never typical ones
    v = draw(st.floats(lo, hi, allow_nan=False, allow_infinity=False, allow_subnormal=False))
    if not _in(v, low, high, low_open, high_open):
        v = lo
    return draw(st.sampled_from([v, np.float64(v)])) if draw(st.booleans()) else v


def integer(draw: Any, case: Case, name: str, *, low: int | None = None,
            high: int | None = None, typical: tuple[int, int] = (1, 5),
            optional: bool = False, p_bad: float = 0.25, huge_ok: bool = False,
            words: tuple[str, ...] = ()) -> Any:
    """An integer parameter in ``[low, high]``; floats (even 2.0), bools and strings are bad."""
    words = words or (name,)
    if draw(st.floats(0, 1)) < p_bad * case.bad_scale:
        pool: list[Any] = [2.0, 2.5, np.float64(3.0), True, "3", NAN, INF, [2], _Wrong(),
                           complex(2, 0)]
        if low is not None:
            pool += [low - 1, low - 10**6]
        if high is not None:
            pool += [high + 1, 10**30]
        if not optional:
            pool.append(None)
        v = draw(st.sampled_from(pool))
        if isinstance(v, int) and not isinstance(v, bool) and \
                (low is None or v >= low) and (high is None or v <= high):
            return v
        case.mark_bad(name, *words)
        return v
    lo, hi = typical
    if low is not None:
        lo = max(lo, low)
    if high is not None:
        hi = min(hi, high)
    if hi < lo:
        hi = lo
    v = draw(st.integers(lo, hi))
    if huge_ok and draw(st.integers(0, 9)) == 0:
        v = 10**9
        case.mark_extreme(name, *words)
    return draw(st.sampled_from([v, np.int64(v), np.int32(v)])) if draw(st.booleans()) else v


def choice(draw: Any, case: Case, name: str, valid: list[Any], *, p_bad: float = 0.15,
           bad: list[Any] | None = None, words: tuple[str, ...] = ()) -> Any:
    """One of ``valid``; bad values are misspellings, other types and None."""
    if draw(st.floats(0, 1)) < p_bad * case.bad_scale:
        pool = bad if bad is not None else ["nonsense", "", 3, None, _Wrong(), ["auto"]]
        v = draw(st.sampled_from(pool))
        if any(v is x or (type(v) is type(x) and v == x) for x in valid):
            return v
        case.mark_bad(name, *(words or (name,)))
        return v
    return draw(st.sampled_from(valid))


def boolean(draw: Any, case: Case, name: str, *, p_bad: float = 0.1) -> Any:
    if draw(st.floats(0, 1)) < p_bad * case.bad_scale:
        v = draw(st.sampled_from(["yes", 2, None, 0.5]))
        case.mark_bad(name)
        return v
    return draw(st.sampled_from([True, False]))


def rng_value(draw: Any, case: Case, *, p_bad: float = 0.25, name: str = "rng") -> Any:
    """A value for ``rng``: None, seeds, SeedSequence, a Generator (whose state the harness
    watches); bad: strings, floats (1.5 and 2.0), booleans, negative seeds, RandomState, lists."""
    if draw(st.floats(0, 1)) < p_bad * case.bad_scale:
        v = draw(st.sampled_from(
            ["abc", "0", 1.5, 2.0, np.float64(1.0), NAN, True, False, -1, -(2**70),
             np.random.RandomState(0), [1, 2], _Wrong(), complex(1, 0), b"\x00"]))
        case.mark_bad(name, name)
        return v
    kind = draw(st.sampled_from(["none", "int", "np", "big", "seedseq", "gen", "gen"]))
    if kind == "none":
        return None
    if kind == "int":
        return draw(st.integers(0, 2**31))
    if kind == "np":
        return np.uint32(draw(st.integers(0, 2**31)))
    if kind == "big":
        return 2**100 + draw(st.integers(0, 9))
    if kind == "seedseq":
        return np.random.SeedSequence(draw(st.integers(0, 2**31)))
    gen = np.random.default_rng(draw(st.integers(0, 2**31)))
    case.gen = gen
    return gen


def matrix(draw: Any, case: Case, name: str, *, rows: tuple[int, int] = (1, 6),
           cols: tuple[int, int] = (1, 6), shape: tuple[int, int] | None = None,
           nonnegative: bool = True, low: float = 0.0, high: float = 1.0,
           sparse_ok: bool = True, p_bad: float = 0.3, words: tuple[str, ...] = (),
           zero_degenerate: tuple[str, ...] = (), binary: bool = False) -> Any:
    """A 2-d numeric matrix (dense, or sparse when allowed); bad: NaN/inf/negative entries,
    wrong dimensions, empty, object/complex/string dtypes, ragged lists, None."""
    words = words or (name,)
    r, c = shape if shape is not None else (draw(st.integers(*rows)), draw(st.integers(*cols)))
    if binary:
        a = draw(st.lists(st.booleans(), min_size=r * c, max_size=r * c))
        m = np.array(a, dtype=float).reshape(r, c)
    else:
        vals = draw(st.lists(st.floats(low, high, allow_nan=False, allow_infinity=False),
                             min_size=r * c, max_size=r * c))
        m = np.array(vals, dtype=float).reshape(r, c)
    if draw(st.floats(0, 1)) < p_bad * case.bad_scale:
        kinds = ["nan", "inf", "1d", "3d", "empty", "object", "complex", "str", "ragged",
                 "none", "scalar"]
        if nonnegative:
            kinds.append("neg")
        if sparse_ok:
            kinds.append("sparse_nan")
        kind = draw(st.sampled_from(kinds))
        i, j = draw(st.integers(0, r - 1)), draw(st.integers(0, c - 1))
        v: Any
        if kind == "nan":
            m[i, j] = NAN
            v = m
        elif kind == "inf":
            m[i, j] = draw(st.sampled_from([INF, -INF]))
            v = m
        elif kind == "neg":
            m[i, j] = -0.5
            v = m
        elif kind == "1d":
            v = m.ravel()
        elif kind == "3d":
            v = m[None, :, :]
        elif kind == "empty":
            v = draw(st.sampled_from([np.zeros((0, c)), np.zeros((r, 0)), [], [[]]]))
        elif kind == "object":
            v = m.astype(object)
            v[0, 0] = "x"
        elif kind == "complex":
            v = m.astype(complex) + 1j
        elif kind == "str":
            v = m.astype(str)
        elif kind == "ragged":
            v = [list(row) for row in m] + [[0.5] * (c + 1)]
        elif kind == "sparse_nan":
            m[0, 0] = NAN
            v = sp.csr_array(m)
        elif kind == "scalar":
            v = 0.5
        else:
            v = None
        case.mark_bad(name, *words)
        return v
    if draw(st.integers(0, 5)) == 0:  # degenerate: all zeros
        m[:] = 0.0
        if zero_degenerate:
            case.mark_degenerate(*zero_degenerate)
    elif draw(st.integers(0, 7)) == 0:  # extreme magnitudes
        m = m * draw(st.sampled_from([1e-300, 1e300, 5e-324]))
        case.mark_extreme(name, *words)
    if sparse_ok and draw(st.integers(0, 3)) == 0:
        fmt = draw(st.sampled_from(["csr_array", "csc_matrix", "coo_array"]))
        return getattr(sp, fmt)(m)
    if draw(st.integers(0, 5)) == 0:
        if binary:
            return m.astype(bool)
        if np.abs(m).max(initial=0.0) < 1e38:  # float32 range
            return m.astype(np.float32)
    if draw(st.integers(0, 5)) == 0:
        return m.tolist()
    return m


def vector(draw: Any, case: Case, name: str, size: int, *, low: float = 0.0,
           high: float = 1.0, nonnegative: bool = True, p_bad: float = 0.25,
           words: tuple[str, ...] = (), optional: bool = False, sized: bool = True) -> Any:
    """A 1-d vector of ``size`` reals; bad: NaN, inf, negative, wrong length (when ``sized``),
    2-d, strings, empty."""
    words = words or (name,)
    vals = draw(st.lists(st.floats(low, high, allow_nan=False, allow_infinity=False),
                         min_size=size, max_size=size))
    v: Any = np.array(vals, dtype=float)
    if draw(st.floats(0, 1)) < p_bad * case.bad_scale:
        kinds = ["nan", "inf", "2d", "str", "object", "empty"]
        if nonnegative:
            kinds.append("neg")
        if sized:
            kinds += ["short", "long"]
        if not optional:
            kinds.append("none")
        kind = draw(st.sampled_from(kinds))
        if kind == "nan":
            v = np.append(v, NAN) if not sized else np.where(np.arange(size) == 0, NAN, v)
        elif kind == "inf":
            v = np.append(v, INF) if not sized else np.where(np.arange(size) == 0, INF, v)
        elif kind == "neg":
            v = np.append(v, -1.0) if not sized else np.where(np.arange(size) == 0, -1.0, v)
        elif kind == "short":
            v = v[:-1]
        elif kind == "long":
            v = np.append(v, 1.0)
        elif kind == "2d":
            v = np.stack([v, v])
        elif kind == "str":
            v = [str(x) + "x" for x in vals] or ["x"]
        elif kind == "object":
            v = np.array([object()] * max(size, 1), dtype=object)
        elif kind == "empty":
            v = np.zeros(0)
        else:
            v = None
        if kind == "empty" and size == 0:
            return v
        case.mark_bad(name, *words)
        return v
    if draw(st.integers(0, 9)) == 0:
        v = v * draw(st.sampled_from([1e-300, 1e300, 5e-324]))
        case.mark_extreme(name, *words)
    return v.tolist() if draw(st.booleans()) else v


def epsilon_value(draw: Any, case: Case, *, inf_ok: bool = False, name: str = "epsilon",
                  typical: tuple[float, float] = (0.3, 8.0), p_bad: float = 0.2,
                  p_extreme: float = 0.15) -> Any:
    return real(draw, case, name, low=0.0, low_open=True, high=INF, high_open=not inf_ok,
                typical=typical, inf_ok=inf_ok, p_bad=p_bad, p_extreme=p_extreme)


def delta_value(draw: Any, case: Case, *, positive: bool = False, name: str = "delta",
                p_bad: float = 0.15) -> Any:
    if draw(st.floats(0, 1)) < 0.5 and not positive:
        return 0.0
    return real(draw, case, name, low=0.0, low_open=positive, high=1.0, high_open=True,
                typical=(1e-9, 1e-3), p_bad=p_bad)
