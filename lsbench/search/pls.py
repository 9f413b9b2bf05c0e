"""Pareto local search, PLS-1 (Paquete, Chiarandini and Stützle 2004), as Luong, Melab and Talbi
ran it on the three-objective flow shop (EvoCOP 2011, section 6.3), over the evaluator interface.

Each iteration takes one unvisited member of the archive -- the r-th unvisited in archive order,
r drawn uniformly from the run's seeded stream (lsbench.rng.below) -- marks it visited, rates its
whole neighbourhood by objective vectors and inserts the candidates into the archive
(lsbench.search.archive): with accept=dominating only the neighbours that dominate the explored
solution (the paper's PLS with dominating neighbours), with accept=non-dominated every neighbour
(its PLS with non-dominated neighbours). When every member has been visited the archive joins the
run's front (the non-dominated union over restarts) and the search restarts from a new random
solution, while the budget lasts.

archive=host inserts on the CPU (the paper's CPU archiving); archive=device keeps the archive in
GPU memory and filters there (lsbench.gpu.iteration.archive): the neighbourhood's vectors never come back.
Both give the same archive at every iteration. The record's single-objective view (best_objective,
trajectory) is the weighted sum of the objective vector (PFSP's `weights`), the least over the front.
"""
import time
from functools import partial

import numpy as np

from .. import rng
from ..interfaces import OutOfTime, SearchResult
from ..params import Param, Rule
from .archive import ACCEPT, ParetoArchive, insert_batch
from .common import Trajectory, start_solution


def neighbour(nb, solution, move):
    """The solution after `move` (a new array)."""
    s = solution.copy()
    nb.perform(s, move)
    return s


class ParetoLocalSearch:
    name = "pls"
    problems = ("pfsp",)
    objective_vectors = True  # the evaluator rates moves by objective vectors (ObjectiveVectors)
    parameters = (
        Param("accept", str, "neighbours offered to the archive: those that dominate the explored solution, "
              "or all of them (every one not dominated by the archive enters)", default="dominating",
              choices=tuple(ACCEPT)),
        Param("archive", str, "where the archive is kept and filtered: host (CPU, every candidate compared "
              "with every member) or device (GPU memory, a parallel non-dominated filter; --backend gpu)",
              default="host", choices=("host", "device")),
    )

    def __init__(self, accept="dominating", archive="host"):
        self.accept, self.archive = accept, archive

    rules = (
        Rule(lambda v, run: v.get("objective") != "three", "--algorithm pls: needs --param objective=three (it "
             "minimises makespan, total tardiness and late jobs as a vector)"),
        Rule(lambda v, run: v["archive"] == "device" and run.backend != "gpu", "--param archive=device: the "
             "archive is kept in GPU memory, which only --backend gpu has (or use archive=host)"),
    )

    def run(self, problem, nb, evaluator, stop, seed, progress=None):
        state = rng.new_state(seed)
        traj = Trajectory()
        on_device = self.archive == "device"
        accept = ACCEPT[self.accept]
        weights = np.asarray(problem.weights, dtype=np.int64)
        front, archive = ParetoArchive(), ParetoArchive()
        sizes = []  # [iteration, archive size] whenever the size changes
        split = {"evaluation_s": 0.0, "archiving_s": 0.0}
        it = evals = restarts = 0
        best = None
        first = True
        evaluator.deadline = traj.deadline(stop)
        while first or not stop.reached(it, evals, traj.elapsed(), best):
            sol = start_solution(problem, state, self) if first else problem.random_solution(state)
            first = False
            archive.start(sol, problem.objective_vector(sol))
            if on_device:
                evaluator.archive_start(archive.vectors)
            value = int(weights @ archive.vectors[0])
            if best is None or value < best:
                best = value
                traj.improved(it, best)
            sizes.append([it, 1])
            while not stop.reached(it, evals, traj.elapsed(), best):
                todo = archive.unvisited()
                if not todo:
                    restarts += 1
                    break
                q = todo[rng.below(state, len(todo))]
                archive.visited[q] = True
                current, vector = archive.solutions[q], archive.vectors[q].copy()
                evaluator.reset(current)
                t = time.perf_counter()
                if on_device:
                    evaluator.evaluate_on_device()
                    t2 = time.perf_counter()
                    left, entered, vectors = evaluator.archive_update(accept, vector)
                else:
                    try:
                        rated = evaluator.evaluate()
                    except OutOfTime:  # the budget ended inside this evaluation: the iteration does not count
                        archive.visited[q] = False
                        break
                    t2 = time.perf_counter()
                    left, entered = insert_batch(archive.vectors, rated, accept, vector)
                    vectors = rated[entered]
                it += 1
                evals += nb.size
                archive.apply(left, entered, vectors, partial(neighbour, nb, current))
                split["evaluation_s"] += t2 - t
                split["archiving_s"] += time.perf_counter() - t2
                if len(entered):
                    value = int((np.asarray(vectors) @ weights).min())
                    if value < best:
                        best = value
                        traj.improved(it, best)
                if len(archive) != sizes[-1][1]:
                    sizes.append([it, len(archive)])
                if progress:
                    progress.tick(it, best, f"archive {len(archive)}")
            front.merge(archive)
        evaluator.deadline = None  # (the evaluator may serve another search after this one)
        values = front.vectors @ weights
        top = int(np.argmin(values))
        split = {k: round(v, 6) for k, v in split.items()}
        pareto = {"front": list(zip(front.solutions, front.vectors.tolist())), "archive_sizes": sizes,
                  "time_split": split}
        return SearchResult(int(values[top]), front.solutions[top].copy(), it, evals, traj.points,
                            {"accept": self.accept, "archive": self.archive, "restarts_done": restarts,
                             "front_size": len(front)}, int(values[top]), pareto=pareto)
