"""Where a cas generation's time goes with --backend gpu-resident: the host's colony work
(pheromone update, construction, seeds), the device start states, and the tabu search kernel.

    python benchmarks/profile_cas.py tai80b [generations [LANES [THREADS REGISTERS]]]
(LANES per O(n) recomputation, 0: the default; THREADS per block with REGISTERS per thread)
Then the last generation's pieces, medians of 100: the kernel alone (CUDA events), one launch of
it with no iterations through Numba's dispatcher and through the prepared launcher (each waited
for), and the copies of a generation.
"""
import sys
import statistics
import time

import numpy as np

from numba import cuda

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


def median_us(fn, reps=100):
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        cuda.synchronize()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e6


eng = ev.engine
blocks, threads, shared, args = eng.last_launch
idle = args[:-3] + (0, args[-2], 0)  # no iterations, state kept: the launch alone
start, end = cuda.event(), cuda.event()


def kernel_only():
    start.record()
    eng.launch(blocks, threads, shared, args)
    end.record()
    end.synchronize()
    kernel_times.append(cuda.event_elapsed_time(start, end) * 1e3)


kernel_times = []
median_us(kernel_only)
P, STATE, BEST, BEST_SOL = (eng._buffers[1][k] for k in (0, 7, 9, 10))
(up, host_up), (down, host_down) = eng._transfers
sols, states = children.astype(np.int32), seeds.astype(np.uint64)
print(f"kernel alone {statistics.median(kernel_times):.0f} us; a launch with no iterations: dispatcher "
      f"{median_us(lambda: eng.kernel[blocks, threads, 0, shared](*idle)):.0f} us, prepared launcher "
      f"{median_us(lambda: eng.launch(blocks, threads, shared, idle)):.0f} us")
print(f"copies one by one from pageable memory: ants up {median_us(lambda: P.copy_to_device(sols)):.0f} us, "
      f"seeds up {median_us(lambda: STATE.copy_to_device(states)):.0f} us, bests down "
      f"{median_us(lambda: BEST.copy_to_host()):.0f} us, best ants down {median_us(lambda: BEST_SOL.copy_to_host()):.0f} us; "
      f"packed and pinned: up {median_us(lambda: up.copy_to_device(host_up['all'])):.0f} us, down "
      f"{median_us(lambda: down.copy_to_host(host_down['all'])):.0f} us")
