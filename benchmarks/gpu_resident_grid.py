"""Whole-GPU tabu search over large neighbourhoods (TSP swap / 2-opt, PPP Hamming-k) against the
CPU and the iteration-level GPU loop, one host, one run.

    python benchmarks/gpu_resident_grid.py [--cases tsp:pr2392:2opt:10:400,ppp:1001-1017:hamming2:3:60]
    python benchmarks/gpu_resident_grid.py --scaling tsp:eil101:2opt,tsp:pr2392:2opt:528 \
        --searches 1,66,132,200,264,528,1056,2112 --seconds 2 --repeats 3

--scaling: K searches in one run (gpu-resident --searches K; TSP, PPP or PFSP) for each K, aggregate iterations/s
over the search loop's kernels (sum of the searches' iterations / seconds in kernels), rows
interleaved repeat by repeat after a warm-up of every K; a case's fourth field caps K (device
memory: a TSP search keeps an n x n tabu matrix). Search q of each run is checked against the CPU
search with its seed over --check iterations.

Each case is problem:instance:neighbourhood:CPU iterations:GPU iterations. Sides, all the same
tabu search (Janiak et al.'s tenure 7 for TSP, n/10 for PPP) from the same seed:
- cpu: `--backend cpu` (Numba, one core); cpu-parallel: the neighbourhood over all cores;
- gpu: the iteration-level model with the device-side reduction (`--backend gpu --param
  reduce=device`: one launch and a three-number copy per iteration; TSP moves evaluated inside
  the reduction, PPP through a fitness array kept on the device);
- gpu-resident: the whole search on the device (gpu/engine/whole_gpu_tabu.py, gpu/engine/resident_pfsp.py,
  gpu/engine/local_search.py).
Iterations/s are medians of repeats after a warm-up (JIT compile). Trajectory check: the GPU
searches against the CPU one-core search over the CPU run's iterations.
"""
import argparse
import statistics
import sys
import time

from common import run_main, write_result

from lsbench import instances as registry
from lsbench.registry import get_evaluator
from lsbench.interfaces import Stop
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
    from lsbench.gpu.engine.whole_gpu_tabu import WholeGpuTabu
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
    engine = WholeGpuTabu(p, nb, TabuSearch().params(nb), threads=threads or 256)
    engine.run([seed], Stop(iterations=4))  # JIT, cooperative grid sizing
    ok = same(ref, engine.run([seed], Stop(iterations=cpu_it))[0])
    rates = []
    for _ in range(repeats):
        t = time.perf_counter()
        r = engine.run([seed], Stop(iterations=gpu_it))[0]
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


def searcher(engine):
    """The object that ran the last searches (the registry's TSP engine picks one per K)."""
    return getattr(engine, "search", engine)


def registry_kernel(p, nb, threads):
    """A maker of what `--backend gpu-resident` runs for this case (the engine picks a kernel per K)."""
    from lsbench.gpu.engine.local_search import ResidentLocalSearchEngine
    return lambda: ResidentLocalSearchEngine(p, nb, TabuSearch(), {"block": threads} if threads else {})


def every_kernel(kind, p, nb, threads):
    """{kernel: maker} of each kernel that runs this case (issue 86, item 5: the engine's choice,
    own_kernel_faster, comes from these figures): the problem's own (the matrix kernel of
    whole_gpu_tabu.py, the PFSP fast path) and the resident local search engine's over the adapter."""
    from lsbench.gpu.adapters import adapter_for
    from lsbench.gpu.engine.local_search import ResidentLocalSearch, own_kernel
    prm = TabuSearch().params(nb)
    return {"pfsp-fast-path" if kind == "pfsp" else "matrix": lambda: own_kernel(p, nb, prm, {"block": threads}),
            "adapter": lambda: ResidentLocalSearch(p, nb, adapter_for(p, nb), "tabu", prm, threads=threads)}


def scaling(cases, counts, seconds, repeats, seed, threads, check, kernels=False):
    """Aggregate it/s of K searches for each K (see the module docstring); with `kernels`, on every
    kernel that runs the case (every_kernel), interleaved with the other rows."""
    rows = []
    for spec in cases.split(","):
        kind, name, nb_name, *cap = spec.split(":")
        p = registry.load(name, kind)
        nb = p.neighbourhood(nb_name)
        ks = [k for k in counts if not cap or k <= int(cap[0])]
        makers = every_kernel(kind, p, nb, threads) if kernels else {None: registry_kernel(p, nb, threads)}
        engines = {(kernel, k): make() for kernel, make in makers.items() for k in ks}
        rates, checked = scaling_rates(p, nb, engines, seconds, repeats, seed, check)
        for (kernel, k), engine in engines.items():
            med = statistics.median(rates[kernel, k])
            ref = statistics.median(rates[kernel, 132]) if (kernel, 132) in rates else None
            row = {"problem": kind, "instance": p.name, "neighbourhood": nb.name, "moves_per_iteration": nb.size,
                   "kernel": kernel, "searches": k, "iterations_per_s": med, "repeats": rates[kernel, k],
                   "vs_132": med / ref if ref else None, "same_trajectory_as_cpu": checked[kernel, k],
                   **searcher(engine).shape}
            rows.append(row)
            print(f"| {p.name} {nb.name}{' ' + kernel if kernel else ''} | {k} | {row['mode']} | {row['blocks']} "
                  f"| {row.get('reduction_blocks', '-')} | {med:,.0f} | {row['vs_132'] or 0:.2f} | {checked[kernel, k]} |",
                  flush=True)
    return rows


def scaling_rates(p, nb, engines, seconds, repeats, seed, check):
    """({key: [it/s of each repeat]}, {key: whether search K // 2 followed the CPU}) of engines
    {key: engine}, key = (kernel, K): K searches a run, the keys interleaved in each repeat."""
    checked = {}
    for (kernel, k), engine in engines.items():  # JIT, grid sizing; one search of K against the CPU
        res = engine.run(list(range(seed, seed + k)), Stop(iterations=check))
        cpu = TabuSearch().run(p, nb, get_evaluator("cpu").bind(p, nb), Stop(iterations=check), seed + k // 2)
        checked[kernel, k] = same(cpu, res[k // 2])
    rates = {key: [] for key in engines}
    for _ in range(repeats):
        for (kernel, k), engine in engines.items():
            res = engine.run(list(range(seed, seed + k)), Stop(seconds=seconds))
            rates[kernel, k].append(sum(r.iterations for r in res) / searcher(engine).kernel_s)
    return rates, checked


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", default=DEFAULT)
    ap.add_argument("--scaling", help="cases problem:instance:neighbourhood[:max K] for --searches")
    ap.add_argument("--searches", default="1,66,132,200,264,528,1056,2112")
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--check", type=int, default=30, help="--scaling: iterations of the trajectory check")
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--kernels", action="store_true",
                    help="--scaling: every kernel that runs a case (the problem's own and the engine's adapter)")
    ap.add_argument("--threads", type=int, help="threads a block (default: 256; TSP: the engine's own choice)")
    ap.add_argument("--out")
    args = ap.parse_args()
    if args.scaling:
        print("| case | searches | shape | blocks | blocks per search | it/s | vs K = 132 | same |")
        print("|---|---|---|---|---|---|---|---|")
        rows = scaling(args.scaling, [int(k) for k in args.searches.split(",")], args.seconds, args.repeats, args.seed,
                       args.threads, args.check, args.kernels)
        ok = all(r["same_trajectory_as_cpu"] for r in rows)
        name = 'tabu_kernels' if args.kernels else 'tabu_scaling'  # (the page's figure is tabu_scaling's)
        print(f"-> {write_result(name, {'rows': rows, 'same_trajectory_as_cpu': ok}, args.out)}")
        return 0 if ok else 1
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
    sys.exit(run_main(main))
