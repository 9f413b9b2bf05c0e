"""Problems and device adapters through entry points (lsbench/plugins.py): lsbench's own register the
same way as a plug-in's; a plug-in package installed beside lsbench runs without a change to lsbench;
a broken one is one error line naming it and never stops the other problems."""
import os
import subprocess
import sys

import pytest

from conftest import ROOT
from lsbench import plugins

tomllib = pytest.importorskip("tomllib", reason="tomllib reads pyproject.toml from Python 3.11 on")


def test_each_of_lsbenchs_own_problems_passes_the_plugin_check():
    from lsbench.problems import PROBLEMS
    own = list(plugins.BUILTIN["lsbench.problems"])
    assert list(PROBLEMS)[:len(own)] == own and [PROBLEMS[name].kind for name in own] == own  # (plug-ins after)


def test_lsbench_registers_its_own_problems_and_adapters_as_entry_points_as_builtin_lists_them():
    """One way to add a problem: pyproject.toml's entry points, and BUILTIN (what a source tree that
    is not installed reads) is exactly them; the installed package reports the same table."""
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]
    assert {group: declared[group] for group in plugins.GROUPS} == plugins.BUILTIN
    for group in plugins.GROUPS:  # (beside any plug-in installed here, e.g. examples/maxcut)
        table = plugins.registered(group)
        assert {name: value for name, value in table.items() if plugins.PLUGIN_OF[value] == "lsbench"} \
            == plugins.BUILTIN[group]


def plugin_package(folder, name, entry_points, modules):
    """A package installed as pip would leave it: its modules and a dist-info folder whose
    entry_points.txt lists `entry_points` ({group: {name: value}})."""
    dist = folder / f"{name}-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("".join(
        f"[{group}]\n" + "".join(f"{key} = {value}\n" for key, value in table.items()) + "\n"
        for group, table in entry_points.items()))
    for module, text in modules.items():
        (folder / f"{module}.py").write_text(text)
    return folder


def lsbench(folder, *args):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(folder), str(ROOT / "tests")])}
    return subprocess.run([sys.executable, "-m", "lsbench", *args], capture_output=True, text=True, env=env,
                          timeout=300)


def test_a_plugin_problem_runs_on_the_cpu_and_its_adapter_on_gpu_resident_without_touching_lsbench(tmp_path):
    """The walk-through's toy problem (tests/toy_problem.py) as a package of its own: `describe`
    lists it, `run` finds it by its entry point, and hill climbing runs whole on the GPU through its
    adapter's entry point (the simulator)."""
    folder = plugin_package(tmp_path / "site", "toy-plugin",
                            {"lsbench.problems": {"toy": "toy_problem:WeightedPositions"},
                             "lsbench.adapters": {"toy:swap": "toy_problem:ToySwapAdapter"}}, {})
    instance = tmp_path / "w8.txt"
    instance.write_text("8\n5 1 7 3 9 2 8 4\n")
    r = lsbench(folder, "describe", "--problem", "toy")
    assert r.returncode == 0 and "toy" in r.stdout, r.stderr
    out = tmp_path / "r.json"
    r = lsbench(folder, "run", "--problem", "toy", "--instance", str(instance), "--algorithm", "tabu",
                "--iterations", "20", "--out", str(out), "--quiet")
    assert r.returncode == 0, r.stderr
    assert lsbench(folder, "verify", str(out)).returncode == 0
    r = subprocess.run([sys.executable, "-m", "lsbench", "run", "--problem", "toy", "--instance", str(instance),
                        "--algorithm", "hc", "--backend", "gpu-resident", "--iterations", "5", "--quiet"],
                       capture_output=True, text=True, timeout=600,
                       env={**os.environ, "NUMBA_ENABLE_CUDASIM": "1",
                            "PYTHONPATH": os.pathsep.join([str(folder), str(ROOT / "tests")])})
    assert r.returncode == 0, r.stderr
    r = subprocess.run([sys.executable, "-m", "lsbench", "run", "--problem", "toy", "--instance", str(instance),
                        "--algorithm", "hc", "--backend", "gpu", "--iterations", "5", "--quiet"],
                       capture_output=True, text=True, timeout=600,
                       env={**os.environ, "NUMBA_ENABLE_CUDASIM": "1",
                            "PYTHONPATH": os.pathsep.join([str(folder), str(ROOT / "tests")])})
    assert r.returncode == 0, r.stderr  # the iteration level, from the adapter's move cost
    r = subprocess.run([sys.executable, "-m", "lsbench", "run", "--problem", "toy", "--instance", str(instance),
                        "--iterations", "5", "--quiet"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "unknown problem 'toy'" in r.stderr


BROKEN = {"import": ("raise ImportError('no module named cplex')\n",
                     "cannot be loaded: ImportError: no module named cplex"),
          "lacking": ("from lsbench.problems.base import Problem\n\n\nclass Broken(Problem):\n    kind = 'broken'\n",
                      "lacks objective, random_solution, check_solution, describe"),
          "not a problem": ("class Broken:\n    pass\n", "is not a subclass of lsbench's Problem")}


@pytest.mark.parametrize("case", BROKEN)
def test_a_broken_plugin_is_one_error_line_naming_it_and_the_other_problems_run(tmp_path, case):
    text, says = BROKEN[case]
    folder = plugin_package(tmp_path / "site", "broken-plugin", {"lsbench.problems": {"broken": "broken_mod:Broken"}},
                            {"broken_mod": text})
    instance = tmp_path / "x.txt"
    instance.write_text("3\n1 2 3\n")
    r = lsbench(folder, "run", "--problem", "broken", "--instance", str(instance), "--iterations", "3", "--quiet")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr, r.stderr
    assert "'broken'" in r.stderr and "broken-plugin" in r.stderr and says in r.stderr
    r = lsbench(folder, "run", "--instance", "rnd-qap-8-1", "--iterations", "5", "--quiet")
    assert r.returncode == 0, r.stderr


def test_a_plugin_that_registers_a_name_lsbench_has_is_left_out_with_a_warning(tmp_path):
    folder = plugin_package(tmp_path / "site", "greedy-plugin", {"lsbench.problems": {"qap": "nowhere:QAP"}}, {})
    r = lsbench(folder, "run", "--instance", "rnd-qap-8-1", "--iterations", "5", "--quiet")
    assert r.returncode == 0, r.stderr
    assert ("plug-in greedy-plugin registers lsbench.problems 'qap', which lsbench already registers: "
            "left out") in r.stderr


def test_without_package_metadata_lsbench_reads_its_own_entries(monkeypatch):
    """A source tree on PYTHONPATH without installing (the device machine) has no entry points: its
    own problems come from BUILTIN."""
    monkeypatch.setattr(plugins.metadata, "entry_points", lambda group: [])
    assert plugins.registered("lsbench.problems") == plugins.BUILTIN["lsbench.problems"]


def test_no_file_of_lsbench_names_the_maxcut_example():
    """The example plug-in (examples/maxcut) lives outside the package: lsbench runs it through
    its entry point alone."""
    named = [str(p.relative_to(ROOT)) for folder in ("lsbench", "gpu", "hpc", "instances", "workflows")
             for p in (ROOT / folder).rglob("*") if p.is_file() and p.suffix in (".py", ".csv", ".yaml", ".smk", ".j2")
             and "maxcut" in p.read_text(errors="replace").lower()]
    assert named == []
