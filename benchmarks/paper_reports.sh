#!/usr/bin/env bash
# Paper-scale example reports on the device machine, each on one GPU and its own 16 cores (taskset;
# NUMBA_NUM_THREADS=16), each continuing from its committed records (regenerate_reports.py --continue,
# or afresh where reports/NAME has none). Usage: BUDGET=450 bash benchmarks/paper_reports.sh NAME [NAME ...]
# with LSBENCH_COMMIT set: the k-th report on GPU k mod G, the reports of one GPU one after the other,
# each with its own BUDGET (s, no run starts past it) and REPORTS_TIMEOUT (s, then SIGTERM, which drops
# only the run in progress and archives the rest); with CALL_S (s), the whole call's limit: a report
# gets at most what is left of it (no run starts within 90 s of it, SIGTERM 30 s before it) and one
# with less than 2 minutes left does not start. Every report's records come back in one file,
# $OUT/records.tgz (the machine returns only a few files a call, none over 16 MiB: a larger one comes as
# records.tgz.part0, part1, ...; `cat records.tgz.part* > records.tgz`), to unpack over reports/ and render
# with `python workflows/scripts/report_from_records.py --examples`. REPLAN=1: records that a changed
# config now plans otherwise are dropped and run again (regenerate_reports.py --drop-replanned). ALL_GPUS="NAME
# ...": those reports run after the others, each alone with every GPU and core (islands.yaml: a rank a GPU).
set -u
gpus=$(nvidia-smi -L 2> /dev/null | grep -c "^GPU")
if [ "$gpus" -eq 0 ]; then  # a report without its GPU would run its CPU rows alone
  echo "paper_reports.sh: error: no GPU on this machine" >&2
  exit 2
fi
call_start=$(date +%s)
bash benchmarks/device_run.sh > /dev/null  # installs the carried wheels once, before the reports start
report() {  # report NAME GPU, or report NAME all: every GPU and core of the host
  local continued=() pin=() budget=${BUDGET:-450} timeout=${REPORTS_TIMEOUT:-575} place=()
  if [ -n "${CALL_S:-}" ]; then
    local left=$((CALL_S - ($(date +%s) - call_start) - 30))  # (30 s to archive the records and return them)
    if [ "$left" -lt 120 ]; then
      echo "$1: not started: $left s left of CALL_S=$CALL_S" > "$OUT/$1.log"
      return
    fi
    [ "$timeout" -gt "$left" ] && timeout=$left
    [ "$budget" -gt $((left - 60)) ] && budget=$((left - 60))
  fi
  [ -f "reports/$1/records.tgz" ] && continued=(--continue ${REPLAN:+--drop-replanned})
  if [ "$2" != all ]; then
    place=(CUDA_VISIBLE_DEVICES="$2" NUMBA_NUM_THREADS=16)
    command -v taskset > /dev/null && pin=(taskset -c $((16 * $2))-$((16 * $2 + 15)))
  fi
  env "${place[@]}" LSBENCH_INSTALLED=1 OUT="$OUT/$1" REPORTS_TIMEOUT="$timeout" \
    "${pin[@]}" bash benchmarks/device_run.sh "reports ${continued[*]} --budget-s $budget $1" > "$OUT/$1.log" 2>&1
}
gpu_queue() {  # gpu_queue GPU NAME...: the reports of one GPU, one after the other
  local gpu=$1
  shift
  for name in "$@"; do report "$name" "$gpu"; done
}
one_gpu=() whole=()  # ALL_GPUS names the reports that take the whole host (MPI rows of a rank a GPU: islands)
for name in "$@"; do
  mkdir -p "$OUT/$name"
  if [[ " ${ALL_GPUS:-} " == *" $name "* ]]; then whole+=("$name"); else one_gpu+=("$name"); fi
done
for ((g = 0; g < gpus && g < ${#one_gpu[@]}; g++)); do
  names=()
  for ((k = g; k < ${#one_gpu[@]}; k += gpus)); do names+=("${one_gpu[k]}"); done
  gpu_queue "$g" "${names[@]}" &
done
wait
for name in "${whole[@]}"; do report "$name" all; done  # after the one-GPU reports: alone on the host
for name in "$@"; do echo "== $name"; grep "^reports/\|error\|not started:" "$OUT/$name.log"; grep "^\[" "$OUT/$name.log" | tail -1; done
(cd "$OUT" && for name in "$@"; do tar xzf "$name/report-records.tgz" "reports/$name/records.tgz" 2>/dev/null; done
 tar czf records.tgz reports ./*.log && rm -rf reports ./*.log "$@"
 part=${RETURN_PART_BYTES:-15728640}  # the machine returns no file over 16 MiB: a larger one comes back in parts
 if [ "$(stat -c %s records.tgz)" -gt "$part" ]; then split -b "$part" -d -a 1 records.tgz records.tgz.part && rm records.tgz; fi)
