"""`lsbench multistart`: K independent searches (seeds s..s+K-1), the algorithmic level.

Over MPI ranks (under mpiexec/mpirun/srun: search i runs on rank i mod size, one GPU per rank on a
node with GPUs), over Dask workers (`--via dask`), or one after another in this process (`local`).
Ranks and workers exchange only results (run records), so nodes need no shared file system: the
driver (rank 0, or the Dask client) writes every record as soon as it arrives (a rank's or worker's
unit of searches together), and rewrites the summary after each unit, so a crash loses only the
searches still running. A search that fails, or whose Dask worker dies, is listed as failed in the
summary; the others' records are kept, and running the same command again completes only the
searches that have no record.
"""
import os
import statistics
import threading
import time
from dataclasses import replace
from functools import partial

from lsbench.errors import LsbenchError
from lsbench.files import release, reserve, write_atomic
from lsbench.provenance import host_info, versions
from lsbench.record import Record
from lsbench.registry import GPU_BACKENDS
from lsbench.spec import MAX_SEARCHES, check_seed_range

from . import mpi
from .batch import batch_size, batches, run_batch
from .dispatch import dispatch


def under_mpi():
    return any(int(os.environ.get(v, "1")) > 1 for v in ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE",
                                                          "MPI_LOCALNRANKS", "SLURM_NTASKS"))


def _one(spec, seed):
    """One search; never raises: a failure comes back as {'seed', 'error'}."""
    return run_batch(spec, [seed])[seed]


def union_seconds(intervals):
    """Seconds covered by the union of [start, end] intervals (epoch seconds; a batch's searches
    share one): the time some timed search was running somewhere."""
    total, reach = 0.0, None
    for a, b in sorted({tuple(i) for i in intervals}):
        if reach is None or a > reach:
            total += b - a
            reach = b
        elif b > reach:
            total += b - reach
            reach = b
    return total


def placement_rates(done):
    """Each rank's (worker's) own rate, iterations over the union of its timed intervals, and the
    start skew: how far apart the ranks' first timed searches began."""
    by = {}
    for r in done.values():
        if "timed_interval" in r:
            where = r.get("placement") or {}
            label = str(where.get("rank", where.get("worker", "local")))
            by.setdefault(label, []).append(r)
    firsts = [min(r["timed_interval"][0] for r in rs) for rs in by.values()]
    rates = {}
    for label, rs in sorted(by.items()):
        seconds = union_seconds([r["timed_interval"] for r in rs])
        if seconds > 0:
            rates[label] = round(sum(r["iterations"] for r in rs) / seconds, 3)
    return {"placement_iterations_per_s": rates,
            "start_skew_s": round(max(firsts) - min(firsts), 6) if firsts else None}


class Collector:
    """Writes records as they arrive and keeps the summary file current."""

    def __init__(self, out_dir, seeds, spec, via, workers, exchange_every=0, done=None):
        self.out_dir, self.seeds, self.via, self.workers = out_dir, seeds, via, workers
        self.spec, self.exchange_every = spec, exchange_every
        self.results = dict(done or {})  # records an earlier, interrupted call already wrote
        self.resumed = len(self.results)
        self.t0 = time.perf_counter()
        os.makedirs(out_dir, exist_ok=True)
        self.lock = threading.Lock()
        self.write_summary()

    def add(self, results, where):
        """{seed: record or {"error": ...}} of one unit (a batch of searches, or one), placed at
        `where`: each record written, then the summary once (rewritten a record at a time, a
        multistart of K searches would spend O(K^2) there: seconds at 528, minutes at 4,096)."""
        with self.lock:
            for seed in sorted(results):
                result = results[seed]
                if "error" not in result:
                    result.setdefault("placement", where)
                    write_atomic(os.path.join(self.out_dir, f"seed-{seed}.json"), result)
                self.results[seed] = result
            self.write_summary()

    def fail(self, seed, why):
        self.add({seed: {"seed": seed, "error": why}}, None)

    def summary(self):
        done = {s: r for s, r in self.results.items() if "error" not in r}
        failed = [{"seed": s, "error": r["error"]} for s, r in sorted(self.results.items()) if "error" in r]
        wall = time.perf_counter() - self.t0
        out = {"searches": len(self.seeds), "seeds": self.seeds, "via": self.via, "workers": self.workers,
               "run": {**self.spec.as_record(), "exchange_every": self.exchange_every}, "completed": len(done), "failed": failed,
               "pending": [s for s in self.seeds if s not in self.results], "resumed": self.resumed,
               "wall_s": round(wall, 3),
               "host": host_info(), "versions": versions()}
        if done:
            bests = [r["best_objective"] for r in done.values()]
            best_seed = min(done, key=lambda s: done[s]["best_objective"])
            iters = sum(r["iterations"] for r in done.values())
            busy = {}  # timed search seconds per rank/worker: the span excludes start-up and JIT warm-up
            batches_seen = set()
            for r in done.values():
                key = repr(sorted((r.get("placement") or {}).items()))
                if r.get("batch"):  # searches that ran together count their run's time once
                    if (key, r["batch"]["first_seed"]) in batches_seen:
                        continue
                    batches_seen.add((key, r["batch"]["first_seed"]))
                busy[key] = busy.get(key, 0.0) + r["wall_s"]
            span = max(busy.values())
            # one run a batch of searches held at once (one a search where the engine holds one)
            runs = len(batches_seen) + sum(1 for r in done.values() if not r.get("batch"))
            largest = max((r["batch"]["searches"] for r in done.values() if r.get("batch")), default=1)
            timed = union_seconds([r["timed_interval"] for r in done.values() if "timed_interval" in r])
            out.update(placement_rates(done))
            out.update({"best_objective": min(bests), "best_seed": best_seed,
                        "median_objective": statistics.median(bests), "gap_percent_of_best":
                        done[best_seed]["gap_percent"], "iterations": iters,
                        # over the time any timed search ran, on any rank (ranks that share a GPU overlap)
                        "aggregate_iterations_per_s": round(iters / timed, 3) if timed > 0 else None,
                        "timed_union_s": round(timed, 6), "busiest_placement_s": round(span, 6),
                        "runs": runs, "largest_run_searches": largest,
                        "search_iterations_per_s": {s: r["iterations_per_s"] for s, r in sorted(done.items())},
                        "placements": {s: r.get("placement") for s, r in sorted(done.items())}})
            target = self.spec.stop.target
            if target is not None:
                hits = {s: first_hit(r, target) for s, r in done.items()}  # (once a search, for both figures)
                reached = [t for t in hits.values() if t is not None]
                out.update({"target": target, "runs_at_target": len(reached),
                            "median_time_to_target_s": statistics.median(reached) if reached else None})
                shifted = timed_starts(done.values())
                if shifted:  # the multistart as one parallel search: its first hit, from the first timed start
                    firsts = [start + t for r, start in shifted if (t := hits[r["seed"]]) is not None]
                    out["first_time_to_target_s"] = round(min(firsts), 6) if firsts else None
            islands = {}
            for r in done.values():
                if "islands" in r:
                    i = r["islands"]
                    islands[i["position"]] = {k: v for k, v in i.items() if k != "restarted_from"} | {
                        "max_chunk_s": r["backend_info"].get("max_chunk_s"), "chunks": r["backend_info"].get("chunks")}
            if islands:
                out["islands"] = [islands[p] for p in sorted(islands)]
        return out

    def write_summary(self):
        write_atomic(os.path.join(self.out_dir, "summary.json"), self.summary())


def run_multistart(spec, searches, out_dir, via="auto", workers=None, scheduler=None, exchange_every=0,
                   searches_per_gpu=None, migrants=4, out=None, migrant_start="copy"):
    """run_multistart_searches, and with `out`, the multistart's run record there (rank 0)."""
    if out:
        if os.path.realpath(os.path.dirname(os.path.abspath(out))) == os.path.realpath(out_dir):
            raise LsbenchError(f"--out {out}: inside --out-dir {out_dir}, where the searches' records and the "
                               "summary go; nothing was run (choose a path outside it)")
        reserve(out)  # before any search: a path that cannot take the record fails now
    created, finished = not os.path.exists(out_dir), False
    try:
        summary = run_multistart_searches(spec, searches, out_dir, via, workers, scheduler, exchange_every,
                                          searches_per_gpu, migrants, migrant_start)
        if summary is not None and out and summary["completed"]:
            write_atomic(out, multistart_record(summary, out_dir))
        finished = True
        return summary
    finally:
        for path in ([out] if out else []) + [os.path.join(out_dir, "summary.json")]:
            release(path)
        if not finished and created and os.path.isdir(out_dir) and not os.listdir(out_dir):
            os.rmdir(out_dir)  # a refused multistart leaves no empty folder behind


def first_hit(record, target):
    """A search's time to the target from its own timed start (its trajectory), or None."""
    return next((t for _it, t, obj in record["trajectory"] if obj <= target), None)


def timed_starts(records):
    """[(record, its timed start in seconds after the first one's)] of the searches that have a timed
    interval: the multistart's one clock (batches run one after another, ranks that started apart)."""
    timed = [r for r in records if "timed_interval" in r]
    first = min((r["timed_interval"][0] for r in timed), default=0.0)
    return [(r, r["timed_interval"][0] - first) for r in timed]


def best_over_searches(records):
    """The multistart as one parallel search: [seconds, objective] at each improvement of the best
    over all its searches, on its one clock (timed_starts); None without timed searches. (For its
    report, once a run: the summary, rewritten at every unit, takes first_hit instead.)"""
    shifted = timed_starts(records)
    if not shifted:
        return None
    points = sorted((start + t, obj) for r, start in shifted for _it, t, obj in r["trajectory"])
    out = []
    for seconds, obj in points:
        if not out or obj < out[-1][1]:
            out.append([round(seconds, 6), obj])
    return out


def multistart_record(summary, out_dir):
    """The multistart as one run, for workflows and reports: the best search's record (re-checked
    when it was written), with the multistart's aggregate rate, time to target and islands."""
    best = Record.read(os.path.join(out_dir, f"seed-{summary['best_seed']}.json"))
    keep = ("searches", "seeds", "via", "workers", "completed", "failed", "aggregate_iterations_per_s",
            "timed_union_s", "median_objective", "runs_at_target", "median_time_to_target_s",
            "first_time_to_target_s", "islands")
    return {**best, "aggregate_iterations_per_s": summary["aggregate_iterations_per_s"],
            "multistart": {**{k: summary[k] for k in keep if k in summary}, "out_dir": str(out_dir),
                           "exchange_every": summary["run"]["exchange_every"]}}


def run_multistart_searches(spec, searches, out_dir, via="auto", workers=None, scheduler=None, exchange_every=0,
                            searches_per_gpu=None, migrants=4, migrant_start="copy"):
    """K = `searches` runs of `spec` with seeds spec.seed .. spec.seed + K - 1; on an engine that
    holds several searches, each rank runs its share as batches that fill its GPU. With
    `exchange_every`, islands: live on an engine that takes migration (hpc/islands.py), else in
    epochs run one after another."""
    if not 1 <= searches <= MAX_SEARCHES:
        raise LsbenchError(f"--searches: must be within [1, {MAX_SEARCHES}], got {searches}")
    check_seed_range(spec.seed, searches)
    if via == "auto":
        via = "mpi" if under_mpi() else ("dask" if workers or scheduler else "local")
    if via in ("local", "mpi") and spec.backend in GPU_BACKENDS:  # once, before any search (Dask: on the workers)
        from lsbench.gpu import require
        require(spec.backend)
    check_output_folder(out_dir)
    seeds = list(range(spec.seed, spec.seed + searches))
    if exchange_every:
        if _takes_migration(spec):
            if searches_per_gpu is not None:
                raise LsbenchError("--searches-per-gpu: live islands run each rank's whole share at once")
            return _live_islands(spec, seeds, out_dir, via, exchange_every, migrants, workers, scheduler,
                                 migrant_start)
        if migrant_start != "copy":
            raise LsbenchError(f"--migrant-start {migrant_start}: only live islands (rots on gpu-resident) restart "
                               "searches from migrants; epoch islands start from the better of two bests")
        return _islands(spec, seeds, out_dir, via, exchange_every)
    done = finished_records(out_dir, seeds, spec)  # a rerun completes only the missing searches
    if searches_per_gpu is not None and searches_per_gpu < 1:
        raise LsbenchError(f"--searches-per-gpu: must be at least 1, got {searches_per_gpu}")
    size = batch_size(spec, searches_per_gpu)
    # batches of consecutive seeds (one seed each, or a GPU full of resident searches)
    col = dispatch(via, lambda places: batches([s for s in seeds if s not in done], size),
                   partial(_run_batch_at, spec), lambda places: Collector(out_dir, seeds, spec, via, places, done=done),
                   spec.backend, workers, scheduler)
    return None if col is None else col.summary()


def _run_batch_at(spec, batch, place):
    return run_batch(spec, batch, start_gate=place.gate)


def finished_records(out_dir, seeds, spec):
    """{seed: record} of the searches an earlier call of the same multistart finished (records are
    written atomically: one that exists is whole). A record of another run is one error line."""
    done = {}
    for s in seeds:
        path = os.path.join(out_dir, f"seed-{s}.json")
        if not os.path.exists(path):
            continue
        rec = Record.read(path)
        ours = {**spec.as_record(), "seed": s}
        if rec.get("run_spec") != ours:
            raise LsbenchError(f"--out-dir {out_dir}: {path} is the record of another run; use another folder")
        done[s] = rec
    return done


def check_output_folder(out_dir):
    """Refuse, before any search, an --out-dir that cannot hold the records."""
    if os.path.exists(out_dir) and not os.path.isdir(out_dir):
        raise LsbenchError(f"--out-dir {out_dir}: exists and is not a directory")
    try:
        reserve(os.path.join(out_dir, "summary.json"), kind="multistart summary")
    except LsbenchError as e:
        raise LsbenchError(str(e).replace("--out ", "--out-dir ", 1)) from None


def _takes_migration(spec):
    from lsbench.registry import engine_path, load_class
    path = engine_path(spec.algorithm, spec.backend, spec.problem)
    return path is not None and load_class(path).takes_migration


def _live_islands(spec, seeds, out_dir, via, every, migrants, workers, scheduler, start="copy"):
    """One island per rank or worker, its searches in one run, elites passed while they run."""
    from . import islands
    if every < 1 or migrants < 1:
        raise LsbenchError(f"--exchange-every {every} / --migrants {migrants}: both must be at least 1")
    col = dispatch(via, partial(islands.island_seeds, seeds, via), islands.runner(spec, every, migrants, start),
                   lambda places: Collector(out_dir, seeds, spec, f"{via}-islands", places, every),
                   spec.backend, workers, scheduler, at_once=True)
    return None if col is None else col.summary()


def _islands(spec, seeds, out_dir, via, every):
    """Searches in epochs of `every` iterations; after each, island i receives island i-1's best
    and starts its next epoch from it if it beats its own best, else from its own best. Epoch 0
    of island i is exactly the independent search with seed s_i. Over MPI, ranks exchange only
    the islands' best objectives and solutions (allgather), then the records go to rank 0."""
    from lsbench import instances
    from lsbench.record import recheck, recheck_before_writing
    total = spec.stop.iterations
    if every < 1 or not total:
        raise LsbenchError("--exchange-every: needs a positive epoch length and --iterations (the budget per island)")
    if via not in ("local", "mpi"):
        raise LsbenchError(f"--exchange-every: islands run --via local or mpi, not {via}")
    comm = rank = None
    size = 1
    if via == "mpi":
        comm = mpi("lsbench multistart --via mpi").COMM_WORLD
        rank, size = comm.Get_rank(), comm.Get_size()
    mine = [i for i in range(len(seeds)) if i % size == (rank or 0)]
    merged = {i: None for i in mine}
    starts = {i: None for i in mine}
    received = {i: [] for i in mine}
    epochs = -(-total // every)
    for e in range(epochs):
        budget = min(every, total - e * every)
        bests = []
        for i in mine:
            seed = seeds[i] if e == 0 else seeds[i] * 1_000_003 + e  # a fresh stream per epoch
            rec = _epoch(spec, seed, budget, starts[i])
            merged[i] = Record(rec, epoch_seeds=[rec["seed"]]) if merged[i] is None else merged[i].merged(rec)
            bests.append((i, merged[i]["best_objective"], merged[i]["best_solution"]))
        everyone = [b for part in comm.allgather(bests) for b in part] if comm else bests
        by_island = {i: (obj, sol) for i, obj, sol in everyone}
        if e == epochs - 1:
            break
        for i in mine:  # migration along the ring: i-1 -> i
            left_obj, left_sol = by_island[(i - 1) % len(seeds)]
            if left_obj < merged[i]["best_objective"]:
                starts[i] = left_sol
                received[i].append(e + 1)
            else:
                starts[i] = merged[i]["best_solution"]
    prob = None
    finals = []
    for i in mine:
        rec = merged[i]
        if prob is None:
            prob = instances.load(spec.instance, spec.problem, spec.data_dir, spec.problem_params)
        rec.set_best(recheck_before_writing(recheck, prob, prob.solution_from_list(rec["best_solution"]),
                                            rec["best_objective"]))
        rec["seed"] = seeds[i]
        rec["run_spec"] = replace(spec, seed=seeds[i]).as_record()  # the island's whole budget, not an epoch's
        rec["params"]["islands"] = {"exchange_every": every, "epochs": epochs, "ring_size": len(seeds),
                                    "received_at_epochs": received[i]}
        finals.append((seeds[i], rec, {"host": host_info()["hostname"], "rank": rank}))
    if comm:
        gathered = comm.gather(finals, root=0)
        if rank != 0:
            return None
        finals = [f for part in gathered for f in part]
    col = Collector(out_dir, seeds, spec, f"{via}-islands", size, every)
    for _s, rec, where in finals:
        rec.setdefault("placement", where)  # (each island its own rank)
    col.add({s: rec for s, rec, _where in finals}, None)
    return col.summary()


def _epoch(spec, seed, iterations, start):
    from lsbench.runner import run
    return run(replace(spec, seed=seed, stop=replace(spec.stop, iterations=iterations), out=None,
                       initial=None if start is None else tuple(int(v) for v in start)))
