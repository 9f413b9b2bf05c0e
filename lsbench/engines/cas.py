"""Cunning Ant System (cAS) with a local search, for QAP (Tsutsui & Fujimoto, MEDAL 2011005).

The colony has m units; unit k keeps its best ant ant*_k. Each generation every unit builds a
cunning ant from its donor ant*_k: a share gamma of the facilities (on average) is reassigned
from the pheromone matrix tau, the rest keep the donor's locations; the local search improves it
and it replaces ant*_k if not worse. tau is updated from all ant*_k as in their Eqs. (1)-(2) and
clamped to [tau_min, tau_max] as in MAX-MIN AS. Local search: Ro-TS with tenure floor(n u^3) and
plain aspiration for IT_TS iterations (`ls=tabu`), or best-improvement 2-opt (pair exchange) for at
most IT_2OPT iterations (`ls=2opt`).
The m local searches of a generation are independent (own RNG stream each): `cpu` runs them one
after another, `cpu-parallel` on all cores, `gpu-resident` as one GPU thread block each (tabu
local search only; each block also builds its ant, and the whole generation loop runs on the
device: gpu/engine/colony.py), all with identical results.
`iterations` counts local-search iterations over all ants (IT_TOTAL of the paper).
"""
import copy

import numba
import numpy as np
from numba import njit, prange

from .. import rng
from ..interfaces import Engine, SearchResult, Stop
from ..params import Param
from ..neighborhoods import index_to_pair
from ..problems.base import serial_and_parallel
from ..threads import use_threads
from ..problems.qap import permuted_distances, all_deltas, qap_cost, swap_and_update, symmetric_form
from ..search.chunk_loop import NO_TARGET
from ..search.common import Trajectory
from ..search.tabu import rots_chunk, rots_expiry

NO_AGE_ASPIRATION = np.int64(1) << np.int64(40)


@njit(cache=True)
def tabu_local_search(a, b, fa, fat, fb, general, sol, seed, iterations, tenure):
    """Ro-TS from `sol` (modified in place to its best) for `iterations`; returns the best cost.
    (fa, fat, fb, general): the move costs' form (lsbench.problems.qap.symmetric_form)."""
    n = sol.shape[0]
    bp, bpt = permuted_distances(fb, sol, general)
    delta = np.empty(n * (n - 1) // 2, dtype=np.int64)
    all_deltas(fa, fat, bp, bpt, 0, n - 1, delta, general)
    expiry = rots_expiry(n)
    expiry_t = np.ascontiguousarray(expiry.T)
    state = np.empty(1, dtype=np.uint64)
    state[0] = seed
    cur = qap_cost(a, b, sol)
    best_sol = sol.copy()
    imp = np.empty(iterations + 1, dtype=np.int64)
    _, _, best, _ = rots_chunk(fa, fat, bp, bpt, sol, delta, expiry, expiry_t, state, 0, iterations, cur, cur,
                               best_sol, 0, 0, NO_AGE_ASPIRATION, NO_TARGET, imp, imp, tenure, general)
    sol[:] = best_sol
    return best


@njit(cache=True)
def two_opt_local_search(a, b, fa, fat, fb, general, sol, iterations):
    """Best-improvement pair exchange until a local optimum or `iterations` moves."""
    n = sol.shape[0]
    bp, bpt = permuted_distances(fb, sol, general)
    delta = np.empty(n * (n - 1) // 2, dtype=np.int64)
    all_deltas(fa, fat, bp, bpt, 0, n - 1, delta, general)
    cur = qap_cost(a, b, sol)
    for _ in range(iterations):
        k = np.argmin(delta)
        if delta[k] >= 0:
            break
        cur += delta[k]
        r, s = index_to_pair(k, n)
        swap_and_update(fa, fat, bp, bpt, sol, delta, r, s, general)
    return cur


def _local_search_batch(a, at, b, sols, seeds, costs, iterations, tenure, use_tabu):
    fa, fb, general = symmetric_form(a, b)  # once a batch: O(n^2)
    fat = np.ascontiguousarray(fa.T)
    for k in prange(sols.shape[0]):
        if use_tabu:
            costs[k] = tabu_local_search(a, b, fa, fat, fb, general, sols[k], seeds[k], iterations, tenure)
        else:
            costs[k] = two_opt_local_search(a, b, fa, fat, fb, general, sols[k], iterations)


local_search_batch, local_search_batch_parallel = serial_and_parallel(_local_search_batch)


@njit(cache=True)
def construct(donor, tau, gamma, state):
    """A cunning ant: facilities kept from the donor with probability 1 - gamma, the others placed
    in random order, each on a free location with probability proportional to tau[i, loc]."""
    n = donor.shape[0]
    sol = donor.copy()
    free = np.zeros(n, dtype=np.bool_)
    todo = np.empty(n, dtype=np.int64)
    m = 0
    for i in range(n):
        if rng.uniform(state) < gamma:
            free[donor[i]] = True
            todo[m] = i
            m += 1
    for t in range(m - 1, 0, -1):  # random order of the facilities to place
        u = rng.below(state, t + 1)
        todo[t], todo[u] = todo[u], todo[t]
    for t in range(m):
        i = todo[t]
        total = 0.0
        for loc in range(n):
            if free[loc]:
                total += tau[i, loc]
        x = rng.uniform(state) * total
        chosen = -1
        for loc in range(n):
            if free[loc]:
                chosen = loc
                x -= tau[i, loc]
                if x < 0:
                    break
        sol[i] = chosen
        free[chosen] = False
    return sol


def _construct_colony(ants, tau, gamma, seeds):
    """One cunning ant per unit, from its donor ants[k], each from its own stream state seeds[k]
    (so that the ants can be built in parallel, with the same result)."""
    children = np.empty_like(ants)
    for k in prange(ants.shape[0]):
        state = np.empty(1, dtype=np.uint64)
        state[0] = seeds[k]
        children[k] = construct(ants[k], tau, gamma, state)
    return children


construct_colony, construct_colony_parallel = serial_and_parallel(_construct_colony)  # the same ants


@njit(cache=True)
def draw_seeds(state, m):
    """The local searches' stream states: the colony stream's next m words."""
    seeds = np.empty(m, dtype=np.uint64)
    for k in range(m):
        seeds[k] = rng.next_u64(state)
    return seeds


@njit(cache=True)
def pheromone_constants(rho, p_best, n):
    """(1 - rho, 1 - root, (n/2 - 1) root) with root = p_best^(1/n): MAX-MIN AS's bounds are
    tau_max = 1 / ((1 - rho) C_best) and tau_min = tau_max (1 - root) / ((n/2 - 1) root) (n > 2),
    computed once here for the host and the device colony alike."""
    root = p_best ** (1.0 / n)
    return 1.0 - rho, 1.0 - root, (n / 2.0 - 1.0) * root


@njit(cache=True)
def update_pheromone(tau, ants, costs, best, rho, p_best):
    """Eq. (1)-(2): tau = rho tau + sum_k 1/C*_k on ant*_k's assignments, clamped to
    [tau_min, tau_max] with MAX-MIN AS's bounds from the best cost so far."""
    n = tau.shape[0]
    tau *= rho
    for k in range(ants.shape[0]):
        add = 1.0 / max(costs[k], 1)
        for i in range(n):
            tau[i, ants[k, i]] += add
    one_minus_rho, one_minus_root, min_den = pheromone_constants(rho, p_best, n)
    tau_max = 1.0 / (one_minus_rho * max(best, 1))
    tau_min = tau_max * one_minus_root / min_den if n > 2 else tau_max
    for i in range(n):
        for j in range(n):
            tau[i, j] = min(max(tau[i, j], tau_min), tau_max)


def host_generations(problem, batch, colony, ants, costs, tau, best, best_sol, ls_iters, state, prm, stop, traj,
                     progress):
    """The generation loop on the host: `colony` builds the ants, `batch` runs their local searches;
    ants, costs, tau and the colony stream `state` are updated in place. Returns (generations,
    local-search iterations, best, best solution)."""
    m = ants.shape[0]
    generation = 0
    while not stop.reached(ls_iters, ls_iters, traj.elapsed(), best):
        generation += 1
        update_pheromone(tau, ants, costs, best, prm["rho"], prm["p_best"])
        child_costs = np.empty(m, dtype=np.int64)
        children = colony(ants, tau, prm["gamma"], draw_seeds(state, m))
        seeds = draw_seeds(state, m)
        batch(problem.a, problem.at, problem.b, children, seeds, child_costs, prm["ls_iterations"],
              prm["tenure"], prm["ls"] == "tabu")
        ls_iters += m * prm["ls_iterations"]
        better = child_costs <= costs
        ants[better] = children[better]
        costs[better] = child_costs[better]
        k = int(np.argmin(costs))
        if costs[k] < best:
            best, best_sol = int(costs[k]), ants[k].copy()
            traj.improved(ls_iters, best)
        if progress:
            progress.tick(ls_iters, best)
    return generation, ls_iters, best, best_sol


class CunningAntSystem:
    """The colony's rules and parameters; a colony engine (HostColony, ParallelHostColony,
    lsbench.gpu.engine.colony.DeviceColony) runs its local searches and generations."""

    name = "cas"
    problems = ("qap",)
    parameters = (
        Param("ants", int, "colony size m (default n; 4n for the real-life class tai*b)", low=1, high=1 << 16),
        Param("rho", float, "pheromone persistence", default=0.5, low=0, high=1, open_high=True),
        Param("gamma", float, "share of facilities an ant reassigns (default 0.4; 0.5 for tai*b)", low=0, high=1,
              open_low=True),
        Param("ls", str, "local search of each ant", default="tabu", choices=("tabu", "2opt")),
        Param("ls_iterations", int, "local-search iterations per ant (default 16n for tabu, 4n for 2opt and tai*b)",
              low=1, high=10**7),
        Param("tenure", int, "Ro-TS tenure scale T: floor(T u^3) (default n)", low=1),
        Param("p_best", float, "MAX-MIN AS's p_best for tau_min", default=0.005, low=0, high=1, open_low=True,
              open_high=True),
    )

    def __init__(self, ants=None, rho=0.5, gamma=None, ls="tabu", ls_iterations=None, tenure=None,
                 p_best=0.005):
        self.ants, self.rho, self.gamma, self.ls = ants, float(rho), gamma, ls
        self.ls_iterations, self.tenure, self.p_best = ls_iterations, tenure, float(p_best)

    def params(self, problem):
        n = problem.n
        real_life = problem.name.endswith("b") and problem.name.startswith("tai")  # class (iv) of the paper

        def given(value, default):
            return default if value is None else value
        return {"ants": int(given(self.ants, 4 * n if real_life else n)), "rho": self.rho,
                "gamma": float(given(self.gamma, 0.5 if real_life else 0.4)), "ls": self.ls,
                "ls_iterations": int(given(self.ls_iterations, 4 * n if real_life or self.ls == "2opt" else 16 * n)),
                "tenure": int(given(self.tenure, n)), "p_best": self.p_best}

    def run(self, problem, colony, stop, seed, progress=None):
        """One colony from `seed`; `colony` runs the local searches and the generation loop."""
        prm = self.params(problem)
        n, m = problem.n, prm["ants"]
        state = rng.new_state(seed)
        traj = Trajectory()
        ants = np.array([rng.permutation(state, n) for _ in range(m)])
        costs = np.empty(m, dtype=np.int64)
        colony.local_search(ants, draw_seeds(state, m), costs, prm)
        ls_iters = m * prm["ls_iterations"]
        k = int(np.argmin(costs))
        best, best_sol = int(costs[k]), ants[k].copy()
        traj.improved(ls_iters, best)
        tau = np.full((n, n), 1.0 / ((1.0 - prm["rho"]) * max(best, 1)))  # tau_0 = tau_max
        generation, ls_iters, best, best_sol = colony.generations(ants, costs, tau, best, best_sol, ls_iters, state,
                                                                  prm, stop, traj, progress)
        return SearchResult(best, best_sol, ls_iters, ls_iters * (n * (n - 1) // 2), traj.points,
                            {**prm, "generations": generation}, int(costs.min()), seed)


class HostColony(Engine):
    """cas on one core: ants built and their local searches run in turn (the baseline)."""

    name = "cpu"
    problems = ("qap",)
    parallel = False

    def __init__(self, problem, neighbourhood, search, params, threads=None):
        self.problem, self.search = problem, search
        if self.parallel:
            use_threads(threads)
        self.batch = local_search_batch_parallel if self.parallel else local_search_batch
        self.colony = construct_colony_parallel if self.parallel else construct_colony

    def local_search(self, ants, seeds, costs, prm):
        """Each ant's local search from its own stream state seeds[k]; ants become their bests."""
        pr = self.problem
        self.batch(pr.a, pr.at, pr.b, ants, seeds, costs, prm["ls_iterations"], prm["tenure"], prm["ls"] == "tabu")

    def generations(self, *colony):
        return host_generations(self.problem, self.batch, self.colony, *colony)

    def run(self, seeds, stop, progress=None):
        return [self.search.run(self.problem, self, stop, seed, progress) for seed in seeds]

    def warm_up(self, seeds, iterations):
        """The colony's own size (a GPU kernel's shape follows it), short local searches, the start
        batch and `iterations` generations."""
        if not iterations:
            return
        warm = copy.copy(self.search)
        warm.ls_iterations = 2
        warm.run(self.problem, self, Stop(iterations=(iterations + 1) * 2 * warm.params(self.problem)["ants"]),
                 seeds[0])

    def describe(self):
        return {"backend": self.name, "threads": numba.get_num_threads() if self.parallel else 1}


class ParallelHostColony(HostColony):
    """cas on all cores: ants built and their local searches run in parallel, same results."""

    name = "cpu-parallel"
    parallel = True
