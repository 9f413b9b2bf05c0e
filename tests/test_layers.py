"""The layer order of docs/architecture.md holds in the package's imports, and the check catches an
import that goes up."""
import shutil

import pytest

from conftest import ROOT
from import_graph import SCRIPT_FOLDERS, import_cycle, import_graph, layers_from_doc, script_graph, upward_imports

LAYERS = layers_from_doc((ROOT / "docs" / "architecture.md").read_text())


def test_the_layer_table_names_seven_layers_from_the_cli_down_to_the_foundations():
    assert len(LAYERS) == 7 and "lsbench.cli" in LAYERS[0] and "lsbench.interfaces" in LAYERS[-1]


def test_every_module_imports_only_from_its_layer_or_below():
    graph = import_graph(ROOT)
    assert len(graph) > 30 and sum(map(len, graph.values())) > 60  # the walk saw the package
    upward, unplaced = upward_imports(graph, LAYERS)
    assert not unplaced, f"modules no layer of docs/architecture.md names: {unplaced}"
    assert not upward, f"imports that go up a layer: {upward}"


@pytest.mark.parametrize("where, line", [
    ("lsbench/interfaces.py", "from .search.common import Trajectory\n"),  # foundations -> searches
    ("lsbench/search/tabu.py", "    from ..backends.cpu import CpuEvaluator\n"),  # inside a function
    ("gpu/runtime/chunks.py", "from lsbench.runner import run\n"),  # engines -> runner
])
def test_a_deliberate_upward_import_in_a_copy_of_the_tree_fails_the_check(tmp_path, where, line):
    for folder in ("lsbench", "gpu", "hpc"):
        shutil.copytree(ROOT / folder, tmp_path / folder, ignore=shutil.ignore_patterns("__pycache__"))
    assert upward_imports(import_graph(tmp_path), LAYERS) == ([], [])
    target = tmp_path / where
    if line.startswith(" "):
        line = "\n\ndef _added():\n" + line
    target.write_text(target.read_text() + line)
    upward, _ = upward_imports(import_graph(tmp_path), LAYERS)
    assert upward, f"{where}: {line.strip()} went unnoticed"


def test_a_module_no_layer_names_fails_the_check(tmp_path):
    for folder in ("lsbench", "gpu", "hpc"):
        shutil.copytree(ROOT / folder, tmp_path / folder, ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "lsbench" / "newcomer.py").write_text("from . import errors\n")
    assert upward_imports(import_graph(tmp_path), LAYERS)[1] == ["lsbench.newcomer"]


def test_no_import_cycle_in_the_package():
    cycle = import_cycle(import_graph(ROOT))
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_no_import_cycle_among_the_scripts_of_the_tree():
    """benchmarks/, benchmarks/research/, workflows/scripts/ and tests/ import each other by bare
    name: no circle there either (islands_target.py <-> pool_resample.py and plan_left.py <->
    report_from_records.py were two)."""
    graph = script_graph(ROOT)
    assert "workflows/scripts/report_from_records.py" in graph and graph["workflows/scripts/report_from_records.py"]
    cycle = import_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_a_deliberate_script_circle_in_a_copy_of_the_tree_fails_the_check(tmp_path):
    for folder in SCRIPT_FOLDERS:
        shutil.copytree(ROOT / folder, tmp_path / folder, ignore=shutil.ignore_patterns("__pycache__", "results"),
                        dirs_exist_ok=True)
    plan_left = tmp_path / "workflows" / "scripts" / "plan_left.py"
    plan_left.write_text(plan_left.read_text() + "\n\ndef late():\n    from report_from_records import report\n")
    assert import_cycle(script_graph(tmp_path)) == ["workflows/scripts/plan_left.py",
                                                    "workflows/scripts/report_from_records.py",
                                                    "workflows/scripts/plan_left.py"]
