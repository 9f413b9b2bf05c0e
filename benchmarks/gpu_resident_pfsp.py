"""Device-resident PFSP insertion tabu search vs the CPU tabu search, one host, one run: ta111 (500 x 20).

    python benchmarks/gpu_resident_pfsp.py [--instance ta111] [--cpu-iterations 40] [--gpu-iterations 4000]

Both sides minimise the makespan with Taillard's acceleration over the whole insertion
neighbourhood (n(n-1) moves per iteration):
- CPU one core: `--backend cpu` (Numba, one thread), the same TabuSearch loop a user runs;
- CPU all cores: `--backend cpu-parallel` (the neighbourhood over all cores), for reference;
- GPU: `--backend gpu-resident` (gpu/engine/resident_pfsp.py), one search over the whole GPU, for
  several block sizes.
Iterations/s are medians of repeats after a warm-up (JIT compile). A trajectory check compares the
GPU search with the CPU one-core search of the same seed over the CPU run's iterations.
"""
import argparse
import statistics
import sys
import time

from common import write_result

from lsbench import instances as registry
from lsbench.errors import LsbenchError
from lsbench.registry import get_evaluator
from lsbench.interfaces import Stop
from lsbench.search.tabu import TabuSearch


def cpu_run(problem, backend, seed, iterations):
    nb = problem.neighbourhood("insertion")
    ev = get_evaluator(backend).bind(problem, nb)
    t = time.perf_counter()
    r = TabuSearch().run(problem, nb, ev, Stop(iterations=iterations), seed)
    return r, time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--instance", default="ta111")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--cpu-iterations", type=int, default=40)
    ap.add_argument("--gpu-iterations", type=int, default=4000)
    ap.add_argument("--threads", default="128,256,512")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out")
    args = ap.parse_args()
    from lsbench.gpu.engine.resident_pfsp import ResidentPfspTabu

    p = registry.load(args.instance)
    nb = p.neighbourhood("insertion")
    prm = TabuSearch().params(nb)
    rows = {}
    cpu_traj = None
    for backend in ("cpu", "cpu-parallel"):
        cpu_run(p, backend, args.seed, 3)  # JIT
        rates = []
        for _ in range(args.repeats):
            r, dt = cpu_run(p, backend, args.seed, args.cpu_iterations)
            rates.append(r.iterations / dt)
            if backend == "cpu":
                cpu_traj = r
        rows[backend] = {"iterations_per_s": statistics.median(rates), "repeats": rates,
                         "iterations": args.cpu_iterations, "best": r.best_objective}
        print(f"{backend}: {rows[backend]['iterations_per_s']:.2f} it/s", flush=True)
    gpu_rows = []
    same = None
    for threads in [int(t) for t in args.threads.split(",")]:
        engine = ResidentPfspTabu(p, prm, threads=threads)
        try:
            engine.run([args.seed], Stop(iterations=20))  # JIT, cooperative grid sizing
        except LsbenchError as e:  # a block size this GPU cannot hold: said, and the others still run
            gpu_rows.append({"threads": threads, "fits": False, "why": str(e)})
            print(f"gpu threads={threads}: does not fit ({e})", flush=True)
            continue
        check = engine.run([args.seed], Stop(iterations=args.cpu_iterations))[0]
        ok = ([(i, o) for i, _t, o in check.trajectory] == [(i, o) for i, _t, o in cpu_traj.trajectory]
              and list(check.best_solution) == list(cpu_traj.best_solution)
              and check.final_objective == cpu_traj.final_objective)
        same = ok if same is None else (same and ok)
        rates = []
        for _ in range(args.repeats):
            t = time.perf_counter()
            r = engine.run([args.seed], Stop(iterations=args.gpu_iterations))[0]
            dt = time.perf_counter() - t
            rates.append(r.iterations / dt)
        row = {"threads": threads, **engine.shape, "iterations_per_s": statistics.median(rates), "repeats": rates,
               "iterations": args.gpu_iterations, "best": r.best_objective, "same_trajectory_as_cpu": ok,
               "speedup_vs_cpu_one_core": statistics.median(rates) / rows["cpu"]["iterations_per_s"],
               "speedup_vs_cpu_all_cores": statistics.median(rates) / rows["cpu-parallel"]["iterations_per_s"]}
        gpu_rows.append(row)
        print(f"gpu threads={threads} blocks={engine.shape['blocks']}: {row['iterations_per_s']:.0f} it/s "
              f"= {row['speedup_vs_cpu_one_core']:.0f}x one core, {row['speedup_vs_cpu_all_cores']:.1f}x all cores, "
              f"same trajectory {ok}", flush=True)
    ran = [r for r in gpu_rows if r.get("fits", True)]
    if not ran:
        print("lsbench: error: no --threads block size fits this GPU", file=sys.stderr)
        return 2
    top = max(ran, key=lambda r: r["iterations_per_s"])
    path = write_result("gpu_resident_pfsp", {
        "instance": p.name, "n": p.n, "m": p.m, "moves_per_iteration": nb.size, "seed": args.seed,
        "tabu_params": prm, "cpu": rows, "gpu": gpu_rows, "same_trajectory_as_cpu": same,
        "best_speedup_vs_cpu_one_core": top["speedup_vs_cpu_one_core"]}, args.out)
    print("\n| side | it/s | x one core |")
    print("|---|---|---|")
    for k, v in rows.items():
        print(f"| {k} | {v['iterations_per_s']:.1f} | {v['iterations_per_s'] / rows['cpu']['iterations_per_s']:.1f} |")
    for g in ran:
        print(f"| gpu-resident {g['threads']}x{g['blocks']} | {g['iterations_per_s']:.0f} | "
              f"{g['speedup_vs_cpu_one_core']:.0f} |")
    print(f"-> {path}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
