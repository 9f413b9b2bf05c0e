"""Problem device adapters of the resident engine: on-chip state, move costs, moves, tabu attributes.

ADAPTERS lists them: (problem kind, neighbourhood) -> "module:Class", from every installed
package's `lsbench.adapters` entry points named "KIND:NEIGHBOURHOOD" (lsbench's own among them:
lsbench.plugins), each loaded only when a run uses it. `--algorithm hc|tabu --backend gpu-resident`
runs on every problem with an entry here (lsbench.registry).
"""
from lsbench.errors import LsbenchError
from lsbench.plugins import load, registered

ADAPTERS = {tuple(name.split(":", 1)): value for name, value in registered("lsbench.adapters").items() if ":" in name}


def has_adapter(kind):
    """Whether problems of this kind have a device adapter for some neighbourhood."""
    return any(k == kind for k, _nb in ADAPTERS)


def adapter_for(problem, neighbourhood):
    """The problem's device adapter for this neighbourhood (its class may still refuse the
    instance with an LsbenchError); LsbenchError where it has none."""
    path = ADAPTERS.get((problem.kind, neighbourhood.name))
    if path is None:
        have = [nb for kind, nb in ADAPTERS if kind == problem.kind]
        raise LsbenchError(f"no device adapter for {neighbourhood.name} on {problem.kind}"
                           + (f" (it has: {', '.join(have)})" if have else ""))
    return load(path, f"device adapter {problem.kind}:{neighbourhood.name}")(problem, neighbourhood)
