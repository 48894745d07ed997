r"""Streams of set functions: the input of an online learner.

A :class:`Stream` is a re-iterable sequence of ``T`` set functions on ``range(n)``. ``n`` and ``T``
are known in advance (the learners' parameters depend on ``T``), and ``bound``, when declared, is
a public bound ``M`` with :math:`|f_t(S)| \le M` for every round and set.

* :class:`FunctionStream` wraps a list (the "database" :math:`F = (f_1, \dots, f_T)` of the
  privacy definitions); :meth:`Stream.replace` builds the neighbouring stream with one function
  replaced, which is what the neighbouring relation of the online algorithms changes.
* :class:`RecordStream` builds one function per record of a data set (one record, one round).
* :class:`IIDStream` draws i.i.d. functions from a sampler (stochastic environments).
* :class:`SwitchingStream` plays a fixed list of regimes in blocks, cyclically or in a random
  order (adversarial, non-stationary environments).
* :func:`~dpsubmod.online.synthetic.stochastic_stream` and
  :func:`~dpsubmod.online.synthetic.ftl_trap_stream` (in :mod:`dpsubmod.online.synthetic`) are
  ready-made synthetic minimization environments.
* :class:`OneShotStream` reads an iterator or generator once, as it goes (its length need not
  be known, and it may be endless); :func:`as_stream` wraps any iterable this way.

Generated streams take ``rng`` (SPEC 7) and resolve it each time they are iterated, so a stream
built with an integer seed yields the same functions on every pass. :meth:`Stream.iterate`
accepts an ``rng`` that overrides the stored one (the harness passes a child stream spawned from
its own seed).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from .._rng import RNGLike, as_generator
from .._validation import check_int, check_real
from ..errors import GroundSetMismatchError, ParameterTypeError, StreamLengthError, ValidationError
from ..functions.base import SetFunction


class Stream(ABC):
    """A finite, re-iterable sequence of ``T`` set functions on ``range(n)``.

    Attributes
    ----------
    n : int
        Ground-set size of every function.
    T : int
        Number of rounds.
    bound : float or None
        Public bound ``M`` on :math:`|f_t(S)|`, when known (learners need one).
    """

    n: int
    T: int
    bound: float | None
    rng: RNGLike = None
    #: Whether every pass yields the same functions (given the same ``rng``): the harness then
    #: reads the stream a second time for the comparator's per-round values instead of keeping
    #: the functions.
    reiterable: bool = True

    @abstractmethod
    def _generate(self, gen: np.random.Generator) -> Iterator[SetFunction]:
        """Yield the ``T`` functions (no validation)."""

    def iterate(self, *, rng: RNGLike = None) -> Iterator[SetFunction]:
        """Iterate over the functions, checking each one's type and ground set.

        Parameters
        ----------
        rng : int, Generator, SeedSequence or None, default=None
            Overrides the stream's own ``rng`` for this pass (ignored by deterministic streams).

        Raises
        ------
        ParameterTypeError, GroundSetMismatchError, StreamLengthError
            A generated item is not a SetFunction, has another ground set, or the source yields
            a number of functions other than ``T``.
        """
        gen = as_generator(self.rng if rng is None else rng)
        count = 0
        for f in self._generate(gen):
            if count >= self.T:
                raise StreamLengthError(
                    f"{type(self).__name__} yielded more than its declared T={self.T} functions."
                )
            _check_function(f, self.n, f"{type(self).__name__} item {count}")
            count += 1
            yield f
        if count != self.T:
            raise StreamLengthError(
                f"{type(self).__name__} declared T={self.T} rounds but yielded {count} functions."
            )

    def __iter__(self) -> Iterator[SetFunction]:
        return self.iterate()

    def __len__(self) -> int:
        return int(self.T)

    def materialize(self, *, rng: RNGLike = None) -> FunctionStream:
        """The functions of one pass as a :class:`FunctionStream` (fixed from then on)."""
        return FunctionStream(list(self.iterate(rng=rng)), bound=self.bound)

    def replace(self, t: int, f: SetFunction, *, rng: RNGLike = None) -> FunctionStream:
        """The neighbouring stream: this stream's functions (one pass) with round ``t`` (0-based)
        replaced by ``f``.

        This is the neighbouring relation of online private learning: the sequences differ in
        one function. ``bound`` is kept only if ``f`` is known to respect it (the caller's duty);
        it is copied unchanged.
        """
        t = check_int(t, "t", low=0, high=self.T - 1, caller="Stream.replace")
        _check_function(f, self.n, "f")
        fs = list(self.iterate(rng=rng))
        fs[t] = f
        return FunctionStream(fs, bound=self.bound)

    def __repr__(self) -> str:
        b = "undeclared" if self.bound is None else f"{self.bound:.4g}"
        return f"{type(self).__name__}(n={self.n}, T={self.T}, bound={b})"


def _check_function(f: object, n: int, what: str) -> None:
    if not isinstance(f, SetFunction):
        raise ParameterTypeError(
            f"{what} must be a dpsubmod SetFunction; got {type(f).__name__}."
        )
    if f.n != n:
        raise GroundSetMismatchError(
            f"{what} has a ground set of size {f.n} but the stream plays on n={n}; all functions "
            "of a stream must share the ground set range(n)."
        )


def _check_bound(bound: object, caller: str) -> float | None:
    if bound is None:
        return None
    return check_real(bound, "bound", low=0.0, low_open=True, caller=caller)


class FunctionStream(Stream):
    """A stream from an explicit list of functions (deterministic).

    Parameters
    ----------
    functions : sequence of SetFunction
        The ``T >= 1`` functions, all on the same ground set.
    bound : float, optional
        Public bound on :math:`|f_t(S)|`.

    Examples
    --------
    >>> from dpsubmod.functions import Modular
    >>> s = FunctionStream([Modular([1.0, -1.0]), Modular([0.0, 2.0])], bound=2.0)
    >>> s.n, s.T, [f([1]) for f in s]
    (2, 2, [-1.0, 2.0])
    """

    def __init__(self, functions: Sequence[SetFunction], *, bound: float | None = None):
        if isinstance(functions, SetFunction) or not isinstance(functions, Iterable):
            raise ParameterTypeError(
                "The 'functions' argument of FunctionStream must be a sequence of SetFunctions; "
                f"got {type(functions).__name__}."
            )
        fs = list(functions)
        if not fs:
            raise ValidationError("The 'functions' argument of FunctionStream is empty.")
        if not isinstance(fs[0], SetFunction):
            _check_function(fs[0], 0, "functions[0]")
        for i, f in enumerate(fs):
            _check_function(f, fs[0].n, f"functions[{i}]")
        self._hold(fs, bound)

    @classmethod
    def _checked(cls, fs: list[SetFunction], *, bound: float | None = None) -> FunctionStream:
        """The stream of ``fs``, which its caller has checked (non-empty, SetFunctions on one
        ground set) under the name of its own argument (:func:`as_stream`)."""
        obj = cls.__new__(cls)
        obj._hold(fs, bound)
        return obj

    def _hold(self, fs: list[SetFunction], bound: float | None) -> None:
        self.functions = fs
        self.n = fs[0].n
        self.T = len(fs)
        self.bound = _check_bound(bound, "FunctionStream")
        self.rng = None

    def _generate(self, gen: np.random.Generator) -> Iterator[SetFunction]:
        return iter(self.functions)

    def __getitem__(self, t: int) -> SetFunction:
        return self.functions[t]


class RecordStream(Stream):
    """One set function per record: round ``t`` plays ``build(records[t])``.

    The natural privacy unit: one record (one person arriving at round ``t``) determines one
    function, so replacing a record is replacing a function.

    Parameters
    ----------
    records : sequence
        The data, one item per round (``T = len(records)``).
    build : callable
        ``build(record) -> SetFunction`` on ``range(n)``.
    n : int
        Ground-set size (checked on every built function).
    bound : float, optional
        Public bound on :math:`|f_t(S)|`.
    """

    def __init__(self, records: Sequence[Any], build: Callable[[Any], SetFunction], *, n: int,
                 bound: float | None = None):
        if not callable(build):
            raise ParameterTypeError(
                "The 'build' argument of RecordStream must be callable; got "
                f"{type(build).__name__}."
            )
        try:
            T = len(records)
        except TypeError:
            raise ParameterTypeError(
                "The 'records' argument of RecordStream must be a sized sequence (list, array, "
                "DataFrame rows); materialise an iterator with list(...) first."
            ) from None
        check_int(T, "len(records)", low=1, caller="RecordStream")
        self.records = records
        self.build = build
        self.n = check_int(n, "n", low=1, caller="RecordStream")
        self.T = int(T)
        self.bound = _check_bound(bound, "RecordStream")
        self.rng = None

    def _generate(self, gen: np.random.Generator) -> Iterator[SetFunction]:
        for r in self.records:
            yield self.build(r)


class IIDStream(Stream):
    """``T`` i.i.d. functions ``sampler(rng)`` (a stochastic environment).

    Parameters
    ----------
    sampler : callable
        ``sampler(generator) -> SetFunction`` on ``range(n)``; all its randomness must come from
        the generator it is given.
    n, T : int
        Ground-set size and number of rounds.
    bound : float, optional
        Public bound on :math:`|f_t(S)|`.
    rng : int, Generator, SeedSequence or None, default=None
        Resolved at each pass; an integer seed gives the same functions on every pass.
    """

    def __init__(self, sampler: Callable[[np.random.Generator], SetFunction], *, n: int, T: int,
                 bound: float | None = None, rng: RNGLike = None):
        if not callable(sampler):
            raise ParameterTypeError(
                f"The 'sampler' argument of IIDStream must be callable; got "
                f"{type(sampler).__name__}."
            )
        self.sampler = sampler
        self.n = check_int(n, "n", low=1, caller="IIDStream")
        self.T = check_int(T, "T", low=1, caller="IIDStream")
        self.bound = _check_bound(bound, "IIDStream")
        self.rng = rng

    def _generate(self, gen: np.random.Generator) -> Iterator[SetFunction]:
        for _ in range(self.T):
            yield self.sampler(gen)


class SwitchingStream(Stream):
    """Regimes played in blocks: an adversarial, non-stationary environment.

    Round ``t`` (0-based) belongs to block ``t // period``; block ``b`` plays regime
    ``b % len(regimes)`` (``order="cyclic"``) or a uniformly random regime
    (``order="random"``, drawn per block from ``rng``). ``period=1`` with two regimes gives the
    classic alternating sequence that defeats Follow the Leader.

    Parameters
    ----------
    regimes : sequence of SetFunction
        At least one function, same ground set.
    T : int
        Number of rounds.
    period : int, default=1
        Block length.
    order : {"cyclic", "random"}, default="cyclic"
    bound : float, optional
        Public bound on :math:`|f_t(S)|`.
    rng : int, Generator, SeedSequence or None, default=None
        Used by ``order="random"`` only.
    """

    def __init__(self, regimes: Sequence[SetFunction], *, T: int, period: int = 1,
                 order: str = "cyclic", bound: float | None = None, rng: RNGLike = None):
        base = FunctionStream(regimes)
        self.regimes = base.functions
        self.n = base.n
        self.T = check_int(T, "T", low=1, caller="SwitchingStream")
        self.period = check_int(period, "period", low=1, caller="SwitchingStream")
        if order not in ("cyclic", "random"):
            raise ValidationError(
                f"The 'order' parameter of SwitchingStream must be 'cyclic' or 'random'; got "
                f"{order!r}."
            )
        self.order = order
        self.bound = _check_bound(bound, "SwitchingStream")
        self.rng = rng

    def _generate(self, gen: np.random.Generator) -> Iterator[SetFunction]:
        R = len(self.regimes)
        n_blocks = -(-self.T // self.period)
        if self.order == "random":
            which = gen.integers(R, size=n_blocks)
        else:
            which = np.arange(n_blocks) % R
        for t in range(self.T):
            yield self.regimes[int(which[t // self.period])]


class OneShotStream(Stream):
    """Set functions read once from an iterator or a generator, checked one by one as they come.

    Nothing is read ahead but the first function (for the ground-set size ``n``), and nothing
    is kept: an endless generator is fine, and a consumer that needs at most ``T`` rounds stops
    reading after ``T + 1`` (the harness raises :class:`~dpsubmod.errors.StreamLengthError`
    there). The length is unknown in advance (``T`` is ``None``), and the stream can be
    iterated once (``reiterable`` is ``False``).

    Parameters
    ----------
    iterable : iterable of SetFunction
        Not a sequence (wrap a list in :class:`FunctionStream`).
    bound : float, optional
        Public bound on :math:`|f_t(S)|`.

    Raises
    ------
    ValidationError
        The iterable yields nothing.
    """

    reiterable = False

    def __init__(self, iterable: Iterable[SetFunction], *, bound: float | None = None):
        self._it = iter(iterable)
        try:
            first = next(self._it)
        except StopIteration:
            raise ValidationError("The stream given is empty: it yields no function.") from None
        _check_function(first, getattr(first, "n", 0), "the stream's item 0")
        self._first: SetFunction | None = first
        self.n = first.n
        self.T = None  # type: ignore[assignment]
        self.bound = _check_bound(bound, "OneShotStream")
        self.rng = None
        self._read = False

    def _generate(self, gen: np.random.Generator) -> Iterator[SetFunction]:
        first, self._first = self._first, None
        if first is not None:
            yield first
        yield from self._it

    def iterate(self, *, rng: RNGLike = None) -> Iterator[SetFunction]:
        """The one pass over the functions, each checked as it comes (see :class:`Stream`).

        Raises
        ------
        ValidationError
            On a second pass.
        """
        if self._read:
            raise ValidationError(
                "A one-shot stream (an iterator or generator) can be read once; wrap the "
                "functions in FunctionStream([...]) or use a Stream to read them again."
            )
        self._read = True
        return self._checked()

    def _checked(self) -> Iterator[SetFunction]:
        for count, f in enumerate(self._generate(None)):  # type: ignore[arg-type]
            _check_function(f, self.n, f"the stream's item {count}")
            yield f

    def __len__(self) -> int:
        raise TypeError("A one-shot stream has no length known in advance.")

    def __repr__(self) -> str:
        b = "undeclared" if self.bound is None else f"{self.bound:.4g}"
        return f"OneShotStream(n={self.n}, T=unknown, bound={b})"


def as_stream(obj: object, *, bound: float | None = None, name: str | None = None,
              caller: str | None = None) -> Stream:
    """``obj`` as a Stream: a Stream passes through, a sequence of SetFunctions (list, tuple,
    array) becomes a :class:`FunctionStream`, any other iterable (an iterator, a generator) a
    :class:`OneShotStream`, read lazily. With ``name`` and ``caller``, a refusal names the
    caller's argument."""
    arg = f"The '{name}' argument of {caller} must be" if name and caller else "Expected"
    if isinstance(obj, Stream):
        return obj
    if isinstance(obj, SetFunction) or not isinstance(obj, Iterable):
        raise ParameterTypeError(
            f"{arg} a Stream or an iterable of SetFunctions; got "
            f"{type(obj).__name__}. Wrap your functions in FunctionStream([...])."
        )
    if hasattr(obj, "__len__") and hasattr(obj, "__getitem__"):
        fs = list(obj)  # type: ignore[call-overload]
        if name and caller:
            if not fs:
                raise ValidationError(f"The '{name}' argument of {caller} is empty; pass at "
                                      "least one SetFunction.")
            for i, f in enumerate(fs):
                _check_function(f, fs[0].n if isinstance(fs[0], SetFunction) else 0,
                                f"Item {i} of the '{name}' argument of {caller}")
            return FunctionStream._checked(fs, bound=bound)
        return FunctionStream(fs, bound=bound)
    return OneShotStream(obj, bound=bound)  # type: ignore[arg-type]
