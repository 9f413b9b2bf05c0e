"""The problems lsbench knows, by the name used on the command line: every installed package's
`lsbench.problems` entry points, lsbench's own five among them (lsbench.plugins); each module is
imported when a run names its problem, and checked to be a problem then."""
from ..lazy import LazyClasses
from ..plugins import registered

# what docs/architecture.md's "Add a problem" asks of a problem class (`from_file` too where instances
# come from files; PPP and Weierstrass are generated from their names)
REQUIRED = ("kind", "neighbourhoods", "default_neighbourhood", "objective", "random_solution", "check_solution",
            "describe")


def check_problem_class(name, cls, value):
    """The class an entry point `name` names is a problem of that kind, or one error line naming the
    plug-in and what the class lacks."""
    from ..errors import LsbenchError
    from ..plugins import PLUGIN_OF
    from .base import Problem
    if not isinstance(cls, type) or not issubclass(cls, Problem):
        why = "is not a subclass of lsbench's Problem"
    elif missing := [attr for attr in REQUIRED if not hasattr(cls, attr)]:
        why = f"lacks {', '.join(missing)}"
    elif cls.kind != name:
        why = f"its kind is {cls.kind!r}, not the name it is registered under"
    else:
        return cls
    raise LsbenchError(f"problem {name!r} ({value}, from {PLUGIN_OF.get(value, 'a plug-in')}): {why}")


PROBLEMS = LazyClasses(registered("lsbench.problems"), "problem", check_problem_class)
