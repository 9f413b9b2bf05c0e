"""`lsbench verify`: a record re-checked from scratch, away from the run that wrote it.

The instance is loaded again (its checksum checked), every solution's objective recomputed in
Python integers, the best-known value and gap, the trajectory and the counts, and a Pareto run's
front; every failure is one line naming the file and the field.
"""
from . import instances
from .errors import LsbenchError
from .problems import PROBLEMS
from .records import gap_percent, instance_digest, read_record, recheck, recheck_front


def verify_record(path, data=None):
    """Reload the instance, check its checksum, the solution, the objective (in Python integers)
    and the trajectory, from scratch. Every failure names the file."""
    try:
        return _verify(path, read_record(path), data)
    except (TypeError, ValueError, KeyError, IndexError) as e:  # a malformed field of an edited record
        raise LsbenchError(f"{path}: malformed record ({type(e).__name__}: {e})") from None


def _verify(path, rec, data):
    if rec["problem"] not in PROBLEMS:
        raise LsbenchError(f"{path}: unknown problem {rec['problem']!r}")
    declared = PROBLEMS[rec["problem"]].parameters
    given = rec.get("run_spec", {}).get("problem_params", rec["params"])
    params = {p.name: p.convert(given[p.name], rec["problem"]) for p in declared if p.name in given}
    spec = rec["instance"] if rec.get("instance_source") is None or instances.manifest().get(rec["instance"]) \
        else rec["instance_source"]
    try:
        prob = instances.load(spec, rec["problem"], data, params)
    except LsbenchError as e:
        raise LsbenchError(f"{path}: {e}") from None
    digest = instance_digest(prob)
    if digest != rec["instance_sha256"]:
        raise LsbenchError(f"{path}: instance_sha256 {rec['instance_sha256']} does not match the instance "
                           f"({digest})")
    try:
        recomputed = recheck(prob, prob.solution_from_list(rec["best_solution"]), rec["best_objective"])
        for entry in rec.get("searches", []):  # several searches in one run: every best solution
            recheck(prob, prob.solution_from_list(entry["best_solution"]), entry["best_objective"])
    except LsbenchError as e:
        raise LsbenchError(f"{path}: {e}") from None
    bks = instances.bks_of(prob)
    if rec["bks"] != bks:
        raise LsbenchError(f"{path}: bks {rec['bks']} differs from the registry's {bks}")
    gap = gap_percent(recomputed, bks)
    if gap != rec["gap_percent"] and not (gap is not None and rec["gap_percent"] is not None
                                          and abs(gap - rec["gap_percent"]) < 1e-6):
        raise LsbenchError(f"{path}: gap_percent {rec['gap_percent']} but recomputed {gap}")
    _check_trajectory(path, rec, prob)
    if "front" in rec:
        if [int(d) for d in rec["due_dates"]] != prob.due.tolist():
            raise LsbenchError(f"{path}: due_dates differ from the instance's")
        try:
            recheck_front(prob, [(p["solution"], p["objectives"]) for p in rec["front"]])
        except LsbenchError as e:
            raise LsbenchError(f"{path}: {e}") from None
        sums = [sum(int(w) * int(v) for w, v in zip(prob.weights, p["objectives"])) for p in rec["front"]]
        if min(sums) != recomputed:
            raise LsbenchError(f"{path}: best_objective {recomputed} is not the least weighted sum over the front "
                               f"({min(sums)})")
    return f"{rec['instance']} best {recomputed} re-checked" + (f", gap {gap:.3f}%" if gap is not None else "")


def _check_trajectory(path, rec, prob):
    """Non-empty, iterations in order, each point an improvement, ending at the best; the counts
    agree with it (evaluations = iterations x neighbourhood size)."""
    traj = rec["trajectory"]
    if not traj:
        raise LsbenchError(f"{path}: empty trajectory (a run records at least its start)")
    its = [int(point[0]) for point in traj]
    values = [point[2] for point in traj]
    if its != sorted(its) or its[-1] > rec["iterations"]:
        raise LsbenchError(f"{path}: trajectory iterations out of order or past iterations={rec['iterations']}")
    if any(b >= a for a, b in zip(values, values[1:])):
        raise LsbenchError(f"{path}: trajectory objectives do not improve at every point")
    if prob.integer and values[-1] != rec["best_objective"]:
        raise LsbenchError(f"{path}: trajectory ends at {values[-1]}, best_objective is {rec['best_objective']}")
    size = rec.get("neighbourhood_size")
    if size and rec["evaluations"] != rec["iterations"] * size:
        raise LsbenchError(f"{path}: evaluations {rec['evaluations']} != iterations {rec['iterations']} x "
                           f"neighbourhood size {size}")
