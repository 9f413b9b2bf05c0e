"""Which figures of docs/performance.md the working tree has made stale: a cited result file is stale
when engine code it ran (its `source_files`, or every engine file where it lists none) differs,
comments and docstrings aside, from the commit it was measured at. Prints each stale figure with
the files that changed and the command that re-measures it, so that a session re-measures only
those; exit 1 if any is stale, 0 if none.

    python benchmarks/stale_figures.py
"""
import ast
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENGINE_CODE = ("gpu", "lsbench/engines", "lsbench/search", "lsbench/problems", "lsbench/backends",
               "lsbench/neighborhoods.py", "lsbench/rng.py", "examples/maxcut/lsbench_maxcut")
CITED = r"[a-z_]+-[a-z0-9]+-[0-9a-f]{7}(?:-\d+)?\.json"  # <benchmark>-<gpu>-<commit>[-k].json


class CannotCompare(Exception):
    """No git history to compare with (not a checkout, or a shallow clone without the commit)."""


def git(*args):
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)


def code_of(source, path=None, moved=None):
    """A module's code without its comments and docstrings (what a comment edit leaves unchanged).
    With its `path`, the imports are written absolute, and a module that moved (`moved`: old
    module -> new, from git's renames) is named by its new name, in the import and wherever the
    code uses it: a file moved with only its import lines changed keeps its code."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            node.body = body[1:] or [ast.Pass()]
    if path is not None:
        tree = ImportsByModule(module_of(path), path.endswith("__init__.py"), moved or {}).visit(tree)
    return ast.dump(tree)


PACKAGES = (("gpu/", "lsbench.gpu."), ("hpc/", "lsbench.hpc."))  # (installed under lsbench, pyproject.toml)


def module_of(path):
    """The module a source file is imported as (gpu/x.py: lsbench.gpu.x; lsbench/y/__init__.py: lsbench.y)."""
    name = path[:-3].replace("/", ".")
    for folder, package in PACKAGES:
        if path.startswith(folder):
            name = package + path[len(folder):-3].replace("/", ".")
    return name[:-len(".__init__")] if name.endswith(".__init__") else name


class ImportsByModule(ast.NodeTransformer):
    """Imports made absolute, moved modules under their new names, and a name bound to a moved
    module replaced by that module's name throughout (`from . import rots_device` then
    `rots_device.f` reads the same as `from .rots import device` then `device.f`)."""

    def __init__(self, module, is_package, moved):
        self.package = module if is_package else module.rpartition(".")[0]
        self.moved = moved
        self.new_modules = set(moved.values())
        self.bound = {}

    def visit_Module(self, node):
        for imp in ast.walk(node):  # the names that modules are bound to, before any use is rewritten
            if isinstance(imp, ast.ImportFrom):
                for alias in imp.names:
                    full = self.renamed(f"{self.renamed(self.absolute(imp))}.{alias.name}")
                    if full in self.new_modules:
                        self.bound[alias.asname or alias.name] = full
        return self.generic_visit(node)

    def absolute(self, node):
        base = self.package.split(".")[:len(self.package.split(".")) - (node.level - 1)] if node.level else []
        return ".".join(base + ([node.module] if node.module else []))

    def renamed(self, module):
        return self.moved.get(module, module)

    def visit_ImportFrom(self, node):
        """`from P import m` of a moved module m reads `import <m's new name>`; other names stay."""
        module = self.renamed(self.absolute(node))
        modules = [self.renamed(f"{module}.{a.name}") for a in node.names]
        names = [a for a, full in zip(node.names, modules) if full not in self.new_modules]
        nodes = [ast.Import(names=[ast.alias(name=full)]) for full in modules if full in self.new_modules]
        return nodes + ([ast.ImportFrom(module=module, names=names, level=0)] if names else [])

    def visit_Import(self, node):
        return ast.Import(names=[ast.alias(name=self.renamed(a.name), asname=a.asname) for a in node.names])

    def visit_Name(self, node):
        return ast.Name(id=self.bound.get(node.id, node.id), ctx=node.ctx)


def engine_file(path):
    return any(path == d or path.startswith(d + "/") for d in ENGINE_CODE) and path.endswith(".py")


def cited_results():
    """The result files docs/performance.md names, in the order it names them."""
    return list(dict.fromkeys(re.findall(CITED, (ROOT / "docs" / "performance.md").read_text())))


def stale_reasons(name):
    """Why the figure of result file `name` no longer describes the working tree ([] if it does)."""
    commit = name.split("-")[2].split(".")[0]
    if git("rev-parse", "HEAD").returncode != 0:
        raise CannotCompare("not a git checkout: the commits cannot be compared")
    if git("cat-file", "-e", f"{commit}^{{commit}}").returncode != 0:
        raise CannotCompare(f"commit {commit} is not in this clone's history (a shallow clone)")
    if git("merge-base", "--is-ancestor", commit, "HEAD").returncode != 0:
        return [f"its commit {commit} is not an ancestor of HEAD"]
    now = {str(p.relative_to(ROOT)) for d in ENGINE_CODE
           for p in ([ROOT / d] if d.endswith(".py") else (ROOT / d).rglob("*.py"))}
    then = {f for f in git("ls-tree", "-r", "--name-only", commit, "--", *ENGINE_CODE).stdout.split()
            if f.endswith(".py")}
    ran = json.loads((ROOT / "benchmarks" / "results" / name).read_text()).get("source_files")
    moves = moved_files(commit)
    now_of = {p: moves.get(p, p) for p in then}  # each file of then, where it is now
    moved = {module_of(p): module_of(q) for p, q in moves.items()}
    if ran is not None and all(not p.startswith("/") for p in ran):
        files = {p for p in ran if engine_file(p)}
        gone = sorted(p for p in files if p not in then or now_of[p] not in now)
        if gone:
            return [f"{p} removed since {commit}" for p in gone]
    else:  # (it lists no files it ran: every engine file counts)
        if set(now_of.values()) != now:
            return [f"engine files added or removed since {commit}"]
        files = then
    return [f"{path} changed after {commit}" + (f" (now {now_of[path]})" if now_of[path] != path else "")
            for path in sorted(files)
            if code_of(git("show", f"{commit}:{path}").stdout, path, moved)
            != code_of((ROOT / now_of[path]).read_text(), now_of[path], moved)]


def moved_files(commit):
    """{path at commit: path now} of the Python files git finds renamed since `commit` (the working
    tree's tracked files; the code is compared after, so a pairing git guesses wrong only reads stale)."""
    out = git("diff", "-M", "--name-status", "--diff-filter=R", commit, "--").stdout
    moves = {}
    for line in out.splitlines():
        _status, old, new = line.split("\t")
        if old.endswith(".py") and new.endswith(".py"):
            moves[old] = new
    return moves


def main():
    stale = 0
    for name in cited_results():
        try:
            reasons = stale_reasons(name)
        except CannotCompare as e:
            print(f"stale_figures: error: {e}", file=sys.stderr)
            return 2
        if reasons:
            stale += 1
            command = json.loads((ROOT / "benchmarks" / "results" / name).read_text()).get("command", "?")
            print(f"{name}: {'; '.join(reasons)}\n  re-measure: {command}")
    print(f"{stale} of {len(cited_results())} cited figures stale")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
