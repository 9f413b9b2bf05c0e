"""Run an experiment's planned runs in one process, without Snakemake (for hosts that lack it,
e.g. a lent GPU machine); records land where the Snakefile expects them, so a later `snakemake`
there or elsewhere only aggregates and reports.

    python workflows/scripts/run_plan.py workflows/config/luong_qap.yaml [--seeds 5] [--scale quick]
        [--budget-s 1500] [--runs-dir DIR]

A cow or multistart row runs as its own process, as the Snakefile starts it (under `--mpi-launcher
-n RANKS` where it has ranks; default: the mpiexec beside this Python, else on PATH).

Runs go seed by seed: every (group, instance, backend) cell's first seed, then every cell's
second, and so on, the backends of an instance side by side. With `--budget-s`, no run starts
once that many seconds have passed (a run is never cut short): every cell then has the same
number of seeds, give or take one, and the report says how many each had.
"""
import argparse
import contextlib
import dataclasses
import json
import shutil
import signal
import subprocess
import sys
import threading
import time
import traceback
from collections import defaultdict
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from lsbench.errors import LsbenchError  # noqa: E402
from lsbench.runner import run  # noqa: E402
from lsbench.processes import Stopped, raise_stopped, run_to_end  # noqa: E402
from lsbench.workflow import gpu_status, mpi_launcher, mpi_tasks, plan_runs, run_command, searches_dir  # noqa: E402

RUN_TIMEOUT_S = 7200  # a run started as its own process (MPI, multistart) that takes longer has hung


SIGTERM_SEEN = threading.Event()  # set by the handler too: the stop is known even where it was wrapped


def stop_plan_on_sigterm():
    """From now on SIGTERM stops the plan at once, between two runs' records (run_all)."""
    def stop(signum, frame):
        SIGTERM_SEEN.set()
        raise_stopped(signum, frame)
    signal.signal(signal.SIGTERM, stop)


@contextlib.contextmanager
def saving_despite_sigterm():
    """SIGTERM while the runs done are being saved is noted, not raised: cutting the archive would lose
    them all (the caller's `timeout -k` still ends a save that hangs)."""
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: SIGTERM_SEEN.set())
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def seed_major(runs):
    """The runs in rounds: round r holds each cell's r-th seed, in the plan's order of cells."""
    rounds = {}
    for r in runs:
        cell = (r["name"], str(r["instance"]), r["label"])
        rounds[cell] = rounds.get(cell, 0) + 1
        r["round"] = rounds[cell]
    return sorted(runs, key=lambda r: r["round"])  # (stable: the plan's order within a round)


def check_kept_records(runs, runs_dir):
    """A record already at a run's path counts as done only if the plan would run it now: a record
    of another config (another sample, iterations or parameters) is refused, never mixed in."""
    for r in runs:
        path = Path(runs_dir) / r["path"]
        difference = replanned_field(r, path)
        if difference is not None:
            field, had, want = difference
            raise LsbenchError(f"{path}: a record of another plan ({field} {had!r}, the config asks {want!r}); "
                               "remove it, run again with --drop-replanned, or start afresh (regenerate_reports.py "
                               "without --continue)")


def drop_replanned(runs, runs_dir):
    """Removes the records at the runs' paths that another config made (replanned_field), and a
    multistart's searches folder with its record (else the multistart would resume from the earlier
    plan's searches, running none), so that the plan runs them again; {path: {file: bytes}} of
    what went, for restore_unreplaced."""
    dropped = {}
    for r in runs:
        path = Path(runs_dir) / r["path"]
        if replanned_field(r, path) is not None:
            searches = Path(searches_dir(path)) if r["multistart"] else None
            files = [path] + (sorted(searches.rglob("*")) if searches and searches.is_dir() else [])
            dropped[r["path"]] = {str(f.relative_to(runs_dir)): f.read_bytes() for f in files if f.is_file()}
            path.unlink()
            if searches and searches.is_dir():
                shutil.rmtree(searches)
    return dropped


def restore_unreplaced(dropped, runs_dir):
    """Puts back the dropped records (drop_replanned), with their searches, whose runs did not run
    again (the budget ended first): a report keeps the earlier plan's record until the new one
    exists. Their count."""
    back = 0
    for relative, files in dropped.items():
        if (Path(runs_dir) / relative).exists():
            continue
        searches = Path(searches_dir(Path(runs_dir) / relative))
        if len(files) > 1 and searches.is_dir():  # a run cut short left some new searches: not mixed in
            shutil.rmtree(searches)
        for name, data in files.items():
            (Path(runs_dir) / name).parent.mkdir(parents=True, exist_ok=True)
            (Path(runs_dir) / name).write_bytes(data)
        back += 1
    return back


def replanned_field(r, path):
    """(field, the record's value, the plan's) of the first field of run r's spec or multistart
    entry that the record at path holds otherwise; None where the record is of this plan, or there
    is none."""
    return spec_difference(r, recorded_plan(path)) if path.exists() else None


def spec_difference(r, had):
    """(field, had's value, the plan's) of the first field of run r's spec, or of its multistart
    entry, that `had` (plan_of a record) holds otherwise; None where there is none."""
    want = as_recorded(r["spec"].as_record())
    skip = {"seed", "searches"} if r["multistart"] else set()  # (a multistart's record is its best search's)
    spec = had["run_spec"]
    field = next((k for k in want if k not in skip and spec.get(k) != want[k]), None)
    if field is not None:
        return field, spec.get(field), want[field]
    if r["multistart"]:
        ran = multistart_as_run(had, r["multistart"])
        return next(((f"multistart {k}", v, r["multistart"][k]) for k, v in ran.items() if v != r["multistart"][k]),
                    None)
    return None


def multistart_as_run(had, m):
    """The multistart entry's fields as the record ran them (a searches_per_gpu the entry leaves
    to the engine is not compared: the GPU chose it)."""
    ran = had.get("multistart") or {}
    island = (ran.get("islands") or [{}])[0]
    out = {"ranks": ran.get("workers"), "searches": ran.get("searches"), "exchange_every": ran.get("exchange_every", 0)}
    if m["exchange_every"]:
        out.update(migrants=island.get("migrants"), migrant_start=island.get("migrant_start"))
    if m["searches_per_gpu"]:  # the searches one run held (the multistart's batches are all full)
        out["searches_per_gpu"] = (had.get("batch") or {}).get("searches")
    return out


def recorded_plan(path):
    """plan_of the record at path; one error line where the file is no run record."""
    try:
        return plan_of(json.loads(path.read_text()))
    except (OSError, ValueError, AttributeError) as e:
        raise LsbenchError(f"{path}: not a run record ({e}); remove it to run it again") from None


def plan_of(record):
    """What a record says of the plan that made it: its run_spec, and a multistart's own fields."""
    return {"run_spec": record.get("run_spec") or {}, "multistart": record.get("multistart"),
            "batch": record.get("batch")}


def run_one(r, path, launcher):
    """One planned run to its record at path; the record, or LsbenchError."""
    if not (r["multistart"] or r["backend"] == "cow"):
        return run(dataclasses.replace(r["spec"], out=str(path)))
    command = run_command(r, sys.executable, str(path))
    if mpi_tasks(r):
        command = f"{launcher} -n {mpi_tasks(r)} {command}"
    try:
        p = run_to_end(command, shell=True, timeout=RUN_TIMEOUT_S)  # (a stop ends the launcher and its ranks)
    except subprocess.TimeoutExpired:
        raise LsbenchError(f"no record after {RUN_TIMEOUT_S} s: {command}") from None
    if p.returncode != 0 or not path.exists():
        last = (p.stderr.strip().splitlines() or [f"exit {p.returncode}"])[-1]
        raise LsbenchError(f"{last} ({command})")
    return json.loads(path.read_text())


def planned_runs(config, scale="paper", seeds=None, gpu_rows=None):
    """The plan's runs, in the order run_all runs them (`seeds` overrides every group's), the GPU
    rows where this host has a GPU (or as `gpu_rows` says)."""
    cfg = {**config, "scale": scale}
    if seeds:
        cfg["groups"] = [{**g, "seeds": seeds} for g in cfg["groups"]]
    return seed_major(plan_runs(cfg, gpu_available=gpu_status()["available"] if gpu_rows is None else gpu_rows,
                                root=Path(__file__).resolve().parents[2]))


def as_recorded(run_spec):
    """A run's spec as its record holds it (JSON: tuples become lists)."""
    return json.loads(json.dumps(run_spec))


def run_key(run_spec, with_seed=True):
    """A run's spec as its record holds it, as one string: equal keys, the same run; without the
    seed, runs that take about the same time."""
    spec = as_recorded(run_spec)
    if not with_seed:
        spec.pop("seed", None)
    return json.dumps(spec, sort_keys=True)


def take_same_runs(runs, runs_dir, sources):
    """Copy into runs_dir the records of planned runs it lacks that another report's records hold:
    the same run spec, seed included (EvoCOP Table 5 profiles Tables 3 and 4's runs). `sources`:
    {report name: its runs folder}. Returns {report name: records taken}."""
    held = {}
    for name, folder in sources.items():
        for path in sorted(Path(folder).glob("*/*/*.json")):
            held.setdefault(run_key(json.loads(path.read_text())["run_spec"]), (name, path))
    taken = defaultdict(int)
    for r in runs:
        path = Path(runs_dir) / r["path"]
        source = None if path.exists() or r["multistart"] else held.get(run_key(r["spec"].as_record()))
        if source:
            path.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source[1], path)
            taken[source[0]] += 1
    return dict(taken)


def run_all(config, scale="paper", seeds=None, budget_s=None, runs_dir=".", launcher=None):
    """Run the plan (records under runs_dir/results/...); returns (runs done or found, failed, left)."""
    runs = planned_runs(config, scale, seeds)
    check_kept_records(runs, runs_dir)
    t0 = time.time()
    done = failed = 0
    for k, r in enumerate(runs, 1):
        path = Path(runs_dir) / r["path"]
        if path.exists():
            done += 1
            continue
        if SIGTERM_SEEN.is_set() or (budget_s is not None and time.time() - t0 >= budget_s):
            return done, failed, len(runs) - k + 1
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            rec = run_one(r, path, launcher or mpi_launcher())
        except LsbenchError as e:
            print(f"{r['path']}: lsbench: error: {e}", flush=True)
            failed += 1
            continue
        except (Exception, Stopped) as e:
            if isinstance(e, Stopped) or SIGTERM_SEEN.is_set():  # (a Numba dispatcher may wrap it in SystemError)
                print(f"{r['path']}: stopped by SIGTERM before its record; the plan ends here", flush=True)
                return done, failed, len(runs) - k + 1
            traceback.print_exc()  # a bug in one run: said, with its traceback, and the plan goes on
            print(f"{r['path']}: internal error: {type(e).__name__}: {e}", flush=True)
            failed += 1
            continue
        done += 1
        print(f"[{k}/{len(runs)} {time.time() - t0:6.0f}s] {r['path']}: best {rec['best_objective']} "
              f"in {rec['wall_s']:.2f}s", flush=True)
    return done, failed, 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("config")
    ap.add_argument("--seeds", type=int, help="override every group's number of seeds")
    ap.add_argument("--scale", default="paper", choices=["paper", "quick"])
    ap.add_argument("--budget-s", type=float, help="start no run after this many seconds")
    ap.add_argument("--runs-dir", default=".", help="where results/EXPERIMENT/runs/... go (default: here)")
    ap.add_argument("--mpi-launcher", help="MPI rows start as LAUNCHER -n RANKS ... (e.g. 'mpirun --allow-run-as-root')")
    args = ap.parse_args()
    try:
        config = yaml.safe_load(open(args.config))
    except (OSError, yaml.YAMLError) as e:
        print(f"lsbench: error: {args.config}: {str(e).splitlines()[0]}", file=sys.stderr)
        return 2
    stop_plan_on_sigterm()
    try:
        done, failed, left = run_all(config, args.scale, args.seeds, args.budget_s, args.runs_dir, args.mpi_launcher)
    except LsbenchError as e:
        print(f"lsbench: error: {e}", file=sys.stderr)
        return 2
    if left:
        print(f"{done} runs done, {left} not started", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
