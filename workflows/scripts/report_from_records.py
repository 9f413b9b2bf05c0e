"""Aggregate and report run records made on another host (e.g. the GPU machine via run_plan.py).

    python workflows/scripts/report_from_records.py workflows/config/luong_qap.yaml RUNS_DIR OUT_DIR [quick]

The GPU line of the report names the device the records were made on, not this host's.
"""
import json
import sys
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from lsbench.workflow import aggregate_records  # noqa: E402
from report import write_report  # noqa: E402


def main(config, runs_dir, out_dir, scale="paper"):
    cfg = yaml.safe_load(open(config))
    cfg["scale"] = scale  # as the runs were planned (run_plan.py --scale)
    records = sorted(Path(runs_dir).rglob("*.json"))
    devices = {json.loads(p.read_text()).get("backend_info", {}).get("device") for p in records}
    devices.discard(None)
    hosts = {json.loads(p.read_text())["host"]["hostname"] for p in records}
    gpu = {"available": bool(devices), "name": ", ".join(sorted(devices)) + f" (records made on {', '.join(sorted(hosts))})"}
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    aggregate_records(records, out / "runs.parquet")
    write_report(out / "runs.parquet", out / "report.html", cfg, gpu)
    print(f"{len(records)} records -> {out / 'report.html'}")


if __name__ == "__main__":
    main(*sys.argv[1:5])
