"""The instruction and stall profile of one resident Ro-TS launch, from Nsight Compute's SASS
source page (`device_run.sh ncu-source INSTANCE SEARCHES` writes it as CSV), as a result file.

    python benchmarks/research/ncu_summary.py ncu_sourcetai100a_132.csv --searches 132 --gpu h200 [--iterations 2000]

Per search and iteration: warp instructions executed; the basic blocks (runs of instructions
executed equally often) that execute the most, with how many warps run them and their opcodes;
the instructions where warps were sampled stalled most, with their share of all samples; the
share of all samples of each stall reason.
"""
import argparse
import csv
import sys
from pathlib import Path
from collections import Counter

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common.py, the table scripts
from common import write_result


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("csv")
    ap.add_argument("--searches", type=int, required=True)
    ap.add_argument("--iterations", type=int, default=2000, help="iterations of the profiled launch")
    ap.add_argument("--gpu", required=True, help="the profiled GPU, for the file's name (h200)")
    ap.add_argument("--out")
    args = ap.parse_args()
    rows = list(csv.reader(open(args.csv)))
    head = next(k for k, r in enumerate(rows) if r[:2] == ["Address", "Source"])
    cols, data = rows[head], rows[head + 1:]
    executed, stalls = cols.index("Instructions Executed"), cols.index("Warp Stall Sampling (All Samples)")
    per = args.searches * args.iterations
    blocks = []
    for k, r in enumerate(data):
        count, sass = int(r[executed]), r[1].strip()
        if blocks and blocks[-1]["count"] == count:
            blocks[-1]["sass"].append(sass)
        else:
            blocks.append({"first": k, "count": count, "sass": [sass]})
    top = sorted(blocks, key=lambda b: -b["count"] * len(b["sass"]))[:8]
    samples = sum(int(r[stalls]) for r in data)
    stalled = sorted(range(len(data)), key=lambda k: -int(data[k][stalls]))[:5]
    reasons = {c[len("stall_"):]: k for k, c in enumerate(cols) if c.startswith("stall_") and "Not Issued" not in c}
    by_reason = {name: sum(float(r[k] or 0) for r in data) / samples for name, k in reasons.items()}  # why warps waited
    out = {"source": args.csv, "profiled_gpu": args.gpu, "searches": args.searches, "iterations": args.iterations,
           "warp_instructions_per_search_iteration": sum(int(r[executed]) for r in data) / per,
           "top_blocks": [{"first_instruction": b["first"], "instructions": len(b["sass"]),
                           "warps_per_search_iteration": b["count"] / per,
                           "warp_instructions_per_search_iteration": b["count"] * len(b["sass"]) / per,
                           "opcodes": Counter(s.split()[1] if s.startswith("@") else s.split()[0]
                                              for s in b["sass"]).most_common(8)} for b in top],
           "stall_samples": samples,
           "most_stalled": [{"instruction": k, "sass": data[k][1].strip(),
                             "share": int(data[k][stalls]) / samples} for k in stalled],
           "stall_reasons": dict(sorted(by_reason.items(), key=lambda kv: -kv[1]))}
    path = write_result("ncu_rots", out, args.out, gpu_tag=args.gpu)
    print(f"{out['warp_instructions_per_search_iteration']:,.0f} warp instructions a search and iteration -> {path}")
    for b in out["top_blocks"]:
        print(f"  {b['warp_instructions_per_search_iteration']:8,.0f} in {b['instructions']:4d} instructions x "
              f"{b['warps_per_search_iteration']:5.2f} warps: {b['opcodes'][:4]}")
    for s in out["most_stalled"]:
        print(f"  stalled {s['share']:.1%} at {s['sass']}")
    print("  stall reasons: " + ", ".join(f"{k} {v:.1%}" for k, v in list(out["stall_reasons"].items())[:6]))


if __name__ == "__main__":
    sys.exit(main())
