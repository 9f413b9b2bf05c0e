"""COW (mpi4py) and grid (Dask) backends, multistart, and what happens when a worker dies or hangs."""
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import DATA, ROOT

BIN = Path(sys.executable).parent
MPIEXEC = str(BIN / "mpiexec")
ENV = {**os.environ, "LSBENCH_DATA": str(DATA)}

SMALL_CASES = [  # (instance, neighbourhood, iterations): QAP, PFSP and PPP, as the issue asks
    ("tai12a", None, 300),
    ("ta001", "insertion", 120),
    ("31-29", "hamming2", 60),
]


def lsbench(*args, mpi=None, timeout=300):
    cmd = [sys.executable, "-m", "lsbench", *args]
    if mpi:
        cmd = [MPIEXEC, "-n", str(mpi), *cmd]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=ENV, timeout=timeout)


def start(*args, mpi=None):
    cmd = [sys.executable, "-m", "lsbench", *args]
    if mpi:
        cmd = [MPIEXEC, "-n", str(mpi), *cmd]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=ENV)


def run_args(instance, nb, iterations, backend, out, seed=3):
    args = ["run", "--instance", instance, "--algorithm", "tabu", "--backend", backend, "--iterations",
            str(iterations), "--seed", str(seed), "--out", str(out), "--quiet"]
    return args + (["--neighbourhood", nb] if nb else [])


def path_of(rec):
    return [(it, obj) for it, _t, obj in rec["trajectory"]], rec["best_solution"], rec["final_objective"]


@pytest.fixture(scope="module")
def cpu_records(tmp_path_factory):
    d = tmp_path_factory.mktemp("cpu")
    recs = {}
    for inst, nb, iters in SMALL_CASES:
        r = lsbench(*run_args(inst, nb, iters, "cpu", d / f"{inst}.json"))
        assert r.returncode == 0, r.stdout + r.stderr[-3000:]
        recs[inst] = json.loads((d / f"{inst}.json").read_text())
        assert len(recs[inst]["trajectory"]) >= 2  # the searches improve: equality is not vacuous
    return recs


@pytest.mark.system  # end to end: MPI ranks
@pytest.mark.parametrize("instance,nb,iterations", SMALL_CASES)
def test_cow_with_three_ranks_follows_the_cpu_trajectory(instance, nb, iterations, cpu_records, tmp_path):
    out = tmp_path / "cow.json"
    r = lsbench(*run_args(instance, nb, iterations, "cow", out), mpi=3)
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    rec = json.loads(out.read_text())
    assert path_of(rec) == path_of(cpu_records[instance])
    info = rec["backend_info"]
    assert info["ranks"] == 3 and sum(info["rows_per_rank"]) > 0 and min(info["rows_per_rank"]) > 0
    split = info["time_split"]
    assert split["evaluate_calls"] == iterations and split["evaluation_s"] > 0 and split["master_s"] >= 0
    assert lsbench("verify", "--replay", str(out)).returncode == 0  # (the search run again on the CPU)


@pytest.mark.system  # end to end: a Dask cluster
@pytest.mark.parametrize("instance,nb,iterations", SMALL_CASES)
def test_grid_with_two_dask_workers_follows_the_cpu_trajectory(instance, nb, iterations, cpu_records, tmp_path):
    out = tmp_path / "grid.json"
    r = lsbench(*run_args(instance, nb, iterations, "grid", out), "--workers", "2")
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    rec = json.loads(out.read_text())
    assert path_of(rec) == path_of(cpu_records[instance])
    assert rec["backend_info"]["workers"] == 2
    assert rec["backend_info"]["time_split"]["communication_s"] > 0
    assert lsbench("verify", "--replay", str(out)).returncode == 0


def _processes_with(marker, env_key=None, env_value=None):
    """PIDs of python processes whose command line (or environment) carries the marker."""
    pids = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit() or int(d.name) == os.getpid():
            continue
        try:
            cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            env = (d / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if "python" not in cmd:
            continue
        if env_key is not None:
            if f"{env_key}={env_value}".encode() in env and marker in cmd:
                pids.append(int(d.name))
        elif marker in cmd:
            pids.append(int(d.name))
    return pids


class StderrLines:
    """Reads a started process's stderr on a thread, so that a test can wait for a line (the
    search's progress line says it is past start-up and warm-up) and still read all of it after."""

    def __init__(self, process):
        self.lines, self.process = [], process
        self.thread = threading.Thread(target=lambda: self.lines.extend(process.stderr), daemon=True)
        self.thread.start()

    def wait_for(self, text, seconds=120):
        return _wait_for(lambda: any(text in line for line in list(self.lines)), seconds)

    def finish(self, seconds):
        """stdout and the whole stderr once the process has ended (within `seconds`)."""
        self.process.wait(timeout=seconds)
        self.thread.join(timeout=10)
        return self.process.stdout.read(), "".join(self.lines)


def _wait_for(fn, seconds=60):
    end = time.time() + seconds
    while time.time() < end:
        got = fn()
        if got:
            return got
        time.sleep(0.2)
    raise AssertionError("timed out waiting")


@pytest.mark.system  # fault injection
@pytest.mark.parametrize("how", ["kill", "hang"])
def test_cow_worker_that_dies_or_hangs_ends_the_run_with_an_error_and_no_record(how, tmp_path):
    out = tmp_path / f"cow-{how}.json"
    p = start("run", "--instance", "ta001", "--neighbourhood", "insertion", "--backend", "cow", "--seconds", "120",
              "--param", "worker_timeout=4", "--out", str(out), mpi=3)
    try:
        stderr = StderrLines(p)
        worker = _wait_for(lambda: _processes_with(str(out), "PMI_RANK", "1"))[0]
        stderr.wait_for("] iteration")  # the search is running (past warm-up)
        t = time.time()
        os.kill(worker, signal.SIGKILL if how == "kill" else signal.SIGSTOP)
        _out, err = stderr.finish(60)
        assert time.time() - t < 30  # bounded: far less than the 120 s the run asked for
    finally:
        if p.poll() is None:
            p.kill()
        for pid in _processes_with(str(out)):
            os.kill(pid, signal.SIGKILL)
    assert p.returncode != 0
    assert not out.exists() and not list(tmp_path.glob("*.tmp*"))
    if how == "hang":
        assert "did not answer within 4 s" in err and "[1]" in err


def _dask_workers_of(pid):
    """Dask worker processes of the LocalCluster that process `pid` started (spawned children)."""
    found = []
    for d in Path("/proc").iterdir():
        try:
            if d.name.isdigit() and int((d / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid \
                    and b"spawn_main" in (d / "cmdline").read_bytes():
                found.append(int(d.name))
        except OSError:
            continue
    return found


def test_a_unit_of_searches_is_collected_with_one_summary_write_whatever_its_size(tmp_path, monkeypatch):
    """The collector takes a unit's records together: each record written, the summary rewritten
    once a unit (a record at a time, K searches cost O(K^2) there); errors counted as failed."""
    from lsbench.hpc.multistart import Collector
    from lsbench.spec import build_spec
    spec = build_spec("tai12a", "qap", "tabu", "cpu", iterations=5, data_dir=DATA)
    record = {"best_objective": 10, "iterations": 5, "wall_s": 1.0, "iterations_per_s": 5.0, "gap_percent": 1.0,
              "trajectory": [[0, 0.0, 10]], "timed_interval": [0.0, 1.0]}
    writes = []
    monkeypatch.setattr(Collector, "write_summary", lambda self: writes.append(len(self.results)))
    collector = Collector(str(tmp_path), list(range(1, 10)), spec, "mpi", None)
    collector.add({s: {**record, "seed": s} for s in range(1, 9)}, {"host": "a", "rank": 1})
    collector.add({9: {"seed": 9, "error": "lost"}}, None)
    assert writes == [0, 8, 9]  # at the start, then once a unit
    assert sorted(p.name for p in tmp_path.glob("seed-*.json")) == [f"seed-{s}.json" for s in range(1, 9)]
    assert json.loads((tmp_path / "seed-3.json").read_text())["placement"] == {"host": "a", "rank": 1}
    summary = collector.summary()
    assert summary["completed"] == 8 and summary["failed"] == [{"seed": 9, "error": "lost"}]


def test_connected_workers_sees_every_worker_while_the_clients_own_refresh_runs():
    """Client.scheduler_info() returns the client's cached identity, which its periodic refresh
    (without per-worker entries) can replace before the call returns: a grid run then saw both of
    its workers "lost" (a CI run under load, at the default 2 s refresh). The workers are asked of
    the scheduler itself: with the refresh every millisecond, every one of 300 calls sees both."""
    import logging

    import dask
    from distributed import Client, LocalCluster

    from lsbench.hpc.dask_grid import connected_workers
    with dask.config.set({"distributed.client.scheduler-info-interval": "1ms"}):
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                               dashboard_address=None, silence_logs=logging.ERROR)
        client = Client(cluster)
        try:
            expected = sorted(cluster.scheduler.workers)
            assert len(expected) == 2
            assert all(connected_workers(client) == expected for _ in range(300))
        finally:
            client.close()
            cluster.close()


def test_grid_slices_cancelled_by_lost_instance_data_end_the_run_with_one_error_line():
    """A killed worker can take the scattered instance data with it: the scheduler then cancels
    every slice ("already forgotten") before it sees the worker gone (a CI run died of the raw
    FuturesCancelledError). Cancelling the scattered data here does the same, deterministically."""
    import numpy as np

    from lsbench.errors import LsbenchError
    from lsbench.hpc.dask_grid import DaskGridEvaluator
    from lsbench.problems.qap import QAP, QapSwap
    rng = np.random.default_rng(1)
    problem = QAP(rng.integers(0, 9, (8, 8)), rng.integers(0, 9, (8, 8)))
    grid = DaskGridEvaluator(workers=2, threads=1).bind(problem, QapSwap(problem))
    try:
        grid.reset(np.arange(8))
        assert len(grid.evaluate()) == 28
        grid.client.cancel(grid.nb_remote)
        with pytest.raises(LsbenchError, match=r"^grid backend: worker\(s\) failed .*FuturesCancelledError") as e:
            grid.evaluate()
        assert "\n" not in str(e.value)
    finally:
        grid.close()


@pytest.mark.system  # fault injection
@pytest.mark.parametrize("how", ["kill", "hang"])
def test_grid_worker_that_dies_or_hangs_ends_the_run_with_an_error_and_no_record(how, tmp_path):
    out = tmp_path / f"grid-{how}.json"
    p = start("run", "--instance", "ta001", "--neighbourhood", "insertion", "--backend", "grid", "--workers", "2",
              "--seconds", "120", "--param", "worker_timeout=5", "--out", str(out))
    try:
        stderr = StderrLines(p)
        workers = _wait_for(lambda: len(_dask_workers_of(p.pid)) == 2 and _dask_workers_of(p.pid))
        stderr.wait_for("] iteration")  # the search is running (past cluster start and warm-up)
        t = time.time()
        os.kill(workers[0], signal.SIGKILL if how == "kill" else signal.SIGSTOP)
        _out, err = stderr.finish(90)
        assert time.time() - t < 60
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 2, err
    assert err.strip().splitlines()[-1].startswith("lsbench: error: grid backend: worker"), err[-3000:]
    assert not out.exists() and not list(tmp_path.glob("*.tmp*"))


@pytest.mark.system  # end to end: MPI ranks
def test_multistart_over_mpi_writes_every_search_equal_to_its_single_run(tmp_path, cpu_records):
    d = tmp_path / "ms"
    r = lsbench("multistart", "--searches", "4", "--seed", "2", "--instance", "tai12a", "--algorithm", "tabu",
                "--iterations", "300", "--out-dir", str(d), mpi=2)
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    summary = json.loads((d / "summary.json").read_text())
    assert summary["via"] == "mpi" and summary["completed"] == 4 and not summary["failed"]
    assert {p["rank"] for p in summary["placements"].values()} == {0, 1}
    seed3 = json.loads((d / "seed-3.json").read_text())
    assert path_of(seed3) == path_of(cpu_records["tai12a"])  # seed 3, same search as the single run
    bests = [json.loads((d / f"seed-{s}.json").read_text())["best_objective"] for s in range(2, 6)]
    assert summary["best_objective"] == min(bests)
    assert lsbench("verify", *[str(d / f"seed-{s}.json") for s in range(2, 6)]).returncode == 0


def _warm_up_then_gate(delay, gate):
    import time as clock
    clock.sleep(delay)  # a slower compile and warm-up
    gate()
    return clock.time()


@pytest.mark.system  # end to end: a Dask cluster
def test_dask_units_start_their_timed_searches_together_after_the_slowest_warm_up():
    """The first unit a worker takes waits at the start gate for the others (hpc/dispatch.py);
    a later unit passes at once."""
    from distributed import Client, LocalCluster
    from lsbench.hpc.dispatch import DaskStartGate
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None) as cluster, Client(cluster) as client:
        workers = sorted(client.scheduler_info()["workers"])
        gate = DaskStartGate("test-gate", expected=2)
        t0 = time.time()
        fast, slow = (client.submit(_warm_up_then_gate, delay, gate, workers=[w], pure=False)
                      for delay, w in ((0.0, workers[0]), (2.0, workers[1])))
        fast_start, slow_start = fast.result(timeout=60), slow.result(timeout=60)
        later = client.submit(_warm_up_then_gate, 0.0, gate, pure=False).result(timeout=60)
    assert slow_start - t0 >= 2.0 and abs(fast_start - slow_start) < 0.5  # the fast unit waited
    assert later - slow_start < 5  # the third arrival found the gate open


@pytest.mark.system  # fault injection
def test_multistart_over_dask_reports_a_killed_workers_search_as_failed_and_keeps_the_others(tmp_path):
    d = tmp_path / "ms"
    p = start("multistart", "--searches", "4", "--workers", "2", "--instance", "ta001", "--neighbourhood",
              "insertion", "--seconds", "5", "--out-dir", str(d))
    try:
        workers = _wait_for(lambda: len(_dask_workers_of(p.pid)) == 2 and _dask_workers_of(p.pid))
        time.sleep(4)  # the first two searches are running
        os.kill(workers[0], signal.SIGKILL)
        _out, err = p.communicate(timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 1, err
    summary = json.loads((d / "summary.json").read_text())
    assert len(summary["failed"]) >= 1 and summary["completed"] >= 2
    assert summary["completed"] + len(summary["failed"]) == 4 and not summary["pending"]
    assert "worker lost" in summary["failed"][0]["error"]
    kept = sorted(d.glob("seed-*.json"))
    assert len(kept) == summary["completed"]
    assert lsbench("verify", *map(str, kept)).returncode == 0


def _records(d):
    return {int(f.stem.split("-")[1]): json.loads(f.read_text()) for f in d.glob("seed-*.json")}


@pytest.mark.system  # end to end: MPI ranks
def test_island_ring_exchanges_elites_the_same_way_locally_and_over_mpi(tmp_path):
    """Cooperative multistart: epoch 0 of each island is its independent search; islands that
    received an elite restart from it; the ring gives the same records in one process and over
    MPI ranks (only results cross ranks)."""
    args = ["multistart", "--searches", "4", "--seed", "1", "--instance", "ta021", "--neighbourhood", "insertion",
            "--iterations", "150", "--exchange-every", "50"]
    r = lsbench(*args, "--via", "local", "--out-dir", str(tmp_path / "local"))
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    r = lsbench(*args, "--out-dir", str(tmp_path / "mpi"), mpi=2)
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    local, over_mpi = _records(tmp_path / "local"), _records(tmp_path / "mpi")
    assert json.loads((tmp_path / "mpi" / "summary.json").read_text())["via"] == "mpi-islands"
    assert sorted(local) == sorted(over_mpi) == [1, 2, 3, 4]
    for s in local:
        assert path_of(local[s]) == path_of(over_mpi[s])
        assert local[s]["iterations"] == 150
    received = {s: rec["params"]["islands"]["received_at_epochs"] for s, rec in local.items()}
    assert any(received.values())  # elites did travel
    for s, rec in local.items():
        single = lsbench("run", "--instance", "ta021", "--neighbourhood", "insertion", "--iterations", "50",
                         "--seed", str(s), "--out", str(tmp_path / f"single-{s}.json"), "--quiet")
        assert single.returncode == 0, single.stderr
        first = json.loads((tmp_path / f"single-{s}.json").read_text())["trajectory"]
        assert [(i, o) for i, _t, o in rec["trajectory"] if i <= 50][:len(first)] == [(i, o) for i, _t, o in first]
        for e in received[s]:  # an island that received starts its epoch at an elite below its own best
            at = [o for i, _t, o in rec["trajectory"] if i == 50 * e]
            assert at, (s, e, rec["trajectory"])
    assert lsbench("verify", "--replay", *map(str, sorted((tmp_path / "mpi").glob("seed-*.json")))).returncode == 0


def test_the_slurm_grid_leaves_ctrl_c_to_lsbench(monkeypatch):
    """Importing dask_jobqueue sets SIGINT's handler to sys.exit(): a Ctrl-C ended a SLURM grid run
    with exit code 0. The handler lsbench had is put back."""
    import signal
    from lsbench.hpc.dask_grid import jobqueue_slurm_cluster
    for name in [m for m in sys.modules if m == "dask_jobqueue" or m.startswith("dask_jobqueue.")]:
        monkeypatch.delitem(sys.modules, name)  # (imported afresh, as in a new process)
    before = signal.getsignal(signal.SIGINT)
    try:
        assert jobqueue_slurm_cluster().__name__ == "SLURMCluster"
        assert signal.getsignal(signal.SIGINT) is before
    finally:
        signal.signal(signal.SIGINT, before)


def test_grid_on_slurm_builds_worker_jobs_bound_where_told_and_refuses_without_an_address():
    from lsbench.hpc.dask_grid import slurm_cluster
    from lsbench.errors import LsbenchError
    with pytest.raises(LsbenchError, match="slurm_host"):
        slurm_cluster(threads=4)
    cluster = slurm_cluster(threads=4, slurm_host="127.0.0.1", slurm_partition="gpu", slurm_account="proj1",
                            slurm_memory="8GB", slurm_walltime="02:00:00")
    try:
        script = cluster.job_script()
        for line in ("#SBATCH -p gpu", "#SBATCH -A proj1", "#SBATCH --cpus-per-task=4", "#SBATCH -t 02:00:00"):
            assert line in script
        assert cluster.scheduler_address.startswith("tcp://127.0.0.1:")
        assert "--nthreads 4" in script and cluster.scheduler_address in script
    finally:
        cluster.close()


@pytest.mark.system  # end to end: a Snakemake workflow
def test_workflow_grid_params_reach_every_grid_run(tmp_path):
    """What the SLURM profile sets (`--config grid_params=...`) ends up on each grid command line."""
    env = {**ENV, "NUMBA_ENABLE_CUDASIM": "0"}
    r = subprocess.run([sys.executable, "-m", "snakemake", "-s", str(ROOT / "Snakefile"), "-d", str(tmp_path), "-n",
                        "-p", "--configfile", str(ROOT / "workflows" / "config" / "luong_cow_grid.yaml"),
                        "--config", "scale=quick", "grid_params={scheduler: slurm, slurm_host: 'interface:ib0'}"],
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    grid_lines = [line for line in r.stdout.splitlines() if "--backend grid" in line]
    assert grid_lines and all("--param scheduler=slurm" in line and "--param slurm_host=interface:ib0" in line
                              for line in grid_lines)
    assert not any("scheduler=slurm" in line for line in r.stdout.splitlines() if "--backend cow" in line)


@pytest.mark.system  # end to end: MPI ranks
@pytest.mark.long
def test_multistart_fills_each_gpu_with_a_batch_of_resident_searches_two_ranks_sharing_one_device(tmp_path):
    """rots on gpu-resident: 6 searches over 2 MPI ranks sharing one (simulated) GPU run as batches
    of --searches-per-gpu 2 on each rank; every seed's record is the single run's of that seed (the
    CPU's search), verified; the summary counts each batch's time once; a rerun has nothing to do."""
    env = {**ENV, "NUMBA_ENABLE_CUDASIM": "1"}
    d = tmp_path / "ms"
    args = ["multistart", "--searches", "6", "--seed", "4", "--instance", "tai12a", "--algorithm", "rots",
            "--backend", "gpu-resident", "--iterations", "20", "--searches-per-gpu", "2", "--out-dir", str(d)]
    r = subprocess.run([MPIEXEC, "-n", "2", sys.executable, "-m", "lsbench", *args], capture_output=True, text=True,
                       cwd=ROOT, env=env, timeout=900)
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    summary = json.loads((d / "summary.json").read_text())
    assert summary["completed"] == 6 and not summary["failed"]
    assert (summary["runs"], summary["largest_run_searches"]) == (3, 2)  # (batches one after another, said)
    assert "6/6 searches done via mpi" in r.stdout and "3 run(s), at most 2 search(es) at once" in r.stdout
    recs = _records(d)
    assert {rec["placement"]["rank"] for rec in recs.values()} == {0, 1}
    assert sorted(rec["batch"]["first_seed"] for rec in recs.values()) == [4, 4, 6, 6, 8, 8]
    for seed in (5, 8):
        single = tmp_path / f"cpu-{seed}.json"
        assert lsbench("run", "--instance", "tai12a", "--algorithm", "rots", "--iterations", "20", "--seed", str(seed),
                       "--out", str(single), "--quiet").returncode == 0
        assert path_of(recs[seed]) == path_of(json.loads(single.read_text()))
    assert lsbench("verify", *map(str, sorted(d.glob("seed-*.json")))).returncode == 0
    batches = {(rec["placement"]["rank"], rec["batch"]["first_seed"]): rec["wall_s"] for rec in recs.values()}
    per_rank = [sum(w for (rank, _), w in batches.items() if rank == q) for q in (0, 1)]
    assert summary["busiest_placement_s"] == pytest.approx(max(per_rank), abs=1e-5)
    # the aggregate rate is over the time some timed search ran (ranks sharing a GPU overlap)
    spans = sorted({tuple(rec["timed_interval"]) for rec in recs.values()})
    assert len(spans) == 3 and max(per_rank) - 1e-5 <= summary["timed_union_s"] <= sum(b - a for a, b in spans) + 1e-5
    assert summary["aggregate_iterations_per_s"] == pytest.approx(6 * 20 / summary["timed_union_s"], rel=1e-3)
    # the ranks passed a barrier after their first warm-up: their first timed searches began together
    assert set(summary["placement_iterations_per_s"]) == {"0", "1"} and 0 <= summary["start_skew_s"] < 0.5
    again = subprocess.run([MPIEXEC, "-n", "2", sys.executable, "-m", "lsbench", *args], capture_output=True, text=True,
                           cwd=ROOT, env=env, timeout=900)
    assert again.returncode == 0 and json.loads((d / "summary.json").read_text())["resumed"] == 6


class _Pipe:
    """Two islands' rings joined in memory (tests of the migration rule)."""

    def __init__(self, position, size, boxes):
        self.position, self.size, self.boxes = position, size, boxes

    def send(self, message):
        self.boxes[(self.position + 1) % self.size].append(message)

    def poll(self):
        out = list(self.boxes[self.position])
        self.boxes[self.position].clear()
        return out

    def start(self, bound_s):
        pass

    def close(self, bound_s):
        pass


def test_migration_sends_every_period_restarts_only_worse_searches_and_passes_a_stop_round_the_ring():
    import numpy as np
    from lsbench.search.islands import Migration
    boxes = {0: [], 1: [], 2: []}
    a, b, c = (Migration(_Pipe(i, 3, boxes), every=10, migrants=2) for i in range(3))
    sols = np.arange(12).reshape(3, 4)
    none = np.zeros(3, dtype=bool)
    assert a.at_chunk(4, np.array([50, 40, 40]), lambda: sols, none, False) == ([], False)
    assert not boxes[1]  # not due yet
    a.at_chunk(10, np.array([50, 40, 30]), lambda: sols, none, False)
    assert boxes[1] == [{"kind": "elites", "from": 0, "iteration": 10, "costs": [30, 40],
                         "solutions": [sols[2].tolist(), sols[1].tolist()]}]
    a.at_chunk(12, np.array([50, 40, 30]), lambda: sols, none, False)
    assert len(boxes[1]) == 1  # the next send is at 20
    # chunks longer than the period (the engine's own, never cut for the ring): one send at the
    # boundary past several periods, the next from the next multiple on
    far = {0: [], 1: []}
    d = Migration(_Pipe(0, 2, far), every=10, migrants=1)
    for boundary, sends in ((37, 1), (39, 1), (40, 2), (75, 3)):
        d.at_chunk(boundary, np.array([50, 40, 30]), lambda: sols, none, False)
        assert len(far[1]) == sends
    # island 1: its worst (45) takes 30; 40 is already one of its bests; 44 is better than nothing left
    starts, stop = b.at_chunk(13, np.array([45, 40, 35]), lambda: sols, np.array([False, False, False]), False)
    assert stop is False and [(q, s.tolist()) for q, s in starts] == [(0, sols[2].tolist())]
    assert b.received_by(0) == [[13, 30, 0]] and b.received == 1
    # a finished search is never restarted
    boxes[1].append({"kind": "elites", "from": 0, "iteration": 20, "costs": [10], "solutions": [sols[0].tolist()]})
    starts, _ = b.at_chunk(21, np.array([45, 40, 35]), lambda: sols, np.array([True, False, False]), False)
    assert [q for q, _s in starts] == [1]
    # island 2 reaches the target: it tells island 0, which passes it on once; island 1 stops too
    assert c.at_chunk(30, np.array([5, 9, 9]), lambda: sols, none, True)[1] is True
    boxes[2].clear()
    assert a.at_chunk(31, np.array([50, 40, 30]), lambda: sols, none, False) == ([], True)
    assert a.stopped_by == 2 and boxes[1][-1] == {"kind": "stop", "from": 2}
    assert b.at_chunk(32, np.array([45, 40, 35]), lambda: sols, none, False)[1] is True
    assert boxes[2] == [{"kind": "stop", "from": 2}]  # back at its sender, which forwards it no further
    assert c.at_chunk(33, np.array([5, 9, 9]), lambda: sols, none, False)[1] is True and not boxes[0]


def test_crossed_migrants_keep_what_both_parents_share_and_restart_only_where_a_copy_would():
    """--migrant-start cross: the restarted searches are those a copy would restart; each starts
    from a permutation holding every assignment its own best and the migrant share, the others
    dealt at random -- the same for the same arrival, different elsewhere."""
    import numpy as np

    from lsbench import rng
    from lsbench.errors import LsbenchError
    from lsbench.search.islands import Migration, crossed
    a, b = np.array([0, 1, 2, 3, 4, 5, 6, 7]), np.array([0, 1, 5, 3, 7, 2, 6, 4])
    child = crossed(a, b, rng.new_state(3))
    assert sorted(child) == list(range(8)) and all(child[i] == a[i] for i in (0, 1, 3, 6))
    assert (child == crossed(a, b, rng.new_state(3))).all()
    assert len({tuple(crossed(a, b, rng.new_state(s))) for s in range(20)}) > 1
    own = np.array([[7, 6, 5, 4, 3, 2, 1, 0], [1, 0, 2, 3, 4, 5, 6, 7], [0, 1, 2, 3, 4, 5, 7, 6]])
    arrived = {"kind": "elites", "from": 1, "iteration": 9, "costs": [30], "solutions": [a.tolist()]}
    for start in ("copy", "cross"):
        boxes = {0: [arrived], 1: []}
        island = Migration(_Pipe(0, 2, boxes), every=100, migrants=1, start=start)
        starts, _ = island.at_chunk(13, np.array([45, 40, 35]), lambda: own, np.zeros(3, dtype=bool), False)
        assert [q for q, _s in starts] == [0] and island.received_by(0) == [[13, 30, 1]]
        assert island.describe()["migrant_start"] == start
        if start == "copy":
            assert starts[0][1].tolist() == a.tolist()
        else:
            assert starts[0][1].tolist() == crossed(a, own[0], rng.new_state(13 * 1_000_003)).tolist()
    with pytest.raises(LsbenchError, match="--migrant-start"):
        Migration(_Pipe(0, 2, {0: [], 1: []}), every=10, migrants=1, start="swap")


# `python -m lsbench` with the tests' simulator fix (ranks run simulated kernels in their own processes)
SIMULATED_LSBENCH = [sys.executable, str(ROOT / "tests" / "simulator_safety.py")]


def _live_island_args(d, *extra):
    return ["multistart", "--searches", "4", "--seed", "1", "--instance", "tai12a", "--algorithm", "rots",
            "--backend", "gpu-resident", "--exchange-every", "8", "--out-dir", str(d), *extra]


def _check_live_islands(d, tmp_path, ring_size, via):
    """Every record verified; each island sent (at its chunk boundaries: deterministic) and the ring
    received (when depends on the ranks' relative speed: a rank may end before its neighbour's first
    send, as one did on a loaded 2-core CI host); a restarted search's best is at most what it
    received from then on; a search never restarted is the CPU search of its seed."""
    summary = json.loads((d / "summary.json").read_text())
    assert summary["via"] == via and summary["completed"] == 4 and not summary["failed"]
    assert len(summary["islands"]) == ring_size
    assert all(i["sent"] >= 1 and i["ring_size"] == ring_size for i in summary["islands"])
    assert sum(i["received"] for i in summary["islands"]) >= 1
    recs = _records(d)
    assert lsbench("verify", *map(str, sorted(d.glob("seed-*.json")))).returncode == 0
    # each search replayed on the CPU up to the first elite that restarted it (the whole of one never restarted)
    assert lsbench("verify", "--replay", *map(str, sorted(d.glob("seed-*.json")))).returncode == 0
    untouched = []
    for seed, rec in recs.items():
        for it, cost, source in rec["islands"]["restarted_from"]:
            assert source != rec["islands"]["position"] or ring_size == 1
            assert min(o for i, _t, o in rec["trajectory"] if i <= it) <= cost
        if not rec["islands"]["restarted_from"]:
            untouched.append(seed)
    assert sum(i["replaced"] for i in summary["islands"]) >= 1  # elites did restart searches
    assert untouched
    seed = untouched[0]
    single = tmp_path / f"cpu-{seed}.json"
    assert lsbench("run", "--instance", "tai12a", "--algorithm", "rots", "--iterations", str(recs[seed]["iterations"]),
                   "--seed", str(seed), "--out", str(single), "--quiet").returncode == 0
    assert path_of(recs[seed]) == path_of(json.loads(single.read_text()))
    return summary, recs


@pytest.mark.system  # end to end: MPI ranks
def test_live_islands_over_mpi_pass_elites_between_gpus_while_they_search_and_stop_together(tmp_path):
    """rots on gpu-resident with --exchange-every: each of 2 ranks (one simulated GPU) runs its 2
    searches as one run; elites cross ranks at chunk boundaries; a target reached on one rank stops
    the other at its next boundary."""
    env = {**ENV, "NUMBA_ENABLE_CUDASIM": "1"}
    d = tmp_path / "ring"
    r = subprocess.run([MPIEXEC, "-n", "2", *SIMULATED_LSBENCH, *_live_island_args(d, "--iterations", "40")],
                       capture_output=True, text=True, cwd=ROOT, env=env, timeout=900)
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    _check_live_islands(d, tmp_path, 2, "mpi-islands")
    d = tmp_path / "cross"  # migrants crossed with the restarted searches' bests: every record still verifies
    r = subprocess.run([MPIEXEC, "-n", "2", *SIMULATED_LSBENCH, *_live_island_args(d, "--iterations", "40"),
                        "--migrant-start", "cross"], capture_output=True, text=True, cwd=ROOT, env=env, timeout=900)
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    summary = json.loads((d / "summary.json").read_text())
    assert summary["completed"] == 4 and [i["migrant_start"] for i in summary["islands"]] == ["cross", "cross"]
    assert lsbench("verify", *map(str, sorted(d.glob("seed-*.json")))).returncode == 0
    d = tmp_path / "target"
    r = subprocess.run([MPIEXEC, "-n", "2", *SIMULATED_LSBENCH,
                        *_live_island_args(d, "--iterations", "400", "--target", "232000")],
                       capture_output=True, text=True, cwd=ROOT, env=env, timeout=900)
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    summary = json.loads((d / "summary.json").read_text())
    recs = _records(d)
    hit = [rec for rec in recs.values() if rec["best_objective"] <= 232000]
    assert hit and summary["first_time_to_target_s"] is not None
    assert all(rec["iterations"] < 100 for rec in recs.values())  # nobody ran on to the budget
    hit_islands = {rec["islands"]["position"] for rec in hit}
    assert all(i["stopped_by"] in hit_islands for i in summary["islands"] if i["position"] not in hit_islands)


@pytest.mark.system  # end to end: a Dask cluster
def test_live_islands_over_dask_workers_pass_elites_while_they_search(tmp_path):
    # the workers' simulated kernels share their process with Dask's threads: the tests' simulator fix
    preload = json.dumps([str(ROOT / "tests" / "simulator_safety.py")])
    # no statistical profiler in the workers: its sys._current_frames() every 10 ms, while the
    # simulator starts and ends a Python thread per GPU thread, could deadlock a worker in CPython
    # (seen in the full suite: the event loop inside _current_frames, in a GC callback, waiting for
    # the GIL; a kernel thread holding it, starting a thread) -- no heartbeats, no progress
    env = {**ENV, "NUMBA_ENABLE_CUDASIM": "1", "DASK_DISTRIBUTED__WORKER__PRELOAD": preload,
           "DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED": "False"}
    d = tmp_path / "ring"
    r = subprocess.run([sys.executable, "-m", "lsbench", *_live_island_args(d, "--iterations", "40", "--workers", "2")],
                       capture_output=True, text=True, cwd=ROOT, env=env, timeout=900)
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    summary, recs = _check_live_islands(d, tmp_path, 2, "dask-islands")
    assert len({rec["placement"]["worker"] for rec in recs.values()}) == 2


def test_each_placement_has_its_own_rate_and_the_start_skew_is_reported():
    """placement_rates: a rank's iterations over the union of its timed intervals (a batch's
    searches share one), and how far apart the ranks' first timed searches began."""
    from lsbench.hpc.multistart import placement_rates
    done = {1: {"iterations": 10, "timed_interval": [100.0, 102.0], "placement": {"rank": 0}},
            2: {"iterations": 10, "timed_interval": [100.0, 102.0], "placement": {"rank": 0}},
            3: {"iterations": 30, "timed_interval": [100.5, 103.5], "placement": {"rank": 1}},
            4: {"iterations": 30, "timed_interval": [103.5, 104.5], "placement": {"rank": 1}}}
    out = placement_rates(done)
    assert out == {"placement_iterations_per_s": {"0": 10.0, "1": 15.0}, "start_skew_s": 0.5}
