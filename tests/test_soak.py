"""Soak: 500 tiny searches through `lsbench multistart` over Dask workers and over MPI ranks, a
worker or rank killed at a random point. Every seed ends as a verified record or a listed failure
with its reason, none is lost or duplicated, and running the command again completes only the
missing ones."""
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import DATA, ROOT

SEEDS = 500
MPIEXEC = str(Path(sys.executable).parent / "mpiexec")
ENV = {**os.environ, "LSBENCH_DATA": str(DATA), "NUMBA_ENABLE_CUDASIM": "0", "PYTHONUNBUFFERED": "1"}
TINY = ["multistart", "--searches", str(SEEDS), "--instance", "rnd-qap-8-1", "--algorithm", "tabu",
        "--iterations", "5", "--warmup", "0"]


def _children(pid):
    """Every descendant process id of pid (from /proc)."""
    parents = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
                parents.setdefault(int(stat.rsplit(")", 1)[1].split()[1]), []).append(int(entry.name))
            except (OSError, IndexError, ValueError):
                pass
    out, todo = [], [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def _cmdline(pid):
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def _mpi_rank(pid):
    """The MPI rank a launcher gave the process (MPICH's PMI_RANK or Open MPI's), or None."""
    try:
        env = dict(v.split(b"=", 1) for v in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0") if b"=" in v)
    except OSError:
        return None
    for key in (b"PMI_RANK", b"OMPI_COMM_WORLD_RANK", b"PMIX_RANK"):
        if key in env:
            return int(env[key])
    return None


def _alive(pid):
    """Running, not a zombie waiting to be reaped."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def _records(d):
    return sorted(d.glob("seed-*.json"))


def _run_and_kill(cmd, d, victim, at_records, timeout=600):
    """Start cmd; once `at_records` records exist, SIGKILL the first process `victim(pid)` names."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=ENV,
                         start_new_session=True)
    killed = None
    deadline = time.time() + timeout
    try:
        while time.time() < deadline and p.poll() is None:
            if killed is None and len(_records(d)) >= at_records:
                targets = victim(p.pid)
                if targets:
                    killed = targets[0]
                    os.kill(killed, signal.SIGKILL)
            time.sleep(0.05)
        out, err = p.communicate(timeout=120)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
    return p.returncode, out, err, killed


def _check_every_seed_accounted_for(d):
    summary = json.loads((d / "summary.json").read_text())
    recorded = {int(f.stem.split("-")[1]) for f in _records(d)}
    failed = {f["seed"] for f in summary["failed"]}
    assert all(f["error"] for f in summary["failed"])  # each failure says why
    assert not recorded & failed  # none both
    return summary, recorded, failed


def _verify_all(d):
    files = _records(d)
    r = subprocess.run([sys.executable, "-m", "lsbench", "verify", *map(str, files)], capture_output=True, text=True,
                       cwd=ROOT, env=ENV, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.count(": OK ") == len(files)


@pytest.mark.system
@pytest.mark.long
@pytest.mark.parametrize("via", ["dask", "mpi"])
def test_soak_500_searches_with_a_killed_worker_lose_nothing_and_resume(tmp_path, via):
    d = tmp_path / via
    rnd = random.Random(7 if via == "dask" else 11)
    at = rnd.randint(40, 200)  # a random point of the run
    if via == "dask":
        cmd = [sys.executable, "-m", "lsbench", *TINY, "--workers", "2", "--out-dir", str(d)]

        def victim(pid):
            return [c for c in _children(pid) if "dask" in _cmdline(c) or "spawn_main" in _cmdline(c)]
    else:
        cmd = [MPIEXEC, "-n", "2", sys.executable, "-m", "lsbench", *TINY, "--out-dir", str(d)]

        def victim(pid):
            # rank 0, which writes every record: the other rank may have sent all its results and
            # exited already (a kill then lands on a zombie and the job ends well); the MPI job
            # ends, the records rank 0 wrote whole stay
            ranks = [c for c in _children(pid) if "-m lsbench" in _cmdline(c) and "mpiexec" not in _cmdline(c)]
            return [c for c in ranks if _mpi_rank(c) == 0 and _alive(c)]
    for attempt in range(3):
        code, out, err, killed = _run_and_kill(cmd, d, victim, at)
        assert killed is not None, (out[-1500:], err[-1500:])
        if via == "mpi" or code != 0:
            break
        # the kill landed on a worker between two searches: nothing was in flight, so nothing is
        # lost and the restarted worker finished the run; kill again, in a fresh run, to test a loss
        assert len(_records(d)) == SEEDS, err[-1500:]
        shutil.rmtree(d)
    before = {f.name: f.stat().st_mtime_ns for f in _records(d)}
    assert 0 < len(before) < SEEDS or code != 0
    if via == "dask":  # the driver survives a worker: the killed worker's searches are listed as failed
        summary, recorded, failed = _check_every_seed_accounted_for(d)
        assert code == 1 and failed and len(recorded) + len(failed) == SEEDS and not summary["pending"]
        assert "worker lost" in summary["failed"][0]["error"]
    else:  # a killed rank takes the MPI job down; what was written stays, whole
        assert code != 0
    _verify_all(d)
    # again: only the missing searches run; the records already written are kept as they are
    rerun = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=ENV, timeout=900)
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    summary, recorded, failed = _check_every_seed_accounted_for(d)
    assert recorded == set(range(1, SEEDS + 1)) and not failed and summary["completed"] == SEEDS
    assert summary["resumed"] == len(before)
    assert all((d / name).stat().st_mtime_ns == ns for name, ns in before.items())
    _verify_all(d)
    print(f"\nsoak {via}: {SEEDS} seeds, 1 kill after {at} records, {len(before)} records before the rerun, "
          f"{SEEDS - len(before)} run by the rerun")


LONG_CALLS = {  # the largest generated sizes, where one compiled call ran for minutes before
    "pfsp tabu": ["--instance", "rnd-pfsp-5000x500-1"],  # (an insertion evaluation: a minute)
    "cas": ["--instance", "rnd-qap-1000-1", "--algorithm", "cas"],  # (all ants' local searches: hours)
    "ig": ["--instance", "rnd-pfsp-5000x500-1", "--algorithm", "ig"],  # (NEH, a local search pass: 45 s)
    "weierstrass": ["--instance", "weierstrass-100000", "--param", "terms=200", "--algorithm", "hc"],  # (an hour)
    "pls": ["--instance", "rnd-pfsp-5000x500-1", "--algorithm", "pls", "--param", "objective=three"],  # (9 s a row)
}


@pytest.mark.system
@pytest.mark.parametrize("backend", ["cpu", "cpu-parallel"])
@pytest.mark.parametrize("case", sorted(LONG_CALLS))
def test_ctrl_c_is_answered_within_2_s_in_work_of_minutes(tmp_path, case, backend):
    """Each engine's longest compiled call at the largest generated sizes runs in slices of a
    fraction of a second: Ctrl-C (SIGINT) during it ends the run within 2 s, exit 130, no record
    (pfsp tabu took 25 s or more, ig 45 s, pls 9 s, cas and weierstrass did not answer in 2 minutes)."""
    out = tmp_path / "r.json"
    proc = subprocess.Popen([sys.executable, "-m", "lsbench", "run", *LONG_CALLS[case], "--backend", backend,
                             "--seconds", "600", "--out", str(out)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # (as a shell's Ctrl-C)
    time.sleep(20)  # past the compile and the bind, inside the work
    assert proc.poll() is None
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=120)
    assert time.monotonic() - sent < 2.0 and proc.returncode == 130
    assert err.strip().splitlines()[-1] == "lsbench: interrupted; no record written" and not out.exists()


GPU_LONG_CALLS = {  # the GPU engines at the largest sizes: a chunk (or a first iteration) is a wait in CUDA
    "gpu pfsp tabu": ["--instance", "rnd-pfsp-5000x500-1", "--backend", "gpu"],
    "resident rots": ["--instance", "rnd-qap-1000-1", "--algorithm", "rots", "--backend", "gpu-resident"],
    "resident cas": ["--instance", "rnd-qap-1000-1", "--algorithm", "cas", "--backend", "gpu-resident"],
    "resident hc pla85900": ["--instance", "pla85900", "--algorithm", "hc", "--neighbourhood", "2opt", "--backend",
                             "gpu-resident", "--searches", "132"],
    "resident tabu ppp": ["--instance", "3000-3000", "--algorithm", "tabu", "--neighbourhood", "hamming2",
                          "--backend", "gpu-resident", "--searches", "132"],
}


@pytest.mark.device
@pytest.mark.parametrize("case", sorted(GPU_LONG_CALLS))
def test_ctrl_c_is_answered_within_2_s_by_the_gpu_engines(tmp_path, case):
    """Issue 88 item 3 on a device: Ctrl-C 20 s into each GPU engine's work at the largest sizes
    ends the run within 2 s, exit 130, no record. Each engine must still be running then: one that
    refuses the instance fails here too (an envelope is a defect, issue 86)."""
    out = tmp_path / "r.json"
    proc = subprocess.Popen([sys.executable, "-m", "lsbench", "run", *GPU_LONG_CALLS[case], "--seconds", "600",
                             "--out", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    time.sleep(20)
    if proc.poll() is not None:  # (ended before the Ctrl-C: refused or failed; its last lines say which)
        pytest.fail(f"{case}: ended with exit {proc.returncode} before the Ctrl-C: {proc.communicate()[1][-2000:]}")
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=120)
    assert time.monotonic() - sent < 2.0 and proc.returncode == 130, err[-2000:]
    assert not out.exists()


@pytest.mark.system
@pytest.mark.parametrize("backend", ["cow", "grid"])
def test_ctrl_c_ends_cow_ranks_and_grid_workers_within_2_s(tmp_path, backend):
    """A terminal's Ctrl-C (SIGINT to the whole process group) during rnd-pfsp-5000x500-1 under two
    MPI ranks or two Dask workers ends every process within 2 s (24 s and 10 s before: a rank's
    share was one compiled call, and LocalCluster's close waited for the workers' task)."""
    out = tmp_path / "r.json"
    command = [sys.executable, "-m", "lsbench", "run", "--instance", "rnd-pfsp-5000x500-1", "--backend", backend,
               "--seconds", "600", "--out", str(out)]
    command = [str(Path(sys.executable).parent / "mpiexec"), "-n", "2", *command] if backend == "cow" else \
        command + ["--workers", "2"]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: (signal.signal(signal.SIGINT, signal.SIG_DFL), os.setpgrp()))
    time.sleep(20)
    assert proc.poll() is None
    sent = time.monotonic()
    os.killpg(proc.pid, signal.SIGINT)
    _out, err = proc.communicate(timeout=120)
    assert time.monotonic() - sent < 2.0 and proc.returncode == 130, err[-2000:]
    assert "lsbench: interrupted; no record written" in err and not out.exists()
    left = time.monotonic() + 3  # no rank or worker left in the group (multiprocessing's helpers end last)
    while time.monotonic() < left:
        try:
            os.killpg(proc.pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    with pytest.raises(ProcessLookupError):
        os.killpg(proc.pid, 0)


@pytest.mark.system
@pytest.mark.parametrize("case", ["cas", "ig"])
def test_a_time_budget_ends_inside_the_first_searches_of_the_largest_instances(tmp_path, case):
    """cas on rnd-qap-1000-1 and ig on rnd-pfsp-5000x500-1 with --seconds 5: the budget ends
    NEH or the first local searches where they are (they took hours and minutes); the record
    verifies and says so."""
    out = tmp_path / "r.json"
    started = time.monotonic()
    r = subprocess.run([sys.executable, "-m", "lsbench", "run", *LONG_CALLS[case], "--seconds", "5", "--quiet",
                        "--out", str(out)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    assert time.monotonic() - started < 60
    rec = json.loads(out.read_text())
    # past the budget: cas prices the ants not begun from scratch (1.5-1.8 s alone on a 2-core host,
    # 2.6 s beside another test), which the budget does not reserve; the calls cut here took hours
    assert rec["wall_s"] < 8 and rec["params"]["first_searches_cut"]
    assert subprocess.run([sys.executable, "-m", "lsbench", "verify", str(out)]).returncode == 0


@pytest.mark.system
def test_a_time_budget_shorter_than_one_iteration_ends_near_it():
    """rnd-pfsp-5000x500-1 (an iteration takes about a minute on two cores): --seconds 5 ends the
    run within a minute in all, its record verified with the iterations that finished (it ran
    past 90 s, after minutes of timing and warm-up, before)."""
    import tempfile
    out = Path(tempfile.mkdtemp()) / "r.json"
    started = time.monotonic()
    r = subprocess.run([sys.executable, "-m", "lsbench", "run", "--instance", "rnd-pfsp-5000x500-1", "--seconds", "5",
                        "--quiet", "--out", str(out)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    assert time.monotonic() - started < 60
    rec = json.loads(out.read_text())
    assert rec["wall_s"] < 6 and subprocess.run([sys.executable, "-m", "lsbench", "verify", str(out)]).returncode == 0
