"""One run path: every workflow config through RunSpec, the same error line everywhere, one
installed package, no import cycle, and a problem added the way docs/architecture.md says."""
import json
import os
import re
import subprocess
import sys

import pytest
import yaml

from conftest import DATA, ROOT, need_instances
from lsbench.instances import manifest
from lsbench.workflow import plan_runs

CONFIGS = sorted((ROOT / "workflows" / "config").glob("*.yaml"))
CPU_BACKENDS = ("cpu", "cpu-parallel")
ENV = {**os.environ, "LSBENCH_DATA": str(DATA), "NUMBA_ENABLE_CUDASIM": "0"}


def _first_runs_config():
    """Every group of every config, its first run on a CPU backend with a tiny budget, in one
    experiment (group names prefixed by the config's)."""
    groups = []
    for path in CONFIGS:
        cfg = yaml.safe_load(path.read_text())
        runs = plan_runs(cfg, gpu_available=False)  # every run's RunSpec is built, GPU runs included
        assert runs and all(r["spec"].problem == r["problem"] for r in runs)
        for g in cfg["groups"]:
            backend = next(b for b in g["backends"] if (b if isinstance(b, str) else b["backend"]) in CPU_BACKENDS)
            tiny = {k: v for k, v in g.items() if k not in ("quick", "published", "seconds", "evaluations",
                                                              "target", "replicas")}
            tiny.update(name=f"{path.stem}-{g['name']}", instances=[g["instances"][0]], backends=[backend], seeds=1,
                        iterations=2 if g["algorithm"] != "cas" else 1)
            groups.append(tiny)
    # shared_cores: two one-core runs at a time (their timings are not what this test checks)
    return {"experiment": "first-runs", "title": "first run of every group", "shared_cores": True, "groups": groups}


@pytest.mark.system  # end to end: every config through Snakemake
@pytest.mark.long
def test_every_config_runs_its_first_run_of_each_group_through_snakemake_and_run_plan(tmp_path):
    cfg = _first_runs_config()
    need_instances(*{i for g in cfg["groups"] for i in g["instances"] if i in manifest() and not manifest()[i].generated})
    assert any(g["algorithm"] == "cas" and (g.get("params") or {}).get("ls") == "2opt" for g in cfg["groups"])
    config = tmp_path / "first.yaml"
    config.write_text(yaml.safe_dump(cfg))
    snake_dir, plan_dir = tmp_path / "snakemake", tmp_path / "run_plan"
    snake_dir.mkdir()
    plan_dir.mkdir()
    r = subprocess.run([sys.executable, "-m", "snakemake", "-s", str(ROOT / "Snakefile"), "-d", str(snake_dir), "-c2",
                        "--configfile", str(config)], capture_output=True, text=True, env=ENV, timeout=1200)
    assert r.returncode == 0, r.stderr[-3000:]
    p = subprocess.run([sys.executable, str(ROOT / "workflows" / "scripts" / "run_plan.py"), str(config)],
                       capture_output=True, text=True, env=ENV, cwd=plan_dir, timeout=1200)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    for run in plan_runs(cfg, gpu_available=False):
        via_snakemake = json.loads((snake_dir / run["path"]).read_text())
        via_run_plan = json.loads((plan_dir / run["path"]).read_text())
        assert via_snakemake["run_spec"] == via_run_plan["run_spec"]
        for key in ("best_objective", "best_solution", "iterations"):  # same spec, same seed: same search
            assert via_snakemake[key] == via_run_plan[key], (run["path"], key)
    report = (snake_dir / "results" / "first-runs" / "report.html").read_text()
    assert "Gap to the best known value (%)" in report and "tai30a" in report  # QAPLIB's best known values


BAD = [("tabu", "cpu", ["tenure=-1"], {"tenure": -1}), ("tabu", "cpu", ["colour=red"], {"colour": "red"}),
       ("cas", "cpu", ["ls=3opt"], {"ls": "3opt"}),
       ("rots", "cpu", ["tenure_cube=2n", "tenure_min=3"], {"tenure_cube": "2n", "tenure_min": 3}),
       # a GPU row's combination is refused when planned on a host without a GPU too (these tests have none)
       ("rots", "gpu-resident", ["walk=0.5"], {"walk": 0.5})]


@pytest.mark.parametrize("algorithm, backend, cli_params, config_params", BAD,
                         ids=["range", "unknown", "choice", "combination", "gpu-combination"])
def test_a_bad_parameter_gets_the_same_error_line_from_the_cli_and_from_a_workflow(tmp_path, algorithm, backend,
                                                                                   cli_params, config_params):
    need_instances("tai12a")
    out = tmp_path / "never.json"
    args = [sys.executable, "-m", "lsbench", "run", "--instance", "tai12a", "--algorithm", algorithm, "--backend",
            backend, "--iterations", "10", "--out", str(out)]
    for kv in cli_params:
        args += ["--param", kv]
    cli = subprocess.run(args, capture_output=True, text=True, env=ENV, timeout=300)
    assert cli.returncode == 2 and not out.exists()
    (line,) = cli.stderr.strip().splitlines()
    assert line.startswith("lsbench: error: --param ")
    cfg = {"experiment": "bad", "groups": [{"name": "g", "problem": "qap", "instances": ["tai12a"],
                                            "algorithm": algorithm, "backends": [backend], "iterations": 10,
                                            "params": config_params}]}
    config = tmp_path / "bad.yaml"
    config.write_text(yaml.safe_dump(cfg))
    where = f" (workflow config group g, backend {backend})"
    plan = subprocess.run([sys.executable, str(ROOT / "workflows" / "scripts" / "run_plan.py"), str(config)],
                          capture_output=True, text=True, env=ENV, cwd=tmp_path, timeout=300)
    assert plan.returncode == 2 and plan.stderr.strip().splitlines() == [line + where]
    snake = subprocess.run([sys.executable, "-m", "snakemake", "-s", str(ROOT / "Snakefile"), "-d", str(tmp_path),
                            "-n", "--configfile", str(config)], capture_output=True, text=True, env=ENV, timeout=300)
    assert snake.returncode != 0 and line + where in snake.stderr.splitlines()
    assert not (tmp_path / "results").exists()


@pytest.mark.system  # end to end: pip installs the package
def test_the_installed_distribution_has_one_import_name(tmp_path):
    target, source = tmp_path / "site", tmp_path / "source"
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    for name in files:  # the tracked tree, so that the build leaves nothing in the checkout
        if (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            (source / name).write_bytes((ROOT / name).read_bytes())
    pip = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target),
                          str(source)], capture_output=True, text=True, timeout=600)
    assert pip.returncode == 0, pip.stderr[-2000:]
    installed = {p.name for p in target.iterdir() if not p.name.endswith((".dist-info", ".egg-info"))}
    assert "lsbench" in installed and installed <= {"lsbench", "bin"}
    env = {**ENV, "PYTHONPATH": str(target)}
    work = tmp_path / "elsewhere"
    work.mkdir()

    def python(code):
        return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=work,
                              timeout=300)
    for name in ("gpu", "hpc"):
        r = python(f"import {name}")
        assert r.returncode != 0 and f"No module named '{name}'" in r.stderr
    r = python("import lsbench, lsbench.gpu, lsbench.hpc, lsbench.gpu.iteration.evaluator, lsbench.hpc.cow; "
               "print(lsbench.gpu.__file__); print(lsbench.hpc.__file__)")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == [str(target / "lsbench" / "gpu" / "__init__.py"),
                                str(target / "lsbench" / "hpc" / "__init__.py")]
    r = python("import sys, lsbench, lsbench.cli, lsbench.runner, lsbench.spec; "
               "print(sorted(m for m in sys.modules if m.split('.')[0] in ('mpi4py', 'dask', 'distributed') "
               "or m.startswith(('numba.cuda', 'numba_cuda'))))")
    assert r.returncode == 0 and r.stdout.strip() == "[]", r.stdout + r.stderr
    r = subprocess.run([sys.executable, "-m", "lsbench", "run", "--instance", "rnd-qap-12-1", "--iterations", "50",
                        "--backend", "cpu", "--quiet", "--out", str(work / "r.json")], capture_output=True, text=True,
                       env=env, cwd=work, timeout=300)
    assert r.returncode == 0, r.stderr
    assert json.loads((work / "r.json").read_text())["iterations"] == 50


def test_a_run_loads_only_its_own_algorithms_and_problems_modules(tmp_path):
    """The registry imports an algorithm's class, and lsbench.problems a problem's, when a run names
    it: a QAP Ro-TS run loads lsbench.search.tabu and lsbench.problems.qap and none of the other
    algorithms' or problems' modules, so the figures it measures list only what ran
    (`source_files`), and a change to PLS, the colony or the flow shop leaves them current."""
    code = ("import sys; from lsbench.cli import main; rc = main(['run', '--instance', 'rnd-qap-12-1', '--algorithm', "
            f"'rots', '--iterations', '20', '--quiet', '--out', {str(tmp_path / 'r.json')!r}]); "
            "print(rc, sorted(m for m in sys.modules if m.startswith(('lsbench.search', 'lsbench.engines', 'lsbench.problems'))))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    last = r.stdout.strip().splitlines()[-1]  # (after the run's own line)
    assert r.returncode == 0 and last.startswith("0 "), r.stdout + r.stderr
    loaded = set(json.loads(last.split(" ", 1)[1].replace("'", '"')))
    assert {"lsbench.search.tabu", "lsbench.problems.qap"} <= loaded
    assert not loaded & {f"lsbench.problems.{p}" for p in ("pfsp", "tsp", "ppp", "weierstrass")}, loaded
    assert not loaded & {"lsbench.search.pls", "lsbench.search.archive", "lsbench.search.hill_climbing",
                         "lsbench.engines.cas", "lsbench.engines.iterated_greedy", "lsbench.engines.sampling"}, loaded
    from lsbench.registry import ALGORITHMS
    assert list(ALGORITHMS) == ["tabu", "rots", "hc", "cas", "pls", "ig", "sample"]
    assert {name: ALGORITHMS[name].name for name in ALGORITHMS} == {name: name for name in ALGORITHMS}
    from lsbench.problems import PROBLEMS
    assert {name: PROBLEMS[name].kind for name in PROBLEMS} == {name: name for name in PROBLEMS}


def test_a_toy_problem_added_as_the_walk_through_says_runs_on_cpu_and_cpu_parallel(tmp_path, monkeypatch):
    """docs/architecture.md, "Add a problem": the class in tests/toy_problem.py, registered in
    PROBLEMS; then `lsbench run` finds it, checks its declared parameter, and both CPU backends
    follow the same trajectory to re-checked records."""
    from lsbench.errors import LsbenchError
    from lsbench.problems import PROBLEMS
    from lsbench.runner import run_one
    from lsbench.record import Record
    monkeypatch.setitem(PROBLEMS.paths, "toy", "toy_problem:WeightedPositions")
    instance = tmp_path / "toy20.txt"
    weights = [(7 * k) % 23 + 1 for k in range(20)]
    instance.write_text(f"20\n{' '.join(map(str, weights))}\n")
    records = []
    for backend in ("cpu", "cpu-parallel"):
        out = tmp_path / f"{backend}.json"
        rec = run_one("toy", str(instance), "tabu", backend, seed=3, iterations=60, problem_params={"scale": 2},
                      out=str(out))
        assert "re-checked" in Record.read(str(out)).verify()
        records.append(rec)
    assert records[0]["trajectory"][-1][::2] == records[1]["trajectory"][-1][::2]
    assert records[0]["best_solution"] == records[1]["best_solution"]
    best = sorted(weights, reverse=True)
    assert records[0]["best_objective"] == sum(2 * w * i for i, w in enumerate(best))  # tabu search found it
    with pytest.raises(LsbenchError, match=r"--param scale=0: must be >= 1 \(toy\)"):
        run_one("toy", str(instance), "tabu", "cpu", iterations=5, problem_params={"scale": 0})


def test_the_toy_problem_runs_whole_on_the_gpu_through_its_device_adapter(tmp_path, monkeypatch):
    """docs/architecture.md, "Add a problem", step 7: with its adapter in ADAPTERS, hill climbing
    (with restarts) and tabu search run on gpu-resident (the simulator here), each search the CPU
    search with its seed, move by move, to re-checked records."""
    from lsbench.gpu.adapters import ADAPTERS
    from lsbench.problems import PROBLEMS
    from lsbench.record import Record
    from lsbench.registry import backends_of
    from lsbench.runner import run_one
    monkeypatch.setitem(PROBLEMS.paths, "toy", "toy_problem:WeightedPositions")
    assert "gpu-resident" not in backends_of("hc", "toy")
    monkeypatch.setitem(ADAPTERS, ("toy", "swap"), "toy_problem:ToySwapAdapter")
    assert "gpu-resident" in backends_of("hc", "toy") and "gpu-resident" in backends_of("tabu", "toy")
    instance = tmp_path / "toy9.txt"
    instance.write_text("9\n5 3 8 1 9 2 7 4 6\n")
    for algorithm, iterations, params in (("hc", 30, {"restarts": True}), ("tabu", 25, {})):
        records = {}
        for backend in ("cpu", "gpu-resident"):
            out = tmp_path / f"{algorithm}-{backend}.json"
            records[backend] = run_one("toy", str(instance), algorithm, backend, seed=4, iterations=iterations,
                                       algorithm_params=params, out=str(out))
            assert "re-checked" in Record.read(str(out)).verify()
        cpu, gpu = records["cpu"], records["gpu-resident"]
        assert [t[::2] for t in cpu["trajectory"]] == [t[::2] for t in gpu["trajectory"]], algorithm
        assert (cpu["best_solution"], cpu["final_objective"]) == (gpu["best_solution"], gpu["final_objective"])
        assert len(cpu["trajectory"]) >= 3


def test_readme_is_short_and_its_links_into_docs_resolve():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 150
    links = [line.split("](", 1)[1].split(")", 1)[0] for line in readme.splitlines() if "](docs/" in line]
    assert {"docs/architecture.md", "docs/backends.md", "docs/clusters.md", "docs/workflows.md",
            "docs/performance.md"} <= set(links)
    for link in links:
        assert (ROOT / link).exists(), link
    assert "](../" not in readme and "](/" not in readme  # no link out of the repository


def test_performance_doc_is_short_and_each_figure_is_rendered_from_the_file_it_cites():
    """docs/performance.md (250 lines at most) holds each figure as a block that
    benchmarks/performance_page.py renders from the result file it cites (30 at most), each file
    `<benchmark>-<gpu>-<commit>.json` made at the commit its name says; the tables are exactly what
    the files say (Stale lines aside: the system tier checks those, they need git history); a page
    without figures lists what waits for re-measuring."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import performance_page
    from stale_figures import cited_results
    doc = (ROOT / "docs" / "performance.md").read_text()
    assert len(doc.splitlines()) <= 250
    cited = cited_results()
    assert len(cited) <= 30 and (cited or "## Not measured at the current commit" in doc)
    assert [m.group("file") for m in performance_page.BLOCK.finditer(doc)] == cited  # every cited file, a block
    for name in cited:
        rec = json.loads((ROOT / "benchmarks" / "results" / name).read_text())
        assert name.split("-")[2].split(".")[0] == rec["versions"]["lsbench_commit"]
    unmarked = "\n".join(line for line in doc.split("\n") if not line.startswith("**Stale**"))
    unmarked = re.sub(r"(<!-- figure: \S+ -->\n)\n", r"\1", unmarked)
    original = performance_page.stale_line
    try:
        performance_page.stale_line = lambda name, body: None
        assert performance_page.render(unmarked) == unmarked, "python benchmarks/performance_page.py render"
    finally:
        performance_page.stale_line = original


def test_the_committed_result_files_are_exactly_the_cited_ones():
    """benchmarks/results/ is ignored by git: the page's files are added with `git add -f`, and no
    other result file is committed. Needs git (a source archive holds only the cited ones)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from stale_figures import cited_results, git
    listed = git("ls-files", "benchmarks/results")
    if listed.returncode != 0:
        pytest.skip("not a git checkout (a source archive): the committed files cannot be listed")
    assert {f"benchmarks/results/{c}" for c in cited_results()} == set(listed.stdout.split())


@pytest.mark.system
def test_the_performance_page_marks_exactly_the_stale_figures():
    """Every figure whose engine code changed after its commit carries a Stale line, and no other
    (`performance_page.py check`; an engine fix is followed by `performance_page.py render`)."""
    r = subprocess.run([sys.executable, "performance_page.py", "check"], cwd=ROOT / "benchmarks",
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr


def test_an_engine_change_marks_its_figure_stale_in_the_page_and_a_comment_does_not(tmp_path, monkeypatch):
    """performance_page.py render on a repository of its own: a figure whose engine file gets a line
    of code is marked Stale, naming the file and the command; a comment leaves it unmarked; check
    fails until render writes the mark."""
    stale_figures, _git, name, commit = _measured_repository(tmp_path, monkeypatch, {"gpu/ran.py": "X = 1\n"},
                                                             ["gpu/ran.py"])
    import performance_page
    record = {"source_files": ["gpu/ran.py"], "command": "python cas_gpu.py --runs 1 --out /x",
              "date": "2026-12-01T00:00:00", "versions": {"lsbench_commit": commit}, "host": {"cpu_count": 16},
              "gpu": {"name": "NVIDIA H200"},
              "rows": [{"instance": "tai40a", "target": 1, "paper_gtx480_s": 0.1, "gpu_vs_paper_gpu": 30.0,
                        "gpu": {"median_s": 0.003, "runs": [{"reached": True}]}}]}
    name = f"cas_gpu-h200-{commit}.json"
    (tmp_path / "benchmarks" / "results" / name).write_text(json.dumps(record))
    page = f"# P\n\n<!-- figure: {name} -->\n<!-- end figure -->\n"
    monkeypatch.setattr(performance_page, "RESULTS", tmp_path / "benchmarks" / "results")
    fresh = performance_page.render(page)
    assert "**Stale**" not in fresh and f"**{commit}**" in fresh and "| tai40a | 1 | 0.003 |" in fresh
    (tmp_path / "gpu" / "ran.py").write_text("X = 1  # a comment\n")
    assert performance_page.render(fresh) == fresh
    (tmp_path / "gpu" / "ran.py").write_text("X = 2\n")
    marked = performance_page.render(fresh)
    assert f"**Stale**: gpu/ran.py changed after {commit}. Measure it again: " \
           "`benchmarks/performance_page.py remeasure`." in marked
    assert performance_page.render(marked) == marked and "| tai40a |" in marked


def _measured_repository(tmp_path, monkeypatch, files, ran):
    """A git repository of its own with `files` committed, docs/performance.md citing one result
    file whose figure ran `ran`; stale_figures pointed at it. Returns (stale_figures, git, result
    file's name, commit)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import stale_figures
    for path, text in {**files, "docs/performance.md": ""}.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    git = ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "measured"], check=True)
    commit = subprocess.run([*git, "rev-parse", "--short=7", "HEAD"], capture_output=True, text=True).stdout.strip()
    name = f"tables-h200-{commit}.json"
    (tmp_path / "benchmarks" / "results").mkdir(parents=True)
    (tmp_path / "benchmarks" / "results" / name).write_text(json.dumps({"source_files": ran}))
    (tmp_path / "docs" / "performance.md").write_text(f"| a figure | {name} |\n")
    monkeypatch.setattr(stale_figures, "ROOT", tmp_path)
    return stale_figures, git, name, commit


def test_a_figure_goes_stale_when_engine_code_it_ran_changes_and_not_for_a_comment(tmp_path, monkeypatch):
    """stale_figures.py on a repository of its own (no dependence on this clone's history): a
    comment added to a file a figure ran leaves it current; a line of code there makes it stale,
    naming the file; code added to an engine file it did not run changes nothing."""
    stale_figures, _git, name, commit = _measured_repository(
        tmp_path, monkeypatch, {"gpu/ran.py": "X = 1\n", "gpu/other.py": "Y = 1\n"}, ["gpu/ran.py"])
    assert stale_figures.cited_results() == [name] and stale_figures.stale_reasons(name) == []
    (tmp_path / "gpu" / "ran.py").write_text("X = 1  # a comment\n")
    (tmp_path / "gpu" / "other.py").write_text("Y = 2\n")
    assert stale_figures.stale_reasons(name) == []
    (tmp_path / "gpu" / "ran.py").write_text("X = 2\n")
    assert stale_figures.stale_reasons(name) == [f"gpu/ran.py changed after {commit}"]


def test_a_figure_stays_current_when_files_it_ran_move_with_only_their_imports_changed(tmp_path, monkeypatch):
    """stale_figures.py follows git's renames: a module moved into a sub-package, its importers'
    import lines (relative, and the name they bind it to) changed with it, leaves the figure
    current; a line of code changed in the move, or another module imported under the old name,
    makes it stale, naming the file and where it is now."""
    body = "".join(f"def g{k}(y):\n    return y * {k}\n" for k in range(12))  # (git pairs a moved file by likeness)
    files = {"gpu/__init__.py": "", "gpu/rots_helper.py": "Y = 2\ndef f(y):\n    return y + 1\n",
             "gpu/ran.py": "from . import rots_helper\nfrom .rots_helper import Y\nX = rots_helper.f(Y)\n" + body,
             "gpu/other.py": "def f(y):\n    return y\n"}
    stale_figures, git, name, commit = _measured_repository(
        tmp_path, monkeypatch, files, ["gpu/__init__.py", "gpu/ran.py", "gpu/rots_helper.py"])
    (tmp_path / "gpu" / "rots").mkdir()
    (tmp_path / "gpu" / "rots" / "__init__.py").write_text("")
    subprocess.run([*git, "mv", "gpu/rots_helper.py", "gpu/rots/helper.py"], check=True)
    subprocess.run([*git, "mv", "gpu/ran.py", "gpu/rots/ran.py"], check=True)
    ran = tmp_path / "gpu" / "rots" / "ran.py"
    ran.write_text("from . import helper\nfrom .helper import Y\nX = helper.f(Y)\n" + body)
    subprocess.run([*git, "add", "-A"], check=True)
    assert stale_figures.stale_reasons(name) == []
    moved = [f"gpu/ran.py changed after {commit} (now gpu/rots/ran.py)"]
    ran.write_text("from .. import other as helper\nfrom .helper import Y\nX = helper.f(Y)\n" + body)
    assert stale_figures.stale_reasons(name) == moved
    ran.write_text("from . import helper\nfrom .helper import Y\nX = helper.f(Y) + 1\n" + body)
    assert stale_figures.stale_reasons(name) == moved
