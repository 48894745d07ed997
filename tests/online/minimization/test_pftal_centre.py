"""SubmodPFTAL's centred regulariser, its default H, and the modular-plus-path-cut stream."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from dpsubmod.errors import GroundSetMismatchError, ValidationError
from dpsubmod.online import SubmodPFTAL, modular_path_stream, run
from dpsubmod.online.comparators import hindsight_min
from dpsubmod.online.minimization.bounds import best_submod_pftal_H, noise_scaled_H
from dpsubmod.privacy.tree_aggregator import TreeAggregator

SETS4 = [np.array(m, dtype=bool) for m in itertools.product([False, True], repeat=4)]


def test_modular_path_stream_is_bounded_submodular_and_its_best_set_is_everything():
    fs = list(modular_path_stream(4, 300, rng=0))
    assert [f(SETS4[5]) for f in modular_path_stream(4, 300, rng=0)] == [f(SETS4[5]) for f in fs]
    for f in fs[:40]:
        assert max(abs(f(S)) for S in SETS4) <= 1.0 + 1e-12
        assert f.cut_form() is not None
    best = hindsight_min(fs)
    assert best.exact and best.selection == (0, 1, 2, 3)
    # E f(V) = sum(means) / Z = -1.8 / 5.5; the empty set costs 0 every round
    assert np.mean([f(SETS4[-1]) for f in fs]) == pytest.approx(-1.8 / 5.5, abs=0.05)
    assert all(f(SETS4[0]) == 0.0 for f in fs)


@pytest.mark.parametrize("kw, match", [
    ({"means": [0.1, 0.2]}, "'means' argument of modular_path_stream must hold n=4"),
    ({"means": [-2.0, 0.0, 0.0, 0.0]}, "'means'"),
    ({"cut": -0.5}, "'cut'"),
])
def test_modular_path_stream_refuses_bad_arguments_by_name(kw, match):
    with pytest.raises(ValidationError, match=match):
        modular_path_stream(4, 10, **kw)


@pytest.mark.parametrize("centre, err, match", [
    ([0.5, 0.5], GroundSetMismatchError, r"'centre' parameter of SubmodPFTAL .* shape \(3,\)"),
    (1.5, ValidationError, r"'centre' parameter of SubmodPFTAL must lie in the cube"),
    ([0.0, -0.1, 0.2], ValidationError, r"'centre'"),
    ([[0.5] * 3], GroundSetMismatchError, r"'centre'"),
    (math.nan, ValidationError, r"'centre'"),
])
def test_bad_centre_is_refused_by_name(centre, err, match):
    with pytest.raises(err, match=match):
        SubmodPFTAL(3, 10, M=1.0, epsilon=1.0, centre=centre)


def test_default_centre_and_first_iterate():
    n, T = 3, 16
    default = SubmodPFTAL(n, T, M=1.0, epsilon=1.0, rng=0)
    np.testing.assert_array_equal(default.resolved_params["centre"], [0.5] * n)
    np.testing.assert_array_equal(default.iterate, [0.5] * n)
    for kw in ({"H": "paper"}, {"calibration": "paper", "H": 10.0}):
        paper = SubmodPFTAL(n, T, M=1.0, epsilon=1.0, rng=0, **kw)
        np.testing.assert_array_equal(paper.resolved_params["centre"], [0.0] * n)
        np.testing.assert_array_equal(paper.iterate, [0.0] * n)
    own = SubmodPFTAL(n, T, M=1.0, epsilon=1.0, centre=[0.0, 0.25, 1.0], x1=[1.0, 1.0, 1.0])
    np.testing.assert_array_equal(own.resolved_params["centre"], [0.0, 0.25, 1.0])
    np.testing.assert_array_equal(own.iterate, [1.0, 1.0, 1.0])
    assert SubmodPFTAL(n, T, M=1.0, epsilon=1.0, H="paper", centre=0.5).iterate[0] == 0.5


@pytest.mark.parametrize("noise, delta", [("l2laplace", 0.0), ("laplace", 0.0),
                                          ("gaussian", 1e-6)])
@pytest.mark.parametrize("n, T, eps", [(4, 1024, 1.0), (4, 8192, 100.0), (34, 8192, 1.0),
                                       (2, 4, 1e6)])
def test_default_H_is_the_theorem_floor_or_the_noise_scaled_value(noise, delta, n, T, eps):
    for M in (1.0, 7.5):
        p = SubmodPFTAL(n, T, M=M, epsilon=eps, noise=noise, delta=delta).resolved_params
        tree = TreeAggregator(T, n, noise=noise, sensitivity=p["calibrated_sensitivity"],
                              epsilon=eps, delta=delta)
        sd = math.sqrt(tree.node_variance * tree.levels)
        assert p["H"] == pytest.approx(max(M / math.sqrt(n * T), noise_scaled_H(T, sd)))
        assert noise_scaled_H(T, sd) == pytest.approx(4 * sd * (1 + math.log(T)) / T)
    # noise off: Theorem 7's value, centred
    off = SubmodPFTAL(n, T, M=1.0, epsilon=math.inf).resolved_params
    assert off["H"] == pytest.approx(1 / math.sqrt(n * T)) and off["centre"][0] == 0.5


def test_privacy_does_not_depend_on_the_centre_or_H():
    # The counter's calibration comes from M alone: the regulariser's gradient H (x_t - c) is
    # the same for neighbours. Same plan, same sensitivity, for every centre and H.
    reports = []
    for kw in ({}, {"centre": 0.0}, {"centre": [0.1, 0.9, 0.5]}, {"H": "paper"}, {"H": 50.0},
               {"H": 1e-4, "centre": 1.0}):
        learner = SubmodPFTAL(3, 64, M=2.0, epsilon=0.7, **kw)
        p = learner.resolved_params
        assert p["calibrated_sensitivity"] == pytest.approx(4 * math.sqrt(2) * 2.0)
        assert p["gradient_clip"] == pytest.approx(2 * math.sqrt(2) * 2.0)
        reports.append((learner.privacy.epsilon, learner.privacy.delta,
                        str(learner.plan.report())))
    assert all(r == reports[0] for r in reports)


def test_default_learns_where_the_origin_regulariser_plays_the_empty_set():
    # On the modular + path-cut stream the best fixed set is everything and the empty set pays
    # 0.327 per round. At epsilon = 100 the previous default (bound minimiser at the origin)
    # paid that; the centred default learns the whole set.
    n, T, eps = 4, 1024, 100.0
    stream = modular_path_stream(n, T, rng=3)
    default = run(SubmodPFTAL(n, T, M=1.0, epsilon=eps, rng=4), stream, progress=False)
    old = run(SubmodPFTAL(n, T, M=1.0, epsilon=eps, centre=0.0, rng=4,
                          H=best_submod_pftal_H(n, T, 1.0, 4 * math.sqrt(2), eps)),
              stream, progress=False)
    assert default.final_expected_regret / T < 0.05
    assert old.final_expected_regret / T > 0.25
