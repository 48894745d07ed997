"""Online (private) Meta-Frank-Wolfe: DPMFW (Sadeghi and Fazel 2021), Meta-Frank-Wolfe (Chen,
Hassani and Karbasi 2018) and Algorithm 4 of Perez-Salazar and Cummings 2021 on PFTAL."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpsubmod.constraints import (
    GenericMatroid,
    GraphicMatroid,
    Knapsack,
    PartitionMatroid,
    UniformMatroid,
)
from dpsubmod.errors import DPSubmodError
from dpsubmod.extensions import multilinear_gradient
from dpsubmod.functions import Coverage, FacilityLocation, FeatureBased, Modular, Sum
from dpsubmod.online import (
    DPMetaFrankWolfe,
    FunctionStream,
    MetaFrankWolfe,
    PFTALMetaFrankWolfe,
    run,
)
from dpsubmod.online.maximization import batch_gradient, dpmfw_paper_scale
from dpsubmod.online.maximization import frank_wolfe as mfw
from dpsubmod.polytopes import as_region, round_point
from dpsubmod.privacy.continual import tree_levels


def _fl_stream(T, n, seed):
    rng = np.random.default_rng(seed)
    return [FacilityLocation(rng.random((1, n)) ** 3) for _ in range(T)]


# ---------------------------------------------------------------------------------------------
# gradients and rounding
# ---------------------------------------------------------------------------------------------
def test_batch_gradient_matches_the_closed_forms():
    rng = np.random.default_rng(1)
    n = 7
    X = rng.random((6, n))
    X[0, 2] = 1.0
    X[1, [1, 4]] = 1.0
    X[2] = 0.0
    fl = FacilityLocation(rng.random((3, n)), weights=rng.random(3))
    cov = Coverage((rng.random((n, 9)) < 0.3).astype(float), weights=rng.random(9))
    feat = FeatureBased(rng.random((n, 2)))  # no batched path: row by row
    for f in (fl, cov, Modular(rng.random(n)), Sum([fl, cov]), 0.5 * fl, feat):
        G = batch_gradient(f, X, method="exact")
        ref = np.stack([multilinear_gradient(f, x, method="exact").estimate for x in X])
        np.testing.assert_allclose(G, ref, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("cons", [2, PartitionMatroid([0, 0, 0, 1, 1, 1], [1, 2]),
                                  Knapsack([0.3, 0.5, 0.4, 0.6, 0.2, 0.7], 1.0)])
def test_rounding_is_feasible_and_keeps_marginals(cons):
    # Monte Carlo: 4000 roundings; marginals within 5 standard errors (false-alarm rate below
    # 1e-5 per coordinate). The knapsack rounding may drop the last fractional item.
    rng = np.random.default_rng(0)
    reg = as_region(cons, 6)
    x = kl_projection_point(reg, rng)
    masks = np.array([round_point(reg, x, rng=rng) for _ in range(4000)])
    assert all(reg.feasible(m) for m in masks)
    freq = masks.mean(axis=0)
    se = np.sqrt(x * (1 - x) / masks.shape[0]) + 1e-9
    if reg.kind == "knapsack":
        assert (freq <= x + 5 * se).all()
        assert np.asarray(reg.costs) @ (x - freq) <= max(reg.costs) + 0.05
    else:
        assert (np.abs(freq - x) <= 5 * se).all()


def kl_projection_point(reg, rng):
    from dpsubmod.polytopes import kl_projection

    return kl_projection(reg, rng.normal(size=reg.n))


def test_swap_rounding_of_the_decomposition_on_a_general_matroid():
    gm = GraphicMatroid([(0, 1), (1, 2), (0, 2), (2, 3), (3, 4)], n_nodes=5)
    from dpsubmod.polytopes import kl_projection

    x, dec = kl_projection(gm, np.array([0.4, 0.1, 0.3, -0.5, 0.2]), return_decomposition=True)
    rng = np.random.default_rng(3)
    masks = np.array([round_point(gm, x, decomposition=dec, rng=rng) for _ in range(3000)])
    assert all(gm.is_independent(m) for m in masks)
    se = np.sqrt(x * (1 - x) / 3000) + 1e-9
    assert (np.abs(masks.mean(axis=0) - x) <= 5 * se).all()


# ---------------------------------------------------------------------------------------------
# privacy: sensitivity of one round and the calibration of the trees
# ---------------------------------------------------------------------------------------------
def _leaves_at(learner, stream, t0):
    """The loss vectors the learner feeds its oracles at round t0 (0-based)."""
    captured = {}
    L = learner.clone()
    L.reset()
    feed = L._feed

    def spy(G):
        captured.setdefault(len(captured), np.array(G))
        feed(G)

    L._feed = spy
    for f in stream[:t0 + 1]:
        L.select()
        L.update(f)
    return captured[t0]


class _Wild(Modular):
    """A misbehaving 'function': negative, non-monotone and far outside [0, 1]."""

    monotone = False


@pytest.mark.parametrize("cls", [DPMetaFrankWolfe, PFTALMetaFrankWolfe])
def test_one_round_moves_each_oracle_within_the_calibrated_sensitivity(cls, monkeypatch):
    n, T, t0 = 6, 8, 3
    base = _fl_stream(T, n, 0)
    wild = _Wild(np.array([100.0, -100.0, 50.0, -3.0, 7.0, 0.0]))
    kw = dict(epsilon=1.0, rng=4)
    L = cls(n, T, 2, K=3, **kw)
    a = _leaves_at(L, base, t0)
    b = _leaves_at(L, base[:t0] + [wild] + base[t0 + 1:], t0)
    diff = np.abs(a - b)
    # per oracle: l1 <= n m_F (DPMFW's Laplace trees), l2 <= sqrt(n) m_F (PFTAL's trees)
    assert (diff.sum(axis=1) <= n * 1.0 + 1e-12).all()
    assert (np.sqrt((diff**2).sum(axis=1)) <= math.sqrt(n) + 1e-12).all()
    # the unclipped variant breaks the bound: caught
    monkeypatch.setattr(mfw.FrankWolfeLearner, "_gradients",
                        lambda self, f: batch_gradient(f, self._path))
    b_raw = _leaves_at(L, base[:t0] + [wild] + base[t0 + 1:], t0)
    assert (np.abs(a - b_raw).sum(axis=1) > n).any()


@pytest.mark.parametrize("T", [2, 7, 64, 100, 1000])
def test_worst_case_tree_loss_equals_the_calibration(T):
    # Laplace tree: a leaf lies in at most floor(log2 T) + 1 released nodes, each perturbed by
    # l1 sensitivity n m_F at scale b: the exact worst-case loss is levels * n m_F / b = eps0.
    n, K = 5, 4
    L = DPMetaFrankWolfe(n, T, 2, epsilon=1.0, K=K, rng=0)
    L.reset()
    p = L.resolved_params
    loss = tree_levels(T) * n * 1.0 / p["scale"]
    assert loss == pytest.approx(p["tree_epsilon"], rel=1e-12)
    assert p["tree_epsilon"] == pytest.approx(1.0 / K)  # basic composition at delta = 0
    stated = L.privacy  # the whole run, before round 1
    assert stated.epsilon == pytest.approx(1.0)
    run(L, _fl_stream(T, n, 1)[:min(T, 3)], comparator=None)
    assert L.privacy == stated and L.clone().privacy == stated


@pytest.mark.parametrize("T, eps", [(300, 1.0), (2000, 0.5), (2000, 5.0), (10**4, 1.0)])
def test_tuned_number_of_steps_keeps_the_exact_worst_case_loss(T, eps):
    # The default K is tuned to (T, epsilon, n); privacy depends on K only through the split
    # of the budget over the K Laplace trees, whose exact worst-case losses add up (basic
    # composition at delta = 0) to epsilon whatever K is chosen.
    n = 12
    L = DPMetaFrankWolfe(n, T, 3, epsilon=eps, rng=0)
    L.reset()
    p = L.resolved_params
    K = p["K"]
    assert 1 <= K <= min(math.ceil(math.sqrt(T)), 64)
    tree_loss = tree_levels(T) * n * 1.0 / p["scale"]
    assert K * tree_loss == pytest.approx(eps, rel=1e-12)
    assert L.privacy.epsilon == pytest.approx(eps)
    # Control: running the theorem's ceil(sqrt T) oracles at the tuned K's node scale would
    # spend ceil(sqrt T) / K times epsilon, which the same check catches.
    paper_K = math.ceil(math.sqrt(T))
    if paper_K > K:
        assert paper_K * tree_loss > eps * (1 + 1e-9)
    # PFTAL-MFW: each of the K copies is epsilon / K-DP at the sensitivity sqrt(n) m_F.
    P = PFTALMetaFrankWolfe(n, T, 3, epsilon=eps, rng=0)
    P.reset()
    q = P.resolved_params
    assert q["copy_epsilon"] * q["K"] == pytest.approx(eps)
    for oco in P._copies:
        assert oco.calibrated_sensitivity == pytest.approx(math.sqrt(n))
        assert oco.epsilon == pytest.approx(eps / q["K"])


@pytest.mark.parametrize("T", [2, 10, 100, 10**4, 2 * 10**5])
def test_paper_calibration_is_private_and_reported(T):
    n, K, eps, delta = 10, 8, 1.0, 1e-6
    L = DPMetaFrankWolfe(n, T, 3, epsilon=eps, delta=delta, K=K, calibration="paper", rng=0)
    L.reset()
    p = L.resolved_params
    assert p["scale"] == pytest.approx(dpmfw_paper_scale(n, T, K, eps, delta))
    # the real per-tree epsilon uses the true node count and sensitivity
    assert p["tree_epsilon"] == pytest.approx(tree_levels(T) * n / p["scale"])
    L.select()
    L.update(_fl_stream(1, n, 2)[0])
    assert L.privacy.epsilon <= eps


def test_gaussian_and_laplace_reports():
    n, T = 5, 50
    for kw in (dict(noise="gaussian", delta=1e-6), dict(delta=1e-6), dict()):
        L = DPMetaFrankWolfe(n, T, 2, epsilon=0.8, K=5, rng=0, **kw)
        tr = run(L, _fl_stream(5, n, 3), comparator=None)
        assert tr.privacy.epsilon <= 0.8 * (1 + 1e-9)
        assert tr.privacy.delta <= kw.get("delta", 0.0) + 1e-15
    off = DPMetaFrankWolfe(n, T, 2, epsilon=math.inf, K=5)
    assert run(off, _fl_stream(5, n, 3), comparator=None).privacy is None


def test_pftal_meta_frank_wolfe_report_and_calibration():
    n, T, K = 6, 40, 3
    L = PFTALMetaFrankWolfe(n, T, 2, epsilon=1.2, K=K, rng=0)
    tr = run(L, _fl_stream(4, n, 0), comparator=None)
    assert tr.privacy.epsilon == pytest.approx(1.2) and tr.privacy.delta == 0.0
    player = L.clone()
    player.reset()
    for oco in player._copies:
        assert oco.calibrated_sensitivity == pytest.approx(math.sqrt(n))
        assert oco.epsilon == pytest.approx(1.2 / K)
    default = PFTALMetaFrankWolfe(n, 10**4, 2, epsilon=1.0)
    default.reset()
    lt = math.log(10**4)
    assert default.resolved_params["K"] == max(1, round(10 ** 1 / lt**1.25))


@pytest.mark.slow
def test_black_box_audit_flags_only_the_miscalibrated_tree():
    # One round of DPMFW on two elements (box region), neighbours differ in round 1; the
    # released point of round 2 is audited (Clopper-Pearson, alpha = 0.05: a correct
    # calibration is flagged with probability at most 5%).
    from dpsubmod.privacy import audit

    n, T, eps = 2, 2, 1.0
    D = [Modular([1.0, 0.0]), Modular([0.0, 0.0])]
    Dp = [Modular([0.0, 1.0]), Modular([0.0, 0.0])]

    def make(tree_epsilon):
        def algorithm(data, g):
            L = DPMetaFrankWolfe(n, T, 2, epsilon=eps, K=1, eta=1.0, rng=g)
            L.reset()
            if tree_epsilon is not None:
                # an oracle whose trees spend tree_epsilon while the learner claims eps (the
                # learner would refuse it; the oracle alone states what it spends)
                L._ftrl = L._ftrl.clone(epsilon=tree_epsilon, tree_epsilon=tree_epsilon,
                                        budget=None, rng=g)
                L._ftrl.reset()
            L.select()
            L.update(data[0])
            L.select()
            return float(np.log(L.point[0]) - np.log(L.point[1]))
        return algorithm

    ok = audit(make(None), D, Dp, n_runs=3000, epsilon_claimed=eps, rng=7)
    assert not ok.violation
    bad = audit(make(8.0), D, Dp, n_runs=3000, epsilon_claimed=eps, rng=7)
    assert bad.violation


# ---------------------------------------------------------------------------------------------
# learning
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("cons", [2, PartitionMatroid([0, 0, 0, 1, 1, 1], [1, 1]),
                                  Knapsack([0.5, 0.9, 0.4, 0.8, 0.6, 0.7], 1.2)])
def test_meta_frank_wolfe_learners_beat_random_sets(cons):
    n, T = 6, 300
    rng = np.random.default_rng(5)
    centers = rng.random((3, n)) ** 4
    fs = [FacilityLocation(centers[rng.integers(3)][None, :]) for _ in range(T)]
    stream = FunctionStream(fs)
    c = UniformMatroid(n, cons) if isinstance(cons, int) else cons
    rand = np.mean([f(c.random_maximal(rng=r)) for r, f in enumerate(fs)])
    for L in (MetaFrankWolfe(n, T, cons, rng=0), MetaFrankWolfe(n, T, cons, oracle="ftrl", rng=0),
              DPMetaFrankWolfe(n, T, cons, epsilon=math.inf, rng=0),
              DPMetaFrankWolfe(n, T, cons, epsilon=2000.0, rng=0),
              PFTALMetaFrankWolfe(n, T, cons, epsilon=math.inf, K=4, rng=0)):
        tr = run(L, stream, comparator="brute-force", rng=1)
        half = tr.values[T // 2:].mean()
        opt = tr.comparator.value / T
        assert half >= 0.85 * opt, type(L).__name__
        assert half > rand


def test_noise_off_dpmfw_equals_meta_frank_wolfe_with_ftrl_oracles():
    fs = _fl_stream(30, 5, 9)
    a = run(DPMetaFrankWolfe(5, 30, 2, epsilon=math.inf, K=4, rng=3), fs, comparator=None)
    b = run(MetaFrankWolfe(5, 30, 2, oracle="ftrl", K=4, rng=3), fs, comparator=None)
    assert a.selections == b.selections


def test_expected_value_on_the_box_is_the_multilinear_extension():
    L = MetaFrankWolfe(4, 10, 4, K=2, rng=0)
    f = FacilityLocation(np.random.default_rng(0).random((2, 4)))
    L.reset()
    L.select()
    from dpsubmod.extensions import multilinear_value

    assert L.expected_value(f) == pytest.approx(multilinear_value(f, L.point).estimate)
    L2 = MetaFrankWolfe(4, 10, 2, K=2, rng=0)
    L2.reset()
    L2.select()
    L2.update(f)
    L2.select()  # online gradient ascent starts at 0, then moves into the polytope
    assert L2.expected_value(f) is None and L2.fractional_value(f) > 0


def test_general_matroid_runs_with_swap_rounding():
    gm = GenericMatroid(5, lambda S: len(S) <= 2)
    fs = _fl_stream(6, 5, 1)
    tr = run(DPMetaFrankWolfe(5, 6, gm, epsilon=1.0, K=2, rng=0), fs, comparator=None)
    assert all(len(S) <= 2 for S in tr.selections)


@pytest.mark.parametrize("make", [
    lambda: DPMetaFrankWolfe(4, 10, 2, epsilon=1.0, noise="gaussian"),
    lambda: DPMetaFrankWolfe(4, 10, 2, epsilon=1.0, calibration="paper"),
    lambda: DPMetaFrankWolfe(4, 10, 2, epsilon=0.0),
    lambda: DPMetaFrankWolfe(4, 10, as_region(2, 4), epsilon=1.0),
    lambda: DPMetaFrankWolfe(4, 10, UniformMatroid(5, 2), epsilon=1.0),
    lambda: PFTALMetaFrankWolfe(4, 10, GraphicMatroid([(0, 1), (1, 2), (0, 2), (2, 3)]),
                                epsilon=1.0),
    lambda: MetaFrankWolfe(4, 10, 2, oracle="adam"),
    lambda: MetaFrankWolfe(4, 10, 2, K=0),
    lambda: MetaFrankWolfe(4, 10, 2, bound=0.0),
])
def test_bad_parameters_are_refused(make):
    with pytest.raises(DPSubmodError):
        make()


@pytest.mark.parametrize("epsilon,K", [(1e-320, None), (5e-324, 2)])  # 5e-324 / 2 == 0
def test_dp_meta_frank_wolfe_refuses_an_epsilon_whose_noise_leaves_float_range(epsilon, K):
    from dpsubmod import Budget

    budget = Budget(1.0)
    with pytest.raises(DPSubmodError, match="'epsilon' parameter of DPMetaFrankWolfe") as err:
        DPMetaFrankWolfe(3, 2, 1, epsilon=epsilon, K=K, budget=budget, rng=0)
    assert "TreeAggregator" not in str(err.value) and "PrivateFTRL" not in str(err.value)
    assert not budget.events
    DPMetaFrankWolfe(3, 2, 1, epsilon=1e-200, rng=0).select()  # tiny but in range


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_a_non_finite_feedback_function_is_refused_by_name_without_a_warning(bad):
    import warnings

    from oracles import TableFunction

    # inf - inf in the multilinear contraction warned before the gradients were refused
    for x_rounds in (0, 1):
        learner = MetaFrankWolfe(2, 3, 1, rng=0)
        for _ in range(x_rounds):
            learner.select()
            learner.update(TableFunction(np.array([0.0, 0.5, 0.2, 0.6])))
        learner.select()
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with pytest.raises(DPSubmodError, match="'feedback'"):
                learner.update(TableFunction(np.array([0.0, bad, 0.5, bad])))


@pytest.mark.parametrize("epsilon", [5e-324, 1e-300])
def test_pftal_meta_frank_wolfe_names_epsilon_when_its_counters_refuse_the_noise(epsilon):
    from dpsubmod import Budget

    budget = Budget(1.0)
    with pytest.raises(DPSubmodError, match="'epsilon' parameter of PFTALMetaFrankWolfe") \
            as err:
        PFTALMetaFrankWolfe(4, 5, 2, epsilon=epsilon, budget=budget, rng=0)
    assert "TreeAggregator" not in str(err.value) and not budget.events
