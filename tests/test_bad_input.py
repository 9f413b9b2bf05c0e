"""Nothing lost, nothing silently wrong, nothing that hangs: each case a user met on commit 67d250f
(a traceback, a wrapped objective, a run that never stopped, a lost record) is one error line,
exit 2 and no record now; instance readers turn any bytes into an instance or one such line."""
import json
import os
import stat
import subprocess
import sys
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import DATA, ROOT, need_instances


def lsbench(*args, timeout=120, **kw):
    return subprocess.run([sys.executable, "-m", "lsbench", *map(str, args)], capture_output=True, text=True,
                          cwd=ROOT, env={**os.environ, "LSBENCH_DATA": str(DATA)}, timeout=timeout, **kw)


def one_error_line(r, *needles):
    assert r.returncode == 2, (r.returncode, r.stderr[-1500:])
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("lsbench: error: "), r.stderr[-1500:]
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


def _file(tmp_path, name, content):
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return path


@pytest.mark.parametrize("command", [["run", "--problem", "qap", "--instance", "{fifo}", "--iterations", "3"],
                                     ["verify", "{fifo}"], ["indicators", "{fifo}"]])
def test_an_input_that_is_a_fifo_is_refused_not_read(tmp_path, command):
    """A FIFO given as an input would block the read for ever: one error line naming it, at once."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    t = time.perf_counter()
    r = lsbench(*[part.format(fifo=fifo) for part in command], timeout=60)
    one_error_line(r, f"{fifo}: cannot read", "it is a FIFO, not a regular file")
    assert time.perf_counter() - t < 30


@pytest.mark.parametrize("args, says", [
    (["--instance", "ta001", "--target", "1000"], "--target 1000: below ta001's proven optimum 1278; no search reaches it"),
    (["--instance", "9-8", "--target", "-5"], "--target -5: below 0, the least objective a ppp solution can have"),
    (["--instance", "rnd-atsp-9-4", "--target", "-1"], "below 0, the least objective a tsp solution can have"),
])
def test_a_target_no_solution_can_reach_is_refused_before_the_run(args, says):
    """A target under a proven optimum (the manifest's) or under the floor of a sum of non-negative
    terms would run until the other stops, or for ever without them: one error line instead."""
    t = time.perf_counter()
    one_error_line(lsbench("run", *args, "--quiet", timeout=60), says)
    assert time.perf_counter() - t < 30


def test_a_target_at_a_proven_optimum_or_above_a_floor_still_runs():
    assert lsbench("run", "--instance", "ta001", "--target", "1278", "--iterations", "3", "--quiet").returncode == 0
    assert lsbench("run", "--instance", "9-8", "--target", "0", "--iterations", "3", "--quiet").returncode == 0


# -- outputs are checked before the work ---------------------------------------------------------
def test_an_output_replaces_only_a_file_of_its_own_kind_that_lsbench_wrote(tmp_path):
    """A user's text file, the run's own instance, a Parquet table under a CSV export, a summary or a
    search's record inside --out-dir: each refused in one line before any work, left as it was; a
    record of an earlier run is replaced by the new one."""
    notes = _file(tmp_path, "notes.txt", "my notes\n")
    one_error_line(lsbench("run", "--instance", "rnd-qap-8-1", "--iterations", "5", "--out", notes, "--quiet"),
                   f"--out {notes}: exists and is not a run record that lsbench wrote; nothing was run")
    assert notes.read_text() == "my notes\n"
    instance = _file(tmp_path, "mine.dat", "3\n0 1 2\n1 0 3\n2 3 0\n0 5 2\n5 0 1\n2 1 0\n")
    one_error_line(lsbench("run", "--problem", "qap", "--instance", instance, "--iterations", "5", "--out", instance,
                           "--quiet"), "is not a run record")
    assert instance.read_text().startswith("3\n0 1 2")
    record = tmp_path / "r.json"
    assert lsbench("run", "--instance", "rnd-qap-8-1", "--iterations", "5", "--out", record, "--quiet").returncode == 0
    again = lsbench("run", "--instance", "rnd-qap-8-1", "--iterations", "7", "--out", record, "--quiet")
    assert again.returncode == 0 and json.loads(record.read_text())["iterations"] == 7
    one_error_line(lsbench("indicators", record, "--out", notes), "is not an indicators table that lsbench wrote")
    one_error_line(lsbench("multistart", "--instance", "rnd-qap-8-1", "--searches", "2", "--iterations", "5",
                           "--out-dir", tmp_path / "m", "--out", tmp_path / "m" / "summary.json"),
                   "inside --out-dir", "nothing was run")
    assert not (tmp_path / "m").exists()
    one_error_line(lsbench("multistart", "--instance", "rnd-qap-8-1", "--searches", "2", "--iterations", "5",
                           "--out-dir", tmp_path / "m2", "--out", tmp_path / "m2" / "seed-1.json"), "inside --out-dir")
    (tmp_path / "m3").mkdir()
    taken = _file(tmp_path / "m3", "summary.json", "{}")
    one_error_line(lsbench("multistart", "--instance", "rnd-qap-8-1", "--searches", "2", "--iterations", "5",
                           "--out-dir", tmp_path / "m3"), "is not a multistart summary that lsbench wrote")
    assert taken.read_text() == "{}"


@pytest.mark.parametrize("where", ["existing directory", "under a regular file"])
def test_an_output_that_cannot_be_written_fails_before_the_search(tmp_path, where):
    plain = _file(tmp_path, "plain.txt", "x")
    out = tmp_path if where == "existing directory" else plain / "r.json"
    t = time.perf_counter()
    r = lsbench("run", "--instance", "tai12a", "--algorithm", "rots", "--seconds", "60", "--out", out, "--quiet")
    one_error_line(r, "--out")
    assert time.perf_counter() - t < 40  # refused up front, not after a minute of search


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only directories")
def test_a_read_only_output_directory_fails_before_the_search(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(stat.S_IRUSR | stat.S_IXUSR)
    r = lsbench("run", "--instance", "tai12a", "--seconds", "60", "--out", locked / "r.json", "--quiet")
    one_error_line(r, "--out", "cannot write")


def test_multistart_out_dir_on_a_file_fails_before_any_search(tmp_path):
    plain = _file(tmp_path, "plain.txt", "x")
    r = lsbench("multistart", "--searches", "2", "--instance", "tai12a", "--iterations", "10", "--out-dir", plain)
    one_error_line(r, "--out-dir")


# -- exact objectives or a refusal ------------------------------------------------------------------
def test_qap_entries_that_would_wrap_int64_are_refused(tmp_path):
    n = 4
    a = np.full((n, n), 3_000_000_000)
    f = _file(tmp_path, "big.dat", f"{n}\n" + " ".join(map(str, a.ravel())) + "\n" + " ".join(map(str, a.ravel())))
    one_error_line(lsbench("run", "--problem", "qap", "--instance", f, "--iterations", "5", "--quiet"),
                   "big.dat", "64-bit")


def test_tsp_coordinates_whose_distances_would_wrap_int32_are_refused(tmp_path):
    coords = "\n".join(f"{i + 1} {(-1) ** i * 2.0e9} {i * 1.0e8}" for i in range(6))  # within +-2^31, 4e9 apart
    f = _file(tmp_path, "far.tsp", f"NAME: far\nTYPE: TSP\nDIMENSION: 6\nEDGE_WEIGHT_TYPE: EUC_2D\n"
                                   f"NODE_COORD_SECTION\n{coords}\nEOF\n")
    one_error_line(lsbench("run", "--problem", "tsp", "--instance", f, "--iterations", "5", "--quiet"),
                   "far.tsp", "32 bits")


@pytest.mark.parametrize("kind, coords, needle", [
    ("EUC_2D", "1 0 0|2 1 1|5 1e154 0|3 2 2|4 3 3", "node 5: coordinate 1e+154 is beyond +-2^31"),
    ("EUC_2D", "1 0 0|2 1 1|3 2 -2147483648|4 3 3|5 4 4", "node 3: coordinate -2.14748e+09 is beyond +-2^31"),
    ("GEO", "1 0 0|2 1 1|3 90.5 2|4 3 3|5 4 4", "node 3: latitude 90.5 is beyond +-90"),
    ("GEO", "1 0 0|2 1 1|3 2 2|4 3 3|5 4 1e300", "node 5: longitude 1e+300 is beyond +-180"),
])
def test_tsp_coordinates_out_of_range_are_one_line_naming_the_node(tmp_path, kind, coords, needle):
    """A coordinate at or beyond 2^31 (its square loses the integer part or overflows to inf) and a
    GEO latitude beyond +-90 or longitude beyond +-180 degrees are refused at load, naming the node
    by its id in the file; no numpy warning, no garbage distance."""
    f = _file(tmp_path, "range.tsp", f"NAME: r\nTYPE: TSP\nDIMENSION: 5\nEDGE_WEIGHT_TYPE: {kind}\n"
                                     f"NODE_COORD_SECTION\n{coords.replace('|', chr(10))}\nEOF\n")
    r = lsbench("run", "--problem", "tsp", "--instance", f, "--iterations", "5", "--quiet")
    one_error_line(r, "range.tsp", needle)
    assert "Warning" not in r.stderr


@pytest.mark.parametrize("instance, params", [("tai12a", {}), ("bays29", {}), ("ta021", {"objective": "three"}),
                                              ("ta021", {"objective": "flowtime"}), ("73-73", {})])
def test_the_recheck_uses_python_integers_and_agrees_with_the_fast_code(instance, params):
    from lsbench import instances, rng
    p = instances.load(instance, params=params)
    for seed in range(5):
        s = p.random_solution(rng.new_state(seed))
        exact = p.exact_objective(s)
        assert type(exact) is int and exact == p.objective(s)


# -- values checked where they are declared ---------------------------------------------------------
@pytest.mark.parametrize("args, needle", [
    (["--seconds", "nan"], "--seconds"), (["--target", "nan", "--iterations", "5"], "--target"),
    (["--iterations", "5", "--warmup", str(10 ** 12)], "--warmup"),
    (["--iterations", "5", "--seed", str(1 << 64)], "--seed"),
    (["--iterations", "5", "--backend", "cpu-parallel", "--threads", "-1"], "--threads"),
    (["--iterations", "5", "--backend", "cpu-parallel", "--threads", "1000"], "--threads"),
    (["--iterations", "5", "--param", "objective=flowtime"], "objective"),
    (["--iterations", "5", "--param", "precision=32"], "precision"),
    (["--iterations", "5", "--backend", "cow", "--param", "worker_timeout=nan"], "worker_timeout"),
    (["--iterations", "5", "--backend", "grid", "--workers", "0"], "workers"),
    (["--iterations", "5", "--backend", "grid", "--scheduler", "notaurl"], "scheduler"),
])
def test_bad_values_are_one_line(args, needle):
    one_error_line(lsbench("run", "--instance", "tai12a", "--quiet", *args), needle)


def test_grid_on_slurm_without_sbatch_is_one_line_at_once(tmp_path):
    env_path = str(tmp_path)  # no sbatch here
    t = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "lsbench", "run", "--instance", "73-73", "--backend", "grid",
                        "--scheduler", "slurm", "--param", "slurm_host=127.0.0.1", "--iterations", "3", "--quiet"],
                       capture_output=True, text=True, cwd=ROOT, timeout=120,
                       env={**os.environ, "PATH": env_path + os.pathsep + os.path.dirname(sys.executable)})
    one_error_line(r, "sbatch")
    assert time.perf_counter() - t < 60


# -- instance files that are not what they claim ----------------------------------------------------
@pytest.mark.parametrize("problem, name, content, needle", [
    ("qap", "bin.dat", bytes(range(256)), "not a text file"),
    ("qap", "huge.dat", "2\n1 2 3 99999999999999999999 1 2 3 4\n", "64-bit"),
    ("tsp", "dup.tsp", "NAME: d\nDIMENSION: 5\nEDGE_WEIGHT_TYPE: EUC_2D\nNODE_COORD_SECTION\n1 0 0\n1 1 1\n"
                       "3 2 2\n4 3 3\n5 4 4\nEOF\n", "node 1 appears twice"),
    ("tsp", "nan.tsp", "NAME: d\nDIMENSION: 5\nEDGE_WEIGHT_TYPE: EUC_2D\nNODE_COORD_SECTION\n1 0 0\n2 nan 1\n"
                       "3 2 2\n4 3 3\n5 4 4\nEOF\n", "non-finite"),
    ("tsp", "half.tsp", "NAME: h\nDIMENSION: 5\nEDGE_WEIGHT_TYPE: EXPLICIT\nEDGE_WEIGHT_FORMAT: UPPER_ROW\n"
                        "EDGE_WEIGHT_SECTION\n1 2 3 4\n1.5 2 3\n4 5\n6\nEOF\n", "weight 1.5 is not an integer"),
    ("pfsp", "bin.txt", b"\xff\xfe\x00\x01", "not a text file"),
])
def test_malformed_instance_files_are_one_line_naming_the_file(tmp_path, problem, name, content, needle):
    f = _file(tmp_path, name, content)
    one_error_line(lsbench("run", "--problem", problem, "--instance", f, "--iterations", "3", "--quiet"), name, needle)


def _reads(problem, path):
    """Any bytes: an instance, or an LsbenchError naming the file; nothing else."""
    from lsbench.errors import LsbenchError
    from lsbench.problems import PROBLEMS
    try:
        PROBLEMS[problem].from_file(str(path))
    except LsbenchError as e:
        assert str(path) in str(e)


REAL = {"qap": DATA / "qaplib" / "tai12a.dat", "tsp": DATA / "tsplib" / "eil51.tsp",
        "pfsp": DATA / "taillard_pfsp" / "ta001.txt"}
FUZZ = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.mark.parametrize("problem", sorted(REAL))
@FUZZ
@given(data=st.binary(max_size=300))
def test_fuzz_random_bytes(tmp_path, problem, data):
    _reads(problem, _file(tmp_path, f"random.{problem}", data))


@pytest.mark.parametrize("problem", sorted(REAL))
@FUZZ
@given(cut=st.floats(0, 1), edits=st.lists(st.tuples(st.floats(0, 1), st.sampled_from(
    [b"", b"-", b"x", b"\x00", b"1e999", b"nan", b" ", b"\n", b"99999999999999999999", b":", b"EOF"])), max_size=4))
def test_fuzz_truncated_and_mutated_real_files(tmp_path, problem, cut, edits):
    if not REAL[problem].exists():
        pytest.skip(f"{REAL[problem]} is not in the data directory (set LSBENCH_TEST_DATA)")
    raw = REAL[problem].read_bytes()
    raw = raw[:max(1, int(len(raw) * cut))] if cut < 0.95 else raw
    for where, piece in edits:
        k = int(where * len(raw))
        raw = raw[:k] + piece + raw[k + 1:]
    _reads(problem, _file(tmp_path, f"mutated.{problem}", raw))


# -- records ---------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def good_record(tmp_path_factory):
    out = tmp_path_factory.mktemp("rec") / "good.json"
    r = lsbench("run", "--instance", "tai12a", "--algorithm", "rots", "--iterations", "300", "--out", out, "--quiet")
    assert r.returncode == 0, r.stderr
    return out


def test_verify_checks_every_file_names_each_and_refuses_edited_records(tmp_path, good_record):
    rec = json.loads(good_record.read_text())
    bad = {"null.json": {**rec, "best_solution": [None] + rec["best_solution"][1:]},
           "text.json": {**rec, "best_solution": ["a"] + rec["best_solution"][1:]},
           "nosuch.json": {**rec, "instance": "no-such-instance", "instance_source": None},
           "empty.json": {**rec, "trajectory": []},
           "counts.json": {**rec, "evaluations": rec["evaluations"] + 1}}
    paths = []
    for name, content in bad.items():
        paths.append(_file(tmp_path, name, json.dumps(content)))
    r = lsbench("verify", good_record, *paths, tmp_path / "missing.json")
    assert r.returncode == 2
    assert f"{good_record}: OK" in r.stdout
    errors = r.stderr.strip().splitlines()
    for path in [*paths, tmp_path / "missing.json"]:  # every file checked, each named in its own line
        assert sum(line.startswith(f"lsbench: error: {path}") for line in errors) == 1, (path, errors)
    assert "Traceback" not in r.stderr


def test_records_follow_the_umask(good_record):
    assert stat.S_IMODE(good_record.stat().st_mode) == 0o666 & ~_umask()


def _umask():
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def test_a_listing_cut_short_by_head_is_no_error():
    r = subprocess.run(f"{sys.executable} -m lsbench instances list | head -3", shell=True, capture_output=True,
                       text=True, cwd=ROOT, timeout=120)
    assert r.returncode == 0 and len(r.stdout.splitlines()) == 3 and "Traceback" not in r.stderr


@pytest.mark.long
def test_multistart_in_turn_runs_every_search_and_says_why_one_failed(tmp_path):
    need_instances("tai12a")
    r = lsbench("multistart", "--searches", "3", "--instance", "tai12a", "--algorithm", "rots", "--iterations", "50",
                "--via", "local", "--out-dir", tmp_path / "ms")
    assert r.returncode == 0, r.stderr
    summary = json.loads((tmp_path / "ms" / "summary.json").read_text())
    assert summary["completed"] == 3 and not summary["failed"]
    assert all(lsbench("verify", tmp_path / "ms" / f"seed-{s}.json").returncode == 0 for s in (1, 2, 3))
    no_gpu = {**os.environ, "LSBENCH_DATA": str(DATA), "NUMBA_ENABLE_CUDASIM": "0", "CUDA_VISIBLE_DEVICES": ""}
    r = subprocess.run([sys.executable, "-m", "lsbench", "multistart", "--searches", "2", "--instance", "tai12a",
                        "--iterations", "5", "--via", "local", "--backend", "gpu", "--out-dir", str(tmp_path / "ms2")],
                       capture_output=True, text=True, cwd=ROOT, timeout=300, env=no_gpu)
    # refused once, before any search or file (each seed failing alike said nothing more)
    assert r.returncode == 2 and r.stderr.strip().splitlines() == [
        "lsbench: error: --backend gpu: no CUDA GPU on this host (numba.cuda.is_available() is False; set "
        "NUMBA_ENABLE_CUDASIM=1 to run the kernels in Numba's simulator)"]
    assert not (tmp_path / "ms2").exists()


# -- data where the user expects it, tests on what the documented commands produce ------------------
def test_the_default_data_directory_is_the_users_not_the_working_directory(tmp_path, monkeypatch):
    import platformdirs
    from lsbench import instances
    monkeypatch.delenv("LSBENCH_DATA", raising=False)
    monkeypatch.chdir(tmp_path)
    assert instances.data_dir() == __import__("pathlib").Path(platformdirs.user_data_dir("lsbench")) / "instances"
    assert tmp_path not in instances.data_dir().parents


def test_fetch_brings_the_reference_solutions_checked_and_refuses_a_corrupt_one(tmp_path):
    need_instances("tai12a", "eil51")
    data, mirror = tmp_path / "data", tmp_path / "mirror"
    r = lsbench("instances", "fetch", "tai12a", "eil51", "--mirror", DATA, "--data-dir", data)
    assert r.returncode == 0, r.stderr
    assert (data / "qaplib" / "tai12a.sln").read_bytes() == (DATA / "qaplib" / "tai12a.sln").read_bytes()
    assert (data / "tsplib" / "eil51.opt.tour").exists()
    (mirror / "qaplib").mkdir(parents=True)
    (mirror / "qaplib" / "tai12a.dat").write_bytes((DATA / "qaplib" / "tai12a.dat").read_bytes())
    (mirror / "qaplib" / "tai12a.sln").write_text("12\n224416\n1 2 3 4 5 6 7 8 9 10 11 12\n")
    r = lsbench("instances", "fetch", "tai12a", "--mirror", mirror, "--data-dir", tmp_path / "other")
    one_error_line(r, "sha256 mismatch", "tai12a.sln")
    assert not (tmp_path / "other" / "qaplib" / "tai12a.sln").exists()


def test_cpu_parallel_runs_a_tiny_neighbourhood_on_one_core_and_says_so(tmp_path):
    """ta001's 380 insertion moves take microseconds: a parallel region costs more than it saves,
    and a time slice when another process holds a core. A large neighbourhood still runs parallel."""
    for instance, serial in (("ta001", True), ("ta081", False)):
        out = tmp_path / f"{instance}.json"
        r = lsbench("run", "--instance", instance, "--backend", "cpu-parallel", "--iterations", "20", "--out", out,
                    "--quiet")
        assert r.returncode == 0, r.stderr
        info = json.loads(out.read_text())["backend_info"]
        assert ("serial" in info) == serial and (info["threads"] == 1 if serial else info["threads"] >= 1)


@pytest.mark.parametrize("params,needle", [(["mix=0.5"], "--param mix"), (["renew=1000"], "--param renew"),
                                           (["pools=4", "perturb_max=0.1"], "--param perturb_max"),
                                           (["pools=2", "renew=1000", "walk=0.5"], "--param walk"),
                                           (["restart=0", "walk=0.5"], "--param walk"),
                                           (["merge=1000"], "--param merge"),
                                           (["pools=2", "renew=1000", "merge=1000"], "--param merge")])
def test_restart_options_that_cannot_take_effect_are_one_error_line(tmp_path, params, needle):
    """mix, renew and merge act between pools (one pool: nothing to mix, renew or merge), and a
    merged pool has no stall clock for renew; perturb_max below
    perturb is an empty range; walk acts at restarts and would hand renewed pools their walkers'
    records. Each is refused before the run, with no record written."""
    out = tmp_path / "r.json"
    restart = [] if any(p.startswith("restart=") for p in params) else ["restart=40"]  # (a key once)
    args = ["run", "--instance", "tai12a", "--algorithm", "rots", "--backend", "gpu-resident", "--searches", "4",
            *[x for p in restart + params for x in ("--param", p)], "--iterations", "8", "--out", out, "--quiet"]
    r = subprocess.run([sys.executable, "-m", "lsbench", *map(str, args)], capture_output=True, text=True, cwd=ROOT,
                       env={**os.environ, "LSBENCH_DATA": str(DATA), "NUMBA_ENABLE_CUDASIM": "1"}, timeout=120)
    one_error_line(r, needle)
    assert not out.exists()


@pytest.mark.parametrize("header, needle", [
    (["TYPE : TSP", "EDGE_WEIGHT_TYPE : EUC_3D"], "EDGE_WEIGHT_TYPE EUC_3D is not supported"),
    (["TYPE : CVRP", "EDGE_WEIGHT_TYPE : EUC_2D"], "TYPE CVRP is not supported"),
    (["TYPE : TSP", "EDGE_WEIGHT_TYPE : MAN_2D"], "EDGE_WEIGHT_TYPE MAN_2D is not supported"),
])
def test_a_tsplib_file_of_an_unsupported_type_is_named_as_such(tmp_path, header, needle):
    """Issue 88: an EUC_3D file got "expected 5 lines 'id x y'", a CVRP file ran as a TSP."""
    from lsbench.errors import InstanceFormatError
    from lsbench.problems.tsp import TSP
    path = tmp_path / "odd.tsp"
    path.write_text("\n".join(["NAME : odd", *header, "DIMENSION : 5", "NODE_COORD_SECTION"]
                              + [f"{k} {k} {2 * k} {3 * k}" for k in range(1, 6)] + ["EOF"]) + "\n")
    with pytest.raises(InstanceFormatError, match=needle):
        TSP.from_file(path)


def test_a_record_names_its_instance_file_by_an_absolute_path_so_verify_works_from_any_folder(tmp_path,
                                                                                             monkeypatch):
    from lsbench.record import Record
    from lsbench.runner import run_one
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "w.txt").write_text("6 3\n" + "\n".join(" ".join(str(1 + (i * 7 + j * 3) % 9) for j in range(6))
                                                              for i in range(3)) + "\n")
    monkeypatch.chdir(tmp_path / "a")
    run_one("pfsp", "w.txt", algorithm="tabu", iterations=5, out=str(tmp_path / "r.json"))
    monkeypatch.chdir(tmp_path)
    assert Record.read(tmp_path / "r.json")["instance_source"] == str(tmp_path / "a" / "w.txt")
    assert "re-checked" in Record.read(tmp_path / "r.json").verify()
