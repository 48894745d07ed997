"""Randomness policy (SPEC 7).

Every public callable takes a keyword-only ``rng=None`` and resolves it once at entry with
:func:`as_generator`; streams per round, run or worker come from ``Generator.spawn``.
numpy generators are for simulation and reproducibility, not for security; the secure noise
backend lives in :mod:`dpsubmod.privacy.backends`.
"""

from __future__ import annotations

import numpy as np

from .errors import ParameterTypeError

__all__ = ["as_generator", "standard_gumbel", "RNGLike"]

RNGLike = int | np.integer | np.random.Generator | np.random.SeedSequence | None


def as_generator(rng: RNGLike = None) -> np.random.Generator:
    """Return a numpy Generator from ``rng``.

    Parameters
    ----------
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None, default=None
        ``None`` draws fresh OS entropy; an int or ``SeedSequence`` seeds a new ``PCG64``
        generator; a ``Generator`` is returned unaltered (so a caller's stream is continued).

    Returns
    -------
    numpy.random.Generator
    """
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, np.random.RandomState):
        raise ParameterTypeError(
            "The 'rng' parameter must be an int, a numpy SeedSequence, a numpy Generator or None; "
            "got a legacy RandomState. Pass np.random.default_rng(seed) instead."
        )
    if rng is None or isinstance(rng, (int, np.integer, np.random.SeedSequence)):
        if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool) and rng < 0:
            raise ParameterTypeError(f"The 'rng' seed must be a non-negative integer; got {rng}.")
        return np.random.default_rng(rng)
    raise ParameterTypeError(
        "The 'rng' parameter must be an int, a numpy SeedSequence, a numpy Generator or None; "
        f"got {type(rng).__name__}."
    )


def standard_gumbel(gen: np.random.Generator, size: int | tuple[int, ...]) -> np.ndarray:
    """Standard Gumbel variates, drawn as :math:`-\\log E` with :math:`E \\sim \\mathrm{Exp}(1)`.

    Exact in distribution (:math:`P(-\\log E \\le x) = e^{-e^{-x}}`, the Gumbel law) and about
    2.5 times faster than ``Generator.gumbel``, which takes two logarithms per draw where the
    ziggurat exponential sampler takes none. The exponential mechanism's Gumbel-max draws
    run through this one function, so the local, partitioned and Hedge samplers agree.

    Parameters
    ----------
    gen : numpy.random.Generator
    size : int or tuple of int

    Returns
    -------
    ndarray of float64
    """
    e = gen.standard_exponential(size=size)
    np.log(e, out=e)
    np.negative(e, out=e)
    return e

