"""One gpu-resident Ro-TS launch to profile under Nsight Compute (ncu), e.g.
    ncu --kernel-name regex:rots --launch-skip 1 --launch-count 1 --section LaunchStats \
        --section WarpStateStats python3 benchmarks/research/profile_resident.py tai100a 1 [THREADS [CLUSTER]]
"""
import sys

from lsbench.gpu.engine.rots.host import ResidentRots
from lsbench import instances as registry
from lsbench.interfaces import Stop
from lsbench.search.tabu import RobustTabuSearch

p = registry.load(sys.argv[1] if len(sys.argv) > 1 else "tai100a")
k = int(sys.argv[2]) if len(sys.argv) > 2 else 1
threads = int(sys.argv[3]) if len(sys.argv) > 3 else None
cluster = int(sys.argv[4]) if len(sys.argv) > 4 else None
eng = ResidentRots(p, RobustTabuSearch().params(p), threads=threads, cluster=cluster)
eng.run([1], Stop(iterations=2))
eng.run(list(range(1, k + 1)), Stop(iterations=2000), chunk=2000)
print(f"{k} searches, {2000 / eng.loop_s:,.0f} iterations/s per search")
