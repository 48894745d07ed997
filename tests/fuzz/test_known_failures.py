"""One strict xfail per failure the fuzz suite found in code owned elsewhere (issue 15).

Each test runs the failing call under the fuzz contract and fails while the failure lasts; when
the owner fixes it, the test passes and strict xfail reports it, so the marker and the entry of
``known_failures.py`` are removed together.
"""

from __future__ import annotations

import numpy as np
import pytest
from fuzz_harness import Case, expect, invoke
from fuzz_objects import Misbehaving

from dpsubmod import Budget
from dpsubmod.functions import KSensorPlacement
from dpsubmod.offline import minimize
from dpsubmod.privacy import (
    gaussian_rho,
    gaussian_sigma,
    l2_laplace,
    laplace,
    laplace_scale,
    split_budget,
)

ISSUE = "issue 15: "


def _case(entry: str, *names: str, bad: tuple[str, ...] = ()) -> Case:
    case = Case(entry)
    case.allow(*names)
    for b in bad:
        case.mark_bad(b)
    return case


def test_minimize_refuses_a_nan_objective():
    case = _case("minimize", "f", "method", bad=("f",))
    expect(invoke(case, lambda: minimize(Misbehaving(4, "nan")), known=False))


def test_ksensor_placement_refuses_empty_locations():
    case = _case("functions.KSensorPlacement", "points", "locations", "radii",
                 bad=("locations",))
    expect(invoke(case, lambda: KSensorPlacement(np.ones((3, 2)), np.zeros((0, 2)), [0.5]),
                  known=False))


@pytest.mark.parametrize("sensitivity,epsilon", [(1.0, 1e-320), (1e308, 1.0)])
def test_gaussian_sigma_returns_at_extreme_parameters(sensitivity, epsilon):
    case = _case("privacy.gaussian_sigma", "sensitivity", "epsilon", "delta")
    case.mark_extreme("epsilon")
    case.mark_extreme("sensitivity")
    expect(invoke(case, lambda: gaussian_sigma(sensitivity=sensitivity, epsilon=epsilon,
                                               delta=1e-6), timeout=3.0, known=False))


def test_gaussian_rho_refuses_a_subnormal_sigma():
    case = _case("privacy.gaussian_rho", "sigma", "sensitivity")
    case.mark_extreme("sigma")
    expect(invoke(case, lambda: gaussian_rho(1e-320, 1.0), known=False))


def test_l2_laplace_never_releases_infinity():
    case = _case("privacy.l2_laplace", "value", "epsilon", "sensitivity", "rng")
    case.mark_extreme("sensitivity")
    expect(invoke(case, lambda: l2_laplace(np.zeros(2), epsilon=1.0, sensitivity=1e308, rng=0),
                  check=lambda out: None if np.isfinite(out).all() else
                  f"release {out!r} is not finite",
                  known=False))


def test_laplace_refuses_extreme_parameters_by_name():
    case = _case("privacy.laplace", "value", "epsilon", "sensitivity", "budget")
    case.mark_extreme("epsilon")
    case.mark_extreme("sensitivity")
    expect(invoke(case, lambda: laplace(0.0, epsilon=1e-320, sensitivity=1e-320,
                                        budget=Budget(0.5)), known=False))


def test_laplace_scale_refuses_an_infinite_scale():
    case = _case("privacy.laplace_scale", "epsilon", "sensitivity")
    case.mark_extreme("epsilon")
    expect(invoke(case, lambda: laplace_scale(1e-320, 1.0),
                  check=lambda s: None if np.isfinite(s) else f"returned {s!r}", known=False))


def test_budget_remaining_is_finite():
    case = _case("privacy.Budget", "epsilon", "delta", "composition")
    case.mark_extreme("epsilon")
    expect(invoke(case, lambda: Budget(1e308, 1e-3, "advanced").remaining,
                  check=lambda r: None if np.isfinite(r) else f"remaining {r!r}", known=False))


def test_split_budget_kov_returns_at_many_steps():
    case = _case("privacy.split_budget", "epsilon", "delta", "steps", "composition")
    case.mark_extreme("steps")
    expect(invoke(case, lambda: split_budget(1.0, 1e-6, 10**8, composition="kov"), timeout=5.0,
                  known=False))


def test_opendp_backend_refuses_extreme_epsilon_before_charging():
    # Without OpenDP, backend='opendp' is refused for the missing library (tested elsewhere).
    pytest.importorskip("opendp")
    from dpsubmod import maximize
    from dpsubmod.functions import Modular

    case = _case("maximize[private_greedy]", "f", "constraint", "epsilon", "backend", "budget")
    case.mark_extreme("epsilon")
    case.budget = Budget(1e308)
    expect(invoke(case, lambda: maximize(Modular(np.linspace(0, 1, 6), sensitivity=0.1), 5,
                                         "private_greedy", epsilon=1e300, backend="opendp",
                                         budget=case.budget), known=False))


def test_secure_laplace_refuses_a_huge_sensitivity():
    case = _case("privacy.laplace", "value", "epsilon", "sensitivity", "backend")
    case.mark_extreme("sensitivity")
    expect(invoke(case, lambda: laplace(np.ones(3), epsilon=7.0,
                                        sensitivity=1.7976931348623157e308, backend="secure"),
                  known=False))


# -- online/** (being reorganised) ----------------------------------------------------------------

def _learner_case(entry: str, *bad: str) -> Case:
    return _case(entry, "n", "T", "rng", "M", "epsilon", "eta", "k", "gamma", "delta", "noise",
                 "constraint", "K", bad=bad)


@pytest.mark.parametrize("name", ["HazanKale", "OnlineGreedy", "FIDP", "MetaFrankWolfe"])
def test_online_learners_refuse_a_bad_rng_at_construction(name):
    import dpsubmod.online as O

    kw = {"HazanKale": {"M": 1.0}, "OnlineGreedy": {"k": 1},
          "FIDP": {"k": 1, "epsilon": 1.0, "delta": 1e-6},
          "MetaFrankWolfe": {"constraint": 1}}[name]
    case = _learner_case(f"online.{name}", "rng")
    expect(invoke(case, lambda: getattr(O, name)(3, 2, rng="abc", **kw), known=False))


@pytest.mark.parametrize("name", ["SubmodPFTAL", "HazanKale"])
def test_online_learners_at_extreme_bounds_leak_no_warning(name):
    import dpsubmod.online as O
    from dpsubmod.functions import Modular

    kw = {"M": 1e-320, "epsilon": 1e-320} if name == "SubmodPFTAL" else {"M": 1e-320}
    learner = getattr(O, name)(1, 1, **kw)
    learner.select()
    case = _learner_case(f"online.{name}.update")
    case.mark_extreme("M")
    expect(invoke(case, lambda: learner.update(Modular([0.0])), known=False))


def test_submod_pftal_names_M_when_it_is_extreme():
    import dpsubmod.online as O

    case = _learner_case("online.SubmodPFTAL", "budget")
    case.mark_extreme("M")
    expect(invoke(case, lambda: O.SubmodPFTAL(5, 4, M=1e308, epsilon=3.4,
                                              budget=Budget(50.0, 1e-3)), known=False))


def test_bandit_online_greedy_refuses_a_tiny_gamma_at_construction():
    import dpsubmod.online as O

    case = _learner_case("online.BanditOnlineGreedy")
    case.mark_extreme("gamma")
    expect(invoke(case, lambda: O.BanditOnlineGreedy(1, 1, 1, gamma=1e-320).select(),
                  known=False))


def test_run_names_the_stream_when_it_is_empty():
    import dpsubmod.online as O

    case = _case("online.run[HazanKale]", "learner", "stream", "comparator", "rng")
    case.mark_degenerate("stream")
    expect(invoke(case, lambda: O.run(O.HazanKale(2, 2, M=1.0), []), known=False))


def test_run_refuses_a_stream_with_a_nan_function():
    from fuzz_objects import Misbehaving

    import dpsubmod.online as O
    from dpsubmod.functions import Modular

    case = _case("online.run[HazanKale]", "learner", "stream", bad=("stream",))
    stream = [Modular([0.1, 0.2]), Misbehaving(2, "nan")]
    expect(invoke(case, lambda: O.run(O.HazanKale(2, 2, M=1.9), stream), known=False))


def test_submod_pftal_gaussian_at_a_tiny_bound_does_not_divide_by_zero():
    import dpsubmod.online as O
    from dpsubmod.functions import Modular

    case = _case("online.run[SubmodPFTAL]", "learner", "stream", "M", "epsilon", "delta")
    case.mark_extreme("M")
    case.mark_extreme("epsilon")
    expect(invoke(case, lambda: O.run(O.SubmodPFTAL(1, 1, M=5e-324, epsilon=1e-320,
                                                    noise="gaussian", delta=5e-4),
                                      [Modular([0.0])], comparator=None), known=False))


def test_garber_kretzu_names_a_tiny_lipschitz():
    import dpsubmod.online as O
    from dpsubmod.online import linear_losses
    from dpsubmod.polytopes import Simplex

    case = _case("online.run_convex[GarberKretzu]", "polytope", "T", "lipschitz", "losses")
    case.mark_extreme("lipschitz")
    expect(invoke(case, lambda: O.run_convex(O.GarberKretzu(Simplex(3), 6, lipschitz=1e-320,
                                                            rng=0),
                                             linear_losses(3, 6, rng=910), comparator=None),
                  known=False))


def test_pftal_meta_frank_wolfe_states_no_more_than_epsilon():
    import dpsubmod.online as O
    from dpsubmod.constraints import PartitionMatroid

    case = _learner_case("online.PFTALMetaFrankWolfe")
    case.mark_extreme("epsilon")
    m = PartitionMatroid([0, 1, 0, 1, 0], 1)
    expect(invoke(case, lambda: O.PFTALMetaFrankWolfe(5, 6, m, epsilon=1e-320, K=3, rng=0),
                  check=lambda lr: None if lr.privacy.epsilon <= 1e-320 else
                  f"states epsilon {lr.privacy.epsilon!r} above the requested 1e-320",
                  known=False))


def test_private_bandit_names_a_huge_lipschitz():
    import dpsubmod.online as O
    from dpsubmod.online import linear_losses
    from dpsubmod.polytopes import Simplex

    case = _case("online.run_convex[PrivateBandit]", "polytope", "T", "epsilon", "lipschitz")
    case.mark_extreme("lipschitz")
    case.mark_extreme("epsilon")
    expect(invoke(case, lambda: O.run_convex(
        O.PrivateBandit(Simplex(3), 4, epsilon=1e15, lipschitz=1.7976931348623157e308),
        linear_losses(3, 4, rng=0), comparator=None), known=False))


@pytest.mark.parametrize("lipschitz", [1e-300, 1.7976931348623157e308])
def test_flaxman_kalai_mcmahan_at_extreme_lipschitz(lipschitz):
    import dpsubmod.online as O
    from dpsubmod.online import linear_losses
    from dpsubmod.polytopes import Simplex

    case = _case("online.run_convex[FlaxmanKalaiMcMahan]", "polytope", "T", "lipschitz")
    case.mark_extreme("lipschitz")
    expect(invoke(case, lambda: O.run_convex(
        O.FlaxmanKalaiMcMahan(Simplex(2), 1, lipschitz=lipschitz),
        linear_losses(2, 1, rng=0), comparator=None), known=False))


def test_fidp_at_a_subnormal_epsilon_refuses_cleanly():
    import dpsubmod.online as O

    case = _learner_case("online.FIDP", "budget")
    case.mark_extreme("epsilon")
    case.mark_extreme("eta")
    expect(invoke(case, lambda: O.FIDP(2, 4, 2, epsilon=1e-320, delta=1e-320,
                                       eta=1.7976931348623157e308, budget=Budget(0.5, 1e-3)),
                  known=False))


def test_bandit_online_greedy_refuses_gamma_above_one():
    import dpsubmod.online as O

    case = _learner_case("online.BanditOnlineGreedy", "gamma")
    expect(invoke(case, lambda: O.BanditOnlineGreedy(4, 5, 1, gamma=1e308), known=False))


def test_dp_meta_frank_wolfe_names_no_internal_argument():
    import dpsubmod.online as O
    from dpsubmod.functions import Modular

    def two_rounds() -> None:
        learner = O.DPMetaFrankWolfe(3, 2, 1, epsilon=1e-320, rng=0)
        for _ in range(2):
            learner.select()
            learner.update(Modular([0.1, 0.2, 0.3]))

    case = _learner_case("online.DPMetaFrankWolfe")
    case.mark_extreme("epsilon")
    expect(invoke(case, two_rounds, known=False))


# -- privacy/** and functions/** found later ------------------------------------------------------

@pytest.mark.parametrize("epsilon", [1e308, 5e-324])
def test_tree_aggregator_gaussian_at_extreme_parameters(epsilon):
    from dpsubmod.privacy import TreeAggregator

    case = _case("privacy.TreeAggregator", "T", "dim", "noise", "sensitivity", "epsilon", "delta")
    case.mark_extreme("sensitivity")
    case.mark_extreme("epsilon")
    expect(invoke(case, lambda: TreeAggregator(6, 1, noise="gaussian", sensitivity=5e-324,
                                               epsilon=epsilon, delta=6e-4, rng=0),
                  known=False))


def test_tree_aggregator_laplace_at_a_subnormal_epsilon():
    from dpsubmod.privacy import TreeAggregator

    def updates() -> None:
        agg = TreeAggregator(6, 1, sensitivity=0.39, epsilon=1e-320, rng=0)
        for _ in range(6):
            agg.update(np.ones(1))

    case = _case("privacy.TreeAggregator", "T", "dim", "sensitivity", "x", "epsilon")
    case.mark_extreme("epsilon")
    expect(invoke(case, updates, known=False))


def test_facility_location_from_records_at_extreme_coordinates():
    from dpsubmod.functions import FacilityLocation

    case = _case("functions.FacilityLocation.from_records", "points", "candidates",
                 "similarity", "radius")
    case.mark_extreme("points")
    case.mark_extreme("radius")
    pts = np.array([[-2.3e300, -3.3e300], [-0.08, 1.35e300]])
    expect(invoke(case, lambda: FacilityLocation.from_records(
        pts, np.zeros((2, 2)), "negative_distance", radius=1e-300), known=False))


def test_facility_location_from_records_at_a_subnormal_radius():
    from dpsubmod.functions import FacilityLocation

    case = _case("functions.FacilityLocation.from_records", "points", "candidates",
                 "similarity", "radius")
    case.mark_extreme("radius")
    expect(invoke(case, lambda: FacilityLocation.from_records(
        np.zeros((2, 2)), np.zeros((3, 2)), "negative_distance", radius=5e-324), known=False))


def test_tree_aggregator_refuses_its_budget_when_built():
    from dpsubmod.privacy import TreeAggregator

    case = _case("privacy.TreeAggregator", "T", "sensitivity", "epsilon", "budget")
    case.mark_bad("budget", "budget", "Budget", "epsilon")
    expect(invoke(case, lambda: TreeAggregator(6, 1, sensitivity=0.4, epsilon=5000.0,
                                               budget=Budget(1000.0), rng=0), known=False))


@pytest.mark.parametrize("kw", [{"comparator": "nonsense"}, {"alpha": "abc"}])
def test_run_names_a_bad_comparator_and_alpha(kw):
    import dpsubmod.online as O
    from dpsubmod.functions import Modular

    case = _case("online.run[OnlineGreedy]", "learner", "stream", "comparator", "alpha",
                 bad=tuple(kw))
    stream = [Modular([0.1, 0.2]), Modular([0.2, 0.1])]
    expect(invoke(case, lambda: O.run(O.OnlineGreedy(2, 2, 1, rng=0), stream, **kw),
                  known=False))


# -- the command line ----------------------------------------------------------------------------

def _cli_refuses(tmp_path, *args: str) -> None:
    import os
    import subprocess
    import sys

    (tmp_path / "blocker").write_text("a file")
    p = subprocess.run([sys.executable, "-m", "dpsubmod", *args], cwd=tmp_path,
                       capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, PYTHONWARNINGS="error"))
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr[-2000:]


def test_demo_refuses_an_output_under_a_file(tmp_path):
    _cli_refuses(tmp_path, "demo", "--seeds", "1", "--out", "blocker/sub")


@pytest.mark.parametrize("seeds", ["0", "-1"])
def test_demo_refuses_zero_seeds(tmp_path, seeds):
    _cli_refuses(tmp_path, "demo", "--seeds", seeds, "--out", "o")


def test_audit_refuses_a_json_path_under_a_file(tmp_path):
    _cli_refuses(tmp_path, "audit", "private_greedy", "--runs", "20", "--no-progress", "--json",
                 "blocker/out.json")


def test_scaled_names_c_when_the_sensitivity_underflows():
    from dpsubmod.functions import Modular, Scaled

    case = _case("functions.Scaled", "f", "c")
    case.mark_extreme("c")
    expect(invoke(case, lambda: Scaled(Modular([0.1, 0.2], sensitivity=0.1), 5e-324),
                  known=False))


def test_ksensor_placement_at_extreme_coordinates():
    case = _case("functions.KSensorPlacement", "points", "locations", "radii")
    case.mark_extreme("radii")
    expect(invoke(case, lambda: KSensorPlacement(np.zeros((3, 2)), np.zeros((1, 2)),
                                                 [1e299, 1e299]), known=False))


def test_gaussian_zcdp_names_epsilon_when_it_is_tiny():
    from dpsubmod.privacy import gaussian

    case = _case("privacy.gaussian", "value", "sensitivity", "epsilon", "delta", "calibration")
    case.mark_extreme("epsilon")
    case.mark_extreme("delta")
    expect(invoke(case, lambda: gaussian(np.ones(2), sensitivity=0.5, epsilon=1e-320,
                                         delta=1e-300, calibration="zcdp", rng=0), known=False))



def test_advanced_budget_at_a_subnormal_delta():
    case = _case("privacy.Budget", "epsilon", "delta", "composition")
    case.mark_extreme("delta")
    expect(invoke(case, lambda: Budget(4.0, 5e-324, "advanced").remaining, known=False))


def test_run_names_the_stream_for_a_nan_bandit_value():
    from fuzz_objects import Misbehaving

    import dpsubmod.online as O
    from dpsubmod.functions import Modular

    case = _case("online.run[BanditDP]", "learner", "stream", bad=("stream",))
    learner = O.BanditDP(1, 2, 1, epsilon=1.0, delta=1e-6, gamma=0.5, rng=11)
    expect(invoke(case, lambda: O.run(learner, [Modular([0.5]), Misbehaving(1, "nan")]),
                  known=False))


def test_pftal_meta_frank_wolfe_states_its_privacy_quietly():
    import dpsubmod.online as O

    case = _learner_case("online.PFTALMetaFrankWolfe")
    case.mark_extreme("epsilon")
    expect(invoke(case, lambda: O.PFTALMetaFrankWolfe(4, 5, 2, epsilon=5e-324, rng=0).privacy,
                  known=False))


def test_facility_location_refuses_values_that_overflow():
    import scipy.sparse as sp

    from dpsubmod.functions import FacilityLocation

    def build_and_evaluate() -> float:
        f = FacilityLocation(sp.csr_array(np.array([[1e300]])), weights=[1e300])
        v = f.value([0])
        assert np.isfinite(v), v
        return v

    case = _case("functions.FacilityLocation", "similarity", "weights")
    case.mark_extreme("weights")
    expect(invoke(case, build_and_evaluate, known=False))
