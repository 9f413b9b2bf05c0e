"""Snakemake workflows: every config plans the expected jobs; an interrupted run resumes with
only the missing runs and leaves no corrupt record; the report carries our table and a plot."""
import dataclasses
import html
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import time
import types
from pathlib import Path

import pytest
import yaml

from conftest import DATA, ROOT
from lsbench import instances
from lsbench.errors import LsbenchError
from lsbench.registry import GPU_BACKENDS
from lsbench.runner import run
from lsbench.spec import Stop
from lsbench.workflow import plan_runs

SNAKEMAKE = [sys.executable, "-m", "snakemake"]
CONFIGS = sorted((ROOT / "workflows" / "config").glob("*.yaml"))


def snakemake(workdir, *args, **kw):
    env = {**os.environ, "LSBENCH_DATA": str(DATA), "NUMBA_ENABLE_CUDASIM": "0"}
    return subprocess.run([*SNAKEMAKE, "-s", str(ROOT / "Snakefile"), "-d", str(workdir), *args],
                          capture_output=True, text=True, env=env, timeout=900, **kw)


def planned(out, rule="total"):
    """Jobs of `rule` in a dry run's job table (fetch_instance jobs come on top where the data
    directory lacks an instance)."""
    m = re.search(rf"^{rule}\s+(\d+)", out, re.M)
    return int(m.group(1)) if m else 0


@pytest.mark.parametrize("config", CONFIGS, ids=[c.stem for c in CONFIGS])
@pytest.mark.parametrize("scale", ["paper", "quick"])
def test_every_config_plans_runs_whose_specs_are_checked(config, scale):
    cfg = yaml.safe_load(config.read_text())
    cfg["scale"] = scale
    runs = plan_runs(cfg, gpu_available=False)  # CI has no GPU: GPU rows are checked, not run
    assert runs and all(run["spec"].instance == str(run["instance"]) for run in runs)


def gpu_row_kinds():
    """One quick-scale run of each kind the configs' GPU rows start: the first of each problem,
    algorithm, backend, neighbourhood, set of search and backend parameters (with the values of
    those that name a choice) and instance folder (Liefooghe's flow-shop files are read otherwise
    than Taillard's). Multistart rows are tests/test_hpc.py's; ig and cas, test_gpu.py's."""
    kinds = {}
    for config in CONFIGS:
        cfg = {**yaml.safe_load(config.read_text()), "scale": "quick"}
        for planned in plan_runs(cfg, gpu_available=True):
            spec = planned["spec"]
            if planned["backend"] not in GPU_BACKENDS or planned["multistart"] or spec.algorithm in ("ig", "cas"):
                continue  # (ig and cas run whole generations whatever the stop)
            entry = instances.manifest().get(spec.instance)
            choices = {k: v if isinstance(v, str) else "" for k, v in {**spec.algorithm_params,
                                                                         **spec.backend_params}.items()}
            key = (spec.problem, spec.algorithm, spec.backend, spec.neighbourhood, tuple(sorted(choices.items())),
                   instances.folder_of(entry) if entry else "generated")
            kinds.setdefault(key, (f"{config.stem}:{planned['name']}:{planned['label']}", spec))
    return list(kinds.values())


def simulator_sized(spec):
    """The run at a size the simulator takes in seconds: a PPP instance of lsbench's rule at 73-73
    (401-417's 80,200 moves an iteration take it minutes), at most 1,000 Weierstrass neighbours; an
    instance read from a file keeps its size, its reader being what is tested."""
    if spec.problem == "ppp" and spec.instance not in instances.manifest():
        spec = dataclasses.replace(spec, instance="73-73")
    if spec.problem_params.get("neighbours", 0) > 1000:
        spec = dataclasses.replace(spec, problem_params={**spec.problem_params, "neighbours": 1000})
    return spec


@pytest.mark.long
@pytest.mark.parametrize("row, spec", gpu_row_kinds(), ids=[row for row, _ in gpu_row_kinds()])
def test_every_kind_of_gpu_row_of_the_configs_runs_in_the_simulator_on_its_instance(row, spec):
    """A paper-scale report's GPU rows start on the device machine only: each kind runs here first,
    on its config's own instance and parameters, for two iterations (two searches at most)."""
    short = dataclasses.replace(simulator_sized(spec), stop=Stop(iterations=2), searches=min(spec.searches, 2),
                                warmup=0, out=None, data_dir=str(DATA))
    rec = run(short)
    records = rec if isinstance(rec, list) else [rec]  # (K searches: one record of them all)
    assert records and all(r["iterations"] >= 2 for r in records), row


# one config of each kind of row: CPU and GPU backends, Pareto search, cow and grid, multistart islands
DRY_RUN_CONFIGS = ["default", "luong_evocop_table2", "luong_cow_grid", "islands"]


@pytest.mark.parametrize("name", DRY_RUN_CONFIGS)
@pytest.mark.parametrize("scale", ["paper", "quick"])
def test_snakemake_dry_run_plans_one_job_per_run(tmp_path, name, scale):
    config = ROOT / "workflows" / "config" / f"{name}.yaml"
    cfg = yaml.safe_load(config.read_text())
    cfg["scale"] = scale
    runs = plan_runs(cfg, gpu_available=False)
    r = snakemake(tmp_path, "-n", "--configfile", str(config), "--config", f"scale={scale}")
    assert r.returncode == 0, r.stderr[-2000:]
    assert planned(r.stdout, "run_search") == len(runs)
    assert planned(r.stdout, "aggregate") == planned(r.stdout, "report") == planned(r.stdout, "all") == 1


def _tiny_config(tmp_path, seeds):
    cfg = {"experiment": "tiny", "title": "tiny",
           "groups": [{"name": "qap", "problem": "qap", "instances": ["rnd-qap-25-1"], "algorithm": "rots",
                       "backends": ["cpu", "gpu"], "seeds": seeds, "iterations": 40000}]}
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


@pytest.mark.system  # end to end: a Snakemake workflow
@pytest.mark.long
def test_interrupted_run_resumes_with_only_the_missing_runs(tmp_path):
    seeds = 6
    config = _tiny_config(tmp_path, seeds=seeds)
    env = {**os.environ, "LSBENCH_DATA": str(DATA), "NUMBA_ENABLE_CUDASIM": "0"}
    log = tmp_path / "snakemake.log"
    with open(log, "w") as sink:
        # a user's shell delivers Ctrl-C; a pytest-xdist worker ignores SIGINT, and an ignored signal
        # stays ignored across exec (CI's Snakemake ran every job after the "Ctrl-C")
        proc = subprocess.Popen([*SNAKEMAKE, "-s", str(ROOT / "Snakefile"), "-d", str(tmp_path), "-c1",
                                 "--configfile", str(config)], env=env, stdout=sink, stderr=subprocess.STDOUT,
                                start_new_session=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        runs_dir = tmp_path / "results" / "tiny" / "runs"
        deadline = time.time() + 300
        while time.time() < deadline and len(list(runs_dir.rglob("*.json"))) < 2:
            time.sleep(0.2)
        seen, sent = len(list(runs_dir.rglob("*.json"))), time.strftime("%H:%M:%S")
        os.killpg(proc.pid, signal.SIGINT)  # as a user's Ctrl-C
        proc.wait(timeout=120)
    done = list(runs_dir.rglob("*.json"))
    assert 2 <= len(done) < seeds, (f"the interrupt came too late or too early to test resuming: {seen} records "
                                    f"when it was sent at {sent}, {len(done)} after; Snakemake's log ends\n"
                                    + log.read_text()[-3000:])
    for f in done:  # whatever survived is a complete, valid record
        rec = json.loads(f.read_text())
        assert rec["best_objective"] and rec["iterations"] == 40000
    assert not list(runs_dir.rglob("*.tmp"))
    # Snakemake reruns what it had not marked finished (a job caught between lsbench's rename and
    # Snakemake's bookkeeping counts as incomplete) and nothing else
    dry = snakemake(tmp_path, "-n", "--rerun-incomplete", "--configfile", str(config))
    assert (seeds - len(done)) + 3 <= planned(dry.stdout) < seeds + 3
    full = snakemake(tmp_path, "-c2", "--rerun-incomplete", "--configfile", str(config))
    assert full.returncode == 0, full.stderr[-2000:]
    html = (tmp_path / "results" / "tiny" / "report.html").read_text()
    assert "rnd-qap-25-1" in html
    images = re.findall(r'<img src="([^"]+)"', html)
    assert images and all((tmp_path / "results" / "tiny" / src).stat().st_size > 1000 for src in images)
    assert "no GPU on this host" in html  # the GPU row says so instead of failing


@pytest.mark.system  # end to end: a Snakemake workflow
@pytest.mark.long
def test_the_report_is_rebuilt_from_the_parquet_table_alone_with_the_papers_figures_beside_ours(tmp_path):
    """janiak's quick scale: records -> Parquet; the records deleted, the report is rendered from the
    table alone: ours beside the paper's, readable numbers, plots that exist, a note on the ratio a
    tiny neighbourhood gives on all cores, no GPU rows on a host without one."""
    import shutil

    import pandas as pd
    r = snakemake(tmp_path, "-c2", "--configfile", str(ROOT / "workflows" / "config" / "janiak.yaml"),
                  "--config", "scale=quick")
    assert r.returncode == 0, r.stderr[-2000:]
    results = tmp_path / "results" / "janiak"
    table = results / "runs.parquet"
    df = pd.read_parquet(table)
    assert {"trajectory", "cpu_model", "lsbench_commit"} <= set(df.columns) and len(df) == 8
    shutil.rmtree(results / "runs")
    report = _report_module()
    cfg = yaml.safe_load((ROOT / "workflows" / "config" / "janiak.yaml").read_text())
    cfg["scale"] = "quick"
    out = report.write_report(table, tmp_path / "again.html", cfg, {"available": False, "name": "no GPU on this host"})
    html = out.read_text()
    assert "Ours beside the paper" in html and "G32 GPU" in html and "9.8" in html  # Janiak's CPU time, n = 50
    assert "no GPU on this host" in html and "Note: pfsp-table2" in html
    assert "Gap to the best known value (%)" not in html  # random instances have no best known value
    assert not re.search(r"\d\.\d+e[+-]\d", html)  # no 1.79751e+06 style numbers
    images = re.findall(r'<img src="([^"]+)"', html)
    assert len(images) >= 6 and all((tmp_path / src).stat().st_size > 1000 for src in images)


@pytest.mark.system  # end to end: a Snakemake workflow
@pytest.mark.long
def test_export_for_iohanalyzer_loads_in_iohinspector_and_csv_has_every_improvement(tmp_path):
    """`lsbench export` of a small experiment: IOHprofiler files that iohinspector's DataManager reads
    (one function per instance, one algorithm per backend, one run per seed, the runs' best values
    ours), and a CSV with one row per improvement."""
    import csv as csv_module

    import pandas as pd
    from iohinspector import DataManager
    r = snakemake(tmp_path, "-c2", "--configfile", str(ROOT / "workflows" / "config" / "janiak.yaml"),
                  "--config", "scale=quick")
    assert r.returncode == 0, r.stderr[-2000:]
    results = tmp_path / "results" / "janiak"
    df = pd.read_parquet(results / "runs.parquet")
    out = tmp_path / "ioh"
    e = subprocess.run([sys.executable, "-m", "lsbench", "export", str(results), "--format", "iohanalyzer", "--out",
                        str(out)], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert e.returncode == 0, e.stderr
    manager = DataManager()
    manager.add_folder(str(out))
    overview = manager.overview.to_pandas()
    assert len(overview) == len(df)
    assert set(overview["function_name"]) == set(df["instance"]) and set(overview["algorithm_name"]) == set(df["backend"])
    assert sorted(overview["best_y"]) == sorted(df["best_objective"])
    runs = manager.load(monotonic=True)  # the maximisation flag comes from our files (minimisation)
    assert runs.height >= len(df) and runs["raw_y"].min() == df["best_objective"].min()
    c = subprocess.run([sys.executable, "-m", "lsbench", "export", str(results / "runs.parquet"), "--format", "csv",
                        "--out", str(tmp_path / "runs.csv")], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert c.returncode == 0, c.stderr
    rows = list(csv_module.DictReader(open(tmp_path / "runs.csv")))
    assert len(rows) == sum(len(json.loads(t)) for t in df["trajectory"])


@pytest.fixture(scope="module")
def chromium():
    """Debian's chromium (installed here where missing: the test needs a real browser)."""
    path = shutil.which("chromium")
    if path is None:
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        for cmd in (["apt-get", "install", "-y", "-q", "chromium"], ["apt-get", "update", "-q"],
                    ["apt-get", "install", "-y", "-q", "chromium"]):
            if subprocess.run(cmd, capture_output=True, env=env, timeout=900).returncode == 0 and cmd[1] == "install":
                break
        path = shutil.which("chromium")
    assert path, "chromium could not be installed (apt-get install chromium)"
    return path


@pytest.mark.system
@pytest.mark.xdist_group("apt")  # beside the SLURM tests: either may apt-get install, one at a time
def test_the_report_renders_in_headless_chromium_with_every_image_and_no_console_error(tmp_path, chromium):
    from playwright.sync_api import sync_playwright
    r = snakemake(tmp_path, "-c2", "--configfile", str(ROOT / "workflows" / "config" / "janiak.yaml"),
                  "--config", "scale=quick")
    assert r.returncode == 0, r.stderr[-2000:]
    page_file = tmp_path / "results" / "janiak" / "report.html"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=[
            "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
            "--no-first-run", "--disable-sync"])
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        errors = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        requests = []
        page.on("request", lambda req: requests.append(req.url))
        page.goto(page_file.as_uri())
        broken = page.evaluate("Array.from(document.images).filter(i => !(i.complete && i.naturalWidth > 0))"
                               ".map(i => i.src)")
        images = page.evaluate("document.images.length")
        first_screen = page.evaluate("document.elementFromPoint(640, 400) && document.body.innerText.slice(0, 2000)")
        page.screenshot(path=str(tmp_path / "first-screen.png"))  # the test's artefact
        browser.close()
    assert not errors and not broken and images >= 6, (errors, broken, images)
    assert all(u.startswith("file://") for u in requests)  # opens from disk, no network
    assert "Ours beside the papers" in first_screen and "rnd-atsp-10-1" in first_screen
    assert (tmp_path / "first-screen.png").stat().st_size > 10000


def _report_module():
    """workflows/scripts/report.py, loaded by path."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("report", ROOT / "workflows" / "scripts" / "report.py")
    report = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(report)
    return report


def _run_planned(runs, tmp_path):
    """Run each planned run in this process, its record under tmp_path; aggregate them into
    tmp_path/runs.parquet; return the records' paths."""
    from lsbench.workflow import aggregate_records
    paths = []
    for r in runs:
        path = tmp_path / r["path"]
        path.parent.mkdir(parents=True, exist_ok=True)
        run(dataclasses.replace(r["spec"], out=str(path)))
        paths.append(path)
    aggregate_records(paths, tmp_path / "runs.parquet")
    return paths


def test_time_to_target_table_from_records_of_runs_of_several_searches_on_their_own_seeds(tmp_path):
    """A backend with `searches: K` and a group with `target: bks`: its runs take seed blocks K apart and the
    manifest's value as the stop; the report's time-to-target table counts the runs that reached it
    and takes the median over every run of its first time at it, read from the records'
    trajectories, a run that did not reach it counted as never."""

    import pandas as pd
    from lsbench import instances
    cfg = yaml.safe_load((ROOT / "workflows" / "config" / "time_to_bks.yaml").read_text())
    planned = plan_runs(cfg, gpu_available=True)
    first = [r for r in planned if r["name"] == "qap-class-i" and r["instance"] == "tai40a"
             and r["backend"] == "gpu-resident"]
    assert [r["seed"] for r in first] == [1, 133, 265, 397, 529]
    assert [r["seed"] for r in planned if r["instance"] == "tai40a" and r["backend"] == "cpu"] == [1, 2, 3, 4, 5]
    assert first[0]["spec"].searches == 132 and first[0]["spec"].stop.target == instances.manifest()["tai40a"].bks_value()
    group = {"name": "tiny", "problem": "qap", "instances": ["tai12a"], "algorithm": "rots", "backends": ["cpu"],
             "seeds": 3, "iterations": 30, "target": "bks"}
    paths = _run_planned(plan_runs({"experiment": "tiny", "groups": [group]}, gpu_available=False), tmp_path)
    df = pd.read_parquet(tmp_path / "runs.parquet")
    report = _report_module()
    bks = instances.manifest()["tai12a"].bks_value()
    times, missed = [], []
    for p in paths:
        rec = json.loads(p.read_text())
        if rec["best_objective"] <= bks:
            times.append(next(t for _i, t, o in rec["trajectory"] if o <= bks))
        else:
            missed.append(rec["wall_s"])
    (row,) = report.time_to_target_rows(group, df)
    assert row["reached"] == f"{len(times)}/3" and 0 < len(times) < 3  # 30 iterations: some seeds reach it
    # of 3 runs the second fastest is the median: the slower of two that reached it, else none did
    assert row["median_s"] == (report.fmt_num(max(times)) if len(times) == 2 else f"> {report.fmt_num(max(missed))}")


def test_the_median_time_to_target_counts_a_run_that_missed_it_as_never():
    """Half the runs or more that missed the target make the median a bound: '> W s', W the longest
    of the runs that missed it; fewer, and it is the time of the run half-way."""
    report = _report_module()
    assert report.median_time_to_target([2.0, None, 5.0], [2.0, 30.0, 5.0]) == "5"
    assert report.median_time_to_target([None, 3.0, None], [30.1, 3.0, 30.4]) == "> 30.4"
    assert report.median_time_to_target([1.0, 2.0, None, 4.0], [1.0, 2.0, 30.0, 4.0]) == "3"
    assert report.median_time_to_target([1.0, None, None, 4.0], [1.0, 30.0, 31.0, 4.0]) == "> 31"


def test_the_time_to_target_ecdf_starts_every_backend_at_zero_and_draws_one_that_never_reached_it():
    """Each backend's line rises by 1/runs at each run's first time at the target, from 0 at the
    first hit of any backend to the longest run's end; a backend with no hit stays at 0."""
    import pandas as pd
    report = _report_module()

    def run(backend, points, wall):
        return {"backend": backend, "trajectory": json.dumps(points), "wall_s": wall}
    runs = pd.DataFrame([run("one", [[0, 0.1, 50], [9, 2.0, 10]], 2.0), run("one", [[0, 0.1, 50]], 30.0),
                         run("two", [[0, 0.1, 50], [5, 8.0, 9]], 8.0), run("cpu", [[0, 0.1, 40]], 30.5)])
    lines = report.ecdf_lines(runs, 10)
    assert lines["one"] == ([2.0, 2.0, 30.5], [0.0, 0.5, 0.5])
    assert lines["two"] == ([2.0, 8.0, 30.5], [0.0, 1.0, 1.0])
    assert lines["cpu"] == ([2.0, 30.5], [0.0, 0.0])


def test_a_row_of_several_searches_a_run_gives_their_rate_together_in_a_note():
    """The table's rate of a run of K searches is its best search's (the record's); a note gives all
    of them together, the median over the row's runs; a row of one search a run has no such note."""
    import pandas as pd
    report = _report_module()
    rows = [{"group": "g", "instance": "tai50a", "backend": b, "seed": k, "backend_kind": kind, "neighbourhood_size": 1225,
             "wall_s": 30.0, "iterations_per_s": rate, "aggregate_iterations_per_s": together, "best_objective": 10.0,
             "gap_percent": 0.0, "bks": 10.0, "serial_note": None, "stopped_by_time": True}
            for k, (b, kind, rate, together) in enumerate([("cpu", "cpu", 50.0, None), ("gpus-1", "gpu-resident", 600.0, 8e4),
                                                           ("gpus-1", "gpu-resident", 610.0, 9e4)])]
    notes = report.notes(report.summarise(pd.DataFrame(rows)), "rots")
    assert notes == ["g, tai50a: gpus-1 runs several searches at once; its rate is its best search's, all of them "
                     "together 85,000 it/s (median over runs)."]


def test_a_run_cut_by_its_time_limit_is_known_and_a_multistart_counts_as_its_own_seed(tmp_path):
    """A run that its seconds stopped (neither target nor iterations reached) is marked so in the
    table; one that ran out of iterations first is not. A multistart's record is its best search's,
    whose seed is not the run's: the table takes the run's own (its first search's)."""
    import pandas as pd
    from lsbench.workflow import aggregate_records
    group = {"name": "tiny", "problem": "qap", "instances": ["rnd-qap-12-1"], "algorithm": "tabu", "seeds": 1,
             "backends": ["cpu"]}
    cut = _run_planned(plan_runs({"experiment": "cut", "groups": [{**group, "seconds": 0.05, "iterations": 10**9}]},
                                 gpu_available=False), tmp_path / "cut")
    done = _run_planned(plan_runs({"experiment": "done", "groups": [{**group, "seconds": 60, "iterations": 5}]},
                                  gpu_available=False), tmp_path / "done")
    record = json.loads(done[0].read_text())
    multistart = tmp_path / "tiny" / "rnd-qap-12-1" / "cpu-s1.json"
    multistart.parent.mkdir(parents=True)
    multistart.write_text(json.dumps({**record, "seed": 9, "multistart": {"seeds": [1, 2, 9]}}))
    df = aggregate_records([cut[0], done[0], multistart], tmp_path / "runs.parquet")
    assert df["stopped_by_time"].tolist() == [True, False, False]
    assert df["seed"].tolist() == [1, 1, 1]
    assert pd.read_parquet(tmp_path / "runs.parquet")["stopped_by_time"].tolist() == [True, False, False]


def test_a_multistarts_progress_is_its_best_over_all_searches_from_its_first_timed_start(tmp_path):
    """A multistart's record is its best search's, trajectory too; the table also holds the run's
    best over all its searches (each search's trajectory shifted by its own timed start), and the
    report's time to the target and convergence read that: here a search that started 1 s later
    reached the target first (at 1.5 s), before the best search (at 2 s)."""
    import pandas as pd
    from lsbench.hpc.multistart import best_over_searches, first_hit, timed_starts
    from lsbench.workflow import aggregate_records, searches_dir
    report = _report_module()
    best = {"seed": 1, "timed_interval": [100.0, 103.0], "trajectory": [[0, 0.0, 50], [9, 2.0, 10], [12, 3.0, 8]]}
    late = {"seed": 2, "timed_interval": [101.0, 103.0], "trajectory": [[0, 0.0, 40], [5, 0.5, 10]]}
    assert best_over_searches([best, late]) == [[0.0, 50], [1.0, 40], [1.5, 10], [3.0, 8]]
    assert best_over_searches([{"trajectory": [[0, 0.0, 5]]}]) is None  # (no timed searches: no common clock)
    # the summary's first time to the target, on the same clock without the whole curve
    assert min(start + first_hit(r, 10) for r, start in timed_starts([best, late])) == 1.5
    (one,) = _run_planned(plan_runs({"experiment": "one", "groups": [{
        "name": "tiny", "problem": "qap", "instances": ["rnd-qap-12-1"], "algorithm": "tabu", "seeds": 1,
        "iterations": 5, "backends": ["cpu"]}]}, gpu_available=False), tmp_path / "one")
    record = json.loads(one.read_text())
    path = tmp_path / "tiny" / "rnd-qap-12-1" / "m-s1.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({**record, "trajectory": best["trajectory"], "best_objective": 8,
                                "multistart": {"seeds": [1, 2]}}))
    Path(searches_dir(path)).mkdir()
    for search in (best, late):
        (Path(searches_dir(path)) / f"seed-{search['seed']}.json").write_text(json.dumps(search))
    df = aggregate_records([path, one], tmp_path / "t.parquet")
    assert json.loads(df["run_trajectory"][0]) == [[0.0, 50], [1.0, 40], [1.5, 10], [3.0, 8]]
    assert not isinstance(df["run_trajectory"][1], str)  # one search's run: its own trajectory (none here)
    df = pd.read_parquet(tmp_path / "t.parquet")
    progress = report.best_so_far(df)
    assert report.first_time_at(progress[0], 10) == 1.5
    assert progress[1] == [(p[1], p[2]) for p in record["trajectory"]]


def test_a_speed_up_is_a_ratio_of_work_done_a_bound_where_one_core_hit_its_limit_and_none_where_the_row_did():
    """Times of runs their time limit cut say how long they were allowed, not how long their work
    took: a row whose median run was cut has no speed-up (and no note explaining why it is below
    one core); one faster than a one-core row cut by the limit has a lower bound, shown '>= x'. A
    sample's run cut by its seconds has a time extrapolated from its rate: an estimate, not a bound."""
    import pandas as pd
    report = _report_module()

    def runs(group, backend, walls, cut, sampled=0):
        return [{"group": group, "instance": "tai50a", "backend": backend, "seed": k, "backend_kind": backend.split("-")[0]
                 .replace("gpu", "gpu-resident"), "neighbourhood_size": 1225, "wall_s": w, "iterations_per_s": 1.0,
                 "best_objective": 10.0, "gap_percent": 0.0, "bks": 10.0, "serial_note": None, "stopped_by_time": c,
                 "sampled": sampled}
                for k, (w, c) in enumerate(zip(walls, cut))]
    rows = (runs("target", "cpu", [30.0], [True]) + runs("target", "gpu-1", [4.0, 7.8, 8.0, 9.0, 30.0],
                                                          [False] * 4 + [True])
            + runs("cap", "cpu", [30.0], [True]) + runs("cap", "gpu-1", [30.1, 30.1, 30.2], [True] * 3)
            + runs("work", "cpu", [20.0], [False]) + runs("work", "gpu-1", [4.0, 5.0], [False, False])
            + runs("slow", "cpu", [2.0], [False]) + runs("slow", "gpu-1", [4.0], [False])
            + runs("sample", "cpu", [900.0], [True], sampled=1000) + runs("sample", "gpu-1", [9.0], [False]))
    summary = report.summarise(pd.DataFrame(rows)).set_index(["group", "backend"])
    assert summary.loc[("target", "gpu-1"), "speedup_at_least"] == pytest.approx(30 / 8.0)
    assert summary.loc[[("target", "gpu-1"), ("cap", "gpu-1")], "speedup_vs_cpu"].isna().all()
    assert pd.isna(summary.loc[("cap", "gpu-1"), "speedup_at_least"])
    assert summary.loc[("work", "gpu-1"), "speedup_vs_cpu"] == pytest.approx(20 / 4.5)
    shown = {r.Index[0]: report.fmt_speedup(r) for r in summary.xs("gpu-1", level="backend", drop_level=False).itertuples()}
    assert shown == {"target": "\u2265 3.75\u00d7", "cap": "", "work": "4.44\u00d7", "slow": "0.5\u00d7",
                     "sample": "100\u00d7"}
    notes = report.notes(summary.reset_index(), "rots")
    assert len(notes) == 2 and notes[0].startswith("slow, tai50a: gpu-1 is 0.5\u00d7 one core")
    assert notes[1].startswith("sample, tai50a: cpu's times are estimates")
    fastest = report.headlines(summary.reset_index(), pd.DataFrame(rows))[1]
    assert "gpu-1 on tai50a (sample), 100\u00d7" in fastest
    only_bound = summary.reset_index().query("group == 'target'")
    assert "at least 3.75\u00d7 (8 s against one core's time limit of 30 s" in report.headlines(only_bound, pd.DataFrame(rows))[1]


def test_a_backend_with_seeds_n_runs_only_the_groups_first_n_seeds_and_a_bad_count_is_refused():
    """`seeds: N` on a backend entry: a row for scale runs the group's first N seeds, the others
    every seed (a count or a list); N must be a positive count, named in the error."""
    from lsbench.errors import LsbenchError
    group = {"name": "tiny", "problem": "qap", "instances": ["rnd-qap-12-1"], "algorithm": "tabu", "seeds": [7, 8, 9],
             "iterations": 5, "backends": [{"name": "one-core", "backend": "cpu", "seeds": 1}, "cpu-parallel"]}
    runs = plan_runs({"experiment": "tiny", "groups": [group]}, gpu_available=False)
    assert [(r["label"], r["seed"]) for r in runs] == [("one-core", 7), ("cpu-parallel", 7), ("cpu-parallel", 8),
                                                       ("cpu-parallel", 9)]
    group["seeds"] = 2
    runs = plan_runs({"experiment": "tiny", "groups": [group]}, gpu_available=False)
    assert [r["seed"] for r in runs if r["label"] == "one-core"] == [1]
    for bad in (0, True, "1"):
        group["backends"][0]["seeds"] = bad
        with pytest.raises(LsbenchError, match=r"group tiny: backends\[0\]\.seeds: .* (minimum of 1|not of type 'integer')$"):
            plan_runs({"experiment": "tiny", "groups": [group]}, gpu_available=False)


def test_a_sampled_backend_runs_its_first_iterations_and_the_report_extrapolates_and_says_so(tmp_path):
    """`sample: N` on a backend entry: its runs stop after N of the group's iterations; the report
    gives time per iteration x the group's iterations, marked as an estimate, with a note, and the
    speed-ups against it; a sample needs a group that stops by iterations alone, and at N
    iterations or fewer the runs are full ones."""

    from lsbench.errors import LsbenchError
    group = {"name": "tiny", "problem": "qap", "instances": ["rnd-qap-12-1"], "algorithm": "tabu", "seeds": 2,
             "iterations": 400, "backends": [{"name": "cpu", "backend": "cpu", "sample": 40}, "cpu-parallel"]}
    cfg = {"experiment": "tiny", "groups": [group]}
    runs = plan_runs(cfg, gpu_available=False)
    assert [r["spec"].stop.iterations for r in runs] == [40, 40, 400, 400]
    paths = _run_planned(runs, tmp_path)
    report = _report_module()
    df = report.extrapolate_samples(__import__("pandas").read_parquet(tmp_path / "runs.parquet"), cfg)
    walls = [json.loads(p.read_text())["wall_s"] for p in paths[:2]]
    assert sorted(df[df["backend"] == "cpu"]["wall_s"]) == pytest.approx(sorted(w * 10 for w in walls))
    grid, _ = report.best_over_time(df[df["backend"] == "cpu"])  # the convergence plot ends where the runs did
    assert grid[-1] == pytest.approx(max(max(w, json.loads(p.read_text())["trajectory"][-1][1])
                                         for w, p in zip(walls, paths[:2])))
    summary = report.summarise(df)
    (cpu_row,) = [r for r in report.group_rows(group, summary, {"available": False}) if r["backend"] == "cpu"]
    assert cpu_row["wall"].endswith("(est. from 40 it.)") and cpu_row["best"].endswith("(after 40 it.)")
    assert any("cpu's times are estimates, not full runs" in n and "first 40 iterations" in n
               for n in report.notes(summary))
    known = df["best_objective"].min()  # (a generated instance has no best known value: the runs' best stands in)
    df = df.assign(bks=known, gap_percent=(df["best_objective"] / known - 1) * 100)
    summary = report.summarise(df)
    fastest, gap = report.headlines(summary, df)[1:]  # the stopped runs' gaps are no search's: left out
    assert "estimated times: one core's from its first 40 iterations" in fastest
    full_gap = summary[summary["backend"] == "cpu-parallel"]["gap"].median()
    assert summary[summary["backend"] == "cpu"]["gap"].median() > full_gap  # (40 iterations fall short here)
    (gaps,) = report.gap_rows(group, summary)[1]
    assert gaps["gaps"][0].endswith(" after 40 it.") and "after" not in gaps["gaps"][1]
    assert f"{report.fmt_gap(full_gap)}% over every cell of full runs (sampled runs left out)" in gap
    with pytest.raises(LsbenchError, match="sample needs a group that stops by iterations alone"):
        plan_runs({"experiment": "tiny", "groups": [{**group, "seconds": 5}]}, gpu_available=False)
    small = {"experiment": "tiny", "groups": [{**group, "iterations": 30}]}  # (a quick scale): full runs
    assert [r["spec"].stop.iterations for r in plan_runs(small, gpu_available=False)] == [30] * 4
    assert report.extrapolate_samples(df.assign(wall_s=1.0), small)["sampled"].eq(0).all()
    for bad in (0, -3, True, "0s", "-1s", "nans", "infs", "5", "fives"):  # (the schema, or sample_budget for 0s)
        with pytest.raises(LsbenchError, match=r"(group tiny: backends\[0\]\.sample: .* (minimum of 1|not of type "
                                               r"'integer'|not a number of iterations or of seconds \('5s'\))|backend "
                                               r"cpu: sample must be a positive number of iterations or of seconds)"):
            plan_runs({"experiment": "tiny", "groups": [{**group, "backends": [{"name": "cpu", "backend": "cpu",
                                                                                "sample": bad}]}]}, gpu_available=False)
    for published, message in (  # a typo in the paper's table fails the plan, not the report
            ({"file": "p.csv", "compare": {"base": "gpu-1-thread"}}, "published.compare.base 'gpu-1-thread' names none"),
            ({"file": "p.csv", "compare": {"cpu": "cpu_time_s"}}, r"published.compare: unknown field\(s\) cpu$"),
            ({"file": "p.csv", "profile": {"backend": "cpu", "evaluation": "e"}},
             r"published.profile: missing field\(s\) archiving, rest$"),
            ({"file": "p.csv", "profile": {"backend": "gpu", "evaluation": "e", "archiving": "a", "rest": "r"}},
             "published.profile.backend 'gpu' names none of its backends"),
            ({"compare": {}}, "published: 'file' is missing")):
        with pytest.raises(LsbenchError, match=f"group tiny: {message}"):
            plan_runs({"experiment": "tiny", "groups": [{**group, "published": published}]}, gpu_available=False)


def test_random_sampling_slower_on_the_gpu_is_explained_once_a_backend_by_its_one_at_a_time_evaluation():
    """A sampling run has no neighbourhood: a GPU row slower than one core is not 'moves an iteration
    that cannot pay a launch', but one permutation at a time; one note a backend, with the range."""
    import pandas as pd
    report = _report_module()
    rows = [{"group": "t1", "instance": inst, "backend": b, "kind": kind, "speedup_vs_cpu": ratio, "sampled": 0,
             "serial": None, "moves": 380}
            for inst, ratios in (("ta001", (0.03, 0.04)), ("ta011", (0.02, 0.05)))
            for b, kind, ratio in (("cpu", "cpu", 1.0), ("gpu-1", "gpu", ratios[0]), ("gpu-p", "gpu", ratios[1]))]
    sampled = report.notes(pd.DataFrame(rows), "sample")
    assert len(sampled) == 2 and all("one permutation at a time" in n and "on 2 instance(s)" in n for n in sampled)
    assert "t1: gpu-1 is 0.02-0.03\u00d7 one core" in sampled[0]
    searched = report.notes(pd.DataFrame(rows), "tabu")  # a search's GPU rows: the launch per iteration
    assert len(searched) == 4 and all("380 moves an iteration cannot pay a kernel launch" in n for n in searched)


def test_a_sample_in_seconds_times_a_long_run_and_leaves_a_short_one_whole(tmp_path):
    """`sample: "Ss"`: a run stops after S seconds or at the group's iterations, whichever comes
    first. A run cut by the clock is extrapolated from the iterations it ran (and marked so); one
    that finished within S seconds is a full run, neither extrapolated nor marked."""
    import pandas as pd
    sampled = {"name": "cpu", "backend": "cpu", "sample": "0.3s"}
    long = {"name": "long", "problem": "qap", "instances": ["rnd-qap-12-1"], "algorithm": "tabu", "seeds": 1,
            "iterations": 10 ** 9, "backends": [sampled]}
    short = {**long, "name": "short", "iterations": 50}
    cfg = {"experiment": "timed", "groups": [long, short]}
    runs = plan_runs(cfg, gpu_available=False)
    assert [(r["spec"].stop.iterations, r["spec"].stop.seconds) for r in runs] == [(10 ** 9, 0.3), (50, 0.3)]
    paths = _run_planned(runs, tmp_path)
    records = [json.loads(p.read_text()) for p in paths]
    assert 0 < records[0]["iterations"] < 10 ** 9 and records[1]["iterations"] == 50
    report = _report_module()
    by_time = {k: v for k, v in {**long, "seconds": 1, "backends": ["cpu"]}.items() if k != "iterations"}
    unsampled = report.extrapolate_samples(pd.read_parquet(tmp_path / "runs.parquet"), {"groups": [by_time]})
    assert unsampled["sampled"].eq(0).all()  # a group that stops by time alone, no backend sampled
    df = report.extrapolate_samples(pd.read_parquet(tmp_path / "runs.parquet"), cfg).set_index("group")
    assert df.loc["long", "sampled"] == records[0]["iterations"]
    assert df.loc["long", "wall_s"] == pytest.approx(records[0]["wall_s"] / records[0]["iterations"] * 10 ** 9)
    assert df.loc["short", "sampled"] == 0 and df.loc["short", "wall_s"] == pytest.approx(records[1]["wall_s"])


def test_the_evocop_report_puts_our_non_dominated_count_beside_the_papers_on_liefooghes_instance(tmp_path):
    """Table 3's group on Liefooghe's 020_10_01 (the paper's 20-10): the comparison gives the median
    size of our runs' fronts (the non-dominated union a run returns) beside the paper's count, once
    over the paper's four hardware rows; a sampled backend's runs, stopped after a few iterations,
    leave it unchanged."""

    import pandas as pd
    from conftest import need_instances
    need_instances("020_10_01")
    cfg = yaml.safe_load((ROOT / "workflows" / "config" / "luong_evocop_table3.yaml").read_text())
    sampled = {"name": "cpu-parallel", "backend": "cpu-parallel", "sample": 1, "seeds": 1}
    group = {**cfg["groups"][0], "instances": ["020_10_01"], "backends": ["cpu", sampled], "seeds": 3,
             "iterations": 60}
    del group["quick"]
    config = {"experiment": "evocop", "groups": [group]}
    paths = _run_planned(plan_runs(config, gpu_available=False), tmp_path)
    report = _report_module()
    summary = report.summarise(report.extrapolate_samples(pd.read_parquet(tmp_path / "runs.parquet"), config))
    rows = report.compare_rows(group, summary)
    sizes = sorted(len(json.loads(p.read_text())["front"]) for p in paths if "/cpu-s" in str(p))
    assert len(sizes) == 3 and len(rows) == 4 and {r["paper_front"] for r in rows} == {"11"}  # four hardware variants in the paper
    assert {r["front"] for r in rows} == {report.fmt_num(float(sizes[1]))}
    assert [r["span"] for r in rows] == [4, 0, 0, 0]  # our cells once, over the paper's four rows
    runs = [json.loads(p.read_text()) for p in paths if "/cpu-s" in str(p)]
    largest = sorted(max(size for _it, size in r["archive_sizes"]) for r in runs)
    restarts = sorted(r["params"]["restarts_done"] for r in runs)
    assert rows[0]["largest_archive"] == report.fmt_num(float(largest[1]))
    assert rows[0]["restarts"] == report.fmt_num(float(restarts[1]))


def test_the_evocop_profile_puts_the_papers_time_split_beside_the_row_that_ran_as_the_paper_did(tmp_path):
    """Table 5's non-dominated group on 020_10_01: our evaluation, archiving and rest shares (summing
    to 100), and the paper's shares of that variant (95.2, 4.7, 0.1) beside the backend the config
    names only (here cpu, for a host without a GPU; the config names gpu); the paper's table leaves
    out the columns Table 5 does not fill."""
    import pandas as pd
    from conftest import need_instances
    need_instances("020_10_01")
    sys.path.insert(0, str(ROOT / "workflows" / "scripts"))
    import pareto_report
    cfg = yaml.safe_load((ROOT / "workflows" / "config" / "luong_evocop_table5.yaml").read_text())
    group = next(g for g in cfg["groups"] if g["name"] == "profile-non-dominated")
    assert group["published"]["profile"]["backend"] == "gpu"
    sampled = {"name": "cpu", "backend": "cpu", "sample": 10}  # (its shares are those of the 10 iterations it ran)
    group = {**group, "instances": ["020_10_01"], "backends": [sampled, "cpu-parallel"], "seeds": 2, "iterations": 40,
             "published": {**group["published"], "profile": {**group["published"]["profile"], "backend": "cpu"}}}
    del group["quick"]
    _run_planned(plan_runs({"experiment": "profile", "groups": [group]}, gpu_available=False), tmp_path)
    report = _report_module()
    runs = pd.read_parquet(tmp_path / "runs.parquet")
    rows = pareto_report.profile_rows(runs, group["name"], report.paper_profile(group))
    as_reported = report.extrapolate_samples(runs, {"groups": [group], "scale": "paper"})  # (the cpu rows' times x 4)
    assert pareto_report.profile_rows(as_reported, group["name"], report.paper_profile(group)) == rows
    assert [(r["backend"], r["paper"]) for r in rows] == [("cpu", ["95.2", "4.7", "0.1"]), ("cpu-parallel", None)]
    assert all(abs(sum(float(r[k]) for k in ("evaluation", "archiving", "rest")) - 100) < 0.2 for r in rows)
    config = {"experiment": "profile", "title": "profile", "groups": [group], "scale": "paper"}
    report.write_report(tmp_path / "runs.parquet", tmp_path / "report.html", config, {"available": False, "name": "none"})
    page = (tmp_path / "report.html").read_text()
    assert "paper: archiving" in page and "<td>evaluation_pct</td>" not in page
    published = page[page.index("The paper&#x27;s table") if "The paper&#x27;s table" in page else page.index("The paper's table"):]
    assert "evaluation_pct" in published and "gpu_time_s" not in published


def test_a_multistart_backend_entry_plans_one_mpi_job_of_g_ranks_with_one_gpu_each():
    from lsbench.errors import LsbenchError
    from lsbench.workflow import mpi_tasks, run_command
    cfg = {"experiment": "islands", "groups": [{
        "name": "qap", "problem": "qap", "instances": ["tai12a"], "algorithm": "rots", "seeds": 2, "seconds": 5,
        "backends": [{"name": "islands-4", "backend": "gpu-resident",
                      "multistart": {"ranks": 4, "searches": 528, "exchange_every": 5000}}]}]}
    runs = plan_runs(cfg, gpu_available=True)
    assert [r["seed"] for r in runs] == [1, 529]  # each multistart has its own block of seeds
    assert mpi_tasks(runs[0]) == 4
    cmd = run_command(runs[0], "python", runs[0]["path"])
    assert " multistart " in cmd and "--searches 528" in cmd and "--exchange-every 5000 --migrants 4" in cmd
    assert f"--out {runs[0]['path']}" in cmd and "--out-dir results/islands/runs/qap/tai12a/islands-4-s1-searches" in cmd
    assert plan_runs(cfg, gpu_available=False) == []  # no GPU: the GPU multistart is left out, as any GPU run
    cfg["groups"][0]["backends"][0]["multistart"]["migrant_start"] = "cross"
    assert "--migrants 4 --migrant-start cross" in run_command(plan_runs(cfg, gpu_available=True)[0], "python", "r.json")
    for bad, field in (({"ranks": 0, "searches": 4}, "ranks"), ({"ranks": 4, "searches": 2}, "searches"),
                       ({"searches": 4, "every": 3}, "unknown"), ({"searches": 4, "migrant_start": "swap"}, "migrant_start"),
                       ({"ranks": 2, "searches": 8, "searches_per_gpu": 3}, "searches_per_gpu must divide searches / ranks"),
                       ({"searches": 4, "searches_per_gpu": 0}, "searches_per_gpu must divide"),
                       ({"searches": 4, "searches_per_gpu": 4, "exchange_every": 9}, "searches_per_gpu is for independent")):
        cfg["groups"][0]["backends"] = [{"name": "m", "backend": "cpu", "multistart": bad}]
        with pytest.raises(LsbenchError, match=f"backend m: multistart.*{field}"):
            plan_runs(cfg, gpu_available=True)
    # independent searches of a time-limited run: each rank's share as one run, not batches one after another
    cfg["groups"][0]["backends"] = [{"name": "gpus-1", "backend": "gpu-resident",
                                     "multistart": {"ranks": 1, "searches": 264, "searches_per_gpu": 264}}]
    cmd = run_command(plan_runs(cfg, gpu_available=True)[0], "python", "r.json")
    assert "--searches 264" in cmd and "--searches-per-gpu 264" in cmd and "--exchange-every" not in cmd


def test_the_example_reports_were_rendered_by_the_current_report_code_and_say_what_they_show():
    """Each report in reports/ names the report code it was rendered by: it fails here once that
    code changes, until `python workflows/scripts/report_from_records.py --examples` renders it
    again (from its runs.parquet and render.json: the records archives are not in the tree); its
    first screen says the scale, the records' commit, the GPU and the command that makes its
    records again, which reports/records.csv names beside the archive's sha256 and size."""
    sys.path.insert(0, str(ROOT / "workflows" / "scripts"))
    from records_archive import read_manifest
    from report import report_code_fingerprint
    folders = sorted(p for p in (ROOT / "reports").iterdir() if p.is_dir())
    manifest = read_manifest(ROOT / "reports")
    assert folders and sorted(manifest) == [f.name for f in folders]
    for folder in folders:
        plan = json.loads((folder / "render.json").read_text())["plan"]
        name, scale = folder.name, plan["scale"]
        assert plan["config"] == f"workflows/config/{name}.yaml"
        assert re.fullmatch(r"[0-9a-f]{64}", manifest[name]["sha256"]) and int(manifest[name]["bytes"]) > 0
        page = (folder / "report.html").read_text()
        stamp = re.search(r'<meta name="lsbench-report-code" content="([0-9a-f]+)">', page)
        assert stamp and stamp.group(1) == report_code_fingerprint(), \
            f"reports/{name} predates the report code: python workflows/scripts/report_from_records.py --examples"
        first_screen = " ".join(re.sub(r"<[^>]+>", " ", page[page.index("<body>"):][:2500]).split())
        assert f"Scale {scale}" in first_screen and re.search(r"lsbench commit [0-9a-f]{7}", first_screen)
        assert "NVIDIA" in first_screen and manifest[name]["command"] in first_screen
        assert manifest[name]["command"].endswith(f" {name}")


def test_an_example_report_renders_again_from_what_the_tree_keeps(tmp_path):
    """report_from_records.py --examples needs no records archive: a report folder's runs.parquet and
    render.json give the same page (its plots too)."""
    sys.path.insert(0, str(ROOT / "workflows" / "scripts"))
    import report_from_records
    folder = tmp_path / "luong_weierstrass"
    shutil.copytree(ROOT / "reports" / "luong_weierstrass", folder, ignore=shutil.ignore_patterns("records.tgz"))
    undated = lambda page: re.sub(r"rendered \d{4}-\d\d-\d\d", "rendered", page)  # noqa: E731
    before = undated((folder / "report.html").read_text())
    plots = sorted(p.name for p in (folder / "report_files").iterdir())
    report_from_records.render_example(folder)
    after = undated((folder / "report.html").read_text())
    assert after == before and sorted(p.name for p in (folder / "report_files").iterdir()) == plots


def test_run_plan_goes_seed_by_seed_and_starts_no_run_past_its_budget(tmp_path):
    """Every cell's first seed before any cell's second, the backends of an instance side by side;
    with a budget, the runs stop starting once it is spent and the exit says how many were left."""
    sys.path.insert(0, str(ROOT / "workflows" / "scripts"))
    from run_plan import seed_major
    cfg = {"experiment": "order", "groups": [{"name": "g", "problem": "qap", "instances": ["tai12a", "tai15a"],
                                              "algorithm": "tabu", "backends": ["cpu", "cpu-parallel"],
                                              "iterations": 20, "seeds": 3}]}
    order = [(r["seed"], r["instance"], r["label"]) for r in seed_major(plan_runs(cfg, gpu_available=False))]
    assert order == [(s, i, b) for s in (1, 2, 3) for i in ("tai12a", "tai15a") for b in ("cpu", "cpu-parallel")]
    config = tmp_path / "order.yaml"
    config.write_text(yaml.safe_dump(cfg))
    r = subprocess.run([sys.executable, str(ROOT / "workflows" / "scripts" / "run_plan.py"), str(config),
                        "--budget-s", "0", "--runs-dir", str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "0 runs done, 12 not started" in r.stdout, r.stdout + r.stderr
    assert not (tmp_path / "results").exists()


def test_a_plan_keeps_its_own_records_and_refuses_those_of_another_config(tmp_path):
    """Records already in place count as done only when the plan would make them now: the same
    config runs nothing again; a config whose iterations, sample or parameters changed is refused
    before any run, naming the record and the field, and the record stays as it was."""
    sys.path.insert(0, str(ROOT / "workflows" / "scripts"))
    from run_plan import run_all
    group = {"name": "g", "problem": "qap", "instances": ["rnd-qap-12-1"], "algorithm": "tabu", "backends": ["cpu"],
             "iterations": 20, "seeds": 2}
    config = {"experiment": "kept", "groups": [group]}
    assert run_all(config, runs_dir=tmp_path) == (2, 0, 0)
    record = tmp_path / "results" / "kept" / "runs" / "g" / "rnd-qap-12-1" / "cpu-s1.json"
    written = record.stat().st_mtime_ns
    assert run_all(config, runs_dir=tmp_path) == (2, 0, 0) and record.stat().st_mtime_ns == written
    for changed, field in (({"iterations": 30}, "stop"), ({"params": {"tenure_min": 3}}, "algorithm_params"),
                           ({"backends": [{"name": "cpu", "backend": "cpu", "sample": 10}]}, "stop")):
        with pytest.raises(LsbenchError, match=f"cpu-s1.json: a record of another plan \\({field} "):
            run_all({"experiment": "kept", "groups": [{**group, **changed}]}, runs_dir=tmp_path)
    assert record.stat().st_mtime_ns == written
    record.write_text("{")
    with pytest.raises(LsbenchError, match="cpu-s1.json: not a run record"):
        run_all(config, runs_dir=tmp_path)
    weighted = {"experiment": "weighted", "groups": [{  # a list parameter: the record holds a list, the spec a tuple
        "name": "w", "problem": "pfsp", "instances": ["rnd-pfsp-7x3-1"], "algorithm": "tabu", "backends": ["cpu"],
        "neighbourhood": "insertion", "iterations": 10, "seeds": 1, "params": {"objective": "three", "weights": [1, 2, 3]}}]}
    assert run_all(weighted, runs_dir=tmp_path) == (1, 0, 0)
    assert run_all(weighted, runs_dir=tmp_path) == (1, 0, 0)


def test_plan_left_estimates_the_missing_runs_from_their_cells_records(tmp_path):
    """plan_left.py: a plan of 3 seeds with its first seed run leaves 2 runs a cell, each estimated
    at the median time of its cell's record, CPU rows apart from GPU rows; a cell with no record
    is estimated from another archive's records of the same run, or counted, not guessed; a record
    of another plan (a sample changed to seconds) counts as missing, estimated at its seconds."""
    sys.path.insert(0, str(ROOT / "workflows" / "scripts"))
    from plan_left import RecordTimes, left
    from run_plan import run_all
    group = {"name": "g", "problem": "qap", "instances": ["rnd-qap-12-1"], "algorithm": "tabu",
             "backends": ["cpu", "cpu-parallel"], "iterations": 20, "seeds": 1}
    assert run_all({"experiment": "left", "groups": [group]}, runs_dir=tmp_path) == (2, 0, 0)
    runs = tmp_path / "results" / "left" / "runs"
    seconds = {b: json.loads((runs / "g" / "rnd-qap-12-1" / f"{b}-s1.json").read_text()) for b in ("cpu", "cpu-parallel")}
    expected = sum(2 * (r["wall_s"] + r["warmup_s"]) for r in seconds.values())
    grown = {"experiment": "left", "scale": "paper", "groups": [{**group, "seeds": 3, "instances": ["rnd-qap-12-1", "rnd-qap-12-2"]}]}
    n = left(grown, runs)
    assert (n["planned"], n["held"], n["missing"], n["unknown"], n["gpu_s"]) == (12, 2, 10, 6, 0)
    assert n["cpu_s"] == pytest.approx(expected)
    timed = {"name": "cpu", "backend": "cpu", "sample": "7s"}  # cpu's record, of the plan before: run again, 7 s at most
    n = left({**grown, "groups": [{**group, "backends": [timed, "cpu-parallel"]}]}, runs)
    assert (n["held"], n["missing"], n["replanned"], n["unknown"]) == (1, 1, 1, 0)
    assert n["cpu_s"] == pytest.approx(7.0)
    other_report = {"experiment": "other", "scale": "paper", "groups": [{**group, "name": "h", "seeds": 2}]}
    assert left(other_report, tmp_path / "none")["unknown"] == 4
    n = left({**other_report, "groups": [{**group, "name": "h", "seeds": 3, "instances": ["rnd-qap-12-1"]}]},
             tmp_path / "none", elsewhere=RecordTimes([runs]))
    assert (n["unknown"], n["elsewhere"], n["cpu_s"]) == (0, 2, pytest.approx(expected))  # seed 1 is held there
    r = subprocess.run([sys.executable, str(ROOT / "workflows" / "scripts" / "plan_left.py"), "no_such_report"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and r.stderr == "lsbench: error: no config workflows/config/no_such_report.yaml\n"
    assert r.stdout == ""


def test_a_run_that_fails_with_an_internal_error_is_counted_and_the_plan_goes_on(tmp_path, monkeypatch, capsys):
    """A bug in one run (here a ValueError, as a non-contiguous array once raised on the GPU) no longer
    ends a paper-scale plan: the run is counted as failed and named with the error, it leaves no
    record, and the other runs are made."""
    sys.path.insert(0, str(ROOT / "workflows" / "scripts"))
    import run_plan
    real = run_plan.run

    def buggy(spec):
        if spec.backend == "cpu-parallel":
            raise ValueError("Array contains non-contiguous buffer")
        return real(spec)
    monkeypatch.setattr(run_plan, "run", buggy)
    config = {"experiment": "buggy", "groups": [{"name": "g", "problem": "qap", "instances": ["rnd-qap-12-1"],
                                                 "algorithm": "tabu", "backends": ["cpu", "cpu-parallel"],
                                                 "iterations": 20, "seeds": 2}]}
    assert run_plan.run_all(config, runs_dir=tmp_path) == (2, 2, 0)
    out = capsys.readouterr().out
    assert out.count("internal error: ValueError: Array contains non-contiguous buffer") == 2
    runs = tmp_path / "results" / "buggy" / "runs" / "g" / "rnd-qap-12-1"
    assert sorted(p.name for p in runs.iterdir()) == ["cpu-s1.json", "cpu-s2.json"]
    plan = {"runs_done": 2, "runs_not_started": 0, "runs_failed": 2, "budget_s": None}  # the report's first screen
    records = __import__("pandas").DataFrame({"lsbench_commit": ["abc1234"], "device": ["NVIDIA H200"]})
    assert _report_module().provenance(records, {"plan": plan}, {"name": "none"})["plan"] == "2 runs (2 failed)"
    assert _report_module().provenance(records, {"plan": plan, "planned": {"held": 2, "planned": 4, "beyond": 0}}, {"name": "none"})["plan"] == \
        "2 of the plan's 4 runs (2 failed)"
    assert _report_module().provenance(records, {"plan": plan, "planned": {"held": 2, "planned": 4, "beyond": 3}}, {"name": "none"})["plan"] == \
        "2 of the plan's 4 runs and 3 beyond it (2 failed)"


def test_sigterm_during_a_run_ends_the_plan_with_the_runs_done_kept_and_no_partial_record(tmp_path):
    """A machine's time limit (SIGTERM) in the middle of a long run: the plan stops within seconds, the
    records already written stay, the interrupted run leaves nothing, and the exit says what was left."""
    cfg = {"experiment": "stopped", "groups": [
        {"name": "short", "problem": "qap", "instances": ["tai12a"], "algorithm": "tabu", "backends": ["cpu"],
         "iterations": 20, "seeds": 1},
        {"name": "long", "problem": "qap", "instances": ["tai12a"], "algorithm": "tabu", "backends": ["cpu"],
         "iterations": 10 ** 9, "seeds": 2}]}
    config = tmp_path / "stopped.yaml"
    config.write_text(yaml.safe_dump(cfg))
    p = subprocess.Popen([sys.executable, str(ROOT / "workflows" / "scripts" / "run_plan.py"), str(config),
                          "--runs-dir", str(tmp_path)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    runs = tmp_path / "results" / "stopped" / "runs"
    deadline = time.time() + 120
    while not list(runs.rglob("*.json")) and time.time() < deadline and p.poll() is None:
        time.sleep(0.2)
    time.sleep(3)  # well into the long run
    p.send_signal(signal.SIGTERM)
    out, _ = p.communicate(timeout=60)
    assert p.returncode == 0 and "stopped by SIGTERM" in out and "1 runs done, 2 not started" in out, out
    files = [f for f in runs.rglob("*") if f.is_file()]
    assert len(files) == 1 and "short" in str(files[0]) and json.loads(files[0].read_text())["iterations"] == 20


def test_sigterm_wrapped_by_a_compiled_function_still_ends_the_plan_and_is_no_failure(tmp_path, monkeypatch, capsys):
    """A Numba dispatcher that is running when SIGTERM comes raises SystemError ("returned a result with
    an exception set") instead of the handler's Stopped: the plan still ends there, with no failure."""
    sys.path.insert(0, str(ROOT / "workflows" / "scripts"))
    import run_plan

    def interrupted(spec):
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(1)
        except run_plan.Stopped:
            raise SystemError("CPUDispatcher(<function insert_batch>) returned a result with an exception set")
    monkeypatch.setattr(run_plan, "run", interrupted)
    monkeypatch.setattr(run_plan, "SIGTERM_SEEN", __import__("threading").Event())
    previous = signal.getsignal(signal.SIGTERM)
    run_plan.stop_plan_on_sigterm()
    try:
        config = {"experiment": "wrapped", "groups": [{"name": "g", "problem": "qap", "instances": ["tai12a"],
                                                        "algorithm": "tabu", "backends": ["cpu"], "iterations": 20,
                                                        "seeds": 2}]}
        assert run_plan.run_all(config, runs_dir=tmp_path) == (0, 0, 2)
    finally:
        signal.signal(signal.SIGTERM, previous)
    out = capsys.readouterr().out
    assert "stopped by SIGTERM" in out and "internal error" not in out


def test_sigterm_while_the_records_are_archived_keeps_them_and_starts_no_further_run(tmp_path, monkeypatch, capsys):
    """A time limit's SIGTERM that comes once the runs are done, while regenerate_reports.py archives
    them, no longer cuts the archive (which lost every run of that call); a later plan starts no run."""
    sys.path.insert(0, str(ROOT / "workflows" / "scripts"))
    import regenerate_reports
    import run_plan
    real_archive = regenerate_reports.archive

    def archive_under_sigterm(runs, plan, path):
        os.kill(os.getpid(), signal.SIGTERM)
        real_archive(runs, plan, path)
    monkeypatch.setattr(regenerate_reports, "archive", archive_under_sigterm)
    monkeypatch.setattr(run_plan, "SIGTERM_SEEN", __import__("threading").Event())
    previous = signal.getsignal(signal.SIGTERM)
    run_plan.stop_plan_on_sigterm()
    try:
        assert regenerate_reports.regenerate("janiak", "quick", 600, 1, reports=tmp_path, render=False) == 0
        assert signal.getsignal(signal.SIGTERM) is not previous  # the plan's own handler is back
        config = {"experiment": "after", "groups": [{"name": "g", "problem": "qap", "instances": ["tai12a"],
                                                      "algorithm": "tabu", "backends": ["cpu"], "iterations": 20,
                                                      "seeds": 2}]}
        assert run_plan.run_all(config, runs_dir=tmp_path / "after") == (0, 0, 2)
    finally:
        signal.signal(signal.SIGTERM, previous)
    with tarfile.open(tmp_path / "janiak" / "records.tgz") as tar:
        plan = json.load(tar.extractfile("plan.json"))
        records = [m for m in tar.getmembers() if m.name.startswith("runs/") and m.name.endswith(".json")]
    assert plan["runs_done"] == len(records) == 8 and plan["runs_failed"] == 0
    assert not list((tmp_path / "after").rglob("*.json"))


def test_regenerated_report_archives_its_records_and_plan_and_says_so_on_its_first_screen(tmp_path, capsys):
    """regenerate_reports.py runs a config, archives the records with plan.json (scale, commit,
    date) and renders the report from them; report_from_records.py renders the archive alike."""
    sys.path.insert(0, str(ROOT / "workflows" / "scripts"))
    import datetime

    from regenerate_reports import regenerate
    from records_archive import extract
    from report_from_records import report
    assert regenerate("janiak", "quick", 600, 1, reports=tmp_path) == 0
    assert "reports/janiak: 8 runs (0 failed, 0 not started), scale quick; its 4 GPU rows not planned here: " \
        "no GPU on this host" in capsys.readouterr().out
    folder = tmp_path / "janiak"
    extract(folder / "records.tgz", tmp_path / "x")
    plan = json.loads((tmp_path / "x" / "plan.json").read_text())
    records = list((tmp_path / "x" / "runs").rglob("*.json"))
    assert plan["scale"] == "quick" and plan["runs_done"] == len(records) == 8 and plan["runs_failed"] == 0
    assert plan["date"] == datetime.date.today().isoformat()
    page = (folder / "report.html").read_text()
    first_screen = " ".join(re.sub(r"<[^>]+>", " ", page[page.index("<body>"):][:1500]).split())
    assert "Scale quick" in first_screen and f"on {plan['date']}" in first_screen
    assert "8 of the plan's 12 runs within a budget of 600 s" in first_screen  # (its GPU rows: no GPU here)
    report(ROOT / plan["config"], tmp_path / "x" / "runs", tmp_path / "again", plan["scale"], plan)
    from plan_left import left  # a config grown since: counted as it stands

    def planned_held(config, runs_dir):
        n = left(config, runs_dir)
        return n["held"], n["planned"], n["beyond"]
    config = {**yaml.safe_load((ROOT / plan["config"]).read_text()), "scale": "quick"}
    config["groups"] = [{**g, "quick": {**g["quick"], "seeds": 2}} for g in config["groups"]]
    assert planned_held(config, tmp_path / "x" / "runs") == (8, 24, 0)
    config["groups"] = [{**g, "quick": {**g["quick"], "instances": g["quick"]["instances"][:1]}} for g in config["groups"]]
    assert planned_held(config, tmp_path / "x" / "runs") == (4, 12, 4)  # a config shrunk since: its records stay
    assert (tmp_path / "again" / "report.html").read_text().count("<tr") == page.count("<tr")
    tables = [__import__("pandas").read_parquet(f / "runs.parquet") for f in (folder, tmp_path / "again")]
    assert tables[0].equals(tables[1])  # (no temporary folder's name in it: the same records, the same table)
    # on a GPU machine without the report's libraries: the archive alone, rendered later (--examples)
    assert regenerate("janiak", "quick", None, 1, reports=tmp_path / "bare", render=False) == 0
    assert [p.name for p in (tmp_path / "bare" / "janiak").iterdir()] == ["records.tgz"]


def test_drop_replanned_removes_only_the_records_a_changed_config_plans_otherwise(tmp_path):
    """regenerate_reports.py --continue --drop-replanned: after a backend's sample changed, its
    records go (and run again under the new plan), or come back where the call ended before their
    runs; the other backend's records stay as they were. Before, the report's first screen counts
    the record of the earlier plan apart."""
    sys.path.insert(0, str(ROOT / "workflows" / "scripts"))
    from run_plan import drop_replanned, planned_runs, restore_unreplaced, run_all
    group = {"name": "g", "problem": "qap", "instances": ["rnd-qap-12-1"], "algorithm": "tabu",
             "backends": [{"name": "cpu", "backend": "cpu", "sample": 10}, "cpu-parallel"], "iterations": 20, "seeds": 1}
    config = {"experiment": "replanned", "groups": [group]}
    assert run_all(config, runs_dir=tmp_path) == (2, 0, 0)
    folder = tmp_path / "results" / "replanned" / "runs" / "g" / "rnd-qap-12-1"
    kept = (folder / "cpu-parallel-s1.json").read_bytes()
    changed = {**config, "groups": [{**group, "backends": [{"name": "cpu", "backend": "cpu", "sample": "5s"},
                                                            "cpu-parallel"]}]}
    from report_from_records import report
    (tmp_path / "changed.yaml").write_text(yaml.safe_dump(changed))
    report(tmp_path / "changed.yaml", tmp_path / "results" / "replanned" / "runs", tmp_path / "page")
    page = (tmp_path / "page" / "report.html").read_text()
    first_screen = " ".join(re.sub(r"<[^>]+>", " ", page[page.index("<body>"):][:1500]).split())
    assert "1 of the plan's 2 runs, and 1 record of an earlier plan (another sample, stop, parameter or multistart)" in first_screen
    note = " ".join(re.sub(r"<[^>]+>", " ", page).split())  # the cell's own note: which field, both values
    assert ("g, rnd-qap-12-1: 1 of cpu's records are of an earlier plan (stop {'iterations': 10}, the config asks "
            "{'iterations': 20, 'seconds': 5.0}); --drop-replanned runs them again.") in html.unescape(note)
    runs = planned_runs(changed, gpu_rows=False)
    earlier = (folder / "cpu-s1.json").read_bytes()
    dropped = drop_replanned(runs, tmp_path)
    assert dropped == {"results/replanned/runs/g/rnd-qap-12-1/cpu-s1.json":
                       {"results/replanned/runs/g/rnd-qap-12-1/cpu-s1.json": earlier}}
    assert not (folder / "cpu-s1.json").exists() and drop_replanned(runs, tmp_path) == {}
    assert restore_unreplaced(dropped, tmp_path) == 1 and (folder / "cpu-s1.json").read_bytes() == earlier  # (not run)
    dropped = drop_replanned(runs, tmp_path)
    assert run_all(changed, runs_dir=tmp_path) == (2, 0, 0) and restore_unreplaced(dropped, tmp_path) == 0
    assert json.loads((folder / "cpu-s1.json").read_text())["run_spec"]["stop"] == {"iterations": 20, "seconds": 5.0}
    assert (folder / "cpu-parallel-s1.json").read_bytes() == kept


def test_a_replanned_multistart_goes_with_its_searches_and_runs_afresh_or_comes_back_whole(tmp_path):
    """--drop-replanned on a multistart whose entry changed: its searches folder goes with its
    record (a multistart resumes from the searches it finds: the earlier plan's would be taken as
    done and none run), both come back where the run did not run again, and the new run's record
    holds only its own searches."""
    sys.path.insert(0, str(ROOT / "workflows" / "scripts"))
    from run_plan import drop_replanned, planned_runs, restore_unreplaced, run_all
    group = {"name": "g", "problem": "qap", "instances": ["rnd-qap-12-1"], "algorithm": "tabu", "iterations": 20,
             "seeds": 1, "backends": [{"name": "ms", "backend": "cpu", "multistart": {"ranks": 1, "searches": 2}}]}
    assert run_all({"experiment": "ms", "groups": [group]}, runs_dir=tmp_path) == (1, 0, 0)
    folder = tmp_path / "results" / "ms" / "runs" / "g" / "rnd-qap-12-1"
    before = {p.relative_to(folder): p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    assert sorted(map(str, before)) == ["ms-s1-searches/seed-1.json", "ms-s1-searches/seed-2.json",
                                        "ms-s1-searches/summary.json", "ms-s1.json"]
    changed = {"experiment": "ms", "groups": [{**group, "backends": [
        {"name": "ms", "backend": "cpu", "multistart": {"ranks": 1, "searches": 3}}]}]}
    runs = planned_runs(changed, gpu_rows=False)
    dropped = drop_replanned(runs, tmp_path)
    assert not any(folder.iterdir()) and len(dropped["results/ms/runs/g/rnd-qap-12-1/ms-s1.json"]) == 4
    (folder / "ms-s1-searches").mkdir()  # a new run cut short: its first search's record
    (folder / "ms-s1-searches" / "seed-3.json").write_text("{}")
    assert restore_unreplaced(dropped, tmp_path) == 1
    assert {p.relative_to(folder): p.read_bytes() for p in folder.rglob("*") if p.is_file()} == before
    dropped = drop_replanned(runs, tmp_path)
    assert run_all(changed, runs_dir=tmp_path) == (1, 0, 0) and restore_unreplaced(dropped, tmp_path) == 0
    summary = json.loads((folder / "ms-s1-searches" / "summary.json").read_text())
    assert (summary["completed"], summary["resumed"]) == (3, 0)
    assert json.loads((folder / "ms-s1.json").read_text())["multistart"]["searches"] == 3


def test_a_multistart_record_of_other_ranks_searches_batches_or_islands_is_of_another_plan():
    """A multistart's record is its best search's, whose spec says nothing of the multistart: its
    ranks, searches, exchange, migrants and the searches a run held are read from the record's
    multistart and batch sections, and a record that ran otherwise is replanned (--drop-replanned)."""
    sys.path.insert(0, str(ROOT / "workflows" / "scripts"))
    from run_plan import as_recorded, spec_difference
    entry = {"ranks": 1, "searches": 264, "searches_per_gpu": 264}
    cfg = {"experiment": "islands", "groups": [{"name": "qap", "problem": "qap", "instances": ["tai12a"],
                                                "algorithm": "rots", "seeds": 1, "seconds": 5, "backends": [
                                                    {"name": "gpus-1", "backend": "gpu-resident", "multistart": entry}]}]}
    (run,) = plan_runs(cfg, gpu_available=True)
    spec = {**as_recorded(run["spec"].as_record()), "seed": 77}  # (the best search's seed)
    ran = {"run_spec": spec, "multistart": {"searches": 264, "workers": 1, "exchange_every": 0}, "batch": {"searches": 264}}
    assert spec_difference(run, ran) is None
    assert spec_difference(run, {**ran, "batch": {"searches": 132}}) == ("multistart searches_per_gpu", 132, 264)
    assert spec_difference(run, {**ran, "multistart": {**ran["multistart"], "workers": 2}})[0] == "multistart ranks"
    cfg["groups"][0]["backends"][0]["multistart"] = {"ranks": 2, "searches": 264, "exchange_every": 500}
    (run,) = plan_runs(cfg, gpu_available=True)
    island = {"migrants": 4, "migrant_start": "copy"}
    ran = {"run_spec": spec, "multistart": {"searches": 264, "workers": 2, "exchange_every": 500,
                                            "islands": [island, island]}, "batch": {"searches": 132}}
    assert spec_difference(run, ran) is None  # (islands: the engine's own batch is not compared)
    crossed = {**ran, "multistart": {**ran["multistart"], "islands": [{**island, "migrant_start": "cross"}] * 2}}
    assert spec_difference(run, crossed) == ("multistart migrant_start", "cross", "copy")
    assert spec_difference(run, {**ran, "run_spec": {**spec, "stop": {"seconds": 9.0}}})[0] == "stop"


def test_a_report_continued_from_its_records_runs_only_the_runs_they_lack(tmp_path, monkeypatch):
    """--continue: a plan cut short by its budget grows in a second call from the first call's
    archive; the first call's records come back unchanged, the budgets add up, and records of
    another seed count are refused."""
    sys.path.insert(0, str(ROOT / "workflows" / "scripts"))
    import run_plan
    from regenerate_reports import regenerate
    from records_archive import extract

    ticks = iter(range(10**6))  # the plan's clock: one second a reading, whatever the machine's speed
    monkeypatch.setattr(run_plan, "time", types.SimpleNamespace(time=lambda: float(next(ticks))))

    def archived(call):
        extract(tmp_path / "janiak" / "records.tgz", tmp_path / call)
        plan = json.loads((tmp_path / call / "plan.json").read_text())
        return plan, {p.relative_to(tmp_path / call): p.read_bytes() for p in (tmp_path / call / "runs").rglob("*.json")}

    regenerate("janiak", "quick", 1.5, 1, reports=tmp_path, render=False)  # the first run starts, then the budget is spent
    first, first_records = archived("first")
    assert first["runs_done"] == len(first_records) == 1 and first["runs_not_started"] == 7
    regenerate("janiak", "quick", 600, 1, reports=tmp_path, render=False, resume=True)
    second, second_records = archived("second")
    assert second["runs_done"] == len(second_records) == 8 and second["runs_not_started"] == 0
    assert all(second_records[p] == data for p, data in first_records.items())
    assert second["calls"] == 2 and second["budget_s"] == 601.5
    with pytest.raises(LsbenchError, match="seeds 1, this call 2"):
        regenerate("janiak", "quick", 600, 2, reports=tmp_path, render=False, resume=True)


def test_a_plan_takes_the_records_of_the_same_runs_from_another_report_and_runs_the_rest(tmp_path):
    """take_same_runs (regenerate_reports.py --continue): a planned run that another report's
    records hold, the same spec and seed, is that record, copied; a run of another seed or backend
    runs; the report's first screen says how many records came from where."""
    sys.path.insert(0, str(ROOT / "workflows" / "scripts"))
    from run_plan import planned_runs, run_all, take_same_runs
    group = {"name": "g", "problem": "qap", "instances": ["rnd-qap-12-1"], "algorithm": "tabu",
             "backends": ["cpu"], "iterations": 20, "seeds": 2}
    assert run_all({"experiment": "table3", "groups": [group]}, runs_dir=tmp_path / "t3") == (2, 0, 0)
    source = tmp_path / "t3" / "results" / "table3" / "runs"
    profile = {"experiment": "table5", "groups": [{**group, "name": "profile", "seeds": 3,
                                                    "backends": ["cpu", "cpu-parallel"]}]}
    runs = planned_runs(profile)
    assert take_same_runs(runs, tmp_path / "t5", {"table3": source}) == {"table3": 2}
    assert take_same_runs(runs, tmp_path / "t5", {"table3": source}) == {}  # (held now)
    assert run_all(profile, runs_dir=tmp_path / "t5") == (6, 0, 0)
    taken = tmp_path / "t5" / "results" / "table5" / "runs" / "profile" / "rnd-qap-12-1"
    for seed in (1, 2):
        assert (taken / f"cpu-s{seed}.json").read_bytes() == (source / "g" / "rnd-qap-12-1" / f"cpu-s{seed}.json").read_bytes()
    assert json.loads((taken / "cpu-s3.json").read_text())["seed"] == 3
    records = __import__("pandas").DataFrame({"lsbench_commit": ["abc1234"], "device": ["NVIDIA H200"]})
    plan = {"runs_done": 6, "runs_not_started": 0, "runs_failed": 0, "budget_s": None, "taken": {"table3": 2}}
    assert _report_module().provenance(records, {"plan": plan, "planned": {"held": 6, "planned": 6, "beyond": 0}}, {"name": "none"})["plan"] == \
        "6 of the plan's 6 runs (2 of them the records of the same runs in table3)"
    plan["taken"] = {"table3": 2, "table4": 1}
    assert _report_module().provenance(records, {"plan": plan, "planned": {"held": 6, "planned": 6, "beyond": 0}}, {"name": "none"})["plan"] == \
        "6 of the plan's 6 runs (3 of them the records of the same runs in table3 (2), table4 (1))"


@pytest.mark.system  # end to end: MPI ranks
def test_run_plan_starts_cow_and_multistart_rows_under_mpi_as_the_snakefile_does(tmp_path):
    """A cow row runs its ranks and a multistart row its searches over ranks (not one search in
    this process), each record where the Snakefile writes it; the report takes the runs' records
    and not the multistart's per-search files beside them."""
    cfg = {"experiment": "mpi_rows", "groups": [{
        "name": "g", "problem": "qap", "instances": ["tai12a"], "algorithm": "tabu", "iterations": 50, "seeds": 1,
        "backends": ["cpu", {"name": "cow-2", "backend": "cow", "ranks": 2},
                     {"name": "ms-2", "backend": "cpu", "multistart": {"ranks": 2, "searches": 4}}]}]}
    config = tmp_path / "mpi_rows.yaml"
    config.write_text(yaml.safe_dump(cfg))
    r = subprocess.run([sys.executable, str(ROOT / "workflows" / "scripts" / "run_plan.py"), str(config),
                        "--runs-dir", str(tmp_path)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr[-2000:]
    runs = tmp_path / "results" / "mpi_rows" / "runs"
    cow = json.loads((runs / "g" / "tai12a" / "cow-2-s1.json").read_text())
    assert cow["backend"] == "cow" and cow["backend_info"]["ranks"] == 2
    summary = json.loads((runs / "g" / "tai12a" / "ms-2-s1-searches" / "summary.json").read_text())
    assert summary["completed"] == 4 and summary["via"] == "mpi"
    report = subprocess.run([sys.executable, str(ROOT / "workflows" / "scripts" / "report_from_records.py"),
                             str(config), str(runs), str(tmp_path / "report"), "quick"],
                            capture_output=True, text=True, timeout=300)
    assert report.returncode == 0 and "3 records" in report.stdout, report.stdout + report.stderr[-2000:]


def test_run_to_end_stopped_gives_its_child_sigterm_first_then_sigkill_after_the_grace(tmp_path):
    """A child whose wait is cut (its timeout, or a signal handler's exception in the parent, as a time
    limit's SIGTERM raises in run_plan.py) gets SIGTERM, which mpiexec passes on to its ranks, and the
    exception goes on; so does a shell's child (run_plan.py's launcher line, an assignment before it
    too, which the shell does not exec); a child that ignores SIGTERM is killed after the grace; one
    that ends is run's."""
    import shlex

    from lsbench.processes import run_to_end
    said = tmp_path / "said"
    trapping = ("import pathlib, signal, sys, time\n"
                f"signal.signal(signal.SIGTERM, lambda s, f: (pathlib.Path({str(said)!r}).write_text('term'), sys.exit(0)))\n"
                "print('ready', flush=True)\ntime.sleep(60)\n")
    with pytest.raises(subprocess.TimeoutExpired):
        run_to_end([sys.executable, "-c", trapping], timeout=2)
    assert said.read_text() == "term"
    said.unlink()
    with pytest.raises(subprocess.TimeoutExpired):
        run_to_end(f"LSBENCH_MARK=1 {shlex.quote(sys.executable)} -c {shlex.quote(trapping)}; sleep 60", shell=True,
                   timeout=2)
    assert said.read_text() == "term"

    class Stop(Exception):
        pass

    def stop(signum, frame):
        raise Stop()
    said.unlink()
    previous = signal.signal(signal.SIGALRM, stop)
    try:
        signal.alarm(2)
        with pytest.raises(Stop):
            run_to_end([sys.executable, "-c", trapping])
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert said.read_text() == "term"

    pid_file = tmp_path / "pid"
    deaf = ("import os, pathlib, signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
            f"pathlib.Path({str(pid_file)!r}).write_text(str(os.getpid()))\ntime.sleep(60)\n")
    t0 = time.time()
    with pytest.raises(subprocess.TimeoutExpired):
        run_to_end([sys.executable, "-c", deaf], timeout=2, grace_s=1)
    assert time.time() - t0 < 20
    with pytest.raises(ProcessLookupError):  # killed and reaped
        os.kill(int(pid_file.read_text()), 0)
    done = run_to_end([sys.executable, "-c", "import sys; print('out'); print('err', file=sys.stderr); sys.exit(3)"])
    assert (done.returncode, done.stdout, done.stderr) == (3, "out\n", "err\n")


@pytest.mark.system  # end to end: MPI ranks
def test_sigterm_during_an_mpi_row_ends_the_plan_and_the_rows_ranks(tmp_path):
    """A time limit's SIGTERM while a cow row runs under mpiexec: the plan stops and no rank is left
    running (subprocess.run's SIGKILL of mpiexec had orphaned them, on the device holding the GPUs)."""
    cfg = {"experiment": "mpi_stopped", "groups": [{
        "name": "g", "problem": "qap", "instances": ["tai12a"], "algorithm": "tabu", "iterations": 10 ** 9,
        "seeds": 1, "backends": [{"name": "cow-2", "backend": "cow", "ranks": 2}]}]}
    config = tmp_path / "mpi_stopped.yaml"
    config.write_text(yaml.safe_dump(cfg))
    p = subprocess.Popen([sys.executable, str(ROOT / "workflows" / "scripts" / "run_plan.py"), str(config),
                          "--runs-dir", str(tmp_path)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    def ranks():  # the row's ranks: lsbench processes writing under tmp_path
        found = subprocess.run(["pgrep", "-f", f"lsbench run .*{tmp_path}"], capture_output=True, text=True)
        return [int(pid) for pid in found.stdout.split() if int(pid) != p.pid]
    deadline = time.time() + 120
    while len(ranks()) < 2 and time.time() < deadline and p.poll() is None:
        time.sleep(0.5)
    assert len(ranks()) >= 2, "the cow row's ranks did not start"
    time.sleep(2)
    p.send_signal(signal.SIGTERM)
    out, _ = p.communicate(timeout=60)
    assert p.returncode == 0 and "stopped by SIGTERM" in out, out
    assert ranks() == [], "ranks left running"
