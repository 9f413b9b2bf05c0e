"""Search algorithms, by the name used on the command line."""
from .cas import CunningAntSystem
from .hill_climbing import HillClimbing
from .tabu import RobustTabuSearch, TabuSearch

ALGORITHMS = {"tabu": TabuSearch, "rots": RobustTabuSearch, "hc": HillClimbing, "cas": CunningAntSystem}
