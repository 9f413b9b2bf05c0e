"""K device-resident Ro-TS searches on one GPU (`--algorithm rots --backend gpu-resident`): the
host side of gpu/engine/rots/kernel.py -- the device data, the named per-search buffers, the chunks of
iterations, the improvements read back (the registry's engine over it: gpu/engine/robust_tabu.py;
cas's colony runs its ants' searches with `batch`).
"""
from dataclasses import dataclass, fields

import numpy as np
from numba import config, cuda

from lsbench import rng
from lsbench.errors import LsbenchError
from lsbench.interfaces import SearchResult
from lsbench.problems.qap import qap_costs
from lsbench.interfaces import Stop
from lsbench.search.chunk_loop import ChunkedSearches, ChunkRead, run_chunks
from lsbench.search.common import ChunkLength
from lsbench.search.restarts import EliteRestarts

from ... import device_name, require
from ...runtime.chunks import IMPROVEMENT_CAP, ItemQueue, record_rows
from ...runtime.launch import PreparedLauncher, clusters_at_once, copy_down, copy_up, register_cap
from ...runtime.waits import wait_for
from .kernel import REBASE_AT, REBASE_BY, kernel_for, rebase_kernel
from .plan import ON_CHIP, plan, row_chunk_table
from .shape import (LARGE_QUEUE_SUBCHUNK, UNEVEN, auto_cluster_shape, blocks_an_sm, blocks_per_sm, queue_chunk,
                    spread, uneven_grid)

# each problem's device adapter of the Ro-TS engine: a module of factories (tabu, costs, swaps, start)
ADAPTERS = {"qap": "lsbench.gpu.adapters.qap_rots"}


@dataclass
class SearchBuffers:
    """The device state of K searches. The fields from P to ACTIVE are the kernel's state
    arguments, in its order; `upload`/`download` are the packed buffers a chunk copies in one go."""

    searches: int
    upload: object
    host_upload: dict
    download: object
    host_download: dict
    P: object
    DELTA: object
    BPG: object
    BPTG: object
    OLDG: object
    EX: object
    PEND: object
    STATE: object
    CUR: object
    BEST: object
    BEST_SOL: object
    IMP_IT: object
    IMP_OBJ: object
    NIMP: object
    DONE: object
    ACTIVE: object
    START: object
    FRESH: object
    QUEUE: object
    RING: object
    TAU: object

    def state_args(self):
        names = [f.name for f in fields(self)]
        return [getattr(self, name) for name in names[names.index("P"):names.index("RING") + 1]]


class RotsChunks(ChunkedSearches):
    """The Ro-TS engine's side of the host loop: a chunk is one launch on the engine's stream and one
    copy down of the packed bests, queue flag, improvement counts and iterations (for a cas
    generation, the best solutions with them); at its boundaries the restarts the policy decides
    (lsbench.search.restarts) and the islands' arrivals go up before the next chunk, and the
    kernel's 32-bit tabu clock is shifted before it runs out."""

    def __init__(self, engine, K, tenures, bests_only, policy, migration):
        self.engine, self.b, self.K = engine, engine.buffers(K), K
        self.tenures, self.bests_only, self.policy, self.migration = tenures, bests_only, policy, migration
        self.base = 0  # the kernels count iterations from base (see rebase_kernel)
        self.iterations = np.zeros(K, dtype=np.int64)
        self.pending = ([], [])  # (restarts, fresh starts) decided at the last boundary: up if another chunk runs
        # the run's record of each search where a fresh start (policy.renew) made the search forget it
        n = engine.problem.n
        self.record = np.full(K, np.iinfo(np.int64).max)
        self.record_sol = np.zeros((K, n) if policy and policy.forgets else (0, n), dtype=np.int64)
        host_down = self.b.host_download
        self.counted_bytes = host_down["BEST_SOL"].ctypes.data - host_down["all"].ctypes.data  # BEST .. DONE

    def before_chunk(self, it, best, log, seconds):
        starts, renewed = self.pending
        if starts or renewed:
            self.engine._start_from(starts, renewed, it, best, log, seconds)
        if it - self.base >= REBASE_AT:  # tabu expiries are 32-bit: shift the clock, keep every comparison
            for expiries in (self.b.EX, self.b.OLDG):
                rebase_kernel[expiries.shape[0], self.engine.shape["threads"]](expiries, REBASE_BY)
            self.base += REBASE_BY

    def run_chunk(self, first, n_iter, target, finished):
        e, b = self.engine, self.b
        tenure_min, tenure_max, aspiration, tenure_cube = self.tenures
        e.launch_chunk(self.K, (tenure_min, tenure_max, aspiration, target, first - self.base, n_iter, tenure_cube,
                                1 if first == 0 else 0))
        # one copy: the bests and the queue's flag, and for a cas generation (its only wait) the best solutions
        host_down = b.host_download
        copy_down(host_down["all"], b.download, host_down["all"].nbytes if self.bests_only else self.counted_bytes,
                  e.stream)
        wait_for(e.stream)
        if host_down["QUEUE"][1]:
            raise LsbenchError("gpu-resident rots: a block waited too long for a ready queue item (internal error)")
        if self.bests_only:  # a cas generation: only the bests come back
            nimp = done = np.zeros(self.K, dtype=np.int64)
        else:
            nimp, done = host_down["NIMP"].copy(), host_down["DONE"].copy()
        nimp[finished] = 0  # a finished search's block returned at once: its counts are stale
        self.iterations += np.where(finished, 0, done)
        return ChunkRead(host_down["BEST"].copy(), self.iterations.copy(), nimp)

    def improvement_rows(self, rows):
        # stamped at the end of their chunk, as the fused CPU loop; synchronous copies (pageable)
        imp_it, imp_obj = np.empty((rows, self.K), np.int64), np.empty((rows, self.K), np.int64)
        copy_down(imp_it, self.b.IMP_IT, imp_it.nbytes)
        copy_down(imp_obj, self.b.IMP_OBJ, imp_obj.nbytes)
        return imp_it, imp_obj

    def improved(self, searches, iterations):
        if self.policy:
            self.policy.improved(searches, iterations)

    def finish(self, finished):
        self.b.ACTIVE.copy_to_device(np.where(finished, 0, 1).astype(np.int32))

    def after_chunk(self, it, best, finished, reached):
        starts, renewed = [], []
        if self.policy and not finished.all():
            starts, renewed = self.engine._restarts(self.policy, it, best, finished, self.record, self.record_sol)
        stop_all = False
        if self.migration:
            arrived, stop_all = self.migration.at_chunk(it, best, self.b.BEST_SOL.copy_to_host, finished, reached)
            taken = {q for q, _s in starts + renewed}
            starts += [(q, s) for q, s in arrived if q not in taken]
        self.pending = (starts, renewed)
        return stop_all


class ResidentRots:
    """Runs K Ro-TS searches on the GPU, one block each; `run` returns one result per search in the
    format of the CPU searches (best, best solution, trajectory, iterations, ...)."""

    def __init__(self, problem, prm, threads=None, group=None, global_only=(), max_registers=None,
                 shared_limit=None, cluster=None, split=None, persistent=None, restart=None, subchunk=None,
                 chunk_cap=None):
        """`global_only`: names of per-search tables kept in global memory even where they would fit
        in shared memory (tests reach the global-memory paths on small instances with it);
        `cluster`: blocks per search (a thread block cluster, GPU only); `split`: see plan;
        `persistent`: blocks of a persistent grid that take the searches' sub-chunks from a queue
        (0: one block per search; None: a queue once K exceeds what runs at once at the best shape;
        UNEVEN: a queue only where one block per search would leave SMs idle, see uneven_grid);
        `restart`: {stagnation, elite, strength[, crossover, pools, mix, strength_max, renew, walk, merge]} of lsbench.search.restarts (stagnation 0: none);
        `subchunk`: iterations per queue item (tests); `chunk_cap`: iterations per chunk at most
        (the improvement records' rows)."""
        require("gpu-resident")
        self.problem, self.prm = problem, prm
        self.restart = restart or {"stagnation": 0, "elite": 1, "strength": 0.0}
        self.restarts = self.renewals = 0  # restarts and fresh starts of renewed pools in the last run
        self.options = (threads, group, shared_limit, tuple(global_only), max_registers, cluster, split, persistent)
        self.subchunk = subchunk
        self.chunk_cap_option = chunk_cap
        self._buffers = None  # (K, device state of K searches)
        # copies up, the kernel and the copy down queue on one stream from pinned memory: the host
        # waits once a chunk (other copies, on the default stream, wait for it as they always do)
        self.stream = cuda.stream()
        self._configure(1)
        n = problem.n
        A, B, general = problem.form_a, problem.form_b, problem.general
        data = {8: np.uint8, 16: np.int16, 32: np.int32, 64: np.int64}[self.shape["data_bits"]]
        self.data_dtype = data

        def padded(m):
            """m's rows padded with zeros to the kernel's row stride (whole words; bytes: 16-byte quads)."""
            rows = np.zeros((n, self.shape["stride"]), dtype=data)
            rows[:, :n] = m
            return rows.ravel()
        self.A = cuda.to_device(padded(A))
        self.AT = cuda.to_device(padded(A.T) if general else A[:1, :1].ravel().astype(data))
        self.B = cuda.to_device(B.ravel().astype(data))
        self.adiag = cuda.to_device(np.diagonal(problem.a).astype(np.int64))
        self.bdiag = cuda.to_device(np.diagonal(problem.b).astype(np.int64))
        self.delta_dtype = np.int64 if self.shape["wide"] else np.int32

    def _configure(self, searches):
        """The kernel shape for K searches. Unless the caller fixed it: on a large instance of a Hopper
        GPU, while the K searches' clusters all run at once, each search a cluster (cluster_shape:
        16 blocks of 192 threads for up to 7 searches on an H200, 8 of 256 up to 15 where the
        matrices are wider than bytes (up to 60 in four waves where they stay off chip), 4 of 384 up
        to 30, 2 of 512 up to 66); else up to one search per SM, one 1024-thread block each with
        every table on chip; from 1.5 searches an SM (1.75 from n = 100; blocks_per_sm), two
        512-thread blocks an SM where both hold every table on chip, as they hide each other's
        barrier waits, else one 1024-thread block an SM; in waves or on
        a queue (spread). A small instance: up to four blocks per SM, one wave, then a queue for
        four blocks per SM."""
        threads, group, shared_limit, global_only, regs, cluster, split, persistent = self.options
        all_searches = searches
        if cluster and threads is None:
            threads = 256
        auto = threads is None and shared_limit is None and regs is None and not config.ENABLE_CUDASIM
        large = self.problem.n * (self.problem.n - 1) // 2 > 2048
        dev = cuda.get_current_device() if auto else None
        waves = False  # more searches than run at once, each block its search's whole chunk, in waves
        per_sm = 0  # blocks an SM (0: not the shape's to say: the caller's threads, or a cluster)
        if auto and persistent is None and not cluster:
            sms = dev.MULTIPROCESSOR_COUNT
            per_sm = blocks_per_sm(searches, sms, large,
                                   large and searches > sms and self._fits_twice(dev, group, global_only, split),
                                   self.problem.n)
            waves, persistent = spread(searches, sms, per_sm, large)
        colony = persistent == UNEVEN  # a cas colony: a generation's few hundred iterations an ant
        if colony:  # (queued only on a large instance with more ants than SMs: auto, dev set)
            persistent = uneven_grid(searches, dev.MULTIPROCESSOR_COUNT) if auto and large and not cluster else 0
            sms = dev.MULTIPROCESSOR_COUNT if persistent else 0
            # (a colony keeps 1.5 for every n: its generations' chunks are its own, measured so)
            if persistent and blocks_per_sm(searches, sms, large, self._fits_twice(dev, group, global_only, split)) == 2:
                per_sm, persistent = 2, 2 * sms  # its queue takes two 512-thread blocks an SM, as the searches'
        queued = bool(persistent)
        if queued:
            searches = min(searches, persistent)  # the shape of the blocks that run at once
        self.grid = persistent if queued else None
        self.waves = waves
        if auto:
            from ...runtime.cluster import supported
            sms = dev.MULTIPROCESSOR_COUNT
            # (a cas colony takes one block an ant: its short generations were never measured on clusters)
            clustered = cluster is None and large and not queued and not colony and supported()
            shape = auto_cluster_shape(self.problem, searches, clusters_at_once, group, global_only, split) \
                if clustered else None
            if shape:
                (threads, cluster), per_sm = shape, 0
                self.waves = searches > clusters_at_once(cluster)  # (off-chip 8-block clusters)
            elif per_sm != 2 and (searches <= sms or waves):
                threads = 1024 if large else 256
            else:  # blocks an SM: the automatic shape's, else as many as one wave of the searches needs
                per_sm = 2 if per_sm == 2 or searches <= 2 * sms else 4
                while per_sm > 1 and self.problem.n - 1 > 1024 // per_sm:  # (a row of moves needs a thread)
                    per_sm //= 2
                threads, regs, shared_limit = blocks_an_sm(dev, per_sm, large)
        self.per_sm = per_sm
        # (a cas generation keeps the plan's short items: 512 of its 16n iterations an ant would leave a
        # long last round)
        subchunk = self.subchunk or (LARGE_QUEUE_SUBCHUNK if queued and large and not colony else None)
        self.shape = plan(self.problem, threads, group, shared_limit, global_only, cluster or 1, split, queued,
                          subchunk)
        self.chunk_cap = self.chunk_cap_option or (queue_chunk(all_searches, self.grid, self.shape["subchunk"])
                                                   if queued else record_rows(all_searches))
        if regs is None and not config.ENABLE_CUDASIM:  # a block of T threads must fit one SM
            regs = register_cap(self.shape["threads"])
        self.shape["max_registers"] = regs
        self.kernel = kernel_for(self.shape, ADAPTERS[self.problem.kind])
        self.row_chunks = cuda.to_device(row_chunk_table(self.problem.n, self.shape["per_thread"]))
        if self.shape["cluster"] > 1:
            from ...runtime.cluster import supported
            if not supported():
                raise LsbenchError("--param cluster: thread block clusters need a GPU of compute capability 9.0 or later")
        self.launch = PreparedLauncher(self.kernel, self.shape["cluster"])

    def _fits_twice(self, dev, group, global_only, split):
        """Whether two 512-thread blocks of this instance fit one SM with every table on chip (and
        hold its n - 1 rows of moves: a row needs a thread of its own, so not from n = 514 on)."""
        threads, _regs, shared_limit = blocks_an_sm(dev, 2, True)
        if self.problem.n - 1 > threads:
            return False
        shape = plan(self.problem, threads, group, shared_limit, global_only, 1, split)
        return all(shape["shared"].values())

    def run(self, seeds, stop, progress=None, chunk=None, migration=None):
        """K = len(seeds) Ro-TS searches, each exactly the CPU search with its seed (unless
        `migration`, lsbench.search.islands, restarts some from other islands' solutions)."""
        pr = self.problem
        states, sols = [], []
        for seed in seeds:  # exactly the CPU search's start: permutation, then tenures from that stream
            st = rng.new_state(seed)
            sols.append(pr.random_solution(st))
            states.append(st[0])
        prm = self.prm
        results = self._search(sols, states, stop, prm["tenure_min"], prm["tenure_max"], prm["aspiration"],
                               prm.get("tenure_cube", 0),
                               progress, chunk, migration=migration)
        for result, seed in zip(results, seeds):
            result.seed = seed
        return results

    def batch(self, sols, states, iterations, aspiration, tenure):
        """K searches of `iterations` from `sols` with stream states `states`, tenure floor(tenure
        u^3) and `aspiration` by age (cas's local searches, lsbench.engines.cas.local_search_batch):
        (their best costs, their best solutions)."""
        return self._search(sols, states, Stop(iterations=iterations), 0, 0, int(aspiration), int(tenure),
                            bests_only=True)

    def _search(self, sols, states, stop, tenure_min, tenure_max, aspiration, tenure_cube, progress=None,
                chunk=None, bests_only=False, migration=None):
        """K searches from `sols` with stream states `states`, on the host loop (lsbench/search/chunk_loop.py).
        `bests_only` (a cas generation): no trajectories, chunks as long as allowed, only the bests
        come back."""
        pr = self.problem
        nb = pr.neighbourhood("swap")
        K = len(sols)
        sols = np.array(sols, dtype=np.int64)
        # the start costs: the kernel's first chunk computes them (and the whole start state) itself;
        # a recorded search also needs them here, for its trajectory and a target reached at once
        curs = np.full(K, np.iinfo(np.int64).max) if bests_only else qap_costs(pr.a, pr.b, sols)
        b = self.buffers(K)
        host_up = b.host_upload
        host_up["START"][:] = sols
        host_up["FRESH"][:] = 0
        host_up["STATE"][:, 0] = states
        host_up["ACTIVE"][:] = 1
        b.upload.copy_to_device(host_up["all"], stream=self.stream)  # the starts and stream states in one copy
        self.restarts = self.renewals = 0
        policy = None if bests_only or not self.restart["stagnation"] else \
            EliteRestarts(pr.n, K, seed=int(states[0]), **self.restart)
        searches = RotsChunks(self, K, (tenure_min, tenure_max, aspiration, tenure_cube), bests_only, policy, migration)
        out = run_chunks(searches, stop, nb.size, curs, self._chunk_lengths(chunk, bests_only, policy), stop.target,
                         progress, joint=bool(policy or migration))
        if migration and searches.pending[0]:  # decided at the last boundary, never run
            migration.withdraw([q for q, _s in searches.pending[0]], out.it)
        best = out.best
        if out.it == 0:  # stopped before the first chunk (a target met at the start): the start is the result
            best = cur = qap_costs(pr.a, pr.b, sols)
            best_sol = sols
        else:
            best_sol = (b.host_download["BEST_SOL"] if bests_only else b.BEST_SOL.copy_to_host()).astype(np.int64)
            if len(searches.record_sol):
                kept = searches.record < best  # a search whose fresh start never got back to its record
                best = np.where(kept, searches.record, best)
                best_sol[kept] = searches.record_sol[kept]
            cur = None if bests_only else b.CUR.copy_to_host()  # a cas generation keeps only the bests
        self.kernel_s, self.max_chunk_s, self.chunks_run = out.kernel_s, out.max_chunk_s, out.chunks_run
        self.loop_s = out.loop_s  # the search loop, without the one-off set-up
        if bests_only:
            return best, best_sol
        prm = {"tenure_min": tenure_min, "tenure_max": tenure_max, "aspiration": aspiration}
        if tenure_cube:
            prm["tenure_cube"] = tenure_cube
        trajectories = out.log.trajectories()
        its = out.iterations
        return [SearchResult(int(best[q]), best_sol[q], int(its[q]), int(its[q]) * nb.size, trajectories[q], prm,
                             int(cur[q])) for q in range(K)]

    def _chunk_lengths(self, chunk, bests_only, policy):
        """The run's ChunkLength: a queue's chunks are queue_chunk's from the first (doubling from 256
        stopped at a power of two past 20 ms: 166 searches had 16 items, 116 idle slots in the last
        round, not queue_chunk's 58); with restarts fixed chunks, so that the restarts fall on the
        same iterations in every run: a queue's as long as before, else 4,096 iterations at most (a
        restart, and a target's time, that late)."""
        cap = self.chunk_cap
        if policy:
            fixed = cap if self.shape["queued"] else min(cap, IMPROVEMENT_CAP)
            return ChunkLength(chunk or policy.check_every(fixed), cap, grow=False)
        first = cap if bests_only or self.shape["queued"] else 256
        return ChunkLength(chunk or (4 if config.ENABLE_CUDASIM else first), cap, grow=not config.ENABLE_CUDASIM)

    def _restarts(self, policy, it, best, finished, record, record_sol):
        """([(search, start)] of the stagnant searches that keep their bests, [(search, start)] of
        those that forget them: the renewed pools' searches and the walkers) (lsbench.search.restarts).
        A forgetting search's best goes to `record` first; the pools' elites see the walkers'
        records (renew and walk exclude each other)."""
        renewed = policy.renewals(it, best, finished)
        stagnant = policy.stagnant(it, finished).size
        if not (renewed or stagnant):
            return [], []
        b = self._buffers  # into the pinned buffer: no staging (read here only, copied where kept)
        sols = b.host_download["BEST_SOL"]
        copy_down(sols, b.BEST_SOL, sols.nbytes, self.stream)
        wait_for(self.stream)
        walks = policy.walks(it, sols, finished) if stagnant else []
        for q, _start in renewed + walks:
            if best[q] < record[q]:
                record[q], record_sol[q] = best[q], sols[q]
        if policy.walker.any():
            kept = record < best
            best, sols = np.where(kept, record, best), np.where(kept[:, None], record_sol, sols)
        starts = policy.restarts(it, best, sols, finished) if stagnant else []
        self.restarts += len(starts) + len(walks)
        self.renewals += len(renewed)
        return starts, renewed + walks

    def _start_from(self, starts, renewed, it, best, log, seconds):
        """Restarts searches from [(search, start)] at their next chunk: the starts and FRESH = 2 go
        up, the kernel builds each start and keeps the search's best. A start better than its
        search's best is an improvement of that search. `renewed` start afresh (FRESH = 1): the
        kernel's best becomes the start's cost (the host keeps the record)."""
        b = self._buffers
        host_up = b.host_upload
        host_up["FRESH"][:] = 0
        for fresh, group in ((1, renewed), (2, starts)):
            for q, start in group:
                host_up["START"][q] = start
                host_up["FRESH"][q] = fresh
        if renewed:
            best[[q for q, _s in renewed]] = qap_costs(self.problem.a, self.problem.b, np.array([s for _q, s in renewed]))
        costs = qap_costs(self.problem.a, self.problem.b, np.array([s for _q, s in starts])) if starts else []
        better = [(q, cost) for (q, _s), cost in zip(starts, costs) if cost < best[q]]
        log.add([q for q, _c in better], [it] * len(better), [c for _q, c in better], seconds)
        for q, cost in better:
            best[q] = cost
        copy_up(b.START, host_up["START"], host_up["START"].nbytes, self.stream)
        copy_up(b.FRESH, host_up["FRESH"], host_up["FRESH"].nbytes, self.stream)

    def launch_chunk(self, K, scalars):
        """Queues one chunk of the K searches on self.stream: `scalars` = (tenure_min, tenure_max,
        aspiration, target, first iteration - base, iterations, tenure_cube, fresh). The launch is
        kept in last_launch (a test reads its queue tags)."""
        b = self.buffers(K)
        # the kernel's clock and aspiration horizon are 32-bit: a chunk stays under 2^29 iterations
        # (kernel.ASPIRE_FLOOR), as every chunk the engine sizes (chunk_cap) does
        assert int(scalars[5]) < 1 << 29, "a gpu-resident rots chunk of 2^29 iterations or more"
        subchunks = -(-int(scalars[5]) // self.shape["subchunk"])
        blocks = self.grid if self.shape["queued"] else K * self.shape["cluster"]
        counts = (np.int64(0),) * 3  # the queue's (item0, seq0, push0) for this launch
        if self.shape["queued"]:
            assert K * (subchunks - 1) <= b.RING.size, "a queued chunk longer than its ring"
            counts = self.queue.launch(K, subchunks, blocks)
        tenure_min, tenure_max, *rest = scalars  # the kernel takes the tenure range as (span, magic, min)
        args = ((self.A, self.AT, self.B, self.adiag, self.bdiag, self.row_chunks), tuple(b.state_args()),
                (*tenure_divisor(tenure_min, tenure_max), tenure_min, *rest, *counts))
        self.last_launch = (blocks, self.shape["threads"], self.shape["dynamic_shared_bytes"], args)
        self.launch(*self.last_launch, stream=self.stream)

    def buffers(self, K):
        """The device state of K searches, allocated once per K (a cas colony reuses it every
        generation) for the kernel shape of K searches."""
        if self._buffers is not None and self._buffers.searches == K:
            return self._buffers
        self._configure(K)
        n = self.problem.n
        slots = self.shape["slots"]
        blocks = K * self.shape["cluster"]  # the tables: one row per block
        # STATE[q]: the search's stream state, and the stream state its cas ant is built from
        # ACTIVE[q]: 0 once search q (or its cas colony) has reached its target: its blocks return at once
        # START[q]: the permutation search q (re)starts from where FRESH[q] is 1 (a start) or 2 (a
        # restart, which keeps its best); the kernel clears FRESH[q] once it has started
        up, host_up = _packed({"STATE": ((K, 2), np.uint64), "P": ((K, n), np.int32), "TAU": ((n * n,), np.float64),
                               "ACTIVE": ((K,), np.int32), "START": ((K, n), np.int32), "FRESH": ((K,), np.int32)})
        # QUEUE: [items taken, 1 where a queue item's wait ran out, items handed on]; BEST, QUEUE and each
        # search's improvements and iterations of the chunk (NIMP, DONE) come down in one copy after every
        # chunk (separate copies cost about 0.1 ms each, a tenth of a restart run's 4,096-iteration chunk),
        # BEST_SOL with them after a cas generation
        down, host_down = _packed({"BEST": ((K,), np.int64), "QUEUE": ((3,), np.int64), "NIMP": ((K,), np.int64),
                                   "DONE": ((K,), np.int64), "BEST_SOL": ((K, n), np.int32)})
        down["QUEUE"].copy_to_device(np.zeros(3, np.int64))
        # RING: the queue's items in the order they became ready (gpu/runtime/chunks.take_item), as long as a
        # chunk of chunk_cap iterations needs
        ring = K * max(1, -(-self.chunk_cap // self.shape["subchunk"]) - 1) if self.shape["queued"] else 1
        self.queue = ItemQueue(down["QUEUE"], ring, self.stream)
        per_block = n * self.shape["stride"]
        self._buffers = SearchBuffers(
            searches=K, upload=up["all"], host_upload=host_up, download=down["all"], host_download=host_down,
            P=up["P"], DELTA=cuda.device_array((blocks, slots), dtype=self.delta_dtype),
            BPG=cuda.device_array((blocks, per_block), dtype=self.data_dtype),
            BPTG=cuda.device_array((blocks, per_block if self.shape["general"] else 1), dtype=self.data_dtype),
            OLDG=cuda.device_array((blocks, slots), dtype=np.int32), EX=cuda.device_array((blocks, n * n), np.int32),
            PEND=cuda.device_array(K, dtype=np.int64), STATE=up["STATE"], CUR=cuda.device_array(K, dtype=np.int64),
            BEST=down["BEST"], BEST_SOL=down["BEST_SOL"],
            IMP_IT=cuda.device_array((self.chunk_cap, K), dtype=np.int64),  # [m, search]: read back by rows
            IMP_OBJ=cuda.device_array((self.chunk_cap, K), dtype=np.int64),
            NIMP=down["NIMP"], DONE=down["DONE"],
            ACTIVE=up["ACTIVE"], START=up["START"], FRESH=up["FRESH"],
            QUEUE=down["QUEUE"], RING=self.queue.RING, TAU=up["TAU"])
        return self._buffers

    def describe(self):
        return {"backend": "gpu-resident", "device": device_name(), "blocks_per_search": self.shape["cluster"],
                "recomputing_threads": self.shape["split"] or self.shape["threads"],
                "threads_per_block": self.shape["threads"], "lanes_per_recomputation": self.shape["group"],
                "delta_bits": 64 if self.shape["wide"] else 32, "data_bits": self.shape["data_bits"],
                "dp4a_sums": self.shape["dp4a"], "row_sums": self.shape["row_sums"],
                "symmetric_form": not self.shape["general"], "max_registers": self.shape["max_registers"],
                "in_shared_memory": [k for k in ON_CHIP if self.shape["shared"][k]],
                "dynamic_shared_bytes": self.shape["dynamic_shared_bytes"],
                "restart": self.restart if self.restart["stagnation"] else None, "restarts": self.restarts,
                "renewals": self.renewals,
                "persistent_blocks": self.grid if self.shape["queued"] else 0, "waves": self.waves,
                "blocks_per_sm": self.per_sm or None,
                "iterations_per_queue_item": self.shape["subchunk"] if self.shape["queued"] else None,
                "iterations_per_chunk_at_most": self.chunk_cap}


def tenure_divisor(tenure_min, tenure_max):
    """(span, magic) of the kernel's tenure draw: span = max - min + 1 and floor((2^64 - 1) / span),
    with which it takes a stream word modulo span without dividing (kernel.draw_tenure)."""
    span = max(int(tenure_max) - int(tenure_min) + 1, 1)
    return np.uint64(span), np.uint64(((1 << 64) - 1) // span)


def _packed(fields):
    """Arrays {name: (shape, dtype)} laid out one after another (each 8-byte aligned) in one device
    buffer and in one pinned host buffer, "all" the whole buffer: a generation's few small arrays
    move in one copy each way (pinned: no staging; separate copies cost ~100 us each on an H100
    host). Returns (device views, host views)."""
    offsets, size = {}, 0
    for name, (shape, dtype) in fields.items():
        offsets[name] = size
        size += -(-int(np.prod(shape)) * np.dtype(dtype).itemsize // 8) * 8
    dev, host = {"all": cuda.device_array(size, np.uint8)}, {"all": cuda.pinned_array(size, np.uint8)}
    for name, (shape, dtype) in fields.items():
        end = offsets[name] + int(np.prod(shape)) * np.dtype(dtype).itemsize
        dev[name] = dev["all"][offsets[name]:end].view(dtype).reshape(shape)
        host[name] = host["all"][offsets[name]:end].view(dtype).reshape(shape)
    return dev, host
