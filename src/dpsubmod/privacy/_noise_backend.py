"""The interface between the mechanisms and a source of randomness (private module).

Public names are re-exported by :mod:`dpsubmod.privacy.backends`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import ValidationError

SENSITIVITY_KINDS = ("linf", "l1", "l2", "range")


class Release:
    """A noise draw that is built and checked but not yet run.

    The mechanisms prepare the draw, write ``engine`` into the event they charge, charge the
    budget, and only then call the release: whatever can fail (a missing engine, a privacy map
    above the charge) fails while preparing, before anything is charged or drawn.

    Attributes
    ----------
    engine : str
        The sampling engine that will draw, with its version (``"opendp-0.16.0"``,
        ``"python-dpsubmod-0.1.0"``, ``"numpy-2.1.0"``).
    """

    __slots__ = ("engine", "_run")

    def __init__(self, engine: str, run: Callable[[], Any]):
        self.engine = engine
        self._run = run

    def __call__(self) -> Any:
        return self._run()

    def __repr__(self) -> str:
        return f"Release(engine={self.engine!r})"


def check_kind(kind: str) -> None:
    if kind not in SENSITIVITY_KINDS:
        raise ValidationError(
            f"The 'kind' parameter must be one of {list(SENSITIVITY_KINDS)}; got {kind!r}."
        )


class NoiseBackend(ABC):
    """Interface between the mechanisms and a source of randomness.

    A backend draws noise for given noise parameters; it does not validate privacy parameters
    (the mechanisms do, before anything is drawn) and it does not record anything.

    Every sampling method takes ``sensitivity`` (the declared sensitivity of the query, as the
    mechanism was given it). Continuous backends ignore it; grid backends choose their grid from
    it, so that :meth:`effective_sensitivity` and the draw agree on the same grid. The optional
    ``epsilon``/``rho`` keywords are what the caller charges for the draw; a backend whose
    engine states its own privacy map (OpenDP) checks that map against them before drawing.

    The ``prepare_*`` methods return a :class:`Release` (built and checked, not yet drawn); the
    one-shot methods (``add_laplace``, ``exponential``, ...) prepare and draw at once. Subclasses
    implement the one-shot methods; the default ``prepare_*`` methods defer to them.

    Attributes
    ----------
    name : str
        Short name recorded in every :class:`~dpsubmod.privacy.events.PrivacyEvent` note.
    engine : str
        The sampling engine and its version.
    secure : bool
        Whether the backend is meant to protect real data (exact sampling on a cryptographic
        source).
    discrete : bool
        Whether releases are on a grid (then Gaussian noise is certified through zCDP only).
    """

    name: str = "abstract"
    engine: str = "abstract"
    secure: bool = False
    discrete: bool = False

    # -- calibration --------------------------------------------------------------------------
    def effective_sensitivity(self, sensitivity: float, *, kind: str = "linf",
                              dim: int = 1, grid_of: float | None = None) -> float:
        """The sensitivity the noise must be calibrated to on this backend.

        Parameters
        ----------
        sensitivity : float
            The declared sensitivity (``kind`` says in which norm).
        kind : {"linf", "l1", "l2", "range"}, default="linf"
            ``"linf"``: a scalar, or each score of a vector; ``"l1"``/``"l2"``: a vector of
            ``dim`` coordinates; ``"range"``: the width of the interval holding every score
            difference (bounded-range exponential mechanism).
        dim : int, default=1
            Number of coordinates of the released vector (``"l1"``, ``"l2"``).
        grid_of : float or None, default=None
            The declared sensitivity that chose the grid, when ``sensitivity`` is another
            bound measured on that grid (a privacy map at another input distance); ``None``
            means ``sensitivity`` itself. Continuous backends ignore it.

        Returns
        -------
        float
            ``sensitivity`` itself for continuous backends.
        """
        check_kind(kind)
        return float(sensitivity)

    def label(self, sensitivity: float, *, dim: int = 1, engine: str | None = None) -> str:
        """A short description for ledger notes (name and, for grid backends, grid and engine)."""
        return self.name

    def quantize_scores(self, scores: np.ndarray, *, sensitivity: float) -> np.ndarray:
        """The scores as the selection samplers see them (grid backends round them).

        ``-inf`` entries stay ``-inf``. Exact output distributions are computed from these.
        """
        return np.array(scores, dtype=float)

    # -- prepared draws -----------------------------------------------------------------------
    def prepare_laplace(self, values: np.ndarray, scale: float, *, sensitivity: float,
                        epsilon: float | None = None) -> Release:
        """Prepare :meth:`add_laplace` (``epsilon``: the charge, checked by OpenDP engines)."""
        return Release(self.engine, lambda: self.add_laplace(values, scale,
                                                             sensitivity=sensitivity))

    def prepare_gaussian(self, values: np.ndarray, sigma: float, *, sensitivity: float,
                         rho: float | None = None) -> Release:
        """Prepare :meth:`add_gaussian` (``rho``: the zCDP charge)."""
        return Release(self.engine, lambda: self.add_gaussian(values, sigma,
                                                              sensitivity=sensitivity))

    def prepare_exponential(self, scores: np.ndarray, weight: float, *, sensitivity: float,
                            kind: str = "linf", monotonic: bool = False,
                            epsilon: float | None = None) -> Release:
        """Prepare :meth:`exponential`.

        ``kind`` (``"linf"`` or ``"range"``) and ``monotonic`` say how ``sensitivity`` bounds the
        range of the score differences (range ``2 sensitivity``, ``sensitivity`` when monotone,
        ``sensitivity`` itself for ``"range"``); ``epsilon`` is the charge.
        """
        return Release(self.engine, lambda: self.exponential(scores, weight,
                                                             sensitivity=sensitivity))

    def prepare_report_noisy_max(self, scores: np.ndarray, scale: float, *, sensitivity: float,
                                 monotonic: bool = False,
                                 epsilon: float | None = None) -> Release:
        """Prepare :meth:`report_noisy_max` (``epsilon``: the charge)."""
        return Release(self.engine, lambda: self.report_noisy_max(scores, scale,
                                                                  sensitivity=sensitivity))

    def prepare_permute_and_flip(self, scores: np.ndarray, weight: float, *, sensitivity: float,
                                 monotonic: bool = False,
                                 epsilon: float | None = None) -> Release:
        """Prepare :meth:`permute_and_flip` (``epsilon``: the charge)."""
        return Release(self.engine, lambda: self.permute_and_flip(scores, weight,
                                                                  sensitivity=sensitivity))

    # -- additive noise -----------------------------------------------------------------------
    @abstractmethod
    def add_laplace(self, values: np.ndarray, scale: float, *, sensitivity: float,
                    epsilon: float | None = None) -> np.ndarray:
        """Return ``values`` plus i.i.d. Laplace(``scale``) noise per coordinate."""

    @abstractmethod
    def add_gaussian(self, values: np.ndarray, sigma: float, *, sensitivity: float,
                     rho: float | None = None) -> np.ndarray:
        """Return ``values`` plus i.i.d. N(0, ``sigma**2``) noise per coordinate."""

    @abstractmethod
    def add_l2_laplace(self, values: np.ndarray, scale: float, *,
                       sensitivity: float) -> np.ndarray:
        """Return ``values`` plus noise of density proportional to ``exp(-||z||_2 / scale)``."""

    # -- selection ----------------------------------------------------------------------------
    @abstractmethod
    def exponential(self, scores: np.ndarray, weight: float, *, sensitivity: float,
                    kind: str = "linf", monotonic: bool = False,
                    epsilon: float | None = None) -> int:
        """Index ``i`` drawn with probability proportional to ``exp(weight * scores[i])``.

        Entries equal to ``-inf`` are never drawn; at least one entry is finite.
        """

    @abstractmethod
    def report_noisy_max(self, scores: np.ndarray, scale: float, *, sensitivity: float,
                         monotonic: bool = False, epsilon: float | None = None) -> int:
        """``argmax_i scores[i] + Laplace(scale)`` (``-inf`` entries never win)."""

    @abstractmethod
    def permute_and_flip(self, scores: np.ndarray, weight: float, *, sensitivity: float,
                         monotonic: bool = False, epsilon: float | None = None) -> int:
        """Permute-and-flip with acceptance probabilities ``exp(weight * (scores[i] - max))``."""
