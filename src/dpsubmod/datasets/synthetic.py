"""Synthetic generators. All take ``rng`` and touch no global state."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .._rng import RNGLike, as_generator
from .._validation import check_int, check_real

__all__ = ["clustered_points", "random_coverage"]


def clustered_points(n_points: int, dim: int = 2, *, n_clusters: int = 8, spread: float = 0.05,
                     rng: RNGLike = None) -> np.ndarray:
    """Points in ``[0, 1]^dim`` drawn around ``n_clusters`` random centres (Gaussian blobs,
    clipped to the unit cube). One row stands for one person's location."""
    n_points = check_int(n_points, "n_points", low=1, caller="clustered_points")
    dim = check_int(dim, "dim", low=1, caller="clustered_points")
    n_clusters = check_int(n_clusters, "n_clusters", low=1, caller="clustered_points")
    spread = check_real(spread, "spread", low=0.0, caller="clustered_points")
    gen = as_generator(rng)
    centres = gen.random((n_clusters, dim))
    labels = gen.integers(n_clusters, size=n_points)
    pts = centres[labels] + spread * gen.standard_normal((n_points, dim))
    return np.clip(pts, 0.0, 1.0)


def random_coverage(n_sets: int, n_elements: int, *, density: float = 0.01,
                    rng: RNGLike = None) -> sp.csr_array:
    """A random sparse incidence matrix (sets x elements) with the given density."""
    n_sets = check_int(n_sets, "n_sets", low=1, caller="random_coverage")
    n_elements = check_int(n_elements, "n_elements", low=1, caller="random_coverage")
    density = check_real(density, "density", low=0.0, high=1.0, low_open=True,
                         caller="random_coverage")
    gen = as_generator(rng)
    m = sp.random_array((n_sets, n_elements), density=density, format="csr", rng=gen,
                        data_sampler=lambda size: np.ones(size))
    return sp.csr_array(m)
