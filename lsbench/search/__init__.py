"""Search algorithms over the evaluator interface (tabu.py, hill_climbing.py) and the cas colony
(cas.py); lsbench.registry lists them by their command-line names."""
