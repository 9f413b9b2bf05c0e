"""lsbench: local search metaheuristics on CPU, GPU and clusters, with reproducible run records."""

__version__ = "0.1.0"
