"""TSP 2-opt side by side with TSP_GPU (O'Neil & Burtscher, GPGPU-8 2015), one process, one GPU (or one a lane).

    python benchmarks/tsp_peer.py [--instances pr2392,rl5915] [--algorithms hc,tabu] [--repeats 3 | --lanes N]
                                  [--peer .peers/tsp_gpu] [--restarts 1056,rl5915:528] [--peer-once rl5915]
    python benchmarks/tsp_peer.py --merge FILE... --out DIR   (one table of several calls' files)

The peer's CUDA source is not part of lsbench: place its `main.cu` (TSP_GPU v2.3, e.g. from
HeCBench's src/tsp-cuda) in the ignored folder `--peer`; this script builds it with nvcc (its own
flags: -O3 -use_fast_math) and feeds it the instance in the layout its reader needs (six header
lines, the coordinates, `EOF`). Per instance, rows alternate, the peer then each lsbench algorithm,
`--repeats` times:

- the peer: random-restart 2-opt hill climbing, one climb per block, `--restarts` climbs (one full
  wave on an H100/H200); moves/s as it reports them: climbs x (n-1)(n-2)/2 over its kernel time;
  its best tour in its own metric (float32 distances truncated, not TSPLIB's rounding);
- lsbench: `--algorithm hc|tabu --backend gpu-resident --searches K` for the peer's kernel time;
  moves/s = all searches' iterations x n(n-1)/2 over the seconds in kernels, as the peer counts
  (and over the run's wall seconds, which add the host's trajectory bookkeeping); its best tour in
  TSPLIB's metric, re-checked.
`--lanes N` runs N repeats side by side instead, one a GPU and its share of the cores (a child
process each); a repeat of fnl4461 takes about five minutes (the peer's warm-up launch, its timed
launch, then hc and tabu for as long). Medians of the repeats, after each tool's warm-up (the peer's first launch, lsbench's JIT compile).
Before timing, the first two searches of each algorithm run `--check` iterations on the GPU and on
the CPU with the same seeds, and their trajectories must be equal.
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from common import run_main, source_files_run, write_atomic, write_result

from lsbench import instances as registry
from lsbench.errors import LsbenchError

PEER_FLAGS = ["-std=c++17", "-O3", "-use_fast_math"]  # the peer's own Makefile's optimisation flags


def peer_input(tsplib_path, out_path):
    """The instance as TSP_GPU's reader takes it: NAME, COMMENT, TYPE, DIMENSION, EDGE_WEIGHT_TYPE,
    NODE_COORD_SECTION, one `index x y` line per city, EOF (its reader skips the first three lines by
    count and needs the coordinates to end with `EOF`)."""
    lines = Path(tsplib_path).read_text().splitlines()
    fields = dict(re.match(r"\s*([A-Z_]+)\s*:\s*(.*)", line).groups() for line in lines
                  if re.match(r"\s*[A-Z_]+\s*:", line))
    if fields.get("EDGE_WEIGHT_TYPE", "").strip() != "EUC_2D":
        raise LsbenchError(f"{tsplib_path}: TSP_GPU computes Euclidean distances; give an EUC_2D instance")
    start = next(k for k, line in enumerate(lines) if line.strip().startswith("NODE_COORD_SECTION")) + 1
    coords = []
    for line in lines[start:]:
        if line.strip() in ("EOF", ""):
            break
        coords.append(" ".join(line.split()[:3]))
    n = int(fields["DIMENSION"])
    if len(coords) != n:
        raise LsbenchError(f"{tsplib_path}: {len(coords)} coordinates for DIMENSION {n}")
    header = [f"NAME : {fields.get('NAME', '').strip()}", "COMMENT : for TSP_GPU", "TYPE : TSP", f"DIMENSION : {n}",
              "EDGE_WEIGHT_TYPE : EUC_2D", "NODE_COORD_SECTION"]
    tmp = Path(f"{out_path}.{os.getpid()}")  # lanes write it side by side: whole or not at all
    tmp.write_text("\n".join(header + coords + ["EOF"]) + "\n")
    tmp.replace(out_path)
    fractional = any(float(v) != int(float(v)) for line in coords for v in line.split()[1:])
    return n, "EUC_2D " + ("fractional" if fractional else "whole")


def build_peer(folder):
    source = Path(folder) / "main.cu"
    if not source.exists():
        raise LsbenchError(f"--peer {folder}: no main.cu there (place TSP_GPU v2.3's CUDA source in that ignored "
                           "folder; its code never enters this repository)")
    if shutil.which("nvcc") is None:
        raise LsbenchError("nvcc not found: the peer is built from its CUDA source")
    binary = Path(folder) / "tsp_gpu"
    subprocess.run(["nvcc", *PEER_FLAGS, "-arch=native", str(source), "-o", str(binary)], check=True, timeout=600)
    return binary


def parse_peer(text):
    """The peer's own report: kernel seconds, G moves/s, best tour and climbs."""
    kernel = float(re.search(r"Average kernel time: ([0-9.]+) s", text).group(1))
    gmoves = float(re.search(r"([0-9.]+) Gmoves/s", text).group(1))
    best, climbs = (int(v) for v in re.search(r"Best found tour length is (\d+) with (\d+) climbers", text).groups())
    return {"kernel_s": kernel, "moves_per_s": gmoves * 1e9, "best_truncated_metric": best, "climbs": climbs}


def run_peer(binary, instance_file, restarts, launches=1):
    """`launches` measured launches after one warm-up launch (the peer times launches after its
    first and reports their mean)."""
    r = subprocess.run([str(binary), str(instance_file), str(restarts), str(launches)], capture_output=True,
                       text=True, timeout=900)
    return {**parse_peer(r.stdout), "timed_launches": launches}


def run_lsbench(instance, algorithm, searches, seconds, data):
    from lsbench.runner import run_one
    rec = run_one("tsp", instance, algorithm, "gpu-resident", "2opt", seed=1, seconds=seconds, searches=searches,
                  data=data)
    iterations = rec.get("aggregate_iterations", rec["iterations"])
    moves = iterations * rec["neighbourhood_size"]
    return {"seconds": rec["wall_s"], "kernel_s": rec["backend_info"]["kernel_s"], "iterations": iterations,
            "moves_per_s": moves / rec["backend_info"]["kernel_s"], "moves_per_wall_s": moves / rec["wall_s"],
            "best_tsplib_metric": rec["best_objective"], "gap_percent": rec["gap_percent"], "searches": searches,
            "layout": rec["backend_info"].get("layout"), "threads": rec["backend_info"].get("threads")}


def same_as_cpu(instance, algorithm, iterations, data):
    """Whether the GPU's first two searches follow the CPU searches with the same seeds."""
    from lsbench.runner import run_one
    dev = run_one("tsp", instance, algorithm, "gpu-resident", "2opt", seed=1, iterations=iterations, searches=2,
                  data=data)
    for entry in dev["searches"]:
        cpu = run_one("tsp", instance, algorithm, "cpu", "2opt", seed=entry["seed"], iterations=iterations, data=data)
        if [p[::2] for p in cpu["trajectory"]] != [p[::2] for p in entry["trajectory"]] or \
                cpu["best_solution"] != entry["best_solution"]:
            return False
    return True


def described(instance, data_dir):
    """(cities, "WEIGHT_TYPE whole|fractional") of an instance the peer does not run."""
    p = registry.load(instance, "tsp", data_dir)
    xy = p.coordinates
    whole = xy is None or bool((xy == xy.round()).all())
    return p.n, f"{p.weight_type} " + ("whole" if whole else "fractional")


def loaded_once(load):
    """registry.load, keeping the last instance loaded: every run of an instance reads its file and
    builds its distance matrix again otherwise (brd14051's 14,051^2 matrix takes seconds)."""
    last = {}

    def load_once(spec, problem=None, data=None, params=None):
        if params:
            return load(spec, problem, data, params)
        key = (spec, problem, data)
        if key not in last:
            last.clear()
            last[key] = load(spec, problem, data)
        return last[key]
    return load_once


def instance_file(instance, data_dir):
    """The instance's TSPLIB file in the data directory; one error line where there is none."""
    entry = registry.manifest().get(instance)
    if entry is None or entry.problem != "tsp":
        raise LsbenchError(f"--instances {instance}: not a TSPLIB instance of the manifest")
    source = registry.local_path(entry, data_dir)
    if not source.exists():
        raise LsbenchError(f"--instances {instance}: {source} not found (lsbench instances fetch {instance})")
    return source


def compare(args, instance, binary):
    """The peer and each algorithm, interleaved; medians and ratios."""
    peer_file = Path(args.peer) / f"{instance}.tsp"
    with_peer = args.peer_on is None or instance in args.peer_on
    restarts = args.restarts.get(instance, args.restarts["*"]) if with_peer else None
    if with_peer:
        n, coordinates = peer_input(instance_file(instance, args.data_dir), peer_file)
    else:
        n, coordinates = described(instance, args.data_dir)
    check = args.check if n < args.check_below else 0
    checks = {a: same_as_cpu(instance, a, check, args.data_dir) if check else None for a in args.algorithms}
    for a in args.algorithms:
        run_lsbench(instance, a, args.searches, 1.0, args.data_dir)  # JIT compile and first launches
    once = run_peer(binary, peer_file, restarts, args.repeats) if with_peer and instance in args.peer_once else None
    rows = []
    for k in range(args.repeats):
        if once:
            peer = once if k == 0 else None
        else:
            peer = run_peer(binary, peer_file, restarts) if with_peer else None
        row = {"peer": peer}
        for a in args.algorithms:
            seconds = args.seconds or ((peer or once)["kernel_s"] if with_peer else 5.0)
            row[a] = run_lsbench(instance, a, args.searches, seconds, args.data_dir)
        rows.append(row)
        print(f"{instance} peer " + (f"{peer['moves_per_s'] / 1e9:8.1f} G moves/s in {peer['kernel_s']:.2f} s   "
                                     if peer else "(not run)   ") +
              "   ".join(f"{a} {row[a]['moves_per_s'] / 1e9:8.1f} G (best {row[a]['best_tsplib_metric']})"
                         for a in args.algorithms), flush=True)
    return case(instance, n, rows, checks, args.algorithms, coordinates, restarts)


def case(instance, n, rows, checks, algorithms, coordinates=None, restarts=None):
    """An instance's rows with their medians and ratios (`checks`: each algorithm's trajectory check;
    `restarts`: the peer's climbs a launch)."""
    peers = [r["peer"] for r in rows if r["peer"]]
    peer_rate = statistics.median(p["moves_per_s"] for p in peers) if peers else None
    summary = {"instance": instance, "n": n, "coordinates": coordinates, "peer_moves_per_s": peer_rate,
               "peer_restarts": restarts,
               "peer_best_truncated_metric": min(p["best_truncated_metric"] for p in peers) if peers else None}
    for a in algorithms:
        rate = statistics.median(r[a]["moves_per_s"] for r in rows)
        wall = statistics.median(r[a]["moves_per_wall_s"] for r in rows)
        summary[a] = {"moves_per_s": rate, "moves_per_wall_s": wall, "layout": rows[0][a].get("layout"),
                      "ratio_to_peer": rate / peer_rate if peers else None,
                      "wall_ratio_to_peer": wall / peer_rate if peers else None, "same_trajectory_as_cpu": checks[a],
                      "best_tsplib_metric": min(r[a]["best_tsplib_metric"] for r in rows)}
    return {"rows": rows, "summary": summary}


def in_lanes(args):
    """The repeats side by side, one a GPU: a child process of this script per lane (`--repeats 1`),
    each seeing one GPU of CUDA_VISIBLE_DEVICES (or 0..lanes-1) and its share of this process's
    cores; their rows merged per instance (a repeat of a large instance outlasts a device call)."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    gpus = visible.split(",") if visible else [str(k) for k in range(args.lanes)]
    if len(gpus) < args.lanes:
        raise LsbenchError(f"--lanes {args.lanes}: only {len(gpus)} GPUs visible (CUDA_VISIBLE_DEVICES={visible})")
    cores = sorted(os.sched_getaffinity(0))
    share = max(1, len(cores) // args.lanes)
    with tempfile.TemporaryDirectory() as tmp:
        children = []
        for lane in range(args.lanes):
            cmd = [sys.executable, __file__, "--instances", ",".join(args.instances), "--algorithms",
                   ",".join(args.algorithms), "--peer", args.peer, "--restarts", restarts_text(args.restarts),
                   "--searches", str(args.searches), "--check", str(args.check), "--check-below", str(args.check_below),
                   "--repeats", "1", "--built", "--out", f"{tmp}/{lane}",
                   *(["--data-dir", args.data_dir] if args.data_dir else []),
                   *(["--peer-on", ",".join(args.peer_on)] if args.peer_on else []),
                   *(["--peer-once", ",".join(args.peer_once)] if args.peer_once else []),
                   *(["--seconds", str(args.seconds)] if args.seconds else [])]
            lane_cores = cores[lane * share:(lane + 1) * share] or cores
            env = {**os.environ, "CUDA_VISIBLE_DEVICES": gpus[lane], "NUMBA_NUM_THREADS": str(len(lane_cores))}
            children.append(subprocess.Popen(cmd, env=env, preexec_fn=lambda c=lane_cores: os.sched_setaffinity(0, c)))
        try:
            for child in children:
                if child.wait(timeout=args.lane_timeout) != 0:
                    raise LsbenchError(f"a lane of --lanes {args.lanes} failed (exit {child.returncode})")
        finally:
            for child in children:
                child.kill()  # (a lane past its time, or one left when another failed)
        lanes = [json.loads(next(Path(f"{tmp}/{lane}").glob("tsp_peer-*.json")).read_text())["cases"]
                 for lane in range(args.lanes)]
    return repeats_joined([c for lane in lanes for c in lane])


SAME_RUN = ("versions", "gpu", "peer", "peer_flags", "searches", "lanes")


def merged(paths):
    """One result of several files of the same commit, GPU and settings (a run that a device call's
    limit cut, continued in the next call): their instances in order, an instance measured in several
    files as one case of all its repeats (its peer at the same climbs); every call's command and date
    kept; its source_files are every module a call loaded (the commit fixes their code; a call whose
    instances skip the CPU check loads fewer)."""
    parts = [json.loads(Path(p).read_text()) for p in paths]
    first = parts[0]
    for path, part in zip(paths[1:], parts[1:]):
        differs = [k for k in SAME_RUN if part.get(k) != first.get(k)]
        if differs:
            raise LsbenchError(f"--merge {path}: its {', '.join(differs)} differ from {paths[0]}'s")
    command = first["command"] + "".join(" ; then " + " ".join(part["command"].split()[1:]) for part in parts[1:])
    return {**first, "command": command, "date": max(part["date"] for part in parts),
            "calls": [{"command": part["command"], "date": part["date"]} for part in parts],
            "source_files": sorted({f for part in parts for f in part["source_files"]}),
            "cases": repeats_joined([c for part in parts for c in part["cases"]])}


def repeats_joined(cases):
    """One case an instance, in the order they first come: the rows of its cases (repeats measured in
    several calls), medians again; a trajectory check differs if any of them did."""
    by_instance = {}
    for c in cases:
        by_instance.setdefault(c["summary"]["instance"], []).append(c)
    joined = []
    for instance, same in by_instance.items():
        if len(same) == 1:
            joined.append(same[0])
            continue
        first = same[0]["summary"]
        climbs = {c["summary"].get("peer_restarts") for c in same}
        if len(climbs) > 1:
            shown = " and ".join(str(c) for c in sorted(climbs, key=lambda c: c or 0))
            raise LsbenchError(f"--merge: {instance}'s peer ran at {shown} climbs in different files")
        algorithms = [a for a in ("hc", "tabu") if a in first]
        checks = {a: checked([c["summary"][a]["same_trajectory_as_cpu"] for c in same]) for a in algorithms}
        joined.append(case(instance, first["n"], [r for c in same for r in c["rows"]], checks, algorithms,
                           first.get("coordinates"), first.get("peer_restarts")))
    return joined


def checked(results):
    """True, False or None (not checked) of several calls' trajectory checks of one instance."""
    if False in results:
        return False
    return True if True in results else None


def parse_restarts(text):
    """--restarts: N, or N,INSTANCE:N,...: the peer's climbs a launch, per instance where named."""
    spec = {}
    for item in text.split(","):
        name, _, value = item.rpartition(":")
        if not value.isdigit() or int(value) < 1:
            raise argparse.ArgumentTypeError(f"{item!r}: give N or INSTANCE:N (N >= 1 climbs)")
        spec[name or "*"] = int(value)
    if "*" not in spec:
        raise argparse.ArgumentTypeError(f"{text!r}: give the climbs of the other instances too (e.g. 1056,{text})")
    return spec


def restarts_text(spec):
    return ",".join(str(v) if k == "*" else f"{k}:{v}" for k, v in spec.items())


def save(args, cases, path=None):
    """The result file, written again after each instance (where `path` is this run's file: a run cut
    short keeps what it measured, in one file)."""
    if path is not None:
        write_atomic(path, {**json.loads(path.read_text()), "cases": cases, "source_files": source_files_run()})
        return path
    return write_result("tsp_peer", {"lanes": args.lanes, "peer": "TSP_GPU v2.3 (O'Neil & Burtscher 2015)",
                                     "peer_flags": PEER_FLAGS, "restarts": args.restarts, "searches": args.searches,
                                     "cases": cases}, args.out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--instances", default="pr2392,rl5915", type=lambda v: v.split(","))
    ap.add_argument("--algorithms", default="hc,tabu", type=lambda v: v.split(","))
    ap.add_argument("--peer", default=str(Path(__file__).resolve().parent.parent / ".peers" / "tsp_gpu"))
    ap.add_argument("--restarts", type=parse_restarts, default="1056",
                    help="the peer's climbs a launch: N (1,056: 8 blocks x 132 SMs), or N,INSTANCE:N,... (e.g. "
                         "1056,fnl4461:528: the peer's launch of a large instance outlasts a device call)")
    ap.add_argument("--searches", type=int, default=1056, help="lsbench's resident searches")
    ap.add_argument("--check", type=int, default=30, help="iterations of the GPU-against-CPU trajectory check (0: none)")
    ap.add_argument("--check-below", type=int, default=20_000,
                    help="cities: larger instances skip the check (the CPU's single-core search of them takes minutes)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--peer-on", type=lambda v: v.split(","),
                    help="instances the peer runs on (default: all); the others run lsbench alone (the peer's "
                         "launch of --restarts climbs of a large instance outlasts a device call)")
    ap.add_argument("--peer-once", type=lambda v: v.split(","), default=[],
                    help="instances whose peer runs once, before the repeats: --repeats timed launches after its "
                         "warm-up launch, their mean as it reports it (saves --repeats - 1 warm-up launches of "
                         "minutes each on a large instance; not interleaved with lsbench's repeats)")
    ap.add_argument("--seconds", type=float, help="each lsbench run's seconds (default: the peer's kernel time "
                                                  "in that repeat, 5 where the peer does not run)")
    ap.add_argument("--lanes", type=int, default=1, help="N: N repeats side by side, one a GPU (replaces --repeats)")
    ap.add_argument("--lane-timeout", type=int, default=560, help="seconds a lane may take")
    ap.add_argument("--built", action="store_true", help=argparse.SUPPRESS)  # a lane: the parent built the peer
    ap.add_argument("--data-dir")
    ap.add_argument("--out")
    ap.add_argument("--merge", nargs="+", metavar="FILE",
                    help="write one result of these files (same commit, GPU and settings) into --out, and stop")
    args = ap.parse_args()
    if args.merge:
        data = merged(args.merge)
        commit = data["versions"]["lsbench_commit"]
        gpu_tag = Path(args.merge[0]).name.split("-")[1]  # tsp_peer-<gpu>-<commit>[-k].json
        path = Path(args.out or ".") / f"tsp_peer-{gpu_tag}-{commit}.json"
        if path.exists():
            raise LsbenchError(f"--out: {path} exists; the merge writes a new file")
        write_atomic(path, data)
        print(f"-> {path}")
        return 0
    registry.load = loaded_once(registry.load)
    for instance in args.instances:  # (bad input ends here, before the peer is built or a lane starts)
        instance_file(instance, args.data_dir)
    binary = Path(args.peer) / "tsp_gpu" if args.built else build_peer(args.peer)
    if args.lanes > 1:
        cases = in_lanes(args)
        path = save(args, cases)
    else:
        cases, path = [], None
        for instance in args.instances:
            cases.append(compare(args, instance, binary))
            path = save(args, cases, path)
    for case in cases:
        sm = case["summary"]
        peer = sm["peer_moves_per_s"]
        print(f"{sm['instance']:>8} n {sm['n']:>6} peer " + (f"{peer / 1e9:7.1f} G" if peer else "    -    ") + "   " +
              "   ".join(f"{a} {sm[a]['layout']} {sm[a]['moves_per_s'] / 1e9:7.1f} G (wall {sm[a]['moves_per_wall_s'] / 1e9:6.1f})"
                         + (f" x{sm[a]['ratio_to_peer']:.2f}" if peer else "") +
                         f" cpu-trajectory {({True: 'same', False: 'DIFFERS', None: 'not checked'})[sm[a]['same_trajectory_as_cpu']]}"
                         for a in args.algorithms))
    print(f"-> {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(run_main(main))
