"""Tabu search over the evaluator interface, and Taillard's robust tabu search (Ro-TS) for QAP.

Tabu search: each iteration takes the best admissible move (not tabu, or tabu but leading below
the best objective found: aspiration), lowest move index on ties, so every backend that returns
the same move costs yields the same trajectory. The attributes a move forbids and for how long
are the neighbourhood's (`tabu_record`); the tenure is fixed (Janiak et al.: 7 for TSP, 10 for
PFSP) or drawn per move in [tenure_min, tenure_max].
"""
import numpy as np
from numba import njit

from .. import rng
from ..errors import LsbenchError
from ..interfaces import COMPILED_LOOP, DEVICE_SELECT, OutOfTime, SearchResult, plain
from ..neighborhoods import index_to_pair
from ..params import Param, Rule, in_size_units, size_param
from ..problems.qap import swap_and_update
from .common import ChunkLength, Trajectory, start_solution

_BIG = np.iinfo(np.int64).max


@njit(cache=True)
def select_admissible(deltas, tabu, current, best, tie_key):
    """Best non-tabu move, or a tabu move that beats the best (aspiration); -1 if none.

    Equal deltas are ranked by rng.tie_rank(k, tie_key): flow-shop makespan landscapes have
    plateaus of dozens of equal moves, and always taking the lowest index walks in circles there.
    """
    k_best = -1
    d_best = deltas[0]
    r_best = np.uint64(0)
    for k in range(deltas.shape[0]):
        d = deltas[k]
        if tabu[k] and not current + d < best:
            continue
        r = rng.tie_rank(k, tie_key)
        if k_best < 0 or d < d_best or (d == d_best and r < r_best):
            k_best = k
            d_best = d
            r_best = r
    return k_best


@njit(cache=True)
def select_least_bad(deltas, tie_key):
    """When every move is tabu: the move of least cost, ties ranked as in select_admissible."""
    no_tabu = np.zeros(deltas.shape[0], dtype=np.bool_)
    return select_admissible(deltas, no_tabu, 0, 0, tie_key)


_CLASS = np.int64(1) << np.int64(60)  # |delta| < 2^59 is checked when the search starts


@njit(cache=True)
def rots_select(deltas, p, expiry, expiry_t, it, aspiration, current, best):
    """Taillard's Ro-TS rule over the triangular delta table; -1 if every move is tabu.

    A swap (i, j) is authorised unless both facilities would return to forbidden locations
    (expiry[f, loc] >= it); it is aspired if it improves the best, or if one of the assignments
    it makes was last forbidden more than `aspiration` iterations ago. Taillard's loop takes the
    cheapest aspired move if any, else the cheapest authorised one, lowest index on ties: here
    the lexicographic minimum of (class, delta, index) as one branch-light integer key.
    `expiry_t` is the transpose of `expiry`, kept so both lookups read rows.
    """
    n = p.shape[0]
    k_best = -1
    key_best = 3 * _CLASS
    k = 0
    for i in range(n - 1):
        pi = p[i]
        for j in range(i + 1, n):
            d = deltas[k]
            oldest = min(expiry[i, p[j]], expiry_t[pi, j])
            if oldest < it - aspiration or current + d < best:
                key = d
            elif oldest < it:
                key = d + _CLASS
            else:
                key = d + 2 * _CLASS
            if key < key_best:
                key_best = key
                k_best = k
            k += 1
    if key_best >= 2 * _CLASS - (_CLASS >> 1):
        return -1
    return k_best


@njit(cache=True, inline="always")
def draw_tenure(rng_state, tenure_min, tenure_max, tenure_cube):
    """Uniform in [tenure_min, tenure_max] (Taillard), or floor(T u^3) when tenure_cube = T > 0
    (Taillard's later variant, used by Tsutsui & Fujimoto's ACO + TS)."""
    if tenure_cube > 0:
        u = rng.uniform(rng_state)
        return np.int64(tenure_cube * u * u * u)
    return rng.between(rng_state, tenure_min, tenure_max)


@njit(cache=True)
def rots_record(p_before, r, s, expiry, expiry_t, it, rng_state, tenure_min, tenure_max, tenure_cube=0):
    """Forbid r and s from going back to their old locations for a random tenure each."""
    t = it + draw_tenure(rng_state, tenure_min, tenure_max, tenure_cube)
    expiry[r, p_before[r]] = t
    expiry_t[p_before[r], r] = t
    t = it + draw_tenure(rng_state, tenure_min, tenure_max, tenure_cube)
    expiry[s, p_before[s]] = t
    expiry_t[p_before[s], s] = t


@njit(cache=True)
def rots_expiry(n):
    """Taillard's initial tabu list: -(n i + j), distinct, so early moves are never aspired by age."""
    e = np.empty((n, n), dtype=np.int64)
    for i in range(n):
        for j in range(n):
            e[i, j] = -(n * i + j)
    return e


class TabuSearch:
    """Tabu search over any evaluator (backend)."""

    name = "tabu"
    parameters = (
        Param("tenure", int, "fixed tenure (default: the neighbourhood's, e.g. 7 for TSP, 10 for PFSP)", low=0),
        Param("tenure_min", int, "tenure drawn per move in [tenure_min, tenure_max]", low=0),
        Param("tenure_max", int, "see tenure_min", low=0),
        Param("aspiration", bool, "a tabu move that beats the best found is allowed", default=True),
    )

    def __init__(self, tenure=None, tenure_min=None, tenure_max=None, aspiration=True):
        self.tenure = tenure
        self.tenure_min = tenure_min
        self.tenure_max = tenure_max
        self.aspiration = aspiration

    def params(self, neighbourhood):
        lo, hi = neighbourhood.default_tenure(neighbourhood.problem.size)
        if self.tenure is not None:
            lo = hi = self.tenure
        lo = self.tenure_min if self.tenure_min is not None else lo
        hi = self.tenure_max if self.tenure_max is not None else hi
        if lo < 0 or hi < lo:
            raise LsbenchError(f"--param tenure: need 0 <= tenure_min <= tenure_max, got {lo}, {hi}")
        return {"tenure_min": int(lo), "tenure_max": int(hi), "aspiration": bool(self.aspiration)}

    def run(self, problem, neighbourhood, evaluator, stop, seed, progress=None):
        prm = self.params(neighbourhood)
        state = rng.new_state(seed)
        sol = start_solution(problem, state, self)
        return _tabu_loop(problem, neighbourhood, evaluator, stop, state, sol, prm, progress)


MODE_TABU, MODE_ROTS, MODE_ARGMIN = 0, 1, 2  # selection rules a device-side reduction applies


def _tabu_loop(problem, nb, evaluator, stop, rng_state, sol, prm, progress):
    traj = Trajectory()
    current = problem.objective(sol)
    best, best_sol = current, sol.copy()
    traj.improved(0, best)
    evaluator.reset(sol)
    memory = nb.tabu_memory()
    flags = np.zeros(nb.size, dtype=np.bool_)
    on_device = DEVICE_SELECT in evaluator.capabilities
    if on_device:
        evaluator.init_tabu(memory)
    it = evals = 0
    no_aspiration = -np.inf if not problem.integer else np.iinfo(np.int64).min // 2
    aspiration_value = best if prm["aspiration"] else no_aspiration
    evaluator.deadline = traj.deadline(stop)
    while not stop.reached(it, evals, traj.elapsed(), best):
        it += 1
        tie_key = np.uint64(rng.next_u64(rng_state))
        if on_device:  # the same rule, applied by the device-side reduction
            move, delta, _cls = evaluator.select(MODE_TABU, it, current, aspiration_value, tie_key)
        else:
            try:
                deltas = evaluator.evaluate()
            except OutOfTime:  # the budget ended inside this iteration's evaluation: it does not count
                it -= 1
                break
            nb.tabu_flags(sol, memory, it, flags)
            move = select_admissible(deltas, flags, current, aspiration_value, tie_key)
            if move < 0:
                move = select_least_bad(deltas, tie_key)
            delta = deltas[move]
        evals += nb.size
        tenure = prm["tenure_min"] if prm["tenure_min"] == prm["tenure_max"] else \
            rng.between(rng_state, prm["tenure_min"], prm["tenure_max"])
        nb.tabu_record(sol, move, memory, it + tenure)
        if on_device:
            evaluator.record(sol, move, memory)
        nb.perform(sol, move)
        evaluator.apply(move)
        # float objectives are recomputed rather than accumulated, so no rounding drift builds up
        current = current + delta if problem.integer else problem.objective(sol)
        if current < best:
            best, best_sol = current, sol.copy()
            traj.improved(it, plain(best))
            if prm["aspiration"]:
                aspiration_value = best
        if progress:
            progress.tick(it, plain(best), plain(current))
    evaluator.deadline = None  # (the evaluator may serve another search after this one)
    return SearchResult(plain(best), best_sol, it, evals, traj.points, prm, plain(current))


@njit(cache=True)
def rots_chunk(a, at, bp, bpt, p, delta, expiry, expiry_t, rng_state, it0, n_iter, current, best, best_sol,
               tenure_min, tenure_max, aspiration, target, improve_it, improve_obj, tenure_cube=0, general=True):
    """Compiled CPU Ro-TS loop: `n_iter` iterations from iteration it0+1, all in compiled code.
    (a, at, bp, bpt, general): the delta table's form (lsbench.problems.qap.swap_and_update).

    Returns (iterations done, current, best, improvements recorded). Stops early at `target`.
    """
    n = p.shape[0]
    n_imp = 0
    done = 0
    for step in range(n_iter):
        it = it0 + step + 1
        k = rots_select(delta, p, expiry, expiry_t, it, aspiration, current, best)
        done += 1
        if k < 0:
            continue
        r, s = index_to_pair(k, n)
        rots_record(p, r, s, expiry, expiry_t, it, rng_state, tenure_min, tenure_max, tenure_cube)
        current += delta[k]
        swap_and_update(a, at, bp, bpt, p, delta, r, s, general)
        if current < best:
            best = current
            best_sol[:] = p
            improve_it[n_imp] = it
            improve_obj[n_imp] = best
            n_imp += 1
            if best <= target:
                break
    return done, current, best, n_imp


class RobustTabuSearch:
    """Taillard's Ro-TS for QAP: tenure drawn in [0.9n, 1.1n] per move, aspiration by age 2n^2;
    with `tenure_cube` = T, floor(T u^3) instead (Taillard's later non-uniform tenures: mostly
    short, now and then long).

    On the `cpu` backend the whole loop runs compiled (`rots_chunk`), returning to Python only
    between chunks of iterations to check the clock; on every other backend the same selection
    and tabu rules run over the evaluator's delta table, so trajectories are identical.
    """

    name = "rots"
    problems = ("qap",)
    rules = (
        Rule(lambda v, run: run.neighbourhood != "swap",
             "--algorithm rots: robust tabu search is defined for QAP (swap) only"),
        Rule(lambda v, run: v.get("tenure_cube") is not None and (v.get("tenure_min") is not None
                                                                   or v.get("tenure_max") is not None),
             "--param tenure_cube: draws the tenures itself; give it without tenure_min/tenure_max"),
    )
    parameters = (
        size_param("tenure_min", "tenure drawn per move in [tenure_min, tenure_max]", "0.9n"),
        size_param("tenure_max", "see tenure_min", "1.1n"),
        size_param("aspiration", "a move is aspired when one of its assignments was last forbidden this many "
                   "iterations ago", "2n^2"),
        size_param("tenure_cube", "tenure drawn per move as floor(T u^3), u uniform in [0, 1), instead of "
                   "[tenure_min, tenure_max]", "none"),
    )

    def __init__(self, tenure_min=None, tenure_max=None, aspiration=None, tenure_cube=None):
        self.tenure_min = tenure_min
        self.tenure_max = tenure_max
        self.aspiration = aspiration
        self.tenure_cube = tenure_cube

    def params(self, problem):
        n = problem.n

        def given(value, default):
            return in_size_units(default if value is None else value, n)
        prm = {"tenure_min": given(self.tenure_min, "0.9n"), "tenure_max": given(self.tenure_max, "1.1n"),
               "aspiration": given(self.aspiration, "2n^2")}
        if prm["tenure_max"] < prm["tenure_min"]:
            raise LsbenchError(f"--param tenure_min/tenure_max: need tenure_min <= tenure_max on {problem.name} "
                               f"(n = {n}: {prm['tenure_min']} > {prm['tenure_max']})")
        if self.tenure_cube is not None:
            prm["tenure_cube"] = in_size_units(self.tenure_cube, n)
            if prm["tenure_cube"] < 1:
                raise LsbenchError(f"--param tenure_cube={self.tenure_cube}: is {prm['tenure_cube']} on {problem.name} "
                                   f"(n = {n}); need at least 1")
        return prm

    def run(self, problem, neighbourhood, evaluator, stop, seed, progress=None):
        prm = self.params(problem)
        if problem.swap_delta_bound() >= 1 << 59:
            raise LsbenchError(f"instance {problem.name}: move costs may exceed 2^59, beyond Ro-TS's key range")
        state = rng.new_state(seed)
        sol = start_solution(problem, state, self)
        if COMPILED_LOOP in evaluator.capabilities:
            return self._run_compiled(problem, stop, state, sol, prm, progress)
        return self._run_evaluator(problem, neighbourhood, evaluator, stop, state, sol, prm, progress)

    def _run_evaluator(self, problem, nb, evaluator, stop, state, sol, prm, progress):
        traj = Trajectory()
        current = problem.objective(sol)
        best, best_sol = current, sol.copy()
        traj.improved(0, best)
        evaluator.reset(sol)
        expiry = rots_expiry(problem.n)
        expiry_t = np.ascontiguousarray(expiry.T)
        on_device = DEVICE_SELECT in evaluator.capabilities
        if on_device:
            evaluator.init_tabu(expiry)
        it = evals = 0
        while not stop.reached(it, evals, traj.elapsed(), best):
            it += 1
            evals += nb.size
            if on_device:
                k, delta, cls = evaluator.select(MODE_ROTS, it, current, best, aspiration=prm["aspiration"])
                if cls == 2:  # every move tabu: Taillard's loop keeps the solution
                    continue
            else:
                deltas = evaluator.evaluate()
                k = rots_select(deltas, sol, expiry, expiry_t, it, prm["aspiration"], current, best)
                if k < 0:
                    continue
                delta = deltas[k]
            r, s = index_to_pair(k, problem.n)
            rots_record(sol, r, s, expiry, expiry_t, it, state, prm["tenure_min"], prm["tenure_max"],
                        prm.get("tenure_cube", 0))
            if on_device:
                evaluator.record(sol, k, expiry)
            current += int(delta)
            nb.perform(sol, k)
            evaluator.apply(k)
            if current < best:
                best, best_sol = current, sol.copy()
                traj.improved(it, int(best))
            if progress:
                progress.tick(it, int(best), int(current))
        return SearchResult(int(best), best_sol, it, evals, traj.points, prm, int(current))

    def _run_compiled(self, problem, stop, state, sol, prm, progress):
        traj = Trajectory()
        nb = problem.neighbourhood("swap")
        current = problem.objective(sol)
        best, best_sol = current, sol.copy()
        traj.improved(0, best)
        delta, bp, bpt = nb.state(sol)
        expiry = rots_expiry(problem.n)
        expiry_t = np.ascontiguousarray(expiry.T)
        target = np.int64(stop.target) if stop.target is not None else np.int64(-_BIG)
        it = evals = 0
        chunks = ChunkLength(64, 1 << 16)
        imp_it = np.empty(chunks.cap, dtype=np.int64)
        imp_obj = np.empty(chunks.cap, dtype=np.int64)
        while not stop.reached(it, evals, traj.elapsed(), best):
            n_iter = chunks.next(stop, it, nb.size, traj.elapsed())
            t0 = traj.elapsed()
            done, current, best, n_imp = rots_chunk(
                problem.form_a, problem.form_at, bp, bpt, sol, delta, expiry, expiry_t, state, it, n_iter, current,
                best, best_sol, prm["tenure_min"], prm["tenure_max"], prm["aspiration"], target, imp_it, imp_obj,
                prm.get("tenure_cube", 0), problem.general)
            t1 = traj.elapsed()
            for m in range(n_imp):  # improvements are stamped at the end of their chunk
                traj.improved(imp_it[m], int(imp_obj[m]), seconds=t1)
            it += done
            evals += done * nb.size
            chunks.took(t1 - t0, done)
            if progress:
                progress.tick(it, int(best), int(current))
        return SearchResult(int(best), best_sol, it, evals, traj.points, prm, int(current))
