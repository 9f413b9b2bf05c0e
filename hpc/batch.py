"""One rank's searches as one run: a GPU full of resident searches, split into one record per seed.

Shared by the independent multistart (hpc/multistart.py) and the live islands (hpc/islands.py), so
that both start a rank's searches, pick its GPU and split its record the same way.
"""
import os
import traceback
from dataclasses import replace

from lsbench.errors import LsbenchError
from lsbench.provenance import host_info


def run_batch(spec, seeds, migration=None, start_gate=None):
    """Consecutive seeds as one run of an engine that holds several searches (a GPU full of
    resident searches), split into one record per seed; never raises: a failure is
    {'seed', 'error'} for each seed of the batch. `migration`: the run is a live island;
    `start_gate`: called between the run's warm-up and its timed searches."""
    from lsbench.runner import run
    try:
        record = run(replace(spec, seed=seeds[0], searches=len(seeds), out=None), migration=migration,
                     start_gate=start_gate)
        return record.split(seeds)
    except Exception as e:  # a failed search is reported, the others go on
        msg = str(e) if isinstance(e, LsbenchError) else f"{type(e).__name__}: {e}"
        return {s: {"seed": s, "error": msg, "traceback": traceback.format_exc(limit=3)} for s in seeds}


def batch_size(spec, searches_per_gpu=None):
    """Searches one run holds: 1, or for an engine that runs several at once (the resident Ro-TS),
    --searches-per-gpu, else one per multiprocessor of this rank's GPU (its measured best)."""
    from lsbench.registry import engine_path, load_class
    path = engine_path(spec.algorithm, spec.backend, spec.problem)
    if path is None or not load_class(path).several_searches:
        if searches_per_gpu:
            raise LsbenchError(f"--searches-per-gpu: {spec.algorithm} on {spec.backend} runs one search a run")
        return 1
    if searches_per_gpu:
        return searches_per_gpu
    from lsbench.gpu import require
    require(spec.backend)
    from numba import cuda
    # the simulator's device has no multiprocessor count: it runs blocks one after another anyway
    return int(getattr(cuda.get_current_device(), "MULTIPROCESSOR_COUNT", 4))


def batches(seeds, size):
    """Runs of at most `size` consecutive seeds (a gap left by a resumed folder starts a new one)."""
    out = []
    for s in seeds:
        if out and len(out[-1]) < size and out[-1][-1] + 1 == s:
            out[-1].append(s)
        else:
            out.append([s])
    return out


def select_gpu(local_rank):
    """One GPU per rank on a node: rank r takes visible device r mod count (CUDA_VISIBLE_DEVICES
    applies, the driver lists only the visible ones). Returns the device id, or None."""
    from lsbench.gpu import available
    if not available():
        return None
    from numba import cuda
    dev = local_rank % len(cuda.gpus)
    cuda.select_device(dev)
    return dev


def place_rank(MPI, comm, backend):
    """This rank's GPU (by its rank on the node) and where it runs, as a record's placement."""
    node = comm.Split_type(MPI.COMM_TYPE_SHARED)
    local_rank = node.Get_rank()
    node.Free()
    device = select_gpu(local_rank) if backend.startswith("gpu") else None
    return {"host": host_info()["hostname"], "rank": comm.Get_rank(), "gpu": device,
            "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES")}
