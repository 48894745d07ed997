"""Synthetic generators. All generators take ``rng`` and touch no global state; the same seed
gives the same data.

Each generator's docstring says what one row stands for, so that the privacy unit of a simulated
study ("replace one record") is clear.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .._rng import RNGLike, as_generator
from .._validation import check_int, check_real


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
    """A random sparse incidence matrix (sets x elements) with the given density.

    Rows are candidate sets and columns elements, as :class:`~dpsubmod.functions.Coverage`
    expects; each entry is 1 independently with probability ``density``. For person-level
    records (one row per person) use :func:`coverage_records`.
    """
    n_sets = check_int(n_sets, "n_sets", low=1, caller="random_coverage")
    n_elements = check_int(n_elements, "n_elements", low=1, caller="random_coverage")
    density = check_real(density, "density", low=0.0, high=1.0, low_open=True,
                         caller="random_coverage")
    gen = as_generator(rng)
    # A binomial count of cells, then that many distinct cells: every cell is 1 independently
    # with probability `density`, in memory proportional to the nonzeros.
    cells = n_sets * n_elements
    nnz = int(gen.binomial(cells, density))
    rows, cols = np.divmod(np.sort(gen.choice(cells, size=nnz, replace=False)), n_elements)
    indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=n_sets))])
    return sp.csr_array((np.ones(nnz), cols, indptr), shape=(n_sets, n_elements))


def coverage_records(n_people: int, n_sets: int, *, density: float = 0.1,
                     popularity: float = 1.0, rng: RNGLike = None) -> np.ndarray:
    """Person-level coverage records: a 0/1 matrix of shape ``(n_people, n_sets)``.

    One row is one person; ``out[i, j] = 1`` when candidate set ``j`` covers person ``i`` (the
    site is within their reach, they read the topic). Entry ``(i, j)`` is 1 independently with
    probability ``density * w_j / mean(w)`` (clipped to 1), where the set popularities ``w_j``
    are ``Uniform(0, 1) ** popularity``: ``popularity = 0`` makes all sets alike, larger values
    make a few sets cover most people. Feed the rows to ``Coverage.from_records`` (via
    ``[np.flatnonzero(r) for r in out]``) or write them as a CSV for ``dpsubmod select --task
    coverage``.
    """
    caller = "coverage_records"
    n_people = check_int(n_people, "n_people", low=1, caller=caller)
    n_sets = check_int(n_sets, "n_sets", low=1, caller=caller)
    density = check_real(density, "density", low=0.0, high=1.0, caller=caller)
    popularity = check_real(popularity, "popularity", low=0.0, caller=caller)
    gen = as_generator(rng)
    w = gen.random(n_sets) ** popularity
    prob = np.clip(density * w / max(w.mean(), 1e-12), 0.0, 1.0)
    return (gen.random((n_people, n_sets)) < prob).astype(np.int64)


def categorical_table(n_records: int, n_features: int, *, n_informative: int = 3,
                      n_categories: int = 4, noise: float = 0.3,
                      rng: RNGLike = None) -> tuple[np.ndarray, np.ndarray]:
    """A discrete feature-selection table ``(X, y)`` with a known set of informative features.

    One row is one person: ``n_features`` categorical answers in ``0 .. n_categories - 1`` and a
    binary label. The label is a noisy majority vote of the first ``n_informative`` features
    (each compared with the middle category), flipped with probability ``noise``; the other
    features are independent uniform noise. Useful as a ground truth for mutual-information
    feature selection (the informative features are ``0 .. n_informative - 1``).

    Returns
    -------
    X : ndarray of int64, shape (n_records, n_features)
    y : ndarray of int64, shape (n_records,)
    """
    caller = "categorical_table"
    n_records = check_int(n_records, "n_records", low=1, caller=caller)
    n_features = check_int(n_features, "n_features", low=1, caller=caller)
    n_informative = check_int(n_informative, "n_informative", low=0, high=n_features,
                              caller=caller)
    n_categories = check_int(n_categories, "n_categories", low=2, caller=caller)
    noise = check_real(noise, "noise", low=0.0, high=1.0, caller=caller)
    gen = as_generator(rng)
    X = gen.integers(n_categories, size=(n_records, n_features))
    votes = (2 * X[:, :n_informative] >= n_categories).sum(axis=1)
    y = (2 * votes > n_informative).astype(np.int64)
    flip = gen.random(n_records) < noise
    y[flip] = 1 - y[flip]
    return X.astype(np.int64), y
