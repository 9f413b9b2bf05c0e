"""Expansion of an experiment config into one run record per (group, instance, backend, seed)."""
import sys
from pathlib import Path

from lsbench.errors import LsbenchError
from lsbench.registry import GPU_BACKENDS
from lsbench.workflow import gpu_status, mpi_launcher, mpi_tasks, plan_runs, run_command
from lsbench.workflow_config import command_line_booleans

if "experiment" not in config and "groups" not in config:  # no --configfile: the main job (--config may adjust it)
    import yaml
    default = yaml.safe_load((Path(workflow.basedir) / "workflows" / "config" / "default.yaml").read_text())
    config.update({**default, **config})
config.update(command_line_booleans(config))  # shared_cores=true on the command line
GPU = gpu_status()
try:  # the config is checked and every run's RunSpec built (and checked) here, before any job starts
    RUNS = plan_runs(config, gpu_available=GPU["available"], root=Path(workflow.basedir))
except LsbenchError as e:  # the CLI's error line, then out
    print(f"lsbench: error: {e}", file=sys.stderr)
    sys.exit(2)
EXPERIMENT = config["experiment"]
RUN_PATHS = {r["path"]: r for r in RUNS}
MPIEXEC = mpi_launcher()  # profiles may override (config mpi_launcher)


def instance_files(run):
    """Downloaded instance files a run needs (manifest entries that are not generated)."""
    from lsbench import instances as registry
    entry = registry.manifest().get(str(run["instance"]))
    if entry is None or entry.generated:
        return []
    return [str(registry.local_path(entry))]


def run_of(w):
    """The planned run behind a run_search job's wildcards."""
    return RUN_PATHS[f"results/{w.experiment}/runs/{w.group}/{w.instance}/{w.backend}-s{w.seed}.json"]


def report_module():
    """workflows/scripts/report.py, loaded by path (Snakemake keeps `module` and `report` as keywords)."""
    import importlib.util
    path = Path(workflow.basedir) / "workflows" / "scripts" / "report.py"
    spec = importlib.util.spec_from_file_location("lsbench_report", path)
    loaded = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loaded)
    return loaded


def job_threads(run, cores):
    """Cores a run's job holds. On a workstation every timed run holds them all (a one-core run
    beside another job measured that job too); with shared_cores (the SLURM profile: each job has
    its own allocation) one-core runs ask for one, and a cow job's cores are per MPI task."""
    if not config.get("shared_cores"):
        return cores
    if mpi_tasks(run):
        return max(1, cores // mpi_tasks(run))
    return cores if run["backend"] in ("cpu-parallel", "grid") else 1
