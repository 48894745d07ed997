"""Randomness policy (SPEC 7).

Every public callable takes a keyword-only ``rng=None`` and resolves it once at entry with
:func:`as_generator`; streams per round, run or worker come from ``Generator.spawn``.
numpy generators are for simulation and reproducibility, not for security; the secure noise
backend lives in :mod:`dpsubmod.privacy.backends`.
"""

from __future__ import annotations

import numpy as np

from .errors import ParameterTypeError

RNGLike = int | np.integer | np.random.Generator | np.random.SeedSequence | None

_ACCEPTED = "an int >= 0, a numpy SeedSequence, a numpy Generator or None"


def _where(caller: str | None) -> str:
    return f" of {caller}" if caller else ""


def check_rng(rng: object, caller: str | None = None) -> None:
    """Refuse a value :func:`as_generator` would not accept, without building a generator.

    For deterministic callables, which take ``rng`` only to share one signature: a bad value is
    still a mistake worth reporting at entry.

    Raises
    ------
    ParameterTypeError
        ``rng`` is a bool (``True`` is an int to Python, but never meant as a seed), a float
        (even ``2.0``), a string, a negative integer, a legacy ``RandomState``, or anything else.
    """
    if rng is None or isinstance(rng, np.random.Generator | np.random.SeedSequence):
        return
    if isinstance(rng, bool | np.bool_):
        raise ParameterTypeError(
            f"The 'rng' parameter{_where(caller)} must be {_ACCEPTED}; got the bool {rng!r}. "
            "Pass an integer seed such as rng=0."
        )
    if isinstance(rng, int | np.integer):
        if rng < 0:
            raise ParameterTypeError(
                f"The 'rng' parameter{_where(caller)} must be {_ACCEPTED}; got the negative "
                f"seed {rng}. Seeds are non-negative integers."
            )
        return
    if isinstance(rng, np.random.RandomState):
        raise ParameterTypeError(
            f"The 'rng' parameter{_where(caller)} must be {_ACCEPTED}; got a legacy "
            "RandomState. Pass np.random.default_rng(seed) instead."
        )
    hint = " Seeds are integers: pass rng=int(seed)." if isinstance(
        rng, float | np.floating | str) else ""
    raise ParameterTypeError(
        f"The 'rng' parameter{_where(caller)} must be {_ACCEPTED}; got {rng!r} of type "
        f"{type(rng).__name__}.{hint}"
    )


def as_generator(rng: RNGLike = None, caller: str | None = None) -> np.random.Generator:
    """Return a numpy Generator from ``rng``.

    Parameters
    ----------
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None, default=None
        ``None`` draws fresh OS entropy; a non-negative int or a ``SeedSequence`` seeds a new
        ``PCG64`` generator; a ``Generator`` is returned unaltered (so a caller's stream is
        continued). Anything else (bools, floats, strings, negative ints, ``RandomState``) is
        refused with :class:`~dpsubmod.errors.ParameterTypeError`.
    caller : str, optional
        The public function, named in the error message.

    Returns
    -------
    numpy.random.Generator
    """
    check_rng(rng, caller)
    if isinstance(rng, np.random.Generator):
        return rng
    return np.random.default_rng(rng)  # type: ignore[arg-type]
