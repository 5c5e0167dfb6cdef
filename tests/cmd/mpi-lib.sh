# mpi-lib.sh - shared by the MPI tests (sourced after lib.sh).
#
# Lets OpenMPI run as root (CI is root), keeps OpenMPI's own allocations
# out of LeakSanitizer's reports under ASan (tests/lsan-openmpi.supp),
# and provides
#   $MPI N CMD...   mpirun on this machine, N ranks (oversubscribed),
#                   its session files under $T, stopped after 120 s
#   $T/all.tfrecord Fashion-MNIST's 60000 training records
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export LSAN_OPTIONS="suppressions=$TESTS/lsan-openmpi.supp:fast_unwind_on_malloc=0:print_suppressions=0"
MPI="timeout 120 mpirun --oversubscribe --mca orte_tmpdir_base $T/ompi -np"
export MPI
_F=/usr/share/datasets/fashion-mnist
tfk-idx -q --images $_F/train-images-idx3-ubyte.gz \
	--labels $_F/train-labels-idx1-ubyte.gz >"$T/all.tfrecord"
