"""`lsbench verify --replay`: a record's searches run again on the CPU from its own spec and seeds."""
from .errors import LsbenchError
from .runner import run_one

REPLAYABLE = ("tabu", "rots", "hc")  # searches whose CPU run is any backend's with the same seed


def replay(record, data=None, iterations=None):
    """The search run again on the CPU from the record's own spec and seed (each search's, for a
    record of K searches): the same seed gives the same trajectory on every backend, so the
    replayed improvements (iteration, objective), iteration count and best must be the
    record's; `iterations`: only the first N iterations (a prefix of a long run)."""
    path, spec = record.path, record.get("run_spec")
    if record["algorithm"] not in REPLAYABLE:
        raise LsbenchError(f"{path}: --replay replays {', '.join(REPLAYABLE)} searches, not {record['algorithm']}")
    if not isinstance(spec, dict) or not isinstance(spec.get("stop"), dict):
        raise LsbenchError(f"{path}: run_spec is not the object a run writes")
    entries = [("", record)] if "searches" not in record else \
        [(f"searches[{q}]: ", e) for q, e in enumerate(record["searches"])]
    for label, entry in entries:
        n = entry["iterations"] if iterations is None else min(int(iterations), entry["iterations"])
        try:
            again = run_one(record["problem"], record.instance_spec(data), record["algorithm"], "cpu",
                            record["neighbourhood"], seed=entry["seed"], iterations=max(n, 1),
                            target=spec["stop"].get("target"), problem_params=spec.get("problem_params"),
                            algorithm_params=spec.get("algorithm_params"), data=data, warmup=0)
        except LsbenchError as e:
            raise LsbenchError(f"{path}: {label}replay: {e}") from None
        want = [(it, obj) for it, _t, obj in entry["trajectory"] if it <= n]
        got = [(it, obj) for it, _t, obj in again["trajectory"] if it <= n]
        if got != want:
            first = next((k for k, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
            raise LsbenchError(f"{path}: {label}trajectory differs from the replayed search (seed "
                               f"{entry['seed']}) at improvement {first}: recorded "
                               f"{want[first] if first < len(want) else 'none'}, replayed "
                               f"{got[first] if first < len(got) else 'none'}")
        if iterations is None and (again["iterations"], again["best_objective"]) != \
                (entry["iterations"], entry["best_objective"]):
            raise LsbenchError(f"{path}: {label}iterations {entry['iterations']} and best "
                               f"{entry['best_objective']}, but the replayed search ran {again['iterations']} "
                               f"to {again['best_objective']}")
    return f"{len(entries)} search{'es' if len(entries) > 1 else ''} replayed on the CPU"
