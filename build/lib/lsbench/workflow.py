"""Helpers for the Snakemake workflows: plan runs from a config, aggregate records, write reports."""
import base64
import html
import io
import json
import shlex
from pathlib import Path

from .errors import LsbenchError

GROUP_KEYS = {"name", "problem", "instances", "algorithm", "neighbourhood", "backends", "seeds", "iterations",
              "evaluations", "seconds", "target", "params", "published", "quick", "replicas"}
RUNNABLE_BACKENDS = {"cpu", "cpu-parallel", "gpu", "gpu-resident", "cow", "grid"}
GPU_BACKENDS = {"gpu", "gpu-resident"}
NOT_AVAILABLE = "backend not available in this version of lsbench"


DEFAULT_COW_RANKS = 4


def backend_entry(b):
    """A backend of a group: 'cpu' or {name: gpu-device, backend: gpu, params: {reduce: device}};
    a cow entry may give `ranks` (MPI tasks, default 4)."""
    if isinstance(b, str):
        b = {"name": b, "backend": b}
    if not isinstance(b, dict) or "name" not in b or "backend" not in b:
        raise LsbenchError(f"workflow config: backend entry {b!r} needs 'name' and 'backend'")
    ranks = b.get("ranks", DEFAULT_COW_RANKS)
    if not isinstance(ranks, int) or ranks < 1:
        raise LsbenchError(f"workflow config: backend {b['name']}: ranks must be a positive integer, got {ranks!r}")
    return {"name": b["name"], "backend": b["backend"], "params": dict(b.get("params") or {}), "ranks": ranks}


def expand_group(g, scale):
    """The group at the requested scale ('paper' as configured, 'quick' with its overrides), with
    `replicas: R` turning each 'NAME-1' generated instance into NAME-1 .. NAME-R."""
    g = {**g, **(g.get("quick") or {})} if scale == "quick" else dict(g)
    reps = int(g.get("replicas", 1))
    if reps > 1:
        g["instances"] = [f"{i[:-2]}-{r}" if str(i).endswith("-1") else i
                          for i in g["instances"] for r in range(1, reps + 1)]
    return g


def gpu_status():
    """Whether this host has a usable CUDA GPU, and which."""
    try:
        from numba import cuda
        if cuda.is_available():
            dev = cuda.get_current_device()
            name = dev.name.decode() if isinstance(dev.name, bytes) else str(dev.name)
            return {"available": True, "name": name}
        return {"available": False, "name": "no GPU on this host"}
    except Exception as e:  # driver or toolkit missing
        return {"available": False, "name": f"no GPU on this host ({str(e).splitlines()[0][:80]})"}


def plan_runs(config, gpu_available):
    """One dict per run record the experiment needs; GPU runs only where a GPU exists."""
    exp = config.get("experiment")
    if not exp:
        raise LsbenchError("workflow config: missing field 'experiment'")
    runs = []
    scale = config.get("scale", "paper")
    if scale not in ("paper", "quick"):
        raise LsbenchError(f"workflow config: scale must be paper or quick, got {scale!r}")
    for g in config.get("groups", []):
        g = expand_group(g, scale)
        unknown = set(g) - GROUP_KEYS
        if unknown:
            raise LsbenchError(f"workflow config group {g.get('name')}: unknown field(s) {', '.join(sorted(unknown))}")
        for field in ("name", "problem", "instances", "algorithm", "backends"):
            if field not in g:
                raise LsbenchError(f"workflow config group {g.get('name', '?')}: missing field '{field}'")
        seeds = g.get("seeds", 1)
        seed_list = list(range(1, seeds + 1)) if isinstance(seeds, int) else list(seeds)
        for inst in g["instances"]:
            for b in map(backend_entry, g["backends"]):
                if b["backend"] not in RUNNABLE_BACKENDS or (b["backend"] in GPU_BACKENDS and not gpu_available):
                    continue
                for s in seed_list:
                    params = {**(config.get("grid_params") or {}), **b["params"]} if b["backend"] == "grid" \
                        else b["params"]  # grid_params: where grid runs find Dask (the SLURM profile)
                    path = f"results/{exp}/runs/{g['name']}/{inst}/{b['name']}-s{s}.json"
                    spec = group_spec(g, inst, b["backend"], s, {**(g.get("params") or {}), **params}, path)
                    runs.append({**g, "instance": inst, "backend": b["backend"], "label": b["name"], "spec": spec,
                                 "ranks": b["ranks"], "seed": s, "path": path})
    return runs


def group_spec(group, instance, backend, seed, params, out):
    """The RunSpec of one run of a config group: the CLI's builder, so a bad value gets the CLI's
    error line (with where it was written)."""
    from .spec import build_spec
    try:
        return build_spec(str(instance), group["problem"], group["algorithm"], backend, group.get("neighbourhood"),
                          seed, group.get("iterations"), group.get("evaluations"), group.get("seconds"),
                          group.get("target"), params, out=out)
    except LsbenchError as e:
        raise LsbenchError(f"{e} (workflow config group {group['name']}, backend {backend})") from None


def run_command(run, python, out):
    """The `lsbench run` command line of a planned run (Snakemake's job)."""
    args = [python, "-m", "lsbench", "run", *run["spec"].command_line(), "--out", out]
    return " ".join(shlex.quote(str(c)) for c in args)


def aggregate_records(paths, out):
    """Flatten run records into one Parquet table (one row per run), written atomically."""
    import pandas as pd
    rows = []
    for p in paths:
        rec = json.loads(Path(p).read_text())
        group = Path(p).parent.parent.name
        label = Path(p).stem.rsplit("-s", 1)[0]
        rows.append({
            "group": group, "problem": rec["problem"], "instance": rec["instance"],
            "algorithm": rec["algorithm"], "neighbourhood": rec.get("neighbourhood"),
            "neighbourhood_size": rec.get("neighbourhood_size"), "backend": label, "backend_kind": rec["backend"], "seed": rec["seed"],
            "iterations": rec["iterations"], "evaluations": rec["evaluations"], "wall_s": rec["wall_s"],
            "iterations_per_s": rec.get("iterations_per_s"), "best_objective": float(rec["best_objective"]),
            "bks": None if rec["bks"] is None else float(rec["bks"]),
            "gap_percent": rec["gap_percent"], "host": rec["host"]["hostname"],
            "device": json.dumps(rec.get("backend_info", {})), "record": str(p),
        })
    df = pd.DataFrame(rows)
    tmp = Path(out).with_suffix(".tmp.parquet")
    df.to_parquet(tmp, index=False)
    tmp.replace(out)
    return df


def summarise(df):
    """Per (group, instance, backend): medians, speed-up vs `cpu` on the same instance, quality."""
    import pandas as pd
    df = df.assign(bks=pd.to_numeric(df["bks"], errors="coerce"),
                   gap_percent=pd.to_numeric(df["gap_percent"], errors="coerce"))
    g = df.groupby(["group", "instance", "backend"], sort=False)
    out = g.agg(runs=("seed", "count"), wall_s=("wall_s", "median"), it_per_s=("iterations_per_s", "median"),
                best=("best_objective", "min"), mean=("best_objective", "mean"),
                gap=("gap_percent", "mean"), bks=("bks", "first")).reset_index()
    at_bks = df.assign(hit=(df["bks"].notna() & (df["best_objective"] <= df["bks"])))
    out["at_bks_percent"] = at_bks.groupby(["group", "instance", "backend"], sort=False)["hit"].mean().values * 100
    cpu = out[out["backend"] == "cpu"].set_index(["group", "instance"])["wall_s"]
    out["speedup_vs_cpu"] = [cpu.get((r.group, r.instance), float("nan")) / r.wall_s if r.wall_s else float("nan")
                             for r in out.itertuples()]
    return pd.DataFrame(out)


def _plot(summary, group):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    s = summary[summary["group"] == group]
    fig, ax = plt.subplots(figsize=(6, 3))
    for backend, sub in s.groupby("backend", sort=False):
        ax.bar([f"{i}\n{backend}" for i in sub["instance"]], sub["it_per_s"], label=backend)
    ax.set_ylabel("iterations / s (median)")
    ax.set_yscale("log")
    ax.set_title(group)
    ax.tick_params(axis="x", labelsize=7)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode()


def write_report(table, out, config, gpu):
    """One HTML page: host and versions, per group a table (ours beside the published figures,
    when the config names a published CSV) and a plot."""
    import pandas as pd

    from .records import host_info, versions
    df = pd.read_parquet(table)
    summary = summarise(df)
    parts = [f"<html><head><meta charset='utf-8'><title>{html.escape(config.get('title', ''))}</title>"
             "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
             "td,th{border:1px solid #999;padding:3px 8px;text-align:right}th{background:#eee}"
             ".nogpu{color:#a00}</style></head><body>",
             f"<h1>{html.escape(config.get('title', config['experiment']))}</h1>",
             f"<p>Runs made on: {html.escape(', '.join(sorted(set(df['host']))))}; report written on "
             f"{html.escape(json.dumps(host_info()))}<br>GPU: "
             f"<b>{html.escape(gpu['name'])}</b><br>Versions: {html.escape(json.dumps(versions()))}</p>"]
    for g in config.get("groups", []):
        g = expand_group(g, config.get("scale", "paper"))
        s = summary[summary["group"] == g["name"]]
        parts.append(f"<h2>{html.escape(g['name'])}: {g['algorithm']} on {g['problem']}</h2>")
        published = _published_by_instance(g)
        parts.append("<table><tr><th>instance</th><th>backend</th><th>runs</th><th>median time (s)</th>"
                     "<th>median it/s</th><th>speed-up vs cpu</th><th>best</th><th>mean</th><th>mean gap %</th>"
                     "<th>% runs at best known</th>" + ("<th>published (paper's hardware)</th>" if published else "")
                     + "</tr>")
        for inst in g["instances"]:
            pub_cell = (f"<td rowspan={len(g['backends'])} style='text-align:left'>"
                        f"{published.get(str(inst), '')}</td>") if published else ""
            for b in map(backend_entry, g["backends"]):
                backend = b["name"]
                row = s[(s["instance"] == str(inst)) & (s["backend"] == backend)]
                if row.empty:
                    why = (gpu["name"] if b["backend"] in GPU_BACKENDS and not gpu["available"] else
                           NOT_AVAILABLE if b["backend"] not in RUNNABLE_BACKENDS else "not run")
                    parts.append(f"<tr><td>{inst}</td><td>{backend}</td><td class='nogpu' colspan=8>"
                                 f"{html.escape(why)}</td>{pub_cell}</tr>")
                    pub_cell = ""
                    continue
                r = row.iloc[0]
                gap = "" if pd.isna(r.gap) else f"{r.gap:.3f}"
                hit = "" if pd.isna(r.bks) else f"{r.at_bks_percent:.0f}"
                parts.append(f"<tr><td>{inst}</td><td>{backend}</td><td>{r.runs}</td><td>{r.wall_s:.3f}</td>"
                             f"<td>{r.it_per_s:.1f}</td><td>{r.speedup_vs_cpu:.2f}&times;</td><td>{r.best:g}</td>"
                             f"<td>{r['mean']:.6g}</td><td>{gap}</td><td>{hit}</td>{pub_cell}</tr>")
                pub_cell = ""
        parts.append("</table>")
        parts.append(_published_table(g))
        if not s.empty:
            parts.append(f"<p><img alt='iterations per second, {html.escape(g['name'])}' "
                         f"src='data:image/png;base64,{_plot(summary, g['name'])}'></p>")
    parts.append("</body></html>")
    tmp = Path(out).with_suffix(".tmp")
    tmp.write_text("\n".join(parts))
    tmp.replace(out)


def _published_by_instance(group):
    """instance -> the paper's figures for it, one line per hardware/variant, for the table."""
    spec = group.get("published")
    if not spec:
        return {}
    import pandas as pd

    from .instances import PROJECT_ROOT
    pub = pd.read_csv(PROJECT_ROOT / spec["file"], dtype={"table": str})
    if "table" in spec:
        pub = pub[pub["table"] == str(spec["table"])]
    if "instance" not in pub.columns:
        return {}
    out = {}
    for inst, rows in pub.groupby("instance", sort=False):
        lines = []
        for _, r in rows.iterrows():
            fields = [f"{k}={r[k]}" for k in rows.columns if k not in ("table", "instance") and pd.notna(r[k])]
            lines.append(html.escape(", ".join(fields)))
        out[str(inst)] = "<br>".join(lines)
    return out


def _published_table(group):
    """The paper's figures for this group, from workflows/published/*.csv, shown beside ours."""
    spec = group.get("published")
    if not spec:
        return ""
    import pandas as pd
    from .instances import PROJECT_ROOT
    pub = pd.read_csv(PROJECT_ROOT / spec["file"], dtype={"table": str})
    if "table" in spec:
        pub = pub[pub["table"] == str(spec["table"])]
    return (f"<h3>Published: {html.escape(spec.get('caption', spec['file']))}</h3>"
            + pub.to_html(index=False, na_rep=""))
