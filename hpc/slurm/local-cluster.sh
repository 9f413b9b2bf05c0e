#!/usr/bin/env bash
# A one-node SLURM on this machine, for the SLURM tests and for trying the SLURM profile locally.
#   bash hpc/slurm/local-cluster.sh start   # installs munge and slurm-wlm (Debian) if missing, starts the daemons
#   bash hpc/slurm/local-cluster.sh stop
# Everything lives under $LSBENCH_SLURM_DIR (default /tmp/lsbench-slurm); no cgroups, no systemd, no
# accounting: proctrack/linuxproc and task/none, which a container allows. Needs root (the daemons
# run as root, as the sandboxes and CI machines here do).
set -euo pipefail
DIR=${LSBENCH_SLURM_DIR:-/tmp/lsbench-slurm}
CPUS=$(nproc)
HOST=$(hostname -s)
MEM=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 - 512 ))

start() {
  if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -q slurm-wlm munge >/dev/null 2>&1 || { apt-get update -q >/dev/null && apt-get install -y -q slurm-wlm munge >/dev/null; }
  fi
  mkdir -p "$DIR"/{spool,state,log,munge} /etc/slurm /run/munge /var/log/munge /var/lib/munge
  if [ ! -s /etc/munge/munge.key ]; then
    mkdir -p /etc/munge
    dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key status=none
  fi
  chown -R munge:munge /etc/munge /run/munge /var/log/munge /var/lib/munge 2>/dev/null || true
  chmod 0700 /etc/munge && chmod 0400 /etc/munge/munge.key
  pgrep -x munged >/dev/null || runuser -u munge -- munged --force 2>/dev/null || munged --force
  cat > /etc/slurm/slurm.conf <<CONF
ClusterName=lsbench
SlurmctldHost=$HOST
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=pmi2
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
InactiveLimit=0
KillWait=5
MinJobAge=600
SlurmctldTimeout=30
SlurmdTimeout=30
NodeName=$HOST CPUs=$CPUS RealMemory=$MEM State=UNKNOWN
PartitionName=compute Nodes=$HOST Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
CONF
  pgrep -x slurmctld >/dev/null || slurmctld
  pgrep -x slurmd >/dev/null || slurmd
  for _ in $(seq 60); do
    if sinfo -h -o %T 2>/dev/null | grep -qE "idle|mixed|alloc"; then
      echo "SLURM up: $(sinfo -h -o '%P %D %T %c')"
      return 0
    fi
    scontrol update nodename="$HOST" state=resume >/dev/null 2>&1 || true
    sleep 1
  done
  echo "SLURM did not come up; see $DIR/log" >&2
  return 1
}

stop() {
  pkill -x slurmd || true
  pkill -x slurmctld || true
}

case "${1:-start}" in
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
