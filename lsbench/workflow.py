"""Helpers for the Snakemake workflows: plan runs from a config and aggregate their records (the
report itself is rendered in the workflow layer: workflows/scripts/report.py)."""
import json
import math
import shlex
import sys
from pathlib import Path

from .errors import LsbenchError
from .registry import GPU_BACKENDS
from .workflow_config import check_config, check_files

DEFAULT_COW_RANKS = 4


def backend_entry(b):
    """A backend of a group: 'cpu' or {name: gpu-device, backend: gpu, params: {reduce: device}};
    a cow entry may give `ranks` (MPI tasks, default 4), an entry of an engine that runs several
    searches at once `searches` (K a run, default 1), and any entry `sample` (sample_budget: its runs
    stop after part of the group's iterations; the report extrapolates their time per iteration to
    the group's iterations and says so, for a side whose full runs would take hours) or `seeds: N`
    (it runs the group's first N seeds only: a row for scale beside rows of many runs)."""
    if isinstance(b, str):
        b = {"name": b, "backend": b}
    ranks, searches, seeds = b.get("ranks", DEFAULT_COW_RANKS), b.get("searches", 1), b.get("seeds")
    sample = sample_budget(b["name"], b.get("sample"))  # (types and ranges: the config's schema, checked first)
    entry = {"name": b["name"], "backend": b["backend"], "params": dict(b.get("params") or {}), "ranks": ranks,
             "searches": searches, "multistart": None, "sample": sample, "seeds": seeds}
    if b.get("multistart") is not None:
        entry["multistart"] = multistart_entry(b["name"], b["multistart"], searches)
        entry["ranks"] = entry["multistart"]["ranks"]
    return entry


def multistart_entry(name, m, searches):
    """`multistart: {ranks: G, searches: K, exchange_every: E, migrants: M, searches_per_gpu: B}`: the
    run is `lsbench multistart` of K searches over G MPI ranks as one job (mpiexec here, srun on
    SLURM: one rank per GPU on GPU backends), its record the best search's with the aggregate rate.
    B: the searches one run of a rank holds (independent searches only; K a multiple of G x B), so
    that a run stopped by seconds is one run of B searches, not batches one after another (without
    B, an engine of several searches takes one per multiprocessor, islands each rank's whole share)."""
    if not isinstance(m, dict):
        raise LsbenchError(f"workflow config: backend {name}: multistart must be a mapping, got {m!r}")
    unknown = set(m) - {"ranks", "searches", "exchange_every", "migrants", "migrant_start", "searches_per_gpu"}
    if unknown:
        raise LsbenchError(f"workflow config: backend {name}: multistart: unknown field(s) {', '.join(sorted(unknown))}")
    if searches != 1:
        raise LsbenchError(f"workflow config: backend {name}: give a multistart's searches under multistart")
    out = {"ranks": m.get("ranks", 1), "searches": m.get("searches"), "exchange_every": m.get("exchange_every", 0),
           "migrants": m.get("migrants", 4), "migrant_start": m.get("migrant_start", "copy"),
           "searches_per_gpu": m.get("searches_per_gpu")}
    if out["migrant_start"] not in ("copy", "cross"):
        raise LsbenchError(f"workflow config: backend {name}: multistart migrant_start must be copy or cross, "
                           f"got {out['migrant_start']!r}")
    for key, low in (("ranks", 1), ("searches", out["ranks"]), ("exchange_every", 0), ("migrants", 1)):
        v = out[key]
        if not isinstance(v, int) or isinstance(v, bool) or v < low:
            raise LsbenchError(f"workflow config: backend {name}: multistart {key} must be an integer of at least "
                               f"{low}, got {v!r}")
    per_gpu = out["searches_per_gpu"]
    if per_gpu is not None:
        if not isinstance(per_gpu, int) or isinstance(per_gpu, bool) or per_gpu < 1 \
                or out["searches"] % (out["ranks"] * per_gpu):
            raise LsbenchError(f"workflow config: backend {name}: multistart searches_per_gpu must divide searches "
                               f"/ ranks ({out['searches']} / {out['ranks']}), got {per_gpu!r}")
        if out["exchange_every"]:
            raise LsbenchError(f"workflow config: backend {name}: multistart searches_per_gpu is for independent "
                               "searches (live islands hold each rank's whole share at once)")
    return out


def mpi_launcher():
    """The MPI launcher beside this Python (the mpich wheel's), else the one on PATH."""
    beside = Path(sys.executable).parent / "mpiexec"
    return str(beside) if beside.exists() else "mpiexec"


def mpi_tasks(run):
    """MPI ranks a planned run's job starts (cow ranks, multistart ranks), 0 for a plain process."""
    if run["backend"] == "cow":
        return run["ranks"]
    m = run.get("multistart")
    return m["ranks"] if m and m["ranks"] > 1 else 0


def expand_group(g, scale):
    """The group at the requested scale ('paper' as configured, 'quick' with its overrides), with
    `replicas: R` turning each 'NAME-1' generated instance into NAME-1 .. NAME-R."""
    g = {**g, **(g.get("quick") or {})} if scale == "quick" else dict(g)
    reps = int(g.get("replicas", 1))
    if reps > 1:
        g["instances"] = [f"{i[:-2]}-{r}" if str(i).endswith("-1") else i
                          for i in g["instances"] for r in range(1, reps + 1)]
    return g


def gpu_status():
    """Whether this host has a usable CUDA GPU, and which."""
    try:
        from numba import cuda
        if cuda.is_available():
            dev = cuda.get_current_device()
            name = dev.name.decode() if isinstance(dev.name, bytes) else str(dev.name)
            return {"available": True, "name": name}
        return {"available": False, "name": "no GPU on this host"}
    except Exception as e:  # driver or toolkit missing
        return {"available": False, "name": f"no GPU on this host ({str(e).splitlines()[0][:80]})"}


PUBLISHED_KEYS = {"file", "table", "caption", "compare", "profile"}
COMPARE_KEYS = {"match", "cpu_s", "gpu_s", "speedup", "hardware", "variant", "front", "base", "columns", "long"}
PROFILE_KEYS = {"backend", "where", "evaluation", "archiving", "rest"}


def check_published(g):
    """A group's `published` entry (the paper's table the report puts beside ours): known fields
    only, and the backends it names among the group's, so that a typo fails the plan, not the report."""
    published = g.get("published")
    if published is None:
        return
    where = f"workflow config group {g['name']}: published"
    if not isinstance(published, dict) or "file" not in published:
        raise LsbenchError(f"{where} must be a mapping with a 'file', got {published!r}")
    names = [backend_entry(b)["name"] for b in g["backends"]]
    for field, known, required in (("", PUBLISHED_KEYS, ()), ("compare", COMPARE_KEYS, ()),
                                   ("profile", PROFILE_KEYS, ("backend", "evaluation", "archiving", "rest"))):
        entry = published.get(field) if field else published
        if entry is None:
            continue
        label = f"{where}.{field}" if field else where
        if not isinstance(entry, dict):
            raise LsbenchError(f"{label} must be a mapping, got {entry!r}")
        unknown, missing = set(entry) - known, [k for k in required if k not in entry]
        if unknown or missing:
            raise LsbenchError(f"{label}: " + "; ".join(
                ([f"unknown field(s) {', '.join(sorted(unknown))}"] if unknown else []) +
                ([f"missing field(s) {', '.join(missing)}"] if missing else [])))
    for field, backend in (("compare.base", (published.get("compare") or {}).get("base")),
                           ("profile.backend", (published.get("profile") or {}).get("backend"))):
        if backend is not None and backend not in names:
            raise LsbenchError(f"{where}.{field} {backend!r} names none of its backends")


def plan_runs(config, gpu_available, root=None):
    """One dict per run record the experiment needs; GPU runs only where a GPU exists. The config
    is checked first (lsbench/workflow_config.py), and with the workflow's folder `root` the files
    it names."""
    check_config(config)
    if root is not None:
        check_files(config, Path(root))
    exp = config["experiment"]
    runs, planned = [], 0
    scale = config.get("scale", "paper")
    for g in config["groups"]:
        g = expand_group(g, scale)
        check_published(g)
        seeds = _seeds(g)
        for inst in g["instances"]:
            for b in map(backend_entry, g["backends"]):
                # K searches a run take seeds s .. s + K - 1: the runs' seeds are K apart, no two runs share one
                spacing = b["multistart"]["searches"] if b["multistart"] else b["searches"]
                seed_list = [1 + i * spacing for i in range(seeds)] if isinstance(seeds, int) else list(seeds)
                seed_list = seed_list[:b["seeds"]]  # (None: all)
                for s in seed_list:
                    planned += 1
                    params = {**(config.get("grid_params") or {}), **b["params"]} if b["backend"] == "grid" \
                        else b["params"]  # grid_params: where grid runs find Dask (the SLURM profile)
                    path = f"results/{exp}/runs/{g['name']}/{inst}/{b['name']}-s{s}.json"
                    # every row is built and checked, GPU rows on a host without a GPU too; those are not run
                    spec = group_spec(sampled_group(g, b), inst, b["backend"], s, {**(g.get("params") or {}), **params},
                                      path, b["searches"])
                    if b["backend"] in GPU_BACKENDS and not gpu_available:
                        continue
                    runs.append({**g, "instance": inst, "backend": b["backend"], "label": b["name"], "spec": spec,
                                 "ranks": b["ranks"], "seed": s, "path": path, "multistart": b["multistart"]})
    if not planned:
        raise LsbenchError("workflow config: it plans no runs (give groups, each with instances, backends and seeds)")
    return runs


def sample_budget(name, sample):
    """A backend entry's `sample`: N (its runs stop after N of the group's iterations) or "Ss" (after
    S seconds, or at the group's iterations if sooner: a sample long enough to time on every
    instance, and a full run where one takes less). {"iterations": N} or {"seconds": S}; None."""
    if sample is None:
        return None
    if isinstance(sample, int) and not isinstance(sample, bool) and sample >= 1:
        return {"iterations": sample}
    if isinstance(sample, str) and sample.endswith("s"):
        try:
            seconds = float(sample[:-1])
        except ValueError:
            seconds = 0.0
        if math.isfinite(seconds) and seconds > 0:
            return {"seconds": seconds}
    raise LsbenchError(f"workflow config: backend {name}: sample must be a positive number of iterations or of "
                       f"seconds ('5s'), got {sample!r}")


def sampled_group(group, entry):
    """The group as a backend entry with `sample` runs it: at most N of the group's iterations, or
    the group's iterations within S seconds (a group that stops by iterations alone; at a scale of N
    iterations or fewer, full runs)."""
    sample = entry.get("sample")
    if sample is None:
        return group
    if group.get("iterations") is None or any(group.get(k) is not None for k in ("evaluations", "seconds", "target")):
        raise LsbenchError(f"workflow config group {group['name']}: backend {entry['name']}: sample needs a group that "
                           "stops by iterations alone")
    if "seconds" in sample:
        return {**group, "seconds": sample["seconds"]}
    return {**group, "iterations": min(sample["iterations"], group["iterations"])}


def _seeds(group):
    """A group's seeds: a count of at least 1 (seeds 1, 1 + K, ...) or a non-empty list of seeds
    (the config's schema checked them)."""
    return group.get("seeds", 1)


def group_spec(group, instance, backend, seed, params, out, searches=1):
    """The RunSpec of one run of a config group: the CLI's builder, so a bad value gets the CLI's
    error line (with where it was written)."""
    from .spec import build_spec
    try:
        return build_spec(str(instance), group["problem"], group["algorithm"], backend, group.get("neighbourhood"),
                          seed, group.get("iterations"), group.get("evaluations"), group.get("seconds"),
                          group.get("target"), params, searches=searches, out=out)
    except LsbenchError as e:
        raise LsbenchError(f"{e} (workflow config group {group['name']}, backend {backend})") from None


def searches_dir(out):
    """The folder of a multistart run's own search records and summary.json, beside its record."""
    return str(Path(out).with_suffix("")) + "-searches"


def run_command(run, python, out):
    """The `lsbench run` (or `lsbench multistart`) command line of a planned run (Snakemake's job)."""
    m = run.get("multistart")
    if not m:
        args = [python, "-m", "lsbench", "run", *run["spec"].command_line(), "--out", out]
    else:  # the searches' own records and summary.json beside the run's record
        args = [python, "-m", "lsbench", "multistart", *run["spec"].command_line(), "--searches", m["searches"],
                "--out-dir", searches_dir(out), "--out", out]
        if m["searches_per_gpu"]:
            args += ["--searches-per-gpu", m["searches_per_gpu"]]
        if m["exchange_every"]:
            args += ["--exchange-every", m["exchange_every"], "--migrants", m["migrants"]]
            if m["migrant_start"] != "copy":
                args += ["--migrant-start", m["migrant_start"]]
    return " ".join(shlex.quote(str(c)) for c in args)


def stopped_by_time(rec):
    """Whether the run's time limit ended it: it had one, and reached neither its target nor its
    iterations or evaluations (its time is then the limit's, not the time its work took)."""
    stop = rec["params"].get("stop", {})
    if stop.get("seconds") is None:
        return False
    reached = [stop.get("target") is not None and rec["best_objective"] <= stop["target"],
               stop.get("iterations") is not None and rec["iterations"] >= stop["iterations"],
               stop.get("evaluations") is not None and rec["evaluations"] >= stop["evaluations"]]
    return not any(reached)


def run_trajectory(rec, path):
    """A multistart's best over all its searches as JSON [[seconds, objective], ...] from its first
    timed start (hpc/multistart.py), read from its searches' records beside it; None for one
    search's run, or where those records are not there (its record's trajectory is its best search's)."""
    if "multistart" not in rec:
        return None
    from .hpc.multistart import best_over_searches
    searches = sorted(Path(searches_dir(path)).glob("seed-*.json"))
    progress = best_over_searches([json.loads(s.read_text()) for s in searches]) if searches else None
    return None if progress is None else json.dumps(progress)


def aggregate_records(paths, out, root=None):
    """Flatten run records into one Parquet table (one row per run), written atomically: everything
    a report needs, so that it can be rebuilt from the table alone. `record`: each record's path,
    relative to `root` where given (a temporary folder's name would change the table every time)."""
    import pandas as pd
    rows = []
    for p in paths:
        rec = json.loads(Path(p).read_text())
        info = rec.get("backend_info", {})
        versions = rec.get("versions", {})
        rows.append({
            "group": Path(p).parent.parent.name, "problem": rec["problem"], "instance": rec["instance"],
            "algorithm": rec["algorithm"], "neighbourhood": rec.get("neighbourhood"),
            "neighbourhood_size": rec.get("neighbourhood_size"), "backend": Path(p).stem.rsplit("-s", 1)[0],
            # a multistart's record is its best search's: the run's seed is its first search's, the plan's
            "backend_kind": rec["backend"], "seed": rec.get("multistart", {}).get("seeds", [rec["seed"]])[0],
            "iterations": rec["iterations"], "stopped_by_time": stopped_by_time(rec),
            "evaluations": rec["evaluations"], "wall_s": rec["wall_s"], "warmup_s": rec.get("warmup_s"),
            "iterations_per_s": rec.get("iterations_per_s"),
            # several searches a run (K resident searches, a multistart): every search's iterations per second
            "aggregate_iterations_per_s": rec.get("aggregate_iterations_per_s"),
            "best_objective": float(rec["best_objective"]),
            "bks": None if rec["bks"] is None else float(rec["bks"]), "gap_percent": rec["gap_percent"],
            "trajectory": json.dumps(rec["trajectory"]), "run_trajectory": run_trajectory(rec, p),
            "solution_size": len(rec["best_solution"]),
            "threads": info.get("threads"),
            "serial_note": info.get("serial"), "device": info.get("device"), "host": rec["host"]["hostname"],
            "cpu_model": rec["host"].get("processor"), "cpu_count": rec["host"].get("cpu_count"),
            "lsbench_commit": versions.get("lsbench_commit"), "versions": json.dumps(versions),
            "backend_info": json.dumps(info), "record": str(Path(p).relative_to(root) if root else p),
            # Pareto searches: the front's objective vectors, the archive size over iterations, the time split
            "front": json.dumps([q["objectives"] for q in rec["front"]]) if "front" in rec else None,
            "archive_sizes": json.dumps(rec["archive_sizes"]) if "archive_sizes" in rec else None,
            "pareto_time_split": json.dumps(rec["pareto_time_split"]) if "pareto_time_split" in rec else None,
            "accept": rec["params"].get("accept"), "restarts_done": rec["params"].get("restarts_done"),
        })
    df = pd.DataFrame(rows)
    tmp = Path(out).with_suffix(".tmp.parquet")
    df.to_parquet(tmp, index=False, compression="zstd")  # (a third of snappy's size: reports/ keeps these tables)
    tmp.replace(out)
    return df
