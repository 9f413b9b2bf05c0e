"""Problem device adapters of the resident engine: on-chip state, move costs, moves, tabu attributes.

ADAPTERS lists them: (problem kind, neighbourhood) -> "module:Class", loaded only when a run uses
it. `--algorithm hc|tabu --backend gpu-resident` runs on every problem with an entry here
(lsbench.registry); a new problem's adapter is one module of this folder and one entry.
"""
import importlib

from lsbench.errors import LsbenchError

ADAPTERS = {("tsp", "2opt"): "lsbench.gpu.adapters.tsp_two_opt:TspTwoOptAdapter",
            ("tsp", "swap"): "lsbench.gpu.adapters.tsp_swap:TspSwapAdapter",
            ("qap", "swap"): "lsbench.gpu.adapters.qap_swap:QapSwapAdapter",
            ("pfsp", "insertion"): "lsbench.gpu.adapters.pfsp_insertion:PfspInsertionAdapter",
            **{("ppp", f"hamming{k}"): "lsbench.gpu.adapters.ppp_flip:PppFlipAdapter" for k in (1, 2, 3)}}


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
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)(problem, neighbourhood)
