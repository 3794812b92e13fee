#!/bin/sh
# A real single-node Slurm cluster, started here and stopped on the way out:
# munged (unless one runs), slurmctld and slurmd on their own ports and
# folders. `ffn-lab slurm --submit` sends a 4-task array of
# configs/width_quick.json and the merge job after it; the merged tables
# must equal a single-process run's byte for byte. Where Slurm is missing
# or this is not root, the test says so and passes, unless
# FFNLAB_REQUIRE_SLURM=1 (build.sh test sets it where it installed Slurm).
# Usage: slurm.sh FFN_LAB WORK_FOLDER
set -u
ffnlab=$1
work=$2
skip() {
    if [ "${FFNLAB_REQUIRE_SLURM:-0}" = 1 ]; then echo "slurm: cannot run: $1"; exit 1; fi
    echo "slurm: skipped: $1"
    exit 0
}
for p in sbatch squeue sinfo slurmctld slurmd munged munge unmunge; do
    command -v "$p" > /dev/null 2>&1 || skip "$p is not installed (apt-get install slurm-wlm munge)"
done
[ "$(id -u)" = 0 ] || skip "slurmd runs as root in this set-up"
rm -rf "$work"
mkdir -p "$work/state" "$work/spool"
host=$(hostname -s)
conf=$work/slurm.conf
cat > "$conf" << CONF
ClusterName=ffnlabtest
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
SlurmctldPort=16817
SlurmdPort=16818
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
NodeName=$host CPUs=$(nproc) State=UNKNOWN
PartitionName=ffnlabtest Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$conf"

started_munge=no
# Stops what this script started and waits (at most 10 s each) until it is
# gone, so that the next run finds the ports free.
stop() {
    [ -f "$1" ] || return 0
    pid=$(cat "$1")
    kill "$pid" 2> /dev/null || return 0
    n=0
    while kill -0 "$pid" 2> /dev/null && [ $n -lt 100 ]; do
        sleep 0.1
        n=$((n + 1))
    done
}
cleanup() {
    stop "$work/slurmd.pid"
    stop "$work/slurmctld.pid"
    [ $started_munge = yes ] && stop /run/munge/munged.pid
}
trap cleanup EXIT
if ! munge -n 2> /dev/null | unmunge > /dev/null 2>&1; then
    [ -f /etc/munge/munge.key ] || mungekey --create > /dev/null 2>&1 || skip "no munge key and mungekey failed"
    mkdir -p /run/munge && chown munge:munge /run/munge /etc/munge/munge.key 2> /dev/null
    su -s /bin/sh munge -c munged 2> /dev/null || munged --force || skip "munged does not start"
    started_munge=yes
    sleep 1
fi
slurmctld -f "$conf" || { echo "slurm: slurmctld failed: $(tail -n 5 "$work/slurmctld.log")"; exit 1; }
slurmd -f "$conf" || { echo "slurm: slurmd failed: $(tail -n 5 "$work/slurmd.log")"; exit 1; }
i=0
until sinfo -h -o %T 2> /dev/null | grep -q idle; do
    i=$((i + 1))
    [ $i -gt 60 ] && { echo "slurm: the node never came up: $(tail -n 5 "$work/slurmd.log")"; exit 1; }
    sleep 0.5
done

"$ffnlab" sweep -c configs/width_quick.json -q --out "$work/single" > /dev/null || { echo "slurm: the single run failed"; exit 1; }
"$ffnlab" slurm -c configs/width_quick.json --shards 4 --out "$work/sweep" --submit > "$work/submitted.txt" ||
    { echo "slurm: ffn-lab slurm --submit failed"; exit 1; }
merge=$(sed -n 's/.*merge job \([0-9]*\).*/\1/p' "$work/submitted.txt")
[ -n "$merge" ] || { echo "slurm: no merge job id in: $(cat "$work/submitted.txt")"; exit 1; }
i=0
while squeue -h 2> /dev/null | grep -q .; do  # every job of this private cluster done
    i=$((i + 1))
    [ $i -gt 600 ] && { echo "slurm: the jobs did not finish in 5 minutes: $(squeue)"; exit 1; }
    sleep 0.5
done
[ -f "$work/sweep/tables/manifest.json" ] ||
    { echo "slurm: the merge job $merge wrote no tables: $(cat "$work"/sweep/slurm/logs/*.log 2> /dev/null | tail -n 20)"; exit 1; }
diff -r --exclude=manifest.json --exclude=runs "$work/single" "$work/sweep/tables" > /dev/null ||
    { echo "slurm: the merged tables differ from the single run's"; exit 1; }
echo "slurm: 4 array tasks and the merge job (afterok) ran on a real Slurm cluster; the merged tables equal the single run's"
