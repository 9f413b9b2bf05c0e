"""The benchmark scripts' own logic, without a GPU: the peer's input file, the reading of its
report and the merging of lanes (benchmarks/tsp_peer.py)."""
import json
import os
import re
import sys

import pytest

from conftest import DATA, ROOT, need_instances

RESEARCH = ROOT / "benchmarks" / "research"  # scripts of research questions, beside the performance page's
sys.path[:0] = [str(ROOT / "benchmarks"), str(RESEARCH)]


def script_folder(script):
    """benchmarks/ (the performance page's scripts) or benchmarks/research/, where `script`.py is."""
    return RESEARCH if (RESEARCH / f"{script}.py").exists() else ROOT / "benchmarks"


def test_the_peer_gets_six_header_lines_every_city_and_eof(tmp_path):
    need_instances("eil101")
    from lsbench import instances
    from tsp_peer import peer_input
    source = instances.local_path(instances.manifest()["eil101"], str(DATA))
    out = tmp_path / "eil101.tsp"
    assert peer_input(source, out) == (101, "EUC_2D whole")
    lines = out.read_text().splitlines()
    assert [line.split(":")[0].strip() for line in lines[:5]] == ["NAME", "COMMENT", "TYPE", "DIMENSION",
                                                                  "EDGE_WEIGHT_TYPE"]
    assert lines[3] == "DIMENSION : 101" and lines[5] == "NODE_COORD_SECTION" and lines[-1] == "EOF"
    coords = [line.split() for line in lines[6:-1]]
    assert len(coords) == 101 and [int(c[0]) for c in coords] == list(range(1, 102))
    original = [line.split()[:3] for line in source.read_text().splitlines()
                if line.split() and line.split()[0].isdigit() and len(line.split()) == 3]
    assert coords == original


def test_a_non_euclidean_instance_is_refused_for_the_peer(tmp_path):
    from lsbench.errors import LsbenchError
    from tsp_peer import peer_input
    att = tmp_path / "att.tsp"
    att.write_text("NAME: x\nTYPE: TSP\nDIMENSION: 3\nEDGE_WEIGHT_TYPE: ATT\nNODE_COORD_SECTION\n1 0 0\n2 1 1\n3 2 2\nEOF\n")
    with pytest.raises(LsbenchError, match="EUC_2D"):
        peer_input(att, tmp_path / "out.tsp")


def test_the_peers_report_is_read_in_its_own_units():
    from tsp_peer import parse_peer
    report = ("2-opt TSP CUDA GPU code v2.3\nconfiguration: 2392 cities, 1056 restarts, x.tsp input\n"
              "thread block size: 256\nAverage kernel time: 12.3456 s\n588.123 Gmoves/s\n"
              "Best found tour length is 398765 with 3800000 climbers\nFAIL\n")
    assert parse_peer(report) == {"kernel_s": 12.3456, "moves_per_s": 588.123e9, "best_truncated_metric": 398765,
                                  "climbs": 3800000}


def test_lanes_merge_their_repeats_into_one_case_and_need_a_gpu_each(tmp_path, monkeypatch):
    """tsp_peer.py --lanes: the lanes' rows are one case's repeats (medians over all of them), and
    more lanes than visible GPUs are refused before any lane starts."""
    import argparse
    from lsbench.errors import LsbenchError
    from tsp_peer import case, in_lanes
    rows = [{"peer": {"moves_per_s": p, "best_truncated_metric": b},
             "hc": {"moves_per_s": h, "moves_per_wall_s": h / 2, "best_tsplib_metric": t, "layout": "chip"}}
            for p, b, h, t in [(800e9, 430, 900e9, 520), (900e9, 420, 1000e9, 510), (850e9, 440, 1100e9, 530)]]
    summary = case("x", 52, rows, {"hc": True}, ["hc"])["summary"]
    assert summary["peer_moves_per_s"] == 850e9 and summary["hc"]["moves_per_s"] == 1000e9
    assert summary["hc"]["ratio_to_peer"] == 1000 / 850 and summary["hc"]["best_tsplib_metric"] == 510
    assert summary["hc"]["wall_ratio_to_peer"] == 500 / 850 and summary["hc"]["layout"] == "chip"
    assert summary["peer_best_truncated_metric"] == 420
    for row in rows:  # an instance beyond --peer-up-to: lsbench alone, no ratio
        row["peer"] = None
    summary = case("x", 52, rows, {"hc": True}, ["hc"])["summary"]
    assert summary["peer_moves_per_s"] is None and summary["hc"]["ratio_to_peer"] is None
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3")
    with pytest.raises(LsbenchError, match="--lanes 2: only 1 GPUs visible"):
        in_lanes(argparse.Namespace(lanes=2))


def test_a_result_file_lists_the_modules_its_process_and_its_lsbench_children_ran(tmp_path, monkeypatch):
    """write_result's `source_files`: the benchmark's own lsbench modules and those an lsbench child
    process logged at exit, so a figure is checked against the engine code it ran."""
    import json
    import os
    import subprocess
    from common import write_result
    import lsbench.params  # noqa: F401  (a module of this process)
    monkeypatch.setenv("LSBENCH_SOURCE_LOG", str(tmp_path / "loaded.txt"))  # this test's children alone
    child = "import lsbench.neighborhoods"
    subprocess.run([sys.executable, "-c", child], check=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    logged = open(os.environ["LSBENCH_SOURCE_LOG"]).read().split()  # what the child wrote at its exit
    assert "lsbench/neighborhoods.py" in logged and "lsbench/params.py" not in logged
    rec = json.loads(write_result("probe", {}, tmp_path, gpu_tag="none").read_text())
    assert {"lsbench/params.py", "lsbench/neighborhoods.py", "lsbench/__init__.py"} <= set(rec["source_files"])


def test_a_figure_names_the_gpu_its_file_was_measured_on_when_the_benchmark_has_rows_called_gpu(tmp_path,
                                                                                               monkeypatch):
    """gpu_resident.py and gpu_resident_pfsp.py keep their rows under "gpu", over write_result's
    device: the page named such H100 files "NVIDIA H200"."""
    from common import write_result
    monkeypatch.setenv("LSBENCH_COMMIT", "26a5c81")  # (as on the device machine; a source archive has no git)
    from performance_page import provenance
    rec = json.loads(write_result("probe", {"gpu": [{"searches": 1}]}, tmp_path, gpu_tag="h100").read_text())
    assert rec["gpu"] == [{"searches": 1}] and "device_gpu" in rec
    rec["device_gpu"] = None  # (this host has no GPU; a device's record has its name here)
    line = provenance(rec, "gpu_resident-h100-26a5c81.json")
    assert line.startswith("NVIDIA H100, **")
    rec["device_gpu"] = {"name": "NVIDIA H200"}
    assert provenance(rec, "gpu_resident-h200-26a5c81.json").startswith("NVIDIA H200, **")


def test_the_ro_ts_figure_tabulates_the_engine_s_own_shapes_and_names_the_forced_block_sizes():
    """gpu_resident.py's default run adds forced block sizes (`--threads 1024,512/64@110`) beside the
    engine's choice: the table keeps one row per K (the engine's), the forced ones get a sentence with
    their best, and a forced shape without blocks an SM is not written "None an SM"."""
    from performance_page import render_gpu_resident
    shape = {"blocks_per_search": 1, "threads_per_block": 512, "persistent_blocks": 0}
    row = {"kernel_s": [1.0], "loop_s": [1.1], "vs_cpu_one_core": 10.0}
    rows = [{**row, "spec": "auto", "searches": 132, "aggregate_it_per_s": 7e7, "shape": {**shape, "blocks_per_sm": 2}},
            {**row, "spec": "1024", "searches": 132, "aggregate_it_per_s": 6e7,
             "shape": {**shape, "blocks_per_sm": None}},
            {**row, "spec": "1024", "searches": 264, "aggregate_it_per_s": 6.5e7, "shape": shape}]
    d = {"cpu": {"one_core_it_per_s": 1e4, "all_cores_it_per_s": 1e5, "cores": 16}, "gpu": rows, "instance": "tai100a",
         "trajectory_check": {"iterations": 10, "seed": 7, "same": True}, "command": "python gpu_resident.py",
         "date": "2026-12-06", "versions": {"lsbench_commit": "0000000"}, "host": {"cpu_count": 16}}
    text = "\n".join(render_gpu_resident(d, "gpu_resident-h100-0000000.json"))
    assert text.count("| 132 |") == 1 and "70,000,000" in text and "None" not in text
    assert "`1024` at most 65,000,000 it/s (K = 264)" in text


def test_the_pfsp_figure_shows_every_block_size_that_ran_and_names_those_that_did_not_fit():
    """gpu_resident_pfsp.py's default `--threads 128,256,512`: on an H100 512 threads do not fit an SM;
    the run goes on with the others, and the table has a row for each size that ran."""
    from performance_page import render_gpu_resident_pfsp
    ran = {"iterations_per_s": 9e3, "blocks": 125}
    d = {"cpu": {"cpu": {"iterations_per_s": 45.0}, "cpu-parallel": {"iterations_per_s": 360.0}},
         "gpu": [{**ran, "threads": 128}, {**ran, "threads": 256, "iterations_per_s": 1e4},
                 {"threads": 512, "fits": False, "why": "does not fit"}],
         "instance": "ta111", "n": 500, "m": 20, "moves_per_iteration": 249500, "same_trajectory_as_cpu": True,
         "command": "python gpu_resident_pfsp.py", "date": "2026-12-06", "versions": {"lsbench_commit": "0000000"},
         "host": {"cpu_count": 16}}
    text = "\n".join(render_gpu_resident_pfsp(d, "gpu_resident_pfsp-h100-0000000.json"))
    assert "125 blocks of 128 | 9,000 | **200**" in text and "125 blocks of 256 | 10,000 | **222**" in text
    assert "Blocks of 512 threads do not fit this GPU." in text


def test_device_run_pack_leaves_every_file_of_the_call_in_one_archive(tmp_path):
    """`device_run.sh pack`, a call's last step: the machine sends back only a few files a call, so
    every file under $OUT, nested ones too, goes into $OUT/results.tgz and nothing else is left."""
    import subprocess
    import tarfile
    bin_dir, out = tmp_path / "bin", tmp_path / "out"
    (out / "lane" / "b").mkdir(parents=True)
    bin_dir.mkdir()
    (bin_dir / "nvidia-smi").write_text("#!/bin/sh\necho 'GPU 0: NVIDIA H200'\n")
    (bin_dir / "nvidia-smi").chmod(0o755)
    names = {f"./r{k}.json" for k in range(9)} | {"./lane/b/deep.log"}
    for name in names:
        (out / name).write_text(name)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "OUT": str(out), "LSBENCH_INSTALLED": "1"}
    r = subprocess.run(["bash", str(ROOT / "benchmarks" / "device_run.sh"), "pack"], capture_output=True, text=True,
                       env=env, cwd=ROOT, timeout=60)
    assert r.returncode == 0, r.stderr
    assert [p.name for p in out.iterdir()] == ["results.tgz"]
    with tarfile.open(out / "results.tgz") as archive:
        assert set(archive.getnames()) == names
        assert archive.extractfile("./lane/b/deep.log").read() == b"./lane/b/deep.log"


def test_paper_reports_queues_reports_one_after_the_other_on_a_gpu_and_refuses_a_machine_without_one(tmp_path):
    """Two reports on a one-GPU machine run one after the other on GPU 0 (a second report beside the
    first would share its GPU), and both come back in $OUT/records.tgz; with CALL_S a report gets
    what is left of the call, and none starts with less than 2 minutes left; a report named in
    ALL_GPUS runs after the others with every GPU; REPLAN=1 drops the records a changed config
    plans otherwise; without a GPU the
    script says so in one line and exits 2 before installing or running anything."""
    import io
    import shutil
    import subprocess
    import tarfile
    bin_dir, fake = tmp_path / "bin", tmp_path / "benchmarks" / "device_run.sh"
    bin_dir.mkdir()
    fake.parent.mkdir()
    (bin_dir / "nvidia-smi").write_text("#!/bin/sh\necho 'GPU 0: NVIDIA H200 (UUID: GPU-0)'\n")
    (bin_dir / "nvidia-smi").chmod(0o755)
    fake.write_text(  # the device steps: each report says when it started and ended, on which GPU
        '[ $# -eq 0 ] && exit 0\nname=${1##* }\necho "start $name ${CUDA_VISIBLE_DEVICES-every GPU}" >> calls.txt\n'
        'echo "$1 $REPORTS_TIMEOUT" >> steps.txt\nsleep ${FAKE_S:-1}\n'
        'mkdir -p reports/$name && echo x > reports/$name/records.tgz\n'
        'tar czf "$OUT/report-records.tgz" reports/*/records.tgz\necho "end $name" >> calls.txt\n')
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "OUT": str(tmp_path / "out")}
    (tmp_path / "out").mkdir()
    r = subprocess.run(["bash", str(ROOT / "benchmarks" / "paper_reports.sh"), "luong_tsp", "luong_qap"],
                       capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "calls.txt").read_text().split("\n")[:4] == \
        ["start luong_tsp 0", "end luong_tsp", "start luong_qap 0", "end luong_qap"]
    with tarfile.open(tmp_path / "out" / "records.tgz") as archive:
        assert {"reports/luong_tsp/records.tgz", "reports/luong_qap/records.tgz"} <= set(archive.getnames())
    assert (tmp_path / "steps.txt").read_text().split("\n")[0] == "reports  --budget-s 450 luong_tsp 575"
    (tmp_path / "steps.txt").unlink()
    part = (tmp_path / "out" / "records.tgz").stat().st_size * 2 // 3  # (a limit the archive is over)
    shutil.rmtree(tmp_path / "out")
    (tmp_path / "out").mkdir()
    r = subprocess.run(["bash", str(ROOT / "benchmarks" / "paper_reports.sh"), "luong_tsp", "luong_qap"],
                       capture_output=True, text=True, env={**env, "RETURN_PART_BYTES": str(part)}, cwd=tmp_path,
                       timeout=60)
    parts = sorted((tmp_path / "out").glob("records.tgz.part*"))
    assert r.returncode == 0 and [p.name for p in parts] == ["records.tgz.part0", "records.tgz.part1"]
    assert not (tmp_path / "out" / "records.tgz").exists() and all(p.stat().st_size <= part for p in parts)
    with tarfile.open(fileobj=io.BytesIO(b"".join(p.read_bytes() for p in parts))) as archive:  # (cat restores it)
        assert {"reports/luong_tsp/records.tgz", "reports/luong_qap/records.tgz"} <= set(archive.getnames())
    (tmp_path / "steps.txt").unlink()
    r = subprocess.run(["bash", str(ROOT / "benchmarks" / "paper_reports.sh"), "luong_tsp", "luong_qap"],
                       capture_output=True, text=True, env={**env, "CALL_S": "152", "FAKE_S": "3"}, cwd=tmp_path,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    step = re.fullmatch(r"reports --continue --budget-s (\d+) luong_tsp (\d+)\n", (tmp_path / "steps.txt").read_text())
    budget, timeout = int(step[1]), int(step[2])  # (the first report starts within a second or two)
    assert 120 <= timeout <= 122 and budget == timeout - 60
    assert re.search(r"luong_qap: not started: 11[0-9] s left of CALL_S=152", r.stdout), r.stdout
    (tmp_path / "calls.txt").unlink()
    r = subprocess.run(["bash", str(ROOT / "benchmarks" / "paper_reports.sh"), "islands", "luong_tsp"],
                       capture_output=True, text=True, env={**env, "ALL_GPUS": "islands"}, cwd=tmp_path, timeout=60)
    assert r.returncode == 0 and (tmp_path / "calls.txt").read_text().split("\n")[:4] == \
        ["start luong_tsp 0", "end luong_tsp", "start islands every GPU", "end islands"]  # (ALL_GPUS: alone, last)
    (tmp_path / "steps.txt").unlink()
    r = subprocess.run(["bash", str(ROOT / "benchmarks" / "paper_reports.sh"), "luong_tsp"], capture_output=True,
                       text=True, env={**env, "REPLAN": "1"}, cwd=tmp_path, timeout=60)
    assert r.returncode == 0 and (tmp_path / "steps.txt").read_text() == \
        "reports --continue --drop-replanned --budget-s 450 luong_tsp 575\n"  # (REPLAN: a changed config's records go)
    (bin_dir / "nvidia-smi").write_text("#!/bin/sh\nexit 9\n")
    (tmp_path / "calls.txt").unlink()
    r = subprocess.run(["bash", str(ROOT / "benchmarks" / "paper_reports.sh"), "luong_tsp"],
                       capture_output=True, text=True, env={**env, "OUT": str(tmp_path / "none")}, cwd=tmp_path,
                       timeout=60)
    assert r.returncode == 2 and r.stderr.strip() == "paper_reports.sh: error: no GPU on this machine"
    assert not (tmp_path / "none").exists() and not (tmp_path / "calls.txt").exists() and r.stdout == ""


FAKE_PEER = """#!/bin/sh
echo "Average kernel time: 0.2000 s"
echo "800.000 Gmoves/s"
echo "Best found tour length is 430 with 2 climbers"
"""
SIMULATED_BENCHMARKS = {  # performance_page.py remeasure's scripts (and the A/B, the peer's lanes) at the simulator's sizes
    "gpu_resident": ("--instance tai12a --seconds 0.05 --searches 1,2 --threads auto --check-iterations 20 "
                     "--repeats 1 --probe 20", ["tai12a"]),
    "ab_resident": ("{root} --instance tai12a --searches 1 --iterations 20 --rounds 1 --check-iterations 20", ["tai12a"]),
    "time_to_bks": ("--instances tai12a --searches 2 --runs 1 --cap 1 --restart 100 --elite 1", ["tai12a"]),
    "ig_pfsp": ("--instances ta001 --runs 1 --cap 1 --searches 2", ["ta001"]),
    "gpu_resident_grid": ("--scaling pfsp:ta001:insertion --searches 1,2 --seconds 0.05 --repeats 1 --check 5",
                          ["ta001"]),
    "gpu_resident_pfsp": ("--instance ta001 --threads 64 --cpu-iterations 1 --gpu-iterations 2 --repeats 1",
                          ["ta001"]),
    "tsp_peer": ("--instances berlin52 --peer {peer} --built --lanes 2 --searches 2 --restarts 2 --check 2",
                 ["berlin52"]),
    "tabu_register_cap": ("--cases tsp:eil51:2opt --searches 2 --caps 0,128 --threads 32 --seconds 0.05 --repeats 1 "
                          "--check 3",
                          ["eil51"]),
    "small_two_opt": ("--reference eil51 --instances berlin52 --rows 1,auto --matrix-adapter --diagonal-loop "
                      "--threads 32 --searches 2 "
                      "--seconds 0.05 --repeats 1 --check 3", ["eil51", "berlin52"]),
    "two_opt_hits": ("--instances eil51 --rows 1 --warps 2 --iterations 20", ["eil51"]),
    "islands_target": ("--instance tai12a --ranks 2 --searches 4 --cap 2 --runs 1 --variants one-gpu,copy:200 "
                       "--param restart=100 --share-gpu", ["tai12a"]),
}


@pytest.mark.system
@pytest.mark.parametrize("script", SIMULATED_BENCHMARKS)
def test_each_benchmark_a_device_call_runs_writes_its_result_file_under_the_simulator(tmp_path, script):
    """A device call's benchmarks run end to end on the simulator's small sizes first, so that a
    script broken by an engine change (a renamed attribute, a moved module) fails here, not after
    minutes of device time; each writes its result file. TSP_GPU is a stand-in printing its report."""
    import json
    import subprocess
    args, names = SIMULATED_BENCHMARKS[script]
    need_instances(*names)
    peer = tmp_path / "peer"
    peer.mkdir()
    (peer / "tsp_gpu").write_text(FAKE_PEER)
    (peer / "tsp_gpu").chmod(0o755)
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "1", "LSBENCH_DATA": str(DATA), "CUDA_VISIBLE_DEVICES": "0,0"}
    r = subprocess.run([sys.executable, f"{script}.py", *args.format(peer=peer, root=ROOT).split(), "--out",
                        str(tmp_path)], cwd=script_folder(script), env=env, capture_output=True, text=True, timeout=1200)
    assert r.returncode == 0, r.stderr[-3000:]
    written = [p for p in tmp_path.glob("*.json") if "partial" not in p.name]
    assert len(written) == 1, written
    record = json.loads(written[0].read_text())
    assert record["benchmark"] == {"gpu_resident_grid": "tabu_scaling"}.get(script, script)
    assert record["command"].split()[1] == f"{script}.py"


@pytest.mark.system
def test_profile_cas_times_every_kernel_of_a_cas_generation_under_the_simulator(tmp_path):
    """benchmarks/research/profile_cas.py: both passes time the host's queueing of each of the colony's
    kernels (pheromone, ants, Ro-TS chunks, selection) per generation, the second the kernels' own
    GPU time too, for the tree it imported (this checkout); --out writes the same figures."""
    import json
    import subprocess
    need_instances("tai12a")
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "1", "LSBENCH_DATA": str(DATA)}
    r = subprocess.run([sys.executable, "profile_cas.py", "tai12a", "--generations", "2", "--ants", "3",
                        "--ls-iterations", "4", "--block", "64", "--out", str(tmp_path)], cwd=RESEARCH, env=env,
                       capture_output=True, text=True, timeout=1200)
    assert r.returncode == 0, r.stderr[-3000:]
    split = json.loads(r.stdout.split("CAS-SPLIT ", 1)[1].splitlines()[0])
    written = json.loads(next(tmp_path.glob("profile_cas-*.json")).read_text())
    assert written["figures"] == split["figures"] and written["small"] == {"ants": 3, "ls_iterations": 4}
    assert split["block"] == written["block"] == 64
    assert split["tree"] == str(ROOT) and split["generations"] == 2
    kernels = ("rots", "pheromone", "ants", "select")
    host, events = split["figures"]["tai12a"]["host"], split["figures"]["tai12a"]["events"]
    assert all(host[f"host {k}"] > 0 and events[f"host {k}"] > 0 for k in kernels) and host["wall"] > 0
    assert all(f"gpu {k}" in events for k in kernels) and not any(key.startswith("gpu") for key in host)


@pytest.mark.parametrize("args, says", [(["nosuch"], "profile_cas: error: --instance: unknown instance 'nosuch'"),
                                        (["tai12a", "--generations", "0"], "--generations: must be at least 1"),
                                        (["tai12a", "--tree", ".", "--out", "."], "--out: a result file names"),
                                        (["tai12a", "--block", "2000"], "profile_cas: error: --param block=2000: must be <= 1024"),
                                        (["tai12a", "--block", "0"], "profile_cas: error: --param block=0: must be >= 32")])
def test_profile_cas_refuses_bad_input_in_one_line_with_exit_2(args, says):
    """An unknown instance or an empty run: one error line and exit 2, not a traceback."""
    import subprocess
    r = subprocess.run([sys.executable, "profile_cas.py", *args], cwd=RESEARCH, capture_output=True,
                       text=True, timeout=300, env={**os.environ, "NUMBA_ENABLE_CUDASIM": "1"})
    assert r.returncode == 2 and says in r.stderr and "Traceback" not in r.stderr and "CAS-SPLIT" not in r.stdout


@pytest.mark.parametrize("args, says", [(["..", "--passes", "0"], "--passes: must be at least 1, got 0"),
                                        (["..", "--repeats", "0"], "--repeats: must be at least 1, got 0"),
                                        ([], "name at least one TREE"),
                                        (["..", "--budget-s", "0"], "--budget-s: must be above 0")])
def test_ab_trees_refuses_bad_input_in_one_line_with_exit_2(args, says):
    """No pass, no run or no tree to measure: one error line and exit 2, before any tree runs."""
    import subprocess
    r = subprocess.run([sys.executable, "ab_trees.py", *args], cwd=RESEARCH, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 2 and says in r.stderr.strip().splitlines()[-1] and "Traceback" not in r.stderr
    assert "pass 1" not in r.stdout


@pytest.mark.parametrize("args, says", [(["--variants", "one-gpu,swap:5"], "--variants: one-gpu, independent, copy:E"),
                                        (["--variants", "copy:0"], "got 'copy:0'"),
                                        (["--variants", "one-gpu+perturb"], "START+KEY=VALUE+..., got 'one-gpu+perturb'"),
                                        (["--variants", "one-gpu+=1"], "got 'one-gpu+=1'"),
                                        (["--searches", "5"], "searches a multiple of the ranks"),
                                        (["--runs", "0"], "at least one run"),
                                        (["--instance", "tai999z"], "tai999z")])
def test_islands_target_refuses_bad_input_in_one_line_with_exit_2(args, says):
    """An unknown variant or an uneven share: one error line and exit 2, before any run starts."""
    import subprocess
    r = subprocess.run([sys.executable, "islands_target.py", *args], cwd=RESEARCH, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 2 and says in r.stderr.strip().splitlines()[-1] and "Traceback" not in r.stderr
    assert "seed" not in r.stdout


def test_islands_target_passes_a_variants_own_params_after_the_runs_so_that_they_hold(monkeypatch, tmp_path):
    """one-gpu+perturb=0.5 runs the one-GPU start with the run's --param's, its own in place of
    the run's of the same key (lsbench refuses a key given twice): the variant's value holds."""
    import argparse
    import subprocess
    from pathlib import Path

    import islands_target
    from lsbench.params import split_pairs
    commands = []

    def fake_run(cmd, **kw):  # writes the summary the multistart would
        commands.append(cmd)
        out = Path(cmd[cmd.index("--out-dir") + 1])
        out.mkdir(parents=True)
        (out / "summary.json").write_text(json.dumps({"best_objective": 1, "gap_percent_of_best": 0.0, "runs": 1,
                                                      "aggregate_iterations_per_s": 1.0, "timed_union_s": 1.0}))
        return subprocess.CompletedProcess(cmd, 0, "", "")
    monkeypatch.setattr(islands_target, "mpirun", lambda: ["mpirun"])
    monkeypatch.setattr(islands_target, "run_to_end", fake_run)
    args = argparse.Namespace(searches=8, ranks=2, instance="tai12a", cap=1.0, percent=0.0, share_gpu=False,
                              param=["perturb=0.25", "restart=100"])
    row = islands_target.one(args, "one-gpu+perturb=0.5", seed=3)
    cmd = commands[0]
    given = [cmd[i + 1] for i, a in enumerate(cmd) if a == "--param"]
    assert given == ["perturb=0.5", "restart=100"]
    assert split_pairs(given) == {"perturb": "0.5", "restart": "100"}
    assert cmd[cmd.index("--searches") + 1] == "4" and row["variant"] == "one-gpu+perturb=0.5"


def test_islands_target_keeps_each_runs_pool_bests_and_what_a_killed_call_leaves(monkeypatch, tmp_path):
    """Each run's row holds its pools' bests from the searches' records (none where the searches
    hold no pools); a partial file holds every run done so far, so that a call stopped by its time
    limit keeps them; pool_resample.py draws from a variant's pool bests in the result file."""
    import argparse
    import subprocess
    from pathlib import Path

    import islands_target
    need_instances("tai12a")
    pooled = {"restart": {"pools": 2}}

    def fake_run(cmd, **kw):  # the summary and the 4 searches' records the multistart would write
        out = Path(cmd[cmd.index("--out-dir") + 1])
        out.mkdir(parents=True)
        first = int(cmd[cmd.index("--seed") + 1])
        (out / "summary.json").write_text(json.dumps({"best_objective": 1001, "gap_percent_of_best": 0.1, "runs": 1,
                                                      "aggregate_iterations_per_s": 1.0, "timed_union_s": 1.0}))
        for seed in range(first, first + 4):
            (out / f"seed-{seed}.json").write_text(json.dumps({
                "seed": seed, "best_objective": 1000 + seed, "bks": 1000, "batch": {"first_seed": first, "searches": 4},
                "backend_info": pooled}))
        return subprocess.CompletedProcess(cmd, 0, "", "")
    monkeypatch.setattr(islands_target, "mpirun", lambda: ["mpirun"])
    monkeypatch.setattr(islands_target, "run_to_end", fake_run)
    monkeypatch.setattr(sys, "argv", ["islands_target.py", "--instance", "tai12a", "--ranks", "1", "--searches", "4",
                                      "--runs", "2", "--first-seed", "1", "--variants", "one-gpu", "--out",
                                      str(tmp_path)])
    assert islands_target.main() == 0
    partial = json.loads((tmp_path / "islands_target-partial.json").read_text())
    assert [r["pool_bests"] for r in partial["rows"]["one-gpu"]] == [[1001, 1003], [1005, 1007]]
    [result] = [p for p in tmp_path.glob("islands_target-*.json") if p.name != "islands_target-partial.json"]
    assert json.loads(result.read_text())["rows"] == partial["rows"]
    r = subprocess.run([sys.executable, "pool_resample.py", str(result), "--variant", "one-gpu", "--pools", "1,2"],
                       cwd=RESEARCH, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "4 pools from 2 runs, the best 0.100 %" in r.stdout
    r = subprocess.run([sys.executable, "pool_resample.py", str(result), "--variant", "copy:100"],
                       cwd=RESEARCH, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "no runs of variant 'copy:100' with pool bests (has one-gpu)" in r.stderr
    pooled = {}  # searches without restart pools: no pool bests, the run's row kept
    args = argparse.Namespace(searches=4, ranks=1, instance="tai12a", cap=1.0, percent=0.0, share_gpu=False, param=[])
    assert islands_target.one(args, "one-gpu", seed=9)["pool_bests"] is None


def test_paired_target_pools_the_seed_blocks_every_variant_ran_from_result_files_and_a_report(tmp_path):
    """Runs from an islands_target.py file and a report's records (its backends under variant
    names) pool into one median a variant, a miss counted as never, over the seed blocks that
    every variant ran; another instance's file, an unpaired run and an islands run of another interval
    than its variant's stay out; bad input: one line, exit 2."""
    import subprocess
    import tarfile
    result = tmp_path / "islands_target-h200-abcdef0.json"
    result.write_text(json.dumps({"instance": "tai50a", "rows": {
        "one-gpu": [{"seed": 1, "first_time_to_target_s": 10.0}, {"seed": 9, "first_time_to_target_s": None}],
        "copy:500000": [{"seed": 1, "first_time_to_target_s": 2.0}, {"seed": 9, "first_time_to_target_s": 4.0}],
        "copy:100000": [{"seed": 1, "first_time_to_target_s": 1.0}]}}))
    other = tmp_path / "islands_target-h200-abcdef0-2.json"
    other.write_text(json.dumps({"instance": "tai60a", "rows": {"one-gpu": [{"seed": 5, "first_time_to_target_s": 0.1}],
                                                               "copy:500000": [{"seed": 5, "first_time_to_target_s": 0.1}]}}))
    cell = tmp_path / "tree" / "runs" / "g" / "tai50a"
    cell.mkdir(parents=True)
    for backend, seed, first, every in (("gpus-1", 100, 6.0, None), ("islands-2", 100, 3.0, 500000),
                                        ("gpus-1", 200, 8.0, None), ("gpus-1", 300, 5.0, None),
                                        ("islands-2", 300, 0.5, 100000)):  # (300: an earlier plan's interval)
        islands = {"migrant_start": "copy", "exchange_every": every} if every else None
        (cell / f"{backend}-s{seed}.json").write_text(json.dumps({"multistart": {"first_time_to_target_s": first},
                                                                  "islands": islands}))
    (cell / "cpu-s100.json").write_text(json.dumps({"best_objective": 1}))
    report = tmp_path / "report"
    report.mkdir()
    with tarfile.open(report / "records.tgz", "w:gz") as archive:
        archive.add(tmp_path / "tree" / "runs", arcname="runs")

    def paired(*args):
        return subprocess.run([sys.executable, "paired_target.py", str(result), str(other), "--instance", "tai50a",
                               *args], cwd=RESEARCH, capture_output=True, text=True, timeout=120)
    r = paired("--report", str(report), "--group", "g", "--report-backend", "gpus-1=one-gpu",
               "--report-backend", "islands-2=copy:500000", "--variants", "one-gpu,copy:500000")
    assert r.returncode == 0, r.stderr
    assert "3 paired seed blocks" in r.stdout  # seeds 1 and 9 of the file, 100 of the report; not 200 nor 300
    assert "| one-gpu | 2/3 | 10.00 | 1.00 |" in r.stdout and "| copy:500000 | 3/3 | 3.00 | 0.30 |" in r.stdout
    r = paired("--variants", "one-gpu,copy:100000")
    assert r.returncode == 0 and "1 paired seed blocks" in r.stdout and "| copy:100000 | 1/1 | 1.00 | 0.10 |" in r.stdout
    for args, says in ((["--variants", "one-gpu"], "two or more names"),
                       (["--variants", "one-gpu,copy:500000", "--report", str(report)], "needs --group"),
                       (["--variants", "one-gpu,cross:1"], "no seed block of tai50a ran every one")):
        r = paired(*args)
        assert r.returncode == 2 and says in r.stderr and "Traceback" not in r.stderr
    broken = tmp_path / "islands_target-h200-abcdef0-3.json"
    broken.write_text(json.dumps({"rows": []}))
    for script, args in (("paired_target.py", ["--instance", "tai50a", "--variants", "one-gpu,copy:500000"]),
                         ("pool_resample.py", ["--variant", "one-gpu"])):  # (one reader of the file for both)
        r = subprocess.run([sys.executable, script, str(broken), *args], cwd=RESEARCH,
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 2 and r.stderr.count("\n") == 1 and "not an islands_target.py result file" in r.stderr


def test_pool_resample_groups_each_batchs_searches_into_the_engines_pools_and_draws_the_best_of_m(tmp_path):
    """Each engine run's searches (a batch) form its pools as the engine forms them, consecutive
    seeds together; the best of all pools drawn is the records' best; more pools than the records
    hold, a missing archive or cell: one error line, exit 2."""
    import subprocess
    import tarfile

    import pool_resample
    from lsbench.errors import LsbenchError
    runs = tmp_path / "tree" / "runs" / "g" / "tai12a"
    for first in (1, 5):  # two engine runs of 4 searches, 2 pools each
        folder = runs / "gpus-1-s1-searches"
        folder.mkdir(parents=True, exist_ok=True)
        for seed in range(first, first + 4):
            (folder / f"seed-{seed}.json").write_text(json.dumps({
                "seed": seed, "best_objective": 1000 + seed, "bks": 1000, "batch": {"first_seed": first, "searches": 4},
                "backend_info": {"restart": {"pools": 2}}}))
    bests, bks = pool_resample.pool_bests(runs / "gpus-1-s1-searches")
    assert (sorted(bests), bks) == ([1001, 1003, 1005, 1007], 1000)  # pools {1,2} {3,4} {5,6} {7,8}
    drawn = pool_resample.resample(bests * 2, bks, [1, 4], draws=400, gap=0.3)  # 8 pools, each gap twice
    assert drawn[4]["median_gap_percent"] == pytest.approx(0.1) and 0.95 < drawn[4]["share_at_gap"] < 1
    assert 0.1 <= drawn[1]["median_gap_percent"] <= 0.7 and 0 < drawn[1]["share_at_gap"] < 1
    with pytest.raises(LsbenchError, match="at most half the records' 4 pools"):  # draws of 3 of 4 mostly hold the best
        pool_resample.resample(bests, bks, [3], draws=10, gap=0.3)
    one_search = runs / "cpu-s1-searches"  # a multistart of searches that hold no pools
    one_search.mkdir()
    (one_search / "seed-1.json").write_text(json.dumps({"seed": 1, "best_objective": 1001, "bks": 1000,
                                                         "backend_info": {}}))
    with tarfile.open(tmp_path / "records.tgz", "w:gz") as archive:
        archive.add(tmp_path / "tree" / "runs", arcname="runs")
    for args, says in ((["--group", "g", "--backend", "gpus-1", "--pools", "5"], "--pools 5: at most half the records' 4 pools"),
                       (["--group", "h", "--backend", "gpus-1"], "no runs of gpus-1 in group h"),
                       (["--group", "g", "--backend", "gpus-1", "--pools", "0"], "positive counts"),
                       (["--group", "g", "--backend", "cpu"], "cpu-s1-searches: not a run of resident Ro-TS")):
        r = subprocess.run([sys.executable, "pool_resample.py", str(tmp_path), *args], cwd=RESEARCH,
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 2 and says in r.stderr and "Traceback" not in r.stderr
    r = subprocess.run([sys.executable, "pool_resample.py", str(tmp_path), "--group", "g", "--backend", "gpus-1",
                        "--pools", "1,2", "--gap", "0.5", "--out", str(tmp_path / "out.json")],
                       cwd=RESEARCH, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "| 1 | " in r.stdout and "| 2 | " in r.stdout
    assert json.loads((tmp_path / "out.json").read_text())["pools"] == 4


def test_ab_trees_keeps_the_passes_that_fit_its_budget_and_drops_one_that_overran(monkeypatch, capsys):
    import time

    import ab_trees
    calls = []

    def fake_tree(name, cases, repeats, timeout):  # a pass of two trees takes about 0.4 s
        calls.append((name, timeout))
        if len(calls) == 4:
            return None  # the second pass's second tree runs past its timeout
        time.sleep(0.2)
        return {case: [float(len(calls))] for case in cases}
    monkeypatch.setattr(ab_trees, "measure_tree", fake_tree)
    figures, done = ab_trees.run_passes(["a", "b"], ["rots-1"], passes=3, repeats=1, budget_s=30)
    assert done == 1 and figures == {"a": {"rots-1": [1.0]}, "b": {"rots-1": [2.0]}}
    assert all(timeout <= 30 for _, timeout in calls) and "pass 2 ran past --budget-s, dropped" in capsys.readouterr().out

    calls.clear()
    monkeypatch.setattr(ab_trees, "measure_tree", lambda *a: calls.append(a) or time.sleep(0.3) or {"rots-1": [1.0]})
    figures, done = ab_trees.run_passes(["a", "b"], ["rots-1"], passes=5, repeats=1, budget_s=1.0)
    assert done == 1 and len(calls) == 2 and figures["a"]["rots-1"] == [1.0]  # 0.4 s left < a 0.6 s pass
    assert "1 of 5 passes" in capsys.readouterr().out

    monkeypatch.setattr(ab_trees, "measure_tree", lambda *a: None)
    with pytest.raises(SystemExit, match="the first pass ran past --budget-s 5"):
        ab_trees.run_passes(["a"], ["rots-1"], passes=2, repeats=1, budget_s=5)


def test_islands_target_stopped_by_sigterm_writes_the_runs_every_variant_finished(monkeypatch, tmp_path, capsys):
    """SIGTERM (a call's time limit) during run 2's second variant drops run 2 and writes run 1 of
    both variants as the result file, saying where it stopped; SIGTERM before any run finished is one
    error line and exit 2, and no result file."""
    import os
    import signal
    import subprocess
    from pathlib import Path

    import islands_target
    need_instances("tai12a")
    started = []

    def fake_run(cmd, **kw):
        started.append(cmd)
        if len(started) == stop_at:
            os.kill(os.getpid(), signal.SIGTERM)
        out = Path(cmd[cmd.index("--out-dir") + 1])
        out.mkdir(parents=True)
        (out / "summary.json").write_text(json.dumps({"best_objective": 1001, "gap_percent_of_best": 0.1, "runs": 1,
                                                      "aggregate_iterations_per_s": 1.0, "timed_union_s": 1.0,
                                                      "first_time_to_target_s": 2.0}))
        return subprocess.CompletedProcess(cmd, 0, "", "")
    monkeypatch.setattr(islands_target, "mpirun", lambda: ["mpirun"])
    monkeypatch.setattr(islands_target, "run_to_end", fake_run)
    argv = ["islands_target.py", "--instance", "tai12a", "--ranks", "2", "--searches", "4", "--runs", "3",
            "--first-seed", "1", "--variants", "one-gpu,independent", "--out", str(tmp_path)]
    monkeypatch.setattr(sys, "argv", argv)
    stop_at = 4  # run 2's independent
    assert islands_target.main() == 0
    assert len(started) == 4 and signal.getsignal(signal.SIGTERM) is not islands_target.raise_stopped
    [result] = [p for p in tmp_path.glob("islands_target-*.json") if p.name != "islands_target-partial.json"]
    written = json.loads(result.read_text())
    assert {v: [r["seed"] for r in rs] for v, rs in written["rows"].items()} == {"one-gpu": [1], "independent": [1]}
    assert written["stopped"] == "stopped by SIGTERM after 1 of 3 runs"
    assert written["summary"]["independent"]["reached"] == 1 and "| one-gpu | 1/1 |" in capsys.readouterr().out
    result.unlink()
    started.clear()
    stop_at = 1
    assert islands_target.run_main(islands_target.main) == 2
    assert "error: stopped by SIGTERM after 0 of 3 runs: nothing to write" in capsys.readouterr().err
    assert [p.name for p in tmp_path.glob("islands_target-*.json")] == ["islands_target-partial.json"]



def test_best_distances_counts_the_positions_each_runs_best_differs_from_the_reference_and_the_others(tmp_path):
    """A run whose best is the .sln's permutation differs from it nowhere, a run one swap away in
    two positions; a .sln that lists the inverse permutation is read the right way round; one
    whose permutation costs neither way its value, or a missing cell: one error line, exit 2."""
    import shutil
    import subprocess
    import tarfile

    import numpy as np

    need_instances("tai12a")
    from lsbench import instances
    from lsbench.problems.qap import read_sln
    entry = instances.manifest()["tai12a"]
    value, perm = read_sln(instances.reference_path(entry, DATA))
    swapped = perm.copy()
    swapped[[0, 5]] = swapped[[5, 0]]
    problem = instances.load("tai12a", None, str(DATA))
    runs = tmp_path / "tree" / "runs" / "g" / "tai12a"
    for seed, solutions in ((1, [swapped, perm]), (2, [swapped])):  # run 1's best is the reference itself
        folder = runs / f"gpus-1-s{seed}-searches"
        folder.mkdir(parents=True)
        for k, solution in enumerate(solutions):
            (folder / f"seed-{seed + k}.json").write_text(json.dumps({
                "seed": seed + k, "best_objective": int(problem.exact_objective(solution)), "bks": value,
                "best_solution": solution.tolist()}))
    with tarfile.open(tmp_path / "records.tgz", "w:gz") as archive:
        archive.add(tmp_path / "tree" / "runs", arcname="runs")
    data = tmp_path / "data" / "qaplib"
    data.mkdir(parents=True)
    shutil.copy(instances.local_path(entry, DATA), data)

    def run(sln_permutation, sln_value, *args):
        (data / "tai12a.sln").write_text(f"12\n{sln_value}\n{' '.join(str(v + 1) for v in sln_permutation)}\n")
        return subprocess.run([sys.executable, "best_distances.py", str(tmp_path), "--group", "g", "--backends",
                               "gpus-1", "--data-dir", str(data.parent), "--out", str(tmp_path / "out.json"), *args],
                              cwd=RESEARCH, capture_output=True, text=True, timeout=120)

    for listed in (perm, np.argsort(perm)):  # the file's own way round, then the other
        r = run(listed, value)
        assert r.returncode == 0, r.stderr
        rows = json.loads((tmp_path / "out.json").read_text())["backends"]["gpus-1"]
        assert [(row["run"], row["gap_percent"], row["differs_from_reference"], row["median_differs_from_other_runs"])
                for row in rows] == [("gpus-1-s1", 0.0, 0, 2), ("gpus-1-s2", pytest.approx(
                    (problem.exact_objective(swapped) / value - 1) * 100), 2, 2)]
        assert "| gpus-1-s1 | 0.000 | 0 | 2 |" in r.stdout
    for args, says in (([], "does not cost its value"), (["--group", "h"], "no runs of gpus-1 in group h"),
                       (["--backends", ","], "at least one backend")):
        r = run(perm, value + 1, *args)
        assert r.returncode == 2 and says in r.stderr and "Traceback" not in r.stderr


def test_tsp_peer_merges_files_of_one_commit_and_refuses_others(tmp_path):
    """A run cut by a device call's limit continues in another call: their files merge into one
    result when commit, GPU and settings agree; an instance measured in two calls is one case of all
    its repeats, refused where its peer ran at other climbs."""
    import json
    from tsp_peer import merged
    from lsbench.errors import LsbenchError

    def row(g):
        return {"peer": {"moves_per_s": 800e9, "best_truncated_metric": 9},
                "hc": {"moves_per_s": g * 1e9, "moves_per_wall_s": g * 1e9 / 2, "best_tsplib_metric": g}}

    def part(name, commit, instances, searches=1056, loaded=("gpu/device.py",), hc=(1000,), climbs=1056, check=True):
        cases = [{"summary": {"instance": i, "n": 99, "peer_restarts": climbs,
                              "hc": {"same_trajectory_as_cpu": check}}, "rows": [row(g) for g in hc]}
                 for i in instances]
        data = {"benchmark": "tsp_peer", "command": f"/usr/bin/python3 tsp_peer.py --instances {','.join(instances)}",
                "date": f"2026-12-02T1{len(name)}:00:00+0000", "versions": {"lsbench_commit": commit},
                "gpu": {"name": "NVIDIA H200"}, "peer": "TSP_GPU", "peer_flags": [], "restarts": {"*": climbs},
                "searches": searches, "lanes": 1, "source_files": list(loaded), "cases": cases}
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(data))
        return str(path)

    one = part("a", "abc1234", ["pr2392", "d2103"], loaded=("gpu/device.py", "lsbench/backends/cpu.py"))
    two = part("bb", "abc1234", ["u2319"])  # (no CPU check: fewer modules loaded)
    m = merged([one, two])
    assert m["source_files"] == ["gpu/device.py", "lsbench/backends/cpu.py"]
    assert [c["summary"]["instance"] for c in m["cases"]] == ["pr2392", "d2103", "u2319"]
    assert [c["date"] for c in m["calls"]] == ["2026-12-02T11:00:00+0000", "2026-12-02T12:00:00+0000"]
    assert m["command"].endswith(" ; then tsp_peer.py --instances u2319")
    with pytest.raises(LsbenchError, match="versions differ"):
        merged([one, part("c", "abc1234"[::-1], ["u2319"])])
    with pytest.raises(LsbenchError, match="searches differ"):
        merged([one, part("d", "abc1234", ["u2319"], searches=132)])
    # d2103's third repeat in a call of its own: one case, the median of all three, unchecked there
    m = merged([part("e", "abc1234", ["d2103"], hc=(900, 1100)),
                part("ff", "abc1234", ["d2103"], hc=(1200,), check=None)])
    (joined,) = m["cases"]
    assert len(joined["rows"]) == 3 and joined["summary"]["hc"]["moves_per_s"] == 1100e9
    assert joined["summary"]["hc"]["ratio_to_peer"] == 1100 / 800 and joined["summary"]["peer_restarts"] == 1056
    assert joined["summary"]["hc"]["same_trajectory_as_cpu"] is True
    m = merged([part("g", "abc1234", ["d2103"]), part("hh", "abc1234", ["d2103"], check=False)])
    assert m["cases"][0]["summary"]["hc"]["same_trajectory_as_cpu"] is False
    with pytest.raises(LsbenchError, match="d2103's peer ran at 528 and 1056 climbs"):
        merged([one, part("i", "abc1234", ["d2103"], climbs=528)])


def test_tsp_peer_runs_the_peer_once_where_asked_and_at_each_repeat_elsewhere(tmp_path, monkeypatch):
    """--peer-once: one peer process of --repeats timed launches before the repeats (its own mean),
    not a warm-up and a launch at every repeat; the case keeps that one figure."""
    import argparse
    import tsp_peer
    launches = []
    monkeypatch.setattr(tsp_peer, "peer_input", lambda source, out: (99, "EUC_2D whole"))
    monkeypatch.setattr(tsp_peer, "instance_file", lambda instance, data: tmp_path / "x.tsp")
    monkeypatch.setattr(tsp_peer, "run_peer", lambda binary, path, restarts, n=1: launches.append((restarts, n)) or
                        {"kernel_s": 1.0, "moves_per_s": 8e11 + len(launches), "best_truncated_metric": 9,
                         "timed_launches": n})
    monkeypatch.setattr(tsp_peer, "run_lsbench", lambda *a: {"moves_per_s": 1e12, "moves_per_wall_s": 9e11,
                                                             "best_tsplib_metric": 7, "layout": "chip"})
    args = argparse.Namespace(peer=str(tmp_path), peer_on=None, restarts={"*": 1056, "big": 528}, check=0,
                              check_below=20_000, algorithms=["hc"], searches=4, repeats=3, seconds=3.0, data_dir=None,
                              peer_once=["big"])
    big = tsp_peer.compare(args, "big", "peer")
    assert launches == [(528, 3)] and [r["peer"] is not None for r in big["rows"]] == [True, False, False]
    assert big["summary"]["peer_moves_per_s"] == 8e11 + 1 and big["summary"]["peer_restarts"] == 528
    small = tsp_peer.compare(args, "small", "peer")
    assert launches[1:] == [(1056, 1)] * 3 and all(r["peer"] for r in small["rows"])
    assert small["summary"]["peer_moves_per_s"] == 8e11 + 3


def test_tsp_peer_takes_the_peers_climbs_per_instance():
    import argparse
    from tsp_peer import parse_restarts, restarts_text
    assert parse_restarts("1056") == {"*": 1056}
    spec = parse_restarts("1056,fnl4461:528,rl5915:528")
    assert spec == {"*": 1056, "fnl4461": 528, "rl5915": 528} and restarts_text(spec) == "1056,fnl4461:528,rl5915:528"
    for bad in ("fnl4461:528", "1056,rl5915:0", "many"):
        with pytest.raises(argparse.ArgumentTypeError):
            parse_restarts(bad)


@pytest.mark.parametrize("args, says", [(["--restart", "4000", "--param", "restart=100"], "--param restart: given as "
                                                                                          "--restart too"),
                                        (["--algorithm", "cas", "--restart", "10"], "rots' settings")])
def test_time_to_bks_refuses_a_setting_given_twice_or_not_its_algorithms(args, says):
    """--restart 4000 with --param restart=100 kept the second silently; now one line, exit 2."""
    import subprocess
    r = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "time_to_bks.py"), "--searches", "2", *args],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and says in r.stderr.strip().splitlines()[-1] and "Traceback" not in r.stderr
