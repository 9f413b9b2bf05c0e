"""Expansion of an experiment config into one run record per (group, instance, backend, seed)."""
import sys
from pathlib import Path

from lsbench.workflow import gpu_status, plan_runs, run_command

EXPERIMENT = config["experiment"]
GPU = gpu_status()
RUNS = plan_runs(config, gpu_available=GPU["available"])
RUN_PATHS = {r["path"]: r for r in RUNS}
