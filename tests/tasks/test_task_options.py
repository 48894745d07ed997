"""private_select passes method options through; the feature-selection task keeps the missing
category apart from every valid code (a label of -1 included)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dpsubmod.errors import ParameterTypeError, ValidationError
from dpsubmod.functions import MutualInformation
from dpsubmod.privacy import Budget
from dpsubmod.tasks import build_constraint, build_task, private_select

RNG = np.random.default_rng(4)
LAT = 40.75 + 0.05 * RNG.standard_normal(40)
LON = -73.98 + 0.05 * RNG.standard_normal(40)
BOUNDS = {"lat": (40.6, 40.9), "lon": (-74.1, -73.8)}


def _fl():
    return build_task("facility-location", {"lat": LAT, "lon": LON}, grid=(3, 3),
                      bounds=BOUNDS)


# ----------------------------------------------------------------------------------------------
# feature selection: labels and codes of -1
# ----------------------------------------------------------------------------------------------
# Label -1 goes with a = 0, an invalid label with a = 1: merged into one class, the feature
# would say less about the label.
A = np.array([0, 0, 0, 1, 1, 1, 2, 2, 2, 0, 1, 2], dtype=float)
B = np.array([0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1], dtype=float)
Y = np.array([-1, -1, -1, np.nan, np.nan, np.nan, 0, 0, 0, 5, 5, 5])
# the same classes, each with a code of its own (the missing class as 3)
Y_DISTINCT = np.array([0, 0, 0, 3, 3, 3, 1, 1, 1, 2, 2, 2])
Y_MERGED = np.array([0, 0, 0, 0, 0, 0, 1, 1, 1, 2, 2, 2])
SETS = ([0], [1], [0, 1])


def _values(f):
    return [f.value(S) for S in SETS]


def test_a_label_of_minus_one_is_not_the_missing_category():
    task = build_task("feature-selection", {"a": A, "b": B, "y": Y}, label="y",
                      bins="categorical")
    X = np.column_stack([A, B]).astype(np.int64)
    want = _values(MutualInformation.from_records(X, Y_DISTINCT))
    merged = _values(MutualInformation.from_records(X, Y_MERGED))
    assert _values(task.f) == pytest.approx(want, abs=1e-12)
    # the encoding this replaces: -1 and missing as one class give a smaller information
    assert merged[0] < want[0] - 0.1
    assert task.diagnostics["invalid_cells"]["y"] == 3


def test_a_feature_code_of_minus_one_is_not_the_missing_category():
    a = A.copy()
    a[[0, 1, 2]] = -1.0          # a valid code of -1, always with label -1
    a_bad = a.copy()
    a_bad[[6, 7, 8]] = np.nan    # missing, always with label 0
    y = np.nan_to_num(Y, nan=7.0)
    task = build_task("feature-selection", {"a": a_bad, "y": y}, label="y", bins="categorical")
    X = np.where(np.isnan(a_bad), 9, a_bad).astype(np.int64)[:, None]
    want = MutualInformation.from_records(X, y.astype(np.int64)).value([0])
    assert task.f.value([0]) == pytest.approx(want, abs=1e-12)
    assert task.diagnostics["invalid_cells"]["a"] == 3


def test_codes_are_renumbered_without_changing_the_objective():
    base = build_task("feature-selection", {"a": A, "b": B, "y": Y}, label="y",
                      bins="categorical")
    shifted = build_task("feature-selection", {"a": A * 1000 - 7, "b": B - 1, "y": Y * 3 + 100},
                         label="y", bins="categorical")
    assert _values(shifted.f) == pytest.approx(_values(base.f), abs=1e-12)
    assert shifted.sensitivity == base.sensitivity


@pytest.mark.parametrize("bad", [np.inf, -np.inf, 2.0 ** 60, 0.5])
def test_inexact_or_infinite_codes_are_invalid(bad):
    y = np.nan_to_num(Y, nan=1.0)
    y[0] = bad
    task = build_task("feature-selection", {"a": A, "y": y}, label="y", bins="categorical")
    assert task.diagnostics["invalid_cells"]["y"] == 1


# ----------------------------------------------------------------------------------------------
# private_select(options=...)
# ----------------------------------------------------------------------------------------------
def test_options_reach_the_method():
    t = _fl()
    spec = build_constraint(t, k=3)
    basic = private_select(t, spec, epsilon=1.0, delta=1e-6, backend="numpy", rng=0,
                           options={"composition": "basic"})
    kov = private_select(t, spec, epsilon=1.0, delta=1e-6, backend="numpy", rng=0,
                         options={"composition": "kov"})
    assert basic.privacy.composition == "basic"
    assert kov.privacy.composition == "kov"
    assert basic.to_dict()["params"]["method_params"]["composition"] == "basic"
    assert kov.to_dict()["params"]["method_params"]["composition"] == "kov"
    steps = private_select(t, build_constraint(t, k=2), epsilon=1.0, backend="numpy", rng=0,
                           method="private_continuous_greedy",
                           options={"steps": 3, "n_samples": 2})
    assert steps.to_dict()["params"]["method_params"]["steps"] == 3


@pytest.mark.parametrize("options,match", [
    ({"compositon": "basic"}, r"'compositon'.*'private_greedy'.*composition"),
    ({"backend": "numpy"}, "pass backend= to private_select"),
    ({"sensitivity": 1e-9}, "cannot set the sensitivity"),
])
def test_bad_options_are_refused_by_name_before_any_charge(options, match):
    t = _fl()
    budget = Budget(epsilon=2.0)
    with pytest.raises(ValidationError, match=match):
        private_select(t, build_constraint(t, k=2), epsilon=1.0, backend="numpy", rng=0,
                       budget=budget, options=options)
    assert budget.spent == (0.0, 0.0)


@pytest.mark.parametrize("options", [["composition"], "composition=basic", {1: "basic"}])
def test_options_must_be_a_mapping_of_names(options):
    t = _fl()
    with pytest.raises(ParameterTypeError, match="'options' parameter of private_select"):
        private_select(t, build_constraint(t, k=2), epsilon=1.0, backend="numpy",
                       options=options)


# ----------------------------------------------------------------------------------------------
# private_select(backend=...): names and instances
# ----------------------------------------------------------------------------------------------
def test_a_backend_instance_is_accepted_and_reported_by_name():
    from dpsubmod.privacy import SecureBackend

    t = _fl()
    budget = Budget(2.0)
    rel = private_select(t, build_constraint(t, k=2), epsilon=1.0,
                         backend=SecureBackend(engine="python"), budget=budget)
    doc = rel.to_dict()
    assert doc["params"]["backend"] == "secure" and doc["privacy"]["backend"] == "secure"
    assert len(rel.selection) == 2 and budget.spent == pytest.approx((1.0, 0.0))
    json.dumps(doc)  # the instance does not leak into the release file


def test_opendp_backend_is_accepted_by_name():
    pytest.importorskip("opendp")
    t = _fl()
    rel = private_select(t, build_constraint(t, k=2), epsilon=1.0, backend="opendp")
    assert rel.to_dict()["params"]["backend"] == "opendp"


def test_a_bad_backend_is_refused_before_any_charge():
    t = _fl()
    budget = Budget(2.0)
    with pytest.raises(ValidationError, match="backend"):
        private_select(t, build_constraint(t, k=2), epsilon=1.0, backend="gpu", budget=budget)
    assert budget.spent == (0.0, 0.0)
