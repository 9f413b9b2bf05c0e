"""Best-improvement hill climbing with random restarts, over the evaluator interface."""
import numpy as np
from numba import njit

from .. import rng
from ..interfaces import DEVICE_SELECT, OutOfTime, SearchResult, plain
from ..params import Param
from .common import Trajectory, start_solution
from .tabu import MODE_ARGMIN


@njit(cache=True)
def best_move(deltas):
    """Lowest-index move of least delta."""
    return np.argmin(deltas)


class HillClimbing:
    name = "hc"
    parameters = (Param("restarts", bool, "restart from a random solution at a local optimum (else stop)",
                        default=True),)

    def __init__(self, restarts=True):
        self.restarts = restarts

    def run(self, problem, nb, evaluator, stop, seed, progress=None):
        state = rng.new_state(seed)
        traj = Trajectory()
        sol = start_solution(problem, state, self)
        current = problem.objective(sol)
        best, best_sol = current, sol.copy()
        traj.improved(0, plain(best))
        evaluator.reset(sol)
        it = evals = restarts = 0
        evaluator.deadline = traj.deadline(stop)
        while not stop.reached(it, evals, traj.elapsed(), best):
            it += 1
            if DEVICE_SELECT in evaluator.capabilities:
                k, delta, _ = evaluator.select(MODE_ARGMIN, it, current, best)
            else:
                try:
                    deltas = evaluator.evaluate()
                except OutOfTime:  # the budget ended inside this iteration's evaluation: it does not count
                    it -= 1
                    break
                k = best_move(deltas)
                delta = deltas[k]
            evals += nb.size
            if delta < 0:
                nb.perform(sol, k)
                evaluator.apply(k)
                current = current + delta if problem.integer else problem.objective(sol)
            elif self.restarts:  # local optimum: restart from a random solution
                restarts += 1
                sol = problem.random_solution(state)
                current = problem.objective(sol)
                evaluator.reset(sol)
            else:
                break
            if current < best:
                best, best_sol = current, sol.copy()
                traj.improved(it, plain(best))
            if progress:
                progress.tick(it, plain(best), plain(current))
        evaluator.deadline = None  # (the evaluator may serve another search after this one)
        return SearchResult(plain(best), best_sol, it, evals, traj.points,
                            {"restarts": bool(self.restarts), "restarts_done": restarts}, plain(current))
