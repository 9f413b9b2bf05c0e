"""Max-Cut proved with lsbench's kit (lsbench.testing.check_problem), as a plug-in author would:
deltas against the cut from scratch, the same trajectory on cpu and cpu-parallel, records that
verify, malformed graph files refused in one line."""
import os
from pathlib import Path

import numpy as np
import pytest

from lsbench.testing import check_problem
from lsbench_maxcut.problem import MaxCut


def rudy(folder, n, m, seed, weights=(1,)):
    """A random graph in the G-set's rudy format: `n m`, then m lines `i j w`."""
    rng = np.random.default_rng(seed)
    pairs = set()
    while len(pairs) < m:
        i, j = sorted(rng.choice(n, size=2, replace=False) + 1)
        pairs.add((int(i), int(j)))
    lines = [f"{n} {m}"] + [f"{i} {j} {rng.choice(weights)}" for i, j in sorted(pairs)]
    path = Path(folder) / f"g{n}-{m}-{seed}.txt"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_maxcut_passes_lsbenchs_kit(tmp_path):
    graphs = [rudy(tmp_path, 12, 30, 1), rudy(tmp_path, 20, 60, 2, weights=(-1, 1))]
    check_problem("maxcut", graphs, out_dir=tmp_path,
                  malformed={"short.txt": "5 3\n1 2 1\n2 3 1\n", "loop.txt": "3 1\n2 2 1\n",
                             "range.txt": "3 1\n1 4 1\n", "words.txt": "3 1\n1 two 1\n", "binary.txt": b"\x00\xff"})


def test_the_cut_of_a_small_graph_is_what_a_hand_count_says(tmp_path):
    path = tmp_path / "square.txt"
    path.write_text("4 4\n1 2 1\n2 3 1\n3 4 1\n4 1 1\n")
    p = MaxCut.from_file(path)
    assert p.objective(np.array([0, 1, 0, 1])) == -4 and p.objective(np.array([0, 0, 1, 1])) == -2
    assert p.exact_objective([0, 1, 0, 1]) == -4


@pytest.mark.skipif(not (Path(os.environ.get("LSBENCH_TEST_DATA", "/nonexistent")) / "gset" / "G1.txt").exists(),
                    reason="G1 (the G-set) is not in LSBENCH_TEST_DATA")
def test_maxcut_passes_the_kit_on_a_gset_graph(tmp_path):
    check_problem("maxcut", [Path(os.environ["LSBENCH_TEST_DATA"]) / "gset" / "G1.txt"], gpu=False,
                  out_dir=tmp_path, iterations=20, moves=5)


def test_the_gset_graphs_are_named_and_fetched_through_the_plug_ins_manifest(tmp_path):
    """The example's `lsbench.instances` entry point: lsbench lists the 66 G-set graphs with their
    best-known values (minus the best cuts) and fetches one into the data directory's gset/
    folder, checked against its sha256 (from a local mirror where LSBENCH_TEST_DATA has one)."""
    from lsbench import instances
    graphs = instances.entries("maxcut")
    assert len(graphs) == 66 and instances.manifest()["G22"].bks_value() == -13359
    assert instances.local_path(instances.manifest()["G22"], str(tmp_path)) == tmp_path / "gset" / "G22.txt"
    mirror = Path(os.environ.get("LSBENCH_TEST_DATA", "/nonexistent"))
    if not (mirror / "gset" / "G22.txt").exists():
        pytest.skip("G22 (the G-set) is not in LSBENCH_TEST_DATA")
    path = instances.fetch("G22", data=str(tmp_path), mirror=str(mirror))
    assert path == tmp_path / "gset" / "G22.txt" and instances.load("G22", data=str(tmp_path)).n == 2000


@pytest.mark.system
def test_maxcut_multistarts_over_mpi_and_dask_give_the_same_verified_searches(tmp_path):
    """Installed as a plug-in, Max-Cut runs lsbench's own multistart: 4 searches over 2 MPI ranks
    and over a local Dask cluster; seed by seed the same best, and each record replays on the CPU."""
    import json
    import subprocess
    import sys
    graph = rudy(tmp_path, 40, 120, 3)
    runs = {"mpi": [str(Path(sys.executable).parent / "mpiexec"), "-n", "2"], "dask": []}
    bests = {}
    for via, launcher in runs.items():
        out = tmp_path / via
        cmd = [*launcher, sys.executable, "-m", "lsbench", "multistart", "--problem", "maxcut", "--instance",
               str(graph), "--algorithm", "tabu", "--searches", "4", "--iterations", "200", "--out-dir", str(out),
               *(["--via", "dask"] if via == "dask" else [])]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0 and f"searches done via {via}" in r.stdout, r.stderr[-2000:]
        records = sorted(out.glob("seed-*.json"))
        v = subprocess.run([sys.executable, "-m", "lsbench", "verify", "--replay", *map(str, records)],
                           capture_output=True, text=True, timeout=300)
        assert v.returncode == 0 and v.stdout.count("replayed on the CPU") == 4, v.stderr
        bests[via] = [json.loads(p.read_text())["best_objective"] for p in records]
    assert bests["mpi"] == bests["dask"]
