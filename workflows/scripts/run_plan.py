"""Run an experiment's planned runs in one process, without Snakemake (for hosts that lack it,
e.g. a lent GPU machine); records land where the Snakefile expects them, so a later `snakemake`
there or elsewhere only aggregates and reports.

    python workflows/scripts/run_plan.py workflows/config/luong_qap.yaml --seeds 5
"""
import argparse
import sys
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from lsbench.errors import LsbenchError  # noqa: E402
from lsbench.runner import run  # noqa: E402
from lsbench.workflow import gpu_status, plan_runs  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("config")
    ap.add_argument("--seeds", type=int, help="override every group's number of seeds")
    ap.add_argument("--scale", default="paper")
    args = ap.parse_args()
    cfg = yaml.safe_load(open(args.config))
    cfg["scale"] = args.scale
    if args.seeds:
        for g in cfg["groups"]:
            g["seeds"] = args.seeds
    try:
        runs = plan_runs(cfg, gpu_available=gpu_status()["available"])
    except LsbenchError as e:
        print(f"lsbench: error: {e}", file=sys.stderr)
        return 2
    t0 = time.time()
    failed = 0
    for k, r in enumerate(runs, 1):
        if Path(r["path"]).exists():
            continue
        try:
            rec = run(r["spec"])
        except LsbenchError as e:
            print(f"{r['path']}: lsbench: error: {e}", flush=True)
            failed += 1
            continue
        print(f"[{k}/{len(runs)} {time.time() - t0:6.0f}s] {r['path']}: best {rec['best_objective']} "
              f"in {rec['wall_s']:.2f}s", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
