# lsbench workflows. Default: the smoke experiment on built-in instances (`snakemake -c2`).
# Another experiment: `snakemake -c2 --configfile workflows/config/luong_qap.yaml`. A config file is
# the whole experiment: it is not merged with default.yaml (workflows/rules/common.smk).


include: "workflows/rules/common.smk"
include: "workflows/rules/runs.smk"


# on a cluster, downloads (compute nodes may have no network), the table and the report run where
# Snakemake runs, not as jobs in the queue
localrules:
    all,
    fetch_instance,
    aggregate,
    report,


rule all:
    input:
        f"results/{EXPERIMENT}/report.html",
