"""The layer order of docs/architecture.md holds in the package's imports, and the check catches an
import that goes up."""
import shutil

import pytest

from conftest import ROOT
from import_graph import (SCRIPT_FOLDERS, gpu_layer_breaches, gpu_layers_from_doc, import_cycle, import_graph, layer_of,
                          layers_from_doc, script_graph, upward_imports)

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


def test_inside_gpu_engines_build_on_adapters_and_runtime_and_not_on_each_other():
    """docs/architecture.md's "Inside gpu/" table: runtime <- adapters <- kernels <- engines, no
    engine imports another but the pairs it lists as still to untangle (and each of those still
    exists), no kernel another."""
    layers, known = gpu_layers_from_doc((ROOT / "docs" / "architecture.md").read_text())
    graph = import_graph(ROOT)
    assert [len(row) for row in layers] == [6, 4, 1, 5]
    assert all(layer_of(m, layers) is not None for m in graph if m.startswith("lsbench.gpu")), \
        [m for m in graph if m.startswith("lsbench.gpu") and layer_of(m, layers) is None]
    assert gpu_layer_breaches(graph, layers, known) == ([], [])


@pytest.mark.parametrize("where, line, breach", [
    ("gpu/adapters/tsp_swap.py", "from ..engine.whole_gpu_tabu import WholeGpuTabu\n",
     ("lsbench.gpu.adapters.tsp_swap", "lsbench.gpu.engine.whole_gpu_tabu")),
    ("gpu/engine/iterated_greedy.py", "from .local_search import QUEUE_ITEM\n",
     ("lsbench.gpu.engine.iterated_greedy", "lsbench.gpu.engine.local_search")),
    ("gpu/engine/resident_pfsp.py", "from .local_search import QUEUE_ITEM\n",
     ("lsbench.gpu.engine.resident_pfsp", "lsbench.gpu.engine.local_search")),
    ("gpu/engine/whole_gpu_tabu.py", "from .resident_pfsp import refusal\n",
     ("lsbench.gpu.engine.whole_gpu_tabu", "lsbench.gpu.engine.resident_pfsp")),
    ("gpu/runtime/launch.py", "from ..adapters import adapter_for\n",
     ("lsbench.gpu.runtime.launch", "lsbench.gpu.adapters")),
])
def test_a_deliberate_wrong_import_inside_gpu_fails_the_check(tmp_path, where, line, breach):
    for folder in ("lsbench", "gpu", "hpc"):
        shutil.copytree(ROOT / folder, tmp_path / folder, ignore=shutil.ignore_patterns("__pycache__"))
    path = tmp_path / where
    path.write_text(line + path.read_text())
    layers, known = gpu_layers_from_doc((ROOT / "docs" / "architecture.md").read_text())
    assert breach in gpu_layer_breaches(import_graph(tmp_path), layers, known)[0]
