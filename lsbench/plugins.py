"""Problems and device adapters from installed packages, through entry points:

    [project.entry-points."lsbench.problems"]      NAME = "module:ProblemClass"   (NAME: the --problem kind)
    [project.entry-points."lsbench.adapters"]      "NAME:NEIGHBOURHOOD" = "module:AdapterClass"
    [project.entry-points."lsbench.instances"]     NAME = "module:function"  (returns an instance manifest CSV's path)

lsbench's own problems and adapters register the same way (its pyproject.toml); a source tree that
is not installed (no package metadata: a device machine's PYTHONPATH copy) reads its own entries from
BUILTIN. A plug-in is only named here and imported when a run uses it: one that cannot be imported,
or lacks what a problem must have, is one error line naming it then, and the other problems run as
before. A name that another package already registers is left out, with one warning line naming
both, so that a plug-in never replaces a problem a user already has."""
import importlib
import sys
from importlib import metadata

from .errors import LsbenchError

GROUPS = ("lsbench.problems", "lsbench.adapters", "lsbench.instances")
OWN = "lsbench"
# lsbench's own entry points, as its pyproject.toml declares them (tests/test_plugins.py checks the two agree)
BUILTIN = {
    "lsbench.problems": {"qap": "lsbench.problems.qap:QAP", "pfsp": "lsbench.problems.pfsp:PFSP",
                         "tsp": "lsbench.problems.tsp:TSP", "ppp": "lsbench.problems.ppp:PPP",
                         "weierstrass": "lsbench.problems.weierstrass:Weierstrass"},
    "lsbench.adapters": {"tsp:2opt": "lsbench.gpu.adapters.tsp_two_opt:adapter",
                         "tsp:swap": "lsbench.gpu.adapters.tsp_swap:TspSwapAdapter",
                         "qap:swap": "lsbench.gpu.adapters.qap_swap:QapSwapAdapter",
                         "pfsp:insertion": "lsbench.gpu.adapters.pfsp_insertion:PfspInsertionAdapter",
                         **{f"ppp:hamming{k}": "lsbench.gpu.adapters.ppp_flip:PppFlipAdapter" for k in (1, 2, 3)}},
    "lsbench.instances": {"lsbench": "lsbench.instances:own_manifest"},
}
PLUGIN_OF = {}  # "module:Class" -> the distribution that registered it (for error lines)


def registered(group):
    """{name: "module:Class"} of every installed package's entry points in `group`, lsbench's own
    first; a name registered twice keeps the first and warns once, naming both packages."""
    found = [(ep.dist.name if ep.dist else "?", ep.name, ep.value) for ep in metadata.entry_points(group=group)]
    order = list(BUILTIN[group])  # lsbench's own in the order its messages list them
    own = sorted((f for f in found if f[0] == OWN), key=lambda f: order.index(f[1]) if f[1] in order else len(order)) \
        or [(OWN, name, value) for name, value in BUILTIN[group].items()]
    table, owner = {}, {}
    for dist, name, value in own + sorted(f for f in found if f[0] != OWN):
        if name in table and table[name] != value:
            print(f"lsbench: warning: plug-in {dist} registers {group} {name!r}, which {owner[name]} already "
                  "registers: left out", file=sys.stderr)
            continue
        table[name], owner[name] = value, dist
        PLUGIN_OF[value] = dist
    return table


def load(value, what):
    """The class an entry point names, or one error line naming the plug-in and why it cannot load."""
    module, _, name = value.partition(":")
    if module == OWN or module.startswith(OWN + "."):  # lsbench's own: a failure is a bug, with its traceback
        return getattr(importlib.import_module(module), name)
    try:
        return getattr(importlib.import_module(module), name)
    except Exception as e:  # an import error, a syntax error, a missing name: the plug-in's, not ours
        raise LsbenchError(f"{what} {value} (from {PLUGIN_OF.get(value, 'a plug-in')}) cannot be loaded: "
                           f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}".rstrip(": ")) from None
