"""Classes named as "module:Class" and imported on first use: a run loads only the modules it runs
(and a figure's `source_files` lists only those)."""
from collections.abc import Mapping

from .plugins import load


def load_class(path, what="class"):
    return load(path, what)


class LazyClasses(Mapping):
    """name -> class, each class imported on first use from its "module:Class" (a plug-in's that
    cannot load, or fails `check(name, cls, path)`, is one error line naming it)."""

    def __init__(self, paths, what="class", check=None):
        self.paths, self.what, self.check = paths, what, check

    def __getitem__(self, name):
        cls = load(self.paths[name], f"{self.what} {name!r}:")
        return self.check(name, cls, self.paths[name]) if self.check else cls

    def __iter__(self):
        return iter(self.paths)

    def __len__(self):
        return len(self.paths)
