"""`SearchOverEvaluator`: the engine of every iteration-level run (a search algorithm in this
process, an evaluator for its neighbourhood: cpu, cpu-parallel, gpu, cow, grid)."""
import time

from ..interfaces import Engine
from ..problems.base import ObjectiveVectors


class SearchOverEvaluator(Engine):
    takes_initial = True

    def __init__(self, problem, neighbourhood, search, evaluator):
        if getattr(search, "objective_vectors", False):  # Pareto searches rate moves by objective vectors
            neighbourhood = ObjectiveVectors(neighbourhood)
        self.problem, self.nb, self.search, self.evaluator = problem, neighbourhood, search, evaluator
        self.name = evaluator.name
        self.evaluator = evaluator = evaluator.bind(problem, neighbourhood)
        self.is_worker = evaluator.is_worker
        self.wall_s = 0.0

    def run(self, seeds, stop, progress=None):
        results = []
        for seed in seeds:
            t0 = time.perf_counter()
            result = self.search.run(self.problem, self.nb, self.evaluator, stop, seed, progress)
            self.wall_s = time.perf_counter() - t0
            result.seed = seed
            results.append(result)
        return results

    def warm_up(self, seeds, iterations):
        super().warm_up(seeds, iterations)
        self.evaluator.reset_timers()  # the time split covers the timed run only

    def describe(self):
        info = self.evaluator.describe()
        split = info.get("time_split", {})
        if "communication_s" in split:  # distributed: what is left of the wall time is the master's
            split["master_s"] = round(max(0.0, self.wall_s - split["evaluation_s"] - split["communication_s"]), 6)
        return info

    def close(self):
        self.evaluator.close()

    def serve(self):
        self.evaluator.serve()
