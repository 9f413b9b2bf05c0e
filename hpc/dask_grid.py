"""`grid` backend: the grid baseline of Luong et al. over Dask distributed.

The run starts a `LocalCluster` of `--workers N` processes bound to 127.0.0.1 (dashboard too), or
N SLURM jobs through dask-jobqueue (`--scheduler slurm --param slurm_host=ADDRESS ...`), or joins an
existing scheduler with `--scheduler ADDRESS`. The neighbourhood (problem data included)
is scattered to every worker once; each iteration only the current solution travels, each worker
evaluates its slice of move rows with the Numba CPU code on its share of the cores, and the
master gathers and selects: the `cpu` trajectory, exactly.

A worker that dies or hangs leaves its slice unanswered; the master notices a lost worker within
about a second, a hung one at `worker_timeout` seconds, and ends the run with one error line.
"""
import logging
import os
import shutil
import signal
import threading
import time
from contextlib import suppress

import numpy as np

from lsbench.errors import LsbenchError
from lsbench.interfaces import Evaluator
from lsbench.interrupts import interrupted
from lsbench.neighborhoods import RowSlicer, split_rows
from lsbench.params import Param

from . import TimeSplit, cores_per_process
from .cow import WORKER_TIMEOUT

LOCAL_WORKERS_A_CORE = 8  # a LocalCluster's worker processes beyond this many a core only wait their turn


def _evaluate_slice(nb, solution, lo, hi, threads):
    """Runs on a worker: the deltas of rows lo..hi-1, and how long they took there."""
    import numba
    numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    t = time.perf_counter()
    out = np.empty(nb.out_shape(), dtype=nb.delta_dtype())
    if not hasattr(nb, "slicer"):  # (kept on the worker's copy: its pace carries over to the next slice)
        nb.slicer = RowSlicer(nb)
    if hi > lo:  # (in calls of a fraction of a second: a stopped run's workers end soon)
        nb.slicer.evaluate(solution, lo, hi, out, parallel=threads > 1)
    return out[nb.slicer.starts[lo]:nb.slicer.starts[hi]], time.perf_counter() - t



def jobqueue_slurm_cluster():
    """dask_jobqueue's SLURMCluster class. Importing dask_jobqueue sets SIGINT's handler to
    `sys.exit()` (dask_jobqueue.runner): Ctrl-C would end the run with exit code 0, past lsbench's
    own answer (lsbench.interrupts). The handler is put back as it was."""
    main = threading.current_thread() is threading.main_thread()
    previous = signal.getsignal(signal.SIGINT) if main else None
    try:
        from dask_jobqueue import SLURMCluster
    except ImportError as e:
        raise LsbenchError(f"--scheduler slurm needs dask-jobqueue (pip install -e '.[hpc]'): {e}")
    finally:
        if main and previous is not None and signal.getsignal(signal.SIGINT) is not previous:
            signal.signal(signal.SIGINT, previous)
    return SLURMCluster


def slurm_cluster(threads=None, slurm_host=None, slurm_partition=None, slurm_account=None, slurm_memory="4GB",
                  slurm_walltime="01:00:00"):
    """A dask-jobqueue SLURMCluster (one worker per SLURM job, `threads` cores each), not yet
    scaled. Its scheduler must be reachable from the compute nodes, so it binds where told
    (`slurm_host`: this node's address on the cluster network, or `interface:NAME`), never by
    default."""
    if not slurm_host:
        raise LsbenchError("--scheduler slurm: give --param slurm_host=ADDRESS (this node's address on the "
                           "cluster network, where the compute nodes' workers connect)")
    SLURMCluster = jobqueue_slurm_cluster()
    if slurm_host.startswith("interface:"):  # e.g. interface:ib0, the address of that interface
        where = {"interface": slurm_host.split(":", 1)[1]}
    else:
        where = {"host": slurm_host, "dashboard_address": f"{slurm_host}:0"}
    return SLURMCluster(cores=int(threads or 1), processes=1, memory=slurm_memory, walltime=slurm_walltime,
                        queue=slurm_partition, account=slurm_account, scheduler_options=where)


def start_client(workers=None, scheduler=None, threads=None, allowed_failures=None, slurm=None):
    """A Dask client: on a new LocalCluster bound to 127.0.0.1, on SLURM jobs (`scheduler='slurm'`,
    dask-jobqueue), or on the scheduler address given."""
    try:
        import dask
        from distributed import Client, LocalCluster
    except ImportError as e:
        raise LsbenchError(f"the grid backend needs Dask distributed (pip install -e '.[hpc]'): {e}")
    if allowed_failures is not None:  # read by the scheduler when it starts
        dask.config.set({"distributed.scheduler.allowed-failures": allowed_failures})
    if scheduler == "slurm":
        missing = [cmd for cmd in ("sbatch", "squeue", "scancel") if shutil.which(cmd) is None]
        if missing:  # before any job is built: the scheduler would otherwise wait for workers that never come
            raise LsbenchError(f"--scheduler slurm: {', '.join(missing)} not found on PATH (is this a SLURM "
                               "login node?)")
        cluster = slurm_cluster(threads, **(slurm or {}))
        cluster.scale(jobs=int(workers or 2))
        client = Client(cluster)
        client.wait_for_workers(int(workers or 2), timeout=3600)  # the jobs wait in the queue first
        return client, cluster
    if scheduler:
        try:
            client = Client(scheduler, timeout="30s")
        except OSError as e:
            raise LsbenchError(f"--scheduler {scheduler}: cannot connect ({e})")
        if workers:
            client.wait_for_workers(workers, timeout=120)
        return client, None
    workers = int(workers or 2)
    if workers < 1:
        raise LsbenchError(f"--workers: must be at least 1, got {workers}")
    most = LOCAL_WORKERS_A_CORE * (os.cpu_count() or 1)
    if workers > most:
        raise LsbenchError(f"--workers {workers}: a LocalCluster on this host's {os.cpu_count()} cores takes at most "
                           f"{most} worker processes; join a larger cluster with --scheduler")
    try:
        import bokeh  # noqa: F401  (the dashboard needs it)
        dashboard = "127.0.0.1:0"
    except ImportError:
        dashboard = None
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                           dashboard_address=dashboard, silence_logs=logging.ERROR,
                           worker_dashboard_address=None)
    return Client(cluster), cluster


def connected_workers(client):
    """The addresses of the workers connected to the client's scheduler now, sorted, asked of the
    scheduler itself. Client.scheduler_info() returns the client's cached identity, which its own
    periodic refresh (every 2 s, without per-worker entries) may replace between the call's fetch
    and its return: read as no workers, every worker looked lost (distributed 2026.8)."""
    return sorted(client.sync(client.scheduler.identity)["workers"])


class DaskGridEvaluator(Evaluator):
    """The `grid` backend (Luong et al.'s grid baseline): the neighbourhood split over Dask workers."""

    name = "grid"
    parallel = True
    parameters = (
        WORKER_TIMEOUT,
        Param("workers", int, "Dask workers of the LocalCluster the run starts (at most 8 a core) or SLURM jobs",
              default=2, low=1, high=4096),
        Param("scheduler", str, "join this Dask scheduler (tcp://HOST:PORT), or 'slurm' for workers as SLURM jobs",
              pattern=r"slurm|(tcp|tls|ucx|inproc)://[^\s/:]+(:\d+)?|[A-Za-z0-9_.-]+:\d+",
              pattern_help="slurm, tcp://HOST:PORT or HOST:PORT"),
        Param("slurm_host", str, "the workers' network interface or address, e.g. interface:ib0"),
        Param("slurm_partition", str, "SLURM partition of the worker jobs"),
        Param("slurm_account", str, "SLURM account of the worker jobs"),
        Param("slurm_memory", str, "memory per worker job", default="4GB"),
        Param("slurm_walltime", str, "wall time per worker job", default="01:00:00"),
    )

    def __init__(self, workers=2, scheduler=None, threads=None, worker_timeout=120.0, **slurm):
        self.slurm = slurm
        self.workers_wanted, self.scheduler, self.threads = workers, scheduler, threads
        self.worker_timeout = float(worker_timeout)
        self.timer = TimeSplit()
        self.client = self.cluster = None

    def bind(self, problem, neighbourhood):
        self.problem, self.nb = problem, neighbourhood
        self.client, self.cluster = start_client(self.workers_wanted, self.scheduler, self.threads,
                                                 slurm=self.slurm)
        self.addresses = connected_workers(self.client)
        # a LocalCluster's worker processes, ended at once on Ctrl-C (a graceful close waits for their task)
        self.worker_pids = list(self.client.run(os.getpid).values()) if self.scheduler is None else []
        if not self.addresses:
            raise LsbenchError(f"--scheduler {self.scheduler}: no workers connected")
        if not self.threads:
            per_host = {}
            for a in self.addresses:
                host = a.rsplit(":", 1)[0]
                per_host[host] = per_host.get(host, 0) + 1
            self.threads = cores_per_process(max(per_host.values()))
        starts = neighbourhood.row_starts()
        self.rows = split_rows(starts, len(self.addresses))
        self.moves = [starts[r] for r in self.rows]
        self.out = np.empty(neighbourhood.out_shape(), dtype=neighbourhood.delta_dtype())
        # the instance data go to every worker once; iterations send only the solution
        self.nb_remote = self.client.scatter(neighbourhood, broadcast=True, hash=False)
        return self

    def reset(self, solution):
        self.solution = np.array(solution, copy=True)

    def apply(self, move):
        self.nb.perform(self.solution, move)

    def evaluate(self):
        t0 = time.perf_counter()
        futures = [self.client.submit(_evaluate_slice, self.nb_remote, self.solution, self.rows[w],
                                      self.rows[w + 1], self.threads, workers=[addr], allow_other_workers=False,
                                      pure=False)
                   for w, addr in enumerate(self.addresses)]
        deadline = t0 + self.worker_timeout
        self._wait(futures, deadline)
        slowest = 0.0
        for w, f in enumerate(futures):
            part, took = self._result(w, f, futures, deadline)
            self.out[self.moves[w]:self.moves[w + 1]] = part
            slowest = max(slowest, took)
        self.timer.add(time.perf_counter() - t0, slowest)
        return self.out

    def _wait(self, futures, deadline):
        """Wait in short steps, checking that every worker is still connected."""
        from distributed import wait
        while True:
            try:
                wait(futures, timeout=1.0)
                return
            except TimeoutError:
                self._check(futures, deadline)
            except Exception as e:  # a dead worker's lost scattered data cancel the futures
                self._check(futures, float("inf"))
                self._fail(f"worker(s) failed or lost their data: {_first_line(e)}")

    def _result(self, w, future, futures, deadline):
        """A finished slice's result: its data still live on the worker, which may die before they
        are fetched (the task then waits for a worker that never comes back)."""
        while True:
            try:
                return future.result(timeout=1.0)
            except TimeoutError:
                self._check(futures, deadline)
            except Exception as e:
                self._fail(f"worker {self.addresses[w]} failed: {_first_line(e)}")

    def _check(self, futures, deadline):
        alive = set(connected_workers(self.client))
        lost = [a for a in self.addresses if a not in alive]
        if lost:
            self._fail(f"worker(s) {', '.join(lost)} lost during the run (died or disconnected)")
        if time.perf_counter() > deadline:
            late = [self.addresses[w] for w, f in enumerate(futures) if not f.done()]
            self._fail(f"worker(s) {', '.join(late) or 'holding results'} did not answer within "
                       f"{self.worker_timeout:g} s (hung or overloaded)")

    def _fail(self, why):
        # an abandoned result fetch would log "Task exception was never retrieved" after the
        # error line at exit: the error line already says what went wrong
        logging.getLogger("asyncio").setLevel(logging.CRITICAL)
        self.close()
        raise LsbenchError(f"grid backend: {why}; no record written")

    def close(self):
        if self.client is not None:
            client, cluster, self.client, self.cluster = self.client, self.cluster, None, None
            if interrupted():  # (the closing client's complaints about the ended workers are no news)
                logging.getLogger("distributed").setLevel(logging.CRITICAL)
                for pid in self.worker_pids:
                    with suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
            try:
                client.close(timeout=10)
                if cluster is not None:
                    cluster.close(timeout=10)
            except Exception:
                pass  # shutting down after a failure: the error already said what went wrong

    def reset_timers(self):
        self.timer = TimeSplit()

    def describe(self):
        return {"backend": self.name, "workers": len(self.addresses), "threads_per_worker": self.threads,
                "scheduler": self.scheduler or "LocalCluster on 127.0.0.1",
                "rows_per_worker": [self.rows[w + 1] - self.rows[w] for w in range(len(self.addresses))],
                "time_split": self.timer.as_dict()}


def _first_line(error):
    """An exception as one line (Dask's messages run over several)."""
    lines = str(error).strip().splitlines()
    return f"{type(error).__name__}: {lines[0].rstrip(':') if lines else ''}"
