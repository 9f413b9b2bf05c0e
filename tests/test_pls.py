"""Pareto local search: the archive is exactly the non-dominated set of what was inserted (host and
device filters alike), the same seed gives the same front on every backend, records are re-checked,
and bad input is one line."""
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from conftest import ROOT
from lsbench.search.archive import ACCEPT, ParetoArchive, insert_batch

vectors = st.lists(st.tuples(*[st.integers(0, 6)] * 3), min_size=1, max_size=40)


def brute_front(points):
    """The non-dominated points of `points` in insertion order, an equal vector kept where it first came."""
    def dominated(p):
        return any(all(a <= b for a, b in zip(q, p)) and q != p for q in points)
    return [p for i, p in enumerate(points) if not dominated(p) and p not in points[:i]]


@settings(max_examples=300, deadline=None)
@given(start=st.tuples(*[st.integers(0, 6)] * 3), batches=st.lists(vectors, min_size=1, max_size=5),
       accept=st.sampled_from(sorted(ACCEPT)))
def test_archive_after_any_insertions_is_the_non_dominated_subset_of_what_was_inserted(start, batches, accept):
    archive = ParetoArchive()
    archive.start(np.zeros(1, dtype=np.int64), start)
    inserted = [tuple(start)]
    for batch in batches:
        current = archive.vectors[0].copy()  # the explored member: dominating neighbours are judged against it
        rows = np.array(batch, dtype=np.int64)
        if accept == "dominating":
            inserted += [tuple(v) for v in batch if all(a <= b for a, b in zip(v, current)) and tuple(v) != tuple(current)]
        else:
            inserted += [tuple(v) for v in batch]
        left, entered = insert_batch(archive.vectors, rows, ACCEPT[accept], current)
        archive.apply(left, entered, rows[entered], lambda m: np.array([m]))
        assert [tuple(v) for v in archive.vectors.tolist()] == brute_front(inserted)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(members=vectors, batch=st.lists(st.tuples(*[st.integers(0, 6)] * 3), min_size=1, max_size=90),
       accept=st.sampled_from(sorted(ACCEPT)))
def test_device_filter_equals_the_host_filter(members, batch, accept):
    """Candidates over several blocks and archive tiles (the simulator's blocks are 32 threads)."""
    from numba import cuda
    from lsbench.gpu.iteration.archive import DeviceArchive
    front = np.array(brute_front([tuple(v) for v in members]), dtype=np.int64)
    rows = np.array(batch, dtype=np.int64)
    current = front[0]
    left, entered = insert_batch(front, rows, ACCEPT[accept], current)
    device = DeviceArchive(rows.shape[0])
    device.start(front)
    d_left, d_entered, d_vectors = device.update(cuda.to_device(rows), ACCEPT[accept], current)
    assert d_left.tolist() == left.tolist()
    assert d_entered.tolist() == entered.tolist()
    assert d_vectors.tolist() == rows[entered].tolist()
    keep = front[~left]
    assert device.members[:device.count].copy_to_host().tolist() == np.concatenate([keep, rows[entered]]).tolist()


def lsbench(*args, timeout=900):
    return subprocess.run([sys.executable, "-m", "lsbench", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=timeout)


def pls_args(out, backend="cpu", accept="non-dominated", iterations=3, instance="ta011", *extra):
    return ["run", "--problem", "pfsp", "--instance", instance, "--algorithm", "pls", "--backend", backend,
            "--param", "objective=three", "--param", f"accept={accept}", "--iterations", str(iterations),
            "--seed", "5", "--warmup", "0", "--quiet", "--out", str(out), *extra]


def outcome(rec):
    return rec["front"], rec["archive_sizes"], rec["iterations"], rec["best_objective"]


@pytest.mark.long
@pytest.mark.parametrize("accept,iterations", [("non-dominated", 3), ("dominating", 4)])
def test_pls_gives_the_same_archive_on_every_backend(accept, iterations, tmp_path):
    """ta011 (20 jobs, 10 machines): cpu, cpu-parallel, gpu with the archive on the host and on
    the device (simulator in CI, the H200 with LSBENCH_TEST_REAL_GPU=1) -- same front, same
    archive size after every iteration."""
    runs = {"cpu": [], "cpu-parallel": [], "gpu": ["--param", "archive=host", "--param", "block=32"],
            "gpu-device": ["--param", "archive=device", "--param", "block=32"]}
    if accept == "dominating":
        runs.pop("gpu")  # the host archive on gpu is covered by the non-dominated case
    recs = {}
    for name, extra in runs.items():
        out = tmp_path / f"{name}.json"
        r = lsbench(*pls_args(out, name.split("-device")[0], accept, iterations), *extra)
        assert r.returncode == 0, r.stderr
        recs[name] = json.loads(out.read_text())
        assert lsbench("verify", str(out)).returncode == 0
    cpu = recs.pop("cpu")
    assert len(cpu["front"]) >= 3 and len(cpu["archive_sizes"]) >= 3  # the archive moves: equality is not vacuous
    for name, rec in recs.items():
        assert outcome(rec) == outcome(cpu), name
    assert recs["gpu-device"]["backend_info"]["time_split"]["archive_kernels_s"] > 0


def test_pls_record_is_checkable_without_lsbench_and_verify_refuses_a_tampered_front(tmp_path):
    out = tmp_path / "pls.json"
    r = lsbench(*pls_args(out, iterations=30))
    assert r.returncode == 0, r.stderr
    rec = json.loads(out.read_text())
    from lsbench import instances
    prob = instances.load("ta011", "pfsp", params={"objective": "three"})
    assert rec["due_dates"] == prob.due.tolist() and rec["objective_names"] == ["makespan", "tardiness", "late_jobs"]
    for point in rec["front"]:  # recomputed here by hand: completion times machine by machine
        c = [0] * prob.m
        tard = late = 0
        for job in point["solution"]:
            for j in range(prob.m):
                c[j] = max(c[j], c[j - 1] if j else 0) + int(prob.pt[job, j])
            tard += max(0, c[-1] - rec["due_dates"][job])
            late += c[-1] > rec["due_dates"][job]
        assert point["objectives"] == [c[-1], tard, late]
    objs = [p["objectives"] for p in rec["front"]]
    assert not any(a != b and all(x <= y for x, y in zip(a, b)) for a in objs for b in objs)
    for tamper in ("duplicate", "wrong"):
        bad = json.loads(out.read_text())
        if tamper == "duplicate":  # a point equal to another: not a front
            bad["front"].append(dict(bad["front"][0]))
        else:
            bad["front"][0]["objectives"][1] += 1
        path = tmp_path / f"{tamper}.json"
        path.write_text(json.dumps(bad))
        r = lsbench("verify", str(path))
        assert r.returncode != 0 and str(path) in r.stderr, r.stderr


@pytest.mark.parametrize("extra,message", [
    (["--param", "weights=1,2"], "--param weights"),
    (["--param", "weights=1,-2,1"], "--param weights"),
    (["--param", "archive=device"], "--param archive=device"),
    (["--param", "accept=all"], "--param accept"),
])
def test_pls_bad_input_is_one_line_and_no_record(extra, message, tmp_path):
    out = tmp_path / "bad.json"
    r = lsbench(*pls_args(out), *extra)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("lsbench: error:") and message in lines[0], r.stderr
    assert not out.exists() and not list(tmp_path.iterdir())


def test_pls_needs_the_three_objectives(tmp_path):
    args = pls_args(tmp_path / "x.json")
    args[args.index("objective=three")] = "objective=makespan"
    r = lsbench(*args)
    assert r.returncode == 2 and "objective=three" in r.stderr and not list(tmp_path.iterdir())


@pytest.mark.system  # end to end: MPI ranks and a Dask cluster
def test_pls_over_mpi_ranks_and_dask_workers_gives_the_cpu_archive(tmp_path):
    """cow (2 MPI ranks) and grid (2 Dask workers) fill the objective-vector rows slice by slice."""
    import os
    from conftest import DATA
    env = {**os.environ, "LSBENCH_DATA": str(DATA)}
    recs = {}
    for backend, launch, extra in (("cpu", [], []), ("cow", [str(Path(sys.executable).parent / "mpiexec"), "-n", "2"], []),
                                   ("grid", [], ["--workers", "2"])):
        out = tmp_path / f"{backend}.json"
        cmd = [*launch, sys.executable, "-m", "lsbench", *pls_args(out, backend, "non-dominated", 12), *extra]
        r = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)
        assert r.returncode == 0, r.stderr
        recs[backend] = json.loads(out.read_text())
    assert outcome(recs["cow"]) == outcome(recs["cpu"]) and outcome(recs["grid"]) == outcome(recs["cpu"])


def test_report_indicators_agree_with_moocore_on_the_written_fronts(tmp_path):
    """The report's reference front is the non-dominated union of the full runs' fronts; its
    indicator values equal moocore's, called here on the written files with the documented
    normalisation. A sampled backend's run (stopped after 10 of 60 iterations) is left out of both,
    and the attainment surfaces are drawn over the backend of most seeds."""
    import importlib.util
    import re
    import moocore
    from lsbench.workflow import aggregate_records
    paths = []
    for seed in (1, 2, 3):
        out = tmp_path / "runs" / "pls-g" / "ta021" / f"cpu-s{seed}.json"
        args = pls_args(out, "cpu", "non-dominated", 60, "ta021")
        args[args.index("--seed") + 1] = str(seed)
        assert lsbench(*args).returncode == 0
        paths.append(out)
    short = tmp_path / "runs" / "pls-g" / "ta021" / "cpu-short-s1.json"
    assert lsbench(*pls_args(short, "cpu", "non-dominated", 10, "ta021")).returncode == 0
    table = tmp_path / "runs.parquet"
    aggregate_records([short, *paths], table)
    spec = importlib.util.spec_from_file_location("report", ROOT / "workflows" / "scripts" / "report.py")
    report = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(report)
    config = {"experiment": "t", "groups": [{"name": "pls-g", "problem": "pfsp", "instances": ["ta021"],
                                             "algorithm": "pls", "iterations": 60, "seeds": 3, "backends": [
                                                 {"name": "cpu-short", "backend": "cpu", "sample": 10}, "cpu"]}]}
    html = report.write_report(table, tmp_path / "report.html", config, {"available": False, "name": "no GPU"}).read_text()
    files = tmp_path / "report_files"
    ref = np.loadtxt(files / "reference-front-ta021.csv", delimiter=",", skiprows=1, dtype=np.int64)
    fronts = [np.array([p["objectives"] for p in json.loads(p.read_text())["front"]]) for p in paths]
    union = np.unique(np.concatenate(fronts), axis=0)
    assert sorted(map(tuple, ref)) == sorted(map(tuple, union[moocore.is_nondominated(union)]))
    ideal, nadir = ref.min(axis=0), np.maximum(ref.max(axis=0), ref.min(axis=0) + 1)
    norm = lambda x: (x - ideal) / (nadir - ideal)  # noqa: E731
    indicators = __import__("pandas").read_csv(files / "indicators.csv")
    assert set(indicators["backend"]) == {"cpu"} and "cpu-short" not in html.split("Quality of the fronts")[1].split("</table>")[0]
    assert (files / "pls-g-ta021-eaf.png").exists() and "ta021: empirical attainment surfaces" in html
    rows = {int(r["seed"]): r for r in indicators.to_dict("records")}
    direct = []
    for seed, front in zip((1, 2, 3), fronts):
        hv = moocore.hypervolume(norm(front), ref=[1.1] * 3)
        eps = moocore.epsilon_additive(norm(front), ref=norm(ref))
        igd = moocore.igd_plus(norm(front), ref=norm(ref))
        assert rows[seed]["hypervolume"] == pytest.approx(hv, rel=1e-12)
        assert rows[seed]["epsilon_additive"] == pytest.approx(eps, rel=1e-12, abs=1e-15)
        assert rows[seed]["igd_plus"] == pytest.approx(igd, rel=1e-12, abs=1e-15)
        direct.append((hv, eps, igd))
    medians = [f"{v:.4f}" for v in np.median(np.array(direct), axis=0)]
    cells = re.search(r"<td class=\"text\">ta021</td><td class=\"text\">cpu</td><td>3</td><td>\d+</td>\s*"
                      r"<td>([\d.]+)</td><td>([\d.]+)</td><td>([\d.]+)</td>", html)
    assert cells and list(cells.groups()) == medians


def test_indicators_refuse_a_reference_point_that_does_not_bound_the_front(tmp_path):
    out = tmp_path / "pls.json"
    assert lsbench(*pls_args(out, iterations=10)).returncode == 0
    r = lsbench("indicators", str(out), "--reference-point", "100,100,100", "--out", str(tmp_path / "ind.json"))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "does not bound the front" in r.stderr
    assert not (tmp_path / "ind.json").exists()
    r = lsbench("indicators", str(out), "--out", str(tmp_path / "ind.json"))
    assert r.returncode == 0 and json.loads((tmp_path / "ind.json").read_text())[0]["hypervolume"] > 0


@pytest.mark.long
def test_pls_swap_neighbourhood_gives_the_cpu_archive_with_the_device_archive(tmp_path):
    recs = []
    for backend, extra in (("cpu", []), ("gpu", ["--param", "archive=device", "--param", "block=32"])):
        out = tmp_path / f"{backend}.json"
        r = lsbench(*pls_args(out, backend, "non-dominated", 6, "rnd-pfsp-9x3-1"), "--neighbourhood", "swap", *extra)
        assert r.returncode == 0, r.stderr
        recs.append(json.loads(out.read_text()))
    assert len(recs[0]["front"]) >= 3 and outcome(recs[0]) == outcome(recs[1])


def test_pls_archive_on_the_device_without_a_gpu_is_one_line(tmp_path):
    import os
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    out = tmp_path / "x.json"
    r = subprocess.run([sys.executable, "-m", "lsbench", *pls_args(out, "gpu"), "--param", "archive=device"],
                       capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "no CUDA GPU" in r.stderr and not out.exists()
