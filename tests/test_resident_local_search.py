"""The resident local search engine (gpu/engine/local_search.py) over the TSP 2-opt adapter
(gpu/adapters/tsp_two_opt.py), in the CUDA simulator: each search is the CPU search with its seed."""
import sys
from pathlib import Path

import numpy as np
import pytest

from lsbench.errors import LsbenchError
from lsbench.interfaces import Stop
from lsbench.problems.tsp import ROUNDED, TSP, coordinate_distance
from lsbench.registry import get_evaluator
from lsbench.runner import run_one
from lsbench.search.hill_climbing import HillClimbing
from lsbench.search.tabu import TabuSearch


def tsplib_file(folder, n, weight_type, decimals=0, seed=0, extra=()):
    """A TSPLIB file of n random cities (coordinates below 1000, `decimals` places; GEO: degrees
    below 80, TSPLIB's latitude and longitude range) plus `extra`."""
    rng = np.random.default_rng(seed)
    high = 80 if weight_type == "GEO" else 1000
    xy = np.round(rng.uniform(0, high, size=(n - len(extra), 2)), decimals).tolist() + [list(p) for p in extra]
    lines = [f"NAME : rnd{n}", "TYPE : TSP", f"DIMENSION : {n}", f"EDGE_WEIGHT_TYPE : {weight_type}",
             "NODE_COORD_SECTION"] + [f"{k + 1} {x} {y}" for k, (x, y) in enumerate(xy)] + ["EOF"]
    path = folder / f"rnd{n}-{weight_type}-{decimals}-{seed}.tsp"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_coordinate_distance_rounds_as_tsplibs_doubles_do(tmp_path):
    """(0, 0) to (5.6, 3.3) is 6.5 in exact arithmetic but 6.4999... in doubles: TSPLIB's nint gives
    6, and so do the matrix and the function the GPU compiles (the CPU's own source)."""
    p = TSP.from_file(tsplib_file(tmp_path, 12, "EUC_2D", 1, extra=[(0.0, 0.0), (5.6, 3.3)]))
    assert p.d[10, 11] == 6 == coordinate_distance(ROUNDED, 0.0, 0.0, 5.6, 3.3)


def test_the_two_opt_layout_follows_the_size_and_the_distance_type(tmp_path):
    from lsbench.gpu.adapters.tsp_two_opt import adapter, layout_for
    h200 = 232_448
    assert [layout_for(n, h200) for n in (2392, 14051, 19000, 33810, 85900)] == \
        ["chip", "chip", "global", "global", "global"]
    for weight_type, layout in (("EUC_2D", "chip"), ("ATT", "chip"), ("GEO", "matrix")):
        p = TSP.from_file(tsplib_file(tmp_path, 9, weight_type, seed=1))
        assert adapter(p, p.neighbourhood("2opt")).layout == layout
    assert adapter(_explicit(tmp_path, 9), TSP.neighbourhoods["2opt"](_explicit(tmp_path, 9))).layout == "matrix"
    assert [adapter(p, p.neighbourhood("2opt")).stored_exact for p in (_fractional(tmp_path), _far(tmp_path))] == \
        [True, False]


def _explicit(folder, n, seed=0):
    """A symmetric EXPLICIT instance (UPPER_ROW weights in 1..99) of n cities."""
    rng = np.random.default_rng(seed)
    weights = [str(w) for w in rng.integers(1, 100, size=n * (n - 1) // 2)]
    path = folder / f"explicit{n}-{seed}.tsp"
    path.write_text("\n".join([f"NAME : explicit{n}", "TYPE : TSP", f"DIMENSION : {n}", "EDGE_WEIGHT_TYPE : EXPLICIT",
                               "EDGE_WEIGHT_FORMAT : UPPER_ROW", "EDGE_WEIGHT_SECTION", " ".join(weights), "EOF"]) + "\n")
    return TSP.from_file(path)


def _resident(p, algorithm, search, rows, seeds, iterations, layout=None, threads=32, diagonal_loop=False):
    from lsbench.gpu.adapters.tsp_two_opt import adapter
    from lsbench.gpu.engine.local_search import ResidentLocalSearch
    nb = p.neighbourhood("2opt")
    prm = search.params(nb) if algorithm == "tabu" else {"restarts": search.restarts}
    engine = ResidentLocalSearch(p, nb, adapter(p, nb, rows=rows, layout=layout, diagonal_loop=diagonal_loop),
                                 algorithm, prm, threads=threads)
    return engine.run(seeds, Stop(iterations=iterations), chunk=3)


def _same(cpu, dev):
    assert [(i, o) for i, _t, o in cpu.trajectory] == [(i, o) for i, _t, o in dev.trajectory]
    assert list(cpu.best_solution) == list(dev.best_solution)
    assert (cpu.best_objective, cpu.final_objective, cpu.iterations) == \
        (dev.best_objective, dev.final_objective, dev.iterations)


HC_CASES = [  # cities, weight type, decimals, rows a lane, restarts, iterations, threads a block
    (9, "CEIL_2D", 1, 2, True, 40, 32),  # several local optima, each a restart from the search's stream
    (9, "EUC_2D", 0, 1, False, 40, 32),  # ends at its first local optimum
    (40, "EUC_2D", 0, 1, True, 10, 32),  # past one warp's rows: the blocks of rows against columns
    (70, "EUC_2D", 1, 1, True, 6, 64),  # two warps' items, pruned against the block's best
]


@pytest.mark.parametrize("n, weight_type, decimals, rows, restarts, iterations, threads", HC_CASES)
def test_resident_hill_climbing_follows_the_cpu(tmp_path, n, weight_type, decimals, rows, restarts, iterations,
                                                threads):
    p = TSP.from_file(tsplib_file(tmp_path, n, weight_type, decimals, seed=n))
    search = HillClimbing(restarts=restarts)
    nb = p.neighbourhood("2opt")
    devs = _resident(p, "hc", search, rows, [4, 5], iterations, threads=threads)
    for seed, dev in zip([4, 5], devs):
        cpu = search.run(p, nb, get_evaluator("cpu").bind(p, nb), Stop(iterations=iterations), seed)
        _same(cpu, dev)
        assert dev.params == cpu.params
    if not restarts:
        assert max(d.iterations for d in devs) < iterations  # stopped at the local optimum
    elif n < 32:
        assert min(d.params["restarts_done"] for d in devs) >= 2


TABU_CASES = [  # cities, weight type, decimals, rows a lane, tabu parameters, iterations, threads a block
    (10, "ATT", 0, 4, {"tenure_min": 1, "tenure_max": 4}, 40, 32),
    (10, "EUC_2D", 1, 1, {"aspiration": False}, 30, 32),
    (36, "EUC_2D", 0, 1, {}, 8, 32),
    (70, "EUC_2D", 0, 1, {}, 6, 64),  # two warps' items, pruned against the block's best
]


@pytest.mark.parametrize("algorithm", ["hc", "tabu"])
@pytest.mark.parametrize("rows", [1, 2])
def test_the_diagonal_items_on_a_loop_of_their_own_follow_the_cpu(tmp_path, algorithm, rows):
    """research: the diagonal block's items on their own masking loop (make_scan's diagonal_loop),
    several row blocks so that both loops run."""
    p = TSP.from_file(tsplib_file(tmp_path, 70, "EUC_2D", 0, seed=4))
    search = HillClimbing(restarts=True) if algorithm == "hc" else TabuSearch()
    nb = p.neighbourhood("2opt")
    devs = _resident(p, algorithm, search, rows, [6, 7], 6, threads=64, diagonal_loop=True)
    for seed, dev in zip([6, 7], devs):
        _same(search.run(p, nb, get_evaluator("cpu").bind(p, nb), Stop(iterations=6), seed), dev)


@pytest.mark.parametrize("n, weight_type, decimals, rows, params, iterations, threads", TABU_CASES)
def test_resident_tabu_on_chip_follows_the_cpu(tmp_path, n, weight_type, decimals, rows, params, iterations, threads):
    """Past the local optimum (the edges' tabu list on the device decides), with random tenures."""
    p = TSP.from_file(tsplib_file(tmp_path, n, weight_type, decimals, seed=n))
    search = TabuSearch(**params)
    nb = p.neighbourhood("2opt")
    devs = _resident(p, "tabu", search, rows, [6, 7], iterations, threads=threads)
    for seed, dev in zip([6, 7], devs):
        cpu = search.run(p, nb, get_evaluator("cpu").bind(p, nb), Stop(iterations=iterations), seed)
        _same(cpu, dev)
        assert len(cpu.trajectory) >= 3
        if n <= 10:  # ten iterations past its best on ten cities: past a local optimum, where tabu decides
            assert cpu.trajectory[-1][0] <= iterations - 10


def _fractional(folder):
    """Fractional EUC_2D with a pair whose double distance rounds apart from the exact one."""
    return TSP.from_file(tsplib_file(folder, 14, "EUC_2D", 3, seed=5, extra=[(0.0, 0.0), (5.6, 3.3)]))


def _geo(folder):
    return TSP.from_file(tsplib_file(folder, 11, "GEO", 2, seed=6))


def _far(folder):
    """EUC_2D with edges beyond 2^24: their lengths on chip are not exact, so each is computed."""
    return TSP.from_file(tsplib_file(folder, 14, "EUC_2D", 0, seed=8, extra=[(0.0, 0.0), (3.0e7, 2.0e7)]))


NO_ENVELOPE_CASES = [  # (what, instance, layout forced or None)
    ("fractional EUC_2D", _fractional, None),
    ("GEO", _geo, None),
    ("EXPLICIT", lambda folder: _explicit(folder, 12, seed=2), None),
    ("larger than shared memory", lambda folder: TSP.from_file(tsplib_file(folder, 40, "CEIL_2D", 2, seed=7)),
     "global"),
    ("edges past float32's whole numbers", _far, None),
]


@pytest.mark.parametrize("algorithm", ["hc", "tabu"])
@pytest.mark.parametrize("what, make, layout", NO_ENVELOPE_CASES, ids=[c[0] for c in NO_ENVELOPE_CASES])
def test_every_kind_of_instance_follows_the_cpu_on_gpu_resident(tmp_path, what, make, layout, algorithm):
    """Each layout the adapter picks (or, for a size beyond shared memory, is given): hc with restarts
    and tabu past its local optimum follow the CPU search with their seeds."""
    p = make(tmp_path)
    search = HillClimbing(restarts=True) if algorithm == "hc" else TabuSearch(tenure_min=1, tenure_max=5)
    nb = p.neighbourhood("2opt")
    iterations = 12 if p.n > 32 else 30
    devs = _resident(p, algorithm, search, 2, [8, 9], iterations, layout=layout)
    for seed, dev in zip([8, 9], devs):
        cpu = search.run(p, nb, get_evaluator("cpu").bind(p, nb), Stop(iterations=iterations), seed)
        _same(cpu, dev)
        assert len(cpu.trajectory) >= 3


def test_gpu_resident_local_search_refuses_what_no_kernel_runs(tmp_path):
    with pytest.raises(LsbenchError, match=r"^--algorithm hc --backend gpu-resident: rnd-atsp-9-1: the 2-opt "
                                           r"adapters need symmetric distances"):
        run_one("tsp", "rnd-atsp-9-1", algorithm="hc", backend="gpu-resident", seed=1, iterations=2)
    with pytest.raises(LsbenchError, match=r"^--param blocks: hc on tsp runs one block a search"):
        run_one("tsp", str(tsplib_file(tmp_path, 9, "EUC_2D")), algorithm="hc", backend="gpu-resident", seed=1,
                iterations=2, backend_params={"blocks": 2})


def test_hill_climbing_on_gpu_resident_runs_from_the_command_line_and_verifies(tmp_path):
    import subprocess
    import sys
    out = tmp_path / "hc.json"
    path = tsplib_file(tmp_path, 9, "EUC_2D", seed=3)
    rec = run_one("tsp", str(path), algorithm="hc", backend="gpu-resident", seed=2, iterations=12, searches=2,
                  out=str(out))
    assert [e["seed"] for e in rec["searches"]] == [2, 3] and rec["backend_info"]["mode"] == "queue"
    r = subprocess.run([sys.executable, "-m", "lsbench", "verify", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def _random_problem(kind, seed):
    """A small QAP, PFSP or PPP instance (TSP: tsplib_file)."""
    from lsbench.problems.pfsp import PFSP, taillard_times
    from lsbench.problems.ppp import PPP
    from lsbench.problems.qap import QAP
    rng = np.random.default_rng(seed)
    if kind == "qap":  # asymmetric flows with a diagonal: the general form
        return QAP(rng.integers(0, 9, (9, 9)), rng.integers(0, 9, (9, 9)), name="rnd9")
    if kind == "pfsp-three":
        times = taillard_times(8, 4, 1000 + seed)[0]
        return PFSP(times, name="rnd8x4", due=times.sum(axis=0) + rng.integers(0, 200, 8), objective="three",
                    weights=(1, 2, 5))
    if kind == "pfsp":
        return PFSP(taillard_times(8, 4, 1000 + seed)[0], name="rnd8x4")
    if kind == "pfsp-six":  # beyond the simulator's LOCAL_MACHINES (4): completion times in global memory
        return PFSP(taillard_times(8, 6, 1000 + seed)[0], name="rnd8x6", objective="flowtime")
    return PPP.pointcheval(11, 13, seed=seed)


ADAPTER_CASES = [  # problem, neighbourhood, algorithm, search parameters, iterations
    ("qap", "swap", "hc", {"restarts": True}, 40),
    ("qap", "swap", "tabu", {}, 40),
    ("tsp", "swap", "hc", {"restarts": True}, 40),
    ("tsp", "swap", "tabu", {"tenure_min": 2, "tenure_max": 5}, 30),
    ("pfsp", "insertion", "hc", {"restarts": True}, 30),
    ("pfsp-three", "insertion", "hc", {"restarts": False}, 30),
    ("pfsp", "insertion", "tabu", {}, 30),
    ("pfsp-six", "insertion", "tabu", {}, 20),
    ("ppp", "hamming1", "hc", {"restarts": True}, 40),
    ("ppp", "hamming2", "hc", {"restarts": False}, 20),
    ("ppp", "hamming1", "tabu", {}, 30),
    ("ppp", "hamming3", "tabu", {}, 12),
]


@pytest.mark.parametrize("kind, nb_name, algorithm, params, iterations", ADAPTER_CASES)
def test_every_problems_adapter_follows_the_cpu_search(tmp_path, kind, nb_name, algorithm, params, iterations):
    """QAP swap, TSP swap, PFSP insertion (every objective, up to and beyond LOCAL_MACHINES) and PPP Hamming-k on the resident
    engine: each search is the CPU search with its seed (restarts, local optima, tabu past them)."""
    from lsbench.gpu.adapters import adapter_for
    from lsbench.gpu.engine.local_search import ResidentLocalSearch
    p = TSP.from_file(tsplib_file(tmp_path, 9, "EUC_2D", seed=9)) if kind == "tsp" else _random_problem(kind, 3)
    nb = p.neighbourhood(nb_name)
    search = HillClimbing(**params) if algorithm == "hc" else TabuSearch(**params)
    prm = search.params(nb) if algorithm == "tabu" else {"restarts": search.restarts}
    engine = ResidentLocalSearch(p, nb, adapter_for(p, nb), algorithm, prm, threads=32)
    devs = engine.run([4, 5], Stop(iterations=iterations), chunk=7)
    for seed, dev in zip([4, 5], devs):
        cpu = search.run(p, nb, get_evaluator("cpu").bind(p, nb), Stop(iterations=iterations), seed)
        _same(cpu, dev)
        assert len(cpu.trajectory) >= 2
        if algorithm == "hc":
            assert dev.params == cpu.params
    if algorithm == "hc" and params["restarts"]:
        assert max(d.params["restarts_done"] for d in devs) >= 1  # a local optimum was passed


def test_more_searches_than_blocks_take_ready_items_from_the_shared_queue_and_follow_the_cpu():
    """Three searches on one persistent block: chunks of 7 iterations are 4 sub-chunks a search, the
    ring (gpu/runtime/chunks.ItemQueue) grows to hold them and keeps its counts across chunks; each search
    is still the CPU search with its seed."""
    from lsbench.gpu.adapters import adapter_for
    from lsbench.gpu.engine.local_search import ResidentLocalSearch
    p = _random_problem("qap", 3)
    nb = p.neighbourhood("swap")
    search = TabuSearch()
    engine = ResidentLocalSearch(p, nb, adapter_for(p, nb), "tabu", search.params(nb), threads=32, persistent=1)
    devs = engine.run([4, 5, 6], Stop(iterations=30), chunk=7)
    assert engine.shape["blocks"] == 1
    for seed, dev in zip([4, 5, 6], devs):
        _same(search.run(p, nb, get_evaluator("cpu").bind(p, nb), Stop(iterations=30), seed), dev)


def test_a_queue_wait_that_runs_out_ends_the_local_search_run_with_one_error(monkeypatch):
    """A queue item that never becomes ready (the host's count of the items taken set two short, so
    that the first pop waits for a ring entry no item hands on) stops waiting after WAIT_SPINS, and
    the run fails with one error instead of hanging."""
    from lsbench.gpu.runtime import chunks
    from lsbench.gpu.adapters import adapter_for
    from lsbench.gpu.engine.local_search import ResidentLocalSearch
    monkeypatch.setattr(chunks, "WAIT_SPINS", 20)
    launch = chunks.ItemQueue.launch

    def two_short(self, *args):
        item0, seq0, push0 = launch(self, *args)
        return item0 - 2, seq0, push0
    monkeypatch.setattr(chunks.ItemQueue, "launch", two_short)
    p = _random_problem("qap", 3)
    nb = p.neighbourhood("swap")
    engine = ResidentLocalSearch(p, nb, adapter_for(p, nb), "hc", {"restarts": True}, threads=32, persistent=1)
    with pytest.raises(LsbenchError, match="waited too long"):
        engine.run([1, 2], Stop(iterations=10), chunk=5)


def test_an_instance_beyond_the_dense_matrix_computes_its_distances_and_runs_everywhere_it_can(tmp_path,
                                                                                                monkeypatch):
    """Beyond DENSE_UP_TO cities (pla33810, pla85900), EUC_2D/CEIL_2D/ATT distances are computed from
    the coordinates: the same deltas, objective and CPU trajectory as the matrix, a pickle round trip
    (Dask workers), gpu-resident hc and tabu on the same trajectory; a GEO file that large and the
    matrix kernels are refused in one line naming why."""
    import pickle
    from lsbench.problems import tsp
    path = tsplib_file(tmp_path, 30, "CEIL_2D", 2, seed=11)
    dense = TSP.from_file(path)
    monkeypatch.setattr(tsp, "DENSE_UP_TO", 20)
    computed = TSP.from_file(path)
    assert dense.dense and not computed.dense and computed.n == 30
    tour = np.random.default_rng(3).permutation(30)
    assert computed.objective(tour) == computed.exact_objective(tour) == dense.objective(tour)
    for name in ("2opt", "swap"):
        out = [np.zeros(p.neighbourhood(name).size, np.int64) for p in (dense, computed)]
        for p, o in zip((dense, computed), out):
            p.neighbourhood(name).evaluate(tour, None, o)
        assert (out[0] == out[1]).all()
    again = pickle.loads(pickle.dumps(computed))
    assert again.objective(tour) == dense.objective(tour)
    for algorithm in ("hc", "tabu"):
        cpu = run_one("tsp", str(path), algorithm=algorithm, backend="cpu", seed=4, iterations=12)
        dev = run_one("tsp", str(path), algorithm=algorithm, backend="gpu-resident", seed=4, iterations=12)
        assert [p[::2] for p in cpu["trajectory"]] == [p[::2] for p in dev["trajectory"]]
        assert dev["backend_info"]["layout"] == "chip" and cpu["best_solution"] == dev["best_solution"]
    with pytest.raises(LsbenchError, match=r"reads a dense distance matrix, and 30 cities have none"):
        run_one("tsp", str(path), algorithm="tabu", backend="gpu", seed=4, iterations=2)
    with pytest.raises(LsbenchError, match=r"GEO distances beyond 20 cities would need a dense matrix"):
        TSP.from_file(tsplib_file(tmp_path, 30, "GEO", seed=2))


def test_searches_beyond_the_gpus_memory_are_refused_before_any_allocation_naming_how_many_fit(tmp_path,
                                                                                              monkeypatch):
    """K searches' tours, bests and adapter memory against the free memory (the simulator has no
    limit, so the free figure is set low): one line naming the largest K that fits, and that K runs."""
    from lsbench.gpu.runtime import chunks
    p = TSP.from_file(tsplib_file(tmp_path, 40, "EUC_2D", seed=1))
    monkeypatch.setattr(chunks, "free_device_bytes", lambda: 200_000)
    with pytest.raises(LsbenchError, match=r"^--searches 64: 64 searches of rnd40-EUC_2D-0-1 need .* GiB of GPU memory, "
                                           r".* are free: at most (\d+) searches fit") as refused:
        _resident(p, "tabu", TabuSearch(), 2, list(range(64)), 3)
    fit = int(refused.value.args[0].rsplit("at most ", 1)[1].split()[0])
    assert 1 <= fit < 64
    assert len(_resident(p, "tabu", TabuSearch(), 2, list(range(fit)), 1)) == fit


def test_the_engine_picks_the_tabu_kernel_the_cited_measurement_found_faster():
    """own_kernel_faster (the one place that chooses between a problem's own tabu kernel and the
    adapter's) agrees with every pair of rows docs/performance.md cites, where one kernel ran at
    least 1.2x the other's rate, for that GPU's SM count: the kernels table, and for TSP 2-opt the
    later small-instance table (the adapter each instance's rows_for picks, against the matrix
    kernel), which supersedes the kernels table's pairs of the same case."""
    import json
    import re
    from conftest import ROOT
    from lsbench.gpu.adapters.tsp_two_opt import rows_for
    from lsbench.gpu.engine.local_search import own_kernel_faster
    page = (ROOT / "docs" / "performance.md").read_text()

    def cited(benchmark):
        data = json.loads((ROOT / "benchmarks" / "results" /
                           re.search(rf"<!-- figure: ({benchmark}-\S+) -->", page).group(1)).read_text())
        return data, (data.get("device_gpu") or data["gpu"])["multiprocessors"]

    pairs = {}  # (kind, moves, K) -> (own kernel's rate, adapter's rate, SMs)
    kernels, sms = cited("tabu_kernels")
    rate = {(r["problem"], r["moves_per_iteration"], r["searches"], r["kernel"] == "adapter"): r["iterations_per_s"]
            for r in kernels["rows"]}
    for (kind, moves, K, adapter), own_rate in rate.items():
        if not adapter and (kind, moves, K, True) in rate:
            pairs[kind, moves, K] = (own_rate, rate[kind, moves, K, True], sms)
    small, sms = cited("small_two_opt")
    rate = {(r["n"], r["algorithm"], r["searches"], r["kernel"]): r["moves_per_s"] for r in small["rows"]}
    for (n, algorithm, K, kernel), own_rate in rate.items():
        adapter = (rate.get((n, algorithm, K, f"adapter rows {rows_for(n)} threads 128"))
                   or rate.get((n, algorithm, K, f"adapter rows auto ({rows_for(n)}) threads 128")))
        if kernel == "matrix kernel" and adapter:
            pairs["tsp", n * (n - 1) // 2, K] = (own_rate, adapter, sms)
    decided = 0
    for (kind, moves, K), (own_rate, other, sms) in pairs.items():
        if max(own_rate, other) >= 1.2 * min(own_rate, other):
            assert own_kernel_faster(kind, moves, K, sms) == (own_rate > other), (kind, moves, K, own_rate, other)
            decided += 1
    assert decided >= 10


def test_the_scans_replay_walks_every_move_once_and_the_blocks_best_looks_less(tmp_path):
    """research/two_opt_hits.py replays the 2-opt adapter's walk of the move triangle: every move
    once, whatever the rows a lane and the warps; the block's threshold is never above a lane's own,
    so it sends fewer moves down the exact path."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks" / "research"))
    from two_opt_hits import exact_looks
    p = TSP.from_file(tsplib_file(tmp_path, 70, "EUC_2D", 0, seed=3))
    tour = np.random.default_rng(3).permutation(70)
    for rows, warps in ((1, 1), (2, 3), (4, 4)):
        lane = exact_looks(p, tour, rows, warps, block_best=False)
        block = exact_looks(p, tour, rows, warps, block_best=True)
        assert lane[0] == block[0] == 70 * 69 // 2
        assert 1 <= block[1] < lane[1]
    # at a local optimum, row i's non-move at column i - 1 (-2 x edge i-1) is within any threshold:
    # lanes of several rows enter the exact path for it on most columns of the diagonal block
    nb = p.neighbourhood("2opt")
    optimum = np.asarray(HillClimbing().run(p, nb, get_evaluator("cpu").bind(p, nb), Stop(iterations=10_000),
                                            3).best_solution)
    moves, looks, columns, looking, entering = exact_looks(p, optimum, 4, 1, True)  # (one item: the diagonal)
    assert looking < columns // 4 and entering >= columns // 2
