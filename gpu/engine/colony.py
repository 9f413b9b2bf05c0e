"""cAS generations entirely on the GPU (`--algorithm cas --backend gpu-resident`).

A generation of lsbench.engines.cas on the host costs a launch, two copies and a wait besides its
local searches; on tai60b (one block per ant, ~1 ms of kernel) that was 0.4-0.8 ms more a
generation. Here the colony (ants, their costs, the pheromone matrix, the best ant) stays on the
device and each generation is four kernels queued on the engine's stream:
- `pheromone_kernel` (one block per row of tau): Eq. (1)-(2) and the MAX-MIN clamp, element by
  element with the ants' deposits in ant order and explicitly rounded float64 operations (no fused
  multiply-add), so tau is bit for bit the CPU's; it also hands each ant's search its donor and its
  two stream states, which SplitMix64 gives by counter: the colony stream's words g m .. of draw_seeds;
- `ant_kernel` (gpu/engine/ants.py, one block per ant): each ant built over its donor;
- the Ro-TS kernel of gpu/engine/rots/kernel.py, one block per ant, which searches from it;
- `select_kernel` (one block): the replacement of ant*_k by its child if not worse, the colony's
  best (first lowest, as np.argmin), and the stop at the target: it clears every search's ACTIVE
  flag, so the generations already queued return at once.
The host queues a few generations ahead and reads each generation's best from mapped host memory;
it stops queueing on the iteration budget or the time limit (a time limit may so run up to AHEAD
generations past it) or when the device says the target is reached. Same colony, same results as
cas on `cpu`.
"""
import numpy as np
from numba import config, cuda, float64, int32, int64

from lsbench.errors import LsbenchError
from lsbench.params import Param, Rule
from lsbench.engines.cas import NO_AGE_ASPIRATION, HostColony, pheromone_constants
from lsbench.search.chunk_loop import NO_TARGET

from .ants import build_ants
from ..runtime.chunks import IMPROVEMENT_CAP
from ..runtime.rounded import add_rn, div_rn, mul_rn
from ..runtime.waits import wait_for
from ..device import GOLDEN, mix64
from .rots.host import ResidentRots
from .rots.shape import UNEVEN
from .rots.kernel import REBASE_AT

AHEAD = 3  # generations queued beyond the last one seen finished
RING = 64  # generations' bests kept in mapped memory (the host reads them within AHEAD + 1)
SELECT_THREADS = 512
LONE_ANT_THREADS = 512  # an ant's Ro-TS block on a small instance where every ant has an SM of its own
DONE, BEST, GENS = 0, 1, 2  # COLONY[DONE], COLONY[BEST] on the device; in mapped host memory MAP[DONE],
# MAP[GENS] (generations finished) and MAP[3 + g % RING] (generation g's best)



@cuda.jit
def pheromone_kernel(ANTS, COSTS, TAU, P, STATE, COLONY, rho, one_minus_rho, one_minus_root, min_den, words):
    """Row i = blockIdx.x of lsbench.engines.cas.update_pheromone with the colony's best; then the
    next generation's donors (P) and stream states (STATE: the search's, the ant's)."""
    if COLONY[DONE] != 0:
        return
    m, n = ANTS.shape
    i = cuda.blockIdx.x
    tau_max = div_rn(1.0, mul_rn(one_minus_rho, float64(max(COLONY[BEST], 1))))
    tau_min = div_rn(mul_rn(tau_max, one_minus_root), min_den) if n > 2 else tau_max
    for j in range(cuda.threadIdx.x, n, cuda.blockDim.x):
        t = mul_rn(TAU[i * n + j], rho)
        for k in range(m):
            if ANTS[k, i] == j:
                t = add_rn(t, div_rn(1.0, float64(max(COSTS[k], 1))))
        t = tau_min if t < tau_min else t
        TAU[i * n + j] = tau_max if t > tau_max else t
    gid = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    step = cuda.gridDim.x * cuda.blockDim.x
    for q in range(gid, m * n, step):
        P[q // n, q % n] = ANTS[q // n, q % n]
    for k in range(gid, m, step):  # draw_seeds twice: the ants' streams, then the searches'
        STATE[k, 1] = mix64(words + np.uint64(k + 1) * GOLDEN)
        STATE[k, 0] = mix64(words + np.uint64(m + k + 1) * GOLDEN)


@cuda.jit
def select_kernel(ANTS, COSTS, CHILD_COSTS, CHILDREN, BEST_SOL, ACTIVE, COLONY, MAP, target, generation):
    """One block: each ant*_k becomes its child where the child is not worse, the colony's best
    (lowest cost, lowest k on ties) replaces the best so far where lower, and at the target every
    search is switched off. Generation g's best goes to MAP[3 + g % RING], then g to MAP[GENS]."""
    if COLONY[DONE] != 0:
        return
    m, n = ANTS.shape
    tid = cuda.threadIdx.x
    T = cuda.blockDim.x
    for q in range(tid, m * n, T):
        k = q // n
        if CHILD_COSTS[k] <= COSTS[k]:
            ANTS[k, q % n] = CHILDREN[k, q % n]
    cuda.syncthreads()
    low = cuda.shared.array(SELECT_THREADS, int64)
    arg = cuda.shared.array(SELECT_THREADS, int32)
    c, a = np.int64(0x7FFFFFFFFFFFFFFF), np.int32(m)
    for k in range(tid, m, T):
        if CHILD_COSTS[k] <= COSTS[k]:
            COSTS[k] = CHILD_COSTS[k]
        if COSTS[k] < c:
            c, a = COSTS[k], np.int32(k)
    low[tid], arg[tid] = c, a
    cuda.syncthreads()
    half = T // 2
    while half > 0:
        if tid < half and (low[tid + half] < low[tid] or (low[tid + half] == low[tid] and arg[tid + half] < arg[tid])):
            low[tid], arg[tid] = low[tid + half], arg[tid + half]
        cuda.syncthreads()
        half //= 2
    improved = low[0] < COLONY[BEST]
    for q in range(tid, n if improved else 0, T):
        BEST_SOL[q] = ANTS[arg[0], q]
    cuda.syncthreads()  # every thread has read the old best before thread 0 replaces it
    best = low[0] if improved else COLONY[BEST]
    reached = best <= target
    for k in range(tid, m if reached else 0, T):
        ACTIVE[k] = 0
    if tid == 0:
        COLONY[BEST] = best
        COLONY[DONE] = 1 if reached else 0
        MAP[3 + generation % RING] = best
        cuda.threadfence_system()
        MAP[GENS] = generation
        MAP[DONE] = 1 if reached else 0


def run_generations(engine, ants, costs, tau, best, best_sol, ls_iters, colony_state, prm, stop, traj, progress):
    """lsbench.engines.cas's generation loop with the colony on the device of `engine` (a
    ResidentRots); ants, costs, tau and the colony stream state are updated in place. Returns
    (generations, local-search iterations, best, best solution)."""
    m, n = ants.shape
    its = prm["ls_iterations"]
    if its >= REBASE_AT:  # one generation's local searches never shift the tabu clock
        raise LsbenchError(f"--param ls_iterations={its}: cas on gpu-resident runs at most {REBASE_AT - 1}")
    per_generation = m * its
    b = engine.buffers(m)  # a generation's children are the searches' bests
    P, STATE, CHILD_COSTS, CHILDREN, ACTIVE, TAU = b.START, b.STATE, b.BEST, b.BEST_SOL, b.ACTIVE, b.TAU  # donors: starts
    up, host_up = b.upload, b.host_upload
    host_up["TAU"][:] = tau.ravel()
    host_up["ACTIVE"][:] = 1
    stream = engine.stream
    up.copy_to_device(host_up["all"], stream=stream)
    ANTS, COSTS, BEST_SOL, COLONY, MAP, events = _colony_buffers(engine, m, n)
    ANTS.copy_to_device(ants.astype(np.int32), stream=stream)
    COSTS.copy_to_device(costs.astype(np.int64), stream=stream)
    BEST_SOL.copy_to_device(best_sol.astype(np.int32), stream=stream)
    COLONY.copy_to_device(np.array([0, best], dtype=np.int64), stream=stream)
    MAP[DONE] = MAP[GENS] = 0
    rho = prm["rho"]
    one_minus_rho, one_minus_root, min_den = pheromone_constants(rho, prm["p_best"], n)
    target = np.int64(stop.target) if stop.target is not None else NO_TARGET
    no_target = NO_TARGET  # the local searches run their whole budget
    start_words = int(colony_state[0])  # the colony stream: draw_seeds takes 2 m words a generation
    threads = min(1024, -(-n // 32) * 32)
    queued = seen = 0
    while not MAP[DONE] and not stop.reached(ls_iters + queued * per_generation, ls_iters + queued * per_generation,
                                             traj.elapsed(), best):
        if queued - seen > AHEAD:  # wait for the oldest generation in flight
            wait_for(event=events[(seen + 1) % len(events)])
            best, seen = _read_bests(MAP, best, seen, ls_iters, per_generation, traj)
            if progress:
                progress.tick(ls_iters + seen * per_generation, best)
            continue
        queued += 1
        words = np.uint64((start_words + (queued - 1) * 2 * m * int(GOLDEN)) % (1 << 64))
        pheromone_kernel[n, threads, stream](ANTS, COSTS, TAU, P, STATE, COLONY, rho, one_minus_rho, one_minus_root,
                                             min_den, words)
        build_ants(b, prm["gamma"], stream)
        for first in range(0, its, IMPROVEMENT_CAP):
            engine.launch_chunk(m, (0, 0, int(NO_AGE_ASPIRATION), no_target, first, min(IMPROVEMENT_CAP, its - first),
                                    prm["tenure"], 1 if first == 0 else 0))
        select_kernel[1, SELECT_THREADS, stream](ANTS, COSTS, CHILD_COSTS, CHILDREN, BEST_SOL, ACTIVE, COLONY, MAP,
                                                 target, queued)
        events[queued % len(events)].record(stream)
    wait_for(stream)
    best, generations = _read_bests(MAP, best, seen, ls_iters, per_generation, traj)
    colony_state[0] = np.uint64((start_words + generations * 2 * m * int(GOLDEN)) % (1 << 64))
    ants[:] = ANTS.copy_to_host()
    costs[:] = COSTS.copy_to_host()
    return generations, ls_iters + generations * per_generation, best, BEST_SOL.copy_to_host().astype(np.int64)


def _colony_buffers(engine, m, n):
    """The device colony of m ants (ants, costs, best solution, COLONY), the mapped MAP and the
    events of the generations in flight, allocated once per engine and colony size (mapped and
    pinned allocations take a good part of a millisecond)."""
    held = getattr(engine, "_colony", None)
    if held is None or held[0] != (m, n):
        events = [cuda.event() if config.ENABLE_CUDASIM else cuda.event(timing=False) for _ in range(AHEAD + 1)]
        held = ((m, n), (cuda.device_array((m, n), np.int32), cuda.device_array(m, np.int64),
                         cuda.device_array(n, np.int32), cuda.device_array(2, np.int64),
                         cuda.mapped_array(3 + RING, dtype=np.int64), events))
        engine._colony = held
    return held[1]


def _read_bests(MAP, best, seen, ls_iters, per_generation, traj):
    """The generations finished since `seen`: their improvements of the best into the trajectory.
    Returns (best, generations finished)."""
    finished = int(MAP[GENS])
    for g in range(seen + 1, finished + 1):
        value = int(MAP[3 + g % RING])
        if value < best:
            best = value
            traj.improved(ls_iters + g * per_generation, best)
    return best, finished


def ant_block(n, ants, sms):
    """Threads of an ant's Ro-TS block, or None for the engine's own choice (256 on a small
    instance, whose n(n-1)/2 pair costs stay on chip, 1024 on a larger one): LONE_ANT_THREADS on a
    small instance whose ants each have an SM of their own. Measured at 344727b on an H200, ms a
    generation at 256 and 512 threads: tai40a 0.758 / 0.652, tai50a 1.235 / 1.111, tai60a 1.639 /
    1.381; with more ants than SMs 256 stays ahead (tai50b 0.667 / 0.873, tai60b 0.919 / 1.122)."""
    small = n * (n - 1) // 2 <= 2048  # (the engine's own bound: gpu/engine/rots/host.py _configure)
    return LONE_ANT_THREADS if small and ants <= sms else None


class DeviceColony(HostColony):
    """The registry's engine for cas on gpu-resident: the whole colony on the GPU, one thread block
    per ant, which builds its ant from its donor and the pheromone matrix and then runs its tabu
    search; the pheromone update and the choice of the next donors are kernels too. Same results
    as cas on `cpu`."""

    name = "gpu-resident"
    parameters = (Param("block", int, "threads per ant's block (default: chosen for the colony size)", low=32,
                        high=1024),)

    rules = (Rule(lambda v, run: v["ls"] != "tabu",
                  "--param ls={ls}: cas on gpu-resident runs its tabu local search on the GPU (ls=tabu)"),)

    def __init__(self, problem, neighbourhood, search, params, threads=None):
        self.problem, self.search = problem, search
        # a colony of K ants: one wave of up to four blocks per SM where K fills the SMs evenly
        # (measured faster than the queue for cas), else the queue (gpu/engine/rots/shape.uneven_grid)
        block = params.get("block")
        if block is None and not config.ENABLE_CUDASIM:
            block = ant_block(problem.n, search.params(problem)["ants"], cuda.get_current_device().MULTIPROCESSOR_COUNT)
        self.rots = ResidentRots(problem, {}, threads=block, persistent=UNEVEN)

    def local_search(self, ants, seeds, costs, prm, deadline=None):
        """The first ants' local searches, one block each (the time budget is checked after them)."""
        best, best_sol = self.rots.batch(ants, seeds, prm["ls_iterations"], NO_AGE_ASPIRATION, prm["tenure"])
        ants[:], costs[:] = best_sol, best  # each ant becomes its search's best (cas.local_search_batch)
        return len(ants) * prm["ls_iterations"], False

    def generations(self, *colony):
        return run_generations(self.rots, *colony)

    def describe(self):
        return {**self.rots.describe(), "model": "cas: one block per ant builds it and runs its tabu search; "
                                                 "pheromone update and selection on the GPU too"}

