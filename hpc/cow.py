"""`cow` backend: the cluster-of-workstations baseline, an mpi4py master-worker evaluator.

Started as `mpiexec -n K lsbench run --backend cow ...`. Rank 0 runs the search; every rank,
rank 0 included, owns a contiguous slice of the move rows (balanced by move count). Each
iteration rank 0 broadcasts the current solution (not the neighbourhood), every rank evaluates its
slice from that solution with the Numba CPU code on its share of the host's cores (MPI + threads,
the hybrid design of Luong et al.), and rank 0 gathers the deltas and selects. Workers hold no
search state, so the deltas, and the trajectory, are exactly those of `cpu`.

A worker that dies takes the MPI job down (mpiexec ends every rank, no record is written); one
that hangs is caught by rank 0's deadline (`worker_timeout`, seconds): one error line, then
MPI_Abort, so the run never hangs.
"""
import sys
import time

import numba
import numpy as np

from lsbench import rng
from lsbench.interfaces import Evaluator
from lsbench.neighborhoods import RowSlicer, split_rows
from lsbench.params import Param

from . import TimeSplit, cores_per_process, mpi

CMD_STOP, CMD_EVAL = 0, 1
TAG_DELTAS, TAG_TIME = 11, 12


WORKER_TIMEOUT = Param("worker_timeout", float, "seconds a worker may take for its slice before the run ends "
                       "with an error (a hung worker never hangs the run)", default=120.0, low=0, open_low=True)


class CowEvaluator(Evaluator):
    name = "cow"
    parallel = True
    parameters = (WORKER_TIMEOUT,)

    def __init__(self, threads=None, worker_timeout=120.0):
        self.MPI = mpi("--backend cow")
        self.comm = self.MPI.COMM_WORLD
        self.rank, self.size = self.comm.Get_rank(), self.comm.Get_size()
        self.is_worker = self.rank != 0
        self.worker_timeout = float(worker_timeout)
        local = self.comm.Split_type(self.MPI.COMM_TYPE_SHARED)
        self.ranks_on_host = local.Get_size()
        local.Free()
        self.threads = int(threads) if threads else cores_per_process(self.ranks_on_host)
        self.timer = TimeSplit()
        self.open = False

    def bind(self, problem, neighbourhood):
        self.problem, self.nb = problem, neighbourhood
        numba.set_num_threads(min(self.threads, numba.config.NUMBA_NUM_THREADS))
        starts = neighbourhood.row_starts()
        self.rows = split_rows(starts, self.size)
        self.moves = [starts[r] for r in self.rows]
        self.slicer = RowSlicer(neighbourhood)
        self.out = np.empty(neighbourhood.out_shape(), dtype=neighbourhood.delta_dtype())
        self.compute = np.zeros(self.size, dtype=np.float64)
        # every rank knows the solution layout (shape, dtype), hence the broadcast message size
        self.template = problem.random_solution(rng.new_state(0))
        self.message = np.zeros(8 + self.template.nbytes, dtype=np.uint8)
        self.open = True
        return self

    def _own_slice(self, solution):
        t = time.perf_counter()
        lo, hi = self.rows[self.rank], self.rows[self.rank + 1]
        if hi > lo:  # (in calls of a fraction of a second: Ctrl-C reaches every rank between them)
            self.slicer.evaluate(solution, lo, hi, self.out, parallel=self.threads > 1)
        return time.perf_counter() - t

    # -- rank 0 -------------------------------------------------------------------------------------
    def reset(self, solution):
        self.solution = np.array(solution, copy=True, dtype=self.template.dtype)

    def apply(self, move):
        self.nb.perform(self.solution, move)

    def evaluate(self):
        t0 = time.perf_counter()
        requests = []
        for r in range(1, self.size):
            lo, hi = self.moves[r], self.moves[r + 1]
            requests.append(self.comm.Irecv(self.out[lo:hi], source=r, tag=TAG_DELTAS))
            requests.append(self.comm.Irecv(self.compute[r:r + 1], source=r, tag=TAG_TIME))
        self.message[:8] = np.array([CMD_EVAL], dtype=np.int64).view(np.uint8)
        self.message[8:] = self.solution.view(np.uint8)
        # the broadcast completes before rank 0 computes: MPI libraries progress a non-blocking
        # collective only inside MPI calls, and the workers must not wait for rank 0's slice
        self._wait([self.comm.Ibcast(self.message, root=0)], "receiving the solution")
        self.compute[0] = self._own_slice(self.solution)
        self._wait(requests, "evaluating its slice")
        self.timer.add(time.perf_counter() - t0, float(self.compute.max()))
        return self.out

    def _wait(self, requests, doing):
        deadline = time.perf_counter() + self.worker_timeout
        while not self.MPI.Request.Testall(requests):
            if time.perf_counter() > deadline:
                # a worker is late until both its messages came (it may stop between deltas and time)
                late = sorted({r for r in range(1, self.size)
                               if not all(q.Test() for q in requests[2 * (r - 1):2 * r])}) if len(requests) > 2 else []
                print(f"lsbench: error: cow backend: worker rank(s) {late or '?'} did not answer within "
                      f"{self.worker_timeout:g} s while {doing} (dead or hung); aborting the MPI job, "
                      "no record written", file=sys.stderr, flush=True)
                # MPI_Abort has mpiexec kill every rank at once, which can drop the line above before
                # mpiexec forwards it (likely why a test run saw no line once, on 2 cores): give it a moment
                time.sleep(1.0)
                self.comm.Abort(2)
            time.sleep(0)

    def close(self):
        """Tell the workers the run is over (rank 0; also on errors, so no rank is left waiting)."""
        if self.open and not self.is_worker:
            self.open = False
            self.message[:] = 0  # CMD_STOP
            self._wait([self.comm.Ibcast(self.message, root=0)], "stopping")

    def reset_timers(self):
        self.timer = TimeSplit()

    def describe(self):
        return {"backend": self.name, "ranks": self.size, "threads_per_rank": self.threads,
                "ranks_on_host": self.ranks_on_host, "mpi": self.MPI.Get_library_version().splitlines()[0].strip(),
                "rows_per_rank": [self.rows[r + 1] - self.rows[r] for r in range(self.size)],
                "time_split": self.timer.as_dict()}

    # -- ranks 1..K-1 -----------------------------------------------------------------------------
    def serve(self):
        """Worker loop: receive a solution, evaluate this rank's slice, send it back; until stop."""
        solution, message = self.template.copy(), self.message
        lo, hi = self.moves[self.rank], self.moves[self.rank + 1]
        while True:
            self.comm.Ibcast(message, root=0).Wait()
            if message[:8].view(np.int64)[0] == CMD_STOP:
                return
            solution[:] = message[8:].view(solution.dtype)
            took = np.array([self._own_slice(solution)])
            self.comm.Send(self.out[lo:hi], dest=0, tag=TAG_DELTAS)
            self.comm.Send(took, dest=0, tag=TAG_TIME)
