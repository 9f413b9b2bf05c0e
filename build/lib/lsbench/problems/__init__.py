"""The problems lsbench knows, by the name used on the command line."""
from .pfsp import PFSP
from .ppp import PPP
from .qap import QAP
from .tsp import TSP
from .weierstrass import Weierstrass

PROBLEMS = {"qap": QAP, "pfsp": PFSP, "tsp": TSP, "ppp": PPP, "weierstrass": Weierstrass}
