"""Where a cas generation's time goes on gpu-resident, kernel by kernel: `--algorithm cas --backend
gpu-resident` runs GENERATIONS generations on each instance (after a warm-up run), twice: once
timing on the host what queueing each of the colony's kernels costs and how long the host waits
for the GPU, once with a pair of CUDA events around each kernel on the engine's stream (its GPU
time; the waits then include the events). A generation is the pheromone update, the ants (a kernel
of their own since 5e478e1; before, inside the Ro-TS kernel), the Ro-TS chunks and the selection.

    python benchmarks/research/profile_cas.py [INSTANCE ...] [--generations 100] [--tree DIR] [--ants K --ls-iterations I]
        [--block THREADS] [--out DIR]

--tree: import lsbench from that checkout or `git archive` of one (run it in two trees to compare
them: the module names of both layouts are known). Prints a table and one JSON line (CAS-SPLIT);
--out (this checkout only) also writes them as a result file.
"""
import argparse
import importlib
import json
import os
import sys
from pathlib import Path
import time

from numba import cuda


def load(tree):
    """lsbench's cas modules from `tree` (or this checkout): (colony module, Ro-TS host class)."""
    if tree:
        sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in repr(f).lower()]
        sys.path.insert(0, os.path.abspath(tree))
    else:
        sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # this checkout
    for colony, host in (("lsbench.gpu.engine.colony", "lsbench.gpu.engine.rots.host"),
                         ("lsbench.gpu.colony", "lsbench.gpu.rots_engine")):  # (the layout before 028e761)
        try:
            return importlib.import_module(colony), importlib.import_module(host).ResidentRots
        except ImportError:
            continue
    sys.exit(f"profile_cas: no cas colony module in {tree or 'this checkout'}")


class Split:
    """Host seconds per call name, and with events on, each kernel's GPU milliseconds."""

    def __init__(self):
        self.host, self.gpu, self.events, self.stream = {}, {}, False, None

    def timed(self, name, fn, kernel=True):
        def run(*args, **kwargs):
            mark = self.events and kernel and self.stream is not None
            if mark:
                start = cuda.event()
                start.record(self.stream)
            t = time.perf_counter()
            out = fn(*args, **kwargs)
            self.host[name] = self.host.get(name, 0.0) + time.perf_counter() - t
            if mark:
                end = cuda.event()
                end.record(self.stream)
                self.gpu.setdefault(name, []).append((start, end))
            return out
        return run

    def gpu_ms(self):
        return {name: sum(s.elapsed_time(e) for s, e in pairs) for name, pairs in self.gpu.items()}


def instrument(colony, rots, split):
    """Wraps the colony's launches (and the waits for its events) in split's timers."""
    class Launch:  # kernel[grid, block, stream](...) of a Numba dispatcher
        def __init__(self, name, dispatcher):
            self.name, self.dispatcher = name, dispatcher

        def __getitem__(self, config):
            return split.timed(self.name, self.dispatcher[config])
    colony.pheromone_kernel = Launch("pheromone", colony.pheromone_kernel)
    colony.select_kernel = Launch("select", colony.select_kernel)
    if hasattr(colony, "build_ants"):
        colony.build_ants = split.timed("ants", colony.build_ants)
    launch_chunk = split.timed("rots", rots.launch_chunk)

    def chunk(engine, *args):
        split.stream = engine.stream
        return launch_chunk(engine, *args)
    rots.launch_chunk = chunk
    buffers = colony._colony_buffers

    class Waited:  # an event of the generations in flight: the host's wait for it is timed
        def __init__(self, event):
            self.event = event

        def record(self, stream):
            self.event.record(stream)

        def synchronize(self):
            split.timed("wait", self.event.synchronize, kernel=False)()

    def colony_buffers(engine, m, n):
        *held, events = buffers(engine, m, n)
        return (*held, [e if isinstance(e, Waited) else Waited(e) for e in events])
    colony._colony_buffers = colony_buffers


def profile(instance, generations, small, split, block=None):
    """{'host': ms a generation per call, 'gpu': ms a generation per kernel, 'wall': ms a generation};
    `block`: threads an ant's Ro-TS block (`--param block`; None: the colony's own choice)."""
    from lsbench import instances
    from lsbench.engines.cas import CunningAntSystem
    from lsbench.runner import run_one
    prm = {**CunningAntSystem().params(instances.load(instance)), **small}
    per_generation = prm["ants"] * prm["ls_iterations"]
    backend = {"block": block} if block is not None else None  # (0 too: the engine refuses it in one line)
    run_one("qap", instance, "cas", "gpu-resident", seed=1, algorithm_params=small, backend_params=backend,
            iterations=3 * per_generation)
    out = {}
    for events in (False, True):
        split.host, split.gpu, split.events = {}, {}, events
        rec = run_one("qap", instance, "cas", "gpu-resident", seed=1, algorithm_params=small, backend_params=backend,
                      iterations=generations * per_generation)
        done = rec["iterations"] // per_generation  # (the first: the initial colony's local searches)
        row = {"wall": 1000 * rec["wall_s"] / done}
        row.update({f"host {k}": 1000 * v / done for k, v in split.host.items()})
        if events:
            row.update({f"gpu {k}": v / done for k, v in split.gpu_ms().items()})
        out["events" if events else "host"] = {k: round(v, 4) for k, v in row.items()}
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("instances", nargs="*", default=["tai40a", "tai60b"])
    ap.add_argument("--generations", type=int, default=100)
    ap.add_argument("--tree", help="a checkout (or git archive) to import lsbench from")
    ap.add_argument("--ants", type=int, help="the colony's ants (default: cas's own for the instance)")
    ap.add_argument("--ls-iterations", type=int, help="each ant's local search iterations (default: cas's own)")
    ap.add_argument("--block", type=int, help="threads an ant's Ro-TS block (default: the colony's own choice)")
    ap.add_argument("--out", help="also write the figures as a result file (profile_cas-GPU-COMMIT.json) there")
    args = ap.parse_args()
    if args.out and args.tree:
        ap.error("--out: a result file names this checkout's commit, so not with --tree")
    for name in ("generations", "ants", "ls_iterations"):
        if getattr(args, name) is not None and getattr(args, name) < 1:
            ap.error(f"--{name.replace('_', '-')}: must be at least 1, got {getattr(args, name)}")
    colony, rots = load(args.tree)
    from lsbench.errors import LsbenchError
    small = {k: v for k, v in (("ants", args.ants), ("ls_iterations", args.ls_iterations)) if v}
    split = Split()
    instrument(colony, rots, split)
    try:
        figures = {name: profile(name, args.generations, small, split, args.block) for name in args.instances}
    except LsbenchError as e:  # an unknown instance, no GPU: one line, as the CLI says it
        print(f"profile_cas: error: {e}", file=sys.stderr)
        sys.exit(2)
    import lsbench
    tree = os.path.dirname(os.path.dirname(os.path.abspath(lsbench.__file__)))
    print(f"ms a generation, {args.generations} generations ({tree})")
    for name, rows in figures.items():
        for mode, row in rows.items():
            print(f"{name:8s} {mode:6s} " + "  ".join(f"{k} {v:.3f}" for k, v in row.items()))
    print("CAS-SPLIT " + json.dumps({"tree": tree, "generations": args.generations, "block": args.block,
                                     "figures": figures}), flush=True)
    if args.out:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common.py
        from common import write_result
        print("-> " + str(write_result("profile_cas", {"generations": args.generations, "block": args.block, "small": small,
                                                       "figures": figures}, args.out)))


if __name__ == "__main__":
    main()
