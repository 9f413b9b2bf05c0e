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
import time

import numba
import numpy as np
from numba import njit, prange

from .. import rng
from ..interfaces import WARMUP_SECONDS, Engine, SearchResult, Stop
from ..params import Param
from ..neighborhoods import index_to_pair
from ..problems.base import serial_and_parallel
from ..threads import use_threads
from ..problems.qap import (all_deltas, permuted_distances, qap_cost, qap_costs, swap_and_update,
                            symmetric_form)
from ..search.chunk_loop import NO_TARGET
from ..search.common import Trajectory
from ..search.tabu import rots_chunk, rots_expiry

NO_AGE_ASPIRATION = np.int64(1) << np.int64(40)


ANT_STATE_BYTES = 1 << 30  # the local searches' state held at once: ants run in groups that fit it
SLICE_MOVES = 100_000_000  # move costs a thread updates in one call (a fraction of a second): Ctrl-C and the
# time budget are answered between calls


@njit(cache=True)
def ant_begin(a, b, fa, fat, fb, general, ants, g, lo, hi):
    """Rows lo..hi of ant g's local-search state (lsbench.engines.cas.ant_group) from its solution:
    first its permuted distances and (tabu) Taillard's initial tabu list and its transpose, then the
    deltas of the swaps (r, s) with lo <= r < hi, last its costs."""
    perms, tables, delta, _states, scores, _ended = ants
    n = perms.shape[2]
    if lo == 0:
        permuted, transposed = permuted_distances(fb, perms[g, 0], general)
        tables[g, 0] = permuted
        tables[g, 1] = transposed
        if tables.shape[1] == 4:
            tables[g, 2] = rots_expiry(n)
            tables[g, 3] = tables[g, 2].T
    all_deltas(fa, fat, tables[g, 0], tables[g, 1], lo, hi, delta[g], general)
    if hi >= n - 1:
        scores[g, 0] = scores[g, 1] = qap_cost(a, b, perms[g, 0])
        perms[g, 1] = perms[g, 0]


@njit(cache=True)
def ant_steps(fa, fat, general, ants, g, it0, count, tenure):
    """`count` more iterations of ant g's local search: Ro-TS with tenure floor(tenure u^3) and no
    aspiration by age, or (no tabu tables) 2-opt until a local optimum."""
    perms, tables, delta, states, scores, ended = ants
    if tables.shape[1] == 4:
        imp = np.empty(count, dtype=np.int64)
        _, scores[g, 0], scores[g, 1], _ = rots_chunk(fa, fat, tables[g, 0], tables[g, 1], perms[g, 0], delta[g],
                                                      tables[g, 2], tables[g, 3], states[g], it0, count,
                                                      scores[g, 0], scores[g, 1], perms[g, 1], 0, 0,
                                                      NO_AGE_ASPIRATION, NO_TARGET, imp, imp, tenure, general)
    elif not ended[g]:
        change, ended[g] = two_opt_steps(fa, fat, tables[g, 0], tables[g, 1], perms[g, 0], delta[g], count, general)
        scores[g, 0] += change
        scores[g, 1] = scores[g, 0]
        perms[g, 1] = perms[g, 0]


@njit(cache=True)
def two_opt_steps(fa, fat, bp, bpt, sol, delta, count, general):
    """Up to `count` best-improvement pair exchanges; returns (cost change, at a local optimum)."""
    n = sol.shape[0]
    change = 0
    for _ in range(count):
        k = np.argmin(delta)
        if delta[k] >= 0:
            return change, True
        change += delta[k]
        r, s = index_to_pair(k, n)
        swap_and_update(fa, fat, bp, bpt, sol, delta, r, s, general)
    return change, False


def _ants_begin(a, b, fa, fat, fb, general, ants, first, last, lo, hi):
    for g in prange(first, last):
        ant_begin(a, b, fa, fat, fb, general, ants, g, lo, hi)


def _ants_steps(fa, fat, general, ants, it0, count, tenure):
    for g in prange(ants[0].shape[0]):
        ant_steps(fa, fat, general, ants, g, it0, count, tenure)


ants_begin, ants_begin_parallel = serial_and_parallel(_ants_begin)
ants_steps, ants_steps_parallel = serial_and_parallel(_ants_steps)


def ant_group(sols, seeds, use_tabu):
    """The local-search state of a group of ants: (solutions [ant, current or best, n],
    tables [ant, permuted distances / their transpose / (tabu) expiries / their transpose, n, n],
    deltas, stream states, costs [ant, current or best], 2-opt ended)."""
    k, n = sols.shape
    perms = np.empty((k, 2, n), np.int64)
    perms[:, 0] = sols
    return (perms, np.empty((k, 4 if use_tabu else 2, n, n), np.int64), np.empty((k, n * (n - 1) // 2), np.int64),
            seeds.reshape(k, 1).copy(), np.empty((k, 2), np.int64), np.zeros(k, np.bool_))


def local_search_batch(a, at, b, sols, seeds, costs, iterations, tenure, use_tabu, parallel=False, deadline=None):
    """Each ant's local search from its own stream state seeds[k]: Ro-TS (`use_tabu`) for
    `iterations`, or 2-opt for at most `iterations` moves; ants become their bests and `costs`
    their costs. Groups of ants whose state fits ANT_STATE_BYTES run together (on all cores where
    `parallel`), in calls of about SLICE_MOVES move costs a thread: Ctrl-C is answered between calls,
    and they end at `deadline` (time.perf_counter()), each ant holding its best so far (an ant not
    begun, its start). Returns (the iterations the ants ran, ended by the deadline)."""
    m, n = sols.shape
    fa, fb, general = symmetric_form(a, b)  # once a batch: O(n^2)
    fat = np.ascontiguousarray(fa.T)
    moves = max(1, n * (n - 1) // 2)
    size = max(1, min(m, ANT_STATE_BYTES // (8 * ((4 if use_tabu else 2) * n * n + moves + 2 * n))))
    width = numba.get_num_threads() if parallel else 1
    per_call = SLICE_MOVES * width
    begin, steps = (ants_begin_parallel, ants_steps_parallel) if parallel else (ants_begin, ants_steps)

    def cut(first_not_begun):  # the deadline: the ants not begun keep their start
        costs[first_not_begun:] = qap_costs(a, b, sols[first_not_begun:])
        return done, True

    def late():
        return deadline is not None and time.perf_counter() >= deadline
    done = 0
    for lo in range(0, m, size):
        hi = min(m, lo + size)
        group = ant_group(sols[lo:hi], seeds[lo:hi], use_tabu)
        for first, last, rows in begin_calls(hi - lo, n, per_call, width):
            if late():
                return cut(lo)
            begin(a, b, fa, fat, fb, general, group, first, last, *rows)
        count = max(1, per_call // ((hi - lo) * moves))
        try:
            for it0 in range(0, iterations, count):
                if late():
                    return cut(hi)
                steps(fa, fat, general, group, it0, min(count, iterations - it0), tenure)
                done += (hi - lo) * min(count, iterations - it0)
                if group[-1].all():
                    break
        finally:  # (cut short too: each ant holds its best so far)
            sols[lo:hi] = group[0][:, 1]
            costs[lo:hi] = group[4][:, 1]
    return done, False


def begin_calls(ants, n, per_call, width):
    """(first ant, last ant, (first row, last row)) of the calls that begin a group's local
    searches: at least `width` ants a call (the cores that run them), rows split so that a call
    makes about `per_call` operations (n^3 / 2 an ant: every swap's delta from scratch)."""
    per_ant = max(1, n * n * (n - 1) // 2)
    step = max(width, per_call // per_ant)
    parts = max(1, -(-per_ant * min(step, ants) // per_call))
    cuts = [round((n - 1) * (1 - (1 - j / parts) ** 0.5)) for j in range(parts + 1)]  # rows of about equal work
    rows = [(r0, r1) for r0, r1 in zip(cuts, cuts[1:]) if r1 > r0] or [(0, n - 1)]
    return [(k, min(ants, k + step), r) for k in range(0, ants, step) for r in rows]


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


def host_generations(engine, colony, ants, costs, tau, best, best_sol, ls_iters, state, prm, stop, traj, progress):
    """The generation loop on the host: `colony` builds the ants, `engine.local_search` runs their
    local searches; ants, costs, tau and the colony stream `state` are updated in place; a
    generation the time budget ends does not count. Returns (generations, local-search iterations,
    best, best solution)."""
    m = ants.shape[0]
    generation = 0
    while not stop.reached(ls_iters, ls_iters, traj.elapsed(), best):
        update_pheromone(tau, ants, costs, best, prm["rho"], prm["p_best"])
        child_costs = np.empty(m, dtype=np.int64)
        children = colony(ants, tau, prm["gamma"], draw_seeds(state, m))
        seeds = draw_seeds(state, m)
        if engine.local_search(children, seeds, child_costs, prm, traj.deadline(stop))[1]:
            break
        generation += 1
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
        ran, cut = colony.local_search(ants, draw_seeds(state, m), costs, prm, traj.deadline(stop))
        ls_iters = ran if cut else m * prm["ls_iterations"]  # (cut: the time budget ended the first searches)
        k = int(np.argmin(costs))
        best, best_sol = int(costs[k]), ants[k].copy()
        traj.improved(ls_iters, best)
        tau = np.full((n, n), 1.0 / ((1.0 - prm["rho"]) * max(best, 1)))  # tau_0 = tau_max
        generation, ls_iters, best, best_sol = colony.generations(ants, costs, tau, best, best_sol, ls_iters, state,
                                                                  prm, stop, traj, progress)
        return SearchResult(best, best_sol, ls_iters, ls_iters * (n * (n - 1) // 2), traj.points,
                            {**prm, "generations": generation, **({"first_searches_cut": True} if cut else {})},
                            int(costs.min()), seed)


class HostColony(Engine):
    """cas on one core: ants built and their local searches run in turn (the baseline)."""

    name = "cpu"
    problems = ("qap",)
    parallel = False

    def __init__(self, problem, neighbourhood, search, params, threads=None):
        self.problem, self.search = problem, search
        if self.parallel:
            use_threads(threads)
        self.colony = construct_colony_parallel if self.parallel else construct_colony

    def local_search(self, ants, seeds, costs, prm, deadline=None):
        """Each ant's local search from its own stream state seeds[k]; ants become their bests.
        Returns (iterations run, ended by the deadline)."""
        pr = self.problem
        return local_search_batch(pr.a, pr.at, pr.b, ants, seeds, costs, prm["ls_iterations"], prm["tenure"],
                                  prm["ls"] == "tabu", self.parallel, deadline)

    def generations(self, *colony):
        return host_generations(self, self.colony, *colony)

    def run(self, seeds, stop, progress=None):
        return [self.search.run(self.problem, self, stop, seed, progress) for seed in seeds]

    def warm_up(self, seeds, iterations):
        """The colony's own size (a GPU kernel's shape follows it), short local searches, the start
        batch and `iterations` generations."""
        if not iterations:
            return
        warm = copy.copy(self.search)
        warm.ls_iterations = 2
        warm.run(self.problem, self, Stop(iterations=(iterations + 1) * 2 * warm.params(self.problem)["ants"],
                                          seconds=WARMUP_SECONDS), seeds[0])

    def describe(self):
        return {"backend": self.name, "threads": numba.get_num_threads() if self.parallel else 1}


class ParallelHostColony(HostColony):
    """cas on all cores: ants built and their local searches run in parallel, same results."""

    name = "cpu-parallel"
    parallel = True
