"""One chunk of the PFSP fast path on ta111 for Nsight Compute (`device_run.sh ncu-pfsp`): two
warm-up launches, then one launch of 64 iterations (profile it with --launch-skip 2)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # this checkout
from lsbench.gpu.engine.resident_pfsp import ResidentPfspTabu  # noqa: E402
from lsbench import instances as registry  # noqa: E402
from lsbench.interfaces import Stop  # noqa: E402
from lsbench.search.tabu import TabuSearch  # noqa: E402

p = registry.load(sys.argv[1] if len(sys.argv) > 1 else "ta111")
threads = int(sys.argv[2]) if len(sys.argv) > 2 else 256
engine = ResidentPfspTabu(p, TabuSearch().params(p.neighbourhood("insertion")), threads=threads)
engine.run([7], Stop(iterations=20), chunk=10)
engine.run([7], Stop(iterations=64), chunk=64)
print(engine.shape, engine.kernel_s)
