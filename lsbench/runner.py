"""One run: build problem, neighbourhood, evaluator and search; re-check; write the record."""
import time

from . import instances as registry
from .backends import get_evaluator
from .errors import LsbenchError
from .records import gap_percent, host_info, read_record, recheck, versions, write_atomic
from .search import ALGORITHMS
from .search.common import Progress, Stop


def run_one(problem, instance, algorithm="tabu", backend="cpu", neighbourhood=None, seed=1,
            iterations=None, evaluations=None, seconds=None, target=None, problem_params=None,
            algorithm_params=None, backend_params=None, data=None, out=None, progress=False, threads=None,
            searches=1, warmup=2, initial=None):
    if algorithm not in ALGORITHMS:
        raise LsbenchError(f"--algorithm: unknown algorithm {algorithm!r} (known: {', '.join(ALGORITHMS)})")
    if seed is None or seed < 0:
        raise LsbenchError(f"--seed: must be a non-negative integer, got {seed}")
    if warmup is None or warmup < 0:
        raise LsbenchError(f"--warmup: must be a non-negative number of iterations, got {warmup}")
    stop = Stop(iterations, evaluations, seconds, target)
    if backend == "gpu-resident" and algorithm != "cas":
        if initial is not None:
            raise LsbenchError("--backend gpu-resident draws its own start solutions")
        return _run_resident(problem, instance, algorithm, seed, stop, problem_params, algorithm_params,
                             backend_params, data, out, progress, searches, neighbourhood)
    if searches != 1:
        raise LsbenchError("--searches: several searches in one run need --backend gpu-resident --algorithm rots "
                           "(or use `lsbench multistart`)")
    evaluator = get_evaluator(backend, **({"threads": threads} if threads else {}), **(backend_params or {}))
    prob = registry.load(instance, problem, data, problem_params)
    nb = prob.neighbourhood(neighbourhood)
    try:
        search = ALGORITHMS[algorithm](**(algorithm_params or {}))
    except TypeError as e:
        raise LsbenchError(f"--param: not a parameter of {algorithm}: {e}")
    if initial is not None:
        if algorithm == "cas":
            raise LsbenchError("an initial solution is for single-trajectory searches (tabu, rots, hc), not cas")
        search.initial = initial  # the warm-up starts there too: same code path, untimed
    evaluator.bind(prob, nb)
    if getattr(evaluator, "is_worker", False):  # a COW worker rank: evaluate slices until told to stop
        evaluator.serve()
        return None
    try:
        # warm-up: JIT compilation (and GPU launch tuning) happen here, outside the timed run
        tw = time.perf_counter()
        warm, warm_stop = search, Stop(iterations=warmup)
        if algorithm == "cas":  # the colony's own size (the GPU's kernel shape follows it), short local searches,
            # the start batch and `warmup` generations
            warm = ALGORITHMS[algorithm](**{**(algorithm_params or {}), "ls_iterations": 2})
            warm_stop = Stop(iterations=(warmup + 1) * 2 * warm.params(prob)["ants"])
        if warmup:
            warm.run(prob, nb, evaluator, warm_stop, seed, None)
        warmup_s = time.perf_counter() - tw
        if hasattr(evaluator, "timer"):  # the time split covers the timed run only
            evaluator.timer = type(evaluator.timer)()
        t0 = time.perf_counter()
        label = f"{prob.name} {algorithm}/{backend} seed {seed}"
        result = search.run(prob, nb, evaluator, stop, seed, Progress(label, enabled=progress))
        wall = time.perf_counter() - t0
    finally:
        if hasattr(evaluator, "close"):  # distributed backends: release workers, also on errors
            evaluator.close()
    backend_info = evaluator.describe()
    split = backend_info.get("time_split", {})
    if "communication_s" in split:  # distributed: what is left of the wall time is the master's
        split["master_s"] = round(max(0.0, wall - split["evaluation_s"] - split["communication_s"]), 6)
    record = _record(prob, nb, algorithm, backend, backend_info, seed, result, stop, wall, warmup_s,
                     problem_params, backend_params)
    if out:
        write_atomic(out, record)
    return record


def _record(prob, nb, algorithm, backend, backend_info, seed, result, stop, wall, warmup_s, problem_params,
            backend_params):
    """The run record, its best solution re-checked from scratch."""
    best = recheck(prob, result["best_solution"], result["best_objective"])
    bks = registry.bks_of(prob)
    record = {
        "problem": prob.kind, "instance": prob.name, "instance_source": prob.source,
        "instance_sha256": prob.sha256 or _generated_digest(prob),
        "algorithm": algorithm, "neighbourhood": nb.name, "neighbourhood_size": nb.size,
        "backend": backend, "backend_info": backend_info, "seed": seed,
        "params": {**result["params"], **(problem_params or {}), **(backend_params or {}),
                   "stop": {k: v for k, v in vars(stop).items() if v is not None}},
        "host": host_info(), "versions": versions(),
        "iterations": result["iterations"], "evaluations": result["evaluations"], "wall_s": round(wall, 6),
        "warmup_s": round(warmup_s, 6),
        "iterations_per_s": round(result["iterations"] / wall, 3) if wall > 0 else None,
        "best_objective": best, "best_solution": prob.solution_to_list(result["best_solution"]),
        "final_objective": result["final_objective"],
        "trajectory": result["trajectory"], "bks": bks, "gap_percent": gap_percent(best, bks),
    }
    if hasattr(prob, "objectives"):
        record["objectives"] = prob.objectives(result["best_solution"])
    return record


def _run_resident(problem, instance, algorithm, seed, stop, problem_params, algorithm_params, backend_params,
                  data, out, progress, searches, neighbourhood=None):
    """The device-resident fast path: QAP Ro-TS as K searches (seeds seed..seed+K-1) in K thread
    blocks, the record being the best search's with every search's result (each re-checked) under
    `searches`; or one PFSP insertion tabu search over the whole GPU."""
    from lsbench.gpu.resident import ResidentRots
    if algorithm not in ("rots", "tabu"):
        raise LsbenchError(f"--backend gpu-resident: runs --algorithm rots (QAP), tabu (PFSP, TSP, PPP) or cas (QAP), "
                           f"not {algorithm}")
    if searches is None or searches < 1:
        raise LsbenchError(f"--searches: must be at least 1, got {searches}")
    prob = registry.load(instance, problem, data, problem_params)
    if algorithm == "tabu" and prob.kind in ("tsp", "ppp"):
        return _run_resident_grid(prob, seed, stop, problem_params, algorithm_params, backend_params, out,
                                  progress, searches, neighbourhood)
    if algorithm == "tabu":
        return _run_resident_pfsp(prob, seed, stop, problem_params, algorithm_params, backend_params, out,
                                  progress, searches, neighbourhood)
    if prob.kind != "qap":
        raise LsbenchError("--backend gpu-resident: robust tabu search is defined for QAP only")
    nb = prob.neighbourhood("swap")
    try:
        search = ALGORITHMS[algorithm](**(algorithm_params or {}))
    except TypeError as e:
        raise LsbenchError(f"--param: not a parameter of {algorithm}: {e}")
    shape = backend_params or {}
    unknown = set(shape) - {"block", "cluster", "split"}
    if unknown:
        raise LsbenchError(f"--param {', '.join(sorted(unknown))}: not a parameter of the gpu-resident backend")
    engine = ResidentRots(prob, search.params(prob), threads=shape.get("block"), cluster=shape.get("cluster"),
                          split=shape.get("split"))
    tw = time.perf_counter()
    engine.run([seed], Stop(iterations=2))  # JIT compile outside the timed run
    warmup_s = time.perf_counter() - tw
    seeds = list(range(seed, seed + searches))
    t0 = time.perf_counter()
    results = engine.run(seeds, stop, Progress(f"{prob.name} rots/gpu-resident x{searches}", enabled=progress))
    wall = time.perf_counter() - t0
    every = []
    for s, r in zip(seeds, results):
        every.append({"seed": s, "best_objective": recheck(prob, r["best_solution"], r["best_objective"]),
                      "best_solution": prob.solution_to_list(r["best_solution"]), "iterations": r["iterations"],
                      "final_objective": r["final_objective"], "trajectory": r["trajectory"]})
    top = min(range(searches), key=lambda q: (results[q]["best_objective"], q))
    info = {**engine.describe(), "searches": searches, "kernel_s": round(engine.kernel_s, 6)}
    record = _record(prob, nb, algorithm, "gpu-resident", info, seed, results[top], stop, wall, warmup_s,
                     problem_params, backend_params)
    total = sum(r["iterations"] for r in results)
    record.update({"best_seed": seeds[top], "searches": every,
                   "aggregate_iterations": total,
                   "aggregate_iterations_per_s": round(total / wall, 3) if wall > 0 else None})
    if out:
        write_atomic(out, record)
    return record


def _run_resident_pfsp(prob, seed, stop, problem_params, algorithm_params, backend_params, out, progress, searches,
                       neighbourhood):
    """One PFSP insertion tabu search (makespan) run entirely on the GPU, over all its SMs."""
    from lsbench.gpu.resident_pfsp import ResidentPfspTabu
    if prob.kind != "pfsp":
        raise LsbenchError(f"--backend gpu-resident --algorithm tabu: runs PFSP (insertion), not {prob.kind}")
    if neighbourhood not in (None, "insertion"):
        raise LsbenchError(f"--neighbourhood: the PFSP fast path searches the insertion neighbourhood, "
                           f"not {neighbourhood}")
    if searches != 1:
        raise LsbenchError("--searches: the PFSP fast path runs one search over the whole GPU (use `lsbench "
                           "multistart` for several)")
    unknown = set(backend_params or {}) - {"block"}
    if unknown:
        raise LsbenchError(f"--param {', '.join(sorted(unknown))}: not a parameter of the gpu-resident backend")
    nb = prob.neighbourhood("insertion")
    try:
        search = ALGORITHMS["tabu"](**(algorithm_params or {}))
    except TypeError as e:
        raise LsbenchError(f"--param: not a parameter of tabu: {e}")
    engine = ResidentPfspTabu(prob, search.params(nb), threads=(backend_params or {}).get("block"))
    return _run_whole_gpu_search(engine, prob, nb, seed, stop, problem_params, backend_params, out, progress)


def _run_resident_grid(prob, seed, stop, problem_params, algorithm_params, backend_params, out, progress, searches,
                       neighbourhood):
    """One TSP or PPP tabu search over the whole GPU: each iteration's moves evaluated by every
    thread of the grid and reduced on the device in two stages."""
    from lsbench.gpu.resident_grid import ResidentGridTabu
    if searches != 1:
        raise LsbenchError(f"--searches: the {prob.kind} fast path runs one search over the whole GPU (use `lsbench "
                           "multistart` for several)")
    unknown = set(backend_params or {}) - {"block", "blocks"}
    if unknown:
        raise LsbenchError(f"--param {', '.join(sorted(unknown))}: not a parameter of the gpu-resident backend")
    nb = prob.neighbourhood(neighbourhood)
    try:
        search = ALGORITHMS["tabu"](**(algorithm_params or {}))
    except TypeError as e:
        raise LsbenchError(f"--param: not a parameter of tabu: {e}")
    bp = backend_params or {}
    engine = ResidentGridTabu(prob, nb, search.params(nb), threads=bp.get("block"), blocks=bp.get("blocks"))
    return _run_whole_gpu_search(engine, prob, nb, seed, stop, problem_params, backend_params, out, progress)


def _run_whole_gpu_search(engine, prob, nb, seed, stop, problem_params, backend_params, out, progress):
    """Compile (two untimed iterations), run one tabu search on the device, write its record."""
    tw = time.perf_counter()
    engine.run(seed, Stop(iterations=2))
    warmup_s = time.perf_counter() - tw
    t0 = time.perf_counter()
    result = engine.run(seed, stop, Progress(f"{prob.name} tabu/gpu-resident", enabled=progress))
    wall = time.perf_counter() - t0
    info = {**engine.describe(), "kernel_s": round(engine.kernel_s, 6)}
    record = _record(prob, nb, "tabu", "gpu-resident", info, seed, result, stop, wall, warmup_s, problem_params,
                     backend_params)
    if out:
        write_atomic(out, record)
    return record


def _generated_digest(prob):
    """Generated instances: the digest of the generator description (stable, checkable)."""
    import hashlib
    desc = repr(sorted(prob.describe().items()))
    return "generated:" + hashlib.sha256(desc.encode()).hexdigest()


def verify_record(path, data=None):
    """Reload the instance, check its checksum, the solution and the objective, from scratch."""
    rec = read_record(path)
    params = {k: rec["params"][k] for k in ("objective", "weights", "precision", "neighbours", "b", "h", "terms")
              if k in rec["params"]}
    if "weights" in params:
        params["weights"] = tuple(params["weights"])
    spec = rec["instance"] if rec.get("instance_source") is None or registry.manifest().get(rec["instance"]) \
        else rec["instance_source"]
    prob = registry.load(spec, rec["problem"], data, params)
    digest = prob.sha256 or _generated_digest(prob)
    if digest != rec["instance_sha256"]:
        raise LsbenchError(f"{path}: instance_sha256 {rec['instance_sha256']} does not match the instance "
                           f"({digest})")
    sol = prob.solution_from_list(rec["best_solution"])
    recomputed = recheck(prob, sol, rec["best_objective"])
    bks = registry.bks_of(prob)
    if rec["bks"] != bks:
        raise LsbenchError(f"{path}: bks {rec['bks']} differs from the registry's {bks}")
    gap = gap_percent(recomputed, bks)
    if gap != rec["gap_percent"] and not (gap is not None and rec["gap_percent"] is not None
                                          and abs(gap - rec["gap_percent"]) < 1e-6):
        raise LsbenchError(f"{path}: gap_percent {rec['gap_percent']} but recomputed {gap}")
    for entry in rec.get("searches", []):  # gpu-resident runs keep every search's best solution
        recheck(prob, prob.solution_from_list(entry["best_solution"]), entry["best_objective"])
    traj = rec["trajectory"]
    if traj and traj[-1][2] != rec["best_objective"] and prob.integer:
        raise LsbenchError(f"{path}: trajectory ends at {traj[-1][2]}, best_objective is {rec['best_objective']}")
    return f"{rec['instance']} best {recomputed} re-checked" + (f", gap {gap:.3f}%" if gap is not None else "")
