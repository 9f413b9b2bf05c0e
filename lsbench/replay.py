"""`lsbench verify --replay`: a record's searches run again on the CPU from its own spec and seeds."""
from .errors import LsbenchError
from .runner import run_one

REPLAYABLE = ("tabu", "rots", "hc", "pls", "ig", "cas", "sample")  # a seed's CPU run is every backend's


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
    if "searches" in record and ((record.get("params") or {}).get("restart")
                                 or (spec.get("algorithm_params") or {}).get("restart")):
        raise LsbenchError(f"{path}: --replay: its searches restart from each other's elite solutions (restart), so "
                           "no one search can be run again alone")
    if (record.get("params") or {}).get("first_searches_cut"):
        raise LsbenchError(f"{path}: --replay: the time budget ended its first local searches part way, where no "
                           "count of iterations ends a replay")
    if record["algorithm"] == "pls":
        return replay_front(record, spec, data, iterations)
    entries = [("", record)] if "searches" not in record else \
        [(f"searches[{q}]: ", e) for q, e in enumerate(record["searches"])]
    alone = []  # per search, the iterations replayed
    for label, entry in entries:
        n = min(alone_until(record, entry), entry["iterations"] if iterations is None else int(iterations))
        alone.append(n)
        again = cpu_run(record, spec, entry["seed"], n, data, label)
        want = [(it, obj) for it, _t, obj in entry["trajectory"] if it <= n]
        got = [(it, obj) for it, _t, obj in again["trajectory"] if it <= n]
        if got != want:
            first = next((k for k, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
            raise LsbenchError(f"{path}: {label}trajectory differs from the replayed search (seed "
                               f"{entry['seed']}) at improvement {first}: recorded "
                               f"{want[first] if first < len(want) else 'none'}, replayed "
                               f"{got[first] if first < len(got) else 'none'}")
        if n < entry["iterations"]:
            continue  # a prefix: the counts and best of the whole search are not the prefix's
        if "evaluations" in entry and again["evaluations"] != entry["evaluations"]:
            raise LsbenchError(f"{path}: {label}evaluations {entry['evaluations']}, but the replayed search made "
                               f"{again['evaluations']}")
        if (again["iterations"], again["best_objective"]) != (entry["iterations"], entry["best_objective"]):
            raise LsbenchError(f"{path}: {label}iterations {entry['iterations']} and best "
                               f"{entry['best_objective']}, but the replayed search ran {again['iterations']} "
                               f"to {again['best_objective']}")
    done = f"{len(entries)} search{'es' if len(entries) > 1 else ''} replayed on the CPU"
    if any(alone_until(record, e) < e["iterations"] for _label, e in entries):
        done += f" up to iteration {min(alone)}, where another island's solution entered"
    return done


def alone_until(record, entry):
    """The iterations a search ran from its own seed alone: an island's search takes another
    island's solution at the end of its first epoch (--exchange-every islands), or when one
    restarts it (live islands); after that no search of its seed alone reproduces it."""
    islands = (record.get("params") or {}).get("islands") or {}
    if len(record.get("epoch_seeds", [])) > 1:
        return islands["exchange_every"] - 1  # (epoch 1's start is recorded at its first iteration)
    restarts = (entry.get("islands") or record.get("islands") or {}).get("restarted_from") or []
    if restarts:
        return min(it for it, _cost, _source in restarts) - 1
    return entry["iterations"]


def cpu_run(record, spec, seed, iterations, data, label=""):
    """The record's search with `seed`, run again on the CPU for `iterations` iterations."""
    try:
        return run_one(record["problem"], record.instance_spec(data), record["algorithm"], "cpu",
                       record["neighbourhood"], seed=seed, iterations=iterations,
                       target=spec["stop"].get("target"), problem_params=spec.get("problem_params"),
                       algorithm_params=spec.get("algorithm_params"), data=data, warmup=0)
    except LsbenchError as e:
        raise LsbenchError(f"{record.path}: {label}replay: {e}") from None


def replay_front(record, spec, data, iterations):
    """A Pareto local search run again on the CPU: the archive's size after each iteration, and
    (the whole run) its iterations and front (each point's solution and objectives), must be the
    record's."""
    path = record.path
    n = record["iterations"] if iterations is None else min(int(iterations), record["iterations"])
    again = cpu_run(record, spec, record["seed"], n, data)
    want = [tuple(p) for p in record["archive_sizes"] if p[0] <= n]
    got = [tuple(p) for p in again["archive_sizes"] if p[0] <= n]
    if got != want:
        first = next((k for k, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
        raise LsbenchError(f"{path}: the archive differs from the replayed search (seed {record['seed']}) at entry "
                           f"{first} (iteration, size): recorded {want[first] if first < len(want) else 'none'}, "
                           f"replayed {got[first] if first < len(got) else 'none'}")
    if iterations is None:
        def points(front):
            return sorted((tuple(p["objectives"]), tuple(p["solution"])) for p in front)
        if again["iterations"] != record["iterations"] or points(again["front"]) != points(record["front"]):
            raise LsbenchError(f"{path}: iterations {record['iterations']} and a front of {len(record['front'])} "
                               f"points, but the replayed search ran {again['iterations']} to a different front of "
                               f"{len(again['front'])} points")
    return "the Pareto local search replayed on the CPU"
