"""``Result.guarantee.vacuous`` is True whenever the bound is at most 0 for every value the
objective can take: ``ratio * OPT_upper - additive <= 0``, with ``OPT_upper`` the objective's
public range (``f.upper_bound()``). Checked on the docs' offline cells (docs/results.md), with a
control: the same objective without a declared range, whose guarantee the rule cannot call
vacuous."""

from __future__ import annotations

import functools
import math
from pathlib import Path

import numpy as np
import pytest

from dpsubmod import maximize
from dpsubmod._guarantee import utility_guarantee
from dpsubmod.experiments import offline_facility_location as fl
from dpsubmod.functions import Coverage, FacilityLocation, Modular
from dpsubmod.functions.combinators import Restricted, Scaled, Sum, Truncated
from dpsubmod.functions.ksubmodular import KCoverage

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "docs" / "results.md"
UBER = ROOT.parent / "shared" / "data" / "uber-apr14-pickups-10k.csv"
K = 10


def docs_cells(dataset: str) -> dict[tuple[str, float], str]:
    """The "Stated guarantee" table of ``dataset`` in docs/results.md: (method, eps) -> cell."""
    lines = RESULTS.read_text().splitlines()
    start = next(i for i, s in enumerate(lines) if s.startswith(f"Stated guarantee ({dataset})"))
    head = next(i for i in range(start, len(lines)) if lines[i].startswith("| method"))
    eps = [float(c.strip()[4:]) for c in lines[head].strip("|").split("|")[1:]]
    cells = {}
    for row in lines[head + 2:]:
        if not row.startswith("|"):
            break
        parts = [c.strip() for c in row.strip("|").split("|")]
        for e, c in zip(eps, parts[1:]):
            cells[parts[0], e] = c
    return cells


@functools.cache
def objective(dataset: str) -> FacilityLocation:
    pts, cands, bw = fl.load_points(dataset, UBER)
    return FacilityLocation.from_records(pts, cands, similarity="gaussian", bandwidth=bw)


def stated(f, label: str, eps: float):
    if label in fl.PRIVATE:
        method, kw = label, dict(fl.PRIVATE[label])
    else:
        method, kw, _ = fl.VARIANTS[label]
    return maximize(f, K, method=method, epsilon=eps, rng=0, **kw).guarantee


def cell_of(g, opt: float) -> str:
    return "vacuous" if g.vacuous else f"{g.lower_bound(opt) / opt:.3f}"


# ------------------------------------------------------------------------------------------------
# the rule


def test_the_rule_at_its_boundary():
    assert utility_guarantee(0.5, 0.5, units="u", theorem="t", opt_bound=1.0).vacuous
    assert not utility_guarantee(0.5, 0.4999, units="u", theorem="t", opt_bound=1.0).vacuous
    assert not utility_guarantee(0.5, 0.6, units="u", theorem="t").vacuous  # no range known
    g = utility_guarantee(0.5, 0.6, units="u", theorem="t").bounded_by(1.0)
    assert g.vacuous and g.opt_bound == 1.0
    assert g.bounded_by(math.inf).opt_bound == 1.0  # the smaller bound is kept


def test_each_family_declares_its_public_range():
    rng = np.random.default_rng(0)
    pts, cands = rng.random((20, 2)), rng.random((5, 2))
    gauss = FacilityLocation.from_records(pts, cands, bandwidth=0.3)
    assert gauss.upper_bound() == 1.0
    assert FacilityLocation.from_records(pts, cands, "negative_distance",
                                         radius=2.5).upper_bound() == 2.5
    cov = Coverage.from_records([[0, 1], [2], []], 3)
    assert cov.upper_bound() == 1.0
    assert Sum([gauss, gauss], [2.0, 0.5]).upper_bound() == 2.5
    assert Scaled(gauss, 3.0).upper_bound() == 3.0
    assert Truncated(Scaled(gauss, 3.0), 0.4).upper_bound() == 0.4
    assert Restricted(gauss, [0, 2]).upper_bound() == 1.0
    ks = KCoverage.from_records([[{0}, {1, 2}], [{0, 1}, set()]], 3, mode="sum")
    assert ks.upper_bound() == 2.0 and ks([1, 2, 0]) <= 2.0
    assert KCoverage.from_records([[{0}, {1}]], 2).upper_bound() == 1.0
    assert math.isinf(KCoverage.from_records([[{0}, {1}]], 2, average=False).upper_bound())
    # nothing public is known of a function given by its data: no range is claimed
    assert math.isinf(Modular([1.0, 2.0]).upper_bound())
    assert math.isinf(FacilityLocation(rng.random((20, 5))).upper_bound())
    assert math.isinf(Sum([gauss, Modular(np.ones(5))]).upper_bound())
    # every value a function takes is within its declared range
    for f in (gauss, cov, Scaled(gauss, 3.0)):
        assert f(range(f.n)) <= f.upper_bound()


# ------------------------------------------------------------------------------------------------
# the docs' offline cells

BREAST = [("private_greedy", 1.0), ("private_greedy", 10.0), ("dpcg", 1.0),
          ("private_continuous_greedy", 10.0), ("private_greedy_decomposable", 3.0)]


@pytest.mark.parametrize("label, eps", BREAST)
def test_docs_cells_on_breast_cancer(label, eps):
    f = objective("breast_cancer")
    opt = maximize(f, K).diagnostics.value
    g = stated(f, label, eps)
    assert g.opt_bound == 1.0
    assert g.vacuous == (g.ratio * 1.0 - g.additive <= 0.0)
    assert cell_of(g, opt) == docs_cells("breast_cancer")[label, eps]


def test_dpcg_on_breast_cancer_is_vacuous_and_the_control_is_not():
    f = objective("breast_cancer")
    g = stated(f, "dpcg", 1.0)
    assert g.vacuous and g.lower_bound(1.0) < 0.0
    # the control: the same objective, its range undeclared; the rule cannot call it vacuous
    bare = FacilityLocation(f.similarity, f.weights, sensitivity=f.sensitivity,
                            data_model="monotone-records")
    assert math.isinf(bare.upper_bound())
    h = maximize(bare, K, method="dpcg", epsilon=1.0, rng=0).guarantee
    assert (h.ratio, h.additive) == (g.ratio, g.additive) and not h.vacuous


def test_every_docs_cell_on_breast_cancer():
    f = objective("breast_cancer")
    opt = maximize(f, K).diagnostics.value
    for (label, eps), cell in docs_cells("breast_cancer").items():
        assert cell_of(stated(f, label, eps), opt) == cell, (label, eps)


@pytest.mark.skipif(not UBER.exists(), reason="the Uber sample is not available")
def test_docs_cells_on_uber():
    f = objective("uber")
    opt = maximize(f, K).diagnostics.value
    g = stated(f, "dpcg", 1.0)
    assert str(g).startswith("E[F(S)] >= 0.1943 OPT - 2.016") and "(vacuous)" in str(g)
    positive = stated(f, "private_greedy", 1.0)
    assert not positive.vacuous and positive.lower_bound(opt) > 0.0
    cells = docs_cells("uber")
    assert cells["dpcg", 1.0] == "vacuous" == cell_of(g, opt)
    assert cells["private_greedy", 1.0] == cell_of(positive, opt) == "0.496"
