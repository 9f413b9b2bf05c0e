#!/usr/bin/env bash
# Re-measures the one-GPU tables of docs/performance.md in four lanes, each on its own GPU and its own
# 16 cores (taskset; NUMBA_NUM_THREADS=16), so that each lane sees what one GPU and 16 cores of the
# one-GPU machine would. The commands are the tables' own. Usage: bash benchmarks/remeasure_tables.sh
# [LANE ...]: the lanes named (0-3; all four by default), the k-th named on GPU k and cores 16k..16k+15
# (a 2-GPU host runs two calls of two lanes). Run from the checkout on the device machine, with
# LSBENCH_COMMIT set; the lanes' logs and result files come back as $OUT/results.tgz. The multi-GPU
# table (device_run.sh `multistart --gpus 1,2,4 --repeats 3 --timeout 150`) needs every GPU: a call
# of its own.
set -u
[ -n "${LSBENCH_INSTALLED:-}" ] ||  # (a call that runs other steps beside the lanes installs first)
  bash benchmarks/device_run.sh > /dev/null  # installs the carried wheels once, before the lanes start
QAP_CLASS_I="--first-seed 5001 --runs 3 --cap 30 --restart 100000 --elite 1 --param tenure_min=0.05n
  --param tenure_max=0.2n --param aspiration=8n^2 --param pools=33"
lane() {
  local gpu=$1
  shift
  local pin=()
  command -v taskset > /dev/null && pin=(taskset -c $((16 * gpu))-$((16 * gpu + 15)))
  CUDA_VISIBLE_DEVICES=$gpu NUMBA_NUM_THREADS=16 LSBENCH_INSTALLED=1 "${pin[@]}" \
    bash benchmarks/device_run.sh "$@" > "${OUT:-.}/lane-$LANE.log" 2>&1
}
run_lane() {  # run_lane LANE GPU (in its own subshell: LANE names its log)
  LANE=$1
  case $1 in
    0) lane "$2" "resident --threads auto --searches 1,66,132,166,200,264,528,1056,4096 --seconds 2.5 --repeats 3" \
         "pfsp --threads 256 --repeats 3" "cas --runs 3 --cpu-runs 0 --cap 10" ;;
    1) lane "$2" "grid --scaling tsp:eil101:2opt,ppp:101-117:hamming2,tsp:pr2392:2opt,pfsp:ta001:insertion,pfsp:ta111:insertion:1056
         --searches 1,66,132,200,264,1056 --seconds 1 --repeats 3 --check 8" ;;
    2) lane "$2" "ttb --instances tai100a --searches 132 $QAP_CLASS_I" "ttb --instances tai80a --searches 264 $QAP_CLASS_I" ;;
    3) lane "$2" "tsp --instances pr2392 --repeats 3" "ig --instances ta051 --runs 3 --cap 30 --restart 1000 --elite 16" ;;
  esac
}
lanes=("$@")
[ ${#lanes[@]} -gt 0 ] || lanes=(0 1 2 3)
for k in "${!lanes[@]}"; do run_lane "${lanes[$k]}" "$k" & done
wait
for log in "${OUT:-.}"/lane-*.log; do echo "== $log"; grep -v "^{" "$log" | grep -v warning | tail -n 30; done
# one file back: the device machine returns only a few files a call (six of eleven were once left there)
LSBENCH_INSTALLED=1 bash benchmarks/device_run.sh pack > /dev/null
