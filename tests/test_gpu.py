"""The `gpu` backend gives exactly the CPU trajectory (simulator in CI), with every variant:
fitness copied back or reduced on the device, neighbourhood generated on the GPU or the CPU;
thread control survives failing launch configurations; a missing GPU is one clear error."""
import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import ROOT
from lsbench.registry import get_evaluator
from lsbench.runner import run_one

CASES = [
    ("rnd-qap-8-1", "tabu", None, {}),
    ("rnd-qap-8-1", "rots", None, {}),
    ("rnd-qap-8-1", "hc", None, {}),
    ("rnd-atsp-8-2", "tabu", "swap", {}),
    ("rnd-atsp-8-2", "tabu", "2opt", {}),
    ("rnd-pfsp-7x3-1", "tabu", "insertion", {}),
    ("rnd-pfsp-7x3-1", "tabu", "insertion", {"objective": "three", "weights": (1, 2, 30)}),
    ("rnd-pfsp-7x3-1", "tabu", "swap", {"objective": "flowtime"}),
    # beyond the simulator's LOCAL_MACHINES (4): a row of completion times a thread in global memory
    ("rnd-pfsp-7x6-1", "tabu", "insertion", {"objective": "flowtime"}),
    ("rnd-pfsp-7x6-1", "tabu", "swap", {"objective": "three", "weights": (1, 2, 30)}),
    ("9-8", "tabu", "hamming1", {}),
    ("9-8", "tabu", "hamming2", {}),
    ("9-8", "tabu", "hamming3", {}),
    ("weierstrass-2", "tabu", "crowns", {"neighbours": 40}),
    ("weierstrass-2", "tabu", "crowns", {"neighbours": 40, "precision": 32}),
]
VARIANTS = [{"reduce": "host"}, {"reduce": "device"}, {"reduce": "host", "generate": "cpu"},
            {"reduce": "device", "generate": "cpu", "block": 64, "moves_per_thread": 4}]
# neighbourhoods whose device-side selection evaluates the moves inside the reduction (fused)
FUSED = {("rnd-qap-8-1", None), ("rnd-atsp-8-2", "swap"), ("rnd-atsp-8-2", "2opt"), ("rnd-pfsp-7x3-1", "insertion"),
         ("rnd-pfsp-7x6-1", "insertion")}


def trajectory(rec):
    return [(it, obj) for it, _t, obj in rec["trajectory"]], rec["final_objective"], rec["best_solution"]


@pytest.mark.parametrize("instance,algorithm,nb,params", CASES)
def test_gpu_trajectory_equals_cpu(instance, algorithm, nb, params):
    # the PFSP insertion kernels synchronise blocks every step, which the simulator runs slowly
    iterations = 4 if nb == "insertion" else 8
    ref = run_one(None, instance, algorithm, "cpu", nb, seed=3, iterations=iterations, problem_params=params)
    for variant in VARIANTS:
        rec = run_one(None, instance, algorithm, "gpu", nb, seed=3, iterations=iterations, problem_params=params,
                      backend_params=variant)
        if instance.startswith("weierstrass"):
            # float objectives: same moves chosen, values within the stated tolerance
            (t1, f1, s1), (t2, f2, s2) = trajectory(ref), trajectory(rec)
            assert [i for i, _ in t1] == [i for i, _ in t2]
            rtol = 1e-5 if params.get("precision") == 32 else 1e-12
            np.testing.assert_allclose([o for _, o in t1], [o for _, o in t2], rtol=rtol)
            np.testing.assert_allclose(f1, f2, rtol=rtol)  # the final objectives too
            np.testing.assert_allclose(s1, s2, rtol=rtol, atol=rtol)
        else:
            assert trajectory(rec) == trajectory(ref), variant
        fused = variant == {"reduce": "device"} and (instance, nb) in FUSED
        assert rec["backend_info"]["fused_selection"] == fused, variant
        split = rec["backend_info"]["time_split"]
        assert split["kernel_s"] > 0 and split["transfer_s"] > 0


@pytest.mark.parametrize("objective", ["makespan", "flowtime"])
def test_flow_shop_insertion_in_groups_of_removed_positions_follows_the_cpu(monkeypatch, objective):
    """rnd-pfsp-5000x500-1's Taillard tables (n x m x n, 50 GB twice) were refused with the machines
    beyond 64: the gpu backend takes the removed positions in groups whose tables fit SCRATCH_BYTES.
    Here groups of 3 of 7 positions (and rows of completion times beyond the simulator's 4
    machines): the same trajectory as the CPU's, at every variant."""
    from lsbench import instances as registry
    from lsbench.gpu.iteration import evaluator
    params = {"objective": objective}
    per_position = evaluator.bytes_per_removed_position(registry.load("rnd-pfsp-7x6-1", "pfsp"))
    monkeypatch.setattr(evaluator, "SCRATCH_BYTES", 3 * per_position)
    ref = run_one(None, "rnd-pfsp-7x6-1", "tabu", "cpu", "insertion", seed=3, iterations=4, problem_params=params)
    for variant in VARIANTS:
        rec = run_one(None, "rnd-pfsp-7x6-1", "tabu", "gpu", "insertion", seed=3, iterations=4,
                      problem_params=params, backend_params=variant)
        assert trajectory(rec) == trajectory(ref), variant
        info = rec["backend_info"]
        assert info["insertion_groups"] == 3 and not info["fused_selection"], variant


def test_thread_control_recovers_from_failing_launches():
    from lsbench.gpu.runtime.launch import ThreadControl
    failing = set(ThreadControl(45).candidates[:2])  # the first configurations it would try

    def hook(config):
        if config in failing:
            raise RuntimeError("too many resources requested for launch (injected)")

    from lsbench import instances as registry
    from lsbench.registry import get_evaluator
    from lsbench.interfaces import Stop
    from lsbench.search.tabu import TabuSearch
    p = registry.load("rnd-atsp-10-1")
    nb = p.neighbourhood("2opt")
    ev = get_evaluator("gpu", launch_hook=hook).bind(p, nb)
    got = TabuSearch().run(p, nb, ev, Stop(iterations=40), seed=5)
    cpu = get_evaluator("cpu").bind(p, nb)
    want = TabuSearch().run(p, nb, cpu, Stop(iterations=40), seed=5)
    assert [t[::2] for t in got.trajectory] == [t[::2] for t in want.trajectory]
    info = ev.control.describe()
    assert sorted(map(tuple, info["failed"])) == sorted(failing)
    assert info["chosen"] is not None and (info["chosen"]["block"], info["chosen"]["moves_per_thread"]) not in failing


def test_thread_control_gives_up_with_a_clear_error_when_nothing_launches():
    from lsbench.gpu.runtime.launch import LaunchFailure, ThreadControl
    from lsbench.gpu.iteration.kernels import tsp_swap_kernel

    def hook(config):
        raise RuntimeError("no resources")

    with pytest.raises(LaunchFailure, match="every launch configuration failed"):
        ThreadControl(100, launch_hook=hook).launch(tsp_swap_kernel)


def test_missing_gpu_is_one_clear_error(tmp_path):
    out = tmp_path / "x.json"
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "0", "CUDA_VISIBLE_DEVICES": ""}
    r = subprocess.run([sys.executable, "-m", "lsbench", "run", "--instance", "rnd-qap-8-1", "--backend", "gpu",
                        "--iterations", "5", "--out", str(out), "--quiet"], capture_output=True, text=True,
                       cwd=ROOT, env=env, timeout=300)
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [r.stderr.strip()] and "no CUDA GPU" in r.stderr
    assert not out.exists()


def test_fuse_parameter_from_the_command_line(tmp_path):
    """--param fuse=0 keeps evaluation and selection apart (same trajectory); fuse=2 is one error line."""
    out = tmp_path / "f.json"
    base = [sys.executable, "-m", "lsbench", "run", "--instance", "rnd-atsp-8-2", "--neighbourhood", "2opt",
            "--backend", "gpu", "--param", "reduce=device", "--iterations", "4", "--quiet", "--out", str(out)]
    r = subprocess.run(base + ["--param", "fuse=2"], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 2 and r.stderr.strip().splitlines() == ["lsbench: error: --param fuse=2: must be one of "
                                                                     "0, 1 (gpu)"]
    assert not out.exists()
    r = subprocess.run(base + ["--param", "fuse=0"], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stderr
    assert json.loads(out.read_text())["backend_info"]["fused_selection"] is False
    r = subprocess.run([sys.executable, "-m", "lsbench", "verify", "--replay", str(out)], capture_output=True,
                       text=True, cwd=ROOT, timeout=300)  # (the iteration-level GPU search, run again on the CPU)
    assert r.returncode == 0 and "1 search replayed on the CPU" in r.stdout, r.stdout + r.stderr


@pytest.mark.parametrize("instance", ["ta001", "rnd-pfsp-9x4-2"])
def test_solution_level_wavefront_equals_cpu_for_every_thread_count(instance):
    from lsbench.gpu.solution.makespan import makespan_flowtime
    from lsbench import instances as registry
    from lsbench import rng
    from lsbench.problems.pfsp import schedule_objectives
    p = registry.load(instance)
    perms = np.array([rng.permutation(rng.new_state(s), p.n) for s in range(3)])
    want = [schedule_objectives(p.pt, p.due, q)[:2] for q in perms]
    for threads in range(1, p.m + 2):
        got = makespan_flowtime(p.pt, perms, threads)
        assert [tuple(r) for r in got] == [tuple(int(v) for v in w) for w in want], threads


def test_sampling_on_the_gpu_runs_past_64_machines_and_1024_jobs_as_the_cpu():
    """The permutation and the wavefront's rows were static shared arrays of 1,024 jobs and 64
    machines (a larger flow shop was refused); they take the block's dynamic shared memory: 1,100 x
    70 here (9,640 bytes), the CPU's best at the same iterations."""
    cpu = run_one("pfsp", "rnd-pfsp-1100x70-1", "sample", "cpu", seed=5, iterations=2)
    gpu = run_one("pfsp", "rnd-pfsp-1100x70-1", "sample", "gpu", seed=5, iterations=2, backend_params={"block": 32})
    assert gpu["best_solution"] == cpu["best_solution"] and gpu["best_objective"] == cpu["best_objective"]
    assert [(t[0], t[2]) for t in gpu["trajectory"]] == [(t[0], t[2]) for t in cpu["trajectory"]]


def test_sampling_beyond_a_blocks_shared_memory_is_one_error_line(monkeypatch):
    """A permutation and two machine rows that a block cannot hold (here a GPU of 40,000 bytes a
    block: 5,000 jobs and 500 machines take 48,000) are refused before the run in one line naming
    the instance."""
    from lsbench.errors import LsbenchError
    monkeypatch.setattr("lsbench.gpu.runtime.launch.shared_bytes_per_block", lambda: 40_000)
    with pytest.raises(LsbenchError) as refused:
        run_one("pfsp", "rnd-pfsp-5000x500-1", "sample", "gpu", seed=1, iterations=1)
    assert str(refused.value) == ("--algorithm sample on gpu: rnd-pfsp-5000x500-1's permutation and two rows of 500 "
                                  "machines needs 48,000 bytes of shared memory a block, more than this GPU's 40,000")


@pytest.mark.parametrize("block", [1, 3, 5])
def test_sampling_on_the_gpu_keeps_the_cpus_best_at_the_same_iteration_for_every_block_size(block, monkeypatch):
    """--algorithm sample: p threads a permutation (fewer, as many as, more than the 4 machines)
    draw the CPU's permutations and keep its best, found at the same iterations, also where the
    GPU's run is cut into launches of 7 permutations (the stream and best carried across them)."""
    cpu = run_one("pfsp", "rnd-pfsp-9x4-2", "sample", "cpu", seed=11, iterations=40)
    monkeypatch.setattr("lsbench.engines.sampling.CHUNK_CELLS", 7 * 9 * 4)
    gpu = run_one("pfsp", "rnd-pfsp-9x4-2", "sample", "gpu", seed=11, iterations=40, backend_params={"block": block})
    assert gpu["best_solution"] == cpu["best_solution"] and gpu["evaluations"] == gpu["iterations"] == 40
    assert [(t[0], t[2]) for t in gpu["trajectory"]] == [(t[0], t[2]) for t in cpu["trajectory"]]
    assert len(cpu["trajectory"]) > 1 and gpu["backend_info"]["threads_per_evaluation"] == block


# -- device-resident robust tabu search (the fast path) ------------------------------------------
def _cpu_rots(problem, seed, stop):
    from lsbench.registry import get_evaluator
    from lsbench.search.tabu import RobustTabuSearch
    nb = problem.neighbourhood("swap")
    return RobustTabuSearch().run(problem, nb, get_evaluator("cpu").bind(problem, nb), stop, seed)


def _same_search(cpu, dev):
    assert [(it, obj) for it, _t, obj in cpu.trajectory] == [(it, obj) for it, _t, obj in dev.trajectory]
    assert list(cpu.best_solution) == list(dev.best_solution)
    assert (cpu.final_objective, cpu.iterations) == (dev.final_objective, dev.iterations)
    assert len(cpu.trajectory) >= 3  # the search improved several times: the comparison bites


@pytest.mark.parametrize("threads", [96, 128])
def test_resident_rots_blocks_of_any_warp_count_with_the_swaps_own_entries_on_a_free_warp_follow_the_cpu(threads):
    """Three or four warps on tai12a: the swap's own entries (p, tabu list, corners) go to the first
    thread of a warp with no row or column to swap, and the simulator's tree minimum takes a block
    that is no power of two (96 threads lost a warp's keys before)."""
    from lsbench.gpu.engine.rots.host import ResidentRots
    from lsbench import instances as registry
    from lsbench.interfaces import Stop
    from lsbench.search.tabu import RobustTabuSearch
    p = registry.load("tai12a")
    engine = ResidentRots(p, RobustTabuSearch().params(p), threads=threads)
    dev = engine.run([5], Stop(iterations=40))[0]
    assert engine.shape["threads"] == threads
    _same_search(_cpu_rots(p, 5, Stop(iterations=40)), dev)


@pytest.mark.parametrize("max_registers", [None, 64])
def test_resident_rots_follows_the_cpu_trajectory_on_tai12a(max_registers):
    """Uncapped, the kernel draws the tenures with a high-word product; capped at 64 registers a
    thread, with the division: both give the CPU's tenures."""
    from lsbench.gpu.engine.rots.host import ResidentRots
    from lsbench import instances as registry
    from lsbench.interfaces import Stop
    from lsbench.search.tabu import RobustTabuSearch
    p = registry.load("tai12a")
    engine = ResidentRots(p, RobustTabuSearch().params(p), max_registers=max_registers)
    dev = engine.run([3], Stop(iterations=30))[0]
    cap = engine.shape["max_registers"]  # the device's engine caps every shape (256 threads: 255)
    assert (cap is not None and cap <= 64) == (max_registers == 64)  # the division exactly where capped at 64
    _same_search(_cpu_rots(p, 3, Stop(iterations=30)), dev)


def test_resident_rots_with_64_bit_deltas_in_global_memory_and_several_searches():
    """Large flows and distances need 64-bit move costs; the table in global memory (large n) is
    forced here on a small instance (every table off chip); two searches run as two blocks, each its
    own CPU trajectory."""
    from lsbench.gpu.engine.rots.host import ResidentRots
    from lsbench.gpu.engine.rots.plan import ON_CHIP
    from lsbench.problems.qap import QAP
    from lsbench.interfaces import Stop
    from lsbench.search.tabu import RobustTabuSearch
    g = np.random.default_rng(4)
    p = QAP(g.integers(0, 3_000_000, (9, 9)), g.integers(0, 3_000, (9, 9)))
    engine = ResidentRots(p, RobustTabuSearch().params(p), global_only=ON_CHIP)
    assert engine.shape["wide"] and engine.shape["general"] and not any(engine.shape["shared"].values())
    devs = engine.run([5, 6], Stop(iterations=25))
    for seed, dev in zip([5, 6], devs):
        _same_search(_cpu_rots(p, seed, Stop(iterations=25)), dev)


@pytest.mark.parametrize("symmetric", ["a", "b"])
def test_resident_rots_in_the_symmetric_form_with_diagonals_and_a_shifted_clock(symmetric, monkeypatch):
    """One matrix symmetric (the kernel folds the other into b + b^T or a + a^T), both with
    diagonals; the 32-bit tabu clock is shifted back every few iterations here (every 2^30 in real
    runs): each search is still exactly its CPU trajectory."""
    import lsbench.gpu.engine.rots.host as resident
    from lsbench.problems.qap import QAP
    from lsbench.interfaces import Stop
    from lsbench.search.tabu import RobustTabuSearch
    g = np.random.default_rng(11)
    s = g.integers(0, 60, (9, 9))
    other = g.integers(0, 90, (9, 9))
    p = QAP(s + s.T, other) if symmetric == "a" else QAP(other, s + s.T)
    monkeypatch.setattr(resident, "REBASE_AT", 6)
    monkeypatch.setattr(resident, "REBASE_BY", 4)
    engine = resident.ResidentRots(p, RobustTabuSearch().params(p), global_only=("tabu_age",))
    assert not engine.shape["general"] and engine.shape["diagonal"]
    for seed, dev in zip([1, 2], engine.run([1, 2], Stop(iterations=30), chunk=5)):
        _same_search(_cpu_rots(p, seed, Stop(iterations=30)), dev)


@pytest.mark.parametrize("aspiration", ["5", "3000000000"])
def test_resident_rots_aspiration_horizon_short_or_beyond_the_32_bit_clock_follows_the_cpu(aspiration):
    """The kernel keeps the aspiration horizon it - aspiration in 32 bits, clamped once a chunk:
    a short horizon (many moves aspirated by age) and one beyond the 32-bit clock (none ever) give
    exactly the CPU's searches, over several chunks."""
    from lsbench.gpu.engine.rots.host import ResidentRots
    from lsbench import instances as registry
    from lsbench.registry import get_evaluator
    from lsbench.interfaces import Stop
    from lsbench.search.tabu import RobustTabuSearch
    p = registry.load("tai12a")
    rots = RobustTabuSearch(tenure_min="2", tenure_max="4", aspiration=aspiration)
    engine = ResidentRots(p, rots.params(p))
    nb = p.neighbourhood("swap")
    stop = Stop(iterations=60)
    for seed, dev in zip([3, 4], engine.run([3, 4], stop, chunk=7)):
        _same_search(rots.run(p, nb, get_evaluator("cpu").bind(p, nb), stop, seed), dev)


@pytest.mark.parametrize("n", [5, 13, 16, 97, 100])
def test_resident_rots_dp4a_lane_sums_read_only_used_words_and_add_up_in_any_split(n):
    """The byte-matrix sums the device runs (dp4a, 128-bit loads: not the simulator's), checked by
    running their generated source with a Python dp4a: over G lanes, in 1 to 3 partial sums, with or
    without the kept row sum, rows padded to 16 bytes. The kernel's padding is zero; here the bytes
    after n in the last used word are (a dp4a reads whole words), the whole words past it junk that
    a correct sum never reads."""
    from lsbench.gpu.adapters.qap_rots import _unrolled_packed_lane_sum

    def dp4a(a, b, c):
        a, b = int(a), int(b)
        return np.uint32((int(c) + sum(((a >> 8 * k) & 255) * ((b >> 8 * k) & 255) for k in range(4))) % 2 ** 32)
    g = np.random.default_rng(n)
    stride = -(-n // 16) * 16
    a, b = g.integers(0, 256, (n, stride)).astype(np.uint8), g.integers(0, 256, (n, stride)).astype(np.uint8)
    a[:, n:-(-n // 4) * 4] = b[:, n:-(-n // 4) * 4] = 0
    aw, bw = a.reshape(-1).view(np.uint32), b.reshape(-1).view(np.uint32)
    a64, b64 = a[:, :n].astype(np.int64), b[:, :n].astype(np.int64)
    words = stride // 4
    for lanes in (1, 2, 4):
        for chains in (1, 2, 3):
            for row_sums in (True, False):
                f = _unrolled_packed_lane_sum(-(-n // 4), lanes, row_sums, chains).py_func
                f.__globals__.update(dp4a=dp4a, load_quad=lambda arr, i: tuple(arr[int(i):int(i) + 4]))
                for x, y in ((0, 1), (n - 1, 2), (3, n - 2)):
                    out = [f(aw, bw, np.uint64(x * words), np.uint64(y * words), np.uint64(lane)) for lane in range(lanes)]
                    cross = int((a64[x] * b64[y] + a64[y] * b64[x]).sum())
                    sx, sy = int((a64[x] * b64[x]).sum()), int((a64[y] * b64[y]).sum())
                    if row_sums:
                        assert sum(int(o[0]) for o in out) % 2 ** 32 == (cross - sy) % 2 ** 32
                        assert sum(int(o[1]) for o in out) % 2 ** 32 == sy % 2 ** 32
                    else:
                        assert sum(int(o) for o in out) % 2 ** 32 == (cross - sx - sy) % 2 ** 32


def test_resident_rots_with_cube_tenures_follows_the_cpu():
    """tenure_cube = T: the kernel draws floor(T u^3) from the same stream words as the CPU."""
    from lsbench.gpu.engine.rots.host import ResidentRots
    from lsbench import instances as registry
    from lsbench.registry import get_evaluator
    from lsbench.interfaces import Stop
    from lsbench.search.tabu import RobustTabuSearch
    p = registry.load("tai12a")
    rots = RobustTabuSearch(tenure_cube="1n", aspiration="8n^2")
    engine = ResidentRots(p, rots.params(p))
    nb = p.neighbourhood("swap")
    stop = Stop(iterations=60)
    for seed, dev in zip([3, 4], engine.run([3, 4], stop, chunk=7)):
        assert dev.params["tenure_cube"] == 12
        _same_search(rots.run(p, nb, get_evaluator("cpu").bind(p, nb), stop, seed), dev)


@pytest.mark.parametrize("blocks", [1, 2])
def test_resident_rots_with_more_searches_than_blocks_queues_them_and_each_follows_the_cpu(blocks):
    """A persistent grid smaller than K: blocks take (search, sub-chunk of 2 iterations) items from
    the queue, each search's next item once its last has ended, the state carried through global memory between them.
    Five searches, chunks of 5 (sub-chunks of 2, 2, 1) -- each is exactly its CPU trajectory, also
    the two that stop at the target in the middle of a chunk, whose later items return at once."""
    from lsbench.gpu.engine.rots.host import ResidentRots
    from lsbench import instances as registry
    from lsbench.interfaces import Stop
    from lsbench.search.tabu import RobustTabuSearch
    p = registry.load("tai12a")
    engine = ResidentRots(p, RobustTabuSearch().params(p), persistent=blocks, subchunk=2)
    stop = Stop(iterations=40, target=224416)
    seeds = [2, 3, 4, 5, 6]
    devs = engine.run(seeds, stop, chunk=5)
    info = engine.describe()
    assert engine.shape["queued"] and info["persistent_blocks"] == blocks and info["iterations_per_queue_item"] == 2
    assert info["iterations_per_chunk_at_most"] % 2 == 0 and info["iterations_per_chunk_at_most"] >= 16 * 2
    buffers = engine.buffers(5)  # every search went through every sub-chunk, the finished ones too
    taken, _late, pushed = buffers.QUEUE.copy_to_host()
    assert taken == engine.queue.taken  # every block took one item past the last
    assert pushed == engine.queue.pushed and engine.queue.subchunks_done >= 20
    ring = buffers.RING.copy_to_host()
    run = engine.last_launch[3][2]  # the launch's scalars
    seq0, n_iter = run[-2], run[-6]  # the last chunk's first tag, iterations
    subs = -(-int(n_iter) // 2)  # its sub-chunks: each search's 1, 2, ... went through the ring once
    last = ring[:5 * (subs - 1)]
    assert sorted(zip((last >> 32) - seq0, last & 0xFFFFFFFF)) == [(sub, q) for sub in range(1, subs) for q in range(5)]
    for seed, dev in zip(seeds, devs):
        _same_search(_cpu_rots(p, seed, stop), dev)
    assert [d.iterations for d in devs][2:] == [18, 40, 25]


def test_resident_rots_queue_ring_tags_start_afresh_and_each_search_still_follows_the_cpu(monkeypatch):
    """The ring's tags count the sub-chunks launched (31 bits); at the limit the host clears the ring
    and counts from 0 again between two chunks (here after every 7 sub-chunks): nothing else changes."""
    from lsbench import instances as registry
    from lsbench.gpu.engine.rots import host as rots_engine
    from lsbench.gpu.runtime import chunks
    from lsbench.interfaces import Stop
    from lsbench.search.tabu import RobustTabuSearch
    monkeypatch.setattr(chunks, "RING_TAG_LIMIT", 7)
    p = registry.load("tai12a")
    engine = rots_engine.ResidentRots(p, RobustTabuSearch().params(p), persistent=2, subchunk=2, chunk_cap=5)
    seeds = [2, 3, 4]
    devs = engine.run(seeds, Stop(iterations=30), chunk=5)
    assert 0 < engine.queue.subchunks_done < 7  # started afresh: six chunks of 5 iterations are 18 sub-chunks
    for seed, dev in zip(seeds, devs):
        _same_search(_cpu_rots(p, seed, Stop(iterations=30)), dev)


def test_resident_rots_queue_wait_is_bounded_and_ends_the_run_with_one_error(monkeypatch):
    """A queue item that never becomes ready (here: the host's count of the items taken set wrong,
    so that the first pop waits for an item no block hands on) stops waiting after WAIT_SPINS, and
    the run fails with one error instead of hanging."""
    from lsbench import instances as registry
    from lsbench.errors import LsbenchError
    from lsbench.gpu.engine.rots import kernel as rots_kernel
    from lsbench.gpu.runtime import chunks
    from lsbench.gpu.engine.rots.host import ResidentRots
    from lsbench.interfaces import Stop
    from lsbench.search.tabu import RobustTabuSearch
    monkeypatch.setattr(chunks, "WAIT_SPINS", 20)
    monkeypatch.setattr(rots_kernel, "_kernels", {})  # compiled afresh, with the short bound
    p = registry.load("tai12a")
    engine = ResidentRots(p, RobustTabuSearch().params(p), persistent=1, subchunk=2)
    engine.buffers(2)
    engine.queue.taken -= 2  # the first pop is the third: it waits for the ring's first item, which no item hands on
    with pytest.raises(LsbenchError, match="waited too long"):
        engine.run([1, 2], Stop(iterations=10), chunk=5)
    assert engine.buffers(2).QUEUE.copy_to_host()[1] == 1


@pytest.mark.long
def test_resident_rots_restarts_stagnant_searches_from_the_elite_reproducibly_and_ends_at_the_first_hit():
    """Iterated parallel tabu (restart=S): searches that stagnate restart from a perturbed elite
    solution (or a child of two) at a chunk boundary, the kernel rebuilds them (FRESH = 2) and keeps each search's best.
    The same seeds give the same run; every best is its solution's cost; trajectories only improve;
    with a target the run ends as soon as any search reaches it."""
    from lsbench.gpu.engine.rots.host import ResidentRots
    from lsbench.problems.qap import qap_costs
    from lsbench.interfaces import Stop
    from lsbench.search.tabu import RobustTabuSearch
    from lsbench.problems.qap import QAP
    g = np.random.default_rng(8)
    p = QAP(g.integers(0, 50, (14, 14)), g.integers(0, 50, (14, 14)))
    restart = {"stagnation": 8, "elite": 2, "strength": 0.3}
    runs = []
    for _ in range(2):
        engine = ResidentRots(p, RobustTabuSearch().params(p), restart=restart)
        runs.append(engine.run([1, 2, 3], Stop(iterations=64)))
        assert engine.restarts > 0
    first, second = runs
    def outcome(results):
        return [(r.best_objective, list(r.best_solution), [t[::2] for t in r.trajectory]) for r in results]
    assert outcome(first) == outcome(second)
    for r in first:
        assert qap_costs(p.a, p.b, np.array([r.best_solution]))[0] == r.best_objective
        values = [v for _i, _t, v in r.trajectory]
        assert values == sorted(values, reverse=True) and len(set(values)) == len(values)
        assert r.iterations == 64
    # without restarts the searches would not all be where they are: restarts changed the run
    plain = ResidentRots(p, RobustTabuSearch().params(p)).run([1, 2, 3], Stop(iterations=64))
    assert [r.final_objective for r in plain] != [r.final_objective for r in first]
    target = min(r.best_objective for r in first)
    # the same run with crossover restarts (children of two elite solutions) ends at the first hit
    engine = ResidentRots(p, RobustTabuSearch().params(p), restart={**restart, "crossover": True})
    hit = engine.run([1, 2, 3], Stop(iterations=64, target=target))
    ends = [r.iterations for r in hit]
    assert min(r.best_objective for r in hit) == target and max(ends) < 64 and engine.restarts > 0
    for r in hit:
        assert qap_costs(p.a, p.b, np.array([r.best_solution]))[0] == r.best_objective


@pytest.mark.long
@pytest.mark.parametrize("forget", ["renew", "walk"])
def test_resident_rots_restarts_that_forget_a_best_leave_the_run_each_searchs_record(forget):
    """renew: a stalled pool's searches start afresh; walk: a stagnant walker (searches 1 and 3)
    restarts from its own last optimum. Either way the kernel forgets the search's best (FRESH = 1);
    each result still reports the search's record, its solution at that cost, and a trajectory
    that only improves; a search that never forgets ends at the kernel's best; the same seeds give
    the same walks."""
    from lsbench.gpu.engine.rots.host import ResidentRots
    from lsbench.problems.qap import qap_costs
    from lsbench.interfaces import Stop
    from lsbench.search.tabu import RobustTabuSearch
    from lsbench.problems.qap import QAP
    g = np.random.default_rng(9)
    p = QAP(g.integers(0, 50, (14, 14)), g.integers(0, 50, (14, 14)))
    restart = {"stagnation": 8, "elite": 1, "pools": 2, **({"strength": 0.3, "renew": 8} if forget == "renew" else
                                                           {"strength": 1.0, "walk": 0.5})}
    forgetting = (0, 1, 2, 3) if forget == "renew" else (1, 3)
    runs = []
    for _ in range(1 if forget == "renew" else 2):  # (renewals draw from the walks' seeded generator)
        engine = ResidentRots(p, RobustTabuSearch().params(p), restart=restart)
        results = engine.run([1, 2, 3, 4], Stop(iterations=96))
        assert (engine.renewals if forget == "renew" else engine.restarts) > 0
        assert engine.describe()["renewals"] == engine.renewals
        kernel_bests = engine._buffers.host_download["BEST"]
        for q, r in enumerate(results):
            assert qap_costs(p.a, p.b, np.array([r.best_solution]))[0] == r.best_objective == r.trajectory[-1][2]
            values = [v for _i, _t, v in r.trajectory]
            assert values == sorted(values, reverse=True) and len(set(values)) == len(values)
            assert r.best_objective <= kernel_bests[q]
            if q not in forgetting:
                assert r.best_objective == kernel_bests[q]
        assert any(results[q].best_objective < kernel_bests[q] for q in forgetting)  # a record kept by the host
        runs.append([(r.best_objective, list(r.best_solution)) for r in results])
    assert runs == runs[:1] * len(runs)


class _Inject:
    """A migration that hands search 0 one solution at the boundary after iteration `at`."""

    def __init__(self, solution, at=0):
        self.solution, self.at, self.given, self.withdrawn = solution, at, False, []

    def at_chunk(self, iteration, bests, best_solutions, finished, target_reached):
        if self.given or iteration < self.at:
            return [], False
        self.given = True
        return [(0, self.solution)], False

    def withdraw(self, searches, iteration):
        self.withdrawn.append((searches, iteration))


@pytest.mark.long
def test_resident_rots_restart_from_a_solution_better_than_its_best_keeps_that_whole_solution():
    """A restart (FRESH = 2) from a start better than the search's best: every thread writes its
    part of the new best solution (a thread that read the best after thread 0 lowered it once
    skipped its part, leaving a mix of two permutations)."""
    from lsbench.gpu.engine.rots.host import ResidentRots
    from lsbench.problems.qap import qap_costs
    from lsbench.interfaces import Stop
    from lsbench.search.tabu import RobustTabuSearch
    from lsbench.problems.qap import QAP
    g = np.random.default_rng(3)
    p = QAP(g.integers(0, 50, (20, 20)), g.integers(0, 50, (20, 20)))
    good = ResidentRots(p, RobustTabuSearch().params(p)).run([7], Stop(iterations=150))[0]
    for _ in range(3):
        inject = _Inject(np.array(good.best_solution, dtype=np.int64))
        r = ResidentRots(p, RobustTabuSearch().params(p)).run([1, 2], Stop(iterations=12), chunk=4, migration=inject)[0]
        assert sorted(r.best_solution) == list(range(20))
        assert qap_costs(p.a, p.b, np.array([r.best_solution]))[0] == r.best_objective <= good.best_objective
    # handed over at the run's last boundary: no chunk runs it, the search's best stays its own
    late = _Inject(np.array(good.best_solution, dtype=np.int64), at=12)
    r = ResidentRots(p, RobustTabuSearch().params(p)).run([1, 2], Stop(iterations=12), chunk=4, migration=late)[0]
    assert late.withdrawn == [([0], 12)] and r.best_objective > good.best_objective
    assert qap_costs(p.a, p.b, np.array([r.best_solution]))[0] == r.best_objective
    assert r.trajectory[-1][2] == r.best_objective


def test_resident_rots_cli_stops_each_search_at_the_target_and_keeps_every_search(tmp_path):
    out = tmp_path / "res.json"
    # seeds 4 and 6 reach the optimum at iterations 18 and 25, seed 5 not within 40: the finished
    # searches sit out the later chunks, and their records stay exactly the CPU's
    rec = run_one("qap", "tai12a", algorithm="rots", backend="gpu-resident", seed=4, iterations=40,
                  target=224416, searches=3, out=str(out))
    from lsbench.interfaces import Stop
    from lsbench import instances as registry
    p = registry.load("tai12a")
    for entry in rec["searches"]:
        cpu = _cpu_rots(p, entry["seed"], Stop(iterations=40, target=224416))
        assert entry["iterations"] == cpu.iterations and entry["best_objective"] == cpu.best_objective
        assert [(i, o) for i, _t, o in entry["trajectory"]] == [(i, o) for i, _t, o in cpu.trajectory]
    assert [e["iterations"] for e in rec["searches"]] == [18, 40, 25]
    assert rec["best_objective"] == min(e["best_objective"] for e in rec["searches"])
    r = subprocess.run([sys.executable, "-m", "lsbench", "verify", str(out)], capture_output=True, text=True,
                       cwd=ROOT)
    assert r.returncode == 0, r.stderr


def _cpu_tabu(problem, seed, stop, **params):
    from lsbench.search.tabu import TabuSearch
    nb = problem.neighbourhood("insertion")
    return TabuSearch(**params).run(problem, nb, get_evaluator("cpu").bind(problem, nb), stop, seed)


@pytest.mark.long
@pytest.mark.parametrize("threads, searches, persistent", [(64, 1, None), (128, 1, None), (64, 3, 2), (64, 3, None)])
def test_resident_pfsp_tabu_follows_the_cpu_trajectory(threads, searches, persistent):
    """The whole-GPU PFSP insertion tabu search: one pair of warps per block (they also find the
    tabu bounds), or two pairs and two scout warps; random tenures (stream draws), chunks of three
    iterations (state carried between launches); K = 3 searches on a queue of two blocks (each
    item reloads its search's sequence), or in lockstep (several blocks each on a device, one
    block each under the simulator, whose blocks run one after another), the searches reaching a
    target at different iterations (a finished search's blocks keep meeting the grid barrier):
    each exactly the CPU search with its seed."""
    from lsbench.gpu.engine.resident_pfsp import ResidentPfspTabu
    from lsbench.problems.pfsp import PFSP
    from lsbench.interfaces import Stop
    from lsbench.search.tabu import TabuSearch
    lockstep = persistent is None
    sim = os.environ.get("LSBENCH_TEST_REAL_GPU") != "1"
    p = PFSP.taillard("t7x3", 7, 3, 873654221)
    params = {"tenure_min": 2, "tenure_max": 5}
    prm = TabuSearch(**params).params(p.neighbourhood("insertion"))
    engine = ResidentPfspTabu(p, prm, threads=threads, persistent=persistent,
                              blocks=1 if sim and lockstep and searches > 1 else None)
    seeds = list(range(4, 4 + searches))
    stop = Stop(iterations=14)
    if searches > 1:  # the first search stops early at a target; the others stop at other iterations
        stop = Stop(iterations=14, target=_cpu_tabu(p, 4, stop, **params).trajectory[-2][2])
    devs = engine.run(seeds, stop, chunk=3)
    assert engine.shape["mode"] == ("lockstep" if lockstep else "queue")
    if lockstep and searches > 1:
        assert engine.shape["blocks_per_search"] == 1 if sim else engine.shape["blocks_per_search"] >= 2
    for seed, dev in zip(seeds, devs):
        cpu = _cpu_tabu(p, seed, stop, **params)
        assert [(i, o) for i, _t, o in cpu.trajectory] == [(i, o) for i, _t, o in dev.trajectory]
        assert (list(cpu.best_solution), cpu.iterations) == (list(dev.best_solution), dev.iterations)
    if searches > 1:
        assert devs[0].iterations < 14 and len({d.iterations for d in devs}) > 1  # some ran on after another ended


@pytest.mark.long
def test_resident_pfsp_tabu_cli_on_ta001_stops_at_the_target_and_verifies(tmp_path):
    out = tmp_path / "pfsp.json"
    from lsbench import instances as registry
    from lsbench.interfaces import Stop
    p = registry.load("ta001")
    cpu = _cpu_tabu(p, 2, Stop(iterations=4))
    target = cpu.trajectory[-2][2]  # reached before the end: the device must stop there too
    rec = run_one("pfsp", "ta001", algorithm="tabu", backend="gpu-resident", seed=2, iterations=4, target=target,
                  out=str(out))
    want = _cpu_tabu(p, 2, Stop(iterations=4, target=target))
    assert rec["iterations"] == want.iterations < 4
    assert rec["best_objective"] == want.best_objective == target
    assert rec["best_solution"] == list(want.best_solution)
    r = subprocess.run([sys.executable, "-m", "lsbench", "verify", str(out)], capture_output=True, text=True,
                       cwd=ROOT)
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("instance, params", [("ta001", {"objective": "flowtime"}), ("rnd-pfsp-7x40-1", {})])
def test_pfsp_tabu_beyond_the_fast_path_runs_on_the_flow_shop_adapter_as_the_cpu(instance, params):
    """`--algorithm tabu --backend gpu-resident` refused a flow shop off the makespan or beyond 32
    machines (the fast path's warp lane a machine): the resident local search engine runs it over
    the flow-shop adapter, each search the CPU's."""
    cpu = run_one("pfsp", instance, algorithm="tabu", backend="cpu", seed=2, iterations=6, problem_params=params)
    gpu = run_one("pfsp", instance, algorithm="tabu", backend="gpu-resident", seed=2, iterations=6,
                  problem_params=params)
    assert trajectory(gpu) == trajectory(cpu) and "PfspInsertionAdapter" in gpu["backend_info"]["model"]


@pytest.mark.parametrize("args, message", [
    (dict(neighbourhood="swap"), "no device adapter for swap on pfsp"),
    (dict(backend_params={"block": 96}), "power of two"),
    (dict(backend_params={"persistent": 0}), "--param persistent=0: must be >= 1"),
    (dict(backend_params={"blocks": 0}), "--param blocks=0: must be >= 1"),
])
def test_resident_pfsp_tabu_refuses_what_it_cannot_run(args, message):
    from lsbench.errors import LsbenchError
    with pytest.raises(LsbenchError, match=message):
        run_one("pfsp", "ta001", algorithm="tabu", backend="gpu-resident", seed=1, iterations=2, **args)


GRID_CASES = [  # instance, neighbourhood, tabu parameters, reduction blocks, iterations, searches, queue blocks
    ("rnd-atsp-9-4", "2opt", {"tenure_min": 2, "tenure_max": 6}, 3, 40, 1, None),
    ("burma14", "swap", {"tenure_min": 1, "tenure_max": 5}, 2, 20, 2, None),
    ("rnd-atsp-9-1", "2opt", {"aspiration": False}, 1, 30, 3, None),
    ("bays29", "2opt", {}, 1, 16, 3, 2),
    ("19-17", "hamming2", {"tenure_min": 1, "tenure_max": 3}, 4, 15, 1, None),
    ("9-8", "hamming3", {}, 2, 10, 3, 2),
]


@pytest.mark.parametrize("instance,nb,params,blocks,iterations,searches,queue", GRID_CASES)
def test_resident_grid_tabu_follows_the_cpu_trajectory(instance, nb, params, blocks, iterations, searches, queue):
    """The whole-GPU tabu search over a large neighbourhood: the two-stage reduction over several
    blocks' winners (played in turn by the simulator's one block), double-buffered tours with their
    path prefixes rebuilt O(1) per position (asymmetric 2-opt), Y and its histogram updated in place
    (PPP), random tenures from the stream, chunks of three launches; K searches in lockstep (each
    with its own state double-buffered in WORK) or taking sub-chunks from a queue (state carried
    between items and launches): each search is exactly the CPU search with its seed."""
    from lsbench.gpu.engine.whole_gpu_tabu import WholeGpuTabu
    from lsbench import instances as registry
    from lsbench.interfaces import Stop
    from lsbench.search.tabu import TabuSearch
    p = registry.load(instance)
    neighbourhood = p.neighbourhood(nb)
    prm = TabuSearch(**params).params(neighbourhood)
    engine = WholeGpuTabu(p, neighbourhood, prm, blocks=blocks, persistent=queue)
    seeds = list(range(6, 6 + searches))
    devs = engine.run(seeds, Stop(iterations=iterations), chunk=3)
    assert engine.shape["mode"] == ("queue" if queue else "lockstep") and engine.shape["searches"] == searches
    for seed, dev in zip(seeds, devs):
        cpu = TabuSearch(**params).run(p, neighbourhood, get_evaluator("cpu").bind(p, neighbourhood),
                                       Stop(iterations=iterations), seed)
        _same_search(cpu, dev)


def test_resident_grid_tabu_cli_stops_each_search_at_the_target_and_verifies(tmp_path):
    """`--searches 3` on gpu-resident TSP (asymmetric 2-opt: the matrix kernel): one record holding the three searches, each stopped at
    the target where its CPU search stops (the others run on), the shape in backend_info, and
    `lsbench verify` re-checks every best solution."""
    from lsbench import instances as registry
    from lsbench.interfaces import Stop
    from lsbench.search.tabu import TabuSearch
    out = tmp_path / "tsp.json"
    ref = run_one("tsp", "rnd-atsp-20-1", algorithm="tabu", backend="cpu", neighbourhood="2opt", seed=2, iterations=12)
    target = ref["trajectory"][-2][2]  # reached before the end: the device must stop there too
    rec = run_one("tsp", "rnd-atsp-20-1", algorithm="tabu", backend="gpu-resident", neighbourhood="2opt", seed=2,
                  iterations=12, target=target, searches=3, out=str(out))
    p = registry.load("rnd-atsp-20-1")
    nb = p.neighbourhood("2opt")
    stops = []
    for entry in rec["searches"]:
        cpu = TabuSearch().run(p, nb, get_evaluator("cpu").bind(p, nb), Stop(iterations=12, target=target),
                               entry["seed"])
        assert (entry["iterations"], entry["best_objective"]) == (cpu.iterations, cpu.best_objective)
        assert [(i, o) for i, _t, o in entry["trajectory"]] == [(i, o) for i, _t, o in cpu.trajectory]
        stops.append(cpu.iterations)
    assert [e["seed"] for e in rec["searches"]] == [2, 3, 4] and stops[0] == ref["trajectory"][-2][0] < 12
    info = rec["backend_info"]
    # (on a device a 190-move neighbourhood needs one block a search: a queue, not a lockstep)
    real_gpu = os.environ.get("LSBENCH_TEST_REAL_GPU") == "1"
    assert info["model"].startswith("3 2opt tabu searches on a persistent grid" if real_gpu else
                                    "3 2opt tabu searches in lockstep") and info["searches"] == 3
    assert info["mode"] == ("queue" if real_gpu else "lockstep") and info["reduction_blocks"] >= 1
    r = subprocess.run([sys.executable, "-m", "lsbench", "verify", str(out)], capture_output=True, text=True,
                       cwd=ROOT)
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("instance, args, message", [
    ("burma14", dict(backend_params={"block": 48}), "power of two"),
    ("burma14", dict(backend_params={"blocks": 0}), "--param blocks=0: must be >= 1"),
    ("burma14", dict(backend_params={"chunk": 4}), "--param chunk: not a parameter of .* gpu-resident"),
    ("weierstrass-4", dict(algorithm="hc"), "hc on weierstrass does not run on --backend gpu-resident"),  # no adapter
])
def test_resident_grid_tabu_refuses_what_it_cannot_run(instance, args, message):
    from lsbench.errors import LsbenchError
    with pytest.raises(LsbenchError, match=message):
        run_one(None, instance, **{"algorithm": "tabu", **args}, backend="gpu-resident", seed=1, iterations=2)


@pytest.mark.parametrize("problem, instance, neighbourhood", [("tsp", "rnd-atsp-14-1", "2opt"),
                                                         ("pfsp", "rnd-pfsp-7x3-1", "insertion")])
def test_resident_tabu_refuses_searches_whose_tabu_memories_do_not_fit(tmp_path, monkeypatch, problem, instance,
                                                                       neighbourhood):
    """K n x n tabu memories beyond the GPU's free memory: one line naming --searches and the
    sizes, and no record (the simulator has no memory limit, so the free figure is set low)."""
    from lsbench.gpu.runtime import chunks
    from lsbench.errors import LsbenchError
    n = 14 if problem == "tsp" else 7
    free = 8 * n * n * 3  # room for 3 memories, less the 10 % kept spare: 2 fit, 3 do not
    monkeypatch.setattr(chunks, "free_device_bytes", lambda: free)
    out = tmp_path / "never.json"
    with pytest.raises(LsbenchError, match=r"^--searches 3: the searches' tabu memories need 0\.0 GiB of GPU memory"):
        run_one(problem, instance, algorithm="tabu", backend="gpu-resident", neighbourhood=neighbourhood, seed=1,
                iterations=2, searches=3, out=str(out))
    assert not out.exists() and not list(tmp_path.iterdir())
    rec = run_one(problem, instance, algorithm="tabu", backend="gpu-resident", neighbourhood=neighbourhood, seed=1,
                  iterations=2, searches=2, out=str(out))
    assert len(rec["searches"]) == 2 and out.exists()


def test_resident_grid_tabu_reduction_blocks_from_the_command_line(tmp_path):
    """`--param blocks=N` reaches the engine from the CLI; a bad value is one error line, exit 2, no record."""
    out = tmp_path / "tsp.json"
    cmd = [sys.executable, "-m", "lsbench", "run", "--instance", "burma14", "--algorithm", "tabu", "--neighbourhood",
           "2opt", "--backend", "gpu-resident", "--iterations", "3", "--out", str(out)]
    r = subprocess.run(cmd + ["--param", "blocks=3"], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert json.loads(out.read_text())["backend_info"]["reduction_blocks"] == 3
    out.unlink()
    r = subprocess.run(cmd + ["--param", "blocks=0"], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 2 and not out.exists()
    assert r.stderr.strip().splitlines()[-1].startswith("lsbench: error: --param blocks=0: must be >= 1")


@pytest.mark.long
def test_cas_with_its_tabu_local_searches_on_the_gpu_equals_cas_on_the_cpu(tmp_path):
    """One thread block per ant: same ants, same pheromone, same best as the CPU colony."""
    params = {"ants": 3, "ls_iterations": 8}
    cpu = run_one("qap", "tai12a", algorithm="cas", backend="cpu", seed=2, iterations=3 * 8 * 4,
                  algorithm_params=params, warmup=0)
    out = tmp_path / "cas.json"
    gpu = run_one("qap", "tai12a", algorithm="cas", backend="gpu-resident", seed=2, iterations=3 * 8 * 4,
                  algorithm_params=params, warmup=0, out=str(out))
    assert gpu["params"]["generations"] == cpu["params"]["generations"] == 3
    assert [(i, o) for i, _t, o in gpu["trajectory"]] == [(i, o) for i, _t, o in cpu["trajectory"]]
    assert gpu["best_solution"] == cpu["best_solution"] and gpu["final_objective"] == cpu["final_objective"]
    r = subprocess.run([sys.executable, "-m", "lsbench", "verify", str(out)], capture_output=True, text=True,
                       cwd=ROOT)
    assert r.returncode == 0, r.stderr
    with pytest.raises(Exception, match="ls=tabu"):
        run_one("qap", "tai12a", algorithm="cas", backend="gpu-resident", seed=2, iterations=8,
                algorithm_params={**params, "ls": "2opt"}, warmup=0)


@pytest.mark.long
def test_cas_colony_on_a_queue_of_fewer_blocks_than_ants_equals_cas_on_the_cpu():
    """Where the ants do not fill the SMs evenly the colony's searches queue for a persistent grid
    (gpu/engine/rots/shape.uneven_grid): 5 ants on 2 blocks, sub-chunks of 2 iterations -- every generation's
    ants built and searched as on the CPU, the same best; the rule queues only uneven colonies."""
    from lsbench import instances as registry
    from lsbench.gpu.engine.colony import DeviceColony
    from lsbench.gpu.engine.rots.host import ResidentRots
    from lsbench.gpu.engine.rots.shape import uneven_grid
    from lsbench.engines.cas import CunningAntSystem, HostColony
    from lsbench.interfaces import Stop
    assert [uneven_grid(k, 132) for k in (100, 132, 200, 264, 270, 1000, 1056)] == [0, 0, 132, 0, 132, 132, 0]
    p = registry.load("tai12a")
    nb = p.neighbourhood("swap")
    search = CunningAntSystem(ants=5, ls_iterations=5)
    stop = Stop(iterations=5 * 5 * 4)
    cpu = search.run(p, HostColony(p, nb, search, {}), stop, 3)
    colony = DeviceColony(p, nb, search, {})
    colony.rots = ResidentRots(p, {}, persistent=2, subchunk=2)
    gpu = search.run(p, colony, stop, 3)
    assert colony.rots.shape["queued"] and colony.rots.describe()["persistent_blocks"] == 2
    assert gpu.params["generations"] == cpu.params["generations"] == 3
    assert [(i, o) for i, _t, o in gpu.trajectory] == [(i, o) for i, _t, o in cpu.trajectory]
    assert list(gpu.best_solution) == list(cpu.best_solution) and gpu.final_objective == cpu.final_objective


def test_cas_colony_takes_512_thread_ant_blocks_only_where_each_ant_of_a_small_instance_has_an_sm():
    """ant_block: 512 threads where the pair costs stay on chip and the ants do not outnumber the
    SMs (tai40a-tai60a on an H200); the engine's own choice with more ants than SMs (tai50b's 200)
    or on a larger instance; on a GPU the colony's engine takes it unless --param block says."""
    from numba import config
    from lsbench import instances as registry
    from lsbench.gpu.engine.colony import LONE_ANT_THREADS, DeviceColony, ant_block
    from lsbench.engines.cas import CunningAntSystem
    assert [ant_block(n, ants, 132) for n, ants in ((40, 40), (60, 60), (64, 132), (50, 200), (60, 133), (65, 65))] \
        == [LONE_ANT_THREADS] * 3 + [None] * 3
    assert ant_block(40, 40, 16) is None
    if not config.ENABLE_CUDASIM:
        p = registry.load("tai12a")
        search = CunningAntSystem(ants=3)
        assert DeviceColony(p, p.neighbourhood("swap"), search, {}).rots.shape["threads"] == LONE_ANT_THREADS
        assert DeviceColony(p, p.neighbourhood("swap"), search, {"block": 64}).rots.shape["threads"] == 64


def test_cas_colony_on_the_gpu_stops_at_its_target_in_the_same_generation_as_the_cpu():
    """The device colony checks the target itself and switches the generations already queued
    off: same generations, same best and trajectory as the CPU colony stopping at that target."""
    params = {"ants": 3, "ls_iterations": 4}
    free = run_one("qap", "tai12a", algorithm="cas", backend="cpu", seed=5, iterations=3 * 4 * 12,
                   algorithm_params=params, warmup=0)
    points = [(i, o) for i, _t, o in free["trajectory"]]
    assert len(points) >= 3, points  # a target met after a few generations, not at the start
    target = points[2][1]
    cpu = run_one("qap", "tai12a", algorithm="cas", backend="cpu", seed=5, iterations=3 * 4 * 12, target=target,
                  algorithm_params=params, warmup=0)
    gpu = run_one("qap", "tai12a", algorithm="cas", backend="gpu-resident", seed=5, iterations=3 * 4 * 12,
                  target=target, algorithm_params=params, warmup=0)
    assert cpu["params"]["generations"] < free["params"]["generations"]
    assert gpu["params"]["generations"] == cpu["params"]["generations"]
    assert gpu["iterations"] == cpu["iterations"] and gpu["best_objective"] == cpu["best_objective"] == target
    assert [(i, o) for i, _t, o in gpu["trajectory"]] == points[:3]
    assert gpu["best_solution"] == cpu["best_solution"] and gpu["final_objective"] == cpu["final_objective"]


def test_cas_colony_kernels_update_tau_and_select_ants_as_the_host():
    """gpu/engine/colony.py's kernels against lsbench.engines.cas: tau bit for bit (deposits in ant order,
    each float64 operation rounded on its own), the donors and both stream states of the next
    generation, children replacing ants where not worse, the first lowest ant as the new best, and
    the stop at the target."""
    from numba import cuda
    from lsbench.gpu.engine.colony import BEST, DONE, GENS, RING, pheromone_kernel, select_kernel
    from lsbench import rng
    from lsbench.engines.cas import draw_seeds, pheromone_constants, update_pheromone
    gen = np.random.default_rng(4)
    n, m, rho, p_best = 9, 21, 0.5, 0.005
    ants = np.array([gen.permutation(n) for _ in range(m)])
    costs = gen.integers(1000, 1010, m)  # many ties
    best = int(costs.min()) + 1
    tau = gen.random((n, n)) * 1e-3
    want = tau.copy()
    update_pheromone(want, ants, costs, best, rho, p_best)
    ANTS, COSTS = cuda.to_device(ants.astype(np.int32)), cuda.to_device(costs)
    TAU, P = cuda.to_device(tau.ravel()), cuda.to_device(np.zeros((m, n), dtype=np.int32))
    STATE, COLONY = cuda.to_device(np.zeros((m, 2), dtype=np.uint64)), cuda.to_device(np.array([0, best]))
    state = rng.new_state(8)
    pheromone_kernel[n, 32](ANTS, COSTS, TAU, P, STATE, COLONY, rho, *pheromone_constants(rho, p_best, n),
                            np.uint64(state[0]))
    assert np.array_equal(TAU.copy_to_host(), want.ravel()) and np.array_equal(P.copy_to_host(), ants)
    states = STATE.copy_to_host()
    assert np.array_equal(states[:, 1], draw_seeds(state, m)) and np.array_equal(states[:, 0], draw_seeds(state, m))
    children = np.array([gen.permutation(n) for _ in range(m)])
    child_costs = costs + gen.integers(-1, 2, m)  # worse, as good (replaced too) or better
    child_costs[[5, 11]] = costs.min() - 2  # two new lowest: the first wins
    better = child_costs <= costs
    want_ants = np.where(better[:, None], children, ants)
    ACTIVE, MAP = cuda.to_device(np.ones(m, dtype=np.int32)), cuda.mapped_array(3 + RING, dtype=np.int64)
    BEST_SOL = cuda.to_device(np.zeros(n, dtype=np.int32))
    for target, reached in ((0, 0), (costs.min() - 2, 1)):
        ANTS, COSTS, COLONY = cuda.to_device(ants.astype(np.int32)), cuda.to_device(costs), cuda.to_device(np.array([0, best]))
        select_kernel[1, 64](ANTS, COSTS, cuda.to_device(child_costs), cuda.to_device(children.astype(np.int32)),
                             BEST_SOL, ACTIVE, COLONY, MAP, np.int64(target), 7)
        assert np.array_equal(ANTS.copy_to_host(), want_ants)
        assert np.array_equal(COSTS.copy_to_host(), np.minimum(costs, child_costs))
        assert np.array_equal(BEST_SOL.copy_to_host(), children[5])
        colony = COLONY.copy_to_host()
        assert colony[BEST] == MAP[3 + 7 % RING] == costs.min() - 2 and MAP[GENS] == 7
        assert colony[DONE] == MAP[DONE] == reached and (ACTIVE.copy_to_host() == 1 - reached).all()


def test_resident_rots_uses_32_bit_move_costs_where_the_tight_bound_allows_and_follows_the_cpu():
    """A tai*b-like instance (flows to 4,000, distances to 18,000): the old bound 8(n+2) max|a| max|b|
    exceeds 2^31, the real swap costs do not; the kernel keeps 32-bit deltas (intermediate sums wrap,
    final costs exact), though not the one-word class and delta (bound over 2^29), and is still
    exactly the CPU search."""
    import lsbench.gpu.engine.rots.host as resident
    from lsbench.problems.qap import QAP
    from lsbench.interfaces import Stop
    from lsbench.search.tabu import RobustTabuSearch
    g = np.random.default_rng(8)
    n = 16
    flows = np.where(g.random((n, n)) < 0.3, g.integers(0, 4000, (n, n)), 0)
    dist = g.integers(0, 9000, (n, n))
    p = QAP(flows, dist + dist.T)
    assert 8 * (n + 2) * (int(np.abs(p.a).max()) + 1) * (int(np.abs(p.b).max()) + 1) >= 1 << 31
    engine = resident.ResidentRots(p, RobustTabuSearch().params(p))
    assert not engine.shape["wide"] and not engine.shape["narrow"]
    dev = engine.run([3], Stop(iterations=30))[0]
    _same_search(_cpu_rots(p, 3, Stop(iterations=30)), dev)


def _clusters():
    from lsbench.gpu.runtime.cluster import supported
    return supported()


@pytest.mark.device  # thread block clusters need a GPU of compute capability 9.0+ (not the simulator)
@pytest.mark.skipif(not _clusters(), reason="thread block clusters need a GPU of compute capability 9.0+")
@pytest.mark.parametrize("cluster,threads", [(2, 64), (4, 32), (8, 128)])
def test_resident_rots_on_a_cluster_of_blocks_follows_the_cpu_trajectory(cluster, threads):
    """One search spread over a cluster of blocks (each owns a share of the moves, the keys meet in
    distributed shared memory): two searches, several chunks, each exactly its CPU trajectory, on a
    symmetric instance, a general one and a byte one (dp4a sums)."""
    from lsbench.gpu.engine.rots.host import ResidentRots
    from lsbench import instances as registry
    from lsbench.problems.qap import QAP
    from lsbench.interfaces import Stop
    from lsbench.search.tabu import RobustTabuSearch
    g = np.random.default_rng(cluster)
    for p in (registry.load("tai12a"), QAP(g.integers(0, 50, (31, 31)), g.integers(0, 90, (31, 31))),
              _byte_instance()):
        engine = ResidentRots(p, RobustTabuSearch().params(p), threads=threads, cluster=cluster)
        assert engine.shape["cluster"] == cluster
        for seed, dev in zip([4, 5], engine.run([4, 5], Stop(iterations=60), chunk=7)):
            _same_search(_cpu_rots(p, seed, Stop(iterations=60)), dev)


def test_register_cap_fits_a_block_of_any_warp_count_on_one_sm():
    """A block's warps go round an SM's four schedulers of 16,384 registers each, so the cap
    counts ceil(warps / 4) warps a scheduler, not threads / 4: on an H200, 320 threads at 192
    registers could not launch (the cap 65,536 / 320 allowed 200), nor 448 at 144."""
    from lsbench.gpu.runtime.launch import register_cap
    for per_sm in (1, 2, 4):
        for threads in range(32, 1024 // per_sm + 1, 32):
            cap = register_cap(threads, per_sm)
            busiest = per_sm * -(-(threads // 32) // 4)  # warps on the busiest scheduler
            assert cap % 8 == 0 or cap == 255
            assert busiest * 32 * cap <= 16384
            assert cap == 255 or busiest * 32 * (cap + 8) > 16384  # the most that fits
    assert register_cap(320) == 168 and register_cap(448) == 128
    assert register_cap(192) == 255 and register_cap(1024) == 64 and register_cap(512, 2) == 64


@pytest.mark.device  # thread block clusters need a GPU of compute capability 9.0+ (not the simulator)
@pytest.mark.skipif(not _clusters(), reason="thread block clusters need a GPU of compute capability 9.0+")
@pytest.mark.parametrize("threads", [320, 448])
def test_resident_rots_on_tai100a_in_blocks_of_no_multiple_of_four_warps_launches_and_follows_the_cpu(threads):
    """`--param block=320 --param cluster=8` on tai100a: its kernel needs more registers than the
    block fits at 65,536 / threads; with the scheduler-wise cap it launches and is the CPU's search."""
    from lsbench.gpu.engine.rots.host import ResidentRots
    from lsbench import instances as registry
    from lsbench.interfaces import Stop
    from lsbench.search.tabu import RobustTabuSearch
    p = registry.load("tai100a")
    engine = ResidentRots(p, RobustTabuSearch().params(p), threads=threads, cluster=8)
    (dev,) = engine.run([3], Stop(iterations=300))
    _same_search(_cpu_rots(p, 3, Stop(iterations=300)), dev)


def test_resident_rots_takes_a_cluster_shape_only_while_every_search_runs_at_once():
    """The fastest cluster shape whose K clusters the GPU runs together: on an H200 (7 clusters
    of 16, 15 of 8, 30 of 4, 66 of 2 at once) 8 searches on clusters of 16 would wait for a second
    wave (0.59x the it/s of 7), so they take clusters of 4 on byte matrices, of 8 on wider ones;
    past 66 searches, one block a search."""
    from lsbench.gpu.engine.rots.shape import CLUSTER_SHAPES, cluster_shape
    h200 = {16: 7, 8: 15, 4: 30, 2: 66}.get
    searches = (1, 7, 8, 15, 16, 30, 31, 66, 67)
    assert [cluster_shape(k, h200) for k in searches] == [
        (192, 16), (192, 16), (384, 4), (384, 4), (384, 4), (384, 4), (512, 2), (512, 2), None]
    assert [cluster_shape(k, h200, byte_data=False) for k in searches] == [
        (192, 16), (192, 16), (256, 8), (256, 8), (384, 4), (384, 4), (512, 2), (512, 2), None]
    for byte_data in (True, False):
        assert cluster_shape(1, lambda blocks: 0, byte_data) is None  # no cluster runs (a GPU without them)
        for k in range(1, 200):  # whatever the GPU runs at once, K clusters of the chosen shape all fit
            for fits in (h200, lambda blocks: 132 // blocks, lambda blocks: 5 if blocks == 16 else 0):
                shape = cluster_shape(k, fits, byte_data)
                assert shape is None or (shape in CLUSTER_SHAPES[byte_data] and k <= fits(shape[1]))


def test_auto_cluster_shape_takes_up_to_four_waves_of_8_blocks_only_where_the_matrices_stay_off_chip(monkeypatch):
    """With an H200's numbers (227 KB of shared memory a block; 7, 15, 30 and 66 clusters of 16, 8,
    4 and 2 blocks at once) and the device's integer widths: tai256c's 32-bit matrices stay in
    global memory on 8 blocks, so up to 60 searches take 8 x 256 in four waves; tai150b's fit on
    chip (one wave of each shape); where no cluster holds the move tables, one block a search
    (n = 950: a cluster's move tables do not fit in 227 KB a block)."""
    from lsbench import instances as registry
    from lsbench.gpu.engine.rots import plan as rots_plan
    from lsbench.gpu.engine.rots.shape import auto_cluster_shape
    from lsbench.problems.qap import QAP
    monkeypatch.setattr(rots_plan, "SHUFFLE", True)
    monkeypatch.setattr(rots_plan.config, "ENABLE_CUDASIM", False)  # the device's widths (the simulator: 64 bits)
    monkeypatch.setattr(rots_plan, "shared_bytes_per_block", lambda: 232448)
    h200 = {16: 7, 8: 15, 4: 30, 2: 66}.get
    searches = (1, 8, 15, 16, 30, 31, 60, 61, 66, 67)
    assert [auto_cluster_shape(registry.load("tai256c"), k, h200) for k in searches] == [
        (192, 16), (256, 8), (256, 8), (256, 8), (256, 8), (256, 8), (256, 8), (512, 2), (512, 2), None]
    assert [auto_cluster_shape(registry.load("tai150b"), k, h200) for k in searches] == [
        (192, 16), (256, 8), (256, 8), (384, 4), (384, 4), (512, 2), (512, 2), (512, 2), (512, 2), None]
    assert auto_cluster_shape(registry.load("tai100a"), 8, h200) == (384, 4)
    g = np.random.default_rng(3)
    huge = QAP(g.integers(0, 9, (950, 950)), g.integers(0, 9, (950, 950)))  # 450,775 moves
    assert auto_cluster_shape(huge, 1, h200) is None  # (before: 16 x 192, which refused to run)
    assert not any(rots_plan.plan(huge, 1024)["shared"].values())  # one block a search, its tables off chip


def test_byte_matrices_are_the_symmetric_forms_bytes():
    """Cluster shapes depend on it: tai100a's matrices are bytes (dp4a sums), tai100b's are not,
    nor an asymmetric pair (its symmetric form is general) or a negative entry."""
    from lsbench import instances as registry
    from lsbench.gpu.engine.rots.plan import byte_matrices
    from lsbench.problems.qap import QAP
    assert byte_matrices(registry.load("tai100a")) and not byte_matrices(registry.load("tai100b"))
    g = np.random.default_rng(5)
    sym = g.integers(0, 100, (9, 9))
    assert byte_matrices(QAP(sym + sym.T, g.integers(0, 128, (9, 9))))  # B = b + b^T stays below 256
    assert not byte_matrices(QAP(g.integers(0, 9, (9, 9)), g.integers(0, 9, (9, 9))))  # neither symmetric
    assert not byte_matrices(QAP(sym + sym.T, g.integers(0, 300, (9, 9))))  # b + b^T reaches 256 and more
    negative = sym + sym.T
    negative[0, 1] = negative[1, 0] = -1
    assert not byte_matrices(QAP(negative, g.integers(0, 9, (9, 9))))


@pytest.mark.device  # thread block clusters need a GPU of compute capability 9.0+ (not the simulator)
@pytest.mark.skipif(not _clusters(), reason="thread block clusters need a GPU of compute capability 9.0+")
@pytest.mark.parametrize("instance, searches", [("tai100a", 8), ("tai100a", 40), ("tai100b", 12), ("tai256c", 31)])
def test_resident_rots_default_shape_for_a_few_searches_runs_them_at_once_and_follows_the_cpu(instance, searches):
    """K searches with no shape given: K clusters that the device runs together (the driver's
    count; tai100b's wider matrices take 8 blocks a search for 12), or, where the matrices stay off
    chip (tai256c), 8-block clusters in waves; each search exactly its CPU trajectory."""
    from lsbench.gpu.runtime.launch import clusters_at_once
    from lsbench.gpu.engine.rots.host import ResidentRots
    from lsbench.gpu.engine.rots.shape import auto_cluster_shape
    from lsbench import instances as registry
    from lsbench.interfaces import Stop
    from lsbench.search.tabu import RobustTabuSearch
    p = registry.load(instance)
    engine = ResidentRots(p, RobustTabuSearch().params(p))
    seeds = list(range(11, 11 + searches))
    results = engine.run(seeds, Stop(iterations=200), chunk=70)
    cluster = engine.shape["cluster"]
    assert cluster > 1 and (engine.shape["threads"], cluster) == auto_cluster_shape(p, searches, clusters_at_once)
    assert engine.waves == (instance == "tai256c") == (searches > clusters_at_once(cluster))
    assert engine.describe()["blocks_per_search"] == cluster
    for seed, dev in zip(seeds, results):
        _same_search(_cpu_rots(p, seed, Stop(iterations=200)), dev)


def _byte_instance():
    """Flows and distances within 0..255 in the symmetric form (as tai*a), with diagonals, n = 23:
    rows padded to whole 32-bit words."""
    from lsbench.problems.qap import QAP
    g = np.random.default_rng(23)
    s = g.integers(0, 128, (23, 23))
    return QAP(s + s.T, g.integers(0, 128, (23, 23)))


@pytest.mark.parametrize("threads", [None, 64])
def test_resident_rots_on_byte_matrices_follows_the_cpu_trajectory(threads):
    """On a device the O(n) sums of a byte instance take four terms per dp4a; each search is still
    exactly its CPU trajectory (the cluster test runs it on a cluster too)."""
    from lsbench.gpu.engine.rots.host import ResidentRots
    from lsbench.interfaces import Stop
    from lsbench.search.tabu import RobustTabuSearch
    p = _byte_instance()
    engine = ResidentRots(p, RobustTabuSearch().params(p), threads=threads)
    assert engine.shape["stride"] == (32 if engine.shape["data_bits"] == 8 else 24)  # byte rows: 16-byte quads
    assert engine.shape["diagonal"] and engine.shape["narrow"]
    assert engine.shape["dp4a"] == (engine.shape["data_bits"] == 8) and engine.shape["data_bits"] in (8, 64)
    for seed, dev in zip([7, 8], engine.run([7, 8], Stop(iterations=50), chunk=11)):
        _same_search(_cpu_rots(p, seed, Stop(iterations=50)), dev)


@pytest.mark.parametrize("n, owners, cluster", [(12, 32, 1), (12, 64, 1), (40, 96, 1), (100, 1024, 1), (100, 800, 1),
                                                (100, 512, 1), (100, 256, 16), (151, 1024, 1)])
def test_resident_rots_row_chunks_hold_every_move_once_within_its_row_and_fit_the_owners(n, owners, cluster):
    """An owner's moves are one run along a row (no row wrap in the O(1) pass): the chunks hold
    every move once, fit the owners with the fewest (odd) moves each, and the kernel's closed form
    finds each row's first chunk."""
    from lsbench.gpu.engine.rots.plan import chunk_length, chunks_before, row_chunk_table, row_chunks
    q = chunk_length(n, owners, cluster)
    table = row_chunk_table(n, q)
    assert len(table) == row_chunks(n, q) and -(-len(table) // cluster) <= owners
    shorter = q - 2 if q > 2 else q - 1
    assert shorter == 0 or -(-row_chunks(n, shorter) // cluster) > owners
    assert q <= 2 or q % 2 == 1
    moves = [(int(c) >> 16, j) for c in table for j in range(int(c) & 0xFFFF, min(n, (int(c) & 0xFFFF) + q))]
    assert moves == [(i, j) for i in range(n) for j in range(i + 1, n)]
    first = {}
    for k, c in enumerate(table):
        first.setdefault(int(c) >> 16, k)
    assert all(first[i] == len(table) - int(chunks_before(n - 1 - i, q)) for i in range(n - 1))


def test_resident_rots_default_split_gives_the_recomputing_warps_no_moves_only_where_the_chunks_still_fit():
    from lsbench.gpu.engine.rots.plan import recomputing_warps
    assert recomputing_warps(100, 1024, 197, 1) == 224  # tai100a: 750 chunks of 7 on the other 800 threads
    assert recomputing_warps(80, 1024, 157, 1) == 160
    assert recomputing_warps(100, 512, 197, 1) == 0  # 495 chunks of 11 need more than 288 threads
    assert recomputing_warps(150, 1024, 297, 4) == 0  # one round needs every thread
    assert recomputing_warps(100, 256, 13, 1, cluster=16) == 32  # one search on 16 blocks: 158 chunks of 2 a block
    assert recomputing_warps(100, 128, 13, 1, cluster=16) == 0  # 110 chunks of 3 a block need more than 96


def test_resident_rots_cluster_plan_recomputes_on_whole_warps_one_lane_a_sum(monkeypatch):
    """A cluster's shapes (tai100a's size, one search on 16 blocks of 256 or, the engine's default,
    192: 1.13x the it/s of every thread doing both on an H200): one warp a block recomputes its 13
    moves, one lane a sum, the other warps own two-move chunks; the row sums go (they need every
    thread recomputing). A split given by the caller stays."""
    import lsbench.gpu.engine.rots.plan as resident
    from lsbench.problems.qap import QAP
    monkeypatch.setattr(resident.config, "ENABLE_CUDASIM", False)
    monkeypatch.setattr(resident, "SHUFFLE", True)
    g = np.random.default_rng(7)
    s = g.integers(0, 128, (100, 100))
    p = QAP(s + s.T, g.integers(0, 128, (100, 100)))
    shape = resident.plan(p, threads=256, cluster=16, shared_limit=200_000)
    assert (shape["split"], shape["group"], shape["row_sums"], shape["per_thread"]) == (32, 1, False, 2)
    assert shape["chunks_per_block"] <= 256 - 32
    six_warps = resident.plan(p, threads=192, cluster=16, shared_limit=200_000)
    assert (six_warps["split"], six_warps["group"], six_warps["row_sums"], six_warps["per_thread"]) == (32, 1, False, 2)
    assert six_warps["chunks_per_block"] <= 192 - 32
    given = resident.plan(p, threads=256, cluster=16, split=0, shared_limit=200_000)
    assert (given["split"], given["group"], given["row_sums"]) == (0, 16, True)


def test_resident_rots_plan_keeps_bytes_only_where_every_entry_fits_and_dp4a_only_on_chip(monkeypatch):
    """The device plan (the simulator keeps 64-bit entries): the symmetric form within 0..255 is
    stored as bytes and summed by dp4a when both matrices fit on chip; an entry of 256, a negative
    entry or a general instance keeps 16 bits; bytes kept in global memory are summed term by term.
    Class and delta share a word only below 2^29."""
    import lsbench.gpu.engine.rots.plan as resident
    from lsbench.problems.qap import QAP
    monkeypatch.setattr(resident.config, "ENABLE_CUDASIM", False)
    monkeypatch.setattr(resident, "SHUFFLE", True)
    g = np.random.default_rng(3)
    s = g.integers(0, 128, (30, 30))
    b = g.integers(0, 128, (30, 30))

    def shape(a, b, off_chip=()):
        return resident.plan(QAP(a, b), threads=128, shared_limit=200_000, global_only=off_chip)
    byte = shape(s + s.T, b)
    assert (byte["data_bits"], byte["dp4a"], byte["stride"], byte["narrow"]) == (8, True, 32, True)
    assert byte["shared"]["matrix"] and byte["shared"]["flows"]
    assert shape(s + s.T, np.where(b == b.max(), 256, b))["data_bits"] == 16
    assert shape(s + s.T, b - 100)["data_bits"] == 16  # negative entries in b + b^T
    assert shape(s, b)["data_bits"] == 16  # neither matrix symmetric: no symmetric form
    for table in ("matrix", "flows"):
        off = shape(s + s.T, b, off_chip=(table,))
        assert off["data_bits"] == 8 and not off["shared"][table] and not off["dp4a"]
    wide = shape(s + s.T, b * 40_000)
    assert wide["data_bits"] == 32 and not wide["narrow"] and not wide["dp4a"]



def test_resident_rots_plan_keeps_row_sums_only_where_every_recomputing_block_stores_them(monkeypatch):
    """The row sums S_i (three dp4a a word instead of four) on byte matrices where every thread
    recomputes (split 0), and on a cluster only where each block recomputes moves touching both
    swapped rows (n - 2 >= blocks): the recomputations store those rows' sums in each block's
    table. Not with recomputing-only warps (measured slower there), nor without dp4a."""
    import lsbench.gpu.engine.rots.plan as resident
    from lsbench.problems.qap import QAP
    monkeypatch.setattr(resident.config, "ENABLE_CUDASIM", False)
    monkeypatch.setattr(resident, "SHUFFLE", True)
    g = np.random.default_rng(5)

    def byte_instance(n):
        s = g.integers(0, 128, (n, n))
        return QAP(s + s.T, g.integers(0, 128, (n, n)))

    def shape(p, **kw):
        return resident.plan(p, shared_limit=200_000, **kw)
    p30 = byte_instance(30)
    assert shape(p30, threads=128, split=0)["row_sums"]
    assert not shape(p30, threads=128, split=64)["row_sums"]
    assert not shape(p30, threads=128, split=0, global_only=("matrix",))["row_sums"]  # no dp4a
    assert shape(p30, threads=64, cluster=16, split=0)["row_sums"]  # 28 >= 16
    p12 = byte_instance(12)
    assert shape(p12, threads=64, cluster=8, split=0)["row_sums"]  # 10 >= 8
    assert not shape(p12, threads=64, cluster=16, split=0)["row_sums"]  # blocks with no move touching one row

def test_resident_rots_cluster_outside_a_device_is_one_clear_error():
    from lsbench.gpu.engine.rots.plan import plan
    from lsbench import instances as registry
    from lsbench.errors import LsbenchError
    with pytest.raises(LsbenchError, match="cluster"):
        plan(registry.load("tai12a"), cluster=3)
    if not _clusters():
        with pytest.raises(LsbenchError, match="cluster"):
            plan(registry.load("tai12a"), cluster=2)


def test_resident_rots_block_too_small_for_a_thread_a_row_is_one_error_line_not_a_hang(tmp_path, monkeypatch):
    """Every row of moves needs an owning thread: `--param block=32` on tai40a (39 rows) looped for
    ever looking for a chunk length; now one error line, exit 2, no record. Without a block, the
    simulator's default takes a thread a row."""
    import lsbench.gpu.engine.rots.plan as rots_plan
    from lsbench import instances as registry
    out = tmp_path / "never.json"
    r = subprocess.run([sys.executable, "-m", "lsbench", "run", "--instance", "tai40a", "--algorithm", "rots",
                        "--backend", "gpu-resident", "--param", "block=32", "--iterations", "5", "--out", str(out)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and not out.exists()
    (line,) = r.stderr.strip().splitlines()
    assert line.startswith("lsbench: error: --param block: 32 move-owning threads") and "39 rows" in line
    monkeypatch.setattr(rots_plan.config, "ENABLE_CUDASIM", True)  # the simulator's default shape
    assert rots_plan.plan(registry.load("tai40a"))["threads"] == 64
    assert rots_plan.plan(registry.load("tai12a"))["threads"] == 32


def test_resident_rots_with_separate_recomputing_and_updating_warps_follows_the_cpu():
    """`split`: the first warp only recomputes the moves touching the last swap, the second only
    updates the others in O(1) (MATA's separate warps); still exactly the CPU search."""
    from lsbench.gpu.engine.rots.host import ResidentRots
    from lsbench import instances as registry
    from lsbench.interfaces import Stop
    from lsbench.search.tabu import RobustTabuSearch
    p = registry.load("tai12a")
    engine = ResidentRots(p, RobustTabuSearch().params(p), threads=64, split=32)
    assert engine.shape["split"] == 32 and engine.shape["slots"] == 3 * 32  # 66 moves, 32 owners: 3 each
    dev = engine.run([6], Stop(iterations=40), chunk=9)[0]
    _same_search(_cpu_rots(p, 6, Stop(iterations=40)), dev)


def test_resident_rots_queue_with_separate_recomputing_warps_follows_the_cpu():
    """The default split on a large instance also runs on the queue's persistent blocks (166
    searches on tai100a): recomputing-only warps and row chunks with the state carried between
    items; every search is still exactly the CPU's."""
    from lsbench.gpu.engine.rots.host import ResidentRots
    from lsbench import instances as registry
    from lsbench.interfaces import Stop
    from lsbench.search.tabu import RobustTabuSearch
    p = registry.load("tai12a")
    engine = ResidentRots(p, RobustTabuSearch().params(p), threads=64, split=32, persistent=1, subchunk=2)
    seeds = [3, 4, 5]
    devs = engine.run(seeds, Stop(iterations=12), chunk=5)
    assert engine.shape["queued"] and engine.shape["split"] == 32
    for seed, dev in zip(seeds, devs):
        _same_search(_cpu_rots(p, seed, Stop(iterations=12)), dev)


def test_cas_local_searches_on_the_gpu_are_the_cpu_ones():
    """ResidentRots.batch, one block an ant (the colony's first local searches): from the CPU's ants
    of a random pheromone matrix, Ro-TS with tenure floor(tenure u^3) and no aspiration by age gives
    each ant's best and cost as lsbench.engines.cas.local_search_batch does (the ants themselves:
    test_ant_kernel_builds_the_cpu_ants_word_for_word)."""
    from lsbench.gpu.engine.rots.host import ResidentRots
    from lsbench import instances as registry
    from lsbench import rng
    from lsbench.engines.cas import NO_AGE_ASPIRATION, construct_colony, draw_seeds, local_search_batch
    p = registry.load("tai12a")
    state = rng.new_state(9)
    donors = np.array([rng.permutation(state, p.n) for _ in range(5)])
    tau = np.random.default_rng(3).random((p.n, p.n)) + 0.01
    colony_seeds, seeds = draw_seeds(state, 5), draw_seeds(state, 5)
    ants = construct_colony(donors, tau, 0.6, colony_seeds)
    starts = ants.copy()
    costs = np.empty(5, dtype=np.int64)
    local_search_batch(p.a, p.at, p.b, ants, seeds, costs, 6, p.n, True)
    assert (ants != starts).any()
    gpu_costs, gpu_ants = ResidentRots(p, {}).batch(starts, seeds, 6, NO_AGE_ASPIRATION, p.n)
    assert np.array_equal(gpu_ants, ants) and np.array_equal(gpu_costs, costs)


def test_ant_kernel_builds_the_cpu_ants_word_for_word():
    """ant_kernel against construct_colony, on a small instance and on one where nearly every
    facility leaves (free lists longer than the block, roulettes of many four-location steps)."""
    from numba import cuda
    from lsbench.gpu.engine.ants import ANT_THREADS, ant_kernel, ant_shared_bytes
    from lsbench import rng
    from lsbench.engines.cas import construct_colony, draw_seeds
    state = rng.new_state(11)
    for n, gamma, ants in ((12, 0.6, 4), (70, 0.99, 2)):
        donors = np.array([rng.permutation(state, n) for _ in range(ants)])
        tau = np.random.default_rng(n).random((n, n)) + 0.01
        seeds = draw_seeds(state, ants)
        expected = construct_colony(donors, tau, gamma, seeds)
        moved = (expected != donors).sum(axis=1)
        assert moved.max() > (0 if n < 64 else ANT_THREADS)
        START = cuda.to_device(donors.astype(np.int32))
        STATE = cuda.to_device(np.stack([np.zeros(ants, np.uint64), seeds], axis=1))
        ant_kernel[ants, ANT_THREADS, 0, ant_shared_bytes(n)](START, STATE, cuda.to_device(tau.ravel()), gamma)
        assert np.array_equal(START.copy_to_host(), expected)


def test_a_run_on_a_slower_backend_names_the_faster_one_in_one_line(tmp_path):
    """QAP Ro-TS on the iteration-level `gpu` (launch-bound on a neighbourhood this small): the run
    says that gpu-resident runs the same search faster; a run already on the fast path says nothing."""
    r = subprocess.run([sys.executable, "-m", "lsbench", "run", "--instance", "tai12a", "--algorithm", "rots",
                        "--backend", "gpu", "--iterations", "3", "--quiet"], capture_output=True, text=True, cwd=ROOT,
                       timeout=600)
    assert r.returncode == 0, r.stderr
    assert [line for line in r.stderr.splitlines() if line.startswith("lsbench: note:")] == [
        "lsbench: note: --backend gpu-resident runs the same rots search much faster on this host (docs/performance.md)"]
    r = subprocess.run([sys.executable, "-m", "lsbench", "run", "--instance", "tai12a", "--algorithm", "rots",
                        "--backend", "gpu-resident", "--iterations", "3", "--quiet"], capture_output=True, text=True,
                       cwd=ROOT, timeout=600)
    assert r.returncode == 0 and "note:" not in r.stderr


@pytest.mark.parametrize("instance,extra,noted", [("rnd-pfsp-7x3-1", [], True),
                                                  ("rnd-pfsp-7x3-1", ["--param", "objective=flowtime"], False),
                                                  ("rnd-pfsp-7x3-1", ["--neighbourhood", "swap"], False),
                                                  ("rnd-pfsp-7x40-1", [], False)])  # (the fast path's 32 machines)
def test_pfsp_insertion_makespan_tabu_on_gpu_names_the_resident_engine_only_where_it_runs(instance, extra, noted):
    r = subprocess.run([sys.executable, "-m", "lsbench", "run", "--instance", instance, "--algorithm", "tabu",
                        "--backend", "gpu", "--iterations", "2", "--warmup", "0", "--quiet", *extra],
                       capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert r.returncode == 0, r.stderr
    notes = [line for line in r.stderr.splitlines() if line.startswith("lsbench: note:")]
    assert notes == (["lsbench: note: --backend gpu-resident runs the same tabu search much faster on this host "
                      "(docs/performance.md)"] if noted else [])


def _ig_outcome(results):
    return [(r.seed, r.best_objective, list(r.best_solution), r.iterations, r.evaluations, r.final_objective,
             [t[::2] for t in r.trajectory]) for r in results]


def _ig_both(instance, seeds, iterations, **algorithm):
    from lsbench.gpu.engine.iterated_greedy import DeviceIteratedGreedyEngine
    from lsbench.instances import load
    from lsbench.interfaces import Stop
    from lsbench.engines.iterated_greedy import IteratedGreedy, IteratedGreedyEngine
    p = load(instance, "pfsp")
    nb = p.neighbourhood("insertion")
    return [_ig_outcome(cls(p, nb, IteratedGreedy(**algorithm), {}).run(seeds, Stop(iterations=iterations)))
            for cls in (IteratedGreedyEngine, DeviceIteratedGreedyEngine)], p


@pytest.mark.long
def test_iterated_greedy_on_the_device_is_the_cpu_search():
    """Seed 3 finds a better sequence at iteration 2; seed 4 too, then accepts a worse one."""
    (cpu, gpu), p = _ig_both("rnd-pfsp-7x3-75", [3, 4], 3, destruction=2, temperature=10.0)
    assert gpu == cpu
    assert [t[-1][0] for _s, _b, _x, _i, _e, _f, t in gpu] == [2, 2] and gpu[1][5] > gpu[1][1]
    for _s, best, sol, *_ in gpu:
        assert p.exact_objective(sol) == best


def test_resident_rots_past_one_search_per_sm_runs_full_waves_or_a_queue_that_balances_the_sms():
    """spread: one block a search up to one search per SM (a large instance); beyond, full waves of
    what runs at once, else a queue for every slot, so that no SM ends a chunk holding fewer searches
    than the others (200 searches on 132 SMs of two blocks each)."""
    from lsbench.gpu.engine.rots.shape import spread
    large = [spread(k, 132, 2, True) for k in (66, 132, 133, 200, 240, 264, 300, 528, 600, 1056, 4096)]
    assert large == [(False, 0), (False, 0), (False, 264), (False, 264), (False, 0), (False, 0), (False, 264),
                     (True, 0), (False, 264), (True, 0), (True, 0)]
    assert [spread(k, 132, 1, True) for k in (132, 200, 264, 4096)] == [(False, 0), (False, 132), (True, 0), (True, 0)]
    assert [spread(k, 132, 4, False) for k in (132, 528, 529)] == [(False, 0), (False, 0), (False, 528)]


def test_resident_rots_takes_two_blocks_an_sm_from_one_and_a_half_searches_an_sm_where_two_fit():
    """Below 1.5 searches an SM (1.75 from n = 100) a two-per-SM queue would hold more blocks than
    searches and leave SMs idle at random: one 1024-thread block an SM then, as where two blocks do
    not fit."""
    from lsbench.gpu.engine.rots.shape import blocks_per_sm
    assert [blocks_per_sm(k, 132, True, True) for k in (1, 132, 150, 197, 198, 200, 264, 1056)] == [1, 1, 1, 1, 2, 2, 2, 2]
    assert [blocks_per_sm(k, 132, True, True, 80) for k in (197, 198, 200)] == [1, 2, 2]  # tai80a
    assert [blocks_per_sm(k, 132, True, True, 100) for k in (198, 200, 230, 231, 264)] == [1, 1, 1, 2, 2]  # tai100a
    assert [blocks_per_sm(k, 132, True, False) for k in (200, 1056)] == [1, 1]
    assert blocks_per_sm(200, 132, False, True) == 4


def test_two_blocks_an_sm_are_not_chosen_where_a_512_thread_block_cannot_own_every_row():
    """cas on rnd-qap-1000-1 (more ants than SMs) asked whether two 512-thread blocks fit an SM, and
    the plan for them refused the instance (999 rows of moves, 512 owners). They do not fit: one
    1024-thread block an SM then. tai60a's two still fit (the simulator's 64 KB a block)."""
    from types import SimpleNamespace
    from lsbench import instances as registry
    from lsbench.gpu.engine.rots.host import ResidentRots
    from lsbench.search.tabu import RobustTabuSearch
    h100 = SimpleNamespace(MAX_SHARED_MEMORY_PER_MULTIPROCESSOR=233_472, MULTIPROCESSOR_COUNT=132)
    fits = {}
    for name in ("rnd-qap-1000-1", "tai60a"):
        p = registry.load(name)
        fits[name] = ResidentRots(p, RobustTabuSearch().params(p))._fits_twice(h100, None, (), None)
    assert fits == {"rnd-qap-1000-1": False, "tai60a": True}


def test_resident_rots_queued_chunk_ends_with_few_idle_blocks():
    """A queued chunk is at least QUEUE_ITEMS_A_CHUNK (48) items a search, fewer only where K searches'
    improvement records would pass RECORD_BYTES, and IMPROVEMENT_CAP iterations; where the searches
    outnumber the blocks, its items a search leave the last round as full as a quarter more items
    allow (within the records): 166 searches on 132 blocks take 58 items (9,628 items, 8 idle slots
    in 73 rounds), not 48 (84 idle in 61). With no more searches than blocks every search runs
    without a break: 48."""
    from lsbench.gpu.runtime.chunks import IMPROVEMENT_CAP, rows_within_budget
    from lsbench.gpu.engine.rots.shape import QUEUE_ITEMS_A_CHUNK, queue_chunk
    assert QUEUE_ITEMS_A_CHUNK == 48
    assert queue_chunk(166, 132, 512) == 58 * 512
    assert queue_chunk(140, 132, 512) == 49 * 512  # 6,860 items, 4 idle slots in 52 rounds
    assert queue_chunk(200, 264, 512) == 48 * 512  # fewer searches than blocks
    assert queue_chunk(300, 264, 512) == 51 * 512  # 12 idle slots in 58 rounds, 120 with 48 items
    assert queue_chunk(20000, 132, 512) == 8 * 512  # the records hold no item a search: IMPROVEMENT_CAP's 8
    assert queue_chunk(2000, 132, 512) == 8 * 512  # 8 items a search: as many as the records hold
    for k, b, sub in [(166, 132, 512), (300, 264, 512), (140, 132, 128), (5, 2, 2), (1000, 132, 512)]:
        items = queue_chunk(k, b, sub) // sub
        records = rows_within_budget(k) // sub
        least = max(-(-IMPROVEMENT_CAP // sub), min(QUEUE_ITEMS_A_CHUNK, records))
        assert items >= least and items * sub >= IMPROVEMENT_CAP
        assert items <= max(least, records)  # within the records' budget, unless IMPROVEMENT_CAP needs more
        idle = -(k * items) % b
        assert all(-(k * m) % b / (k * m + -(k * m) % b) >= idle / (k * items + idle)
                   for m in range(least, items))


def test_record_rows_lets_chunks_of_few_searches_grow_within_the_records_budget():
    """The improvement records bound a Ro-TS chunk: a power of two from IMPROVEMENT_CAP to
    LONGEST_CHUNK rows, never more rows than RECORD_BYTES hold for K searches above the cap, and
    fewer rows as K grows (one search 65,536; 132 searches 32,768; 1,056 and more the cap)."""
    from lsbench.gpu.runtime.chunks import IMPROVEMENT_CAP, LONGEST_CHUNK, RECORD_BYTES, record_rows
    assert [record_rows(k) for k in (1, 132, 264, 1056, 4096)] == [65536, 32768, 16384, 4096, 4096]
    last = LONGEST_CHUNK
    for k in range(1, 5000):
        rows = record_rows(k)
        assert IMPROVEMENT_CAP <= rows <= LONGEST_CHUNK and rows & (rows - 1) == 0 and rows <= last
        assert rows == IMPROVEMENT_CAP or 16 * rows * k <= RECORD_BYTES
        last = rows


@pytest.mark.device  # chunks grow on a device's clock only
def test_resident_rots_chunks_grow_past_the_old_cap_and_follow_the_cpu():
    """One search on tai100a, 100,000 iterations: its chunks double while under 20 ms, past 4,096
    iterations (fewer than 100,000 / 4,096 chunks), and the search is still exactly the CPU's;
    with restarts the chunks stay at 4,096 (the restarts' iterations as before)."""
    from lsbench import instances as registry
    from lsbench.gpu.runtime.chunks import IMPROVEMENT_CAP
    from lsbench.gpu.engine.rots.host import ResidentRots
    from lsbench.interfaces import Stop
    from lsbench.search.tabu import RobustTabuSearch
    p = registry.load("tai100a")
    engine = ResidentRots(p, RobustTabuSearch().params(p))
    stop = Stop(iterations=100_000)
    dev = engine.run([5], stop)[0]
    assert engine.chunks_run < 100_000 // IMPROVEMENT_CAP
    _same_search(_cpu_rots(p, 5, stop), dev)
    iterated = ResidentRots(p, RobustTabuSearch().params(p), restart={"stagnation": 40_000, "elite": 1, "strength": 0.25})
    iterated.run([5, 6], Stop(iterations=20_000))
    assert iterated.chunks_run == 20_000 // IMPROVEMENT_CAP + 1  # 4 chunks of 4,096 and one of 3,616


@pytest.mark.device  # a real GPU's SM count and its default shapes
@pytest.mark.parametrize("per_sm, waves, queued", [(4, True, False), (1.5, False, True)])
def test_resident_rots_two_blocks_an_sm_in_waves_or_a_queue_each_search_follows_the_cpu(per_sm, waves, queued):
    """Past one search per SM on a large instance whose tables fit twice on an SM: 512-thread blocks,
    two an SM, in two full waves (4 searches an SM) or on a queue of two blocks an SM (1.5 searches
    an SM); searches of both waves, and queued ones, are exactly the CPU's."""
    from numba import cuda
    from lsbench.gpu.engine.rots.host import ResidentRots
    from lsbench.problems.qap import QAP
    from lsbench.interfaces import Stop
    from lsbench.search.tabu import RobustTabuSearch
    sms = cuda.get_current_device().MULTIPROCESSOR_COUNT
    g = np.random.default_rng(11)
    p = QAP(g.integers(0, 100, (70, 70)), g.integers(0, 100, (70, 70)))
    engine = ResidentRots(p, RobustTabuSearch().params(p))
    stop = Stop(iterations=600)
    k = math.ceil(per_sm * sms)
    devs = engine.run(list(range(1, k + 1)), stop)
    info = engine.describe()
    assert info["threads_per_block"] == 512 and info["blocks_per_sm"] == 2 and info["waves"] == waves
    assert info["persistent_blocks"] == (2 * sms if queued else 0)
    assert info["iterations_per_queue_item"] == (512 if queued else None)
    for q in (0, sms, k - 1):
        _same_search(_cpu_rots(p, q + 1, stop), devs[q])


@pytest.mark.device  # byte matrices and dp4a run on a device only
@pytest.mark.parametrize("per_sm", [1, 1.25, 1.5, 1.75, 2])
def test_resident_rots_on_tai100a_at_the_engines_shapes_follows_the_cpu(per_sm):
    """tai100a at the engine's own shapes: one 1024-thread block a search with recomputing-only
    warps (four dp4a sums a word), its queue (1.25 and 1.5 searches an SM), and two 512-thread
    blocks an SM, on a queue (1.75: 231 searches) or in waves (2), where every thread recomputes
    (three sums: the row sums S_i that every swap updates in O(1)), over thousands of swaps and
    several chunks; searches of the first and last blocks are exactly the CPU's."""
    from numba import cuda
    from lsbench.gpu.engine.rots.host import ResidentRots
    from lsbench import instances as registry
    from lsbench.interfaces import Stop
    from lsbench.search.tabu import RobustTabuSearch
    sms = cuda.get_current_device().MULTIPROCESSOR_COUNT
    p = registry.load("tai100a")
    engine = ResidentRots(p, RobustTabuSearch().params(p))
    k = math.ceil(per_sm * sms)
    stop = Stop(iterations=3000)
    devs = engine.run(list(range(1, k + 1)), stop)
    assert engine.shape["dp4a"]
    assert (engine.shape["threads"], engine.shape["row_sums"]) == ((512, True) if per_sm >= 1.75 else (1024, False))
    for q in (0, k - 1):
        _same_search(_cpu_rots(p, q + 1, stop), devs[q])


@pytest.mark.device  # a real GPU's SM count and its default shapes
def test_resident_rots_cas_colony_queue_keeps_short_items():
    """A cas colony that does not fill the SMs evenly queues for one block an SM (two from 1.5 ants an
    SM) with the plan's short items: a generation is only 16n iterations an ant, which 512-iteration
    items would split into a few with a long last round. The searches' own queue (more searches than
    blocks) takes 512."""
    from numba import cuda
    from lsbench.gpu.engine.rots.host import ResidentRots
    from lsbench.gpu.engine.rots.shape import LARGE_QUEUE_SUBCHUNK, UNEVEN
    from lsbench import instances as registry
    sms = cuda.get_current_device().MULTIPROCESSOR_COUNT
    p = registry.load("tai100a")
    colony = ResidentRots(p, {}, persistent=UNEVEN)
    colony.buffers(sms + sms // 2)
    assert colony.shape["queued"] and colony.shape["subchunk"] < LARGE_QUEUE_SUBCHUNK
    assert (colony.grid, colony.shape["threads"]) == (2 * sms, 512)  # from 1.5 ants an SM: two blocks an SM
    colony.buffers(sms + sms // 4)
    assert (colony.grid, colony.shape["threads"]) == (sms, 1024)
    searches = ResidentRots(p, {})
    searches.buffers(sms + sms // 4)
    assert searches.shape["queued"] and searches.shape["subchunk"] == LARGE_QUEUE_SUBCHUNK


@pytest.mark.device  # sizes the simulator cannot run in time
def test_iterated_greedy_on_the_device_is_the_cpu_search_on_ta051():
    (cpu, gpu), p = _ig_both("ta051", list(range(1, 65)), 25)
    assert gpu == cpu
    assert len({r[1] for r in gpu}) > 1


@pytest.mark.device  # sizes the simulator cannot run in time
def test_iterated_greedy_with_restarts_on_the_device_is_the_cpu_search():
    (cpu, gpu), _p = _ig_both("ta051", list(range(1, 65)), 64, restart=16, elite=3)
    assert gpu == cpu


def _liefooghe_file(path, n=6, m=3):
    """A flow shop in Liefooghe's due-date layout (n, m, time seed, then a row a job: index, due
    date, m times); its due dates are a strided column of what the reader parses."""
    rows = [f"{j}\n{20 + 7 * j}\n" + " ".join(str(1 + (5 * j + 3 * k) % 9) for k in range(m)) for j in range(n)]
    path.write_text(f"{n}\n{m}\n12345\n" + "\n".join(rows) + "\n")
    return str(path)


@pytest.mark.parametrize("algorithm, backend, backend_params", [("tabu", "gpu", {}),
                                                                ("pls", "gpu", {"archive": "device"}),
                                                                ("hc", "gpu-resident", {})])
def test_a_flow_shop_with_the_due_dates_of_its_file_runs_on_the_gpu_as_on_the_cpu(tmp_path, algorithm, backend,
                                                                                    backend_params):
    """Liefooghe's files (EvoCOP Tables 2-5) load due dates as a column of the file's rows; the GPU
    backends copy them to the device and follow the CPU search."""
    instance = _liefooghe_file(tmp_path / "006_03_01.txt")
    three = {"objective": "three"}
    ref = run_one("pfsp", instance, algorithm, "cpu", "insertion", seed=5, iterations=4, problem_params=three)
    rec = run_one("pfsp", instance, algorithm, backend, "insertion", seed=5, iterations=4, problem_params=three,
                  backend_params=backend_params)
    assert trajectory(rec) == trajectory(ref) and rec.get("front") == ref.get("front")
