"""`RunSpec`: one run's whole configuration, built and checked in one place.

`lsbench run`, `lsbench multistart`, the Snakemake rules and workflows/scripts/run_plan.py all call
`build_spec`, so a bad value gets the same error line wherever it was written. Parameters are
checked against the declarations of the problem, neighbourhood, algorithm and backend of the run
(lsbench/params.py); nothing is loaded or run before the whole spec holds (the output path is proven writable when the
run starts: lsbench.files.reserve).
"""
import math
from dataclasses import asdict, dataclass, field

from . import instances, registry
from .registry import ALGORITHMS
from .errors import LsbenchError
from .params import INT64_MAX, INT64_MIN, check_rules, resolve, with_defaults
from .problems import PROBLEMS
from .interfaces import Stop

ROLES = ("problem", "neighbourhood", "algorithm", "backend")


@dataclass(frozen=True)
class RunSpec:
    problem: str  # the problem kind, resolved from the instance where not given
    instance: str
    algorithm: str
    backend: str
    neighbourhood: str
    seed: int
    stop: Stop
    problem_params: dict = field(default_factory=dict)
    algorithm_params: dict = field(default_factory=dict)
    backend_params: dict = field(default_factory=dict)
    threads: int | None = None  # cpu-parallel: cores; cow/grid: per rank or worker
    searches: int = 1  # K searches in one run (engines that run several at once)
    warmup: int = 2  # untimed iterations first
    data_dir: str | None = None
    out: str | None = None
    initial: tuple | None = None  # a start solution (islands pass elites)

    def params(self):
        """Every resolved parameter in one dict (the record's `params` adds the search's own)."""
        return {**self.problem_params, **self.algorithm_params, **self.backend_params}

    def command_line(self):
        """The `lsbench run` arguments that rebuild this spec (output path excepted)."""
        args = ["--problem", self.problem, "--instance", self.instance, "--algorithm", self.algorithm,
                "--backend", self.backend, "--neighbourhood", self.neighbourhood, "--seed", str(self.seed)]
        for key, value in vars(self.stop).items():
            if value is not None:
                args += [f"--{key}", repr(value) if isinstance(value, float) else str(value)]
        for key, value in self.params().items():
            value = ",".join(map(str, value)) if isinstance(value, (list, tuple)) else value
            args += ["--param", f"{key}={value}"]
        if self.threads is not None:
            args += ["--threads", str(self.threads)]
        if self.searches != 1:
            args += ["--searches", str(self.searches)]
        if self.warmup != 2:
            args += ["--warmup", str(self.warmup)]
        if self.data_dir is not None:
            args += ["--data-dir", self.data_dir]
        return args

    def as_record(self):
        d = asdict(self)
        d["stop"] = {k: v for k, v in d["stop"].items() if v is not None}
        d.pop("initial")
        d.pop("out")
        d.pop("data_dir")
        return d


def owners(problem, neighbourhood, algorithm, backend):
    """[(role, owner label, owner class)] of a run's parameters, in the order keys are matched."""
    pcls = PROBLEMS[problem]
    return [("problem", problem, pcls), ("neighbourhood", f"{neighbourhood} neighbourhood", pcls.neighbourhoods[neighbourhood]),
            ("algorithm", algorithm, ALGORITHMS[algorithm]),
            ("backend", backend, registry.backend_class(algorithm, backend, problem))]


@dataclass(frozen=True)
class RunNames:
    """What a declared Rule sees of a run besides its parameter values."""
    problem: str
    neighbourhood: str
    algorithm: str
    backend: str
    stop: Stop


MAX_SEARCHES = 1 << 20


def check_seed_range(seed, searches):
    """Seeds s .. s + K - 1 all within 64 bits: past 2^64 - 1 a seed's trajectory is a smaller one's."""
    if seed + searches - 1 > instances.SEED_MAX:
        raise LsbenchError(f"--seed {seed} with --searches {searches}: the last seed {seed + searches - 1} is past "
                           "2^64 - 1 (it would repeat seed "
                           f"{(seed + searches - 1) & instances.SEED_MAX}'s search)")


def build_spec(instance, problem=None, algorithm="tabu", backend="cpu", neighbourhood=None, seed=1,
               iterations=None, evaluations=None, seconds=None, target=None, params=None, threads=None,
               searches=1, warmup=2, data_dir=None, out=None, initial=None):
    """A checked RunSpec; `params` {key: value} (strings from the command line, typed values from
    YAML or Python) is split among the owners that declare each key."""
    if instance is None or str(instance) == "":
        raise LsbenchError("--instance: give an instance name or file path")
    instance = str(instance)
    registry.check_names(algorithm, backend)
    kind = instances.kind_of(instance, problem)
    nbs = PROBLEMS[kind].neighbourhoods
    neighbourhood = neighbourhood or PROBLEMS[kind].default_neighbourhood
    if neighbourhood not in nbs:
        raise LsbenchError(f"--neighbourhood: unknown neighbourhood {neighbourhood!r} for {kind} "
                           f"(known: {', '.join(sorted(nbs))})")
    run_owners = owners(kind, neighbourhood, algorithm, backend)
    resolved = resolve([(role, label, cls.parameters) for role, label, cls in run_owners], dict(params or {}))
    _check_int("--seed", seed, 0, (1 << 64) - 1)
    # the untimed warm-up stays within the run's own budget: it must never outlast the search
    for name, budget in (("--iterations", iterations), ("--evaluations", evaluations)):
        if budget is not None:  # counters are compiled code's int64
            _check_int(name, budget, 0, INT64_MAX)
    _check_int("--warmup", warmup, 0, max(2, iterations) if isinstance(iterations, int) else 100)
    _check_int("--searches", searches, 1, MAX_SEARCHES)
    check_seed_range(seed, searches)
    if threads is not None:
        _check_int("--threads", threads, 1, 4096)
        if backend == "cpu":
            raise LsbenchError("--threads: the cpu backend runs on one core (cpu-parallel takes --threads)")
    target = target_value(target, instance, kind, resolved["problem"])
    for name, value in (("--seconds", seconds), ("--target", target)):
        if value is not None and not math.isfinite(value):
            raise LsbenchError(f"{name}: must be a finite number, got {value}")
    if target is not None and not INT64_MIN <= target <= INT64_MAX:
        raise LsbenchError(f"--target {target}: past the 64-bit integers the search compares objectives in")
    check_reachable(target, instance, kind, resolved["problem"])
    stop = Stop(iterations, evaluations, seconds, target)
    values = {}
    for role, _label, cls in run_owners:
        values.update(with_defaults(cls.parameters, resolved[role]))
    check_rules([(label, getattr(cls, "rules", ())) for _role, label, cls in run_owners], values,
                RunNames(kind, neighbourhood, algorithm, backend, stop))
    return RunSpec(kind, instance, algorithm, backend, neighbourhood, seed, stop,
                   resolved["problem"], resolved["algorithm"], resolved["backend"], threads, searches, warmup,
                   data_dir, out, None if initial is None else tuple(int(v) for v in initial))


def check_reachable(target, instance, kind, problem_params):
    """A target no solution can reach would run to the other stops (or never end): below the
    problem's floor (a sum of non-negative terms) or below the instance's proven optimum."""
    if target is None:
        return
    floor = PROBLEMS[kind].objective_floor
    if floor is not None and target < floor:
        raise LsbenchError(f"--target {target:g}: below {floor}, the least objective a {kind} solution can have; "
                           "no search reaches it")
    entry = instances.manifest().get(instance)
    proven = entry is not None and entry.problem == kind and entry.optimal in ("yes", "optimal") \
        and not (kind == "pfsp" and problem_params.get("objective", "makespan") != "makespan")
    if proven and target < entry.bks_value():
        raise LsbenchError(f"--target {target:g}: below {instance}'s proven optimum {entry.bks_value()}; no search "
                           "reaches it")


def target_value(target, instance, kind, problem_params):
    """--target as a number: a number, or `bks` (the manifest's best-known value) or `bks+P%` (P
    percent above it), so that time-to-best-known runs need no value typed by hand."""
    if target is None or not isinstance(target, str):
        return target
    text = target.strip().lower()
    if not text.startswith("bks"):
        try:
            return float(text)
        except ValueError:
            raise LsbenchError(f"--target: a number, bks or bks+P%, got {target!r}") from None
    percent = 0.0
    if text != "bks":
        rest = text[3:]
        try:
            if not (rest.startswith("+") and rest.endswith("%")):
                raise ValueError
            percent = float(rest[1:-1])
        except ValueError:
            raise LsbenchError(f"--target: a number, bks or bks+P% (e.g. bks+0.2%), got {target!r}") from None
        if not (math.isfinite(percent) and percent >= 0):
            raise LsbenchError(f"--target {target}: the percentage must be finite and >= 0")
    entry = instances.manifest().get(instance)
    bks = entry.bks_value() if entry is not None else None
    if kind == "pfsp" and problem_params.get("objective", "makespan") != "makespan":
        raise LsbenchError(f"--target {target}: the manifest's best-known values are makespans, not "
                           f"{problem_params['objective']} (give the target as a number)")
    if bks is None:
        raise LsbenchError(f"--target {target}: instance {instance} has no best-known value in the manifest "
                           "(give the target as a number)")
    return bks * (1 + percent / 100) if percent else float(bks)


def _check_int(name, value, low, high):
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise LsbenchError(f"{name}: must be an integer in [{low}, {high}], got {value!r}")
