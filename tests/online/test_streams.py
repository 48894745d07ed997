"""Streams of set functions: kinds, reproducibility, neighbours, bad input."""

from __future__ import annotations

import numpy as np
import pytest

from dpsubmod.errors import (
    DPSubmodError,
    GroundSetMismatchError,
    ParameterTypeError,
    StreamLengthError,
    ValidationError,
)
from dpsubmod.functions import Modular
from dpsubmod.online import (
    FunctionStream,
    IIDStream,
    RecordStream,
    SwitchingStream,
    stochastic_stream,
)
from dpsubmod.online.streams import as_stream
from oracles import all_values, is_submodular


def _weights(stream, rng=None):
    return [tuple(np.round([f([i]) for i in range(stream.n)], 12)) for f in stream.iterate(rng=rng)]


def test_function_stream_and_replace():
    fs = [Modular([1.0, -1.0]), Modular([0.0, 2.0]), Modular([3.0, 3.0])]
    s = FunctionStream(fs, bound=6.0)
    assert (s.n, s.T, len(s), s.bound) == (2, 3, 3, 6.0)
    assert list(s) == fs and list(s) == fs  # re-iterable
    g = Modular([-5.0, 0.0])
    nb = s.replace(1, g)
    assert list(nb) == [fs[0], g, fs[2]] and list(s) == fs
    with pytest.raises(ValidationError):
        s.replace(3, g)
    with pytest.raises(GroundSetMismatchError):
        s.replace(0, Modular([1.0]))
    assert as_stream(fs).T == 3 and as_stream(s) is s


def test_record_stream_builds_one_function_per_record():
    records = [[1.0, 0.0, 2.0], [0.0, 0.0, 1.0]]
    s = RecordStream(records, lambda r: Modular(r), n=3, bound=3.0)
    assert s.T == 2 and [f([2]) for f in s] == [2.0, 1.0]
    bad = RecordStream(records, lambda r: Modular(r[:2]), n=3)
    with pytest.raises(GroundSetMismatchError, match="n=3"):
        list(bad)
    with pytest.raises(ParameterTypeError, match="sized"):
        RecordStream(iter(records), Modular, n=3)
    with pytest.raises(ParameterTypeError, match="callable"):
        RecordStream(records, "Modular", n=3)


def test_iid_stream_is_reproducible_and_seedable():
    s = IIDStream(lambda g: Modular(g.normal(size=4)), n=4, T=5, rng=3)
    assert _weights(s) == _weights(s)  # the integer seed is resolved per pass
    assert _weights(s, rng=4) != _weights(s)
    assert _weights(s, rng=4) == _weights(s.materialize(rng=4))
    free = IIDStream(lambda g: Modular(g.normal(size=4)), n=4, T=5)
    assert _weights(free) != _weights(free)  # fresh entropy each pass


def test_switching_stream_orders():
    a, b, c = Modular([1.0]), Modular([2.0]), Modular([3.0])
    cyc = SwitchingStream([a, b, c], T=7, period=2)
    assert list(cyc) == [a, a, b, b, c, c, a]
    rnd = SwitchingStream([a, b], T=40, period=4, order="random", rng=0)
    seq = list(rnd)
    assert seq == list(rnd) and {id(f) for f in seq} == {id(a), id(b)}
    for start in range(0, 40, 4):  # constant within a block
        assert len({id(f) for f in seq[start:start + 4]}) == 1
    with pytest.raises(ValidationError, match="'order'"):
        SwitchingStream([a], T=3, order="zigzag")
    with pytest.raises(ValidationError, match="'period'"):
        SwitchingStream([a], T=3, period=0)


def test_stochastic_stream_range_submodularity_and_means():
    s = stochastic_stream(4, 3000, means=[-0.8, 0.0, 0.3, 0.8], coupling=0.5, rng=1)
    fs = list(s)
    assert s.bound == 1.0 and len(fs) == 3000
    distinct = {id(f): f for f in fs}.values()
    assert len(distinct) <= 16  # one object per sign pattern
    for f in distinct:
        _, vals = all_values(f)
        assert np.abs(vals).max() <= 1.0 + 1e-12
        assert is_submodular(f)
    # Empirical means of the singleton costs follow the planted means (fixed seed; a deviation
    # of 5 standard errors has probability < 1e-6 per coordinate).
    Z = 4 + 0.5 * 2.0
    means = np.mean([[f._value(np.eye(4, dtype=bool)[i]) * Z - 0.5 for i in range(4)]
                     for f in fs], axis=0)
    np.testing.assert_allclose(means, [-0.8, 0.0, 0.3, 0.8], atol=5 / np.sqrt(3000))


def test_stream_errors():
    with pytest.raises(ParameterTypeError):
        FunctionStream(Modular([1.0]))
    with pytest.raises(ValidationError, match="empty"):
        FunctionStream([])
    with pytest.raises(GroundSetMismatchError):
        FunctionStream([Modular([1.0]), Modular([1.0, 2.0])])
    with pytest.raises(ParameterTypeError):
        FunctionStream([Modular([1.0]), "f"])
    with pytest.raises(ValidationError, match="'bound'"):
        FunctionStream([Modular([1.0])], bound=-1.0)
    with pytest.raises(ValidationError, match="means"):
        stochastic_stream(3, 10, means=[0.0, 2.0, 0.0])
    with pytest.raises(ParameterTypeError):
        as_stream(3)
    short = IIDStream(lambda g: Modular([1.0]), n=1, T=3)
    short._generate = lambda g: iter([Modular([1.0])])  # a source that ends early
    with pytest.raises(StreamLengthError, match="yielded 1"):
        list(short)
    wrong = IIDStream(lambda g: "not a function", n=1, T=2)
    with pytest.raises(DPSubmodError):
        list(wrong)


def test_ftl_trap_stream_values_and_bounds():
    from dpsubmod.online import ftl_trap_stream

    s = ftl_trap_stream([0.6, -0.4, 0.2], 5)
    assert [f([0, 2]) for f in s] == pytest.approx([0.4, -0.8, 0.8, -0.8, 0.8])
    assert s.bound == 1.0 and s.T == 5
    with pytest.raises(DPSubmodError, match="weights"):
        ftl_trap_stream([0.7, 0.4], 3)  # the set {0, 1} would cost 1.1
    with pytest.raises(DPSubmodError, match="weights"):
        ftl_trap_stream([np.nan], 3)
