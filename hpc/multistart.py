"""`lsbench multistart`: K independent searches (seeds s..s+K-1), the algorithmic level.

Over MPI ranks (under mpiexec/mpirun/srun: search i runs on rank i mod size, one GPU per rank on a
node with GPUs), over Dask workers (`--via dask`), or one after another in this process (`local`).
Ranks and workers exchange only results (run records), so nodes need no shared file system: the
driver (rank 0, or the Dask client) writes every record as soon as it arrives, and rewrites the
summary after each, so a crash loses only the searches still running. A search that fails, or whose
Dask worker dies, is listed as failed in the summary; the others' records are kept.
"""
import os
import statistics
import threading
import time
import traceback

from lsbench.errors import LsbenchError
from lsbench.records import host_info, versions, write_atomic

TAG_RESULT = 21


def under_mpi():
    return any(int(os.environ.get(v, "1")) > 1 for v in ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE",
                                                          "MPI_LOCALNRANKS", "SLURM_NTASKS"))


def _one(run_kwargs, seed):
    """One search; never raises: a failure comes back as {'seed', 'error'}."""
    from lsbench.runner import run_one
    try:
        return run_one(**{**run_kwargs, "seed": seed, "out": None, "progress": False})
    except Exception as e:  # a failed search is reported, the others go on
        msg = str(e) if isinstance(e, LsbenchError) else f"{type(e).__name__}: {e}"
        return {"seed": seed, "error": msg, "traceback": traceback.format_exc(limit=3)}


class Collector:
    """Writes records as they arrive and keeps the summary file current."""

    def __init__(self, out_dir, seeds, run_kwargs, via, workers):
        self.out_dir, self.seeds, self.via, self.workers = out_dir, seeds, via, workers
        self.run_kwargs = {k: v for k, v in run_kwargs.items() if k not in ("data", "progress")}
        self.results = {}
        self.t0 = time.perf_counter()
        os.makedirs(out_dir, exist_ok=True)
        self.lock = threading.Lock()
        self.write_summary()

    def add(self, seed, result, where):
        with self.lock:
            if "error" not in result:
                result.setdefault("placement", where)
                write_atomic(os.path.join(self.out_dir, f"seed-{seed}.json"), result)
            self.results[seed] = result
            self.write_summary()

    def fail(self, seed, why):
        self.add(seed, {"seed": seed, "error": why}, None)

    def summary(self):
        done = {s: r for s, r in self.results.items() if "error" not in r}
        failed = [{"seed": s, "error": r["error"]} for s, r in sorted(self.results.items()) if "error" in r]
        wall = time.perf_counter() - self.t0
        out = {"searches": len(self.seeds), "seeds": self.seeds, "via": self.via, "workers": self.workers,
               "run": self.run_kwargs, "completed": len(done), "failed": failed,
               "pending": [s for s in self.seeds if s not in self.results], "wall_s": round(wall, 3),
               "host": host_info(), "versions": versions()}
        if done:
            bests = [r["best_objective"] for r in done.values()]
            best_seed = min(done, key=lambda s: done[s]["best_objective"])
            iters = sum(r["iterations"] for r in done.values())
            busy = {}  # timed search seconds per rank/worker: the span excludes start-up and JIT warm-up
            for r in done.values():
                key = repr(sorted((r.get("placement") or {}).items()))
                busy[key] = busy.get(key, 0.0) + r["wall_s"]
            span = max(busy.values())
            out.update({"best_objective": min(bests), "best_seed": best_seed,
                        "median_objective": statistics.median(bests), "gap_percent_of_best":
                        done[best_seed]["gap_percent"], "iterations": iters,
                        "aggregate_iterations_per_s": round(iters / span, 3) if span > 0 else None,
                        "busiest_placement_s": round(span, 6),
                        "search_iterations_per_s": {s: r["iterations_per_s"] for s, r in sorted(done.items())},
                        "placements": {s: r.get("placement") for s, r in sorted(done.items())}})
            target = self.run_kwargs.get("target")
            if target is not None:
                hits = [next((t for _i, t, obj in r["trajectory"] if obj <= target), None) for r in done.values()]
                reached = [t for t in hits if t is not None]
                out.update({"target": target, "runs_at_target": len(reached),
                            "median_time_to_target_s": statistics.median(reached) if reached else None})
        return out

    def write_summary(self):
        write_atomic(os.path.join(self.out_dir, "summary.json"), self.summary())


def run_multistart(run_kwargs, searches, seed, out_dir, via="auto", workers=None, scheduler=None):
    if searches < 1:
        raise LsbenchError(f"--searches: must be at least 1, got {searches}")
    if via == "auto":
        via = "mpi" if under_mpi() else ("dask" if workers or scheduler else "local")
    seeds = list(range(seed, seed + searches))
    if via == "mpi":
        return _over_mpi(run_kwargs, seeds, out_dir)
    if via == "dask":
        return _over_dask(run_kwargs, seeds, out_dir, workers, scheduler)
    if via != "local":
        raise LsbenchError(f"--via: unknown {via!r} (known: auto, local, mpi, dask)")
    col = Collector(out_dir, seeds, run_kwargs, "local", 1)
    for s in seeds:
        col.add(s, _one(run_kwargs, s), host_info()["hostname"])
    return col.summary()


def _select_gpu(local_rank):
    """One GPU per rank on a node: rank r takes visible device r mod count (CUDA_VISIBLE_DEVICES
    applies, the driver lists only the visible ones). Returns the device id, or None."""
    import gpu
    if not gpu.available():
        return None
    from numba import cuda
    dev = local_rank % len(cuda.gpus)
    cuda.select_device(dev)
    return dev


def _over_mpi(run_kwargs, seeds, out_dir):
    from hpc.cow import _mpi
    MPI = _mpi()
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    local = comm.Split_type(MPI.COMM_TYPE_SHARED)
    local_rank = local.Get_rank()
    local.Free()
    device = _select_gpu(local_rank) if str(run_kwargs.get("backend", "")).startswith("gpu") else None
    where = {"host": host_info()["hostname"], "rank": rank, "gpu": device,
             "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES")}
    mine = [s for i, s in enumerate(seeds) if i % size == rank]
    if rank != 0:
        for s in mine:
            comm.send((s, _one(run_kwargs, s), where), dest=0, tag=TAG_RESULT)
        return None
    col = Collector(out_dir, seeds, run_kwargs, "mpi", size)
    expected = len(seeds) - len(mine)

    def receive():  # records from the other ranks are written while rank 0 searches too
        for _ in range(expected):
            s, result, at = comm.recv(source=MPI.ANY_SOURCE, tag=TAG_RESULT)
            col.add(s, result, at)

    listener = threading.Thread(target=receive, daemon=True)
    listener.start()
    for s in mine:
        col.add(s, _one(run_kwargs, s), where)
    listener.join()
    return col.summary()


def _run_on_worker(run_kwargs, seed):
    import distributed
    where = {"host": host_info()["hostname"], "worker": distributed.get_worker().address}
    return _one(run_kwargs, seed), where


def _over_dask(run_kwargs, seeds, out_dir, workers, scheduler):
    from distributed import as_completed
    from hpc.grid import start_client
    # a search whose worker dies is reported failed, not silently re-run elsewhere
    client, cluster = start_client(workers, scheduler, allowed_failures=0)
    try:
        n = len(client.scheduler_info()["workers"])
        col = Collector(out_dir, seeds, run_kwargs, "dask", n)
        futures = {client.submit(_run_on_worker, run_kwargs, s, pure=False, retries=0): s for s in seeds}
        for f in as_completed(list(futures)):
            s = futures[f]
            try:
                result, where = f.result()
                col.add(s, result, where)
            except Exception as e:
                col.fail(s, f"worker lost or failed: {type(e).__name__}: {e}")
        return col.summary()
    finally:
        client.close(timeout=10)
        if cluster is not None:
            cluster.close(timeout=10)
