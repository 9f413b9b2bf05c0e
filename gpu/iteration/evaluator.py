"""The `gpu` backend: the iteration-level model of Luong et al. on Numba-CUDA.

Each iteration the current solution goes to the GPU, one thread per move (grid-stride, as many
moves per thread as the thread control chose) writes the move costs, and either the whole fitness
array comes back for the search to select on the CPU (`reduce=host`), or a device-side selection
kernel applies the search's own selection rule (tabu status, aspiration, tie ranking) and only
the chosen move comes back (`reduce=device`; for QAP swap, TSP swap and 2-opt and PFSP insertion the
moves are evaluated inside the selection kernel, so no fitness array is written at all --
`fuse=0` keeps evaluation and selection apart for comparison). `generate=cpu` builds the move-parameter table on the
host every iteration and copies it, instead of mapping move indices on the device. Problem data is
copied to the device once, in `bind`. Times are split into process (host work), transfers and
kernels.
"""
import time

import numpy as np
from numba import config, cuda, njit

from lsbench.errors import LsbenchError
from lsbench.interfaces import DEVICE_ARCHIVE, DEVICE_SELECT, Evaluator
from lsbench.neighborhoods import index_to_insertion, index_to_pair, index_to_triple
from lsbench.params import Param
from lsbench.problems.pfsp import THREE

from . import kernels
from .. import device_name, require
from ..runtime.launch import ThreadControl, narrow
from ..runtime.waits import wait_for

TABU_KINDS = {"swap@qap": 1, "swap@pfsp": 2, "swap@tsp": 2, "2opt@tsp": 3, "insertion@pfsp": 4,
              "hamming1@ppp": 5, "hamming2@ppp": 5, "hamming3@ppp": 5, "crowns@weierstrass": 0}
MODES = {"tabu": 0, "rots": 1, "argmin": 2}
# reduce=auto: the device selection only where it was measured faster (TSP's large neighbourhoods,
# benchmarks/gpu_defaults.py); elsewhere the fitness array comes back, as PFSP's insertion tabu flags
# and QAP's few thousand moves cost more on the device than the copy
DEVICE_REDUCE_FASTER = ("2opt@tsp", "swap@tsp")
DEVICE_REDUCE_MIN_MOVES = 1 << 15
PPP_THREADS = 1 << 15  # one scratch histogram row per thread
# a flow shop's grid (and the fused selection's: 1,024 blocks) beyond LOCAL_MACHINES: a row of
# completion times a thread
ROW_THREADS = 1024 * kernels.REDUCE_BLOCK
SCRATCH_BYTES = 1 << 31  # Taillard's tables of a group of removed positions (flow-shop insertion)

KERNEL_PROBLEMS = ("qap", "tsp", "pfsp", "ppp", "weierstrass")  # the problems gpu/iteration/kernels.py evaluates


@njit(cache=True)
def move_table(kind, size, n):
    """The neighbourhood 'generated on the CPU': every move's parameters (i, j, k)."""
    t = np.full((size, 3), -1, dtype=np.int64)
    for idx in range(size):
        if kind == 0:
            t[idx, 0] = idx
        elif kind == 1:
            i, j = index_to_pair(idx, n)
            t[idx, 0], t[idx, 1] = i, j
        elif kind == 2:
            i, k = index_to_insertion(idx, n)
            t[idx, 0], t[idx, 1] = i, k
        else:
            i, j, k = index_to_triple(idx, n)
            t[idx, 0], t[idx, 1], t[idx, 2] = i, j, k
    return t


class Timer:
    def __init__(self):
        self.process = self.transfer = self.kernel = self.archive = 0.0

    def as_dict(self):
        split = {"process_s": round(self.process, 6), "transfer_s": round(self.transfer, 6),
                 "kernel_s": round(self.kernel, 6)}
        if self.archive:
            split["archive_kernels_s"] = round(self.archive, 6)
        return split


def completion_time_type(problem):
    """The integer type of a flow shop's Taillard tables: completion times are at most the sum of
    all processing times."""
    return np.int32 if int(problem.pt.sum()) < (1 << 31) and not config.ENABLE_CUDASIM else np.int64


def bytes_per_removed_position(problem):
    """Device memory of the insertion tables of one removed position (SCRATCH_BYTES holds a group)."""
    n, m = problem.n, problem.m
    return 2 * n * m * np.dtype(completion_time_type(problem)).itemsize + 3 * n * 8


class GpuEvaluator(Evaluator):
    name = "gpu"
    parameters = (
        Param("reduce", str, "host: the fitness array comes back and the CPU selects; device: the "
              "search's selection rule runs on the GPU and only the move comes back; auto: device for TSP "
              f"neighbourhoods of {DEVICE_REDUCE_MIN_MOVES} moves or more (measured faster), else host", default="auto",
              choices=("auto", "host", "device")),
        Param("generate", str, "move parameters mapped from the move index on the GPU, or built on the "
              "host and copied every iteration", default="gpu", choices=("gpu", "cpu")),
        Param("block", int, "threads per block (default: the thread control times several)", low=1, high=1024),
        Param("moves_per_thread", int, "moves per thread with a fixed block", default=1, low=1),
        Param("fuse", int, "with reduce=device, evaluate the moves inside the selection kernel (1) or in a "
              "kernel of their own (0)", default=1, choices=(0, 1)),
    )

    def __init__(self, generate="gpu", reduce="auto", block=None, moves_per_thread=1, autotune=True,
                 launch_hook=None, threads=None, fuse=1):
        self.fuse = bool(fuse)
        self.generate, self.reduce, self.reduce_asked = generate, reduce, reduce
        self.fixed = None if autotune and block is None else (int(block or 256), int(moves_per_thread))
        self.launch_hook = launch_hook
        self.timer = Timer()
        self.capabilities = frozenset()  # set in bind, where the neighbourhood's size decides reduce=auto

    def reset_timers(self):
        self.timer = Timer()

    # -- binding: data to the device once ---------------------------------------------------------
    def bind(self, problem, nb):
        require("gpu")
        if problem.kind not in KERNEL_PROBLEMS:  # (a plug-in's problem: its device adapter's move cost)
            from .adapter_moves import AdapterEvaluator
            return AdapterEvaluator().bind(problem, nb)
        self.problem, self.nb = problem, nb
        self.buffers = {}
        self.kind = problem.kind
        self.key = f"{nb.name}@{problem.kind}"
        self.size = nb.size
        self.dtype = nb.delta_dtype()
        self.n = problem.size
        self.group_size = self.n  # (flow-shop insertion: removed positions a group of kernels)
        self.vectors = len(nb.out_shape()) == 2  # objective vectors per move (Pareto searches)
        if self.vectors:
            if self.reduce == "device":
                raise LsbenchError("--param reduce=device selects one move; a Pareto search keeps an archive "
                                   "(use --param archive=device to filter on the GPU)")
            self.reduce = "host"
            self.capabilities = frozenset({DEVICE_ARCHIVE})
            self.device_archive = None
        elif self.reduce == "auto":
            faster = self.key in DEVICE_REDUCE_FASTER and self.size >= DEVICE_REDUCE_MIN_MOVES
            self.reduce = "device" if faster else "host"
        if self.reduce == "device":
            self.capabilities = frozenset({DEVICE_SELECT})
        t = time.perf_counter()
        if self.kind == "qap":
            self.data = (cuda.to_device(problem.a), cuda.to_device(problem.b))
        elif self.kind == "tsp":
            self.data = (cuda.to_device(narrow(problem.matrix("--backend gpu"), 4)),)
        elif self.kind == "pfsp":
            self._bind_flow_shop(problem, nb)
        elif self.kind == "ppp":
            self.data = (cuda.to_device(problem.a), cuda.to_device(problem.target_hist))
            self.ppp_scratch = cuda.to_device(np.zeros((PPP_THREADS, problem.n + 1), dtype=np.int32))
        elif self.kind == "weierstrass":
            if problem.d > kernels.MAX_DIMENSION:
                raise LsbenchError(f"--backend gpu: Weierstrass dimension above {kernels.MAX_DIMENSION}")
            self.w_kernel = kernels.make_weierstrass_kernel(problem.dtype)
        self.out = cuda.device_array(nb.out_shape(), dtype=self.dtype)
        self.host_out = np.empty(nb.out_shape(), dtype=self.dtype)
        self.no_params = cuda.to_device(np.zeros((1, 3), dtype=np.int64))
        self.params = self.no_params
        rows = self.kind == "pfsp" and self.rows.shape[0] > 1  # (a row of completion times a thread)
        max_threads = PPP_THREADS if self.kind == "ppp" else ROW_THREADS if rows else None
        self.control = ThreadControl(self.size, fixed=self.fixed, max_threads=max_threads,
                                     launch_hook=self.launch_hook)
        self.stored_select = kernels.make_select_kernel(kernels.stored_delta, self.dtype)
        fused = kernels.FUSED_MOVES.get(self.key) if self.fuse and self.reduce == "device" and self.generate == "gpu" \
            and self.group_size == self.n else None
        self.fused_select = None if fused is None else kernels.make_select_kernel(fused, self.dtype)
        self.blocks_out = None
        self.tabu_memory = None
        self.tsp_prefix = None
        self.timer.transfer += time.perf_counter() - t
        return self

    def _bind_flow_shop(self, problem, nb):
        """Processing times and due dates on the device; for insertion, Taillard's tables of as many
        removed positions as SCRATCH_BYTES holds (a group: every position on every instance of up
        to ~10^9 table entries); beyond LOCAL_MACHINES machines a row of completion times a thread
        where moves are scheduled from scratch."""
        n, m = problem.n, problem.m
        # due dates read from Liefooghe's files are a column of the file's rows: not contiguous
        self.data = (cuda.to_device(problem.pt), cuda.to_device(np.ascontiguousarray(problem.due)))
        scheduled = nb.name == "swap" or self.vectors or problem.objective_code != 0
        self.rows = cuda.device_array((ROW_THREADS, m) if scheduled and m > kernels.LOCAL_MACHINES else (1, 1),
                                      np.int64)
        if nb.name == "insertion":
            ct = completion_time_type(problem)
            self.group_size = B = max(1, min(n, SCRATCH_BYTES // bytes_per_removed_position(problem)))
            # [position, machine, removed job]: neighbouring threads (removed jobs) touch neighbouring words
            self.scratch = (cuda.device_array((n, m, B), ct), cuda.device_array((n, m, B), ct),
                            cuda.device_array((n, B), np.int64), cuda.device_array((n, B), np.int64),
                            cuda.device_array((n, B), np.int64))

    # -- the evaluator interface --------------------------------------------------------------------
    def reset(self, solution):
        self.solution = np.array(solution, copy=True)
        self.state = self.nb.state(self.solution)
        self._push()

    def apply(self, move):
        t = time.perf_counter()
        self.nb.apply(self.solution, self.state, move)
        self.timer.process += time.perf_counter() - t
        self._push()

    def evaluate(self):
        self._evaluate_on_device()
        t = time.perf_counter()
        self.out.copy_to_host(self.host_out)
        self.timer.transfer += time.perf_counter() - t
        return self.host_out

    # -- the Pareto archive on the device (PLS, archive=device) -----------------------------------------
    def evaluate_on_device(self):
        """The neighbourhood's objective vectors, left in device memory for archive_update."""
        self._evaluate_on_device()

    def archive_start(self, vectors):
        from .archive import DeviceArchive
        t = time.perf_counter()
        if self.device_archive is None:
            self.device_archive = DeviceArchive(self.size)
        self.device_archive.start(vectors)
        self.timer.transfer += time.perf_counter() - t

    def archive_update(self, accept, current):
        t = time.perf_counter()
        change = self.device_archive.update(self.out, accept, current)
        self.timer.archive += time.perf_counter() - t
        return change

    def describe(self):
        return {"backend": self.name, "device": device_name(), "generate": self.generate, "reduce": self.reduce,
                "reduce_asked": self.reduce_asked,
                "fused_selection": self.fused_select is not None, "thread_control": self.control.describe(),
                "time_split": self.timer.as_dict(),
                **({"insertion_groups": -(-self.n // self.group_size)} if self.key == "insertion@pfsp" else {})}

    # -- device-side selection ----------------------------------------------------------------------
    def select(self, mode, it, current, best, tie_key=0, aspiration=0, flags_host=None):
        """Evaluate and reduce on the device in one selection kernel (after the evaluation kernel,
        or fused with it where the neighbourhood has a fused move function); returns
        (move, delta, class)."""
        kernel, args, data = self._prepare()
        if self.fused_select is None:
            if kernel is not None:
                self.timer.kernel += self.control.launch(kernel, *args)
            data = (self.out,)
            select = self.stored_select
        else:
            select = self.fused_select
        t = time.perf_counter()
        blocks = min(1024, max(1, -(-self.size // kernels.REDUCE_BLOCK)))
        if self.blocks_out is None or self.blocks_out[0].shape[0] != blocks:
            self.blocks_out = (cuda.device_array(blocks, np.int64), cuda.device_array(blocks, self.dtype),
                               cuda.device_array(blocks, np.uint64), cuda.device_array(blocks, np.int64),
                               cuda.to_device(np.zeros(1, np.int32)))
            # (class, index, delta): floats hold the first two exactly
            wide = np.float64 if np.dtype(self.dtype).kind == "f" else np.int64
            self.result = cuda.device_array(3, wide)
            self.host_result = cuda.pinned_array(3, wide)
        flags = self._flags_device(it) if mode == MODES["tabu"] else self.out
        expiry = self.tabu_memory if self.tabu_memory is not None else self.no_params
        # the Ro-TS rule reads the permutation; float solutions never reach it but must type as integers
        sol = self.sol_d if self.problem.integer else self.no_params[0]
        select[blocks, kernels.REDUCE_BLOCK](mode, data, self.size, flags, current, best, np.uint64(tie_key),
                                             sol, expiry, it, aspiration, self.n, self.blocks_out, self.result)
        wait_for()
        self.timer.kernel += time.perf_counter() - t
        t = time.perf_counter()
        c, i, d = self.result.copy_to_host(self.host_result)
        self.timer.transfer += time.perf_counter() - t
        return int(i), np.dtype(self.dtype).type(d), int(c)

    def init_tabu(self, memory):
        """Mirror the search's tabu memory on the device (once; then `record` keeps it in sync)."""
        mem = memory.reshape(1, -1) if memory.ndim == 1 else memory
        self.tabu_memory = cuda.to_device(np.ascontiguousarray(mem))
        self.tabu_kind = TABU_KINDS[self.key]

    def record(self, solution_before, move, memory):
        """Copy the entries of the host memory that the last record changed (O(1) to O(n))."""
        if self.tabu_memory is None:
            return
        idx = changed_entries(self.tabu_kind, solution_before, move, self.nb)
        mem = memory.reshape(1, -1) if memory.ndim == 1 else memory
        for r, c in idx:
            self.tabu_memory[r, c:c + 1].copy_to_device(mem[r, c:c + 1])

    # -- internals ------------------------------------------------------------------------------------
    def _upload(self, name, host):
        """Copy `host` into the device buffer `name`, allocated once: per-iteration copies reuse
        their buffers (a fresh allocation per iteration costs more than the copy)."""
        buf = self.buffers.get(name)
        if buf is None or buf.shape != host.shape or buf.dtype != host.dtype:
            buf = self.buffers[name] = cuda.to_device(host)
        else:
            buf.copy_to_device(host)
        return buf

    def _push(self):
        t = time.perf_counter()
        self.sol_d = self._upload("solution", self.solution)
        if self.kind == "ppp":
            y, hist = self.state
            self.ppp_state = (self._upload("y", y), self._upload("hist", hist))
        self.timer.transfer += time.perf_counter() - t

    def _flow_shop_kernel(self, t, p, use):
        """_prepare's flow-shop case. Insertion: Taillard's tables of each group of removed positions,
        then (several groups) that group's moves, launched here, or (one group) the kernel of every
        move for the caller."""
        pr = self.problem
        current = 0 if self.vectors else pr.objective(self.solution)
        objective = THREE if self.vectors else pr.objective_code  # vectors need the prefix tardiness too
        w = pr.weights
        sched = (*self.data, self.sol_d, self.rows)
        costs = (objective, w[0], w[1], w[2], current)
        if self.nb.name == "insertion":
            one = self.group_size == pr.n
            for i0 in range(0, pr.n, self.group_size):
                group = (np.int64(i0), np.int64(min(self.group_size, pr.n - i0)))
                tt = time.perf_counter()
                if pr.m <= kernels.WAVE:  # one warp per removed job sweeps anti-diagonals
                    kernels.pfsp_heads_tails_wave_kernel[2 * int(group[1]), kernels.WAVE](
                        *self.data, self.sol_d, self.scratch, objective, group)
                else:
                    kernels.pfsp_heads_tails_kernel[-(-2 * int(group[1]) // 64), 64](
                        *self.data, self.sol_d, self.scratch, objective, group)
                self.timer.kernel += time.perf_counter() - tt  # it finishes before the next kernel starts
                kernel, args = (kernels.pfsp_insertion_vector_kernel, (sched, self.scratch, group, p, use, self.out)) \
                    if self.vectors else \
                    (kernels.pfsp_insertion_kernel, (sched, self.scratch, costs, group, p, use, self.out))
                if one:
                    return kernel, args, None if self.vectors else (*sched, *self.scratch, *costs)
                self.timer.kernel += self.control.launch(kernel, *args)
            return None, None, None
        from lsbench.problems.pfsp import heads_and_tails
        e, _ = heads_and_tails(pr.pt, self.solution)
        prefix = swap_prefix(pr.pt, pr.due, self.solution, e)
        self.timer.process += time.perf_counter() - t
        t = time.perf_counter()
        e_d, prefix_d = self._upload("heads", e), self._upload("prefix", prefix)
        self.timer.transfer += time.perf_counter() - t
        if self.vectors:
            return kernels.pfsp_swap_vector_kernel, (sched, e_d, prefix_d, p, use, self.out), None
        return kernels.pfsp_swap_kernel, (sched, e_d, prefix_d, costs, p, use, self.out), None

    def _flags_device(self, it):
        if not hasattr(self, "flags_d"):
            self.flags_d = cuda.device_array(self.size, np.bool_)
        if self.tabu_kind == 0:
            self.flags_d[:] = False
        else:
            self.control_flags = getattr(self, "control_flags", ThreadControl(self.size, fixed=(256, 4)))
            self.control_flags.launch(kernels.tabu_flags_kernel, self.tabu_kind, self.sol_d, self.tabu_memory,
                                      it, self.n, self.flags_d)
        return self.flags_d

    def _evaluate_on_device(self):
        kernel, args, _ = self._prepare()
        if kernel is not None:
            self.timer.kernel += self.control.launch(kernel, *args)

    def _prepare(self):
        """This iteration's device inputs (host-side prefixes, copies, Taillard's heads and tails):
        returns the evaluation kernel, its arguments, and the data of the fused move function."""
        t = time.perf_counter()
        if self.generate == "cpu":
            kind = {1: 0, 2: 1, 3: 3}.get(getattr(self.nb, "k", 0), 1) if self.kind == "ppp" else \
                (2 if self.nb.name == "insertion" else 0 if self.kind == "weierstrass" else 1)
            table = move_table(kind, self.size, self.n)
            self.timer.process += time.perf_counter() - t
            t = time.perf_counter()
            self.params = self._upload("params", table)
            self.timer.transfer += time.perf_counter() - t
            t = time.perf_counter()
        use = 1 if self.generate == "cpu" else 0
        p = self.params
        if self.kind == "qap":
            data = (*self.data, self.sol_d)
            return kernels.qap_swap_kernel, (*data, p, use, self.out), data
        if self.kind == "tsp":
            if self.nb.name == "swap":
                data = (*self.data, self.sol_d)
                return kernels.tsp_swap_kernel, (*data, p, use, self.out), data
            from lsbench.problems.tsp import path_prefix, tour_edges
            if self.tsp_prefix is None:  # one pinned staging row each, one copy per iteration
                self.tsp_prefix = cuda.pinned_array((3, self.n), np.int64)
                self.tsp_prefix_d = cuda.to_device(self.tsp_prefix)
                self.tsp_prefix_views = tuple(self.tsp_prefix_d[q] for q in range(3))
            pre = self.tsp_prefix
            pre[0], pre[1] = path_prefix(self.problem.d, self.solution)
            pre[2] = tour_edges(self.problem.d, self.solution)
            self.timer.process += time.perf_counter() - t
            t = time.perf_counter()
            self.tsp_prefix_d.copy_to_device(pre)
            data = (*self.data, self.sol_d, *self.tsp_prefix_views)
            self.timer.transfer += time.perf_counter() - t
            return kernels.tsp_two_opt_kernel, (*data, p, use, self.out), data
        if self.kind == "pfsp":
            return self._flow_shop_kernel(t, p, use)
        if self.kind == "ppp":
            a, target = self.data
            y, hist = self.ppp_state
            return kernels.ppp_hamming_kernel, (a, self.sol_d, y, hist, target, self.nb.k, p, use, self.ppp_scratch,
                                                self.out), None
        from lsbench.problems.weierstrass import solution_key
        pr = self.problem
        key = solution_key(self.solution, pr.seed)
        current = pr.objective_raw(self.solution)
        self.timer.process += time.perf_counter() - t
        return self.w_kernel, (self.sol_d, key, self.size, self.nb.radius, pr.b_value(), pr.h_value(), pr.terms,
                               current, self.out), None


@njit(cache=True)
def swap_prefix(pt, due, seq, e):
    """(flow, tardiness, late jobs) of the first q jobs of seq, q = 0..n-1."""
    n = seq.shape[0]
    m = pt.shape[1]
    out = np.zeros((n, 3), dtype=np.int64)
    for q in range(n - 1):
        ct = e[q + 1, m - 1]
        job = seq[q]
        out[q + 1, 0] = out[q, 0] + ct
        out[q + 1, 1] = out[q, 1] + max(0, ct - due[job])
        out[q + 1, 2] = out[q, 2] + (1 if ct > due[job] else 0)
    return out


def changed_entries(kind, sol, move, nb):
    """Entries (row, column) of the tabu memory that the neighbourhood's `tabu_record` writes for
    `move` on `sol` (the solution before the move); bit memories are one row."""
    n = nb.problem.size
    if kind == 1:
        r, s = index_to_pair(move, n)
        return [(r, sol[r]), (s, sol[s])]
    if kind == 2:
        i, j = index_to_pair(move, n)
        return [(sol[i], sol[j])]
    if kind == 3:
        i, j = index_to_pair(move, n)
        return [(sol[(i - 1) % n], sol[i]), (sol[j], sol[(j + 1) % n])]
    if kind == 4:
        i, k = index_to_insertion(move, n)
        x = sol[i]
        return [(x, sol[t]) for t in range(i + 1, k + 1)] if k > i else [(sol[t], x) for t in range(k, i)]
    if kind == 5:
        return [(0, b) for b in nb.bits_of(move) if b >= 0]
    return []
