"""Cluster baselines and multi-start searches: mpi4py (COW) and Dask (grid).

Iteration level (Luong et al., section 6.8): the master keeps the search; each iteration it sends
the current solution to the workers, each evaluates its slice of the moves with the Numba CPU code
on all its cores, and the master gathers the deltas and selects. Same deltas as `cpu`, hence the
same trajectory. Algorithmic level: `lsbench multistart` (hpc/multistart.py, a layer above
the evaluators: it orchestrates whole runs) runs independent searches over MPI ranks or Dask
workers, one GPU per rank where there are GPUs. Installed as `lsbench.hpc`.
"""
import os

from lsbench.errors import LsbenchError


def mpi(who):
    """mpi4py's MPI module, or one error line naming what needed it."""
    try:
        from mpi4py import MPI
    except ImportError as e:
        raise LsbenchError(f"{who} needs mpi4py and an MPI library (pip install -e '.[hpc]'): {e}")
    return MPI


class TimeSplit:
    """Where an iteration's time goes on a distributed evaluator (seconds, summed over calls)."""

    def __init__(self):
        self.evaluation = 0.0  # the slowest worker's compute time, per call
        self.communication = 0.0  # the rest of the call: sending, waiting, gathering
        self.calls = 0

    def add(self, total, compute):
        self.evaluation += compute
        self.communication += max(0.0, total - compute)
        self.calls += 1

    def as_dict(self):
        per = 1e3 / self.calls if self.calls else 0.0
        return {"evaluation_s": round(self.evaluation, 6), "communication_s": round(self.communication, 6),
                "evaluate_calls": self.calls, "evaluation_ms_per_iteration": round(self.evaluation * per, 4),
                "communication_ms_per_iteration": round(self.communication * per, 4)}


def cores_per_process(processes_on_host):
    """Numba threads for one of several processes sharing a host: the cores this process may use
    (its affinity mask, which SLURM and mpiexec bindings set) split evenly."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:
        cores = os.cpu_count() or 1
    return max(1, cores // max(1, processes_on_host))

