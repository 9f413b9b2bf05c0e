"""The resident local search engine: hill climbing and tabu search, whole searches on the GPU, over
a problem's device adapter (gpu/adapters/).

The engine owns the search: a persistent grid whose blocks take (search, sub-chunk) items from a
queue (gpu/runtime/chunks.py), one block a search at a time, the search's state in global memory between
items; per iteration the adapter's scan gives each thread its best move under the rule, a block
reduction picks the search's move, then hill climbing moves while it improves and restarts from a
random solution at a local optimum (`lsbench.search.hill_climbing`), tabu search draws the tenure,
records the move's tabu attribute and moves (`lsbench.search.tabu`); improvements are recorded and
the best solution kept. Search q gives exactly the CPU search's trajectory with seed q.

An adapter supplies device functions (see gpu/adapters/tsp_two_opt.py):
    load(data, SOL, MEM, s, sh, tid, T) -> this thread's share of the solution's objective (fills
        sh and the search's part of MEM)
    scan(data, SOL, MEM, s, sh, tabu_rule, use_tabu, it, current, aspiration, tie_key, tid, T)
        -> this thread's best (delta, rank, move), move -1 if none (gpu/adapters/numbered_moves.py
        builds it from a move cost)
    record(data, SOL, MEM, s, move, it, until)    (one thread, before the move)
    apply(data, SOL, MEM, s, sh, move, tid, T)
    draw(stream, solution)    a random solution, as the problem's random_solution (one thread)
and on the host: data (device arrays and scalars), shared_bytes, memory(K, tenure_max) -> MEM,
moves (the neighbourhood's size), compile_key (what its device functions are compiled for), and
optionally registers (a thread's cap where it wants another than REGISTERS).
"""
import numpy as np
from numba import config, cuda, float32, int64, uint64

from lsbench.errors import LsbenchError
from lsbench.params import Param

from .. import device as dv
from ..adapters import adapter_for
from .. import device_name, require
from ..runtime.chunks import (IMPROVEMENT_CAP, NO_ASPIRATION, ResidentEngine, chunk_launcher, item_of, pass_on, run_searches,
                              save_search, start_item, tabu_starts, take_item)
from ..runtime import chunks
from ..runtime.block_reduce import block_min
from ..runtime.launch import PreparedLauncher, allow_dynamic_shared
from ..runtime.tenure import next_tenure
from .resident_pfsp import ResidentPfspTabu
from .whole_gpu_tabu import WholeGpuTabu

SIM = config.ENABLE_CUDASIM
QUEUE_ITEM = 64  # iterations of a search per queue item, at most
ONCHIP_FROM_MOVES = 500_000  # TSP tabu, up to a search an SM: smaller ones on the matrix kernel (own_kernel_faster)
ADAPTER_PFSP_MOVES = 380  # flow-shop insertion tabu search: the adapter at most this size (own_kernel_faster)
REGISTERS = 96  # a thread's registers at most (measured best of 64-96): the rare exact path spills


@cuda.jit(device=True, inline=True)
def block_sum(red, tid, T, v):
    """The block's sum of v (T a power of two), read by every thread."""
    red[tid] = v
    cuda.syncthreads()
    step = T // 2
    while step > 0:
        if tid < step:
            red[tid] += red[tid + step]
        cuda.syncthreads()
        step //= 2
    total = red[0]
    cuda.syncthreads()
    return total


def make_kernel(adapter_functions, threads, tabu_rule, registers):
    """The search loop of hill climbing (tabu_rule False) or tabu search over one adapter, for
    blocks of `threads` threads of at most `registers` registers each."""
    load, scan, record, apply, draw = adapter_functions

    @cuda.jit(device=True)
    def choose(data, SOL, MEM, s, sh, red_c, red_d, red_r, red_i, it, current, asp, key, tid):
        """(move, delta) of the iteration: the best under the rule; tabu search with every move tabu
        takes the least bad (lsbench.search.tabu.select_least_bad)."""
        bd, br, bk = scan(data, SOL, MEM, s, sh, tabu_rule, True, it, current, asp, key, tid, threads)
        block_min(red_c, red_d, red_r, red_i, tid, threads, int64(0), bd, br, bk)
        move = red_i[0]
        delta = red_d[0]
        cuda.syncthreads()
        if tabu_rule and move < 0:
            bd, br, bk = scan(data, SOL, MEM, s, sh, tabu_rule, False, it, current, asp, key, tid, threads)
            block_min(red_c, red_d, red_r, red_i, tid, threads, int64(0), bd, br, bk)
            move = red_i[0]
            delta = red_d[0]
            cuda.syncthreads()
        return move, delta

    @cuda.jit(device=True)
    def improved(SOL, BEST_SOL, IMP_IT, IMP_OBJ, s, it, current, n_imp, tid):
        """Records a new best: the iteration and objective, and the solution."""
        if tid == 0:
            IMP_IT[n_imp, s] = it
            IMP_OBJ[n_imp, s] = current
        for k in range(tid, SOL.shape[1], threads):
            BEST_SOL[s, k] = SOL[s, k]

    cap = {"max_registers": registers} if registers else {}  # (the simulator takes no cap)

    @cuda.jit(fastmath=True, **cap)  # fastmath: the adapters' estimates take approximate square roots
    def kernel(data, searches, QUEUE, RING, restarts, subchunk, tenure_min, tenure_max, use_aspiration, target,
               n_iter, item0, seq0, push0):
        SOL, MEM, STATE, RNG, FLAGS, BEST_SOL, IMP_IT, IMP_OBJ, ERR = searches
        sh = cuda.shared.array(0, float32)
        red_c = cuda.shared.array(threads, int64)
        red_d = cuda.shared.array(threads, int64)
        red_r = cuda.shared.array(threads, uint64)
        red_i = cuda.shared.array(threads, int64)
        job = cuda.shared.array(2, int64)
        drawn = cuda.shared.array(1, uint64)
        stream = cuda.local.array(1, uint64)
        tid = cuda.threadIdx.x
        K = SOL.shape[0]
        subchunks = (n_iter + subchunk - 1) // subchunk
        while take_item(QUEUE, RING, job, tid, item0, seq0, K, subchunks):
            s, sub = item_of(job, seq0)
            its, current, best, n_imp, state = start_item(STATE, RNG, s, sub)
            if block_sum(red_d, tid, threads, load(data, SOL, MEM, s, sh, tid, threads)) != current and tid == 0:
                ERR[0] = its
                ERR[1] = s + 1
            for step in range(min(subchunk, n_iter - sub * subchunk)):
                if best <= target or FLAGS[s, 1] != 0:
                    break
                it = its + 1
                key = uint64(0)
                if tabu_rule:
                    state += dv.GOLDEN
                    key = dv.mix64(state)
                asp = best if use_aspiration else NO_ASPIRATION
                move, delta = choose(data, SOL, MEM, s, sh, red_c, red_d, red_r, red_i, it, current, asp, key, tid)
                its = it
                if tabu_rule:
                    state, tenure = next_tenure(state, tenure_min, tenure_max)
                    if tid == 0:
                        record(data, SOL, MEM, s, move, it, it + tenure)
                    cuda.syncthreads()
                    apply(data, SOL, MEM, s, sh, move, tid, threads)
                    current += delta
                elif delta < 0:
                    apply(data, SOL, MEM, s, sh, move, tid, threads)
                    current += delta
                elif restarts:  # a local optimum: a random solution from the search's stream
                    if tid == 0:
                        stream[0] = state
                        draw(stream, SOL[s])
                        drawn[0] = stream[0]
                        FLAGS[s, 0] += 1
                    cuda.syncthreads()
                    state = drawn[0]
                    current = block_sum(red_d, tid, threads, load(data, SOL, MEM, s, sh, tid, threads))
                else:
                    if tid == 0:
                        FLAGS[s, 1] = 1
                    break
                if current < best:
                    best = current
                    improved(SOL, BEST_SOL, IMP_IT, IMP_OBJ, s, it, current, n_imp, tid)
                    n_imp += 1
                cuda.syncthreads()
            if tid == 0:
                save_search(STATE, RNG, s, its, current, best, n_imp, state)
            pass_on(QUEUE, RING, tid, s, sub, subchunks, seq0, push0)

    return kernel


_KERNELS = {}


def default_threads(shared_bytes):
    """Threads a block: 128 where four or more blocks fit an SM's shared memory (measured fastest
    on pr2392), else more threads a block so that an SM still holds 16 warps."""
    sm_shared = cuda.get_current_device().MAX_SHARED_MEMORY_PER_MULTIPROCESSOR
    fit = sm_shared // (shared_bytes + 8192)  # the block's own and its reduction's
    return 128 if fit >= 4 else (256 if fit >= 2 else 512)


class ResidentLocalSearch:
    """K hill climbing or tabu searches over an adapter; `run` returns, per seed, what the CPU
    search returns with that seed."""

    def __init__(self, problem, nb, adapter, algorithm, prm, threads=None, persistent=None, registers=None):
        require("gpu-resident")
        self.problem, self.nb, self.adapter, self.algorithm, self.prm = problem, nb, adapter, algorithm, prm
        self.threads = int(threads) if threads else (32 if SIM else default_threads(adapter.shared_bytes))
        if self.threads < 32 or self.threads > 1024 or self.threads & (self.threads - 1):
            raise LsbenchError(f"--param block: threads per block must be a power of two in [32, 1024], "
                               f"got {self.threads}")
        need = adapter.shared_bytes + 32 * self.threads + 64  # the adapter's arrays and the block reduction
        if not SIM and need > cuda.get_current_device().MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
            raise LsbenchError(f"{problem.name}: {problem.size} elements need {need} bytes of shared memory a block "
                               f"on chip ({type(adapter).__name__}, {self.threads} threads); this GPU allows "
                               f"{cuda.get_current_device().MAX_SHARED_MEMORY_PER_BLOCK_OPTIN}")
        self.want_persistent = persistent
        self.registers = None if SIM else int(registers or getattr(adapter, "registers", None) or REGISTERS)
        key = (type(adapter), adapter.compile_key, self.threads, algorithm, self.registers)
        if key not in _KERNELS:
            _KERNELS[key] = make_kernel(adapter.device_functions(), self.threads, algorithm == "tabu", self.registers)
        self.launcher = PreparedLauncher(_KERNELS[key])
        self.shape = None
        self.kernel_s = 0.0

    def check_memory(self, K):
        """One error line, before the searches' arrays are allocated, where K searches' state (tours,
        bests, improvements, the adapter's memory a search) does not fit the GPU's free memory;
        it names the largest K that does."""
        free = chunks.free_device_bytes()
        if free is None:
            return
        one = self.adapter.memory(1, self.prm.get("tenure_max", 0))
        per_search = (8 * self.problem.size + 16 * IMPROVEMENT_CAP + 64
                      + sum(a.nbytes for a in (one if isinstance(one, tuple) else (one,))))
        if K * per_search > 0.9 * free:
            raise LsbenchError(f"--searches {K}: {K} searches of {self.problem.name} need "
                               f"{K * per_search / 2**30:.1f} GiB of GPU memory, {free / 2**30:.1f} GiB are free: "
                               f"at most {int(0.9 * free // per_search)} searches fit")

    def _args(self, sols, K):
        """(kernel arguments, {name: the per-search arrays the host reads and writes})."""
        n = self.problem.size
        tenure_max = self.prm.get("tenure_max", 0)
        named = {"SOL": cuda.to_device(np.array(sols, np.int32)), "MEM": self.adapter.memory(K, tenure_max),
                 "STATE": cuda.device_array((K, 4), np.int64), "RNG": cuda.device_array(K, np.uint64),
                 "FLAGS": cuda.to_device(np.zeros((K, 2), np.int64)),
                 "BEST_SOL": cuda.device_array((K, n), np.int32),
                 "IMP_IT": cuda.device_array((IMPROVEMENT_CAP, K), np.int64),
                 "IMP_OBJ": cuda.device_array((IMPROVEMENT_CAP, K), np.int64),
                 "ERR": cuda.to_device(np.zeros(2, np.int64)), "QUEUE": cuda.device_array(3, np.int64),
                 "RING": cuda.device_array(1, np.int64)}
        prm = self.prm
        scalars = (1 if prm.get("restarts") else 0, QUEUE_ITEM, prm.get("tenure_min", 0), tenure_max,
                   1 if prm.get("aspiration") else 0, 0, 1, 0, 0, 0)
        searches = tuple(named[k] for k in ("SOL", "MEM", "STATE", "RNG", "FLAGS", "BEST_SOL", "IMP_IT", "IMP_OBJ",
                                            "ERR"))
        return [self.adapter.data, searches, named["QUEUE"], named["RING"], *(np.int64(x) for x in scalars)], named

    def _blocks(self, K, args):
        """Blocks of the persistent grid: every search's own, up to what runs at once."""
        if self.want_persistent:
            return min(K, int(self.want_persistent))
        if SIM:
            return 1
        compiled = self.launcher.compiled_for(args)
        allow_dynamic_shared(compiled, self.adapter.shared_bytes)
        fit = compiled.max_cooperative_grid_blocks(self.threads, self.adapter.shared_bytes)
        if fit < 1:
            raise LsbenchError(f"--param block: {self.threads} threads and {self.adapter.shared_bytes} bytes of "
                               "shared memory a block do not fit an SM")
        return min(K, fit)

    def run(self, seeds, stop, progress=None, chunk=None):
        pr, nb, prm = self.problem, self.nb, self.prm
        K = len(seeds)
        self.check_memory(K)
        sols, states, starts = tabu_starts(pr, seeds)
        args, dev = self._args(sols, K)
        blocks = self._blocks(K, args)
        self.shape = {"searches": K, "mode": "queue", "blocks": blocks, "threads": self.threads,
                      "layout": getattr(self.adapter, "layout", None),
                      "shared_bytes": self.adapter.shared_bytes, "iterations_per_queue_item": QUEUE_ITEM}

        def kernel(*a):
            self.launcher(blocks, self.threads, self.adapter.shared_bytes, list(a))
        launch = chunk_launcher(kernel, args, dev, sols, states, starts, blocks, True)
        results, self.kernel_s = run_searches(launch, dev, stop, self.adapter.moves, starts, seeds, prm, progress,
                                              chunk, f"gpu-resident {self.algorithm} {nb.name}@{pr.kind}")
        if self.algorithm == "hc":
            flags = dev["FLAGS"].copy_to_host()
            for q, res in enumerate(results):
                res.params = {"restarts": bool(prm["restarts"]), "restarts_done": int(flags[q, 0])}
        return results

    def describe(self):
        shape = self.shape or {}
        how = (f"{shape.get('searches', 1)} {self.algorithm} searches ({self.nb.name}, {type(self.adapter).__name__}) "
               f"on a persistent grid of {shape.get('blocks')} blocks, one search a block, taking sub-chunks of up "
               f"to {QUEUE_ITEM} iterations from a queue")
        return {"backend": "gpu-resident", "device": device_name(), "model": how, **shape}


def own_kernel(problem, nb, prm, params):
    """The problem's own tabu kernel, where it has one: the matrix kernel of whole_gpu_tabu.py (TSP
    swap/2-opt, PPP), the PFSP fast path of resident_pfsp.py (insertion); LsbenchError where it
    refuses the instance."""
    shape = {"threads": params.get("block"), "blocks": params.get("blocks"), "persistent": params.get("persistent")}
    if problem.kind in ("tsp", "ppp"):
        return WholeGpuTabu(problem, nb, prm, **shape)
    if problem.kind == "pfsp" and nb.name == "insertion":
        return ResidentPfspTabu(problem, prm, **shape)
    return None


def own_kernel_faster(kind, moves, K, multiprocessors):
    """Whether a problem's own tabu kernel runs K searches faster than the adapter's, as measured
    side by side on one H100 at 26a5c81 (benchmarks/gpu_resident_grid.py --kernels,
    tabu_kernels-h100-26a5c81.json; docs/architecture.md): below one search an SM the own kernels
    spread each search over many blocks (K = 1: 2.9x on ta001, 24x on PPP 101-117, 30x on eil101,
    5.5x on pr2392); at one an SM they keep the lead on small neighbourhoods (K = 132: eil101 15x,
    PPP 1.3x, ta001 1.3x; pr2392's 2.9 M moves 17x slower); beyond it the adapter's grid of
    several blocks an SM wins on PPP and PFSP (K = 1,056: 2.0x, 1.8x), and on TSP 2-opt since its
    lanes prune against the block's best (one H200 at e05433a, research/small_two_opt.py,
    small_two_opt-h200-e05433a.json, K = 1,056: eil51 1.9x, eil101 3.7x, kroA200 8.5x the matrix
    kernel's rate; K = 132 not measured again). PPP's two kernels cost a move alike (ppp_flip_delta); the
    flow-shop adapter costs one in O(nm), Taillard's fast path in O(m) amortised, so the adapter
    takes flow shops no larger than the one measured (ta001's 380 moves, 20 jobs)."""
    if K < multiprocessors:
        return True
    if kind == "tsp":
        return moves < ONCHIP_FROM_MOVES and K <= multiprocessors
    if kind == "pfsp" and moves > ADAPTER_PFSP_MOVES:
        return True
    return K <= multiprocessors


class ResidentLocalSearchEngine(ResidentEngine):
    """The registry's engine for `--algorithm hc|tabu --backend gpu-resident`: the searches run on
    the problem's device adapter (ResidentLocalSearch) or, for tabu search, on the problem's own
    kernel (own_kernel), whichever `own_kernel_faster` says for K searches, and on the one that
    takes the instance where the other refuses it (the PFSP fast path: makespan, at most 32
    machines; the matrix kernel: a dense matrix whose K n x n tabu expiries fit a quarter of the
    free memory); `blocks` asks for the own kernel. Under the simulator (no SMs, no timing) the
    choice is what each kernel's tests cover: the adapter for TSP, the own kernel for PPP and PFSP."""

    parameters = (
        Param("block", int, "threads per block (default: the kernel's own choice)", low=32, high=1024),
        Param("blocks", int, "tabu search on the problem's own kernel (TSP, PPP, PFSP insertion), this many blocks "
              "a search in lockstep (default: the resident blocks shared among the searches)", low=1),
        Param("persistent", int, "blocks of the persistent grid that takes the searches' sub-chunks from a queue "
              "(default: as many as run at once)", low=1),
    )

    def __init__(self, problem, neighbourhood, search, params, threads=None):
        algorithm = search.name
        self.kind = problem.kind
        prm = search.params(neighbourhood) if algorithm == "tabu" else {"restarts": bool(search.restarts)}
        self.own = self.adapter = None
        refused = None
        if algorithm == "tabu":
            try:
                self.own = own_kernel(problem, neighbourhood, prm, params)
            except LsbenchError as why:
                refused = why
        if params.get("blocks") is not None:
            if self.own is None:
                raise refused or LsbenchError(f"--param blocks: {algorithm} on {problem.kind} runs one block a "
                                              "search; leave it out")
        else:
            try:
                self.adapter = ResidentLocalSearch(problem, neighbourhood, adapter_for(problem, neighbourhood),
                                                   algorithm, prm, threads=params.get("block"),
                                                   persistent=params.get("persistent"))
            except LsbenchError as why:
                if self.own is None:
                    raise LsbenchError(f"--algorithm {algorithm} --backend gpu-resident: {why}") from None
        self.search = self.adapter or self.own

    def _pick(self, seeds):
        """The search object for K = len(seeds) searches (see the class's note)."""
        if self.own is None or self.adapter is None:
            return self.search
        if SIM:
            own = self.kind != "tsp"
        else:
            own = own_kernel_faster(self.kind, self.adapter.adapter.moves, len(seeds),
                                    cuda.get_current_device().MULTIPROCESSOR_COUNT) and self._own_fits(seeds)
        self.search = self.own if own else self.adapter
        return self.search

    def _own_fits(self, seeds):
        """Whether the matrix kernel's K tabu memories (at most n x n expiries each) take at most a
        quarter of the free GPU memory (the adapters' are O(n) a search; the PFSP fast path's O(n))."""
        if not isinstance(self.own, WholeGpuTabu):
            return True
        n = self.own.problem.size
        return len(seeds) * n * n * 8 <= cuda.current_context().get_memory_info()[0] // 4

    def warm_up(self, seeds, iterations):
        self._pick(seeds)
        super().warm_up(seeds, iterations)

    def run(self, seeds, stop, progress=None):
        return self._pick(seeds).run(list(seeds), stop, progress)
