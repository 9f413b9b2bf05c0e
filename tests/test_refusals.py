"""Nothing replaced, nothing aliased, nothing unchecked: the cases a newcomer's probe found (issue
57), each a command whose exit code, one error line and files left (none) are checked; and
tampered records of several algorithms that `lsbench verify` must refuse, each naming the field."""
import json
import os
import re
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import DATA, ROOT

ENV = {**os.environ, "LSBENCH_DATA": str(DATA), "NUMBA_ENABLE_CUDASIM": "0"}
TINY = ["--iterations", "5"]


def lsbench(*args, timeout=120):
    return subprocess.run([sys.executable, "-m", "lsbench", *map(str, args)], capture_output=True, text=True,
                          cwd=ROOT, env=ENV, timeout=timeout)


def in_process(capsys, *args):
    """`lsbench ARGS` in this process (no interpreter start): (exit code, stderr lines)."""
    from lsbench.cli import main
    try:
        code = main([str(a) for a in args])
    except SystemExit as e:
        code = e.code
    return code, capsys.readouterr().err.strip().splitlines()


def one_line(code, lines, *needles):
    assert code == 2 and len(lines) == 1 and lines[0].startswith("lsbench: error: "), (code, lines)
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])


def listing(folder):
    return sorted(p.name for p in folder.iterdir())


# -- outputs: never a rename over something that is not a regular file ---------------------------
@pytest.mark.parametrize("kind", ["fifo", "symlink to /dev/null", "symlink to a file", "directory"])
def test_an_output_that_is_not_a_regular_file_survives_unchanged(tmp_path, capsys, kind):
    out = tmp_path / "out.json"
    if kind == "fifo":
        os.mkfifo(out)
    elif kind == "directory":
        out.mkdir()
    else:
        target = "/dev/null" if kind == "symlink to /dev/null" else tmp_path / "real.json"
        if kind == "symlink to a file":
            target.write_text("{}")
        out.symlink_to(target)
    before = (listing(tmp_path), os.lstat(out).st_mode, os.readlink(out) if out.is_symlink() else None)
    code, lines = in_process(capsys, "run", "--instance", "rnd-qap-8-1", *TINY, "--out", out)
    one_line(code, lines, "--out", str(out))
    assert (listing(tmp_path), os.lstat(out).st_mode, os.readlink(out) if out.is_symlink() else None) == before
    assert os.stat("/dev/null").st_mode & 0o170000 == 0o020000  # still the character device


@pytest.mark.parametrize("args", [["run", "--instance", "rnd-qap-8-1", "--out", ""],
                                  ["multistart", "--instance", "rnd-qap-8-1", "--searches", "2", "--out-dir", ""],
                                  ["run", "--instance", "rnd-qap-8-1", "--data-dir", " "]],
                         ids=["run --out", "multistart --out-dir", "--data-dir"])
def test_an_empty_path_is_refused(tmp_path, capsys, monkeypatch, args):
    monkeypatch.chdir(tmp_path)
    code, lines = in_process(capsys, *args)
    one_line(code, lines, "an empty path")
    assert listing(tmp_path) == []


def test_a_second_writer_of_one_output_is_refused_while_the_first_holds_it(tmp_path, capsys):
    from lsbench.files import release, reserve
    out = tmp_path / "r.json"
    reserve(out)  # this process is the first writer
    try:
        r = lsbench("run", "--instance", "rnd-qap-8-1", *TINY, "--out", out)
        assert r.returncode == 2 and "another lsbench process is writing it" in r.stderr and not out.exists()
    finally:
        release(out)
    r = lsbench("run", "--instance", "rnd-qap-8-1", *TINY, "--out", out)
    assert r.returncode == 0 and out.exists()
    assert listing(tmp_path) == ["r.json"]  # the lock beside it went with its writer


# -- sizes, seeds and ranges, before anything is allocated ----------------------------------------
ALIASES_AND_SIZES = [
    (["multistart", "--seed", 2**64 - 2, "--searches", 4], "past 2^64 - 1"),
    (["run", "--seed", 2**64 - 2, "--searches", 4, "--backend", "gpu-resident", "--algorithm", "rots"], "past 2^64 - 1"),
    (["run", "--instance", "rnd-qap-12-18446744073709551617"], "past 2^64 - 1"),
    (["run", "--instance", "73-73-s18446744073709551617"], "past 2^64 - 1"),
    (["run", "--instance", "rnd-qap-1000000-1"], "range [2, 1000]"),
    (["run", "--instance", "rnd-qap-1-1"], "range [2, 1000]"),
    (["run", "--instance", "weierstrass-100000000"], "range [1, 100000]"),
    (["run", "--instance", "rnd-pfsp-100000x100000-1"], "range [2, 5000]"),
    (["run", "--instance", "rnd-atsp-20000-1"], "range [3, 1000]"),
    (["run", "--instance", "0-5"], "range [1, 10000]"),
    (["run", "--instance", "10000-10000"], "MiB"),
    (["multistart", "--searches", 10**11], "--searches"),
]


@pytest.mark.parametrize("args, needle", ALIASES_AND_SIZES, ids=[" ".join(map(str, a[1:3])) for a, _ in ALIASES_AND_SIZES])
def test_sizes_and_seeds_past_their_ranges_are_one_line_and_leave_nothing(tmp_path, capsys, args, needle):
    command, rest = args[0], list(args[1:])
    if "--instance" not in rest:
        rest += ["--instance", "rnd-qap-8-1"]
    out = ["--out-dir", tmp_path / "ms"] if command == "multistart" else ["--out", tmp_path / "r.json"]
    code, lines = in_process(capsys, command, *rest, *TINY, *out)
    one_line(code, lines, needle)
    assert listing(tmp_path) == []


# -- argparse's errors in the one-line form ------------------------------------------------------
@pytest.mark.parametrize("args, needle", [
    (["run"], "the following arguments are required: --instance"),
    (["run", "--instance", "tai12a", "--iterations", "x"], "invalid int value"),
    (["frobnicate"], "invalid choice"),
    (["multistart", "--instance", "tai12a", "--out-dir", "d"], "--searches"),
    (["export", "x.parquet", "--format", "pdf", "--out", "y"], "invalid choice"),
    (["run", "--instance", "tai12a", "--no-such-option"], "unrecognized arguments"),
], ids=["missing", "not an int", "subcommand", "multistart missing", "choice", "unknown option"])
def test_command_line_mistakes_are_one_line(capsys, args, needle):
    code, lines = in_process(capsys, *args)
    one_line(code, lines, needle)


# -- verify re-derives what a record claims --------------------------------------------------------
@pytest.fixture(scope="module")
def records(tmp_path_factory):
    """Real records of a permutation search, a Pareto search, a real-valued one, the cunning ant
    system, the iterated greedy, random sampling, and on a simulated GPU several resident searches in
    one run and a sampling of one block."""
    folder = tmp_path_factory.mktemp("records")
    runs = {"tabu": ["--instance", "rnd-qap-12-3", "--algorithm", "tabu", "--iterations", "60"],
            "pls": ["--problem", "pfsp", "--instance", "rnd-pfsp-8x3-2", "--algorithm", "pls", "--param",
                    "objective=three", "--iterations", "30"],
            "weierstrass": ["--instance", "weierstrass-2", "--algorithm", "tabu", "--iterations", "30"],
            "cas": ["--instance", "rnd-qap-20-3", "--algorithm", "cas", "--param", "ants=4", "--param",
                    "ls_iterations=10", "--iterations", "400"],  # (ten generations, four improvements)
            "sample": ["--problem", "pfsp", "--instance", "rnd-pfsp-8x3-2", "--algorithm", "sample", "--iterations",
                       "200"],
            "ig": ["--problem", "pfsp", "--instance", "rnd-pfsp-8x3-2", "--algorithm", "ig", "--iterations", "20"],
            "several": ["--instance", "rnd-qap-12-3", "--algorithm", "rots", "--backend", "gpu-resident",
                        "--searches", "3", "--iterations", "12"],
            "sample-gpu": ["--problem", "pfsp", "--instance", "rnd-pfsp-8x3-2", "--algorithm", "sample", "--backend",
                           "gpu", "--param", "block=4", "--iterations", "40"]}
    out = {}
    for name, args in runs.items():
        out[name] = folder / f"{name}.json"
        env = {**ENV, "NUMBA_ENABLE_CUDASIM": "1"} if name in ("several", "sample-gpu") else ENV  # simulated GPU
        r = subprocess.run([sys.executable, "-m", "lsbench", "run", *args, "--quiet", "--out", str(out[name])],
                           capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)
        assert r.returncode == 0, r.stderr
    # islands in a ring: epochs of 20 iterations, each island's later epochs start from an elite
    r = subprocess.run([sys.executable, "-m", "lsbench", "multistart", "--via", "local", "--searches", "2", "--seed",
                        "1", "--instance", "rnd-qap-12-3", "--algorithm", "tabu", "--iterations", "60",
                        "--exchange-every", "20", "--out-dir", str(folder / "islands")],
                       capture_output=True, text=True, cwd=ROOT, env=ENV, timeout=300)
    assert r.returncode == 0, r.stderr
    out["island"] = folder / "islands" / "seed-2.json"
    return {name: json.loads(path.read_text()) for name, path in out.items()}


def _first_int(solution, value):
    return [value] + solution[1:]


TAMPERING = [
    ("tabu", lambda r: {**r, "best_solution": _first_int(r["best_solution"], r["best_solution"][0] + 0.5)}, "integers"),
    ("tabu", lambda r: {**r, "best_solution": _first_int(r["best_solution"], float(r["best_solution"][0]))},
     "integers"),
    ("tabu", lambda r: {**r, "instance": "rnd-qap-12-4"}, "instance_sha256"),
    ("tabu", lambda r: {**r, "instance": "no-such-instance"}, "unknown instance"),
    ("tabu", lambda r: {**r, "final_objective": r["best_objective"] - 1}, "final_objective"),
    ("tabu", lambda r: {**r, "seed": 1.5}, "seed"),
    ("tabu", lambda r: {**r, "seed": 2**64}, "seed"),
    ("tabu", lambda r: {**r, "best_objective": r["best_objective"] - 1}, "objective"),
    ("tabu", lambda r: {**r, "algorithm": "sa"}, "unknown algorithm"),
    ("pls", lambda r: {k: v for k, v in r.items() if k != "front"}, "front"),
    ("pls", lambda r: {**r, "objectives": {**r["objectives"], "tardiness": r["objectives"]["tardiness"] + 1}},
     "objectives"),
    ("pls", lambda r: {**r, "front": [{**r["front"][0], "objectives": [v + 1 for v in r["front"][0]["objectives"]]}]
                       + r["front"][1:]}, "front point"),
    ("weierstrass", lambda r: {**r, "best_solution": ["x"] + r["best_solution"][1:]}, "finite numbers"),
    ("cas", lambda r: {**r, "best_solution": _first_int(r["best_solution"], r["best_solution"][1])},
     "best_solution: not a permutation"),
    ("cas", lambda r: {**r, "best_objective": r["best_objective"] - 2, "final_objective": r["best_objective"] - 2},
     "best_objective"),
    ("ig", lambda r: {**r, "best_objective": r["best_objective"] + 1}, "best_objective"),
    ("several", lambda r: {**r, "searches": [{**e, "best_objective": e["best_objective"] - 1} if e["seed"] != r["best_seed"]
                                             else e for e in r["searches"]]}, "best_objective"),
    ("several", lambda r: {**r, "best_seed": next(e["seed"] for e in r["searches"] if e["seed"] != r["best_seed"])},
     "best_seed"),
    ("several", lambda r: {**r, "searches": r["searches"][:2]}, "seeds"),
    ("several", lambda r: {**r, "searches": [{**e, "seed": r["seed"]} for e in r["searches"]]}, "seeds"),
    ("several", lambda r: {**r, "aggregate_iterations": r["aggregate_iterations"] + 1}, "aggregate_iterations"),
    ("several", lambda r: {**r, "final_objective": r["final_objective"] + 1}, "final_objective"),
    # issue 88's edits that every solution re-check accepts: the schema and the fields' agreement catch them
    ("tabu", lambda r: {**r, "algorithm": "hc"}, "algorithm 'hc', but run_spec says 'tabu'"),
    ("tabu", lambda r: {**r, "backend": "quantum", "run_spec": {**r["run_spec"], "backend": "quantum"}},
     "unknown backend 'quantum'"),
    ("tabu", lambda r: {**r, "backend": "gpu"}, "backend 'gpu', but run_spec says 'cpu'"),
    ("tabu", lambda r: {**r, "iterations_per_s": 1e12}, "iterations_per_s 1000000000000.0"),
    ("tabu", lambda r: {**r, "wall_s": -5}, "wall_s -5 is not a non-negative number"),
    ("tabu", lambda r: {**r, "wall_s": "fast"}, "wall_s 'fast'"),
    ("tabu", lambda r: {**r, "iterations": r["iterations"] * 10, "evaluations": r["evaluations"] * 10,
                        "iterations_per_s": r["iterations_per_s"] * 10}, "past run_spec's stop at 60"),
    ("tabu", lambda r: {**r, "trajectory": [[r["trajectory"][0][0], -100, r["trajectory"][0][2]]]
                        + r["trajectory"][1:]}, "seconds >= 0"),
    ("tabu", lambda r: {**r, "params": "x"}, "params is not an object"),
    ("tabu", lambda r: {**r, "run_spec": "tabu"}, "run_spec is not the object"),
    ("tabu", lambda r: {**r, "run_spec": {**r["run_spec"], "problem_params": {"colour": 3}}},
     "problem_params colour: not parameters of qap"),
    ("tabu", lambda r: {**r, "iterations": "60"}, "iterations '60' is not a non-negative integer"),
]


@pytest.mark.xdist_group("records")  # one test process makes the records (three runs), not each
@pytest.mark.parametrize("kind, tamper, needle", TAMPERING, ids=[f"{k}-{n}-{i}" for i, (k, _t, n) in enumerate(TAMPERING)])
def test_verify_refuses_a_tampered_record_naming_the_field(tmp_path, capsys, records, kind, tamper, needle):
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_text(json.dumps(records[kind]))
    bad.write_text(json.dumps(tamper(records[kind])))
    code, lines = in_process(capsys, "verify", good)
    assert code in (0, None), lines
    code, lines = in_process(capsys, "verify", bad)
    one_line(code, lines, str(bad), needle)


REPLAY_TAMPERING = [  # edits plain verify cannot see (every solution and objective still re-checks)
    ("tabu", lambda r: {**r, "seed": r["seed"] + 1, "run_spec": {**r["run_spec"], "seed": r["seed"] + 1}},
     "trajectory differs from the replayed search"),
    ("tabu", lambda r: {**r, "algorithm": "hc", "run_spec": {**r["run_spec"], "algorithm": "hc"}},
     "trajectory differs"),
    ("tabu", lambda r: {**r, "iterations": r["iterations"] * 10, "evaluations": r["evaluations"] * 10,
                        "iterations_per_s": r["iterations_per_s"] * 10,
                        "run_spec": {**r["run_spec"], "stop": {"iterations": r["iterations"] * 10}}},
     "recorded none, replayed"),  # (the ten times longer search improves past the recorded end)
    ("tabu", lambda r: {**r, "params": {**r["params"], "tenure_max": 3},
                        "run_spec": {**r["run_spec"], "algorithm_params": {"tenure_min": 1, "tenure_max": 3}}},
     "trajectory differs"),
    ("ig", lambda r: {**r, "evaluations": 1}, "evaluations 1, but the replayed search made"),
    ("pls", lambda r: {**r, "front": r["front"][:-1]}, "to a different front of"),  # a front point dropped
    ("pls", lambda r: {**r, "archive_sizes": [[it, size + (k == 2)] for k, (it, size) in enumerate(r["archive_sizes"])]},
     "the archive differs from the replayed search"),
    ("pls", lambda r: {**r, "seed": r["seed"] + 1, "run_spec": {**r["run_spec"], "seed": r["seed"] + 1}},
     "differs from the replayed search"),
    ("island", lambda r: {**r, "seed": r["seed"] + 1, "run_spec": {**r["run_spec"], "seed": r["seed"] + 1}},
     "trajectory differs from the replayed search"),
    ("cas", lambda r: {**r, "seed": r["seed"] + 1, "run_spec": {**r["run_spec"], "seed": r["seed"] + 1}},
     "trajectory differs from the replayed search"),
    ("cas", lambda r: {**r, "params": {**r["params"], "rho": 0.9},
                       "run_spec": {**r["run_spec"], "algorithm_params": {"ants": 4, "ls_iterations": 10, "rho": 0.9}}},
     "trajectory differs"),
    ("sample", lambda r: {**r, "seed": r["seed"] + 1, "run_spec": {**r["run_spec"], "seed": r["seed"] + 1}},
     "trajectory differs from the replayed search"),
]


@pytest.mark.xdist_group("records")
def test_a_slow_runs_rounded_rate_verifies_and_searches_sharing_elites_are_not_replayed_alone(tmp_path, capsys,
                                                                                             records):
    """A rate under 1 it/s is recorded to 3 decimals (20 iterations in 203.2 s: 0.098) and still
    agrees with its counts; a record whose searches restart from each other's elites is refused
    by --replay with the reason, not a wrong 'trajectory differs'."""
    from lsbench.record import rate
    slow = {**records["tabu"], "wall_s": 203.223019}
    slow["iterations_per_s"] = rate(slow["iterations"], slow["wall_s"])
    path = tmp_path / "slow.json"
    path.write_text(json.dumps(slow))
    code, lines = in_process(capsys, "verify", path)
    assert code in (0, None), lines
    shared = {**records["several"], "params": {**records["several"]["params"], "restart": 100}}
    path = tmp_path / "shared.json"
    path.write_text(json.dumps(shared))
    code, lines = in_process(capsys, "verify", "--replay", path)
    one_line(code, lines, "restart from each other's elite solutions")


@pytest.mark.xdist_group("records")
@pytest.mark.parametrize("kind, tamper, needle", REPLAY_TAMPERING,
                         ids=[f"{k}-{i}" for i, (k, _t, _n) in enumerate(REPLAY_TAMPERING)])
def test_verify_replay_runs_the_search_again_and_refuses_what_it_does_not_reproduce(tmp_path, capsys, records, kind,
                                                                                     tamper, needle):
    """Issue 88: `verify --replay` runs each search again on the CPU from the record's own spec
    and seed; an untouched record passes (a GPU record too: the same trajectory on every backend),
    an edited one that every from-scratch check accepts is refused in one line."""
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_text(json.dumps(records[kind]))
    bad.write_text(json.dumps(tamper(records[kind])))
    code, lines = in_process(capsys, "verify", "--replay", good)
    assert code in (0, None), lines
    code, lines = in_process(capsys, "verify", bad)
    assert code in (0, None), lines  # (what the plain checks cannot see)
    code, lines = in_process(capsys, "verify", "--replay", bad)
    one_line(code, lines, str(bad), needle)


def test_a_search_that_ran_no_iteration_replays_as_none(tmp_path, capsys):
    """A budget that ends inside the first evaluation leaves a record of 0 iterations (its start):
    the replay runs 0 iterations too (it ran one, and said the record was wrong)."""
    out = tmp_path / "zero.json"
    code, lines = in_process(capsys, "run", "--instance", "rnd-qap-12-3", "--iterations", "0", "--quiet",
                             "--warmup", "0", "--out", out)
    assert code in (0, None), lines
    from lsbench.cli import main
    assert main(["verify", "--replay", str(out)]) == 0
    assert "1 search replayed on the CPU" in capsys.readouterr().out


@pytest.mark.xdist_group("records")
def test_an_islands_record_verifies_against_its_whole_budget_and_replays_its_first_epoch(tmp_path, capsys, records):
    """An island ran 3 epochs of 20 iterations (60 in all, run_spec's stop); from the end of its
    first epoch it starts from ring elites, so --replay runs its own seed up to there and says so."""
    island = records["island"]
    assert island["iterations"] == island["run_spec"]["stop"]["iterations"] == 60
    assert island["run_spec"]["seed"] == island["seed"] == 2
    path = tmp_path / "island.json"
    path.write_text(json.dumps(island))
    from lsbench.cli import main
    assert main(["verify", "--replay", str(path)]) == 0
    assert "1 search replayed on the CPU up to iteration 19, where another island's solution entered" in \
        capsys.readouterr().out


@pytest.mark.xdist_group("records")
def test_verify_replay_reproduces_each_search_of_a_gpu_record_on_the_cpu(tmp_path, capsys, records):
    good = tmp_path / "several.json"
    good.write_text(json.dumps(records["several"]))
    from lsbench.cli import main
    assert main(["verify", "--replay", str(good)]) == 0
    assert "3 searches replayed on the CPU" in capsys.readouterr().out
    sampled = tmp_path / "sampled.json"
    sampled.write_text(json.dumps(records["sample-gpu"]))
    assert main(["verify", "--replay", str(sampled)]) == 0
    assert "1 search replayed on the CPU" in capsys.readouterr().out


# -- options that do not apply are refused, not ignored --------------------------------------------
@pytest.mark.parametrize("args, needle", [
    (["run", "--target", "1e30"], "64-bit"),
    (["run", "--param", "tenure=99999999999999999999"], "64-bit"),
    (["run", "--threads", "2"], "--threads"),
    (["multistart", "--searches", "2", "--migrants", "3"], "--migrants"),
    (["multistart", "--searches", "2", "--exchange-every", "5", "--migrants", "0"], "--migrants"),
    (["multistart", "--searches", "2", "--migrant-start", "cross"], "--migrant-start"),
    (["multistart", "--searches", "2", "--exchange-every", "5", "--migrant-start", "cross"], "live islands"),
    (["run", "--backend", "grid", "--workers", "2", "--param", "workers=3"], "give one"),
    (["multistart", "--searches", "2", "--searches-per-gpu", "0"], "--searches-per-gpu"),
    (["run", "--instance", "rnd-pfsp-8x3-1", "--param", "weights=1,2,3"], "objective=three"),
    (["run", "--instance", "weierstrass-2", "--param", "neighbours=100000000000"], "--param neighbours"),
    (["run", "--param", "tenure=1", "--param", "tenure=2"], "--param tenure: given twice (1 and 2)"),
    (["run", "--instance", "weierstrass-2", "--param", "terms=5000"], "overflows float64 past k = 1022"),
    (["run", "--instance", "weierstrass-2", "--param", "terms=100000000"], "terms=100000000: must be <= 100000"),
    (["run", "--instance", "weierstrass-100000", "--param", "terms=1023"], "102,300,000 sines, at most 20,000,000"),
    (["run", "--algorithm", "cas", "--param", "ants=100000000"], "ants=100000000: must be <= 65536"),
    (["run", "--algorithm", "cas", "--param", "ls_iterations=1000000000"], "must be <= 10000000"),
    (["run", "--backend", "grid", "--param", "workers=100000"], "workers=100000: must be <= 4096"),
    (["run", "--backend", "grid", "--param", "workers=4096"], "a LocalCluster on this host's"),
], ids=["target", "tenure", "threads on cpu", "migrants without islands", "no migrants",
        "crossed migrants without islands", "crossed migrants on epoch islands", "workers twice",
        "a refusal after the output folder was made", "weights without objective=three", "neighbours 10^11",
        "a key twice", "terms past the floats", "terms 10^8", "terms x d past 2e7 sines", "ants 10^8", "ls_iterations 10^9", "workers 10^5",
        "more local workers than 8 a core"])
def test_values_past_their_range_and_options_that_do_not_apply_are_one_line(tmp_path, capsys, args, needle):
    out = ["--out-dir", tmp_path / "ms"] if args[0] == "multistart" else ["--out", tmp_path / "r.json"]
    instance = [] if "--instance" in args else ["--instance", "rnd-qap-8-1"]
    code, lines = in_process(capsys, *args, *instance, *TINY, *out)
    one_line(code, lines, needle)
    assert listing(tmp_path) == []


def test_describe_explains_a_combination_that_does_not_exist(capsys):
    code, lines = in_process(capsys, "describe", "--problem", "tsp", "--algorithm", "rots")
    one_line(code, lines, "defined for qap, not tsp")


@pytest.mark.parametrize("group, needle", [
    ({"seeds": -3}, "seeds"), ({"seeds": []}, "seeds"), ({"seeds": 1.5}, "seeds"), ({"instances": []}, "instances"),
    ({"backends": []}, "backends"), ({"seeds": 10**20}, "seeds: .* greater than the maximum of 100000"),
    ({"instances": ["rnd-qap-8-1"], "replicas": 10**12}, "replicas: .* greater than the maximum of 100000"),
], ids=["negative seeds", "no seeds", "fractional seeds", "no instances", "no backends",
        "seeds past what a workflow plans (it hung building the list)", "replicas past it"])
def test_a_workflow_that_plans_nothing_or_bad_seeds_fails_when_planned(group, needle):
    from lsbench.errors import LsbenchError
    from lsbench.workflow import plan_runs
    base = {"name": "g", "problem": "qap", "instances": ["rnd-qap-8-1"], "algorithm": "tabu", "backends": ["cpu"],
            "iterations": 5}
    with pytest.raises(LsbenchError, match=needle):
        plan_runs({"experiment": "x", "groups": [{**base, **group}]}, gpu_available=False)
    with pytest.raises(LsbenchError, match="groups: empty, give at least one"):
        plan_runs({"experiment": "x", "groups": []}, gpu_available=False)


# -- workflow configs: the schema (lsbench/workflow_config.py), one line naming the key ---------------
GROUP = {"name": "g", "problem": "qap", "instances": ["rnd-qap-8-1"], "algorithm": "tabu", "backends": ["cpu"],
         "iterations": 5}
CONFIG_CASES = {  # issue 88's cases: config -> the line's needle
    "no experiment": ({"groups": [GROUP]}, r"^workflow config: 'experiment' is missing$"),
    "group: for groups:": ({"experiment": "x", "group": [GROUP]}, r"unknown key\(s\) 'group'"),
    "escaping experiment": ({"experiment": "../../escape", "groups": [GROUP]}, r"experiment: '\.\./\.\./escape' is not a name"),
    "a backend twice": ({"experiment": "x", "groups": [{**GROUP, "backends": ["cpu", "cpu"]}]},
                        r"group g: backends: 'cpu' is named twice"),
    "a seed twice": ({"experiment": "x", "groups": [{**GROUP, "seeds": [1, 1]}]}, r"group g: seeds: an entry is repeated"),
    "two groups of a name": ({"experiment": "x", "groups": [GROUP, GROUP]}, r"groups: 'g' is named twice"),
    "a name with a space": ({"experiment": "x", "groups": [{**GROUP, "name": "my group"}]}, r"name: 'my group' is not a name"),
    "a name with a slash": ({"experiment": "x", "groups": [{**GROUP, "name": "a/b"}]}, r"name: 'a/b' is not a name"),
    "fractional replicas": ({"experiment": "x", "groups": [{**GROUP, "replicas": 2.5}]},
                            r"group g: replicas: 2\.5 is not of type 'integer'"),
    "negative replicas": ({"experiment": "x", "groups": [{**GROUP, "replicas": -1}]},
                          r"group g: replicas: -1 is less than the minimum of 1"),
    "replicas abc": ({"experiment": "x", "groups": [{**GROUP, "replicas": "abc"}]}, r"replicas: 'abc' is not of type"),
    "an unknown backend key": ({"experiment": "x", "groups": [{**GROUP, "backends": [{"name": "c", "backend": "cpu",
                                                                                       "colour": 1}]}]},
                               r"group g: backends\[0\]: unknown key\(s\) 'colour'"),
    "an unknown top-level key": ({"experiment": "x", "groups": [GROUP], "colour": 1}, r"unknown key\(s\) 'colour'"),
    "groups as a mapping": ({"experiment": "x", "groups": {"g": GROUP}}, r"groups: .* is not of type 'array'"),
    "params as a string": ({"experiment": "x", "groups": [{**GROUP, "params": "tenure=3"}]},
                           r"group g: params: 'tenure=3' is not of type 'object'"),
    "a missing published file": ({"experiment": "x", "groups": [{**GROUP, "published": {"file": "nope.csv"}}]},
                                 r"group g: published\.file: nope\.csv is not a file under"),
    "a target of no form": ({"experiment": "x", "groups": [{**GROUP, "target": "best"}]},
                            r"target: 'best' is not a number, bks or bks\+P%"),
}


@pytest.mark.parametrize("case", CONFIG_CASES)
def test_a_bad_workflow_config_is_refused_in_one_line_naming_the_key(case, tmp_path):
    from lsbench.errors import LsbenchError
    from lsbench.workflow import plan_runs
    config, needle = CONFIG_CASES[case]
    with pytest.raises(LsbenchError, match=needle) as refused:
        plan_runs(config, gpu_available=False, root=tmp_path)
    assert "\n" not in str(refused.value)


def test_snakemake_refuses_a_config_file_without_experiment_and_still_runs_the_default_with_config(tmp_path):
    """A config file is the whole experiment (no silent merge with default.yaml): one without
    `experiment` ends in one line and plans nothing; `--config` alone adjusts the main job."""
    import yaml
    config = tmp_path / "mine.yaml"
    config.write_text(yaml.safe_dump({"groups": [GROUP]}))
    env = {**os.environ, "LSBENCH_DATA": str(DATA)}
    snake = [sys.executable, "-m", "snakemake", "-s", str(ROOT / "Snakefile"), "-d", str(tmp_path), "-n"]
    r = subprocess.run([*snake, "--configfile", str(config)], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 2 and "lsbench: error: workflow config: 'experiment' is missing" in r.stderr.splitlines()
    assert not (tmp_path / "results").exists()
    # (shared_cores=true as the SLURM profile writes it: Snakemake passes the text 'true')
    r = subprocess.run([*snake, "--config", "scale=quick", "shared_cores=true"], capture_output=True, text=True,
                       env=env, timeout=300)
    assert r.returncode == 0 and "results/default/report.html" in r.stdout, r.stderr[-2000:]


def test_a_boolean_given_as_text_on_the_command_line_is_read_as_yaml_reads_it():
    """Snakemake's --config makes booleans of 'True' and 'False' only: 'false' must not be the
    true value a non-empty text is, and text no boolean is spelt as stays refused."""
    from lsbench.errors import LsbenchError
    from lsbench.workflow import plan_runs
    from lsbench.workflow_config import command_line_booleans
    config = {"experiment": "x", "groups": [GROUP]}
    for text, value in (("false", False), ("FALSE", False), ("no", False), ("true", True), ("on", True)):
        assert command_line_booleans({**config, "shared_cores": text})["shared_cores"] is value
    assert command_line_booleans({**config, "title": "yes"})["title"] == "yes"  # (a text key keeps its text)
    with pytest.raises(LsbenchError, match="shared_cores: 'maybe' is not of type 'boolean'"):
        plan_runs(command_line_booleans({**config, "shared_cores": "maybe"}), gpu_available=False)


# -- generative: any size, seed and value gives a verified record or one line ------------------------
FAMILIES = {"qap": "rnd-qap-{a}-{seed}", "pfsp": "rnd-pfsp-{a}x{b}-{seed}", "tsp": "rnd-atsp-{a}-{seed}",
            "ppp": "{a}-{b}-s{seed}", "weierstrass": "weierstrass-{a}"}
ALGORITHM_OF = {"qap": ["tabu", "rots", "hc"], "pfsp": ["tabu", "hc", "ig"], "tsp": ["tabu", "hc"],
                "ppp": ["tabu", "hc"], "weierstrass": ["tabu", "hc"]}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(family=st.sampled_from(sorted(FAMILIES)), data=st.data())
def test_random_sizes_seeds_and_values_give_a_verified_record_or_one_line(tmp_path, capsys, family, data):
    # sizes a test can run in seconds, or past every family's declared range (refused before any allocation)
    size = st.one_of(st.integers(-2, 60), st.integers(10**5 + 1, 10**7), st.just(2**64))
    name = FAMILIES[family].format(a=data.draw(size, "a"), b=data.draw(size, "b"),
                                   seed=data.draw(st.one_of(st.integers(0, 1000), st.integers(2**64 - 3, 2**64 + 3))))
    algorithm = data.draw(st.sampled_from(ALGORITHM_OF[family]), "algorithm")
    # small values, or values past the 64-bit integers (legal huge budgets would run for ever)
    value = data.draw(st.one_of(st.integers(-5, 50), st.integers(2**63, 2**64 + 5), st.just("x")), "value")
    key = data.draw(st.sampled_from(["tenure", "seed", "iterations", "searches"]), "key")
    args = ["run", "--instance", name, "--algorithm", algorithm, "--iterations", "3", "--quiet",
            "--warmup", "0"]
    args += {"tenure": ["--param", f"tenure={value}"], "seed": ["--seed", value], "iterations": ["--iterations", value],
             "searches": ["--searches", value]}[key]
    out = tmp_path / f"r{abs(hash(tuple(map(str, args))))}.json"
    code, lines = in_process(capsys, *args, "--out", out)
    if code == 0:
        code, lines = in_process(capsys, "verify", out)
        assert code in (0, None), lines
    else:
        one_line(code, lines)
        assert not out.exists()


def _instance_texts():
    """A small valid instance file of each readable kind (made here: no data directory needed)."""
    from lsbench.instances import taillard_text
    from lsbench.problems.pfsp import PFSP
    n = 6
    a = [[(3 * i + 5 * j) % 7 * (i != j) for j in range(n)] for i in range(n)]
    b = [[(i * j + 1) % 5 * (i != j) for j in range(n)] for i in range(n)]
    qap = f"{n}\n\n" + "\n".join(" ".join(map(str, r)) for r in a + [[]] + b) + "\n"
    tsp = ("NAME: t\nTYPE: TSP\nDIMENSION: 7\nEDGE_WEIGHT_TYPE: EUC_2D\nNODE_COORD_SECTION\n"
           + "".join(f"{k + 1} {(k * 37) % 11}.5 {(k * 53) % 13}\n" for k in range(7)) + "EOF\n")
    return {"qap": qap, "tsp": tsp, "pfsp": taillard_text(PFSP.taillard("t", 6, 3, 7))}


EDITS = [b"", b"-", b"x", b"\x00", b"1e999", b"nan", b" ", b"\n", b"99999999999999999999", b":", b"EOF", b"0", b"-7",
         b"2.5", b"\xff"]
OUT_KINDS = ["fresh", "a text file", "the instance", "an earlier record", "a directory", "under a file",
             "under a missing folder", "a summary table"]


def _snapshot(folder):
    return {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(problem=st.sampled_from(["qap", "tsp", "pfsp"]), edits=st.lists(
    st.tuples(st.floats(0, 1), st.sampled_from(EDITS)), max_size=3), cut=st.one_of(st.just(1.0), st.floats(0, 1)),
       out_kind=st.sampled_from(OUT_KINDS), algorithm=st.sampled_from(["tabu", "hc"]))
def test_any_instance_file_and_output_path_give_a_verified_record_or_one_line_and_no_file_changed(
        tmp_path_factory, capsys, problem, edits, cut, out_kind, algorithm):
    """Issue 88 item 7 over file contents and paths: a small instance file cut short and edited at
    random, and an --out that is new, a user's file, the instance itself, an earlier record, a
    folder, below a file or below a missing folder. Exit 0: the record verifies and no other file
    changed; otherwise one line, exit 2, and every file as it was."""
    folder = tmp_path_factory.mktemp("gen")
    raw = _instance_texts()[problem].encode()
    raw = raw[:max(1, int(len(raw) * cut))] if cut < 0.9 else raw
    for where, piece in edits:
        k = int(where * len(raw))
        raw = raw[:k] + piece + raw[k + 1:]
    instance = folder / f"mine.{problem}"
    instance.write_bytes(raw)
    (folder / "notes.txt").write_text("my notes\n")
    (folder / "runs.csv").write_text("instance,seconds\nx,1\n")
    out = {"fresh": folder / "r.json", "a text file": folder / "notes.txt", "the instance": instance,
           "an earlier record": folder / "earlier.json", "a directory": folder, "under a file":
           folder / "notes.txt" / "r.json", "under a missing folder": folder / "new" / "r.json",
           "a summary table": folder / "runs.csv"}[out_kind]
    if out_kind == "an earlier record":
        code, lines = in_process(capsys, "run", "--instance", "rnd-qap-8-1", "--iterations", "3", "--quiet",
                                 "--warmup", "0", "--out", out)
        assert code in (0, None), lines
    before = _snapshot(folder)
    code, lines = in_process(capsys, "run", "--problem", problem, "--instance", instance, "--algorithm", algorithm,
                             "--iterations", "3", "--quiet", "--warmup", "0", "--out", out)
    after = _snapshot(folder)
    if code in (0, None):
        assert out_kind in ("fresh", "an earlier record", "under a missing folder"), out_kind
        assert {p: v for p, v in after.items() if p != out} == {p: v for p, v in before.items() if p != out}
        code, lines = in_process(capsys, "verify", out)
        assert code in (0, None), lines
    else:
        one_line(code, lines)
        assert after == before


JUNK = st.one_of(st.none(), st.booleans(), st.integers(-3, 10**20), st.floats(allow_nan=True, allow_infinity=True),
                st.text(max_size=8), st.lists(st.integers(-2, 5), max_size=3),
                st.dictionaries(st.text(max_size=4), st.integers(-1, 3), max_size=2))
CONFIG_KEYS = ["experiment", "title", "scale", "groups", "shared_cores", "colour"]
GROUP_KEYS = ["name", "problem", "instances", "algorithm", "neighbourhood", "backends", "seeds", "iterations",
              "seconds", "target", "params", "replicas", "quick", "published", "colour"]
BACKEND_KEYS = ["name", "backend", "params", "ranks", "searches", "seeds", "sample", "colour"]


@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_random_workflow_configs_plan_runs_inside_their_folder_or_are_refused_in_one_line(data):
    """Any config shape (keys dropped, unknown keys, values of any type at any level): planning
    gives runs whose records go under results/EXPERIMENT/runs/, or one LsbenchError line; never
    another exception."""
    import copy

    from lsbench.errors import LsbenchError
    from lsbench.workflow import plan_runs
    backend = {"name": "par", "backend": "cpu-parallel"}
    group = {"name": "g", "problem": "qap", "instances": ["rnd-qap-8-1"], "algorithm": "tabu",
             "backends": ["cpu", backend], "iterations": 5, "seeds": 2}
    config = {"experiment": "x", "title": "t", "groups": [group]}
    for _ in range(data.draw(st.integers(1, 3), "mutations")):
        target, keys = data.draw(st.sampled_from([(config, CONFIG_KEYS), (group, GROUP_KEYS), (backend, BACKEND_KEYS)]),
                                 "where")
        key = data.draw(st.sampled_from(keys), "key")
        if data.draw(st.booleans(), "drop"):
            target.pop(key, None)
        else:
            target[key] = data.draw(JUNK, "value")
    try:
        runs = plan_runs(copy.deepcopy(config), gpu_available=False)
    except LsbenchError as refused:
        assert str(refused) and "\n" not in str(refused)
        return
    for run in runs:
        parts = run["path"].split("/")
        assert parts[:3] == ["results", config["experiment"], "runs"] and ".." not in parts and "" not in parts


def test_the_report_of_a_table_without_runs_says_so(tmp_path):
    """Only GPU rows, on a host without a GPU: the table is empty and the page says why."""
    sys.path.insert(0, str(ROOT / "workflows" / "scripts"))
    import report
    from lsbench.workflow import aggregate_records
    table = tmp_path / "runs.parquet"
    aggregate_records([], table)
    config = {"experiment": "gpu-only", "groups": [{"name": "g", "problem": "qap", "instances": ["rnd-qap-8-1"],
                                                    "algorithm": "tabu", "backends": ["gpu"]}]}
    page = report.write_report(table, tmp_path / "report.html", config, {"name": "no GPU on this host",
                                                                          "available": False}).read_text()
    assert "No run records: nothing in this experiment ran here (GPU: no GPU on this host)." in page


def test_run_help_lists_each_engine_once_with_its_algorithms_and_problems(capsys):
    """`run --help`: one section an engine, naming every algorithm and problem it runs once (the
    resident local search engine serves hill climbing and tabu search on every problem with a device
    adapter, tabu search on the problem's own kernel where that is faster)."""
    from lsbench.cli import main
    with pytest.raises(SystemExit) as done:
        main(["run", "--help"])
    assert done.value.code == 0
    labels = [line for line in capsys.readouterr().out.splitlines() if line.startswith("backend ")]
    assert len(labels) == len(set(labels))
    for label in labels:
        for part in label.split(":")[0].split("; "):
            names = [n.strip() for n in part.split(" on ")[-1].split(",")]
            assert len(names) == len(set(names)), label
    from lsbench.plugins import BUILTIN, registered
    plug_ins = set(registered("lsbench.problems")) - set(BUILTIN["lsbench.problems"])  # (e.g. the example's)
    own = [re.sub(rf", ({'|'.join(map(re.escape, plug_ins))})(?=[;:,])", "", label) if plug_ins else label
           for label in labels]
    assert "backend gpu-resident with --algorithm tabu on qap, pfsp, tsp, ppp; hc on qap, pfsp, tsp, ppp: the " \
        "whole search on the GPU (many searches at once for rots):" in own


# -- sampling (Bożejko's solution level): a fixed count of permutations, on the makespan ---------
@pytest.mark.parametrize("extra, needles", [
    (["--seconds", "1"], ["--algorithm sample", "--iterations N alone"]),
    (["--iterations", "5", "--target", "100"], ["--iterations N alone"]),
    (["--iterations", "0"], ["--iterations N alone (N >= 1)"]),
    (["--iterations", "5", "--param", "objective=flowtime"], ["makespan, not flowtime"]),
    (["--iterations", "5", "--backend", "cpu-parallel"], ["does not run on --backend cpu-parallel", "cpu, gpu"]),
])
def test_sampling_refuses_what_it_cannot_run_with_one_line_and_no_file(tmp_path, capsys, extra, needles):
    out = tmp_path / "s.json"
    code, lines = in_process(capsys, "run", "--problem", "pfsp", "--instance", "rnd-pfsp-9x4-2", "--algorithm",
                             "sample", *extra, "--out", out)
    one_line(code, lines, *needles)
    assert not out.exists()


def test_a_sampling_record_whose_evaluations_are_not_its_iterations_is_refused(tmp_path, capsys):
    out = tmp_path / "s.json"
    assert in_process(capsys, "run", "--problem", "pfsp", "--instance", "rnd-pfsp-9x4-2", "--algorithm", "sample",
                      "--iterations", "30", "--out", out, "--quiet")[0] == 0
    assert in_process(capsys, "verify", out)[0] == 0
    rec = json.loads(out.read_text())
    rec["evaluations"] = 30 * rec["neighbourhood_size"]
    out.write_text(json.dumps(rec))
    code, lines = in_process(capsys, "verify", out)
    one_line(code, lines, "evaluations", "one solution an iteration")


@pytest.mark.parametrize("launcher", [{"OMPI_COMM_WORLD_SIZE": "2"}, {"PMI_SIZE": "2"},
                                      {"SLURM_STEP_NUM_TASKS": "3"}])
@pytest.mark.parametrize("backend", ["cpu", "grid"])
def test_run_under_an_mpi_launch_of_several_ranks_refuses_rather_than_run_the_search_on_each(
        tmp_path, monkeypatch, capsys, launcher, backend):
    """`mpiexec -n 2 lsbench run --backend cpu` ran the whole search on both ranks, both writing and
    printing (issue 88); now each rank refuses, rank 0 says so in one line, nothing is written."""
    for name, value in launcher.items():
        monkeypatch.setenv(name, value)
    out = tmp_path / "x.json"
    code, lines = in_process(capsys, "run", "--instance", "rnd-pfsp-6x3-1", "--backend", backend, *TINY,
                             "--out", out)
    one_line(code, lines, f"--backend {backend}: this process is one of", "ranks of an MPI launch", "--backend cow")
    monkeypatch.setenv("OMPI_COMM_WORLD_RANK", "1")
    code, lines = in_process(capsys, "run", "--instance", "rnd-pfsp-6x3-1", "--backend", backend, *TINY,
                             "--out", out)
    assert code == 2 and lines == [] and listing(tmp_path) == []


DROPPED_CTRL_C = """
import os, signal, sys, time
from lsbench.interrupts import answering_ctrl_c, interrupted
signal.signal(signal.SIGINT, signal.default_int_handler)
try:
    with answering_ctrl_c():
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(1)
        except KeyboardInterrupt:
            pass  # dropped, as a callback from compiled code drops it
        sent = time.monotonic()
        time.sleep(30)
except KeyboardInterrupt:
    print(f"again after {time.monotonic() - sent:.2f} s", interrupted())
"""


def test_a_dropped_ctrl_c_is_raised_again_within_a_second():
    """A Ctrl-C that lands in a callback from compiled code (LLVM's while Numba compiles) is printed
    and dropped by Python: cas on rnd-qap-1000-1 then ran on for its whole budget. The CLI raises it
    again until a command has it."""
    r = subprocess.run([sys.executable, "-c", DROPPED_CTRL_C], capture_output=True, text=True, cwd=ROOT, env=ENV,
                       timeout=60)
    words = r.stdout.split()
    assert r.returncode == 0 and words[:2] == ["again", "after"] and words[-1] == "True", r.stdout + r.stderr
    assert float(words[2]) < 1.0


LEFT_RUNNING = """
import atexit, signal, sys, threading, time
from types import SimpleNamespace
from lsbench.interrupts import answering_ctrl_c, end_now_if_left_running
from lsbench.gpu.runtime import waits
waits.config = SimpleNamespace(ENABLE_CUDASIM=False)  # (a device's path: poll the event)
class Kernel:  # an event that never completes: a kernel of minutes
    def query(self):
        return False
atexit.register(lambda: print("exit-time clean-up ran"))
signal.signal(signal.SIGINT, signal.default_int_handler)  # (as a shell starts a command: a test worker may
signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})  # pass SIGINT on ignored, and lsbench keeps that)
main = threading.main_thread().ident
threading.Timer(0.5, lambda: signal.pthread_kill(main, signal.SIGINT)).start()
sent = time.monotonic() + 0.5
print("waiting", flush=True)
try:
    with answering_ctrl_c():
        waits.wait_for(event=Kernel())
except KeyboardInterrupt:
    print(f"raised after {time.monotonic() - sent:.2f} s", flush=True)
    end_now_if_left_running(130)
print("not ended")
"""


def test_a_ctrl_c_during_a_gpu_wait_ends_the_process_at_once():
    """A CUDA synchronisation held Ctrl-C until the kernel ended (a 3.3 s chunk of pla85900, a PPP
    3000-3000 iteration of minutes): the wait polls an event, a Ctrl-C raises within a poll, and the
    command ends the process without the exit-time clean-up (freeing device memory would wait for the
    kernel)."""
    try:
        r = subprocess.run([sys.executable, "-c", LEFT_RUNNING], capture_output=True, text=True, cwd=ROOT, env=ENV,
                           timeout=60)
    except subprocess.TimeoutExpired as e:  # (whether it reached the wait)
        pytest.fail(f"no end within 60 s; stdout {e.stdout!r}, stderr {(e.stderr or '')[-2000:]!r}")
    words = r.stdout.split()[1:]  # (after "waiting")
    assert r.returncode == 130 and words[:2] == ["raised", "after"] and float(words[2]) < 0.1, r.stdout + r.stderr
    assert "clean-up ran" not in r.stdout and "not ended" not in r.stdout


def test_move_costs_beyond_the_hosts_memory_are_one_error_line(monkeypatch):
    """pla85900's 2-opt on `cpu` (3.7 G move costs, 27.5 GiB) ended in numpy's MemoryError traceback
    on a host of 23 GB; it is one line naming the instance, the neighbourhood and the size."""
    from lsbench import instances as registry
    from lsbench.errors import LsbenchError
    from lsbench.registry import get_evaluator
    p = registry.load("rnd-atsp-20-1")
    nb = p.neighbourhood("2opt")
    monkeypatch.setattr(nb, "out_shape", lambda: (1 << 40,))  # 8 TiB of int64
    with pytest.raises(LsbenchError, match=r"rnd-atsp-20-1's 2opt neighbourhood holds 1,099,511,627,776 move costs "
                                           r"\(8192\.0 GiB\), more memory than this host gives"):
        get_evaluator("cpu").bind(p, nb)
