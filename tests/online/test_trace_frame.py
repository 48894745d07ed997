"""Traces as pandas DataFrames: one row per round, columns named as the trace's arrays, the run's
parameters and guarantee in ``attrs``; a clear error naming the extra when pandas is missing."""

from __future__ import annotations

import builtins
import math

import numpy as np
import pytest

from dpsubmod.errors import MissingDependencyError
from dpsubmod.online import (
    FunctionStream,
    HazanKale,
    PrivateBandit,
    SubmodPFTAL,
    linear_losses,
    run,
    run_convex,
)
from dpsubmod.polytopes import Box
from oracles import random_cut_plus_modular

pd = pytest.importorskip("pandas")

N, T = 4, 25
ARRAYS = ["values", "expected_values", "comparator_values", "regret", "expected_regret",
          "epsilon", "elapsed"]


def _stream(seed=0):
    rng = np.random.default_rng(seed)
    return FunctionStream([random_cut_plus_modular(N, rng) for _ in range(T)])


def test_set_trace_as_a_frame():
    tr = run(SubmodPFTAL(N, T, M=10.0, epsilon=2.0, rng=1), _stream())
    df = tr.to_frame()
    assert list(df.columns) == ["selections", *ARRAYS]
    assert df.index.name == "round" and list(df.index) == list(range(1, T + 1))
    assert list(df["selections"]) == list(tr.selections)
    for name in ARRAYS:
        np.testing.assert_array_equal(df[name].to_numpy(), getattr(tr, name))
    assert df.attrs["params"] == tr.params and df.attrs["params"] is not tr.params
    assert df.attrs["guarantee"] is tr.guarantee and tr.guarantee is not None
    assert df.attrs["privacy"] is tr.privacy
    assert (df.attrs["name"], df.attrs["n"], df.attrs["T"]) == ("SubmodPFTAL", N, T)
    # the same table as records(), column by column
    rec = pd.DataFrame(tr.records()).set_index("round")
    np.testing.assert_allclose(df["regret"], rec["regret"])


def test_arrays_a_run_did_not_record_are_nan():
    tr = run(HazanKale(N, T, M=10.0, rng=0), _stream(), comparator=None, expected=False)
    df = tr.to_frame()
    assert list(df.columns) == ["selections", *ARRAYS]
    for name in ("expected_values", "comparator_values", "regret", "expected_regret"):
        assert df[name].isna().all(), name
    assert np.isfinite(df["values"]).all()


def test_convex_trace_as_a_frame():
    pb = PrivateBandit(Box(-1.0, 1.0, dim=2), T, epsilon=0.6, mode="extend", rng=2)
    tr = run_convex(pb, linear_losses(2, T, rng=0))
    df = tr.to_frame()
    assert list(df.columns) == ["points", *ARRAYS] and len(df) == T
    assert df["points"].iloc[0] == tuple(tr.points[0].tolist())
    assert math.isclose(df["regret"].iloc[-1], tr.final_regret)


def test_missing_pandas_names_the_extra(monkeypatch):
    tr = run(HazanKale(N, T, M=10.0, rng=0), _stream(), comparator=None)
    real_import = builtins.__import__

    def no_pandas(name, *args, **kwargs):
        if name == "pandas" or name.startswith("pandas."):
            raise ImportError("No module named 'pandas'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pandas)
    with pytest.raises(MissingDependencyError, match=r"pip install 'dpsubmod\[pandas\]'") as e:
        tr.to_frame()
    assert isinstance(e.value, ImportError)
