#!/usr/bin/env bash
# Paper-scale example reports on the device machine, one report a GPU side by side, each on its own 16
# cores (taskset; NUMBA_NUM_THREADS=16), each continuing from its committed records (regenerate_reports.py
# --continue, or afresh where reports/NAME has none). Usage: BUDGET=450 bash benchmarks/paper_reports.sh
# NAME [NAME ...] (the k-th on GPU k), with LSBENCH_COMMIT set. REPORTS_TIMEOUT (s) ends a report by SIGTERM,
# which drops only the run in progress and archives the rest; every report's records come back in one
# file, $OUT/records.tgz (the machine returns only a few files a call), to unpack over reports/ and
# render with `python workflows/scripts/report_from_records.py --examples`.
set -u
gpus=$(nvidia-smi -L 2> /dev/null | grep -c "^GPU")
if [ "$#" -gt "$gpus" ]; then  # a report on a GPU that is not there would run its CPU rows alone
  echo "paper_reports.sh: error: $# reports need as many GPUs, this machine has $gpus" >&2
  exit 2
fi
bash benchmarks/device_run.sh > /dev/null  # installs the carried wheels once, before the reports start
report() {  # report NAME GPU
  local continued=()
  [ -f "reports/$1/records.tgz" ] && continued=(--continue)
  CUDA_VISIBLE_DEVICES=$2 NUMBA_NUM_THREADS=16 LSBENCH_INSTALLED=1 OUT="$OUT/$1" REPORTS_TIMEOUT="${REPORTS_TIMEOUT:-575}" \
    taskset -c $((16 * $2))-$((16 * $2 + 15)) \
    bash benchmarks/device_run.sh "reports ${continued[*]} --budget-s ${BUDGET:-450} $1" > "$OUT/$1.log" 2>&1
}
k=0
for name in "$@"; do mkdir -p "$OUT/$name"; report "$name" $k & k=$((k + 1)); done
wait
for name in "$@"; do echo "== $name"; grep "^reports/\|error" "$OUT/$name.log"; grep "^\[" "$OUT/$name.log" | tail -1; done
(cd "$OUT" && for name in "$@"; do tar xzf "$name/report-records.tgz" "reports/$name/records.tgz" 2>/dev/null; done
 tar czf records.tgz reports ./*.log && rm -rf reports ./*.log "$@")
