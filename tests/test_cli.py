"""The command line as a user runs it: results, verification, and bad input."""
import json
import os
import subprocess
import sys

import pytest

from conftest import DATA, ROOT, need_instances


def lsbench(*args, env=None):
    e = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-m", "lsbench", *args], capture_output=True, text=True,
                          cwd=ROOT, env=e, timeout=600)


def test_run_then_verify(tmp_path):
    out = tmp_path / "runs" / "x.json"
    r = lsbench("run", "--problem", "qap", "--instance", "tai12a", "--algorithm", "tabu", "--backend", "cpu",
                "--iterations", "2000", "--seed", "1", "--out", str(out), "--quiet")
    assert r.returncode == 0, r.stderr
    rec = json.loads(out.read_text())
    for key in ("problem", "instance", "instance_sha256", "algorithm", "backend", "seed", "params", "host",
                "versions", "iterations", "evaluations", "wall_s", "best_objective", "best_solution",
                "trajectory", "bks", "gap_percent"):
        assert key in rec
    assert rec["iterations"] == 2000 and sorted(rec["best_solution"]) == list(range(12))
    assert rec["trajectory"][-1][2] == rec["best_objective"] and rec["schema_version"] == 1
    v = lsbench("verify", str(out))
    assert v.returncode == 0 and "OK" in v.stdout
    # a record of lsbench 0.2.0 (no schema_version) still verifies; versions it does not know do not
    old = tmp_path / "old.json"
    old.write_text(json.dumps({k: v for k, v in rec.items() if k != "schema_version"}))
    assert lsbench("verify", str(old)).returncode == 0
    for version in (2, "1", None, 1.0):
        old.write_text(json.dumps({**rec, "schema_version": version}))
        v = lsbench("verify", str(old))
        assert v.returncode == 2 and v.stderr.count("\n") == 1 and "Traceback" not in v.stderr
        assert f"{old}: schema_version {version!r} is not one this lsbench reads (0, 1" in v.stderr
    # a tampered record is caught
    rec["best_objective"] -= 1
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(rec))
    v = lsbench("verify", str(bad))
    assert v.returncode == 2 and "evaluates to" in v.stderr


def test_run_with_instance_file_path_and_instances_listing(tmp_path):
    need_instances("eil51")
    r = lsbench("run", "--problem", "tsp", "--instance", str(DATA / "tsplib" / "eil51.tsp"), "--iterations",
                "50", "--quiet", "--out", str(tmp_path / "t.json"))
    assert r.returncode == 0, r.stderr
    assert lsbench("verify", str(tmp_path / "t.json")).returncode == 0
    ls = lsbench("instances", "list", "--problem", "qap")
    assert ls.returncode == 0 and "tai100a" in ls.stdout and "ta001" not in ls.stdout
    show = lsbench("instances", "show", "ta001")
    assert show.returncode == 0 and "1278" in show.stdout and "m (machines): 5" in show.stdout


def test_instances_show_tells_the_best_known_value_and_its_source_before_the_file_is_fetched(tmp_path):
    need_instances("tai100a")
    empty = tmp_path / "data"
    empty.mkdir()
    show = lsbench("instances", "show", "tai100a", "--data-dir", str(empty))
    assert show.returncode == 0, show.stderr
    assert "21044752" in show.stdout and "Misevi" in show.stdout and "lsbench instances fetch tai100a" in show.stdout
    fetched = lsbench("instances", "show", "tai100a", "--data-dir", str(DATA))
    assert fetched.returncode == 0 and "n: 100" in fetched.stdout and "21044752" in fetched.stdout
    assert "not in the data directory" not in fetched.stdout


def _bad_file(tmp_path, name, text):
    f = tmp_path / name
    f.write_text(text)
    return str(f)


@pytest.mark.parametrize("make_args,needle", [
    (lambda t: ["--problem", "qap", "--instance", _bad_file(t, "trunc.dat", "12\n1 2 3\n")], "trunc.dat"),
    (lambda t: ["--problem", "qap", "--instance", _bad_file(t, "nan.dat", "2\n1 2 3 x 5 6 7 8\n")], "non-numeric"),
    (lambda t: ["--problem", "pfsp", "--instance", _bad_file(t, "size.txt", "3 2\n1 2 3\n4 5\n")], "size.txt"),
    (lambda t: ["--instance", "no-such-instance"], "unknown instance"),
    (lambda t: ["--problem", "knapsack", "--instance", "tai12a"], "unknown problem"),
    (lambda t: ["--instance", "tai12a", "--backend", "abacus"], "unknown backend"),
    (lambda t: ["--instance", "tai12a", "--iterations", "-5"], "--iterations"),
    (lambda t: ["--instance", "tai12a", "--algorithm", "annealing"], "unknown algorithm"),
    (lambda t: ["--instance", "tai12a", "--param", "tenure=abc"], "tenure"),
    (lambda t: ["--instance", "ta001", "--param", "objective=lateness"], "objective"),
    (lambda t: ["--instance", "tai12a", "--neighbourhood", "3opt"], "neighbourhood"),
    (lambda t: ["--instance", "tai12a", "--algorithm", "cas", "--param", "ls_iterations=-5"], "ls_iterations=-5"),
    (lambda t: ["--instance", "tai12a", "--algorithm", "cas", "--param", "ants=0"], "ants=0"),
    (lambda t: ["--instance", "tai12a", "--target", "bks-1%"], "bks+P%"),
    (lambda t: ["--instance", "tai12a", "--target", "bks+-1%"], "must be finite and >= 0"),
    (lambda t: ["--instance", "ta001", "--param", "objective=flowtime", "--target", "bks"], "makespans"),
    (lambda t: ["--problem", "qap", "--instance", _bad_file(t, "q.dat", "2\n1 2 3 4\n5 6 7 8\n"), "--target", "bks"],
     "no best-known value"),
])
def test_bad_input_one_line_exit_2_no_file(tmp_path, make_args, needle):
    out = tmp_path / "out.json"
    r = lsbench("run", "--iterations", "10", *make_args(tmp_path), "--out", str(out), "--quiet")
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0] and "Traceback" not in r.stderr
    assert not out.exists() and not list(tmp_path.glob(".out.json*"))


def test_missing_data_file_names_the_fetch_command(tmp_path):
    r = lsbench("run", "--instance", "tai12a", "--iterations", "5", "--quiet", env={"LSBENCH_DATA": str(tmp_path)})
    assert r.returncode == 2 and "lsbench instances fetch tai12a" in r.stderr


def test_verify_rejects_malformed_records(tmp_path):
    f = tmp_path / "r.json"
    f.write_text("{not json")
    r = lsbench("verify", str(f))
    assert r.returncode == 2 and "not a JSON run record" in r.stderr
    f.write_text(json.dumps({"problem": "qap"}))
    r = lsbench("verify", str(f))
    assert r.returncode == 2 and "lacks field" in r.stderr
    for text, kind in (("42", "int"), ("null", "NoneType"), ("[1]", "list")):
        f.write_text(text)
        r = lsbench("verify", str(f))
        assert r.returncode == 2 and f"not a run record (a JSON {kind}, not an object)" in r.stderr
        assert "Traceback" not in r.stderr


def test_target_bks_stops_at_the_manifest_value_and_bks_plus_a_percentage_above_it(tmp_path):
    """--target bks is the instance's best-known value from the manifest; bks+P% that plus P percent:
    the run stops at the first improvement at or under it, and the record holds the number."""
    from lsbench import instances as registry
    from lsbench.runner import run_one
    bks = registry.manifest()["tai12a"].bks_value()
    exact = run_one("qap", "tai12a", algorithm="rots", seed=1, iterations=5000, target="bks")
    assert exact["run_spec"]["stop"]["target"] == bks and exact["best_objective"] == bks
    assert exact["iterations"] < 5000  # it stopped there, not at the budget
    loose = run_one("qap", "tai12a", algorithm="rots", seed=1, iterations=5000, target="bks+3%")
    assert loose["run_spec"]["stop"]["target"] == pytest.approx(bks * 1.03)
    assert bks < loose["best_objective"] <= bks * 1.03 and loose["iterations"] < exact["iterations"]


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity") or not os.path.exists("/usr/bin/taskset"),
                    reason="pinning a process needs Linux's taskset")
def test_a_run_pinned_to_one_core_records_one_core(tmp_path):
    out = tmp_path / "pinned.json"
    cmd = ["taskset", "-c", str(min(os.sched_getaffinity(0))), sys.executable, "-m", "lsbench", "run", "--problem",
           "qap", "--instance", "tai12a", "--iterations", "10", "--out", str(out), "--quiet"]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert r.returncode == 0, r.stderr
    assert json.loads(out.read_text())["host"]["cpu_count"] == 1
