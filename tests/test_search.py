"""Search quality on real instances, and identical trajectories across CPU backends."""
import json

import numpy as np
import pytest

from lsbench.runner import run_one


def run(**kw):
    return run_one(**{"problem": None, "seed": 1, "backend": "cpu", **kw})


def test_tabu_reaches_tai12a_optimum_for_most_seeds():
    hits = [run(instance="tai12a", algorithm="tabu", iterations=20000, target=224416, seed=s)["best_objective"]
            == 224416 for s in range(1, 11)]
    assert sum(hits) >= 8


def test_tabu_on_ta001_within_one_percent():
    rec = run(instance="ta001", algorithm="tabu", iterations=3000, seed=1)
    assert rec["best_objective"] <= 1.01 * 1278
    assert rec["bks"] == 1278 and rec["gap_percent"] <= 1.0


TRAJECTORY_CASES = [
    ("tai12a", "tabu", None, 300, {}),
    ("tai12a", "rots", None, 300, {}),
    ("nug20", "hc", None, 200, {}),
    ("ta001", "tabu", "insertion", 150, {}),
    ("ta001", "tabu", "swap", 150, {"objective": "flowtime"}),
    ("ta001", "tabu", "insertion", 100, {"objective": "three", "weights": (1, 2, 50)}),
    ("eil51", "tabu", "2opt", 150, {}),
    ("rnd-atsp-30-2", "tabu", "swap", 150, {}),
    ("rnd-atsp-30-2", "tabu", "2opt", 150, {}),
    ("31-29", "tabu", "hamming1", 100, {}),
    ("31-29", "tabu", "hamming2", 60, {}),
    ("15-13", "tabu", "hamming3", 40, {}),
    ("weierstrass-3", "tabu", "crowns", 30, {"neighbours": 200}),
]


@pytest.mark.parametrize("instance,algorithm,nb,iterations,params", TRAJECTORY_CASES)
def test_cpu_and_cpu_parallel_trajectories_are_identical(instance, algorithm, nb, iterations, params):
    recs = [run(instance=instance, algorithm=algorithm, neighbourhood=nb, iterations=iterations, seed=3,
                backend=b, problem_params=params) for b in ("cpu", "cpu-parallel")]
    strip = [[(it, obj) for it, _t, obj in r["trajectory"]] for r in recs]
    assert strip[0] == strip[1]
    assert recs[0]["best_solution"] == recs[1]["best_solution"]
    assert recs[0]["final_objective"] == recs[1]["final_objective"]
    assert len(strip[0]) >= 2  # the search did improve: the comparison is not vacuous


@pytest.mark.parametrize("faster", ["serial", "parallel"])
def test_cpu_runs_the_build_faster_on_one_thread_and_the_search_is_the_same(faster, monkeypatch):
    """`cpu` keeps the build that bind timed faster on one thread. The parallel build then runs
    with Numba's thread count at 1 for this thread, restored after each call, and the search is
    the serial build's move by move; below PARALLEL_MIN_SECONDS the parallel build is not timed."""
    import numba
    from lsbench import instances as registry
    from lsbench.backends.cpu import PARALLEL_MIN_SECONDS, CpuEvaluator
    from lsbench.rng import new_state
    seconds = {"serial": 2e-3, "parallel": 1e-3} if faster == "parallel" else {"serial": 1e-3, "parallel": 2e-3}
    monkeypatch.setattr(CpuEvaluator, "_evaluation_seconds",
                        lambda self, parallel: seconds["parallel" if parallel else "serial"])
    p = registry.load("ta001", None, None, {"objective": "three", "weights": (1, 2, 50)})
    nb = p.neighbourhood("insertion")
    ev = CpuEvaluator().bind(p, nb)
    assert ev.parallel == (faster == "parallel") and ev.describe()["build"].startswith(
        "parallel build on one thread" if faster == "parallel" else "serial build")
    threads_seen = []
    evaluate = nb.evaluate
    monkeypatch.setattr(nb, "evaluate", lambda *a: threads_seen.append(numba.get_num_threads()) or evaluate(*a))
    before = numba.get_num_threads()
    ev.reset(p.random_solution(new_state(1)))
    ev.evaluate()
    assert threads_seen == [1 if faster == "parallel" else before] and numba.get_num_threads() == before
    monkeypatch.setattr(nb, "evaluate", evaluate)
    from lsbench.interfaces import Stop
    from lsbench.search.tabu import TabuSearch
    serial = CpuEvaluator().bind(p, nb)
    serial.parallel = False
    runs = [TabuSearch().run(p, nb, e, Stop(iterations=100), seed=3) for e in (ev, serial)]
    assert [t[::2] for t in runs[0].trajectory] == [t[::2] for t in runs[1].trajectory]
    assert len(runs[0].trajectory) >= 2
    assert list(runs[0].best_solution) == list(runs[1].best_solution)
    seconds.update(serial=PARALLEL_MIN_SECONDS / 2)
    monkeypatch.setattr(CpuEvaluator, "_evaluation_seconds",
                        lambda self, parallel: seconds["parallel" if parallel else "serial"])
    cheap = CpuEvaluator().bind(p, nb)
    assert not cheap.parallel and cheap.one_thread_parallel_s is None


@pytest.mark.parametrize("instance, neighbourhood", [("ta001", "insertion"), ("rnd-atsp-60-1", "2opt")])
def test_a_long_evaluation_runs_in_row_slices_with_the_same_deltas(instance, neighbourhood, monkeypatch):
    """An evaluation timed past SLICE_SECONDS runs as row slices of about that long (Ctrl-C is
    answered between them), every row once, in order, and gives the deltas of one whole call."""
    from lsbench import instances as registry
    import time

    from lsbench import neighborhoods
    from lsbench.backends import cpu
    from lsbench.rng import new_state
    p = registry.load(instance)
    nb = p.neighbourhood(neighbourhood)
    whole = cpu.CpuEvaluator().bind(p, nb)
    assert whole.slicer is None  # (a small instance: one call)
    for module in (cpu, neighborhoods):
        monkeypatch.setattr(module, "SLICE_SECONDS", 0.02)
    monkeypatch.setattr(cpu.CpuEvaluator, "_evaluation_seconds", lambda self, parallel: 0.02 * 7.5)
    starts = nb.row_starts()
    for sliced in (cpu.CpuEvaluator().bind(p, nb), cpu.CpuParallelEvaluator().bind(p, nb)):
        solution = p.random_solution(new_state(5))
        whole.reset(solution)
        want = whole.evaluate().copy()
        calls = []
        evaluate_rows = nb.evaluate_rows

        def slow(s, lo, hi, *a):  # an evaluation of 0.15 s, each row's share of it
            calls.append((lo, hi))
            time.sleep(0.15 * (starts[hi] - starts[lo]) / nb.size)
            return evaluate_rows(s, lo, hi, *a)
        monkeypatch.setattr(nb, "evaluate_rows", slow)
        sliced.reset(solution)
        assert np.array_equal(want, sliced.evaluate())
        monkeypatch.setattr(nb, "evaluate_rows", evaluate_rows)
        assert len(calls) >= 5 and calls[0][0] == 0 and calls[-1][1] == len(starts) - 1
        assert all(starts[hi] - starts[lo] <= 2 * nb.size / 7.5 or hi - lo == 1 for lo, hi in calls)
        assert all(a[1] == b[0] and a[0] < a[1] for a, b in zip(calls, calls[1:]))


@pytest.mark.parametrize("algorithm", ["tabu", "hc"])
def test_a_time_budget_ends_inside_a_sliced_evaluation_and_that_iteration_does_not_count(algorithm, monkeypatch):
    """An evaluation in row slices past the run's time budget is abandoned between slices
    (OutOfTime): the search ends at once with the iterations before it."""
    import time as clock

    from lsbench import instances as registry
    from lsbench.backends.cpu import CpuEvaluator
    from lsbench.interfaces import OutOfTime, Stop
    from lsbench.neighborhoods import SLICE_SECONDS
    from lsbench.search.hill_climbing import HillClimbing
    from lsbench.search.tabu import TabuSearch
    p = registry.load("ta001")
    nb = p.neighbourhood("insertion")
    monkeypatch.setattr(CpuEvaluator, "_evaluation_seconds", lambda self, parallel: SLICE_SECONDS * 8)
    ev = CpuEvaluator().bind(p, nb)
    evaluate_rows = nb.evaluate_rows
    monkeypatch.setattr(nb, "evaluate_rows", lambda *a, **k: clock.sleep(0.2) or evaluate_rows(*a, **k))
    search = TabuSearch() if algorithm == "tabu" else HillClimbing()
    started = clock.perf_counter()
    result = search.run(p, nb, ev, Stop(seconds=0.3), seed=2)  # (a whole evaluation: 8 slices of 0.2 s)
    assert result.iterations == 0 and result.evaluations == 0 and clock.perf_counter() - started < 1.2
    ev.deadline = clock.perf_counter() - 1
    with pytest.raises(OutOfTime):
        ev.evaluate()
    ev.deadline = None
    assert ev.evaluate() is ev.out  # (no budget: the whole evaluation)


def test_a_neighbourhood_of_millions_of_moves_is_timed_on_its_first_rows():
    """bind times an evaluation beyond PROBE_MOVES on 1, 4, 16, ... rows until they take
    TIMING_SECONDS, not on most of the neighbourhood (rnd-pfsp-5000x500: minutes a call)."""
    from lsbench import instances as registry
    from lsbench.backends.cpu import CpuEvaluator
    p = registry.load("rnd-pfsp-5000x500-1")
    nb = p.neighbourhood("insertion")
    calls = []
    evaluate_rows = nb.evaluate_rows
    nb.evaluate_rows = lambda solution, lo, hi, out, parallel=False: calls.append(hi - lo) or \
        evaluate_rows(solution, lo, hi, out, parallel)
    ev = CpuEvaluator().bind(p, nb)
    assert calls and max(calls) < 1000 and ev.serial_s > 1.0 and ev.slicer is not None


def test_compiled_rots_loop_equals_rots_over_the_evaluator_interface():
    """`cpu` runs Ro-TS compiled end to end; the evaluator path must follow the same trajectory."""
    from lsbench import instances as registry
    from lsbench.interfaces import COMPILED_LOOP
    from lsbench.registry import get_evaluator
    from lsbench.interfaces import Stop
    from lsbench.search.tabu import RobustTabuSearch
    p = registry.load("tai25a")
    nb = p.neighbourhood()
    out = []
    for backend in ("cpu", "cpu-parallel"):
        ev = get_evaluator(backend).bind(p, nb)
        assert (COMPILED_LOOP in ev.capabilities) == (backend == "cpu")
        out.append(RobustTabuSearch().run(p, nb, ev, Stop(iterations=2000), seed=11))
    assert [t[::2] for t in out[0].trajectory] == [t[::2] for t in out[1].trajectory]
    assert out[0].final_objective == out[1].final_objective
    assert out[0].iterations == out[1].iterations == 2000


def test_rots_cube_tenures_run_compiled_and_over_the_evaluator_alike_and_change_the_search():
    """tenure_cube = T: tenures floor(T u^3), the same draws in the compiled loop and over the
    evaluator interface; not the uniform tenures' search; not with tenure_min/tenure_max."""
    from lsbench import instances as registry
    from lsbench.errors import LsbenchError
    from lsbench.registry import get_evaluator
    from lsbench.interfaces import Stop
    from lsbench.search.tabu import RobustTabuSearch
    p = registry.load("tai25a")
    nb = p.neighbourhood()
    cube = RobustTabuSearch(tenure_cube="0.5n", aspiration="8n^2")
    assert cube.params(p)["tenure_cube"] == 12
    runs = [cube.run(p, nb, get_evaluator(backend).bind(p, nb), Stop(iterations=2000), seed=11)
            for backend in ("cpu", "cpu-parallel")]
    assert runs[0].trajectory and [t[::2] for t in runs[0].trajectory] == [t[::2] for t in runs[1].trajectory]
    assert runs[0].final_objective == runs[1].final_objective and runs[0].params["tenure_cube"] == 12
    uniform = RobustTabuSearch(aspiration="8n^2").run(p, nb, get_evaluator("cpu").bind(p, nb), Stop(iterations=2000),
                                                      seed=11)
    assert [t[::2] for t in uniform.trajectory] != [t[::2] for t in runs[0].trajectory]
    from lsbench.spec import build_spec
    with pytest.raises(LsbenchError, match=r"tenure_cube: draws the tenures itself.*\(rots\)"):
        build_spec("rnd-qap-12-1", algorithm="rots", iterations=5, params={"tenure_cube": "1n", "tenure_min": "2"})
    with pytest.raises(LsbenchError, match="tenure_cube=0.01n"):
        RobustTabuSearch(tenure_cube="0.01n").params(p)


def test_rots_parameters_relative_to_the_instance_size():
    """0.9n, 1.1n and 2n^2 are the defaults themselves; 0.1n is floor(0.1 n) on every instance."""
    def rots(instance, **params):
        rec = run(instance=instance, algorithm="rots", iterations=400, seed=5, algorithm_params=params)
        return {k: rec["params"][k] for k in ("tenure_min", "tenure_max", "aspiration")}, \
            [(it, obj) for it, _t, obj in rec["trajectory"]]
    default, walk = rots("tai25a")
    assert default == {"tenure_min": 22, "tenure_max": 27, "aspiration": 1250}
    assert rots("tai25a", tenure_min="0.9n", tenure_max="1.1n", aspiration="2n^2") == (default, walk)
    assert rots("tai25a", tenure_min="22", tenure_max=27, aspiration="1250") == (default, walk)
    short, short_walk = rots("tai25a", tenure_min="0.1n", tenure_max=".3n", aspiration="8n^2")
    assert short == {"tenure_min": 2, "tenure_max": 7, "aspiration": 5000} and short_walk != walk
    assert rots("tai12a", tenure_min="0.1n", tenure_max="0.3n")[0]["tenure_max"] == 3


def test_stop_criteria():
    rec = run(instance="tai12a", algorithm="rots", evaluations=660 * 10)
    assert rec["iterations"] == 100 and rec["evaluations"] == 6600
    rec = run(instance="tai25a", algorithm="rots", seconds=0.3)
    assert 0.3 <= rec["wall_s"] < 3
    rec = run(instance="tai12a", algorithm="rots", target=10**9)
    assert rec["iterations"] == 0


@pytest.mark.long
def test_cas_is_identical_on_cpu_and_cpu_parallel_and_improves():
    recs = [run(instance="tai25a", algorithm="cas", iterations=40000, seed=2, backend=b,
                algorithm_params={"ls_iterations": 100}) for b in ("cpu", "cpu-parallel")]
    assert recs[0]["trajectory"][-1][::2] == recs[1]["trajectory"][-1][::2]
    assert recs[0]["best_solution"] == recs[1]["best_solution"]
    assert recs[0]["params"]["generations"] >= 10
    # the colony beats its first generation of independent local searches
    assert recs[0]["best_objective"] < recs[0]["trajectory"][0][2] or recs[0]["gap_percent"] == 0


def test_cas_with_two_opt_local_search():
    rec = run(instance="tai25b", algorithm="cas", iterations=20000, seed=1, algorithm_params={"ls": "2opt"})
    assert rec["params"]["ants"] == 100 and rec["params"]["ls"] == "2opt"
    assert rec["gap_percent"] < 5


@pytest.mark.parametrize("ls", ["tabu", "2opt"])
def test_cas_local_searches_in_slices_of_one_ant_and_one_iteration_are_the_same_searches(monkeypatch, ls):
    """The ants' local searches run in calls of a fraction of a second (Ctrl-C and the time budget
    are answered between them: rnd-qap-1000-1 took minutes a call): calls of one ant, one
    iteration and a few delta rows each give the colony of one whole call, on both builds."""
    from lsbench.engines import cas
    kw = dict(instance="rnd-qap-20-3", algorithm="cas", iterations=600, seed=4,
              algorithm_params={"ants": 5, "ls_iterations": 12, "ls": ls})
    whole = [run(backend=b, **kw) for b in ("cpu", "cpu-parallel")]
    monkeypatch.setattr(cas, "SLICE_MOVES", 1)
    monkeypatch.setattr(cas, "ANT_STATE_BYTES", 1)
    assert cas.begin_calls(5, 20, 1, 1)[:3] == [(0, 1, (0, 1)), (0, 1, (1, 2)), (0, 1, (2, 3))]
    sliced = [run(backend=b, **kw) for b in ("cpu", "cpu-parallel")]
    for rec in whole[1:] + sliced:
        assert [(i, o) for i, _t, o in rec["trajectory"]] == [(i, o) for i, _t, o in whole[0]["trajectory"]]
        assert rec["best_solution"] == whole[0]["best_solution"] and rec["iterations"] == whole[0]["iterations"]
    assert whole[0]["params"]["generations"] >= 5 and len(whole[0]["trajectory"]) >= 2


def test_a_cas_time_budget_ends_inside_the_first_local_searches(monkeypatch, tmp_path, capsys):
    """A budget shorter than the first ants' local searches ends them where they are: the best so
    far is the record's, its iterations those that ran, and --replay says why it cannot replay it."""
    import time

    from lsbench.cli import main
    from lsbench.engines import cas
    monkeypatch.setattr(cas, "SLICE_MOVES", 2000)
    slow = cas.ants_steps

    def steps(*args):  # each call takes 20 ms: the 0.3 s budget ends the first local searches
        time.sleep(0.02)
        return slow(*args)
    monkeypatch.setattr(cas, "ants_steps", steps)
    out = tmp_path / "cut.json"
    assert main(["run", "--instance", "rnd-qap-30-1", "--algorithm", "cas", "--seconds", "0.3", "--warmup", "0",
                 "--out", str(out), "--quiet"]) == 0
    rec = json.loads(out.read_text())
    assert rec["params"]["first_searches_cut"] and rec["params"]["generations"] == 0
    assert 0 < rec["iterations"] < 30 * 480 and rec["wall_s"] < 1.0
    assert main(["verify", str(out)]) == 0
    assert main(["verify", "--replay", str(out)]) == 2
    assert "the time budget ended its first local searches part way" in capsys.readouterr().err


# ------------------------------------------------------------------ iterated greedy (PFSP makespan)
def test_best_insertion_is_the_first_best_place_by_brute_force():
    from lsbench.problems.pfsp import PFSP
    from lsbench.problems.pfsp import best_insertion, schedule_objectives
    g = np.random.default_rng(3)
    for trial in range(30):
        n, m = int(g.integers(2, 12)), int(g.integers(1, 6))
        p = PFSP(g.integers(1, 4 if trial % 2 else 99, (m, n)), "t")  # small times: many ties
        seq = g.permutation(n)
        job, part = seq[-1], seq[:-1].copy()
        buf = np.zeros(n, dtype=np.int64)
        buf[:n - 1] = part
        e = np.empty((n + 1, m), dtype=np.int64)
        q = np.empty((n + 1, m), dtype=np.int64)
        place, cmax = best_insertion(p.pt, buf, n - 1, job, e, q)
        spans = [schedule_objectives(p.pt, p.due, np.insert(part, k, job))[0] for k in range(n)]
        assert cmax == min(spans) and place == spans.index(min(spans))


def test_neh_is_a_permutation_with_its_makespan_and_beats_the_total_time_order():
    from lsbench.instances import load
    from lsbench.engines.iterated_greedy import neh
    p = load("ta001", "pfsp")
    seq, cmax, cut = neh(p.pt)
    p.check_solution(seq)
    assert cmax == p.exact_objective(seq)
    assert cmax < p.exact_objective(np.argsort(-p.pt.sum(axis=1), kind="stable"))
    assert not cut


def test_iterated_greedy_searches_are_independent_and_equal_on_one_core_and_all_cores():
    from lsbench.instances import load
    from lsbench.registry import ALGORITHMS
    from lsbench.interfaces import Stop
    from lsbench.engines.iterated_greedy import IteratedGreedyEngine, ParallelIteratedGreedyEngine
    p = load("rnd-pfsp-20x5-5", "pfsp")
    nb = p.neighbourhood("insertion")

    def outcome(results):
        return [(r.seed, r.best_objective, list(r.best_solution), r.iterations, r.evaluations, r.final_objective,
                 [t[::2] for t in r.trajectory]) for r in results]
    together = outcome(IteratedGreedyEngine(p, nb, ALGORITHMS["ig"](), {}).run([4, 5, 6], Stop(iterations=30)))
    assert together == outcome(ParallelIteratedGreedyEngine(p, nb, ALGORITHMS["ig"](), {}).run([4, 5, 6],
                                                                                              Stop(iterations=30)))
    alone = [outcome(IteratedGreedyEngine(p, nb, ALGORITHMS["ig"](), {}).run([s], Stop(iterations=30)))[0]
             for s in (4, 5, 6)]
    assert together == alone
    assert len({repr(t[1:]) for t in together}) == 3  # three seeds, three different searches
    for seed, best, sol, its, _evals, _final, traj in together:
        assert its == 30 and p.exact_objective(sol) == best == traj[-1][1]
        assert all(a[1] > b[1] for a, b in zip(traj, traj[1:]))


def test_iterated_greedy_in_calls_of_one_insertion_is_the_same_search(monkeypatch):
    """NEH and the local searches run in calls of about SLICE_CELLS schedule cells (Ctrl-C and the
    time budget are answered between them: on rnd-pfsp-5000x500-1 one call took 45 s): calls of
    one insertion each give the searches of whole calls, restarts and both builds included."""
    from lsbench.engines import iterated_greedy as ig
    from lsbench.instances import load
    from lsbench.interfaces import Stop
    from lsbench.registry import ALGORITHMS
    p = load("rnd-pfsp-20x5-5", "pfsp")
    nb = p.neighbourhood("insertion")

    def outcome(cls):
        results = cls(p, nb, ALGORITHMS["ig"](restart=10, elite=2), {}).run([4, 5, 6], Stop(iterations=40))
        return [(r.best_objective, list(r.best_solution), r.iterations, r.evaluations, r.final_objective,
                 [t[::2] for t in r.trajectory]) for r in results]
    whole, (seq, cost, _cut) = outcome(ig.IteratedGreedyEngine), ig.neh(p.pt)
    monkeypatch.setattr(ig, "SLICE_CELLS", 1)
    assert outcome(ig.IteratedGreedyEngine) == outcome(ig.ParallelIteratedGreedyEngine) == whole
    sliced_seq, sliced_cost, cut = ig.neh(p.pt)
    assert list(sliced_seq) == list(seq) and sliced_cost == cost and not cut


def test_an_iterated_greedy_time_budget_ends_inside_neh_or_the_first_local_searches(monkeypatch, tmp_path):
    """A budget shorter than NEH and the start's local search ends them where they are: the jobs NEH
    has not placed go at the end, the local search keeps its last sequence; the record verifies."""
    import time

    from lsbench.cli import main
    from lsbench.engines import iterated_greedy as ig
    monkeypatch.setattr(ig, "SLICE_CELLS", 200)
    for pause, phase in ((0.02, "neh_steps"), (0.01, "ig_batch")):
        slow = getattr(ig, phase)

        def slowed(*args, slow=slow, pause=pause):  # each call takes 10-20 ms: the 0.3 s budget ends inside
            time.sleep(pause)
            return slow(*args)
        monkeypatch.setattr(ig, phase, slowed)
        out = tmp_path / f"{phase}.json"
        assert main(["run", "--problem", "pfsp", "--instance", "rnd-pfsp-60x5-1", "--algorithm", "ig", "--seconds",
                     "0.3", "--warmup", "0", "--out", str(out), "--quiet"]) == 0
        rec = json.loads(out.read_text())
        assert rec["params"]["first_searches_cut"] and rec["iterations"] == 0 and rec["wall_s"] < 1.0, rec
        assert main(["verify", str(out)]) == 0
        monkeypatch.setattr(ig, phase, slow)


def test_iterated_greedy_at_zero_temperature_never_accepts_worse():
    from lsbench.instances import load
    from lsbench.registry import ALGORITHMS
    from lsbench.interfaces import Stop
    from lsbench.engines.iterated_greedy import IteratedGreedyEngine, neh
    p = load("ta001", "pfsp")
    start = neh(p.pt)[1]
    for r in IteratedGreedyEngine(p, p.neighbourhood("insertion"), ALGORITHMS["ig"](temperature=0.0), {}).run(
            [1, 2], Stop(iterations=40)):
        assert r.final_objective == r.best_objective < start


def test_iterated_greedy_run_records_and_reaches_ta001_within_half_a_percent(tmp_path):
    out = tmp_path / "ig.json"
    rec = run(instance="ta001", algorithm="ig", backend="cpu-parallel", iterations=300, searches=2, out=str(out))
    assert json.loads(out.read_text())["best_objective"] == rec["best_objective"] <= 1.005 * 1278
    assert rec["params"]["destruction"] == 4 and rec["backend_info"]["searches"] == 2
    assert [s["seed"] for s in rec["searches"]] == [1, 2]


def test_iterated_greedy_restarts_from_the_elite_and_repeats_itself():
    from lsbench.instances import load
    from lsbench.registry import ALGORITHMS
    from lsbench.interfaces import Stop
    from lsbench.engines.iterated_greedy import IteratedGreedyEngine, ParallelIteratedGreedyEngine
    p = load("ta021", "pfsp")
    nb = p.neighbourhood("insertion")
    runs = []
    for cls in (IteratedGreedyEngine, IteratedGreedyEngine, ParallelIteratedGreedyEngine):
        engine = cls(p, nb, ALGORITHMS["ig"](restart=20, elite=2), {})
        results = engine.run([1, 2, 3, 4], Stop(iterations=160))
        assert engine.describe()["restarts"] > 0
        runs.append([(r.best_objective, list(r.best_solution), r.final_objective, [t[::2] for t in r.trajectory])
                     for r in results])
        for r in results:
            assert p.exact_objective(r.best_solution) == r.best_objective == r.trajectory[-1][2]
    assert runs[0] == runs[1] == runs[2]


def test_uniform_crossover_keeps_what_the_parents_share_and_takes_the_rest_from_them_or_at_random():
    from lsbench.search.restarts import EliteRestarts, uniform_crossover
    g = np.random.default_rng(3)
    for n in (2, 5, 30, 100):
        a = g.permutation(n)
        b = a.copy()
        moved = g.choice(n, size=n // 2, replace=False)
        b[moved] = b[np.roll(moved, 1)]  # b agrees with a outside `moved`
        child = uniform_crossover(a, b, np.random.default_rng(n))
        assert sorted(child) == list(range(n))
        assert (child[a == b] == a[a == b]).all()
        assert np.array_equal(child, uniform_crossover(a, b, np.random.default_rng(n)))
    a, b = g.permutation(200), g.permutation(200)
    child = uniform_crossover(a, b, g)
    from_parents = (child == a) | (child == b)
    assert 0.5 < from_parents.mean() < 1.0  # mostly inherited, the clashes filled at random
    # a restart with crossover starts from a child of two different elite solutions
    sols = np.array([g.permutation(40) for _ in range(3)])
    policy = EliteRestarts(40, 3, stagnation=5, elite=2, strength=0.0, seed=1, crossover=True)
    [(search, start)] = policy.restarts(10, np.array([7, 5, 9]), sols, np.array([False, False, True]))[:1]
    parents = sols[[1, 0]]
    assert sorted(start) == list(range(40))
    assert ((start == parents[0]) | (start == parents[1])).mean() > 0.5
    assert not any(np.array_equal(start, s) for s in sols)


def test_elite_restarts_in_pools_draw_only_from_their_own_groups_elite():
    """pools = 3 over 6 searches: searches 2q and 2q + 1 restart from the better of their two bests
    (elite 1, no swaps); pools = K: each search from its own best; one pool: all from the best."""
    from lsbench.search.restarts import EliteRestarts
    bests = np.array([50, 10, 40, 30, 20, 60])
    sols = [np.roll(np.arange(8), k) for k in range(6)]

    def starts(pools):
        policy = EliteRestarts(8, 6, stagnation=5, elite=1, strength=0.0, seed=3, pools=pools)
        return {q: int(np.argmax([np.array_equal(start, s) for s in sols]))
                for q, start in policy.restarts(10, bests, sols, np.zeros(6, dtype=bool))}
    assert starts(3) == {0: 1, 1: 1, 2: 3, 3: 3, 4: 4, 5: 4}
    assert starts(6) == {q: q for q in range(6)}
    assert starts(1) == {q: 1 for q in range(6)}


def test_elite_restarts_merge_neighbouring_pools_level_by_level():
    """merge = 10 over pools {0, 1}, {2, 3}, {4, 5}: before iteration 10 each pool restarts from its
    own best; from 10 the first two pools are one (their best, search 1, for all four); from 20
    every search restarts from the best of all."""
    from lsbench.search.restarts import EliteRestarts
    bests = np.array([50, 10, 40, 30, 20, 60])
    sols = [np.roll(np.arange(8), k) for k in range(6)]

    def starts(iteration):
        policy = EliteRestarts(8, 6, stagnation=5, elite=1, strength=0.0, seed=3, pools=3, merge=10)
        return {q: int(np.argmax([np.array_equal(start, s) for s in sols]))
                for q, start in policy.restarts(iteration, bests, sols, np.zeros(6, dtype=bool))}
    assert starts(9) == {0: 1, 1: 1, 2: 3, 3: 3, 4: 4, 5: 4}
    assert starts(10) == {0: 1, 1: 1, 2: 1, 3: 1, 4: 4, 5: 4}
    assert starts(25) == {q: 1 for q in range(6)}


def test_elite_restarts_mix_pools_and_draw_the_swaps_from_a_range():
    """mix = 1: every restart is a crossover of its pool's best and another pool's best (what both
    share stays); a swap range [2, 10] on n = 60 gives restarts of different sizes, none beyond it."""
    from lsbench.search.restarts import EliteRestarts
    g = np.random.default_rng(5)
    n, K = 60, 6
    base = g.permutation(n)
    sols = []
    for _ in range(K):  # each differs from base in a few places, so any two share most positions
        s = base.copy()
        moved = g.choice(n, size=8, replace=False)
        s[moved] = s[np.roll(moved, 1)]
        sols.append(s)
    bests = np.array([5, 9, 7, 3, 8, 6])
    policy = EliteRestarts(n, K, stagnation=5, elite=1, strength=0.0, seed=2, pools=3, mix=1.0)
    for q, start in policy.restarts(10, bests, sols, np.zeros(K, dtype=bool)):
        own = sols[[0, 0, 3, 3, 5, 5][q]]  # pools {0, 1}, {2, 3}, {4, 5}: their bests 0, 3, 5
        others = [sols[b] for b in (0, 3, 5) if not np.array_equal(sols[b], own)]
        assert sorted(start) == list(range(n))
        assert any((start[own == o] == own[own == o]).all() and not np.array_equal(start, own) for o in others)
    sizes = set()
    policy = EliteRestarts(n, K, stagnation=5, elite=1, strength=2 / n, seed=2, pools=K, strength_max=10 / n)
    for it in range(10, 400, 10):
        for q, start in policy.restarts(it, bests, sols, np.zeros(K, dtype=bool)):
            moved = int((start != sols[q]).sum())
            assert moved <= 2 * 10
            sizes.add(moved)
    assert len(sizes) > 3 and max(sizes) > 2 * 2


def test_elite_restarts_walkers_restart_from_their_own_optimum_and_the_others_from_the_pool():
    """walk = 0.5 over pools {0, 1}, {2, 3}, {4, 5}: each pool's second member walks (from its own
    best since its last restart, perturbed); the first draws from its pool's elite, which counts the
    walker's best; walk = 0 has no walkers, walk = 1 only walkers."""
    from lsbench.search.restarts import EliteRestarts
    bests = np.array([50, 10, 40, 30, 20, 60])
    sols = [np.roll(np.arange(8), k) for k in range(6)]
    none = np.zeros(6, dtype=bool)

    def which(start):
        return int(np.argmax([np.array_equal(start, s) for s in sols]))
    policy = EliteRestarts(8, 6, stagnation=5, elite=1, strength=0.0, seed=3, pools=3, walk=0.5)
    assert policy.walker.tolist() == [False, True, False, True, False, True] and policy.forgets
    walks = policy.walks(10, sols, none)
    assert {q: which(s) for q, s in walks} == {1: 1, 3: 3, 5: 5}
    assert {q: which(s) for q, s in policy.restarts(10, bests, sols, none)} == {0: 1, 2: 3, 4: 4}
    assert policy.walks(12, sols, none) == [] and policy.stagnant(15, none).size == 6  # clocks reset at 10
    assert not EliteRestarts(8, 6, stagnation=5, elite=1, strength=0.0, seed=3, pools=3).walker.any()
    assert EliteRestarts(8, 6, stagnation=5, elite=1, strength=0.0, seed=3, pools=3, walk=1.0).walker.all()
    perturbed = EliteRestarts(8, 6, stagnation=5, elite=1, strength=0.5, seed=3, pools=6, walk=1.0)
    for q, start in perturbed.walks(10, sols, np.array([True] + [False] * 5)):
        assert q != 0 and sorted(start) == list(range(8)) and not np.array_equal(start, sols[q])


def test_elite_restarts_renew_stalled_pools_afresh_but_never_the_leader():
    """renew = 10: pools {0, 1}, {2, 3}, {4, 5}; at iteration 10 the two pools not holding the
    lowest best have not improved for 10 iterations and start afresh from random permutations
    (their stagnation clocks reset); a pool whose best moved, and the leader's, does not."""
    from lsbench.search.restarts import EliteRestarts
    policy = EliteRestarts(9, 6, stagnation=100, elite=1, strength=0.0, seed=4, pools=3, renew=10)
    bests = np.array([50, 40, 30, 20, 60, 70])
    none = np.zeros(6, dtype=bool)
    assert policy.renewals(0, bests, none) == []
    assert policy.renewals(5, bests, none) == []
    renewed = policy.renewals(10, bests, none)
    assert [q for q, _s in renewed] == [0, 1, 4, 5]
    assert all(sorted(s) == list(range(9)) for _q, s in renewed)
    assert policy.stagnant(100, none).tolist() == [2, 3]  # the renewed searches' clocks start again at 10
    fresh = np.array([90, 95, 30, 20, 80, 99])  # their bests after the fresh starts
    assert policy.renewals(15, fresh, none) == []
    fresh[0] = 10  # pool 0 now leads; pool 1 (searches 2, 3) stalls since 10
    assert [q for q, _s in policy.renewals(20, fresh, np.array([False, False, False, True, False, False]))] == [2]


def test_a_chunk_under_a_time_budget_ends_near_the_budget():
    """After one chunk has shown the pace, the next takes no more iterations than the budget's rest
    holds; without a time budget, or before any pace is known, the length is the doubling one."""
    from lsbench.interfaces import Stop
    from lsbench.search.common import ChunkLength
    chunks = ChunkLength(16, 1 << 12)
    assert chunks.next(Stop(seconds=3.0), 0, 10, elapsed=0.0) == 16
    chunks.took(0.01, 16)  # 0.625 ms an iteration, and the length doubles
    assert chunks.next(Stop(iterations=1000), 16, 10, elapsed=2.99) == 32
    assert chunks.next(Stop(seconds=3.0), 16, 10, elapsed=2.99) == 16  # 10 ms left: 16 iterations
    assert chunks.next(Stop(seconds=3.0), 16, 10, elapsed=3.5) == 1


def test_the_first_resident_chunk_shrinks_with_the_neighbourhood():
    from lsbench.gpu.runtime.chunks import first_chunk
    assert first_chunk(1056, 2392 * 2391 // 2) == 16  # pr2392: as before
    assert first_chunk(1056, 85900 * 85899 // 2) == 1  # pla85900
    assert first_chunk(132, 14051 * 14050 // 2) == 3
