"""Command line: `lsbench instances|run|multistart|describe|export|indicators|verify ...`.

Every user error ends with one line `lsbench: error: ...` on stderr and exit code 2.
"""
import argparse
import os
import sys
from pathlib import Path

from . import instances as registry
from .errors import LsbenchError
from .files import launcher_rank, launcher_size
from .interrupts import answering_ctrl_c, end_now_if_left_running, interrupted, taken
from .params import split_pairs


def cmd_instances(args):
    if args.action == "list":
        rows = registry.entries(args.problem)
        print(f"{'problem':8} {'name':12} {'size':>8} {'best known':>14} {'optimal':8} source")
        for e in rows:
            print(f"{e.problem:8} {e.name:12} {e.size:>8} {e.bks:>14} {e.optimal:8} {e.source_url}")
        print(f"# {len(rows)} instances; generated families: PPP M-N[-sSEED], weierstrass-D, "
              "rnd-pfsp-NxM-SEED, rnd-atsp-N-SEED, rnd-qap-N-SEED")
        return 0
    if args.action == "show":
        if not args.names:
            raise LsbenchError("instances show: give an instance name")
        for name in args.names:
            entry = registry.manifest().get(name)
            if (entry is not None and not entry.generated and args.problem in (None, entry.problem)
                    and not registry.local_path(entry, args.data_dir).exists()):
                # the manifest's facts need no download: a user may look before fetching
                print(f"{entry.name} ({entry.problem})\n  size: {entry.size}\n"
                      f"  file: not in the data directory (`lsbench instances fetch {entry.name}`)")
                bks = entry.bks_value()
            else:
                p = registry.load(name, args.problem, args.data_dir)
                print(f"{p.name} ({p.kind})")
                for k, v in p.describe().items():
                    print(f"  {k}: {v}")
                bks = registry.bks_of(p)
            print(f"  best known value: {bks}"
                  + (f" (optimal: {entry.optimal}; source: {entry.bks_source})" if entry else ""))
            if entry:
                print(f"  source: {entry.source_url}\n  sha256: {entry.sha256}")
        return 0
    if args.action == "fetch":
        names = args.names or [e.name for e in registry.entries(args.problem)]
        for name in names:
            path = registry.fetch(name, args.data_dir, args.mirror)
            print(f"{name}: {path}")
        return 0
    raise LsbenchError(f"instances: unknown action {args.action!r}")


def spec_from_args(args, searches=1, out=None):
    """The RunSpec of `run` and `multistart` (one builder for the CLI and the workflows)."""
    from .spec import build_spec
    params = split_pairs(args.param)
    for option in ("workers", "scheduler"):  # grid's Dask options, also given as --workers/--scheduler
        if getattr(args, option) is not None:
            if args.backend != "grid" and args.command == "run":
                raise LsbenchError(f"--{option}: only for --backend grid")
            if option in params and str(params[option]) != str(getattr(args, option)):
                raise LsbenchError(f"--{option} {getattr(args, option)} and --param {option}={params[option]}: "
                                   "give one")
            if args.backend == "grid":
                params[option] = getattr(args, option)
    return build_spec(args.instance, args.problem, args.algorithm, args.backend, args.neighbourhood,
                      args.seed, args.iterations, args.evaluations, args.seconds, args.target, params,
                      args.threads, searches, args.warmup, args.data_dir, out)


MPI_BACKENDS = ("cow",)  # backends whose ranks share one search


def cmd_run(args):
    from .runner import run
    ranks = launcher_size()
    if ranks > 1 and args.backend not in MPI_BACKENDS:
        raise LsbenchError(f"--backend {args.backend}: this process is one of {ranks} ranks of an MPI launch, and "
                           "each would run the same search and write the same record; run it as one process, or "
                           "use --backend cow (the ranks share one search) or `lsbench multistart` (a search a rank)")
    spec = spec_from_args(args, args.searches, args.out)
    record = run(spec, progress=not args.quiet)
    if record is None:  # a COW worker rank: rank 0 reports
        return 0
    hint = faster_backend_hint(spec)
    if hint:
        print(hint, file=sys.stderr)
    gap = record["gap_percent"]
    print(f"{record['instance']} {record['algorithm']}/{record['backend']} seed {record['seed']}: "
          f"best {record['best_objective']}" + (f" (gap {gap:.3f}% to {record['bks']})" if gap is not None else "")
          + f", {record['iterations']} iterations in {record['wall_s']:.2f} s"
          + (f" -> {args.out}" if args.out else ""))
    return 0


def faster_backend_hint(spec):
    """One line where a faster backend exists here for the same search (same trajectory) and
    accepts the instance."""
    from . import registry
    from .instances import load
    better = registry.FASTER.get((spec.algorithm, spec.backend, spec.problem), (None,))[0]
    if better is None:
        return None
    gpu_here = False
    if better.startswith("gpu"):
        from .gpu import available
        gpu_here = available()
    problem = load(spec.instance, spec.problem, spec.data_dir, spec.problem_params)
    better = registry.faster_backend(spec, gpu_here, problem)
    return None if better is None else (f"lsbench: note: --backend {better} runs the same {spec.algorithm} search "
                                        f"much faster on this host (docs/performance.md)")


def cmd_multistart(args):
    from .hpc.multistart import run_multistart
    if args.backend in ("cow", "grid"):
        raise LsbenchError(f"--backend {args.backend}: multistart runs whole searches on each rank or worker; "
                           "use cpu, cpu-parallel or gpu there")
    if args.migrants is not None and (not args.exchange_every or args.migrants < 1):
        raise LsbenchError(f"--migrants {args.migrants}: islands pass at least one solution, and only with "
                           "--exchange-every")
    if args.migrant_start != "copy" and not args.exchange_every:
        raise LsbenchError(f"--migrant-start {args.migrant_start}: only islands (--exchange-every) take migrants")
    spec = spec_from_args(args)
    try:
        summary = run_multistart(spec, args.searches, args.out_dir, args.via, args.workers, args.scheduler,
                                 args.exchange_every, args.searches_per_gpu, args.migrants or 4, args.out,
                                 args.migrant_start)
    except (KeyboardInterrupt, SystemError) as e:
        if isinstance(e, SystemError) and not interrupted():
            raise
        taken()
        kept = len(list(Path(args.out_dir).glob("seed-*.json"))) if Path(args.out_dir).is_dir() else 0
        print(f"lsbench: interrupted; {kept} search record(s) kept in {args.out_dir}; the same command again "
              "runs only the missing searches", file=sys.stderr)
        end_now_if_left_running(130)
        return 130
    if summary is None:  # an MPI rank other than 0: rank 0 reports
        return 0
    line = (f"{summary['completed']}/{summary['searches']} searches done via {summary['via']}"
            + (f", best {summary['best_objective']} (seed {summary['best_seed']}), median "
               f"{summary['median_objective']}, {summary['aggregate_iterations_per_s']:.1f} iterations/s in all, "
               f"{summary['runs']} run(s), at most {summary['largest_run_searches']} search(es) at once"
               if summary["completed"] else "")
            + ("; FAILED " + "; ".join(f"seed {f['seed']}: {f['error']}" for f in summary["failed"])
               if summary["failed"] else "")
            + f" -> {args.out_dir}/summary.json")
    print(line)
    return 0 if not summary["failed"] else 1


def cmd_export(args):
    from .export import export
    print(f"{args.source} -> {export(args.source, args.format, args.out)}")
    return 0


def cmd_indicators(args):
    import json
    from .indicators import evaluate_records
    from .files import check_writable, reserve, write_text_atomic
    point = None
    if args.reference_point:
        try:
            point = [float(v) for v in args.reference_point.split(",")]
        except ValueError:
            raise LsbenchError(f"--reference-point {args.reference_point!r}: need comma-separated numbers")
    if args.reference_front:
        try:
            front_path = args.reference_front.format(instance="INSTANCE")
        except (KeyError, IndexError, ValueError) as e:
            raise LsbenchError(f"--reference-front {args.reference_front}: only {{instance}} may be a placeholder "
                               f"({type(e).__name__}: {e})") from None
        check_writable(front_path, "--reference-front")
    if args.out:
        reserve(args.out, kind="indicators table")
    rows = evaluate_records(args.records, args.reference_front, point)
    if args.out:
        write_text_atomic(args.out, json.dumps(rows, indent=1) + "\n")
    for r in rows:
        print(f"{r['instance']} {r['algorithm']}/{r['backend']} seed {r['seed']}: front {r['front_size']}, "
              f"hypervolume {r['hypervolume']:.6g}, epsilon+ {r['epsilon_additive']:.6g}, IGD+ {r['igd_plus']:.6g}")
    return 0


def cmd_describe(args):
    print(describe_text(args.problem, args.algorithm, args.backend))
    return 0


def describe_text(problem=None, algorithm=None, backend=None):
    """What runs where and every parameter that applies, from the registry and the declarations."""
    from . import registry
    from .problems import PROBLEMS
    from .registry import ALGORITHMS
    if problem is not None and problem not in PROBLEMS:
        raise LsbenchError(f"--problem: unknown problem {problem!r} (known: {', '.join(PROBLEMS)})")
    if algorithm is not None and algorithm not in ALGORITHMS:
        raise LsbenchError(f"--algorithm: unknown algorithm {algorithm!r} (known: {', '.join(ALGORITHMS)})")
    if backend is not None and backend not in registry.BACKENDS:
        raise LsbenchError(f"--backend: unknown backend {backend!r} (known: {', '.join(registry.BACKENDS)})")
    rows = [c for c in registry.combinations() if (problem, algorithm, backend)[0] in (None, c[0])
            and algorithm in (None, c[1]) and backend in (None, c[2])]
    if not rows:
        if problem and algorithm and not registry.runs_on(algorithm, problem):
            raise LsbenchError(f"--algorithm {algorithm} is defined for "
                               f"{', '.join(ALGORITHMS[algorithm].problems)}, not {problem}")
        asked = ", ".join(f"{k} {v}" for k, v in (("problem", problem), ("algorithm", algorithm),
                                                    ("backend", backend)) if v)
        raise LsbenchError(f"nothing runs with {asked} (`lsbench describe` lists every combination)")
    out = ["combinations (problem, algorithm, backend) that run:"]
    for p in dict.fromkeys(r[0] for r in rows):
        for a in dict.fromkeys(r[1] for r in rows if r[0] == p):
            out.append(f"  {p:12} {a:5} {', '.join(r[2] for r in rows if r[:2] == (p, a))}")
    sections = []
    for p in dict.fromkeys(r[0] for r in rows):
        pcls = PROBLEMS[p]
        sections.append((f"problem {p} (neighbourhoods: {', '.join(pcls.neighbourhoods)}; default "
                         f"{pcls.default_neighbourhood})", pcls.parameters))
    for a in dict.fromkeys(r[1] for r in rows):
        sections.append((f"algorithm {a}", ALGORITHMS[a].parameters))
    owners = {}  # each engine or evaluator once, with its algorithms and the problems it runs
    for p, a, b in rows:
        engine = registry.engine_path(a, b, p)
        entry = owners.setdefault(engine or registry.EVALUATORS[b], (b, engine, {}))
        entry[2].setdefault(a, {})[p] = None  # (dicts: sets that keep their order)
    for owner, (b, engine, algorithms) in owners.items():
        if not engine:
            runs = ""
        elif any(isinstance(registry.ENGINES.get((a, b)), dict) for a in algorithms):
            runs = " with --algorithm " + "; ".join(f"{a} on {', '.join(ps)}" for a, ps in algorithms.items())
        else:
            runs = f" with --algorithm {', '.join(algorithms)}"
        label = f"backend {b}{runs}: {registry.BACKEND_HELP[b]}"
        try:
            params = registry.load_class(owner).parameters
        except ImportError as e:
            params, label = (), f"{label} (not installed here: {e.name})"
        sections.append((label, params))
    for section in sections:
        out.append("")
        out.append(section[0] + ":")
        out.extend(f"  --param {p.describe()}" for p in section[1])
        if not section[1]:
            out.append("  (no parameters)")
    return "\n".join(out)


def cmd_verify(args):
    """Every file is checked and named; exit 2 if any fails."""
    from .record import Record
    failed = 0
    for path in args.records:
        try:
            record = Record.read(path)
            line = record.verify(args.data_dir)
            if args.replay or args.replay_iterations:
                from .replay import replay
                line += "; " + replay(record, args.data_dir, args.replay_iterations)
            print(f"{path}: OK {line}", flush=True)
        except LsbenchError as e:
            failed += 1
            message = str(e)
            print(f"lsbench: error: {message if message.startswith(str(path)) else f'{path}: {message}'}",
                  file=sys.stderr, flush=True)
    if failed and len(args.records) > 1:
        print(f"lsbench: error: {failed} of {len(args.records)} records failed", file=sys.stderr)
    return 2 if failed else 0


def add_search_arguments(p):
    p.add_argument("--problem", help="qap, pfsp, tsp, ppp or weierstrass (needed with a file path)")
    p.add_argument("--instance", required=True, help="known instance name or instance file path")
    p.add_argument("--algorithm", default="tabu", help="tabu, rots (QAP), hc, cas (QAP), pls (PFSP, three "
                   "objectives), ig (PFSP); see `lsbench describe`")
    p.add_argument("--neighbourhood", "--neighborhood", dest="neighbourhood")
    p.add_argument("--backend", default="cpu", help="cpu, cpu-parallel, gpu, gpu-resident, cow (under mpiexec), "
                   "grid (Dask)")
    p.add_argument("--threads", type=int,
                   help="threads for cpu-parallel (default: all cores), per rank/worker for cow and grid")
    p.add_argument("--workers", type=int, help="Dask workers of the LocalCluster the run starts (default 2)")
    p.add_argument("--scheduler", help="join this Dask scheduler (tcp://HOST:PORT) instead")
    p.add_argument("--iterations", type=int)
    p.add_argument("--evaluations", type=int)
    p.add_argument("--seconds", type=float)
    p.add_argument("--target", help="stop when the best objective is <= target: a number, bks (the manifest's "
                   "best-known value) or bks+P%% (P percent above it)")
    p.add_argument("--param", action="append", metavar="KEY=VALUE",
                   help="problem, algorithm or backend parameter, e.g. tenure=7, objective=flowtime")
    p.add_argument("--warmup", type=int, default=2,
                   help="untimed iterations first (JIT compile, GPU launch tuning); 0 for none")
    p.add_argument("--data-dir", type=path_argument)


class Parser(argparse.ArgumentParser):
    """Errors in README's one-line form (`lsbench: error: ...`, exit 2), not a usage block; `lsbench
    run --help` ends with every --param, from the declarations (built only when asked)."""

    parameters_in_help = False

    def error(self, message):
        command = self.prog.split(" ", 1)[1] if " " in self.prog else ""
        self.exit(2, f"lsbench: error: {command + ': ' if command else ''}{message} (see {self.prog} --help)\n")

    def format_help(self):
        return super().format_help() + ("\n" + describe_text() + "\n" if self.parameters_in_help else "")


def path_argument(text):
    """A file or folder argument: an empty one is refused, not read as 'none given'."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty path")
    return text


def build_parser():
    ap = Parser(prog="lsbench", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True, parser_class=Parser)

    pi = sub.add_parser("instances", help="list, show or fetch benchmark instances")
    pi.add_argument("action", choices=["list", "show", "fetch"])
    pi.add_argument("names", nargs="*")
    pi.add_argument("--problem")
    pi.add_argument("--data-dir", type=path_argument, help="instance data directory (default $LSBENCH_DATA, else the user's data folder)")
    pi.add_argument("--mirror", help="fetch from this local folder or base URL instead of the public source")
    pi.set_defaults(func=cmd_instances)

    pr = sub.add_parser("run", help="run one search and write its run record")
    pr.parameters_in_help = True
    add_search_arguments(pr)
    pr.add_argument("--seed", type=int, default=1)
    pr.add_argument("--searches", type=int, default=1,
                    help="gpu-resident: K independent searches (seeds s..s+K-1) on the GPU at once")
    pr.add_argument("--out", type=path_argument, help="run record path (JSON, written atomically)")
    pr.add_argument("--quiet", action="store_true", help="no progress lines")
    pr.set_defaults(func=cmd_run)

    pm = sub.add_parser("multistart", help="K independent searches over MPI ranks, Dask workers or here")
    add_search_arguments(pm)
    pm.add_argument("--searches", type=int, required=True, help="number of searches K (seeds s..s+K-1)")
    pm.add_argument("--seed", type=int, default=1, help="first seed s")
    pm.add_argument("--via", default="auto", choices=["auto", "local", "mpi", "dask"],
                    help="auto: mpi under mpiexec/srun, dask with --workers/--scheduler, else local")
    pm.add_argument("--exchange-every", type=int, default=0, metavar="E",
                    help="cooperative islands: every E iterations each island passes its best to the next in a "
                         "ring (rots on gpu-resident: an island is a rank's GPU of searches, passing elites while "
                         "they run; elsewhere each search is an island, run in epochs; 0: independent searches)")
    pm.add_argument("--migrants", type=int, metavar="M",
                    help="live islands (rots on gpu-resident): the best distinct solutions an island sends each "
                         "time (default 4)")
    pm.add_argument("--migrant-start", default="copy", choices=["copy", "cross"],
                    help="live islands: an arrived solution restarts one of the island's worst searches as it is "
                         "(copy), or crossed with that search's best: their shared assignments kept, the rest "
                         "dealt at random (cross)")
    pm.add_argument("--searches-per-gpu", type=int, metavar="B",
                    help="engines that hold several searches (rots on gpu-resident): each rank runs its share in "
                         "runs of B searches (default: one per multiprocessor of its GPU)")
    pm.add_argument("--out-dir", type=path_argument, required=True, help="folder for one record per search and summary.json")
    pm.add_argument("--out", type=path_argument, help="also the multistart as one run record (the best search's, with the aggregate "
                                  "rate; what a workflow's report reads)")
    pm.set_defaults(func=cmd_multistart)

    pd = sub.add_parser("describe", help="which (problem, algorithm, backend) combinations run, and their --param keys")
    pd.add_argument("--problem")
    pd.add_argument("--algorithm")
    pd.add_argument("--backend")
    pd.set_defaults(func=cmd_describe)

    px = sub.add_parser("export", help="an experiment's runs for IOHanalyzer/iohinspector or a spreadsheet")
    px.add_argument("source", help="results/<experiment>/runs.parquet or its folder")
    px.add_argument("--format", required=True, choices=["iohanalyzer", "csv"])
    px.add_argument("--out", type=path_argument, required=True, help="a folder (iohanalyzer) or a .csv file")
    px.set_defaults(func=cmd_export)

    pq = sub.add_parser("indicators", help="hypervolume, additive epsilon and IGD+ of PLS fronts (moocore), "
                        "against the non-dominated union of the records given, per instance")
    pq.add_argument("records", nargs="+")
    pq.add_argument("--reference-front", type=path_argument, help="write each instance's reference front here ({instance} in the path)")
    pq.add_argument("--reference-point", help="hypervolume reference point in objective values, e.g. 3000,90000,50 "
                    "(default: 1.1 x the reference front's range beyond its ideal point)")
    pq.add_argument("--out", type=path_argument, help="the rows as JSON")
    pq.set_defaults(func=cmd_indicators)

    pv = sub.add_parser("verify", help="re-check run records from scratch")
    pv.add_argument("records", nargs="+")
    pv.add_argument("--data-dir", type=path_argument)
    pv.add_argument("--replay", action="store_true",
                    help="also run each search again on the CPU from the record's spec and seed: its trajectory, "
                         "iterations and best (a Pareto search's archive sizes and front) must be the record's; an "
                         "island's search up to where another island's solution entered it")
    pv.add_argument("--replay-iterations", type=int, metavar="N",
                    help="replay only the first N iterations of each search (a prefix of a long run)")
    pv.set_defaults(func=cmd_verify)
    return ap


def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        with answering_ctrl_c():
            return args.func(args)
    except LsbenchError as e:
        if launcher_rank() == 0:  # the ranks of an MPI job refuse alike: the line once, from rank 0
            print(f"lsbench: error: {e}", file=sys.stderr)
        return 2
    except (KeyboardInterrupt, SystemError) as e:
        if isinstance(e, SystemError) and not interrupted():  # (a Ctrl-C pending as compiled code returned)
            raise
        taken()
        print("lsbench: interrupted; no record written", file=sys.stderr)
        end_now_if_left_running(130)
        return 130
    except BrokenPipeError:  # `lsbench instances list | head`: the reader is gone, nothing is lost
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
