"""Evaluator backends: who evaluates the neighbourhood each iteration (the iteration level).

Every backend implements: bind(problem, neighbourhood), reset(solution), evaluate() -> deltas of
all moves, apply(move). `get_evaluator(name)` builds one by name; GPU, COW and grid backends live
in `gpu/` and `hpc/` and are imported only when asked for.
"""
from ..errors import LsbenchError
from .cpu import CpuEvaluator, CpuParallelEvaluator

BACKENDS = {
    "cpu": CpuEvaluator,
    "cpu-parallel": CpuParallelEvaluator,
}


def get_evaluator(name, **options):
    if name == "gpu":
        from lsbench.gpu.evaluator import GpuEvaluator
        return GpuEvaluator(**options)
    if name == "gpu-resident":  # reached for cas; rots takes runner._run_resident
        from lsbench.gpu.resident import ResidentLocalSearch
        return ResidentLocalSearch(**options)
    if name == "cow":
        from lsbench.hpc.cow import CowEvaluator
        return CowEvaluator(**options)
    if name == "grid":
        from lsbench.hpc.grid import GridEvaluator
        return GridEvaluator(**options)
    if name not in BACKENDS:
        raise LsbenchError(f"--backend: unknown backend {name!r} (known: {', '.join(BACKENDS)}, gpu, gpu-resident, cow, grid)")
    return BACKENDS[name](**options)
