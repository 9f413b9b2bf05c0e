"""Device-resident Ro-TS (gpu-resident) vs the CPU Ro-TS on one host, one run: QAP tai100a.

    python benchmarks/gpu_resident.py [--instance tai100a] [--seconds 3]

- CPU one core: the fused Numba Ro-TS (`--backend cpu`), one search;
- CPU all cores: one independent search per core (processes started together behind a barrier),
  aggregate iterations/s = all iterations / the slowest process's timed seconds;
- GPU one search: its iterations/s (latency a user with one long run feels);
- GPU many searches: K blocks at once for several K and threads per search; aggregate iterations/s.
All after warm-up and JIT compile; medians of repeats for the single-search figures. A trajectory
check compares one GPU search with the CPU search of the same seed on the real device.
"""
import argparse
import multiprocessing as mp
import os
import statistics
import sys
import time

from common import multiprocessors, write_result

from lsbench import instances as registry
from lsbench.registry import get_evaluator
from lsbench.interfaces import Stop
from lsbench.search.tabu import RobustTabuSearch


def cpu_search(problem, seed, iterations):
    nb = problem.neighbourhood("swap")
    t = time.perf_counter()
    r = RobustTabuSearch().run(problem, nb, get_evaluator("cpu").bind(problem, nb), Stop(iterations=iterations), seed)
    return r, time.perf_counter() - t


def _core_worker(instance, data, seed, iterations, barrier, queue):
    os.environ.pop("NUMBA_NUM_THREADS", None)
    p = registry.load(instance, None, data)
    cpu_search(p, seed, 50)  # JIT (cached) and warm caches
    barrier.wait()
    r, dt = cpu_search(p, seed, iterations)
    queue.put((r.iterations, dt))


def cpu_all_cores(instance, data, iterations, cores):
    ctx = mp.get_context("fork")
    barrier, queue = ctx.Barrier(cores), ctx.Queue()
    procs = [ctx.Process(target=_core_worker, args=(instance, data, 100 + c, iterations, barrier, queue))
             for c in range(cores)]
    for p in procs:
        p.start()
    got = [queue.get() for _ in procs]
    for p in procs:
        p.join()
    return sum(i for i, _ in got) / max(dt for _, dt in got), got


def same_run(cpu, dev):
    """The same trajectory, best solution and final cost."""
    return bool([(i, o) for i, _t, o in cpu.trajectory] == [(i, o) for i, _t, o in dev.trajectory]
                and list(cpu.best_solution) == list(dev.best_solution)
                and cpu.final_objective == dev.final_objective)


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--instance", default="tai100a")
    ap.add_argument("--seconds", type=float, default=3.0, help="target length of each timed run")
    ap.add_argument("--searches", default="1,66,132,264,528,1056")
    ap.add_argument("--threads", default="auto,1024,512/64@110",
                    help="auto: the engine's own choice for K searches; THREADS per block, THREADS/REGS caps "
                         "registers, THREADS:G sets lanes per recomputation, THREADSxC runs each search on a "
                         "cluster of C blocks (Hopper), xCsS with S recomputing threads (the others update), "
                         "THREADS@KB limits shared memory per block (tables that do not fit stay in global memory), "
                         "SPEC~N caps a chunk (iterations between the host's reads) at N instead of the engine's cap, "
                         "SPEC%N makes a queue's items N iterations, SPEC+B queues the searches for B persistent blocks")
    ap.add_argument("--check-iterations", type=int, default=3000)
    ap.add_argument("--repeats", type=int, default=3, help="timed runs per row (median)")
    ap.add_argument("--probe", type=int, default=1000,
                    help="iterations that size each timed run (past the first, improvement-dense ones of every search)")
    ap.add_argument("--data-dir")
    ap.add_argument("--out")
    return ap.parse_args()


def number(text):
    """An entry's part as an int, None where absent (the engine's choice)."""
    return int(text) if text else None


def engine_options(spec):
    """ResidentRots keyword arguments of a --threads entry (THREADS[/REGS][:G][xC[sS]][@KB][~N][%N][+B], or auto)."""
    spec, _, persistent = spec.partition("+")
    spec, _, subchunk = spec.partition("%")
    spec, _, chunk_cap = spec.partition("~")
    spec, _, kb = spec.partition("@")
    spec, _, cluster = spec.partition("x")
    cluster, _, split = cluster.partition("s")
    spec, _, group = spec.partition(":")
    threads, _, regs = spec.partition("/")
    return {"threads": None if threads == "auto" else int(threads), "group": number(group),
            "max_registers": number(regs), "shared_limit": int(kb) * 1024 if kb else None,
            "cluster": number(cluster), "split": number(split), "chunk_cap": number(chunk_cap),
            "subchunk": number(subchunk), "persistent": number(persistent)}


def cpu_figures(args, p):
    """(one core's it/s, the CPU part of the result): one core sized to --seconds, median of 3; then
    a search on every core at once."""
    cpu_search(p, 1, 100)
    _, dt = cpu_search(p, 1, 2000)
    cpu_iters = max(2000, int(2000 * args.seconds / dt))
    one = [cpu_search(p, 1 + r, cpu_iters) for r in range(3)]
    cpu1 = statistics.median(r.iterations / t for r, t in one)
    cores = len(os.sched_getaffinity(0))
    cpu_all, per_core = cpu_all_cores(args.instance, args.data_dir, cpu_iters, cores)
    print(f"CPU one core {cpu1:,.0f} it/s; {cores} cores {cpu_all:,.0f} it/s", flush=True)
    return cpu1, {"one_core_it_per_s": cpu1, "iterations": cpu_iters, "cores": cores,
                  "all_cores_it_per_s": cpu_all, "per_core": per_core}


def sized_rows(args, p, prm, cpu, check):
    """(rows, their engines): one engine per --threads entry and K (its shape and compiled kernel
    depend on K), each run sized to --seconds by its search loop alone; a cluster's one search is
    checked against the CPU's trajectory (`check` gets its verdict)."""
    from lsbench.gpu.engine.rots.host import ResidentRots
    rows, engines = [], []
    sms = multiprocessors()
    for spec in args.threads.split(","):
        options = engine_options(spec)
        for k in [int(s) for s in args.searches.split(",")]:
            eng = ResidentRots(p, prm, **options)
            if options["cluster"] and k == 1:  # a cluster search must follow the CPU's trajectory too
                ok = same_run(cpu, eng.run([7], Stop(iterations=args.check_iterations))[0])
                check[f"cluster {spec}"] = ok
                print(f"trajectory check {spec}: {ok}", flush=True)
            eng.run(list(range(1, k + 1)), Stop(iterations=2))  # the shape for K searches: compiled before timing
            eng.run(list(range(1, k + 1)), Stop(iterations=args.probe), chunk=args.probe)
            # sized by the search loop alone: the set-up of K starts on the host (excluded from the
            # timing below) made the timed runs of many searches a few short chunks, which measured
            # the host's chunk overhead rather than the GPU
            iters = max(args.probe, int(args.probe * args.seconds / eng.loop_s))
            rows.append({"spec": spec, "threads": eng.shape["threads"], "max_registers": eng.shape["max_registers"],
                         "chunk_cap": eng.chunk_cap,
                         "searches": k, "blocks_per_sm": round(k / sms, 2), "iterations": iters, "repeats": []})
            engines.append(eng)
    return rows, engines


def time_rows(rows, engines, repeats, cpu1, cpu_all):
    """The timed runs, rows interleaved repeat by repeat (the sizing runs warmed the clocks); each
    row's median aggregate and its ratios to the CPU."""
    for _ in range(repeats):
        for row, eng in zip(rows, engines):
            k = row["searches"]
            res = eng.run(list(range(1, k + 1)), Stop(iterations=row["iterations"]))
            row["repeats"].append(sum(r.iterations for r in res) / eng.loop_s)  # set-up of K starts excluded
            row.setdefault("chunks", []).append(eng.chunks_run)
            row.setdefault("kernel_s", []).append(eng.kernel_s)
            row.setdefault("loop_s", []).append(eng.loop_s)
    for row, eng in zip(rows, engines):
        agg, k = statistics.median(row["repeats"]), row["searches"]
        row.update({"aggregate_it_per_s": agg, "per_search_it_per_s": agg / k, "vs_cpu_one_core": agg / cpu1,
                    "vs_cpu_all_cores": agg / cpu_all, "shape": eng.describe()})
        print(f"threads {row['spec']:>7} searches {k:5}: {agg:14,.0f} it/s aggregate, {agg / k:10,.0f} per search, "
              f"{agg / cpu1:8.1f}x one core, {agg / cpu_all:6.1f}x all cores, persistent blocks "
              f"{row['shape']['persistent_blocks']}", flush=True)


def cliffs(rows, specs):
    """{spec: the lowest aggregate at K >= one search per SM against K = one per SM} (no cliff)."""
    sms, out = multiprocessors(), {}
    for spec in specs:
        mine = {r["searches"]: r["aggregate_it_per_s"] for r in rows if r["spec"] == spec}
        if sms in mine:
            worst = min((v / mine[sms], k) for k, v in mine.items() if k >= sms)
            out[spec] = {"searches_per_sm_figure": mine[sms], "worst_ratio": worst[0], "at_searches": worst[1]}
            print(f"{spec}: every K >= {sms} at >= {worst[0]:.3f}x the K = {sms} figure (lowest at K = {worst[1]})")
    return out


def summary(rows):
    """(the fastest single-search row or None, the fastest row, the result's summary)."""
    singles = [r for r in rows if r["searches"] == 1]  # --searches may leave the single search out
    single = max(singles, key=lambda r: r["aggregate_it_per_s"]) if singles else None
    many = max(rows, key=lambda r: r["aggregate_it_per_s"])
    return single, many, {"single_search_vs_one_core": single["vs_cpu_one_core"] if single else None,
                          "aggregate_vs_one_core": many["vs_cpu_one_core"],
                          "aggregate_vs_all_cores": many["vs_cpu_all_cores"], "best_config": {
                              "spec": many["spec"], "threads": many["threads"], "searches": many["searches"]}}


def main():
    args = parse_args()
    from lsbench.gpu.engine.rots.host import ResidentRots
    p = registry.load(args.instance, None, args.data_dir)
    prm = RobustTabuSearch().params(p)
    out = {"instance": args.instance, "n": p.n, "params": prm}
    cpu1, out["cpu"] = cpu_figures(args, p)

    # real-device trajectory check: one search vs the CPU search, same seed
    eng = ResidentRots(p, prm)
    eng.run([7], Stop(iterations=2))
    dev = eng.run([7], Stop(iterations=args.check_iterations))[0]
    cpu, _ = cpu_search(p, 7, args.check_iterations)
    out["trajectory_check"] = {"seed": 7, "iterations": args.check_iterations, "same": same_run(cpu, dev),
                               "improvements": len(cpu.trajectory)}
    print(f"trajectory check ({args.check_iterations} iterations, seed 7): {out['trajectory_check']['same']}",
          flush=True)

    rows, engines = sized_rows(args, p, prm, cpu, out["trajectory_check"])
    time_rows(rows, engines, args.repeats, cpu1, out["cpu"]["all_cores_it_per_s"])
    found = cliffs(rows, args.threads.split(","))
    if found:
        out["cliff"] = found
    out["gpu"] = rows
    single, many, out["summary"] = summary(rows)
    same = all(v for k, v in out["trajectory_check"].items() if k == "same" or k.startswith("cluster "))
    path = write_result("gpu_resident", out, args.out)
    print(f"\n{args.instance} Ro-TS, gpu-resident vs CPU (same run) -> {path}")
    if single:
        print(f"  one search:  {single['aggregate_it_per_s']:12,.0f} it/s = {single['vs_cpu_one_core']:.1f}x one core "
              f"(goal 20x)")
    print(f"  aggregate:   {many['aggregate_it_per_s']:12,.0f} it/s = {many['vs_cpu_one_core']:.0f}x one core "
          f"(goal 1000x), {many['vs_cpu_all_cores']:.1f}x {out['cpu']['cores']} cores (goal 60x); "
          f"{many['searches']} searches x {many['threads']} threads")
    print(f"  same trajectory as CPU: {same}")


if __name__ == "__main__":
    sys.exit(main())
