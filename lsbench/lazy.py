"""Classes named as "module:Class" and imported on first use: a run loads only the modules it runs
(and a figure's `source_files` lists only those)."""
import importlib
from collections.abc import Mapping


def load_class(path):
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


class LazyClasses(Mapping):
    """name -> class, each class imported on first use from its "module:Class"."""

    def __init__(self, paths):
        self.paths = paths

    def __getitem__(self, name):
        return load_class(self.paths[name])

    def __iter__(self):
        return iter(self.paths)

    def __len__(self):
        return len(self.paths)
