"""One Ro-TS search over G SMs on tai100a, a few chunks, for Nsight Compute (device_run.sh ncu-grid)."""
import sys
import time

from common import write_result  # noqa: F401  (puts the checkout on the path)

from lsbench import instances as registry
from lsbench.search.common import Stop
from lsbench.search.tabu import RobustTabuSearch
from gpu.resident_rots_grid import ResidentRotsGrid

blocks = int(sys.argv[1]) if len(sys.argv) > 1 else 8
threads = int(sys.argv[2]) if len(sys.argv) > 2 else 1024
p = registry.load("tai100a")
eng = ResidentRotsGrid(p, RobustTabuSearch().params(p), blocks, threads=threads)
t = time.perf_counter()
r = eng.run(1, Stop(iterations=3000), chunk=1000)
print(f"{blocks} blocks x {threads}: {r['iterations'] / (time.perf_counter() - t):,.0f} it/s")
