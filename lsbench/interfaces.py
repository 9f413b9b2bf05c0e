"""The two seams every run goes through, and the one result type they return.

Seam 1, `Evaluator` (the iteration level: cpu, cpu-parallel, gpu, cow, grid): a search algorithm
keeps its solution and memory and asks the evaluator for the cost of every move. Seam 2, `Engine`
(whole searches: the device-resident searches, the cas colony, and `SearchOverEvaluator`, which
runs a search algorithm over an evaluator): K seeds in, K `SearchResult`s out. `lsbench.registry`
picks the engine for an (algorithm, backend) pair; `lsbench.runner` knows nothing else.
"""
from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np

from .errors import LsbenchError

# optional evaluator capabilities, declared in `Evaluator.capabilities`
DEVICE_SELECT = "device-select"  # select(mode, ...), init_tabu(memory), record(...): selection on the device
COMPILED_LOOP = "compiled-loop"  # a search may run its whole loop in compiled CPU code instead
DEVICE_ARCHIVE = "device-archive"  # evaluate_on_device(), archive_start(vectors), archive_update(...): PLS on the GPU


@dataclass
class Stop:
    """Stop when any given budget is spent or the target objective is reached (<= target)."""

    iterations: int | None = None
    evaluations: int | None = None
    seconds: float | None = None
    target: float | None = None

    def __post_init__(self):
        for name in ("iterations", "evaluations", "seconds"):
            v = getattr(self, name)
            if v is not None and v < 0:
                raise LsbenchError(f"--{name}: must be non-negative, got {v}")
        if self.iterations is None and self.evaluations is None and self.seconds is None \
                and self.target is None:
            raise LsbenchError("no stop criterion: give --iterations, --evaluations, --seconds or --target")

    def chunk(self, done, want, moves):
        """Iterations for the next compiled or on-device chunk: `want`, cut to what is left of the
        iteration budget and of the evaluation budget (`moves` evaluations per iteration, at least one)."""
        n = want
        if self.iterations is not None:
            n = min(n, max(0, self.iterations - done))
        if self.evaluations is not None:
            n = min(n, max(1, -(-(self.evaluations - done * moves) // moves)))
        return n

    def reached(self, iterations, evaluations, elapsed, best):
        return ((self.iterations is not None and iterations >= self.iterations)
                or (self.evaluations is not None and evaluations >= self.evaluations)
                or (self.seconds is not None and elapsed >= self.seconds)
                or (self.target is not None and best <= self.target))


@dataclass
class SearchResult:
    """One search's outcome, whatever ran it."""

    best_objective: object
    best_solution: np.ndarray
    iterations: int
    evaluations: int
    trajectory: list  # [iteration, seconds, objective] at each improvement
    params: dict  # the parameters the search used (defaults filled in), and counts it kept
    final_objective: object
    seed: int | None = None
    pareto: dict | None = None  # Pareto searches: front [(solution, vector)], archive_sizes, time_split


WARMUP_SECONDS = 5.0  # a warm-up's time budget at most


class OutOfTime(Exception):
    """An evaluation abandoned at the run's time budget (Evaluator.deadline): its iteration does
    not count, and the search ends with the iterations before it."""


class Evaluator(ABC):
    """Evaluates a neighbourhood for a search that keeps its own state."""

    name = ""
    parameters = ()  # lsbench.params.Param declarations of its --param keys
    capabilities = frozenset()
    deadline = None  # time.perf_counter() past which evaluate() may raise OutOfTime (set by the search)
    parallel = False  # the CPU neighbourhood code runs its all-cores build
    is_worker = False  # this process serves another rank's search (cow ranks > 0): it then has serve()

    @abstractmethod
    def bind(self, problem, neighbourhood):
        """Copy the read-only data once (device, ranks, workers); return the evaluator to use: self,
        or one it hands the problem to (gpu: a plug-in problem's device adapter)."""

    @abstractmethod
    def reset(self, solution):
        """Start from `solution` (rebuild incremental structures)."""

    @abstractmethod
    def evaluate(self):
        """The delta of every move of the current solution (an array indexed by move)."""

    @abstractmethod
    def apply(self, move):
        """The search performed `move`: keep incremental structures in sync."""

    @abstractmethod
    def describe(self):
        """Backend facts for the run record (device, threads, time split)."""

    def reset_timers(self):
        """Forget the warm-up's time split, so the record covers the timed run only."""

    def close(self):
        """Release workers and devices, also after an error."""


class Engine(ABC):
    """Runs whole searches. Built by the registry as Engine(problem, neighbourhood, search, params,
    threads): `search` is the algorithm object (its parameters resolved), `params` the engine's
    own declared parameters."""

    name = ""
    parameters = ()
    problems = None  # problem kinds it runs (None: every problem)
    several_searches = False  # run() takes K > 1 seeds in one call (one record for all)
    takes_initial = False  # can start from a given solution (islands pass elites)
    takes_migration = False  # run(..., migration=) restarts searches from other islands' solutions live
    is_worker = False

    @abstractmethod
    def run(self, seeds, stop, progress=None):
        """One SearchResult per seed, each search exactly the CPU search with that seed."""

    @abstractmethod
    def describe(self):
        """Backend facts for the run record."""

    def warm_up(self, seeds, iterations):
        """Untimed, before run(seeds, ...): JIT compilation and launch tuning happen here, outside
        the timed run (one search of `iterations` by default, for WARMUP_SECONDS at most: an
        instance whose iteration takes a minute is not searched for minutes before its run)."""
        if iterations:
            self.run(seeds[:1], Stop(iterations=iterations, seconds=WARMUP_SECONDS))

    def close(self):
        pass


def plain(x):
    """A NumPy scalar as a Python int or float (JSON, comparisons)."""
    return int(x) if isinstance(x, (np.integer, int)) else float(x)

