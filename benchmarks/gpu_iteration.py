"""GPU iteration level vs CPU, in one run on one host: neighbourhood evaluation and tabu search.

    python benchmarks/gpu_iteration.py [--quick] [--only qap,tsp,...]

For each problem and size family of the papers: milliseconds per full neighbourhood evaluation
(median of repeats after warm-up and JIT compile) on one CPU core (`cpu`), all cores
(`cpu-parallel`), and the GPU variants: fitness copied back (`gpu/host`), device-side reduction
(`gpu/device`: evaluation + reduction + the chosen move copied back; evaluation and the first
reduction stage are one kernel where the neighbourhood has a fused move function,
`gpu/device-unfused` keeps them apart), neighbourhood generated on the
CPU (`gpu/cpugen`, copied each iteration); then tabu-search iterations per second for cpu and
gpu/device, and a trajectory check (gpu/device must follow the cpu trajectory exactly; float
problems to 1e-9 relative). Speed-up = ratio of medians in this run. The kernel's fraction of
the GPU's memory bandwidth uses a per-move byte model and the copy bandwidth measured here.
"""
import argparse
import statistics
import sys
import time

import numpy as np
from common import write_result

from lsbench import instances as registry
from lsbench import rng
from lsbench.registry import get_evaluator
from lsbench.interfaces import Stop
from lsbench.search.tabu import MODE_ARGMIN, TabuSearch

# (label, problem, instance, neighbourhood, problem params, bytes-per-move model)
CASES = {
    "qap": [(f"QAP {t}", "qap", t, "swap", {}, lambda n: 4 * 8 * n) for t in
            ("tai30a", "tai50a", "tai80a", "tai100a", "tai150b")],
    "pfsp": [(f"PFSP {t} {s}", "pfsp", t, "insertion", {}, lambda n: 3 * 8 * 20) for t, s in
             (("ta001", "20x5"), ("ta031", "50x5"), ("ta061", "100x5"), ("ta081", "100x20"),
              ("ta091", "200x10"), ("ta111", "500x20"))],
    "tsp": [(f"TSP {t} 2-opt", "tsp", t, "2opt", {}, lambda n: 6 * 4) for t in
            ("eil101", "d198", "pcb442", "rat783", "d1291", "pr2392", "fnl4461", "rl5915")],
    "ppp": [(f"PPP {t} H{k}", "ppp", t, f"hamming{k}", {}, lambda n: 3 * 8 * n) for k in (1, 2) for t in
            ("73-73", "101-117", "201-217", "401-417", "601-617", "801-817", "1001-1017", "1301-1317")],
    "weierstrass": [(f"Weierstrass d={d}", "weierstrass", f"weierstrass-{d}", "crowns", {"neighbours": 10000},
                     lambda n: 8) for d in (1, 2, 4, 6, 8, 10)],
}
GPU_VARIANTS = {"gpu/host": {"reduce": "host"}, "gpu/device": {"reduce": "device"},
                "gpu/device-unfused": {"reduce": "device", "fuse": 0},
                "gpu/cpugen": {"reduce": "host", "generate": "cpu"}}


def time_evaluations(ev, solution, budget_s, max_repeats=25, device_reduce=False):
    ev.reset(solution)
    step = (lambda: ev.select(MODE_ARGMIN, 1, 0, 0)) if device_reduce else ev.evaluate
    step()  # warm-up: JIT compile, thread-control tuning
    if hasattr(ev, "control"):
        while ev.control.waves and ev.control.history and not ev.control._tuned():  # fused: no tuning
            step()
    # keep stepping a moment: clocks up, caches warm (short kernels with host gaps otherwise
    # measure an idling GPU)
    t_warm = time.perf_counter() + min(0.25, budget_s / 2)
    for _ in range(200):
        if time.perf_counter() > t_warm:
            break
        step()
    times = []
    t_end = time.perf_counter() + budget_s
    # at least 3 repeats, unless one evaluation alone outlasts the budget
    while len(times) < max_repeats and (len(times) < 3 or time.perf_counter() < t_end) and \
            not (times and times[0] > budget_s):
        t = time.perf_counter()
        step()
        times.append(time.perf_counter() - t)
    return statistics.median(times), len(times)


def bandwidth_ceiling():
    """Device-to-device copy bandwidth (bytes read + written per second), median of 10."""
    from numba import cuda
    a = cuda.device_array(1 << 28, np.uint8)
    b = cuda.device_array(1 << 28, np.uint8)
    b.copy_to_device(a)
    cuda.synchronize()
    ts = []
    for _ in range(10):
        t = time.perf_counter()
        b.copy_to_device(a)
        cuda.synchronize()
        ts.append(time.perf_counter() - t)
    return 2 * (1 << 28) / statistics.median(ts)


def tabu_rate(problem, nb, backend, params, iterations, seed=1):
    ev = get_evaluator(backend, **params).bind(problem, nb)
    TabuSearch().run(problem, nb, ev, Stop(iterations=2), seed)  # compile / tune
    t = time.perf_counter()
    res = TabuSearch().run(problem, nb, ev, Stop(iterations=iterations), seed)
    return res, res.iterations / (time.perf_counter() - t)


def run_case(label, kind, inst, nb_name, pparams, bytes_model, args, bw):
    p = registry.load(inst, kind, params=pparams)
    nb = p.neighbourhood(nb_name)
    sol = p.random_solution(rng.new_state(1))
    row = {"case": label, "instance": inst, "neighbourhood": nb_name, "moves": nb.size, "ms": {}, "repeats": {}}
    for backend in ("cpu", "cpu-parallel"):
        ev = get_evaluator(backend).bind(p, nb)
        med, reps = time_evaluations(ev, sol, args.budget)
        row["ms"][backend], row["repeats"][backend] = med * 1e3, reps
    for name, prm in GPU_VARIANTS.items():
        ev = get_evaluator("gpu", **prm).bind(p, nb)
        k0 = ev.timer.kernel
        med, reps = time_evaluations(ev, sol, args.budget, device_reduce=prm["reduce"] == "device")
        row["ms"][name], row["repeats"][name] = med * 1e3, reps
        row.setdefault("thread_control", {})[name] = ev.control.describe()
        if name == "gpu/host":
            kernel_s = (ev.timer.kernel - k0) / max(1, reps + 1 + len(ev.control.history))
            row["kernel_ms"] = kernel_s * 1e3
            row["bandwidth_fraction"] = (nb.size * bytes_model(p.size) / max(kernel_s, 1e-9)) / bw
    cpu = row["ms"]["cpu"]
    row["speedup_vs_cpu"] = {k: cpu / v for k, v in row["ms"].items()}
    # tabu search: iterations per second and the trajectory check (skipped where one CPU
    # evaluation alone takes seconds; the smaller cases of the family carry the check)
    if cpu > 2000:
        row["tabu"] = None
        return row
    iters = max(2, min(args.tabu_iterations, int(args.budget / max(cpu / 1e3, 1e-6))))
    ref, cpu_rate = tabu_rate(p, nb, "cpu", {}, iters)
    got, gpu_rate = tabu_rate(p, nb, "gpu", {"reduce": "device"}, iters)
    same_moves = [t[0] for t in ref.trajectory] == [t[0] for t in got.trajectory]
    if p.integer:
        same = same_moves and ref.trajectory[-1][2] == got.trajectory[-1][2] and \
            ref.final_objective == got.final_objective
    else:
        same = same_moves and abs(ref.final_objective - got.final_objective) <= 1e-9 * abs(ref.final_objective)
    row["tabu"] = {"iterations": iters, "cpu_it_per_s": cpu_rate, "gpu_device_it_per_s": gpu_rate,
                   "speedup": gpu_rate / cpu_rate, "same_trajectory": bool(same)}
    return row


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="qap,pfsp,tsp,ppp,weierstrass")
    ap.add_argument("--quick", action="store_true", help="smallest and largest case of each family")
    ap.add_argument("--budget", type=float, default=1.0, help="seconds per timing")
    ap.add_argument("--tabu-iterations", type=int, default=200)
    ap.add_argument("--out")
    args = ap.parse_args()
    bw = bandwidth_ceiling()
    rows = []
    for fam in args.only.split(","):
        cases = CASES[fam]
        if args.quick:
            cases = [cases[0], cases[-1]]
        for case in cases:
            t = time.perf_counter()
            try:
                row = run_case(*case, args, bw)
            except Exception as e:  # a case that cannot run is reported, the others go on
                row = {"case": case[0], "error": f"{type(e).__name__}: {e}"}
            row["case_seconds"] = time.perf_counter() - t
            rows.append(row)
            print(_line(row), flush=True)
    path = write_result("gpu_iteration", {"bandwidth_ceiling_Bps": bw, "rows": rows}, args.out)
    print(f"\n{'case':26} {'moves':>10} {'cpu ms':>10} {'cpu-par':>8} {'gpu/host':>9} {'gpu/dev':>9} "
          f"{'x dev':>8} {'x host':>8} {'bw%':>5} {'TS x':>6} same")
    for r in rows:
        print(_line(r))
    print(f"copy bandwidth ceiling {bw / 1e9:.0f} GB/s -> {path}")


def _line(r):
    if "error" in r:
        return f"{r['case']:26} ERROR {r['error'][:90]}"
    ms, s = r["ms"], r["speedup_vs_cpu"]
    return (f"{r['case']:26} {r['moves']:10d} {ms['cpu']:10.3f} {ms['cpu-parallel']:8.3f} {ms['gpu/host']:9.3f} "
            f"{ms['gpu/device']:9.3f} {s['gpu/device']:8.1f} {s['gpu/host']:8.1f} "
            + (f"{100 * r.get('bandwidth_fraction', 0):5.1f} {r['tabu']['speedup']:6.1f} {r['tabu']['same_trajectory']}"
               if r["tabu"] else f"{100 * r.get('bandwidth_fraction', 0):5.1f}      - -"))


if __name__ == "__main__":
    sys.exit(main())
