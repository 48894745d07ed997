"""Record-partitioned objectives on a 2-worker Dask LocalCluster: the same selections as in
memory at the same seed, any noise backend, a lost worker never yields a release, and an
unreachable scheduler is refused before anything is charged."""

from __future__ import annotations

import os
import signal

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")

from dpsubmod import Budget, maximize  # noqa: E402
from dpsubmod.datasets import grid_candidates  # noqa: E402
from dpsubmod.errors import ValidationError  # noqa: E402
from dpsubmod.functions import Coverage, FacilityLocation  # noqa: E402
from dpsubmod.functions.records.distributed import DistributedRunError  # noqa: E402

RNG = np.random.default_rng(3)
P = RNG.random((30_000, 2))
USERS = RNG.integers(0, 6_000, P.shape[0])
C = grid_candidates(6, 6, (0, 1, 0, 1))


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None, silence_logs=50)
    cl = distributed.Client(cluster)
    yield cl
    cl.close()
    cluster.close()


def test_same_selection_as_in_memory(client):
    ref = FacilityLocation.from_chunks(P, C, bandwidth=0.08)
    on_dask = FacilityLocation.from_chunks(da.from_array(P, chunks=(7_001, 2)), C,
                                           bandwidth=0.08, scheduler=client)
    assert on_dask.sensitivity == ref.sensitivity and on_dask.n_rows == ref.n_rows
    for seed in (0, 1):
        a = maximize(ref, 6, "private_greedy", epsilon=2.0, rng=seed)
        b = maximize(on_dask, 6, "private_greedy", epsilon=2.0, rng=seed)
        assert a.selection == b.selection and a.diagnostics.value == b.diagnostics.value


def test_persons_with_many_rows_and_coverage_on_dask(client):
    ref = FacilityLocation.from_chunks(P, C, bandwidth=0.08, user_id=USERS,
                                       max_rows_per_user=2)
    on_dask = FacilityLocation.from_chunks(P, C, bandwidth=0.08, user_id=USERS,
                                           max_rows_per_user=2, scheduler=client)
    assert on_dask.n_rows == ref.n_rows < P.shape[0]
    assert on_dask.sensitivity == ref.sensitivity == 2.0
    assert maximize(ref, 4, "private_greedy", epsilon=1.0, rng=5).selection == \
        maximize(on_dask, 4, "private_greedy", epsilon=1.0, rng=5).selection
    M = (RNG.random((5_000, 7)) < 0.2).astype(float)
    a = Coverage.from_chunks(M, 7)
    b = Coverage.from_chunks(M, 7, scheduler=client)
    assert maximize(a, 3, "private_greedy", epsilon=1.0, rng=2).selection == \
        maximize(b, 3, "private_greedy", epsilon=1.0, rng=2).selection


def test_the_secure_backend_runs_unchanged(client):
    f = FacilityLocation.from_chunks(P, C, bandwidth=0.08, scheduler=client)
    r = maximize(f, 3, "private_greedy", epsilon=1.0, backend="secure")
    assert len(set(r.selection)) == 3 and r.privacy.backend == "secure"


def test_a_lost_worker_fails_cleanly_or_retries_never_partial(client):
    ref = maximize(FacilityLocation.from_chunks(P, C, bandwidth=0.08), 5, "private_greedy",
                   epsilon=2.0, rng=9)
    f = FacilityLocation.from_chunks(P, C, bandwidth=0.08, scheduler=client)
    pids = list(client.run(os.getpid).values())
    passes = []

    def kill_one_worker():
        passes.append(1)
        if len(passes) == 2:
            os.kill(pids[0], signal.SIGKILL)

    f.progress = kill_one_worker
    try:
        r = maximize(f, 5, "private_greedy", epsilon=2.0, rng=9)
    except DistributedRunError as exc:
        assert "Nothing was released" in str(exc)
    else:  # Dask recomputed the lost partition: the answer is the full, correct one
        assert r.selection == ref.selection
    client.wait_for_workers(2, timeout=60)


def test_an_unreachable_scheduler_is_refused_before_any_charge():
    budget = Budget(1.0)
    with pytest.raises(ValidationError, match="cannot be reached"):
        f = FacilityLocation.from_chunks(P[:100], C, bandwidth=0.08,
                                         scheduler="tcp://127.0.0.1:9")
        maximize(f, 2, "private_greedy", epsilon=0.5, budget=budget)
    assert budget.spent == (0.0, 0.0)


def test_select_on_a_cluster_reads_parquet_on_the_workers(client, tmp_path):
    import json

    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    from dpsubmod.cli import main

    path = tmp_path / "rides.parquet"
    pq.write_table(pa.table({"rider": USERS[:20_000], "x": P[:20_000, 0], "y": P[:20_000, 1]}),
                   path, row_group_size=6_000)
    args = ["select", str(path), "--task", "facility-location", "--grid", "4x4", "--bounds",
            "x=0,1", "--bounds", "y=0,1", "--k", "3", "--epsilon", "2", "--backend", "numpy",
            "--seed", "1", "--user-column", "rider", "--max-rows-per-user", "2"]
    docs = []
    for extra in ([], ["--scheduler", client.scheduler.address]):
        out = tmp_path / f"r{len(docs)}.json"
        assert main([*args, "--out", str(out), *extra]) == 0
        docs.append(json.loads(out.read_text()))
    assert docs[0]["selection"] == docs[1]["selection"]
    assert docs[0]["sensitivity"] == docs[1]["sensitivity"] == 2.0


def test_a_user_concave_function_runs_on_dask_as_its_public_table(client):
    from dpsubmod.functions import FeatureBased

    def looks_across_rows(c):  # harmless here: it only ever sees the public grid
        c = np.asarray(c, dtype=np.float64)
        return np.minimum(c, 1.0) * (c.mean() > 0.5)

    X = RNG.random((4_000, 5)) * 0.3
    ref = FeatureBased.from_chunks(X, 5, looks_across_rows)
    on_dask = FeatureBased.from_chunks(da.from_array(X, chunks=(1_001, 5)), 5,
                                       looks_across_rows, scheduler=client)
    assert on_dask.sensitivity == ref.sensitivity
    for S in ([0], [1, 3], [0, 2, 4]):
        assert on_dask.value(S) == ref.value(S)
    assert maximize(ref, 2, "private_greedy", epsilon=2.0, rng=0).selection == \
        maximize(on_dask, 2, "private_greedy", epsilon=2.0, rng=0).selection
