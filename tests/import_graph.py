"""The package's import graph, read from its source (no import runs), and the layer order that
docs/architecture.md states: tests/test_layers.py checks one against the other."""
import ast
import re
from pathlib import Path

PACKAGE_FOLDERS = {"lsbench": "lsbench", "gpu": "lsbench.gpu", "hpc": "lsbench.hpc"}  # pyproject's package-dir


def module_of(path, root):
    parts = list(path.relative_to(root).with_suffix("").parts)
    parts = PACKAGE_FOLDERS[parts[0]].split(".") + parts[1:]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(root):
    """{module: modules it imports}: every import of an lsbench module, at the top or inside a
    function; importing a module also runs the packages above it (those not already above the
    importer)."""
    files = [p for d in PACKAGE_FOLDERS for p in (Path(root) / d).rglob("*.py")]
    modules = {module_of(p, root): p for p in files}
    graph = {m: set() for m in modules}
    for mod, path in modules.items():
        package = mod if path.name == "__init__.py" else mod.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(path.read_text())):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")
                    anchor = anchor[:len(anchor) - node.level + 1]
                    base = ".".join(anchor + ([base] if base else []))
                targets = [base] + [f"{base}.{a.name}" for a in node.names]
            for t in targets:
                while t and t.startswith("lsbench") and not (mod + ".").startswith(t + "."):
                    if t in modules:
                        graph[mod].add(t)
                    t = t.rpartition(".")[0]
    return graph


def layers_from_doc(text):
    """[[module prefix, ...], ...], top layer first, from the "Layers" table of docs/architecture.md."""
    section = text.split("## Layers", 1)[1].split("\n## ", 1)[0].split("\n### ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("|")][2:]
    return [re.findall(r"`([a-z_.]+)`", row.split("|")[2]) for row in rows]


def layer_of(module, layers):
    """The index of the layer whose longest prefix names `module` (0 = top)."""
    best = None
    for index, prefixes in enumerate(layers):
        for prefix in prefixes:
            # "lsbench" names the package's own __init__ alone, a longer name a module or a whole package
            if module == prefix or (prefix != "lsbench" and module.startswith(prefix + ".")):
                if best is None or len(prefix) > best[1]:
                    best = (index, len(prefix))
    return None if best is None else best[0]


def upward_imports(graph, layers):
    """(importer, imported) pairs where the imported module sits in a higher layer, and modules that
    no layer names."""
    unplaced = sorted(m for m in graph if layer_of(m, layers) is None)
    upward = sorted((m, t) for m, targets in graph.items() for t in targets
                    if None not in (layer_of(m, layers), layer_of(t, layers)) and layer_of(t, layers) < layer_of(m, layers))
    return upward, unplaced


SCRIPT_FOLDERS = ("benchmarks", "benchmarks/research", "workflows/scripts", "tests")
SHARED_SCRIPT_FOLDERS = ("benchmarks", "workflows/scripts", "tests")  # folders other scripts put on sys.path


def script_graph(root):
    """{script path: script paths it imports} of the scripts outside the package (they import each
    other by bare name, their folders on sys.path): a name resolves to a file of the importer's own
    folder first, else of a folder that scripts share."""
    root = Path(root)
    graph = {}
    for folder in SCRIPT_FOLDERS:
        for path in sorted((root / folder).glob("*.py")):
            graph[path.relative_to(root).as_posix()] = set()
    for script in graph:
        own = Path(script).parent.as_posix()
        for node in ast.walk(ast.parse((root / script).read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module] if isinstance(node, ast.ImportFrom) and not node.level and node.module else []
            for name in (n.split(".")[0] for n in names):
                found = next((f"{folder}/{name}.py" for folder in (own, *SHARED_SCRIPT_FOLDERS)
                              if f"{folder}/{name}.py" in graph), None)
                if found and found != script:
                    graph[script].add(found)
    return graph


def import_cycle(graph):
    """One import cycle of `graph` as a list of its nodes (the first node again at its end), or None."""
    state, path = {}, []

    def visit(m):
        state[m] = "open"
        path.append(m)
        for n in sorted(graph[m]):
            if state.get(n) == "open":
                return path[path.index(n):] + [n]
            if n not in state:
                found = visit(n)
                if found:
                    return found
        path.pop()
        state[m] = "done"
        return None
    for m in sorted(graph):
        if m not in state:
            found = visit(m)
            if found:
                return found
    return None


def gpu_layers_from_doc(text):
    """([[module prefix, ...], ...] of docs/architecture.md's "Inside gpu/" table, top first;
    {(engine, engine)} of its list of engine imports still to untangle)."""
    section = text.split("### Inside gpu/", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("|")][2:]
    layers = [re.findall(r"`([a-z_.]+)`", row.split("|")[2]) for row in rows]
    known = set(re.findall(r"`([a-z_.]+) -> ([a-z_.]+)`", section))
    return layers, known


def gpu_layer_breaches(graph, layers, known):
    """(imports that go up a gpu sub-layer or from one module of the engines' or the kernels' row
    to another of its row, [(a, b), ...]; the engine pairs of `known` that no import makes any more)."""

    def owner(module):
        """(row, the name of the engines' or kernels' row that `module` is or is inside), or None."""
        for r, row in enumerate(layers[:2]):
            name = max((e for e in row if module == e or module.startswith(e + ".")), key=len, default=None)
            if name:
                return r, name
        return None
    breaches, pairs = [], set()
    for module in sorted(m for m in graph if m.startswith("lsbench.gpu")):
        for target in sorted(t for t in graph[module] if t.startswith("lsbench.gpu")):
            mine, theirs = layer_of(module, layers), layer_of(target, layers)
            if mine is not None and theirs is not None and theirs < mine:
                breaches.append((module, target))
            a, b = owner(module), owner(target)
            if a and b and a[0] == b[0] and a != b:
                pairs.add((a[1], b[1]))
                if (a[1], b[1]) not in known:
                    breaches.append((module, target))
    return breaches, sorted(known - pairs)
