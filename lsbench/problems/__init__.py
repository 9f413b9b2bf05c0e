"""The problems lsbench knows, by the name used on the command line; each module is imported when
a run names its problem."""
from ..lazy import LazyClasses

PROBLEMS = LazyClasses({"qap": "lsbench.problems.qap:QAP", "pfsp": "lsbench.problems.pfsp:PFSP",
                        "tsp": "lsbench.problems.tsp:TSP", "ppp": "lsbench.problems.ppp:PPP",
                        "weierstrass": "lsbench.problems.weierstrass:Weierstrass"})
