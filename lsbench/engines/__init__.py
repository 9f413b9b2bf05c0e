"""Engines (seam 2): K seeds in, K SearchResults out. The CPU engines live here: a search over an
evaluator (`over_evaluator`, every iteration-level run), the cas colony (`cas`) and K iterated greedy
searches (`iterated_greedy`); the GPU-resident engines live in `lsbench.gpu`."""
