"""Snakemake workflows: every config plans the expected jobs; an interrupted run resumes with
only the missing runs and leaves no corrupt record; the report carries our table and a plot."""
import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest
import yaml

from conftest import ROOT, SHARED
from lsbench.workflow import plan_runs

SNAKEMAKE = [sys.executable, "-m", "snakemake"]
CONFIGS = sorted((ROOT / "workflows" / "config").glob("*.yaml"))


def snakemake(workdir, *args, **kw):
    env = {**os.environ, "LSBENCH_DATA": str(SHARED), "NUMBA_ENABLE_CUDASIM": "0"}
    return subprocess.run([*SNAKEMAKE, "-s", str(ROOT / "Snakefile"), "-d", str(workdir), *args],
                          capture_output=True, text=True, env=env, timeout=900, **kw)


def planned_total(out):
    m = re.search(r"^total\s+(\d+)", out, re.M)
    return int(m.group(1)) if m else 0


@pytest.mark.parametrize("config", CONFIGS, ids=[c.stem for c in CONFIGS])
@pytest.mark.parametrize("scale", ["paper", "quick"])
def test_dry_run_plans_one_job_per_run(tmp_path, config, scale):
    cfg = yaml.safe_load(config.read_text())
    cfg["scale"] = scale
    runs = plan_runs(cfg, gpu_available=False)  # CI has no GPU: GPU runs are left out, not failed
    r = snakemake(tmp_path, "-n", "--configfile", str(config), "--config", f"scale={scale}")
    assert r.returncode == 0, r.stderr[-2000:]
    assert planned_total(r.stdout) == len(runs) + 3  # + aggregate, report, all
    assert len(runs) > 0


def _tiny_config(tmp_path, seeds):
    cfg = {"experiment": "tiny", "title": "tiny",
           "groups": [{"name": "qap", "problem": "qap", "instances": ["rnd-qap-25-1"], "algorithm": "rots",
                       "backends": ["cpu", "gpu"], "seeds": seeds, "iterations": 40000}]}
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def test_interrupted_run_resumes_with_only_the_missing_runs(tmp_path):
    config = _tiny_config(tmp_path, seeds=6)
    env = {**os.environ, "LSBENCH_DATA": str(SHARED), "NUMBA_ENABLE_CUDASIM": "0"}
    proc = subprocess.Popen([*SNAKEMAKE, "-s", str(ROOT / "Snakefile"), "-d", str(tmp_path), "-c1",
                             "--configfile", str(config)], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    runs_dir = tmp_path / "results" / "tiny" / "runs"
    deadline = time.time() + 300
    while time.time() < deadline and len(list(runs_dir.rglob("*.json"))) < 2:
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGINT)  # as a user's Ctrl-C
    proc.wait(timeout=120)
    done = list(runs_dir.rglob("*.json"))
    assert 2 <= len(done) < 6, "the interrupt came too late or too early to test resuming"
    for f in done:  # whatever survived is a complete, valid record
        rec = json.loads(f.read_text())
        assert rec["best_objective"] and rec["iterations"] == 40000
    assert not list(runs_dir.rglob("*.tmp"))
    # Snakemake reruns what it had not marked finished (a job caught between lsbench's rename and
    # Snakemake's bookkeeping counts as incomplete) and nothing else
    dry = snakemake(tmp_path, "-n", "--rerun-incomplete", "--configfile", str(config))
    assert (6 - len(done)) + 3 <= planned_total(dry.stdout) < 6 + 3
    full = snakemake(tmp_path, "-c2", "--rerun-incomplete", "--configfile", str(config))
    assert full.returncode == 0, full.stderr[-2000:]
    html = (tmp_path / "results" / "tiny" / "report.html").read_text()
    assert "rnd-qap-25-1" in html and "data:image/png;base64" in html
    assert "no GPU on this host" in html  # the GPU row says so instead of failing
