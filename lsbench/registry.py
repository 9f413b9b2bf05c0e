"""What runs where: algorithms, backends, and the engine for each (algorithm, backend) pair.

An iteration-level backend (cpu, cpu-parallel, gpu, cow, grid) is an Evaluator; the search
algorithms tabu, rots and hc run over any of them (`SearchOverEvaluator`). Whole-search engines
are listed by (algorithm, backend), with one class per problem kind where the problem decides.
Classes are named as "module:Class" and imported only when a run needs them, so `import lsbench`
pulls in no CUDA, MPI or Dask.
"""
from .errors import LsbenchError
from .gpu.adapters import has_adapter
from .lazy import LazyClasses, load_class
from .problems import PROBLEMS


ALGORITHMS = LazyClasses({"tabu": "lsbench.search.tabu:TabuSearch", "rots": "lsbench.search.tabu:RobustTabuSearch",
                          "hc": "lsbench.search.hill_climbing:HillClimbing",
                          "cas": "lsbench.engines.cas:CunningAntSystem", "pls": "lsbench.search.pls:ParetoLocalSearch",
                          "ig": "lsbench.engines.iterated_greedy:IteratedGreedy",
                          "sample": "lsbench.engines.sampling:RandomSampling"})

GPU_BACKENDS = {"gpu", "gpu-resident"}  # the backends that need a CUDA GPU on the host that runs the search

EVALUATORS = {
    "cpu": "lsbench.backends.cpu:CpuEvaluator",
    "cpu-parallel": "lsbench.backends.cpu:CpuParallelEvaluator",
    "gpu": "lsbench.gpu.iteration.evaluator:GpuEvaluator",
    "cow": "lsbench.hpc.cow:CowEvaluator",
    "grid": "lsbench.hpc.dask_grid:DaskGridEvaluator",
}
SEARCHES_OVER_EVALUATORS = ("tabu", "rots", "hc", "pls")
ENGINES = {
    ("rots", "gpu-resident"): "lsbench.gpu.engine.robust_tabu:ResidentRotsEngine",
    ("tabu", "gpu-resident"): {},
    ("hc", "gpu-resident"): {},
    ("cas", "cpu"): "lsbench.engines.cas:HostColony",
    ("cas", "cpu-parallel"): "lsbench.engines.cas:ParallelHostColony",
    ("cas", "gpu-resident"): "lsbench.gpu.engine.colony:DeviceColony",
    ("ig", "cpu"): "lsbench.engines.iterated_greedy:IteratedGreedyEngine",
    ("ig", "cpu-parallel"): "lsbench.engines.iterated_greedy:ParallelIteratedGreedyEngine",
    ("ig", "gpu-resident"): "lsbench.gpu.engine.iterated_greedy:DeviceIteratedGreedyEngine",
    ("sample", "cpu"): "lsbench.engines.sampling:SamplingEngine",
    ("sample", "gpu"): "lsbench.gpu.solution.sampling:SolutionLevelEngine",
}
# these run on the resident local search engine for every other problem with a device adapter
# (lsbench.gpu.adapters.ADAPTERS)
ON_ADAPTERS = {("hc", "gpu-resident"), ("tabu", "gpu-resident")}
LOCAL_SEARCH_ENGINE = "lsbench.gpu.engine.local_search:ResidentLocalSearchEngine"
BACKENDS = tuple(EVALUATORS) + ("gpu-resident",)
BACKEND_HELP = {
    "cpu": "one core, Numba njit (searches that can run their whole loop compiled do)",
    "cpu-parallel": "the neighbourhood on all cores (Numba prange)",
    "gpu": "the neighbourhood on the GPU each iteration (Luong et al.'s iteration level)",
    "cow": "the neighbourhood split over MPI ranks (start under mpiexec)",
    "grid": "the neighbourhood split over Dask workers",
    "gpu-resident": "the whole search on the GPU (many searches at once for rots)",
}


def get_evaluator(name, **options):
    """An evaluator by backend name, built with its options (tests and benchmarks use this)."""
    return load_class(EVALUATORS[name])(**options)


def check_names(algorithm, backend):
    if algorithm not in ALGORITHMS:
        raise LsbenchError(f"--algorithm: unknown algorithm {algorithm!r} (known: {', '.join(ALGORITHMS)})")
    if backend not in BACKENDS:
        raise LsbenchError(f"--backend: unknown backend {backend!r} (known: {', '.join(BACKENDS)})")


def runs_on(algorithm, problem):
    """Whether the algorithm is defined for the problem kind."""
    kinds = getattr(ALGORITHMS[algorithm], "problems", None)
    return kinds is None or problem in kinds


def _lookup(algorithm, backend, problem):
    """(exists, "module:Class" of the engine or None for a search over the evaluator)."""
    if not runs_on(algorithm, problem):
        return False, None
    entry = ENGINES.get((algorithm, backend))
    if isinstance(entry, dict):
        entry = entry.get(problem)
        if entry is None and (algorithm, backend) in ON_ADAPTERS and has_adapter(problem):
            entry = LOCAL_SEARCH_ENGINE
        return entry is not None, entry
    if entry is not None:
        return True, entry
    return algorithm in SEARCHES_OVER_EVALUATORS and backend in EVALUATORS, None


def engine_path(algorithm, backend, problem):
    """The engine's "module:Class" for this run, or None where the algorithm runs over the
    backend's evaluator; raises one line where the combination does not exist."""
    check_names(algorithm, backend)
    if not runs_on(algorithm, problem):
        raise LsbenchError(f"--algorithm {algorithm}: defined for {', '.join(ALGORITHMS[algorithm].problems)}, "
                           f"not {problem}")
    exists, path = _lookup(algorithm, backend, problem)
    if not exists:
        raise LsbenchError(f"--algorithm {algorithm} on {problem} does not run on --backend {backend} "
                           f"(it runs on: {', '.join(backends_of(algorithm, problem))})")
    return path


def backend_class(algorithm, backend, problem):
    """The class that declares the backend's parameters for this run: the engine, or the evaluator."""
    path = engine_path(algorithm, backend, problem)
    return load_class(path or EVALUATORS[backend])


def backends_of(algorithm, problem):
    return [b for b in BACKENDS if _lookup(algorithm, b, problem)[0]]


def combinations():
    """Every (problem, algorithm, backend) that runs."""
    return [(p, a, b) for p in PROBLEMS for a in ALGORITHMS for b in BACKENDS if _lookup(a, b, p)[0]]


# (algorithm, backend asked for, problem) -> (measured faster backend, the run settings it needs, the
# "module:function" that says where the measured kernel refuses an instance, or None)
FASTER = {
    ("rots", "gpu", "qap"): ("gpu-resident", {}, None),
    ("tabu", "gpu", "pfsp"): ("gpu-resident", {"neighbourhood": "insertion", "objective": "makespan"},
                             "lsbench.gpu.engine.resident_pfsp:refusal"),
}


def faster_backend(spec, gpu_here, problem):
    """A backend measured faster than the one the spec asks for, running the same search (same
    trajectory), if this host can run it on `problem` (FASTER's refusal says where the measured kernel
    cannot): the resident engines run these searches far faster than the iteration-level `gpu`,
    whose per-iteration launches and copies dominate (docs/performance.md)."""
    better, needs, refusal = FASTER.get((spec.algorithm, spec.backend, spec.problem), (None, {}, None))
    if better is None or (better.startswith("gpu") and not gpu_here):
        return None
    settings = {"neighbourhood": spec.neighbourhood, **spec.params()}
    if any(settings.get(k, v) != v for k, v in needs.items()):
        return None
    if not _lookup(spec.algorithm, better, spec.problem)[0]:
        return None
    return None if refusal and load_class(refusal)(problem) else better
