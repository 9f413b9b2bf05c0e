"""docs/performance.md's tables, rendered from the result files they cite, and their re-measure.

    python benchmarks/performance_page.py remeasure [BENCHMARK...]
                                                        on one GPU machine (LSBENCH_COMMIT set): every
                                                        one-GPU figure's command (or those named), then
                                                        `render --from` its results; two calls of 10
                                                        minutes on one H200: `tsp_peer`, then the rest
    python benchmarks/performance_page.py render [--from DIR]
    python benchmarks/performance_page.py check         exit 1 where the page is not what render writes

The page holds each figure between `<!-- figure: FILE -->` and `<!-- end figure -->`; render writes
that block from FILE (benchmarks/results/): the GPU, commit, command and file, the table, and a
**Stale** line where engine code the figure ran changed after its commit (stale_figures.py). With
--from DIR, each block takes the newest result file of its benchmark in DIR instead: it is copied
into benchmarks/results/ and the file it replaces is removed (commit both: `git add -f`). A stale
figure never fails the fast tier: the page says it is stale until it is measured again.
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from stale_figures import CannotCompare, stale_reasons

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "performance.md"
RESULTS = ROOT / "benchmarks" / "results"
BLOCK = re.compile(r"<!-- figure: (?P<file>\S+) -->\n(?P<body>.*?)<!-- end figure -->", re.S)

# the one-GPU figures and their commands (device_run.sh steps), in the order `remeasure` runs them
ONE_GPU_STEPS = {
    "gpu_resident": "resident --threads auto --searches 1,132,264,1056 --seconds 1.5 --repeats 3",
    "tabu_scaling": "grid --scaling tsp:eil101:2opt,ppp:101-117:hamming2,tsp:pr2392:2opt,pfsp:ta001:insertion "
                    "--searches 1,132,1056 --seconds 0.5 --repeats 3 --check 8",
    "tabu_kernels": "grid --scaling tsp:eil101:2opt,ppp:101-117:hamming2,pfsp:ta001:insertion,tsp:pr2392:2opt:132 "
                    "--searches 1,132,1056 --seconds 0.5 --repeats 3 --check 8 --kernels",
    "gpu_resident_pfsp": "pfsp --threads 256 --repeats 3",
    "cas_gpu": "cas --instances tai40a,tai60a,tai100a,tai60b,tai100b --runs 3 --cpu-runs 0 --cap 10",
    "ig_pfsp": "ig --instances ta051 --runs 3 --cap 5 --restart 1000 --elite 16",
    "tsp_peer": "tsp --instances pr2392,d2103,fnl4461,rl5915,brd14051,pla85900,u2319,usa13509 "
                "--peer-on pr2392,d2103,fnl4461,rl5915 --restarts 1056,fnl4461:528,rl5915:528 --peer-once rl5915 "
                "--seconds 3 --repeats 3 --check 4",
    "maxcut_gset": "maxcut --graphs G22,G43,G55,G70 --seconds 60",
    "small_two_opt": "small2opt --reference pr2392 --instances eil51,eil101,kroA200,pr1002 --rows auto --threads 128",
}
REMEASURE_S = 570  # the steps of one call, within a device call of 10 minutes (tsp_peer alone; then the rest)
MULTI_GPU_STEPS = {"multistart_scaling": "multistart --gpus 1,2 --islands 500000 --repeats 3 --timeout 150"}


def n(x, digits=0):
    return f"{x:,.{digits}f}"


def mega(x):
    return f"{x / 1e6:,.2f} M"


def giga(x):
    return f"{x / 1e9:,.1f}"


def measured_on(name):
    """The GPU a result file names (benchmark-GPU-commit.json, GPU from the device's name), where
    its record's "gpu" is the benchmark's rows (files before device_gpu)."""
    return "NVIDIA " + name.rsplit("-", 2)[-2].upper()


def provenance(data, name):
    gpu = data.get("device_gpu") or data.get("gpu")
    gpu = gpu.get("name") if isinstance(gpu, dict) else measured_on(name)
    command = " ".join(data["command"].split()[1:])
    command = re.sub(r" --out \S+", "", command)
    return (f"{gpu}, **{data['versions']['lsbench_commit']}**, {data['date'][:10]}: `benchmarks/{command}` "
            f"({name}; {data['host']['cpu_count']} CPU cores).")


def table(header, rows):
    return "\n".join(["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
                     + ["| " + " | ".join(str(c) for c in row) + " |" for row in rows])


def shape_of(s):
    if s.get("blocks_per_search", 1) > 1:
        return f"{s['blocks_per_search']} blocks of {s['threads_per_block']} a search"
    if s.get("persistent_blocks"):
        return f"a queue on {s['persistent_blocks']} blocks of {s['threads_per_block']}"
    per_sm = f", {s['blocks_per_sm']} an SM" if s.get("blocks_per_sm") else ""
    return f"one {s['threads_per_block']}-thread block a search{per_sm}"


def forced_block_sizes(rows):
    """One sentence on the rows run at a block size the user forced (`--threads`), beside the engine's choice."""
    best = {}
    for r in rows:
        spec = r.get("spec", "auto")
        if spec != "auto" and r["aggregate_it_per_s"] > best.get(spec, {}).get("aggregate_it_per_s", 0):
            best[spec] = r
    said = [f"`{spec}` at most {n(r['aggregate_it_per_s'])} it/s (K = {r['searches']:,})" for spec, r in best.items()]
    return [f"Forced block sizes (`--threads`, rows in the result file): {'; '.join(said)}.", ""] if said else []


def render_gpu_resident(d, name):
    cpu, every = d["cpu"], sorted(d["gpu"], key=lambda r: r["searches"])
    rows = [r for r in every if r.get("spec", "auto") == "auto"]
    at132 = next((r["aggregate_it_per_s"] for r in rows if r["searches"] == 132), None)
    lines = [provenance(d, name), "",
             f"{d['instance']}; the CPU code of the same run: one core {n(cpu['one_core_it_per_s'])} it/s, "
             f"{cpu['cores']} cores {n(cpu['all_cores_it_per_s'])} it/s (one search a core). One search followed "
             f"the CPU search's trajectory ({d['trajectory_check']['iterations']:,} iterations, seed "
             f"{d['trajectory_check']['seed']}): {'yes' if d['trajectory_check']['same'] else '**no**'}.", ""]
    body = [[f"{r['searches']:,}", shape_of(r["shape"]), n(r["aggregate_it_per_s"]),
             f"{r['aggregate_it_per_s'] / at132:.3f}" if at132 else "-",
             f"{r['vs_cpu_one_core']:,.0f}x",
             f"{statistics.median(r['kernel_s']):.2f} / {statistics.median(r['loop_s']):.2f}"] for r in rows]
    return lines + forced_block_sizes(every) + [table(["searches", "shape", "aggregate it/s", "vs K = 132",
                                                       "vs one core", "kernel s / wall s"], body)]


def render_tabu_scaling(d, name):
    cases = {}
    for r in d["rows"]:
        cases.setdefault((r["instance"], r["neighbourhood"], r["moves_per_iteration"]), {})[r["searches"]] = r
    ks = sorted({r["searches"] for r in d["rows"]})
    body = []
    for (instance, hood, moves), by_k in cases.items():
        at132 = by_k.get(132, {}).get("iterations_per_s")
        ratios = [by_k[k]["iterations_per_s"] / at132 for k in ks if k >= 132 and k in by_k] if at132 else []
        body.append([f"{instance} {hood}", f"{moves:,}"]
                    + [n(by_k[k]["iterations_per_s"]) if k in by_k else "-" for k in ks]
                    + [f"{min(ratios):.2f}-{max(ratios):.2f}" if ratios else "-"])
    same = "yes" if d.get("same_trajectory_as_cpu") else "**no**"
    return [provenance(d, name), "", f"Aggregate iterations per second over the seconds in kernels; every row's "
            f"middle search followed the CPU search: {same}.", "",
            table(["instance", "moves", *[f"K = {k:,}" for k in ks], "K >= 132 vs 132"], body)]


def render_tabu_kernels(d, name):
    cases, ks = {}, sorted({r["searches"] for r in d["rows"]})
    for r in d["rows"]:
        cases.setdefault((r["instance"], r["neighbourhood"]), {})[r["kernel"], r["searches"]] = r["iterations_per_s"]
    body = []
    for (instance, hood), rate in cases.items():
        own = next(kernel for kernel, _k in rate if kernel != "adapter")
        body.append([f"{instance} {hood}", own] + [
            f"{n(rate[own, k])} / {n(rate['adapter', k])} (**{rate[own, k] / rate['adapter', k]:.2f}x**)"
            if (own, k) in rate and ("adapter", k) in rate else "-" for k in ks])
    same = "yes" if d.get("same_trajectory_as_cpu") else "**no**"
    return [provenance(d, name), "", f"Aggregate it/s, own kernel / adapter (own / adapter); every row's middle "
            f"search followed the CPU search: {same}.", "",
            table(["instance", "own kernel", *[f"K = {k:,}" for k in ks]], body)]


def render_gpu_resident_pfsp(d, name):
    cpu = d["cpu"]
    one = cpu["cpu"]["iterations_per_s"]
    body = [["`cpu` (one core)", n(one, 1), "1"],
            [f"`cpu-parallel` ({d['host']['cpu_count']} cores)", n(cpu["cpu-parallel"]["iterations_per_s"], 1),
             f"{cpu['cpu-parallel']['iterations_per_s'] / one:.1f}"]]
    body += [[f"`gpu-resident`, {g['blocks']} blocks of {g['threads']}", n(g["iterations_per_s"]),
              f"**{g['iterations_per_s'] / one:,.0f}**"] for g in d["gpu"] if g.get("fits", True)]
    too_big = [str(g["threads"]) for g in d["gpu"] if not g.get("fits", True)]
    same = "yes" if d.get("same_trajectory_as_cpu") else "**no**"
    return [provenance(d, name), "", f"{d['instance']} ({d['n']} x {d['m']}), one search, "
            f"{d['moves_per_iteration']:,} insertion moves an iteration; the same trajectory as the CPU search: "
            f"{same}." + (f" Blocks of {', '.join(too_big)} threads do not fit this GPU." if too_big else ""), "",
            table(["side", "it/s", "vs one core"], body)]


def render_cas_gpu(d, name):
    body = [[r["instance"], r["target"], f"{r['gpu']['median_s']:.3f}", r["paper_gtx480_s"],
             f"{r['gpu_vs_paper_gpu']:,.0f}",
             f"{sum(x['reached'] for x in r['gpu']['runs'])}/{len(r['gpu']['runs'])}"] for r in d["rows"]]
    return [provenance(d, name), "", table(["instance", "target", "ours (s)", "GTX 480 (s)", "their time / ours",
                                            "reached"], body)]


def render_ig_pfsp(d, name):
    cap = f"{d['cap_s']:g} s"
    lines = [provenance(d, name), ""]
    for inst in d["instances"]:
        body = []
        for side, searches in (("gpu-resident", d["gpu_searches"]), ("cpu-parallel", d["cpu_searches"])):
            runs = [r for r in inst["runs"] if r["backend"] == side]
            body.append([f"`{side}` x {searches:,}", ", ".join(f"{r['gap_percent']:.3f}" for r in runs),
                         f"{statistics.median(r['gap_percent'] for r in runs):.3f}",
                         *([f"{statistics.median(r['gap_at']['5s'] for r in runs):.3f}"] if d["cap_s"] > 5 else []),
                         n(statistics.median(r["aggregate_iterations_per_s"] for r in runs))])
        header = ["side", f"gap at {cap} per run (%)", f"median at {cap} (%)",
                  *(["median at 5 s (%)"] if d["cap_s"] > 5 else []), "it/s (all searches)"]
        lines += [f"{inst['instance']}:", "", table(header, body), ""]
    return lines[:-1]


def peer_cell(summary, rows, d):
    """The peer's G moves/s and its climbs a launch; where it ran once, the mean of its timed launches."""
    launches = max(r["peer"].get("timed_launches", 1) for r in rows if r["peer"])
    once = f", mean of {launches} launches" if launches > 1 else ""
    return f"{giga(summary['peer_moves_per_s'])} ({summary.get('peer_restarts') or d['restarts']:,} climbs{once})"


def render_tsp_peer(d, name):
    """One row an instance: its coordinates, the layout lsbench chose, each algorithm's moves/s by
    kernel time (and by wall time), the peer's where it ran, and the ratios."""
    algorithms = [a for a in ("hc", "tabu") if a in d["cases"][0]["summary"]]
    body = []
    for c in d["cases"]:
        s = c["summary"]
        peer = s["peer_moves_per_s"]
        row = [s["instance"], f"{s['n']:,}", s.get("coordinates") or "EUC_2D", s[algorithms[0]].get("layout") or "chip",
               peer_cell(s, c["rows"], d) if peer else "-"]
        for a in algorithms:
            x = s[a]
            wall = statistics.median(r[a]["moves_per_wall_s"] for r in c["rows"])
            checked = {True: "", False: " **trajectory differs**", None: " (not checked)"}[x["same_trajectory_as_cpu"]]
            row += [f"**{giga(x['moves_per_s'])}**" + (f" ({x['moves_per_s'] / peer:.2f}x)" if peer else "") + checked,
                    giga(wall) + (f" ({wall / peer:.2f}x)" if peer else "")]
        body.append(row)
    head = ["instance", "n", "coordinates", "layout", "TSP_GPU"]
    for a in algorithms:
        head += [f"`{a}` x {d['searches']:,} by kernel time", "by wall time"]
    return [provenance(d, name), "", "G moves/s, medians of the repeats (ratio to TSP_GPU's kernel figure); each "
            "algorithm's first searches followed the CPU's trajectory unless marked.", "", table(head, body)]


def render_multistart_scaling(d, name):
    rows = d["rows"]
    one = {r["repeat"]: r["aggregate_iterations_per_s"] for r in rows if r["gpus"] == 1}
    body = []
    for gpus, islands in dict.fromkeys((r["gpus"], r["islands"]) for r in rows):
        mine = sorted((r for r in rows if r["gpus"] == gpus and r["islands"] == islands), key=lambda r: r["repeat"])
        body.append([f"{gpus}{' islands' if islands else ''}", ", ".join(mega(r["aggregate_iterations_per_s"]) for r in mine),
                     ", ".join(f"{r['aggregate_iterations_per_s'] / one[r['repeat']]:.3f}" for r in mine),
                     f"{max(r['start_skew_s'] for r in mine) * 1e3:.2f} ms"])
    return [provenance(d, name), "", f"{d['instance']}, {d['searches_per_gpu']} searches a GPU, "
            f"{d['iterations']:,} iterations each; islands pass their best every {d['islands_exchange_every']:,}.", "",
            table(["GPUs", "aggregate it/s (repeats)", "x G = 1 of the same repeat", "start skew, at most"], body)]


def render_maxcut_gset(d, name):
    """A row a graph: the plug-in's moves/s and the best cut (and its gap) at each mark."""
    marks = sorted({k[len("cut_at_"):] for r in d["rows"] for k in r if k.startswith("cut_at_")},
                   key=lambda m: float(m.rstrip("s")))
    body = [[r["graph"], f"{r['n']:,}", giga(r["moves_per_s"])]
            + [f"{r['cut_at_' + m]:,} ({r['gap_at_' + m + '_percent']:.2f} %)" for m in marks]
            + [f"{r['best_known_cut']:,}"] for r in d["rows"]]
    first = d["rows"][0]
    command = " ".join(d["command"].split()[1:])
    return [f"{d['gpu']['name']}, **{d['versions']['lsbench_commit']}**, {d['date'][:10]}: `{command}` "
            f"({name}; {first['searches']:,} resident tabu searches, {first['seconds']:.0f} s a graph).", "",
            table(["graph", "n", "G moves/s", *(f"cut at {m[:-1]} s (gap)" for m in marks), "best known (BLS)"], body)]


def render_small_two_opt(d, name):
    """Per instance and algorithm, the 2-opt adapter at each rows a lane (the run's largest block
    size) and the matrix kernel, G moves/s and the ratio to the reference's best."""
    threads = max(r["shape"]["threads"] for r in d["rows"] if r["kernel"].startswith("adapter"))
    kernels = sorted({column_of(r["kernel"]) for r in d["rows"] if r["kernel"].startswith("adapter rows")
                      and r["kernel"].endswith(f"threads {threads}")}) + ["matrix kernel"]
    cases = {}
    for r in d["rows"]:
        cases.setdefault((r["instance"], r["n"], r["algorithm"]), {})[column_of(r["kernel"])] = r
    body = [[instance, f"{size:,}", algorithm] + [
        f"{by[k]['moves_per_s'] / 1e9:,.1f} ({by[k]['vs_reference_best']:.2f}x{rows_chosen(by[k]['kernel'])})"
        if k in by else "-" for k in kernels]
        for (instance, size, algorithm), by in cases.items()]
    same = "yes" if all(r["same_trajectory_as_cpu"] for r in d["rows"]) else "**no**"
    first = d["rows"][0]
    return [provenance(d, name), "", f"G moves/s by kernel time, {first['searches']:,} searches, {threads} threads a "
            f"block (ratio to {d['reference']}'s best of the same algorithm); every row's middle search followed "
            f"the CPU search: {same}.", "",
            table(["instance", "n", "algorithm", *(lanes_of(k) for k in kernels)], body)]


def lanes_of(kernel):
    """'adapter rows 4 threads 128' -> '4 rows a lane', 'adapter rows auto ...' -> the adapter's own
    choice; other kernels as named."""
    if not kernel.startswith("adapter rows "):
        return kernel
    rows = kernel.split()[2]
    return "`rows_for`'s rows a lane" if rows == "auto" else f"{rows} row{'' if rows == '1' else 's'} a lane"


def column_of(kernel):
    """'adapter rows auto (1) threads 128' -> 'adapter rows auto threads 128': one column for the
    adapter's own choice, whatever it chose."""
    return re.sub(r"auto \(\d+\)", "auto", kernel)


def rows_chosen(kernel):
    """'; 1 row' where the row is the adapter's own choice ('adapter rows auto (1) ...'), else ''."""
    chosen = re.search(r"auto \((\d+)\)", kernel)
    return f"; {chosen.group(1)} row{'' if chosen.group(1) == '1' else 's'}" if chosen else ""


RENDERERS = {"gpu_resident": render_gpu_resident, "tabu_scaling": render_tabu_scaling, "tabu_kernels": render_tabu_kernels,
             "gpu_resident_pfsp": render_gpu_resident_pfsp, "cas_gpu": render_cas_gpu, "ig_pfsp": render_ig_pfsp,
             "tsp_peer": render_tsp_peer, "multistart_scaling": render_multistart_scaling,
             "maxcut_gset": render_maxcut_gset, "small_two_opt": render_small_two_opt}


def stale_line(name, old_body):
    """The block's Stale line: why, and the command; without git history, the line it had."""
    try:
        reasons = stale_reasons(name)
    except CannotCompare:
        return next((line for line in old_body.splitlines() if line.startswith("**Stale**")), None)
    if not reasons:
        return None
    benchmark = name.split("-")[0]
    how = "performance_page.py remeasure" if benchmark in ONE_GPU_STEPS else \
        f"device_run.sh '{MULTI_GPU_STEPS.get(benchmark, '?')}' on a machine of several GPUs"
    shown = "; ".join(reasons[:3]) + (f"; and {len(reasons) - 3} more" if len(reasons) > 3 else "")
    return f"**Stale**: {shown}. Measure it again: `benchmarks/{how}`."


def newest(benchmark, folder):
    found = [p for p in Path(folder).glob(f"{benchmark}-*.json") if "partial" not in p.name]
    return max(found, key=lambda p: json.loads(p.read_text()).get("date", ""), default=None)


def render(page, source=None):
    """The page with every figure block written again (from `source`'s newest files, where given)."""
    def block(match):
        name = match.group("file")
        benchmark = name.split("-")[0]
        if source is not None and (new := newest(benchmark, source)) is not None and new.name != name:
            shutil.copy(new, RESULTS / new.name)
            (RESULTS / name).unlink(missing_ok=True)
            name = new.name
        body = RENDERERS[benchmark](json.loads((RESULTS / name).read_text()), name)
        stale = stale_line(name, match.group("body"))
        return f"<!-- figure: {name} -->\n" + "\n".join(([stale, ""] if stale else []) + body) + "\n<!-- end figure -->"
    return BLOCK.sub(block, page)


def remeasure(out, benchmarks=()):
    """Every one-GPU figure's command (or those of `benchmarks`), one after another on this machine
    (a step is cut at the deadline), then the page rendered from the result files they wrote
    (copied to $OUT too)."""
    start = time.monotonic()
    env = {**os.environ, "OUT": str(out)}
    subprocess.run(["bash", "benchmarks/device_run.sh"], cwd=ROOT, env=env, check=True)  # installs the wheels
    env["LSBENCH_INSTALLED"] = "1"
    log = open(Path(out) / "remeasure.log", "a")
    for benchmark, step in ONE_GPU_STEPS.items():
        if benchmarks and benchmark not in benchmarks:
            continue
        left = REMEASURE_S - (time.monotonic() - start)
        try:
            subprocess.run(["bash", "benchmarks/device_run.sh", step], cwd=ROOT, env=env, timeout=max(left, 1),
                           stdout=log, stderr=subprocess.STDOUT)
        except subprocess.TimeoutExpired:
            print(f"{benchmark}: cut at the deadline ({REMEASURE_S} s)", flush=True)
        print(f"{benchmark}: done at {time.monotonic() - start:.0f} s", flush=True)
    log.close()
    PAGE.write_text(render(PAGE.read_text(), out))
    shutil.copy(PAGE, Path(out) / "performance.md")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("action", choices=["render", "check", "remeasure"])
    ap.add_argument("benchmarks", nargs="*", help="remeasure: these figures only (default: every one-GPU figure)")
    ap.add_argument("--from", dest="source", help="render: take each benchmark's newest result file from here")
    args = ap.parse_args()
    unknown = sorted(set(args.benchmarks) - set(ONE_GPU_STEPS))
    if unknown:
        ap.error(f"not a one-GPU figure: {', '.join(unknown)} (they are: {', '.join(ONE_GPU_STEPS)})")
    if args.action == "remeasure":
        remeasure(Path(os.environ.get("OUT") or RESULTS), args.benchmarks)
        return 0
    page = PAGE.read_text()
    new = render(page, args.source)
    if args.action == "check":
        if new != page:
            print("performance_page: docs/performance.md differs from its result files and their staleness: "
                  "python benchmarks/performance_page.py render", file=sys.stderr)
            return 1
        return 0
    tmp = PAGE.with_suffix(".md.tmp")
    tmp.write_text(new)
    tmp.replace(PAGE)
    return 0


if __name__ == "__main__":
    sys.exit(main())
