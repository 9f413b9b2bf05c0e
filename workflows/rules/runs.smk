rule fetch_instance:
    """Download one QAPLIB, TSPLIB or Liefooghe flow-shop file into the data directory ($LSBENCH_DATA),
    sha256 checked."""
    output:
        "{datadir}/{folder}/{name}.{ext}",
    wildcard_constraints:
        folder="qaplib|tsplib|liefooghe_pfsp",
    shell:
        "{sys.executable} -m lsbench instances fetch {wildcards.name} --data-dir {wildcards.datadir}"


rule run_search:
    """One search, one run record; written atomically by lsbench itself, so an interrupted job
    leaves no record and Snakemake reruns it."""
    input:
        lambda w: instance_files(run_of(w)),
    output:
        "results/{experiment}/runs/{group}/{instance}/{backend}-s{seed}.json",
    params:
        # cow and multistart runs start under MPI through Snakemake's `mpi` resource: mpiexec here,
        # srun on SLURM (one job of all the ranks)
        launch=lambda w, resources: f"{resources.mpi} -n {resources.tasks} " if mpi_tasks(run_of(w)) else "",
        cmd=lambda w, output: run_command(run_of(w), sys.executable, output[0]),
    resources:
        # a GPU multistart asks for one GPU per rank (SLURM: --gpus=G --ntasks-per-gpu=1)
        gpu=lambda w: (max(1, mpi_tasks(run_of(w))) if run_of(w)["backend"] in GPU_BACKENDS else 0),
        tasks_per_gpu=lambda w: 1 if run_of(w)["backend"] in GPU_BACKENDS else 0,
        # the MPI launcher for MPI runs only (SLURM's executor takes any job with `mpi` for an MPI job)
        mpi=lambda w: (config.get("mpi_launcher") or MPIEXEC) if mpi_tasks(run_of(w)) else "",
        tasks=lambda w: mpi_tasks(run_of(w)) or 1,
    # every timed run holds all the cores it may use: a one-core run beside another job measured the
    # other job too (the default experiment's cpu times doubled); `shared_cores: true` packs them
    threads: lambda w: job_threads(run_of(w), workflow.cores)
    log:
        "results/{experiment}/logs/{group}/{instance}/{backend}-s{seed}.log",
    shell:
        "{params.launch}{params.cmd} 2> {log}"


rule aggregate:
    """All run records of the experiment -> one Parquet table."""
    input:
        lambda w: [r["path"] for r in RUNS],
    output:
        "results/{experiment}/runs.parquet",
    run:
        from lsbench.workflow import aggregate_records
        aggregate_records(input, output[0])


rule report:
    input:
        table="results/{experiment}/runs.parquet",
    output:
        report("results/{experiment}/report.html", category="lsbench"),
    run:
        report_module().write_report(input.table, output[0], config, GPU)
