"""Where a cas generation's time goes with --backend gpu-resident: the host's colony work
(pheromone update, construction, seeds), the device start states, and the tabu search kernel.

    python benchmarks/profile_cas.py tai80b [generations [LANES [THREADS REGISTERS]]]
(LANES per O(n) recomputation, 0: the default; THREADS per block with REGISTERS per thread)
"""
import sys
import time

import numpy as np

from gpu.resident import ResidentLocalSearch
from lsbench import instances as registry
from lsbench import rng
from lsbench.search.cas import CunningAntSystem, construct_colony_parallel, draw_seeds, update_pheromone

p = registry.load(sys.argv[1] if len(sys.argv) > 1 else "tai80b")
gens = int(sys.argv[2]) if len(sys.argv) > 2 else 10
prm = CunningAntSystem().params(p)
ev = ResidentLocalSearch().bind(p, p.neighbourhood())
if len(sys.argv) > 3:
    from gpu.resident import ResidentRots
    shape = {"threads": int(sys.argv[4]), "max_registers": int(sys.argv[5])} if len(sys.argv) > 5 else {}
    ev.engine = ResidentRots(p, {}, group=int(sys.argv[3]) or None, **shape)
    ev.local_search_batch = ev.engine.local_search_batch
m, its = prm["ants"], prm["ls_iterations"]
state = rng.new_state(1)
ants = np.array([rng.permutation(state, p.n) for _ in range(m)])
costs = np.empty(m, dtype=np.int64)
ev.local_search_batch(p.a, p.at, p.b, ants, draw_seeds(state, m), costs, its, prm["tenure"], True)  # compile
tau = np.full((p.n, p.n), 1.0 / ((1.0 - prm["rho"]) * costs.min()))
construct_colony_parallel(ants, tau, prm["gamma"], draw_seeds(state, m))  # compile
update_pheromone(tau.copy(), ants, costs, int(costs.min()), prm["rho"], prm["p_best"])
host = batch = loop = 0.0
for _ in range(gens):
    t0 = time.perf_counter()
    update_pheromone(tau, ants, costs, int(costs.min()), prm["rho"], prm["p_best"])
    children = construct_colony_parallel(ants, tau, prm["gamma"], draw_seeds(state, m))
    seeds = draw_seeds(state, m)
    t1 = time.perf_counter()
    child_costs = np.empty(m, dtype=np.int64)
    ev.local_search_batch(p.a, p.at, p.b, children, seeds, child_costs, its, prm["tenure"], True)
    t2 = time.perf_counter()
    host, batch, loop = host + t1 - t0, batch + t2 - t1, loop + ev.engine.loop_s
    better = child_costs <= costs
    ants[better], costs[better] = children[better], child_costs[better]
ms = 1000 / gens
print(f"{p.name}: {m} ants x {its} iterations, shape {ev.engine.describe()}")
print(f"per generation: host colony {host * ms:.2f} ms, local searches {batch * ms:.2f} ms "
      f"(search loop {loop * ms:.2f} ms = {loop / gens / its * 1e6:.1f} us per iteration; start states and copies "
      f"{(batch - loop) * ms:.2f} ms)")
