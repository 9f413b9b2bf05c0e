"""On a real SLURM: a one-node cluster started by hpc/slurm/local-cluster.sh (Debian's slurm-wlm and
munge, installed by the script where missing). The SLURM profile submits every run as a job and
writes the report; grid workers start as SLURM jobs; cow and multistart run under srun; a job
cancelled by scancel leaves no partial record and a rerun completes only what is missing."""
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from conftest import DATA, ROOT

ENV = {**os.environ, "LSBENCH_DATA": str(DATA), "NUMBA_ENABLE_CUDASIM": "0", "PYTHONUNBUFFERED": "1"}
LSBENCH = [sys.executable, "-m", "lsbench"]
# one test worker runs these and the report's chromium test: either may apt-get install, one at a time
pytestmark = [pytest.mark.system, pytest.mark.xdist_group("apt")]


@pytest.fixture(scope="module")
def slurm():
    r = subprocess.run(["bash", str(ROOT / "hpc" / "slurm" / "local-cluster.sh"), "start"], capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-1500:] + r.stderr[-1500:]
    return r.stdout


def _records(d):
    return sorted(Path(d).rglob("*.json"))


def _verify(paths):
    r = subprocess.run([*LSBENCH, "verify", *map(str, paths)], capture_output=True, text=True, env=ENV, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]


def _trajectory(path):
    rec = json.loads(Path(path).read_text())
    return [(it, obj) for it, _t, obj in rec["trajectory"]], rec["best_solution"]


@pytest.mark.long
def test_the_slurm_profile_submits_every_run_as_a_job_and_writes_the_report(slurm, tmp_path):
    cfg = {"experiment": "slurm-small", "title": "SLURM: one core, all cores, MPI ranks",
           "groups": [{"name": "qap", "problem": "qap", "instances": ["rnd-qap-12-1"], "algorithm": "rots",
                       "backends": ["cpu", "cpu-parallel", {"name": "cow-2", "backend": "cow", "ranks": 2},
                                    {"name": "ms-2", "backend": "cpu", "multistart": {"ranks": 2, "searches": 4}}],
                       "seeds": 1, "iterations": 200}]}
    config = tmp_path / "small.yaml"
    config.write_text(yaml.safe_dump(cfg))
    r = subprocess.run([sys.executable, "-m", "snakemake", "-s", str(ROOT / "Snakefile"), "-d", str(tmp_path),
                        "--profile", str(ROOT / "workflows" / "profiles" / "slurm"), "--configfile", str(config),
                        "--slurm-status-command", "squeue", "--slurm-init-seconds-before-status-checks", "1",
                        "--seconds-between-status-checks", "2",
                        "--slurm-keep-successful-logs", "--config", "shared_cores=true", "mpi_launcher=srun",
                        "grid_params={scheduler: slurm, slurm_host: 127.0.0.1}"],
                       capture_output=True, text=True, env=ENV, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    runs = _records(tmp_path / "results" / "slurm-small" / "runs")
    runs = [p for p in runs if not p.parent.name.endswith("-searches")]  # a multistart's own search records
    assert len(runs) == 4
    _verify(runs)
    job_logs = list((tmp_path / ".snakemake" / "slurm_logs" / "rule_run_search").rglob("*.log"))
    assert len(job_logs) == 4  # every run was a SLURM job
    # a multistart is one MPI job of 2 ranks under srun, its record the best search's
    ms = json.loads((tmp_path / "results" / "slurm-small" / "runs" / "qap" / "rnd-qap-12-1" / "ms-2-s1.json")
                    .read_text())
    assert ms["multistart"]["via"] == "mpi" and ms["multistart"]["workers"] == 2
    assert ms["multistart"]["seeds"] == [1, 2, 3, 4] and ms["multistart"]["completed"] == 4
    assert (tmp_path / "results" / "slurm-small" / "report.html").exists()
    cow = json.loads((tmp_path / "results" / "slurm-small" / "runs" / "qap" / "rnd-qap-12-1" / "cow-2-s1.json")
                     .read_text())
    assert cow["backend_info"]["ranks"] == 2
    assert _trajectory(runs[0].parent / "cow-2-s1.json") == _trajectory(runs[0].parent / "cpu-s1.json")


def test_grid_workers_start_as_slurm_jobs_and_give_the_cpu_trajectory(slurm, tmp_path):
    common = ["run", "--instance", "tai12a", "--algorithm", "tabu", "--iterations", "60", "--quiet"]
    r = subprocess.run([*LSBENCH, *common, "--backend", "grid", "--scheduler", "slurm", "--workers", "2",
                        "--threads", "1", "--param", "slurm_host=127.0.0.1", "--param", "slurm_partition=compute",
                        "--out", str(tmp_path / "grid.json")], capture_output=True, text=True, env=ENV, timeout=600,
                       cwd=tmp_path)  # sbatch writes the workers' slurm-JOBID.out logs where it is called
    assert r.returncode == 0, r.stderr[-2000:]
    c = subprocess.run([*LSBENCH, *common, "--out", str(tmp_path / "cpu.json")], capture_output=True, text=True,
                       env=ENV, timeout=300)
    assert c.returncode == 0, c.stderr
    grid = json.loads((tmp_path / "grid.json").read_text())
    assert grid["backend_info"]["workers"] == 2 and grid["backend_info"]["scheduler"] == "slurm"
    assert _trajectory(tmp_path / "grid.json") == _trajectory(tmp_path / "cpu.json")


def test_cow_and_multistart_run_under_srun(slurm, tmp_path):
    r = subprocess.run(["srun", "-n", "2", *LSBENCH, "run", "--instance", "tai12a", "--algorithm", "tabu",
                        "--iterations", "60", "--backend", "cow", "--quiet", "--out", str(tmp_path / "cow.json")],
                       capture_output=True, text=True, env=ENV, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    assert json.loads((tmp_path / "cow.json").read_text())["backend_info"]["ranks"] == 2
    m = subprocess.run(["srun", "-n", "2", *LSBENCH, "multistart", "--searches", "4", "--instance", "tai12a",
                        "--algorithm", "rots", "--iterations", "100", "--out-dir", str(tmp_path / "ms")],
                       capture_output=True, text=True, env=ENV, timeout=600)
    assert m.returncode == 0, m.stderr[-2000:]
    summary = json.loads((tmp_path / "ms" / "summary.json").read_text())
    assert summary["via"] == "mpi" and summary["completed"] == 4
    assert {p["rank"] for p in summary["placements"].values()} == {0, 1}
    _verify(sorted((tmp_path / "ms").glob("seed-*.json")))


def test_scancel_leaves_nothing_partial_and_a_rerun_completes_only_the_missing(slurm, tmp_path):
    out = tmp_path / "ms"
    cmd = " ".join([*LSBENCH, "multistart", "--searches", "60", "--instance", "tai25a", "--algorithm", "rots",
                    "--iterations", "20000", "--via", "local", "--out-dir", str(out)])
    sub = subprocess.run(["sbatch", "--parsable", "-n", "1", "-o", str(tmp_path / "job.log"), "--wrap", cmd],
                         capture_output=True, text=True, env=ENV, timeout=60)
    assert sub.returncode == 0, sub.stderr
    job = sub.stdout.strip().split(";")[0]
    deadline = time.time() + 300
    while time.time() < deadline and len(list(out.glob("seed-*.json"))) < 3:
        time.sleep(0.2)
    subprocess.run(["scancel", job], check=True, timeout=60)
    while time.time() < deadline and subprocess.run(["squeue", "-h", "-j", job], capture_output=True,
                                                    text=True).stdout.strip():
        time.sleep(0.5)
    # a job gone from squeue may still hold its node ("completing"): srun there failed to launch
    while time.time() < deadline and set(subprocess.run(["sinfo", "-h", "-o", "%T"], capture_output=True,
                                                        text=True).stdout.split()) != {"idle"}:
        time.sleep(0.5)
    before = {p.name: p.stat().st_mtime_ns for p in out.glob("seed-*.json")}
    assert 3 <= len(before) < 60
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]  # nothing partial
    _verify(sorted(out.glob("seed-*.json")))
    rerun = subprocess.run(["srun", "-n", "1", *cmd.split()], capture_output=True, text=True, env=ENV, timeout=900)
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["completed"] == 60 and summary["resumed"] == len(before) and not summary["failed"]
    assert all((out / name).stat().st_mtime_ns == ns for name, ns in before.items())
