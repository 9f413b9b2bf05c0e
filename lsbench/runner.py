"""One run: RunSpec -> engine -> SearchResults -> re-checked record (written atomically).

Every run takes this path, from the CLI, a workflow job or a multistart rank. The registry picks
the engine for the spec's (algorithm, backend): a whole-search engine, or a search algorithm over
the backend's evaluator (SearchOverEvaluator). Nothing here depends on which backend it is.
"""
import time

from . import instances
from .engines.over_evaluator import SearchOverEvaluator
from .errors import LsbenchError
from .files import release, reserve
from .record import Record
from .registry import ALGORITHMS, EVALUATORS, engine_path, load_class
from .search.common import Progress
from .spec import build_spec


def run_one(problem, instance, algorithm="tabu", backend="cpu", neighbourhood=None, seed=1, iterations=None,
            evaluations=None, seconds=None, target=None, problem_params=None, algorithm_params=None,
            backend_params=None, data=None, out=None, progress=False, threads=None, searches=1, warmup=2,
            initial=None):
    """build_spec then run, for callers that hold the parameters apart (tests, benchmarks)."""
    params = {**(problem_params or {}), **(algorithm_params or {}), **(backend_params or {})}
    spec = build_spec(instance, problem, algorithm, backend, neighbourhood, seed, iterations, evaluations, seconds,
                      target, params, threads, searches, warmup, data, out, initial)
    return run(spec, progress)


def make_engine(spec, prob, nb):
    """The registry's engine for the spec, set up for this problem (data on devices, workers up)."""
    search = ALGORITHMS[spec.algorithm](**spec.algorithm_params)
    path = engine_path(spec.algorithm, spec.backend, prob.kind)
    if path is None:
        evaluator = load_class(EVALUATORS[spec.backend])(threads=spec.threads, **spec.backend_params)
        engine = SearchOverEvaluator(prob, nb, search, evaluator)
    else:
        engine = load_class(path)(prob, nb, search, spec.backend_params, spec.threads)
    if spec.searches > 1 and not engine.several_searches:
        engine.close()
        raise LsbenchError(f"--searches {spec.searches}: {spec.algorithm} on {spec.backend} runs one search a "
                           "run (use `lsbench multistart`, or --backend gpu-resident --algorithm rots)")
    if spec.initial is not None:
        if not engine.takes_initial:
            engine.close()
            raise LsbenchError(f"an initial solution: {spec.algorithm} on {spec.backend} draws its own start")
        search.initial = list(spec.initial)  # the warm-up starts there too: same code path, untimed
    return engine


def run(spec, progress=False, migration=None, start_gate=None):
    """Run the spec; returns its record (None on a worker rank, whose searching rank reports).
    `migration` (lsbench.search.islands): the run is one island of a ring; `start_gate`: called
    after the warm-up, before the timed searches (MPI ranks start together)."""
    if spec.out:
        reserve(spec.out)
    try:
        return _run(spec, progress, migration, start_gate)
    finally:
        if spec.out:
            release(spec.out)


def _run(spec, progress, migration, start_gate=None):
    prob = instances.load(spec.instance, spec.problem, spec.data_dir, spec.problem_params)
    nb = prob.neighbourhood(spec.neighbourhood)
    engine = make_engine(spec, prob, nb)
    if migration is not None and not engine.takes_migration:
        engine.close()
        raise LsbenchError(f"--exchange-every: {spec.algorithm} on {spec.backend} cannot take other islands' "
                           "solutions while it runs")
    if engine.is_worker:  # e.g. a COW worker rank: evaluate slices until told to stop
        engine.serve()
        return None
    seeds = list(range(spec.seed, spec.seed + spec.searches))
    try:
        tw = time.perf_counter()
        engine.warm_up(seeds, spec.warmup)
        warmup_s = time.perf_counter() - tw
        if migration is not None:  # islands start their timed runs together
            migration.start()
        if start_gate is not None:
            start_gate()
        label = f"{prob.name} {spec.algorithm}/{spec.backend} seed {spec.seed}" + \
            (f" x{spec.searches}" if spec.searches > 1 else "")
        t0, started = time.perf_counter(), time.time()
        live = {"migration": migration} if migration is not None else {}
        results = engine.run(seeds, spec.stop, Progress(label, enabled=progress), **live)
        wall = time.perf_counter() - t0
        interval = [round(started, 6), round(started + wall, 6)]  # epoch seconds: runs of several ranks line up
        info = engine.describe()
    finally:
        engine.close()  # distributed backends: release workers, also on errors
    record = Record.of_run(spec, prob, nb, info, results, wall, warmup_s)
    record["timed_interval"] = interval
    if spec.out:
        record.write(spec.out)
    return record
