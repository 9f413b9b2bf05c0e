"""Where a cas generation's time goes with --backend gpu-resident: with the colony on the host
(colony_batch each generation: the host's pheromone update and seeds, the device's ant
construction, start states and tabu search), then the whole loop on the device (gpu/engine/colony.py).

    python benchmarks/profile_cas.py tai80b [generations [LANES [THREADS REGISTERS]]]
(LANES per O(n) recomputation, 0: the default; THREADS per block with REGISTERS per thread)
Then the last generation's pieces, medians of 100: the kernel alone (CUDA events), one launch of
it with no iterations through Numba's dispatcher and through the prepared launcher (each waited
for), and a generation's copy up and copy down.
"""
import sys
import statistics
import time

import numpy as np

from numba import cuda

from common import median_of, timed

from lsbench.gpu.engine.colony import run_generations
from lsbench.gpu.engine.rots.host import ResidentRots
from lsbench import instances as registry
from lsbench import rng
from lsbench.engines.cas import CunningAntSystem, draw_seeds, update_pheromone
from lsbench.interfaces import Stop
from lsbench.search.common import Trajectory

p = registry.load(sys.argv[1] if len(sys.argv) > 1 else "tai80b")
gens = int(sys.argv[2]) if len(sys.argv) > 2 else 10
prm = CunningAntSystem().params(p)
shape = {"threads": int(sys.argv[4]), "max_registers": int(sys.argv[5])} if len(sys.argv) > 5 else {}
eng = ResidentRots(p, {}, group=(int(sys.argv[3]) or None) if len(sys.argv) > 3 else None, **shape)
m, its = prm["ants"], prm["ls_iterations"]
state = rng.new_state(1)
ants = np.array([rng.permutation(state, p.n) for _ in range(m)])
costs = np.empty(m, dtype=np.int64)
eng.local_search_batch(p.a, p.at, p.b, ants, draw_seeds(state, m), costs, its, prm["tenure"], True)  # compile
tau = np.full((p.n, p.n), 1.0 / ((1.0 - prm["rho"]) * costs.min()))
update_pheromone(tau.copy(), ants, costs, int(costs.min()), prm["rho"], prm["p_best"])
host = batch = loop = 0.0
for _ in range(gens):
    t0 = time.perf_counter()
    update_pheromone(tau, ants, costs, int(costs.min()), prm["rho"], prm["p_best"])
    colony_seeds = draw_seeds(state, m)
    seeds = draw_seeds(state, m)
    t1 = time.perf_counter()
    child_costs = np.empty(m, dtype=np.int64)
    children = eng.colony_batch(ants, tau, prm["gamma"], colony_seeds, seeds, child_costs, its, prm["tenure"])
    t2 = time.perf_counter()
    host, batch, loop = host + t1 - t0, batch + t2 - t1, loop + eng.loop_s
    better = child_costs <= costs
    ants[better], costs[better] = children[better], child_costs[better]
ms = 1000 / gens
print(f"{p.name}: {m} ants x {its} iterations, shape {eng.describe()}")
print(f"host loop, per generation: host colony {host * ms:.2f} ms, local searches {batch * ms:.2f} ms "
      f"(search loop {loop * ms:.2f} ms = {loop / gens / its * 1e6:.1f} us per iteration, ants built in it; start states and copies "
      f"{(batch - loop) * ms:.2f} ms)")
device_loop = []
for _ in range(3):  # the generation loop on the device (what cas --backend gpu-resident runs), waited for
    t0 = time.perf_counter()
    done, _, _, _ = run_generations(eng, ants.copy(), costs.copy(), tau.copy(), int(costs.min()), ants[0].copy(), 0,
                                   state.copy(), prm, Stop(iterations=gens * m * its), Trajectory(), None)
    device_loop.append((time.perf_counter() - t0) / done)
print(f"device loop: {statistics.median(device_loop) * 1000:.2f} ms per generation (median of 3 x {gens} generations)")


def median_us(fn, reps=100):
    """fn's median wall time, waited for, in microseconds."""
    return median_of(lambda: timed(lambda: (fn(), cuda.synchronize())), reps)[0] * 1e6


blocks, threads, shared, args = eng.last_launch
idle = args[:-5] + (0, args[-4], 0, args[-2], -1.0)  # no iterations and no ant, state kept: the launch alone
start, end = cuda.event(), cuda.event()


def kernel_only():
    start.record()
    eng.launch(blocks, threads, shared, args)
    end.record()
    end.synchronize()
    kernel_times.append(cuda.event_elapsed_time(start, end) * 1e3)


kernel_times = []
median_us(kernel_only)
b = eng.buffers(m)
up, host_up, down, host_down = b.upload, b.host_upload, b.download, b.host_download
print(f"kernel alone {statistics.median(kernel_times):.0f} us; a launch with no iterations: dispatcher "
      f"{median_us(lambda: eng.kernel[blocks, threads, 0, shared](*idle)):.0f} us, prepared launcher "
      f"{median_us(lambda: eng.launch(blocks, threads, shared, idle)):.0f} us; a generation's copies (pinned, "
      f"packed): up {median_us(lambda: up.copy_to_device(host_up['all'])):.0f} us, down "
      f"{median_us(lambda: down.copy_to_host(host_down['all'])):.0f} us")
