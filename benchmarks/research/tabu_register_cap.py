"""Does a register cap or a smaller block let the matrix tabu kernel's queue hold more blocks an SM,
and is it faster?

    python research/tabu_register_cap.py [--cases tsp:eil101:2opt,ppp:101-117:hamming2] [--searches 132,1056]
        [--caps 0,128] [--threads 256,128] [--seconds 0.5] [--repeats 3] [--check 8]   (device_run.sh 'regcap ARGS')
    python research/tabu_register_cap.py --offline [--cases ...] [--caps 0,128,96,64]   (no GPU)

The TSP/PPP tabu kernel of gpu/engine/whole_gpu_tabu.py (the own kernel `own_kernel_faster` picks
for small neighbourhoods) runs K >= 132 searches as a queue over every block resident at once; at
sm_90 it compiles to so many registers a thread that one block of 256 threads fits an SM.
--offline: ptxas's registers and spill bytes at each cap (0: none), from Numba's PTX, no GPU
(the tools as benchmarks/kernel_registers.py finds them). On a GPU: each cap's kernel, at each
block size, runs every case at each K, rows interleaved (gpu_resident_grid.py's scaling_rates), one search of each run
checked against the CPU's; aggregate it/s over the seconds in kernels, and the grid it ran.
The answer is in docs/notes/one-engine.md.
"""
import argparse
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numba  # noqa: E402
import numpy as np  # noqa: E402
from numba import cuda  # noqa: E402

from common import run_main, write_result  # noqa: E402
from lsbench import instances as registry  # noqa: E402
from lsbench.search.tabu import TabuSearch  # noqa: E402


def capped_engine(p, nb, cap, threads):
    """WholeGpuTabu of `threads` a block whose kernel is compiled with at most `cap` registers a
    thread (0: as shipped)."""
    from lsbench.gpu.engine import whole_gpu_tabu as w
    kernel = {"tsp": w.tsp_tabu_kernel, "ppp": w.ppp_tabu_kernel}[p.kind]
    if cap:  # (the simulator has no registers: it runs the kernel again, uncapped)
        jit = cuda.jit if numba.config.ENABLE_CUDASIM else cuda.jit(max_registers=cap)
        kernel = jit(kernel.py_func)
    engine = w.WholeGpuTabu(p, nb, TabuSearch().params(nb), threads=threads)
    engine._kernel = lambda: kernel
    return engine


def offline(p, nb, caps):
    """[(cap, registers, spill store bytes, spill load bytes)] from ptxas at sm_90, without a GPU:
    the engine's device arrays made as NumPy arrays only to type the kernel's arguments."""
    from kernel_registers import compute_capability_without_a_device, nvidia_tool
    from lsbench.gpu.engine import whole_gpu_tabu as w
    compute_capability_without_a_device((9, 0))
    cuda.to_device = lambda x, *a, **k: np.ascontiguousarray(x)
    cuda.device_array = lambda shape, dtype=np.float64, *a, **k: np.zeros(shape, dtype)
    w.require = lambda *a: None
    w.never_tabu = lambda shape: np.full(shape, -1, np.int64)
    engine = w.WholeGpuTabu(p, nb, TabuSearch().params(nb))
    args, _ = engine._args(engine._buffers([engine._dummy()], 1), 1, 1, 0)
    ptx, _ = cuda.compile(engine._kernel().py_func, tuple(numba.typeof(a) for a in args), cc=(9, 0),
                          output="ptx", device=False, abi="numba")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "k.ptx").write_text(ptx)
        for cap in caps:
            limit = [f"--maxrregcount={cap}"] if cap else []
            info = subprocess.run([nvidia_tool("ptxas"), "-arch=sm_90", "-v", "-c", *limit, "-o", f"{tmp}/k.o",
                                   f"{tmp}/k.ptx"], capture_output=True, text=True, check=True).stderr
            spill = [int(re.search(rf"(\d+) bytes spill {kind}", info).group(1)) for kind in ("stores", "loads")]
            rows.append({"cap": cap, "registers": int(re.search(r"Used (\d+) registers", info).group(1)),
                         "spill_store_bytes": spill[0], "spill_load_bytes": spill[1]})
    return rows


def main():
    from gpu_resident_grid import scaling_rates, searcher
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default="tsp:eil101:2opt,ppp:101-117:hamming2")
    ap.add_argument("--searches", default="132,1056")
    ap.add_argument("--caps", default="0,128", help="registers a thread at most (0: the kernel as shipped)")
    ap.add_argument("--threads", default="256", help="threads a block (the engine's default: 256)")
    ap.add_argument("--seconds", type=float, default=0.5)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--check", type=int, default=8, help="iterations of the trajectory check")
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--offline", action="store_true", help="registers and spills from ptxas only (no GPU)")
    ap.add_argument("--out")
    args = ap.parse_args()
    caps = [int(c) for c in args.caps.split(",")]
    rows = []
    for spec in args.cases.split(","):
        kind, name, nb_name = spec.split(":")
        p = registry.load(name, kind)
        nb = p.neighbourhood(nb_name)
        if args.offline:
            for row in offline(p, nb, caps):
                rows.append({"instance": p.name, "neighbourhood": nb.name, **row})
                print(f"{p.name} {nb.name} cap {row['cap'] or 'none'}: {row['registers']} registers, spills "
                      f"{row['spill_store_bytes']} / {row['spill_load_bytes']} bytes stored / loaded", flush=True)
            continue
        engines = {(f"cap {cap} threads {t}", k): capped_engine(p, nb, cap, int(t))
                   for cap in caps for t in args.threads.split(",") for k in map(int, args.searches.split(","))}
        rates, checked = scaling_rates(p, nb, engines, args.seconds, args.repeats, args.seed, args.check)
        for (label, k), engine in engines.items():
            shape = searcher(engine).shape
            rows.append({"instance": p.name, "neighbourhood": nb.name, "cap": int(label.split()[1]), "searches": k,
                         "threads": int(label.split()[3]),
                         "iterations_per_s": statistics.median(rates[label, k]), "repeats": rates[label, k],
                         "same_trajectory_as_cpu": checked[label, k], **shape})
            print(f"| {p.name} {nb.name} | {label} | {k} | {shape['mode']} {shape['blocks']} blocks "
                  f"| {rows[-1]['iterations_per_s']:,.0f} it/s | {checked[label, k]} |", flush=True)
    print(f"-> {write_result('tabu_register_cap', {'offline': args.offline, 'rows': rows}, args.out)}")
    return 0 if all(r.get("same_trajectory_as_cpu", True) for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(run_main(main))
