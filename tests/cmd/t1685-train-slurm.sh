#!/bin/sh
# examples/slurm-train.sbatch on a single-node Slurm that this test
# starts itself (Debian's slurmctld and slurmd, a slurm.conf under $T,
# free loopback ports, auth/none: one machine, root only) and always
# stops: sbatch --wait with one node of 2 tasks runs the script's srun
# --mpi=pmix tfk-train, and its weights are those of mpirun -np 2 with
# the same arguments, bit for bit (so srun's PMIx ranks joined one job).
# Needs root, as CI has.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/mpi-lib.sh"

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
host=$(hostname -s)
ports=$($PYTHON -c 'import socket
ss = [socket.socket() for _ in range(2)]
for s in ss: s.bind(("127.0.0.1", 0))
print(*(s.getsockname()[1] for s in ss))')
set -- $ports
mkdir -p "$T/slurm/state" "$T/slurm/spool" "$T/job/data"
cat >"$T/slurm/slurm.conf" <<C
ClusterName=tfk
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$1
SlurmdPort=$2
AuthType=auth/none
CredType=cred/none
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$T/slurm/state
SlurmdSpoolDir=$T/slurm/spool
SlurmctldPidFile=$T/slurm/slurmctld.pid
SlurmdPidFile=$T/slurm/slurmd.pid
SlurmctldLogFile=$T/slurm/slurmctld.log
SlurmdLogFile=$T/slurm/slurmd.log
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
NodeName=$host NodeAddr=127.0.0.1 CPUs=2 RealMemory=1000 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=UNLIMITED State=UP OverSubscribe=YES
C
export SLURM_CONF="$T/slurm/slurm.conf"
CTLD= SLURMD=
stop_slurm() {
	for p in $SLURMD $CTLD; do kill "$p" 2>/dev/null; done
	sleep 0.5
	for p in $SLURMD $CTLD; do kill -9 "$p" 2>/dev/null; done
	rm -rf "$T"
}
trap stop_slurm EXIT
slurmctld -D -c >"$T/slurm/ctld.out" 2>&1 &
CTLD=$!
slurmd -D >"$T/slurm/slurmd.out" 2>&1 &
SLURMD=$!
i=0
until sinfo -h -o %t 2>/dev/null | grep -q idle; do
	i=$((i + 1))
	if [ $i -gt 100 ]; then
		echo "Bail out! Slurm did not come up"
		cat "$T/slurm/"*.log "$T/slurm/"*.out | sed 's/^/# /'
		exit 1
	fi
	sleep 0.2
done

tfk-cat --take 1024 "$T/all.tfrecord" >"$T/job/data/train-00000.tfrecord"
tfk-cat --skip 1024 --take 256 "$T/all.tfrecord" >"$T/job/data/test.tfrecord"
ln -s "$ROOT/examples" "$T/job/examples"
# the script's own arguments, 2 epochs instead of 10 (the last --set wins)
sed 's/--set fit.epochs=10/--set fit.epochs=10 --set fit.epochs=2/' \
	"$ROOT/examples/slurm-train.sbatch" >"$T/job/short.sbatch"
export ROOT

testcmd "sbatch --wait: the example script's srun --mpi=pmix tfk-train on 1 node x 2 tasks ends 0; its job log has rank 0's lines only" \
	'cd job && timeout 150 sbatch --wait --quiet --nodes=1 --ntasks-per-node=2 --cpus-per-task=1 short.sbatch &&
	 ls runs/tfk-train/ckpt-2.index && sed "s/ - [0-9].*//" tfk-train-*.log' \
	"runs/tfk-train/ckpt-2.index\ntfk-train: runs/tfk-train: no checkpoint to resume; starting at epoch 1\nEpoch 1/2\nEpoch 2/2"
testcmd "its weights are mpirun -np 2's with the same arguments, bit for bit" \
	'cd job && $MPI 2 tfk-train examples/mlp.spec.json data/train-*.tfrecord --val data/test.tfrecord \
		--set fit.batch_size=256 --set fit.epochs=2 -j 1 --out mpi -q &&
	 cmp runs/tfk-train/ckpt-2.data-00000-of-00001 mpi/ckpt-2.data-00000-of-00001 && echo same' \
	"same"
testcmd "the job left the queue" 'squeue -h | wc -l' "0"

done_testing
