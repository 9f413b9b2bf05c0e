"""One resident 2-opt launch to profile under Nsight Compute (ncu): where does a small instance's
iteration go (issue 86, item 3)? (Line information is not asked for: NVVM refuses Numba's symbol
names with it.)

    python research/profile_two_opt.py INSTANCE SEARCHES hc|tabu [THREADS] [ROWS] [ITERATIONS]
        (device_run.sh 'ncu-2opt INSTANCE SEARCHES hc|tabu ...': ncu --kernel-name regex:^kernel
         --launch-skip 1 --launch-count 1; the first launch is the warm-up's)

Without ncu it prints the launch's iterations a second a search and microseconds an iteration.
"""
import sys

from lsbench import instances as registry
from lsbench.gpu.adapters.tsp_two_opt import adapter
from lsbench.gpu.engine.local_search import ResidentLocalSearch
from lsbench.interfaces import Stop
from lsbench.search.tabu import TabuSearch


def main(argv):
    name, searches, algorithm = argv[0], int(argv[1]), argv[2]
    threads = int(argv[3]) if len(argv) > 3 and argv[3] != "auto" else None
    rows = int(argv[4]) if len(argv) > 4 and argv[4] != "auto" else None
    iterations = int(argv[5]) if len(argv) > 5 else 256
    p = registry.load(name, "tsp")
    nb = p.neighbourhood("2opt")
    prm = TabuSearch().params(nb) if algorithm == "tabu" else {"restarts": True}
    engine = ResidentLocalSearch(p, nb, adapter(p, nb, rows=rows), algorithm, prm, threads=threads)
    seeds = list(range(1, searches + 1))
    engine.run(seeds, Stop(iterations=2), chunk=2)
    res = engine.run(seeds, Stop(iterations=iterations), chunk=iterations)
    done = sum(r.iterations for r in res) / searches
    print(f"{name} {algorithm}, {searches} searches, {engine.shape}: {done / engine.kernel_s:,.0f} iterations/s a "
          f"search, {1e6 * engine.kernel_s / done:.1f} us an iteration, "
          f"{sum(r.iterations for r in res) * nb.size / engine.kernel_s / 1e9:.1f} G moves/s")


if __name__ == "__main__":
    main(sys.argv[1:])
