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
               "lsbench/neighborhoods.py", "lsbench/rng.py")
CITED = r"[a-z_]+-[a-z0-9]+-[0-9a-f]{7}(?:-\d+)?\.json"  # <benchmark>-<gpu>-<commit>[-k].json


class CannotCompare(Exception):
    """No git history to compare with (not a checkout, or a shallow clone without the commit)."""


def git(*args):
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)


def code_of(source):
    """A module's code without its comments and docstrings (what a comment edit leaves unchanged)."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            node.body = body[1:] or [ast.Pass()]
    return ast.dump(tree)


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
    if ran is not None and all(not p.startswith("/") for p in ran):
        files = {p for p in ran if engine_file(p)}
        gone = sorted(files - (then & now))
        if gone:
            return [f"{p} removed since {commit}" for p in gone]
    else:  # (it lists no files it ran: every engine file counts)
        if then != now:
            return [f"engine files added or removed since {commit}"]
        files = now
    return [f"{path} changed after {commit}" for path in sorted(files)
            if code_of(git("show", f"{commit}:{path}").stdout) != code_of((ROOT / path).read_text())]


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
