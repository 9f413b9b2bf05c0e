"""The run record: one type that is made from a run's results, split into one record per search,
merged over an island's epochs, and verified from scratch (`lsbench verify`).

A `Record` is the JSON object itself (a dict), so it travels through MPI and Dask and is written
as it is. Its best objective and the gap to the best-known value are set in one place
(`set_best`), and every solution in it is re-checked from scratch before it is written.
"""
import hashlib
import math
import os

import numpy as np

from . import instances
from .errors import LsbenchError
from .files import read_json, write_or_keep
from .problems import PROBLEMS
from .provenance import host_info, versions
from .registry import ALGORITHMS, BACKENDS

# the record's layout: 1 since lsbench 0.3.0; a record without the field (0.2.0 and before) reads as 0,
# the same fields. A record of another version is refused in one line, not half read.
SCHEMA_VERSION = 1
KNOWN_SCHEMA_VERSIONS = (0, 1)
FLOAT_RTOL = 1e-9  # float objectives: recomputation must agree to this relative tolerance
REQUIRED = ("problem", "instance", "instance_sha256", "algorithm", "backend", "seed", "params", "host",
            "versions", "iterations", "evaluations", "wall_s", "best_objective", "best_solution",
            "trajectory", "bks", "gap_percent")
# algorithms whose iterations do not each evaluate the whole neighbourhood (an iterated greedy
# iteration counts its destruction's and reconstruction's insertions), so their evaluations are their own count
PARTIAL_SWEEPS = ("ig",)
STOPPED_BY_ITERATIONS = ("tabu", "rots", "hc")  # their iterations are the stop's (a cas stop counts generations)
ONE_SOLUTION_AN_ITERATION = ("sample",)  # no neighbourhood: each iteration evaluates one solution
# a several-searches run's own fields, which a per-search record does not carry
SEVERAL = ("searches", "best_seed", "aggregate_iterations", "aggregate_iterations_per_s")



def gap_percent(best, bks):
    if bks is None:
        return None
    if bks == 0:
        return 0.0 if best == 0 else None
    return round(100.0 * (best - bks) / abs(bks), 6)


def rate(count, seconds):
    return round(count / seconds, 3) if seconds > 0 else None


def rate_agrees(recorded, count, seconds):
    """Whether a recorded rate is count / seconds (`rate` rounds it to 3 decimals, and takes it before
    seconds are rounded to the microsecond: within those roundings and 0.1 %)."""
    if seconds == 0:
        return recorded is None
    return type(recorded) in (int, float) and math.isclose(recorded, count / seconds, rel_tol=1e-3 + 1e-6 / seconds,
                                                           abs_tol=5e-4)


def instance_digest(prob):
    """The instance's sha256, or for a generated one the digest of its generator description
    (stable, checkable)."""
    if prob.sha256:
        return prob.sha256
    return "generated:" + hashlib.sha256(repr(sorted(prob.describe().items())).encode()).hexdigest()


def recheck(problem, solution, reported, where=""):
    """Validate the solution and recompute its objective from scratch, in Python integers for
    integer problems (independent of the compiled code); return the recomputed value. A bad solution
    or a mismatch is one line naming the field (`where` + best_solution or best_objective)."""
    try:
        problem.check_solution(solution)
    except LsbenchError as e:
        raise LsbenchError(f"{where}best_solution: {str(e).removeprefix('solution: ')}") from None
    value = problem.exact_objective(solution)
    if problem.integer:
        same, value = int(value) == int(reported), int(value)
    else:
        same, value = math.isclose(value, reported, rel_tol=FLOAT_RTOL, abs_tol=1e-12), float(value)
    if not same:
        raise LsbenchError(f"{where}best_objective {reported}, but its solution evaluates to {value}")
    return value


def recheck_before_writing(check, *args):
    """`check(*args)` (recheck, recheck_front) for a record about to be written: a mismatch there is
    the code's fault, and nothing is written."""
    try:
        return check(*args)
    except LsbenchError as e:
        raise LsbenchError(f"internal check failed: {e}; no record written") from None


def recheck_front(problem, front):
    """A Pareto front as written in a record: every point a valid solution whose objective vector,
    recomputed from scratch in Python integers, is the one reported; no point dominating another,
    no two equal. Returns [{"solution": [...], "objectives": [...]}]."""
    points = []
    for solution, reported in front:
        solution = problem.solution_from_list(solution)
        problem.check_solution(solution)
        vector = problem.exact_vector(solution)
        if [int(v) for v in reported] != vector:
            raise LsbenchError(f"front point {len(points)}: objectives {list(reported)}, but its solution evaluates "
                               f"to {vector}")
        points.append({"solution": problem.solution_to_list(solution), "objectives": vector})
    vectors = np.array([p["objectives"] for p in points], dtype=object).reshape(len(points), -1)
    for q, b in enumerate(vectors):  # one row at a time against all: O(F^2) comparisons, vectorised
        weakly = (vectors <= b).all(axis=1)
        weakly[q] = False
        if weakly.any():
            a = vectors[np.flatnonzero(weakly)[0]].tolist()
            raise LsbenchError(f"front point {a} {'equals' if a == b.tolist() else 'dominates'} {b.tolist()}")
    return points


def _solution(prob, values, field):
    """A solution as the record holds it, its entries of the problem's type (a permutation's are
    integers: 7.5 is not read as 7), as the problem's array."""
    integer = np.issubdtype(prob.solution_from_list([0]).dtype, np.integer)
    if not isinstance(values, list) or not all(
            type(v) is int if integer else (type(v) in (int, float) and math.isfinite(v)) for v in values):
        raise LsbenchError(f"{field}: entries must all be {'integers' if integer else 'finite numbers'}")
    return prob.solution_from_list(values)


class Record(dict):
    """One run's record (see the module's docstring); `path`: the file it was read from, which
    every error line names."""

    path = "the record"

    @classmethod
    def of_run(cls, spec, prob, nb, backend_info, results, wall, warmup_s):
        """The best search's result, its solution re-checked from scratch; with K searches, every
        search's (each re-checked) and the aggregate rate."""
        checked = [recheck_before_writing(recheck, prob, r.best_solution, r.best_objective) for r in results]
        top = min(range(len(results)), key=lambda q: (checked[q], q))
        result = results[top]
        rec = cls({
            "schema_version": SCHEMA_VERSION, "problem": prob.kind, "instance": prob.name, "instance_source": None if prob.source is None else os.path.abspath(prob.source),
            "instance_sha256": instance_digest(prob),
            "algorithm": spec.algorithm, "neighbourhood": nb.name, "neighbourhood_size": nb.size,
            "backend": spec.backend, "backend_info": backend_info, "seed": spec.seed,
            "params": {**result.params, **spec.problem_params, **spec.backend_params,
                       "stop": spec.as_record()["stop"]},
            "run_spec": spec.as_record(), "host": host_info(), "versions": versions(),
            "iterations": result.iterations, "evaluations": result.evaluations, "wall_s": round(wall, 6),
            "warmup_s": round(warmup_s, 6), "iterations_per_s": rate(result.iterations, wall),
            "final_objective": result.final_objective, "trajectory": result.trajectory,
            "bks": instances.bks_of(prob)})
        rec.set_best(checked[top], prob.solution_to_list(result.best_solution))
        if hasattr(prob, "objectives"):
            rec["objectives"] = prob.objectives(result.best_solution)
        if result.pareto is not None:  # anyone can re-check the front from the record alone
            rec.update({"objective_names": list(prob.vector_names), "due_dates": prob.due.tolist(),
                        "front": recheck_before_writing(recheck_front, prob, result.pareto["front"]),
                        "archive_sizes": result.pareto["archive_sizes"],
                        "pareto_time_split": result.pareto["time_split"]})
        if len(results) > 1:
            total = sum(r.iterations for r in results)
            rec.update({"best_seed": result.seed, "aggregate_iterations": total,
                        "aggregate_iterations_per_s": rate(total, wall),
                        "searches": [{"seed": r.seed, "best_objective": c,
                                      "best_solution": prob.solution_to_list(r.best_solution),
                                      "iterations": r.iterations, "final_objective": r.final_objective,
                                      "trajectory": r.trajectory} for r, c in zip(results, checked)]})
        return rec

    @classmethod
    def read(cls, path):
        """A record file, with every field a record must have, or one line naming what is wrong."""
        rec = read_json(path, "run record")
        if not isinstance(rec, dict):
            raise LsbenchError(f"{path}: not a run record (a JSON {type(rec).__name__}, not an object)")
        version = rec.get("schema_version", 0)
        if type(version) is not int or version not in KNOWN_SCHEMA_VERSIONS:
            raise LsbenchError(f"{path}: schema_version {version!r} is not one this lsbench reads "
                               f"({', '.join(map(str, KNOWN_SCHEMA_VERSIONS))}; a newer lsbench wrote it?)")
        missing = [k for k in REQUIRED if k not in rec]
        if missing:
            raise LsbenchError(f"{path}: run record lacks field(s) {', '.join(missing)}")
        rec = cls(rec)
        rec.path = path
        return rec

    def write(self, path):
        write_or_keep(path, self)

    def set_best(self, objective, solution=None):
        """The best objective (re-checked by the caller), its solution, and the gap it implies."""
        self["best_objective"] = objective
        if solution is not None:
            self["best_solution"] = solution
        self["gap_percent"] = gap_percent(objective, self["bks"])

    def split(self, seeds):
        """One record per search of a several-searches run, each as the single run of its seed would
        write it (its run_spec included), plus `batch`: the run it shared and its aggregate rate."""
        if "searches" not in self:
            return {seeds[0]: self}
        shared = {k: v for k, v in self.items() if k not in SEVERAL}
        batch = {"first_seed": seeds[0], "searches": len(seeds),
                 "aggregate_iterations_per_s": self.get("aggregate_iterations_per_s")}
        out = {}
        for entry in self["searches"]:
            one = Record({**shared, "seed": entry["seed"], "final_objective": entry["final_objective"],
                          "trajectory": entry["trajectory"], "iterations": entry["iterations"],
                          "evaluations": entry["iterations"] * self["neighbourhood_size"],
                          "iterations_per_s": rate(entry["iterations"], self["wall_s"]),
                          "run_spec": {**self["run_spec"], "seed": entry["seed"], "searches": 1}, "batch": batch})
            one.set_best(entry["best_objective"], entry["best_solution"])
            out[entry["seed"]] = one
        return out

    def merged(self, epoch):
        """This island's record followed by its next epoch's: iterations and times add up, the
        trajectory keeps the island's own improvements (shifted to the island's clock), the best is
        the best of all."""
        it0, t0 = self["iterations"], self["wall_s"]
        out = Record(self)
        points, best = list(self["trajectory"]), self["best_objective"]
        for it, t, obj in epoch["trajectory"]:
            if obj < best:
                points.append([it + it0, round(t + t0, 6), obj])
                best = obj
        out["trajectory"] = points
        if epoch["best_objective"] < self["best_objective"]:
            out.set_best(epoch["best_objective"], epoch["best_solution"])
            if "objectives" in epoch:  # the best solution's own objective vector goes with it
                out["objectives"] = epoch["objectives"]
        for key in ("iterations", "evaluations", "wall_s", "warmup_s"):
            out[key] = self[key] + epoch[key]
        out["iterations_per_s"] = rate(out["iterations"], out["wall_s"])
        out["final_objective"] = epoch["final_objective"]
        if "timed_interval" in self and "timed_interval" in epoch:  # the epochs, exchanges between included
            out["timed_interval"] = [self["timed_interval"][0], epoch["timed_interval"][1]]
        out["epoch_seeds"] = self.get("epoch_seeds", [self["seed"]]) + [epoch["seed"]]
        return out

    def verify(self, data=None):
        """Reload the instance, check its checksum, the solution, the objective (in Python
        integers), the trajectory and a Pareto run's front, from scratch; every failure is one line
        naming the file and the field."""
        path = self.path
        try:
            return self._verify(path, data)
        except (TypeError, ValueError, KeyError, IndexError) as e:  # a malformed field of an edited record
            raise LsbenchError(f"{path}: malformed record ({type(e).__name__}: {e})") from None

    def _verify(self, path, data):
        self._check_fields(path)
        self._check_schema(path)
        prob = self._instance(path, data)
        try:
            recomputed = recheck(prob, _solution(prob, self["best_solution"], "best_solution"),
                                 self["best_objective"])
            for q, entry in enumerate(self.get("searches", [])):  # several searches in one run: every best
                recheck(prob, _solution(prob, entry["best_solution"], f"searches[{q}]: best_solution"),
                        entry["best_objective"], f"searches[{q}]: ")
        except LsbenchError as e:
            raise LsbenchError(f"{path}: {e}") from None
        if "searches" in self:
            self._check_searches(path)
        for entry in [self] + self.get("searches", []):
            if entry["final_objective"] < entry["best_objective"]:
                raise LsbenchError(f"{path}: final_objective {entry['final_objective']} is below best_objective "
                                   f"{entry['best_objective']} (the best is the least objective the search saw)")
        if "objectives" in self and self["objectives"] != prob.objectives(prob.solution_from_list(self["best_solution"])):
            raise LsbenchError(f"{path}: objectives {self['objectives']} are not the best solution's")
        bks = instances.bks_of(prob)
        if self["bks"] != bks:
            raise LsbenchError(f"{path}: bks {self['bks']} differs from the registry's {bks}")
        gap = gap_percent(recomputed, bks)
        if gap != self["gap_percent"] and not (gap is not None and self["gap_percent"] is not None
                                               and abs(gap - self["gap_percent"]) < 1e-6):
            raise LsbenchError(f"{path}: gap_percent {self['gap_percent']} but recomputed {gap}")
        self._check_trajectory(path, prob)
        if "front" in self:
            self._check_front(path, prob, recomputed)
        return f"{self['instance']} best {recomputed} re-checked" + (f", gap {gap:.3f}%" if gap is not None else "")

    def _check_fields(self, path):
        """The fields whose type or presence the rest relies on: an integer seed within 64 bits, the
        front of a Pareto run."""
        seed = self["seed"]
        if type(seed) is not int or not 0 <= seed <= instances.SEED_MAX:
            raise LsbenchError(f"{path}: seed {seed!r} is not an integer within [0, 2^64 - 1]")
        if self["algorithm"] == "pls" and not self.get("front"):
            raise LsbenchError(f"{path}: a pls record without its front")
        if self["algorithm"] not in ALGORITHMS:
            raise LsbenchError(f"{path}: unknown algorithm {self['algorithm']!r}")

    def _check_schema(self, path):
        """Types, ranges and agreement: the run's spec is an object, and names the record's problem,
        algorithm, backend and seed; a known backend; counts and times are non-negative numbers; the
        rate is the counts over the time; no more iterations than the spec's stop allows; only the
        problem's own parameters; trajectory times non-negative."""
        spec = self.get("run_spec")
        if not isinstance(spec, dict) or not isinstance(spec.get("stop"), dict):
            raise LsbenchError(f"{path}: run_spec is not the object a run writes")
        if not isinstance(self["params"], dict):
            raise LsbenchError(f"{path}: params is not an object")
        for key in ("problem", "algorithm", "backend", "seed"):
            if key in spec and spec[key] != self[key]:
                raise LsbenchError(f"{path}: {key} {self[key]!r}, but run_spec says {spec[key]!r}")
        if self["backend"] not in BACKENDS:
            raise LsbenchError(f"{path}: unknown backend {self['backend']!r}")
        for key in ("iterations", "evaluations"):
            if type(self[key]) is not int or self[key] < 0:
                raise LsbenchError(f"{path}: {key} {self[key]!r} is not a non-negative integer")
        for key in ("wall_s", "warmup_s"):
            value = self.get(key, 0)
            if type(value) not in (int, float) or not math.isfinite(value) or value < 0:
                raise LsbenchError(f"{path}: {key} {value!r} is not a non-negative number of seconds")
        if "iterations_per_s" in self and not rate_agrees(self["iterations_per_s"], self["iterations"], self["wall_s"]):
            raise LsbenchError(f"{path}: iterations_per_s {self['iterations_per_s']!r}, but iterations over wall_s "
                               f"is {rate(self['iterations'], self['wall_s'])}")
        most = spec["stop"].get("iterations") if self["algorithm"] in STOPPED_BY_ITERATIONS else None
        for entry in [self] + self.get("searches", []):
            if most is not None and entry["iterations"] > most:
                raise LsbenchError(f"{path}: iterations {entry['iterations']}, past run_spec's stop at {most}")
            if any(not isinstance(p, list) or len(p) != 3 or type(p[1]) not in (int, float)
                   or not 0 <= p[1] < math.inf for p in entry["trajectory"]):
                raise LsbenchError(f"{path}: trajectory points must be [iteration, seconds >= 0, objective]")
        declared = {p.name for p in PROBLEMS[self["problem"]].parameters} if self["problem"] in PROBLEMS else set()
        unknown = sorted(set(spec.get("problem_params") or {}) - declared)
        if unknown:
            raise LsbenchError(f"{path}: run_spec problem_params {', '.join(unknown)}: not parameters of "
                               f"{self['problem']}")

    def _check_searches(self, path):
        """A run of K searches: seeds seed .. seed + K - 1, one entry each; the record's own fields
        are its best search's (the least best objective, the first of ties), and the aggregate counts
        every search's iterations."""
        searches = self["searches"]
        seeds = [entry["seed"] for entry in searches]
        k = self["run_spec"].get("searches", len(searches))
        if seeds != list(range(self["seed"], self["seed"] + k)):
            raise LsbenchError(f"{path}: searches: seeds {seeds[:4]}{'...' if len(seeds) > 4 else ''} are not the "
                               f"{k} seeds from seed {self['seed']} (run_spec searches = {k})")
        top = min(range(len(searches)), key=lambda q: (searches[q]["best_objective"], q))
        if self["best_seed"] != seeds[top]:
            raise LsbenchError(f"{path}: best_seed {self['best_seed']}, but the best search is seed {seeds[top]}")
        for key in ("best_objective", "best_solution", "iterations", "final_objective", "trajectory"):
            if self[key] != searches[top][key]:
                raise LsbenchError(f"{path}: {key} is not the best search's (seed {seeds[top]})")
        total = sum(entry["iterations"] for entry in searches)
        if self["aggregate_iterations"] != total:
            raise LsbenchError(f"{path}: aggregate_iterations {self['aggregate_iterations']}, but the searches ran "
                               f"{total}")

    def instance_spec(self, data):
        """What names the record's instance for instances.load: its manifest name, else the file it
        was read from."""
        entry, source = instances.manifest().get(self["instance"]), self.get("instance_source")
        by_name = source is None or (entry is not None and (entry.generated or not os.path.exists(source)
                                                            or instances.local_path(entry, data).exists()))
        return self["instance"] if by_name else source

    def _instance(self, path, data):
        """The instance the record names, loaded again, its checksum the recorded one."""
        if self["problem"] not in PROBLEMS:
            raise LsbenchError(f"{path}: unknown problem {self['problem']!r}")
        declared = PROBLEMS[self["problem"]].parameters
        given = self.get("run_spec", {}).get("problem_params", self["params"])
        params = {p.name: p.convert(given[p.name], self["problem"]) for p in declared if p.name in given}
        spec = self.instance_spec(data)
        try:
            prob = instances.load(spec, self["problem"], data, params)
        except LsbenchError as e:
            raise LsbenchError(f"{path}: {e}") from None
        if prob.name != self["instance"]:
            raise LsbenchError(f"{path}: instance {self['instance']!r}, but its source is {prob.name!r}")
        digest = instance_digest(prob)
        if digest != self["instance_sha256"]:
            raise LsbenchError(f"{path}: instance_sha256 {self['instance_sha256']} does not match the instance "
                               f"({digest})")
        return prob

    def _check_trajectory(self, path, prob):
        """Non-empty, iterations in order, each point an improvement, ending at the best; the counts
        agree with it (evaluations = iterations x neighbourhood size; = iterations for sampling)."""
        traj = self["trajectory"]
        if not traj:
            raise LsbenchError(f"{path}: empty trajectory (a run records at least its start)")
        its = [int(point[0]) for point in traj]
        values = [point[2] for point in traj]
        if its != sorted(its) or its[-1] > self["iterations"]:
            raise LsbenchError(f"{path}: trajectory iterations out of order or past iterations={self['iterations']}")
        if any(b >= a for a, b in zip(values, values[1:])):
            raise LsbenchError(f"{path}: trajectory objectives do not improve at every point")
        if prob.integer and values[-1] != self["best_objective"]:
            raise LsbenchError(f"{path}: trajectory ends at {values[-1]}, best_objective is {self['best_objective']}")
        size = self.get("neighbourhood_size")
        if self["algorithm"] in ONE_SOLUTION_AN_ITERATION:
            if self["evaluations"] != self["iterations"]:
                raise LsbenchError(f"{path}: evaluations {self['evaluations']} != iterations {self['iterations']} "
                                   f"(one solution an iteration)")
        elif size and self["algorithm"] not in PARTIAL_SWEEPS and self["evaluations"] != self["iterations"] * size:
            raise LsbenchError(f"{path}: evaluations {self['evaluations']} != iterations {self['iterations']} x "
                               f"neighbourhood size {size}")

    def _check_front(self, path, prob, best):
        if [int(d) for d in self["due_dates"]] != prob.due.tolist():
            raise LsbenchError(f"{path}: due_dates differ from the instance's")
        try:
            recheck_front(prob, [(_solution(prob, p["solution"], "front: solution"), p["objectives"])
                                 for p in self["front"]])
        except LsbenchError as e:
            raise LsbenchError(f"{path}: {e}") from None
        sums = [sum(int(w) * int(v) for w, v in zip(prob.weights, p["objectives"])) for p in self["front"]]
        if min(sums) != best:
            raise LsbenchError(f"{path}: best_objective {best} is not the least weighted sum over the front "
                               f"({min(sums)})")
