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
* :func:`stochastic_stream` is a ready-made synthetic minimization environment.

Generated streams take ``rng`` (SPEC 7) and resolve it each time they are iterated, so a stream
built with an integer seed yields the same functions on every pass. :meth:`Stream.iterate`
accepts an ``rng`` that overrides the stored one (the harness passes a child stream spawned from
its own seed).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from .._rng import RNGLike, as_generator
from .._validation import check_finite, check_int, check_real
from ..errors import GroundSetMismatchError, ParameterTypeError, StreamLengthError, ValidationError
from ..functions.base import SetFunction

__all__ = [
    "Stream",
    "FunctionStream",
    "RecordStream",
    "IIDStream",
    "SwitchingStream",
    "stochastic_stream",
    "ftl_trap_stream",
    "as_stream",
]


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


class _SignStream(Stream):
    """i.i.d. sign vectors; one function object per sign pattern, reused (see stochastic_stream)."""

    def __init__(self, n: int, T: int, p_plus: np.ndarray,
                 make: Callable[[np.ndarray], SetFunction], rng: RNGLike):
        self.n, self.T, self.bound, self.rng = n, T, 1.0, rng
        self._p = p_plus
        self._make = make
        self._cache: dict[int, SetFunction] = {}

    def _generate(self, gen: np.random.Generator) -> Iterator[SetFunction]:
        weights = 1 << np.arange(self.n, dtype=np.int64)
        # All draws at once: T x n uniforms in one call, then one pattern code per round.
        codes = (gen.random((self.T, self.n)) < self._p) @ weights
        for code in codes.tolist():
            f = self._cache.get(code)
            if f is None:
                signs = np.where((code >> np.arange(self.n)) & 1, 1.0, -1.0)
                f = self._cache[code] = self._make(signs)
            yield f


def ftl_trap_stream(weights: object, T: int) -> Stream:
    r"""The modular stream that defeats Follow the Leader: :math:`w/2`, then :math:`-w, w, -w,
    \dots`

    Each element's cumulative cost swings between :math:`w_a/2` and :math:`-w_a/2`, so a learner
    that follows the leader too closely is wrong every round, and any learner with a step size
    tuned to :math:`T` pays :math:`\Theta(\sqrt T)` regret against the best fixed set. It is the
    stream on which the full-information regret rates of Hazan and Kale (2012) and of Cardoso and
    Cummings (2019, Theorem 7) are tight.

    Parameters
    ----------
    weights : array-like of shape (n,)
        The modular costs; the positive and the negative weights each sum to at most 1 in
        absolute value, so that every value lies in ``[-1, 1]``.
    T : int
        Number of rounds.

    Examples
    --------
    >>> s = ftl_trap_stream([0.6, -0.4], 4)
    >>> [f([0]) for f in s]
    [0.3, -0.6, 0.6, -0.6]
    """
    from ..functions import Modular

    T = check_int(T, "T", low=1, caller="ftl_trap_stream")
    w = np.asarray(weights, dtype=float)
    if w.ndim != 1 or w.size == 0 or not np.isfinite(w).all():
        raise ValidationError("The 'weights' argument of ftl_trap_stream must be a non-empty "
                              "1-d array of finite numbers.")
    reach = max(w[w > 0].sum(), -w[w < 0].sum())
    if reach > 1.0 + 1e-12:
        raise ValidationError("The 'weights' argument of ftl_trap_stream must keep every value "
                              "in [-1, 1]: the positive weights and the negative weights must "
                              f"each sum to at most 1 in absolute value; got {reach:.4g}. "
                              "Rescale the weights.")
    half, plus, minus = Modular(0.5 * w), Modular(w), Modular(-w)
    return FunctionStream([half] + [minus if t % 2 else plus for t in range(1, T)], bound=1.0)


def stochastic_stream(n: int, T: int, *, means: object = None, coupling: float = 0.5,
                      rng: RNGLike = None) -> Stream:
    r"""A stochastic minimization environment with a planted structure and range ``[-1, 1]``.

    .. math::

        f_t(S) = \frac{1}{Z}\Bigl(\sum_{i \in S} c_t(i) + \lambda \sqrt{|S|}\Bigr),
        \qquad Z = n + \lambda\sqrt n,

    with independent signs :math:`c_t(i) \in \{-1, +1\}`, :math:`\mathbb{E}\, c_t(i) = m_i`, and
    coupling :math:`\lambda \ge 0` (a concave function of the cardinality, so each :math:`f_t` is
    submodular and not modular when :math:`\lambda > 0`). Elements with negative mean lower the
    expected cost and belong to the planted minimizer; coordinates with mean 0 make the best set
    in hindsight exploit the noise, which costs every learner :math:`\Theta(\sqrt T)` regret (the
    classical lower-bound construction), so the regret of a learner that learns at the optimal
    rate grows like :math:`\sqrt T` on this stream.

    Since there are only :math:`2^n` sign patterns, the stream reuses one function object per
    pattern (``Modular + Scaled(FeatureBased)``), which makes exact comparators cheap.

    Parameters
    ----------
    n : int
        Ground-set size (at most 20).
    T : int
        Rounds.
    means : array-like of float in [-1, 1], shape (n,), optional
        :math:`m_i`; default ``linspace(-0.5, 0.5, n)`` (negative, zero and positive means).
    coupling : float, default=0.5
        :math:`\lambda`.
    rng : int, Generator, SeedSequence or None, default=None

    Returns
    -------
    Stream
        With ``bound = 1``.
    """
    from ..functions import FeatureBased, Modular, Scaled, Sum

    n = check_int(n, "n", low=1, high=20, caller="stochastic_stream")
    T = check_int(T, "T", low=1, caller="stochastic_stream")
    lam = check_real(coupling, "coupling", low=0.0, caller="stochastic_stream")
    if means is None:
        m = np.linspace(-0.5, 0.5, n)
    else:
        m = check_finite(means, "means", caller="stochastic_stream", ndim=1).astype(float)
        if m.shape != (n,) or m.min() < -1 or m.max() > 1:
            raise ValidationError(
                f"The 'means' argument of stochastic_stream must hold n={n} values in [-1, 1]; "
                f"got shape {m.shape}."
            )
    Z = n + lam * math.sqrt(n)
    card = Scaled(FeatureBased(np.ones((n, 1))), lam / Z) if lam > 0 else None

    def make(signs: np.ndarray) -> SetFunction:
        mod = Modular(signs / Z)
        return mod if card is None else Sum([mod, card])

    return _SignStream(n, T, (1.0 + m) / 2.0, make, rng)


def as_stream(obj: object, *, bound: float | None = None) -> Stream:
    """``obj`` as a Stream: a Stream passes through, a sequence of SetFunctions is wrapped."""
    if isinstance(obj, Stream):
        return obj
    if isinstance(obj, SetFunction) or not isinstance(obj, Iterable):
        raise ParameterTypeError(
            "Expected a Stream or a sequence of SetFunctions; got "
            f"{type(obj).__name__}. Wrap your functions in FunctionStream([...])."
        )
    return FunctionStream(list(obj), bound=bound)  # type: ignore[arg-type]
