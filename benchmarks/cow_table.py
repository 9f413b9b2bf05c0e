"""COW (MPI) speed-up table for PPP Hamming-2, beside the GPU, in one run on one host (the shape of
Luong et al.'s Table 10).

    python benchmarks/cow_table.py [--ranks 1,2,4,8,16] [--instances 73-73,...] [--budget 3]

For each instance: the same tabu search (seed 1, fixed iterations sized so one CPU core needs about
`--budget` seconds) on `cpu` (one core), `cow` under `mpirun -n K` (one thread per rank, so K
ranks use K cores; the master evaluates a slice too) and `gpu` with device-side reduction. Times are
the runs' own timed wall clocks (after warm-up and JIT compile), iterations/s and the COW time split
(evaluation / communication / master) come from the run records, and every run must follow the
cpu trajectory. Speed-up = cpu time / backend time, same run.
"""
import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from common import write_atomic, write_result

from lsbench.processes import run_to_end

ROOT = Path(__file__).resolve().parent.parent
INSTANCES = ["73-73", "201-217", "401-417", "601-617", "801-817", "1001-1017", "1301-1317"]


def mpirun():
    exe = shutil.which("mpirun") or shutil.which("mpiexec") or str(Path(sys.executable).parent / "mpiexec")
    extra = ["--allow-run-as-root", "--bind-to", "none", "--oversubscribe"] \
        if "Open MPI" in subprocess.run([exe, "--version"], capture_output=True, text=True).stdout else []
    return [exe, *extra]


def run(instance, iterations, backend, out, ranks=None, params=()):
    cmd = [sys.executable, "-m", "lsbench", "run", "--instance", instance, "--neighbourhood", "hamming2",
           "--algorithm", "tabu", "--backend", backend, "--seed", "1", "--iterations", str(iterations),
           "--warmup", "1", "--out", str(out), "--quiet"]
    for p in params:
        cmd += ["--param", p]
    if ranks:
        cmd = [*mpirun(), "-n", str(ranks), *cmd, "--threads", "1"]
    r = run_to_end(cmd, cwd=ROOT, timeout=900)  # (a stop ends mpirun and its ranks)
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{r.stderr[-3000:]}")
    return json.loads(Path(out).read_text())


def path_of(rec):
    return [(it, obj) for it, _t, obj in rec["trajectory"]], rec["final_objective"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ranks", default="1,2,4,8,16")
    ap.add_argument("--instances", default=",".join(INSTANCES))
    ap.add_argument("--budget", type=float, default=3.0, help="seconds of one CPU core per instance")
    ap.add_argument("--no-gpu", action="store_true")
    ap.add_argument("--out")
    args = ap.parse_args()
    ranks = [int(r) for r in args.ranks.split(",")]
    rows = []
    tmp = Path(tempfile.mkdtemp())
    path = None
    for inst in args.instances.split(","):
        probe = run(inst, 1, "cpu", tmp / "probe.json")  # sizes the budget
        iterations = max(1, int(args.budget / probe["wall_s"]))
        cpu = run(inst, iterations, "cpu", tmp / "cpu.json") if iterations > 1 else probe
        row = {"instance": inst, "n": len(cpu["best_solution"]), "moves": cpu["neighbourhood_size"],
               "iterations": iterations, "cpu_s": cpu["wall_s"], "cpu_it_per_s": cpu["iterations_per_s"],
               "cow": {}, "same_trajectory": True}
        for k in ranks:
            rec = run(inst, iterations, "cow", tmp / f"cow{k}.json", ranks=k)
            row["same_trajectory"] &= path_of(rec) == path_of(cpu)
            row["cow"][k] = {"s": rec["wall_s"], "speedup": round(cpu["wall_s"] / rec["wall_s"], 3),
                             "time_split": rec["backend_info"]["time_split"]}
        if not args.no_gpu:
            rec = run(inst, iterations, "gpu", tmp / "gpu.json", params=["reduce=device"])
            row["same_trajectory"] &= path_of(rec) == path_of(cpu)
            row["gpu"] = {"s": rec["wall_s"], "speedup": round(cpu["wall_s"] / rec["wall_s"], 3),
                          "device": rec["backend_info"].get("device")}
        rows.append(row)
        print(json.dumps({k: v for k, v in row.items() if k != "cow"}), flush=True)
        payload = {"ranks": ranks, "rows": rows, "threads_per_rank": 1, "mpirun": " ".join(mpirun())}
        if path is None:
            path = write_result("cow_table", payload, args.out)
        else:  # rewritten after every instance: a cut-short run keeps what it measured
            write_atomic(path, {**json.loads(path.read_text()), **payload})
    print(f"\nCOW PPP Hamming-2, tabu search, speed-up vs one CPU core (same run) -> {path}")
    print(f"{'instance':>10} {'iters':>6} {'cpu s':>8} " + " ".join(f"{'cow' + str(k):>7}" for k in ranks)
          + f" {'gpu':>8} same-traj")
    for r in rows:
        print(f"{r['instance']:>10} {r['iterations']:>6} {r['cpu_s']:>8.3f} "
              + " ".join(f"{r['cow'][k]['speedup']:>7.2f}" for k in ranks)
              + f" {r.get('gpu', {}).get('speedup', float('nan')):>8.1f} {r['same_trajectory']}")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
