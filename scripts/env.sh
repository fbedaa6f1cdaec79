# Sourced by scripts/test and scripts/demo: MPI settings for this machine.
# OpenMPI refuses to run as root unless told; set that only when we are root.
if [ "$(id -u)" -eq 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1
  export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
# Containers often forbid the cross-memory-attach used for single-copy shared memory.
export OMPI_MCA_btl_vader_single_copy_mechanism=${OMPI_MCA_btl_vader_single_copy_mechanism:-none}
# Oversubscribed ranks must yield the core instead of spinning.
export OMPI_MCA_mpi_yield_when_idle=${OMPI_MCA_mpi_yield_when_idle:-1}
