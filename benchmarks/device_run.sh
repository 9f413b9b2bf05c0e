#!/usr/bin/env bash
# Run on the device machine from the checkout: carried wheels in .whl/ (numba-cuda 0.30.4 and numpy 2.4:
# `pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp --platform
# manylinux_2_28_x86_64 -d .whl numba-cuda==0.30.4 numpy==2.4.6`; `pip wheel --no-deps -w .whl
# examples/maxcut` for `maxcut`; the image has pytest-xdist), instance copies in .devdata/, laid out as
# the data directory (qaplib/,
# tsplib/, taillard_pfsp/; `cp -r ../shared/instances/* .devdata/`, 23 MB). `tests`: tests/test_gpu.py
# and tests/test_resident_local_search.py on the device, the device-marked ones included, in 8 xdist
# workers (2d817a1 on one H100: 155 tests in 162 s), then the GPU engines' Ctrl-C
# (tests/test_soak.py -k gpu_engines, 5 side by side, about 2 minutes); their failures and slowest
# tests come with the summary.
# Usage: bash benchmarks/device_run.sh [tests] ['iteration ARGS'] [makespan] [rots] ['plan CONFIG ARGS']
#        ['resident ARGS'] ['ab TREE... ARGS'] ['regcap ARGS' (research/tabu_register_cap.py)] ['small2opt ARGS' (research/small_two_opt.py)] ['trees TREE... ARGS' (ab_trees.py)] ['pfsp ARGS'] ['pls ARGS'] ['grid ARGS'] ['cas ARGS'] ['cas-scaling ARGS'] ['ttb ARGS'] ['ig ARGS'] ['tsp ARGS'] ['maxcut ARGS' (examples/maxcut, its wheel in .whl/)] ['cow ARGS'] ['multistart ARGS'] ['sharing ARGS'] ['islands ARGS'] ['pytest ARGS']
#        ['snakemake ARGS' (from .smk/smk_site.tgz: Snakemake 9 for Python 3.12, its dependencies beside it)]
#        ['reports ARGS NAME...' (regenerate_reports.py --archive-only: reports/NAME/records.tgz, e.g. --budget-s 1500, --continue)]
#        ['profile-cas INSTANCE... --generations G [--tree DIR]'] ['ncu-cas INSTANCE --generations G'] ['ncu-source INSTANCE SEARCHES'] ['ncu-2opt INSTANCE SEARCHES hc|tabu [THREADS ROWS ITERATIONS]']
#        [pack (last: every file under $OUT into $OUT/results.tgz)]
set -u
[ -n "${LSBENCH_INSTALLED:-}" ] ||  # (performance_page.py remeasure installs once for its steps)
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD LSBENCH_DATA=$PWD/.devdata PYTHONUNBUFFERED=1 NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS=0
[ -n "${LSBENCH_COMMIT:-}" ] || echo "LSBENCH_COMMIT unset: result files take this copy's git HEAD, which may lag the checkout's"
# the MPI rows of plans and reports (cow, multistart ranks): Open MPI's mpirun refuses root without the flag,
# and binds each rank to one core unless told not to
[ "$(id -u)" -eq 0 ] && mpirun --version 2> /dev/null | grep -q "Open MPI" &&
  : "${MPI_LAUNCHER:=mpirun --allow-run-as-root --bind-to none --oversubscribe}"
launcher=()  # (else run_plan's own: the mpiexec beside this Python, or on PATH)
[ -n "${MPI_LAUNCHER:-}" ] && launcher=(--mpi-launcher "$MPI_LAUNCHER")
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
python3 -c "import numba, numpy, numba.cuda as c; print('numba', numba.__version__, 'numpy', numpy.__version__, 'cuda', c.is_available())"
for step in "$@"; do
  case "$step" in
    tests) mkdir -p /tmp/lsbench-test-data-$(id -u) && cp -r .devdata/* /tmp/lsbench-test-data-$(id -u)/  # what a partial mirror lacks stays missing
           LSBENCH_TEST_DATA=$PWD/.devdata LSBENCH_TEST_REAL_GPU=1 timeout 400 python3 -m pytest -p no:cacheprovider \
             -p no:benchmark -n 8 --dist loadgroup -m "not system" -rfE --durations=8 tests/test_gpu.py \
             tests/test_resident_local_search.py > /tmp/tests-gpu.log 2>&1
           grep -E "^(FAILED|ERROR)|passed|failed|^[0-9.]+s " /tmp/tests-gpu.log | tail -24
           LSBENCH_TEST_DATA=$PWD/.devdata timeout 170 python3 -m pytest -p no:cacheprovider -p no:benchmark -n 5 \
             -m device -rfE --tb=short tests/test_soak.py -k gpu_engines > /tmp/tests-soak.log 2>&1
           grep -E "^E  |^(FAILED|ERROR)|passed|failed" /tmp/tests-soak.log | cut -c1-400 | tail -20 ;;
    iteration*) (cd benchmarks && timeout 560 python3 gpu_iteration.py ${step#iteration} --out "${OUT:-results}") ;;
    trees*) (cd benchmarks && timeout 580 python3 research/ab_trees.py ${step#trees} --out "${OUT:-results}") ;;
    regcap*) (cd benchmarks && timeout 560 python3 research/tabu_register_cap.py ${step#regcap} --out "${OUT:-results}") ;;
    small2opt*) (cd benchmarks && timeout 560 python3 research/small_two_opt.py ${step#small2opt} --out "${OUT:-results}") ;;
    ab*) (cd benchmarks && timeout 560 python3 research/ab_resident.py ${step#ab} --out "${OUT:-results}") ;;
    resident*) (cd benchmarks && timeout 560 python3 gpu_resident.py ${step#resident} --out "${OUT:-results}") ;;
    grid*) (cd benchmarks && timeout 560 python3 gpu_resident_grid.py ${step#grid} --out "${OUT:-results}") ;;
    pfsp*) (cd benchmarks && timeout 560 python3 gpu_resident_pfsp.py ${step#pfsp} --out "${OUT:-results}") ;;
    sharing*) (cd benchmarks && timeout 500 python3 multistart_sharing.py ${step#sharing} --out "${OUT:-results}") ;;
    islands*) (cd benchmarks && timeout 590 python3 research/islands_target.py ${step#islands} --out "${OUT:-results}") ;;
    defaults*) (cd benchmarks && timeout 400 python3 gpu_defaults.py ${step#defaults} --out "${OUT:-results}") ;;
    pls*) (cd benchmarks && timeout "${PLS_TIMEOUT:-560}" python3 pls_tables.py ${step#pls} --out "${OUT:-results}") ;;
    ig*) (cd benchmarks && timeout 590 python3 ig_pfsp.py ${step#ig} --out "${OUT:-results}") ;;
    tsp*) (cd benchmarks && timeout 590 python3 tsp_peer.py ${step#tsp} --out "${OUT:-results}") ;;
    ttb*) (cd benchmarks && timeout 590 python3 time_to_bks.py ${step#ttb} --out "${OUT:-results}") ;;
    cas-scaling*) (cd benchmarks && timeout 560 python3 cas_scaling.py ${step#cas-scaling} --out "${OUT:-results}") ;;
    cas*) (cd benchmarks && timeout 560 python3 cas_gpu.py ${step#cas} --out "${OUT:-results}") ;;
    cow*) (cd benchmarks && timeout 560 python3 cow_table.py ${step#cow} --out "${OUT:-results}") ;;
    maxcut*) timeout 590 python3 examples/maxcut/benchmark.py ${step#maxcut} --data-dir .devdata --out "${OUT:-benchmarks/results}" ;;
    multistart*) (cd benchmarks && timeout 590 python3 multistart_scaling.py ${step#multistart} --out "${OUT:-results}") ;;
    ncu-2opt*) set -- ${step#ncu-2opt}; tag=$(echo "$@" | tr ' ' _)  # research/profile_two_opt.py's launch
            timeout 120 python3 benchmarks/research/profile_two_opt.py "$@"  # its time, without ncu
            timeout 240 /usr/local/cuda/bin/ncu --kernel-name regex:^kernel --launch-skip 1 --launch-count 1 \
            --section LaunchStats --section Occupancy --section WarpStateStats --section SpeedOfLight \
            --section InstructionStats --section SchedulerStats python3 benchmarks/research/profile_two_opt.py "$@" 2>&1 |
              grep -av "^==PROF==" | tail -90
            timeout 240 /usr/local/cuda/bin/ncu --kernel-name regex:^kernel --launch-skip 1 --launch-count 1 \
              --section SourceCounters --section WarpStateStats --page source --print-source sass --csv \
              python3 benchmarks/research/profile_two_opt.py "$@" > "${OUT:-.}/ncu_2opt_$tag.csv" 2> "${OUT:-.}/ncu_2opt_$tag.err"
            tail -3 "${OUT:-.}/ncu_2opt_$tag.err"; wc -l "${OUT:-.}/ncu_2opt_$tag.csv" ;;
    ncu-pfsp*) timeout 300 /usr/local/cuda/bin/ncu --kernel-name regex:pfsp --launch-skip 2 --launch-count 1 \
            --section LaunchStats --section Occupancy --section WarpStateStats --section SpeedOfLight \
            --section SourceCounters --section InstructionStats --section SchedulerStats ${NCU_EXTRA:-} python3 benchmarks/research/profile_resident_pfsp.py ${step#ncu-pfsp} 2>&1 | grep -v "^==PROF==" | tail -120 ;;
    ncu-source*) timeout 300 /usr/local/cuda/bin/ncu --kernel-name regex:rots --launch-skip 1 --launch-count 1 \
            --section SourceCounters --section InstructionStats --page source --print-source sass --csv \
            python3 benchmarks/research/profile_resident.py ${step#ncu-source} > "${OUT:-.}/ncu_source$(echo ${step#ncu-source} | tr ' ' _).csv" 2> "${OUT:-.}/ncu_source.err"
            tail -5 "${OUT:-.}/ncu_source.err"; wc -l "${OUT:-.}"/ncu_source*.csv ;;
    ncu-cas*) timeout 300 /usr/local/cuda/bin/ncu --kernel-name regex:rots --launch-skip 3 --launch-count 1 \
            --section LaunchStats --section Occupancy --section WarpStateStats --section SpeedOfLight \
            --section InstructionStats --section SchedulerStats python3 benchmarks/research/profile_cas.py ${step#ncu-cas} 2>&1 | grep -v "^==PROF==" | tail -90
            timeout 300 /usr/local/cuda/bin/ncu --kernel-name regex:rots --launch-skip 3 --launch-count 1 \
            --section SourceCounters --page source --print-source sass --csv \
            python3 benchmarks/research/profile_cas.py ${step#ncu-cas} > "${OUT:-.}/ncu_cas_source.csv" 2> "${OUT:-.}/ncu_cas_source.err" ;;
    ncu*) timeout 300 /usr/local/cuda/bin/ncu --kernel-name regex:rots --launch-skip 1 --launch-count 1 \
            --section LaunchStats --section Occupancy --section WarpStateStats --section SpeedOfLight \
            --section MemoryWorkloadAnalysis --section InstructionStats --section SchedulerStats ${NCU_EXTRA:-} python3 benchmarks/research/profile_resident.py ${step#ncu} 2>&1 | grep -v "^==PROF==" | tail -120 ;;
    pytest*) mkdir -p /tmp/lsbench-test-data-$(id -u) && cp -r .devdata/* /tmp/lsbench-test-data-$(id -u)/
             LSBENCH_TEST_DATA=$PWD/.devdata LSBENCH_TEST_REAL_GPU=1 timeout 300 python3 -m pytest -p no:cacheprovider -n 0 -rfE ${step#pytest} 2>&1 | tail -15
             echo "pytest exit ${PIPESTATUS[0]}" ;;
    profile-cas*) timeout 300 python3 benchmarks/research/profile_cas.py ${step#profile-cas} ;;
    makespan) (cd benchmarks && timeout 300 python3 research/gpu_makespan.py) ;;
    pack) # the call's last step: everything under $OUT in one file, as the machine sends back only a few a call
          (cd "${OUT:-.}" && find . -type f ! -name results.tgz -print0 | sort -z |
             tar czf results.tgz --null -T - --remove-files && find . -mindepth 1 -type d -empty -delete) ;;
    rots) (cd benchmarks && timeout 200 python3 research/cpu_rots.py --iterations 20000 --repeats 5) ;;
    snakemake*) [ -d /tmp/smk_site ] || tar xzf .smk/smk_site.tgz -C /tmp  # carried: Snakemake 9 and its dependencies
           PYTHONPATH=/tmp/smk_site:$PYTHONPATH timeout "${SNAKEMAKE_TIMEOUT:-580}" python3 -m snakemake ${step#snakemake} 2>&1 | tail -40
           tar czf "${OUT:-.}/workflow-results.tgz" results ;;
    reports*) [ -d /tmp/smk_site ] || [ ! -f .smk/smk_site.tgz ] || tar xzf .smk/smk_site.tgz -C /tmp  # PyYAML, where carried
           PYTHONPATH=/tmp/smk_site:$PYTHONPATH timeout -k 30 "${REPORTS_TIMEOUT:-580}" \
             python3 workflows/scripts/regenerate_reports.py --archive-only "${launcher[@]}" ${step#reports} | tail -20
           tar czf "${OUT:-.}/report-records.tgz" reports/*/records.tgz ;;  # rendered here: report_from_records.py --examples
    plan*) set -- ${step#plan}
           timeout "${PLAN_TIMEOUT:-480}" python3 workflows/scripts/run_plan.py "${launcher[@]}" "$@" | tail -40
           tar czf "${OUT:-.}/runs.tgz" results ;;
  esac
done
