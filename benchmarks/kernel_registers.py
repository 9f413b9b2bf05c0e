"""Registers and spills of the resident Ro-TS kernel, offline: no GPU, no device time.

    python benchmarks/kernel_registers.py [--instance tai100a] [--shapes 1024,1024q,512,512q]
        [--registers 64] [--cc 9.0] [--sass DIR] [--out DIR]

Each shape is threads per block, `q` for the queue (persistent grid) variant; the kernel is built
from gpu/engine/rots/plan.py and gpu/engine/rots/kernel.py as the engine builds it (every table on chip where it
fits in the shape's shared memory: one block an SM at 1024 threads, two at 512), compiled to PTX
by Numba-CUDA and to SASS by ptxas at the register cap the engine sets (64 for 1024 threads, 64 for
two 512-thread blocks an SM). Reports ptxas's registers and spill bytes and counts the local-memory
loads and stores (LDL/STL) in the SASS: at a cap, spilled values come back from local memory.

Needs NVIDIA's compiler tools, which run without a GPU: in a virtual environment of its own,
`pip install numba-cuda==0.30.4 nvidia-cuda-nvcc nvidia-cuda-nvdisasm nvidia-cuda-cuobjdump` and
this checkout (`pip install --no-deps -e .`). The tools are found beside the nvidia package.
"""
import argparse
import re
import subprocess
import sys
import tempfile
import types
from pathlib import Path

import numba
import numpy as np
from numba import cuda

from common import run_main, write_result

from lsbench import instances as registry


HOPPER_BLOCK_SHARED = 232448  # bytes of shared memory a block may opt in to, and an SM holds (sm_90)
HOPPER_SM_SHARED = 233472


def compute_capability_without_a_device(cc):
    """Numba-CUDA asks the current device for its compute capability when it compiles a device
    function; with no driver, answer `cc`."""
    import numba.cuda.dispatcher as dispatcher
    dispatcher.get_current_device = lambda: types.SimpleNamespace(compute_capability=cc)


def nvidia_tool(name):
    import nvidia
    for root in nvidia.__path__:
        for path in sorted(Path(root).glob(f"*/bin/{name}")):
            return str(path)
    raise SystemExit(f"kernel_registers: {name} not found beside the nvidia package "
                     "(pip install nvidia-cuda-nvcc nvidia-cuda-nvdisasm nvidia-cuda-cuobjdump)")


def kernel_signature(shape, n):
    """Numba types of rots_kernel's arguments for this shape (RotsEngine.launch_chunk's order)."""
    data = {8: np.uint8, 16: np.int16, 32: np.int32, 64: np.int64}[shape["data_bits"]]
    delta = np.int64 if shape["wide"] else np.int32
    slots, stride = shape["slots"], shape["stride"]

    def a(*dims, dtype=np.int64):
        return numba.typeof(np.zeros(dims, dtype))
    i32, u64 = np.int32, np.uint64
    arrays = [a(n * stride, dtype=data), a(1, dtype=data), a(n * n, dtype=data), a(n), a(n), a(8, dtype=i32),
              a(2, n, dtype=i32), a(2, slots, dtype=delta), a(2, n * stride, dtype=data), a(2, 1, dtype=data),
              a(2, slots, dtype=i32), a(2, n * n, dtype=i32), a(2), a(2, 2, dtype=u64), a(2), a(2),
              a(2, n, dtype=i32), a(4, 2), a(4, 2), a(2), a(2), a(2, dtype=i32), a(2, n, dtype=i32), a(2, dtype=i32),
              a(2), a(2)]
    divisor = [numba.uint64] * 2  # the tenure draw's span and magic
    scalars = [numba.int64] * 10  # tenure_min, aspiration, target, first iteration, iterations, cube, fresh, item0, seq0, push0
    # rots_kernel(instance, searches_state, run): the three bundles host.launch_chunk passes
    return numba.types.Tuple(arrays[:6]), numba.types.Tuple(arrays[6:]), numba.types.Tuple(divisor + scalars)


def report(problem, threads, queued, registers, cc, sass_dir=None, cluster=1):
    from lsbench.gpu.engine.rots.shape import LARGE_QUEUE_SUBCHUNK, blocks_an_sm
    from lsbench.gpu.engine.rots.host import ADAPTERS
    from lsbench.gpu.engine.rots.kernel import kernel_for
    from lsbench.gpu.engine.rots.plan import plan
    per_sm = 1024 // threads
    if per_sm == 1 or cluster > 1:  # the engine's one block an SM: every byte a block may opt in to (Hopper: 227 KB)
        shared = HOPPER_BLOCK_SHARED
    else:
        _t, _r, shared = blocks_an_sm(types.SimpleNamespace(MAX_SHARED_MEMORY_PER_MULTIPROCESSOR=HOPPER_SM_SHARED),
                                       per_sm, True)
    shape = plan(problem, threads, None, shared, (), cluster, None, queued, LARGE_QUEUE_SUBCHUNK if queued else None)
    shape["max_registers"] = registers
    ptx, _ = cuda.compile(kernel_for(shape, ADAPTERS[problem.kind]).py_func, kernel_signature(shape, problem.n), cc=cc, output="ptx",
                          device=False, abi="numba")
    with tempfile.TemporaryDirectory() as tmp:
        src, cubin = Path(tmp) / "k.ptx", Path(tmp) / "k.cubin"
        src.write_text(ptx)
        arch = f"sm_{cc[0]}{cc[1]}"
        info = subprocess.run([nvidia_tool("ptxas"), f"-arch={arch}", "-v", f"--maxrregcount={registers}",
                               "-o", str(cubin), str(src)], capture_output=True, text=True, check=True).stderr
        env = {"PATH": str(Path(nvidia_tool("nvdisasm")).parent)}
        sass = subprocess.run([nvidia_tool("cuobjdump"), "-sass", str(cubin)], capture_output=True, text=True,
                              check=True, env=env).stdout
    if sass_dir:
        Path(sass_dir).mkdir(parents=True, exist_ok=True)
        suffix = "q" if queued else f"c{cluster}" if cluster > 1 else ""
        (Path(sass_dir) / f"rots-{problem.name}-{threads}{suffix}-{registers}.sass").write_text(sass)
    number = lambda pattern: int(re.search(pattern, info).group(1)) if re.search(pattern, info) else 0  # noqa: E731
    return {"threads": threads, "queued": queued, "cluster": cluster, "max_registers": registers,
            "registers": number(r"Used (\d+) registers"), "spill_store_bytes": number(r"(\d+) bytes spill stores"),
            "spill_load_bytes": number(r"(\d+) bytes spill loads"), "sass_instructions": len(re.findall(r"/\*[0-9a-f]{4,}\*/", sass)),
            "sass_local_loads": len(re.findall(r"\bLDL\b", sass)), "sass_local_stores": len(re.findall(r"\bSTL\b", sass)),
            "dynamic_shared_bytes": shape["dynamic_shared_bytes"]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--instance", default="tai100a")
    ap.add_argument("--shapes", default="1024,1024q,512,512q", help="threads per block, q: queued, cN: a cluster of N blocks a search")
    ap.add_argument("--registers", type=int, default=64)
    ap.add_argument("--cc", default="9.0")
    ap.add_argument("--data-dir")
    ap.add_argument("--sass", help="a folder to keep each shape's SASS in (to read where it spills)")
    ap.add_argument("--out")
    args = ap.parse_args()
    shapes = args.shapes.split(",")
    if not all(re.fullmatch(r"\d+(q|c\d+)?", s) for s in shapes):
        ap.error(f"--shapes: threads per block, each with q for the queue or cN for a cluster (1024,512q,1024c4), "
                 f"got {args.shapes!r}")
    if not re.fullmatch(r"\d+\.\d+", args.cc):
        ap.error(f"--cc: a compute capability such as 9.0, got {args.cc!r}")
    cc = tuple(int(x) for x in args.cc.split("."))
    compute_capability_without_a_device(cc)
    problem = registry.load(args.instance, None, args.data_dir)
    rows = []
    for s in shapes:
        threads, kind, cluster = re.fullmatch(r"(\d+)(q|c(\d+))?", s).groups()
        rows.append(report(problem, int(threads), kind == "q", args.registers, cc, args.sass, int(cluster or 1)))
    path = write_result("kernel_registers", {"instance": args.instance, "cc": args.cc, "rows": rows}, args.out,
                        gpu_tag=f"sm{cc[0]}{cc[1]}")
    print(f"{args.instance}, sm_{cc[0]}{cc[1]}, cap {args.registers} registers -> {path}")
    for r in rows:
        kind = "q" if r["queued"] else f"c{r['cluster']}" if r["cluster"] > 1 else ""
        print(f"{r['threads']:5d}{kind:3s}: {r['registers']} registers, spills "
              f"{r['spill_store_bytes']} B stored / {r['spill_load_bytes']} B loaded, SASS {r['sass_instructions']} "
              f"instructions, {r['sass_local_loads']} LDL, {r['sass_local_stores']} STL")


if __name__ == "__main__":
    sys.exit(run_main(main))
