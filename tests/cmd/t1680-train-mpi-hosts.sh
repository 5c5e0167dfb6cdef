#!/bin/sh
# tfk-train on two "hosts": network namespaces that this test makes,
# joined by a veth pair with addresses it assigns (10.77.X.1 and .2),
# OpenMPI's TCP transport between them (shared memory off), its launcher
# reaching each namespace through `ip netns exec` (tests/cmd/netns-agent,
# OpenMPI's rsh agent), so the gradients really cross an interface. The
# namespaces, the pair and every process are removed at exit, on failure
# too. Checks: 2 hosts give the bits of 2 ranks on one host (a sum of
# two floats is the same in any order), the bytes on the veth; and a
# link taken down mid-epoch (ip link set ... down): the job ends within
# 30 s, non-zero, a rank names the step and the rank it waits for, the
# last checkpoint is intact, and --resume (link up) ends with the
# uninterrupted run's weights. Needs root (CAP_NET_ADMIN), as CI has.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/mpi-lib.sh"
LOCAL="$MPI 2"	# 2 ranks on this machine

id=$$
A=tfk${id}a B=tfk${id}b VA=tv${id}a VB=tv${id}b
NET=10.77.$((id % 250 + 1))
cleanup() {
	pkill -9 -f "netns exec $A" 2>/dev/null
	pkill -9 -f "netns exec $B" 2>/dev/null
	for n in $A $B; do
		for p in $(ip netns pids $n 2>/dev/null); do kill -9 $p; done
		ip netns del $n 2>/dev/null
	done
	rm -rf "$T"
}
trap cleanup EXIT
for n in $A $B; do
	ip netns add $n && ip netns exec $n ip link set lo up || {
		echo "Bail out! cannot make network namespaces (needs root)"; exit 1; }
done
ip link add $VA netns $A type veth peer name $VB netns $B &&
	ip netns exec $A ip addr add $NET.1/24 dev $VA &&
	ip netns exec $B ip addr add $NET.2/24 dev $VB &&
	ip netns exec $A ip link set $VA up &&
	ip netns exec $B ip link set $VB up || { echo "Bail out! no veth pair"; exit 1; }
mkdir -p "$T/ompi"
printf '%s slots=1\n%s slots=1\n' $A $B >"$T/hosts"
# TCP only, on the pair; yield when idle (2 cores: a spinning rank starves
# the veth's softirq); daemons' keepalive so that a dead link ends the job;
# no hwloc rtc: two daemons of one machine raced on its shared topology
# segment and one crashed (hwloc_shmem_topology_write) now and then.
MPI="ip netns exec $A timeout 100 mpirun --hostfile $T/hosts -np 2
	--mca orte_tmpdir_base $T/ompi
	--mca plm_rsh_agent $TESTS/cmd/netns-agent
	--mca btl self,tcp --mca btl_tcp_if_include $NET.0/24
	--mca oob_tcp_if_include $NET.0/24 --mca mpi_yield_when_idle 1
	--mca oob_tcp_keepalive_time 4 --mca oob_tcp_keepalive_intvl 2
	--mca oob_tcp_keepalive_probes 3 --mca rtc ^hwloc"
tfk-cat --take 2000 "$T/all.tfrecord" >"$T/tr.tfrecord"
SPEC=$(cd "$(dirname "$0")/../.." && pwd)/examples/mlp.spec.json
ONE="--set fit.batch_size=40 --set fit.shuffle=false --set fit.epochs=1 -j 1 -q"
export MPI LOCAL SPEC ONE A VA

testcmd "2 hosts over the veth pair: the bits of 2 ranks on one host; over 50 x 407 KB crossed the interface" \
	'$LOCAL tfk-train "$SPEC" tr.tfrecord --out local $ONE &&
	 $MPI tfk-train "$SPEC" $PWD/tr.tfrecord --out $PWD/hosts2 $ONE &&
	 cmp local/ckpt-1.data-00000-of-00001 hosts2/ckpt-1.data-00000-of-00001 && echo same &&
	 tx=$(ip netns exec $A cat /sys/class/net/$VA/statistics/tx_bytes) &&
	 [ "$tx" -gt $((50 * 407080)) ] && echo crossed' \
	"same\ncrossed"

cat >"$T/down.sh" <<'K'
# down.sh: 3 epochs over 60000 records on the 2 hosts; once ckpt-1 is
# written, take the link down; report how the job ended.
$MPI tfk-train "$SPEC" $PWD/all.tfrecord --out $PWD/k --set fit.epochs=3 -j 1 -q --seed 3 --stall-report 2 2>down.log &
pid=$!
i=0
while [ ! -f k/ckpt-1.index ] && [ $i -lt 900 ]; do sleep 0.1; i=$((i + 1)); done
t0=$(date +%s)
ip netns exec $A ip link set $VA down
wait $pid
rc=$?
t1=$(date +%s)
ip netns exec $A ip link set $VA up
echo "rc nonzero: $([ $rc -ne 0 ] && echo yes)"
echo "within 30 s: $([ $((t1 - t0)) -le 30 ] && echo yes)"
grep -q "rank 0 of 2: step [0-9]* (epoch [23]): the gradient sum has waited [0-9]* s for rank 1" down.log && echo "names rank 1"
K
testcmd "link down mid-epoch: the job fails within 30 s, rank 0 names the step and rank 1; the last checkpoint is intact" \
	'sh down.sh && $PYTHON $TESTS/py/bundle_check.py dump "k/$(sed -n "s/^model_checkpoint_path: \"\(.*\)\"/\1/p" k/checkpoint)" >/dev/null && echo intact' \
	"rc nonzero: yes\nwithin 30 s: yes\nnames rank 1\nintact"
testcmd "--resume with the link up ends with the uninterrupted run's weights, bit for bit" \
	'$MPI tfk-train "$SPEC" $PWD/all.tfrecord --out $PWD/k --set fit.epochs=3 -j 1 -q --seed 3 --resume &&
	 $LOCAL tfk-train "$SPEC" all.tfrecord --out full --set fit.epochs=3 -j 1 -q --seed 3 &&
	 cmp k/ckpt-3.data-00000-of-00001 full/ckpt-3.data-00000-of-00001 && echo identical' \
	"identical"

done_testing
