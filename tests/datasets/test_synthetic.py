"""Synthetic generators: shapes, seeding, and the planted structure they promise."""

from __future__ import annotations

import numpy as np
import pytest

from dpsubmod.datasets import (
    categorical_table,
    clustered_points,
    coverage_records,
    grid_candidates,
    random_coverage,
)
from dpsubmod.errors import DPSubmodError
from dpsubmod.functions import Coverage, MutualInformation
from dpsubmod.offline import maximize


@pytest.mark.parametrize("make", [
    lambda rng: clustered_points(50, 3, rng=rng),
    lambda rng: random_coverage(20, 40, density=0.2, rng=rng).toarray(),
    lambda rng: coverage_records(30, 8, rng=rng),
    lambda rng: np.column_stack(categorical_table(40, 5, rng=rng)),
])
def test_same_seed_same_data(make):
    a, b, c = make(11), make(np.random.default_rng(11)), make(12)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_clustered_points_and_random_coverage_shapes():
    P = clustered_points(200, 2, n_clusters=3, rng=0)
    assert P.shape == (200, 2) and P.min() >= 0.0 and P.max() <= 1.0
    A = random_coverage(10, 1000, density=0.1, rng=0)
    assert A.shape == (10, 1000) and set(np.unique(A.data)) == {1.0}


def test_coverage_records_feed_coverage_from_records():
    R = coverage_records(400, 12, density=0.15, popularity=2.0, rng=0)
    assert R.shape == (400, 12) and set(np.unique(R)) <= {0, 1}
    # mean density 0.15 over 4800 cells: 6 standard deviations is about 0.03
    assert abs(R.mean() - 0.15) < 0.05
    f = Coverage.from_records([np.flatnonzero(r) for r in R], 12)
    assert f.sensitivity == pytest.approx(1 / 400)
    assert f(range(12)) == pytest.approx(np.mean(R.any(axis=1)))


def test_categorical_table_plants_the_informative_features():
    X, y = categorical_table(3000, 8, n_informative=3, n_categories=4, noise=0.05, rng=0)
    assert X.shape == (3000, 8) and y.shape == (3000,)
    assert X.min() == 0 and X.max() == 3 and set(np.unique(y)) == {0, 1}
    f = MutualInformation.from_records(X, y)
    assert set(maximize(f, 3).selection) == {0, 1, 2}


def test_grid_candidates():
    C = grid_candidates(2, 3, (0.0, 3.0, 10.0, 12.0))
    np.testing.assert_allclose(C, [[0.5, 10.5], [1.5, 10.5], [2.5, 10.5],
                                   [0.5, 11.5], [1.5, 11.5], [2.5, 11.5]])
    for bad in [(0, 1, 0), (1, 0, 0, 1), (0, 1, 0, np.inf)]:
        with pytest.raises(DPSubmodError, match="bounds"):
            grid_candidates(2, 2, bad)
    with pytest.raises(DPSubmodError, match="rows"):
        grid_candidates(0, 2, (0, 1, 0, 1))
