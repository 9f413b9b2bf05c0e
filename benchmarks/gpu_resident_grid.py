"""Whole-GPU tabu search over large neighbourhoods (TSP swap / 2-opt, PPP Hamming-k) against the
CPU and the iteration-level GPU loop, one host, one run.

    python benchmarks/gpu_resident_grid.py [--cases tsp:pr2392:2opt:10:400,ppp:1001-1017:hamming2:3:60]

Each case is problem:instance:neighbourhood:CPU iterations:GPU iterations. Sides, all the same
tabu search (Janiak et al.'s tenure 7 for TSP, n/10 for PPP) from the same seed:
- cpu: `--backend cpu` (Numba, one core); cpu-parallel: the neighbourhood over all cores;
- gpu: the iteration-level model with the device-side reduction (`--backend gpu --param
  reduce=device`: one launch and a three-number copy per iteration; TSP moves evaluated inside
  the reduction, PPP through a fitness array kept on the device);
- gpu-resident: gpu/resident_grid.py, every iteration on the device.
Iterations/s are medians of repeats after a warm-up (JIT compile). Trajectory check: the GPU
searches against the CPU one-core search over the CPU run's iterations.
"""
import argparse
import statistics
import sys
import time

from common import write_result

from lsbench import instances as registry
from lsbench.registry import get_evaluator
from lsbench.search.common import Stop
from lsbench.search.tabu import TabuSearch

DEFAULT = ("tsp:pr1002:2opt:20:2000,tsp:rnd-atsp-1000-1:2opt:20:2000,tsp:pr2392:swap:8:400,"
           "tsp:pr2392:2opt:8:400,ppp:401-417:hamming2:8:400,ppp:1001-1017:hamming2:3:60,ppp:101-117:hamming3:4:200")


def loop_run(problem, nb, backend, seed, iterations, **params):
    ev = get_evaluator(backend, **params).bind(problem, nb)
    t = time.perf_counter()
    r = TabuSearch().run(problem, nb, ev, Stop(iterations=iterations), seed)
    return r, time.perf_counter() - t


def same(a, b):
    return ([(i, o) for i, _t, o in a.trajectory] == [(i, o) for i, _t, o in b.trajectory]
            and list(a.best_solution) == list(b.best_solution) and a.final_objective == b.final_objective
            and a.iterations == b.iterations)


def bench_case(spec, seed, repeats, threads):
    from lsbench.gpu.whole_gpu_tabu import WholeGpuTabu
    kind, name, nb_name, cpu_it, gpu_it = spec.split(":")
    cpu_it, gpu_it = int(cpu_it), int(gpu_it)
    p = registry.load(name, kind)
    nb = p.neighbourhood(nb_name)
    sides = {}
    ref = None
    for side, backend, params, iters in (("cpu", "cpu", {}, cpu_it), ("cpu-parallel", "cpu-parallel", {}, cpu_it),
                                         ("gpu", "gpu", {"reduce": "device"}, gpu_it)):
        loop_run(p, nb, backend, seed, 2, **params)  # JIT, launch tuning
        rates = []
        for _ in range(repeats):
            r, dt = loop_run(p, nb, backend, seed, iters, **params)
            rates.append(r.iterations / dt)
        if side == "cpu":
            ref = r
        ok = same(ref, loop_run(p, nb, backend, seed, cpu_it, **params)[0]) if side == "gpu" else None
        sides[side] = {"iterations_per_s": statistics.median(rates), "repeats": rates, "iterations": iters,
                       "same_trajectory_as_cpu": ok}
        print(f"  {side}: {sides[side]['iterations_per_s']:.2f} it/s", flush=True)
    engine = WholeGpuTabu(p, nb, TabuSearch().params(nb), threads=threads)
    engine.run(seed, Stop(iterations=4))  # JIT, cooperative grid sizing
    ok = same(ref, engine.run(seed, Stop(iterations=cpu_it)))
    rates = []
    for _ in range(repeats):
        t = time.perf_counter()
        r = engine.run(seed, Stop(iterations=gpu_it))
        rates.append(r.iterations / (time.perf_counter() - t))
    sides["gpu-resident"] = {"iterations_per_s": statistics.median(rates), "repeats": rates, "iterations": gpu_it,
                             "same_trajectory_as_cpu": ok, **engine.shape}
    one = sides["cpu"]["iterations_per_s"]
    for v in sides.values():
        v["speedup_vs_cpu_one_core"] = v["iterations_per_s"] / one
        v["speedup_vs_cpu_all_cores"] = v["iterations_per_s"] / sides["cpu-parallel"]["iterations_per_s"]
    print(f"  gpu-resident: {sides['gpu-resident']['iterations_per_s']:.1f} it/s, same trajectory {ok}", flush=True)
    return {"problem": kind, "instance": p.name, "neighbourhood": nb.name, "moves_per_iteration": nb.size,
            "seed": seed, "sides": sides}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", default=DEFAULT)
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=256)
    ap.add_argument("--out")
    args = ap.parse_args()
    rows = []
    for spec in args.cases.split(","):
        print(spec, flush=True)
        rows.append(bench_case(spec, args.seed, args.repeats, args.threads))
    all_same = all(s["same_trajectory_as_cpu"] is not False for r in rows for s in r["sides"].values())
    path = write_result("gpu_resident_grid", {"cases": rows, "same_trajectory_as_cpu": all_same}, args.out)
    print("\n| instance | moves | cpu it/s | cpu-parallel | gpu (iteration level) | gpu-resident | resident x one core "
          "| x all cores | x gpu loop | same |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        s = r["sides"]
        g = s["gpu-resident"]
        print(f"| {r['instance']} {r['neighbourhood']} | {r['moves_per_iteration']:,} | {s['cpu']['iterations_per_s']:.1f} "
              f"| {s['cpu-parallel']['iterations_per_s']:.1f} | {s['gpu']['iterations_per_s']:.1f} "
              f"| {g['iterations_per_s']:.1f} | {g['speedup_vs_cpu_one_core']:.0f} | {g['speedup_vs_cpu_all_cores']:.1f} "
              f"| {g['iterations_per_s'] / s['gpu']['iterations_per_s']:.1f} | "
              f"{g['same_trajectory_as_cpu'] and s['gpu']['same_trajectory_as_cpu']} |")
    print(f"-> {path}")
    return 0 if all_same else 1


if __name__ == "__main__":
    sys.exit(main())
