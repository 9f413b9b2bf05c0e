"""lsbench: local search metaheuristics on CPU, GPU and clusters, with reproducible run records.

The CUDA code lives in the top-level folder `gpu/` and the cluster code in `hpc/` (where users look
for them); both install as `lsbench.gpu` and `lsbench.hpc` (pyproject's package-dir). Run from a
source checkout without installing, the same two names are mapped here, and nothing else is.
"""
import atexit
import importlib.util
import os
import sys
from pathlib import Path

__version__ = "0.2.0"

_SOURCE_FOLDERS = {"lsbench.gpu": "gpu", "lsbench.hpc": "hpc"}


class _SourceTreeFolders:
    """Finds lsbench.gpu and lsbench.hpc in a checkout's top-level folders (installed copies have
    them inside the package and never reach this finder)."""

    root = Path(__file__).resolve().parent.parent

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        folder = _SOURCE_FOLDERS.get(name)
        if folder is None or not (cls.root / folder / "__init__.py").exists():
            return None
        return importlib.util.spec_from_file_location(name, cls.root / folder / "__init__.py",
                                                      submodule_search_locations=[str(cls.root / folder)])


if not (Path(__file__).parent / "gpu").exists() and _SourceTreeFolders not in sys.meta_path:
    sys.meta_path.append(_SourceTreeFolders)


def loaded_source_files():
    """Repository paths of the lsbench modules this process has loaded: a benchmark's result file
    lists them, its child processes' too (LSBENCH_SOURCE_LOG), so that a figure is re-measured
    when code it ran changes (tests/test_run_path.py)."""
    files = set()
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None) if name == "lsbench" or name.startswith("lsbench.") else None
        if path:
            try:
                files.add(Path(path).resolve().relative_to(_SourceTreeFolders.root).as_posix())
            except ValueError:  # an installed copy outside a checkout: no repository path
                files.add(Path(path).resolve().as_posix())
    return files


def _log_loaded_source_files():
    with open(os.environ["LSBENCH_SOURCE_LOG"], "a") as log:
        log.write("".join(f"{path}\n" for path in sorted(loaded_source_files())))


if os.environ.get("LSBENCH_SOURCE_LOG"):
    atexit.register(_log_loaded_source_files)
